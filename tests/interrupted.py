"""Ctrl-C sent to a Python process running viewstore (tests of queries that would never end)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

#: a query with no end: SQLite would count for ever
RUNAWAY = "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT count(*) FROM c"


def interrupted(code: str) -> subprocess.CompletedProcess:
    """Run ``code`` in a Python process with Python's own Ctrl-C handler (a background job may have
    inherited SIGINT ignored); once it prints 'start' and a moment has passed, send it SIGINT."""
    prelude = "import signal\nsignal.signal(signal.SIGINT, signal.default_int_handler)\n"
    proc = subprocess.Popen([sys.executable, "-c", prelude + code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    assert proc.stdout.readline() == "start\n"
    time.sleep(1)  # the query is running by now (it starts right after the line is printed)
    proc.send_signal(signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=60)  # a query that never sees the signal runs on
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail("Ctrl-C did not end the query")
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
