"""Crash safety: a child process commits continuously and is killed with SIGKILL at random moments.

After every kill the store must open cleanly; every event must decode and every commit must be all
or nothing; each view's stream versions must run 1..n without a gap; ``rebuild()`` must reproduce
the live projections; and every commit the child reported as returned must be in the log. Some
commits are transactions (:meth:`ViewStore.transaction`) changing two views: both or neither.

The child writes two lines per call to a report file with unbuffered ``os.write`` (which a SIGKILL
cannot undo): ``intent <token> <events>`` before the call and ``done <token> <view_id> <version>``
after it returns. The token is carried in the events' payloads (a comment, a property value or the
SQL), so the parent can count what reached the log for every call, finished or not.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import pytest
from figures import record

from viewstore import ViewStore
from viewstore.log import EVENT_COLUMNS, connect, row_to_event

from crash_child import COLUMNS, VIEWS

KILLS = int(os.environ.get("VIEWSTORE_CRASH_KILLS", "60"))


def _read_report(path: Path) -> tuple[dict[str, int], list[tuple[str, str, int]], list[tuple[str, int]], bool]:
    intents: dict[str, int] = {}
    done: list[tuple[str, str, int]] = []
    dropped: list[tuple[str, int]] = []
    ready = False
    if path.exists():
        for line in path.read_text().splitlines():
            parts = line.split()
            if parts == ["ready"]:
                ready = True
            elif len(parts) == 3 and parts[0] == "intent":
                intents[parts[1]] = int(parts[2])
            elif len(parts) == 4 and parts[0] == "done":
                done.append((parts[1], parts[2], int(parts[3])))
            elif len(parts) == 3 and parts[0] == "dropped":
                dropped.append((parts[1], int(parts[2])))
            # a torn last line (killed mid-write) is ignored: it reports nothing
    return intents, done, dropped, ready


def check_store(path: Path, intents: dict[str, int], done: list[tuple[str, str, int]],
                dropped: list[tuple[str, int]]) -> int:
    """Every crash-safety property; returns the number of events in the log."""
    store = ViewStore(path, actor="checker")  # opens cleanly, or this raises
    try:
        conn = connect(path)  # a second, independent reader of the raw log
        rows = conn.execute(f"SELECT {', '.join(EVENT_COLUMNS)} FROM events ORDER BY position").fetchall()
        conn.close()
        events = [row_to_event(r) for r in rows]  # every event decodes: none is partial
        by_stream: dict[str, list[int]] = defaultdict(list)
        by_commit: dict[str, list[int]] = defaultdict(list)
        at: dict[tuple[str, int], tuple[str, str]] = {}  # (view, version) -> (type, payload)
        tokens: dict[str, int] = defaultdict(int)
        for row, event in zip(rows, events):
            by_stream[event.view_id].append(event.stream_version)
            by_commit[event.commit_id].append(event.stream_version)
            at[(event.view_id, event.stream_version)] = (event.type, row[8])
            token = _token(row[8])
            if token:
                tokens[token] += 1
        for view_id, versions in by_stream.items():
            assert versions == list(range(1, len(versions) + 1)), f"gap in stream {view_id}: {versions[:20]}"
        for commit, versions in by_commit.items():
            assert versions == list(range(versions[0], versions[0] + len(versions))), f"commit {commit} is split"
        for token, count in tokens.items():
            if token.startswith("tok-"):
                assert token in intents, f"{token} in the log but never attempted"
                assert count == intents[token], f"{token}: {count} of {intents[token]} events (a partial commit)"
        for token, view_id, version in done:
            stored = at.get((view_id, version))
            assert stored is not None, f"{token} was reported committed but {view_id}@{version} is missing"
            assert token in stored[1], f"{view_id}@{version} is not {token}'s commit"
        for view_id, version in dropped:
            assert at.get((view_id, version), ("",))[0] == "view.dropped", f"the drop of {view_id} was lost"
        live = store.projection_dump()
        store.rebuild()
        assert store.projection_dump() == live, "rebuild() differs from the live projections"
        return len(rows)
    finally:
        store.close()


def _token(payload: str) -> str | None:
    start = payload.find("tok-")
    if start < 0:
        return None
    end = start + 4
    while end < len(payload) and (payload[end].isdigit() or payload[end] == "-"):
        end += 1
    return payload[start:end]


class Zygote:
    """Drives ``crash_child.py`` run as a script: it forks the committing children."""

    def __init__(self) -> None:
        script = Path(__file__).with_name("crash_child.py")
        self.proc = subprocess.Popen([sys.executable, str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, bufsize=1)

    def ask(self, line: str) -> int:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline()
        assert answer, f"the zygote died (exit code {self.proc.poll()})"
        return int(answer)

    def start(self, *args: object) -> int:
        return self.ask("start " + " ".join(str(a) for a in args))

    def wait(self, pid: int) -> int:
        return self.ask(f"wait {pid}")

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(10)


def _alive(pid: int) -> bool:
    """Whether the child still runs (a zombie has ``Z`` as its state in /proc)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.slow
def test_sigkill_at_random_moments_loses_nothing(tmp_path):
    path = tmp_path / "crash.db"
    with ViewStore(path, actor="setup") as store:
        for name in VIEWS:
            store.create_view(name, columns=COLUMNS, representations=[("spark", "SELECT 1 AS id, 'a' AS name")],
                              default_namespace="crash")
    rng = random.Random(int(os.environ.get("VIEWSTORE_CRASH_SEED", "20261122")))
    killed = reported = during_open = after_commit = 0
    events = 0
    all_intents: dict[str, int] = {}
    all_done: list[tuple[str, str, int]] = []
    all_dropped: list[tuple[str, int]] = []
    started = time.perf_counter()
    zygote = Zygote()
    try:
        for trial in range(KILLS):
            report = tmp_path / f"report-{trial}.txt"
            durability = "full" if trial % 4 == 3 else "normal"
            pid = zygote.start(path, durability, report, trial, rng.randrange(10**9))
            if trial % 10 == 9:
                time.sleep(rng.uniform(0.0, 0.004))  # sometimes while the child is still opening the store
            else:
                deadline = time.monotonic() + 30
                while not report.exists() or not report.read_text().startswith("ready"):
                    assert _alive(pid), f"the child died by itself: {report.read_text() if report.exists() else ''}"
                    assert time.monotonic() < deadline, "the child never got ready"
                    time.sleep(0.001)
                if trial % 5 == 1:  # from its first commit on: kills among commits, however loaded the machine
                    while not _read_report(report)[1]:
                        assert _alive(pid), f"the child died by itself: {report.read_text()}"
                        assert time.monotonic() < deadline, "the child never committed"
                        time.sleep(0.001)
                time.sleep(rng.uniform(0.001, 0.06))
            assert _alive(pid), f"the child died by itself: {report.read_text() if report.exists() else ''}"
            os.kill(pid, signal.SIGKILL)
            status = zygote.wait(pid)
            assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
            killed += 1
            intents, done, dropped, ready = _read_report(report)
            during_open += not ready
            reported += len(done) + len(dropped)
            after_commit += bool(done or dropped)
            all_intents.update(intents)  # the log keeps every trial's events: check them all, every time
            all_done.extend(done)
            all_dropped.extend(dropped)
            events = check_store(path, all_intents, all_done, all_dropped)
    finally:
        zygote.close()
    # at least 50 kills, as the issue asks; fewer only in a quick run that asks for fewer
    assert killed == KILLS and (killed >= 50 or "VIEWSTORE_CRASH_KILLS" in os.environ)
    # Kills landed among commits, not only before the first one: every fifth trial killed its child
    # only after the child reported a commit (or failed as "never committed"), so at least that many
    # trials did. This restates those waits and cannot be tighter: whether another trial's kill came
    # after a commit depends on how the loaded machine schedules the child (a run of 3 kills once had
    # none among commits, which is why the waits are there).
    assert after_commit >= len(range(1, KILLS, 5)), f"only {after_commit} kills came after a commit"
    record("crash", kills=killed, kills_before_ready=during_open, commits_reported=reported, events=events,
           seconds=round(time.perf_counter() - started, 1))


def test_check_store_sees_a_missing_commit(tmp_path):
    """The checker itself: a commit reported but absent, or a partial batch, must fail it."""
    path = tmp_path / "s.db"
    with ViewStore(path, actor="a") as store:
        view = store.create_view("crash.v", columns=COLUMNS, representations=[("spark", "SELECT 1")],
                                 default_namespace="crash", comment="tok-1-1")
    check_store(path, {"tok-1-1": 1}, [("tok-1-1", view.uuid, 1)], [])
    with pytest.raises(AssertionError, match="missing"):
        check_store(path, {"tok-1-1": 1}, [("tok-1-2", view.uuid, 2)], [])
    with pytest.raises(AssertionError, match="partial"):
        check_store(path, {"tok-1-1": 3}, [], [])
    with pytest.raises(AssertionError, match="never attempted"):
        check_store(path, {}, [], [])
    assert json.loads(json.dumps(_read_report(tmp_path / "absent.txt"))) == [{}, [], [], False]
