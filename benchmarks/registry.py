"""The benchmark registry: every benchmark id, its sizes per mode, and the driver that runs them.

:data:`BENCHMARKS` maps each id (``runner.overhead``, ``consensus.plain``, ...) to the function
that measures it; :data:`SIZES` gives its keyword arguments per size mode (``"default"``,
``"quick"``, ``"tiny"`` for the smoke test), and every row carries the sizes it was measured at.
:func:`run_benchmark` runs one id at one mode, :func:`run_benchmarks` the ids :func:`selected`
by ``--only`` patterns; ``python -m benchmarks`` is the command line.

Example:
    >>> rows = run_benchmarks("tiny", only=["consensus.plain"])
    >>> sorted({r.name for r in rows}), all(r.agree for r in rows)
    (['consensus.plain'], True)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from benchmarks.bench_bandits import bench_bandits
from benchmarks.bench_consensus_plain import bench_consensus
from benchmarks.bench_consensus_sa import bench_consensus_sa
from benchmarks.bench_gridworld import bench_env_steps
from benchmarks.bench_mixing_backends import bench_backends
from benchmarks.bench_optimization import bench_optimization_methods, bench_optimization_sparse
from benchmarks.bench_prng import bench_prng
from benchmarks.bench_random_graphs import bench_random_graphs
from benchmarks.bench_record_memory import bench_memory
from benchmarks.bench_resilient_ac import bench_resilient_ac
from benchmarks.bench_resilient_linear import bench_linear_updates
from benchmarks.bench_runner_overhead import bench_runner_overhead
from benchmarks.bench_scale import (
    bench_scale_dec_ucb,
    bench_scale_families,
    bench_scale_horizon,
    bench_scale_sa,
    bench_scale_wmsr,
)
from benchmarks.bench_scale_sharded import bench_scale_sharded
from benchmarks.bench_sharding import bench_sharding
from benchmarks.harness import BenchResult

__all__ = [
    "SIZES",
    "REPEATS",
    "MIN_REPEATS",
    "MAX_REPEATS",
    "BENCHMARKS",
    "selected",
    "run_benchmark",
    "run_benchmarks",
]

SIZES: dict[str, dict[str, dict[str, Any]]] = {
    "default": {
        "runner.overhead": dict(S=256, N=32, T=100_000, n_records=100, fit_T=64,
                                fit_record_every=4),
        "runner.sharding": dict(S=256, N=32, T=100_000, n_records=100),
        "consensus.plain": dict(S=256, N=32, T=2000, record_every=100,
                                dtypes=("float32", "float64"), one_chunk=True),
        "mixing.dense_vs_sparse": dict(S=32, cases=((64, 2000), (512, 500), (2048, 100)),
                                       offsets=(1, -1, 7, -7)),
        "graphs.random_edge_drops": dict(S=256, T=2000,
                                         cases=(("dense", 32, "erdos_renyi"),
                                                ("sparse", 64, "circulant")),
                                         drop_prob=0.3, per_seed=True),
        "prng.threefry_vs_rbg": dict(S=256, N=32, T=2000,
                                     impls=("threefry2x32", "rbg", "unsafe_rbg")),
        "memory.records": dict(S=8, N=16, horizons=(1_000, 100_000), n_records=10),
        "consensus_sa.td0": dict(S=256, N=50, d=10, T=10_000, states=20, loop_seeds=2,
                                 loop_steps=(500, 2000)),
        "resilient_ac.wmsr": dict(S=16, N=1000, K=16, d=64, H=2, deg=(8, 15),
                                  loop_seeds=(4, 16)),
        "resilient_ac.gridworld_steps": dict(S=256, E=500, loop_seeds=4),
        "resilient_ac.linear_updates": dict(S=64, N=5, d=8, T=10_000, states=10,
                                            loop_steps=(200, 1000), check_steps=50),
        "bandits.dec_ucb": dict(S=100, N=50, M=10, T=10_000, edge_prob=0.5, ref_seeds=2,
                                ref_steps=(500, 1000), check_T=500, check_seeds=(50, 10)),
        "scale.families": dict(families=("consensus", "push_sum"),
                               graphs=("exponential", "random_regular"),
                               cases=((1_000, 1_000), (10_000, 1_000), (100_000, 1_000),
                                      (1_000_000, 50)),
                               S=8, d=4, degree=8, check_steps=3),
        "scale.horizon": dict(N=100, S=8, d=4, horizons=(100_000, 1_000_000),
                              record_every=1_000),
        "scale.dec_ucb": dict(N=100_000, M=10, S=8, T=20, warm_steps=3),
        "scale.wmsr": dict(N=1_000_000, K=8, H=1, S=8, d=4, T=8, warm_steps=3),
        "scale.sharded": dict(N=1_000_000, S=8, d=4, T=20),
        "scale.consensus_sa": dict(N=1_000_000, S=8, d=4, T=50, states=4),
        "optimization.methods": dict(S=64, N=100, d=10, T=10_000, loop_steps=(50, 200),
                                     check_steps=50, edge_prob=0.1, warm_steps=1000,
                                     max_repeats=2),
        "optimization.sparse_scale": dict(S=4, N=100_000, d=4, T=100, ref_steps=10,
                                          check_steps=5, degree=8,
                                          methods=("dgd", "push_pull", "dsgt")),
    },
    "quick": {
        "runner.overhead": dict(S=256, N=32, T=2_000, n_records=100, fit_T=64,
                                fit_record_every=4),
        "runner.sharding": dict(S=256, N=32, T=10_000, n_records=100),
        "consensus.plain": dict(S=64, N=16, T=400, record_every=40,
                                dtypes=("float32", "float64"), one_chunk=False),
        "mixing.dense_vs_sparse": dict(S=8, cases=((1024, 40),),
                                       offsets=(1, -1, 7, -7)),
        "graphs.random_edge_drops": dict(S=64, T=400, cases=(("dense", 16, "erdos_renyi"),),
                                         drop_prob=0.3, per_seed=False),
        "prng.threefry_vs_rbg": dict(S=64, N=16, T=400, impls=("threefry2x32", "rbg")),
        "memory.records": dict(S=4, N=8, horizons=(1_000, 100_000), n_records=10),
        "consensus_sa.td0": dict(S=64, N=50, d=10, T=2000, states=20, loop_seeds=1,
                                 loop_steps=(200, 800)),
        "resilient_ac.wmsr": dict(S=4, N=1000, K=16, d=64, H=2, deg=(8, 15),
                                  loop_seeds=(1, 4)),
        "resilient_ac.gridworld_steps": dict(S=64, E=20, loop_seeds=2),
        "resilient_ac.linear_updates": dict(S=16, N=5, d=8, T=2_000, states=10,
                                            loop_steps=(100, 400), check_steps=50),
        "bandits.dec_ucb": dict(S=20, N=50, M=10, T=1000, edge_prob=0.5, ref_seeds=1,
                                ref_steps=(250, 500), check_T=200, check_seeds=(20, 4)),
        "scale.families": dict(families=("consensus", "push_sum"), graphs=("exponential",),
                               cases=((1_000, 100), (10_000, 100), (100_000, 20)),
                               S=8, d=4, degree=8, check_steps=3),
        "scale.horizon": dict(N=100, S=8, d=4, horizons=(10_000, 100_000), record_every=1_000),
        "scale.dec_ucb": dict(N=10_000, M=10, S=8, T=20, warm_steps=3),
        "scale.wmsr": dict(N=100_000, K=8, H=1, S=8, d=4, T=8, warm_steps=3),
        "scale.sharded": dict(N=100_000, S=8, d=4, T=20),
        "scale.consensus_sa": dict(N=100_000, S=8, d=4, T=50, states=4),
        "optimization.methods": dict(S=16, N=50, d=5, T=1000, loop_steps=(20, 80),
                                     check_steps=30, edge_prob=0.2, max_repeats=1),
        "optimization.sparse_scale": dict(S=4, N=10_000, d=4, T=20, ref_steps=10,
                                          check_steps=5, degree=8,
                                          methods=("dgd", "push_pull", "dsgt")),
    },
    "tiny": {
        "runner.overhead": dict(S=8, N=6, T=200, n_records=10, fit_T=16, fit_record_every=1),
        "runner.sharding": dict(S=8, N=6, T=200, n_records=10),
        "consensus.plain": dict(S=4, N=6, T=40, record_every=10,
                                dtypes=("float32", "float64"), one_chunk=False),
        "mixing.dense_vs_sparse": dict(S=3, cases=((16, 20),), offsets=(1, -1, 3)),
        "graphs.random_edge_drops": dict(S=4, T=20, cases=(("dense", 6, "erdos_renyi"),),
                                         drop_prob=0.3, per_seed=False),
        "prng.threefry_vs_rbg": dict(S=4, N=6, T=40, impls=("threefry2x32", "rbg")),
        "memory.records": dict(S=2, N=4, horizons=(100, 1_000), n_records=10),
        "consensus_sa.td0": dict(S=4, N=6, d=3, T=50, states=4, loop_seeds=1,
                                 loop_steps=(10, 20)),
        "resilient_ac.wmsr": dict(S=2, N=8, K=6, d=3, H=1, deg=(2, 5), loop_seeds=(1, 2)),
        "resilient_ac.gridworld_steps": dict(S=2, E=2, loop_seeds=1, variants=("v2",)),
        "resilient_ac.linear_updates": dict(S=2, N=3, d=2, T=20, states=3, loop_steps=(10, 20),
                                            check_steps=10),
        "bandits.dec_ucb": dict(S=4, N=6, M=3, T=50, edge_prob=0.5, ref_seeds=1,
                                ref_steps=(10, 20), check_T=30, check_seeds=(8, 4)),
        "scale.families": dict(families=("consensus", "push_sum"), graphs=("exponential",),
                               cases=((64, 20), (256, 10)), S=2, d=2, degree=8, check_steps=3,
                               fresh_process_per_case=False),
        "scale.horizon": dict(N=16, S=2, d=2, horizons=(1_000, 4_000), record_every=100,
                              fresh_process_per_case=False),
        "scale.dec_ucb": dict(N=32, M=3, S=2, T=10, warm_steps=3),
        "scale.wmsr": dict(N=64, K=8, H=1, S=2, d=2, T=8, warm_steps=3),
        "scale.sharded": dict(N=256, S=2, d=2, T=8),
        "scale.consensus_sa": dict(N=64, S=2, d=2, T=8, states=3, check_steps=5),
        "optimization.methods": dict(S=4, N=8, d=3, T=100, loop_steps=(10, 20), check_steps=20,
                                     edge_prob=0.4, methods=("dgd", "push_pull"),
                                     max_repeats=1),
        "optimization.sparse_scale": dict(S=2, N=64, d=2, T=10, ref_steps=5, check_steps=5,
                                          degree=4, methods=("dsgt",)),
    },
}
"""Benchmark sizes per mode: ``{mode: {benchmark id: keyword arguments}}``."""

REPEATS: dict[str, int] = {"default": 5, "quick": 2, "tiny": 1}
"""Timed repeats per side (after one warm-up call) per mode."""

MIN_REPEATS: dict[str, int] = {"runner.overhead": 5, "runner.sharding": 5}
"""Benchmarks whose rows are medians of at least this many timed calls, whatever the mode."""

MAX_REPEATS: dict[str, int] = {"bandits.dec_ucb": 1, "scale.families": 1,
                               "scale.horizon": 1, "scale.dec_ucb": 1, "scale.wmsr": 1,
                               "scale.sharded": 1, "scale.consensus_sa": 1}
"""Benchmarks whose repeated calls are long (a full Monte-Carlo run each, a run at 10^6 agents):
at most this many timed calls at the per-mode default (an explicit ``repeats`` is taken as
given)."""

BENCHMARKS: dict[str, Callable[..., list[BenchResult]]] = {
    "runner.overhead": bench_runner_overhead,
    "runner.sharding": bench_sharding,
    "consensus.plain": bench_consensus,
    "mixing.dense_vs_sparse": bench_backends,
    "graphs.random_edge_drops": bench_random_graphs,
    "prng.threefry_vs_rbg": bench_prng,
    "memory.records": bench_memory,
    "consensus_sa.td0": bench_consensus_sa,
    "resilient_ac.wmsr": bench_resilient_ac,
    "resilient_ac.gridworld_steps": bench_env_steps,
    "resilient_ac.linear_updates": bench_linear_updates,
    "bandits.dec_ucb": bench_bandits,
    "scale.families": bench_scale_families,
    "scale.horizon": bench_scale_horizon,
    "scale.dec_ucb": bench_scale_dec_ucb,
    "scale.wmsr": bench_scale_wmsr,
    "scale.sharded": bench_scale_sharded,
    "scale.consensus_sa": bench_scale_sa,
    "optimization.methods": bench_optimization_methods,
    "optimization.sparse_scale": bench_optimization_sparse,
}
"""Benchmark id -> function; ``--only`` selects ids by substring."""


def selected(only: Sequence[str] | None = None) -> list[str]:
    """Benchmark ids whose id contains any pattern of ``only`` (all ids when None/empty).

    Raises:
        ValueError: if no benchmark matches.
    """
    pats = [p for item in (only or []) for p in str(item).split(",") if p]
    names = [n for n in BENCHMARKS if not pats or any(p in n for p in pats)]
    if not names:
        raise ValueError(f"--only {pats} matches no benchmark; ids are {list(BENCHMARKS)}.")
    return names


def run_benchmark(name: str, size: str = "default", repeats: int | None = None
                  ) -> list[BenchResult]:
    """Run one benchmark at one of the :data:`SIZES` modes."""
    if size not in SIZES:
        raise ValueError(f"size must be one of {sorted(SIZES)}, got {size!r}.")
    if name not in BENCHMARKS:
        raise ValueError(f"unknown benchmark {name!r}; ids are {list(BENCHMARKS)}.")
    kwargs = dict(SIZES[size][name])
    kwargs["repeats"] = REPEATS[size] if repeats is None else int(repeats)
    if repeats is None and name in MAX_REPEATS:
        kwargs["repeats"] = min(kwargs["repeats"], MAX_REPEATS[name])
    kwargs["repeats"] = max(kwargs["repeats"], MIN_REPEATS.get(name, 1))
    if name == "memory.records":
        kwargs["repeats"] = 1      # the bytes are the point; one timed call suffices
    return BENCHMARKS[name](**kwargs)


def run_benchmarks(size: str = "default", only: Sequence[str] | None = None,
                   repeats: int | None = None,
                   log: Callable[[str], Any] | None = None) -> list[BenchResult]:
    """Run the selected benchmarks (see :func:`selected`) and return every row.

    Example:
        >>> rows = run_benchmarks("tiny", only=["memory"])
        >>> rows[0].agree
        True
    """
    rows: list[BenchResult] = []
    for name in selected(only):
        if log is not None:
            log(f"running {name} ({size}) ...")
        rows.extend(run_benchmark(name, size, repeats))
    return rows
