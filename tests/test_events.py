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
