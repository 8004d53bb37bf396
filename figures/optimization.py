"""Figures of decentralized optimization: every method's error against iterations on the
fixtures G1-G5, and DGD's constant-step bias against the step size.

* ``optimization.error_vs_iterations``: ``max_i ||x_i(k) - x*||`` (the de-biased ratios for the
  push-sum methods) for every method whose weights the fixture carries, on the default
  quadratics (N = 8, d = 3, eigenvalues in [0.5, 2]), one constant step for all
  (``alpha = 0.03``), float64. The exact methods (gradient tracking, push-pull, EXTRA) fall to
  the rounding floor; DGD, DSGD and subgradient-push with a constant step stop at a bias. On the
  directed fixtures, DGD's level is the distance of the Perron-weighted minimiser
  ``x_pi = argmin sum_i pi_i f_i`` from x*, drawn dashed for G1 (its closed form).
* ``optimization.dgd_bias``: DGD's closed-form fixed point (``dgd_fixed_point``) against the
  step size: on G4 (doubly stochastic) ``max_i ||x_alpha,i - x*||`` falls like alpha; on G1
  (row-stochastic) ``||pi^T X_alpha - x_pi||`` falls like alpha while ``||pi^T X_alpha - x*||``
  levels off at ``||x_pi - x*||``.

Sources: the methods' papers (``docs/optimization.md``); the closed forms are derived there.
"""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import NullFormatter

import decentral.graphs as g
from decentral.optimization import (
    dgd,
    dgd_fixed_point,
    diging,
    dsgd,
    dsgt,
    estimate_of,
    extra,
    optimization_params,
    push_diging,
    push_pull,
    subgradient_push,
    weighted_optimum,
)
from decentral.plotting import legend_outside
from decentral.runner import log_spaced_steps, run
from figures.registry import FigureContext, FigureOutput, figure
from proofs_checks.optimization.setups import default_problem, g1, g2, g3, g4, g5, weights

__all__ = ["ALPHA", "FLOOR", "method_cases", "error_curves_data", "draw_error_curves", "pep_data",
           "draw_pep",
           "dgd_bias_data", "draw_dgd_bias"]

ALPHA = 0.03
"""The one constant step of the error curves."""

FLOOR = 1e-16
"""Errors below this are drawn at it (an exact 0 has no place on a log axis)."""


def method_cases(problem) -> dict[str, dict[str, Any]]:
    """Fixture -> ``{label: algorithm}`` for the methods whose weights the fixture carries."""
    directed = {
        "G1 (static directed)": (g1("row"), g1("column")),
        "G2 (2-periodic directed)": (g2("row"), g2("column")),
        "G3 (G1, 30% of links dropped)": (g3("row"), g3("column")),
    }
    cases: dict[str, dict[str, Any]] = {}
    for name, (row, col) in directed.items():
        cases[name] = {"DGD (row)": dgd(problem, row),
                       "subgradient-push": subgradient_push(problem, col),
                       "push-DIGing": push_diging(problem, col)}
        if not name.startswith("G3"):        # two independent drop draws: not one graph
            cases[name]["push-pull"] = push_pull(problem, row, col)
    for name, seq in {"G4 (undirected ring)": g4(), "G5 (ring edges in 2 groups)": g5(2)}.items():
        cases[name] = {"DGD": dgd(problem, seq), "DSGD": dsgd(problem, seq),
                       "DIGing": diging(problem, seq), "DSGT": dsgt(problem, seq),
                       "push-DIGing": push_diging(problem, seq)}
        if name.startswith("G4"):
            cases[name]["EXTRA"] = extra(problem, seq)
    return cases


def error_curves_data(num_steps: int, *, base_seed: int = 0) -> tuple[dict, dict]:
    """Errors ``max_i ||estimate_i(k) - x*||`` at log-spaced k, per fixture and method."""
    problem = default_problem(base_seed)
    at = log_spaced_steps(num_steps, 60)
    x0 = np.random.default_rng(base_seed).standard_normal((problem.num_agents, problem.dim))

    def error(state):
        return jnp.sqrt(((estimate_of(state) - problem.optimum) ** 2).sum(-1)).max()

    data: dict[str, np.ndarray] = {"k": np.asarray(at, float)}
    labels: dict[str, list[str]] = {}
    for fixture, methods in method_cases(problem).items():
        labels[fixture] = list(methods)
        for label, alg in methods.items():
            res = run(alg, optimization_params(ALPHA, x0), seeds=[base_seed],
                      num_steps=num_steps, record_at=at, record_fn=error, progress=False)
            data[f"{fixture}|{label}"] = np.asarray(res.records, np.float64)[0]
    R = weights(g1("row"), 1)[0]
    x_pi = weighted_optimum(problem, g.perron_vector(R))
    data["G1 x_pi distance"] = np.array(np.linalg.norm(x_pi - problem.optimum))
    return data, {"alpha": ALPHA, "num_steps": num_steps, "fixtures": labels, "N": 8, "d": 3,
                  "eigenvalues": [0.5, 2.0], "dtype": "float64 (x64 enabled by the harness)"}


def draw_error_curves(data: dict, parameters: dict):
    fixtures = parameters["fixtures"]
    fig, grid = plt.subplots(2, 3, figsize=(16, 7.5), layout="constrained")
    axes = grid.ravel()
    axes[-1].set_visible(False)
    k = data["k"]
    for ax, (fixture, labels) in zip(axes, fixtures.items(), strict=False):
        for label in labels:
            ax.loglog(k, np.maximum(data[f"{fixture}|{label}"], FLOOR), label=label)
        if fixture.startswith("G1"):
            ax.axhline(float(data["G1 x_pi distance"]), color="0.4", linestyle="--",
                       label=r"$\|x_\pi - x^\star\|$ (DGD's limit, small step)")
        ax.set_title(fixture, fontsize=9)
        ax.set_xlabel("iteration k (steps)")
        ax.set_ylabel(r"error $\max_i \|x_i - x^\star\|$")
        legend_outside(ax, fontsize=7)
    fig.suptitle(rf"every method, one constant step $\alpha$ = {parameters['alpha']}",
                 fontsize=10)
    return fig, axes


@figure("optimization.error_vs_iterations",
        title="decentralized optimization: error vs iterations of every method on G1-G5 "
              "(exact methods vs constant-step DGD's bias)",
        paper="Nedić & Ozdaglar 2009; Nedić & Olshevsky 2015; Nedić, Olshevsky & Shi 2017; "
              "Pu et al. 2021; Shi et al. 2015; Pu & Nedić 2021")
def error_vs_iterations(ctx: FigureContext) -> FigureOutput:
    """Sizes: tiny 200 steps, quick 5000, full 20000."""
    data, parameters = error_curves_data(ctx.pick(tiny=200, quick=5000, full=20_000),
                                         base_seed=ctx.base_seed)
    fig, _ = draw_error_curves(data, parameters)
    return FigureOutput(fig, data, parameters)


def dgd_bias_data(num_points: int, *, base_seed: int = 0) -> tuple[dict, dict]:
    """DGD's closed-form bias for ``alpha = 0.2 * 2^-j``, ``j < num_points``, on G4 and G1."""
    problem = default_problem(base_seed)
    alphas = 0.2 * 0.5 ** np.arange(num_points)
    W4 = weights(g4(), 1)[0]
    R = weights(g1("row"), 1)[0]
    pi = g.perron_vector(R)
    x_pi = weighted_optimum(problem, pi)
    x_star = problem.optimum
    doubly, to_pi, to_star = [], [], []
    for a in alphas:
        X = dgd_fixed_point(problem, W4, a)
        doubly.append(np.linalg.norm(X - x_star, axis=1).max())
        m = pi @ dgd_fixed_point(problem, R, a)
        to_pi.append(np.linalg.norm(m - x_pi))
        to_star.append(np.linalg.norm(m - x_star))
    data = {"alpha": alphas, "G4 bias": np.array(doubly), "G1 to x_pi": np.array(to_pi),
            "G1 to x_star": np.array(to_star),
            "x_pi distance": np.array(np.linalg.norm(x_pi - x_star))}
    return data, {"num_points": num_points, "N": 8, "d": 3}


def draw_dgd_bias(data: dict, parameters: dict):
    fig, ax = plt.subplots(figsize=(6.4, 4.2), layout="constrained")
    a = data["alpha"]
    ax.loglog(a, data["G4 bias"], "o-", label=r"G4: $\max_i \|x_{\alpha,i} - x^\star\|$")
    ax.loglog(a, data["G1 to x_pi"], "s-", label=r"G1: $\|\pi^\top X_\alpha - x_\pi\|$")
    ax.loglog(a, data["G1 to x_star"], "^-", label=r"G1: $\|\pi^\top X_\alpha - x^\star\|$")
    ax.loglog(a, data["G4 bias"][0] * a / a[0], color="0.5", linestyle=":",
              label=r"slope 1 (bias $\propto \alpha$)")
    ax.axhline(float(data["x_pi distance"]), color="0.4", linestyle="--",
               label=r"$\|x_\pi - x^\star\|$")
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(r"constant step size $\alpha$")
    ax.set_ylabel("distance of DGD's fixed point")
    ax.set_title("DGD's constant-step limit (closed form)", fontsize=10)
    legend_outside(ax, fontsize=8)
    return fig, ax


@figure("optimization.dgd_bias",
        title="DGD's constant-step fixed point vs the step size: O(alpha) bias on doubly "
              "stochastic weights, the pi-weighted minimiser on row-stochastic ones",
        paper="Yuan, Ling & Yin 2016 (bias O(alpha)); docs/optimization.md (closed form)")
def dgd_bias(ctx: FigureContext) -> FigureOutput:
    """Sizes: tiny 4 step sizes, quick 9, full 12."""
    data, parameters = dgd_bias_data(ctx.pick(tiny=4, quick=9, full=12),
                                     base_seed=ctx.base_seed)
    fig, _ = draw_dgd_bias(data, parameters)
    return FigureOutput(fig, data, parameters)


def pep_data(max_steps: int, instances: int, *, base_seed: int = 0) -> tuple[dict, dict]:
    """Certificates of DGD (alpha = 1) and EXTRA (alpha = 0.5) for K = 1..max_steps (N = 2)
    and the metric of ``instances`` simulated instances of the class per K."""
    from proofs_checks.optimization.certificates import (
        STEP,
        certify_class,
        random_instances,
        simulate,
    )

    rng = np.random.default_rng(base_seed)
    data: dict[str, np.ndarray] = {"K": np.arange(1, max_steps + 1, dtype=float)}
    for method in ("dgd", "extra"):
        alpha = STEP[method]
        data[f"{method} certificate"] = np.array(
            [certify_class(method, num_agents=2, num_steps=K, step_size=alpha)
             for K in range(1, max_steps + 1)])
        data[f"{method} instances"] = np.stack(
            [simulate(method, *random_instances(instances, 2, 4, rng), alpha, K)
             for K in range(1, max_steps + 1)])                  # [K, instances]
    return data, {"num_agents": 2, "dim": 4, "instances": instances, "steps": STEP,
                  "class": "mu=0.1, L=1, eigenvalues in [-0.5, 0.5], D=E=1"}


def draw_pep(data: dict, parameters: dict):
    fig, ax = plt.subplots(figsize=(6.8, 4.2), layout="constrained")
    K = data["K"]
    for method, color, label in (("dgd", "C0", r"DGD, $\alpha$ = 1"),
                                 ("extra", "C1", r"EXTRA, $\alpha$ = 0.5")):
        inst = data[f"{method} instances"]
        offset = -0.08 if method == "dgd" else 0.08
        ax.scatter(np.repeat(K + offset, inst.shape[1]), inst.ravel(), s=4, alpha=0.25,
                   color=color, label=f"{label}: simulated instances")
        ax.plot(K, data[f"{method} certificate"], "o-", color=color,
                label=f"{label}: certified worst case")
    ax.set_xticks(K)
    ax.set_xlabel("iteration K (steps)")
    ax.set_ylabel(r"mean squared distance $\frac{1}{N}\sum_i \|x_i^K - x^\star\|^2$")
    ax.set_title("worst case certified by performance estimation vs random instances",
                 fontsize=9)
    legend_outside(ax, fontsize=7)
    return fig, ax


@figure("optimization.pep_vs_instances",
        title="certified worst case (PEP) of DGD and EXTRA vs simulated instances of the class",
        paper="Colla & Hendrickx, IEEE TAC 2023 (performance estimation for decentralized "
              "optimization)")
def pep_vs_instances(ctx: FigureContext) -> FigureOutput:
    """Sizes: tiny K <= 2 with 50 instances, quick K <= 3 with 300, full K <= 5 with 900."""
    data, parameters = pep_data(ctx.pick(tiny=2, quick=3, full=5),
                                ctx.pick(tiny=50, quick=300, full=900), base_seed=ctx.base_seed)
    fig, _ = draw_pep(data, parameters)
    return FigureOutput(fig, data, parameters)
