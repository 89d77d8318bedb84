import datetime as dt
import subprocess
import sys

import pytest
from pydantic import ValidationError as PydanticError

from viewstore.errors import CorruptLogError
from viewstore.events import EVENT_TYPES, CommentUpdated, ViewDropped, ViewImported, ViewRolledBack, decode_event

ENVELOPE = dict(position=7, commit_id="c", view_id="u", stream_version=2, identifier=("a", "v"), actor="x",
                occurred_at=1000)


def test_event_types_are_stable_strings():
    assert sorted(EVENT_TYPES) == sorted([
        "view.created", "view.replaced", "view.representation_added", "view.representation_updated",
        "view.representation_removed", "view.comment_updated", "view.properties_set", "view.properties_removed",
        "view.renamed", "view.rolled_back", "view.dropped", "view.imported"])


def test_events_are_frozen_and_strict():
    event = CommentUpdated(**ENVELOPE, comment="hi")
    with pytest.raises(PydanticError):
        event.comment = "changed"  # type: ignore[misc]
    with pytest.raises(PydanticError):
        ViewDropped(**ENVELOPE, surprise=1)
    assert event.payload() == {"comment": "hi"}
    assert event.view == "a.v" and event.occurred_at_datetime.year == 1970
    later = CommentUpdated(**{**ENVELOPE, "occurred_at": 1_700_000_000_123}, comment="hi")
    assert later.occurred_at_datetime == dt.datetime(2023, 11, 14, 22, 13, 20, 123000, tzinfo=dt.timezone.utc)


def test_an_event_takes_a_current_version_id_only_as_the_log_reads_it_back():
    """The current version id is 32-bit in what the log decodes; an event that could not be read back
    is refused when it is made, not when it is read."""
    for bad in (2**31, -(2**31) - 1, "2147483648"):
        with pytest.raises(PydanticError):
            ViewRolledBack(**ENVELOPE, current_version_id=bad)
        with pytest.raises(PydanticError):
            ViewImported(**ENVELOPE, source="iceberg", versions=(), current_version_id=bad, version_log=())
    for good in (2**31 - 1, -(2**31)):
        event = ViewRolledBack(**ENVELOPE, current_version_id=good)
        envelope = {k: getattr(event, k) for k in event.ENVELOPE}
        assert decode_event(envelope, event.payload()) == event
    assert ViewRolledBack(**ENVELOPE, current_version_id="3").current_version_id == 3  # lax, as a stored row reads


def test_decode_round_trip_and_corruption():
    event = CommentUpdated(**ENVELOPE, comment="hi")
    envelope = {k: getattr(event, k) for k in event.ENVELOPE}
    assert decode_event(envelope, event.payload()) == event
    with pytest.raises(CorruptLogError, match="^cannot decode event at position 7: the payload: Input tag "
                                              "'view.exploded' found using 'type' does not match any of the expected "):
        decode_event({**envelope, "type": "view.exploded"}, {})
    with pytest.raises(CorruptLogError, match="^cannot decode event at position 7: view.comment_updated.comment: "
                                              "Input should be a valid string$"):
        decode_event(envelope, {"comment": 3})


def test_an_undecodable_row_is_one_line_naming_the_field_and_its_fault():
    """A row the models refuse reads as one line (a CLI prints it after 'error: '): the field's path
    and pydantic's message, not pydantic's multi-line report with its documentation links."""
    with pytest.raises(CorruptLogError) as caught:
        decode_event({**ENVELOPE, "type": "view.comment_updated"}, {"comment": 3})
    message = str(caught.value)
    assert "\n" not in message and "http" not in message
    assert message.startswith("cannot decode event at position 7: view.comment_updated.comment: ")
    assert "string" in message  # what pydantic says the field should be


def test_an_undecodable_row_names_its_first_three_faults():
    with pytest.raises(CorruptLogError) as two:
        decode_event({**ENVELOPE, "type": "view.comment_updated", "actor": 5}, {"comment": 3})
    assert str(two.value) == ("cannot decode event at position 7: view.comment_updated.actor: Input should be a valid "
                              "string; view.comment_updated.comment: Input should be a valid string")
    with pytest.raises(CorruptLogError) as four:
        decode_event({**ENVELOPE, "type": "view.comment_updated", "actor": 5, "commit_id": 4, "view_id": 3},
                     {"comment": 3})
    faults = str(four.value).split(": ", 1)[1].split("; ")
    assert [fault.split(":")[0] for fault in faults] == [
        "view.comment_updated.commit_id", "view.comment_updated.view_id", "view.comment_updated.actor"]


def test_the_payload_of_every_event_type_is_its_json_dump_without_the_envelope(store):
    """payload() (what the log stores of each event) calls pydantic's serializer directly: it must give
    what model_dump(mode="json") gives of the event's own fields, for every type, versions included."""
    from viewstore import ViewChange
    from viewstore.model import VersionLogEntry

    columns, reps = [("id", "int")], [("spark", "SELECT 1")]
    store.create_view("a.v", columns=columns, representations=reps, default_namespace="a")
    store.replace_view("a.v", columns=columns, representations=[("spark", "SELECT 2")], default_namespace="a",
                       security_mode="INVOKER")
    store.alter_view("a.v", ViewChange.add_representation(("trino", "SELECT 2")),
                     ViewChange.update_representation("trino", "SELECT 3"), ViewChange.update_comment("c"),
                     ViewChange.set_property("k", "v"), ViewChange.remove_property("k"))
    store.alter_view("a.v", ViewChange.remove_representation("trino"))
    store.rollback_view("a.v", 1)
    store.rename_view("a.v", "a.w")
    versions = store.load_view("a.w").versions
    store.drop_view("a.w")
    store.import_view("a.x", source="test", versions=versions,
                      version_log=[VersionLogEntry(timestamp_ms=v.timestamp_ms, version_id=v.version_id)
                                   for v in versions], current_version_id=versions[0].version_id)
    events = store.history("a.w") + store.history("a.x")
    assert {e.type for e in events} == set(EVENT_TYPES)
    for event in events:
        assert event.payload() == event.model_dump(mode="json", exclude=set(event.ENVELOPE)), event.type


# -- stored rows read into events (StoredEvents) ------------------------------------------------------


def assert_built_alike(got, want, where="event"):
    """``got`` is the very value ``want`` is, built alike: the same type at every level and, for a
    model, the same fields in the same order, the same fields set and no extra or private values (what
    == does not look at: a dump with ``exclude_unset`` reads the fields set)."""
    from pydantic import BaseModel

    assert type(got) is type(want), f"{where}: {type(got).__name__} is not {type(want).__name__}"
    if isinstance(want, BaseModel):
        assert list(got.__dict__) == list(want.__dict__), where
        assert got.__pydantic_fields_set__ == want.__pydantic_fields_set__, where
        assert got.__pydantic_extra__ is want.__pydantic_extra__ is None, where
        assert got.__pydantic_private__ is want.__pydantic_private__ is None, where
        for name, value in want.__dict__.items():
            assert_built_alike(got.__dict__[name], value, f"{where}.{name}")
    elif isinstance(want, (tuple, list)):
        assert len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want)):
            assert_built_alike(g, w, f"{where}[{i}]")
    elif isinstance(want, dict):
        assert list(got) == list(want), where
        for key, value in want.items():
            assert_built_alike(got[key], value, f"{where}[{key!r}]")
    else:
        assert got == want, f"{where}: {got!r} != {want!r}"


def validated(row):
    """The event of a stored row as the event models make it (decode_event: the whole event validated)."""
    import orjson

    from viewstore.log import EVENT_COLUMNS

    envelope = dict(zip(EVENT_COLUMNS[:8], row[:8]))
    envelope["identifier"] = tuple(row[5].split("."))
    return decode_event(envelope, orjson.loads(row[8]))


def assert_read_as_validated(row):
    """row_to_event reads the row as decode_event does: the same event, built alike, or the same
    CorruptLogError, message and all."""
    from viewstore.log import row_to_event

    try:
        want = validated(row)
    except CorruptLogError as refused:
        with pytest.raises(CorruptLogError) as raised:
            row_to_event(row)
        assert str(raised.value) == str(refused)
    else:
        assert_built_alike(row_to_event(row), want)


def every_event_type(store):
    """Events of every type in the store's log, through the API (versions of several columns, a
    comment and a required column among them, two dialects, an import with its history)."""
    from viewstore import ViewChange
    from viewstore.model import Column

    columns = [Column("id", "bigint", "the key", nullable=False), ("name", "varchar(20)"), ("at", "timestamptz")]
    reps = [("spark", "SELECT 1 AS id"), ("trino", "SELECT 1")]
    store.create_view("a.v", columns=columns, representations=reps, default_namespace="a", comment="first",
                      properties={"owner": "me", "replace.drop-dialect.allowed": "true"})
    store.replace_view("a.v", columns=columns[:2], representations=reps[:1], default_namespace="a",
                       default_catalog="cat", security_mode="INVOKER")
    # the columns of another version alike but in a comment, or in being required: equal only in part
    store.replace_view("a.v", columns=[("id", "bigint", "the key"), ("name", "varchar(20)")],
                       representations=reps[:1], default_namespace="a")
    store.replace_view("a.v", columns=[("id", "bigint"), ("name", "varchar(20)")], representations=reps[:1],
                       default_namespace="a")
    store.alter_view("a.v", ViewChange.add_representation(("trino", "SELECT 2")),
                     ViewChange.update_representation("trino", "SELECT 3"), ViewChange.update_comment("c"),
                     ViewChange.update_comment(None), ViewChange.set_property("k", "v"),
                     ViewChange.remove_property("k"))
    store.alter_view("a.v", ViewChange.remove_representation("trino"))
    store.rollback_view("a.v", 1)
    store.rename_view("a.v", "a.w")
    view = store.load_view("a.w")
    store.drop_view("a.w")
    store.import_view("a.x", source="test", versions=view.versions, version_log=view.version_log,
                      current_version_id=1)


def test_stored_rows_read_into_the_events_validation_makes(store):
    """events() and history() build the events of the library's rows without validating them whole
    (StoredEvents): what they build is what decode_event makes of each row, model by model, and every
    row the library wrote takes that way (else the slow way would have answered, and this would prove
    nothing of it)."""
    import orjson

    from viewstore.events import StoredEvents
    from viewstore.log import row_to_event

    every_event_type(store)
    rows = store.event_rows()
    assert {r[4] for r in rows} == set(EVENT_TYPES)
    for row in rows:
        assert StoredEvents().event(*row[:5], tuple(row[5].split(".")), *row[6:8], orjson.loads(row[8])), row[4]
        assert_built_alike(row_to_event(row), validated(row), row[4])
    assert_built_alike(store.events(), [validated(r) for r in rows])
    assert_built_alike(store.history("a.w"), [validated(r) for r in rows if r[5] in ("a.v", "a.w")])
    assert_built_alike(store.events(newest_first=True, limit=3), [validated(r) for r in rows[:-4:-1]])


def test_one_read_builds_each_column_and_representation_once_for_all_its_events(store):
    """Equal columns and representations of the events one read returns are one object each (a
    view's versions mostly repeat them), not one for every event that carries them."""
    every_event_type(store)
    events = store.events()
    versions = [v for e in events for v in ((e.version,) if getattr(e, "version",
                                                                    None) else getattr(e, "versions", ()))]
    columns = [c for v in versions for c in v.columns]
    representations = [r for v in versions for r in v.representations]
    assert len({id(c) for c in columns}) == len(set(columns)) < len(columns)
    assert len({id(r) for r in representations}) == len(set(representations)) < len(representations)


VERSION = {"version_id": 2, "timestamp_ms": 5, "schema_id": 0,
           "columns": [{"name": "id", "type": "int", "comment": None, "nullable": True}],
           "representations": [{"dialect": "spark", "sql": "SELECT 1 AS id"}],
           "default_catalog": None, "default_namespace": ["a"], "summary": {}}
LOG_ENTRY = {"timestamp_ms": 5, "version_id": 2}


def replaced(**version):
    return {"version": {**VERSION, **version}, "current_version_id": 2, "log_entry": LOG_ENTRY}


def stored_row(kind, payload, **envelope):
    import json

    row = {"position": 9, "commit_id": "k", "view_id": "u", "stream_version": 2, "type": kind, "identifier": "a.v",
           "actor": "me", "occurred_at": 5, "payload": json.dumps(payload), **envelope}
    return tuple(row.values())


@pytest.mark.parametrize("kind, payload", [
    ("view.replaced", replaced(columns=[{"name": "id", "type": "int"}])),  # Column's __init__ sets all four
    ("view.replaced", {"version": {k: v for k, v in VERSION.items() if k not in ("default_catalog", "summary")},
                       "current_version_id": 2, "log_entry": LOG_ENTRY}),  # fields set: those given
    ("view.replaced", {"version": {k: v for k, v in VERSION.items() if k != "default_namespace"},
                       "current_version_id": 2, "log_entry": LOG_ENTRY}),  # no default namespace: none, ()
    ("view.replaced", replaced(default_catalog="")),  # an empty catalog name is text, not None
    ("view.replaced", replaced(columns=[{"name": "id", "type": "INTEGER", "nullable": False}])),  # int, parsed
    ("view.replaced", replaced(columns=[{"name": "s", "type": "struct<Ab: int>"}])),  # a field name keeps its case
    ("view.replaced", {"version": None, "current_version_id": "2", "log_entry": LOG_ENTRY}),  # lax: 2
    ("view.replaced", {}),
    ("view.created", {"version": VERSION, "current_version_id": 2, "log_entry": LOG_ENTRY}),
    ("view.imported", {"source": "test", "versions": [VERSION, {**VERSION, "version_id": 3}],
                       "current_version_id": 2, "version_log": [LOG_ENTRY, {"timestamp_ms": 6, "version_id": 3}]}),
    ("view.imported", {"source": "test", "versions": (), "current_version_id": 2, "version_log": []}),
    ("view.imported", {"source": "test", "versions": [VERSION, {**VERSION, "version_id": 3, "representations": [
        {"dialect": "Spark", "sql": "SELECT 1 AS id"}]}], "current_version_id": 2, "version_log": [LOG_ENTRY]}),
    ("view.comment_updated", {"comment": None, "actor": "spoofed", "position": 1}),  # the envelope wins
    ("view.properties_removed", {"removals": ["a", "b"]}),
    ("view.renamed", {"from_identifier": ["a", "old"]}),
])
def test_rows_written_behind_the_librarys_back_read_as_the_models_take_them(kind, payload):
    """Rows the library did not write, which the event models take: each reads as decode_event makes
    it, whether StoredEvents builds it or leaves it to decode_event."""
    from viewstore.log import row_to_event

    row = stored_row(kind, payload)
    assert_built_alike(row_to_event(row), validated(row), kind)


@pytest.mark.parametrize("kind, payload, defaults", [
    ("view.created", {"version": VERSION, "current_version_id": 2, "log_entry": LOG_ENTRY},
     {"security_mode": "DEFINER", "properties": {}}),
    ("view.replaced", {"version": VERSION, "current_version_id": 2, "log_entry": LOG_ENTRY}, {"security_mode": None}),
    ("view.imported", {"source": "test", "versions": [VERSION], "current_version_id": 2, "version_log": [LOG_ENTRY]},
     {"source_location": None, "security_mode": "DEFINER", "properties": {}}),
    ("view.replaced", replaced(columns=[{"name": "id", "type": "int"}]), {"version.columns": ((None, True),)}),
])
def test_a_payload_without_its_optional_fields_reads_with_their_defaults(kind, payload, defaults):
    """A stored payload that leaves out a field that has a default (a created or imported view's
    security mode and properties, the mode of a replace that kept it, a column's comment and
    nullability) reads as that default, and the fold's reader takes the payload as it is."""
    from viewstore.events import payload_readers
    from viewstore.log import row_to_event

    row = stored_row(kind, payload)
    event = row_to_event(row)
    for name, value in defaults.items():
        if name == "version.columns":
            assert tuple((c.comment, c.nullable) for c in event.version.columns) == value
        else:
            assert getattr(event, name) == value, name
    assert payload_readers()[kind](row[8]) == payload


@pytest.mark.parametrize("column", [{"name": "id", "type": "int", "nullable": "yes"},
                                    {"name": "id", "type": "int", "nullable": 1}])
def test_the_payload_readers_take_no_value_of_another_type_that_the_models_would_convert(column):
    """The fold's readers are strict: a nullable of "yes" or 1 is not what the library writes, so the
    fold refuses the row, and so does the event models' reading of it (a column's nullable is strict)."""
    import json

    from viewstore.events import payload_readers
    from viewstore.log import row_to_event

    payload = replaced(columns=[column])
    with pytest.raises(CorruptLogError, match=f"^cannot decode event at position .*: view.replaced.version: .*"
                                              f"bad column: nullable: Input should be a valid boolean, "
                                              f"not {column['nullable']!r}$"):
        row_to_event(stored_row("view.replaced", payload))
    with pytest.raises(PydanticError, match="nullable"):
        payload_readers()["view.replaced"](json.dumps(payload))


@pytest.mark.parametrize("kind, payload", [
    ("view.replaced", replaced(default_namespace=None)),
    ("view.replaced", replaced(summary=None)),
    ("view.replaced", replaced(summary={"k": 1})),
    ("view.replaced", replaced(version_id="2")),
    ("view.replaced", replaced(version_id=2**31)),
    ("view.replaced", replaced(timestamp_ms=5.0)),
    ("view.replaced", replaced(surprise=1)),
    ("view.replaced", replaced(columns=[{"name": " ", "type": "int"}])),
    ("view.replaced", replaced(columns=[{"name": "id", "type": "no such type"}])),
    ("view.replaced", replaced(columns=[{"name": "id", "type": "int", "comment": 5}])),
    ("view.replaced", replaced(columns=[{"name": "id", "type": "int", "extra": 1}])),
    ("view.replaced", replaced(columns=[{"type": "int"}])),
    ("view.replaced", replaced(columns={"name": "id", "type": "int"})),
    ("view.replaced", replaced(representations=[{"dialect": "", "sql": "SELECT 1"}])),
    ("view.replaced", replaced(representations=[{"dialect": "spark ", "sql": "SELECT 1"}])),
    ("view.replaced", replaced(representations=[{"dialect": "\x1c", "sql": "SELECT 1"}])),
    ("view.replaced", replaced(representations=[{"dialect": "spark", "sql": " \n"}])),
    ("view.replaced", replaced(representations=[{"dialect": "spark", "sql": b"SELECT 1".hex()}, 7])),
    ("view.replaced", {"version": VERSION, "current_version_id": 2, "log_entry": {"timestamp_ms": 5}}),
    ("view.replaced", {"version": VERSION, "current_version_id": 2, "log_entry": {**LOG_ENTRY, "version_id": "2"}}),
    ("view.replaced", {"version": VERSION, "current_version_id": 2, "log_entry": LOG_ENTRY, "surprise": 1}),
    ("view.replaced", {"version": [VERSION]}),
    ("view.imported", {"source": "test", "versions": [VERSION, None], "current_version_id": 2, "version_log": []}),
    ("view.imported", {"source": "test", "versions": [VERSION], "current_version_id": 2, "version_log": [[5, 2]]}),
    ("view.imported", {"source": "test", "versions": {"a": VERSION}, "current_version_id": 2, "version_log": []}),
    ("view.imported", {"source": "test", "versions": {}, "current_version_id": 2, "version_log": {}}),
    ("view.comment_updated", {"comment": 3}),
    ("view.comment_updated", {}),
    ("view.exploded", {}),
])
def test_damaged_rows_end_in_the_corrupt_log_error_validation_raises(kind, payload):
    """Each kind of damage the other tests plant, and more in the versions StoredEvents builds: the
    read ends in decode_event's own CorruptLogError, message and all."""
    from viewstore.log import row_to_event

    row = stored_row(kind, payload)
    with pytest.raises(CorruptLogError) as expected:
        validated(row)
    with pytest.raises(CorruptLogError) as raised:
        row_to_event(row)
    assert str(raised.value) == str(expected.value)


@pytest.mark.parametrize("kind, payload", [
    ("view.rolled_back", {"current_version_id": 2**31, "log_entry": LOG_ENTRY}),
    ("view.imported",
     {"source": "test", "versions": [VERSION], "current_version_id": 2**31, "version_log": [LOG_ENTRY]}),
])
def test_the_payload_readers_take_no_current_version_id_beyond_32_bits(kind, payload):
    """A version id is an Iceberg int: the library writes no larger current version id."""
    import json

    from viewstore.events import payload_readers

    with pytest.raises(PydanticError, match="current_version_id"):
        payload_readers()[kind](json.dumps(payload))


@pytest.mark.parametrize("kind, payload", [
    ("view.created", {"version": VERSION, "current_version_id": 2, "log_entry": LOG_ENTRY, "security_mode": "OWNER"}),
    ("view.created", {"version": VERSION, "current_version_id": 2, "log_entry": LOG_ENTRY, "properties": {"k": 1}}),
    ("view.comment_updated", {}),
    ("view.properties_removed", {"removals": ["k", 1]}),
    ("view.renamed", {"from_identifier": ["a", None]}),
    ("view.rolled_back", {"current_version_id": 2, "log_entry": LOG_ENTRY, "security_mode": "INVOKER"}),
    ("view.replaced", {**replaced(), "security_mode": "OWNER"}),
    ("view.replaced", replaced(timestamp_ms=2**63)),
    ("view.replaced", {"version": VERSION, "current_version_id": 2, "log_entry": {**LOG_ENTRY, "timestamp_ms": 2**63}}),
    ("view.imported", {"source": "test", "source_location": 5, "versions": [VERSION], "current_version_id": 2,
                       "version_log": [LOG_ENTRY]}),
    ("view.imported", {"source": "test", "versions": [VERSION, None], "current_version_id": 2, "version_log": []}),
    ("view.imported", {"source": "test", "versions": [VERSION], "current_version_id": 2, "version_log": [[5, 2]]}),
    ("view.replaced", replaced(summary={"k": 1})),
    ("view.properties_set", {"updates": {"k": 1}}),
    ("view.representation_removed", {"dialect": 5}),
])
def test_a_payload_the_models_refuse_the_payload_readers_refuse_too(kind, payload):
    """The fold's reader of each type takes no payload history() cannot read (an unknown security
    mode, a missing comment, a removal or a name part that is not text, a field of another event type,
    a time beyond 64 bits, a source location, a summary or property value or a dialect that is not text, a
    version or a log entry that is no object)."""
    import json

    from viewstore.events import payload_readers

    with pytest.raises(CorruptLogError):
        validated(stored_row(kind, payload))
    with pytest.raises(ValueError):
        payload_readers()[kind](json.dumps(payload))


def test_a_stored_identifier_reads_as_stored_case_and_all():
    """The store writes identifiers normalised; one written behind its back reads as validation reads
    it, its parts split at the dots and nothing else changed."""
    assert_read_as_validated(stored_row("view.replaced", replaced(), identifier="Sales.Daily"))


@pytest.mark.parametrize("field, value", [("position", "9"), ("commit_id", 1), ("view_id", None),
                                          ("stream_version", 2.5), ("actor", 7), ("occurred_at", "late")])
def test_an_envelope_of_another_type_reads_as_validation_reads_it(field, value):
    """A column of the envelope holding another type (SQLite stores what it is given): the event, or
    the CorruptLogError, that validation makes of it."""
    assert_read_as_validated(stored_row("view.replaced", replaced(), **{field: value}))


#: in a fresh process: the event models after import, then the first event made and refused of each way in
_FIRST_USE = """
import viewstore.events as events
from pydantic import ValidationError
from viewstore.errors import CorruptLogError
assert not any(cls.__pydantic_complete__ for cls in events.EVENT_TYPES.values())
envelope = dict(position=7, commit_id="c", view_id="u", stream_version=2, identifier=("a", "v"), actor="x",
                occurred_at=1000)
assert events.CommentUpdated(**envelope, comment="hi").comment == "hi"
try:
    events.ViewDropped(**envelope, surprise=1)
    raise SystemExit("an unknown field was taken")
except ValidationError:
    pass
assert events.decode_event({**envelope, "type": "view.renamed"}, {"from_identifier": ["a", "w"]}).from_identifier \\
    == ("a", "w")
try:
    events.decode_event({**envelope, "type": "view.renamed"}, {"from_identifier": 3})
    raise SystemExit("a damaged payload was decoded")
except CorruptLogError:
    pass
assert events.payload_readers()["view.dropped"](b"{}") == {}
assert events.payload_readers() is events.payload_readers()  # one shared dict, made once
print("ok")
"""


def test_the_event_models_are_built_at_first_use_and_check_as_ever():
    """The event models' validators, the reader of any event and the payload readers are made at
    their first use, not at import (a command that writes no event and reads none starts faster);
    made then, they take and refuse what they did."""
    result = subprocess.run([sys.executable, "-c", _FIRST_USE], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stdout == "ok\n", result.stderr


def test_the_reader_of_any_event_is_made_once():
    """decode_event's reader of any event is made at its first use and kept: a TypeAdapter of the union
    of every event type costs milliseconds to make (planted, made again at each decode, every test
    passed, only slower)."""
    import viewstore.events as events

    assert events._adapter() is events._adapter()
