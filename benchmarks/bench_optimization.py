"""Benchmarks ``optimization.methods`` and ``optimization.sparse_scale``: the methods of
:mod:`decentral.optimization` through :func:`decentral.runner.run` against numpy references.

Problem: ``random_quadratic(N, d, strong_convexity=0.5, smoothness=2.0, seed=0)``, a constant
step ``alpha``, exact gradients (``gradient_noise = 0``: the library then draws no noise
sample), every seed starting from the same random ``x0``. Graphs: a strongly connected directed
Erdős–Rényi graph (row weights for ``dgd``, column weights for ``subgradient_push`` and
``push_diging``, both for ``push_pull``) and a connected undirected one with Metropolis
weights (``diging``, ``extra``, ``dsgt``, ``dsgd``).

* ``optimization.methods`` (dense backend, float64 by default): one row per method, against
  a numpy reference written the way such papers' code is: a Python loop over time and, inside
  it, over agents, each agent mixing its in-neighbours' values (``w_i @ X[:, N_i]``) and
  evaluating its own gradient, vectorised over seeds (arrays ``[S, N, d]``); messages that
  are element-wise in the sender's own values (``x_j - alpha y_j``) are formed for all agents
  at once. Same update, same order as the method's module docstring. The reference is timed
  on two short horizons (its time per step must agree within 20 %) and extrapolated linearly
  to T. The decentral time is the **first call** (compilation + run), the ratio's
  denominator; the warm median is reported next to it. Target: ratio >= 20.
* ``optimization.sparse_scale`` (sparse backend, float32 by default): agent-steps per second
  at a large N, against the same update in matrix form with ``scipy.sparse`` CSR products over
  ``[N, S d]`` (one loop over time, vectorised over agents and seeds), timed on a few steps
  and scaled to T. Reported without a target; the decentral time is the warm median.

Agreement: both sides run ``check_steps`` steps from the same ``x0`` and their final
estimates (``estimate_of``: the de-biased ratios for the push-sum methods) must agree to the
row's tolerance, relative to ``max(1, max |reference|)``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np
import scipy.sparse as sp

import decentral.graphs as g
import decentral.optimization as opt
from benchmarks.harness import BenchResult, Timing, measure, prng_impl, ratio, x64_for
from decentral.runner import run

__all__ = ["bench_optimization_methods", "bench_optimization_sparse", "METHODS",
           "agent_loop_reference", "matrix_reference"]

METHODS = ("dgd", "subgradient_push", "diging", "push_diging", "push_pull", "extra", "dsgt",
           "dsgd")

WEIGHTS: dict[str, tuple[tuple[str, str], ...]] = {
    "dgd": (("directed", "row"),),
    "subgradient_push": (("directed", "column"),),
    "diging": (("undirected", "metropolis"),),
    "push_diging": (("directed", "column"),),
    "push_pull": (("directed", "row"), ("directed", "column")),
    "extra": (("undirected", "metropolis"),),
    "dsgt": (("undirected", "metropolis"),),
    "dsgd": (("undirected", "metropolis"),),
}
"""Per method, the (graph, weight rule) of each sequence its factory takes, in order."""

TOLERANCES = {"float32": 1e-4, "float64": 1e-9}
"""Agreement tolerance per dtype, relative to ``max(1, max |reference|)``."""

METHODS_TARGET = 20.0
LINEARITY_GAP = 0.2


def _estimate(state):
    return opt.estimate_of(state)


def _graphs(N: int, edge_prob: float, *, sparse: bool) -> dict[str, Any]:
    """The directed (strongly connected) and undirected (connected) Erdős–Rényi patterns."""
    tries = 1 if sparse else 200
    return {"directed": g.erdos_renyi(N, edge_prob, kind="strong", seed=0, max_tries=tries,
                                      sparse=sparse),
            "undirected": g.erdos_renyi(N, edge_prob, kind="undirected", seed=1,
                                        max_tries=tries, sparse=sparse)}


def _sequences(method: str, patterns: dict[str, Any], backend: str) -> list:
    return [g.static(patterns[graph], rule=rule, backend=backend)
            for graph, rule in WEIGHTS[method]]


def _algorithm(method: str, problem, seqs: list):
    return getattr(opt, method)(problem, *seqs)


def _x0(N: int, d: int, dtype: str) -> np.ndarray:
    return np.random.default_rng(12345).standard_normal((N, d)).astype(dtype)


def _run_estimate(alg, params, S: int, T: int):
    """The final estimates ``[S, N, d]`` after T steps (one record, at T)."""
    res = run(alg, params, seeds=range(S), num_steps=T, record_at=[T], record_fn=_estimate,
              progress=False)
    return res.records[:, -1]


# --- reference (a): loops over time and agents, vectorised over seeds -----------------------

def _in_lists(W: sp.csr_array, dtype: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per agent i: its in-neighbours ``N_i`` (self included) and the weights ``W[i, N_i]``."""
    W = sp.csr_array(W)
    return [(W.indices[W.indptr[i]:W.indptr[i + 1]].copy(),
             W.data[W.indptr[i]:W.indptr[i + 1]].astype(dtype))
            for i in range(W.shape[0])]


def _loop_dgd(A, b, lists, x, alpha, T):
    (R,) = lists
    S, N, d = x.shape
    for _ in range(T):
        new = np.empty_like(x)
        for i in range(N):
            idx, w = R[i]
            new[:, i] = w @ x[:, idx] - alpha * (x[:, i] @ A[i] - b[i])
        x = new
    return x


def _loop_subgradient_push(A, b, lists, x, alpha, T):
    (C,) = lists
    S, N, d = x.shape
    y = np.ones((S, N), x.dtype)
    z = x
    for _ in range(T):
        nx, ny, nz = np.empty_like(x), np.empty_like(y), np.empty_like(x)
        for i in range(N):
            idx, w = C[i]
            wi = w @ x[:, idx]
            yi = y[:, idx] @ w
            zi = wi / yi[:, None]
            nx[:, i] = wi - alpha * (zi @ A[i] - b[i])
            ny[:, i] = yi
            nz[:, i] = zi
        x, y, z = nx, ny, nz
    return z


def _gradients(A, b, x):
    return np.einsum("sne,nde->snd", x, A) - b


def _loop_diging(A, b, lists, x, alpha, T):
    (W,) = lists
    S, N, d = x.shape
    gr = _gradients(A, b, x)
    y = gr
    for _ in range(T):
        nx, ny, ng = np.empty_like(x), np.empty_like(x), np.empty_like(x)
        for i in range(N):
            idx, w = W[i]
            xi = w @ x[:, idx] - alpha * y[:, i]
            gi = xi @ A[i] - b[i]
            ny[:, i] = w @ y[:, idx] + gi - gr[:, i]
            nx[:, i], ng[:, i] = xi, gi
        x, y, gr = nx, ny, ng
    return x


def _loop_push_diging(A, b, lists, x, alpha, T):
    (C,) = lists
    S, N, d = x.shape
    u, v, gr = x, np.ones((S, N), x.dtype), _gradients(A, b, x)
    y = gr
    for _ in range(T):
        msg = u - alpha * y
        nu, nv, nx = np.empty_like(x), np.empty_like(v), np.empty_like(x)
        ny, ng = np.empty_like(x), np.empty_like(x)
        for i in range(N):
            idx, w = C[i]
            ui = w @ msg[:, idx]
            vi = v[:, idx] @ w
            xi = ui / vi[:, None]
            gi = xi @ A[i] - b[i]
            ny[:, i] = w @ y[:, idx] + gi - gr[:, i]
            nu[:, i], nv[:, i], nx[:, i], ng[:, i] = ui, vi, xi, gi
        u, v, x, y, gr = nu, nv, nx, ny, ng
    return x


def _loop_push_pull(A, b, lists, x, alpha, T):
    R, C = lists if len(lists) == 2 else (lists[0], lists[0])
    S, N, d = x.shape
    gr = _gradients(A, b, x)
    y = gr
    for _ in range(T):
        msg = x - alpha * y
        nx, ny, ng = np.empty_like(x), np.empty_like(x), np.empty_like(x)
        for i in range(N):
            idx, w = R[i]
            xi = w @ msg[:, idx]
            gi = xi @ A[i] - b[i]
            idx, w = C[i]
            ny[:, i] = w @ y[:, idx] + gi - gr[:, i]
            nx[:, i], ng[:, i] = xi, gi
        x, y, gr = nx, ny, ng
    return x


def _loop_extra(A, b, lists, x, alpha, T):
    (W,) = lists
    S, N, d = x.shape
    x_prev, wx_prev, ag_prev = x, np.zeros_like(x), np.zeros_like(x)
    for t in range(T):
        nx, nwx, nag = np.empty_like(x), np.empty_like(x), np.empty_like(x)
        for i in range(N):
            idx, w = W[i]
            wxi = w @ x[:, idx]
            agi = alpha * (x[:, i] @ A[i] - b[i])
            if t == 0:
                nx[:, i] = wxi - agi
            else:
                nx[:, i] = (x[:, i] + wxi - (x_prev[:, i] + wx_prev[:, i]) / 2
                            - (agi - ag_prev[:, i]))
            nwx[:, i], nag[:, i] = wxi, agi
        x_prev, x, wx_prev, ag_prev = x, nx, nwx, nag
    return x


def _loop_dsgd(A, b, lists, x, alpha, T):
    (W,) = lists
    S, N, d = x.shape
    for _ in range(T):
        msg = np.empty_like(x)
        for i in range(N):
            msg[:, i] = x[:, i] - alpha * (x[:, i] @ A[i] - b[i])
        new = np.empty_like(x)
        for i in range(N):
            idx, w = W[i]
            new[:, i] = w @ msg[:, idx]
        x = new
    return x


_LOOPS: dict[str, Callable] = {
    "dgd": _loop_dgd, "subgradient_push": _loop_subgradient_push, "diging": _loop_diging,
    "push_diging": _loop_push_diging, "push_pull": _loop_push_pull, "extra": _loop_extra,
    "dsgt": _loop_push_pull, "dsgd": _loop_dsgd,
}


def agent_loop_reference(method: str, problem, weights: Sequence[sp.csr_array], x0, alpha: float,
                         num_steps: int, num_seeds: int, dtype: str = "float64") -> np.ndarray:
    """Reference (a) of ``optimization.methods``: ``num_steps`` steps of ``method`` (exact
    gradients, constant ``alpha``) by loops over time and agents, vectorised over
    ``num_seeds`` copies of ``x0 [N, d]``; returns the final estimates ``[S, N, d]``.

    Args:
        weights: the method's weight matrices in the order its factory takes the sequences
            (DSGT: the one W, used for both mixings).
    """
    A = np.asarray(problem.hessians, dtype)
    b = np.asarray(problem.linear, dtype)
    lists = [_in_lists(W, dtype) for W in weights]
    x = np.broadcast_to(np.asarray(x0, dtype), (num_seeds,) + np.shape(x0)).copy()
    return _LOOPS[method](A, b, lists, x, np.asarray(alpha, dtype), num_steps)


# --- reference (b): matrix form with scipy.sparse, vectorised over agents and seeds ----------

def _csr_mix(W: sp.csr_array) -> Callable[[np.ndarray], np.ndarray]:
    def mix(X):
        return (W @ X.reshape(X.shape[0], -1)).reshape(X.shape)
    return mix


def matrix_reference(method: str, problem, weights: Sequence[sp.csr_array], x0, alpha: float,
                     num_steps: int, num_seeds: int, dtype: str = "float32") -> np.ndarray:
    """Reference of ``optimization.sparse_scale``: ``num_steps`` steps of ``method`` in matrix
    form, state ``[N, S, d]``, one ``scipy.sparse`` CSR product per mixing; returns the final
    estimates ``[S, N, d]``."""
    A = np.asarray(problem.hessians, dtype)
    b = np.asarray(problem.linear, dtype)[:, None, :]
    mixes = [_csr_mix(sp.csr_array(W).astype(dtype)) for W in weights]
    R = mixes[0]
    C = mixes[-1]
    a = np.asarray(alpha, dtype)
    x = np.broadcast_to(np.asarray(x0, dtype)[:, None, :],
                        (np.shape(x0)[0], num_seeds, np.shape(x0)[1])).copy()

    def grad(z):
        return np.einsum("nde,nse->nsd", A, z) - b

    if method == "dgd":
        for _ in range(num_steps):
            x = R(x) - a * grad(x)
        est = x
    elif method == "subgradient_push":
        y = np.ones(x.shape[:2] + (1,), dtype)
        est = x
        for _ in range(num_steps):
            w, y = R(x), R(y)
            est = w / y
            x = w - a * grad(est)
    elif method == "push_diging":
        u, v, gr = x, np.ones(x.shape[:2] + (1,), dtype), grad(x)
        y = gr
        for _ in range(num_steps):
            u, v = C(u - a * y), C(v)
            x = u / v
            gn = grad(x)
            y, gr = C(y) + gn - gr, gn
        est = x
    elif method == "extra":
        x_prev, wx_prev, ag_prev = x, np.zeros_like(x), np.zeros_like(x)
        for t in range(num_steps):
            wx, ag = R(x), a * grad(x)
            new = wx - ag if t == 0 else x + wx - (x_prev + wx_prev) / 2 - (ag - ag_prev)
            x_prev, x, wx_prev, ag_prev = x, new, wx, ag
        est = x
    elif method == "dsgd":
        for _ in range(num_steps):
            x = R(x - a * grad(x))
        est = x
    else:                       # diging (combine then adapt), push_pull and dsgt (adapt first)
        gr = grad(x)
        y = gr
        for _ in range(num_steps):
            new = R(x) - a * y if method == "diging" else R(x - a * y)
            gn = grad(new)
            y, gr, x = C(y) + gn - gr, gn, new
        est = x
    return np.ascontiguousarray(est.transpose(1, 0, 2))


# --- the benchmarks --------------------------------------------------------------------------

def _agreement(ref: np.ndarray, got) -> float:
    """``max |got - ref| / max(1, max |ref|)``."""
    ref = np.asarray(ref, np.float64)
    diff = np.abs(np.asarray(got, np.float64) - ref)
    if not np.all(np.isfinite(diff)):
        return math.inf
    return float(diff.max(initial=0.0) / max(1.0, float(np.abs(ref).max(initial=0.0))))


def _time_once(fn: Callable[[], Any]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _extrapolated(fn: Callable[[int], Any], steps: tuple[int, int], T: int
                  ) -> tuple[float, float, float, float, bool]:
    """Time ``fn(n)`` at the two horizons of ``steps``; per step at each, the gap between them
    (``|per_small / per_large - 1|``) and the time extrapolated linearly to T from the larger.
    A gap above :data:`LINEARITY_GAP` is measured once more (the smaller times kept)."""
    small, large = steps
    t_small, t_large = _time_once(lambda: fn(small)), _time_once(lambda: fn(large))
    gap = abs((t_small / small) / (t_large / large) - 1.0)
    if gap > LINEARITY_GAP:
        t_small = min(t_small, _time_once(lambda: fn(small)))
        t_large = min(t_large, _time_once(lambda: fn(large)))
        gap = abs((t_small / small) / (t_large / large) - 1.0)
    return t_small / small, t_large / large, t_large / large * T, gap, gap <= LINEARITY_GAP


def _first_and_warm(fn: Callable[[int], Any], T: int, warm_steps: int | None,
                    repeats: int) -> Timing:
    """The first call of ``fn(T)`` (compilation + run) and the warm calls: ``repeats`` calls
    of ``fn(T)``, or, with ``warm_steps < T``, of ``fn(warm_steps)`` (the runner's program
    with one record at the end does not depend on the horizon: no new compilation) scaled
    linearly to T."""
    if warm_steps is None or warm_steps >= T:
        return measure(lambda: fn(T), repeats)[0]
    start = time.perf_counter()
    jax.block_until_ready(fn(T))
    first = time.perf_counter() - start
    short, _ = measure(lambda: fn(warm_steps), repeats)
    times = [t * T / warm_steps for t in short.times_s]
    median = short.median_s * T / warm_steps
    return Timing(first, median, times, max(first - median, 0.0))


def bench_optimization_methods(*, S: int, N: int, d: int, T: int, loop_steps: tuple[int, int],
                               check_steps: int, edge_prob: float, alpha: float = 0.02,
                               methods: Sequence[str] = METHODS, dtype: str = "float64",
                               warm_steps: int | None = None, max_repeats: int = 2,
                               repeats: int = 1) -> list[BenchResult]:
    """The rows of ``optimization.methods`` (see the module docstring): one per method.

    ``repeats`` warm calls after the first, at most ``max_repeats`` (each is a full run of T
    steps; the ratio uses the first call), or of ``warm_steps`` steps scaled to T where given
    (the same compiled program).
    """
    repeats = max(1, min(int(repeats), int(max_repeats)))
    problem = opt.random_quadratic(N, d, strong_convexity=0.5, smoothness=2.0, seed=0)
    patterns = _graphs(N, edge_prob, sparse=False)
    x0 = _x0(N, d, dtype)
    tol = TOLERANCES[dtype]
    rows = []
    for method in methods:
        with x64_for(dtype):
            seqs = _sequences(method, patterns, "dense")
            alg = _algorithm(method, problem, seqs)
            params = opt.optimization_params(alpha, x0)
            t_dec = _first_and_warm(lambda n, alg=alg, params=params: _run_estimate(
                alg, params, S, n), T, warm_steps, repeats)
            got = _run_estimate(alg, params, S, check_steps)
            impl, x64 = prng_impl(), bool(jax.config.jax_enable_x64)
            weights = [s.fixed_csr()[0] for s in seqs]
        ref = agent_loop_reference(method, problem, weights, x0, alpha, check_steps, S, dtype)
        diff = _agreement(ref, got)
        per_small, per_large, t_ref, gap, linear = _extrapolated(
            lambda n, method=method, weights=weights: agent_loop_reference(
                method, problem, weights, x0, alpha, n, S, dtype), loop_steps, T)
        small, large = loop_steps
        warm_text = "" if warm_steps is None or warm_steps >= T else \
            f" (timed on {warm_steps} steps, x T / {warm_steps})"
        degrees = [int(np.diff(sp.csr_array(w).indptr).mean()) for w in weights]
        notes = (f"target >= {METHODS_TARGET:g}x with compilation: decentral = first call "
                 f"(compile + run) {t_dec.first_s:.2f} s, warm {t_dec.median_s:.2f} s"
                 f"{warm_text}; "
                 f"reference per step {per_small * 1e3:.2f} / {per_large * 1e3:.2f} ms at "
                 f"{small} / {large} steps ({gap:.0%} apart"
                 f"{'' if linear else ', NOT linear within 20 %'}), x T")
        notes += f"; warm {t_dec.median_s / T * 1e3:.3f} ms/step"
        rows.append(BenchResult(
            name="optimization.methods", variant=method, dtype=dtype,
            size=dict(S=S, N=N, d=d, T=T, backend="dense", edge_prob=edge_prob, alpha=alpha,
                      graphs="+".join(f"{gr}:{rule}" for gr, rule in WEIGHTS[method]),
                      mean_in_degree=degrees, gradient_noise=0.0,
                      devices=len(jax.devices())),
            metric="time_s", value=t_dec.first_s,
            reference=f"numpy: Python loops over t and over agents (w_i @ X[:, N_i] per "
                      f"in-neighbourhood, own gradient), vectorised over S seeds, same update; "
                      f"timed at {small} and {large} steps, extrapolated linearly to T "
                      f"(per step {per_small * 1e3:.3f} / {per_large * 1e3:.3f} ms, "
                      f"{gap:.0%} apart)",
            reference_value=t_ref, ratio=ratio(t_ref, t_dec.first_s),
            compile_s=t_dec.compile_s, reference_compile_s=None, times_s=t_dec.times_s,
            reference_times_s=[t_ref], repeats=repeats, max_abs_diff=diff,
            agree=bool(diff <= tol), tolerance=tol, prng_impl=impl, enable_x64=x64,
            notes=notes, target_ratio=METHODS_TARGET,
            extra=dict(first_call_s=t_dec.first_s, warm_median_s=t_dec.median_s,
                       warm_ratio=ratio(t_ref, t_dec.median_s),
                       reference_ms_per_step=[per_small * 1e3, per_large * 1e3],
                       reference_steps=list(loop_steps), linearity_gap=gap,
                       linear_within_20pct=linear, check_steps=check_steps,
                       warm_ms_per_step=t_dec.median_s / T * 1e3,
                       warm_steps=min(warm_steps or T, T),
                       agreement="max |decentral - numpy| / max(1, max |numpy|) over the final "
                                 "estimates of every seed after check_steps steps"),
            reference_label="numpy loop t, agents"))
    return rows


def bench_optimization_sparse(*, S: int, N: int, d: int, T: int, ref_steps: int,
                              check_steps: int, degree: float,
                              methods: Sequence[str] = ("dgd", "push_pull", "dsgt"),
                              alpha: float = 0.02, dtype: str = "float32",
                              max_repeats: int = 1, repeats: int = 1) -> list[BenchResult]:
    """The rows of ``optimization.sparse_scale`` (see the module docstring): one per method,
    on Erdős–Rényi graphs of mean degree ``degree`` (a cycle / path added for connectivity);
    ``repeats`` warm calls after the first, at most ``max_repeats``."""
    repeats = max(1, min(int(repeats), int(max_repeats)))
    problem = opt.random_quadratic(N, d, strong_convexity=0.5, smoothness=2.0, seed=0)
    start = time.perf_counter()
    patterns = _graphs(N, min(1.0, degree / max(N - 1, 1)), sparse=True)
    build_s = time.perf_counter() - start
    x0 = _x0(N, d, dtype)
    tol = TOLERANCES[dtype]
    rows = []
    for method in methods:
        with x64_for(dtype):
            seqs = _sequences(method, patterns, "sparse")
            alg = _algorithm(method, problem, seqs)
            params = opt.optimization_params(alpha, x0)
            t_dec, _ = measure(lambda alg=alg, params=params: _run_estimate(alg, params, S, T),
                               repeats)
            got = _run_estimate(alg, params, S, check_steps)
            impl, x64 = prng_impl(), bool(jax.config.jax_enable_x64)
            weights = [s.fixed_csr()[0] for s in seqs]
            widths = [int(s.at(0).idx.shape[1]) for s in seqs]
        ref = matrix_reference(method, problem, weights, x0, alpha, check_steps, S, dtype)
        diff = _agreement(ref, got)
        t_ref_steps = _time_once(lambda method=method, weights=weights: matrix_reference(
            method, problem, weights, x0, alpha, ref_steps, S, dtype))
        t_ref = t_ref_steps / ref_steps * T
        rate = N * S * T / t_dec.median_s
        ref_rate = N * S * T / t_ref
        edges = [int(sp.csr_array(w).nnz) for w in weights]
        rows.append(BenchResult(
            name="optimization.sparse_scale", variant=method, dtype=dtype,
            size=dict(S=S, N=N, d=d, T=T, backend="sparse", degree=degree, edges=edges,
                      table_width=widths, alpha=alpha, gradient_noise=0.0,
                      devices=len(jax.devices())),
            metric="time_s", value=t_dec.median_s,
            reference=f"scipy.sparse: loop over t of CSR products W @ X (X = [N, S*d]), the "
                      f"same update in matrix form, vectorised over agents and seeds; timed "
                      f"on {ref_steps} steps and scaled to T",
            reference_value=t_ref, ratio=ratio(t_ref, t_dec.median_s),
            compile_s=t_dec.compile_s, reference_compile_s=None, times_s=t_dec.times_s,
            reference_times_s=[t_ref], repeats=repeats, max_abs_diff=diff,
            agree=bool(diff <= tol), tolerance=tol, prng_impl=impl, enable_x64=x64,
            notes=f"no target; {rate / 1e6:.2f} M agent-steps/s ({t_dec.median_s * 1e3 / T:.2f}"
                  f" ms/step, warm; compile {t_dec.compile_s:.1f} s); scipy "
                  f"{ref_rate / 1e6:.2f} M agent-steps/s",
            extra=dict(agent_steps_per_s=rate, reference_agent_steps_per_s=ref_rate,
                       ms_per_step=t_dec.median_s * 1e3 / T, graph_build_s=build_s,
                       check_steps=check_steps, reference_steps=ref_steps),
            reference_label="scipy CSR, loop t"))
    return rows
