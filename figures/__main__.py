"""``python -m figures``: compute and draw the papers' figures, write PNG + npz/JSON per figure.

Usage::

    python -m figures [--only PATTERN ...] [--full | --size {tiny,quick,full}] [--out DIR]
                      [--base-seed K] [--list] [--quiet] [--gallery [--docs DIR]]

``--only`` selects figures whose id contains the pattern (substring; repeat or comma-separate,
any match). The default size is ``quick``; ``--full`` is paper scale; ``--size tiny`` is the test
size. Every figure writes ``DIR/<id>.png``, ``DIR/<id>.npz`` and ``DIR/<id>.json`` (the data it
was drawn from, its parameters and :func:`decentral.results.provenance`), and the run writes
``DIR/index.json`` (what was drawn, how long it took, what failed). DIR defaults to
``figures/out`` under the working directory. The command exposes one CPU device per core
(:func:`decentral.devices.use_all_cpu_cores`) before JAX starts, enables float64 in JAX for the
run and uses matplotlib's Agg backend.

``--gallery`` also regenerates the docs' figure gallery (:mod:`figures.gallery`): each figure
drawn copies its PNG to ``docs/img/gallery/<id>.png`` and ``docs/gallery.md`` is rewritten from
the registry (every registered figure). ``python -m figures --gallery --only bandits`` redraws
one family's images. ``--docs DIR`` writes into another docs folder (tests).

Exit status: 0 when every selected figure was written; 1 when a figure raised (the others are
still drawn) or a figures module failed to import; 2 on a usage error, such as an ``--only``
that matches no figure id; 130 when interrupted.
"""

from decentral.devices import use_all_cpu_cores

if __name__ == "__main__":
    use_all_cpu_cores()          # first thing: before anything starts the JAX backend

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
from collections.abc import Mapping, Sequence  # noqa: E402
from pathlib import Path  # noqa: E402

from decentral.cli import verification_backends  # noqa: E402
from figures import registry as _registry  # noqa: E402
from figures.registry import SIZES, Figure, FigureContext  # noqa: E402

__all__ = ["main", "build_parser", "DEFAULT_OUT"]

DEFAULT_OUT = Path("figures") / "out"
"""Default output folder (relative to the working directory)."""


def build_parser() -> argparse.ArgumentParser:
    """The command-line parser of ``python -m figures``."""
    p = argparse.ArgumentParser(
        prog="python -m figures",
        description="Compute and draw the papers' figures; each writes <id>.png and the "
                    "<id>.npz + <id>.json it was drawn from.")
    p.add_argument("--only", action="append", metavar="PATTERN",
                   help="draw figures whose id contains PATTERN (repeat or comma-separate)")
    p.add_argument("--full", action="store_true", help="paper-scale sizes (slow)")
    p.add_argument("--size", choices=SIZES, default=None,
                   help="size mode (overrides --full; 'tiny' is the test size)")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, metavar="DIR",
                   help=f"output folder (default {DEFAULT_OUT})")
    p.add_argument("--base-seed", type=int, default=0, metavar="K",
                   help="offset added to every figure's seeds (default 0)")
    p.add_argument("--list", action="store_true", help="list the selected figures and exit")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    p.add_argument("--gallery", action="store_true",
                   help="also copy each PNG to docs/img/gallery/<id>.png and rewrite "
                        "docs/gallery.md from the registry")
    p.add_argument("--docs", type=Path, default=None, metavar="DIR",
                   help="the docs folder --gallery writes into (default: the repository's "
                        "docs/)")
    return p


def main(argv: Sequence[str] | None = None, *,
         registry: Mapping[str, Figure] | None = None) -> int:
    """Entry point of ``python -m figures``; returns the exit status.

    Args:
        argv: command-line arguments (default ``sys.argv[1:]``).
        registry: figures to choose from instead of discovering the package's modules (tests).

    Returns:
        0 all written, 1 some figure raised or a module failed to import, 2 usage error,
        130 interrupted.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on bad usage, 0 on --help
        return exc.code if isinstance(exc.code, int) else 2
    with verification_backends():
        return _main(args, argv, registry)


def _main(args: argparse.Namespace, argv: list[str],
          registry: Mapping[str, Figure] | None) -> int:
    module_errors: dict[str, str] = {}
    if registry is None:
        pool = dict(_registry.discover())
        module_errors = dict(_registry.DISCOVERY_ERRORS)
    else:
        pool = dict(registry)
    patterns = _registry.split_patterns(args.only)
    chosen = _registry.select(pool, patterns or None)
    for module, tb in module_errors.items():
        print(f"error: module figures.{module} failed to import:\n{tb}", file=sys.stderr)
    if not chosen:
        if patterns:
            print(f"error: --only {', '.join(repr(p) for p in patterns)} matches no figure id; "
                  f"ids are: {', '.join(sorted(pool)) or '(none registered)'}.", file=sys.stderr)
            return 2
        print("no figures are registered; nothing to draw.", file=sys.stderr)
        return 1 if module_errors else 0
    if args.list:
        for f in chosen:
            print(f"{f.id:<40} {f.title}  [{f.paper}]")
        return 1 if module_errors else 0

    size = args.size or ("full" if args.full else "quick")
    ctx = FigureContext(size=size, base_seed=args.base_seed)
    out_dir = Path(args.out)
    entries, failed, interrupted = [], [], False
    start = time.perf_counter()
    for i, f in enumerate(chosen, start=1):
        if not args.quiet:
            print(f"[{i}/{len(chosen)}] {f.id} ({size}) ...", end=" ", file=sys.stderr,
                  flush=True)
        t0 = time.perf_counter()
        try:
            done = _registry.render(f, ctx, out_dir)
        except KeyboardInterrupt:
            interrupted = True
            break
        except Exception:  # noqa: BLE001 - one failing figure must not stop the others
            tb = traceback.format_exc()
            failed.append(f.id)
            entries.append({"id": f.id, "status": "ERROR", "seconds": time.perf_counter() - t0,
                            "error": tb})
            if not args.quiet:
                print("ERROR", file=sys.stderr, flush=True)
            print(tb.rstrip(), file=sys.stderr, flush=True)
            continue
        entries.append({"status": "ok", **done})
        if not args.quiet:
            print(f"ok ({done['seconds']:.1f} s)", file=sys.stderr, flush=True)
    total = time.perf_counter() - start
    _write_index(out_dir, entries, argv, size, total, module_errors, interrupted)
    if args.gallery:
        _write_gallery(args, pool, entries)
    for e in entries:
        where = e["files"][0] if e["status"] == "ok" else "-"
        print(f"{e['status']:<6} {e['id']:<40} {e['seconds']:6.1f} s  {where}")
    print(f"{len(entries) - len(failed)} of {len(chosen)} figures written to {out_dir} in "
          f"{total:.1f} s" + (f"; ERROR in {', '.join(failed)}" if failed else ""))
    if interrupted:
        print("interrupted", file=sys.stderr)
        return 130
    return 1 if (failed or module_errors) else 0


def _write_gallery(args: argparse.Namespace, pool: Mapping[str, Figure], entries: list) -> None:
    from figures import gallery

    docs = gallery.DOCS if args.docs is None else Path(args.docs)
    written = gallery.copy_images({e["id"]: e["files"][0] for e in entries
                                   if e["status"] == "ok"}, docs)
    page = gallery.write_page(pool, docs)
    print(f"gallery: {len(written)} image(s) in {docs / gallery.IMAGES}; {page} lists "
          f"{len(pool)} figures")


def _write_index(out_dir: Path, entries: list, argv: list[str], size: str, total: float,
                 module_errors: Mapping[str, str], interrupted: bool) -> None:
    from decentral.results import atomic_write_bytes, provenance, to_jsonable

    out_dir.mkdir(parents=True, exist_ok=True)
    doc = {"format": "decentral.figures/1", "argv": argv, "size": size, "total_s": total,
           "interrupted": interrupted, "module_import_errors": dict(module_errors),
           "figures": entries, "provenance": provenance()}
    text = json.dumps(to_jsonable(doc, where="figures index"), indent=2)
    atomic_write_bytes(out_dir / "index.json", lambda f: f.write(text.encode()))


if __name__ == "__main__":
    sys.exit(main())
