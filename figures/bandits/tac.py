"""The journal version's figures: Dec-UCB1(beta) and Dec-KL-UCB(varsigma) against single-agent
UCB1 / KL-UCB on connected ER(20, 0.5) graphs (Figs 1-3 with truncated-normal rewards, Figs 4-6
with Beta rewards), and on K6 + C6 with per-agent constants (Figs 8-9).

The setups (graphs, means, the sweep, the reward laws) are those of the journal claims
(:mod:`proofs_checks.bandits.setups`); the three swept values run in one compile per graph (a
params sweep), and the single-agent baselines run on the same seeds, so they see the same
samples.
"""

from __future__ import annotations

import functools
from typing import Any

import matplotlib.pyplot as plt
import numpy as np

from decentral.bandits import (
    DecKLUCBParams,
    DecUCB1Params,
    dec_kl_ucb,
    dec_ucb1,
    kl_ucb,
    ucb1,
)
from figures.registry import FigureContext
from proofs_checks.bandits.setups import (
    SMALL_GROUPS,
    TAC_REWARDS,
    V4_MEANS,
    V4_SWEEP,
    small_graphs,
    tac_arms,
    v4_arms,
    v4_graphs,
)

from .batching import with_shared_sampler
from .common import (
    TIME_LABEL,
    band,
    band_handle,
    evaluate_curves,
    outside_legend,
    seed_list,
)

__all__ = ["AVERAGED_LABEL", "GROUP_LABEL", "tac_data", "draw_tac_sweep", "draw_tac_kl_vs_ucb1",
           "small_graph_data", "draw_small_graphs", "compute_tac", "compute_small_graphs"]

AVERAGED_LABEL = r"agent-averaged pseudo-regret $(1/N)\,\Sigma_i\, R_i(t)$"
"""The y label of the ER(20, 0.5) figures."""

GROUP_LABEL = r"group-mean pseudo-regret $(1/3)\,\Sigma_{i \in G}\, R_i(t)$"
"""The y label of the K6 + C6 figure (a group G of three agents)."""

_COLORS = ("tab:blue", "tab:orange", "tab:green")


# ---------------------------------------------------------------------------------------------
# Figs 1-6: ER(20, 0.5), beta / varsigma sweeps
# ---------------------------------------------------------------------------------------------

def _tac_program_arms(rewards: str, shared_program: bool = False):
    """The arms of ``rewards``; ``shared_program``: a sampler that evaluates both laws
    (:func:`~figures.bandits.batching.with_shared_sampler`; the same rewards), so Figs 1-3 and
    4-6 run with the same four compiled programs: fewer compiles, slower draws (the tiny size,
    where compiling dominates)."""
    arms = tac_arms(rewards)
    return with_shared_sampler(arms, ["truncated_normal", "beta"]) if shared_program else arms


@functools.lru_cache(maxsize=4)
def _tac_runs(num_graphs: int, seeds_per_graph: int, horizon: int, base_seed: int,
              rewards: str = "truncnorm", shared_program: bool = False):
    arms = _tac_program_arms(rewards, shared_program)
    sweep = np.asarray(V4_SWEEP, np.float64)
    kl, u1, t = [], [], None
    for k, adj in enumerate(v4_graphs(num_graphs)):
        seeds = seed_list(base_seed + k * seeds_per_graph, seeds_per_graph)
        a = evaluate_curves(dec_kl_ucb(adj), arms, horizon, seeds,
                            params=DecKLUCBParams(sweep), sweep=True)
        b = evaluate_curves(dec_ucb1(adj), arms, horizon, seeds, params=DecUCB1Params(sweep),
                            sweep=True)
        kl.append(a["regret"].mean(axis=-1))                                # [P, S, R]
        u1.append(b["regret"].mean(axis=-1))
        t = a["t"]
    every = seed_list(base_seed, num_graphs * seeds_per_graph)
    base_kl = evaluate_curves(kl_ucb(), arms, horizon, every,
                              num_agents=20)["regret"].mean(axis=-1)
    base_u1 = evaluate_curves(ucb1(), arms, horizon, every,
                              num_agents=20)["regret"].mean(axis=-1)
    return {"t": t, "dec_kl_ucb": np.concatenate(kl, axis=1),
            "dec_ucb1": np.concatenate(u1, axis=1), "kl_ucb": base_kl, "ucb1": base_u1}


def tac_data(num_graphs: int, seeds_per_graph: int, horizon: int, base_seed: int = 0,
             rewards: str = "truncnorm", shared_program: bool = False
             ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """The journal version's Figs 1-3 (``rewards="truncnorm"``) or 4-6 (``"beta"``, see
    :data:`~proofs_checks.bandits.setups.TAC_REWARDS`): Dec-KL-UCB and Dec-UCB1 swept over
    :data:`~proofs_checks.bandits.setups.V4_SWEEP` on the first ``num_graphs`` connected
    ER(20, 0.5) graphs, and 20 independent KL-UCB / UCB1 agents on the same streams.

    Graph ``k`` runs seeds ``base_seed + k S + 0..S-1``; the baselines (which need no graph)
    run all ``G S`` seeds once. ``shared_program`` (the tiny size) only changes how the
    runs are compiled (:func:`_tac_program_arms`), not the numbers.

    Returns:
        ``(data, parameters)``: data ``t [R]``, agent-averaged regret ``dec_kl_ucb`` and
        ``dec_ucb1`` ``[P, G*S, R]`` (P = the sweep), ``kl_ucb`` and ``ucb1`` ``[G*S, R]``,
        ``sweep [P]``, ``degrees [G, 20]`` (``|N_i|``).
    """
    arms = _tac_program_arms(rewards)
    runs = _tac_runs(num_graphs, seeds_per_graph, horizon, base_seed, rewards, shared_program)
    graphs = v4_graphs(num_graphs)
    data = {**runs, "sweep": np.asarray(V4_SWEEP, np.float64),
            "degrees": np.stack([a.sum(axis=1) for a in graphs])}
    total = num_graphs * seeds_per_graph
    parameters = {
        "num_agents": 20, "num_arms": 5, "means": list(V4_MEANS), "horizon": horizon,
        "num_graphs": num_graphs, "seeds_per_graph": seeds_per_graph, "runs": total,
        "seeds": seed_list(base_seed, total), "sweep": list(V4_SWEEP),
        "graphs": "the first connected networkx fast_gnp_random_graph(20, 0.5, seed=s), s = 0, "
                  "1, ... (self-loops added); Metropolis weights",
        "rewards": rewards, "arms": TAC_REWARDS[rewards]["text"],
        "sampler": "evaluates both laws per draw (one program for Figs 1-6, the same rewards)"
                   if shared_program else "the law's own sampler",
        "arms_parameters": {"first": arms.first[0].tolist(), "second": arms.second[0].tolist(),
                            "true_means": arms.means[0].tolist()},
        "figures": dict(zip(("kl", "ucb1", "kl_vs_ucb1"), TAC_REWARDS[rewards]["figures"],
                            strict=True)),
        "variants": {"dec_ucb1": "width (1 + beta) sqrt(3 ln t / (|N_i| n))",
                     "dec_kl_ucb": "Q_i(t) = 3 (1 + varsigma)(ln t + 3 ln ln t) / (2 |N_i|), "
                                   "bisection index, no +0.1 floor",
                     "kl_ucb": "n kl(xbar, q) <= ln t (c = 0), bisection, no +0.1 floor",
                     "ucb1": "width sqrt(2 ln t / n)"},
        "metric": "agent-averaged standard pseudo-regret (the t = 0 round not charged, for "
                  "every policy)",
        "band": "+-1 std over runs (graph x seed)",
        "paper_setup": "100 runs (graph s with run s), T = 10^4",
    }
    return data, parameters


def _tac_title(parameters: dict[str, Any]) -> str:
    law = (r"Beta($\mu_k$, $1 - \mu_k$)" if parameters.get("rewards") == "beta" else
           "truncated normal, sd 0.1")
    return (f"N=20 agents on {parameters['num_graphs']} connected ER(20, 0.5) graph(s) x "
            f"{parameters['seeds_per_graph']} seeds = {parameters['runs']} runs, T="
            f"{parameters['horizon']}\nM=5, $\\mu$ = {tuple(parameters['means'])}, {law}; "
            "curves: mean over runs")


def _tac_number(parameters: dict[str, Any], which: str) -> int:
    return parameters.get("figures", {"kl": 1, "ucb1": 2, "kl_vs_ucb1": 3})[which]


def draw_tac_sweep(data: dict[str, np.ndarray], parameters: dict[str, Any], which: str):
    """Journal Fig 1 / 4 (``which="kl"``) or Fig 2 / 5 (``"ucb1"``) from :func:`tac_data`'s
    output; returns ``(fig, ax)``."""
    if which not in ("kl", "ucb1"):
        raise ValueError(f"which must be 'kl' or 'ucb1'; got {which!r}.")
    dec, base = ("dec_kl_ucb", "kl_ucb") if which == "kl" else ("dec_ucb1", "ucb1")
    symbol = r"\varsigma" if which == "kl" else r"\beta"
    name = "Dec-KL-UCB" if which == "kl" else "Dec-UCB1"
    fig, ax = plt.subplots(figsize=(10.5, 5.8), layout="constrained")
    t = data["t"]
    lines = [band(ax, t, data[dec][p], color=_COLORS[p % 3],
                  label=f"{name}, ${symbol} = {value:g}$")
             for p, value in enumerate(data["sweep"])]
    lines.append(band(ax, t, data[base], color="black", linestyle="--",
                      label="KL-UCB (single agent, $c = 0$)" if which == "kl" else
                      "UCB1 (single agent)"))
    ax.set_xlabel(TIME_LABEL)
    ax.set_ylabel(AVERAGED_LABEL)
    ax.grid(alpha=0.3)
    fig.legend(handles=[*lines, band_handle("over runs (graph x seed)")],
               loc="outside right upper", fontsize=9, frameon=False)
    ax.set_title(f"journal Fig {_tac_number(parameters, which)}: {name} (${symbol}$ swept) vs "
                 f"{'KL-UCB' if which == 'kl' else 'UCB1'}\n" + _tac_title(parameters),
                 fontsize=9)
    return fig, ax


def draw_tac_kl_vs_ucb1(data: dict[str, np.ndarray], parameters: dict[str, Any]):
    """Journal Fig 3 / 6 (Dec-KL-UCB vs Dec-UCB1 at equal varsigma = beta) from
    :func:`tac_data`'s output; returns ``(fig, axes)``."""
    sweep = data["sweep"]
    fig, axes = plt.subplots(1, len(sweep), figsize=(5.4 * len(sweep), 5.6), squeeze=False,
                             layout="constrained")
    t = data["t"]
    lines = []
    for p, value in enumerate(sweep):
        ax = axes[0, p]
        lines = [band(ax, t, data["dec_kl_ucb"][p], color="tab:purple",
                      label=r"Dec-KL-UCB, $\varsigma$ as in the panel title"),
                 band(ax, t, data["dec_ucb1"][p], color="tab:green", linestyle="--",
                      label=r"Dec-UCB1, $\beta$ as in the panel title")]
        ax.set_title(f"$\\varsigma = \\beta = {value:g}$", fontsize=10)
        ax.set_xlabel(TIME_LABEL)
        ax.set_ylabel(AVERAGED_LABEL)
        ax.grid(alpha=0.3)
    outside_legend(fig, [*lines, band_handle("over runs (graph x seed)")], ncols=3)
    fig.suptitle(f"journal Fig {_tac_number(parameters, 'kl_vs_ucb1')}: Dec-KL-UCB vs "
                 "Dec-UCB1 at equal constants\n" + _tac_title(parameters), fontsize=10)
    return fig, axes


def compute_tac(ctx: FigureContext, rewards: str) -> tuple[dict[str, np.ndarray], dict]:
    """:func:`tac_data` of journal Figs 1-3 (``rewards="truncnorm"``) or 4-6 (``"beta"``) at
    the size of ``ctx`` (graphs x seeds per graph, T): tiny 1 x 4, 200; quick 1 x 20, 2000;
    full 10 x 10, 10^4. The three figures of a reward law share these runs; at the tiny size
    the six share their compiled programs (``shared_program``)."""
    return tac_data(num_graphs=ctx.pick(tiny=1, quick=1, full=10),
                    seeds_per_graph=ctx.pick(tiny=4, quick=20, full=10),
                    horizon=ctx.pick(tiny=200, quick=2000, full=10_000),
                    base_seed=ctx.base_seed, rewards=rewards, shared_program=ctx.size == "tiny")


# ---------------------------------------------------------------------------------------------
# Figs 8-9: K6 + C6 with per-agent constants
# ---------------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=4)
def _small_runs(num_seeds: int, horizon: int, base_seed: int):
    adj, per_agent = small_graphs()
    seeds = seed_list(base_seed, num_seeds)
    u1 = evaluate_curves(dec_ucb1(adj, beta=per_agent), v4_arms(), horizon, seeds)
    kl = evaluate_curves(dec_kl_ucb(adj, varsigma=per_agent), v4_arms(), horizon, seeds)
    return {"t": u1["t"], "dec_ucb1": u1["regret"], "dec_kl_ucb": kl["regret"]}


def small_graph_data(num_seeds: int, horizon: int, base_seed: int = 0
                     ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """The journal version's K6 + C6 experiment
    (:func:`~proofs_checks.bandits.setups.small_graphs`): Dec-UCB1 with per-agent beta and
    Dec-KL-UCB with the same values as per-agent varsigma.

    Returns:
        ``(data, parameters)``: data ``t [R]``, ``dec_ucb1`` and ``dec_kl_ucb``
        ``[S, R, 12]`` per-agent regret, ``per_agent_constant [12]``, ``adjacency [12, 12]``.
    """
    runs = _small_runs(num_seeds, horizon, base_seed)
    adj, per_agent = small_graphs()
    data = {**runs, "per_agent_constant": per_agent.astype(np.float64),
            "adjacency": adj.astype(np.int8)}
    parameters = {
        "num_agents": 12, "num_arms": 5, "means": list(V4_MEANS), "horizon": horizon,
        "num_seeds": num_seeds, "seeds": seed_list(base_seed, num_seeds),
        "graph": "K6 (agents 0-5, |N_i| = 6) and a 6-cycle (agents 6-11, |N_i| = 3), "
                 "disconnected; Metropolis weights",
        "per_agent_constant": per_agent.tolist(), "groups": SMALL_GROUPS,
        "arms": "normal truncated to [0, 1], location mu_k, sd 0.1",
        "variants": {"dec_ucb1": "width (1 + beta_i) sqrt(3 ln t / (|N_i| n))",
                     "dec_kl_ucb": "Q_i(t) = 3 (1 + varsigma_i)(ln t + 3 ln ln t) / (2 |N_i|)"},
        "figure_numbers": "the paper's Figs 8-9 show these two variants; which is 8 and which "
                          "9 is not known here",
        "band": "+-1 std over seeds of the group's mean regret"}
    return data, parameters


_GROUP_STYLES = {"K6": ("tab:blue", r"K6 ($|N_i| = 6$)"), "C6": ("tab:red", r"C6 ($|N_i| = 3$)")}


def draw_small_graphs(data: dict[str, np.ndarray], parameters: dict[str, Any]):
    """Draw the K6 + C6 figure from :func:`small_graph_data`'s output (Dec-UCB1 left,
    Dec-KL-UCB right); returns ``(fig, axes)``."""
    fig, axes = plt.subplots(1, 2, figsize=(13, 6.0), sharey=True, layout="constrained")
    t = data["t"]
    lines = []
    for ax, key, symbol in zip(axes, ("dec_ucb1", "dec_kl_ucb"), (r"\beta", r"\varsigma"),
                               strict=True):
        lines = []
        for group, members in parameters["groups"].items():
            component, constant = group.split(", beta=")
            color, name = _GROUP_STYLES[component]
            lines.append(band(ax, t, data[key][:, :, members].mean(axis=2), color=color,
                              linestyle="--" if constant == "1" else "-",
                              label=f"{name}, $\\beta_i = \\varsigma_i = {constant}$ (agents "
                                    f"{members[0]}-{members[-1]})"))
        name = "Dec-UCB1" if key == "dec_ucb1" else "Dec-KL-UCB"
        ax.set_title(f"{name}, per-agent ${symbol}_i$", fontsize=10)
        ax.set_xlabel(TIME_LABEL)
        ax.set_ylabel(GROUP_LABEL)
        ax.yaxis.set_tick_params(labelleft=True)
        ax.grid(alpha=0.3)
    outside_legend(fig, [*lines, band_handle("over seeds of the group mean")], ncols=3)
    fig.suptitle(f"journal Figs 8-9: K6 ($|N_i| = 6$) + 6-cycle ($|N_i| = 3$), disconnected, "
                 f"N=12, M=5, truncated normal sd 0.1, T={parameters['horizon']}, "
                 f"{parameters['num_seeds']} seeds\nper-agent constants 1 / 0.01 within each "
                 "component; curves: mean over seeds of each group's mean pseudo-regret",
                 fontsize=10)
    return fig, axes


def compute_small_graphs(ctx: FigureContext) -> tuple[dict[str, np.ndarray], dict]:
    """:func:`small_graph_data` at the size of ``ctx`` (seeds, T): tiny 4, 200; quick 50, 2000;
    full 100, 10^4."""
    return small_graph_data(num_seeds=ctx.pick(tiny=4, quick=50, full=100),
                            horizon=ctx.pick(tiny=200, quick=2000, full=10_000),
                            base_seed=ctx.base_seed)
