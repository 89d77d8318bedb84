"""Views with many versions: a load reads the current version only, a write costs the same however
long the history is, and the lazily built View is still a plain immutable value.

The costs are counted (versions parsed, version models built, versions looked at), never timed.
"""

import copy
import pickle
import re
import sqlite3
import threading

import hypothesis.strategies as st
import pytest
from hypothesis import given, settings

from viewstore import ViewChange, ViewStore, catalog, projections, signals
from viewstore.cli import view_to_json
from viewstore.catalog import _columns_key, _definition_key, _items_key
from viewstore.errors import CorruptLogError, ValidationError, ViewStoreError
from viewstore.model import Column, SQLRepresentation, VersionLogEntry, View, ViewVersion
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
        self.parsed = self.definitions = self.models = self.looked_at = self.iterated = self.keys = 0
        parse, model, item = projections._stored_version, projections._version_model, Versions._item
        definition = projections._stored_definition
        iterate, items_key = Versions.__iter__, catalog._items_key

        def counted_parse(*args):
            self.parsed += 1
            return parse(*args)

        def counted_definition(*args):
            self.definitions += 1
            return definition(*args)

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

        def counted_key(*args):
            self.keys += 1
            return items_key(*args)

        monkeypatch.setattr(projections, "_stored_version", counted_parse)
        monkeypatch.setattr(projections, "_stored_definition", counted_definition)
        monkeypatch.setattr(projections, "_version_model", counted_model)
        monkeypatch.setattr(Versions, "_item", counted_item)
        monkeypatch.setattr(Versions, "__iter__", counted_iter)
        monkeypatch.setattr(catalog, "_items_key", counted_key)

    def reset(self):
        self.parsed = self.definitions = self.models = self.looked_at = self.iterated = self.keys = 0

    def as_dict(self):
        return {"parsed": self.parsed, "definitions": self.definitions, "models": self.models,
                "looked_at": self.looked_at, "iterated": self.iterated, "keys": self.keys}


def test_a_cold_load_parses_and_builds_only_the_current_version(tmp_path, monkeypatch):
    path = build(tmp_path / "s.db", 150)
    counts = Counts(monkeypatch)
    with ViewStore(path, actor="reader") as store:
        view = store.load_view("a.v")
        assert (counts.parsed, counts.models) == (1, 0)  # the current version, checked; no model yet
        assert view.sql_for("trino") == sql(150) and [c.name for c in view.columns] == ["id", "amount"]
        assert view.current_version.version_id == 150 and view.version(150) is view.current_version
        assert (counts.parsed, counts.models) == (1, 1)
        assert store.load_view("a.v") is view  # the cached View, as before
        assert [v.version_id for v in view.versions] == list(range(1, 151))  # built when asked for
        assert (counts.parsed, counts.models) == (150, 150)
        assert view.versions[-1] is view.current_version and len(view.version_log) == 150


@pytest.mark.parametrize("kind", ["replace", "alter"])
def test_a_write_costs_the_same_whatever_the_number_of_versions(tmp_path, monkeypatch, kind):
    """Each kind of write parses, looks at, keys and builds as many versions at 5 versions as at 150:
    no scan of the history (finding an identical version, the schema id, the next id), no copy of it
    (a write folds into a copy of the cached state), no View built whole."""
    seen = {}
    for versions in (5, 150):
        path = build(tmp_path / f"s{versions}.db", versions)
        counts = Counts(monkeypatch)
        with ViewStore(path, actor="writer") as store:
            store.load_view("a.v")
            # the first write that adds a version (with a new schema) indexes the history, once
            store.replace_view("a.v", columns=[*COLUMNS, ("w", "int")],
                               representations=[("spark", "w"), ("trino", "w")], default_namespace="a")
            counts.reset()
            for i in range(3):
                if kind == "replace":  # new SQL, a changed column, then a definition the view had (reused)
                    store.replace_view("a.v", columns=COLUMNS, representations=[("spark", f"x{i}"), ("trino", "y")],
                                       default_namespace="a")
                    store.replace_view("a.v", columns=[*COLUMNS, ("n", "int")], representations=[("spark", f"n{i}"),
                                       ("trino", "y")], default_namespace="a")
                    store.replace_view("a.v", columns=COLUMNS, representations=[("spark", sql(1)), ("trino", sql(1))],
                                       default_namespace="a")
                else:
                    store.alter_view("a.v", ViewChange.update_representation("spark", f"u{i}"))
                    store.alter_view("a.v", ViewChange.add_representation(("hive", f"h{i}")))
                    store.alter_view("a.v", ViewChange.remove_representation("hive"))
                store.rollback_view("a.v", 2)
                store.alter_view("a.v", ViewChange.set_property("k", f"v{i}"), ViewChange.update_comment(f"c{i}"))
            assert store.load_view("a.v").stream_version < 200  # no snapshot (every 100 events) in the counted writes
            seen[versions] = counts.as_dict()
        monkeypatch.undo()
    assert seen[5] == seen[150], seen
    assert seen[5]["models"] == 0 and seen[5]["iterated"] == 0


def test_the_first_write_after_a_load_indexes_the_history_once(tmp_path, monkeypatch):
    path = build(tmp_path / "s.db", 60)
    counts = Counts(monkeypatch)
    with ViewStore(path, actor="writer") as store:
        store.replace_view("a.v", columns=COLUMNS, representations=[("spark", "new"), ("trino", "new")],
                           default_namespace="a")
        # every stored version read once: whole for the current one and the first (its schema is the
        # candidate's), its definition alone for the others
        assert (counts.parsed, counts.definitions) == (2, 58)
        counts.reset()
        store.replace_view("a.v", columns=COLUMNS, representations=[("spark", sql(7)), ("trino", sql(7))],
                           default_namespace="a")
        assert counts.definitions == 0 and store.load_view("a.v").current_version_id == 7  # found in the index
        assert counts.parsed == 1  # the version reused, whole, before it is made current


def test_an_import_walks_its_versions_as_often_whatever_their_number(tmp_path, monkeypatch):
    """Turning an imported history into events goes through the version list a fixed number of times,
    not once per version-log entry (an import of 10,000 versions took 50 s). Every other version
    rides along with the next entry, and the last entry rolls back to the first version."""
    walks = {}

    class Walked(list):
        def __iter__(self):
            walks[len(self)] += 1
            return super().__iter__()

    steps = catalog._import_steps
    monkeypatch.setattr(catalog, "_import_steps", lambda versions, *rest: steps(Walked(versions), *rest))
    for count in (6, 300):
        walks[count] = 0
        versions = [ViewVersion(version_id=i, timestamp_ms=1_000 + i, schema_id=0, columns=[Column("id", "bigint")],
                                representations=[SQLRepresentation("spark", sql(i))], default_namespace=("a",))
                    for i in range(1, count + 1)]
        log = [VersionLogEntry(timestamp_ms=1_000 + i, version_id=i) for i in range(1, count + 1, 2)]
        log.append(VersionLogEntry(timestamp_ms=5_000, version_id=1))
        with ViewStore(tmp_path / f"s{count}.db", actor="importer") as store:
            view = store.import_view("a.v", source="test", versions=versions, version_log=log, current_version_id=1)
            events = store.history("a.v")
        assert [v.version_id for v in view.versions] == list(range(1, count + 1))
        assert [(e.version_id, e.timestamp_ms) for e in view.version_log] == [(e.version_id, e.timestamp_ms)
                                                                              for e in log]
        # each entry that added a version brings the version before it, which never became current, and
        # the rollback brings the last
        assert [(e.type, getattr(e, "current_version_id", None)) for e in events] == [
            ("view.imported", 1), *[(kind, current) for i in range(3, count + 1, 2)
                                    for kind, current in (("view.replaced", i), ("view.replaced", None))],
            ("view.rolled_back", 1), ("view.replaced", None)]
        assert [e.version.version_id for e in events if e.type == "view.replaced"] == [
            *[i for odd in range(3, count + 1, 2) for i in (odd, odd - 1)], count]
    assert walks[6] == walks[300] > 0, walks


def test_show_builds_only_the_versions_it_lists(tmp_path, monkeypatch):
    """``viewstore show`` counts the versions by their ids and builds the ten it lists (the current one
    first when the view was rolled back to an old one), not every version of a long history."""
    from click.testing import CliRunner

    from viewstore.cli import main

    path = build(tmp_path / "s.db", 150)
    for rolled_back, listed in ((False, list(range(141, 151))), (True, [1, *range(142, 151)])):
        if rolled_back:
            with ViewStore(path, actor="me") as store:
                store.rollback_view("a.v", 1)
        monkeypatch.setenv("COLUMNS", "200")
        counts = Counts(monkeypatch)
        result = CliRunner().invoke(main, ["--db", str(path), "show", "a.v"], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        assert counts.models == 10, counts.as_dict()
        current = listed[-1] if not rolled_back else 1
        assert f"current version: {current} of 150 " in result.output
        assert [int(m) for m in re.findall(r"^│ (\d+)", result.output, re.M)] == listed
        with ViewStore(path, actor="me") as store:
            view = store.load_view("a.v")
            assert view.version_ids == tuple(range(1, 151)) and counts.models == 10  # none built for the ids
            assert view.version_ids == tuple(v.version_id for v in view.versions)
        monkeypatch.undo()


def test_a_view_keeps_its_versions_when_later_writes_add_some(tmp_path):
    with ViewStore(build(tmp_path / "s.db", 3), actor="me") as store:
        before = store.load_view("a.v")
        after = store.alter_view("a.v", ViewChange.update_representation("spark", "SELECT 4"))
        with pytest.raises(ValidationError, match="has no version 4; it has 1-3"):
            before.version(4)  # looked up before its versions are built: among those it had
        assert [v.version_id for v in before.versions] == [1, 2, 3] and len(before.version_log) == 3
        assert [v.version_id for v in after.versions] == [1, 2, 3, 4] and len(after.version_log) == 4
        assert after.versions[:3] == before.versions and after.versions[0] is before.versions[0]


def test_a_vetoed_write_leaves_no_version_behind(tmp_path):
    """The vetoed write folded its version into a copy that shares the cached state's versions: that
    state, its View, and the next write (which takes the same version id) must not see it."""
    with ViewStore(build(tmp_path / "s.db", 3), actor="me") as store:
        view = store.load_view("a.v")

        def veto(sender, events):
            raise RuntimeError("no")

        signals.before_commit.connect(veto)
        try:
            with pytest.raises(ViewStoreError, match="^a before_commit receiver refused the change: no$"):
                store.alter_view("a.v", ViewChange.update_representation("spark", "vetoed"))
        finally:
            signals.before_commit.disconnect(veto)
        assert [v.version_id for v in view.versions] == [1, 2, 3]
        assert store.load_view("a.v").stream_version == 3
        after = store.alter_view("a.v", ViewChange.update_representation("spark", "kept"))
        assert [v.version_id for v in after.versions] == [1, 2, 3, 4] and after.sql_for("spark") == "kept"
        with ViewStore(tmp_path / "s.db", actor="other") as other:
            assert after == other.load_view("a.v")
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
    with pytest.raises(ValueError, match="Instance is frozen"):  # pydantic's own error
        view.versions = ()  # frozen
    assert len(view.versions) == 4


def test_the_versions_of_a_view_share_their_equal_columns_and_representations(tmp_path):
    """A view whose versions repeat their columns (or SQL) holds each of them once: equal ones of its
    versions are one object, where each version held its own (60,000 columns for 10,000 versions of
    six); one that differs in anything (its comment, its nullability, a comment of None) is its own."""
    columns = [Column("x", "int", "the x"), Column("y", "string")]
    spark = SQLRepresentation("spark", "SELECT 1 AS x, 'a' AS y")
    with ViewStore(tmp_path / "s.db", actor="me") as store:
        store.create_view("a.v", columns=columns, representations=[spark], default_namespace="a",
                          properties={"replace.drop-dialect.allowed": "true"})
        store.replace_view("a.v", columns=columns, representations=[spark, ("trino", "SELECT 1 AS x, 'a' AS y")],
                           default_namespace="a")
        store.replace_view("a.v", columns=[Column("x", "int", "the x", nullable=False), Column("y", "string", "")],
                           representations=[spark], default_namespace="a")
        store.replace_view("a.v", columns=[Column("x", "int"), Column("y", "string")], representations=[spark],
                           default_namespace="a")
    with ViewStore(tmp_path / "s.db", actor="me") as store:
        first, second, third, fourth = store.load_view("a.v").versions
    assert first.columns == second.columns and all(a is b for a, b in zip(first.columns, second.columns))
    assert first.representations[0] is second.representations[0] is third.representations[0]
    assert third.columns != first.columns and {id(c) for c in third.columns}.isdisjoint(map(id, first.columns))
    assert fourth.columns[1] is first.columns[1] and fourth.columns[0] not in (first.columns[0], third.columns[0])
    assert third.columns[1].comment == "" and fourth.columns[1].comment is None


def test_show_json_is_pydantic_json_dump_of_the_view(tmp_path):
    """view_to_json (show --json) dumps each shared column and representation once: the document is
    still the View's own JSON dump, its current version's columns and representations in place."""
    build(tmp_path / "s.db", 30)
    with ViewStore(tmp_path / "s.db", actor="me") as store:
        store.replace_view("a.v", columns=[Column("x", "int", "the x", nullable=False)],
                           representations=[("spark", "SELECT 1 AS x"), ("trino", "SELECT 1 AS x")],
                           default_catalog="cat", summary={"engine-name": "spark"}, default_namespace=["a", "b"])
        store.alter_view("a.v", ViewChange.set_property("k", "v"), ViewChange.update_comment("a comment"))
        store.rollback_view("a.v", 3)
        view = store.load_view("a.v")
        expected = view.model_dump(mode="json")
        expected.update(identifier="a.v", comment="a comment",
                        columns=[c.model_dump(mode="json") for c in view.columns],
                        representations=[r.model_dump(mode="json") for r in view.representations],
                        default_catalog=view.default_catalog, default_namespace=list(view.default_namespace))
        assert view_to_json(view) == expected and list(view_to_json(view)) == list(expected)
        assert [list(v) for v in view_to_json(view)["versions"]] == [list(v) for v in expected["versions"]]
        assert len(expected["versions"]) == 31 and expected["versions"][-1]["default_catalog"] == "cat"


def test_threads_building_the_versions_at_once_get_the_same_tuple(tmp_path):
    build(tmp_path / "s.db", 200)
    with ViewStore(tmp_path / "s.db", actor="me") as store:
        view = store.load_view("a.v")
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


@pytest.mark.parametrize("column, value", [("columns", "x"), ("representations", "x"),
                                           ("columns", '[{"name": "n", "type": "no_such_type"}]'),
                                           ("columns", '[{"name": "", "type": "int"}]'),
                                           ("representations", '[{"dialect": "spark", "sql": " "}]')])
def test_a_damaged_old_version_fails_what_reads_it_and_writes_nothing(tmp_path, column, value):
    """(Blank SQL is JSON of the stored shape that the models' rules refuse: the definition index,
    which reads no columns, checks those rules too.)"""
    path = build(tmp_path / "s.db", 5)
    _damage(path, 2, column, value)
    with ViewStore(path, actor="me") as store:
        view = store.load_view("a.v")  # the current version is sound: the load needs no other
        assert view.sql_for("spark") == sql(5)
        damaged = rf"^the projections are damaged at view {view.uuid} \(.+\); rebuild\(\) repairs them from the log$"
        with pytest.raises(CorruptLogError, match=damaged):
            view.versions
        for dump in (view.model_dump, view.model_dump_json, lambda: view_to_json(view)):  # show --json
            with pytest.raises(CorruptLogError, match=damaged):
                dump()
        with pytest.raises(CorruptLogError, match=damaged):
            store.export_iceberg("a.v", tmp_path / "export")
        assert not (tmp_path / "export").exists()
        events = store.event_count()
        with pytest.raises(CorruptLogError, match=damaged):  # the version it would make current
            store.rollback_view("a.v", 2)
        with pytest.raises(CorruptLogError, match=damaged):  # a new schema: every version's columns are compared
            store.replace_view("a.v", columns=[*COLUMNS, ("n", "int")],
                               representations=[("spark", "n"), ("trino", "n")], default_namespace="a")
        new_sql = dict(columns=COLUMNS, representations=[("spark", "new"), ("trino", "new")], default_namespace="a")
        if column == "representations":  # every version's definition is compared with the new one
            with pytest.raises(CorruptLogError, match=damaged):
                store.replace_view("a.v", **new_sql)
        assert store.event_count() == events
        if column == "columns":  # a definition the damage is no part of: decided without it
            assert store.replace_view("a.v", **new_sql).current_version_id == 6
        store.alter_view("a.v", ViewChange.update_comment("needs no other version"))
        assert store.rebuild()["view_versions"] == 1
        assert ([v.version_id for v in store.load_view("a.v").versions]
                == list(range(1, 7 if column == "columns" else 6)))
        store.rollback_view("a.v", 2)


@pytest.mark.parametrize("column, value", [("columns", '[{"name": "n", "type": "int", "nullable": "yes"}]'),
                                           ("columns", '[{"name": "n", "type": "int", "comment": 5}]'),
                                           ("columns", '{"name": "n", "type": "int"}'),
                                           ("default_catalog", b"cat")])
def test_an_old_version_stored_in_the_wrong_shape_fails_what_reads_it(tmp_path, column, value):
    """An old version's row whose column names and types read, but whose fields are not of the
    stored shape (a nullable that is no bool, a comment that is no text, an object for the list of
    columns, a catalog stored as bytes) is damage, as a type that reads as none is: the version is
    not made of it."""
    path = build(tmp_path / "s.db", 5)
    _damage(path, 2, column, value)
    with ViewStore(path, actor="me") as store:
        view = store.load_view("a.v")
        with pytest.raises(CorruptLogError, match=rf"^the projections are damaged at view {view.uuid} \(.+\); "
                                                  r"rebuild\(\) repairs them from the log$"):
            view.versions


@pytest.mark.parametrize("column, value", [("columns", "x"), ("representations", '[{"dialect": "", "sql": "x"}]'),
                                           ("schema_id", "one"), ("summary", '{"k": 1}')])
def test_a_damaged_current_version_fails_the_load(tmp_path, column, value):
    path = build(tmp_path / "s.db", 3)
    _damage(path, 3, column, value)
    with ViewStore(path, actor="me") as store, pytest.raises(CorruptLogError, match="rebuild"):
        store.load_view("a.v")


def test_a_write_to_a_view_whose_current_version_is_damaged_fails_before_it_writes(tmp_path):
    """A rename reads no version, but the View it returns is built of the current one: the damage
    must fail the call before its commit, not after it (a call that raises writes nothing)."""
    path = build(tmp_path / "s.db", 3)
    _damage(path, 3)
    with ViewStore(path, actor="me") as store:
        events = store.event_count()
        for write in (lambda: store.rename_view("a.v", "a.w"), lambda: store.drop_view("a.v"),
                      lambda: store.alter_view("a.v", ViewChange.update_comment("c"))):
            with pytest.raises(CorruptLogError, match="rebuild"):
                write()
        assert store.event_count() == events and store.list_views() == [("a", "v")]


VALUES = st.sampled_from(["a", "b"])
VERSION = st.fixed_dictionaries({
    "schema_id": st.integers(0, 1),
    "columns": st.lists(st.fixed_dictionaries({"name": VALUES, "type": st.sampled_from(["int", "string"])},
                                              optional={"comment": st.none() | VALUES, "nullable": st.booleans()}),
                        max_size=2),
    "representations": st.lists(st.fixed_dictionaries({"dialect": VALUES, "sql": VALUES}), min_size=1, max_size=2),
    "default_catalog": st.none() | VALUES,
    "default_namespace": st.lists(VALUES, max_size=1),
    "summary": st.dictionaries(VALUES, VALUES, max_size=2)})


def _same_definition(a, b):
    """The rule as the catalog wrote it when it compared every version with the candidate."""
    return (a["schema_id"] == b["schema_id"] and a["representations"] == b["representations"]
            and a.get("default_catalog") == b.get("default_catalog")
            and list(a.get("default_namespace") or []) == list(b.get("default_namespace") or [])
            and (a.get("summary") or {}) == (b.get("summary") or {}))


@settings(max_examples=200, deadline=None)
@given(versions=st.lists(VERSION, min_size=1, max_size=8), candidate=VERSION, seen=st.integers(1, 8))
def test_the_indexes_find_what_comparing_every_version_finds(versions, candidate, seen):
    ids = list(range(len(versions), 0, -1))  # ids need not follow the order versions were added in
    stored = [{**v, "version_id": i, "timestamp_ms": 0} for i, v in zip(ids, versions)]
    n = min(seen, len(stored))
    first_whole = Versions("u", stored)
    first_prefix = Versions("u", stored)
    # the index built by the longer state, then read by the shorter one; and the other way round
    for part in (first_whole, _prefix(first_whole, n), _prefix(first_prefix, n), first_prefix):
        visible = stored[:len(part)]
        reused = min((part.at(p)[0] for p in part.places(_definition_key, _definition_key(candidate))), default=None)
        assert reused == min((v["version_id"] for v in visible if _same_definition(v, candidate)), default=None)
        first = part.first_place(_columns_key, _items_key(candidate["columns"]))
        scan = next((v["schema_id"] for v in visible if v["columns"] == candidate["columns"]), None)
        assert (part.at(first)[1]["schema_id"] if first is not None else None) == scan
        assert part.max_id() == max(v["version_id"] for v in visible)
        assert part.max_schema_id() == max(v["schema_id"] for v in visible)


def test_a_state_sees_none_of_the_versions_a_later_state_of_its_stream_added():
    stored = [{"version_id": i, "timestamp_ms": 0, "schema_id": 0, "columns": [{"name": "a", "type": "int"}],
               "representations": [{"dialect": "spark", "sql": f"SELECT {i}"}]} for i in (1, 2)]
    earlier = Versions("u", stored)
    later = earlier.copy()
    assert later.add(3, {**stored[0], "version_id": 3})
    assert 3 in later and later.model(3).version_id == 3 and [v["version_id"] for v in later.of([1, 3])] == [1, 3]
    assert 3 not in earlier and earlier.model(3) is None and list(earlier) == [1, 2] and len(earlier) == 2
    with pytest.raises(KeyError):
        earlier[3]
    with pytest.raises(KeyError):
        earlier.of([1, 3])


def _prefix(versions, n):
    """A copy of ``versions`` that sees its first ``n`` entries (as an older state of the stream does)."""
    twin = versions.copy()
    twin._n = n
    return twin


def test_the_definition_fields_are_read_as_the_whole_version_reads_them():
    """_stored_definition checks a version's definition alone (to index them): its declaration must
    be that of the same fields of the whole stored version."""
    from viewstore.events import _DefinitionData, _VersionData

    fields = _DefinitionData.__annotations__
    assert {k: v for k, v in _VersionData.__annotations__.items() if k in fields} == fields
    assert set(_VersionData.__annotations__) - set(fields) == {"version_id", "timestamp_ms", "columns"}
    assert _DefinitionData.__optional_keys__ <= _VersionData.__optional_keys__
    assert _DefinitionData.__required_keys__ <= _VersionData.__required_keys__


def test_the_fields_but_the_columns_are_read_as_the_whole_version_reads_them():
    """_stored_version checks a version's columns (once per text) apart from its other fields: their
    declaration must be that of the whole stored version less its columns."""
    from viewstore.events import _VersionData, _VersionFieldsData

    assert _VersionFieldsData.__annotations__ == {k: v for k, v in _VersionData.__annotations__.items()
                                                   if k != "columns"}
    assert _VersionFieldsData.__optional_keys__ == _VersionData.__optional_keys__
    assert _VersionFieldsData.__required_keys__ == _VersionData.__required_keys__ - {"columns"}


def _through_each_snapshot(store):
    """Load view a.v as of each event that has a snapshot of its own, in order (each load reads
    through that snapshot), and yield the store's projections after each load."""
    for event in store.history("a.v")[projections.SNAPSHOT_EVERY::projections.SNAPSHOT_EVERY]:
        assert store.load_view("a.v", as_of=event).current_version_id == event.stream_version
        yield store._projections


def test_the_parsed_snapshots_kept_for_as_of_are_bounded_by_what_they_hold(tmp_path, monkeypatch):
    """Each parsed snapshot holds its own copy of its view's version rows: a few of a long history
    must not be kept as if they weighed what short ones do."""
    monkeypatch.setattr(projections, "PARSED_SNAPSHOT_ENTRIES", 1_000)
    path = build(tmp_path / "s.db", 5 * projections.SNAPSHOT_EVERY)
    with ViewStore(path) as store:
        sizes = []
        for kept in _through_each_snapshot(store):
            sizes.append(kept._held)
            assert kept._held <= 1_000
            assert kept._held == sum(len(s.versions) + len(s.version_log) for s in kept._snapshots.values())
        assert max(sizes) > 0 and len(store._projections._snapshots) < 4  # some were let go
        again = store.load_view("a.v", as_of=store.history("a.v")[-1])  # and what was let go is read again
        assert again == store.load_view("a.v")


def test_the_parsed_snapshots_kept_for_as_of_are_bounded_in_number(tmp_path, monkeypatch):
    monkeypatch.setattr(projections, "PARSED_SNAPSHOTS", 2)
    path = build(tmp_path / "s.db", 4 * projections.SNAPSHOT_EVERY)
    with ViewStore(path) as store:
        counts = [len(kept._snapshots) for kept in _through_each_snapshot(store)]
        assert counts == [1, 2, 1]  # the third let the two go


def test_the_count_of_what_parsed_snapshots_hold_is_dropped_with_them(tmp_path, monkeypatch):
    """A rebuild and a rolled-back transaction drop the parsed snapshots: what they held no longer
    counts against the bound (else snapshots parsed later are let go before the bound is reached)."""
    monkeypatch.setattr(projections, "PARSED_SNAPSHOT_ENTRIES", 1_000)
    path = build(tmp_path / "s.db", 3 * projections.SNAPSHOT_EVERY)
    with ViewStore(path) as store:
        history = store.history("a.v")
        kept = store._projections

        def held():
            return sum(len(s.versions) + len(s.version_log) for s in kept._snapshots.values())

        def parse_two():
            for event in history[projections.SNAPSHOT_EVERY:3 * projections.SNAPSHOT_EVERY:projections.SNAPSHOT_EVERY]:
                store.load_view("a.v", as_of=event)
            assert len(kept._snapshots) == 2 and kept._held == held() == 600

        parse_two()
        store.rebuild()
        assert kept._snapshots == {} and kept._held == 0
        parse_two()
        with pytest.raises(KeyError):
            with store.transaction():
                raise KeyError("rolled back")
        assert kept._snapshots == {} and kept._held == 0
        parse_two()
