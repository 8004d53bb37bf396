"""``python -m proofs_checks``: run the papers' claims, print a verdict table, write the report.

Usage::

    python -m proofs_checks [--full] [--only PATTERN ...] [--seeds N] [--out DIR]
                            [--base-seed K] [--list] [--quiet]

``--only`` selects claims whose id contains the pattern (substring); it may be repeated or hold
comma-separated patterns, and a claim matching any of them runs. The command enables float64 in
JAX before any array is created and uses matplotlib's Agg backend.

Exit status: 0 when the run completed, whatever the verdicts (a FAIL is a finding, not a crash);
1 when any claim ended in ERROR (or a claims module failed to import); 2 for usage errors, such as
an ``--only`` that matches no claim; 130 when interrupted (the report of the claims run so far is
still written).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import importlib.metadata
import pathlib
import platform
import subprocess
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from decentral._cli import positive_int
from decentral.verify.claims import FAMILIES, CheckContext, Claim, ClaimResult, Kind, Verdict
from decentral.verify.claims import run_claim as _run_claim
from decentral.verify.report import format_summary, format_table, write_report
from proofs_checks import registry as _registry

__all__ = ["main", "build_parser", "run_context"]

_VERSIONED = ("numpy", "scipy", "jax", "jaxlib", "networkx", "matplotlib")


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
                        "several (any match), e.g. --only bandits or --only graphs.,push_sum.")
    p.add_argument("--seeds", type=positive_int, metavar="N",
                   help="override the number of seeds of every statistical claim")
    p.add_argument("--base-seed", type=int, default=0, metavar="K",
                   help="offset added to every claim's seeds (default 0)")
    p.add_argument("--out", type=pathlib.Path, default=pathlib.Path("proofs_checks/out"),
                   metavar="DIR", help="output folder for report.md, report.json and figures "
                                       "(default proofs_checks/out)")
    p.add_argument("--list", action="store_true", help="list the selected claims and exit")
    p.add_argument("--quiet", action="store_true",
                   help="no progress lines; print only the verdict table and summary")
    return p


def _git_commit() -> str | None:
    root = pathlib.Path(__file__).resolve().parent.parent
    try:
        proc = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                              text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    commit = proc.stdout.strip()
    return commit if proc.returncode == 0 and commit else None


def _version(pkg: str) -> str | None:
    try:
        return importlib.metadata.version(pkg)
    except importlib.metadata.PackageNotFoundError:
        return None


def run_context(ctx: CheckContext, patterns: Sequence[str], argv: Sequence[str]) -> dict[str, Any]:
    """The reproducibility record of a run: mode, seeds, versions, JAX settings, commit, date."""
    info: dict[str, Any] = {
        "mode": ctx.mode,
        "seeds_override": ctx.seeds,
        "base_seed": ctx.base_seed,
        "only": list(patterns),
        "out_dir": str(ctx.out_dir),
        "argv": list(argv),
        "date_utc": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "git_commit": _git_commit(),
        "versions": {pkg: _version(pkg) for pkg in _VERSIONED},
    }
    try:
        import jax
    except ImportError as exc:
        info["jax"] = f"unavailable: {exc}"
        return info
    for key, get in (
        ("jax_enable_x64", lambda: bool(jax.config.jax_enable_x64)),
        ("jax_default_prng_impl", lambda: str(jax.config.jax_default_prng_impl)),
        ("jax_backend", jax.default_backend),
        ("jax_devices", lambda: [str(d) for d in jax.devices()]),
    ):
        try:
            info[key] = get()
        except Exception as exc:  # noqa: BLE001 - the record must not sink the run
            info[key] = f"unavailable: {exc}"
    return info


def _import_failure_claim(module: str, tb: str) -> Claim:
    def fail(ctx: CheckContext):
        raise ImportError(f"module proofs_checks.{module} failed to import; its claims did not "
                          f"run:\n{tb}")

    return Claim(id=f"{module}.module_import", statement=f"proofs_checks.{module} imports",
                 source="harness", kind=Kind.EXACT, run=fail)


def _setup_backends() -> bool | None:
    """Float64 in JAX (before any array exists) and matplotlib's Agg backend; return old x64."""
    previous = None
    try:
        import jax

        previous = bool(jax.config.jax_enable_x64)
        jax.config.update("jax_enable_x64", True)
    except ImportError:
        pass
    try:
        import matplotlib

        matplotlib.use("Agg", force=True)
    except Exception:  # noqa: BLE001 - plotting is optional for the harness
        pass
    return previous


def _restore_x64(previous: bool | None) -> None:
    if previous is None:
        return
    import jax

    jax.config.update("jax_enable_x64", previous)


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
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on bad usage, 0 on --help
        return exc.code if isinstance(exc.code, int) else 2

    previous_x64 = _setup_backends()
    try:
        return _main(args, argv, registry)
    finally:
        _restore_x64(previous_x64)


def _main(args: argparse.Namespace, argv: list[str], registry: Mapping[str, Claim] | None) -> int:
    module_errors: dict[str, str] = {}
    if registry is None:
        pool: dict[str, Claim] = dict(_registry.discover())
        for module, tb in _registry.DISCOVERY_ERRORS.items():
            if module in FAMILIES:
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
                       base_seed=args.base_seed)
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
                print(f"    warning: {w}", file=sys.stderr, flush=True)
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
    md_path, json_path = write_report(results, ctx.out_dir, context)
    print(f"report: {md_path}  {json_path}")
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
