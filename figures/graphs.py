"""Figures of the graph claims: plain consensus reaching its claimed limit ``1 π_0ᵀ x(0)``.

One figure, ``graphs.consensus_disagreement``: for plain consensus ``x(t+1) = W(t) x(t)``
(:func:`decentral.consensus.consensus`, ``x(0) ~ N(0, I)`` per seed, float64) the disagreement
``max_i |x_i(t) − π_0ᵀ x(0)|`` against t on a log scale, mean over seeds with a 10–90% band,
for the four sequences of the consensus claims of ``proofs_checks/graphs.py``:

* **static** — the directed 6-ring with chord 3→0, row-normalised (not doubly stochastic):
  ``π_0`` is its left Perron vector (claim ``graphs.consensus_static_perron``);
* **periodic** — one-peer exponential graphs on 6 agents, period 3, doubly stochastic:
  ``π_0`` is uniform (``graphs.consensus_doubly_average``);
* **B-connected** — two weight-balanced sub-graphs alternating (two 3-cycles; two 2-cycles
  bridging them), neither strongly connected alone, their union is (B = 2); weights
  ``I − c D_π⁻¹ L_t`` sharing a prescribed, non-uniform π (as in the claim
  ``graphs.consensus_prescribed_pi``, which draws its sub-graphs in random order);
* **random edge drops** — every edge of K_10 dropped with probability 0.7 per step, rows
  re-weighted; one realisation shared by the seeds, ``π_0`` by the backward recursion of the
  absolute probability sequence (``graphs.consensus_random_aps``).

The claimed limit of every curve is computed, not assumed: ``π_0`` comes from
:func:`decentral.graphs.absolute_probability_sequence` (the Perron vector for the static case).
Sources: classical consensus (Touri 2012; Nedić & Liu 2017); Lin, Gupta, Liu, *Finite-Time
Error Bounds for Distributed Linear Stochastic Approximation* (absolute probability sequence,
Definition 2, Lemma 1).
"""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
import numpy as np

import decentral.graphs as g
from decentral.consensus import consensus, consensus_params
from decentral.plotting import plot_curves
from decentral.runner import run
from figures.registry import FigureContext, FigureOutput, figure

__all__ = [
    "PRESCRIBED_PI",
    "ROUNDOFF_FLOOR",
    "consensus_cases",
    "disagreement",
    "consensus_disagreement_data",
    "draw_consensus_disagreement",
]

PRESCRIBED_PI = np.array([0.30, 0.20, 0.15, 0.15, 0.12, 0.08])
"""The prescribed left eigenvector of the B-connected case."""

ROUNDOFF_FLOOR = 1e-17
"""Disagreements below this are drawn at it (an exact 0 has no place on a log axis)."""


def _ring_with_chord() -> np.ndarray:
    return g.add_self_loops(g.ring(6) | g.from_edges(6, [(3, 0)]))


def _b_connected_pair() -> list[np.ndarray]:
    """Two weight-balanced sub-graphs on 6 agents, neither strongly connected: the 3-cycles
    0->1->2->0 and 3->4->5->3, and the 2-cycles 2<->3 and 5<->0 bridging them."""
    return [
        g.from_edges(6, [(0, 1), (1, 2), (2, 0), (3, 4), (4, 5), (5, 3)]),
        g.from_edges(6, [(2, 3), (3, 2), (5, 0), (0, 5)]),
    ]


def consensus_cases(num_steps: int, seed: int = 0) -> dict[str, dict[str, Any]]:
    """The four graph sequences of the figure: key -> ``{"seq", "label", "description"}``.

    Args:
        num_steps: horizon T (unused by these sequences, which are unbounded; kept so a case
            that needs an explicit stack of T graphs can be added).
        seed: integer seed of the random edge drops (their key is ``seed + 11``).
    """
    W = g.row_stochastic(_ring_with_chord())
    pair = np.stack([g.prescribed_pi_weights(a, PRESCRIBED_PI) for a in _b_connected_pair()])
    return {
        "static": {
            "seq": g.static(W),
            "label": r"static: 6-ring + chord $3 \to 0$",
            "description": "fixed row-normalised directed 6-ring with chord 3->0 (not doubly "
                           "stochastic); pi_0 = left Perron vector",
        },
        "periodic": {
            "seq": g.one_peer_exponential(6),
            "label": "periodic: one-peer exponential, $N = 6$",
            "description": "one-peer exponential graphs on 6 agents (period 3, doubly "
                           "stochastic); pi_0 = uniform",
        },
        "b_connected": {
            "seq": g.periodic(pair),
            "label": r"$B$-connected ($B = 2$): alternating sub-graphs, prescribed $\pi$",
            "description": "two weight-balanced sub-graphs alternating (3-cycles {0,1,2} and "
                           "{3,4,5}; 2-cycles 2<->3 and 5<->0), neither strongly connected, "
                           "W_t = I - c D_pi^-1 L_t with prescribed pi "
                           f"{PRESCRIBED_PI.tolist()}",
        },
        "random_drops": {
            "seq": g.random_edge_drops(g.complete(10), 0.7, rule="row", key=seed + 11),
            "label": "random edge drops: $K_{10}$, $p = 0.7$",
            "description": "each edge of K_10 dropped with probability 0.7 per step, rows "
                           f"re-weighted; one realisation (key {seed + 11}) shared by the seeds; "
                           "pi_0 by backward recursion",
        },
    }


def disagreement(x: np.ndarray, pi0: np.ndarray) -> np.ndarray:
    """``max_i |x_i(t) − π_0ᵀ x(0)|`` from states ``x [S, T+1, N]`` (``x[:, 0]`` = x(0)):
    ``[S, T+1]``."""
    x = np.asarray(x, dtype=np.float64)
    target = x[:, 0, :] @ np.asarray(pi0, dtype=np.float64)
    return np.max(np.abs(x - target[:, None, None]), axis=2)


def consensus_disagreement_data(num_seeds: int, num_steps: int, base_seed: int = 0
                                ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Run plain consensus on every case of :func:`consensus_cases` and measure the
    disagreement with its claimed limit.

    Returns:
        ``(data, parameters)``: data holds ``t [T+1]`` and, per case key ``k``,
        ``k_error [S, T+1]`` (per seed), ``k_pi0 [N]``; parameters the sizes, seeds and case
        descriptions.
    """
    seeds = list(range(base_seed, base_seed + num_seeds))
    data: dict[str, np.ndarray] = {}
    described = {}
    steps = None
    for key, case in consensus_cases(num_steps, seed=base_seed).items():
        seq = case["seq"]
        pi0 = np.asarray(g.absolute_probability_sequence(seq, 0)[0], dtype=np.float64)
        res = run(consensus(seq), consensus_params(), seeds, num_steps, record_every=1,
                  record_initial=True, progress=False)
        err = disagreement(res.records.x, pi0)
        if not np.all(np.isfinite(err)):
            raise FloatingPointError(f"case {key!r}: non-finite disagreement; the run diverged.")
        data[f"{key}_error"] = err
        data[f"{key}_pi0"] = pi0
        steps = np.asarray(res.record_steps)
        window = g.connectivity_window(seq, horizon=num_steps if seq.form == "random" else None)
        described[key] = {"label": case["label"], "description": case["description"],
                          "n": int(seq.n), "form": seq.form, "connectivity_window": window,
                          "dtype": str(res.records.x.dtype)}
    data["t"] = steps
    parameters = {"num_seeds": num_seeds, "num_steps": num_steps, "seeds": seeds,
                  "x0": "N(0, I) per seed from the runner's init key",
                  "band": "10-90% over seeds", "cases": described,
                  "roundoff_floor": ROUNDOFF_FLOOR}
    return data, parameters


def draw_consensus_disagreement(data: dict[str, np.ndarray], parameters: dict[str, Any]):
    """Draw the figure from :func:`consensus_disagreement_data`'s output; returns ``(fig, ax)``."""
    cases = parameters["cases"]
    curves = {cases[k]["label"]: np.maximum(data[f"{k}_error"], ROUNDOFF_FLOOR) for k in cases}
    fig, ax = plt.subplots(figsize=(9.0, 4.2))
    plot_curves(data["t"], curves, logy=True, ax=ax, xlabel="$t$ (steps)",
                ylabel=r"disagreement $\max_i\,|x_i(t) - \pi_0^\top x(0)|$",
                title=f"plain consensus $x(t+1) = W(t)\\,x(t)$: mean over "
                      f"{parameters['num_seeds']} seeds")
    fig.tight_layout()
    return fig, ax


@figure("graphs.consensus_disagreement",
        title="plain consensus: disagreement with the claimed limit 1 pi_0^T x(0) vs t, on a "
              "static, a periodic, a B-connected and a random-edge-drop sequence",
        paper="classical consensus; Lin, Gupta, Liu (absolute probability sequence, Def. 2, "
              "Lemma 1); claims graphs.consensus_*")
def consensus_disagreement(ctx: FigureContext) -> FigureOutput:
    """The registered figure: sizes tiny 4 seeds x 30 steps, quick 64 x 300, full 256 x 600."""
    data, parameters = consensus_disagreement_data(
        num_seeds=ctx.pick(tiny=4, quick=64, full=256),
        num_steps=ctx.pick(tiny=30, quick=300, full=600), base_seed=ctx.base_seed)
    fig, _ = draw_consensus_disagreement(data, parameters)
    return FigureOutput(fig, data, parameters)
