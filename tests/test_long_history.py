"""Views with many versions: a load reads the current version only, and the lazily built View is
still a plain immutable value.

The costs are counted (versions parsed, version models built, versions looked at), never timed.
"""

import copy
import pickle
import sqlite3
import threading

import pytest

from viewstore import ViewChange, ViewStore, projections, signals
from viewstore.errors import CorruptLogError, ViewStoreError
from viewstore.model import View
from viewstore.projections import Versions

COLUMNS = [("id", "bigint"), ("amount", "decimal(18,2)", "in EUR")]


def sql(i):
    return f"SELECT id, amount FROM sales.orders WHERE batch = {i}"


def build(path, versions):
    """A store file holding view ``a.v`` with ``versions`` versions (one create, then replaces)."""
    with ViewStore(path, actor="builder") as store:
        store.create_view("a.v", columns=COLUMNS, representations=[("spark", sql(1)), ("trino", sql(1))],
                          default_namespace="a")
        for i in range(2, versions + 1):
            store.replace_view("a.v", columns=COLUMNS, representations=[("spark", sql(i)), ("trino", sql(i))],
                               default_namespace="a")
    return path


class Counts:
    """Counts what the library does with versions, by wrapping the functions that do it."""

    def __init__(self, monkeypatch):
        self.parsed = self.models = self.looked_at = self.iterated = self.keys = 0
        parse, model, item = projections._stored_version, projections._version_model, Versions._item
        iterate = Versions.__iter__

        def counted_parse(*args):
            self.parsed += 1
            return parse(*args)

        def counted_model(*args):
            self.models += 1
            return model(*args)

        def counted_item(versions, place):
            self.looked_at += 1
            return item(versions, place)

        def counted_iter(versions):
            for vid in iterate(versions):
                self.iterated += 1
                yield vid

        monkeypatch.setattr(projections, "_stored_version", counted_parse)
        monkeypatch.setattr(projections, "_version_model", counted_model)
        monkeypatch.setattr(Versions, "_item", counted_item)
        monkeypatch.setattr(Versions, "__iter__", counted_iter)

    def reset(self):
        self.parsed = self.models = self.looked_at = self.iterated = self.keys = 0

    def as_dict(self):
        return {"parsed": self.parsed, "models": self.models, "looked_at": self.looked_at,
                "iterated": self.iterated, "keys": self.keys}


def test_a_cold_load_parses_and_builds_only_the_current_version(tmp_path, monkeypatch):
    path = build(tmp_path / "s.db", 150)
    counts = Counts(monkeypatch)
    store = ViewStore(path, actor="reader")
    view = store.load_view("a.v")
    assert (counts.parsed, counts.models) == (1, 0)  # the current version, checked; no model yet
    assert view.sql_for("trino") == sql(150) and [c.name for c in view.columns] == ["id", "amount"]
    assert view.current_version.version_id == 150 and view.version(150) is view.current_version
    assert (counts.parsed, counts.models) == (1, 1)
    assert store.load_view("a.v") is view  # the cached View, as before
    assert [v.version_id for v in view.versions] == list(range(1, 151))  # built when asked for
    assert (counts.parsed, counts.models) == (150, 150)
    assert view.versions[-1] is view.current_version and len(view.version_log) == 150
    store.close()


def test_a_view_keeps_its_versions_when_later_writes_add_some(tmp_path):
    store = ViewStore(build(tmp_path / "s.db", 3), actor="me")
    before = store.load_view("a.v")
    after = store.alter_view("a.v", ViewChange.update_representation("spark", "SELECT 4"))
    assert [v.version_id for v in before.versions] == [1, 2, 3] and len(before.version_log) == 3
    assert [v.version_id for v in after.versions] == [1, 2, 3, 4] and len(after.version_log) == 4
    assert after.versions[:3] == before.versions and after.versions[0] is before.versions[0]


def test_a_vetoed_write_leaves_no_version_behind(tmp_path):
    """The vetoed write folded its version into a copy that shares the cached state's versions: that
    state, its View, and the next write (which takes the same version id) must not see it."""
    store = ViewStore(build(tmp_path / "s.db", 3), actor="me")
    view = store.load_view("a.v")

    def veto(sender, events):
        raise RuntimeError("no")

    signals.before_commit.connect(veto)
    try:
        with pytest.raises(ViewStoreError):
            store.alter_view("a.v", ViewChange.update_representation("spark", "vetoed"))
    finally:
        signals.before_commit.disconnect(veto)
    assert [v.version_id for v in view.versions] == [1, 2, 3]
    assert store.load_view("a.v").stream_version == 3
    after = store.alter_view("a.v", ViewChange.update_representation("spark", "kept"))
    assert [v.version_id for v in after.versions] == [1, 2, 3, 4] and after.sql_for("spark") == "kept"
    assert after == ViewStore(tmp_path / "s.db", actor="other").load_view("a.v")
    assert store.rebuild() == {"views": 0, "view_versions": 0, "view_version_log": 0, "view_snapshots": 0}


def test_a_lazily_built_view_is_a_plain_value(tmp_path):
    build(tmp_path / "s.db", 4)

    def lazy():
        with ViewStore(tmp_path / "s.db", actor="me") as store:
            view = store.load_view("a.v")
        assert "versions" not in view.__dict__ and "version_log" not in view.__dict__  # not built yet
        return view  # the store is closed: its history was read with it, and builds without the store

    whole = View.model_validate(lazy().model_dump())
    assert "versions" in whole.__dict__ and len(whole.versions) == 4
    assert lazy() == whole and whole == lazy() and lazy() == lazy()
    assert lazy() != whole.model_copy(update={"versions": whole.versions[:3]})
    assert list(lazy().model_dump()) == list(View.model_fields) == [k for k, _ in lazy()]
    assert repr(lazy()) == repr(whole) and lazy().model_dump_json() == whole.model_dump_json()
    assert pickle.loads(pickle.dumps(lazy())) == whole
    assert copy.copy(lazy()) == whole and copy.deepcopy(lazy()) == whole
    assert lazy().model_copy(update={"stream_version": 9}) == whole.model_copy(update={"stream_version": 9})
    with pytest.raises(TypeError):  # as for any View: its properties are a dict
        hash(lazy())
    view = lazy()
    with pytest.raises(Exception):
        view.versions = ()  # frozen
    assert len(view.versions) == 4


def test_threads_building_the_versions_at_once_get_the_same_tuple(tmp_path):
    build(tmp_path / "s.db", 200)
    view = ViewStore(tmp_path / "s.db", actor="me").load_view("a.v")
    barrier, got = threading.Barrier(8), []

    def read():
        barrier.wait()
        got.append((view.versions, view.version_log))

    threads = [threading.Thread(target=read) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 8 and all(v is got[0][0] and log is got[0][1] for v, log in got)
    assert len(got[0][0]) == 200


def _damage(path, version_id, column="columns", value="x"):
    with sqlite3.connect(path) as raw:
        raw.execute(f"UPDATE view_versions SET {column} = ? WHERE version_id = ?", (value, version_id))
    raw.close()


def test_a_damaged_old_version_fails_what_reads_it_and_writes_nothing(tmp_path):
    path = build(tmp_path / "s.db", 5)
    _damage(path, 2)
    store = ViewStore(path, actor="me")
    view = store.load_view("a.v")  # the current version is sound: the load needs no other
    assert view.sql_for("spark") == sql(5)
    with pytest.raises(CorruptLogError, match="rebuild"):
        view.versions
    with pytest.raises(CorruptLogError):
        store.export_iceberg("a.v", tmp_path / "export")
    assert not (tmp_path / "export").exists()
    events = store.event_count()
    with pytest.raises(CorruptLogError):  # finding an identical version reads them all
        store.replace_view("a.v", columns=COLUMNS, representations=[("spark", "new"), ("trino", "new")],
                           default_namespace="a")
    with pytest.raises(CorruptLogError):  # the version it would make current
        store.rollback_view("a.v", 2)
    store.alter_view("a.v", ViewChange.update_comment("needs no other version"))
    assert store.event_count() == events + 1
    assert store.rebuild()["view_versions"] == 1
    assert [v.version_id for v in store.load_view("a.v").versions] == [1, 2, 3, 4, 5]
    store.rollback_view("a.v", 2)
    store.close()


@pytest.mark.parametrize("column, value", [("columns", "x"), ("representations", '[{"dialect": "", "sql": "x"}]'),
                                           ("schema_id", "one"), ("summary", '{"k": 1}')])
def test_a_damaged_current_version_fails_the_load(tmp_path, column, value):
    path = build(tmp_path / "s.db", 3)
    _damage(path, 3, column, value)
    with ViewStore(path, actor="me") as store, pytest.raises(CorruptLogError, match="rebuild"):
        store.load_view("a.v")
