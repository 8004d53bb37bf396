"""The setups of the consensus-SA claims, shared with their figures and the push-SA claims
(Lin, Gupta, Liu, "Finite-Time Error Bounds for Distributed Linear Stochastic Approximation"):
the common problem and graphs (``docs/consensus_sa.md`` §5), random problems and weight
stacks for the identities, and the doubling-epoch sequences of the claims without A6.
"""

from __future__ import annotations

import math

import numpy as np

import decentral.graphs as g
from decentral.consensus_sa import (
    consensus_sa,
    random_mrp,
    sa_params,
    td0_problem,
)
from decentral.consensus_sa.problem import LinearSAProblem
from decentral.runner import run
from decentral.schedules import harmonic
from proofs_checks.graphs import ring_with_chord

__all__ = ["common_problem", "chord_weights", "other_chord_weights", "random_linear_problem",
           "random_row_stack", "consensus_trial_stack", "epoch_stack", "run_epochs"]


def common_problem(seed: int = 3) -> LinearSAProblem:
    """Distributed TD(0): random MRP (8 states, 3 features, 6 agents), discount 0.8."""
    return td0_problem(*random_mrp(seed, num_states=8, num_features=3, num_agents=6), 0.8)


def chord_weights() -> np.ndarray:
    """Row-normalised directed 6-ring with chord 3 -> 0 (pi = (3,4,4,4,2,2)/19)."""
    return g.row_stochastic(ring_with_chord())


def other_chord_weights() -> np.ndarray:
    """Row-normalised 6-ring with the chord 0 -> 3 instead: another Perron vector."""
    return g.row_stochastic(g.add_self_loops(g.ring(6) | g.from_edges(6, [(0, 3)])))


def random_linear_problem(rng: np.random.Generator, *, num_states=4, num_agents=5, dim=3,
                          scale=0.3) -> LinearSAProblem:
    """Random tables A(x) ~ scale N(0, 1), b(x) ~ N(0, 1) on a random chain (identities only:
    A need not be Hurwitz)."""
    P = rng.dirichlet(np.ones(num_states), size=num_states)
    A = scale * rng.standard_normal((num_states, dim, dim))
    b = rng.standard_normal((num_states, num_agents, dim))
    return LinearSAProblem(P, A, b)


def random_row_stack(rng: np.random.Generator, n: int, steps: int, p: float = 0.4,
                     kind: str = "row") -> np.ndarray:
    """``[steps, n, n]`` weights of independent random digraphs (self-loops, each row/column
    rule), not doubly stochastic."""
    adj = (rng.random((steps, n, n)) < p) | np.eye(n, dtype=bool)[None]
    rule = g.row_stochastic if kind == "row" else g.column_stochastic
    return np.stack([rule(a) for a in adj])


def consensus_trial_stack(rng: np.random.Generator, n: int, window: int, steps: int,
                          extra: float = 0.15) -> np.ndarray:
    """Row-stochastic ``[steps, n, n]`` whose every ``window`` consecutive graphs contain the
    directed ring (its edges spread over the window) plus random extra edges."""
    ring_edges = [(i, (i + 1) % n) for i in range(n)]
    out = []
    for t in range(steps):
        part = [e for k, e in enumerate(ring_edges) if k % window == t % window]
        adj = g.add_self_loops(g.from_edges(n, part) | (rng.random((n, n)) < extra))
        out.append(g.row_stochastic(adj))
    return np.stack(out)


def epoch_stack(Wa: np.ndarray, Wb: np.ndarray, num_steps: int) -> np.ndarray:
    """W_t = Wa on epochs [2^k, 2^{k+1}) with k even (and t = 0), Wb with k odd."""
    t = np.arange(num_steps)
    k = np.floor(np.log2(np.maximum(t, 1))).astype(int)
    return np.where((k % 2 == 0)[:, None, None], Wa[None], Wb[None])


def _avg_dev(state):
    th = state.theta
    avg = th.mean(axis=0)
    return {"avg": avg, "max_dev": ((th - avg) ** 2).sum(-1).max() ** 0.5}


def run_epochs(problem, Wa, Wb, num_steps, seeds, alpha0=5.0, t0=51.0):
    """Consensus SA on :func:`epoch_stack`, recorded at the epoch ends 1, 2, 4, ..., T."""
    seq = g.explicit(epoch_stack(Wa, Wb, num_steps))
    at = 2 ** np.arange(int(math.log2(num_steps)) + 1)
    res = run(consensus_sa(problem, seq), sa_params(harmonic(alpha0, t0)), list(seeds),
              num_steps, record_at=at, record_fn=_avg_dev, progress=False)
    return at, np.asarray(res.records["avg"], np.float64), np.asarray(res.records["max_dev"],
                                                                       np.float64)
