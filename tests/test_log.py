import signal
import sqlite3
import time

import pytest

from viewstore.errors import ConcurrencyError, CorruptLogError, ValidationError, ViewStoreError
from viewstore.events import CommentUpdated
from viewstore.log import (_ACTORS, SCHEMA_VERSION, EventLog, _signal_watch, connect, holds_nothing, read_only_query,
                           snapshot, transaction)


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
    with pytest.raises(ValidationError, match=r"^durability must be 'normal' or 'full', not 'NORMAL'$"):
        connect(tmp_path / "y.db", durability="NORMAL")
    assert not (tmp_path / "y.db").exists()


def test_append_assigns_positions_and_reads_back(tmp_path):
    log = EventLog(connect(tmp_path / "x.db"))
    with transaction(log.conn):
        stored = log.append([event(1), event(2)])
    assert [e.position for e, _ in stored] == [1, 2]
    assert log.stream("view-1") == [e for e, _ in stored]
    assert log.count() == 2
    assert [e.stream_version for e in log.query(actor="me", since=1002)] == [2]
    assert log.query(view_ids=[]) == []
    assert log.query(limit=0) == log.query(actor="me", limit=0) == log.rows(since=0, limit=0) == []


def test_duplicate_stream_version_is_a_concurrency_error_and_rolls_back(tmp_path):
    log = EventLog(connect(tmp_path / "x.db"))
    with transaction(log.conn):
        log.append([event(1)])
    with pytest.raises(ConcurrencyError, match="^another writer appended to the view first: UNIQUE constraint "
                                               "failed: events.view_id, events.stream_version$"):
        with transaction(log.conn):
            log.append([event(2), event(1)])
    assert log.count() == 1  # the whole batch rolled back


@pytest.mark.parametrize("bad, raised, message", [
    (event(0), ViewStoreError, "the database refused the write: CHECK constraint failed: stream_version >= 1"),
    (event(2).model_copy(update={"actor": "me\ud800"}), ValidationError,
     "text that is not valid Unicode cannot be stored"),
], ids=["a check SQLite refuses", "a lone surrogate"])
def test_a_write_the_database_refuses_is_a_typed_error_and_rolls_back(tmp_path, bad, raised, message):
    log = EventLog(connect(tmp_path / "x.db"))
    with pytest.raises(ViewStoreError, match=message) as caught:
        with transaction(log.conn):
            log.append([event(1), bad])
    assert type(caught.value) is raised
    assert log.count() == 0 and not log.conn.in_transaction  # the whole batch rolled back


def test_a_write_that_fails_after_sqlite_ended_its_transaction_is_told_without_a_rollback_of_its_own(tmp_path):
    """SQLite rolled the transaction back itself (as after some errors): the write's error goes on typed,
    with no note of a ROLLBACK that failed (there is nothing left to roll back)."""
    log = EventLog(connect(tmp_path / "x.db"))
    with pytest.raises(ViewStoreError, match="CHECK constraint failed") as caught:
        with transaction(log.conn):
            log.append([event(1)])
            log.conn.execute("ROLLBACK")
            log.append([event(0)])
    assert getattr(caught.value.__cause__, "__notes__", []) == [] and log.count() == 0


def test_a_transaction_that_cannot_begin_for_another_reason_than_a_lock_is_not_tried_again(tmp_path):
    """BEGIN refused for something no wait can change (inside a read here): a plain ViewStoreError
    at once, not a busy ConcurrencyError after tries; the read goes on."""
    conn = connect(tmp_path / "x.db")
    begins = []
    conn.set_trace_callback(lambda sql: begins.append(sql) if sql == "BEGIN IMMEDIATE" else None)
    with snapshot(conn):
        with pytest.raises(ViewStoreError, match="cannot start a transaction: cannot start a transaction within "
                                                 "a transaction") as caught:
            with transaction(conn):
                pass
        assert conn.in_transaction and conn.execute("SELECT count(*) FROM events").fetchone() == (0,)
    assert type(caught.value) is ViewStoreError and begins == ["BEGIN IMMEDIATE"]


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


def test_a_commit_another_connection_s_lock_refuses_is_a_busy_concurrency_error_and_rolls_back(tmp_path):
    """A COMMIT that waited out the connection's busy timeout (here for a reader of an attached file in
    rollback-journal mode, which the commit must have to itself) is a busy ConcurrencyError, and the
    transaction is rolled back."""
    log = EventLog(connect(tmp_path / "x.db"))
    other = sqlite3.connect(tmp_path / "o.db", isolation_level=None)
    other.execute("CREATE TABLE t (x)")
    log.conn.execute("ATTACH DATABASE ? AS o", (str(tmp_path / "o.db"),))
    try:
        with pytest.raises(ConcurrencyError, match="^the database was busy: database is locked$") as caught:
            with transaction(log.conn):
                log.append([event(1)])
                log.conn.execute("INSERT INTO o.t VALUES (1)")
                other.execute("BEGIN")
                other.execute("SELECT * FROM t").fetchall()  # a read the commit waits for
    finally:
        if other.in_transaction:
            other.execute("ROLLBACK")
        other.close()
    assert caught.value.busy and log.count() == 0 and not log.conn.in_transaction
    assert log.conn.execute("SELECT count(*) FROM o.t").fetchone()[0] == 0


def _keeping_readers_out(path):
    """Another connection in exclusive locking mode that has written: in WAL mode it keeps every
    connection that has not read the file yet from reading it, until it closes."""
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("PRAGMA locking_mode = EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("INSERT INTO meta (key, value) VALUES ('other', '1')")
    holder.execute("COMMIT")
    return holder


def test_a_read_kept_out_by_another_connection_is_a_busy_concurrency_error(tmp_path):
    path = tmp_path / "x.db"
    connect(path).close()
    reader = sqlite3.connect(path, isolation_level=None, timeout=0.05)  # has not read the file yet
    holder = _keeping_readers_out(path)
    try:
        with pytest.raises(ConcurrencyError, match="another connection kept readers out") as caught:
            with snapshot(reader):
                reader.execute("SELECT count(*) FROM events").fetchone()
        assert caught.value.busy
        with pytest.raises(ConcurrencyError, match="another connection kept readers out") as caught:
            EventLog(reader).data_version()
        assert caught.value.busy
    finally:
        holder.close()
    with pytest.raises(ViewStoreError, match="the database refused the read: no such table") as caught:
        with snapshot(reader):  # another error of a read stays what it was
            reader.execute("SELECT * FROM no_such_table")
    assert type(caught.value) is ViewStoreError
    with snapshot(reader):
        assert reader.execute("SELECT value FROM meta WHERE key = 'other'").fetchone() == ("1",)


@pytest.mark.parametrize("reading", ["open", "query"])
def test_opening_or_querying_behind_a_connection_that_keeps_readers_out_is_a_busy_concurrency_error(
        tmp_path, monkeypatch, reading):
    import viewstore.log as log_module
    from viewstore import ViewStore

    monkeypatch.setattr(log_module, "BUSY_TIMEOUT_MS", 400)
    path = tmp_path / "x.db"
    ViewStore(path).close()
    holder = _keeping_readers_out(path)
    try:
        start = time.monotonic()
        with pytest.raises(ConcurrencyError, match="another connection kept") as caught:
            if reading == "open":
                ViewStore(path)
            else:
                read_only_query(path, "SELECT count(*) AS n FROM events")
        waited = time.monotonic() - start
    finally:
        holder.close()
    assert caught.value.busy
    if reading == "open":
        assert 1.2 <= waited < 5  # its bound, three busy timeouts, in slices
    else:
        assert 0.4 <= waited < 1.2  # one busy timeout, not an open's three
    assert read_only_query(path, "SELECT value FROM meta WHERE key = 'other'") == [{"value": "1"}]


def _tries_while_locked(holder, waiter, match):
    """When ``with transaction(waiter)`` tries BEGIN IMMEDIATE (SQLite's trace shows each try) while
    ``holder`` keeps the write lock, and when it raises ConcurrencyError (monotonic times)."""
    begins = []
    waiter.set_trace_callback(lambda sql: begins.append(time.monotonic()) if sql == "BEGIN IMMEDIATE" else None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(ConcurrencyError, match=match):
            with transaction(waiter):
                pass
        raised = time.monotonic()
    finally:
        holder.execute("ROLLBACK")
        holder.close()
        waiter.close()
    return begins, raised


def test_the_wait_for_the_write_lock_is_three_busy_timeouts_the_first_try_included(tmp_path, monkeypatch):
    """Each try waits one slice in SQLite: with slices as long as a busy timeout, three tries in all,
    the one transaction() makes before it starts waiting among them."""
    import viewstore.log as log_module

    monkeypatch.setattr(log_module, "BUSY_TIMEOUT_MS", 200)
    monkeypatch.setattr(log_module, "LOCK_SLICE_MS", 200)
    holder, waiter = connect(tmp_path / "x.db"), connect(tmp_path / "x.db")
    begins, raised = _tries_while_locked(holder, waiter, "stayed locked for 0.6 s")
    # on a machine so busy that the second try overran its slice by another, the time is up after it
    assert len(begins) == 3 or (len(begins) == 2 and raised - begins[1] >= 0.4), (len(begins), raised - begins[0])


def test_a_lock_refused_at_once_is_tried_again_after_a_pause_not_in_a_busy_loop(tmp_path, monkeypatch):
    """A connection that does not wait in SQLite (busy timeout 0) is refused at once: the next try
    comes after a pause of 10 ms, so a wait of 0.3 s is some twenty tries, not thousands."""
    import viewstore.log as log_module

    monkeypatch.setattr(log_module, "BUSY_TIMEOUT_MS", 100)
    holder = connect(tmp_path / "x.db")
    waiter = sqlite3.connect(tmp_path / "x.db", isolation_level=None)
    waiter.execute("PRAGMA busy_timeout = 0")
    assert 2 <= len(_tries_while_locked(holder, waiter, "locked")[0]) <= 25


def test_opening_a_set_up_store_does_not_wait_behind_a_writer(tmp_path, monkeypatch):
    import viewstore.log as log_module
    from viewstore import ViewChange, ViewStore

    # a wait would take a whole second, which an open and a load take on no machine, however busy
    monkeypatch.setattr(log_module, "BUSY_TIMEOUT_MS", 1000)
    path = tmp_path / "x.db"
    with ViewStore(path, actor="me") as store:
        store.create_view("a.v", columns=[("x", "int")], representations=[("spark", "SELECT 1 AS x")],
                          default_namespace="a")
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process in the middle of a long write (a rebuild, say)
    try:
        start = time.monotonic()
        with ViewStore(path, actor="reader") as reader:
            assert reader.load_view("a.v").stream_version == 1 and time.monotonic() - start < 0.9
            start = time.monotonic()
            with pytest.raises(ConcurrencyError, match="stayed locked") as info:
                reader.alter_view("a.v", ViewChange.update_comment("x"))
            assert info.value.busy and time.monotonic() - start < 7.5  # one bounded wait (3 s), not five in a row
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
    with pytest.raises(CorruptLogError) as newer:
        connect(tmp_path / "x.db")
    assert str(newer.value) == (f"{tmp_path / 'x.db'} was written by a newer viewstore (schema 99); "
                                f"this one reads schema {SCHEMA_VERSION}")
    with pytest.raises(ValidationError, match="^durability must be 'normal' or 'full', not 'sometimes'$"):
        connect(tmp_path / "y.db", durability="sometimes")
    assert not (tmp_path / "y.db").exists()


def test_a_schema_version_that_is_not_a_number_is_a_corrupt_log_error(tmp_path):
    connect(tmp_path / "x.db").close()
    conn = sqlite3.connect(tmp_path / "x.db")
    conn.execute("UPDATE meta SET value = 'two' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    with pytest.raises(CorruptLogError,
                       match="x.db has a schema version in its meta table that is not a number: 'two'"):
        connect(tmp_path / "x.db")


def test_a_schema_version_that_is_not_a_number_is_told_without_waiting_for_the_write_lock(tmp_path):
    """The damage is seen by the open's first read, which needs no lock: another connection's long
    write does not make the open wait its 30 s before saying so."""
    import time

    connect(tmp_path / "x.db").close()
    other = sqlite3.connect(tmp_path / "x.db", isolation_level=None)
    other.execute("UPDATE meta SET value = 'two' WHERE key = 'schema_version'")
    other.execute("BEGIN IMMEDIATE")  # held for the whole open
    try:
        started = time.monotonic()
        with pytest.raises(CorruptLogError, match="not a number: 'two'"):
            connect(tmp_path / "x.db")
        assert time.monotonic() - started < 5.0  # (a wait for the lock would take 30 s)
    finally:
        other.execute("ROLLBACK")
        other.close()


def test_a_newer_schema_written_while_an_open_waits_for_the_write_lock_is_refused(tmp_path):
    """An open that must write its schema (here an upgrade) reads the version again once it holds the
    write lock: a newer viewstore may have upgraded the file meanwhile, and its schema is not this one's."""
    import threading
    import time

    path = tmp_path / "x.db"
    connect(path).close()
    conn = sqlite3.connect(path)
    conn.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # the newer release, upgrading the file
    raised = []

    def opening():
        try:
            connect(path).close()
        except ViewStoreError as e:
            raised.append(e)

    opener = threading.Thread(target=opening)
    opener.start()
    time.sleep(0.5)  # it has read schema 1 and waits for the write lock
    holder.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
    holder.execute("COMMIT")
    holder.close()
    opener.join()
    assert len(raised) == 1 and type(raised[0]) is CorruptLogError, raised
    assert str(raised[0]) == (f"{path} was written by a newer viewstore (schema 3); "
                              f"this one reads schema {SCHEMA_VERSION}")


def test_an_events_table_of_other_columns_is_refused_even_beside_a_schema_version(tmp_path):
    path = tmp_path / "x.db"
    conn = sqlite3.connect(path)
    conn.executescript("""
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        INSERT INTO meta VALUES ('schema_version', '2');
        CREATE TABLE events (position INTEGER PRIMARY KEY, commit_id TEXT, view_id TEXT, stream_version INTEGER,
                             type TEXT, identifier TEXT, actor TEXT, occurred_at INTEGER, body TEXT);
    """)
    conn.close()
    with pytest.raises(ViewStoreError, match="x.db is not a viewstore database: its events table has the columns "
                                             "position, commit_id, view_id, stream_version, type, identifier, "
                                             "actor, occurred_at, body$"):
        connect(path)
    conn = sqlite3.connect(path)
    assert sorted(name for (name,) in conn.execute("SELECT name FROM sqlite_master")) == [
        "events", "meta", "sqlite_autoindex_meta_1"]
    conn.close()


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


def test_an_index_the_schema_drops_is_dropped_by_the_next_open_of_a_file_at_this_version(tmp_path):
    """A file of schema 2 that holds an index schema 2 drops (made again by hand, or by an earlier
    release) is not taken as set up: the next open runs the DDL, and every commit stops writing it."""
    from viewstore import ViewStore

    path = tmp_path / "x.db"
    ViewStore(path).close()
    conn = sqlite3.connect(path)
    conn.execute("CREATE INDEX events_by_time ON events (occurred_at)")
    conn.close()
    with ViewStore(path) as store:
        objects = {name for (name,) in store._conn.execute("SELECT name FROM sqlite_master")}
        assert "events_by_time" not in objects and "events_by_actor" in objects
        assert dict(store._conn.execute("SELECT key, value FROM meta"))["schema_version"] == "2"


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


def _plan(log, **filters):
    """The query plan of the statement that reads the rows EventLog.rows returns for these filters."""
    statements = []
    log.conn.set_trace_callback(statements.append)
    try:
        log.rows(**filters)
    finally:
        log.conn.set_trace_callback(None)
    return [r[3] for r in log.conn.execute("EXPLAIN QUERY PLAN " + statements[-1])]  # (the rows' own, last)


def test_one_position_is_a_seek_of_its_rowid_and_a_range_reads_no_row_outside_it(tmp_path):
    """The event at one position (show --at-event) is read by its rowid alone, whatever the other
    filters, not found among every event of the view; a range bounds the naming index's read too."""
    log = EventLog(connect(tmp_path / "x.db"))
    with transaction(log.conn):
        for version in range(1, 6):
            log.append([event(version)])
    seek = "SEARCH events USING INTEGER PRIMARY KEY (rowid=?)"
    for filters in ({"view_ids": ["view-1"]}, {"view_ids": ["view-1", "w"], "types": ["view.comment_updated"]},
                    {"actor": "me"}, {"since": 1}, {"types": ["view.created"]}, {}):
        assert _plan(log, since_position=3, until_position=3, **filters)[0] == seek, filters
    assert [e.stream_version for e in log.query(view_ids=["view-1"], since_position=3, until_position=3)] == [3]
    assert _plan(log, since_position=2,
                 until_position=4) == ["SEARCH events USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)"]
    # the naming index's positions are bounded inside its subquery: its list holds none outside the range
    statements = []
    log.conn.set_trace_callback(statements.append)
    try:
        log.rows(types=["view.created"], since_position=2, until_position=4)
    finally:
        log.conn.set_trace_callback(None)
    assert ("FROM events INDEXED BY events_naming WHERE type IN ('view.created', 'view.imported', 'view.renamed') "
            "AND position >= 2 AND position <= 4)") in statements[-1]


def test_an_actor_that_is_not_text_is_a_corrupt_log_error_naming_its_event(tmp_path):
    """actors() is typed list[str]: a row written behind the library's back whose actor is a blob
    (sorted after every text; the column's affinity makes a number text) is refused, not returned."""
    log = EventLog(connect(tmp_path / "x.db"))
    with transaction(log.conn):
        log.append([event(1), event(2)])
    assert log.actors() == ["me"]
    log.conn.execute("INSERT INTO events (commit_id, view_id, stream_version, type, identifier, actor, occurred_at, "
                     "payload) VALUES ('k', 'w', 1, 'view.comment_updated', 'a.w', ?, 1, '{}'), "
                     "('k', 'w', 2, 'view.comment_updated', 'a.w', 'zoe', 2, '{}')", (b"bob",))
    with pytest.raises(CorruptLogError, match="^event at position 3 has an actor that is not text$"):
        log.actors()
    log.conn.execute("DROP TRIGGER events_append_only_update")
    log.conn.execute("UPDATE events SET actor = 7 WHERE position = 3")  # stored as text
    assert log.actors() == ["7", "me", "zoe"]


def test_what_a_name_s_holder_let_go_by_is_read_by_index_seeks(tmp_path):
    from viewstore import ViewChange, ViewStore

    with ViewStore(tmp_path / "x.db", actor="a") as store:
        store.create_view("a.b", columns=[("x", "int")], representations=[("spark", "SELECT 1 AS x")],
                          default_namespace="a")
        for i in range(50):  # a busy stream: its events are sought by its key, not scanned
            store.alter_view("a.b", ViewChange.update_comment(f"c{i}"))
        store.rename_view("a.b", "a.c")
    log = EventLog(connect(tmp_path / "x.db"))
    statements = []
    log.conn.set_trace_callback(statements.append)
    try:
        fate = log.let_go("a.b")
    finally:
        log.conn.set_trace_callback(None)
    assert fate == ((52, "view.renamed", "a.c", "a", fate[0][4]), ("view.renamed", "a.c"))
    # the streams, then a bisection over the 51 versions after the taking (6 seeks), then the event found
    assert len(statements) == 8
    plan = [r[3] for r in log.conn.execute("EXPLAIN QUERY PLAN " + statements[0])]
    assert "SEARCH events USING INDEX events_naming (identifier=?)" in plan
    assert not [step for step in plan if step.startswith("SCAN events") or "TEMP B-TREE" in step], plan
    # every read of the events table (aliases too) goes through an index: a bare "SEARCH e" walks the rows
    ctes = {"named", "dropped", "took", "last"}
    assert not [step for step in plan if step.startswith("SEARCH ") and "USING" not in step
                and step.split()[1] not in ctes], plan
    for statement in statements[1:]:  # each a seek of one event by the stream key
        plan = [r[3] for r in log.conn.execute("EXPLAIN QUERY PLAN " + statement)]
        assert plan == ["SEARCH events USING INDEX sqlite_autoindex_events_1 (view_id=? AND stream_version=?)"], plan


def _busy_then_renamed(path, alters):
    """A log of one view created as a.b, altered ``alters`` times, then renamed to a.c."""
    log = EventLog(connect(path))
    log.conn.execute(
        "WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < ?) INSERT INTO events "
        "(commit_id, view_id, stream_version, type, identifier, actor, occurred_at, payload) SELECT 'k' || i, 'v', i, "
        "CASE i WHEN 1 THEN 'view.created' WHEN ?1 THEN 'view.renamed' ELSE 'view.comment_updated' END, "
        "CASE i WHEN ?1 THEN 'a.c' ELSE 'a.b' END, 'me', i, '{}' FROM k", (alters + 2,))
    return log


def test_what_a_name_s_holder_let_go_by_costs_the_same_however_long_it_held_it(tmp_path):
    """The event that let go of a name is found by bisection over the stream's versions, not by
    reading each event the view had under the name: the work of the error of a name renamed away
    after 10,000 events is about that after 100 (counted in SQLite's steps, not timed)."""
    work = []
    for alters in (100, 10_000):
        log = _busy_then_renamed(tmp_path / f"{alters}.db", alters)
        steps = [0]

        def step():
            steps[0] += 1
            return 0

        log.conn.set_progress_handler(step, 1)
        try:
            fate = log.let_go("a.b")
        finally:
            log.conn.set_progress_handler(None, 1)
        assert fate == ((alters + 2, "view.renamed", "a.c", "me", alters + 2), ("view.renamed", "a.c"))
        work.append(steps[0])
    assert work[1] < 2 * work[0], work


def test_a_name_s_holder_and_where_its_history_begins_are_each_one_statement_of_index_seeks(tmp_path):
    """What a name the projections hold free is checked against (holder) and where the as_of error
    says its history begins (history_begins_ms) read the naming events through events_naming and the
    streams by their key: no scan of the log, whose length they would cost on every such check."""
    from viewstore import ViewChange, ViewStore

    with ViewStore(tmp_path / "x.db", actor="a") as store:
        view = store.create_view("a.b", columns=[("x", "int")], representations=[("spark", "SELECT 1 AS x")],
                                 default_namespace="a")
        for i in range(50):  # a busy stream: its events are sought by its key, not scanned
            store.alter_view("a.b", ViewChange.update_comment(f"c{i}"))
    log = EventLog(connect(tmp_path / "x.db"))
    statements: list[str] = []
    log.conn.set_trace_callback(statements.append)
    try:
        held, begins = log.holder("a.b"), log.history_begins_ms("a.b", view.uuid)
    finally:
        log.conn.set_trace_callback(None)
    assert held == (view.uuid, 1) and begins == log.conn.execute("SELECT occurred_at FROM events "
                                                                 "WHERE position = 1").fetchone()[0]
    assert len(statements) == 2
    for statement in statements:
        plan = [r[3] for r in log.conn.execute("EXPLAIN QUERY PLAN " + statement)]
        assert "SEARCH events USING INDEX events_naming (identifier=?)" in plan, plan
        assert not [step for step in plan if step.startswith("SCAN events") or step.startswith("SCAN l")], plan


@pytest.mark.parametrize("time", ["'soon'", "2.5", "X'01'"])
def test_a_time_a_name_was_let_go_at_that_is_no_integer_is_a_corrupt_log_error(tmp_path, time):
    """An import dates its events after the name's last holder let go of it: a time of text or bytes
    (SQLite orders them after every number, so it is the one found) or a real is no time to date by."""
    log = EventLog(connect(tmp_path / "x.db"))
    log.conn.execute("INSERT INTO events (commit_id, view_id, stream_version, type, identifier, actor, occurred_at, "
                     "payload) VALUES ('k', 'v', 1, 'view.created', 'a.v', 'me', 1, '{}'), "
                     "('k', 'v', 2, 'view.dropped', 'a.v', 'me', 2, '{}')")
    assert log.last_time_named("a.v") == 2 and log.last_time_named("a.w") is None
    log.conn.execute("INSERT INTO events (commit_id, view_id, stream_version, type, identifier, actor, occurred_at, "
                     f"payload) VALUES ('k2', 'w', 1, 'view.created', 'a.v', 'me', {time}, '{{}}')")
    with pytest.raises(CorruptLogError, match="^event at position 3 has a time that is not an integer$"):
        log.last_time_named("a.v")


def test_each_audit_filter_reads_through_an_index_and_sorts_no_whole_rows(tmp_path):
    log = EventLog(connect(tmp_path / "x.db"))
    with transaction(log.conn):
        for version, actor in enumerate(["carol", "alice", "bob", "alice", "carol"], start=1):
            log.append([event(version).model_copy(update={"actor": actor})])
    # types that name a stream alone: events_naming holds those events and no other, the log is not scanned
    plan = _plan(log, types=["view.renamed", "view.created"])
    assert "SCAN events USING INDEX events_naming" in plan and "SCAN events" not in plan
    # an actor's latest: the positions from events_by_actor alone, then only those rows
    plan = _plan(log, actor="alice", limit=20, newest_first=True)
    assert plan[0] == "SEARCH events USING INTEGER PRIMARY KEY (rowid=?)"
    assert "SEARCH events USING COVERING INDEX events_by_actor (actor=?)" in plan
    # a time range over every actor: positions sorted in the index's answer, the rows read in that order
    plan = _plan(log, since=1002, until=1004)
    assert "SEARCH events USING COVERING INDEX events_by_actor (actor=? AND occurred_at>? AND occurred_at<?)" in plan
    assert "USE TEMP B-TREE FOR ORDER BY" not in plan
    # with a type filter and no limit, the rows are read in index order and the few kept sorted
    plan = _plan(log, since=1002, types=["view.replaced"])
    assert plan[0] == "SEARCH events USING INDEX events_by_actor (actor=? AND occurred_at>?)"
    # where such events are more than a tenth of the log, each would be a seek of its row: a scan costs less
    with transaction(log.conn):
        for n in range(6):
            log.conn.execute("INSERT INTO events (commit_id, view_id, stream_version, type, identifier, actor, "
                             "occurred_at, payload) VALUES ('k', ?, 1, 'view.created', 'a.w', 'me', 1, '{}')",
                             (f"w{n}",))
    assert _plan(log, types=["view.renamed", "view.created"]) == ["SCAN events"]
    assert len(log.rows(types=["view.created"])) == 6


def test_events_that_name_a_stream_are_read_through_their_index_while_at_most_one_in_ten_of_the_log(tmp_path):
    """One in NAMED_SHARE of the log's positions, and no more: the plan follows that share alone (the
    rows are the same either way)."""
    log = EventLog(connect(tmp_path / "x.db"))

    def named(view_id):
        log.conn.execute("INSERT INTO events (commit_id, view_id, stream_version, type, identifier, actor, "
                         "occurred_at, payload) VALUES ('k', ?, 1, 'view.created', 'a.w', 'me', 1, '{}')", (view_id,))

    with transaction(log.conn):
        log.append([event(version) for version in range(1, 10)])
        named("w1")
    assert "SCAN events USING INDEX events_naming" in _plan(log, types=["view.created"])  # 1 of 10 events
    with transaction(log.conn):
        log.append([event(version) for version in range(10, 20)])
        named("w2")
        named("w3")
    assert "SCAN events USING INDEX events_naming" not in _plan(log, types=["view.created"])  # 3 of 22 events
    assert [r[2] for r in log.rows(types=["view.created"])] == ["w1", "w2", "w3"]


def test_decoding_events_pauses_the_garbage_collector_and_puts_it_back(tmp_path):
    """Thousands of events decoded at once set off no collection (each one walked every event made
    so far); the collector is on again afterwards, or still off when it was off, also after a failure."""
    import gc

    log = EventLog(connect(tmp_path / "x.db"))
    with transaction(log.conn):
        log.append([event(version) for version in range(1, 3001)])
    started = []

    def note(phase, info):
        if phase == "start":
            started.append(info["generation"])

    gc.callbacks.append(note)
    try:
        for call in (log.query, lambda: log.stream("view-1")):
            gc.collect()
            started.clear()
            events = call()
            assert not started  # (asked before anything is allocated: the first allocation may collect)
            assert len(events) == 3000 and gc.isenabled()
        gc.disable()
        assert len(log.query(limit=5)) == 5 and not gc.isenabled()
        gc.enable()
        log.conn.execute("INSERT INTO events (commit_id, view_id, stream_version, type, identifier, actor, "
                         "occurred_at, payload) VALUES ('k', 'view-1', 3001, 'view.comment_updated', 'a.v', 'me', 1, "
                         "'not json')")
        with pytest.raises(CorruptLogError, match="position 3001"):
            log.query()
        assert gc.isenabled()
    finally:
        gc.callbacks.remove(note)
        gc.enable()


def test_decoded_events_are_left_in_the_oldest_generation_unless_few_or_the_program_froze_objects(tmp_path):
    """Left young, every event of a big read would be walked by the first collection after it (a
    fifth of events()): the read moves them to the oldest generation instead (gc.freeze, then
    gc.unfreeze). A small read leaves them young, and so does any read when the program froze
    objects of its own, which must stay frozen."""
    import gc

    from viewstore.log import MANY_YOUNG

    log = EventLog(connect(tmp_path / "x.db"))
    many = MANY_YOUNG // 3  # events: three objects the collector tracks each, at least
    with transaction(log.conn):
        log.append([event(version) for version in range(1, many + 1)])

    def generations(*objects):
        """young, old (the oldest generation) or frozen (in none), for each object"""
        gc.disable()  # looking allocates: no collection may move them meanwhile
        young = {id(o) for g in (0, 1) for o in gc.get_objects(generation=g)}
        old = {id(o) for o in gc.get_objects(generation=2)}
        gc.enable()
        return {"young" if id(o) in young else "old" if id(o) in old else "frozen" for o in objects}

    for call in (log.query, lambda: log.stream("view-1")):
        gc.collect()
        events = call()
        assert len(events) == many and generations(*events) == {"old"} and gc.isenabled()
    gc.collect()
    assert generations(*log.query(limit=100)) == {"young"}
    mine = [[]]  # an object of the program's, which it freezes
    gc.collect()
    gc.freeze()
    try:
        events = log.query()
        assert generations(*events) == {"young"} and generations(mine) == {"frozen"} and gc.isenabled()
    finally:
        gc.unfreeze()
    assert generations(mine) == {"old"}


def test_the_signal_watch_ends_the_query_at_the_check_where_a_handler_raised():
    """SQLite's progress handler of a query: 0 goes on; what a signal's handler raises inside it is
    kept and answered with 1, which ends the query there. Were it answered with 0, a query that
    ends before the next check (20,000 steps on) would return its rows and lose the Ctrl-C."""
    raised = []
    watch = _signal_watch(raised)
    assert [next(watch), next(watch)] == [0, 0]
    interrupt = KeyboardInterrupt()
    assert watch.throw(interrupt) == 1 and raised == [interrupt]
    watch.close()  # the query over: the watch closes quietly, after a signal or without one
    quiet = _signal_watch(raised)
    next(quiet)
    quiet.close()
    assert raised == [interrupt]


def test_a_query_that_returns_no_rows_is_refused_with_its_text_shown_without_the_blanks_around_it(tmp_path):
    connect(tmp_path / "x.db").close()
    with pytest.raises(ValidationError, match="^a query must be a statement that returns rows, such as a SELECT; "
                                              "this one returns none: 'BEGIN'$"):
        read_only_query(tmp_path / "x.db", "\n  BEGIN ")


def test_a_snapshot_ended_inside_ends_quietly_and_keeps_the_reads_own_error(tmp_path):
    """SQLite may end the read's transaction itself (after some errors), and a signal's handler or a
    callback may close the connection inside: the snapshot ends without an error of its own, and a
    read that failed meanwhile raises its own (as a ViewStoreError), not one of ending the snapshot."""
    conn = connect(tmp_path / "x.db")
    with snapshot(conn):
        assert conn.execute("SELECT count(*) FROM events").fetchone() == (0,)
        conn.execute("ROLLBACK")  # what SQLite does on its own after some errors
    with pytest.raises(ViewStoreError, match="no such table: missing"):
        with snapshot(conn):
            conn.execute("ROLLBACK")
            conn.execute("SELECT * FROM missing")
    assert not conn.in_transaction
    with snapshot(conn):
        assert conn.execute("SELECT count(*) FROM events").fetchone() == (0,)
        conn.close()  # closed inside
    with pytest.raises(sqlite3.ProgrammingError):
        conn.execute("SELECT 1")


def test_corrupt_payload_is_reported(tmp_path):
    log = EventLog(connect(tmp_path / "x.db"))
    log.conn.execute("INSERT INTO events (commit_id, view_id, stream_version, type, identifier, actor, occurred_at, "
                     "payload) VALUES ('k', 'v', 1, 'view.comment_updated', 'a.v', 'me', 1, 'not json')")
    with pytest.raises(CorruptLogError, match="^event at position 1 has a payload that is not JSON$"):
        log.stream("v")


@pytest.mark.parametrize("identifier, payload", [("'a.v'", "'[1]'"), ("'a.v'", "'\"text\"'"), ("X'612e76'", "'{}'")],
                         ids=["a list", "a string", "an identifier of bytes"])
def test_a_payload_that_is_no_object_or_an_identifier_that_is_no_text_is_a_corrupt_log_error(tmp_path, identifier,
                                                                                              payload):
    log = EventLog(connect(tmp_path / "x.db"))
    log.conn.execute("INSERT INTO events (commit_id, view_id, stream_version, type, identifier, actor, occurred_at, "
                     f"payload) VALUES ('k', 'v', 1, 'view.dropped', {identifier}, 'me', 1, {payload})")
    for read in (lambda: log.stream("v"), log.query):
        with pytest.raises(CorruptLogError, match="event at position 1 has a payload that is not a JSON object, "
                                                  "or an identifier that is not text"):
            read()


def test_stream_rows_reads_one_stream_after_a_version_and_up_to_a_limit(tmp_path):
    log = EventLog(connect(tmp_path / "x.db"))
    with transaction(log.conn):
        log.append([event(1), event(2).model_copy(update={"view_id": "view-2"}), event(2), event(3), event(4)])

    def versions(**bounds):
        return [(r[2], r[3]) for r in log.stream_rows("view-1", **bounds)]

    assert versions() == [("view-1", 1), ("view-1", 2), ("view-1", 3), ("view-1", 4)]
    assert versions(after_version=2) == [("view-1", 3), ("view-1", 4)]
    assert versions(limit=3) == [("view-1", 1), ("view-1", 2), ("view-1", 3)]
    assert versions(after_version=1, limit=1) == [("view-1", 2)]
    assert versions(after_version=4) == [] and versions(limit=0) == []
    assert [r[3] for r in log.stream_cursor("view-1", after_version=3)] == [4]


@pytest.mark.parametrize("batch, sizes", [(2, [2, 2, 1]), (5, [5]), (10_000, [5])])
def test_iter_rows_reads_every_row_in_log_order_in_batches(tmp_path, batch, sizes):
    log = EventLog(connect(tmp_path / "x.db"))
    with transaction(log.conn):
        log.append([event(version) for version in range(1, 6)])
    batches = list(log.iter_rows(batch))
    assert [len(b) for b in batches] == sizes
    assert [r for b in batches for r in b] == log.rows()
    assert {r[1] for b in log.iter_rows(batch, without_commit_id=True) for r in b} == {None}


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
    for mark in ("user_version", "application_id"):  # no table, but another program's mark in the header
        raw = sqlite3.connect(tmp_path / f"{mark}.db")
        raw.execute(f"PRAGMA {mark} = 7")
        raw.close()
        assert holds_nothing(tmp_path / f"{mark}.db") is None  # connect refuses it
    (tmp_path / "blank.db-journal").write_bytes(bytes(512))  # a rollback journal beside it may hold a newer schema
    assert holds_nothing(blank) is None


# -- a signal while a call waits for another process's lock on the file -------------------------

_WAITING = """
import sys, time
from viewstore import ViewChange, ViewStore
signal.signal(signal.SIGTERM, lambda *_: sys.exit(3))  # a handler that raises SystemExit
path = {path!r}
{prepare}
def call():
    {call}
print("start", flush=True)
try:
    call()
    print("not interrupted", flush=True)
except (KeyboardInterrupt, SystemExit) as e:
    print(type(e).__name__, e.args, time.monotonic(), flush=True)
print("again:", call(), flush=True)  # the same objects, once the lock is let go
"""

#: the calls that wait for the file's write lock: what the child sets up, the call, what the call
#: returns once the lock is let go, and how many events that adds
_LOCK_WAITS = {
    "alter_view": ("store = ViewStore(path, actor='child')",
                   "return store.alter_view('a.v', ViewChange.update_comment('child')).comment", "child", 1),
    "transaction": ("store = ViewStore(path, actor='child')",
                    "with store.transaction():\n        store.alter_view('a.v', ViewChange.update_comment('child'))\n"
                    "    return store.load_view('a.v').comment", "child", 1),
    "store_id": ("store = ViewStore(path, actor='child')", "return len(store.store_id)", "36", 0),
    "open, repairing the schema": ("", "ViewStore(path).close()\n    return 'opened'", "opened", 0),
    "open, making the file WAL": ("", "ViewStore(path).close()\n    return 'opened'", "opened", 0),
    "open, behind a connection that keeps readers out": ("", "ViewStore(path).close()\n    return 'opened'",
                                                         "opened", 0),
    "query, behind a connection that keeps readers out": (
        "from viewstore.log import read_only_query",
        "return read_only_query(path, 'SELECT count(*) AS n FROM events')[0]['n']", "1", 0),
}


@pytest.mark.parametrize("signal_number", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("waiting", list(_LOCK_WAITS))
def test_a_signal_acts_at_once_on_a_call_waiting_for_another_process_write_lock(tmp_path, waiting, signal_number):
    """SQLite waits for a lock without running Python, so the wait is made of short slices: a signal's
    handler runs between two of them, and what it raises (KeyboardInterrupt, a SIGTERM handler's
    SystemExit) reaches the caller as itself at once, not when a 10 s wait ends. The call wrote
    nothing and left no transaction open: the same store writes once the lock is let go."""
    from interrupted import interrupted
    from test_store_id import _as_before_ids, _meta

    from viewstore import ViewStore

    path = tmp_path / "x.db"
    if waiting == "open, making the file WAL":
        conn = sqlite3.connect(path)  # a file in SQLite's default journal mode that holds nothing
        conn.execute("CREATE TABLE t (x)")
        conn.execute("DROP TABLE t")
        conn.close()
    else:
        with ViewStore(path, actor="me") as store:
            store.create_view("a.v", columns=[("x", "int")], representations=[("spark", "SELECT 1 AS x")],
                              default_namespace="a")
    if waiting == "store_id":
        _as_before_ids(path)
    if waiting == "open, repairing the schema":
        conn = sqlite3.connect(path)
        conn.execute("DROP TRIGGER events_append_only_delete")  # the next open runs the DDL again, a write
        conn.close()
    events = _events(path)
    holder = sqlite3.connect(path, isolation_level=None)
    if waiting.endswith("behind a connection that keeps readers out"):
        holder.execute("PRAGMA locking_mode = EXCLUSIVE")  # in WAL mode: no other connection reads
        holder.execute("BEGIN EXCLUSIVE")
    else:
        holder.execute("BEGIN IMMEDIATE")  # as another process's store.transaction() block held open
    prepare, call, returns, added = _LOCK_WAITS[waiting]
    try:  # let go as soon as the child has printed what its call raised
        result = interrupted(_WAITING.format(path=str(path), prepare=prepare, call=call), signal_number=signal_number,
                             then=lambda line: holder.close())
    finally:
        holder.close()
    assert result.returncode == 0, result.stderr
    first, second = result.stdout.splitlines()
    name, args, caught = first.rsplit(" ", 2)
    assert (name, args) == (("KeyboardInterrupt", "()") if signal_number == signal.SIGINT else ("SystemExit", "(3,)"))
    assert float(caught) - result.sent < 1.5, first  # not once a wait of seconds in SQLite ends
    assert second == f"again: {returns}"
    assert _events(path) == events + added  # the interrupted call wrote nothing
    if waiting == "store_id":
        assert len(_meta(path)["store_id"]) == 36
    if waiting == "open, repairing the schema":
        assert "events_append_only_delete" in {name for (name,) in
                                               sqlite3.connect(path).execute("SELECT name FROM sqlite_master")}


@pytest.mark.parametrize("slice_ms", [5000, 700], ids=["the first try", "a later try"])
def test_an_interrupt_raised_as_a_try_takes_the_write_lock_lets_the_lock_go(tmp_path, slice_ms):
    """The signal comes while SQLite waits, and the lock is let go within the same slice: BEGIN
    returns with the write lock, and KeyboardInterrupt is raised right after it. The transaction it
    began is rolled back: nothing is written, and the same store writes next."""
    from interrupted import interrupted

    from viewstore import ViewStore

    path = tmp_path / "x.db"
    with ViewStore(path, actor="me") as store:
        store.create_view("a.v", columns=[("x", "int")], representations=[("spark", "SELECT 1 AS x")],
                          default_namespace="a")
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    # slices of 5 s: the signal (1 s after the call began) and the release come in the first; of
    # 0.7 s: in the second, the first having been refused
    prepare = f"import viewstore.log\nviewstore.log.LOCK_SLICE_MS = {slice_ms}\nstore = ViewStore(path, actor='child')"
    call = "return store.alter_view('a.v', ViewChange.update_comment('child')).comment"
    try:
        result = interrupted(_WAITING.format(path=str(path), prepare=prepare, call=call),
                             at_signal=lambda: holder.execute("ROLLBACK"))
    finally:
        holder.close()
    assert result.returncode == 0, result.stderr
    first, second = result.stdout.splitlines()
    assert first.startswith("KeyboardInterrupt () ") and second == "again: child"
    assert _events(path) == 2


def _events(path):
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT count(*) FROM events").fetchone()[0]
    except sqlite3.OperationalError:  # no events table yet
        return 0
    finally:
        conn.close()


def _insert(log, rows):
    """Events written behind the library's back: (view_id, stream_version, type, identifier, time)."""
    log.conn.executemany("INSERT INTO events (commit_id, view_id, stream_version, type, identifier, actor, "
                         "occurred_at, payload) VALUES ('k', ?, ?, ?, ?, 'me', ?, '{}')", rows)


def test_a_gap_read_by_bisection_ends_at_the_rename_before_the_stream_takes_the_name_back(tmp_path):
    """A view renamed away from a name and back: the event that ended its first holding is looked for
    only before it took the name again, where the events after that carry the name once more."""
    log = EventLog(connect(tmp_path / "x.db"))
    _insert(log, [("v", 1, "view.created", "a.v", 1), ("v", 2, "view.renamed", "a.w", 2),
                  ("v", 3, "view.renamed", "a.v", 3)])
    assert log.gap_around("a.v", 2) == ((2, "view.renamed", "a.w", "me", 2), ("view.renamed", 3, "a.w"))
    assert log.let_go("a.v") is None  # it holds the name again


@pytest.mark.parametrize("version", ["'x'", "2.5", "X'02'"])
def test_a_stream_version_that_is_no_integer_leaves_what_let_go_of_a_name_untold(tmp_path, version):
    """A damaged stream version bounds no bisection: what let go of the name is not told (None), not a
    TypeError from an error path."""
    log = EventLog(connect(tmp_path / "x.db"))
    log.conn.execute("INSERT INTO events (commit_id, view_id, stream_version, type, identifier, actor, occurred_at, "
                     "payload) VALUES ('k', 'v', 1, 'view.created', 'a.v', 'me', 1, '{}'), "
                     f"('k', 'v', {version}, 'view.renamed', 'a.w', 'me', 2, '{{}}')")
    assert log.gap_around("a.v", 5) == (None, None)
    assert log.let_go("a.v") is None


def test_what_let_go_of_a_name_is_the_rename_after_its_holder_last_took_it(tmp_path):
    """A view that took a name twice let go of it by its first rename after the second taking, not
    by the one after the first (which bisection from the first taking would find)."""
    log = EventLog(connect(tmp_path / "x.db"))
    _insert(log, [("v", 1, "view.created", "a.v", 1), ("v", 2, "view.comment_updated", "a.v", 2),
                  ("v", 3, "view.comment_updated", "a.v", 3), ("v", 4, "view.renamed", "a.w", 4),
                  ("v", 5, "view.renamed", "a.v", 5), ("v", 6, "view.renamed", "a.x", 6)])
    assert log.let_go("a.v") == ((6, "view.renamed", "a.x", "me", 6), ("view.renamed", "a.x"))
    assert log.gap_around("a.v", 4) == ((4, "view.renamed", "a.w", "me", 4), ("view.renamed", 5, "a.w"))


def test_a_gap_after_two_takings_at_the_same_time_ends_at_the_later_taker_s(tmp_path):
    """Two views took a name in the same millisecond: the one that took it last holds it by then (the
    later position), so its drop, not the other's rename, ended the holding."""
    log = EventLog(connect(tmp_path / "x.db"))
    _insert(log, [("v", 1, "view.created", "a.v", 1), ("v", 2, "view.renamed", "a.w", 1),
                  ("u", 1, "view.created", "a.v", 1), ("u", 2, "view.dropped", "a.v", 2)])
    assert log.gap_around("a.v", 2) == ((4, "view.dropped", "a.v", "me", 2), None)
