"""The measuring kit shared by every benchmark: machine facts, interleaved rounds, results.

The machines this runs on are shared and noisy, so no benchmark trusts one absolute time. A figure
and its comparator are measured in the same run, in alternating rounds (the order flips every
round so neither side always runs on a warmer cache), and the reported ratio is the median of the
per-round ratios. Medians of each side are reported beside it for context.
"""

from __future__ import annotations

import json
import math
import os
import platform
import sqlite3
import statistics
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    info: dict[str, Any] = {
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "sqlite": sqlite3.sqlite_version,
        "platform": platform.platform(),
        "machine": platform.machine(),
    }
    try:
        info["load_average"] = [round(x, 2) for x in os.getloadavg()]
    except OSError:  # not on every platform
        pass
    for module in ("pydantic", "pyiceberg", "pyspark", "pyarrow"):
        try:
            info[module] = __import__(module).__version__
        except Exception:  # optional: not installed, or no version attribute
            info[module] = None
    try:
        with open("/proc/meminfo") as f:
            total_kb = int(f.readline().split()[1])
        info["memory_gb"] = round(total_kb / 1024 / 1024, 1)
    except (OSError, ValueError, IndexError):
        pass
    return info


@dataclass
class Paired:
    """Per-round measurements of a figure and its comparator (same units, e.g. seconds or ops/s)."""

    figure: list[float] = field(default_factory=list)
    comparator: list[float] = field(default_factory=list)

    @property
    def ratios(self) -> list[float]:
        return [f / c for f, c in zip(self.figure, self.comparator) if c]

    def summary(self) -> dict[str, float]:
        return {"figure": statistics.median(self.figure), "comparator": statistics.median(self.comparator),
                "ratio": statistics.median(self.ratios), "rounds": len(self.figure)}


def interleave(rounds: int, figure: Callable[[], float], comparator: Callable[[], float]) -> Paired:
    """Run ``figure`` and ``comparator`` alternately, flipping which goes first every round."""
    paired = Paired()
    for r in range(rounds):
        if r % 2 == 0:
            paired.figure.append(figure())
            paired.comparator.append(comparator())
        else:
            paired.comparator.append(comparator())
            paired.figure.append(figure())
    return paired


def rate(n: int, fn: Callable[[int], None]) -> float:
    """Calls per second of ``fn(i)`` for ``i`` in ``range(n)``."""
    start = time.perf_counter()
    for i in range(n):
        fn(i)
    return n / (time.perf_counter() - start)


def latencies(n: int, fn: Callable[[int], Any]) -> list[float]:
    """Seconds taken by each of ``n`` calls of ``fn(i)``."""
    out = []
    clock = time.perf_counter
    for i in range(n):
        t = clock()
        fn(i)
        out.append(clock() - t)
    return out


def percentile(values: list[float], p: float) -> float:
    """The p-th percentile (0-100), nearest rank."""
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, math.ceil(p / 100 * len(ordered)) - 1))
    return ordered[k]


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


@dataclass
class Result:
    """One row of the results table."""

    name: str
    """Stable key, e.g. ``alter_view_commits``."""
    what: str
    """What is measured, as the issue words it."""
    figure: float
    unit: str
    comparator: str = "—"
    """The comparator's name and its figure in this run, as text ("—" when there is none)."""
    comparator_figure: float | None = None
    ratio: float | None = None
    ratio_text: str = "—"
    """How the ratio reads, e.g. ``0.41 × raw``."""
    target: str = "—"
    met: bool | None = None
    """None when there is no target (reported only)."""
    details: dict[str, Any] = field(default_factory=dict)


def fmt(value: float, unit: str = "") -> str:
    """A human figure with 3 significant digits (thousands separated)."""
    if value == 0:
        text = "0"
    elif abs(value) >= 1000:
        text = f"{value:,.0f}"
    elif abs(value) >= 1:
        text = f"{value:.3g}" if abs(value) < 100 else f"{value:.0f}"
    else:
        text = f"{value:.3g}"
    return f"{text} {unit}".strip()


def markdown_table(results: list[Result]) -> str:
    lines = ["| what | figure | comparator, same run | ratio | target | met |",
             "|---|---|---|---|---|---|"]
    for r in results:
        met = "—" if r.met is None else ("yes" if r.met else "**no**")
        lines.append(f"| {r.what} | {fmt(r.figure, r.unit)} | {r.comparator} | {r.ratio_text} | {r.target} | {met} |")
    return "\n".join(lines)


def write_json(path: Path, payload: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=2, default=str) + "\n")


def results_payload(results: list[Result], *, mode: str, started: float, extra: dict[str, Any]) -> dict[str, Any]:
    return {"mode": mode, "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
            "duration_s": round(time.time() - started, 1), "machine": machine(),
            "argv": sys.argv[1:], "results": [asdict(r) for r in results], **extra}  # extra may give the argv
