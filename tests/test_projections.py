import json
import subprocess
import sys

import pytest

from viewstore.errors import CorruptLogError
from viewstore.projections import (DDL, PROJECTION_TABLES, SNAPSHOT_EVERY, ViewState, apply, fold_stored,
                                   state_to_view)

VERSION = {"version_id": 1, "timestamp_ms": 5, "schema_id": 0, "columns": [{"name": "x", "type": "int",
           "comment": None, "nullable": True}], "representations": [{"dialect": "spark", "sql": "SELECT 1"}],
           "default_catalog": None, "default_namespace": ["a"], "summary": {}}


def row(position, version, kind, identifier="a.v", at=5):
    return (position, "c", "u", version, kind, identifier, "me", at)


def created():
    return apply(None, row(1, 1, "view.created"), {"version": VERSION, "current_version_id": 1,
                                                  "log_entry": {"timestamp_ms": 5, "version_id": 1},
                                                  "properties": {"k": "v"}, "security_mode": "DEFINER"})


def test_ddl_declares_every_projection_table():
    assert PROJECTION_TABLES == ("views", "view_versions", "view_version_log", "view_snapshots")
    for table in PROJECTION_TABLES:
        assert f"CREATE TABLE IF NOT EXISTS {table}" in DDL
    assert "WHERE live = 1" in DDL  # names are unique among live views only


def test_fold_and_view():
    state = created()
    state = apply(state, row(2, 2, "view.comment_updated"), {"comment": "hi"})
    state = apply(state, row(3, 3, "view.renamed", "b.w", at=9), {"from_identifier": ["a", "v"]})
    state = apply(state, row(4, 4, "view.properties_removed", "b.w", at=9), {"removals": ["k"]})
    view = state_to_view(state)
    assert view.identifier == ("b", "w") and view.comment == "hi" and "k" not in view.properties
    assert view.audit.create_time_ms == 5 and view.audit.last_modified_time_ms == 9
    assert view.columns[0].name == "x" and str(view.columns[0].type) == "int"
    assert apply(state, row(5, 5, "view.dropped", "b.w"), {}).live is False


def test_fold_refuses_gaps_and_orphans():
    with pytest.raises(CorruptLogError):
        apply(created(), row(2, 3, "view.dropped"), {})
    with pytest.raises(CorruptLogError):
        apply(None, row(1, 1, "view.dropped"), {})
    with pytest.raises(CorruptLogError):
        apply(created(), row(2, 2, "view.created"), {})


def stored(position, version, kind, payload, identifier="a.v", actor="me", at=5):
    """A row as read back from the log: the payload as stored JSON text."""
    return (*row(position, version, kind, identifier, at)[:6], actor, at,
            payload if isinstance(payload, str) else json.dumps(payload))


def test_fold_stored_takes_what_the_library_writes():
    states = {}
    fold_stored(states, [
        stored(1, 1, "view.created", {"version": VERSION, "current_version_id": 1,
                                      "log_entry": {"timestamp_ms": 5, "version_id": 1}}),
        stored(2, 2, "view.comment_updated", {"comment": "hi"}),
        stored(3, 3, "view.rolled_back", {"current_version_id": 1, "log_entry": {"timestamp_ms": 6, "version_id": 1}})])
    assert states["u"].properties == {"comment": "hi"} and states["u"].version_log == [(5, 1), (6, 1)]


@pytest.mark.parametrize("kind, payload, why", [
    ("view.comment_updated", "{not json", "not an event this library wrote"),
    ("view.comment_updated", [], "not an event this library wrote"),
    ("view.comment_updated", {"comment": 5}, "comment"),
    ("view.comment_updated", {"comment": "x", "extra": 1}, "extra"),
    ("view.properties_set", {"updates": {"k": 1}}, "updates"),
    ("view.properties_removed", {"removals": "k"}, "removals"),
    ("view.replaced", {"version": {**VERSION, "version_id": "2"}}, "version_id"),
    ("view.replaced", {"version": {**VERSION, "version_id": 2, "columns": [{"name": "x", "type": "no such type"}]}},
     "type"),
    ("view.rolled_back", {"current_version_id": 7, "log_entry": {"timestamp_ms": 6, "version_id": 7}},
     "version 7 of view u current, which it does not have"),
    ("view.exploded", {}, "no event type has that name"),
])
def test_fold_stored_refuses_rows_the_library_did_not_write(kind, payload, why):
    """A row that entered the log behind the library's back ends in CorruptLogError, named by position."""
    with pytest.raises(CorruptLogError, match="position 2") as refused:
        fold_stored({"u": created()}, [stored(2, 2, kind, payload)])
    assert why in str(refused.value)


@pytest.mark.parametrize("damage", [
    {"default_namespace": None}, {"summary": None},
    {"columns": [{"name": " ", "type": "int"}]},
    {"representations": [{"dialect": "", "sql": "SELECT 1"}]},
    {"representations": [{"dialect": "spark ", "sql": "SELECT 1"}]},
    {"representations": [{"dialect": "\x1c", "sql": "SELECT 1"}]},
    {"representations": [{"dialect": "spark", "sql": " \n"}]},
])
def test_what_the_fold_refuses_the_event_models_refuse_too(damage):
    """A version the event models refuse (history() and events() decode rows with them) is refused by
    the fold as well, so a rebuild never accepts a log that history() then cannot read (the fuzz found
    a null default namespace that rebuild took and history refused)."""
    from viewstore.events import decode_event

    payload = {"version": {**VERSION, "version_id": 2, **damage}, "current_version_id": 2,
               "log_entry": {"timestamp_ms": 6, "version_id": 2}}
    with pytest.raises(CorruptLogError, match="position 2"):
        fold_stored({"u": created()}, [stored(2, 2, "view.replaced", payload)])
    envelope = {"position": 2, "commit_id": "c", "view_id": "u", "stream_version": 2, "type": "view.replaced",
                "identifier": ("a", "v"), "actor": "me", "occurred_at": 6}
    with pytest.raises(CorruptLogError, match="position 2"):
        decode_event(envelope, payload)


@pytest.mark.parametrize("field, value", [("actor", 7), ("identifier", None), ("at", "late")])
def test_fold_stored_refuses_envelopes_of_the_wrong_type(field, value):
    with pytest.raises(CorruptLogError, match="position 2"):
        fold_stored({"u": created()}, [stored(2, 2, "view.dropped", {}, **{field: value})])


def test_snapshots_every_n_events_round_trip():
    state = created()
    for v in range(2, SNAPSHOT_EVERY + 1):
        state = apply(state, row(v, v, "view.properties_set"), {"updates": {"n": str(v)}})
    (version, at, data), = state.snapshots
    assert version == SNAPSHOT_EVERY
    assert "versions" not in json.loads(data)  # named by id: each version is stored once, in view_versions
    again = ViewState.from_json(data, lambda named: {1: VERSION, 2: "not named by the snapshot"})
    assert again.properties["n"] == str(SNAPSHOT_EVERY) and again.versions == {1: VERSION}
    assert json.loads(again.to_json()) == json.loads(data)


def test_the_ddl_is_what_the_sqlmodel_declarations_compile_to():
    from viewstore import projections, schema

    assert projections.DDL == schema.ddl(), "paste the output of `python -m viewstore.schema` into projections.DDL"
    for model in schema.TABLES:
        table = model.__table__
        assert projections._TABLE_COLUMNS[table.name] == (tuple(c.name for c in table.columns),
                                                          len(table.primary_key.columns))
    assert [model.__tablename__ for model in schema.TABLES] == list(projections.PROJECTION_TABLES)


def test_opening_a_store_imports_no_sqlalchemy(tmp_path):
    """SQLAlchemy (through SQLModel) is a fifth of a second of every command's start; only the
    schema declarations need it."""
    script = ("import sys; from viewstore import ViewStore; import viewstore.cli; "
              f"s = ViewStore({str(tmp_path / 'x.db')!r}); "
              "s.create_view('a.v', columns=[('x', 'int')], representations=[('spark', 'SELECT 1 AS x')], "
              "default_namespace='a'); s.close(); "
              "print(sorted(m for m in sys.modules if m.split('.')[0] in ('sqlalchemy', 'sqlmodel')))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def _two_versions_then(tmp_path, damage, value):
    """A store file with view a.v at its second version, then ``damage`` (SQL taking ``value``) run
    on it behind the library's back."""
    import sqlite3

    from viewstore import ViewStore

    path = tmp_path / "s.db"
    with ViewStore(path, actor="me") as store:
        store.create_view("a.v", columns=[("id", "int")], representations=[("spark", "SELECT 1")], default_namespace="a")
        store.replace_view("a.v", columns=[("id", "int")], representations=[("spark", "SELECT 2")], default_namespace="a")
    with sqlite3.connect(path) as raw:
        raw.execute(damage, (value,))
    raw.close()
    return path


@pytest.mark.parametrize("version_id", [2**31, -(2**31) - 1, 2**40])
def test_a_version_id_out_of_range_in_view_versions_is_damage(tmp_path, version_id):
    """A load reads the versions' ids without parsing the versions: an id no version can have must
    fail as damage there, not make the next version id (a write then failed with pydantic's error
    from building its event, and would have written an id past the Iceberg range)."""
    from viewstore import ViewChange, ViewStore

    path = _two_versions_then(tmp_path, "UPDATE view_versions SET version_id = ? WHERE version_id = 1", version_id)
    with ViewStore(path, actor="me") as store:
        events = store.event_count()
        with pytest.raises(CorruptLogError, match="rebuild"):
            store.alter_view("a.v", ViewChange.update_representation("spark", "SELECT 3"))
        assert store.event_count() == events
        store.rebuild()
        assert store.alter_view("a.v", ViewChange.update_representation("spark", "SELECT 3")).current_version_id == 3


@pytest.mark.parametrize("version_id", [1, 2])
def test_a_version_without_representations_in_view_versions_is_damage(tmp_path, version_id):
    """The library never writes a version without a representation, so such a row is damage when it
    is read: export_hms of a damaged current version raised a stray ValueError from unpacking none,
    and a write could reuse or index such a version."""
    from viewstore import ViewStore

    path = _two_versions_then(tmp_path, "UPDATE view_versions SET representations = '[]' WHERE version_id = ?",
                              version_id)
    with ViewStore(path, actor="me") as store:
        events = store.event_count()
        with pytest.raises(CorruptLogError, match="without representations"):
            store.load_view("a.v").versions
        if version_id == 2:  # the current version
            with pytest.raises(CorruptLogError, match="rebuild"):
                store.export_hms("a.v", "spark")
        with pytest.raises(CorruptLogError, match="rebuild"):  # the definition index reads every version
            store.replace_view("a.v", columns=[("id", "int")], representations=[("spark", "SELECT 3")],
                               default_namespace="a")
        assert store.event_count() == events
        store.rebuild()
        assert store.export_hms("a.v", "spark")["viewOriginalText"] == "SELECT 2"


def test_fold_stored_refuses_a_version_without_representations():
    payload = {"version": {**VERSION, "version_id": 2, "representations": []}, "current_version_id": 2,
               "log_entry": {"timestamp_ms": 6, "version_id": 2}}
    with pytest.raises(CorruptLogError, match="position 2"):
        fold_stored({"u": created()}, [stored(2, 2, "view.replaced", payload)])
