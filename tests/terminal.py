"""Run a CLI command in this process with its stderr on a real terminal (a pseudo-terminal)."""

from __future__ import annotations

import io
import os
import pty
import sys
import threading

import click


def run_with_terminal_stderr(command: click.Command, args: list[str]) -> tuple[int, str, str]:
    """``command``'s exit code, stdout (not a terminal) and what reached the terminal on its stderr.

    stderr is the far end of a pseudo-terminal, read while the command runs (a full one would
    block the writer), so a progress bar is drawn exactly as a user's terminal would get it.
    """
    leader, follower = pty.openpty()
    chunks: list[bytes] = []

    def drain() -> None:
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the follower side is closed: all has been read
                return
            if not chunk:
                return
            chunks.append(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    stdout = io.StringIO()
    terminal = open(follower, "w", encoding="utf-8", closefd=True)
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = stdout, terminal
    try:
        returned = command.main(args, prog_name="viewstore", standalone_mode=False)  # an exit code, or None
        terminal.flush()
    finally:
        sys.stdout, sys.stderr = saved
        terminal.close()
        reader.join(timeout=10)
        os.close(leader)
    return returned or 0, stdout.getvalue(), b"".join(chunks).decode("utf-8", "replace")
