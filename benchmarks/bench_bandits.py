"""Monte-Carlo throughput of Dec_UCB (:func:`decentral.bandits.dec_ucb`) against a numpy loop.

Dec_UCB in its Theorem 2 form (``theorem=2``: Metropolis weights, width
``sqrt(3 ln t / (|N_i| n))``) for N agents on an undirected Erdős–Rényi graph
(:func:`decentral.graphs.erdos_renyi` ``(N, p, kind="undirected", seed=0)``), M Bernoulli arms
with means drawn once (``numpy.random.default_rng(0).uniform(0.05, 0.95, M)``), horizon T,
S seeds, float32, run with :func:`decentral.bandits.evaluate` (its default records):

* decentral: timed in a **fresh Python** (same device count, persistent compilation cache
  off), so nothing compiled earlier in this process can make it look faster. The first call
  (building the policy, then ``evaluate``: tracing, compilation and the run) is the headline
  row, *wall-clock including compilation*; the same call repeated (compiled) is the second row,
  and ``compile`` = first call minus that median. Python and JAX start-up of the child are
  reported apart (``extra["child_start_s"]``), and so is importing ``decentral.bandits``
  (``extra["import_s"]``, part of the start-up): it happens before the clock starts, as a
  script's imports do (the reference's numpy is imported before its clock too).
* reference: numpy written the usual way (:func:`numpy_dec_ucb`): Python loops over seeds, time
  and agents; per agent the forced-exploration check ``n <= m - M`` (a uniform pick among those
  arms) or the argmax of ``z + sqrt(3 ln t / (|N_i| n))``, a Bernoulli reward from numpy's
  ``Generator``, the update of ``n`` and ``xbar``; then the max-consensus
  ``m_i = max(n_i, max_{j in N_i} m_j)`` per agent and ``z = W z + xbar_new - xbar_old``. It is
  timed on a few seeds at two horizons and extrapolated linearly to S x T from the larger
  (both timings and their per seed-step gap are in the row; a gap over 20 % is flagged).

**Agreement** (the ``agree`` column), both parts must pass:

1. *the per-step rule* — one library run (``check_seeds[0]`` seeds, ``check_T`` steps,
   the arms of every step recorded) and, for its first seed, the reference fed the library's
   own rewards (:func:`decentral.bandits.seed_reward_key` and
   :meth:`~decentral.bandits.Arms.reward` for every (agent, arm, pull)): every greedy decision
   must be the library's, and every forced-exploration decision (random on both sides) must
   lie in the reference's forced set, where the reference follows the library's choice. The
   library computes in float32 and the reference in float64, so an index gap of at most
   :data:`TOLERANCE` between the reference's best arm and the library's is a rounding tie:
   the reference follows the library there too and the row counts these ties. The final pull
   counts must be identical and the final ``z`` within :data:`TOLERANCE` (``max_abs_diff``);
2. *the timed reference's own random stream* — mean final pseudo-regret per agent at
   ``check_T``: the library over ``check_seeds[0]`` seeds (the same run) against the reference
   drawing its own Bernoulli rewards over ``check_seeds[1]`` seeds; the two means must lie
   within 3 standard errors of their difference (CLT over seeds; the seeds' agent-averages
   are the samples).

**Memory** (third row, ``metric="bytes"``): the bytes of one seed's run state per agent x
arm (the :class:`~decentral.bandits.BanditState`: ``n``, ``m`` and the true pull counts int32,
``xbar`` and ``z`` float32, the ``[N, M]`` reward-stream keys, the ``[N]`` regret
accumulators spread over the arms), computed from ``jax.eval_shape`` of the algorithm's
``init`` (nothing allocated), against the reference's state (``n``, ``m`` int64, ``xbar``,
``z`` float64). It must equal the bytes of the check run's final state. The row also gives the
largest ``N x M x seeds`` whose state fits in this machine's memory (total RAM from
``os.sysconf``; a GPU's ``bytes_limit``) — the state only: the step's temporaries, the records
and the ``[N, N]`` weights come on top.

Example:
    >>> from decentral.graphs import erdos_renyi
    >>> ref = numpy_dec_ucb(erdos_renyi(6, 0.5, kind="undirected", seed=0), [0.9, 0.5, 0.2],
    ...                     horizon=40, seeds=[0, 1])
    >>> ref.pulls.shape, bool((ref.pulls.sum(axis=-1) == 3 + 40).all())   # M initial + T
    ((2, 6, 3), True)
"""

from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from typing import Any, NamedTuple

import jax
import numpy as np

from benchmarks.harness import BenchResult, child_env, device_summary, ratio, tree_nbytes
from decentral.devices import cpu_core_count

__all__ = ["ReferenceResult", "numpy_dec_ucb", "metropolis_weights", "bandit_setup",
           "state_bytes", "memory_limit", "library_run", "child_main", "bench_bandits"]

REFERENCE_DTYPES = {"n": np.int64, "m": np.int64, "xbar": np.float64, "z": np.float64}
"""The reference's per (agent, arm) state arrays and their dtypes."""

NONLINEAR = 0.20
"""Per seed-step gap between the reference's two horizons above which the row says so."""

TOLERANCE = 1e-4
"""The replay check's tolerance: on an index gap between the reference's best arm and the
library's (a float32 rounding tie below it) and on the final ``max |z_ref - z_lib|``."""

_CHILD_MARKER = "BANDITS-BENCHMARK-CHILD "
_CHILD_CODE = (
    "import json, sys\n"
    "from decentral.devices import use_all_cpu_cores\n"
    "spec = json.loads(sys.argv[1])\n"
    "use_all_cpu_cores(spec['cpu_devices'])\n"
    "from benchmarks.bench_bandits import child_main\n"
    "child_main(spec)\n"
)


class ReferenceResult(NamedTuple):
    """What :func:`numpy_dec_ucb` returns.

    Attributes:
        pulls: int64 ``[S, N, M]`` final ``n_{i,k}(T)``, the initial pull included.
        regret: ``[S, N]`` pseudo-regret ``sum_k Delta_k (n_{i,k}(T) - 1)``.
        forced: forced-exploration decisions taken (all seeds).
        mismatches: replay only: ``(seed index, t, agent, reference arm, library arm)`` of every
            decision where the rule disagrees with the library.
        near_ties: replay only: the index gaps (reference's best minus the library's arm) of
            the greedy decisions that differed by at most ``tie_tolerance`` (rounding).
        z: ``[S, N, M]`` final ``z``.
    """

    pulls: np.ndarray
    regret: np.ndarray
    forced: int
    mismatches: list
    near_ties: list
    z: np.ndarray


def metropolis_weights(adj: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """``(W, neighbours)`` for a symmetric boolean adjacency (self-loops added): Metropolis
    weights ``W[i, j] = 1 / max(|N_i|, |N_j|)`` for neighbours ``j != i``, the rest of the row
    on the diagonal, and each agent's neighbourhood ``N_i`` (itself included)."""
    a = np.asarray(adj, bool) | np.eye(len(adj), dtype=bool)
    n = a.shape[0]
    neighbours = [np.flatnonzero(a[i]) for i in range(n)]
    size = a.sum(axis=1)
    W = np.zeros((n, n))
    for i in range(n):
        for j in neighbours[i]:
            if j != i:
                W[i, j] = 1.0 / max(size[i], size[j])
        W[i, i] = 1.0 - W[i].sum()
    return W, neighbours


def numpy_dec_ucb(adj, means, horizon: int, seeds: Sequence[int], *,
                  exploration_constant: float = 3.0, replay: Sequence[Any] | None = None,
                  tie_tolerance: float = 0.0) -> ReferenceResult:
    """Dec_UCB (Theorem 2 form), written the usual way: loops over seeds, time and agents.

    Each seed draws from ``numpy.random.default_rng(seed)``: the initial round (every agent
    pulls every arm once), the forced-exploration picks and one Bernoulli reward per decision.

    Args:
        adj: symmetric boolean adjacency ``[N, N]`` (``adj[i, j]``: i hears j).
        means: Bernoulli means ``[M]``.
        horizon: T decisions after the initial round.
        seeds: one integer per run.
        exploration_constant: ``c`` in ``sqrt(c ln t / (|N_i| n))``.
        replay: None, or one ``(rewards, arms)`` per seed: ``rewards [N, M, P]`` the reward of
            pull ``j`` of arm ``k`` by agent ``i`` (``j = 0`` the initial pull) and ``arms
            [T, N]`` the library's decisions. Rewards then come from the table; a forced
            decision takes the library's arm (it must be in the forced set), a greedy one is
            the reference's own argmax; disagreements are listed in ``mismatches``.
        tie_tolerance: replay only: a greedy decision whose library arm has an index within
            this of the reference's best is a rounding tie (the library computes in float32):
            it takes the library's arm and is listed in ``near_ties``, not ``mismatches``.
    """
    mu = np.asarray(means, np.float64)
    M = mu.shape[0]
    W, neighbours = metropolis_weights(adj)
    N = W.shape[0]
    sizes = np.array([len(nb) for nb in neighbours], np.float64)
    gaps = mu.max() - mu
    pulls = np.empty((len(seeds), N, M), np.int64)
    finals = np.empty((len(seeds), N, M), REFERENCE_DTYPES["z"])
    forced_total, mismatches, near_ties = 0, [], []
    for s, seed in enumerate(seeds):
        rng = np.random.default_rng(seed)
        table, chosen = (None, None) if replay is None else replay[s]
        if table is None:
            first = (rng.random((N, M)) < mu).astype(REFERENCE_DTYPES["xbar"])
        else:
            first = np.asarray(table[:, :, 0], REFERENCE_DTYPES["xbar"])
        n = np.ones((N, M), REFERENCE_DTYPES["n"])
        m = np.ones((N, M), REFERENCE_DTYPES["m"])
        xbar = first.copy()
        z = first.astype(REFERENCE_DTYPES["z"])
        for t in range(horizon):
            log_t = math.log(t) if t > 1 else 0.0
            xbar_old = xbar.copy()
            for i in range(N):
                forced = np.flatnonzero(n[i] <= m[i] - M)
                if forced.size:
                    forced_total += 1
                    if chosen is None:
                        a = int(rng.choice(forced))
                    else:
                        a = int(chosen[t, i])
                        if a not in forced:
                            mismatches.append((s, t, i, int(forced[0]), a))
                            a = int(forced[0])
                else:
                    index = z[i] + np.sqrt(exploration_constant * log_t / (sizes[i] * n[i]))
                    a = int(np.argmax(index))
                    if chosen is not None and a != int(chosen[t, i]):
                        theirs = int(chosen[t, i])
                        gap = float(index[a] - index[theirs])
                        if gap <= tie_tolerance:
                            near_ties.append(gap)
                            a = theirs
                        else:
                            mismatches.append((s, t, i, a, theirs))
                if table is None:
                    r = float(rng.random() < mu[a])
                else:
                    r = float(table[i, a, n[i, a]])
                n[i, a] += 1
                xbar[i, a] += (r - xbar[i, a]) / n[i, a]
            m_new = np.empty_like(m)
            for i in range(N):
                m_new[i] = np.maximum(n[i], m[neighbours[i]].max(axis=0))
            m = m_new
            z = W @ z + xbar - xbar_old
        pulls[s] = n
        finals[s] = z
    regret = ((pulls - 1) * gaps).sum(axis=-1)
    return ReferenceResult(pulls, regret, forced_total, mismatches, near_ties, finals)


def bandit_setup(N: int, M: int, edge_prob: float):
    """``(adj, arms)``: the undirected ER(N, p) graph (seed 0) and M Bernoulli arms with means
    ``default_rng(0).uniform(0.05, 0.95, M)``."""
    from decentral.bandits import bernoulli
    from decentral.graphs import erdos_renyi

    adj = erdos_renyi(N, edge_prob, kind="undirected", seed=0)
    return adj, bernoulli(np.random.default_rng(0).uniform(0.05, 0.95, M))


def _struct_nbytes(leaf) -> int:
    if jax.dtypes.issubdtype(leaf.dtype, jax.dtypes.prng_key):
        leaf = jax.eval_shape(jax.random.key_data, leaf)
    return int(math.prod(leaf.shape)) * np.dtype(leaf.dtype).itemsize


def state_bytes(policy, arms) -> dict[str, Any]:
    """Bytes of one seed's run state, from ``jax.eval_shape`` of the bandit algorithm's
    ``init`` (nothing is allocated or compiled).

    Returns:
        ``{"total": bytes per seed, "per_agent_arm": of the [N, M] leaves, "per_agent": of the
        [N] leaves, "other": the rest, "leaves": {path: bytes}, "N": N, "M": M}``.

    Example:
        >>> from decentral.bandits import bernoulli, dec_ucb
        >>> from decentral.graphs import ring
        >>> b = state_bytes(dec_ucb(ring(4, directed=False), theorem=2), bernoulli([0.3, 0.7]))
        >>> b["per_agent_arm"] // (4 * 2), b["per_agent"] // 4      # n m n_true xbar z keys
        (28, 8)
    """
    from decentral.bandits import bandit_algorithm
    from decentral.runner import seed_keys

    alg = bandit_algorithm(policy, arms)
    N, M = alg.config["num_agents"], arms.num_arms
    shapes = jax.eval_shape(alg.init, seed_keys(0)[0], policy.params)
    out = {"total": 0, "per_agent_arm": 0, "per_agent": 0, "other": 0, "leaves": {},
           "N": N, "M": M}
    for path, leaf in jax.tree_util.tree_leaves_with_path(shapes):
        nbytes = _struct_nbytes(leaf)
        kind = ("per_agent_arm" if tuple(leaf.shape[:2]) == (N, M) else
                "per_agent" if tuple(leaf.shape) == (N,) else "other")
        out[kind] += nbytes
        out["total"] += nbytes
        out["leaves"][jax.tree_util.keystr(path)] = nbytes
    return out


def memory_limit() -> tuple[int, str]:
    """``(bytes, source)``: the memory the run state lives in — a GPU/TPU's ``bytes_limit``
    when JAX computes there, else this machine's total RAM (``os.sysconf``). Read, not probed."""
    if jax.default_backend() != "cpu":
        stats = jax.devices()[0].memory_stats() or {}
        if stats.get("bytes_limit"):
            return int(stats["bytes_limit"]), f"{jax.default_backend()} bytes_limit"
    return (int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES")),
            "total RAM (os.sysconf)")


def library_run(*, S: int, N: int, M: int, T: int, edge_prob: float) -> Any:
    """The timed call: build the Theorem 2 policy and run :func:`~decentral.bandits.evaluate`
    on seeds ``0..S-1``."""
    from decentral.bandits import dec_ucb, evaluate

    adj, arms = bandit_setup(N, M, edge_prob)
    return evaluate(dec_ucb(adj, theorem=2), arms, T, range(S), progress=False)


def child_main(spec: dict[str, Any]) -> None:
    """Body of the fresh Python: the first :func:`library_run` (compilation included), then
    ``repeats`` more; prints one JSON line. Called by :func:`_run_child` only."""
    if "jax_enable_compilation_cache" in jax.config.values:
        jax.config.update("jax_enable_compilation_cache", False)
    kwargs, repeats = spec["kwargs"], int(spec["repeats"])
    start = time.perf_counter()
    import decentral.bandits  # noqa: F401  (imported before the clock, as numpy is)
    import decentral.graphs  # noqa: F401
    import_s = time.perf_counter() - start
    ready = time.perf_counter()
    res = library_run(**kwargs)
    first = time.perf_counter() - ready
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        res = library_run(**kwargs)
        times.append(time.perf_counter() - start)
    T = kwargs["T"]
    out = {"first_s": first, "times_s": times, "import_s": import_s,
           "devices": len(jax.devices()),
           "device": device_summary(), "prng_impl": str(jax.config.jax_default_prng_impl),
           "enable_x64": bool(jax.config.jax_enable_x64),
           "dtype": str(np.asarray(res.final_state.policy.z).dtype),
           "pulls_ok": bool((res.pulls.sum(axis=-1) == kwargs["M"] + T).all()),
           "mean_regret": float(res.regret.mean())}
    print(_CHILD_MARKER + json.dumps(out), flush=True)


def _run_child(kwargs: dict[str, Any], repeats: int, timeout_s: float = 3600.0
               ) -> dict[str, Any]:
    """Run :func:`child_main` in a fresh Python with this process's CPU device count and JAX
    platform; adds ``wall_s`` (the whole child, start-up included)."""
    spec = {"cpu_devices": len(jax.devices("cpu")), "kwargs": kwargs, "repeats": repeats}
    env = child_env()
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", _CHILD_CODE, json.dumps(spec)],
                          capture_output=True, text=True, timeout=timeout_s, env=env,
                          check=False)
    wall = time.perf_counter() - start
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith(_CHILD_MARKER)]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"bandits benchmark child failed (exit {proc.returncode}):\n"
                           f"{proc.stderr[-4000:]}")
    out = json.loads(lines[-1][len(_CHILD_MARKER):])
    out["wall_s"] = wall
    return out


def _load_average() -> list[float] | None:
    """1, 5 and 15 minute load averages (other processes share the cores), where the OS has
    them."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def _record_arms(state, ctx):
    return ctx.info.arms


def _reward_table(arms, seed: int, N: int, pulls: int) -> np.ndarray:
    """``[N, M, pulls]`` rewards of ``seed``'s streams from the counter-based keys."""
    import jax.numpy as jnp

    from decentral.bandits import seed_reward_key

    key = seed_reward_key(seed)
    agent = jnp.arange(N)[:, None, None]
    arm = jnp.arange(arms.num_arms)[None, :, None]
    pull = jnp.arange(pulls)[None, None, :]
    draw = jnp.vectorize(lambda i, k, j: arms.reward(key, i, k, j))
    return np.asarray(draw(agent, arm, pull))


def _check(adj, arms, T: int, seeds: tuple[int, int]) -> dict[str, Any]:
    """The agreement checks of the module docstring (library in-process, float32)."""
    from decentral.bandits import bandit_algorithm, dec_ucb
    from decentral.runner import run

    policy = dec_ucb(adj, theorem=2)
    alg = bandit_algorithm(policy, arms)
    lib_seeds, ref_seeds = int(seeds[0]), int(seeds[1])
    res = run(alg, policy.params, range(lib_seeds), T, record_every=1, record_fn=_record_arms,
              record_context=True, progress=False)
    lib_pulls = np.asarray(res.final_state.pulls).astype(np.int64)
    chosen = np.asarray(res.records)[0]                               # [T, N], seed 0
    N, M = lib_pulls.shape[1:]
    mu = arms.true_means(N)[0]
    table = _reward_table(arms, 0, N, T + 1)
    replayed = numpy_dec_ucb(adj, mu, T, [0], replay=[(table, chosen)],
                             tie_tolerance=TOLERANCE)
    pulls_diff = int(np.abs(replayed.pulls[0] - lib_pulls[0]).max())
    z_diff = float(np.abs(replayed.z[0] - np.asarray(res.final_state.policy.z[0])).max())
    rule_ok = pulls_diff == 0 and not replayed.mismatches and z_diff <= TOLERANCE

    gaps = mu.max() - mu
    lib_regret = ((lib_pulls - 1) * gaps).sum(axis=-1).mean(axis=1)    # [S] agent-averages
    own = numpy_dec_ucb(adj, mu, T, range(10_000, 10_000 + ref_seeds))
    ref_regret = own.regret.mean(axis=1)

    def mean_se(x):
        return float(x.mean()), float(x.std(ddof=1) / math.sqrt(len(x))) if len(x) > 1 else 0.0

    (lib_mean, lib_se), (ref_mean, ref_se) = mean_se(lib_regret), mean_se(ref_regret)
    se = math.hypot(lib_se, ref_se)
    stat_ok = abs(lib_mean - ref_mean) <= 3 * se
    return dict(rule_ok=rule_ok, pulls_diff=pulls_diff, z_diff=z_diff,
                mismatches=replayed.mismatches[:5], n_mismatches=len(replayed.mismatches),
                near_ties=len(replayed.near_ties),
                max_tie_gap=max(replayed.near_ties, default=0.0), forced=replayed.forced,
                decisions=T * N, stat_ok=stat_ok, lib_mean=lib_mean, lib_se=lib_se,
                ref_mean=ref_mean, ref_se=ref_se, z_score=abs(lib_mean - ref_mean) / se
                if se > 0 else (0.0 if lib_mean == ref_mean else math.inf),
                final_state_bytes=tree_nbytes(res.final_state) // lib_seeds,
                dtype=str(np.asarray(res.final_state.policy.z).dtype), policy=policy)


def bench_bandits(*, S: int, N: int, M: int, T: int, edge_prob: float, ref_seeds: int,
                  ref_steps: tuple[int, int], check_T: int, check_seeds: tuple[int, int],
                  repeats: int = 1) -> list[BenchResult]:
    """The rows of ``bandits.dec_ucb`` (see the module docstring): decentral including
    compilation, decentral compiled, and the run state's bytes."""
    load_before = _load_average()
    kwargs = dict(S=S, N=N, M=M, T=T, edge_prob=edge_prob)
    child = _run_child(kwargs, repeats)
    first, times = child["first_s"], child["times_s"]
    median = statistics.median(times)
    compile_s = max(first - median, 0.0)

    adj, arms = bandit_setup(N, M, edge_prob)
    mu = arms.true_means(N)[0]
    small, large = ref_steps
    per = []
    for steps in (small, large):
        start = time.perf_counter()
        numpy_dec_ucb(adj, mu, steps, range(ref_seeds))
        per.append((time.perf_counter() - start) / (steps * ref_seeds))
    t_ref = per[1] * S * T
    linear = abs(per[0] / per[1] - 1.0)
    linear_text = (f"NONLINEAR in T: {linear:.0%} apart, over {NONLINEAR:.0%}"
                   if linear > NONLINEAR else f"linear in T within {linear:.0%}")

    check = _check(adj, arms, check_T, check_seeds)
    agree = bool(check["rule_ok"] and check["stat_ok"] and child["pulls_ok"])
    mem = state_bytes(check["policy"], arms)
    limit, source = memory_limit()
    per_cell = mem["total"] / (N * M)
    ref_cell = sum(np.dtype(d).itemsize for d in REFERENCE_DTYPES.values())
    fits = int(limit // per_cell)

    size = dict(S=S, N=N, M=M, T=T, graph=f"ER({N}, {edge_prob}) undirected",
                weights="metropolis (theorem 2)", devices=child["devices"])
    common: dict[str, Any] = dict(
        name="bandits.dec_ucb", dtype=child["dtype"], size=size, metric="time_s",
        max_abs_diff=check["z_diff"], agree=agree, tolerance=TOLERANCE,
        prng_impl=child["prng_impl"], enable_x64=child["enable_x64"],
        reference_label="numpy triple loop")
    reference = (f"numpy, Python loops over seeds, t and agents (forced check, argmax of the "
                 f"index, Generator Bernoulli draw, max over neighbours, W @ z); timed on "
                 f"{ref_seeds} seed(s) x {small} and x {large} steps "
                 f"({per[0] * 1e3:.2f} / {per[1] * 1e3:.2f} ms per seed-step, {linear_text}), "
                 f"extrapolated linearly to S x T")
    check_text = (f"rule: seed 0 replayed {check_T} steps with the library's rewards: pulls "
                  f"max|d| {check['pulls_diff']}, z max|d| {check['z_diff']:.1e}, "
                  f"{check['n_mismatches']} mismatched decisions, {check['forced']} forced, "
                  f"{check['near_ties']} float32 ties (gap <= {check['max_tie_gap']:.1e}); "
                  f"regret/agent at T={check_T}: decentral "
                  f"{check['lib_mean']:.2f}+-{check['lib_se']:.2f} ({check_seeds[0]} seeds) vs "
                  f"numpy {check['ref_mean']:.2f}+-{check['ref_se']:.2f} ({check_seeds[1]} "
                  f"seeds), {check['z_score']:.1f} SE (<= 3)")
    extra = dict(first_s=first, median_s=median, steady_times_s=times, compile_s=compile_s,
                 import_s=child.get("import_s"),
                 child_wall_s=child["wall_s"],
                 child_start_s=max(child["wall_s"] - first - sum(times), 0.0),
                 device=child["device"], parent_device=device_summary(),
                 reference_per_seed_step_s=per, reference_steps=[small, large],
                 reference_seeds=ref_seeds, linearity_gap=linear,
                 load_average_before=load_before, load_average_after=_load_average(),
                 check={k: v for k, v in check.items() if k != "policy"})
    ns_step = median / (S * T * N) * 1e9
    flag = f"reference {linear_text}; " if linear > NONLINEAR else ""
    load_text = ("load average " + "/".join(f"{x:.1f}" for x in load_before) +
                 f" on {cpu_core_count()} cores before the run") if load_before else "load unknown"
    rows = [
        BenchResult(
            variant="vs numpy loop over t and agents, incl. compilation (fresh Python)",
            value=first, reference=reference, reference_value=t_ref,
            ratio=ratio(t_ref, first), compile_s=compile_s, times_s=[first],
            reference_times_s=[t_ref], repeats=1,
            target_ratio=100.0,
            notes=f"{flag}target >= 100x; first call in a fresh Python (policy build + evaluate), "
                  f"compile ~{compile_s:.1f} s of it; {check_text}",
            extra=extra, **common),
        BenchResult(
            variant="vs numpy loop over t and agents, compiled (repeat calls)",
            value=median, reference=reference, reference_value=t_ref,
            ratio=ratio(t_ref, median), compile_s=compile_s, times_s=times,
            reference_times_s=[t_ref], repeats=len(times),
            notes=f"{flag}the same evaluate call again in the same fresh Python; decentral "
                  f"{ns_step:.0f} ns per agent-step ({median / (S * T) * 1e6:.1f} us per "
                  f"seed-step), numpy {per[1] / N * 1e6:.1f} us per agent-step; {load_text}",
            extra=extra, **common),
    ]
    bytes_diff = float(abs(mem["total"] - check["final_state_bytes"]))
    rows.append(BenchResult(
        name="bandits.dec_ucb", variant="run state bytes per agent x arm x seed",
        dtype=check["dtype"], size=dict(size, devices=len(jax.devices())), metric="bytes",
        value=per_cell,
        reference=f"the numpy reference's state per agent x arm: n, m int64, xbar, z float64 "
                  f"({ref_cell} B)",
        reference_value=float(ref_cell), ratio=ratio(ref_cell, per_cell),
        compile_s=None, times_s=[], repeats=0, max_abs_diff=bytes_diff,
        agree=bool(bytes_diff == 0), tolerance=0.0,
        prng_impl=str(jax.config.jax_default_prng_impl),
        enable_x64=bool(jax.config.jax_enable_x64),
        notes=f"jax.eval_shape of init: {mem['per_agent_arm'] // (N * M)} B per agent x arm "
              f"+ {mem['per_agent'] // N} B per agent; {source} {limit / 2 ** 30:.1f} GiB holds "
              f"the state of N x M x seeds <= {fits:.3g} (computed, state only); equals the "
              f"check run's final state",
        extra=dict(state=mem, memory_bytes=limit, memory_source=source,
                   max_agent_arm_seeds=fits, final_state_bytes_per_seed=check["final_state_bytes"],
                   reference_bytes_per_agent_arm=ref_cell),
        reference_label="numpy state (64-bit)",
    ))
    return rows
