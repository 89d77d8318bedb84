"""A store's id: made with a new file, or when first asked for in a file made before ids existed."""

import sqlite3
import time
import uuid

import pytest

from viewstore import ConcurrencyError, CorruptLogError, ViewStore, ViewStoreError, signals

from spawned import spawned_results


def _make(path):
    with ViewStore(path, actor="me") as store:
        store.create_view("a.v", columns=[("x", "int")], representations=[("spark", "SELECT 1 AS x")],
                          default_namespace="a")


def _old_file(tmp_path):
    """A store file as a release before store ids left it."""
    path = tmp_path / "old.db"
    _make(path)
    _as_before_ids(path)
    return path


def _meta(path):
    conn = sqlite3.connect(path)
    try:
        return dict(conn.execute("SELECT key, value FROM meta"))
    finally:
        conn.close()


def _as_before_ids(path):
    """The file as a release before store ids left it: its meta holds the schema version only."""
    conn = sqlite3.connect(path)
    conn.execute("DELETE FROM meta WHERE key = 'store_id'")
    conn.commit()
    conn.close()
    assert _meta(path) == {"schema_version": "2"}


def test_a_new_store_has_its_own_id_for_good(tmp_path):
    _make(tmp_path / "one.db")
    _make(tmp_path / "two.db")
    first = _meta(tmp_path / "one.db")["store_id"]
    assert str(uuid.UUID(first)) == first and first != _meta(tmp_path / "two.db")["store_id"]
    with ViewStore(tmp_path / "one.db") as store, ViewStore(tmp_path / "one.db") as again:
        assert store.store_id == again.store_id == first


def test_a_file_without_an_id_opens_without_writing_and_gets_one_when_asked(tmp_path, monkeypatch, request):
    import viewstore.log as log_module

    monkeypatch.setattr(log_module, "BUSY_TIMEOUT_MS", 1000)  # a wait would take a second
    path = _old_file(tmp_path)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process writing: an open must not wait for it
    try:
        start = time.monotonic()
        store = ViewStore(path, actor="reader")
        request.addfinalizer(store.close)  # closed also when an assertion fails first (again: nothing)
        assert store.load_view("a.v").stream_version == 1 and time.monotonic() - start < 0.9
        with pytest.raises(ConcurrencyError) as info:  # making the id is a write: it waits, then says so
            store.store_id
        assert info.value.busy
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert "store_id" not in _meta(path)  # opening and reading wrote nothing
    made = store.store_id
    assert _meta(path)["store_id"] == made and str(uuid.UUID(made)) == made
    store.close()
    with ViewStore(path) as again:
        assert again.store_id == made


def test_two_stores_on_an_old_file_agree_on_its_id(tmp_path):
    path = _old_file(tmp_path)
    with ViewStore(path) as first, ViewStore(path) as second:
        assert first.store_id == second.store_id  # the second finds the first's id and keeps it


def _ask_for_the_id(path, barrier, queue):
    barrier.wait()
    with ViewStore(path, actor="worker") as store:
        barrier.wait()
        queue.put(store.store_id)


def test_processes_opening_an_old_file_at_once_agree_on_its_id(tmp_path):
    path = _old_file(tmp_path)
    ids = spawned_results(_ask_for_the_id, [(str(path),)] * 4, barrier=True)
    assert len(set(ids)) == 1 and _meta(path)["store_id"] == ids[0]


def test_a_damaged_id_is_a_corrupt_log_error(tmp_path):
    path = tmp_path / "x.db"
    _make(path)
    conn = sqlite3.connect(path)
    conn.execute("UPDATE meta SET value = 'not a uuid' WHERE key = 'store_id'")
    conn.commit()
    conn.close()
    with ViewStore(path) as store:
        assert store.load_view("a.v").stream_version == 1  # the rest of the store reads as before
        with pytest.raises(CorruptLogError, match="not a UUID"):
            store.store_id


def test_an_id_that_is_no_text_is_a_corrupt_log_error(tmp_path):
    """A meta table remade behind the library's back, its value column without a type, keeps a number
    where the id was: damage, told as an id that is text and no UUID is."""
    path = tmp_path / "x.db"
    _make(path)
    conn = sqlite3.connect(path)
    conn.executescript("ALTER TABLE meta RENAME TO old_meta; CREATE TABLE meta (key TEXT PRIMARY KEY, value NOT NULL); "
                       "INSERT INTO meta SELECT * FROM old_meta; DROP TABLE old_meta; "
                       "UPDATE meta SET value = 42 WHERE key = 'store_id'")
    conn.close()
    with ViewStore(path) as store:
        assert store.load_view("a.v").stream_version == 1
        with pytest.raises(CorruptLogError, match="^the store id in the meta table is not a UUID: 42$"):
            store.store_id


def test_the_id_is_not_made_inside_another_call_of_the_store(tmp_path):
    path = _old_file(tmp_path)
    seen = []

    def receiver(sender, events):
        try:
            sender.store_id
        except ViewStoreError as e:
            seen.append(str(e))

    with ViewStore(path, actor="me") as store:
        signals.before_commit.connect(receiver)
        try:
            store.drop_view("a.v")
        finally:
            signals.before_commit.disconnect(receiver)
        assert seen and "signal receiver" in seen[0]
        assert "store_id" not in _meta(path)
        assert store.store_id == _meta(path)["store_id"]  # outside a call it is made as usual


def test_a_closed_store_refuses_its_id_also_once_read(tmp_path):
    """As every other call of a closed store: the id read before close is not handed out after it."""
    _make(tmp_path / "one.db")
    store = ViewStore(tmp_path / "one.db")
    assert store.store_id
    store.close()
    with pytest.raises(ViewStoreError, match="closed"):
        store.store_id


def test_existing_store_id_never_writes(tmp_path):
    path = _old_file(tmp_path)
    with ViewStore(path) as store:
        assert store.existing_store_id() is None and _meta(path) == {"schema_version": "2"}
        made = store.store_id
        assert store.existing_store_id() == made
    with ViewStore(path) as again:
        assert again.existing_store_id() == made
    with pytest.raises(ViewStoreError, match="closed"):
        again.existing_store_id()
