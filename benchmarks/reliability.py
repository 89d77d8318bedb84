"""Runs the reliability tests (tests/reliability) and collects the figures they record."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def run_reliability(extra_env: dict[str, str] | None = None) -> dict[str, Any]:
    """``pytest tests/reliability`` in a child process; its figures, exit code and duration."""
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "reliability.json"
        env = {**os.environ, "VIEWSTORE_RELIABILITY_REPORT": str(report), **(extra_env or {})}
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "pytest", "tests/reliability", "-q", "-p", "no:cacheprovider"],
                              cwd=ROOT, env=env, capture_output=True, text=True)
        figures = json.loads(report.read_text()) if report.exists() else {}
    return {"passed": done.returncode == 0, "exit_code": done.returncode,
            "summary": _summary(done.stdout),
            "seconds": round(time.perf_counter() - start, 1), **figures}


def _summary(output: str) -> str:
    """pytest's last line, after the tests that failed (``FAILED tests/...: why``), if any."""
    lines = output.strip().splitlines() or [""]
    return "; ".join([line for line in lines if line.startswith("FAILED ")] + [lines[-1]])


def reliability_markdown(r: dict[str, Any]) -> str:
    crash, load, busy, fuzz = r.get("crash", {}), r.get("load", {}), r.get("load_busy", {}), r.get("fuzz", {})
    lines = ["| reliability check (tests/reliability) | figure | result |", "|---|---|---|"]
    verdict = "passed" if r.get("passed") else f"**failed** ({r.get('summary')})"
    if crash:
        lines.append(f"| crash: child committing continuously, killed with SIGKILL at random moments "
                     f"({crash.get('kills_before_ready', 0)} of them while it was still opening the store) | "
                     f"{crash['kills']} kills survived; {crash['commits_reported']:,} reported commits all present; "
                     f"{crash['events']:,} events checked after every kill | {verdict} |")
    if load:
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(load.get("writes_by_kind", {}).items()))
        lines.append(f"| load: {load['processes']} processes, mixed operations over 20 shared views "
                     "and views of each one's own | "
                     f"{load['operations']:,} operations ({load['successful_writes']:,} successful writes: {kinds}; "
                     f"{load['reads']:,} reads; {load['optimistic_conflicts']} refused stale expected_version; "
                     f"{load.get('removals_refused', 0)} removals of a dialect a replace or rollback took first); "
                     f"{load['events']:,} events = creates + successful writes; lost updates {load['lost_updates']}; "
                     f"raw sqlite3 errors 0; busy errors {load['busy_errors']} | {verdict} |")
    if busy:
        lines.append(f"| load with a {busy['busy_timeout_ms']} ms busy timeout: {busy['processes']} processes whose "
                     f"writers do give up on a locked database | {busy['operations']:,} operations "
                     f"({busy['successful_writes']:,} successful writes; {busy['busy_errors']} ended in "
                     f"ConcurrencyError (busy) and wrote nothing); lost updates {busy['lost_updates']}; raw sqlite3 "
                     f"errors 0 | {verdict} |")
    if fuzz:
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(fuzz.get("by_kind", {}).items()))
        lines.append(f"| fuzz: malformed input, every case a ViewStoreError and the log unchanged | "
                     f"{fuzz['cases']:,} cases ({kinds}) | {verdict} |")
    return "\n".join(lines)
