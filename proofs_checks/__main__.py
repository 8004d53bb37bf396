"""``python -m proofs_checks``: run the papers' claims, print a verdict table, write the report.

Usage::

    python -m proofs_checks [--full] [--only PATTERN ...] [--seeds N] [--budget X]
                            [--out DIR] [--base-seed K] [--list] [--quiet]

``--only`` selects claims whose id contains the pattern (substring); it may be repeated or hold
comma-separated patterns, and a claim matching any of them runs. A full run writes
``DIR/report.md`` and ``DIR/report.json``; an ``--only`` run writes ``DIR/report-only.md`` and
``DIR/report-only.json`` beside them, so checking one claim never overwrites the full report.

First thing, the command asks JAX for one CPU device per core
(:func:`decentral.devices.use_all_cpu_cores`; the runner spreads the seeds over them), then
enables float64 before any array is created and selects matplotlib's Agg backend.

Exit status: 0 when the run completed, whatever the verdicts (a FAIL is a finding, not a crash);
1 when any claim ended in ERROR (or a claims module failed to import); 2 for usage errors, such as
an ``--only`` that matches no claim; 130 when interrupted (the report of the claims run so far is
still written).
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import textwrap
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

from decentral.cli import positive_float, positive_int, verification_backends
from decentral.results import provenance
from decentral.verify.claims import CheckContext, Claim, ClaimResult, Kind, Verdict
from decentral.verify.claims import run_claim as _run_claim
from decentral.verify.report import TABLE_WIDTH, format_summary, format_table, write_report
from proofs_checks import registry as _registry

__all__ = ["main", "build_parser", "run_context", "report_stem"]


def build_parser() -> argparse.ArgumentParser:
    """The command-line parser of ``python -m proofs_checks``."""
    p = argparse.ArgumentParser(
        prog="python -m proofs_checks",
        description="Run the papers' checkable claims and report PASS / FAIL / INCONCLUSIVE / "
                    "ERROR verdicts.",
    )
    p.add_argument("--full", action="store_true",
                   help="paper-scale sizes (slow); the default is the quick size")
    p.add_argument("--only", action="append", metavar="PATTERN",
                   help="run claims whose id contains PATTERN; repeat or comma-separate for "
                        "several (any match), e.g. --only bandits or --only graphs.,push_sum. "
                        "The report is then report-only.md / .json, beside the full one.")
    p.add_argument("--seeds", type=positive_int, metavar="N",
                   help="override the number of seeds of every statistical claim (a fixed "
                        "count: no sequential stopping)")
    p.add_argument("--budget", type=positive_float, default=1.0, metavar="X",
                   help="scale every sequential claim's maximum seed count by X (default 1); "
                        "a claim still stops as soon as its rule decides")
    p.add_argument("--base-seed", type=int, default=0, metavar="K",
                   help="offset added to every claim's seeds (default 0)")
    p.add_argument("--out", type=pathlib.Path, default=_registry.DEFAULT_OUT_DIR,
                   metavar="DIR", help="output folder for report.md, report.json and figures "
                                       f"(default {_registry.DEFAULT_OUT_DIR.as_posix()})")
    p.add_argument("--list", action="store_true", help="list the selected claims and exit")
    p.add_argument("--quiet", action="store_true",
                   help="no progress lines; print only the verdict table and summary")
    return p


def report_stem(patterns: Sequence[str]) -> str:
    """File name of the report: ``"report"`` for a full run, ``"report-only"`` when ``--only``
    selected a subset, so a partial run never overwrites the full report."""
    return "report-only" if patterns else "report"


def run_context(ctx: CheckContext, patterns: Sequence[str], argv: Sequence[str]) -> dict[str, Any]:
    """The reproducibility record of a run: the options, then
    :func:`decentral.results.provenance` (package versions, JAX settings and devices, git commit,
    platform, date)."""
    info: dict[str, Any] = {
        "mode": ctx.mode,
        "seeds_override": ctx.seeds,
        "budget": ctx.budget,
        "base_seed": ctx.base_seed,
        "only": list(patterns),
        "out_dir": str(ctx.out_dir),
        "argv": list(argv),
    }
    try:
        import jax

        info["cpu_devices"] = len(jax.devices("cpu"))
    except Exception as exc:  # noqa: BLE001 - the record must not sink the run
        info["cpu_devices"] = f"unavailable: {exc}"
    info.update(provenance())
    return info


def _import_failure_claim(module: str, tb: str) -> Claim:
    def fail(ctx: CheckContext):
        raise ImportError(f"module proofs_checks.{module} failed to import; its claims did not "
                          f"run:\n{tb}")

    return Claim(id=f"{module}.module_import", statement=f"proofs_checks.{module} imports",
                 source="harness", kind=Kind.EXACT, run=fail)


def _use_all_cpu_cores() -> None:
    """One JAX CPU device per core, so the runner can spread seeds over every core. Effective
    only before JAX starts its backend (as in ``python -m proofs_checks``); where ``main`` is
    called inside a process that already computed with JAX, the device count stays as it is."""
    from decentral.devices import use_all_cpu_cores

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"use_all_cpu_cores\(", category=RuntimeWarning)
        use_all_cpu_cores()


def _print_list(claims: Sequence[Claim]) -> None:
    for c in claims:
        statement = " ".join(c.statement.split())
        if len(statement) > 70:
            statement = statement[:67] + "..."
        print(f"{c.id:<40} {c.kind.value:<11} {statement}")


def main(argv: Sequence[str] | None = None, *, registry: Mapping[str, Claim] | None = None) -> int:
    """Entry point of ``python -m proofs_checks``; returns the exit status.

    Args:
        argv: command-line arguments (default ``sys.argv[1:]``).
        registry: claims to choose from instead of discovering the package's modules (tests).

    Returns:
        0 run completed, 1 some claim ERROR, 2 usage error, 130 interrupted.
    """
    _use_all_cpu_cores()  # first: before anything starts JAX's backend
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on bad usage, 0 on --help
        return exc.code if isinstance(exc.code, int) else 2

    with verification_backends():
        return _main(args, argv, registry)


def _main(args: argparse.Namespace, argv: list[str], registry: Mapping[str, Claim] | None) -> int:
    module_errors: dict[str, str] = {}
    if registry is None:
        pool: dict[str, Claim] = dict(_registry.discover())
        for module, tb in _registry.DISCOVERY_ERRORS.items():
            if module in _registry.FAMILIES:
                fake = _import_failure_claim(module, tb)
                pool[fake.id] = fake
            else:
                module_errors[module] = tb
    else:
        pool = dict(registry)

    patterns = _registry.split_patterns(args.only)
    selected = _registry.select(pool, patterns or None)
    if not selected:
        if patterns:
            print(f"error: --only {', '.join(repr(p) for p in patterns)} matches no claim id.",
                  file=sys.stderr)
            if pool:
                print("available claim ids:", file=sys.stderr)
                for cid in sorted(pool):
                    print(f"  {cid}", file=sys.stderr)
            else:
                print("no claims are registered.", file=sys.stderr)
            return 2
        print("no claims are registered; nothing to run.", file=sys.stderr)
        for module, tb in module_errors.items():
            print(f"error: module proofs_checks.{module} failed to import:\n{tb}", file=sys.stderr)
        return 1 if module_errors else 0

    if args.list:
        _print_list(selected)
        for module in module_errors:
            print(f"error: module proofs_checks.{module} failed to import", file=sys.stderr)
        return 1 if module_errors else 0

    ctx = CheckContext(full=args.full, seeds=args.seeds, out_dir=args.out,
                       base_seed=args.base_seed, budget=args.budget)
    context = run_context(ctx, patterns, argv)
    results: list[ClaimResult] = []
    interrupted = False
    n = len(selected)
    for i, c in enumerate(selected, start=1):
        if not args.quiet:
            print(f"[{i}/{n}] {c.id} ...", end=" ", file=sys.stderr, flush=True)
        try:
            r = _run_claim(c, ctx)
        except KeyboardInterrupt:
            interrupted = True
            if not args.quiet:
                print("interrupted", file=sys.stderr, flush=True)
            break
        results.append(r)
        if not args.quiet:
            mark = " (vacuous)" if r.vacuous else ""
            print(f"{r.verdict.value}{mark} ({r.seconds:.1f} s)", file=sys.stderr, flush=True)
            for w in r.warnings:
                print(textwrap.fill(f"warning: {w}", TABLE_WIDTH, initial_indent="    ",
                                    subsequent_indent="      "), file=sys.stderr, flush=True)
            if r.error:
                print(r.error.rstrip(), file=sys.stderr, flush=True)
    if interrupted:
        context["interrupted"] = True
        context["not_run"] = [c.id for c in selected[len(results):]]
    if module_errors:
        context["module_import_errors"] = module_errors

    print(format_table(results))
    print()
    print(format_summary(results))
    md_path, json_path = write_report(results, ctx.out_dir, context,
                                      stem=report_stem(patterns))
    print(f"report: {md_path}\n        {json_path}")
    if patterns:
        print(f"(--only run: written beside the full report {ctx.out_dir / 'report.md'}, which "
              "is left as it was)")
    for module, tb in module_errors.items():
        print(f"error: module proofs_checks.{module} failed to import:\n{tb}", file=sys.stderr)
    if interrupted:
        print(f"interrupted after {len(results)} of {n} claims", file=sys.stderr)
        return 130
    if module_errors or any(r.verdict is Verdict.ERROR for r in results):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
