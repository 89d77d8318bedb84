"""``python -m benchmarks [--quick] [--only NAME ...] [--reliability] [--json PATH] [--results-md PATH]``

Runs the benchmarks, prints a markdown table and writes the figures as JSON (to --json, else under
benchmarks/results/); with --results-md, a RESULTS.md whose hand-written analysis is kept. See
benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from .core import CORE, FULL, QUICK, Context
from .harness import Result, machine, markdown_table, results_payload, write_json

HERE = Path(__file__).resolve().parent


def registry() -> dict[str, Callable[[Context], list[Result]]]:
    from .spark import SPARK

    return {**CORE, **SPARK}


def run(names: list[str] | None = None, *, quick: bool = False, spark: Any = None,
        workdir: Path | None = None, say: Callable[[str], None] = print) -> list[Result]:
    """Run the named benchmarks (all by default) and return their rows."""
    benchmarks = registry()
    unknown = sorted(set(names or ()) - set(benchmarks))
    if unknown:
        raise SystemExit(f"unknown benchmark(s) {unknown}; known: {sorted(benchmarks)}")
    own = workdir is None
    folder = Path(tempfile.mkdtemp(prefix="viewstore-bench-")) if own else workdir
    assert folder is not None
    ctx = Context(folder, QUICK if quick else FULL, spark=spark, say=say)
    results: list[Result] = []
    try:
        for name, bench in benchmarks.items():
            if names and name not in names:
                continue
            say(f"- {name}")
            start = time.perf_counter()
            rows = bench(ctx)
            for row in rows:
                row.details.setdefault("seconds", round(time.perf_counter() - start, 2))
            results.extend(rows)
    finally:
        ctx.close()
        if own:
            shutil.rmtree(folder, ignore_errors=True)
    run.notes = ctx.notes  # type: ignore[attr-defined]
    return results


def main(argv: list[str] | None = None) -> int:
    # the docstring's first line is the usage argparse prints itself: the paragraph after it says what this does
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n\n")[1])
    parser.add_argument("--quick", action="store_true", help="tiny sizes: checks the harness, not the speed")
    parser.add_argument("--only", nargs="+", metavar="NAME", help=f"run only these: {', '.join(registry())}")
    parser.add_argument("--reliability", action="store_true",
                        help="also run tests/reliability and report its figures (kills, operations, fuzz cases)")
    parser.add_argument("--json", type=Path, metavar="PATH",
                        help="where to write the JSON (default: benchmarks/results/<time>.json)")
    parser.add_argument("--results-md", type=Path, metavar="PATH",
                        help="also write a RESULTS.md (table, machine, reliability); the hand-written "
                             "analysis an existing PATH holds (from its marker comment, else from "
                             "'## Where targets are missed or close, and why', to the end) is kept as it is")
    args = parser.parse_args(argv)

    started = time.time()
    info = machine()
    print(f"viewstore benchmarks ({'quick' if args.quick else 'full'}): {info['cores']} cores, "
          f"Python {info['python']}, SQLite {info['sqlite']}, {info['platform']}", flush=True)
    results = run(args.only, quick=args.quick, say=lambda m: print(m, flush=True))
    reliability = None
    if args.reliability:
        from .reliability import run_reliability

        print("- reliability (tests/reliability)", flush=True)
        reliability = run_reliability()
    payload = results_payload(results, mode="quick" if args.quick else "full", started=started,
                              extra={"notes": getattr(run, "notes", {}), "reliability": reliability,
                                     "argv": sys.argv[1:] if argv is None else list(argv)})
    out = args.json or HERE / "results" / time.strftime("%Y%m%dT%H%M%SZ.json", time.gmtime(started))
    write_json(out, payload)
    table = markdown_table(results)
    print()
    print(table)
    if reliability:
        from .reliability import reliability_markdown

        print()
        print(reliability_markdown(reliability))
    print(f"\nJSON: {out}")
    if args.results_md:
        from .report import write_results_markdown

        kept = write_results_markdown(args.results_md, payload)
        print(f"Markdown: {args.results_md}" + (" (its hand-written analysis kept)" if kept else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
