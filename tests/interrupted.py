"""Ctrl-C (or another signal) sent to a Python process running viewstore: a query that would never
end, a write waiting for another process's write lock."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from typing import Callable

import pytest

#: a query with no end: SQLite would count for ever
RUNAWAY = "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT count(*) FROM c"


class Interrupted(subprocess.CompletedProcess):
    """How the process ended, and when (``time.monotonic()``, which every process of the machine
    shares): ``sent``, the signal was sent; ``ended``, the process had ended."""

    sent: float
    ended: float


def interrupted(code: str, *, signal_number: int = signal.SIGINT, at_signal: Callable[[], None] | None = None,
                then: Callable[[str], None] | None = None) -> Interrupted:
    """Run ``code`` in a Python process with Python's own Ctrl-C handler (a background job may have
    inherited SIGINT ignored); once it prints 'start' and a moment has passed, send it the signal.

    ``at_signal()`` is called right after the signal is sent. With ``then``, the first line the
    process prints after the signal is passed to ``then`` as soon as it comes (to let go of a lock
    the process is to take next, say), and stays in ``stdout``."""
    prelude = "import signal\nsignal.signal(signal.SIGINT, signal.default_int_handler)\n"
    proc = subprocess.Popen([sys.executable, "-c", prelude + code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    assert proc.stdout is not None and proc.stderr is not None
    if proc.stdout.readline() != "start\n":
        pytest.fail(f"the process ended before its call: {proc.communicate()[1]}")
    time.sleep(1)  # the call is running by now (it starts right after the line is printed)
    proc.send_signal(signal_number)
    sent = time.monotonic()
    if at_signal is not None:
        at_signal()
    first = ""
    if then is not None:
        first = proc.stdout.readline()  # the process prints it, or ends, within its own bounded wait
        then(first)
    try:
        out, err = proc.communicate(timeout=60)  # a query that never sees the signal runs on
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail("the signal did not end the call")
    result = Interrupted(proc.args, proc.returncode, first + out, err)
    result.sent, result.ended = sent, time.monotonic()
    return result


def interrupted_once_printed(code: str, printed: str, *, timeout: float = 60) -> subprocess.CompletedProcess:
    """Run ``code`` in a Python process with Python's own Ctrl-C handler, its standard output a
    file (a pipe left unread would fill and hold the process in a write); once the end of what it
    printed holds ``printed`` and it has printed nothing more for a moment (it is past its print,
    working on), send it SIGINT. Bounded: a process that never prints it, or that the signal does
    not end, is killed and the test fails. ``stdout`` is every byte the process printed, decoded."""
    prelude = "import signal\nsignal.signal(signal.SIGINT, signal.default_int_handler)\n"
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen([sys.executable, "-c", prelude + code], stdout=out, stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + timeout
            last = -1
            while True:
                size = os.fstat(out.fileno()).st_size
                if size == last and printed.encode() in os.pread(out.fileno(), 64, max(0, size - 64)):
                    break
                last = size
                if proc.poll() is not None:
                    pytest.fail(f"the process ended before printing {printed!r}: {proc.communicate()[1]!r}")
                if time.monotonic() > deadline:
                    pytest.fail(f"the process did not print {printed!r} within {timeout} s")
                time.sleep(0.5)
            proc.send_signal(signal.SIGINT)
            try:
                _, err = proc.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                pytest.fail("the signal did not end the process")
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        out.seek(0)
        return subprocess.CompletedProcess(proc.args, proc.returncode, out.read().decode(), err.decode())
