"""Child process of the ``scale.*`` benchmarks: runs cases in a fresh Python and measures their
time and peak memory (not a benchmark itself).

Usage::

    python -m benchmarks._scale_child '{"device_count": 2, "cases": [{"kind": "family", ...}]}'

Sets the CPU device count with :func:`decentral.devices.use_all_cpu_cores` before JAX starts
its backend, imports JAX and every ``decentral`` module the cases use, starts the backend, and
reads the resident set size (RSS) then: the **baseline**. JAX's persistent compilation cache
is off, so every case compiles (its memory and time are a fresh session's). Each case then runs
in turn and its result (or ``{"error": ...}`` when it raised) goes into one JSON line prefixed
by :data:`benchmarks.bench_scale.CHILD_MARKER`; :mod:`benchmarks.bench_scale` turns them into
rows.

**Memory** is read from ``/proc/self/status`` (Linux): ``VmRSS`` (now) and ``VmHWM`` (the peak
since the last reset); writing ``5`` to ``/proc/self/clear_refs`` resets the peak, so each phase
of a case (graph and tables, the algorithm's factory, compilation with the check run, the timed
run) has its own peak, and the case's peak is the largest. Every peak is given above the
baseline. Where the peak cannot be reset the peaks are those of the process so far (the result
says ``"peak_reset": false``). Several cases in one process (the ``tiny`` sizes) share it: a
later case's peak includes what the earlier ones left behind (compiled programs, caches).

**Cases** (``kind``):

* ``family``: plain consensus or push-sum (d values per agent, S seeds, float32, sparse backend)
  on ``exponential(N, sparse=True)`` or ``random_regular(N, k, sparse=True)``, a static graph:
  graph and neighbour-table construction (the table's bytes, width and sums read, then the
  table dropped: the runs hold their own copy), the factory, a short check run (compilation
  plus ``check_steps`` steps, the same compiled program as the timed run), the timed run of T
  steps, then, after the peaks are read, the scipy reference;
* ``horizon``: plain consensus at small N recording the whole state or the agents' mean every
  ``record_every`` steps for T steps (compilation included: the same for every T);
* ``dec_ucb``: Dec_UCB (Theorem 1) on the exponential graph with M Bernoulli arms;
* ``wmsr``: resilient consensus (W-MSR) on a random regular graph with Byzantine agents;
* ``sa``: consensus SA (distributed TD(0)) on the exponential graph with a small random MRP.
"""

from __future__ import annotations

from decentral.devices import use_all_cpu_cores

if __name__ == "__main__":
    import json as _json
    import sys as _sys

    if len(_sys.argv) == 2:
        use_all_cpu_cores(_json.loads(_sys.argv[1]).get("device_count"))   # before JAX starts

import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import decentral.graphs as g  # noqa: E402
from benchmarks.bench_scale import (  # noqa: E402
    CHILD_MARKER,
    CompileWatch,
    PeakMeter,
    rss_bytes,
    short_record_points,
)
from benchmarks.harness import device_summary, tree_nbytes  # noqa: E402
from decentral.bandits import bandit_algorithm, bernoulli, dec_ucb  # noqa: E402
from decentral.consensus import consensus, consensus_params  # noqa: E402
from decentral.consensus_sa import consensus_sa, random_mrp, sa_params, td0_problem  # noqa: E402,E501
from decentral.push_sum import push_sum, push_sum_params  # noqa: E402
from decentral.resilient_ac import huge, resilient_consensus, resilient_consensus_params  # noqa: E402,E501
from decentral.runner import run, seed_keys  # noqa: E402
from decentral.schedules import constant  # noqa: E402

__all__ = ["family_case", "horizon_case", "dec_ucb_case", "wmsr_case", "sa_case", "run_cases",
           "main"]

FLOAT = jnp.float32
"""The dtype of every case (x64 stays off in the child)."""

RULES = {"consensus": "row", "push_sum": "column"}
"""The weight rule each family's graph gets."""

# ---- record functions: defined once, so the check run and the timed run share one program ----

def consensus_stats(state):
    """The agents' mean of x ``[d]``: row weights of a regular graph keep it for ever."""
    return state.x.mean(axis=0)


def push_sum_stats(state):
    """The agents' means of x ``[d]`` and y ``[]``: column weights keep both sums."""
    return state.x.mean(axis=0), state.y.mean(axis=0)


def pulls_range(state):
    """The fewest and most pulls of any agent, all arms together ``[2]`` (int32)."""
    total = state.pulls.sum(axis=-1)
    return jnp.stack([total.min(), total.max()])


def sa_mean(state):
    """The agents' mean of theta ``[d]``."""
    return state.theta.mean(axis=0)


def sa_mean_and_chain(state):
    """The agents' mean of theta ``[d]`` and the chain state the next update reads."""
    return state.theta.mean(axis=0), state.x


def cooperative_range(state):
    """Per coordinate, the smallest and largest cooperative value ``[2, d]`` (the Byzantine
    agent 0 left out)."""
    x = state.x[1:]
    return jnp.stack([x.min(axis=0), x.max(axis=0)])


# ---- helpers ----------------------------------------------------------------------------------

def _block(tree):
    return jax.block_until_ready(tree)


def _build_graph(graph: str, n: int, degree: int, graph_seed: int):
    if graph == "exponential":
        return g.exponential(n, sparse=True)
    if graph == "random_regular":
        return g.random_regular(n, degree, seed=graph_seed, sparse=True)
    raise ValueError(f"graph must be 'exponential' or 'random_regular'; got {graph!r}.")


def _family_algorithm(family: str, seq, d: int):
    if family == "consensus":
        return consensus(seq, shape=d, dtype=FLOAT), consensus_params(), consensus_stats
    if family == "push_sum":
        return push_sum(seq, shape=d, dtype=FLOAT), push_sum_params(), push_sum_stats
    raise ValueError(f"family must be 'consensus' or 'push_sum'; got {family!r}.")


def _state_columns(state, family: str) -> np.ndarray:
    """A run's final state ``[S, N, d]`` (and y ``[S, N]``) as one host matrix ``[N, S*d (+S)]``,
    the layout of the scipy reference."""
    x = np.asarray(state.x, dtype=np.float32)
    s, n = x.shape[:2]
    cols = [np.moveaxis(x, 0, 1).reshape(n, -1)]
    if family == "push_sum":
        cols.append(np.asarray(state.y, dtype=np.float32).T)
    return np.concatenate(cols, axis=1)


def _initial_columns(alg, params, seeds, family: str) -> np.ndarray:
    """Every seed's initial state as the runner draws it (its init keys), in the layout of
    :func:`_state_columns`."""
    states = [alg.init(seed_keys(s)[0], params) for s in seeds]
    stacked = jax.tree_util.tree_map(lambda *a: jnp.stack(a), *states)
    return _state_columns(stacked, family)


def _table_check(table, family: str) -> float:
    """Largest deviation from 1 of the table's row sums (row weights) or column sums (column
    weights), in the table's own float32 numbers."""
    idx, w, mask = (np.asarray(a) for a in table)
    w = np.where(mask, w, 0).astype(np.float64)
    if family == "consensus":
        sums = w.sum(axis=1)
    else:
        sums = np.bincount(idx.reshape(-1), weights=w.reshape(-1), minlength=idx.shape[0])
    return float(np.max(np.abs(sums - 1.0)))


def _expected_width(graph: str, n: int, degree: int) -> int:
    """The table width K each graph must give: self plus the in-neighbours (``i - 2^k`` for
    every ``2^k < n`` on the exponential graph, k others on the random regular one)."""
    if graph == "exponential":
        return 1 + (n - 1).bit_length()
    return degree + 1


# ---- the cases --------------------------------------------------------------------------------

def family_case(*, family: str, graph: str, N: int, T: int, S: int, d: int, degree: int,
                graph_seed: int, check_steps: int, repeats: int, meter: PeakMeter,
                workdir: Path) -> dict[str, Any]:
    """Plain consensus or push-sum at one size: construction (and the table check), compilation,
    the timed run, peaks, then (after the peaks) the invariant and the scipy reference."""
    seeds = list(range(S))
    start = time.perf_counter()
    adj = _build_graph(graph, N, degree, graph_seed)
    graph_s = time.perf_counter() - start
    seq = g.static(adj, rule=RULES[family])            # sparse backend: the neighbour tables
    table = _block(seq.at(0))
    build_s = time.perf_counter() - start
    entries = int(adj.nnz)
    del adj                         # rebuilt for the reference: the peaks are the library's
    # what the rows report of the device table, read now: the runs hold their own copy (the
    # compiled program's argument), so the benchmark does not keep a second one alive
    table_bytes, width = tree_nbytes(table), int(table.idx.shape[1])
    table_diff = _table_check(table, family)
    del table
    meter.mark("graph and tables")

    start = time.perf_counter()
    alg, params, stats = _family_algorithm(family, seq, d)
    factory_s = time.perf_counter() - start
    meter.mark("factory")

    start = time.perf_counter()
    chk = run(alg, params, seeds=seeds, num_steps=check_steps,
              record_at=short_record_points(check_steps), record_fn=stats, progress=False)
    _block(chk.final_state)
    check_s = time.perf_counter() - start
    np.save(workdir / "check.npy", _state_columns(chk.final_state, family))
    del chk
    meter.mark("compile and check run")

    times, res = [], None
    with CompileWatch() as watch:
        for _ in range(repeats):
            res = None
            start = time.perf_counter()
            res = run(alg, params, seeds=seeds, num_steps=T, record_at=[0, T], record_fn=stats,
                      progress=False)
            _block(res.final_state)
            times.append(time.perf_counter() - start)
    meter.mark("timed run")

    state_bytes = tree_nbytes(res.final_state)
    host_table_bytes = tree_nbytes(seq.leaves)
    recs = jax.tree_util.tree_leaves(res.records)
    invariant = max(float(np.max(np.abs(np.asarray(r[:, -1], np.float64)
                                        - np.asarray(r[:, 0], np.float64)))) for r in recs)
    if family == "push_sum":      # y's mean is 1 at the start: say how far it is at the end
        invariant = max(invariant, float(np.max(np.abs(np.asarray(recs[1][:, -1]) - 1.0))))
    del res

    x0 = _initial_columns(alg, params, seeds, family)
    adj = _build_graph(graph, N, degree, graph_seed)
    weights = (g.row_stochastic if family == "consensus" else g.column_stochastic)(adj)
    weights = weights.astype(np.float32)
    ref_times = []
    y = x0
    for _ in range(check_steps):
        start = time.perf_counter()
        y = weights @ y
        ref_times.append(time.perf_counter() - start)
    check_diff = float(np.max(np.abs(y.astype(np.float64)
                                     - np.load(workdir / "check.npy").astype(np.float64))))
    return {
        "graph_s": graph_s, "build_s": build_s, "factory_s": factory_s, "check_s": check_s,
        "times_s": times, "reference_step_times_s": ref_times,
        "state_bytes": state_bytes, "table_bytes": table_bytes,
        "host_table_bytes": host_table_bytes, "width": width,
        "expected_width": _expected_width(graph, N, degree),
        "entries": entries, "edges": entries - N,
        "invariant_diff": invariant, "table_diff": table_diff, "check_diff": check_diff,
        "timed_compile_s": watch.seconds, **meter.report(),
    }


def horizon_case(*, N: int, S: int, d: int, T: int, record_every: int, record: str,
                 meter: PeakMeter, workdir: Path) -> dict[str, Any]:
    """Plain consensus on the exponential graph recording every ``record_every`` steps (and the
    initial state) the whole state (``record="state"``) or the agents' mean of x
    (``record="mean"``): the peak with compilation and the run, the records' bytes."""
    del workdir
    if record not in ("state", "mean"):
        raise ValueError(f"record must be 'state' or 'mean'; got {record!r}.")
    seq = g.static(g.exponential(N, sparse=True), rule="row")
    alg = consensus(seq, shape=d, dtype=FLOAT)
    meter.mark("graph and factory")
    start = time.perf_counter()
    res = run(alg, consensus_params(), seeds=list(range(S)), num_steps=T,
              record_every=record_every, record_initial=True,
              record_fn=consensus_stats if record == "mean" else None, progress=False)
    _block(res.final_state)
    run_s = time.perf_counter() - start
    meter.mark("compile and run")
    recs = np.asarray(res.records.x if record == "state" else res.records, np.float64)
    means = recs.mean(axis=2) if record == "state" else recs           # [S, R, d]
    invariant = float(np.max(np.abs(means - means[:, :1])))
    per_record = tree_nbytes(res.final_state) if record == "state" else S * d * 4
    return {"run_s": run_s, "record_bytes": tree_nbytes(res.records),
            "records": int(recs.shape[1]), "per_record_bytes": per_record,
            "state_bytes": tree_nbytes(res.final_state), "table_bytes": tree_nbytes(seq.at(0)),
            "invariant_diff": invariant, **meter.report()}


def _timed_runs(alg, params, seeds, warm_steps: int, T: int, record_fn, repeats: int):
    """A short run (compilation plus ``warm_steps`` steps), then ``repeats`` timed runs of T
    steps of the same compiled program; returns the first's seconds, the timings, the last
    result and the seconds spent compiling during the timed runs (0 when the program was
    shared)."""
    start = time.perf_counter()
    warm = run(alg, params, seeds=seeds, num_steps=warm_steps,
               record_at=short_record_points(warm_steps), record_fn=record_fn, progress=False)
    _block(warm.final_state)
    warm_s = time.perf_counter() - start
    del warm
    times, res = [], None
    with CompileWatch() as watch:
        for _ in range(repeats):
            res = None
            start = time.perf_counter()
            res = run(alg, params, seeds=seeds, num_steps=T, record_at=[0, T],
                      record_fn=record_fn, progress=False)
            _block(res.final_state)
            times.append(time.perf_counter() - start)
    return warm_s, times, res, watch.seconds


def _plain_reference(adj, *, d: int, seeds, warm_steps: int, T: int) -> dict[str, Any]:
    """Plain consensus of d float32 values per agent on the same graph (row weights), timed
    like the case it is the reference of."""
    alg = consensus(g.static(adj, rule="row"), shape=d, dtype=FLOAT)
    warm_s, times, res, compile_s = _timed_runs(alg, consensus_params(), seeds, warm_steps, T,
                                                consensus_stats, 1)
    del res
    return {"reference_warm_s": warm_s, "reference_times_s": times,
            "reference_timed_compile_s": compile_s}


def dec_ucb_case(*, N: int, M: int, S: int, T: int, warm_steps: int, repeats: int,
                 meter: PeakMeter, workdir: Path) -> dict[str, Any]:
    """Dec_UCB (Theorem 1: row weights of the directed exponential graph) with M Bernoulli
    arms; the reference is plain consensus of ``[N, M]`` values on the same graph."""
    del workdir
    seeds = list(range(S))
    start = time.perf_counter()
    pol = dec_ucb(g.exponential(N, sparse=True), theorem=1)
    means = np.random.default_rng(0).uniform(0.05, 0.95, M)
    alg = bandit_algorithm(pol, bernoulli(means))
    build_s = time.perf_counter() - start
    meter.mark("graph, tables and factory")
    warm_s, times, res, compile_s = _timed_runs(alg, pol.params, seeds, warm_steps, T,
                                                pulls_range, repeats)
    meter.mark("compile and runs")
    pulls = np.asarray(res.records)                                   # [S, 2, 2]
    want = np.array([[M, M], [M + T, M + T]])
    pulls_diff = float(np.max(np.abs(pulls - want[None])))
    out = {"build_s": build_s, "warm_s": warm_s, "times_s": times, "timed_compile_s": compile_s,
           "state_bytes": tree_nbytes(res.final_state),
           "table_bytes": tree_nbytes(pol.graphs.at(0)), "pulls_diff": pulls_diff,
           **meter.report()}
    del res, alg, pol
    out.update(_plain_reference(g.exponential(N, sparse=True), d=M, seeds=seeds,
                                warm_steps=warm_steps, T=T))
    return out


def wmsr_case(*, N: int, K: int, H: int, S: int, d: int, T: int, warm_steps: int,
              repeats: int, meter: PeakMeter, workdir: Path) -> dict[str, Any]:
    """W-MSR resilient consensus on ``random_regular(N, K)`` with agent 0 Byzantine (the
    ``huge`` attacker, +-1e6): first the factory as a user calls it (``check=True``, the
    hypotheses checked), and if it refuses, with ``check=False``; the reference is plain
    consensus on the same graph."""
    del workdir
    seeds = list(range(S))
    start = time.perf_counter()
    adj = g.random_regular(N, K, seed=0, sparse=True)
    graph_s = time.perf_counter() - start
    refused, refused_s = None, None
    start = time.perf_counter()
    try:
        alg = resilient_consensus(adj, H, [0], huge())         # check=True, the default
    except ValueError as exc:
        refused, refused_s = f"{type(exc).__name__}: {exc}", time.perf_counter() - start
        alg = resilient_consensus(adj, H, [0], huge(), check=False)
    factory_s = time.perf_counter() - start
    del adj                         # rebuilt for the reference: the peaks are the library's
    x0 = np.random.default_rng(0).standard_normal((N, d)).astype(np.float32)
    params = resilient_consensus_params(x0)
    lo0, hi0 = x0[1:].min(axis=0), x0[1:].max(axis=0)     # the cooperative initial range
    del x0                          # the params hold the run's copy
    meter.mark("graph, tables and factory")
    warm_s, times, res, compile_s = _timed_runs(alg, params, seeds, warm_steps, T,
                                                cooperative_range, repeats)
    meter.mark("compile and runs")
    rng = np.asarray(res.records, np.float64)                         # [S, 2, 2, d]
    outside = max(float(np.max(lo0 - rng[:, -1, 0])), float(np.max(rng[:, -1, 1] - hi0)), 0.0)
    spread0 = float(np.max(hi0 - lo0))
    spread = float(np.max(rng[:, -1, 1] - rng[:, -1, 0]))
    out = {"graph_s": graph_s, "factory_s": factory_s, "refused": refused,
           "refused_s": refused_s, "warm_s": warm_s, "times_s": times,
           "timed_compile_s": compile_s,
           "state_bytes": tree_nbytes(res.final_state),
           "outside_diff": outside, "spread0": spread0, "spread": spread, **meter.report()}
    del res, alg, params
    adj = g.random_regular(N, K, seed=0, sparse=True)
    out["table_bytes"] = tree_nbytes(g.static(adj, rule="row").at(0))
    out.update(_plain_reference(adj, d=d, seeds=seeds, warm_steps=warm_steps, T=T))
    return out


def sa_replay_diff(A: np.ndarray, b_mean: np.ndarray, alpha: float, means: np.ndarray,
                   chain: np.ndarray) -> float:
    """Largest relative gap between the recorded agents' means of theta and the centralized
    recursion they must follow when every ``W_t`` is doubly stochastic (combine-then-adapt,
    eq. (3) averaged over the agents): ``mean_{t+1} = mean_t (I + alpha A(X_t))^T + alpha
    mean_i b_i(X_t)``, replayed in float64 along the recorded chain path ``X_t``.

    Args:
        A: ``[P, d, d]``; b_mean: ``[P, d]`` (the agents' mean of b); means: ``[S, R, d]``
            recorded at ``t = 0 .. R - 1``; chain: ``[S, R]`` the chain state at each record."""
    want = np.array(means[:, 0], np.float64)
    worst = 0.0
    eye = np.eye(A.shape[-1])
    for t in range(means.shape[1] - 1):
        x = chain[:, t]
        want = np.einsum("sj,skj->sk", want, eye + alpha * A[x]) + alpha * b_mean[x]
        got = np.asarray(means[:, t + 1], np.float64)
        scale = max(float(np.max(np.abs(want))), 1e-12)
        worst = max(worst, float(np.max(np.abs(got - want))) / scale)
    return worst


def sa_case(*, N: int, S: int, d: int, T: int, states: int, alpha: float, check_steps: int,
            warm_steps: int, repeats: int, meter: PeakMeter, workdir: Path) -> dict[str, Any]:
    """Consensus SA (distributed TD(0), combine-then-adapt) on the exponential graph with a
    random MRP of ``states`` states and d features per agent: a check run recording every
    step (the agents' mean against the centralized recursion), the timed runs, and plain
    consensus of ``[N, d]`` values on the same graph as the reference."""
    del workdir
    seeds = list(range(S))
    start = time.perf_counter()
    problem = td0_problem(*random_mrp(0, num_states=states, num_features=d, num_agents=N),
                          discount=0.8)
    alg = consensus_sa(problem, g.static(g.exponential(N, sparse=True), rule="row"))
    params = sa_params(constant(alpha))
    build_s = time.perf_counter() - start
    meter.mark("problem, graph, tables and factory")
    chk = run(alg, params, seeds, check_steps, record_every=1, record_initial=True,
              record_fn=sa_mean_and_chain, progress=False)
    means, chain = (np.asarray(r) for r in chk.records)
    del chk
    A = np.asarray(problem.A, np.float64)
    b_mean = np.asarray(problem.b, np.float64).mean(axis=1)
    replay = sa_replay_diff(A, b_mean, alpha, means, chain)
    meter.mark("check run")
    warm_s, times, res, compile_s = _timed_runs(alg, params, seeds, warm_steps, T, sa_mean,
                                                repeats)
    meter.mark("compile and runs")
    out = {"build_s": build_s, "warm_s": warm_s, "times_s": times,
           "timed_compile_s": compile_s, "replay_diff": replay,
           "finite": bool(np.all(np.isfinite(np.asarray(res.final_state.theta)))),
           "state_bytes": tree_nbytes(res.final_state),
           "table_bytes": tree_nbytes(g.static(g.exponential(N, sparse=True),
                                               rule="row").at(0)),
           "problem_bytes": int(problem.A.size * 4 + problem.b.size * 4),
           **meter.report()}
    del res, alg, problem
    out.update(_plain_reference(g.exponential(N, sparse=True), d=d, seeds=seeds,
                                warm_steps=warm_steps, T=T))
    return out


CASES = {"family": family_case, "horizon": horizon_case, "dec_ucb": dec_ucb_case,
         "wmsr": wmsr_case, "sa": sa_case}
"""Case kind -> the function measuring it (keyword arguments: the case minus ``kind``)."""


def run_cases(cases: list[dict[str, Any]]) -> dict[str, Any]:
    """Start the backend, read the baseline RSS, run every case (a failure becomes
    ``{"error": ..., "seconds": ...}``) and return JSON-ready results. The persistent
    compilation cache is off: every case compiles, as in a fresh session."""
    if "jax_enable_compilation_cache" in jax.config.values:
        jax.config.update("jax_enable_compilation_cache", False)
    device = device_summary()                        # starts the backend
    _block(jnp.zeros(()))
    baseline = rss_bytes()
    out = []
    with tempfile.TemporaryDirectory(prefix="decentral-scale-") as tmp:
        for case in cases:
            kwargs = {k: v for k, v in case.items() if k != "kind"}
            meter = PeakMeter(baseline)
            start = time.perf_counter()
            try:
                result = CASES[case["kind"]](**kwargs, meter=meter, workdir=Path(tmp))
            except Exception as exc:  # noqa: BLE001 - reported as the case's result
                result = {"error": f"{type(exc).__name__}: {exc}",
                          "traceback": traceback.format_exc()[-3000:],
                          "seconds": time.perf_counter() - start, **meter.report()}
            result["case_s"] = time.perf_counter() - start
            out.append(result)
    return {"device": device, "devices": len(jax.devices()), "baseline_rss_bytes": baseline,
            "prng_impl": str(jax.config.jax_default_prng_impl), "pid": os.getpid(),
            "cases": out}


def main(argv: list[str]) -> int:
    """Run the cases given as JSON; returns the exit status."""
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    spec = json.loads(argv[0])
    print(CHILD_MARKER + json.dumps(run_cases(spec["cases"])), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
