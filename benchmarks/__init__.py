"""Speed and memory benchmarks, reported as ratios against references measured in the same run.

A benchmark never asserts an absolute time: each row times a ``decentral`` computation and a
reference computation (a plain numpy loop, another backend, another PRNG implementation) in the
same process and reports ``ratio = reference / decentral`` (> 1: decentral is faster / smaller).
Every row that can be checked also says whether both sides computed the same numbers
(``agree``, ``max_abs_diff``): a benchmark that computes something else is worthless.

Modules: :mod:`benchmarks.harness` (one row, timing, the ratio, the agreement check),
:mod:`benchmarks.report` (console table, ``results.md``, ``results.json``),
:mod:`benchmarks.registry` (benchmark ids, sizes, the driver), one ``bench_*`` module per
benchmark (:mod:`benchmarks.consensus_workload` holds what the foundation ones share). The
command line is ``python -m benchmarks [--quick] [--only PATTERN] [--out DIR]``; importing this
package imports neither the benchmarks nor the library's algorithms.
"""

from benchmarks.harness import (
    BenchResult,
    Timing,
    cost_text,
    device_summary,
    jax_config,
    measure,
    ratio,
    tree_nbytes,
)
from benchmarks.report import (
    DEFAULT_OUT,
    TABLE_WIDTH,
    format_markdown,
    format_table,
    write_results,
)

__all__ = [
    "BenchResult",
    "Timing",
    "measure",
    "ratio",
    "jax_config",
    "tree_nbytes",
    "cost_text",
    "device_summary",
    "format_table",
    "format_markdown",
    "write_results",
    "DEFAULT_OUT",
    "TABLE_WIDTH",
]
