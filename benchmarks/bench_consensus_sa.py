"""Monte-Carlo throughput of consensus SA on distributed TD(0), against numpy references.

Distributed TD(0) (:func:`decentral.consensus_sa.td0_problem` on a random MRP, Markov noise on
the pair chain) with N agents, d features, S seeds, T steps, float32, a constant step, on

* a dense Erdős–Rényi graph (dense backend: one ``W @ Theta`` per step), and
* the exponential graph (i hears i - 2^k; sparse neighbour-table backend),

timed against

* (a) a straightforward numpy implementation written the way such papers' code is: a Python
  loop over seeds and over time, vectorised over agents with a dense ``W @ Theta`` on both
  graphs, ``rng.choice`` for the chain. It is timed on a subset of seeds and steps and
  extrapolated linearly to S x T, after checking linearity on two sizes (the rows report both
  timings and the extrapolation);
* (b) numpy vectorised over seeds: a loop over time of ``W @ Theta`` batched over seeds, the
  chain sampled by one uniform per seed against the cumulative table.

All sides compute the same update (combine-then-adapt, eq. (3)); agreement is checked on a
short run with the chain path replayed. The dense rows also report the fraction of this
machine's dense-matmul rate (GFLOP/s of one large float32 matmul, measured in the same run)
that the decentral side reaches, counting ``2 N^2 d + 2 N d^2`` flops per seed-step, in a row
of its own (target: at least half). Targets: (a) >= 30x on both graphs, (b) >= 3x on the dense
graph and >= 2x on the exponential one (where numpy mixes with the dense ``W``).
"""

from __future__ import annotations

import math
import time
from typing import Any

import jax
import numpy as np

import decentral.graphs as g
from benchmarks.harness import BenchResult, measure, ratio
from decentral.consensus_sa import consensus_sa, random_mrp, sa_params, td0_problem
from decentral.runner import run
from decentral.schedules import constant

__all__ = ["bench_consensus_sa", "numpy_loop", "numpy_vectorised", "matmul_rate"]

ALPHA = 0.01

MATMUL_SHARE_TARGET = 0.5
"""The dense step's share of the machine's float32 matmul rate it should reach."""


def _final_first_agent(state):
    return state.theta[0]


def _record_all(state):
    return {"theta": state.theta, "x": state.x}


def numpy_loop(W, A, B, P, x0, theta0, num_steps: int, seeds, *, seed: int = 0):
    """Reference (a): loops over seeds and time, ``rng.choice`` for the chain; returns the
    final ``[len(seeds), N, d]``."""
    rng = np.random.default_rng(seed)
    S = len(seeds)
    out = np.empty((S,) + theta0.shape, dtype=theta0.dtype)
    states = np.arange(P.shape[0])
    for k in range(S):
        theta, x = theta0.copy(), int(x0[k])
        for _ in range(num_steps):
            v = W @ theta
            theta = v + ALPHA * (v @ A[x].T + B[x])
            x = rng.choice(states, p=P[x])
        out[k] = theta
    return out


def numpy_vectorised(W, A, B, cum, x0, theta0, num_steps: int, *, seed: int = 0,
                     xs=None):
    """Reference (b): one loop over time, every seed at once; the chain by one uniform per seed
    against the cumulative rows ``cum``. ``xs`` ``[T, S]`` replays given chain states instead
    (the agreement check)."""
    rng = np.random.default_rng(seed)
    S = len(x0)
    theta = np.broadcast_to(theta0, (S,) + theta0.shape).copy()
    x = np.asarray(x0).copy()
    for t in range(num_steps):
        if xs is not None:
            x = xs[t]
        v = np.matmul(W, theta)                                   # [S, N, d]
        theta = v + ALPHA * (np.matmul(v, np.swapaxes(A[x], 1, 2)) + B[x])
        if xs is None:
            u = rng.random(S)
            x = (cum[x] <= u[:, None]).sum(axis=1)
    return theta


def matmul_rate(n: int = 2048, repeats: int = 3) -> float:
    """GFLOP/s of one ``n x n`` float32 matmul through numpy's BLAS on this machine."""
    a = np.random.default_rng(0).standard_normal((n, n)).astype(np.float32)
    a @ a
    best = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        a @ a
        best = min(best, time.perf_counter() - t0)
    return 2.0 * n ** 3 / best / 1e9


def _setup(N: int, d: int, states: int):
    prob = td0_problem(*random_mrp(0, num_states=states, num_features=d, num_agents=N), 0.9)
    graphs = {
        "dense ER(p=0.2)": g.static(g.erdos_renyi(N, 0.2, kind="strong", seed=0), rule="row"),
        "exponential (sparse table)": g.static(g.exponential(N), rule="row", backend="sparse"),
    }
    return prob, graphs


def _check_agreement(prob, seq, W32, steps: int = 40, seeds=(0, 1, 2)) -> float:
    """Max |decentral - numpy| over a short run with the chain path replayed (float32)."""
    res = run(consensus_sa(prob, seq), sa_params(constant(ALPHA)), list(seeds), steps,
              record_fn=_record_all, record_initial=True, progress=False)
    theta = np.asarray(res.records["theta"])
    xs = np.asarray(res.records["x"])[:, :-1].T                  # [T, S]
    ref = numpy_vectorised(W32, prob.A.astype(np.float32), prob.b.astype(np.float32), None,
                           xs[0], theta[0, 0], steps, xs=xs)
    return float(np.abs(ref - theta[:, -1]).max())


def bench_consensus_sa(*, S: int, N: int, d: int, T: int, states: int, loop_seeds: int,
                       loop_steps: tuple[int, int], repeats: int = 3) -> list[BenchResult]:
    """The rows of ``consensus_sa.td0`` (see the module docstring)."""
    prob, graphs = _setup(N, d, states)
    rate = matmul_rate()
    A32, B32 = prob.A.astype(np.float32), prob.b.astype(np.float32)
    P, cum = prob.transition, np.cumsum(prob.transition, axis=1)
    x0 = np.zeros(S, dtype=np.int64)
    theta0 = np.zeros((N, d), np.float32)
    rows = []
    flops = (2 * N * N * d + 2 * N * d * d) * S * T
    for label, seq in graphs.items():
        W32 = np.asarray(seq.dense_at(0), np.float32) if seq.backend == "dense" else \
            np.asarray(g.table_to_dense(seq.at(0)), np.float32)
        alg = consensus_sa(prob, seq)
        params = sa_params(constant(ALPHA))
        t_dec, _ = measure(lambda alg=alg, params=params: run(
            alg, params, range(S), T, record_at=[T], record_fn=_final_first_agent,
            progress=False).records, repeats)
        t_vec, _ = measure(lambda W32=W32: numpy_vectorised(W32, A32, B32, cum, x0, theta0, T),
                           max(1, repeats // 2))
        # (a) on a subset, extrapolated: time per seed-step from two sizes (linearity check)
        small, large = loop_steps
        t_small, _ = measure(lambda W32=W32, n=small: numpy_loop(
            W32, A32, B32, P, x0, theta0, n, range(loop_seeds)), 1)
        t_large, _ = measure(lambda W32=W32, n=large: numpy_loop(
            W32, A32, B32, P, x0, theta0, n, range(loop_seeds)), 1)
        per_small = t_small.median_s / (small * loop_seeds)
        per_large = t_large.median_s / (large * loop_seeds)
        t_loop = per_large * S * T
        linear = abs(per_small / per_large - 1.0)
        diff = _check_agreement(prob, seq, W32)
        tol = 1e-4
        size = dict(S=S, N=N, d=d, T=T, mrp_states=states, pair_states=states ** 2,
                    graph=label, backend=seq.backend, devices=len(jax.devices()))
        common: dict[str, Any] = dict(
            name="consensus_sa.td0", dtype="float32", size=size, metric="time_s",
            value=t_dec.median_s, compile_s=t_dec.compile_s, times_s=t_dec.times_s,
            repeats=repeats, max_abs_diff=diff, agree=bool(diff <= tol), tolerance=tol,
            prng_impl=str(jax.config.jax_default_prng_impl),
            enable_x64=bool(jax.config.jax_enable_x64))
        gflops = flops / t_dec.median_s / 1e9
        rows.append(BenchResult(
            variant=f"{label}: vs (a) numpy loop over seeds and time, rng.choice",
            reference=f"numpy loop over seeds and t (W @ Theta, rng.choice), timed on "
                      f"{loop_seeds} seeds x {small} and x {large} steps, extrapolated "
                      f"linearly to S x T (per seed-step {per_small * 1e6:.1f} / "
                      f"{per_large * 1e6:.1f} us: {linear:.0%} apart)",
            reference_value=t_loop, ratio=ratio(t_loop, t_dec.median_s),
            reference_times_s=[t_loop],
            target_ratio=30.0,
            notes=f"target >= 30x; decentral "
                  f"{t_dec.median_s / (S * T) * 1e9:.0f} ns per seed-step",
            extra=dict(per_seed_step_us=[per_small * 1e6, per_large * 1e6],
                       linearity_gap=linear),
            reference_label="numpy double loop", **common))
        rows.append(BenchResult(
            variant=f"{label}: vs (b) numpy vectorised over seeds",
            reference="numpy, loop over t, every seed at once (batched W @ Theta, cumulative-"
                      "table sampling)",
            reference_value=t_vec.median_s, ratio=ratio(t_vec.median_s, t_dec.median_s),
            reference_times_s=t_vec.times_s,
            target_ratio=3.0 if seq.backend == "dense" else 2.0,
            notes=(f"target >= 3x; {gflops:.1f} GFLOP/s = {gflops / rate:.0%} of this "
                   f"machine's float32 matmul rate ({rate:.0f} GFLOP/s, one 2048^2 numpy "
                   "matmul)") if seq.backend == "dense" else
                  "exponential graph: numpy mixes with the dense W",
            extra=dict(gflops=gflops, matmul_gflops=rate),
            reference_label="numpy, batched seeds", **common))
        if seq.backend == "dense":
            at_rate = flops / (rate * 1e9)
            rows.append(BenchResult(
                variant=f"{label}: share of the float32 matmul rate",
                reference=f"the same flops (2 N^2 d + 2 N d^2 per seed-step) at this machine's "
                          f"float32 matmul rate ({rate:.0f} GFLOP/s, one 2048^2 numpy matmul, "
                          f"measured in this run)",
                reference_value=at_rate, ratio=ratio(at_rate, t_dec.median_s),
                reference_times_s=[at_rate], target_ratio=MATMUL_SHARE_TARGET,
                notes=f"target >= {MATMUL_SHARE_TARGET:.0%}; {gflops:.1f} GFLOP/s",
                extra=dict(gflops=gflops, matmul_gflops=rate),
                reference_label="matmul rate", **common))
    return rows
