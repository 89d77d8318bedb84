"""The ViewStore API: semantics of every call, and every bad input leaving the log unchanged."""

import contextlib
import datetime as dt
import gc
import json
import os
import re
import signal
import sqlite3
import subprocess
import time
import warnings
import weakref

import orjson
import pytest
from interrupted import RUNAWAY, interrupted

from viewstore import (DROP_DIALECT_ALLOWED, Column, ConcurrencyError, NoSuchViewError, SQLRepresentation,
                       ValidationError, ViewAlreadyExistsError, ViewChange, ViewStore, ViewStoreError, signals)
from viewstore.catalog import to_epoch_ms
from viewstore.errors import CorruptLogError, DamagedProjectionsError, IcebergMetadataError
from viewstore.log import row_to_event
from viewstore.model import ReadOnlyDict, VersionLogEntry, ViewVersion, diff_views
from viewstore.projections import SNAPSHOT_EVERY
from viewstore.types import DecimalType, FixedType, ListType, PrimitiveType, StructField, StructType

COLS = [Column("day", "date"), Column("orders", "bigint", "orders that day")]
SPARK = SQLRepresentation("spark", "SELECT day, count(*) AS orders FROM orders GROUP BY day")


def make(store, ident="sales.daily", **kw):
    args = dict(columns=COLS, representations=[SPARK], default_namespace="sales")
    args.update(kw)
    return store.create_view(ident, **args)


def test_create_and_load(store):
    view = make(store, comment="Daily orders", properties={"team": "finance"}, summary={"engine-name": "spark"})
    assert view.identifier == ("sales", "daily")
    assert view.comment == "Daily orders" and view.properties == {"comment": "Daily orders", "team": "finance"}
    assert [str(c.type) for c in view.columns] == ["date", "long"]
    assert view.columns[1].comment == "orders that day"
    assert view.current_version_id == 1 and len(view.versions) == 1
    assert view.version_log[0].version_id == 1
    assert view.default_catalog == "prod"  # the store's catalog when none is given
    assert view.default_namespace == ("sales",)
    assert view.summary == {"engine-name": "spark"}
    assert view.security_mode == "DEFINER"
    assert view.audit.creator == "alice" and view.stream_version == 1
    # the first version, its log entry and the creation are one moment
    assert view.versions[0].timestamp_ms == view.version_log[0].timestamp_ms == view.audit.create_time_ms
    assert view.sql_for("SPARK") == SPARK.sql and view.sql_for("trino") is None
    assert store.load_view(("sales", "daily")) == view
    assert store.load_view("SALES.Daily").uuid == view.uuid  # names are case-insensitive
    assert store.view_exists("sales.daily") and not store.view_exists("sales.other")
    assert store.list_views() == [("sales", "daily")]
    assert store.list_views("sales") == [("sales", "daily")] and store.list_views("other") == []
    # the comment given wins over a comment among the properties
    assert make(store, "sales.other", comment="given", properties={"comment": "a property"}).comment == "given"


def test_a_version_is_read_back_from_the_file_whole(store):
    """Another store (no cached state) reads every field of a version as it was written."""
    view = make(store, summary={"engine-name": "spark", "engine-version": "4.0"}, default_catalog="cat")
    store.replace_view("sales.daily", columns=[("id", "bigint")], representations=[("spark", "SELECT 2 AS id")],
                       default_namespace="other", summary={"engine-name": "trino"})
    with ViewStore(store.path, catalog="prod", actor="alice") as other:
        again = other.load_view("sales.daily")
    assert again.versions == store.load_view("sales.daily").versions
    first = again.version(1)
    assert (first.summary, first.default_catalog, first.default_namespace) == (
        {"engine-name": "spark", "engine-version": "4.0"}, "cat", ("sales",))
    assert first == view.versions[0] and again.summary == {"engine-name": "trino"}


CHANGES_IN_PLACE = [("set", lambda d: d.__setitem__("k", "v")), ("del", lambda d: d.__delitem__("team")),
                    ("pop", lambda d: d.pop("team")), ("pop a missing key", lambda d: d.pop("nope", None)),
                    ("popitem", lambda d: d.popitem()), ("setdefault", lambda d: d.setdefault("k", "v")),
                    ("update", lambda d: d.update({"k": "v"})), ("update by keyword", lambda d: d.update(k="v")),
                    ("clear", lambda d: d.clear()), ("|=", lambda d: d.__ior__({"k": "v"}))]


@pytest.mark.parametrize("change", [c for _, c in CHANGES_IN_PLACE], ids=[name for name, _ in CHANGES_IN_PLACE])
def test_a_returned_view_refuses_a_change_in_place_and_later_loads_read_what_is_stored(tmp_path, change):
    """The store gives every load_view the same View: its properties and its versions' summaries
    refuse a change in place (TypeError, as a tuple does), so no caller can change what the next
    load returns, nor what a write folds into, though nothing was written."""
    with ViewStore(tmp_path / "s.db", actor="me") as store:
        made = make(store, properties={"team": "finance"}, summary={"team": "etl"})
        store.replace_view("sales.daily", columns=COLS, representations=[SPARK], default_namespace="sales",
                           summary={"team": "etl", "n": "2"})
        loaded = store.load_view("sales.daily")
        dump = loaded.model_dump_json()
        maps = [made.properties, made.summary, loaded.properties, loaded.summary,
                *(v.summary for v in loaded.versions)]
        for held in maps:
            with pytest.raises(TypeError, match=r"^a View is read-only: change the view through the store "
                                                r"\(alter_view with a ViewChange, or replace_view\)"):
                change(held)
        again = store.load_view("sales.daily")
        assert again is loaded and again.model_dump_json() == dump
        assert again.properties == {"team": "finance"} and again.summary == {"team": "etl", "n": "2"}
        assert [v.summary for v in again.versions] == [{"team": "etl"}, {"team": "etl", "n": "2"}]
        after = store.alter_view("sales.daily", ViewChange.update_comment("c"))
        assert after.properties == {"team": "finance", "comment": "c"}
    with ViewStore(tmp_path / "s.db", actor="me") as store:
        assert store.load_view("sales.daily").properties == {"team": "finance", "comment": "c"}
        assert store.rebuild() == {"views": 0, "view_versions": 0, "view_version_log": 0, "view_snapshots": 0}


def test_a_returned_views_dicts_read_dump_copy_and_compare_as_dicts(store):
    """Read-only, a View's properties and summaries are still dicts: equal to dicts, dumped as JSON,
    copied into plain dicts to edit, and the View compares equal to its copies and its dump."""
    view = make(store, properties={"team": "finance"}, summary={"engine-name": "spark"})
    for held, plain in ((view.properties, {"team": "finance"}), (view.summary, {"engine-name": "spark"})):
        assert isinstance(held, dict) and held == plain and plain == held and repr(held) == repr(plain)
        assert orjson.loads(orjson.dumps(held)) == plain
        edited = dict(held)
        edited["k"] = "v"
        copied = held.copy()
        copied["k"] = "v"
        assert edited == copied == {**plain, "k": "v"} == held | {"k": "v"} and held == plain
        assert type(edited) is type(copied) is type(held | {"k": "v"}) is dict
    assert orjson.loads(view.model_dump_json())["properties"] == {"team": "finance"}
    assert view.model_dump()["versions"][0]["summary"] == {"engine-name": "spark"}
    assert store.load_view("sales.daily") == view == type(view).model_validate_json(view.model_dump_json())


def test_multi_level_namespace_and_list(store):
    make(store, "a.b.v1")
    make(store, "a.b.v2")
    make(store, "a.v3")
    assert store.list_views("a.b") == [("a", "b", "v1"), ("a", "b", "v2")]
    assert store.list_views(("a",)) == [("a", "v3")]
    assert store.list_namespaces() == [("a",), ("a", "b")]


def test_list_namespaces_follows_drops_and_renames_in_sqlite_order(store):
    for ident in ("a.v", "a.b.v", "a_b.v", "ab.v", "B.v", "a.b.c.v", "z.gone"):
        make(store, ident)
    store.drop_view("z.gone")
    store.rename_view("ab.v", "y.v")
    assert store.list_namespaces() == [("a",), ("a", "b"), ("a", "b", "c"), ("a_b",), ("b",), ("y",)]
    for ident in store.list_views("a.b"):
        store.drop_view(ident)
    assert ("a", "b") not in store.list_namespaces() and ("a", "b", "c") in store.list_namespaces()
    store.drop_view("a.v")  # the first namespace, now held by dropped views alone
    assert store.list_namespaces() == [("a", "b", "c"), ("a_b",), ("b",), ("y",)]


def test_list_views_sorts_by_dotted_namespace_then_name_and_leaves_dropped_views_out(store):
    for ident in ("b.a", "a.z", "a.b.c", "a.b.a", "a.y"):
        make(store, ident)
    assert store.list_views() == [("a", "y"), ("a", "z"), ("a", "b", "a"), ("a", "b", "c"), ("b", "a")]
    store.drop_view("a.b.a")
    store.drop_view("b.a")
    store.rename_view("a.z", "c.z")
    assert store.list_views("a.b") == [("a", "b", "c")] and store.list_views("b") == []
    assert store.list_views("a") == [("a", "y")] and store.list_views("c") == [("c", "z")]
    assert store.list_views() == [("a", "y"), ("a", "b", "c"), ("c", "z")]
    for empty in ("", [], ()):  # no namespace is no filter: refused, not every view
        with pytest.raises(ValidationError, match="namespace"):
            store.list_views(empty)


def test_replace_makes_versions_and_reuses_identical_ones(store):
    make(store)
    v2 = store.replace_view("sales.daily", columns=COLS, representations=[("spark", "SELECT 2")],
                            default_namespace="sales")
    assert v2.current_version_id == 2 and len(v2.version_log) == 2
    # the same definition again adds nothing: no version, no log entry, no event
    count = store.event_count()
    same = store.replace_view("sales.daily", columns=COLS, representations=[("spark", "SELECT 2")],
                              default_namespace="sales")
    assert same.current_version_id == 2 and len(same.version_log) == 2 and store.event_count() == count
    # going back to version 1's definition reuses id 1 and logs the change
    back = store.replace_view("sales.daily", columns=COLS, representations=[SPARK], default_namespace="sales")
    assert back.current_version_id == 1 and [v.version_id for v in back.versions] == [1, 2]
    assert [e.version_id for e in back.version_log] == [1, 2, 1]


def test_a_definition_differing_only_in_its_default_namespace_is_a_new_version(store):
    make(store)
    store.replace_view("sales.daily", columns=COLS, representations=[("spark", "SELECT 2")], default_namespace="sales")
    view = store.replace_view("sales.daily", columns=COLS, representations=[SPARK], default_namespace="other")
    assert view.current_version_id == 3 and view.current_version.default_namespace == ("other",)
    view = store.replace_view("sales.daily", columns=COLS, representations=[SPARK], default_namespace="other",
                              default_catalog="elsewhere")
    assert view.current_version_id == 4 and view.default_catalog == "elsewhere"
    view = store.replace_view("sales.daily", columns=COLS, representations=[SPARK], default_namespace="other",
                              default_catalog="elsewhere", summary={"engine-name": "trino"})
    assert view.current_version_id == 5 and view.summary == {"engine-name": "trino"}


def test_times_of_a_stream_never_go_backwards_when_the_clock_does(store, monkeypatch):
    import viewstore.catalog

    make(store)
    t0 = store.load_view("sales.daily").audit.last_modified_time_ms
    monkeypatch.setattr(viewstore.catalog.time, "time_ns", lambda: (t0 - 5_000) * 1_000_000)  # stepped back 5 s
    store.replace_view("sales.daily", columns=COLS, representations=[("spark", "SELECT 2")], default_namespace="sales")
    assert [e.occurred_at for e in store.history("sales.daily")] == [t0, t0]
    assert store.load_view("sales.daily", as_of=t0).current_version_id == 2


def test_history_of_a_name_held_by_two_dropped_views_is_the_one_dropped_last(store):
    first = make(store)
    store.drop_view("sales.daily")
    second = make(store, representations=[("spark", "SELECT 2")])
    time.sleep(0.002)  # a time at which the second was live
    store.drop_view("sales.daily")
    assert {e.view_id for e in store.history("sales.daily")} == {second.uuid} != {first.uuid}
    assert store.load_view("sales.daily", as_of=second.audit.create_time_ms).uuid == second.uuid


def test_schema_ids_follow_iceberg(store):
    make(store)
    v = store.replace_view("sales.daily", columns=[Column("day", "date")], representations=[SPARK],
                           default_namespace="sales")
    assert [x.schema_id for x in v.versions] == [0, 1]
    v = store.replace_view("sales.daily", columns=COLS, representations=[("spark", "SELECT 3")],
                           default_namespace="sales")
    assert v.current_version.schema_id == 0  # structurally identical to schema 0


def test_replace_creates_when_missing(store):
    view = store.replace_view("sales.new", columns=COLS, representations=[SPARK], default_namespace="sales")
    assert view.current_version_id == 1
    assert [e.type for e in store.history("sales.new")] == ["view.created"]


def test_replace_refuses_to_drop_a_dialect_unless_allowed(store):
    make(store, representations=[SPARK, ("trino", "SELECT 1")])
    count = store.event_count()
    with pytest.raises(ValidationError, match="loss of view dialects"):
        store.replace_view("sales.daily", columns=COLS, representations=[SPARK], default_namespace="sales")
    assert store.event_count() == count
    view = store.replace_view("sales.daily", columns=COLS, representations=[SPARK], default_namespace="sales",
                              properties={DROP_DIALECT_ALLOWED: "true"})
    assert view.dialects == ("spark",)


def test_replace_merges_properties_and_comment_changes_are_not_versions(store):
    make(store, comment="one", properties={"a": "1"})
    view = store.replace_view("sales.daily", columns=COLS, representations=[SPARK], default_namespace="sales",
                              comment="two", properties={"b": "2"})
    assert view.properties == {"comment": "two", "a": "1", "b": "2"}
    assert view.current_version_id == 1
    assert [e.type for e in store.history("sales.daily")][1:] == ["view.comment_updated", "view.properties_set"]
    exact = store.replace_view("sales.daily", columns=COLS, representations=[SPARK], default_namespace="sales",
                               properties={"b": "2"}, replace_properties=True)
    assert exact.properties == {"b": "2"}


def test_replace_properties_that_is_not_a_flag_is_refused_and_nothing_is_removed(store):
    """replace_properties="false" is truthy: taken as given, it removed every other property."""
    make(store)
    store.alter_view("sales.daily", ViewChange.set_property("a", "1"))
    before = store.load_view("sales.daily")
    for bad in ("false", 0, 1, None):
        with pytest.raises(ValidationError, match="replace_properties must be True or False"):
            store.replace_view("sales.daily", columns=COLS, representations=[SPARK], default_namespace="sales",
                               properties={"b": "2"}, replace_properties=bad)
    assert store.load_view("sales.daily") == before


def test_replace_keeps_the_security_mode_unless_it_is_given(store):
    make(store, security_mode="INVOKER")
    other = SQLRepresentation("spark", "SELECT day, 1 AS orders FROM orders")
    same = store.replace_view("sales.daily", columns=COLS, representations=[SPARK], default_namespace="sales")
    assert same.security_mode == "INVOKER" and same.stream_version == 1  # nothing to change: nothing written
    view = store.replace_view("sales.daily", columns=COLS, representations=[other], default_namespace="sales",
                              replace_properties=True)
    assert view.security_mode == "INVOKER" and view.current_version_id == 2  # new SQL, still the invoker's rights
    assert store.history("sales.daily")[-1].security_mode is None
    view = store.replace_view("sales.daily", columns=COLS, representations=[other], default_namespace="sales",
                              security_mode="definer")
    assert view.security_mode == "DEFINER" and store.history("sales.daily")[-1].security_mode == "DEFINER"
    assert view.current_version_id == 2  # the mode alone changed: no new version
    fresh = store.replace_view("sales.new", columns=COLS, representations=[SPARK], default_namespace="sales")
    assert fresh.security_mode == "DEFINER"  # a view the replace creates


def test_alter_batch_is_one_commit_with_one_version(store):
    make(store)
    view = store.alter_view("sales.daily",
                            ViewChange.add_representation(SQLRepresentation("trino", "SELECT 1")),
                            ViewChange.add_representation(("hive", "SELECT 1")),
                            ViewChange.update_comment("hello"), ViewChange.set_property("k", "v"))
    events = store.history("sales.daily")[1:]
    assert len({e.commit_id for e in events}) == 1
    assert sorted(e.type for e in events) == sorted(["view.representation_added", "view.representation_added",
                                                     "view.comment_updated", "view.properties_set"])
    assert view.current_version_id == 2 and len(view.versions) == 2  # one version for the batch
    assert view.dialects == ("spark", "trino", "hive") and view.comment == "hello"
    assert [e.stream_version for e in store.history("sales.daily")] == [1, 2, 3, 4, 5]
    # each call is a commit of its own, named by 128 random bits
    commits = [e.commit_id for e in store.history("sales.daily")]
    assert len(set(commits)) == 2 and all(re.fullmatch("[0-9a-f]{32}", c) for c in commits)


def test_removing_the_last_representation_says_to_add_the_other_first(store):
    """A batch that swaps a view's only dialect removes it first and is refused (the changes apply in
    order); the message says to put the add first, and that order works."""
    make(store)
    swap = (ViewChange.remove_representation("spark"), ViewChange.add_representation(("trino", "SELECT 1")))
    with pytest.raises(ValidationError) as raised:
        store.alter_view("sales.daily", *swap)
    assert str(raised.value) == ("cannot remove the last representation of sales.daily: add the other dialect "
                                 "first (an earlier change of the batch), or drop the view")
    assert store.event_count() == 1
    assert store.alter_view("sales.daily", *reversed(swap)).dialects == ("trino",)


def test_alter_representation_changes(store):
    make(store, representations=[SPARK, ("trino", "SELECT 1")])
    v = store.alter_view("sales.daily", ViewChange.update_representation("TRINO", "SELECT 2"))
    assert v.sql_for("trino") == "SELECT 2" and v.current_version_id == 2
    v = store.alter_view("sales.daily", ViewChange.remove_representation("trino"))
    assert v.dialects == ("spark",) and v.current_version_id == 3
    with pytest.raises(ValidationError, match="last representation"):
        store.alter_view("sales.daily", ViewChange.remove_representation("spark"))
    v = store.alter_view("sales.daily", ViewChange.remove_property("nope"), ViewChange.update_comment(None))
    assert v.stream_version == 3  # no-op changes write nothing


def test_sql_is_kept_byte_for_byte_and_dialect_as_given(store):
    sql = "SELECT\r\n  \"x\"\t-- ünïcode ✓ \n FROM t  \n"
    view = make(store, representations=[SQLRepresentation("Spark-SQL", sql)])
    assert view.representations[0].sql == sql and view.representations[0].dialect == "Spark-SQL"
    assert store.load_view("sales.daily").sql_for("spark-sql") == sql


def test_rename_and_name_reuse(store):
    first = make(store)
    renamed = store.rename_view("sales.daily", "archive.daily_v1")
    assert renamed.identifier == ("archive", "daily_v1") and renamed.uuid == first.uuid
    assert not store.view_exists("sales.daily")
    second = make(store)  # the old name is free again: a new view with a new UUID
    assert second.uuid != first.uuid
    count = store.event_count()
    with pytest.raises(ViewAlreadyExistsError,
                       match="^cannot rename sales.daily: view already exists: archive.daily_v1$"):
        store.rename_view("sales.daily", "archive.daily_v1")
    assert store.event_count() == count
    v = store.alter_view("sales.daily", ViewChange.rename("daily_v2"))
    assert v.identifier == ("sales", "daily_v2")
    # its own name again, in any case, is no rename: nothing is written
    count = store.event_count()
    assert store.rename_view("sales.daily_v2", "SALES.Daily_V2").stream_version == v.stream_version
    assert store.alter_view("sales.daily_v2", ViewChange.rename("daily_v2")).stream_version == v.stream_version
    assert store.event_count() == count


def test_drop_and_history_of_a_dropped_view(store):
    make(store)
    assert store.drop_view("sales.daily") is True
    assert store.drop_view("sales.daily") is False
    with pytest.raises(NoSuchViewError) as missing:
        store.load_view("sales.daily")
    assert isinstance(missing.value, LookupError)  # caught where a missing key is
    assert [e.type for e in store.history("sales.daily")] == ["view.created", "view.dropped"]
    assert not store.view_exists("sales.daily")
    make(store)
    assert store.view_exists("sales.daily")
    assert [e.type for e in store.history("sales.daily")] == ["view.created"]  # the live one first
    assert store.list_views() == [("sales", "daily")]


def test_rollback(store, monkeypatch):
    import viewstore.catalog

    make(store)
    store.replace_view("sales.daily", columns=COLS, representations=[("spark", "SELECT 2")], default_namespace="sales")
    later = store.load_view("sales.daily").audit.last_modified_time_ms + 1_000
    monkeypatch.setattr(viewstore.catalog.time, "time_ns", lambda: later * 1_000_000)
    v = store.rollback_view("sales.daily", 1)
    assert v.current_version_id == 1 and [e.version_id for e in v.version_log] == [1, 2, 1]
    assert v.version_log[-1].timestamp_ms == v.audit.last_modified_time_ms == later  # dated by the rollback
    assert len(v.versions) == 2
    same = store.rollback_view("sales.daily", 1)
    assert same.stream_version == v.stream_version  # already current: nothing written
    for sql in ("SELECT 3", "SELECT 4", "SELECT 5"):
        store.replace_view("sales.daily", columns=COLS, representations=[("spark", sql)], default_namespace="sales")
    with pytest.raises(ValidationError, match=r"has no version 9; it has 1-5$"):
        store.rollback_view("sales.daily", 9)
    with pytest.raises(ValidationError, match=r"has no version 9; it has 1-5$"):
        store.load_view("sales.daily").version(9)


def test_as_of_time_travel(store):
    make(store, comment="first")
    t1 = store.load_view("sales.daily").audit.last_modified_time_ms
    time.sleep(0.005)  # times are milliseconds: let the clock move past t1
    store.replace_view("sales.daily", columns=COLS, representations=[("spark", "SELECT 2")], default_namespace="sales")
    store.alter_view("sales.daily", ViewChange.update_comment("second"))
    store.rename_view("sales.daily", "sales.renamed")
    old = store.load_view("sales.renamed", as_of=t1)
    assert old.comment == "first" and old.current_version_id == 1 and old.identifier == ("sales", "daily")
    assert store.load_view("sales.daily", as_of=t1).uuid == old.uuid  # the name it had then
    assert store.load_view("sales.daily",
                           as_of=dt.datetime.fromtimestamp(t1 / 1000, dt.timezone.utc)).comment == "first"
    before = dt.datetime.fromtimestamp((t1 - 10_000) / 1000, dt.timezone.utc).isoformat(timespec="milliseconds")
    begins = dt.datetime.fromtimestamp(t1 / 1000, dt.timezone.utc).isoformat(timespec="milliseconds")
    with pytest.raises(NoSuchViewError, match=f"^no view sales.daily existed at {re.escape(before)} "
                                              f"\\(its history begins at {re.escape(begins)}\\)$"):
        store.load_view("sales.daily", as_of=t1 - 10_000)
    with pytest.raises(NoSuchViewError, match=r"^no such view: sales.daily \(renamed to sales.renamed \(live\) at "
                                              r"[-0-9]+ [:0-9]+ UTC by alice; its history remains\)$"):
        store.load_view("sales.daily")  # renamed away now


@pytest.mark.parametrize("stored, shown", [("'x'", "'x' (str)"), ("2.5", "2.5 (float)"), ("X'07'", "b'\\x07' (bytes)")],
                         ids=["text", "real", "blob"])
def test_as_of_before_a_history_whose_first_time_is_damaged_is_a_corrupt_log_error(store, stored, shown):
    """The error of a time before a name's history says where the history begins: a time stored as
    text behind the library's back (the only value SQLite's min() gives after every number) raised
    a bare TypeError comparing it; it is a CorruptLogError showing the value as the row holds it.
    So is a number that is no integer (a real) or a blob, which are no text either."""
    make(store)
    store.rename_view("sales.daily", "sales.renamed")
    with sqlite3.connect(store.path) as raw:
        raw.execute("DROP TRIGGER events_append_only_update")
        raw.execute(f"UPDATE events SET occurred_at = {stored}")
    raw.close()
    with ViewStore(store.path) as reopened, pytest.raises(
            CorruptLogError, match=r"^the history of sales.daily holds an event whose time is not an integer "
                                   rf"\({re.escape(shown)}\)$"):
        reopened.load_view("sales.daily", as_of=0)


def test_as_of_a_time_is_the_view_that_had_the_name_then_else_the_one_known_by_it_now(store, monkeypatch):
    """Not a view that had the name before and was renamed away or dropped by then; the view known by
    the name now (live, else dropped last under it) as it was then, under the name it had."""
    import viewstore.catalog

    clock = [1_000]
    monkeypatch.setattr(viewstore.catalog.time, "time_ns", lambda: clock[0] * 1_000_000)

    def at(ms, write):
        clock[0] = ms
        return write()

    first = at(1_000, lambda: make(store, "s.a", comment="first"))
    at(2_000, lambda: store.rename_view("s.a", "s.b"))
    second = at(3_000, lambda: make(store, "s.a", comment="second"))
    at(4_000, lambda: store.drop_view("s.a"))
    third = at(5_000, lambda: make(store, "s.e", comment="third"))
    at(6_000, lambda: store.rename_view("s.e", "s.f"))
    at(7_000, lambda: store.drop_view("s.f"))
    assert store.load_view("s.a", as_of=1_500).uuid == first.uuid
    assert store.load_view("s.a", as_of=3_500).uuid == second.uuid
    for ms in (2_500, 4_000, 4_500):  # the first one renamed away, the second not yet made, or dropped
        with pytest.raises(NoSuchViewError, match="^no view s.a existed at "):
            store.load_view("s.a", as_of=ms)
    assert store.load_view("s.b", as_of=1_500).identifier == ("s", "a")  # known by s.b now
    dropped = store.load_view("s.f", as_of=5_500)  # dropped under s.f, known by it then as s.e
    assert (dropped.uuid, dropped.identifier) == (third.uuid, ("s", "e"))
    with pytest.raises(NoSuchViewError, match="^no view s.f existed at "):
        store.load_view("s.f", as_of=7_000)
    with pytest.raises(NoSuchViewError, match="^view s.f was dropped by that event$"):  # the name it was dropped under
        store.load_view("s.e", as_of=store.history("s.f")[-1])


def test_as_of_before_the_names_history_says_where_it_begins(store, monkeypatch):
    """A time before any view had the name (the usual slip) is refused saying when the history that
    `history(name)` gives begins: the name's first taking, or the creation under another name of the
    view known by it now, if earlier. A time in a gap of the history is told what made the gap, not
    where the history begins; a name no view ever had is said so, as history() says it."""
    import viewstore.catalog

    clock = [1_000]
    monkeypatch.setattr(viewstore.catalog.time, "time_ns", lambda: clock[0] * 1_000_000)

    def at(ms, write):
        clock[0] = ms
        return write()

    at(1_000, lambda: make(store, "s.old"))
    at(2_000, lambda: store.rename_view("s.old", "s.new"))
    at(3_000, lambda: make(store, "s.gap"))
    at(4_000, lambda: store.drop_view("s.gap"))
    at(5_000, lambda: make(store, "s.gap"))
    with pytest.raises(NoSuchViewError, match=r"^no view s.new existed at 1970-01-01T00:00:00.500\+00:00 \(its "
                                              r"history begins at 1970-01-01T00:00:01.000\+00:00\)$"):
        store.load_view("s.new", as_of=500)  # created at 1 s as s.old: history("s.new") begins there
    assert store.history("s.new")[0].occurred_at == 1_000
    assert store.load_view("s.new", as_of=1_000).identifier == ("s", "old")
    with pytest.raises(NoSuchViewError, match=r"^no view s.old existed at 1970-01-01T00:00:00.999\+00:00 \(its "
                                              r"history begins at 1970-01-01T00:00:01.000\+00:00\)$"):
        store.load_view("s.old", as_of=999)
    with pytest.raises(NoSuchViewError, match=r"^no view s.gap existed at 1970-01-01T00:00:04.500\+00:00 \(dropped "):
        store.load_view("s.gap", as_of=4_500)  # dropped, then made again: said so, not where its history begins
    with pytest.raises(NoSuchViewError, match=r"^no view was ever named s.nope$"):
        store.load_view("s.nope", as_of=4_500)


def test_as_of_in_a_gap_of_a_names_history_says_what_ended_it_and_what_gave_it_back(store, monkeypatch):
    """A time at which no view had a name it had before is told, from the log, how the view that had
    it last let go of it (renamed: to what; or dropped; when and by whom, as `no such view` says it)
    and what gave it to a view next: made again, imported, or another view renamed to it; no more
    than there is. Times as the time asked is written, to the millisecond."""
    import viewstore.catalog

    clock = [1_000]
    monkeypatch.setattr(viewstore.catalog.time, "time_ns", lambda: clock[0] * 1_000_000)

    def at(ms, actor, write):
        clock[0] = ms
        store.actor = actor
        return write()

    def iso(ms):
        return dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc).isoformat(timespec="milliseconds")

    at(1_000, "bob", lambda: make(store, "s.old"))
    at(2_250, "bob", lambda: store.rename_view("s.old", "s.new"))
    assert _missing(lambda: store.load_view("s.old", as_of=3_000)) == (
        f"no view s.old existed at {iso(3_000)} (renamed to s.new at {iso(2_250)} by bob)")
    at(3_000, "alice", lambda: make(store, "s.gap"))
    at(4_000, "alice", lambda: store.drop_view("s.gap"))
    at(5_000, "carol", lambda: make(store, "s.gap"))
    at(6_000, "carol", lambda: store.drop_view("s.gap"))
    at(7_000, "dan", lambda: store.rename_view("s.new", "s.gap"))
    at(8_000, "dan", lambda: store.rename_view("s.gap", "s.old"))  # so that no view is known by s.gap now
    assert _missing(lambda: store.load_view("s.gap", as_of=4_500)) == (
        f"no view s.gap existed at {iso(4_500)} (dropped at {iso(4_000)} by alice; made again at {iso(5_000)})")
    # the last ending by then (at the very millisecond asked); given back by another view's rename
    assert _missing(lambda: store.load_view("s.gap", as_of=6_000)) == (
        f"no view s.gap existed at {iso(6_000)} (dropped at {iso(6_000)} by carol; s.new renamed to it at "
        f"{iso(7_000)})")
    assert _missing(lambda: store.load_view("s.gap", as_of=8_500)) == (
        f"no view s.gap existed at {iso(8_500)} (renamed to s.old at {iso(8_000)} by dan)")
    assert _missing(lambda: store.load_view("s.new", as_of=7_500)) == (
        f"no view s.new existed at {iso(7_500)} (renamed to s.gap at {iso(7_000)} by dan)")
    # one view renamed away, back and away again, busy between: its own rename back gives the name again
    at(11_000, "fay", lambda: make(store, "s.round"))
    for i in range(40):
        at(11_001 + i, "fay", lambda: store.alter_view("s.round", ViewChange.update_comment(str(i))))
    at(12_000, "gus", lambda: store.rename_view("s.round", "s.trip"))
    for i in range(40):
        at(12_001 + i, "fay", lambda: store.alter_view("s.trip", ViewChange.update_comment(str(i))))
    at(13_000, "gus", lambda: store.rename_view("s.trip", "s.round"))
    for i in range(40):
        at(13_001 + i, "fay", lambda: store.alter_view("s.round", ViewChange.update_comment(str(i))))
    at(14_000, "hal", lambda: store.rename_view("s.round", "s.away"))
    assert _missing(lambda: store.load_view("s.round", as_of=12_500)) == (
        f"no view s.round existed at {iso(12_500)} (renamed to s.trip at {iso(12_000)} by gus; s.trip renamed to "
        f"it at {iso(13_000)})")
    assert _missing(lambda: store.load_view("s.round", as_of=14_000)) == (
        f"no view s.round existed at {iso(14_000)} (renamed to s.away at {iso(14_000)} by hal)")
    # given back by an import, at the time its history brings
    at(9_000, "erin", lambda: make(store, "s.imp"))
    at(9_500, "erin", lambda: store.drop_view("s.imp"))
    at(10_000, "erin", lambda: store.import_view(
        "s.imp", source="test", versions=[_version(1, 20_000)],
        version_log=[VersionLogEntry(timestamp_ms=20_000, version_id=1)], current_version_id=1))
    assert _missing(lambda: store.load_view("s.imp", as_of=9_999)) == (
        f"no view s.imp existed at {iso(9_999)} (dropped at {iso(9_500)} by erin; imported at {iso(20_000)})")
    # before the history, only where it begins, as before
    assert _missing(lambda: store.load_view("s.gap", as_of=2_000)) == (
        f"no view s.gap existed at {iso(2_000)} (its history begins at {iso(3_000)})")


def test_as_of_in_a_gap_given_back_by_a_damaged_event_is_a_corrupt_log_error(store, monkeypatch):
    """What gave a name back is read from a row no fold of as_of reads (another view's, after the
    time), which a write behind the library's back may have damaged: a time stored there as text is a
    CorruptLogError showing it, not a TypeError nor a message made of it."""
    import viewstore.catalog

    clock = [1_000]
    monkeypatch.setattr(viewstore.catalog.time, "time_ns", lambda: clock[0] * 1_000_000)
    make(store, "s.gap")
    make(store, "s.other")
    clock[0] = 2_000
    store.drop_view("s.gap")
    clock[0] = 3_000
    store.rename_view("s.other", "s.gap")
    store.rename_view("s.gap", "s.elsewhere")  # (no view known by s.gap now, whose history as_of would read)
    with sqlite3.connect(store.path) as raw:
        raw.execute("DROP TRIGGER events_append_only_update")
        raw.execute("UPDATE events SET occurred_at = 'x' WHERE identifier = 's.gap' AND type = 'view.renamed'")
    raw.close()
    damaged = r"^the history of s.gap holds an event whose time is not an integer \('x' \(str\)\)$"
    with ViewStore(store.path) as reopened, pytest.raises(CorruptLogError, match=damaged):
        reopened.load_view("s.gap", as_of=2_500)



def test_as_of_in_a_gap_names_an_actor_that_is_not_printable_as_its_repr(tmp_path):
    """The actor of the drop that ended a name is written as no such view writes it: its repr where it
    holds a letter that cannot be printed, an escape that would reach a terminal as it is (planted,
    written as it was)."""
    with ViewStore(tmp_path / "actor.db", actor="al\x1bice") as store:
        make(store, "s.v")
        store.drop_view("s.v")
        dropped = store.history("s.v")[-1].occurred_at
    iso = [dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc).isoformat(timespec="milliseconds")
           for ms in (dropped + 5, dropped)]
    with ViewStore(tmp_path / "actor.db", actor="reader") as store:
        assert _missing(lambda: store.load_view("s.v", as_of=dropped + 5)) == (
            f"no view s.v existed at {iso[0]} (dropped at {iso[1]} by 'al\\x1bice')")

def test_as_of_the_millisecond_a_names_history_begins_gives_no_hint_of_where_it_begins(store, monkeypatch):
    """A view made and dropped within one millisecond leaves a name whose history begins at that
    millisecond, in which no view had it at its end: the error of that time says that it was dropped
    then, not where its history begins, since the time is not before the history (such a hint would
    read as a slip the caller did not make); a millisecond earlier still gets the hint."""
    import viewstore.catalog

    monkeypatch.setattr(viewstore.catalog.time, "time_ns", lambda: 6_000 * 1_000_000)
    make(store, "s.brief")
    store.drop_view("s.brief")
    with pytest.raises(NoSuchViewError, match=r"^no view s.brief existed at 1970-01-01T00:00:06.000\+00:00 \(dropped "
                                              r"at 1970-01-01T00:00:06.000\+00:00 by alice\)$"):
        store.load_view("s.brief", as_of=6_000)
    with pytest.raises(NoSuchViewError, match=r"^no view s.brief existed at 1970-01-01T00:00:05.999\+00:00 \(its "
                                              r"history begins at 1970-01-01T00:00:06.000\+00:00\)$"):
        store.load_view("s.brief", as_of=5_999)


def test_as_of_in_seconds_within_the_views_history_is_told_to_be_milliseconds(store):
    """time.time() is seconds, and as_of epoch milliseconds: read as milliseconds it is a moment of
    January 1970, before any history; when it would fall in the view's history read as seconds, the
    error says so. Not for a time given otherwise, nor a number that would not fall there."""
    make(store, "s.v")
    now = time.time()
    created = store.history("s.v")[0].occurred_at
    for given in (now, int(now), str(int(now)), f" {int(now)} "):
        seconds = int(float(given))
        with pytest.raises(NoSuchViewError) as raised:
            store.load_view("s.v", as_of=given)
        assert str(raised.value) == (
            "no view s.v existed at "
            f"{dt.datetime.fromtimestamp(seconds / 1000, dt.timezone.utc).isoformat(timespec='milliseconds')}"
            " (its history begins at "
            f"{store.history('s.v')[0].occurred_at_datetime.isoformat(timespec='milliseconds')})"
            f" (as_of is in epoch milliseconds; {seconds} looks like seconds)")
    assert store.load_view("s.v", as_of=int(now) * 1000 + 1000).name == "v"  # as milliseconds it works
    as_datetime = dt.datetime.fromtimestamp(int(now) / 1000, dt.timezone.utc)
    for given in (as_datetime, as_datetime.isoformat(),  # the same moment, not given as a number
                  created // 1000 - 1,  # seconds before the view's history began
                  int(now) + 86_400,  # seconds of tomorrow
                  500):
        with pytest.raises(NoSuchViewError) as raised:
            store.load_view("s.v", as_of=given)
        assert "looks like seconds" not in str(raised.value) and "its history begins at" in str(raised.value)


def test_as_of_in_seconds_is_told_by_the_second_it_names_and_only_before_the_names_history(store, monkeypatch):
    """The seconds hint is given when the second a number names, read as seconds, reaches into the
    name's history and is not in the future, both ends included: a view made at the very start of a
    second is in that second and not the one before, and a second that begins now is not in the
    future. It is not given for a time at or after the history's start (a gap after a drop, which is
    told the drop), nor for eight digits, which are read as a date."""
    import viewstore.catalog

    clock = [2_000_001_000]  # the start of second 2_000_001
    monkeypatch.setattr(viewstore.catalog.time, "time_ns", lambda: clock[0] * 1_000_000)

    def iso(ms):
        return dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc).isoformat(timespec="milliseconds")

    make(store, "s.v")
    begins = f" (its history begins at {iso(2_000_001_000)})"
    assert _missing(lambda: store.load_view("s.v", as_of=2_000_001)) == (
        f"no view s.v existed at {iso(2_000_001)}{begins} (as_of is in epoch milliseconds; 2000001 looks like seconds)")
    for second in (2_000_000, 2_000_002):  # the second before the view's; a second in the future
        assert _missing(lambda: store.load_view("s.v", as_of=second)) == f"no view s.v existed at {iso(second)}{begins}"
    clock[0] += 500
    store.drop_view("s.v")
    clock[0] = 2_000_002_000_000  # now the second 2_000_002_000 has begun
    assert _missing(lambda: store.load_view("s.v", as_of=2_000_002_000)) == (  # after the drop: the drop, no seconds
        f"no view s.v existed at {iso(2_000_002_000)} (dropped at {iso(2_000_001_500)} by alice)")
    january = 1_987_200_000  # 1970-01-24 in epoch milliseconds; read as seconds, it reaches into the history
    assert _missing(lambda: store.load_view("s.v", as_of="19700124")) == (  # a date, not a number
        f"no view s.v existed at {iso(january)}{begins}")
    assert _missing(lambda: store.load_view("s.v", as_of=january)) == (
        f"no view s.v existed at {iso(january)}{begins} (as_of is in epoch milliseconds; {january} looks like seconds)")


def test_as_of_in_seconds_is_told_for_a_view_made_in_the_last_millisecond_of_the_second(store, monkeypatch):
    """The second a number names runs to its last millisecond: a view made at .999 is in it, so the
    seconds hint is given (planted, a window ending at .998 passed the tests of the second's start)."""
    import viewstore.catalog

    clock = [2_000_001_999]
    monkeypatch.setattr(viewstore.catalog.time, "time_ns", lambda: clock[0] * 1_000_000)
    make(store, "s.v")
    assert _missing(lambda: store.load_view("s.v", as_of=2_000_001)).endswith(
        " (as_of is in epoch milliseconds; 2000001 looks like seconds)")
    clock[0] = 2_000_002_000  # the next second began: its history begins within the one named still
    assert _missing(lambda: store.load_view("s.v", as_of=2_000_001)).endswith("2000001 looks like seconds)")


def test_as_of_uses_snapshots_for_long_streams(store):
    make(store)
    times = {}
    for i in range(250):
        v = store.alter_view("sales.daily", ViewChange.set_property("i", str(i)))
        times[i] = v.audit.last_modified_time_ms
    for i in (0, 98, 99, 150, 249):
        assert int(store.load_view("sales.daily", as_of=times[i]).properties["i"]) >= i
    assert store.load_view("sales.daily", as_of=times[249]).properties["i"] == "249"


def test_a_snapshot_reads_the_same_whoever_wrote_it(store):
    """An import whose version 2 never became current holds its versions in the file's order; the
    snapshot a second store writes from the projections must equal the one a replay writes."""
    store.import_view("n.x", source="test", versions=[_version(1, 100), _version(2, 150), _version(3, 200)],
                      version_log=[VersionLogEntry(timestamp_ms=100, version_id=1),
                                   VersionLogEntry(timestamp_ms=200, version_id=3)], current_version_id=3)
    with ViewStore(store.path, actor="bob") as other:  # reads the state back from the projections
        while other.load_view("n.x").stream_version < 100:
            other.alter_view("n.x", ViewChange.set_property("k", str(other.load_view("n.x").stream_version)))
        assert len(other.projection_dump()["view_snapshots"]) == 1
        assert set(other.rebuild().values()) == {0}


def test_as_of_an_event_is_exact_within_a_millisecond(store, monkeypatch):
    """Times are milliseconds, so commits in one millisecond are one moment for ``as_of=time``;
    ``as_of=event`` gives the view right after that event's commit."""
    import viewstore.catalog

    frozen = time.time_ns()
    monkeypatch.setattr(viewstore.catalog.time, "time_ns", lambda: frozen)  # every commit in one millisecond
    make(store, comment="first")
    store.alter_view("sales.daily", ViewChange.update_comment("second"))
    store.replace_view("sales.daily", columns=COLS, representations=[("spark", "SELECT 2")], default_namespace="sales")
    history = store.history("sales.daily")
    assert len({e.occurred_at for e in history}) == 1
    assert store.load_view("sales.daily", as_of=history[0].occurred_at).comment == "second"  # the moment's end
    first, second, third = (store.load_view("sales.daily", as_of=e) for e in history)
    assert (first.comment, first.current_version_id) == ("first", 1)
    assert (second.comment, second.current_version_id) == ("second", 1)
    assert third.current_version_id == 2 and third == store.load_view("sales.daily")


def test_as_of_an_event_is_the_view_its_whole_commit_left(store):
    """An alter_view batch is one commit of several events: as_of any of them is the view that commit
    left, never a state half-way through it that no reader saw (a representation_added event whose
    view lacks that representation). Each write of a transaction block is a commit of its own."""
    make(store, comment="first")
    after = store.alter_view("sales.daily", ViewChange.update_comment("second"), ViewChange.rename("daily2"),
                             ViewChange.add_representation(("trino", "SELECT 1")),
                             ViewChange.update_representation("spark", "SELECT 3"))
    batch = store.history("sales.daily2")[1:]
    assert [e.type for e in batch] == ["view.comment_updated", "view.renamed", "view.representation_added",
                                       "view.representation_updated"]
    assert len({e.commit_id for e in batch}) == 1
    for event in batch:
        for name in ("sales.daily", "sales.daily2"):
            assert store.load_view(name, as_of=event) == after, (event.type, name)
    with store.transaction():
        third = store.alter_view("sales.daily2", ViewChange.update_comment("third"))
        store.alter_view("sales.daily2", ViewChange.set_property("k", "v"))
    first_write, second_write = store.history("sales.daily2")[-2:]
    assert store.load_view("sales.daily2", as_of=first_write) == third
    assert store.load_view("sales.daily2", as_of=second_write) == store.load_view("sales.daily2")


def test_as_of_an_event_follows_renames_and_refuses_strangers(store):
    make(store, comment="first")
    make(store, "sales.other")
    for i in range(SNAPSHOT_EVERY + 20):
        store.alter_view("sales.daily", ViewChange.set_property("i", str(i)))
    store.rename_view("sales.daily", "sales.renamed")
    history = store.history("sales.renamed")
    before = store.load_view("sales.renamed", as_of=history[0])  # under the name it had then
    assert before.identifier == ("sales", "daily") and before.comment == "first" and "i" not in before.properties
    late = history[SNAPSHOT_EVERY + 10]  # folded from the snapshot at stream version 100
    assert store.load_view("sales.renamed", as_of=late).properties["i"] == str(late.stream_version - 2)
    with pytest.raises(ValidationError, match="not of the history of sales.renamed"):
        store.load_view("sales.renamed", as_of=store.history("sales.other")[0])
    with pytest.raises(ValidationError, match="not in this store's log"):
        store.load_view("sales.renamed", as_of=late.model_copy(update={"position": late.position + 1}))
    store.drop_view("sales.renamed")
    with pytest.raises(NoSuchViewError, match="dropped by that event"):
        store.load_view("sales.renamed", as_of=store.history("sales.renamed")[-1])


def test_as_of_an_event_of_another_store_says_it_is_not_of_this_log(store, tmp_path):
    """An event of a view of the same name in another store (dev against prod, say) is no event of
    this log: the message says so rather than that the event of sales.daily is not of sales.daily's
    history; load_view and diff_view refuse it alike, writing nothing."""
    make(store)
    with ViewStore(tmp_path / "other.db", actor="bob") as other:
        make(other)
        (foreign,) = other.history("sales.daily")
    count = store.event_count()
    message = "^" + re.escape("that event (view.created of sales.daily) is not in this store's log "
                              "(an event of another store?)") + "$"
    with pytest.raises(ValidationError, match=message):
        store.load_view("sales.daily", as_of=foreign)
    with pytest.raises(ValidationError, match=message):
        store.diff_view("sales.daily", before=foreign)
    assert store.event_count() == count


def test_events_filters(store):
    make(store)
    with ViewStore(store.path, actor="bob") as bob:
        bob.alter_view("sales.daily", ViewChange.update_comment("by bob"))
        make(store, "sales.other")
        assert [e.type for e in store.events(actor="bob")] == ["view.comment_updated"]
        assert {e.view for e in store.events(view="sales.daily")} == {"sales.daily"}
        assert len(store.events(types="view.created")) == 2
        assert store.events(types={"view.created"}) == store.events(types=frozenset({"view.created"})) \
            == store.events(types=("view.created",))
        everything = store.events()
        assert [e.position for e in everything] == sorted(e.position for e in everything)
        mid = everything[1].occurred_at
        assert all(e.occurred_at >= mid for e in store.events(since=mid))
        assert all(e.occurred_at <= mid for e in store.events(until=mid))
        assert store.events(limit=1) == everything[:1]
        assert store.events(types=[]) == [] and store.event_rows(types=(), since=mid) == []  # no type: no event
        with pytest.raises(ValidationError, match=r"^unknown event type\(s\) view.nope; known: view.comment_updated, "
                                                  r"view.created, view.dropped, view.imported, "):
            store.events(types=["view.nope"])
        with pytest.raises(ValidationError, match=r"^bad since 'yesterday-ish': use ISO 8601 \(2026-11-22T10:00:00Z\) "
                                                  r"or epoch ms$"):
            store.events(since="yesterday-ish")


def test_actors_are_everyone_with_an_event_in_the_log_sorted(store):
    assert store.actors() == []
    make(store)
    with ViewStore(store.path, actor="bob") as bob, ViewStore(store.path, actor="Zoe") as zoe:
        bob.alter_view("sales.daily", ViewChange.update_comment("by bob"))
        zoe.drop_view("sales.daily")
    assert store.actors() == ["Zoe", "alice", "bob"]  # as SQLite sorts text: by code point
    assert store.events(actor="bobb") == [] and "bobb" not in store.actors()  # a typo, told from a quiet actor


def test_events_between_positions_are_those_of_every_plan_in_that_range(store):
    """since_position and until_position (inclusive) keep exactly the events in that range, whatever
    else is asked (by view, actor, time, types of either plan, a limit from either end)."""
    make(store)
    with ViewStore(store.path, actor="bob") as bob:
        for i in range(3):
            bob.alter_view("sales.daily", ViewChange.update_comment(f"by bob {i}"))
            make(store, f"sales.other{i}")
        store.rename_view("sales.other0", "sales.daily0")
        store.drop_view("sales.daily")
        make(store)  # a new view of the name
        everything = store.events()
        last = everything[-1].position
        assert [e.position for e in everything] == list(range(1, last + 1)) and last == 10
        mid = everything[5]
        filters = [{}, {"view": "sales.daily"}, {"actor": "bob"}, {"since": mid.occurred_at},
                   {"until": mid.occurred_at}, {"types": "view.created"},
                   {"types": ["view.comment_updated", "view.dropped"]},
                   {"view": "sales.daily", "types": "view.comment_updated"},
                   {"actor": "bob", "types": "view.comment_updated"}]
        bounds = [None, -5, 0, 1, 2, mid.position, last - 1, last, last + 1, 2**63 - 1]
        for asked in filters:
            whole = store.events(**asked)
            for low in bounds:
                for high in bounds:
                    kept = [e for e in whole
                            if (low is None or e.position >= low) and (high is None or e.position <= high)]
                    assert store.events(**asked, since_position=low, until_position=high) == kept, (asked, low, high)
                    for limit, newest in ((1, False), (2, True)):
                        expected = (kept[::-1] if newest else kept)[:limit]
                        assert store.events(**asked, since_position=low, until_position=high, limit=limit,
                                            newest_first=newest) == expected, (asked, low, high, limit)
                    rows = store.event_rows(**asked, since_position=low, until_position=high)
                    assert [r[0] for r in rows] == [e.position for e in kept]
        (one,) = store.events(view="sales.daily", since_position=mid.position, until_position=mid.position)
        assert one == mid
        for bad in (True, 1.0, "3", 2**63, -(2**63) - 1):
            for option in ("since_position", "until_position"):
                with pytest.raises(ValidationError, match=rf"^{option} must be a log position \(a 64-bit int\), "
                                                          rf"not {re.escape(repr(bad))}$"):
                    store.events(**{option: bad})
                with pytest.raises(ValidationError, match=rf"^{option} must be a log position"):
                    store.event_rows(**{option: bad})
        with pytest.raises(NoSuchViewError, match="^no view was ever named sales.nope$"):
            store.events(view="sales.nope", since_position=1, until_position=1)


def _two_views_then_a_drop(store):
    """sales.daily at positions 1, 3, 5, 7 and its drop at 9; sales.other between them."""
    make(store)
    make(store, "sales.other")
    for i in range(3):
        store.alter_view("sales.daily", ViewChange.update_comment(f"c{i}"))
        store.alter_view("sales.other", ViewChange.update_comment(f"c{i}"))
    store.drop_view("sales.daily")


def test_history_takes_a_range_of_log_positions_as_events_does(store):
    """history()'s since_position and until_position (inclusive) keep exactly the view's events in
    that range, as events(view=...) does for the view's current stream; a bound that is no 64-bit
    int is the same ValidationError, a range given backwards holds no event."""
    _two_views_then_a_drop(store)
    whole = store.history("sales.daily")
    assert [e.position for e in whole] == [1, 3, 5, 7, 9] and whole[-1].type == "view.dropped"
    bounds = [None, -5, 0, 1, 2, 3, 8, 9, 10, 2**63 - 1]
    for low in bounds:
        for high in bounds:
            kept = [e for e in whole if (low is None or e.position >= low) and (high is None or e.position <= high)]
            assert store.history("sales.daily", since_position=low, until_position=high) == kept, (low, high)
            assert kept == store.events(view="sales.daily", since_position=low, until_position=high)
    assert store.history("sales.daily", since_position=5, until_position=3) == []
    for bad in (True, 1.0, "3", 2**63, -(2**63) - 1):
        for option in ("since_position", "until_position"):
            with pytest.raises(ValidationError, match=rf"^{option} must be a log position \(a 64-bit int\), "
                                                      rf"not {re.escape(repr(bad))}$"):
                store.history("sales.daily", **{option: bad})
    with pytest.raises(NoSuchViewError, match="^no view was ever named sales.nope$"):
        store.history("sales.nope", since_position=1, until_position=1)


def test_events_of_a_name_no_view_ever_had_is_no_such_view_as_history_says(store):
    """A typo in view= is not a view without events: events() and event_rows() raise as history() does."""
    make(store)
    store.rename_view("sales.daily", "sales.renamed")
    store.drop_view("sales.renamed")
    for name in ("sales.daily", "sales.renamed", "SALES.Daily"):  # a name once held keeps its events
        assert store.events(view=name) and store.event_rows(view=name)
    for call in (store.history, lambda v: store.events(view=v), lambda v: store.event_rows(view=v),
                 lambda v: store.events(view=v, actor="nobody", limit=0)):
        with pytest.raises(NoSuchViewError, match="^no view was ever named sales.dialy$"):
            call("sales.dialy")
    assert store.events(view="sales.daily", actor="nobody") == []  # a name held, other filters matching none
    assert store.events(actor="nobody") == [] and store.event_rows(types="view.replaced") == []


def _at(event):
    """How a no-such-view message dates and signs an event: to the second, in UTC, and its actor."""
    return f"at {event.occurred_at_datetime.strftime('%Y-%m-%d %H:%M:%S')} UTC by {event.actor}"


def _missing(call):
    with pytest.raises(NoSuchViewError) as raised:
        call()
    return str(raised.value)


def test_no_such_view_says_when_a_view_of_that_name_is_gone_rather_than_never_was(store):
    make(store)
    make(store, "sales.other")
    store.actor = "bob"
    store.rename_view("sales.daily", "sales.renamed")
    store.drop_view("sales.other")
    renamed, dropped = store.history("sales.renamed")[-1], store.history("sales.other")[-1]
    expected = {"sales.daily": f"no such view: sales.daily (renamed to sales.renamed (live) {_at(renamed)}; "
                               "its history remains)",
                "sales.other": f"no such view: sales.other (dropped {_at(dropped)}; its history remains)"}
    assert " by bob" in expected["sales.daily"] and renamed.actor == dropped.actor == "bob"
    for name in ("sales.daily", "sales.other"):
        for call in (lambda: store.load_view(name), lambda: store.alter_view(name, ViewChange.update_comment("x")),
                     lambda: store.rollback_view(name, 1), lambda: store.rename_view(name, "sales.elsewhere"),
                     lambda: store.export_hms(name, "trino")):
            assert _missing(call) == expected[name]
        assert store.history(name)  # as the message says
    assert _missing(lambda: store.load_view("sales.never")) == "no such view: sales.never"


def test_no_such_view_of_a_name_never_held_offers_the_close_live_names(store):
    for ident in ("sales.orders", "sales.order_lines", "sales.daily", "sales.zz_orders", "crm.orders"):
        make(store, ident)
    make(store, "sales.ordered")
    store.drop_view("sales.ordered")  # a dropped view is not offered
    for call in (lambda: store.load_view("sales.ordrs"), lambda: store.rollback_view("sales.ordrs", 1),
                 lambda: store.alter_view("sales.ordrs", ViewChange.update_comment("x"))):
        assert _missing(call) == "no such view: sales.ordrs (did you mean sales.orders?)"
    assert _missing(lambda: store.load_view("sales.order_line")) == (
        "no such view: sales.order_line (did you mean sales.order_lines?)")  # not every name alike
    assert _missing(lambda: store.load_view("sales.z_orders")) == (
        "no such view: sales.z_orders (did you mean sales.zz_orders or sales.orders?)")  # closest first
    # its own namespace first: crm.orders is as close, and not offered while sales has a close name
    assert _missing(lambda: store.load_view("sales.orderz")) == (
        "no such view: sales.orderz (did you mean sales.orders?)")
    # a typo in the namespace: the close namespaces' close names
    assert _missing(lambda: store.load_view("sale.orders")) == (
        "no such view: sale.orders (did you mean sales.orders, sales.zz_orders or sales.order_lines?)")  # a few at most
    assert _missing(lambda: store.load_view("crn.orders")) == "no such view: crn.orders (did you mean crm.orders?)"
    assert _missing(lambda: store.load_view("sales.nothing_like_it")) == "no such view: sales.nothing_like_it"
    assert store.view_exists("sales.ordrs") is False


def test_history_of_a_name_never_held_offers_the_close_live_names_as_load_view_does(store):
    for ident in ("sales.orders", "sales.order_lines", "crm.orders"):
        make(store, ident)
    make(store, "sales.ordered")
    store.drop_view("sales.ordered")  # its history remains; a dropped view is not offered
    def streamed(name):
        with store.stream_history(name) as events:
            return list(events)

    for call in (store.history, streamed):
        assert _missing(lambda: call("sales.ordrs")) == (
            "no view was ever named sales.ordrs (did you mean sales.orders?)")
        assert _missing(lambda: call("crn.orders")) == "no view was ever named crn.orders (did you mean crm.orders?)"
        assert _missing(lambda: call("sales.nothing_like_it")) == "no view was ever named sales.nothing_like_it"
    assert [e.type for e in store.history("sales.ordered")] == ["view.created", "view.dropped"]


def test_as_of_and_events_of_a_name_never_held_offer_the_close_live_names_as_history_does(store):
    for ident in ("sales.orders", "crm.orders"):
        make(store, ident)
    def streamed(name):
        with store.stream_events(view=name) as events:
            return list(events)

    calls = (lambda name: store.load_view(name, as_of=dt.datetime.now(dt.timezone.utc)),
             lambda name: store.events(view=name), lambda name: store.event_rows(view=name), streamed)
    for call in calls:
        assert _missing(lambda: call("sales.ordrs")) == (
            "no view was ever named sales.ordrs (did you mean sales.orders?)")
        assert _missing(lambda: call("crn.orders")) == "no view was ever named crn.orders (did you mean crm.orders?)"
        assert _missing(lambda: call("sales.nothing_like_it")) == "no view was ever named sales.nothing_like_it"
    assert store.event_count() == 2


def test_no_such_view_compares_a_bounded_window_of_a_large_namespace(store, monkeypatch):
    import viewstore.catalog as catalog
    monkeypatch.setattr(catalog, "SUGGESTION_WINDOW", 2)
    for ident in ("s.aorders", "s.b", "s.c", "s.d", "s.e", "s.orders", "s.x", "s.y", "s.z"):
        make(store, ident)
    assert store._projections.names_near("s", "ordrs", 2) == ["orders", "e", "x", "y"]  # nearest in sort order
    assert _missing(lambda: store.load_view("s.ordrs")) == "no such view: s.ordrs (did you mean s.orders?)"
    # a typo in the first letter and another sort away from the name: beyond the window, no hint
    assert _missing(lambda: store.load_view("s.zordrs")) == "no such view: s.zordrs"
    monkeypatch.setattr(catalog, "SUGGESTION_WINDOW", 500)
    assert _missing(lambda: store.load_view("s.zordrs")) == (
        "no such view: s.zordrs (did you mean s.orders or s.aorders?)")


def test_no_such_view_compares_the_names_on_both_sides_of_the_typed_one(store, monkeypatch):
    """The window is the names before the typed one and those from it on: a typo that sorts before
    the name it misspells (oders, orders) finds it among the second (planted, the first half of the
    window alone compared passed every other test, the default window holding every name of theirs)."""
    import viewstore.catalog as catalog
    monkeypatch.setattr(catalog, "SUGGESTION_WINDOW", 2)
    for ident in ("s.b", "s.d", "s.e", "s.orders", "s.x", "s.y"):
        make(store, ident)
    assert store._projections.names_near("s", "oders", 2) == ["e", "d", "orders", "x"]
    assert _missing(lambda: store.load_view("s.oders")) == "no such view: s.oders (did you mean s.orders?)"


def _first_letters(store, namespace, at_most):
    """The first letters of a namespace's live names the hint's look-up finds: those after the empty prefix."""
    return [letter for _, letter in store._projections.next_letters(namespace, [""], at_most, at_most)]


def test_no_such_view_finds_a_typo_in_the_first_letter_beyond_the_window(store, monkeypatch):
    """A letter added before a name, its first dropped or changed, or its first two swapped sort the
    typed name away from its own, past the window: the names such a typo would make of it are looked
    up (for each first letter the namespace's names have, up to SUGGESTION_LETTERS), its own namespace
    and the close ones alike."""
    import viewstore.catalog as catalog
    monkeypatch.setattr(catalog, "SUGGESTION_WINDOW", 2)
    for ident in ("s.a1", "s.a2", "s.b1", "s.b2", "s.n1", "s.n2", "s.orders", "s.p1", "s.p2", "s.q1",
                  "s.q2", "s.r1", "s.r2", "s.x1", "s.x2", "s.é1", "s.édition"):
        make(store, ident)
    assert _first_letters(store, "s", 100) == ["a", "b", "n", "o", "p", "q", "r", "x", "é"]
    assert _first_letters(store, "s", 3) == ["a", "b", "n"]
    assert _first_letters(store, "nowhere", 100) == []
    for typed in ("xorders", "rders", "zrders", "roders", "aorders"):
        assert _missing(lambda: store.load_view(f"s.{typed}")) == (
            f"no such view: s.{typed} (did you mean s.orders?)")
    assert _missing(lambda: store.load_view("s.dition")) == "no such view: s.dition (did you mean s.édition?)"
    assert _missing(lambda: store.load_view("sx.rders")) == "no such view: sx.rders (did you mean s.orders?)"
    assert _missing(lambda: store.history("s.rders")) == (
        "no view was ever named s.rders (did you mean s.orders?)")
    # bounded: with the first letters up to n, a dropped o is not tried
    monkeypatch.setattr(catalog, "SUGGESTION_LETTERS", 3)
    assert _missing(lambda: store.load_view("s.rders")) == "no such view: s.rders"
    assert _missing(lambda: store.load_view("s.xorders")) == (
        "no such view: s.xorders (did you mean s.orders?)")


def test_no_such_view_looks_up_first_letter_typos_when_one_side_of_the_window_is_full(store, monkeypatch):
    """A typed name sorting before every name (or after) fills one side of the window and leaves the
    other empty: the window may still have left names out, so the typos of its first letter are
    looked up (planted, taking a window of SUGGESTION_WINDOW names, or one with a side not full,
    for the namespace read whole offered nothing for 0rders or zorders)."""
    import viewstore.catalog as catalog
    monkeypatch.setattr(catalog, "SUGGESTION_WINDOW", 2)
    for ident in ("s.a1", "s.a2", "s.b1", "s.orders", "s.x1", "s.x2"):
        make(store, ident)
    assert store._projections.names_near("s", "0rders", 2) == ["a1", "a2"]
    assert store._projections.names_near("s", "zorders", 2) == ["x2", "x1"]
    for typed in ("0rders", "zorders"):
        assert _missing(lambda: store.load_view(f"s.{typed}")) == f"no such view: s.{typed} (did you mean s.orders?)"


def test_no_such_view_offers_a_name_once_when_the_window_and_a_typo_both_find_it(store, monkeypatch):
    """porders has orders in its window and as its first letter dropped: it is offered once
    (planted, the two lists joined without dropping the repeat offered s.orders or s.orders)."""
    import viewstore.catalog as catalog
    monkeypatch.setattr(catalog, "SUGGESTION_WINDOW", 2)
    for ident in ("s.n1", "s.orders", "s.q1", "s.q2"):
        make(store, ident)
    assert store._projections.names_near("s", "porders", 2) == ["orders", "n1", "q1", "q2"]
    assert _missing(lambda: store.load_view("s.porders")) == "no such view: s.porders (did you mean s.orders?)"


def test_no_such_view_looks_up_first_letter_typos_among_live_views_only(store, monkeypatch):
    """Beyond the window, a typo's guess is looked up among live views: a dropped view is not offered
    however it is found, and its first letter is not counted among the namespace's (planted, the look-up
    reading dropped views offered s.orders, dropped; the first letters' first seek reading them listed
    a dropped view's a)."""
    import viewstore.catalog as catalog
    monkeypatch.setattr(catalog, "SUGGESTION_WINDOW", 2)
    for ident in ("s.a0", "s.b1", "s.b2", "s.orders", "s.p1", "s.p2", "s.x1", "s.x2"):
        make(store, ident)
    store.drop_view("s.orders")
    store.drop_view("s.a0")
    assert _first_letters(store, "s", 100) == ["b", "p", "x"]
    for typed in ("rders", "xorders", "zrders"):
        assert _missing(lambda: store.load_view(f"s.{typed}")) == f"no such view: s.{typed}"


def test_first_letters_are_those_of_the_namespace_asked(store):
    """Each step of the loose scan seeks within the namespace asked (planted, the recursive step
    without its namespace listed the letters of the namespaces sorting after it)."""
    for ident in ("s.b1", "s.d1", "t.a1", "t.c1", "t.e1", "u.z1"):
        make(store, ident)
    assert _first_letters(store, "s", 100) == ["b", "d"]
    assert _first_letters(store, "t", 100) == ["a", "c", "e"]
    assert _first_letters(store, "t", 2) == ["a", "c"]


def test_first_letters_end_at_a_name_beginning_with_the_last_code_point(store):
    """U+10FFFF has no code point after it to seek from: the scan ends there, the letter listed once
    (planted, the bound taken as <= 1114111 sought from char(1114112), U+FFFD, and listed U+10FFFF
    again up to the limit)."""
    for ident in ("s.a1", "s.\U0010ffffx"):
        make(store, ident)
    assert _first_letters(store, "s", 100) == ["a", "\U0010ffff"]

def test_first_letters_seek_past_the_code_point_before_the_last(store):
    """A letter one code point short of the last, U+10FFFE, still has one after it to seek: the names
    beginning with U+10FFFF are listed too (planted, the bound one lower ended the scan at U+10FFFE)."""
    for ident in ("s.a1", "s.\U0010fffex", "s.\U0010ffffx"):
        make(store, ident)
    assert _first_letters(store, "s", 100) == ["a", "\U0010fffe", "\U0010ffff"]


def test_first_letters_list_a_name_that_is_one_letter_long(store):
    """Each step seeks the first name at or after the code point past the letter before: a name that
    is that code point alone is the first there (planted, seeking past it skipped b: a, c and d)."""
    for ident in ("s.a", "s.b", "s.c", "s.d1"):
        make(store, ident)
    assert _first_letters(store, "s", 100) == ["a", "b", "c", "d"]


def test_first_letters_leave_a_name_that_is_not_text_out(store, monkeypatch):
    """A damaged views row whose name is a blob has no first letter to try: its first byte is not
    listed, and a typo's look-up beyond the window still offers the close live name (planted, the
    letters kept whatever their type gave a blob letter, and joining it to the typed name raised
    TypeError, no ViewStoreError)."""
    import viewstore.catalog as catalog
    monkeypatch.setattr(catalog, "SUGGESTION_WINDOW", 2)
    for ident in ("s.a1", "s.a2", "s.orders", "s.x1", "s.x2", "s.zz"):
        make(store, ident)
    with sqlite3.connect(store.path) as raw:
        raw.execute("UPDATE views SET name = CAST('zz' AS BLOB) WHERE name = 'zz'")
    raw.close()
    with ViewStore(store.path) as reopened:
        assert _first_letters(reopened, "s", 100) == ["a", "o", "x"]
        assert _missing(lambda: reopened.load_view("s.rders")) == "no such view: s.rders (did you mean s.orders?)"


def test_no_such_view_tries_the_first_letters_up_to_suggestion_letters_and_no_fewer(store, monkeypatch):
    """The first letters tried are SUGGESTION_LETTERS of them, the last included: by default a hundred,
    so a dropped o found as the hundredth letter of a namespace (planted, one letter fewer or a bound
    of ten left it out)."""
    import viewstore.catalog as catalog
    assert catalog.SUGGESTION_LETTERS == 100
    monkeypatch.setattr(catalog, "SUGGESTION_WINDOW", 2)
    monkeypatch.setattr(catalog, "SUGGESTION_LETTERS", 4)  # a, b, n, o
    for ident in ("s.a1", "s.b1", "s.n1", "s.orders", "s.p1", "s.q1"):
        make(store, ident)
    assert _missing(lambda: store.load_view("s.rders")) == "no such view: s.rders (did you mean s.orders?)"
    monkeypatch.setattr(catalog, "SUGGESTION_LETTERS", 100)
    store.drop_view("s.orders")
    for code in range(0x4E00, 0x4E00 + 94):  # after a, b, n, p and q, 94 CJK ideographs (no case to fold)
        make(store, f"s.{chr(code)}1")
    make(store, f"s.{chr(0x4E00 + 94)}rders")  # the hundredth first letter
    make(store, f"s.{chr(0x4E00 + 95)}1")
    assert _first_letters(store, "s", 1000)[99:] == [chr(0x4E00 + 94), chr(0x4E00 + 95)]
    assert _missing(lambda: store.load_view("s.rders")) == (
        f"no such view: s.rders (did you mean s.{chr(0x4E00 + 94)}rders?)")


def test_no_such_view_offers_at_most_three_names_compared_whole_only_across_namespaces(store):
    """The suggestion's limits: of four close names three are offered, closest first; a name in its
    own namespace is compared by its name alone (sharing the namespace makes no name close), while
    every close namespace is searched, and across namespaces the whole names are held to the same
    cutoff; a namespace of several levels is the typed one whole."""
    for ident in ("s.ordrss", "s.ordrsa", "s.ordrs1", "s.oordrs", "team.abcd", "prod.abcdef", "a.b.orders",
                  "sales.orders", "sals.orders", "salez.orders"):
        make(store, ident)
    assert _missing(lambda: store.load_view("s.ordrs")) == (
        "no such view: s.ordrs (did you mean s.ordrss, s.ordrsa or s.ordrs1?)")  # not s.oordrs, the fourth
    # abxy is no typo of abcd, though team.abxy and team.abcd are alike as whole names
    assert _missing(lambda: store.load_view("team.abxy")) == "no such view: team.abxy"
    # each of the three namespaces close to sale is searched, not the closest alone
    assert _missing(lambda: store.load_view("sale.orders")) == (
        "no such view: sale.orders (did you mean salez.orders, sales.orders or sals.orders?)")
    # prod is close to prd, but prod.abcdef to prd.abcxyz less than the cutoff asks
    assert _missing(lambda: store.load_view("prd.abcxyz")) == "no such view: prd.abcxyz"
    assert _missing(lambda: store.load_view("a.b.ordrs")) == "no such view: a.b.ordrs (did you mean a.b.orders?)"


def test_no_such_view_finds_a_first_letter_typo_in_a_namespace_of_a_hundred_views(store):
    """The default window is wide enough for a namespace of some hundred views to be compared whole:
    a typo in the first letter, which sorts the name away from its own, is still offered."""
    for i in range(100):
        make(store, f"s.p{i:02}")
    make(store, "s.orders")
    assert _missing(lambda: store.load_view("s.zorders")) == "no such view: s.zorders (did you mean s.orders?)"


def test_no_such_view_offers_no_dropped_name_sorting_after_the_typed_one(store):
    """A dropped view is not offered whichever side of the typed name it sorts on (the window reads
    the names before it and those from it on, each its own query): planted, the second query
    reading dropped views too offered sales.ordrsx, dropped."""
    make(store, "sales.orders")
    make(store, "sales.ordrsx")
    store.drop_view("sales.ordrsx")
    assert _missing(lambda: store.load_view("sales.ordrs")) == "no such view: sales.ordrs (did you mean sales.orders?)"
    assert _missing(lambda: store.load_view("sale.ordrsx")) == "no such view: sale.ordrsx (did you mean sales.orders?)"


def test_no_such_view_leaves_a_name_that_is_not_text_out_of_its_suggestions(store):
    """A damaged views row whose name is a blob is no name to offer: not as the text of its bytes
    (sales.b'orders') when the namespace is the one mistyped."""
    make(store, "sales.orders")
    make(store, "sales.other")
    with sqlite3.connect(store.path) as raw:
        raw.execute("UPDATE views SET name = CAST('orders' AS BLOB) WHERE name = 'orders'")
    raw.close()
    with ViewStore(store.path) as reopened:
        assert _missing(lambda: reopened.load_view("sale.orders")) == "no such view: sale.orders"

def test_no_such_view_finds_each_kind_of_namespace_typo_beyond_the_window(store, monkeypatch):
    """A typo in the namespace is looked for as one in a name is: among the namespaces each side of the
    typed one in sort order, and those one typo in its first letter would make of it. A letter added,
    dropped, changed or two swapped, at the start, in the middle or at the end, finds the namespace
    meant, though the window of each side holds two namespaces and leaves it out for a typo in the
    first letter (planted, the window alone left xsales, ales, zales and asles without a hint)."""
    import viewstore.catalog as catalog
    monkeypatch.setattr(catalog, "SUGGESTION_WINDOW", 2)
    for ident in ("a1.v", "a2.v", "b1.v", "n1.v", "n2.v", "sales.orders", "t1.v", "t2.v", "x1.v", "x2.v"):
        make(store, ident)
    assert store._projections.namespaces_near("xsales", 2) == ["x2", "x1"]  # sales beyond the window
    assert store._projections.namespaces_near("ales", 2) == ["a2", "a1", "b1", "n1"]
    for typed in ("salesx", "saxles", "xsales",   # a letter added
                  "sale", "sles", "ales",         # dropped
                  "salez", "sakes", "zales",      # changed
                  "saels", "slaes", "asles"):     # two swapped
        assert _missing(lambda: store.load_view(f"{typed}.orders")) == (
            f"no such view: {typed}.orders (did you mean sales.orders?)"), typed
    assert _missing(lambda: store.history("zales.orders")) == (
        "no view was ever named zales.orders (did you mean sales.orders?)")
    # bounded: with the first letters up to n, a dropped s is not tried
    monkeypatch.setattr(catalog, "SUGGESTION_LETTERS", 3)
    assert _missing(lambda: store.load_view("ales.orders")) == "no such view: ales.orders"


def _steps_of_missing(store, typed):
    """The steps of SQLite's virtual machine the error of loading ``typed`` takes (the work of its
    suggestion, not timed), and its message."""
    count = 0

    def step():
        nonlocal count
        count += 1
        return 0
    _missing(lambda: store.load_view(typed))  # once before counting: what a first call sets up is not counted
    store._projections.conn.set_progress_handler(step, 1)
    try:
        message = _missing(lambda: store.load_view(typed))
    finally:
        store._projections.conn.set_progress_handler(None, 1)
    return count, message


def test_no_such_view_of_a_mistyped_namespace_does_not_read_every_namespace(store, monkeypatch):
    """The namespaces a typo in one is compared with are sought by index (the window each side and the
    first-letter guesses), never the whole list of namespaces: the SQLite work of the error (counted
    in steps of its virtual machine, not timed) is the same with ten times the namespaces (planted,
    difflib run over Projections.namespaces() took 1,790 steps for sale.orders among 41 namespaces and
    15,470 among 401)."""
    import viewstore.catalog as catalog
    monkeypatch.setattr(catalog, "SUGGESTION_WINDOW", 5)

    make(store, "sales.orders")
    for i in range(20):
        make(store, f"p{i:03}.v")
        make(store, f"t{i:03}.v")
    few = {typed: _steps_of_missing(store, f"{typed}.orders") for typed in ("sale", "zales", "nothing")}
    assert few["sale"][1] == "no such view: sale.orders (did you mean sales.orders?)"
    assert few["zales"][1] == "no such view: zales.orders (did you mean sales.orders?)"
    assert few["nothing"][1] == "no such view: nothing.orders"
    with store.transaction():
        for i in range(20, 200):
            make(store, f"p{i:03}.v")
            make(store, f"t{i:03}.v")
    monkeypatch.setattr(type(store._projections), "namespaces",
                        lambda self: pytest.fail("every namespace read for a hint"))
    for typed, (count, message) in few.items():
        assert _steps_of_missing(store, f"{typed}.orders") == (count, message), typed


def _typos(word):
    """One typo of each kind in ``word``, at its start, in its middle and at its end: a letter added,
    dropped, changed, two neighbours swapped."""
    return (f"x{word}", f"{word[:3]}x{word[3:]}", f"{word}x",
            word[1:], word[:2] + word[3:], word[:-1],
            f"z{word[1:]}", f"{word[:2]}x{word[3:]}", f"{word[:-1]}x",
            word[1] + word[0] + word[2:], word[:2] + word[3] + word[2] + word[4:], word[:-2] + word[-1] + word[-2])


def _hemmed_in(typed):
    """Two texts each side of ``typed``, nearer to it in sort order than the word it misspells and far
    from it by difflib's ratio: a window of two each side holds them alone."""
    below = typed[:-1] + chr(ord(typed[-1]) - 1) + "~" * 10
    return below, below + "~", typed + "0" + "~" * 10, typed + "1" + "~" * 10


@pytest.mark.parametrize("part", ["name", "namespace"])
def test_no_such_view_finds_each_kind_of_typo_anywhere_beyond_the_window(store, monkeypatch, part):
    """A letter added, dropped or changed, or two swapped, at the start, in the middle or at the end of
    a name or a namespace, finds the one meant though the window of two each side of the typed one
    leaves it out: the names one typo at each position would make are looked up (planted, the first
    letter's typos alone left the eight in the middle and at the end without a hint, in either)."""
    import viewstore.catalog as catalog
    monkeypatch.setattr(catalog, "SUGGESTION_WINDOW", 2)
    p = store._projections
    word, ident, near = (("orders", "s.{}", lambda typed: p.names_near("s", typed, 2)) if part == "name" else
                         ("sales", "{}.orders", lambda typed: p.namespaces_near(typed, 2)))
    typos = _typos(word)
    with store.transaction():
        make(store, ident.format(word))
        for filler in {filler for typed in typos for filler in _hemmed_in(typed)}:
            make(store, ident.format(filler))
    for typed in typos:
        assert word not in near(typed), typed
        assert _missing(lambda: store.load_view(ident.format(typed))) == (
            f"no such view: {ident.format(typed)} (did you mean {ident.format(word)}?)"), typed


def test_no_such_view_offers_a_short_name_one_typo_away_below_the_cutoff(store):
    """One typo in a short name leaves difflib's ratio below the cutoff (bgi and big: 0.67); it is
    offered all the same, and before a name the ratio puts closer that is two typos away. A typed
    name of one or two letters is left to the cutoff: x is not offered every name of one letter."""
    for ident in ("sales.big", "sales.a", "sales.b", "sales.ab", "sales.abcdefghij", "sales.abdcefgh"):
        make(store, ident)
    assert _missing(lambda: store.load_view("sales.bgi")) == "no such view: sales.bgi (did you mean sales.big?)"
    assert _missing(lambda: store.load_view("sales.x")) == "no such view: sales.x"
    assert _missing(lambda: store.load_view("sales.ba")) == "no such view: sales.ba"
    # abcdefghij: two letters added, ratio 0.89; abdcefgh: two swapped, ratio 0.88
    assert _missing(lambda: store.load_view("sales.abcdefgh")) == (
        "no such view: sales.abcdefgh (did you mean sales.abdcefgh or sales.abcdefghij?)")


def test_no_such_view_finds_a_typo_after_a_wildcard_of_like_or_glob(store, monkeypatch):
    """The letters that follow a typed name's start are sought by comparing names with it, not by LIKE
    or GLOB: a start holding %, _, *, ? or [ finds the names that begin with it as written, and a typo
    after it the name meant beyond the window (planted, names matched with GLOB of the start and a *
    offered nothing for ab[cx)."""
    import viewstore.catalog as catalog
    monkeypatch.setattr(catalog, "SUGGESTION_WINDOW", 2)
    meant = ("ab%cd", "ab_cd", "ab*cd", "ab?cd", "ab[cd")
    typos = [word[:-1] + "x" for word in meant] + [word[:2] + word[3] + word[2] + word[4:] for word in meant]
    with store.transaction():
        for word in meant:
            make(store, f"s.{word}")
        for name in {filler for typed in typos for filler in _hemmed_in(typed)} - set(meant):
            make(store, f"s.{name}")
    for word, typed in zip(meant * 2, typos):
        assert word not in store._projections.names_near("s", typed, 2), typed
        assert _missing(lambda: store.load_view(f"s.{typed}")) == f"no such view: s.{typed} (did you mean s.{word}?)"


def test_no_such_view_of_a_typo_anywhere_does_the_same_work_among_ten_times_the_names(store, monkeypatch):
    """The names a typo anywhere would make are sought by index: the SQLite work of the error (counted in
    steps of its virtual machine, not timed) is the same with ten times the names around, for a typo at
    the start, in the middle, at the end, and in a name of 255 letters."""
    import viewstore.catalog as catalog
    monkeypatch.setattr(catalog, "SUGGESTION_WINDOW", 5)

    long = "q" * 254 + "r"
    make(store, "s.orders")
    make(store, f"s.{long}")
    for i in range(20):
        make(store, f"s.p{i:03}")
        make(store, f"s.{'q' * 100}0{i:04}")
    typed = ("rders", "ordrs", "ordersx", "q" * 254 + "s")
    few = {t: _steps_of_missing(store, f"s.{t}") for t in typed}
    assert few["ordrs"][1] == "no such view: s.ordrs (did you mean s.orders?)"
    assert few["q" * 254 + "s"][1] == f"no such view: s.{'q' * 254}s (did you mean s.{long}?)"
    with store.transaction():
        for i in range(20, 200):
            make(store, f"s.p{i:03}")
            make(store, f"s.{'q' * 100}0{i:04}")
    for t, (count, message) in few.items():
        assert _steps_of_missing(store, f"s.{t}") == (count, message), t


def test_no_such_view_seeks_at_most_suggestion_seeks_letters_for_a_long_name(store, monkeypatch):
    """Every position of a long typed name may have letters to try: at most SUGGESTION_SEEKS are
    sought in all, in one query, each position's first before any second (without it, 1,019 letters
    would be sought here: four at each of 254 positions, three at the last)."""
    import viewstore.catalog as catalog
    monkeypatch.setattr(catalog, "SUGGESTION_WINDOW", 2)
    monkeypatch.setattr(catalog, "SUGGESTION_SEEKS", 300)
    with store.transaction():
        for i in range(255):
            for letter in "abc":
                make(store, f"s.{'q' * i}{letter}")
    statements, letters = [], []
    reading = store._projections.next_letters

    def next_letters(*args):
        letters.append(reading(*args))
        return letters[-1]
    monkeypatch.setattr(store._projections, "next_letters", next_letters)
    store._projections.conn.set_trace_callback(statements.append)
    try:
        # a is found one typo away, first; b and c, in the window, are letters beyond the bound: difflib's
        assert _missing(lambda: store.load_view(f"s.{'q' * 254}x")) == (
            f"no such view: s.{'q' * 254}x (did you mean s.{'q' * 254}a, s.{'q' * 254}c or s.{'q' * 254}b?)")
    finally:
        store._projections.conn.set_trace_callback(None)
    assert len(letters) == 1 and [letter for _, letter in letters[0]] == ["a"] * 255 + ["b"] * 45
    assert len([s for s in statements if s.startswith("WITH RECURSIVE next(")]) == 1



def test_no_such_view_tries_typos_up_to_the_end_of_a_neighbour_that_is_the_typed_names_start(store):
    """The positions a typo is looked for at reach the end of the longest start the typed name shares
    with a neighbour, all of it where the neighbour is that start: sales.ab is aba with its last letter
    dropped, one typo, and offered first as one (planted, a start counted one letter short left ab to
    difflib's ratio, after the other names one typo away)."""
    for ident in ("sales.aa", "sales.aab", "sales.ab", "sales.b"):
        make(store, ident)
    assert _missing(lambda: store.load_view("sales.aba")) == (
        "no such view: sales.aba (did you mean sales.ab, sales.aa or sales.aab?)")


def test_no_such_view_looks_for_a_typo_in_the_first_suggestion_positions_only(store, monkeypatch):
    """A typo is looked for in the first SUGGESTION_POSITIONS positions and no further: with four, a
    letter changed at the fourth finds the name beyond the window, one changed at the fifth does not
    (planted, a bound one position too far found it)."""
    import viewstore.catalog as catalog
    monkeypatch.setattr(catalog, "SUGGESTION_WINDOW", 2)
    monkeypatch.setattr(catalog, "SUGGESTION_POSITIONS", 4)
    typos = ("ordxrs", "ordexs")
    with store.transaction():
        make(store, "s.orders")
        for filler in {filler for typed in typos for filler in _hemmed_in(typed)}:
            make(store, f"s.{filler}")
    for typed in typos:
        assert "orders" not in store._projections.names_near("s", typed, 2), typed
    assert _missing(lambda: store.load_view("s.ordxrs")) == "no such view: s.ordxrs (did you mean s.orders?)"
    assert _missing(lambda: store.load_view("s.ordexs")) == "no such view: s.ordexs"


def test_no_such_view_offers_a_whole_name_first_only_from_a_namespace_one_typo_away(store):
    """Across namespaces, the typed name in a namespace one typo away is offered first; in one only
    close by difflib's ratio (sales is sal with two letters added) it is ranked by that ratio with the
    rest: salt.orderss and sales.orders tie at 0.91, the greater name first (planted, the typed name
    in any close namespace went first)."""
    make(store, "sales.orders")
    make(store, "salt.orderss")
    assert _missing(lambda: store.load_view("sal.orders")) == (
        "no such view: sal.orders (did you mean salt.orderss or sales.orders?)")



def _ratios_of_missing(store, monkeypatch, typed):
    """How many times difflib's full ratio runs for the error of loading ``typed`` (the work of its
    suggestion, not timed), and its message."""
    import difflib
    ran = []
    ratio = difflib.SequenceMatcher.ratio

    def counted(self):
        ran.append(self.a)
        return ratio(self)
    with monkeypatch.context() as patch:
        patch.setattr(difflib.SequenceMatcher, "ratio", counted)
        message = _missing(lambda: store.load_view(typed))
    return len(ran), message


def test_no_such_view_runs_difflibs_full_ratio_for_few_of_many_long_names_alike(store, monkeypatch):
    """Long names much alike all pass difflib's quick filters, and its full ratio of two of them costs
    milliseconds: it runs best bound first until no name left can beat the third found, with the answer
    difflib's get_close_matches gives (which ran it 314 times here, seconds for one error)."""
    with store.transaction():
        for i in range(1, 251):
            make(store, f"s.{'q' * i}a")
    typed = "q" * 100 + "x" + "q" * 50
    count, message = _ratios_of_missing(store, monkeypatch, f"s.{typed}")
    assert message == (f"no such view: s.{typed} (did you mean s.{'q' * 150}a, s.{'q' * 151}a or s.{'q' * 149}a?)")
    assert count <= 5


def test_no_such_view_follows_the_view_that_held_the_name_last(tmp_path):
    path = tmp_path / "fates.db"
    with ViewStore(path, actor="alice") as store:
        make(store, "a.renamed_twice")
        store.rename_view("a.renamed_twice", "a.middle")
        make(store, "a.gone_after")
        store.actor = "carol"
        store.rename_view("a.middle", "a.last")
        store.rename_view("a.gone_after", "a.then_dropped")
        store.drop_view("a.then_dropped")
        make(store, "a.twice_gone")
        store.rename_view("a.twice_gone", "a.twice_gone_elsewhere")
        store.drop_view("a.twice_gone_elsewhere")
    with ViewStore(path, actor="dave") as store:  # from the file: nothing remembered by the store that wrote it
        first = store.history("a.last")
        gone = store.history("a.then_dropped")
        assert _missing(lambda: store.load_view("a.renamed_twice")) == (
            f"no such view: a.renamed_twice (renamed to a.middle {_at(first[1])}, now a.last (live); "
            "its history remains)")
        assert _missing(lambda: store.load_view("a.middle")) == (
            f"no such view: a.middle (renamed to a.last (live) {_at(first[2])}; its history remains)")
        assert _missing(lambda: store.load_view("a.gone_after")) == (
            f"no such view: a.gone_after (renamed to a.then_dropped {_at(gone[1])}, since dropped; "
            "its history remains)")
        assert _missing(lambda: store.load_view("a.then_dropped")) == (
            f"no such view: a.then_dropped (dropped {_at(gone[2])}; its history remains)")
        elsewhere = store.history("a.twice_gone_elsewhere")
        assert _missing(lambda: store.alter_view("a.twice_gone", ViewChange.update_comment("x"))) == (
            f"no such view: a.twice_gone (renamed to a.twice_gone_elsewhere {_at(elsewhere[1])}, since dropped; "
            "its history remains)")
        assert first[1].actor == "alice" and first[2].actor == gone[2].actor == "carol"
        # a view renamed on twice, then dropped: the name it was dropped under
        store.rename_view("a.last", "a.final")
        store.drop_view("a.final")
        assert _missing(lambda: store.load_view("a.renamed_twice")) == (
            f"no such view: a.renamed_twice (renamed to a.middle {_at(first[1])}, since dropped as a.final; "
            "its history remains)")


def test_no_such_view_shows_a_damaged_name_as_what_the_row_held(store):
    """A rename's identifier written behind the library's back as bytes: the message names it by its
    repr and type, not as if it were the text of a name."""
    make(store)
    store.rename_view("sales.daily", "sales.weekly")
    renamed = store.history("sales.weekly")[-1]
    with sqlite3.connect(store.path) as raw:
        raw.execute("DROP TRIGGER events_append_only_update")
        raw.execute("UPDATE events SET identifier = ? WHERE position = ?", (b"sales.weekly", renamed.position))
    raw.close()
    assert _missing(lambda: store.load_view("sales.daily")) == (
        f"no such view: sales.daily (renamed to b'sales.weekly' (bytes) (live) {_at(renamed)}; its history remains)")


def test_as_of_names_a_damaged_time_as_what_the_row_held(store):
    created = make(store).audit.create_time_ms
    store.alter_view("sales.daily", ViewChange.update_comment("x"))
    with sqlite3.connect(store.path) as raw:
        raw.execute("DROP TRIGGER events_append_only_update")
        raw.execute("UPDATE events SET occurred_at = 'soon' WHERE position = 2")
    raw.close()
    with pytest.raises(CorruptLogError) as raised:
        store.load_view("sales.daily", as_of=created)
    assert str(raised.value) == ("event at position 2 has a time or a stream version that is not an integer "
                                 "(time 'soon' (str), stream version 2)")


def test_no_such_view_tells_of_the_last_view_to_hold_a_reused_name(store):
    make(store)
    store.rename_view("sales.daily", "sales.first")  # the first view lives on under another name
    store.actor = "bob"
    make(store)  # another view takes the name, and is dropped
    store.drop_view("sales.daily")
    dropped = store.history("sales.daily")[-1]
    assert dropped.view_id != store.load_view("sales.first").uuid and dropped.type == "view.dropped"
    assert _missing(lambda: store.load_view("sales.daily")) == (
        f"no such view: sales.daily (dropped {_at(dropped)}; its history remains)")
    # the first view comes back to the name and is renamed away again: it held it last, but it lives on
    # under its new name, and history("sales.daily") is the view dropped under it; the message tells of that one
    store.rename_view("sales.first", "sales.daily")
    store.rename_view("sales.daily", "sales.second")
    assert {e.view_id for e in store.history("sales.daily")} == {dropped.view_id}
    assert _missing(lambda: store.load_view("sales.daily")) == (
        f"no such view: sales.daily (dropped {_at(dropped)}; its history remains)")


def test_no_such_view_tells_of_the_view_history_shows_for_the_name(store):
    """A name dropped, then taken by another view that is renamed away: history() of the name is the
    view dropped under it (the other lives on, known by its new name), and so is the message's."""
    first = make(store)
    store.drop_view("sales.daily")
    dropped = store.history("sales.daily")[-1]
    second = make(store, representations=[("spark", "SELECT 2")])
    store.rename_view("sales.daily", "sales.weekly")
    assert {e.view_id for e in store.history("sales.daily")} == {first.uuid} != {second.uuid}
    assert _missing(lambda: store.load_view("sales.daily")) == (
        f"no such view: sales.daily (dropped {_at(dropped)}; its history remains)")
    assert _missing(lambda: store.load_view("sales.never")) == "no such view: sales.never"


def test_no_such_view_inside_a_transaction_tells_of_the_block_s_own_writes(store):
    make(store)
    with store.transaction():
        make(store, "sales.staging")
        store.rename_view("sales.staging", "sales.ready")
        store.drop_view("sales.daily")
        staged = store.history("sales.ready")[-1]
        dropped = store.history("sales.daily")[-1]
        assert _missing(lambda: store.load_view("sales.staging")) == (  # not yet committed, known in the block
            f"no such view: sales.staging (renamed to sales.ready (live) {_at(staged)}; its history remains)")
        assert _missing(lambda: store.alter_view("sales.daily", ViewChange.update_comment("x"))) == (
            f"no such view: sales.daily (dropped {_at(dropped)}; its history remains)")
    assert _missing(lambda: store.load_view("sales.staging")) == (  # and the same once committed
        f"no such view: sales.staging (renamed to sales.ready (live) {_at(staged)}; its history remains)")


def test_no_such_view_shows_an_actor_that_is_not_printable_as_a_literal(store):
    store.actor = "bob\nrm"
    make(store)
    store.drop_view("sales.daily")
    message = _missing(lambda: store.load_view("sales.daily"))
    assert "\n" not in message and message.endswith(" by 'bob\\nrm'; its history remains)")


def test_no_such_view_refuses_a_let_go_event_the_library_never_wrote(store):
    make(store)
    store.drop_view("sales.daily")
    with sqlite3.connect(store.path) as raw:  # a drop of a second view of that name, its time text
        raw.execute("INSERT INTO events (commit_id, view_id, stream_version, type, identifier, actor, occurred_at, "
                    "payload) SELECT commit_id, 'other', stream_version + 1, type, identifier, actor, occurred_at, "
                    "payload FROM events WHERE position = 1")
        raw.execute("INSERT INTO events (commit_id, view_id, stream_version, type, identifier, actor, occurred_at, "
                    "payload) SELECT commit_id, 'other', 3, type, identifier, actor, 'soon', payload FROM events "
                    "WHERE position = 2")
    raw.close()
    with pytest.raises(CorruptLogError, match="^event at position 4 has a time that is not an integer"):
        store.load_view("sales.daily")
    with sqlite3.connect(store.path) as raw:  # its actor of bytes
        raw.execute("DROP TRIGGER events_append_only_update")
        raw.execute("UPDATE events SET occurred_at = 1, actor = ? WHERE position = 4", (b"bob",))
    raw.close()
    with pytest.raises(CorruptLogError, match="^event at position 4 has a time that is not an integer or an actor "
                                              "that is not text$"):
        store.load_view("sales.daily")


def test_an_until_that_is_a_date_alone_includes_that_whole_day(store):
    make(store)
    (event,) = store.events()
    day = dt.datetime.fromtimestamp(event.occurred_at / 1000, tz=dt.timezone.utc).date()
    iso_week = "{}-W{:02d}-{}".format(*day.isocalendar())
    for until in (day, day.isoformat(), day.strftime("%Y%m%d"), f" {day.isoformat()} ", f"{day.isoformat()}Z",
                  f"{day.isoformat()}+00:00", iso_week):
        assert store.events(since=day, until=until) == [event], until
    start = to_epoch_ms(day)
    assert store.events(until=dt.datetime.combine(day, dt.time(), dt.timezone.utc)) == []  # a moment stays one
    assert store.events(until=start) == [] and store.events(until=str(start)) == []


def test_a_date_with_a_time_zone_is_that_day_in_that_zone(store, monkeypatch):
    """Python's ISO parser reads the zone after a date alone as a time of day (``+01:00`` as 01:00
    UTC); a date with a zone is that day there, from its midnight to its last millisecond."""
    import viewstore.catalog

    midnight = to_epoch_ms("2026-11-25T00:00Z")
    hour, day = 3_600_000, 86_400_000
    times = [midnight - hour - 1, midnight - hour, midnight + day - hour - 1, midnight + day - hour,
             midnight + day - 1, midnight + day]
    clock = [times[0]]
    monkeypatch.setattr(viewstore.catalog.time, "time_ns", lambda: clock[0] * 1_000_000)
    make(store)
    for at in times[1:]:
        clock[0] = at
        store.alter_view("sales.daily", ViewChange.update_comment(str(at)))
    events = store.events()
    assert [e.occurred_at for e in events] == times
    week = "{}-W{:02d}-{}".format(*dt.date(2026, 11, 25).isocalendar())
    for text in ("2026-11-25+01:00", "20261125+0100", f"{week}+01", " 2026-11-25+01:00 "):
        assert to_epoch_ms(text) == midnight - hour, text
        assert store.events(since=text, until=text) == events[1:3], text
    assert to_epoch_ms("2026-11-25-05:00") == midnight + 5 * hour
    for text in ("2026-11-25Z", "2026-11-25+00:00", "2026-11-25", dt.date(2026, 11, 25)):  # UTC's day
        assert store.events(since=text, until=text) == events[2:5], text
    assert store.load_view("sales.daily", as_of="2026-11-25+01:00").comment == str(times[1])
    for bad in ("2026-11-25+24:00", "2026-11-25+01:60", "2026-11-25+99"):
        with pytest.raises(ValidationError, match="use ISO 8601"):
            to_epoch_ms(bad)


def test_a_date_and_a_time_are_joined_by_t_or_a_blank():
    """Python's ISO parser takes any character between a date and a time; a time text takes ISO's
    T (in either case) or RFC 3339's blank there, after a date of any of ISO's forms."""
    ten = to_epoch_ms("2026-11-25T10:00Z")
    week = "{}-W{:02d}-{}".format(*dt.date(2026, 11, 25).isocalendar())
    for text in ("2026-11-25T10:00", "2026-11-25t10:00", "2026-11-25 10:00", "20261125T1000", f"{week}T10",
                 f"{week.replace('-', '')}T10:00Z", "2026-11-25T10", "2026-11-25T11:00+01:00"):
        assert to_epoch_ms(text) == ten, text
    for bad in ("2026-11-25x10:00", "2026-11-25\u00e910:00", "2026-11-25_10:00", "2026-11-25Z10:00", f"{week}x10"):
        with pytest.raises(ValidationError, match="use ISO 8601"):
            to_epoch_ms(bad)
    midnight = ten - 10 * 3_600_000
    for alone in ("2026-11-25", "20261125", week, "2026-11-25Z"):  # no time, so no separator
        assert to_epoch_ms(alone) == midnight, alone
    assert to_epoch_ms("2026-11-25+01:00") == midnight - 3_600_000


def test_newest_first_reverses_the_order_and_a_limit_keeps_the_latest(store):
    make(store)
    with ViewStore(store.path, actor="bob") as bob:
        for i in range(3):
            bob.alter_view("sales.daily", ViewChange.update_comment(f"by bob {i}"))
        store.alter_view("sales.daily", ViewChange.update_comment("by the owner"))
        everything = store.events()
        assert store.events(newest_first=True) == everything[::-1]
        assert store.events(limit=2, newest_first=True) == everything[:-3:-1]
        bobs = [e for e in everything if e.actor == "bob"]
        assert store.events(actor="bob", limit=2, newest_first=True) == bobs[:-3:-1]
        assert store.events(since=bobs[1].occurred_at, types="view.comment_updated", newest_first=True, limit=1) \
            == everything[-1:]
        assert store.event_rows(limit=3, newest_first=True) == store.event_rows()[:-4:-1]
        for bad in (1, "yes", None):
            with pytest.raises(ValidationError, match="newest_first"):
                store.events(newest_first=bad)


def _scrambled_log(store, monkeypatch):
    """A log whose times go back and forth: three actors (each its own store, as separate processes
    with their own clocks would be), creates, comment and property changes, replaces, renames (a
    name taken again by a new view), drops and an import that keeps its history's older times."""
    import random

    import viewstore.catalog

    rng = random.Random(11)
    base = 1_800_000_000_000
    clock = [base]
    monkeypatch.setattr(viewstore.catalog.time, "time_ns", lambda: clock[0] * 1_000_000)
    stores = [store, ViewStore(store.path, actor="bob"), ViewStore(store.path, actor="carol")]
    names = [f"ns{i % 2}.v{i}" for i in range(6)]
    for i, name in enumerate(names):
        clock[0] = base + rng.randrange(-50_000, 50_000)
        make(stores[i % 3], name)
    for step in range(90):
        clock[0] = base + rng.randrange(-100_000, 100_000)  # backwards as often as forwards
        who = stores[step % 3]
        live = who.list_views()
        name = ".".join(rng.choice(live))
        roll = rng.random()
        if roll < 0.45:
            who.alter_view(name, ViewChange.update_comment(f"c{step}"), ViewChange.set_property("k", str(step)))
        elif roll < 0.6:
            who.replace_view(name, columns=COLS, representations=[("spark", f"SELECT {step} AS x")],
                             default_namespace="sales")
        elif roll < 0.75:
            who.rename_view(name, f"{name}_r{step}")
        elif roll < 0.85 and len(live) > 3:
            who.drop_view(name)
            make(who, name)  # the name again, a new stream
        else:
            who.alter_view(name, ViewChange.remove_property("k"))
    old = store.history(".".join(store.list_views()[0]))[0]
    version = ViewVersion(version_id=1, timestamp_ms=base - 10**7, schema_id=0, columns=COLS, representations=[SPARK],
                          default_namespace=("sales",))
    stores[1].import_view("ns0.imported", source="iceberg", versions=[version], current_version_id=1,
                          version_log=[VersionLogEntry(timestamp_ms=base - 10**7, version_id=1)])
    assert old.occurred_at > base - 10**7
    for other in stores[1:]:
        other.close()


def _scanned(path, view=None, actor=None, since=None, until=None, types=None, limit=None, newest_first=False,
             rows=None):
    """What the filters select, found by reading every row of the log in Python: the plain answer.
    ``rows``: every row of the log, as ``_scanned(path)`` gave them, to filter instead of reading them again."""
    if rows is None:
        conn = sqlite3.connect(path)
        rows = conn.execute("SELECT position, commit_id, view_id, stream_version, type, identifier, actor, "
                            "occurred_at, payload FROM events ORDER BY position").fetchall()
        conn.close()
    streams = {r[2] for r in rows if r[5] == view}
    kinds = [types] if isinstance(types, str) else types
    kept = [r for r in rows if (view is None or r[2] in streams) and (actor is None or r[6] == actor)
            and (since is None or r[7] >= since) and (until is None or r[7] <= until)
            and (kinds is None or r[4] in kinds)]
    if newest_first:
        kept.reverse()
    return kept if limit is None else kept[:limit]


@pytest.mark.parametrize("named_share", [1, 10**9])  # types that name a view: read through events_naming, or a scan
def test_every_audit_filter_answers_what_a_scan_of_the_whole_log_answers(store, monkeypatch, named_share):
    """events() and event_rows() read the log through several indexes, by the filters given; whatever
    the plan, the answer is the rows a full scan selects, on a log whose clocks went back and forth."""
    import itertools

    import viewstore.log

    monkeypatch.setattr(viewstore.log, "NAMED_SHARE", named_share)
    _scrambled_log(store, monkeypatch)
    every = _scanned(store.path)
    times = sorted({r[7] for r in every})
    assert [r[7] for r in every] != times and len({r[6] for r in every}) == 3  # out of order; three actors
    assert {"view.renamed", "view.dropped", "view.imported", "view.replaced"} <= {r[4] for r in every}
    renamed = next(r for r in every if r[4] == "view.renamed")
    views = [None, renamed[5], orjson.loads(renamed[8])["from_identifier"]]
    views[2] = ".".join(views[2])
    ranges = [(None, None), (times[len(times) // 3], None), (None, times[len(times) // 2]),
              (times[len(times) // 4], times[3 * len(times) // 4]), (times[0] - 10**8, times[5]), (times[-1] + 1, None)]
    kinds = [None, "view.dropped", ["view.renamed"], ["view.created", "view.imported"],
             ["view.created", "view.renamed", "view.imported"], ["view.renamed", "view.dropped"],
             ["view.comment_updated"]]
    checked = 0
    for view, actor, (since, until), types, limit, newest in itertools.product(
            views, [None, "bob", "nobody"], ranges, kinds, [None, 0, 1, 4], [False, True]):
        f = dict(view=view, actor=actor, since=since, until=until, types=types, limit=limit, newest_first=newest)
        expected = _scanned(store.path, rows=every, **f)  # (the log is read once: it does not change here)
        assert store.event_rows(**f) == expected, f
        assert store.events(**f) == [row_to_event(r) for r in expected], f
        checked += bool(expected)
    assert checked > 400


def test_a_time_range_given_backwards_holds_no_event_as_a_position_range_does(store):
    """A poller that asks since=last + 1, until=now within the millisecond of its last event asks for
    nothing new: an empty answer, not an error (the CLI refuses swapped options, a typing slip)."""
    make(store)
    at = store.events()[-1].occurred_at
    assert len(store.events(since=at, until=at)) >= 1  # the range of one millisecond holds the event
    for call in (store.events, store.event_rows):
        assert call(since=at + 1, until=at) == []
        assert call(since="2026-11-26", until=dt.date(2026, 11, 25)) == []
    with store.stream_events(since=at + 1, until=at) as stream:
        assert list(stream) == []
    assert store.events(since_position=3, until_position=2) == []


def test_event_rows_are_the_rows_of_the_events_that_events_returns(store):
    make(store)
    store.rename_view("sales.daily", "sales.renamed")
    make(store, "sales.daily")  # a second stream under the first one's old name
    store.alter_view("sales.daily", ViewChange.set_property("k", "v"))
    filters = [{}, {"view": "sales.daily"}, {"actor": store.actor}, {"types": ["view.renamed", "view.created"]},
               {"limit": 2}, {"since": store.events()[2].occurred_at}, {"view": "sales.renamed", "limit": 1}]
    for f in filters:
        rows = store.event_rows(**f)
        assert rows, f
        assert [row_to_event(r) for r in rows] == store.events(**f), f
    assert len(store.event_rows(view="sales.daily")) == 4  # both streams that carried the name
    assert store.event_rows(actor="nobody") == []
    for bad, message in (({"types": ["view.nope"]}, r"unknown event type\(s\) view.nope; known: view.comment_"),
                         ({"limit": -1}, "limit must be a whole number of events, not -1$"),
                         ({"actor": 7}, "an actor must be a string, not 7$"),
                         ({"actor": "\ud800"}, r"bad actor '\\ud800': it is not valid Unicode \(a lone surrogate\)$"),
                         ({"since": "yesterday-ish"}, "bad since 'yesterday-ish': use ISO 8601 "),
                         ({"view": "a..b"}, "bad identifier part '': it must be non-empty without surrounding "
                                            "spaces$")):
        with pytest.raises(ValidationError, match=f"^{message}"):
            store.event_rows(**bad)


def test_event_rows_hand_a_damaged_row_back_as_stored_where_events_refuse_it(store):
    """As the README says: event_rows are the rows as stored, unchecked (bulk readers check them
    themselves); events() refuses the same row, naming its position."""
    make(store)
    store.alter_view("sales.daily", ViewChange.update_comment("x"))
    with sqlite3.connect(store.path) as raw:
        raw.execute("DROP TRIGGER events_append_only_update")
        raw.execute("UPDATE events SET occurred_at = 'soon' WHERE position = 2")
    raw.close()
    assert [row[7] for row in store.event_rows()] == [store.events(until_position=1)[0].occurred_at, "soon"]
    with pytest.raises(CorruptLogError, match="^cannot decode event at position 2: "):
        store.events()


def test_other_connections_see_commits_at_once(store):
    make(store)
    with ViewStore(store.path, actor="bob") as other:
        assert other.load_view("sales.daily").comment is None
        store.alter_view("sales.daily", ViewChange.update_comment("new"))
        assert other.load_view("sales.daily").comment == "new"  # the cache is keyed on data_version
        other.alter_view("sales.daily", ViewChange.update_comment("newer"))
        assert store.load_view("sales.daily").comment == "newer"


def test_expected_version(store):
    view = make(store)
    store.alter_view("sales.daily", ViewChange.update_comment("x"), expected_version=view.stream_version)
    count = store.event_count()
    with pytest.raises(ConcurrencyError) as info:
        store.alter_view("sales.daily", ViewChange.update_comment("y"), expected_version=view.stream_version)
    assert info.value.expected == 1 and info.value.actual == 2
    assert store.event_count() == count


def test_log_is_append_only(store):
    make(store)
    conn = sqlite3.connect(store.path)
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        conn.execute("UPDATE events SET actor = 'mallory'")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        conn.execute("DELETE FROM events")
    conn.close()


def test_rebuild_equals_live_projections(store):
    make(store)
    store.alter_view("sales.daily", ViewChange.add_representation(("trino", "SELECT 1")))
    store.rename_view("sales.daily", "sales.d")
    make(store)
    store.drop_view("sales.d")
    for i in range(120):
        store.alter_view("sales.daily", ViewChange.set_property("n", str(i)))
    live = store.projection_dump()
    progress = []
    repaired = store.rebuild(progress=lambda done, total: progress.append((done, total)))
    assert repaired == {"views": 0, "view_versions": 0, "view_version_log": 0, "view_snapshots": 0}
    assert store.projection_dump() == live
    assert progress[-1] == (store.event_count(), store.event_count())
    assert store.load_view("sales.daily").properties["n"] == "119"


def test_the_last_modifier_is_who_made_the_last_change_live_and_after_a_rebuild(store):
    make(store)
    with ViewStore(store.path, catalog="prod", actor="bob") as bob:
        changed = bob.alter_view("sales.daily", ViewChange.update_comment("by bob"))
    assert (changed.audit.creator, changed.audit.last_modifier) == ("alice", "bob")
    live = store.load_view("sales.daily").audit
    assert (live.creator, live.last_modifier, live.last_modified_time_ms) == ("alice", "bob",
                                                                              changed.audit.last_modified_time_ms)
    conn = sqlite3.connect(store.path)
    with conn:
        conn.execute("DELETE FROM views")
    conn.close()
    assert store.rebuild()["views"] == 1
    assert store.load_view("sales.daily").audit == live


def test_rebuild_with_a_progress_that_cannot_be_called_is_a_validation_error(store):
    """It was a TypeError ('int' object is not callable) from inside the replay."""
    make(store)
    for bad in (5, "print", True):
        with pytest.raises(ValidationError, match="progress must be callable"):
            store.rebuild(progress=bad)
    assert store.rebuild() == {"views": 0, "view_versions": 0, "view_version_log": 0, "view_snapshots": 0}


@pytest.mark.parametrize("raised", [UnicodeEncodeError("ascii", "é", 0, 1, "ordinal not in range(128)"),
                                    sqlite3.OperationalError("database is locked"), KeyError("mine")])
def test_what_a_rebuild_progress_raises_reaches_the_caller_unchanged(store, raised):
    """As its docstring and the README say: not typed as the write's own error (a callback printing
    to an ASCII terminal raised ValidationError 'text that is not valid Unicode cannot be stored',
    one raising a sqlite3 error ConcurrencyError), and the rebuild writes nothing."""
    make(store)
    store.alter_view("sales.daily", ViewChange.update_comment("x"))
    before = store.projection_dump()

    def progress(done, total):
        raise raised

    with pytest.raises(type(raised)) as caught:
        store.rebuild(progress=progress)
    assert caught.value is raised
    assert store.projection_dump() == before
    assert store.rebuild()["views"] == 0  # the store goes on: nothing was left half done

def test_rebuild_repairs_exactly_the_rows_that_differ(store):
    make(store)
    store.replace_view("sales.daily", columns=[("id", "bigint")], representations=[("spark", "SELECT 2 AS id")],
                       default_namespace="sales")
    make(store, "sales.other")
    store.rename_view("sales.other", "sales.moved")
    for i in range(SNAPSHOT_EVERY):
        store.alter_view("sales.daily", ViewChange.set_property("n", str(i)))
    live = store.projection_dump()
    daily = store.load_view("sales.daily").uuid
    conn = sqlite3.connect(store.path)
    with conn:  # damage one row of each table, and add rows no event explains
        conn.execute("UPDATE views SET properties = '{}' WHERE view_id = ?", (daily,))
        conn.execute("UPDATE views SET name = 'other', live = 1 WHERE name = 'moved'")
        conn.execute("DELETE FROM view_versions WHERE view_id = ? AND version_id = 2", (daily,))
        conn.execute("INSERT INTO view_versions SELECT 'ghost', version_id, timestamp_ms, schema_id, columns, "
                     "representations, default_catalog, default_namespace, summary FROM view_versions LIMIT 1")
        conn.execute("UPDATE view_version_log SET version_id = 9 WHERE view_id = ? AND seq = 2", (daily,))
        conn.execute("UPDATE view_snapshots SET state = '{}' WHERE view_id = ?", (daily,))
    conn.close()
    assert store.rebuild() == {"views": 2, "view_versions": 2, "view_version_log": 1, "view_snapshots": 1}
    assert store.projection_dump() == live
    assert store.load_view("sales.moved").uuid != daily and store.list_views("sales") == [("sales", "daily"),
                                                                                          ("sales", "moved")]


def test_a_view_read_from_damaged_projections_is_read_again_after_the_rebuild_that_repairs_them(store):
    """The store that rebuilds had cached the damaged row's view: it answers the repaired one."""
    make(store, properties={"team": "finance"})
    conn = sqlite3.connect(store.path)
    with conn:
        conn.execute("UPDATE views SET properties = '{\"team\": \"damaged\"}'")
    conn.close()
    with ViewStore(store.path, catalog="prod", actor="alice") as reader:
        assert reader.load_view("sales.daily").properties["team"] == "damaged"  # what the damaged row says
        assert reader.rebuild()["views"] == 1
        assert reader.load_view("sales.daily").properties["team"] == "finance"


def test_as_of_after_a_rebuild_reads_the_repaired_snapshot_not_the_damaged_one_it_parsed(store):
    make(store, properties={"team": "finance"})
    for i in range(SNAPSHOT_EVERY):
        store.alter_view("sales.daily", ViewChange.set_property("n", str(i)))
    last = store.events(view="sales.daily", newest_first=True, limit=1)[0]
    assert last.stream_version == SNAPSHOT_EVERY + 1  # as_of it folds from the snapshot taken before it
    conn = sqlite3.connect(store.path)
    with conn:  # a snapshot still well-formed, with a wrong property
        (state,) = conn.execute("SELECT state FROM view_snapshots").fetchone()
        damaged = orjson.loads(state)
        damaged["properties"]["team"] = "damaged"
        conn.execute("UPDATE view_snapshots SET state = ?", (orjson.dumps(damaged).decode(),))
    conn.close()
    assert store.load_view("sales.daily", as_of=last).properties["team"] == "damaged"  # what the damaged row says
    assert store.rebuild()["view_snapshots"] == 1
    assert store.load_view("sales.daily", as_of=last).properties == {"team": "finance", "n": str(SNAPSHOT_EVERY - 1)}


def test_rebuild_gives_the_garbage_collector_back(store):
    """rebuild() folds with the cyclic collector off; it is on again afterwards, even when the fold
    fails, and stays off for a caller who had turned it off."""
    make(store)
    assert gc.isenabled()
    store.rebuild()
    assert gc.isenabled()
    gc.disable()
    try:
        store.rebuild()
        assert not gc.isenabled()
    finally:
        gc.enable()
    conn = sqlite3.connect(store.path)
    with conn:  # an event of a stream that was never created: the fold refuses the log
        conn.execute("INSERT INTO events (commit_id, view_id, stream_version, type, identifier, actor, occurred_at, "
                     "payload) VALUES ('c', 'nope', 1, 'view.comment_updated', 'a.b', 'x', 1, '{\"comment\":null}')")
    conn.close()
    before = store.projection_dump()
    with pytest.raises(CorruptLogError, match="never created"):
        store.rebuild()
    assert gc.isenabled() and store.projection_dump() == before  # and nothing was written


def test_imports_pause_the_garbage_collector_and_give_it_back(store, tmp_path):
    """import_view and import_iceberg work with the cyclic collector off (a history's objects all stay
    alive until written); it is on again afterwards, also after a refusal, and stays off for a caller
    who had turned it off."""
    view = make(store)
    path = store.export_iceberg("sales.daily", tmp_path / "loc")
    seen = []

    def progress(done, total):
        seen.append(gc.isenabled())

    with ViewStore(tmp_path / "other.db") as into:
        into.import_iceberg(path, "a.v", progress=progress)
        into.import_view("a.w", source="test", versions=view.versions, version_log=view.version_log,
                         current_version_id=1, progress=progress)
        assert seen and not any(seen) and gc.isenabled()
        with pytest.raises(ViewAlreadyExistsError):
            into.import_view("a.w", source="test", versions=view.versions, version_log=view.version_log,
                             current_version_id=1)
        with pytest.raises(IcebergMetadataError):
            into.import_iceberg(tmp_path / "missing.metadata.json", "a.x")
        assert gc.isenabled()
    gc.disable()
    try:
        with ViewStore(tmp_path / "third.db") as third:
            third.import_iceberg(path, "a.y")
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_an_import_of_a_file_lets_go_of_the_files_versions_before_it_writes(store, tmp_path):
    """import_iceberg of a path holds one set of versions as it writes, its events': the file's are let go
    once the events are made of them (a 10,000-version history held both, a quarter of the import's peak
    memory), and so are the events once written, before the View is built of what was stored."""
    make(store)
    for i in range(2, 201):
        store.replace_view("sales.daily", columns=[Column("day", "date")], default_namespace="sales",
                           representations=[SQLRepresentation("spark", f"SELECT {i} AS day")])
    store.alter_view("sales.daily", ViewChange.set_property("version.history.num-entries", "200"))
    path = store.export_iceberg("sales.daily", tmp_path / "loc")
    store.close()

    def versions_alive():
        return sum(isinstance(o, ViewVersion) for o in gc.get_objects())

    held = {}

    def writing(sender, events):
        held["writing"] = versions_alive() - before

    with ViewStore(tmp_path / "other.db") as into:
        gc.collect()  # versions of earlier tests in garbage cycles, which a collection in the import would take
        before = versions_alive()
        signals.before_commit.connect(writing, sender=into)
        try:
            view = into.import_iceberg(path, "a.v")
        finally:
            signals.before_commit.disconnect(writing, sender=into)
        assert len(view.version_ids) == 200 and held == {"writing": 200}
        del view
        assert versions_alive() == before


def test_an_import_whose_name_or_uuid_is_taken_is_refused_before_its_events_are_made(store):
    """A taken name or UUID is refused before any event is made of the history: progress is never
    called, and nothing is written."""
    view = make(store)
    calls = []
    count = store.event_count()
    for name, uuid, message in (("sales.daily", None, "^view already exists: sales.daily$"),
                                ("a.v", view.uuid,
                                 f"^a view with UUID {view.uuid} is already in the store: sales.daily ")):
        with pytest.raises(ViewAlreadyExistsError, match=message):
            store.import_view(name, source="test", versions=view.versions, version_log=view.version_log,
                              current_version_id=1, view_uuid=uuid, progress=lambda done, total: calls.append(done))
    assert calls == [] and store.event_count() == count


def test_rebuild_into_empty_projections(store):
    make(store)
    store.alter_view("sales.daily", ViewChange.update_comment("x"))
    live = store.projection_dump()
    conn = sqlite3.connect(store.path)
    with conn:
        for table in live:
            conn.execute(f"DELETE FROM {table}")
    conn.close()
    repaired = store.rebuild()
    assert repaired == {table: len(rows) for table, rows in live.items()}
    assert store.projection_dump() == live and store.load_view("sales.daily").comment == "x"


def test_signals(store):
    seen, failed = [], []

    def after(sender, events):
        seen.extend(events)

    def fail(sender, events, error):
        failed.append(error)

    def veto(sender, events):
        if any(getattr(e, "comment", None) == "forbidden" for e in events):
            raise PermissionError("no")

    signals.committed.connect(after)
    signals.commit_failed.connect(fail)
    signals.before_commit.connect(veto)
    try:
        make(store)
        assert [e.type for e in seen] == ["view.created"] and seen[0].position is not None
        count = store.event_count()
        with pytest.raises(ViewStoreError, match="^a before_commit receiver refused the change: no$") as refused:
            store.alter_view("sales.daily", ViewChange.update_comment("forbidden"))
        assert store.event_count() == count and failed == [refused.value]  # commit_failed got the error raised
        assert isinstance(refused.value.__cause__, PermissionError)
        assert store.load_view("sales.daily").comment is None
    finally:
        signals.committed.disconnect(after)
        signals.commit_failed.disconnect(fail)
        signals.before_commit.disconnect(veto)


def test_receivers_that_misbehave_get_typed_errors_at_once_and_nothing_is_written(store, caplog):
    make(store)
    other = ViewStore(store.path, actor="bob")
    count = store.event_count()

    def write_through_another_store(sender, events):  # would wait for the write lock its own thread holds
        if sender is store:
            other.alter_view("sales.daily", ViewChange.update_comment("from the receiver"))

    def close_the_store(sender, events):
        sender.close()

    def broken_audit_sink(sender, events, error):
        raise RuntimeError("audit sink down")

    def veto(sender, events):
        raise PermissionError("no")

    try:
        signals.before_commit.connect(write_through_another_store)
        start = time.monotonic()
        with pytest.raises(ViewStoreError, match="already writing to .*, through this or another ViewStore"):
            store.alter_view("sales.daily", ViewChange.update_comment("x"))
        assert time.monotonic() - start < 5  # refused, not waited out (it took 12 minutes)
        signals.before_commit.disconnect(write_through_another_store)
        assert store.event_count() == count and other.load_view("sales.daily").comment is None

        signals.commit_failed.connect(broken_audit_sink)
        signals.before_commit.connect(veto)
        with pytest.raises(ViewStoreError, match="refused") as info:  # the write's own error, not the hook's
            store.alter_view("sales.daily", ViewChange.update_comment("x"))
        assert "audit sink down" in " ".join(info.value.__notes__)
        assert "a viewstore.commit-failed receiver raised" in caplog.text
        signals.before_commit.disconnect(veto)
        assert store.event_count() == count

        signals.before_commit.connect(close_the_store)
        with pytest.raises(ViewStoreError, match="closed during the write"):
            store.alter_view("sales.daily", ViewChange.update_comment("x"))
        signals.before_commit.disconnect(close_the_store)
        assert other.event_count() == count and other.load_view("sales.daily").comment is None
        with pytest.raises(ViewStoreError, match="closed"):
            store.load_view("sales.daily")
    finally:
        for signal, receiver in ((signals.before_commit, write_through_another_store), (signals.before_commit, veto),
                                 (signals.before_commit, close_the_store), (signals.commit_failed, broken_audit_sink)):
            signal.disconnect(receiver)
        other.close()


def test_a_write_from_a_receiver_of_the_same_stores_write_is_refused_saying_so_and_writes_nothing(store):
    """A before_commit receiver writes through the very store whose write sent the signal: the write
    is under way in this thread on its connection, so the receiver's cannot begin. It was refused
    as SQLite's 'cannot start a transaction within a transaction', which says nothing of the
    receiver; it is refused as a write through another store on the file is, and nothing of
    either write is kept."""
    make(store)
    count = store.event_count()

    def write_through_the_same_store(sender, events):
        if sender is store:
            store.alter_view("sales.daily", ViewChange.update_comment("from the receiver"))

    signals.before_commit.connect(write_through_the_same_store)
    try:
        with pytest.raises(ViewStoreError, match=r"^this thread is already writing to .*, through this or another "
                                                 r"ViewStore \(from a signal receiver or a callback\?\)"):
            store.alter_view("sales.daily", ViewChange.update_comment("outer"))
    finally:
        signals.before_commit.disconnect(write_through_the_same_store)
    assert store.event_count() == count and store.load_view("sales.daily").comment is None
    assert store.alter_view("sales.daily", ViewChange.update_comment("after")).comment == "after"


def test_a_committed_receiver_that_raises_does_not_turn_a_committed_call_into_an_error(store, caplog):
    make(store)
    seen, failed = [], []

    def broken_sink(sender, events):
        raise ConnectionRefusedError("audit sink down")  # an OSError: not only RuntimeError is kept from the caller

    def working_sink(sender, events):
        seen.extend(e.type for e in events)

    def fail(sender, events, error):
        failed.append(error)

    for receiver in (broken_sink, working_sink):
        signals.committed.connect(receiver)
    signals.commit_failed.connect(fail)
    try:
        view = store.alter_view("sales.daily", ViewChange.update_comment("kept"))  # no error: it committed
    finally:
        for receiver in (broken_sink, working_sink):
            signals.committed.disconnect(receiver)
        signals.commit_failed.disconnect(fail)
    assert view.comment == "kept" and store.load_view("sales.daily") == view
    assert seen == ["view.comment_updated"] and failed == []  # the other receiver ran; nothing failed
    assert "a viewstore.committed receiver raised" in caplog.text and "audit sink down" in caplog.text


def test_a_call_returns_the_view_it_wrote_when_a_committed_receiver_writes_after_it(store):
    """The receiver runs before the call returns, and its write is the newer one the store holds."""
    make(store)
    later = []

    def writer(sender, events):
        if not later:
            later.append(sender.alter_view("sales.daily", ViewChange.set_property("k", "v")))

    signals.committed.connect(writer)
    try:
        view = store.alter_view("sales.daily", ViewChange.update_comment("mine"))
    finally:
        signals.committed.disconnect(writer)
    assert view.stream_version == 2 and view.comment == "mine" and "k" not in view.properties
    assert store.load_view("sales.daily") == later[0] and later[0].stream_version == 3


def test_receivers_are_sent_to_as_blinker_sends(store, caplog):
    """Muted signals reach nobody; a coroutine receiver (which nothing would await) is refused and
    logged, and the commit stands."""
    make(store)
    seen = []

    def sink(sender, events):
        seen.extend(e.type for e in events)

    async def coroutine_sink(sender, events):
        seen.append("awaited")

    signals.committed.connect(sink)
    try:
        with signals.committed.muted():
            store.alter_view("sales.daily", ViewChange.update_comment("quiet"))
        assert seen == []
        signals.committed.connect(coroutine_sink)
        view = store.alter_view("sales.daily", ViewChange.update_comment("loud"))
    finally:
        signals.committed.disconnect(sink)
        signals.committed.disconnect(coroutine_sink)
    assert view.comment == "loud" and seen == ["view.comment_updated"]
    assert "cannot send viewstore.committed to a coroutine function" in caplog.text


def test_committed_is_sent_by_the_store_with_every_event_of_the_call_as_the_log_holds_it(store):
    make(store)
    sent = []

    def after(sender, events):
        sent.append((sender, events))

    signals.committed.connect(after)
    try:
        store.alter_view("sales.daily", ViewChange.update_comment("c"), ViewChange.set_property("team", "t"))
    finally:
        signals.committed.disconnect(after)
    ((sender, events),) = sent
    assert sender is store
    assert [e.type for e in events] == ["view.comment_updated", "view.properties_set"]
    assert events == store.events()[-2:]  # positions included


def test_a_receiver_connected_for_one_store_hears_only_that_store(store, tmp_path):
    other = ViewStore(tmp_path / "other.db", actor="bob")
    heard, failed = [], []

    def after(sender, events):
        heard.extend((sender, e.type) for e in events)

    def fail(sender, events, error):
        failed.append(sender)

    def veto(sender, events):
        raise PermissionError("no")

    signals.committed.connect(after, sender=other)
    signals.commit_failed.connect(fail, sender=other)
    try:
        make(store)
        make(other)
        signals.before_commit.connect(veto)
        for target in (store, other):
            with pytest.raises(ViewStoreError, match="refused"):
                target.alter_view("sales.daily", ViewChange.update_comment("x"))
    finally:
        signals.committed.disconnect(after)
        signals.commit_failed.disconnect(fail)
        signals.before_commit.disconnect(veto)
        other.close()
    assert heard == [(other, "view.created")] and failed == [other]


def test_a_before_commit_veto_reaches_the_caller_as_its_own_error_or_wrapped_with_it_as_the_cause(store):
    """A receiver's ViewStoreError is the caller's error as it is; any other exception is wrapped in a
    ViewStoreError that quotes it and keeps it as its cause."""
    make(store)
    count = store.event_count()
    refusals = [ValidationError("a comment needs a ticket number"), PermissionError("no ticket"),
                RuntimeError("ticket service down")]

    def veto(sender, events):
        raise refusals[0]

    signals.before_commit.connect(veto)
    try:
        with pytest.raises(ValidationError) as own:
            store.alter_view("sales.daily", ViewChange.update_comment("x"))
        assert own.value is refusals.pop(0)
        causes, wrapped = refusals[:], []
        for _ in causes:  # whatever the type of the exception
            with pytest.raises(ViewStoreError) as raised:
                store.alter_view("sales.daily", ViewChange.update_comment("x"))
            wrapped.append(raised.value)
            refusals.pop(0)
    finally:
        signals.before_commit.disconnect(veto)
    assert [type(w) for w in wrapped] == [ViewStoreError, ViewStoreError]
    assert [str(w) for w in wrapped] == ["a before_commit receiver refused the change: no ticket",
                                         "a before_commit receiver refused the change: ticket service down"]
    assert len(wrapped) == 2 and all(w.__cause__ is cause for w, cause in zip(wrapped, causes))
    assert store.event_count() == count and store.load_view("sales.daily").comment is None


def test_an_interrupt_in_a_receiver_writes_nothing_and_is_sent_as_the_failure(store):
    """Ctrl-C while a before_commit receiver runs is no veto to wrap: it reaches the caller as it is,
    commit_failed is told of it, nothing is written, and the store goes on."""
    make(store)
    count = store.event_count()
    failed = []

    def interrupted(sender, events):
        raise KeyboardInterrupt

    def fail(sender, events, error):
        failed.append(([e.type for e in events], type(error)))

    signals.before_commit.connect(interrupted)
    signals.commit_failed.connect(fail)
    try:
        with pytest.raises(KeyboardInterrupt):
            store.alter_view("sales.daily", ViewChange.update_comment("x"))
    finally:
        signals.before_commit.disconnect(interrupted)
        signals.commit_failed.disconnect(fail)
    assert failed == [(["view.comment_updated"], KeyboardInterrupt)]
    assert store.event_count() == count and store.load_view("sales.daily").comment is None
    assert store.alter_view("sales.daily", ViewChange.update_comment("y")).comment == "y"


def test_a_rebuild_callback_that_closes_the_store_gets_a_typed_error(store):
    make(store)
    with pytest.raises(ViewStoreError, match="closed during the write"):
        store.rebuild(progress=lambda done, total: store.close())


# -- every bad input raises its typed error and writes nothing -----------------------------------

BAD_CALLS = {
    "bad identifier": (ValidationError, lambda s: make(s, "noname")),
    "bad identifier part": (ValidationError, lambda s: make(s, ("sales", ""))),
    "identifier with a dot": (ValidationError, lambda s: make(s, ("sal.es", "v"))),
    "empty sql": (ValidationError, lambda s: make(s, "sales.x", representations=[("spark", "  ")])),
    "no representation": (ValidationError, lambda s: make(s, "sales.x", representations=[])),
    "duplicate dialect": (ValidationError,
                          lambda s: make(s, "sales.x", representations=[("spark", "a"), ("SPARK", "b")])),
    "duplicate dialect in batch": (ValidationError, lambda s: s.alter_view(
        "sales.daily", ViewChange.add_representation(("trino", "a")), ViewChange.add_representation(("Trino", "b")))),
    "existing dialect added": (ValidationError, lambda s: s.alter_view(
        "sales.daily", ViewChange.add_representation(("spark", "a")))),
    "unknown type": (ValidationError, lambda s: make(s, "sales.x", columns=[("a", "blob2")])),
    "duplicate column": (ValidationError, lambda s: make(s, "sales.x", columns=[("a", "int"), ("A", "int")])),
    "empty property key": (ValidationError, lambda s: make(s, "sales.x", properties={"": "v"})),
    "non-string property": (ValidationError, lambda s: make(s, "sales.x", properties={"k": 1})),
    "bad security mode": (ValidationError, lambda s: make(s, "sales.x", security_mode="ROOT")),
    "unknown dialect on update": (ValidationError, lambda s: s.alter_view(
        "sales.daily", ViewChange.update_representation("trino", "x"))),
    "unknown dialect on remove": (ValidationError, lambda s: s.alter_view(
        "sales.daily", ViewChange.remove_representation("trino"))),
    "bad batch rolls back earlier changes": (ValidationError, lambda s: s.alter_view(
        "sales.daily", ViewChange.update_comment("new"), ViewChange.remove_representation("trino"))),
    "unknown version": (ValidationError, lambda s: s.rollback_view("sales.daily", 99)),
    "existing name": (ViewAlreadyExistsError, lambda s: make(s)),
    "missing view": (NoSuchViewError, lambda s: s.alter_view("sales.nope", ViewChange.update_comment("x"))),
    "missing view rename": (NoSuchViewError, lambda s: s.rename_view("sales.nope", "sales.x")),
    "missing view rollback": (NoSuchViewError, lambda s: s.rollback_view("sales.nope", 1)),
    "stale expected_version": (ConcurrencyError, lambda s: s.alter_view(
        "sales.daily", ViewChange.update_comment("x"), expected_version=7)),
    "not a change": (ValidationError, lambda s: s.alter_view("sales.daily", "comment")),
    "non-string comment": (ValidationError, lambda s: make(s, "sales.x", comment=5)),
    "blank default catalog": (ValidationError, lambda s: make(s, "sales.x", default_catalog=" ")),
    "blank default namespace level": (ValidationError, lambda s: make(s, "sales.x", default_namespace=["sales", " "])),
    "columns left out": (ValidationError,
                         lambda s: make(s, "sales.x", columns=None)),  # [] is no columns; None is no list
    "empty summary key": (ValidationError, lambda s: make(s, "sales.x", summary={"": "v"})),
    "summary key not valid Unicode": (ValidationError, lambda s: make(s, "sales.x", summary={"\ud800": "v"})),
    "representation of three parts": (ValidationError, lambda s: make(s, "sales.x", representations=[
        ("spark", "SELECT 1", "extra")])),
    # README: ["spark", "SELECT 1"] alone is a list of two representations, and refused, saying so
    "one representation as a list": (ValidationError, lambda s: make(s, "sales.x", representations=[
        "spark", "SELECT 1"])),
    "one representation as a list, replaced": (ValidationError, lambda s: s.replace_view(
        "sales.daily", columns=COLS, representations=["spark", "SELECT 2"], default_namespace="sales")),
    # only a list of exactly two strings is taken for one representation written as a list
    "a string beside a representation": (ValidationError, lambda s: make(s, "sales.x", representations=[
        "spark", ("trino", "SELECT 1")])),
    "three strings as representations": (ValidationError, lambda s: make(s, "sales.x", representations=[
        "spark", "SELECT 1", "trino"])),
    # a ViewChange refuses a bad argument when it is built, not as an error of another kind in the batch
    "non-string comment in batch": (ValidationError,
                                    lambda s: s.alter_view("sales.daily", ViewChange.update_comment(5))),
    "non-string property in batch": (ValidationError, lambda s: s.alter_view(
        "sales.daily", ViewChange.set_property("k", 5))),
    "empty property key removed": (ValidationError, lambda s: s.alter_view(
        "sales.daily", ViewChange.remove_property(""))),
    "non-string dialect removed": (ValidationError, lambda s: s.alter_view(
        "sales.daily", ViewChange.remove_representation(5))),
    "broken metadata file": (IcebergMetadataError, lambda s: s.import_iceberg(s.path.parent / "nope.json", "a.b")),
}

# what each refusal says, as the user reads it ({nope}: the metadata file that is not there)
BAD_CALL_MESSAGES = {
    "bad batch rolls back earlier changes": "view sales.daily has no 'trino' representation; it has ['spark']",
    "bad identifier": "bad identifier 'noname': it needs a namespace and a name, as 'ns.view'",
    "bad identifier part": "bad identifier part '': it must be non-empty without surrounding spaces",
    "bad security mode": "security_mode must be DEFINER or INVOKER, not 'ROOT'",
    "blank default catalog": "bad default catalog ' '",
    "blank default namespace level": "bad default namespace ['sales', ' ']",
    "broken metadata file": "cannot read {nope}: [Errno 2] No such file or directory: '{nope}'",
    "columns left out": "columns are required (an empty list is allowed)",
    "duplicate column": "duplicate column name 'A'",
    "duplicate dialect": "Invalid view version: Cannot add multiple queries for dialect spark",
    "duplicate dialect in batch": "Invalid view version: Cannot add multiple queries for dialect trino "
                                  "(view sales.daily; to change its SQL: ViewChange.update_representation, "
                                  "--update-representation)",
    "empty property key": "bad property key '': it must be a non-empty string",
    "empty property key removed": "bad property key '': it must be a non-empty string",
    "empty sql": "the SQL of a representation must not be empty",
    "empty summary key": "a summary must be a dict of non-empty string keys to strings, not {{'': 'v'}}",
    "existing dialect added": "Invalid view version: Cannot add multiple queries for dialect spark "
                              "(view sales.daily; to change its SQL: ViewChange.update_representation, "
                              "--update-representation)",
    "existing name": "view already exists: sales.daily",
    "identifier with a dot": "bad identifier part 'sal.es': dots, backquotes and control characters are not allowed",
    "missing view": "no such view: sales.nope",
    "missing view rename": "no such view: sales.nope",
    "missing view rollback": "no such view: sales.nope",
    "no representation": "a view needs at least one SQL representation",
    "non-string comment": "a comment must be a string, not 5",
    "non-string comment in batch": "a comment must be a string or None, not 5",
    "non-string dialect removed": "bad dialect 5",
    "non-string property": "property 'k' must have a string value, not 1",
    "non-string property in batch": "property 'k' must have a string value, not 5",
    "not a change": "alter_view takes ViewChange values, not 'comment'",
    "one representation as a list": "representations ['spark', 'SELECT 1'] is a list of two representations, "
                                    "each a string: give one as a tuple ('spark', 'SELECT 1'), or in a list "
                                    "[('spark', 'SELECT 1')]",
    "one representation as a list, replaced": "representations ['spark', 'SELECT 2'] is a list of two "
                                              "representations, each a string: give one as a tuple ('spark', "
                                              "'SELECT 2'), or in a list [('spark', 'SELECT 2')]",
    "representation of three parts": "a representation must be SQLRepresentation(dialect, sql) or (dialect, sql), "
                                     "not ('spark', 'SELECT 1', 'extra')",
    "a string beside a representation": "a representation must be SQLRepresentation(dialect, sql) or (dialect, "
                                        "sql), not 'spark'",
    "three strings as representations": "a representation must be SQLRepresentation(dialect, sql) or (dialect, "
                                        "sql), not 'spark'",
    "stale expected_version": "view sales.daily is at stream version 1, not the expected 7",
    "summary key not valid Unicode": "bad summary key '\\ud800': it is not valid Unicode (a lone surrogate)",
    "unknown dialect on remove": "view sales.daily has no 'trino' representation; it has ['spark']",
    "unknown dialect on update": "view sales.daily has no 'trino' representation; it has ['spark']",
    "unknown type": "unknown type 'blob2': 'blob2' is not an Iceberg or SQL type",
    "unknown version": "view sales.daily has no version 99; it has 1",
}


@pytest.mark.parametrize("case", sorted(BAD_CALLS))
def test_bad_input_raises_typed_error_and_writes_nothing(store, case):
    make(store)
    error, call = BAD_CALLS[case]
    before_count, before = store.event_count(), store.projection_dump()
    with pytest.raises(error) as raised:
        call(store)
    assert type(raised.value) is error
    assert str(raised.value) == BAD_CALL_MESSAGES[case].format(nope=store.path.parent / "nope.json")
    assert store.event_count() == before_count
    assert store.projection_dump() == before
    assert store.load_view("sales.daily").comment is None


@pytest.mark.parametrize("representations, message", [
    ("SELECT 1", "representations must be a list of SQLRepresentation(dialect, sql) or (dialect, sql), not "
                 "'SELECT 1': the SQL needs its dialect, as [('spark', 'SELECT 1')]"),
    (None, "representations must be a list of SQLRepresentation(dialect, sql) or (dialect, sql), not None"),
    ({("spark", "SELECT 1")}, "representations must be a list of SQLRepresentation(dialect, sql) or (dialect, sql), "
                              "not {('spark', 'SELECT 1')}"),
    ((), "a view needs at least one SQL representation"),
])
def test_representations_of_the_wrong_kind_are_named_as_such(store, representations, message):
    """The SQL alone, None or a set is not "no representation": the message says what the argument
    takes; create and replace refuse it alike, writing nothing."""
    make(store)
    before = store.event_count()
    for write in (store.create_view, store.replace_view):
        with pytest.raises(ValidationError) as raised:
            write("sales.other", columns=COLS, representations=representations, default_namespace="sales")
        assert str(raised.value) == message
    assert store.event_count() == before and store.list_views() == [("sales", "daily")]



def test_representations_given_as_bytes_get_no_hint_of_a_dialect(store):
    """The hint of a dialect is for SQL text alone: bytes are no SQL, and [('spark', b'...')] would be
    refused in turn, so the message names the argument's kind only."""
    with pytest.raises(ValidationError) as raised:
        store.create_view("sales.other", columns=COLS, representations=b"SELECT 1", default_namespace="sales")
    assert str(raised.value) == ("representations must be a list of SQLRepresentation(dialect, sql) or "
                                 "(dialect, sql), not b'SELECT 1'")
    assert store.event_count() == 0

@pytest.mark.parametrize("fields, message", [
    ({"kind": "set_property"}, "bad property key None"),
    ({"kind": "set_property", "key": "k", "value": 5}, "property 'k' must have a string value"),
    ({"kind": "update_comment", "value": 5}, "a comment must be a string or None"),
    ({"kind": "remove_property", "key": 5}, "bad property key 5"),
    ({"kind": "add_representation"}, "add_representation needs a representation"),
    ({"kind": "update_representation", "key": "spark"}, "update_representation needs a representation"),
    ({"kind": "remove_representation", "key": " "}, "bad dialect"),
    ({"kind": "rename", "key": 5}, "a rename needs the new name as text"),
    ({"kind": "rename", "key": "sales.x."}, "bad identifier part ''"),
    ({"kind": "comment"}, "unknown change 'comment'"),
])
def test_a_change_made_by_the_class_itself_is_checked_as_it_is_made(store, fields, message):
    """Not an AssertionError, or pydantic's or Python's own error, when the batch is decided."""
    make(store)
    with pytest.raises(ValidationError, match=message):
        ViewChange(**fields)
    assert store.event_count() == 1


def test_a_rename_made_by_the_class_itself_takes_the_name_as_the_library_writes_it(store):
    make(store)
    assert store.alter_view("sales.daily", ViewChange("rename", key="Daily_V2")).identifier == ("sales", "daily_v2")
    renamed = store.alter_view("sales.daily_v2", ViewChange("rename", key="Archive.Daily"))
    assert renamed.identifier == ("archive", "daily")


def test_store_arguments_are_checked(tmp_path):
    with pytest.raises(ValidationError, match="^bad catalog name ''$"):
        ViewStore(tmp_path / "a.db", catalog="")
    with pytest.raises(ValidationError, match="^durability must be 'normal' or 'full', not 'maybe'$"):
        ViewStore(tmp_path / "b.db", durability="maybe")
    assert not (tmp_path / "b.db").exists()
    (tmp_path / "junk.db").write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(ViewStoreError) as junk:
        ViewStore(tmp_path / "junk.db")
    assert str(junk.value) == f"cannot open {tmp_path / 'junk.db'} as a viewstore database: file is not a database"
    assert (tmp_path / "junk.db").read_bytes() == b"this is not sqlite" * 100
    assert sorted(p.name for p in tmp_path.iterdir()) == ["junk.db"]  # neither a.db nor b.db was made
    with ViewStore(tmp_path / "c.db", durability="full") as s:
        make(s)
    with pytest.raises(ViewStoreError, match="closed"):
        s.list_views()


# -- found by an audit of the edges -------------------------------------------------------------------

def test_a_datetime_is_read_to_the_exact_millisecond(store):
    """A datetime becomes epoch ms in integers (through a float, one time in five came out 1 ms low)."""
    ms = 1079337347001  # 2004-03-15T07:55:47.001Z: * 1000 of its float timestamp gives ...000
    at = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(milliseconds=ms)
    assert int(at.timestamp() * 1000) == ms - 1  # what the old conversion gave
    assert to_epoch_ms(at) == to_epoch_ms(at.replace(tzinfo=None)) == to_epoch_ms(at.isoformat()) == ms
    assert to_epoch_ms(dt.date(2004, 3, 15)) == 1079308800000
    # ISO 8601's basic date is a date, not 20 million ms after 1970; other digit strings are ms
    assert to_epoch_ms("20040315") == to_epoch_ms("2004-03-15") == 1079308800000
    assert to_epoch_ms("2004") == 2004 and to_epoch_ms(20040315) == 20040315  # an int is always ms
    assert to_epoch_ms(str(ms)) == ms and to_epoch_ms("0") == 0
    for typo in ("20041315", "20040230"):  # as ms, 1970: every event would be "since" then
        with pytest.raises(ValidationError, match="eight digits are a date"):
            to_epoch_ms(typo)
    with pytest.raises(ValidationError,
                       match=r"^bad time '2004031²': use ISO 8601 \(2026-11-22T10:00:00Z\) or epoch ms$"):
        to_epoch_ms("2004031²")  # a digit to str.isdigit, not to int()
    make(store)
    event = store.history("sales.daily")[0]
    exact = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(milliseconds=event.occurred_at)
    assert store.events(since=exact, until=exact) == [event]


def test_a_time_is_the_millisecond_it_falls_in_within_the_64_bit_bounds(store):
    """A number is floored to its millisecond as a datetime is (int() took -1.5 up to -1); a string
    of ASCII digits alone, with a sign or not, is epoch ms; both ends of the 64 bits are times."""
    epoch = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
    assert to_epoch_ms(1.7) == 1 and to_epoch_ms(-1.5) == -2 == to_epoch_ms(epoch - dt.timedelta(microseconds=1500))
    assert to_epoch_ms("-12345678") == -12345678 and to_epoch_ms(" -5 ") == -5
    for digits in ("\u0662\u0660\u0660\u0664\u0660\u0663\u0661\u0665", "2004031\u00b2"):  # digits to str.isdigit
        with pytest.raises(ValidationError, match="use ISO 8601"):  # not eight digits of a date, nor ms
            to_epoch_ms(digits)
    assert to_epoch_ms(2**63 - 1) == 2**63 - 1 and to_epoch_ms(str(-(2**63))) == -(2**63)
    for beyond in (2**63, -(2**63) - 1, str(2**63)):
        with pytest.raises(ValidationError, match="beyond the 64-bit"):
            to_epoch_ms(beyond)
    make(store)
    events = store.events()
    assert store.load_view("sales.daily", as_of=2**63 - 1).comment is None
    assert store.events(since=-(2**63), until=2**63 - 1) == events and store.events(since=2**63 - 1) == []


@pytest.mark.parametrize("call, message", [
    (lambda s: s.load_view("sales.daily", as_of=float("nan")), "not a finite number"),
    (lambda s: s.load_view("sales.daily", as_of=2**70), "beyond the 64-bit"),
    (lambda s: s.load_view("sales.daily", as_of="9" * 30), "beyond the 64-bit"),
    (lambda s: s.events(since=float("inf")), "not a finite number"),
    (lambda s: s.events(limit="x"), "limit must be"),
    (lambda s: s.events(limit=-1), "limit must be"),
    (lambda s: s.events(limit=True), "limit must be"),  # a bool is an int to Python, not a number of events
    (lambda s: s.events(types=5), "types must be"),
    (lambda s: s.query(None), "SQL text"),
    (lambda s: s.query("VACUUM INTO 'copy.db'"), "returns rows"),
    (lambda s: s.query("-- a comment, no statement"), "returns rows"),
    (lambda s: s.query("SELECT '\ud800'"), "not valid Unicode"),
    # said as the query's limit, not as "attempt to write a readonly database", which reads as the file's
    (lambda s: s.query("DELETE FROM views"), "a query only reads, it cannot change the store"),
    (lambda s: s.query("UPDATE meta SET value = 'x' RETURNING key"), "a query only reads"),
    # Python's sqlite3 refuses these itself: its errors carry no SQLite code to tell them by
    (lambda s: s.query("SELECT 1; SELECT 2"), "query failed: You can only execute one statement at a time"),
    (lambda s: s.query("SELECT ?"), "query failed: Incorrect number of bindings supplied"),
    (lambda s: s.drop_view("sales.daily", expected_version="1"), "expected_version must be"),
    (lambda s: make(s, "sales.new", expected_version=False), "expected_version must be"),  # not version 0
    (lambda s: s.rollback_view("sales.daily", True), "version id must be an integer"),  # not version 1
    (lambda s: ViewChange.remove_representation(" "), "bad dialect"),  # when built, before a store is asked
    (lambda s: s.alter_view("sales.daily", ViewChange.update_comment("x"), expected_version=1.0),
     "expected_version must be"),
    (lambda s: s.export_iceberg("sales.daily", 5), "must be a path"),
    (lambda s: s.import_iceberg(None, "a.b"), "must be a path"),
    (lambda s: ViewStore(123), "must be a path"),
    (lambda s: ViewStore(s.path, warehouse=5), "must be a path"),
])
def test_bad_arguments_are_validation_errors(store, call, message):
    make(store)
    make(store, "sales.other")
    store.drop_view("sales.other")
    before = store.projection_dump(), store.event_count()
    with pytest.raises(ValidationError, match=message):
        call(store)
    assert (store.projection_dump(), store.event_count()) == before


@pytest.mark.parametrize("metadata", [None, {"format-version": 1, "view-uuid": "x"}, 5])
def test_import_iceberg_names_what_it_takes_for_metadata(store, metadata):
    """A dict of the file's JSON (json.load of it) is no path: the message names what import_iceberg
    takes instead, read_metadata's answer among them, rather than a path alone; nothing is written."""
    with pytest.raises(ValidationError) as raised:
        store.import_iceberg(metadata, "sales.imported")
    assert str(raised.value) == ("metadata must be a path (a metadata file's, or a view location's) or what "
                                 f"viewstore.iceberg.read_metadata returned, not {type(metadata).__name__}")
    assert store.event_count() == 0


def test_import_view_checks_its_arguments(store):
    view = make(store)
    good = dict(source="x", versions=view.versions, version_log=view.version_log, current_version_id=1)
    for bad, message in (({"view_uuid": 5}, "view_uuid must be non-empty text, not 5$"),
                         ({"source": 5}, "source must be non-empty text, not 5$"),
                         ({"source_location": 3}, "source_location must be non-empty text, not 3$"),
                         ({"versions": None}, "versions must be a list of ViewVersion, not None$"),
                         ({"versions": [view.versions[0].model_dump()]},
                          r"versions must be a list of ViewVersion, not \[\{"),
                         ({"version_log": [(1, 1)]},
                          r"version_log must be a list of VersionLogEntry, not \[\(1, 1\)\]$"),
                         ({"current_version_id": "1"},
                          r"current_version_id must be a version id \(an int\), not '1'$")):
        with pytest.raises(ValidationError, match=f"^{message}"):
            store.import_view("sales.imported", **{**good, **bad})
    assert store.event_count() == 1
    before = store.projection_dump()
    with pytest.raises(ViewAlreadyExistsError, match="^view already exists: sales.daily$"):  # a live view's name
        store.import_view("SALES.daily", **good)
    assert store.event_count() == 1 and store.projection_dump() == before


def _version(i, ts):
    """Version ``i`` of a view with one column, made at ``ts``, for import_view."""
    return ViewVersion(version_id=i, timestamp_ms=ts, schema_id=0, columns=(Column("c", "int"),),
                       representations=(SQLRepresentation("spark", f"SELECT {i} AS c"),), default_namespace=("n",))


_UNCHECKED = Column.model_construct(name=" ", type="int", comment=None, nullable=True)


@pytest.mark.parametrize("bad, message", [
    ({"source": " "}, "source must be non-empty text"),
    ({"source_location": ""}, "source_location must be non-empty text"),
    ({"view_uuid": "\t"}, "view_uuid must be non-empty text"),
    ({"current_version_id": True}, "current_version_id must be a version id"),  # a bool is no version 1
    ({"versions": []}, "^an imported view needs at least one version$"),
    ({"versions": [_version(1, 1000), _version(1, 2000)]}, "duplicate version ids"),
    ({"current_version_id": 2}, r"^current version 2 is not among the versions \[1\]$"),
    ({"versions": [_version(1, 1000).model_copy(update={"representations": ()})]},
     "^version 1 has no representation$"),
    ({"versions": [_version(1, 1000).model_copy(update={"representations": (
        SQLRepresentation("spark", "SELECT 1 AS c"), SQLRepresentation("SPARK", "SELECT 2 AS c"))})]},
     "Cannot add multiple queries for dialect spark"),
    # columns made without validation are validated as they enter the log, each distinct list once,
    # that of a later version too (they reached the caller as pydantic's own error, not a ViewStoreError)
    ({"versions": [_version(1, 1000).model_copy(update={"columns": (_UNCHECKED,)})]},
     r"^versions\[0\]: a column name must be non-empty$"),
    ({"versions": [_version(1, 1000),
                   _version(2, 2000).model_copy(update={"columns": (Column("c", "int"), _UNCHECKED)})],
      "current_version_id": 2}, r"^versions\[1\]: a column name must be non-empty$"),
    # so are the version's other fields, its representations and the log's entries: each reached the
    # caller as pydantic's own error, a TypeError (times compared) or an AttributeError (a field left out)
    ({"versions": [_version(1, 1000).model_copy(update={"representations": (
        SQLRepresentation.model_construct(dialect="spark", sql=" "),)})]},
     r"^versions\[0\]: the SQL of a representation must not be empty$"),
    ({"versions": [_version(1, 1000).model_copy(update={"representations": (SQLRepresentation.model_construct(),)})]},
     r"^versions\[0\]: bad representation: dialect: Input should be a valid string; "
     r"sql: Input should be a valid string$"),
    ({"versions": [ViewVersion.model_construct(**{**dict(_version(1, 1000)), "timestamp_ms": "1000"})]},
     r"^versions\[0\]: bad view version: timestamp_ms: Input should be a valid integer, not '1000'$"),
    ({"versions": [ViewVersion.model_construct(**{**dict(_version(1, 1000)), "columns": None})]},
     r"^versions\[0\]: bad view version: columns: Input should be a valid tuple$"),
    ({"versions": [ViewVersion.model_construct(**{**dict(_version(1, 1000)), "summary": [1]})]},
     r"^versions\[0\]: bad view version: summary: Input should be a valid dictionary$"),
    ({"versions": [ViewVersion.model_construct(version_id=1, timestamp_ms=1000)]},
     r"^versions\[0\]: bad view version: schema_id: Field required; columns: Field required; "
     r"representations: Field required$"),
    ({"version_log": [VersionLogEntry.model_construct(timestamp_ms="1000", version_id=1)]},
     r"^version_log\[0\]: bad version log entry: timestamp_ms: Input should be a valid integer, not '1000'$"),
    ({"version_log": [VersionLogEntry(timestamp_ms=1000, version_id=1), VersionLogEntry.model_construct(version_id=1)]},
     r"^version_log\[1\]: bad version log entry: timestamp_ms: Field required$"),
    # each of a field's own bounds and types too, for models made (or copied with an update) without validation
    ({"version_log": [VersionLogEntry.model_construct(timestamp_ms=2**63, version_id=1)]},
     r"^version_log\[0\]: bad version log entry: "
     r"timestamp_ms: Input should be less than or equal to 9223372036854775807$"),
    ({"version_log": [VersionLogEntry.model_construct(timestamp_ms=-(2**63) - 1, version_id=1)]},
     r"^version_log\[0\]: bad version log entry: timestamp_ms: Input should be greater than or equal to "
     r"-9223372036854775808$"),
    ({"version_log": [VersionLogEntry.model_construct(timestamp_ms=1000, version_id=2**31)]},
     r"^version_log\[0\]: bad version log entry: version_id: Input should be less than or equal to 2147483647$"),
    ({"versions": [_version(1, 1000).model_copy(update={"schema_id": 2**31})]},
     r"^versions\[0\]: bad view version: schema_id: Input should be less than or equal to 2147483647$"),
    ({"versions": [_version(1, 1000).model_copy(update={"default_catalog": 5})]},
     r"^versions\[0\]: bad view version: default_catalog: Input should be a valid string$"),
    ({"versions": [_version(1, 1000).model_copy(update={"default_namespace": ("n", 1)})]},
     r"^versions\[0\]: bad view version: default_namespace.1: Input should be a valid string$"),
    ({"versions": [_version(1, 1000).model_copy(update={"summary": ReadOnlyDict({"engine-name": 1})})]},
     r"^versions\[0\]: bad view version: summary.engine-name: Input should be a valid string$"),
])
def test_import_view_refuses_what_the_store_cannot_hold_and_writes_nothing(store, bad, message):
    good = dict(source="test", versions=[_version(1, 1000)],
                version_log=[VersionLogEntry(timestamp_ms=1000, version_id=1)], current_version_id=1)
    with pytest.raises(ValidationError, match=message):
        store.import_view("a.v", **{**good, **bad})
    assert store.event_count() == 0


@pytest.mark.parametrize("bad, message", [
    (SQLRepresentation.model_construct(dialect="spark", sql=" "), "^the SQL of a representation must not be empty$"),
    (SQLRepresentation.model_construct(dialect=" spark", sql="SELECT 1"),
     "^bad dialect ' spark': it must not be empty, begin or end with whitespace$"),
    (SQLRepresentation.model_construct(dialect="spark", sql=None),
     "^bad representation: sql: Input should be a valid string$"),
    (SQLRepresentation.model_construct(sql="SELECT 1"),
     "^bad representation: dialect: Input should be a valid string$"),
])
def test_a_representation_made_without_validation_is_refused_by_every_write_and_writes_nothing(store, bad, message):
    """create, replace and alter (add and update) took such a representation as it was: pydantic's own
    error from the event, or an AttributeError for a field left out, reached the caller."""
    make(store)
    count = store.event_count()
    calls = [lambda: store.create_view("sales.other", columns=COLS, representations=[bad], default_namespace=["sales"]),
             lambda: store.replace_view("sales.daily", columns=COLS,
                                        representations=[bad], default_namespace=["sales"]),
             lambda: store.alter_view("sales.daily", ViewChange("add_representation", representation=bad)),
             lambda: store.alter_view("sales.daily", ViewChange("update_representation", representation=bad))]
    for call in calls:
        with pytest.raises(ValidationError, match=message):
            call()
    assert store.event_count() == count and not store.view_exists("sales.other")


@pytest.mark.parametrize("bad, message", [
    (Column.model_construct(name="c", type="nosuch", comment=None, nullable=True),
     "^unknown type 'nosuch': 'nosuch' is not an Iceberg or SQL type$"),
    (Column.model_construct(name="c", type=Column("c", "int").type, comment=None, nullable="maybe"),
     "^bad column: nullable: Input should be a valid boolean, not 'maybe'$"),
    (Column.model_construct(name="c", type=Column("c", "int").type, comment=7, nullable=True),
     "^bad column: comment: Input should be a valid string$"),
    (Column.model_construct(name="c"), "^a column type must be a non-empty string, not None$"),  # the field left out
    (Column.model_construct(name=" ", type=Column("c", "int").type, comment=None, nullable=True),
     "^a column name must be non-empty$"),  # every field of the types the constructor leaves
])
def test_a_column_made_without_validation_is_refused_by_create_and_replace_and_writes_nothing(store, bad, message):
    make(store)
    count = store.event_count()
    for call in (store.create_view, store.replace_view):
        with pytest.raises(ValidationError, match=message):
            call("sales.daily" if call == store.replace_view else "sales.other", columns=[bad], representations=[SPARK],
                 default_namespace=["sales"])
    assert store.event_count() == count and not store.view_exists("sales.other")


@pytest.mark.parametrize("built", [
    PrimitiveType("garbage"), PrimitiveType("bigint"), DecimalType(50, 60), DecimalType(10.0, 2), FixedType(-1),
    ListType("int"), StructType((StructField(1, PrimitiveType("int")),)),
    StructType((StructField("a", PrimitiveType("int")), StructField("A", PrimitiveType("int")))),
    StructType((StructField("a", PrimitiveType("int"), comment=5),)),
])
def test_a_hand_built_column_type_that_does_not_read_back_is_refused_by_create_and_replace_and_writes_nothing(
        store, built):
    """A type object was taken as it was and stored by its spelling: pydantic's own error from the
    event, a TypeError or AttributeError from spelling it reached the caller, or a PrimitiveType("bigint")
    was stored as another type than the one given."""
    make(store)
    count, rows = store.event_count(), store.projection_dump()
    given = [("c", built), Column.model_construct(name="c", type=built, comment=None, nullable=True)]
    for column in given:
        for call in (store.create_view, store.replace_view):
            with pytest.raises(ValidationError, match="is not a valid type"):
                call("sales.daily" if call == store.replace_view else "sales.other", columns=[column],
                     representations=[SPARK], default_namespace=["sales"])
    assert store.event_count() == count and store.projection_dump() == rows and not store.view_exists("sales.other")
    assert store.load_view("sales.daily").columns == tuple(COLS)


@pytest.mark.parametrize("not_a_flag", ["no", "yes", 0, 1])
def test_a_column_s_nullable_given_as_text_or_a_number_is_refused_by_create_and_replace(store, not_a_flag):
    """A column given as a tuple or a dict (data a caller read from elsewhere) took "no" and 0 as
    False, "yes" and 1 as True: its nullability was whatever the value's truth was."""
    make(store)
    count = store.event_count()
    message = f"^bad column: nullable: Input should be a valid boolean, not {re.escape(repr(not_a_flag))}$"
    for column in [("id", "int", None, not_a_flag), {"name": "id", "type": "int", "nullable": not_a_flag},
                   Column.model_construct(name="id", type=Column("id", "int").type, comment=None, nullable=not_a_flag)]:
        with pytest.raises(ValidationError, match=message):
            make(store, "sales.other", columns=[column])
        with pytest.raises(ValidationError, match=message):
            store.replace_view("sales.daily", columns=[column], representations=[SPARK], default_namespace="sales")
    assert store.event_count() == count and not store.view_exists("sales.other")
    assert store.load_view("sales.daily").columns == tuple(COLS)

def test_models_made_without_validation_but_valid_are_taken_as_built_ones(store):
    """A model_construct of valid fields is what its constructor makes: every write takes it."""
    col = Column.model_construct(name="Day", type=Column("d", "date").type, comment=None, nullable=True)
    rep = SQLRepresentation.model_construct(dialect="trino", sql="SELECT current_date AS day")
    made = store.create_view("a.v", columns=[col], representations=[rep], default_namespace=["a"])
    assert (made.columns, made.representations) == ((Column("Day", "date"),), (SQLRepresentation("trino", rep.sql),))
    other = SQLRepresentation.model_construct(dialect="spark", sql="SELECT current_date() AS day")
    assert store.alter_view("a.v",
                            ViewChange("add_representation", representation=other)).dialects == ("trino", "spark")
    version = ViewVersion.model_construct(version_id=1, timestamp_ms=1000, schema_id=0, columns=(col,),
                                          representations=(rep,), default_catalog=None, default_namespace=("a",),
                                          summary={})
    imported = store.import_view("a.imported", source="test", versions=[version], current_version_id=1,
                                 version_log=[VersionLogEntry.model_construct(timestamp_ms=1000, version_id=1)])
    assert imported.version(1) == ViewVersion(version_id=1, timestamp_ms=1000, schema_id=0,
                                              columns=(Column("Day", "date"),), representations=(rep,),
                                              default_namespace=("a",))


def test_a_column_made_without_validation_that_versions_share_is_validated_for_each_of_them(store):
    """A version's constructor copies the tuple of columns it is given, not the columns in it: the
    versions made of one list hold the same column in tuples of their own, and each takes it validated
    (its type, given as text, parsed)."""
    col = Column.model_construct(name="Day", type="date", comment=None, nullable=True)
    versions = [ViewVersion(version_id=i, timestamp_ms=1000 * i, schema_id=0, columns=[col], default_namespace=("a",),
                            representations=(SQLRepresentation("spark", f"SELECT {i} AS day"),)) for i in (1, 2, 3)]
    assert versions[1].columns is not versions[2].columns and versions[1].columns[0] is versions[2].columns[0] is col
    with warnings.catch_warnings():  # (pydantic warns as it dumps a column whose type is not an IcebergType)
        warnings.simplefilter("error")
        imported = store.import_view("a.v", source="test", versions=versions, current_version_id=3,
                                     version_log=[VersionLogEntry(timestamp_ms=1000 * i, version_id=i)
                                                  for i in (1, 2, 3)])
    assert [v.columns for v in imported.versions] == [(Column("Day", "date"),)] * 3
    assert [v.columns for v in store.load_view("a.v").versions] == [(Column("Day", "date"),)] * 3
    with sqlite3.connect(store.path) as raw:  # as stored
        stored = [orjson.loads(p) for (p,) in raw.execute("SELECT payload FROM events ORDER BY position")]
    raw.close()
    assert [c for p in stored for v in p.get("versions", [p.get("version")]) for c in v["columns"]] == [
        {"name": "Day", "type": "date", "comment": None, "nullable": True}] * 3


def test_import_iceberg_of_what_was_read_checks_versions_changed_since_without_validation(store, tmp_path):
    """What ``read_metadata`` returned, given to ``import_iceberg`` (as the CLI gives it where no store is
    yet), is checked as ``import_view`` checks its versions: its caller may have changed them."""
    from viewstore.iceberg import read_metadata

    make(store)
    read = read_metadata(store.export_iceberg("sales.daily", tmp_path / "export"))
    bad = read.versions[0].model_copy(update={"representations": (
        SQLRepresentation.model_construct(dialect="spark", sql=" "),)})
    with ViewStore(tmp_path / "other.db") as other:
        with pytest.raises(ValidationError, match=r"^versions\[0\]: the SQL of a representation must not be empty$"):
            other.import_iceberg(read.model_copy(update={"versions": (bad,)}), "sales.daily")
        assert other.event_count() == 0
        assert other.import_iceberg(read, "sales.daily").versions == store.load_view("sales.daily").versions


def test_import_view_of_a_uuid_in_the_log_whose_row_is_gone_from_views_is_refused_without_a_name(store):
    """The log holds the view's events, so it is in the store, though its row in views was deleted
    behind the library's back: the refusal cannot name the view, and nothing is written."""
    uuid = make(store).uuid
    with sqlite3.connect(store.path) as raw:
        raw.execute("DELETE FROM views WHERE view_id = ?", (uuid,))
    raw.close()
    count = store.event_count()
    with pytest.raises(ViewAlreadyExistsError) as raised:
        store.import_view("a.v", source="test", view_uuid=uuid, versions=[_version(1, 1000)],
                          version_log=[VersionLogEntry(timestamp_ms=1000, version_id=1)], current_version_id=1)
    assert str(raised.value) == (f"a view with UUID {uuid} is already in the store (a view is recorded once; "
                                 "its history is there)")
    assert store.event_count() == count and not store.view_exists("a.v")


def test_import_brings_the_versions_dated_at_its_first_entry_in_the_import_event(store):
    store.import_view("a.v", source="test", versions=[_version(1, 1000), _version(2, 1000), _version(3, 2000)],
                      version_log=[VersionLogEntry(timestamp_ms=1000, version_id=1),
                                   VersionLogEntry(timestamp_ms=2000, version_id=3)], current_version_id=3)
    assert [e.type for e in store.history("a.v")] == ["view.imported", "view.replaced"]
    assert [v.version_id for v in store.load_view("a.v", as_of=1000).versions] == [1, 2]
    assert [v.version_id for v in store.load_view("a.v", as_of=2000).versions] == [1, 2, 3]


def test_an_import_brings_each_version_with_the_entry_that_added_it_within_one_millisecond_too(store):
    """The log of a block that replaced a view twice: both versions and both entries at one time. The
    import gave the second version ahead of its entry (a view.replaced making nothing current, a state
    the view never was in), and its entry then became a rollback to a version never current before."""
    store.import_view("a.v", source="test", versions=[_version(1, 1000), _version(2, 2000), _version(3, 2000)],
                      version_log=[VersionLogEntry(timestamp_ms=1000, version_id=1),
                                   VersionLogEntry(timestamp_ms=2000, version_id=2),
                                   VersionLogEntry(timestamp_ms=2000, version_id=3)], current_version_id=3)
    history = store.history("a.v")
    assert [(e.type, e.current_version_id) for e in history] == \
        [("view.imported", 1), ("view.replaced", 2), ("view.replaced", 3)]
    # the first entry too: a version its block added after it is not in the import event
    store.import_view("b.v", source="test", versions=[_version(1, 1000), _version(2, 1000)],
                      version_log=[VersionLogEntry(timestamp_ms=1000, version_id=1),
                                   VersionLogEntry(timestamp_ms=1000, version_id=2)], current_version_id=2)
    assert [(e.type, e.current_version_id) for e in store.history("b.v")] == \
        [("view.imported", 1), ("view.replaced", 2)]


def test_versions_never_current_after_the_log_come_at_their_own_times_in_time_order(store):
    """Versions added after the last log entry without becoming current came in id order, each
    dated no earlier than the one before: version 3, made at 2000, came with version 2 at 3000, so
    as_of 2000 lacked a version the history says existed then."""
    store.import_view("a.v", source="test", versions=[_version(1, 1000), _version(2, 3000), _version(3, 2000)],
                      version_log=[VersionLogEntry(timestamp_ms=1000, version_id=1)], current_version_id=1)
    assert [(e.type, e.occurred_at) for e in store.history("a.v")] == \
        [("view.imported", 1000), ("view.replaced", 2000), ("view.replaced", 3000)]
    assert [v.version_id for v in store.load_view("a.v", as_of=1999).versions] == [1]
    assert [v.version_id for v in store.load_view("a.v", as_of=2000).versions] == [1, 3]
    assert [v.version_id for v in store.load_view("a.v", as_of=3000).versions] == [1, 2, 3]
    assert store.load_view("a.v", as_of=3000).current_version_id == 1


def test_a_replace_reuses_the_lowest_id_of_identical_versions(store):
    """An imported file may hold one definition twice (listed in any order; the store keeps them by
    id): Iceberg's reuse rule takes the first in id order, not the current or the latest one."""
    same = {"schema_id": 0, "columns": (Column("c", "int"),), "default_namespace": ("n",),
            "representations": (SQLRepresentation("spark", "SELECT 7 AS c"),), "default_catalog": "prod"}
    other = {**same, "representations": (SQLRepresentation("spark", "SELECT 3 AS c"),)}
    versions = [ViewVersion(version_id=4, timestamp_ms=1000, **same), _version(1, 1000),
                ViewVersion(version_id=2, timestamp_ms=1000, **same),
                ViewVersion(version_id=3, timestamp_ms=1000, **other)]
    store.import_view("a.v", source="test", versions=versions,
                      version_log=[VersionLogEntry(timestamp_ms=1000, version_id=1)], current_version_id=1)
    view = store.replace_view("a.v", columns=[Column("c", "int")], representations=[("spark", "SELECT 7 AS c")],
                              default_namespace="n")
    assert view.current_version_id == 2 and len(view.versions) == 4
    assert store.replace_view("a.v", columns=[Column("c", "int")], representations=[("spark", "SELECT 3 AS c")],
                              default_namespace="n").current_version_id == 3


@pytest.mark.parametrize("where", ["missing folder", "folder", "not a database"])
def test_opening_what_is_not_a_store_is_a_viewstore_error(tmp_path, where):
    path = {"missing folder": tmp_path / "no" / "such" / "x.db", "folder": tmp_path}.get(where, tmp_path / "t.db")
    if where == "not a database":
        path.write_text("plain text, not SQLite " * 100)
    with pytest.raises(ViewStoreError, match="cannot open"):
        ViewStore(path)


def test_a_closed_store_refuses_every_call(store):
    make(store)
    store.close()
    for call in (store.event_count, store.projection_dump, lambda: store.query("SELECT 1"),
                 lambda: store.load_view("sales.daily"), store.rebuild):
        with pytest.raises(ViewStoreError, match="closed"):
            call()


def test_query_reads_the_store_it_opened_after_a_chdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with ViewStore("relative.db", actor="alice") as store:
        make(store)
        (tmp_path / "elsewhere").mkdir()
        monkeypatch.chdir(tmp_path / "elsewhere")
        assert store.query("SELECT count(*) AS n FROM events") == [{"n": 1}]


@pytest.mark.parametrize("params", ["alice", b"alice", None, 5, {"alice"}])
def test_query_params_of_one_bare_value_are_refused_saying_how_to_give_it(store, params):
    """sqlite3 takes a string apart ('alice': "there are 5 supplied") and bytes into numbers (b'x'
    matched as 120): query and stream_query refuse such params, and what is no sequence or mapping,
    saying to give one value as [value]."""
    make(store)
    sql = "SELECT count(*) AS n FROM events WHERE actor = ?"
    message = ("params must be a list or tuple of values (one per ?) or a dict (one per :name), "
               f"not {params!r}; one value is given as [value]")
    with pytest.raises(ValidationError) as raised:
        store.query(sql, params)
    assert str(raised.value) == message
    with pytest.raises(ValidationError) as raised:
        with store.stream_query(sql, params):
            pass
    assert str(raised.value) == message
    assert store.query(sql, ["alice"]) == store.query(sql, ("alice",)) == [{"n": 1}]
    assert store.query("SELECT count(*) AS n FROM events WHERE actor = :who", {"who": "alice"}) == [{"n": 1}]


def test_query_params_that_sqlite3_cannot_bind_are_refused_and_other_sequences_are_taken(store):
    """sqlite3 binds :name parameters from a dict only: a UserDict, a Mapping with __getitem__, it takes
    for a sequence and reads params[0] (a KeyError reached the caller), a mappingproxy it refuses; both
    are refused as params of the wrong kind, bytearray as bytes are. Any other sequence binds as a list."""
    import collections
    import types

    make(store)
    named = "SELECT count(*) AS n FROM events WHERE actor = :who"
    for params in (collections.UserDict(who="alice"), types.MappingProxyType({"who": "alice"}), bytearray(b"alice")):
        def stream(params=params):
            with store.stream_query(named, params):
                pass

        for call in (lambda params=params: store.query(named, params), stream):
            with pytest.raises(ValidationError) as raised:
                call()
            assert str(raised.value) == ("params must be a list or tuple of values (one per ?) or a dict (one per "
                                         f":name), not {params!r}; one value is given as [value]")
    positional = "SELECT count(*) AS n FROM events WHERE stream_version = ?"
    for params in (range(1, 2), collections.UserList([1])):
        assert store.query(positional, params) == [{"n": 1}]
        with store.stream_query(positional, params) as rows:
            assert list(rows) == [{"n": 1}]
    assert store.query(named, collections.OrderedDict(who="alice")) == [{"n": 1}]  # a dict subclass is a dict


@pytest.mark.parametrize("signal_number", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_ends_a_query_that_would_run_for_ever_with_what_its_handler_raises(tmp_path, signal_number):
    """Ctrl-C's KeyboardInterrupt, or a SIGTERM handler's SystemExit, ends the query and reaches the
    caller as itself (Python's sqlite3 module would drop what a callback raises)."""
    db = tmp_path / "q.db"
    with ViewStore(db, actor="alice") as store:
        make(store)
    result = interrupted(f"""
import sys
from viewstore import ViewStore
signal.signal(signal.SIGTERM, lambda *_: sys.exit(3))
store = ViewStore({str(db)!r}, actor="alice")
print("start", flush=True)
try:
    store.query({RUNAWAY!r})
except (KeyboardInterrupt, SystemExit) as e:
    print(type(e).__name__, e.args, e.__context__)
    assert store.query("SELECT count(*) AS n FROM events") == [{{"n": 1}}]  # the store goes on
    store.close()
""", signal_number=signal_number)
    assert result.returncode == 0, result.stderr
    assert result.stdout == ("KeyboardInterrupt () None\n" if signal_number == signal.SIGINT
                             else "SystemExit (3,) None\n")
    assert result.ended - result.sent < 5  # within a slice (0.1 s) on a quiet machine; never is 60 s, the limit


def test_representation_changes_that_end_where_they_started_write_nothing(store):
    make(store)
    same = store.alter_view("sales.daily", ViewChange.update_representation("spark", SPARK.sql))
    assert same.stream_version == 1 and store.event_count() == 1
    store.alter_view("sales.daily", ViewChange.add_representation(("trino", "SELECT 1")),
                     ViewChange.remove_representation("trino"))
    assert store.event_count() == 1 and len(store.load_view("sales.daily").versions) == 1
    # a real change next to a no-op one is written, once
    changed = store.alter_view("sales.daily", ViewChange.update_representation("spark", SPARK.sql),
                               ViewChange.update_comment("new"))
    assert [e.type for e in store.history("sales.daily")] == ["view.created", "view.comment_updated"]
    assert changed.current_version_id == 1
    # so is a representation change next to the same SQL again: the update is no change, and logs none
    added = store.alter_view("sales.daily", ViewChange.update_representation("SPARK", SPARK.sql),
                             ViewChange.add_representation(("trino", "SELECT 1")),
                             ViewChange.update_representation("trino", "SELECT 1"))
    last = store.history("sales.daily")[2:]
    assert [(e.type, e.current_version_id) for e in last] == [("view.representation_added", 2)]
    assert added.current_version_id == 2 and added.dialects == ("spark", "trino")


def test_a_batch_may_rename_a_view_away_and_back(store):
    make(store)
    make(store, "sales.taken")
    view = store.alter_view("sales.daily", ViewChange.rename("w"), ViewChange.update_comment("c"),
                            ViewChange.rename("daily"))
    assert view.identifier == ("sales", "daily") and view.comment == "c"
    # each rename comes from the name the one before it gave
    renames = [(e.from_identifier, e.identifier) for e in store.history("sales.daily") if e.type == "view.renamed"]
    assert renames == [(("sales", "daily"), ("sales", "w")), (("sales", "w"), ("sales", "daily"))]
    with pytest.raises(ViewAlreadyExistsError, match="sales.taken"):  # another view's name is still refused
        store.alter_view("sales.daily", ViewChange.rename("taken"))
    before = store.projection_dump()
    store.rebuild()
    assert store.projection_dump() == before


def test_history_finds_a_view_by_a_name_it_was_renamed_from(store):
    view = make(store)
    store.rename_view("sales.daily", "sales.weekly")
    history = store.history("sales.daily")
    assert [e.type for e in history] == ["view.created", "view.renamed"] and history[0].view_id == view.uuid
    with pytest.raises(NoSuchViewError, match="ever named"):
        store.history("sales.never")
    again = make(store)  # a second view takes the name and is renamed away too: history is the one that took it last
    store.rename_view("sales.daily", "sales.monthly")
    assert {e.view_id for e in store.history("sales.daily")} == {again.uuid}


@pytest.mark.parametrize("identifier", ["NS.W", "w", "ns..w", "ns.w."])
def test_rebuild_refuses_an_identifier_the_library_never_writes(store, identifier):
    make(store)
    with sqlite3.connect(store.path) as raw:
        raw.execute("INSERT INTO events (commit_id, view_id, stream_version, type, identifier, actor, occurred_at, "
                    "payload) SELECT commit_id, 'other', 1, type, ?, actor, occurred_at, payload FROM events "
                    "WHERE position = 1", (identifier,))
    raw.close()
    before = store.projection_dump()
    with pytest.raises(CorruptLogError, match="event at position 2 "):
        store.rebuild()
    assert store.projection_dump() == before


def test_rebuild_refuses_a_log_with_two_live_views_of_one_name(store):
    make(store)
    with sqlite3.connect(store.path) as raw:
        raw.execute("INSERT INTO events (commit_id, view_id, stream_version, type, identifier, actor, occurred_at, "
                    "payload) SELECT commit_id, 'other', 1, type, identifier, actor, occurred_at, payload FROM events "
                    "WHERE position = 1")
    raw.close()
    with pytest.raises(CorruptLogError, match="two live views named sales.daily"):
        store.rebuild()


def test_expected_version_of_a_view_that_does_not_exist(store):
    """A missing view is at stream version 0: create and drop honour expected_version like every write."""
    with pytest.raises(ConcurrencyError, match="does not exist"):
        make(store, expected_version=3)
    with pytest.raises(ConcurrencyError, match="does not exist"):  # below 0 is no version either
        make(store, expected_version=-1)
    assert make(store, expected_version=0).stream_version == 1
    assert store.drop_view("sales.daily", expected_version=1) is True
    assert store.drop_view("sales.daily") is False
    with pytest.raises(ConcurrencyError, match="does not exist"):
        store.drop_view("sales.daily", expected_version=2)
    assert store.drop_view("sales.daily", expected_version=0) is False
    assert store.event_count() == 2


def test_an_empty_actor_is_refused_not_replaced(tmp_path):
    with pytest.raises(ValidationError, match="bad actor"):
        ViewStore(tmp_path / "s.db", actor="")
    with ViewStore(tmp_path / "s.db", actor=None) as store:
        assert store.actor  # None: the operating-system user


def test_a_database_of_another_program_is_refused(tmp_path):
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as raw:
        raw.execute("CREATE TABLE events (id INTEGER PRIMARY KEY, what TEXT)")
    raw.close()
    with pytest.raises(ViewStoreError, match=r"not a viewstore database: it holds other tables or views "
                                             r"\(events\)"):
        ViewStore(path)


@pytest.mark.parametrize("setup, held", [
    ("CREATE TABLE t6 (x); CREATE TABLE t2 (x); CREATE TABLE t5 (x); CREATE TABLE t1 (x); CREATE TABLE t4 (x); "
     "CREATE TABLE t3 (x)", "other tables or views (t1, t2, t3, t4, t5, ...)"),
    ("CREATE TABLE b (x); CREATE INDEX a_by_x ON b (x); CREATE VIEW a AS SELECT 1; CREATE TABLE c (x)",
     "other tables or views (b, c, a, a_by_x)"),
    ("CREATE TABLE t1 (x); CREATE TABLE t2 (x); CREATE TABLE t3 (x); CREATE TABLE t4 (x); CREATE TABLE t5 (x)",
     "other tables or views (t1, t2, t3, t4, t5)"),
    ("PRAGMA application_id = 7", "another program's user_version or application_id"),
], ids=["six tables", "tables first", "five tables", "an application id"])
def test_the_refusal_of_another_programs_database_names_what_it_holds(tmp_path, setup, held):
    """Its tables first, then its other objects (views, indexes), each group by name, five at most;
    or the mark it bears in its header when it holds nothing yet."""
    path = tmp_path / "other.db"
    raw = sqlite3.connect(path)
    raw.executescript(setup)
    raw.close()
    with pytest.raises(ViewStoreError, match=re.escape(f"other.db is not a viewstore database: it holds {held}; ")):
        ViewStore(path)


def test_another_programs_database_is_left_as_it_was(tmp_path):
    """An application's file passed by mistake gets no viewstore tables and keeps its journal mode."""
    path = tmp_path / "app.db"
    raw = sqlite3.connect(path)
    with raw:
        raw.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
    raw.close()
    before = path.read_bytes()
    with pytest.raises(ViewStoreError, match=r"app.db is not a viewstore database: it holds other tables or views "
                                             r"\(customers\)"):
        ViewStore(path)
    assert path.read_bytes() == before
    raw = sqlite3.connect(path)
    assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    assert [r[0] for r in raw.execute("SELECT name FROM sqlite_master WHERE type = 'table'")] == ["customers"]
    raw.close()
    for ddl in ("CREATE TABLE meta (key TEXT, value TEXT)", "CREATE TABLE meta (id INTEGER)"):  # a meta of its own
        other = tmp_path / f"other{len(ddl)}.db"
        raw = sqlite3.connect(other)
        with raw:
            raw.execute(ddl)
            raw.execute("CREATE TABLE users (id INTEGER PRIMARY KEY)")
        raw.close()
        before = other.read_bytes()
        with pytest.raises(ViewStoreError,
                           match=r"not a viewstore database: it holds other tables or views \(meta, users\)"):
            ViewStore(other)
        assert other.read_bytes() == before
    for name, setup in (("view-only.db", "CREATE VIEW v AS SELECT 1"), ("marked.db", "PRAGMA user_version = 7"),
                        ("named.db", "CREATE TABLE sqlitebrowser_settings (k)")):  # sqlite_% is SQLite's only
        other = tmp_path / name
        raw = sqlite3.connect(other)
        raw.execute(setup)
        raw.close()
        before = other.read_bytes()
        with pytest.raises(ViewStoreError, match="is not a viewstore database: it holds"):
            ViewStore(other)
        assert other.read_bytes() == before
    ViewStore(tmp_path / "new.db").close()  # a file that is not there yet becomes a store
    ViewStore(tmp_path / "new.db").close()  # and opens again


def test_a_store_in_a_folder_that_cannot_be_written_says_why_it_cannot_open(tmp_path):
    folder = tmp_path / "locked"
    folder.mkdir()
    ViewStore(folder / "s.db").close()  # closing the last connection removes -wal and -shm
    folder.chmod(0o555)
    immutable = os.access(folder, os.W_OK)  # root writes anyway: make the folder immutable instead
    if immutable:
        subprocess.run(["chattr", "+i", str(folder)], check=True)
    try:
        assert not os.access(folder, os.W_OK)
        with pytest.raises(ViewStoreError, match="-wal and -shm files beside it, and that folder is not writable"):
            ViewStore(folder / "s.db")
        with pytest.raises(ViewStoreError, match="unable to open database file; the file would be made in a "
                                                 "folder that is not writable$"):
            ViewStore(folder / "new.db")
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(folder)], check=True)
        folder.chmod(0o755)
    assert sorted(p.name for p in folder.iterdir()) == ["s.db"]


def test_a_store_path_that_is_a_folder_or_in_no_folder_says_so(tmp_path):
    """SQLite says only "unable to open database file" for either."""
    with pytest.raises(ViewStoreError, match=r"unable to open database file; it is a folder \(name the database "
                                             r"file in it\)$"):
        ViewStore(tmp_path)
    missing = tmp_path / "no" / "such"
    with pytest.raises(ViewStoreError,
                       match=f"unable to open database file; there is no folder {re.escape(str(missing))}$"):
        ViewStore(missing / "s.db")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("lone", ["\ud800", "\udcff"])  # the second is what Python makes of a byte 0xff in a name
def test_a_path_that_is_not_utf8_is_a_validation_error(store, tmp_path, lone):
    bad = str(tmp_path / f"lone{lone}")
    make(store)
    count = store.event_count()
    for call, what, path in ((lambda: ViewStore(bad + ".db"), "a store path", bad + ".db"),
                             (lambda: store.export_iceberg("sales.daily", bad), "a location", bad),
                             (lambda: store.import_iceberg(bad + ".json", "sales.other"), "a metadata path",
                              bad + ".json")):
        with pytest.raises(ValidationError) as raised:
            call()
        assert str(raised.value).startswith(f"{what} must be a path in UTF-8, not {path!r} ('utf-8' codec can't ")
    assert store.event_count() == count and sorted(p.name for p in tmp_path.iterdir()) == ["views.db", "views.db-shm",
                                                                                           "views.db-wal"]
    if lone == "\ud800":
        with pytest.raises(ValidationError, match=f"^metadata_location: {re.escape(repr(bad))} cannot be a URI "):
            store.export_hms("sales.daily", "iceberg", metadata_location=bad)
    else:  # the byte 0xff of a file name, which a file: URI spells %FF
        uri = store.export_hms("sales.daily", "iceberg", metadata_location=bad)["parameters"]["metadata_location"]
        assert uri.endswith("/lone%FF")


def test_a_pathlike_is_checked_by_the_path_it_gives(tmp_path):
    class Like:
        def __init__(self, path):
            self.path = path

        def __fspath__(self):
            return self.path

    with ViewStore(Like(str(tmp_path / "ok.db"))) as store:
        assert store.path == tmp_path / "ok.db"
    for bad, message in ((str(tmp_path / "a\udcff.db"), "a store path must be a path in UTF-8, not "),
                         (str(tmp_path / "a.db").encode(),
                          r"a store path must be a path \(text or os.PathLike\), not <"),
                         (42, r"a store path must be a path \(text or os.PathLike\), not <")):
        with pytest.raises(ValidationError, match=f"^{message}"):
            ViewStore(Like(bad))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ok.db"]


@pytest.mark.parametrize("version_id, schema_id", [(2**31 - 1, 0), (1, 2**31 - 1)])
def test_a_new_version_past_the_highest_32_bit_id_is_refused(tmp_path, version_id, schema_id):
    """An imported view may hold the highest id Iceberg allows: a change that needs the next one is
    refused with a ValidationError (it failed with pydantic's own error building the event)."""
    from viewstore.model import Column, SQLRepresentation, VersionLogEntry, ViewVersion

    columns = [Column("id", "bigint")]
    version = ViewVersion(version_id=version_id, timestamp_ms=1000, schema_id=schema_id, columns=columns,
                          representations=[SQLRepresentation("spark", "SELECT 1")], default_namespace=("a",))
    with ViewStore(tmp_path / "s.db", actor="me") as store:
        store.import_view("a.v", source="test", versions=[version], current_version_id=version_id,
                          version_log=[VersionLogEntry(timestamp_ms=1000, version_id=version_id)])
        events = store.event_count()
        with pytest.raises(ValidationError, match="32-bit"):
            store.replace_view("a.v", columns=[*columns, Column("x", "int")], representations=[("spark", "SELECT 2")],
                               default_namespace="a")
        assert store.event_count() == events
        if version_id == 1:  # a change that keeps the columns keeps their schema id: it needs no new one
            changed = store.alter_view("a.v", ViewChange.update_representation("spark", "SELECT 3"))
            assert (changed.current_version_id, changed.current_version.schema_id) == (2, schema_id)


# -- found by a planted-bug sweep of the write API ------------------------------------------------------

def test_a_batch_rename_to_a_bare_name_is_normalised_as_every_name_is(store):
    make(store)
    view = store.alter_view("sales.daily", ViewChange.rename("Weekly"))
    assert view.identifier == ("sales", "weekly") and store.load_view("SALES.WEEKLY").uuid == view.uuid
    assert store.history("sales.weekly")[-1].identifier == ("sales", "weekly")
    with pytest.raises(ValidationError, match="backquotes"):
        ViewChange.rename("we`ekly")


def test_representations_as_a_tuple_of_representations_are_that_many(store):
    trino = SQLRepresentation("trino", "SELECT 1")
    assert make(store, representations=(SPARK, trino)).dialects == ("spark", "trino")
    pairs = (("spark", "SELECT 1"), ("trino", "SELECT 2"))  # a tuple of pairs, not one (dialect, sql)
    assert make(store, "sales.other", representations=pairs).dialects == ("spark", "trino")
    assert make(store, "sales.one", representations=("spark", "SELECT 1")).dialects == ("spark",)


def test_the_drop_dialect_rule_reads_the_properties_the_replace_leaves_and_dialects_case_aside(store):
    make(store, representations=[SPARK, ("trino", "SELECT 1")], properties={DROP_DIALECT_ALLOWED: "false"})
    # the same dialects in another case drop none (Iceberg compares them case-insensitively)
    view = store.replace_view("sales.daily", columns=COLS,
                              representations=[("SPARK", "SELECT 2"), ("Trino", "SELECT 2")], default_namespace="sales")
    assert view.dialects == ("SPARK", "Trino") and view.current_version_id == 2
    # and so in lower case again over the current version's capitals
    view = store.replace_view("sales.daily", columns=COLS, default_namespace="sales",
                              representations=[("spark", "SELECT 3"), ("trino", "SELECT 3")])
    assert view.dialects == ("spark", "trino") and view.current_version_id == 3
    # a given value wins over the view's own: the replace leaves "TRUE", so the dialect may go
    view = store.replace_view("sales.daily", columns=COLS, representations=[SPARK], default_namespace="sales",
                              properties={DROP_DIALECT_ALLOWED: "TRUE"})
    assert view.dialects == ("spark",) and view.properties[DROP_DIALECT_ALLOWED] == "TRUE"


def test_the_drop_dialect_rule_of_a_replace_of_the_whole_map_reads_the_given_properties_alone(store):
    """With replace_properties the view's own properties are gone after the replace, so its own
    permission to drop a dialect does not carry a replace that leaves it out."""
    make(store, representations=[SPARK, ("trino", "SELECT 1")], properties={DROP_DIALECT_ALLOWED: "true"})
    count = store.event_count()
    with pytest.raises(ValidationError, match="loss of view dialects"):
        store.replace_view("sales.daily", columns=COLS, representations=[SPARK], default_namespace="sales",
                           properties={"a": "1"}, replace_properties=True)
    assert store.event_count() == count
    view = store.replace_view("sales.daily", columns=COLS, representations=[SPARK], default_namespace="sales",
                              properties={DROP_DIALECT_ALLOWED: "true"}, replace_properties=True)
    assert view.dialects == ("spark",) and view.properties == {DROP_DIALECT_ALLOWED: "true"}


def test_a_replace_writes_only_what_changes(store):
    """The same comment, the same property values and the same security mode given again are no
    events: a replace with the view as it is writes nothing."""
    make(store, comment="c", properties={"a": "1", "b": "2"}, security_mode="INVOKER")
    same = dict(columns=COLS, representations=[SPARK], default_namespace="sales")
    view = store.replace_view("sales.daily", **same, comment="c", properties={"a": "1"}, security_mode="invoker")
    assert view.stream_version == 1 and store.event_count() == 1
    view = store.replace_view("sales.daily", **same, comment="c", properties={"a": "1", "b": "3"})
    assert [e.type for e in store.history("sales.daily")[1:]] == ["view.properties_set"]
    assert store.history("sales.daily")[-1].updates == {"b": "3"}
    # a new comment is its own event, not a property the properties_set carries too
    store.replace_view("sales.daily", **same, comment="d", properties={"b": "4"})
    assert [e.type for e in store.history("sales.daily")[2:]] == ["view.comment_updated", "view.properties_set"]
    assert store.history("sales.daily")[-1].updates == {"b": "4"}


def test_a_replace_of_the_whole_map_keeps_a_comment_it_is_given_and_removes_in_name_order(store):
    make(store, comment="c", properties={"z": "1", "a": "2", "m": "3"})
    same = dict(columns=COLS, representations=[SPARK], default_namespace="sales")
    view = store.replace_view("sales.daily", **same, comment="c", properties={"k": "v"}, replace_properties=True)
    assert view.properties == {"comment": "c", "k": "v"}
    removed = store.history("sales.daily")[-1]
    assert removed.type == "view.properties_removed" and removed.removals == ("a", "m", "z")
    assert [e.type for e in store.history("sales.daily")[1:]] == ["view.properties_set", "view.properties_removed"]


def test_a_replace_of_the_whole_map_without_a_comment_removes_it_as_a_comment_change_alone(store):
    make(store, comment="c", properties={"a": "2"})
    view = store.replace_view("sales.daily", columns=COLS, representations=[SPARK], default_namespace="sales",
                              properties={"a": "2"}, replace_properties=True)
    assert view.comment is None and view.properties == {"a": "2"}
    assert [e.type for e in store.history("sales.daily")[1:]] == ["view.comment_updated"]
    assert store.history("sales.daily")[-1].comment is None


def test_an_update_or_removal_names_a_dialect_as_the_view_spells_it(store):
    make(store, representations=[SPARK, ("Trino", "SELECT 1")])
    view = store.alter_view("sales.daily", ViewChange.update_representation("TRINO", "SELECT 2"))
    assert view.dialects == ("spark", "Trino") and view.sql_for("trino") == "SELECT 2"
    assert store.history("sales.daily")[-1].dialect == "Trino"
    # a removal names the dialect as the view spells it, too
    view = store.alter_view("sales.daily", ViewChange.remove_representation("TRINO"))
    assert view.dialects == ("spark",) and store.history("sales.daily")[-1].dialect == "Trino"


def test_a_bare_name_in_a_batch_renames_within_the_namespace_an_earlier_rename_moved_it_to(store):
    make(store)
    view = store.alter_view("sales.daily", ViewChange.rename("archive.old"), ViewChange.rename("older"))
    assert view.identifier == ("archive", "older")
    assert store.list_views() == [("archive", "older")]
    assert [e.identifier for e in store.history("archive.older")[1:]] == [("archive", "old"), ("archive", "older")]


def test_each_property_change_of_a_batch_applies_to_what_the_ones_before_it_left(store):
    make(store, properties={"a": "1"})
    view = store.alter_view("sales.daily", ViewChange.remove_property("a"), ViewChange.set_property("a", "1"))
    assert view.properties == {"a": "1"}
    assert [e.type for e in store.history("sales.daily")[1:]] == ["view.properties_removed", "view.properties_set"]
    view = store.alter_view("sales.daily", ViewChange.set_property("b", "2"), ViewChange.remove_property("b"))
    assert view.properties == {"a": "1"}
    assert [e.type for e in store.history("sales.daily")[3:]] == ["view.properties_set", "view.properties_removed"]


def test_a_comment_removed_in_a_batch_is_gone_for_the_changes_after_it(store):
    make(store, comment="c")
    view = store.alter_view("sales.daily", ViewChange.update_comment(None), ViewChange.remove_property("comment"))
    assert view.comment is None and "comment" not in view.properties
    assert [e.type for e in store.history("sales.daily")[1:]] == ["view.comment_updated"]


def test_a_representation_change_keeps_the_rest_of_the_current_version(store):
    columns = [Column("id", "bigint", "the key", nullable=False), Column("n", "int")]
    make(store, columns=columns, default_catalog="lake", default_namespace="a.b", summary={"engine-name": "spark"})
    view = store.alter_view("sales.daily", ViewChange.add_representation(("trino", "SELECT 1")))
    assert view.current_version_id == 2
    assert view.columns == tuple(columns) and view.columns[0].nullable is False
    assert (view.default_catalog, view.default_namespace, view.summary) == ("lake",
                                                                            ("a", "b"), {"engine-name": "spark"})
    assert view.current_version.schema_id == view.version(1).schema_id == 0


def test_columns_in_each_form_the_api_takes(store):
    view = make(store, columns=[("id", "bigint", "the key", False), ["day", "date"], ("n", "int", None),
                                {"name": "amount", "type": "decimal(18,2)", "nullable": False}, Column("x", "string")])
    assert [(c.name, str(c.type), c.comment, c.nullable) for c in view.columns] == [
        ("id", "long", "the key", False), ("day", "date", None, True), ("n", "int", None, True),
        ("amount", "decimal(18,2)", None, False), ("x", "string", None, True)]
    with pytest.raises(ValidationError, match="a column must be"):
        make(store, "sales.other", columns=[("id", "bigint", "the key", False, "extra")])


def _events_of(store, count):
    store.create_view("s.v", columns=[], representations=[("spark", "SELECT 1 AS x")], default_namespace="s")
    store.alter_view("s.v", *[ViewChange.set_property(f"k{i % 50}", str(i)) for i in range(count - 1)])


def test_a_stream_of_events_reads_one_state_of_the_log_while_another_store_commits(tmp_path):
    """stream_events and stream_history read the log a batch at a time inside one read: another
    store commits meanwhile (not blocked), and every pass and count() of the stream give the events
    of the state it began in."""
    db = tmp_path / "s.db"
    with ViewStore(db, actor="a") as store, ViewStore(db, actor="b") as other:
        _events_of(store, 2500)
        for opened in (lambda: store.stream_events(batch=1000), lambda: store.stream_history("s.v", batch=1000)):
            before = store.event_count()  # 2500, then 2501 (a commit of the first pass)
            with opened() as events:
                assert events.count() == before
                read = iter(events)
                first = next(read)
                other.alter_view("s.v", ViewChange.update_comment(f"meanwhile {before}"))
                positions = [first.position, *(e.position for e in read)]
                assert positions == list(range(1, before + 1)) and events.count() == before
                assert [e.position for e in events] == positions
                assert [len(batch) for batch in events.batches()] == [1000, 1000, before - 2000]
            assert store.event_count() == before + 1
        with store.stream_events(actor="b", limit=1, newest_first=True) as events:
            assert [e.position for e in events] == [2502] and events.count() == 1
        with store.stream_events(types="view.dropped") as events:
            assert list(events) == [] and events.count() == 0


def test_a_stream_counts_the_events_it_gives_whatever_the_filters(tmp_path):
    """count() is a query of its own (the count above audit's table): as many events as the stream
    gives, with any filter, limit and order."""
    with ViewStore(tmp_path / "s.db", actor="a") as store:
        _events_of(store, 300)
        with ViewStore(tmp_path / "s.db", actor="b") as other:
            other.alter_view("s.v", *[ViewChange.update_comment(str(i)) for i in range(40)])
        store.drop_view("s.v")
        times = [e.occurred_at for e in store.events()]
        filters = [{}, {"limit": 7}, {"limit": 7, "newest_first": True}, {"limit": 10_000}, {"actor": "b"},
                   {"actor": "b", "limit": 5, "newest_first": True}, {"since": times[0], "limit": 3},
                   {"until": times[-1], "types": "view.dropped"}, {"types": "view.properties_set", "limit": 9},
                   {"types": ["view.created", "view.dropped"]}, {"view": "s.v", "limit": 4},
                   {"since_position": 290, "until_position": 310}, {"since_position": 300, "until_position": 300},
                   {"since_position": 250, "limit": 20, "newest_first": True}, {"types": "view.renamed"}]
        counts = []
        for given in filters:
            with store.stream_events(**given) as events:
                counts.append(events.count())
                assert counts[-1] == len(list(events)), given
        assert counts == [341, 7, 7, 341, 40, 5, 3, 1, 9, 2, 4, 21, 1, 20, 0]


def test_the_count_of_an_unfiltered_stream_reads_an_index_not_every_event(tmp_path):
    """An unfiltered audit of a million events counted them by reading every row once more (0.6 s)
    before its first line; the count reads the smallest index (20 ms)."""
    with ViewStore(tmp_path / "s.db") as store:
        _events_of(store, 30)
        for given in ({}, {"limit": 10}, {"limit": 10, "newest_first": True}):
            ran = []
            store._log.conn.set_trace_callback(ran.append)
            try:
                with store.stream_events(**given) as events:
                    assert events.count() == (10 if given else 30)
            finally:
                store._log.conn.set_trace_callback(None)
            [counted] = [sql for sql in ran if sql.startswith("SELECT count(*)")]
            plan = [row[3] for row in store._log.conn.execute("EXPLAIN QUERY PLAN " + counted)]
            assert [step for step in plan if step.startswith("SCAN events")] == [
                "SCAN events USING COVERING INDEX events_by_actor"], (given, plan)


@pytest.mark.parametrize("batch", [0, -1, 1.5, True])
def test_a_stream_takes_a_positive_batch_of_events(tmp_path, batch):
    with ViewStore(tmp_path / "s.db") as store:
        for opened in (lambda: store.stream_events(batch=batch), lambda: store.stream_history("s.v", batch=batch)):
            with pytest.raises(ValidationError, match=rf"^batch must be a positive number of events, not {batch!r}$"):
                with opened():
                    pass


def test_a_stream_of_a_view_no_view_ever_had_is_the_error_events_and_history_give(tmp_path):
    with ViewStore(tmp_path / "s.db") as store:
        for opened in (lambda: store.stream_events(view="s.nope"), lambda: store.stream_history("s.nope")):
            with pytest.raises(NoSuchViewError, match=r"^no view was ever named s\.nope$"):
                with opened():
                    pass


def test_a_streamed_query_gives_its_rows_and_columns_as_it_reads_them(tmp_path):
    with ViewStore(tmp_path / "s.db") as store:
        _events_of(store, 1500)
        with store.stream_query("SELECT position, type FROM events WHERE position > ? ORDER BY position",
                                (10,)) as rows:
            assert rows.columns == ("position", "type")
            assert [r["position"] for r in rows] == list(range(11, 1501))
        with store.stream_query("SELECT position AS p, 1 AS p FROM events WHERE 0") as rows:
            assert list(rows) == [] and rows.columns == store.query(
                "SELECT position AS p, 1 AS p FROM events WHERE 0").columns
        sql = "SELECT json_extract(CASE WHEN position > 1200 THEN 'nope' ELSE '{}' END, '$.a') FROM events"
        with store.stream_query(sql) as rows:
            read = iter(rows)
            assert next(read) == {"json_extract(CASE WHEN position > 1200 THEN 'nope' ELSE '{}' END, '$.a')": None}
            with pytest.raises(ValidationError, match=r"^query failed: malformed JSON$"):
                list(read)
        with pytest.raises(ValidationError, match=r"^a query must be SQL text, not 1$"):
            with store.stream_query(1):
                pass


def test_a_streamed_history_takes_a_range_of_log_positions_as_history_does(store):
    """stream_history's since_position and until_position keep the events history() keeps for them,
    in every pass, batch and count() of the stream; a bound that is no 64-bit int is the
    ValidationError history() gives."""
    _two_views_then_a_drop(store)
    bounds = [None, -5, 0, 1, 2, 3, 8, 9, 10, 2**63 - 1]
    for low in bounds:
        for high in bounds:
            kept = store.history("sales.daily", since_position=low, until_position=high)
            with store.stream_history("sales.daily", since_position=low, until_position=high, batch=2) as events:
                assert events.count() == len(kept), (low, high)
                assert list(events) == kept, (low, high)
                assert [len(b) for b in events.batches()] == [2] * (len(kept) // 2) + [1] * (len(kept) % 2)
    with store.stream_history("sales.daily", since_position=5, until_position=3) as events:
        assert events.count() == 0 and list(events) == []
    for bad in (True, 1.0, "3", 2**63, -(2**63) - 1):
        for option in ("since_position", "until_position"):
            with pytest.raises(ValidationError, match=rf"^{option} must be a log position \(a 64-bit int\), "
                                                      rf"not {re.escape(repr(bad))}$"):
                with store.stream_history("sales.daily", **{option: bad}):
                    pass


def test_a_write_inside_the_block_of_a_stream_of_events_is_refused_saying_so_and_writes_nothing(tmp_path):
    """The block holds one read of the log open on the store's connection, which a write cannot
    begin on: it was refused as "cannot start a transaction within a transaction" (a transaction()
    as "inside another call of this store (a signal receiver?)"); it is refused saying what to do
    instead, nothing written, and the write goes through once the block ends."""
    inside = (r"^a write cannot run inside the with block of a stream of events \(stream_events, stream_history\), "
              r"which reads one state of the log: write after the block, or list\(\) the events in it first$")
    with ViewStore(tmp_path / "s.db") as store:
        _events_of(store, 3)
        for opened in (lambda: store.stream_events(batch=2), lambda: store.stream_history("s.v", batch=2)):
            with opened() as events:
                for _ in events:
                    with pytest.raises(ViewStoreError, match=inside):
                        store.alter_view("s.v", ViewChange.update_comment("inside"))
                    with pytest.raises(ViewStoreError, match=inside), store.transaction():
                        pass
                assert events.count() == 3 and store.load_view("s.v").comment is None
            assert store.event_count() == 3
        assert store.alter_view("s.v", ViewChange.update_comment("after")).comment == "after"


def test_a_closed_store_says_to_open_a_new_one_on_its_file(tmp_path):
    with ViewStore(tmp_path / "s.db") as store:
        make(store)
    for call in (lambda: store.load_view("sales.daily"), store.events, lambda: store.query("SELECT 1 AS x"),
                 lambda: make(store, "sales.other")):
        with pytest.raises(ViewStoreError) as raised:
            call()
        assert str(raised.value) == f"the store is closed (open a new ViewStore on {tmp_path.resolve() / 's.db'})"
    with ViewStore(tmp_path / "s.db") as again:  # as the message says
        assert again.list_views() == [("sales", "daily")]


def test_a_closed_store_refuses_every_read_of_the_log_and_every_query(tmp_path):
    """The streams and the ad-hoc queries (which read the file on a connection of their own) are
    refused once the store is closed, as events() and history() are."""
    with ViewStore(tmp_path / "s.db") as store:
        make(store)
    for opened in (lambda: store.stream_events(), lambda: store.stream_history("sales.daily"),
                   lambda: store.stream_query("SELECT 1 AS x")):
        with pytest.raises(ViewStoreError, match=r"^the store is closed \(open a new ViewStore on "):
            with opened():
                pass
    for call in (store.events, lambda: store.history("sales.daily"), lambda: store.query("SELECT 1 AS x")):
        with pytest.raises(ViewStoreError, match=r"^the store is closed \(open a new ViewStore on "):
            call()


def test_a_stream_read_after_its_block_has_ended_is_refused(tmp_path):
    """A stream reads one state of the file inside its block; read after it (the read over, and
    with it the store's hold of its connection, or the query's connection closed) it would read
    another state unguarded, or fail as SQLite's own error: it is refused, whatever was read."""
    ended = (r"^a stream is read inside its with block, which has ended "
             r"\(read it there, or list\(\) it there to keep it\)$")
    with ViewStore(tmp_path / "s.db") as store:
        _events_of(store, 30)
        for opened in (lambda: store.stream_events(batch=10), lambda: store.stream_history("s.v", batch=10),
                       lambda: store.stream_events(actor="nobody")):
            with opened() as events:
                pass
            with pytest.raises(ViewStoreError, match=ended):
                next(iter(events))
            with pytest.raises(ViewStoreError, match=ended):
                events.batches()
            with pytest.raises(ViewStoreError, match=ended):
                events.count()
        with store.stream_events(batch=10) as events:  # read whole inside: its count is known after
            assert len(list(events)) == 30
        assert events.count() == 30
        with pytest.raises(ViewStoreError, match=ended):
            list(events)
        with store.stream_query("SELECT position FROM events") as rows:
            pass
        with pytest.raises(ViewStoreError, match=ended):
            list(rows)
        assert rows.columns == ("position",)


def test_a_pass_begun_in_a_streams_block_and_read_on_after_it_is_refused_not_cut_short(tmp_path):
    """A pass (an iterator of events or of batches, or of a query's rows) begun inside the block and
    read on after it: an iterator of events gave the rest of the batch it held and then ended, as if
    the log had (9 events of 30), batches ended at once, and a query's rows failed as a ValidationError
    of SQLite's closed-database error. Each raises the ViewStoreError of a stream read after its block."""
    ended = (r"^a stream is read inside its with block, which has ended "
             r"\(read it there, or list\(\) it there to keep it\)$")
    with ViewStore(tmp_path / "s.db") as store:
        _events_of(store, 30)
        for opened in (lambda: store.stream_events(batch=10), lambda: store.stream_history("s.v", batch=10)):
            with opened() as events:
                read = iter(events)
                assert next(read).position == 1
                batches = events.batches()
                assert len(next(batches)) == 10
            assert [next(read).position for _ in range(9)] == list(range(2, 11))  # read in the block
            with pytest.raises(ViewStoreError, match=ended):
                next(read)
            with pytest.raises(ViewStoreError, match=ended):
                next(batches)
        with store.stream_query("SELECT position FROM events") as rows:
            read = iter(rows)
            assert next(read) == {"position": 1}
        with pytest.raises(ViewStoreError, match=ended):
            next(read)


def test_a_second_pass_of_a_streamed_query_is_refused_whatever_the_first_read(tmp_path):
    """A query's rows are read once: a second pass after a first that read some rows gave the rest of
    them, and one after a whole pass (or a pass of an answer without rows) gave nothing, as if the
    answer had none. Each raises, saying to list() the rows; the first pass reads on unharmed."""
    once = (r"^a query's rows are read once, and this stream's have been \(list\(\) it on its first pass "
            r"to go over them again\)$")
    with ViewStore(tmp_path / "s.db") as store:
        _events_of(store, 30)
        with store.stream_query("SELECT position FROM events ORDER BY position") as rows:
            first = iter(rows)
            assert [next(first)["position"] for _ in range(3)] == [1, 2, 3]
            with pytest.raises(ViewStoreError, match=once):
                iter(rows)
            assert [r["position"] for r in first] == list(range(4, 31))
            with pytest.raises(ViewStoreError, match=once):
                list(rows)
        with store.stream_query("SELECT position FROM events WHERE 0") as rows:
            assert list(rows) == []
            with pytest.raises(ViewStoreError, match=once):
                list(rows)
            assert rows.columns == ("position",)


def test_every_pass_of_a_stream_of_events_reads_all_its_events_whatever_the_pass_before(tmp_path):
    """A stream of events reads the log again for each pass, in its block's one read: after a pass
    cut short, after a whole one, and after one a damaged row ended, the next gives every event (up
    to the damaged one, which it raises again)."""
    with ViewStore(tmp_path / "s.db") as store:
        _events_of(store, 30)
        for opened in (lambda: store.stream_events(batch=7), lambda: store.stream_history("s.v", batch=7)):
            with opened() as events:
                cut = iter(events)
                assert [next(cut).position for _ in range(10)] == list(range(1, 11))
                assert [e.position for e in events] == list(range(1, 31))
                assert [e.position for e in events] == list(range(1, 31)) and events.count() == 30
                assert [e.position for e in cut] == list(range(11, 31))  # the pass cut short reads on
    from test_cli import _log_with_a_damaged_event_last

    _log_with_a_damaged_event_last(tmp_path / "damaged.db", 11)
    with ViewStore(tmp_path / "damaged.db") as store, store.stream_events(batch=7) as events:
        for _ in range(2):
            read = []
            with pytest.raises(CorruptLogError, match="^event at position 12 has a payload that is not JSON$"):
                read.extend(e.position for e in events)
            assert read == list(range(1, 12))


def test_a_batch_read_up_to_a_damaged_row_gives_the_events_before_it_then_raises(tmp_path):
    """A damaged row in the middle of a batch lost the good events read with it (the rows of its
    batch before it): they are a batch of their own, and the error comes on the next read; a batch
    whose first row is the damaged one raises at once."""
    from test_cli import _log_with_a_damaged_event_last

    _log_with_a_damaged_event_last(tmp_path / "s.db", 24)
    with ViewStore(tmp_path / "s.db") as store:
        for opened, sizes in ((lambda: store.stream_events(batch=10), [10, 10, 4]),
                              (lambda: store.stream_history("s.v", batch=10), [10, 10, 4]),
                              (lambda: store.stream_events(since_position=21, batch=4), [4])):
            with opened() as events:
                read = []
                with pytest.raises(CorruptLogError, match="^event at position 25 has a payload that is not JSON$"):
                    read.extend(len(batch) for batch in events.batches())
                assert read == sizes


def test_a_query_stream_first_iterated_after_its_block_gives_no_row(tmp_path):
    """A query's stream iterated for the first time after its block has ended is refused at once,
    before any row: it gave the first row (read ahead when the stream was made) and then raised,
    a row of a state the caller no longer holds a read of."""
    ended = (r"^a stream is read inside its with block, which has ended "
             r"\(read it there, or list\(\) it there to keep it\)$")
    with ViewStore(tmp_path / "s.db") as store:
        _events_of(store, 5)
        with store.stream_query("SELECT position FROM events ORDER BY position") as rows:
            pass
        got = []
        with pytest.raises(ViewStoreError, match=ended):
            got.extend(rows)
        assert got == []


def test_a_batch_read_up_to_a_damaged_row_in_its_middle_gives_only_the_events_before_it(tmp_path):
    """Good rows after a damaged one in the same batch are not given with the events before it: the
    batch before the error ends at the damaged row (an event past it would be given, then the error
    raised for an event before it)."""
    from test_cli import _log_with_a_damaged_event_last

    _log_with_a_damaged_event_last(tmp_path / "s.db", 24)
    with sqlite3.connect(tmp_path / "s.db") as raw:  # a good event after the damaged one (position 26)
        raw.execute("INSERT INTO events (commit_id, view_id, stream_version, type, identifier, actor, occurred_at, "
                    "payload) SELECT 'l', view_id, 26, type, identifier, actor, occurred_at, payload FROM events "
                    "WHERE position = 2")
    raw.close()
    with ViewStore(tmp_path / "s.db") as store, store.stream_events(batch=10) as events:
        read = []
        with pytest.raises(CorruptLogError, match="^event at position 25 has a payload that is not JSON$"):
            read.extend([e.position for e in batch] for batch in events.batches())
        assert read == [list(range(1, 11)), list(range(11, 21)), [21, 22, 23, 24]]


@contextlib.contextmanager
def _interrupt_in_a_column_type_str(*callers):
    """A block in which this process gets SIGINT (a real Ctrl-C) the first time pydantic-core has
    a column type's text made (``__str__``) for a dump called from ``callers`` (the names of the
    functions up the stack, nearest first), through a profile hook removed then and at the block's end. Python's own
    SIGINT handler is in for the block (a SparkContext started earlier in this process puts in one
    of its own)."""
    import sys

    import viewstore.model
    import viewstore.types

    def hook(frame, event, arg):
        if (event == "call" and frame.f_code.co_name == "__str__"
                and frame.f_code.co_filename == viewstore.types.__file__):
            if frame.f_back.f_code is not viewstore.model._type_text.__code__:  # not a column type's dump
                return
            caller = frame.f_back.f_back  # the Python function that called pydantic-core
            for name in callers:
                if caller is None or caller.f_code.co_name != name:
                    return
                caller = caller.f_back
            sys.setprofile(None)
            os.kill(os.getpid(), signal.SIGINT)

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.setprofile(hook)
    try:
        yield
    finally:
        sys.setprofile(None)
        signal.signal(signal.SIGINT, previous)


def test_ctrl_c_while_a_write_dumps_its_event_is_a_keyboard_interrupt_and_writes_nothing(tmp_path):
    """pydantic-core reports what a Python function it calls raised as its own
    PydanticSerializationError, Ctrl-C's KeyboardInterrupt too: a Ctrl-C that came while a write
    dumped a column's type reached the caller as that error (an import of many records ended in a
    traceback and exit code 1). It goes on as itself now, and the write wrote nothing."""
    with ViewStore(tmp_path / "s.db") as store:
        with _interrupt_in_a_column_type_str("payload"), pytest.raises(KeyboardInterrupt):
            store.create_view("s.v", columns=[("x", "int")], representations=[("spark", "SELECT 1 AS x")],
                              default_namespace="s")
        assert store.event_count() == 0 and not store.view_exists("s.v")
        store.create_view("s.v", columns=[("x", "int")], representations=[("spark", "SELECT 1 AS x")],
                          default_namespace="s")
        assert store.event_count() == 1


@pytest.mark.parametrize("dump", ["model_dump", "model_dump_json"])
def test_ctrl_c_while_a_view_dumps_itself_is_a_keyboard_interrupt(tmp_path, dump):
    """A Ctrl-C that came while a View dumped a column's type reached the caller as pydantic's
    PydanticSerializationError, KeyboardInterrupt only its cause. It goes on as itself now."""
    with ViewStore(tmp_path / "s.db") as store:
        store.create_view("s.v", columns=[("x", "decimal(9,2)")], representations=[("spark", "SELECT 1 AS x")],
                          default_namespace="s")
        view = store.load_view("s.v")
        with _interrupt_in_a_column_type_str("_serialize"), pytest.raises(KeyboardInterrupt):
            getattr(view, dump)()
        assert view.model_dump(mode="json")["versions"][0]["columns"] == [
            {"name": "x", "type": "decimal(9,2)", "comment": None, "nullable": True}]


@pytest.mark.parametrize("dump", ["model_dump", "model_dump_json"])
def test_an_interrupted_dump_holds_nothing_once_its_interrupt_has_gone_on(tmp_path, dump):
    """The interrupt a dump raised as itself was kept for its thread till the thread's next dump, and
    with it the frames of its traceback and what they held (a later test counting the objects alive
    saw one go in the middle of its own work); it is let go when the outermost dump ends."""
    with ViewStore(tmp_path / "s.db") as store:
        store.create_view("s.v", columns=[("x", "decimal(9,2)")], representations=[("spark", "SELECT 1 AS x")],
                          default_namespace="s")
        view = store.load_view("s.v")
        raised, held = _held_past_an_interrupted_dump(lambda: getattr(view, dump)(), ("_serialize",), KeyboardInterrupt)
        assert raised == "KeyboardInterrupt: " and not held


def _held_past_an_interrupted_dump(dump, callers, expected):
    """Call ``dump()`` from a frame that holds an object, with a SIGINT in a column type's text (see
    :func:`_interrupt_in_a_column_type_str`), catching ``expected``: what was caught (its type and
    text), and whether the object is still alive once the dump has ended and what it raised is gone
    (the frames of a traceback kept somewhere hold it)."""
    class Held:
        pass

    def dumping(held):  # its frame, in the traceback of what the dump raised, holds ``held``
        dump()

    held = Held()
    alive = weakref.ref(held)
    raised = None
    with _interrupt_in_a_column_type_str(*callers):
        try:
            dumping(held)
        except expected as e:
            raised = f"{type(e).__name__}: {e}"
    del held
    gc.collect()
    return raised, alive() is not None


def test_ctrl_c_while_an_import_dumps_a_version_is_a_keyboard_interrupt_and_writes_nothing(tmp_path):
    """An import dumps each version of the file's history to make its events: a Ctrl-C that came
    while it dumped a column's type reached the caller as pydantic's PydanticSerializationError.
    It goes on as itself now, and the import wrote nothing."""
    with ViewStore(tmp_path / "a.db") as source:
        source.create_view("s.v", columns=[("x", "int")], representations=[("spark", "SELECT 1 AS x")],
                           default_namespace="s")
        path = source.export_iceberg("s.v", tmp_path / "v")
    with ViewStore(tmp_path / "b.db") as store:
        with _interrupt_in_a_column_type_str("model_dump", "dumping", "<genexpr>",
                                             "dump"), pytest.raises(KeyboardInterrupt):
            store.import_iceberg(path, "s.w")
        assert store.event_count() == 0 and not store.view_exists("s.w")
        assert store.import_iceberg(path, "s.w").columns == (Column(name="x", type="int"),)



def _diff_of_a_column_type(store):
    """A view whose column changed type, and the diff of its two states (a column each side)."""
    store.create_view("s.v", columns=[("x", "decimal(9,2)")], representations=[("spark", "SELECT 1 AS x")],
                      default_namespace="s")
    before = store.load_view("s.v")
    store.replace_view("s.v", columns=[("x", "decimal(18,2)")], representations=[("spark", "SELECT 1 AS x")],
                       default_namespace="s")
    return before, diff_views(before, store.load_view("s.v"))


@pytest.mark.parametrize("dump", ["model_dump", "model_dump_json"])
@pytest.mark.parametrize("model",
                         ["column", "version", "diff", "diff's pair", "event", "imported file", "hms definition"])
def test_ctrl_c_while_a_model_holding_columns_dumps_itself_is_a_keyboard_interrupt(tmp_path, dump, model):
    """A Ctrl-C that came while a Column, a ViewVersion, a ViewDiff or one of its BeforeAfter pairs
    of columns, an event, an imported file's ImportedView or a metastore's ViewDefinition dumped a
    column's type (pydantic's own model_dump, model_dump_json) reached the caller as pydantic's
    PydanticSerializationError (in JSON mode without even the interrupt as its cause). It goes on
    as itself now, as a View's does, and the next dump is whole."""
    from viewstore.formats.base import ViewDefinition
    from viewstore.iceberg import read_metadata

    with ViewStore(tmp_path / "s.db") as store:
        before, diff = _diff_of_a_column_type(store)
        dumped = {"column": lambda: before.columns[0], "version": lambda: before.current_version,
                  "diff": lambda: diff, "diff's pair": lambda: diff.columns_changed[0],
                  "event": lambda: next(iter(store.events())),
                  "imported file": lambda: read_metadata(store.export_iceberg("s.v", tmp_path / "v")),
                  "hms definition": lambda: ViewDefinition(dialect="trino", sql="SELECT 1 x", database="s", name="v",
                                                           columns=before.columns)}[model]()
        callers = ("_serialize", "dumping", dump, "dumping") if model == "diff" else (dump, "dumping")  # (its own)
        with _interrupt_in_a_column_type_str(*callers), pytest.raises(KeyboardInterrupt):
            getattr(dumped, dump)()
        assert "decimal(9,2)" in dumped.model_dump_json()


@pytest.mark.parametrize("dump", ["model_dump", "model_dump_json"])
def test_ctrl_c_while_a_diff_dump_tells_whether_it_changed_is_a_keyboard_interrupt(tmp_path, dump):
    """A ViewDiff's dump asks its ``changed`` (Python code) too: a Ctrl-C that came on the way into it
    reached the caller of model_dump_json as pydantic's PydanticSerializationError, its text alone.
    It goes on as itself, and nothing is kept for a later dump."""
    import sys

    import viewstore.model
    from viewstore.errors import _raised

    def hook(frame, event, arg):  # a real SIGINT when the dump asks ``changed``
        if (event == "call" and frame.f_code.co_name == "changed"
                and frame.f_code.co_filename == viewstore.model.__file__
                and frame.f_back.f_code.co_name == "_serialize"):
            sys.setprofile(None)
            os.kill(os.getpid(), signal.SIGINT)

    with ViewStore(tmp_path / "s.db") as store:
        _, diff = _diff_of_a_column_type(store)
        previous = signal.signal(signal.SIGINT, signal.default_int_handler)
        sys.setprofile(hook)
        try:
            with pytest.raises(KeyboardInterrupt):
                getattr(diff, dump)()
        finally:
            sys.setprofile(None)
            signal.signal(signal.SIGINT, previous)
        assert _raised.signal is None  # let go by the dump that raised it, not by a later one
        assert diff.model_dump(mode="json")["changed"] is True


@pytest.mark.parametrize("dump", ["dump_python", "dump_json", "a model holding it"])
def test_a_view_dumped_by_pydantic_itself_keeps_no_interrupt_after_the_dump(tmp_path, dump):
    """A View's serializer run by a dump that is not the library's (pydantic's TypeAdapter of View, a
    model of the caller's holding a View) kept the interrupt it raised for its thread till the
    thread's next dump, and with it the frames of its traceback and what they held. That dump raises
    pydantic's PydanticSerializationError, as it does for any model, and nothing is kept after it."""
    import pydantic
    from pydantic_core import PydanticSerializationError

    from viewstore.model import View

    class Holder(pydantic.BaseModel):
        view: View

    adapter = pydantic.TypeAdapter(View)
    run, caller = {"dump_python": (lambda view: adapter.dump_python(view, mode="json"), "dump_python"),
                   "dump_json": (adapter.dump_json, "dump_json"),
                   "a model holding it": (lambda view: Holder(view=view).model_dump_json(), "model_dump_json")}[dump]

    with ViewStore(tmp_path / "s.db") as store:
        store.create_view("s.v", columns=[("x", "decimal(9,2)")], representations=[("spark", "SELECT 1 AS x")],
                          default_namespace="s")
        view = store.load_view("s.v")
        raised, held = _held_past_an_interrupted_dump(lambda: run(view), ("_serialize", "dumping", caller),
                                                      PydanticSerializationError)
        assert raised is not None and "KeyboardInterrupt" in raised and not held
        assert "decimal(9,2)" in adapter.dump_json(view).decode()


@pytest.mark.parametrize("dump", ["model_dump", "model_dump_json", "a view's model_dump_json"])
def test_a_dump_whose_column_type_text_fails_raises_pydantics_error_whatever_was_kept_before(store, monkeypatch,
                                                                                             dump):
    """A column type whose text fails with an error (no signal) fails the dump with pydantic's
    PydanticSerializationError, as any model's does: the error itself is not kept for the dump
    and raised in its place. And a signal some earlier dump left kept for the thread (a serializer
    of the caller's inside a library dump caught it and the dump went on) is not raised by this
    dump's unrelated error: each wrapped dump begins without one."""
    from pydantic_core import PydanticSerializationError

    from viewstore.errors import _raised
    from viewstore.types import DecimalType

    make(store, columns=[("x", "decimal(9,2)")])
    view = store.load_view("sales.daily")
    dumped = view if dump.startswith("a view's") else view.columns[0]
    call = getattr(dumped, dump.removeprefix("a view's "))

    def failing(self):
        raise ValueError("no text for this type")

    monkeypatch.setattr(DecimalType, "__str__", failing)
    for left in (None, KeyboardInterrupt()):
        _raised.signal, raised = left, None
        try:
            call()
        except BaseException as e:  # (a KeyboardInterrupt raised here would end the test run)
            raised = e
        assert type(raised) is PydanticSerializationError and "no text for this type" in str(raised)
        assert _raised.signal is None
    monkeypatch.undo()
    assert "decimal(9,2)" in dumped.model_dump_json()


def _import_as(store, ident, uuid):
    return store.import_view(ident, source="test", view_uuid=uuid, versions=[_version(1, 1000)],
                             version_log=[VersionLogEntry(timestamp_ms=1000, version_id=1)], current_version_id=1)


def test_a_uuid_written_in_another_case_is_the_same_uuid_and_its_import_is_refused(store):
    """A UUID's hex digits may be written in either case (Java's UUID.fromString reads both alike;
    Iceberg's assert-view-uuid compares them so): an import whose view_uuid differed from a stored
    view's only in case was kept as a second view. It is refused now as the same UUID is, and the
    view keeps its UUID as it was written."""
    held = "0aBcDeF1-2345-4abc-8DEF-00000000000a"
    others = ["0abcdef1-2345-4abc-8def-00000000000b", "1ABCDEF1-2345-4ABC-8DEF-00000000000A",
              "0abcdef1-2345-4abc-8def-0000000000a0"]  # a digit apart, a letter moved: other UUIDs
    assert _import_as(store, "a.held", held).uuid == held
    for i, uuid in enumerate(others):
        assert _import_as(store, f"a.other{i}", uuid).uuid == uuid
    count = store.event_count()
    for spelling in (held.lower(), held.upper(), "0AbCdEf1-2345-4ABC-8dEf-00000000000A"):
        with pytest.raises(ViewAlreadyExistsError) as raised:
            _import_as(store, "a.again", spelling)
        assert str(raised.value) == (f"a view with UUID {spelling} is already in the store (written {held}): a.held "
                                     "(a view is recorded once; its history is there)")
    assert store.event_count() == count and not store.view_exists("a.again")
    assert store.load_view("a.held").uuid == held


def test_an_export_writes_over_metadata_of_its_uuid_written_in_another_case(store, tmp_path):
    """The latest metadata file at the location is the view's when its view-uuid is the view's UUID
    in either case (Iceberg's writers write lower case; this view was imported from a file that
    wrote it in upper case): it was refused as another view's. The next file is written now, the
    view's UUID in it as the view keeps it."""
    held = "0ABCDEF1-2345-4ABC-8DEF-00000000000A"
    _import_as(store, "a.v", held)
    first = store.export_iceberg("a.v", tmp_path / "v")
    data = json.loads(first.read_text())
    first.write_text(json.dumps({**data, "view-uuid": held.lower()}, indent=2))
    store.alter_view("a.v", ViewChange.update_comment("again"))
    second = store.export_iceberg("a.v", tmp_path / "v")
    assert second.name.startswith("00001-") and json.loads(second.read_text())["view-uuid"] == held
    other = "0abcdef1-2345-4abc-8def-00000000000b"
    second.write_text(json.dumps({**json.loads(second.read_text()), "view-uuid": other}, indent=2))
    store.alter_view("a.v", ViewChange.update_comment("once more"))
    with pytest.raises(IcebergMetadataError,
                       match=rf"^{re.escape(str(tmp_path / 'v'))} holds metadata of view {other}, "
                             rf"not of a\.v \({held}\); refusing to write over another view$"):
        store.export_iceberg("a.v", tmp_path / "v")


def test_an_import_whose_uuid_differs_from_a_stored_one_after_its_last_letter_is_another_view(store):
    """The search for a stored UUID in another case goes a letter at a time through the keys the
    store has; the digits after the last letter are matched by the key as a whole. A UUID equal to
    a stored one in another case up to its last letter, but another digit after it, is another
    view: it is imported, not refused as the stored one written otherwise."""
    held = "0abcdef1-2345-4abc-8def-0000000000a1"
    _import_as(store, "a.held", held)
    other = "0ABCDEF1-2345-4ABC-8DEF-0000000000A2"
    assert _import_as(store, "a.other", other).uuid == other
    with pytest.raises(ViewAlreadyExistsError, match=r"\(written 0abcdef1-2345-4abc-8def-0000000000a1\): a\.held "):
        _import_as(store, "a.again", held.upper())


def test_an_export_over_metadata_whose_view_uuid_is_not_text_is_refused_as_another_views(store, tmp_path):
    """The latest metadata file at the location names its view by a view-uuid that is no text (a
    number, null): it is no file of this view, refused as another view's, not failed on the
    comparison of the two."""
    _import_as(store, "a.v", "0abcdef1-2345-4abc-8def-00000000000a")
    first = store.export_iceberg("a.v", tmp_path / "v")
    data = json.loads(first.read_text())
    files = sorted(p.name for p in first.parent.iterdir())
    for i, value in enumerate((42, None)):
        first.write_text(json.dumps({**data, "view-uuid": value}, indent=2))
        store.alter_view("a.v", ViewChange.update_comment(f"change {i}"))
        with pytest.raises(IcebergMetadataError, match=rf" holds metadata of view {value}, not of a\.v "):
            store.export_iceberg("a.v", tmp_path / "v")
        assert sorted(p.name for p in first.parent.iterdir()) == files  # nothing written


def test_an_export_of_a_view_whose_projection_is_behind_its_log_is_refused_and_writes_nothing(store, tmp_path):
    """A views row behind its log (damaged behind the library's back: the stream version of an
    earlier state) was exported as it was, its file named after that earlier state: a healthy copy
    of the store at that state would take the file for its own. It is refused now, no file
    written; after rebuild() the export writes the log's state."""
    view = make(store)
    store.alter_view("sales.daily", ViewChange.update_comment("two"))
    with sqlite3.connect(store.path) as raw:
        raw.execute("UPDATE views SET stream_version = 1, properties = '{}' WHERE view_id = ?", (view.uuid,))
    raw.close()
    with ViewStore(store.path) as reopened:
        said = (rf"^the projections are behind the log for view sales\.daily \({view.uuid}\): they hold it at stream "
                r"version 1, its log goes on to stream version 2; rebuild\(\) repairs them from the log$")
        with pytest.raises(DamagedProjectionsError, match=said):
            reopened.export_iceberg("sales.daily", tmp_path / "v")
        assert not (tmp_path / "v" / "metadata").exists() or not any((tmp_path / "v" / "metadata").iterdir())
        reopened.rebuild()
        path = reopened.export_iceberg("sales.daily", tmp_path / "v")
        assert json.loads(path.read_text())["properties"] == {"comment": "two"}


def _projection_behind_its_log(store):
    """sales.daily at stream version 2 in the log, its views row put back (with sqlite3, behind the
    library's back) to stream version 1 with no properties: a projection behind its log."""
    view = make(store)
    store.alter_view("sales.daily", ViewChange.update_comment("two"))
    with sqlite3.connect(store.path) as raw:
        raw.execute("UPDATE views SET stream_version = 1, properties = '{}' WHERE view_id = ?", (view.uuid,))
    raw.close()
    return view


def test_reads_and_writes_of_a_view_whose_projection_is_behind_its_log_are_refused_until_rebuild(store):
    """load_view, view_exists and a write of a view whose views row is behind its log (damage) gave
    or started from the earlier state the row holds, silently (load_view: no comment). Reading the
    row now reads the log's last stream version of the view in the same statement: each refuses
    with CorruptLogError naming the view and rebuild(), and writes nothing; after rebuild() they
    read the log's state."""
    view = _projection_behind_its_log(store)
    with ViewStore(store.path) as reopened:
        rows, events = reopened.projection_dump(), reopened.events()
        said = (rf"^the projections are behind the log for view sales\.daily \({view.uuid}\): they hold it at stream "
                r"version 1, its log goes on to stream version 2; rebuild\(\) repairs them from the log$")
        for call in (lambda: reopened.load_view("sales.daily"), lambda: reopened.view_exists("sales.daily"),
                     lambda: reopened.load_view(("sales", "daily")),  # refused again: nothing was cached
                     lambda: reopened.alter_view("sales.daily", ViewChange.set_property("k", "v")),
                     lambda: reopened.drop_view("sales.daily")):
            with pytest.raises(DamagedProjectionsError, match=said):
                call()
        assert reopened.projection_dump() == rows and reopened.events() == events  # nothing written
        assert reopened.rebuild()["views"] == 1
        loaded = reopened.load_view("sales.daily")
        assert (loaded.stream_version, loaded.comment, reopened.view_exists("sales.daily")) == (2, "two", True)
        assert reopened.alter_view("sales.daily", ViewChange.set_property("k", "v")).stream_version == 3


@pytest.mark.parametrize("damage", ["DELETE FROM views WHERE name = 'daily' AND live = 1",
                                    "UPDATE views SET live = 0 WHERE name = 'daily'",
                                    "UPDATE views SET name = 'elsewhere' WHERE name = 'daily' AND live = 1"],
                         ids=["row deleted", "live flag cleared", "name changed"])
def test_a_name_the_projections_hold_free_while_the_log_holds_it_is_refused_until_rebuild(store, tmp_path, damage):
    """A views row deleted, or its live flag or name changed, behind the library's back left a name
    its log's view holds with no live row: reads said no view had it (view_exists False, load_view
    NoSuchViewError, drop_view False), and a create, an import or a rename gave it to a second view,
    leaving the log two live views of one name, which rebuild() refuses and cannot repair. Each
    asks the log now and refuses with DamagedProjectionsError naming the view that holds the name,
    writing nothing; after rebuild() the name is the view's again (the log's holder of a name is the
    view that took it last: here a second view under it, after the first was dropped)."""
    make(store)
    store.drop_view("sales.daily")
    view = make(store)
    make(store, "sales.other")
    exported = store.export_iceberg("sales.other", tmp_path / "other")
    with sqlite3.connect(store.path) as raw:
        raw.execute(damage)
    raw.close()
    with ViewStore(store.path) as reopened:
        rows, events = reopened.projection_dump(), reopened.events()
        said = (f"^the projections hold no live view sales.daily, but the log does: view {view.uuid} took the name at "
                r"position 3 and holds it still; rebuild\(\) repairs them from the log$")
        calls = [lambda: reopened.view_exists("sales.daily"), lambda: reopened.load_view("sales.daily"),
                 lambda: reopened.drop_view("sales.daily"), lambda: make(reopened),
                 lambda: reopened.replace_view("sales.daily", columns=COLS, representations=[SPARK],
                                               default_namespace="sales"),
                 lambda: reopened.rename_view("sales.other", "sales.daily"),
                 lambda: reopened.alter_view("sales.other", ViewChange.rename("daily")),
                 lambda: reopened.alter_view("sales.daily", ViewChange.update_comment("x")),
                 lambda: reopened.import_iceberg(exported, "sales.daily")]
        for call in calls:
            with pytest.raises(DamagedProjectionsError, match=said):
                call()
        assert reopened.projection_dump() == rows and reopened.events() == events  # nothing written
        assert reopened.rebuild()["views"] == 1
        assert reopened.load_view("sales.daily") == store.load_view("sales.daily") == view
        with pytest.raises(ViewAlreadyExistsError, match="^view already exists: sales.daily$"):
            make(reopened)


@pytest.mark.parametrize("damage, name, said", [
    ("UPDATE views SET name = 'elsewhere' WHERE name = 'daily'", "sales.elsewhere",
     "sales.elsewhere, but its log's last event leaves it sales.daily"),
    ("UPDATE views SET namespace = 'other' WHERE name = 'daily'", "other.daily",
     "other.daily, but its log's last event leaves it sales.daily"),
    ("UPDATE views SET live = 1 WHERE name = 'gone'", "sales.gone",
     "sales.gone, but its log's last event leaves it sales.gone (dropped)"),
], ids=["name", "namespace", "live flag of a dropped view"])
def test_a_views_row_whose_name_or_live_flag_is_not_its_logs_is_refused_until_rebuild(store, damage, name, said):
    """A views row at its stream's last stream version whose name, namespace or live flag was
    changed behind the library's back answered under the name it holds (a dropped view came back
    to life). The row is read with its stream's last event, whose identifier and type it must
    agree with: each read or write through it raises DamagedProjectionsError, nothing written;
    after rebuild() the name is free again, or the view's own."""
    view = make(store)
    gone = make(store, "sales.gone")
    store.drop_view("sales.gone")
    with sqlite3.connect(store.path) as raw:
        raw.execute(damage)
    raw.close()
    with ViewStore(store.path) as reopened:
        rows, events = reopened.projection_dump(), reopened.events()
        uuid = gone.uuid if "gone" in name else view.uuid
        message = f"^the projections name view {uuid} {re.escape(said)}; rebuild\\(\\) repairs them from the log$"
        for call in (lambda: reopened.load_view(name), lambda: reopened.view_exists(name),
                     lambda: reopened.alter_view(name, ViewChange.update_comment("x")),
                     lambda: reopened.drop_view(name)):
            with pytest.raises(DamagedProjectionsError, match=message):
                call()
        assert reopened.projection_dump() == rows and reopened.events() == events  # nothing written
        assert reopened.rebuild()["views"] == 1
        assert not reopened.view_exists(name) and reopened.load_view("sales.daily") == view


@pytest.mark.parametrize("expected", [0, 1, 2])
def test_a_name_held_in_the_log_is_refused_as_damage_before_an_expected_version_is_checked(store, expected):
    """With an expected_version, a write to a name the projections hold free while the log holds it
    is still refused as the damage it is, not as a stale expectation of a view that does not exist
    (the view does, at stream version 1): create, replace and drop all ask the log first."""
    view = make(store)
    with sqlite3.connect(store.path) as raw:
        raw.execute("DELETE FROM views WHERE name = 'daily'")
    raw.close()
    with ViewStore(store.path) as reopened:
        said = (f"^the projections hold no live view sales.daily, but the log does: view {view.uuid} took the name at "
                r"position 1 and holds it still; rebuild\(\) repairs them from the log$")
        calls = [lambda: make(reopened, expected_version=expected),
                 lambda: reopened.replace_view("sales.daily", columns=COLS, representations=[SPARK],
                                               default_namespace="sales", expected_version=expected),
                 lambda: reopened.drop_view("sales.daily", expected_version=expected)]
        for call in calls:
            with pytest.raises(DamagedProjectionsError, match=said):
                call()
        assert reopened.event_count() == 1


def test_a_name_let_go_in_the_log_is_free_without_a_row_of_it(store):
    """The log is asked only for a name no live row has: a name whose view was dropped, or renamed
    away (and one taken back by a rename), is free or held as the log says, with no error."""
    make(store)
    store.rename_view("sales.daily", "sales.weekly")
    assert not store.view_exists("sales.daily") and store.drop_view("sales.daily") is False
    other = make(store)  # the name, let go by a rename, taken by another view
    assert store.drop_view("sales.daily") is True and not store.view_exists("sales.daily")
    store.rename_view("sales.weekly", "sales.daily")  # taken back by the view that let go of it
    assert store.load_view("sales.daily").uuid != other.uuid and store.view_exists("sales.daily")
    with pytest.raises(NoSuchViewError, match="^no such view: sales.weekly "):
        store.load_view("sales.weekly")


def test_a_store_that_read_a_view_before_its_projection_fell_behind_reads_the_logs_state(store):
    """A store holding a view it read before its views row was put back (damage by another
    connection) brings its cached state up to date from the log, as after any other commit: it
    gives the log's state (the comment of stream version 2), not the row's and not an error."""
    make(store)
    store.alter_view("sales.daily", ViewChange.update_comment("two"))
    assert store.load_view("sales.daily").comment == "two"
    with sqlite3.connect(store.path) as raw:
        raw.execute("UPDATE views SET stream_version = 1, properties = '{}'")
    raw.close()
    loaded = store.load_view("sales.daily")
    assert (loaded.stream_version, loaded.comment, store.view_exists("sales.daily")) == (2, "two", True)


@pytest.mark.parametrize("damage, said", [
    (("DROP TRIGGER events_append_only_delete", "DELETE FROM events"),
     "ahead of the log for view sales.daily ({uuid}): they hold it at stream version 1, its log holds no event of it"),
    (("INSERT INTO events (commit_id, view_id, stream_version, type, identifier, actor, occurred_at, payload) "
      "SELECT 'k', view_id, '2x', type, identifier, actor, occurred_at, payload FROM events WHERE position = 1",),
     "behind the log for view sales.daily ({uuid}): they hold it at stream version 1, its log goes on to stream "
     "version '2x' (str)"),
], ids=["no event of it left", "a stream version of the wrong type"])
def test_the_log_a_projection_is_out_of_step_with_is_named_as_it_is(store, damage, said):
    """A views row whose view has no event left in the log (deleted behind the library's back) is
    refused as a projection ahead of its log, saying the log holds no event of it (not that it goes
    on to a stream version None); the log's last stream version of the wrong type (a text written
    behind the library's back) is shown as the row holds it, ``'2x' (str)``, not as version 2x."""
    view = make(store)
    with sqlite3.connect(store.path) as raw:
        for statement in damage:
            raw.execute(statement)
    raw.close()
    message = f"the projections are {said.format(uuid=view.uuid)}; rebuild() repairs them from the log"
    with ViewStore(store.path) as reader, pytest.raises(DamagedProjectionsError, match=f"^{re.escape(message)}$"):
        reader.load_view("sales.daily")


def test_an_export_of_a_view_whose_row_went_while_its_log_went_on_is_refused_and_writes_nothing(store, tmp_path):
    """Between the export's read of the view and its read of the log, another connection commits a
    change and the views row of the view is lost (damaged behind the library's back): the log goes
    on past the view read and the projections hold no row of it. That is refused as a projection
    behind its log is, no file written, not named after a state of the log."""
    view = make(store)
    with ViewStore(store.path) as other:
        real = other._export_uuid

        def commit_then_lose_the_row(read, base, gzip):
            store.alter_view("sales.daily", ViewChange.update_comment("later"))
            with sqlite3.connect(store.path) as raw:
                raw.execute("DELETE FROM views WHERE view_id = ?", (view.uuid,))
            raw.close()
            return real(read, base, gzip)

        other._export_uuid = commit_then_lose_the_row
        said = (rf"^the projections are behind the log for view sales\.daily \({view.uuid}\): they hold no row of it, "
                r"its log goes on to stream version 2 at least; rebuild\(\) repairs them from the log$")
        with pytest.raises(DamagedProjectionsError, match=said):
            other.export_iceberg("sales.daily", tmp_path / "v")
    assert not (tmp_path / "v" / "metadata").exists() or not any((tmp_path / "v" / "metadata").iterdir())


def test_an_export_of_a_view_that_changed_since_it_was_read_names_its_file_by_the_state_it_read(store, tmp_path):
    """Another store commits between the export's read of the view and its read of the log: the log
    is ahead of the view read, not of the projection, so the file is named after the view's state,
    as an export of that state names it."""
    make(store)
    with ViewStore(store.path) as other:
        real = other._export_uuid

        def commit_then_name(view, base, gzip):  # the other store's commit, between the two reads
            store.alter_view("sales.daily", ViewChange.update_comment("later"))
            return real(view, base, gzip)

        other._export_uuid = commit_then_name
        raced = other.export_iceberg("sales.daily", tmp_path / "raced")
    assert json.loads(raced.read_text()).get("properties") is None and raced.name.startswith("00000-")
