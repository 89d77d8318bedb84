import sqlite3

import pytest

from viewstore.errors import ConcurrencyError, CorruptLogError, ViewStoreError
from viewstore.events import CommentUpdated
from viewstore.log import _ACTORS, EventLog, connect, holds_nothing, transaction


def event(version, comment="c"):
    return CommentUpdated(commit_id="k", view_id="view-1", stream_version=version, identifier=("a", "v"),
                          actor="me", occurred_at=1000 + version, comment=comment)


def test_connect_sets_wal_and_durability(tmp_path):
    conn = connect(tmp_path / "x.db", durability="full")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    conn.close()
    conn = connect(tmp_path / "x.db")
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    conn.close()


def test_append_assigns_positions_and_reads_back(tmp_path):
    log = EventLog(connect(tmp_path / "x.db"))
    with transaction(log.conn):
        stored = log.append([event(1), event(2)])
    assert [e.position for e, _ in stored] == [1, 2]
    assert log.stream("view-1") == [e for e, _ in stored]
    assert log.count() == 2
    assert [e.stream_version for e in log.query(actor="me", since=1002)] == [2]
    assert log.query(view_ids=[]) == []


def test_duplicate_stream_version_is_a_concurrency_error_and_rolls_back(tmp_path):
    log = EventLog(connect(tmp_path / "x.db"))
    with transaction(log.conn):
        log.append([event(1)])
    with pytest.raises(ConcurrencyError):
        with transaction(log.conn):
            log.append([event(2), event(1)])
    assert log.count() == 1  # the whole batch rolled back


def test_busy_database_becomes_concurrency_error(tmp_path, monkeypatch):
    import viewstore.log as log_module

    monkeypatch.setattr(log_module, "BUSY_TIMEOUT_MS", 50)
    first = connect(tmp_path / "x.db")
    second = sqlite3.connect(tmp_path / "x.db", isolation_level=None)
    second.execute("PRAGMA busy_timeout = 0")
    first.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(ConcurrencyError, match="locked"):
            with transaction(second):
                pass
    finally:
        first.execute("ROLLBACK")


def test_opening_a_set_up_store_does_not_wait_behind_a_writer(tmp_path, monkeypatch):
    import time

    import viewstore.log as log_module
    from viewstore import ViewChange, ViewStore

    monkeypatch.setattr(log_module, "BUSY_TIMEOUT_MS", 300)
    path = tmp_path / "x.db"
    with ViewStore(path, actor="me") as store:
        store.create_view("a.v", columns=[("x", "int")], representations=[("spark", "SELECT 1 AS x")],
                          default_namespace="a")
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process in the middle of a long write (a rebuild, say)
    try:
        start = time.monotonic()
        reader = ViewStore(path, actor="reader")
        assert reader.load_view("a.v").stream_version == 1 and time.monotonic() - start < 0.25
        start = time.monotonic()
        with pytest.raises(ConcurrencyError, match="stayed locked") as info:
            reader.alter_view("a.v", ViewChange.update_comment("x"))
        assert info.value.busy and time.monotonic() - start < 2.5  # one bounded wait, not five in a row
        reader.close()
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    conn = sqlite3.connect(path)
    conn.execute("DROP TRIGGER events_append_only_delete")  # a hand-made change to the schema
    conn.close()
    ViewStore(path, actor="me").close()  # is repaired by the next open, which runs the DDL again
    conn = sqlite3.connect(path)
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        conn.execute("DELETE FROM events")
    conn.close()


def test_newer_schema_is_refused(tmp_path):
    conn = connect(tmp_path / "x.db")
    conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    conn.close()
    with pytest.raises(CorruptLogError, match="newer viewstore"):
        connect(tmp_path / "x.db")
    with pytest.raises(ViewStoreError):
        connect(tmp_path / "y.db", durability="sometimes")


def test_a_schema_1_database_is_upgraded_in_place(tmp_path):
    from viewstore import ViewChange, ViewStore

    path = tmp_path / "old.db"
    with ViewStore(path, actor="me") as store:
        store.create_view("a.v", columns=[("x", "int")], representations=[("spark", "SELECT 1 AS x")],
                          default_namespace="a")
    # what schema 1 had and schema 2 drops: two indexes every commit wrote, and a position row
    conn = sqlite3.connect(path)
    conn.executescript("""
        CREATE INDEX events_by_time ON events (occurred_at);
        CREATE INDEX events_by_identifier ON events (identifier, type);
        CREATE TABLE projection (name TEXT PRIMARY KEY, position INTEGER NOT NULL);
        INSERT INTO projection VALUES ('views', 1);
        UPDATE meta SET value = '1' WHERE key = 'schema_version';
        DELETE FROM meta WHERE key = 'store_id';
    """)
    conn.close()
    with ViewStore(path, actor="me") as store:
        objects = {name for (name,) in store._conn.execute("SELECT name FROM sqlite_master")}
        assert {"events_by_time", "events_by_identifier", "projection"}.isdisjoint(objects)
        assert {"events_by_actor", "events_naming"} <= objects
        meta = dict(store._conn.execute("SELECT key, value FROM meta"))
        assert meta == {"schema_version": "2", "store_id": store.store_id}  # the upgrade's write made the id
        view = store.alter_view("a.v", ViewChange.update_comment("after the upgrade"))
        assert view.comment == "after the upgrade" and store.event_count() == 2
        live = store.projection_dump()
        store.rebuild()
        assert store.projection_dump() == live


def test_a_time_range_reads_every_actor(tmp_path):
    log = EventLog(connect(tmp_path / "x.db"))
    with transaction(log.conn):
        for version, actor in enumerate(["carol", "alice", "bob", "alice", "carol"], start=1):
            log.append([event(version).model_copy(update={"actor": actor})])
    assert [e.stream_version for e in log.query(since=1002, until=1004)] == [2, 3, 4]
    assert [e.actor for e in log.query(until=1003)] == ["carol", "alice", "bob"]
    assert [e.stream_version for e in log.query(actor="alice", since=1003)] == [4]
    plan = " ".join(r[3] for r in log.conn.execute(
        f"EXPLAIN QUERY PLAN SELECT payload FROM events WHERE actor IN ({_ACTORS}) "
        "AND occurred_at >= 1 AND occurred_at <= 2"))
    assert "events_by_actor (actor=? AND occurred_at>? AND occurred_at<?)" in plan and "SCAN events" not in plan


def test_corrupt_payload_is_reported(tmp_path):
    log = EventLog(connect(tmp_path / "x.db"))
    log.conn.execute("INSERT INTO events (commit_id, view_id, stream_version, type, identifier, actor, occurred_at, "
                     "payload) VALUES ('k', 'v', 1, 'view.comment_updated', 'a.v', 'me', 1, 'not json')")
    with pytest.raises(CorruptLogError):
        log.stream("v")


def test_holds_nothing_tells_a_path_a_store_would_be_started_in_from_one_that_holds_something(tmp_path):
    assert holds_nothing(tmp_path / "missing.db") == "there is no file"
    (tmp_path / "empty.db").write_bytes(b"")
    assert holds_nothing(tmp_path / "empty.db") == "the file is empty"
    blank = tmp_path / "blank.db"
    conn = sqlite3.connect(blank, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("CREATE TABLE t (x)")  # in the -wal, while another connection has it open
    assert holds_nothing(blank) is None  # the -wal beside it holds the newer schema: connect reads it
    conn.execute("DROP TABLE t")
    conn.close()
    assert holds_nothing(blank) == "the file is a SQLite database with no tables"
    before = blank.read_bytes()
    assert holds_nothing(blank) and blank.read_bytes() == before and sorted(tmp_path.iterdir()) == sorted(
        [tmp_path / "empty.db", blank])
    connect(tmp_path / "store.db").close()
    assert holds_nothing(tmp_path / "store.db") is None
    (tmp_path / "text.db").write_text("not a database " * 20)
    assert holds_nothing(tmp_path / "text.db") is None  # connect says what it is not
    assert holds_nothing(tmp_path) is None
