import pytest
from pydantic import ValidationError as PydanticError

from viewstore.errors import CorruptLogError
from viewstore.events import EVENT_TYPES, CommentUpdated, ViewDropped, decode_event

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


def test_decode_round_trip_and_corruption():
    event = CommentUpdated(**ENVELOPE, comment="hi")
    envelope = {k: getattr(event, k) for k in event.ENVELOPE}
    assert decode_event(envelope, event.payload()) == event
    with pytest.raises(CorruptLogError):
        decode_event({**envelope, "type": "view.exploded"}, {})
    with pytest.raises(CorruptLogError):
        decode_event(envelope, {"comment": 3})


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
