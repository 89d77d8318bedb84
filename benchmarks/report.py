"""Renders a run's JSON as RESULTS.md: the machine, the table, the reliability figures; the analysis
written by hand below them is kept from the file being replaced."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .harness import Result, markdown_table


# Where the hand-written part of RESULTS.md begins: the marker, else (a file written before it) the
# heading that opens the analysis. Each is looked for at the start of a line.
HAND_MARKER = b"<!-- Written by hand from here to the end; python -m benchmarks --results-md keeps it. -->"
HAND_HEADING = b"## Where targets are missed or close, and why"


def hand_part(text: bytes) -> bytes:
    """The hand-written part of a RESULTS.md's bytes, from its marker (else its heading) to the end;
    empty when it has neither."""
    for start in (HAND_MARKER, HAND_HEADING):
        found = re.search(b"^" + re.escape(start), text, re.MULTILINE)
        if found:
            return text[found.start():]
    return b""


def write_results_markdown(path: Path, payload: dict[str, Any]) -> bool:
    """Write the run as RESULTS.md to ``path``: the generated part, then the hand-written part the file
    held before (``hand_part``), byte for byte. Makes the folder if need be (as the JSON's writer does:
    a full run is long to lose to a folder not made yet). Returns whether a hand-written part was kept."""
    path.parent.mkdir(parents=True, exist_ok=True)
    kept = hand_part(path.read_bytes()) if path.exists() else b""
    generated = results_markdown(payload).encode()
    path.write_bytes(generated + b"\n" + kept if kept else generated)
    return bool(kept)


def results_markdown(payload: dict[str, Any]) -> str:
    m = payload["machine"]
    results = [Result(**r) for r in payload["results"]]
    met = [r for r in results if r.met is True]
    missed = [r for r in results if r.met is False]
    lines = [
        "# viewstore benchmark results",
        "",
        f"A {payload['mode']} run of `python -m benchmarks {' '.join(payload['argv'])}` started "
        f"{payload['started_utc']} and took {payload['duration_s'] / 60:.0f} minutes.",
        "",
        f"Machine: {m['cores']} cores, {m.get('memory_gb', '?')} GB, Python {m['python']}, SQLite {m['sqlite']}, "
        f"{m['platform']}; pydantic {m.get('pydantic')}, pyiceberg {m.get('pyiceberg')}, pyspark {m.get('pyspark')}. "
        f"Load average at the start: {m.get('load_average')} (the machine is shared: absolute times vary, "
        "which is why every figure with a comparator is a ratio measured in the same run, interleaved).",
        "",
        markdown_table(results),
        "",
        f"Targets met: {len(met)} of {len(met) + len(missed)}"
        + (f"; missed: {', '.join(r.name for r in missed)} (see below)." if missed else "."),
    ]
    notes = payload.get("notes") or {}
    log = notes.get("event_log")
    if log:
        lines += ["", f"The {log['events']:,}-event log (rebuild, audit query, storage, Spark) was built with "
                      f"{log['built_with']}: {log['calls']:,} calls by {log['actors']} actors on {log['views']:,} "
                      f"views ({log['events_per_call']} events per call), in {log['build_seconds']:.0f} s."]
    reliability = payload.get("reliability")
    if reliability:
        from .reliability import reliability_markdown

        lines += ["", "## Reliability", "", reliability_markdown(reliability)]
    return "\n".join(lines) + "\n"
