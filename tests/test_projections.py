import json
import subprocess
import sys

import pytest

from viewstore import Column, ViewStore
from viewstore.errors import CorruptLogError, DamagedProjectionsError
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


def test_a_removal_of_several_properties_removes_each():
    state = apply(created(), row(2, 2, "view.properties_set"), {"updates": {"a": "1", "b": "2", "c": "3"}})
    state = apply(state, row(3, 3, "view.properties_removed"), {"removals": ["a", "gone", "c", "k"]})
    assert state.properties == {"b": "2"}


def test_a_stored_column_without_a_comment_or_nullability_reads_as_the_event_models_read_it():
    """The stored shape lets a column leave out its comment and nullability: the view's column is
    then nullable with no comment, as history() decodes the same event."""
    from viewstore.events import decode_event
    from viewstore.model import Column

    version = {**VERSION, "columns": [{"name": "x", "type": "int"}]}
    payload = {"version": version, "current_version_id": 1, "log_entry": {"timestamp_ms": 5, "version_id": 1}}
    states = {}
    fold_stored(states, [stored(1, 1, "view.created", payload)])
    envelope = {"position": 1, "commit_id": "c", "view_id": "u", "stream_version": 1, "type": "view.created",
                "identifier": ("a", "v"), "actor": "me", "occurred_at": 5}
    columns = state_to_view(states["u"]).columns
    assert columns == decode_event(envelope, payload).version.columns == (Column("x", "int"),)


def test_fold_refuses_gaps_and_orphans():
    """Damage to the log itself is a CorruptLogError that is no DamagedProjectionsError: rebuild()
    folds the same log, so it cannot repair it (the CLI names no command for it)."""
    with pytest.raises(CorruptLogError, match="^view u: stream version 3 follows 1$") as raised:
        apply(created(), row(2, 3, "view.dropped"), {})
    assert type(raised.value) is CorruptLogError
    with pytest.raises(CorruptLogError, match="^view.dropped at position 1 for view u, which was never created$"):
        apply(None, row(1, 1, "view.dropped"), {})
    with pytest.raises(CorruptLogError,
                       match="^view.created at position 2 for view u, which already exists$") as raised:
        apply(created(), row(2, 2, "view.created"), {})
    assert type(raised.value) is CorruptLogError


def test_a_damaged_value_in_a_message_is_shown_as_what_the_row_held():
    """A value of the wrong type (a row written behind the library's back) is named by its repr and
    type: a stream version of text "0x2" or of bytes is not one that reads like the number 2."""
    for version, shown in (("0x2", "'0x2' (str)"), (b"\x02", "b'\\x02' (bytes)"), (2.5, "2.5 (float)")):
        with pytest.raises(CorruptLogError) as raised:
            apply(created(), row(2, version, "view.dropped"), {})
        assert str(raised.value) == f"view u: stream version {shown} follows 1"
    with pytest.raises(CorruptLogError) as raised:
        apply(None, (1, "c", b"u", 1, "view.dropped", "a.v", "me", 5), {})
    assert str(raised.value) == "view.dropped at position 1 for view b'u' (bytes), which was never created"
    with pytest.raises(CorruptLogError) as raised:
        fold_stored({}, [(1, "c", "u", 1, b"view.created", "a.v", "me", 5, "{}")])
    assert str(raised.value).startswith("event at position 1 (b'view.created' (bytes)) is not an event")


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
    # a creation that names no mode made a definer view, as the model says
    assert states["u"].security_mode == "DEFINER"


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
    ("view.replaced", {"version": {**VERSION, "version_id": 2}, "current_version_id": 7,
                       "log_entry": {"timestamp_ms": 6, "version_id": 7}},
     "version 7 of view u current, which it does not have"),
    ("view.replaced", {"version": {**VERSION, "representations": [{"dialect": "spark", "sql": "SELECT 2"}]},
                       "current_version_id": 1, "log_entry": {"timestamp_ms": 6, "version_id": 1}},
     "adds version 1 to view u, which has a version of that id"),  # a version is never redefined
    ("view.replaced", {"version": VERSION, "current_version_id": None, "log_entry": None},
     "adds version 1 to view u, which has a version of that id"),
    # a version-log entry names the version its event leaves current
    ("view.replaced", {"version": {**VERSION, "version_id": 2}, "current_version_id": 2,
                       "log_entry": {"timestamp_ms": 6, "version_id": 1}},
     "logs version 1 of view u as current, where version 2 is"),
    ("view.rolled_back", {"current_version_id": 1, "log_entry": {"timestamp_ms": 6, "version_id": 2}},
     "logs version 2 of view u as current, where version 1 is"),
    ("view.replaced", {"version": {**VERSION, "version_id": 2}, "current_version_id": None,
                       "log_entry": {"timestamp_ms": 6, "version_id": 2}},
     "logs version 2 of view u as current, where version 1 is"),
    ("view.exploded", {}, "no event type has that name"),
])
def test_fold_stored_refuses_rows_the_library_did_not_write(kind, payload, why):
    """A row that entered the log behind the library's back ends in CorruptLogError, named by position."""
    with pytest.raises(CorruptLogError, match="position 2") as refused:
        fold_stored({"u": created()}, [stored(2, 2, kind, payload)])
    assert why in str(refused.value)


@pytest.mark.parametrize("kind, payload, why", [
    ("view.created", {"properties": {"k": "v"}}, "creates view u without a version"),
    ("view.imported", {"source": "iceberg", "versions": [VERSION], "current_version_id": 2,
                       "version_log": [{"timestamp_ms": 5, "version_id": 1}]},
     "imports view u with current version 2, which it does not carry"),
    ("view.imported", {"source": "iceberg", "versions": [VERSION, {**VERSION, "timestamp_ms": 6}],
                       "current_version_id": 1, "version_log": [{"timestamp_ms": 5, "version_id": 1}]},
     "adds version 1 to view u, which has a version of that id"),
])
def test_fold_stored_refuses_a_creating_event_the_library_did_not_write(kind, payload, why):
    with pytest.raises(CorruptLogError, match="position 1") as refused:
        fold_stored({}, [stored(1, 1, kind, payload)])
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


@pytest.mark.parametrize("field, value", [("actor", 7), ("actor", ""), ("identifier", None), ("at", "late")])
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
    again = ViewState.from_json(data, lambda named: {1: VERSION, 2: "not named by the snapshot"},
                                lambda n: list(state.version_log)[:n])
    assert again.properties["n"] == str(SNAPSHOT_EVERY) and again.versions == {1: VERSION}
    assert json.loads(again.to_json()) == json.loads(data)


def test_the_ddl_is_what_the_sqlmodel_declarations_compile_to():
    from viewstore import projections, schema

    assert projections.DDL == schema.ddl(), "paste the output of `python -m viewstore.schema` into projections.DDL"
    printed = subprocess.run([sys.executable, "-m", "viewstore.schema"], capture_output=True, text=True, check=True)
    assert printed.stdout == projections.DDL  # the output to paste is the text itself, not a line more
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
        store.create_view("a.v", columns=[("id", "int")],
                          representations=[("spark", "SELECT 1")], default_namespace="a")
        store.replace_view("a.v", columns=[("id", "int")],
                           representations=[("spark", "SELECT 2")], default_namespace="a")
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
        with pytest.raises(DamagedProjectionsError, match="rebuild"):
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
            with pytest.raises(DamagedProjectionsError, match="rebuild"):
                store.export_hms("a.v", "spark")
        with pytest.raises(DamagedProjectionsError, match="rebuild"):  # the definition index reads every version
            store.replace_view("a.v", columns=[("id", "int")], representations=[("spark", "SELECT 3")],
                               default_namespace="a")
        assert store.event_count() == events
        store.rebuild()
        assert store.export_hms("a.v", "spark")["viewOriginalText"] == "SELECT 2"


@pytest.mark.parametrize("column, value, call, where", [
    ("name", b"v", lambda store: store.list_views(), "a name or namespace in views (b'v' (bytes) is not text)"),
    ("name", b"v", lambda store: store.list_views("a"), "a name in views of namespace a (b'v' (bytes) is not text)"),
    ("namespace", b"a", lambda store: store.list_views(), "a name or namespace in views (b'a' (bytes) is not text)"),
    ("namespace", b"a", lambda store: store.list_namespaces(), "a namespace in views (b'a' (bytes) is not text)"),
], ids=["name, all views", "name, one namespace", "namespace, all views", "namespace, namespaces"])
def test_a_name_or_namespace_that_is_not_text_in_views_is_damage(tmp_path, column, value, call, where):
    """The library writes names and namespaces as text: one written as bytes behind its back fails a
    call that lists it as damage, which names what the row held as other damage does (errors._held:
    its repr and its type, so b'a' is not taken for the namespace a), and rebuild() repairs it."""
    from viewstore import ViewStore

    path = _two_versions_then(tmp_path, f"UPDATE views SET {column} = ?", value)
    with ViewStore(path, actor="me") as store:
        with pytest.raises(DamagedProjectionsError) as raised:
            call(store)
        assert str(raised.value) == f"the projections are damaged at {where}; rebuild() repairs them from the log"
        assert store.rebuild()["views"] == 1
        assert store.list_views() == store.list_views("a") == [("a", "v")] and store.list_namespaces() == [("a",)]


def test_the_namespaces_near_a_typed_one_are_sought_each_side_of_it(tmp_path):
    """For the hint of a mistyped namespace: namespaces_near reads up to each_side live namespaces
    sorting before the typed one, nearest first, and as many after it, each namespace once however
    many views it holds, never the typed one itself, one whose views are all dropped or one that is
    not text (a damaged row); namespaces_among keeps the ones holding a live view, and
    namespace_next_letters of the empty prefix lists the first letters of the live namespaces, up to a
    bound."""
    import sqlite3

    from viewstore import ViewStore

    path = tmp_path / "near.db"
    with ViewStore(path, actor="me") as store:
        for ident in ("a.v", "b.v", "c.v", "d.v", "d.w", "d.x", "d.e.v", "f.v", "g.v", "h.v", "k.v"):
            store.create_view(ident, columns=[("x", "int")], representations=[("spark", "SELECT 1 AS x")],
                              default_namespace="a")
        store.drop_view("g.v")
    with sqlite3.connect(path) as raw:
        raw.execute("UPDATE views SET namespace = CAST('k' AS BLOB) WHERE namespace = 'k'")
    raw.close()
    with ViewStore(path, actor="me") as store:
        p = store._projections
        assert p.namespaces_near("d", 2) == ["c", "b", "d.e", "f"]  # d.e sorts before dd: '.' < 'd'
        assert p.namespaces_near("dd", 3) == ["d.e", "d", "c", "f", "h"]  # g dropped, k not text
        assert p.namespaces_near("a", 2) == ["b", "c"]
        assert p.namespaces_near("zz", 100) == ["h", "f", "d.e", "d", "c", "b", "a"]
        assert sorted(p.namespaces_among(["a", "g", "zz", "d.e", "d", "k"])) == ["a", "d", "d.e"]
        assert p.namespaces_among([]) == []
        assert p.namespace_next_letters([""], 100, 100) == [("", c) for c in "abcdfh"]
        assert p.namespace_next_letters([""], 2, 2) == [("", "a"), ("", "b")]


def test_the_names_near_a_live_one_hold_it_once_after_it_and_a_full_side_before_it(tmp_path):
    """names_near of a name that a live view has (a name in another namespace, compared for the hint
    of a mistyped one): each_side names strictly before it, then it and the rest after it (planted,
    the side before taking it too left one name out and listed it twice)."""
    from viewstore import ViewStore

    with ViewStore(tmp_path / "near.db", actor="me") as store:
        for ident in ("s.a", "s.b", "s.c", "s.d", "s.e"):
            store.create_view(ident, columns=[("x", "int")], representations=[("spark", "SELECT 1 AS x")],
                              default_namespace="s")
        assert store._projections.names_near("s", "c", 2) == ["b", "a", "c", "d"]
        assert store._projections.names_near("s", "cc", 2) == ["c", "b", "d", "e"]


def test_the_letters_after_a_prefix_are_sought_by_comparison_within_a_budget(tmp_path):
    """next_letters lists, for each prefix, the letters that follow it among the live names of the
    namespace asked, in sort order: a prefix holding a wildcard of LIKE or GLOB (%, _, *, ?, [) as
    written, not the names it would match; a name equal to the prefix has none, a dropped name and one
    that is not text (a damaged row) none; at most at_most a prefix, budget seeks in all (a letter
    each, and one a prefix whose letters end), every prefix's first before any second (planted, names
    matched with LIKE of the prefix and a % listed after ab% letters of names not beginning with it).
    namespace_next_letters does the same for the live namespaces; the empty prefix's are the first
    letters."""
    import sqlite3

    from viewstore import ViewStore

    path = tmp_path / "letters.db"
    names = ("ab%c", "ab%d", "ab_e", "abxf", "ab*g", "abyh", "ab?i", "ab[j", "ab[", "abzk", "ab%dropped", "ab_blob",
             "b1")
    with ViewStore(path, actor="me") as store:
        for name in names:
            store.create_view(f"s.{name}", columns=[("x", "int")], representations=[("spark", "SELECT 1 AS x")],
                              default_namespace="a")
            store.create_view(f"{name}.v", columns=[("x", "int")], representations=[("spark", "SELECT 1 AS x")],
                              default_namespace="a")
        store.create_view("t.ab%z", columns=[("x", "int")], representations=[("spark", "SELECT 1 AS x")],
                          default_namespace="a")
        store.drop_view("s.ab%dropped")
        store.drop_view("ab%dropped.v")
    with sqlite3.connect(path) as raw:
        raw.execute("UPDATE views SET name = CAST('ab_blob' AS BLOB) WHERE name = 'ab_blob'")
        raw.execute("UPDATE views SET namespace = CAST('ab_blob' AS BLOB) WHERE namespace = 'ab_blob'")
    raw.close()
    wildcards = ["ab%", "ab_", "ab*", "ab?", "ab[", "b1", "zz"]
    with ViewStore(path, actor="me") as store:
        p = store._projections
        for letters in (p.next_letters("s", wildcards, 100, 1000), p.namespace_next_letters(wildcards, 100, 1000)):
            assert letters == [("ab%", "c"), ("ab_", "e"), ("ab*", "g"), ("ab?", "i"), ("ab[", "j"), ("ab%", "d")]
        assert p.next_letters("s", ["", "a", "ab%"], 100, 1000) == [
            ("", "a"), ("a", "b"), ("ab%", "c"), ("", "b"), ("ab%", "d")]
        assert p.next_letters("s", ["", "a", "ab%"], 1, 1000) == [("", "a"), ("a", "b"), ("ab%", "c")]
        # four seeks: the first letter of each prefix, then the second of the first
        assert p.next_letters("s", ["", "a", "ab%"], 100, 4) == [("", "a"), ("a", "b"), ("ab%", "c"), ("", "b")]
        assert p.next_letters("s", ["ab"], 100, 1000) == [("ab", c) for c in "%*?[_xyz"]
        assert p.next_letters("t", ["ab"], 100, 1000) == [("ab", "%")]
        assert p.next_letters("nowhere", ["", "ab"], 100, 1000) == []
        assert p.next_letters("s", [""], 100, 100) == [("", "a"), ("", "b")]
        assert p.namespace_next_letters([""], 100, 100) == [("", c) for c in "abst"]


def test_fold_stored_refuses_a_version_without_representations():
    payload = {"version": {**VERSION, "version_id": 2, "representations": []}, "current_version_id": 2,
               "log_entry": {"timestamp_ms": 6, "version_id": 2}}
    with pytest.raises(CorruptLogError, match="position 2"):
        fold_stored({"u": created()}, [stored(2, 2, "view.replaced", payload)])


# -- snapshots: their size, the formats of earlier releases, damage ------------------------------


def _long_histories(path):
    """A store file holding view a.w (created as a.v: new versions, versions reused, rollbacks,
    comments, a rename; 250 events, so snapshots at stream versions 100 and 200) and view n.imp,
    imported with version ids 1, 2, 5 and 7 and then changed 110 times (its snapshot names three
    runs of ids). Returns the two views' histories."""
    from viewstore import ViewChange, ViewStore
    from viewstore.model import Column, SQLRepresentation, VersionLogEntry, ViewVersion

    def version(i, ts):
        return ViewVersion(version_id=i, timestamp_ms=ts, schema_id=0, columns=(Column("c", "int"),),
                           representations=(SQLRepresentation("spark", f"SELECT {i} AS c"),), default_namespace=("n",))

    with ViewStore(path, actor="me") as store:
        name = "a.v"
        store.create_view(name, columns=[("id", "int")], representations=[("spark", "SELECT 0")], default_namespace="a")
        for i in range(1, 250):
            if i == 120:
                name = "a.w"
                store.rename_view("a.v", name)
            elif i % 41 == 0:  # the definition of version 1 again: reused, a log entry and no version
                store.replace_view(name, columns=[("id", "int")], representations=[("spark", "SELECT 0")],
                                   default_namespace="a")
            elif i % 37 == 0:
                store.rollback_view(name, 2)
            elif i % 10 == 0:
                store.replace_view(name, columns=[("id", "int")], representations=[("spark", f"SELECT {i}")],
                                   default_namespace="a")
            else:
                store.alter_view(name, ViewChange.update_comment(f"c{i}"))
        store.import_view("n.imp", source="test", versions=[version(1, 1000), version(2, 1000), version(5, 2000),
                                                            version(7, 3000)],
                          version_log=[VersionLogEntry(timestamp_ms=1000, version_id=1),
                                       VersionLogEntry(timestamp_ms=2000, version_id=5),
                                       VersionLogEntry(timestamp_ms=3000, version_id=7)], current_version_id=7)
        for i in range(110):
            if i % 50 == 0:
                store.alter_view("n.imp", ViewChange.update_representation("spark", f"SELECT {i} AS c"))
            else:
                store.alter_view("n.imp", ViewChange.set_property("i", str(i)))
        return store.history("a.w"), store.history("n.imp")


def _answers(path, histories):
    """Every view as_of each event of these histories, and as_of each event's time, read by a fresh
    store (no snapshot parsed before), with the snapshots it parsed on the way."""
    from viewstore import ViewStore

    with ViewStore(path, actor="me") as store:
        answers = [(store.load_view(history[-1].view, as_of=e), store.load_view(history[-1].view, as_of=e.occurred_at))
                   for history in histories for e in history]
        for event_view, time_view in answers:  # every field: the lazily built history too
            assert event_view.versions and time_view.version_log
        return answers, sorted(store._projections._snapshots)


def _previous_release_snapshot(state, whole_versions):
    """The snapshot of a state as the previous release wrote it (its ViewState.to_json): the version
    ids listed, the log's entries copied; or, before that, the versions themselves copied."""
    from viewstore.log import dumps

    data = {"view_id": state.view_id, "namespace": state.namespace, "name": state.name, "live": state.live,
            "stream_version": state.stream_version, "current_version_id": state.current_version_id,
            "properties": state.properties, "security_mode": state.security_mode, "creator": state.creator,
            "created_at": state.created_at, "modifier": state.modifier, "modified_at": state.modified_at,
            "last_position": state.last_position}
    if whole_versions:
        data["versions"] = [state.versions[i] for i in sorted(state.versions)]
    else:
        data["version_ids"] = sorted(state.versions)
    data["version_log"] = list(state.version_log)
    return dumps(data)


@pytest.mark.parametrize("whole_versions", [False, True], ids=["version ids listed", "versions copied"])
def test_snapshots_of_earlier_releases_answer_as_of_the_same(tmp_path, whole_versions):
    """A store made by an earlier release keeps the snapshots it wrote: as_of through them answers
    what as_of through the snapshots of this release answers, and rebuild() rewrites them in this
    release's format."""
    import sqlite3

    from viewstore import ViewStore

    path = tmp_path / "s.db"
    histories = _long_histories(path)
    wanted, parsed = _answers(path, histories)
    assert len(parsed) == 3  # a.w at stream versions 100 and 200, n.imp at 100
    with ViewStore(path, actor="me") as store:
        current = store.projection_dump()
        projections = store._projections
        old = [(_previous_release_snapshot(projections.snapshot_before(view_id, None, version), whole_versions),
                view_id, version) for view_id, version in parsed]
    with sqlite3.connect(path) as raw:  # the rows as the earlier release left them
        raw.executemany("UPDATE view_snapshots SET state = ? WHERE view_id = ? AND stream_version = ?", old)
    raw.close()
    key = "versions" if whole_versions else "version_ids"
    assert all(key in json.loads(text) and "version_log" in json.loads(text) for text, _, _ in old)
    answers, parsed_again = _answers(path, histories)
    assert parsed_again == parsed  # read through the old snapshots
    assert answers == wanted
    with ViewStore(path, actor="me") as store:
        assert store.rebuild() == {"views": 0, "view_versions": 0, "view_version_log": 0, "view_snapshots": 3}
        assert store.projection_dump() == current
    assert _answers(path, histories)[0] == wanted


def test_a_snapshot_is_as_large_at_a_thousand_versions_as_at_a_hundred(tmp_path):
    """A snapshot names its versions as runs of ids and its version log by its length: its size does
    not grow with the history (listing every id and log entry made the one at 10,000 versions 260 kB,
    and the snapshots of a view together grew as the square of its history)."""
    import sqlite3

    from viewstore import ViewStore

    path = tmp_path / "s.db"
    with ViewStore(path, actor="me") as store:
        store.create_view("a.v", columns=[("id", "int")],
                          representations=[("spark", "SELECT 0")], default_namespace="a")
        for i in range(1, 1000):  # every event a new version and a log entry
            store.replace_view("a.v", columns=[("id", "int")], representations=[("spark", f"SELECT {i}")],
                               default_namespace="a")
        assert len(store.load_view("a.v").version_log) == 1000
    with sqlite3.connect(path) as raw:
        sizes = dict(raw.execute("SELECT stream_version, length(state) FROM view_snapshots"))
    raw.close()
    assert sorted(sizes) == list(range(100, 1001, 100))
    # five numbers gain a digit from 100 to 1,000 (stream version, current version, last position,
    # the run's last id, the log's length): nothing else may grow
    assert sizes[1000] - sizes[100] <= 5 and max(sizes.values()) < 400


def _snapshot_damage(data):
    """Damage to the snapshot text of view a.w at stream version 100 (1 to 10 its versions, 1 to 14
    its log): each makes the snapshot name what it cannot, or write what no release wrote."""
    d = json.loads(data)
    runs, length = d["version_id_runs"], d["version_log_length"]
    assert runs == [[1, 10]] and length == 14, "the history of _long_histories changed"
    cases = {
        "a version view_versions lacks": {"version_id_runs": [[1, 10], [500, 500]]},
        "its current version left out": {"version_id_runs": [[1, 9]]},  # version 10; later events make 13 current
        "a run as long as all ids": {"version_id_runs": [[-2**31, 2**31 - 1]]},
        "a run past the 32-bit ids": {"version_id_runs": [[1, 2**31]]},
        "runs out of order": {"version_id_runs": [[5, 10], [1, 3]]},
        "runs that touch": {"version_id_runs": [[1, 4], [5, 10]]},
        "a run backwards": {"version_id_runs": [[10, 1]]},
        "a run of text": {"version_id_runs": [["1", "10"]]},
        "runs not a list": {"version_id_runs": {"1": 10}},
        "no versions named": {"version_id_runs": None},
        "a log longer than the stream's": {"version_log_length": 10**6},
        "a log of negative length": {"version_log_length": -1},
        "a log past any length": {"version_log_length": 2**70},
        "a log past SQLite's integers": {"version_log_length": 2**63},  # JSON reads it; SQLite cannot take it
        "a log length of text": {"version_log_length": "14"},
        "both the log and its length": {"version_log": [[1, 1]]},
        "both ids and runs": {"version_ids": list(range(1, 11))},
    }
    for what, change in cases.items():
        yield what, json.dumps({**d, **change})


SNAPSHOT_ROW_DAMAGE = {
    "a version row deleted": "DELETE FROM view_versions WHERE view_id = ? AND version_id = 3",
    "a log row deleted": "DELETE FROM view_version_log WHERE view_id = ? AND seq = 4",
    "a log row moved before the first": "UPDATE view_version_log SET seq = 0 WHERE view_id = ? AND seq = 4",
    "a log row's seq made real": "UPDATE view_version_log SET seq = 3.5 WHERE view_id = ? AND seq = 4",
    "a log row's seq made text": "UPDATE view_version_log SET seq = 'x' WHERE view_id = ? AND seq = 4",
}


@pytest.mark.parametrize("damage", [*(what for what, _ in _snapshot_damage(json.dumps(
    {"version_id_runs": [[1, 10]], "version_log_length": 14}))), *SNAPSHOT_ROW_DAMAGE])
def test_a_damaged_snapshot_or_the_rows_it_names_end_in_corrupt_log_error(tmp_path, damage):
    """as_of through a snapshot that is damaged, or that names rows view_versions or
    view_version_log lack, raises CorruptLogError; rebuild() repairs, and as_of answers as before."""
    import sqlite3

    from viewstore import ViewStore

    path = tmp_path / "s.db"
    history = _long_histories(path)[0]
    later = history[149]  # folded from the snapshot at stream version 100
    with ViewStore(path, actor="me") as store:
        wanted = store.load_view("a.w", as_of=later)
    with sqlite3.connect(path) as raw:
        (data,) = raw.execute("SELECT state FROM view_snapshots WHERE view_id = ? AND stream_version = 100",
                              (later.view_id,)).fetchone()
        if damage in SNAPSHOT_ROW_DAMAGE:
            raw.execute(SNAPSHOT_ROW_DAMAGE[damage], (later.view_id,))
        else:
            damaged = dict(_snapshot_damage(data))[damage]
            raw.execute("UPDATE view_snapshots SET state = ? WHERE view_id = ? AND stream_version = 100",
                        (damaged, later.view_id))
    raw.close()
    with ViewStore(path, actor="me") as store:
        with pytest.raises(DamagedProjectionsError, match="rebuild"):
            store.load_view("a.w", as_of=later)
        with pytest.raises(DamagedProjectionsError, match="rebuild"):
            store.load_view("a.w", as_of=later.occurred_at)
        repaired = "view_snapshots" if damage not in SNAPSHOT_ROW_DAMAGE else \
            "view_versions" if damage.startswith("a version row") else "view_version_log"
        rows = 2 if damage.startswith(("a log row moved", "a log row's seq")) else 1  # a row gone, and one not due
        assert store.rebuild() == {table: rows if table == repaired else 0 for table in PROJECTION_TABLES}
        assert store.load_view("a.w", as_of=later) == wanted


def test_a_snapshot_reads_its_log_by_its_length():
    """from_json asks its log reader for the first so many entries, which must be all of them."""
    state = created()
    for v in range(2, SNAPSHOT_EVERY + 1):
        state = apply(state, row(v, v, "view.rolled_back"), {"current_version_id": 1,
                                                             "log_entry": {"timestamp_ms": v, "version_id": 1}})
    (_, _, data), = state.snapshots
    assert json.loads(data)["version_log_length"] == SNAPSHOT_EVERY
    entries = list(state.version_log)
    asked = []
    read = ViewState.from_json(data, lambda runs: asked.append(runs) or {1: VERSION},
                               lambda n: asked.append(n) or entries[:n])
    assert read.version_log == entries and read.to_json() == data and asked == [[[1, 1]], SNAPSHOT_EVERY]
    with pytest.raises(DamagedProjectionsError, match="names the first 100 entries of its version log, and "
                                                        "view_version_log holds 99"):
        ViewState.from_json(data, lambda runs: {1: VERSION}, lambda n: entries[:n - 1])


@pytest.mark.parametrize("named", ["version_ids", "versions"])
def test_a_snapshot_of_an_earlier_release_naming_a_version_twice_is_damaged(named):
    state = created()
    data = json.loads(state.to_json())
    del data["version_id_runs"], data["version_log_length"]
    data[named] = [1, 1] if named == "version_ids" else [VERSION, VERSION]
    data["version_log"] = [[5, 1]]
    with pytest.raises(DamagedProjectionsError, match="a snapshot in view_snapshots is damaged .*given twice"):
        ViewState.from_json(json.dumps(data), lambda runs: {1: VERSION}, lambda n: [])


@pytest.mark.parametrize("change, why", [
    ({"versions": {"1": VERSION}}, "its versions are not a list"),
    ({"version_ids": ["1"]}, "it does not name its versions"),
    ({"version_log": None}, "its version log is not a list"),
    ({"version_log": ["5"]}, "the version log holds '5', not a (timestamp_ms, version_id) pair"),
], ids=["versions not a list", "version ids of text", "log not a list", "a log entry not a pair"])
def test_a_damaged_snapshot_of_an_earlier_release_ends_in_corrupt_log_error(tmp_path, change, why):
    """A snapshot as an earlier release wrote it (its version ids or its versions listed, its log's
    entries copied) that holds what no release wrote fails as_of through it; rebuild() repairs it."""
    import sqlite3

    from viewstore import ViewChange, ViewStore

    path = tmp_path / "s.db"
    with ViewStore(path, actor="me") as store:
        store.create_view("a.v", columns=[("id", "int")], representations=[("spark", "SELECT 1")],
                          default_namespace="a")
        for i in range(SNAPSHOT_EVERY + 9):
            store.alter_view("a.v", ViewChange.update_comment(f"c{i}"))
        later = store.history("a.v")[SNAPSHOT_EVERY + 4]  # folded from the snapshot at stream version 100
        wanted = store.load_view("a.v", as_of=later)
    with sqlite3.connect(path) as raw:
        (data,) = raw.execute("SELECT state FROM view_snapshots WHERE stream_version = ?", (SNAPSHOT_EVERY,)).fetchone()
        earlier = json.loads(data)
        assert earlier.pop("version_id_runs") == [[1, 1]] and earlier.pop("version_log_length") == 1
        earlier.update({"version_ids": [1], "version_log": [[wanted.version_log[0].timestamp_ms, 1]], **change})
        raw.execute("UPDATE view_snapshots SET state = ? WHERE stream_version = ?",
                    (json.dumps(earlier), SNAPSHOT_EVERY))
    raw.close()
    with ViewStore(path, actor="me") as store:
        with pytest.raises(DamagedProjectionsError) as raised:
            store.load_view("a.v", as_of=later)
        assert str(raised.value) == f"a snapshot in view_snapshots is damaged ({why}); rebuild() repairs it"
        assert store.rebuild()["view_snapshots"] == 1
        assert store.load_view("a.v", as_of=later) == wanted


def test_as_of_folds_from_a_parsed_snapshot_as_it_was_each_time(tmp_path):
    """as_of folds the events after a snapshot into a copy of the parsed snapshot it keeps: a later
    as_of through the same snapshot must not see what the first one folded."""
    from viewstore import ViewChange, ViewStore

    with ViewStore(tmp_path / "s.db", actor="me") as store:
        store.create_view("a.v", columns=[("id", "int")],
                          representations=[("spark", "SELECT 1")], default_namespace="a")
        for i in range(2, SNAPSHOT_EVERY + 30):
            change = ViewChange.set_property("late", "1") if i == SNAPSHOT_EVERY + 20 else \
                ViewChange.update_comment(f"c{i}")
            store.alter_view("a.v", change)
        history = store.history("a.v")
    with ViewStore(tmp_path / "s.db", actor="me") as store:
        assert store.load_view("a.v", as_of=history[SNAPSHOT_EVERY + 25]).properties["late"] == "1"
        early = store.load_view("a.v", as_of=history[SNAPSHOT_EVERY + 5])
        assert early.properties == {"comment": f"c{SNAPSHOT_EVERY + 6}"}
        assert len(store._projections._snapshots) == 1  # both folded from the one snapshot


def test_a_version_log_sees_its_own_entries_only():
    """States of a stream share their version log's list, each seeing its first ``len`` entries:
    a state's log reads the same after a later state of the stream appended to the list."""
    from viewstore.projections import VersionLog

    log = VersionLog([(1, 1), (2, 2)])
    later = log.copy()
    later.append((3, 3))
    assert (log[-1], log[-2], log[1], log[:]) == ((2, 2), (1, 1), (2, 2), [(1, 1), (2, 2)])
    assert log.since(1) == [(2, 2)] and log.since(0) == list(log) == [(1, 1), (2, 2)] and len(log) == 2
    for beyond in (2, -3):
        with pytest.raises(IndexError):
            log[beyond]
    assert later[-1] == (3, 3) and later.since(2) == [(3, 3)] and log == [(1, 1), (2, 2)] != later
    assert (repr(log), repr(later)) == ("VersionLog([(1, 1), (2, 2)])", "VersionLog([(1, 1), (2, 2), (3, 3)])")
    assert log.__eq__({(1, 1), (2, 2)}) is NotImplemented
    log.append((4, 4))  # on a list of its own: the later state's entry is not its
    assert list(log) == [(1, 1), (2, 2), (4, 4)] and list(later) == [(1, 1), (2, 2), (3, 3)]



def test_the_versions_of_a_state_are_its_own_only():
    """States of a stream share their versions' shelf, each seeing its first ``len`` entries: what a
    later state of the stream added is in none of an earlier one's reads, and a version the earlier
    one adds then (on a shelf of its own) is in none of the later one's."""
    from viewstore.projections import Versions

    def version(version_id, schema_id, sql):
        return {**VERSION, "version_id": version_id, "schema_id": schema_id,
                "representations": [{"dialect": "spark", "sql": sql}]}

    def sql(v):
        return v["representations"][0]["sql"]

    versions = Versions("u", [version(1, 0, "SELECT 1")])
    later = versions.copy()
    assert later.add(2, version(2, 3, "SELECT 2"))
    assert later.places(sql, "SELECT 2") == [1] and later.first_place(sql, "SELECT 2") == 1
    assert (later.max_id(), later.max_schema_id(), later.model(2).representations[0].sql) == (2, 3, "SELECT 2")
    assert 2 not in versions and list(versions) == [1] and len(versions) == 1 and versions.model(2) is None
    assert (repr(versions), repr(later)) == ("Versions([1])", "Versions([1, 2])")
    with pytest.raises(KeyError):
        versions.of([2])
    assert versions.places(sql, "SELECT 2") == [] and versions.first_place(sql, "SELECT 2") is None
    assert (versions.max_id(), versions.max_schema_id()) == (1, 0)
    assert versions.add(5, version(5, 1, "SELECT 5"))
    assert list(versions) == [1, 5] and list(later) == [1, 2] and 5 not in later and 2 not in versions
    assert (versions.max_id(), versions.max_schema_id(), versions.model(5).representations[0].sql) == (5, 1, "SELECT 5")
    assert versions.first_place(sql, "SELECT 5") == 1 and later.first_place(sql, "SELECT 5") is None
    assert (later.max_id(), later.max_schema_id()) == (2, 3)
    assert later.add(4, version(4, 1, "SELECT 4")) and (later.max_id(), later.max_schema_id()) == (4, 3)


def test_the_first_version_of_a_definition_is_found_after_another_was():
    """first_place indexes the versions only as far as its first match: a later look-up of one past
    it goes on from there."""
    from viewstore.projections import Versions

    versions = Versions("u", [{**VERSION, "version_id": i,
                               "representations": [{"dialect": "spark", "sql": f"SELECT {i}"}]}
                              for i in (1, 2, 3)])

    def sql(v):
        return v["representations"][0]["sql"]

    assert versions.first_place(sql, "SELECT 1") == 0
    assert versions.first_place(sql, "SELECT 3") == 2 and versions.places(sql, "SELECT 2") == [1]
    assert versions.first_place(sql, "SELECT 4") is None and versions.first_place(sql, "SELECT 2") == 1


def test_a_snapshot_names_any_32_bit_version_ids_and_a_log_of_a_length_from_0():
    from viewstore.projections import _check_runs, _named_log

    for runs in ([[-2**31, -2**31]], [[-2**31 + 1, 3], [5, 2**31 - 1]], []):
        assert _check_runs(runs) is runs
    for runs in ([[1, 2], [3, 4]], [[2, 1]], [[0, 2**31]], [[-2**31 - 1, 0]]):
        with pytest.raises(TypeError, match="not by a run"):
            _check_runs(runs)
    assert _named_log("u", 0, lambda n: []) == []
    for length in (-1, 2**62):
        with pytest.raises(TypeError, match=f"^its version log is named by {length}, not by a length$"):
            _named_log("u", length, lambda n: [])


def test_the_models_of_a_view_read_from_its_rows_have_the_fields_set_their_constructors_set(tmp_path):
    """A view read from the projections (a store opened again: nothing cached) builds its versions,
    columns, representations and log entries without validating them again; each has every field
    set, as the constructor and a validation of its dump set them, so that a dump of the set fields
    alone (exclude_unset) gives them all; they equal those the write gave, a summary read-only."""
    with ViewStore(tmp_path / "s.db") as store:
        store.create_view("a.v", columns=[("c", "int"), Column("d", "string", comment="d", nullable=False),
                                          ("e", "decimal(10, 2)")],
                          representations=[("spark", "SELECT 1 AS c, 'x' AS d, 1.5 AS e")], default_namespace="a",
                          summary={"engine-name": "spark"})
        written = store.replace_view("a.v", columns=[("c", "int"), ("f", "long"), ("g", "string")],
                                     representations=[("spark", "SELECT 1 AS c, 2 AS f, 'g' AS g")],
                                     default_namespace="a")
    with ViewStore(tmp_path / "s.db") as store:
        view = store.load_view("a.v")
        assert view.versions == written.versions and view.version_log == written.version_log
        assert len(view.versions) == 2 and [len(v.columns) for v in view.versions] == [3, 3]
        for version in view.versions:  # read-only, as the constructor makes it
            with pytest.raises(TypeError):
                version.summary["engine-name"] = "other"
        models = [*view.versions, *view.version_log, *(c for v in view.versions for c in v.columns),
                  *(r for v in view.versions for r in v.representations)]
        assert {type(m).__name__ for m in models} == {"ViewVersion", "VersionLogEntry", "Column", "SQLRepresentation"}
        for model in models:
            assert model.model_fields_set == type(model).model_validate(model.model_dump()).model_fields_set, model
            assert model.model_dump(exclude_unset=True) == model.model_dump(), model
