import json

import pytest

from viewstore.errors import CorruptLogError
from viewstore.projections import DDL, PROJECTION_TABLES, SNAPSHOT_EVERY, ViewState, apply, state_to_view

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


def test_snapshots_every_n_events_round_trip():
    state = created()
    for v in range(2, SNAPSHOT_EVERY + 1):
        state = apply(state, row(v, v, "view.properties_set"), {"updates": {"n": str(v)}})
    (version, at, data), = state.snapshots
    assert version == SNAPSHOT_EVERY
    assert "versions" not in json.loads(data)  # named by id: each version is stored once, in view_versions
    again = ViewState.from_json(data, {1: VERSION, 2: "not named by the snapshot"})
    assert again.properties["n"] == str(SNAPSHOT_EVERY) and again.versions == {1: VERSION}
    assert json.loads(again.to_json()) == json.loads(data)
