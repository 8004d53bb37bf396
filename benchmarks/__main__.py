"""``python -m benchmarks``: run the benchmarks, print a table of ratios, write the results.

Usage::

    python -m benchmarks [--quick | --full] [--only PATTERN ...] [--out DIR] [--repeats N] [--list]

``--quick`` runs small sizes (at those the times are mostly compilation); ``--full`` (the
default) the largest, where the targets are set (e.g. the ``scale`` benchmarks up to 10^6
agents and horizons up to 10^6); ``--size tiny`` the smoke-test sizes
(:data:`benchmarks.registry.SIZES`). ``--only`` selects benchmark ids by substring
(repeatable, or comma-separated). The console table fits 120 columns (see
:func:`benchmarks.report.format_table`); results go to ``DIR/results.json`` (every row, the
configuration and ``decentral.results.provenance()``) and ``DIR/results.md``; DIR defaults to
``benchmarks/out``.

Exit status: 0 when every benchmark ran and every checked row agreed with its reference; 1 when
a benchmark raised or a decentral result differed from its reference (a benchmark that computes
something else is worthless); 2 on a usage error.

The command exposes one CPU device per core (:func:`decentral.devices.use_all_cpu_cores`) before
JAX starts; every row prints the device count it ran on, and both sides of a ratio run on the
same devices.
"""

from decentral.devices import use_all_cpu_cores

if __name__ == "__main__":
    use_all_cpu_cores()          # first thing: before anything starts the JAX backend

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
from collections.abc import Sequence  # noqa: E402

from benchmarks import registry  # noqa: E402
from benchmarks.report import DEFAULT_OUT, format_table, write_results  # noqa: E402
from decentral.cli import positive_int  # noqa: E402
from decentral.results import provenance  # noqa: E402

__all__ = ["main", "build_parser"]


def build_parser() -> argparse.ArgumentParser:
    """The command-line parser of ``python -m benchmarks``."""
    p = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="Speed and memory of the decentral foundation as ratios against reference "
                    "implementations timed in the same run (ratio = reference / decentral).",
    )
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="small sizes (seconds)")
    mode.add_argument("--full", action="store_true",
                      help="the default sizes, the largest (targets are set for these)")
    p.add_argument("--size", choices=sorted(registry.SIZES), default=None,
                   help="size mode (overrides --quick; 'tiny' is the smoke-test size)")
    p.add_argument("--only", action="append", metavar="PATTERN",
                   help="run benchmarks whose id contains PATTERN (repeat or comma-separate)")
    p.add_argument("--out", default=str(DEFAULT_OUT), metavar="DIR",
                   help=f"output folder for results.json and results.md (default {DEFAULT_OUT})")
    p.add_argument("--repeats", type=positive_int, default=None,
                   help="timed repeats per side after the warm-up call (default per size)")
    p.add_argument("--list", action="store_true", help="list benchmark ids and exit")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; returns the exit status (see the module docstring)."""
    args = build_parser().parse_args(argv)
    if args.list:
        for name in registry.BENCHMARKS:
            print(name)
        return 0
    size = args.size or ("quick" if args.quick else "default")
    try:
        names = registry.selected(args.only)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    command = "python -m benchmarks " + " ".join(sys.argv[1:] if argv is None else argv)
    prov = provenance()
    rows, failed = [], []
    start = time.perf_counter()
    for name in names:
        t0 = time.perf_counter()
        print(f"[{name}] running ({size}) ...", flush=True)
        try:
            new = registry.run_benchmark(name, size, args.repeats)
        except Exception:
            traceback.print_exc()
            failed.append(name)
            print(f"[{name}] ERROR", flush=True)
            continue
        rows.extend(new)
        print(f"[{name}] done in {time.perf_counter() - t0:.1f} s", flush=True)
    total = time.perf_counter() - start
    print()
    print(format_table(rows))
    targeted = [r for r in rows if r.met is not None]
    met = sum(bool(r.met) for r in targeted)
    print(f"\ntargets met: {met} of {len(targeted)}" + (
        "" if size == "default" else f" (targets are set for the default size; this run is "
                                     f"{size!r}, where fixed costs dominate)"))
    differ = [f"{r.name} ({r.variant}, {r.dtype})" for r in rows if r.agree is False]
    config = {"size": size, "only": args.only, "repeats": args.repeats,
              "sizes": {n: registry.SIZES[size][n] for n in names}, "total_s": total,
              "errors": failed}
    paths = write_results(rows, args.out, prov, config=config, command=command.strip())
    print(f"\n{len(rows)} rows in {total:.1f} s; wrote {', '.join(str(p) for p in paths)}")
    if differ:
        print("DIFFER from the reference: " + "; ".join(differ), file=sys.stderr)
    if failed:
        print("ERROR in: " + ", ".join(failed), file=sys.stderr)
    return 1 if (differ or failed) else 0


if __name__ == "__main__":
    sys.exit(main())
