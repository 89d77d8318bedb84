"""Load: 4 processes x 500 mixed operations over 20 views, then a held write lock.

Zero lost updates (every successful write's event is in the log at the version the call returned,
carrying that call's token, and every property a call set is in the final state), exactly one event
per successful write, no gaps, ``rebuild()`` equal to the live projections, and no raw sqlite3
"database is locked" ever reaching a caller.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from figures import record

import viewstore.log
from viewstore import ConcurrencyError, ViewChange, ViewStore

from load_worker import COLUMNS, VIEWS

WORKERS = 4
OPERATIONS = int(os.environ.get("VIEWSTORE_LOAD_OPERATIONS", "500"))


@pytest.mark.slow
def test_four_processes_lose_no_update(tmp_path):
    db = tmp_path / "load.db"
    with ViewStore(db, actor="setup") as store:
        for name in VIEWS:
            store.create_view(name, columns=COLUMNS, representations=[("spark", "SELECT 1 AS id, 'a' AS label"),
                                                                      ("trino", "SELECT 1 AS id, 'a' AS label")],
                              default_namespace="load")
    go = tmp_path / "go"
    script = Path(__file__).with_name("load_worker.py")
    procs = [subprocess.Popen([sys.executable, str(script), str(db), str(w), str(OPERATIONS), str(1000 + w), str(go),
                               str(tmp_path / f"result-{w}.json")]) for w in range(WORKERS)]
    deadline = time.monotonic() + 120
    while not all(Path(f"{go}.ready{w}").exists() for w in range(WORKERS)):  # all imported and open
        assert all(p.poll() is None for p in procs), "a worker died before starting"
        assert time.monotonic() < deadline
        time.sleep(0.01)
    started = time.perf_counter()
    go.touch()
    for p in procs:
        assert p.wait(240) == 0
    seconds = time.perf_counter() - started
    results = [json.loads((tmp_path / f"result-{w}.json").read_text()) for w in range(WORKERS)]

    errors = [e for r in results for e in r["errors"]]
    raw = [e for e in errors if "sqlite3" in e.split(":")[0]]
    assert not raw, f"{len(raw)} raw sqlite3 errors reached callers, the first: {raw[0]}"
    other = [e for e in errors if not e.startswith("ConcurrencyError")]
    assert not other, f"{len(other)} unexpected errors, the first: {other[0]}"

    writes = [w for r in results for w in r["writes"]]
    reader = sqlite3.connect(db)
    rows = reader.execute("SELECT view_id, stream_version, payload FROM events").fetchall()
    reader.close()
    with ViewStore(db, actor="checker") as store:
        assert len(rows) == len(VIEWS) + len(writes), "events != creates + successful calls"
        payload_at = {(v, sv): p for v, sv, p in rows}
        assert len({(w[2], w[3]) for w in writes}) == len(writes), "two successful calls returned the same version"
        for kind, token, view_id, version in writes:
            assert token in payload_at[(view_id, version)], f"{kind} {token} lost: not at {view_id}@{version}"
        by_view = Counter(v for v, _, _ in rows)
        for name in VIEWS:
            view = store.load_view(name)
            assert view.stream_version == by_view[view.uuid]
            assert [e.stream_version for e in store.history(name)] == list(range(1, view.stream_version + 1))
        finals = {name: store.load_view(name).properties for name in VIEWS}
        for name, key in (k for r in results for k in r["keys"]):
            assert key in finals[name], f"lost update: {key} on {name}"
        live = store.projection_dump()
        store.rebuild()
        assert store.projection_dump() == live
    kinds = Counter(w[0] for w in writes)
    record("load", processes=WORKERS, operations=WORKERS * OPERATIONS, successful_writes=len(writes),
           reads=sum(r["reads"] for r in results), optimistic_conflicts=sum(r["conflicts"] for r in results),
           busy_errors=sum(r["busy"] for r in results), events=len(rows), lost_updates=0,
           writes_by_kind=dict(kinds), seconds=round(seconds, 1))
    assert sum(r["operations"] for r in results) == WORKERS * OPERATIONS
    assert len(writes) > WORKERS * OPERATIONS // 2


def test_a_held_write_lock_becomes_concurrency_error(tmp_path, monkeypatch):
    """A lock held past the bound gives ConcurrencyError, never sqlite3's "database is locked"."""
    monkeypatch.setattr(viewstore.log, "BUSY_TIMEOUT_MS", 50)
    db = tmp_path / "locked.db"
    store = ViewStore(db, actor="a")
    store.create_view("load.v", columns=COLUMNS, representations=[("spark", "SELECT 1 AS id, 'a' AS label")],
                      default_namespace="load")
    before = store.event_count()
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        started = time.perf_counter()
        with pytest.raises(ConcurrencyError, match="locked|busy"):
            store.alter_view("load.v", ViewChange.update_comment("blocked"))
        assert time.perf_counter() - started < 10  # bounded
        assert store.load_view("load.v").comment is None  # readers are not blocked (WAL)
        other = ViewStore(db, actor="b")  # a store already set up opens without the write lock
        assert other.load_view("load.v").comment is None
        with pytest.raises(ConcurrencyError) as info:
            other.alter_view("load.v", ViewChange.update_comment("blocked too"))
        assert info.value.busy
        other.close()
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert store.event_count() == before
    assert store.alter_view("load.v", ViewChange.update_comment("after")).comment == "after"
    store.close()
