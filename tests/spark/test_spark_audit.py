"""viewstore.spark.audit (events_dataframe) against the real (Hive-enabled) test SparkSession."""

from __future__ import annotations

import datetime as dt
import json
import re
import sqlite3
import tracemalloc
from types import SimpleNamespace

import pyarrow as pa
import pytest
from pyspark.sql import types as T

from viewstore import Column, CorruptLogError, EngineError, NoSuchViewError, ValidationError, ViewChange
from viewstore.spark import events_dataframe
from viewstore.spark.audit import _BATCH_ROWS, EVENTS_SCHEMA, _arrow_refused, events_arrow

from spark_views import _stored

pytestmark = pytest.mark.spark


# -- events_dataframe ------------------------------------------------------------------------------


def test_events_dataframe_is_the_typed_log(spark, store, data, ns):
    _stored(store, f"{ns}.a", "SELECT 1 AS x", ns, [Column("x", "int")])
    store.alter_view(f"{ns}.a", ViewChange.set_property("owner", "ops"))
    store.rename_view(f"{ns}.a", f"{ns}.b")
    other = store.__class__(store.path, catalog="prod", actor="bob")
    try:
        _stored(other, f"{ns}.c", "SELECT 2 AS y", ns, [Column("y", "int")])
    finally:
        other.close()

    df = events_dataframe(spark, store)

    assert [(f.name, f.dataType.simpleString()) for f in df.schema.fields] == [
        ("position", "bigint"), ("view", "string"), ("view_id", "string"), ("stream_version", "bigint"),
        ("type", "string"), ("actor", "string"), ("occurred_at", "timestamp"), ("commit_id", "string"),
        ("payload", "string")]
    assert not any(f.nullable for f in df.schema.fields)  # every event has every column
    assert events_arrow(store).schema == pa.schema([pa.field(name, kind, nullable=False) for name, kind in (
        ("position", pa.int64()), ("view", pa.string()), ("view_id", pa.string()), ("stream_version", pa.int64()),
        ("type", pa.string()), ("actor", pa.string()), ("occurred_at", pa.timestamp("ms", tz="UTC")),
        ("commit_id", pa.string()), ("payload", pa.string()))])
    rows = df.orderBy("position").collect()
    events = store.events()
    assert [(r.position, r.view, r.view_id, r.stream_version, r.type, r.actor, r.commit_id) for r in rows] == [
        (e.position, e.view, e.view_id, e.stream_version, e.type, e.actor, e.commit_id) for e in events]
    assert [r.occurred_at.astimezone(dt.timezone.utc) for r in rows] == [e.occurred_at_datetime for e in events]
    assert json.loads(rows[1].payload) == {"updates": {"owner": "ops"}}

    df.createOrReplaceTempView("view_events")
    try:
        by_actor = {r.actor: r.n for r in spark.sql(
            "SELECT actor, count(*) AS n FROM view_events GROUP BY actor").collect()}
        assert by_actor == {"alice": 3, "bob": 1}
    finally:
        spark.catalog.dropTempView("view_events")

    assert events_dataframe(spark, store, view=f"{ns}.a").count() == 3  # across the rename
    assert events_dataframe(spark, store, actor="bob").first().view == f"{ns}.c"
    assert events_dataframe(spark, store, types=["view.renamed"]).count() == 1
    assert events_dataframe(spark, store, since=dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=1)).count() == 0
    assert events_dataframe(spark, store, until=dt.datetime(2000, 1, 1, tzinfo=dt.timezone.utc)).count() == 0
    assert events_dataframe(spark, store, limit=2).count() == 2
    latest = events_dataframe(spark, store, limit=2, newest_first=True).collect()
    assert [r.position for r in latest] == [e.position for e in events[:-3:-1]]
    with pytest.raises(ValidationError) as refused:
        events_dataframe(spark, store, types="view.exploded")
    assert str(refused.value) == (
        "unknown event type(s) view.exploded; known: view.comment_updated, view.created, view.dropped, view.imported, "
        "view.properties_removed, view.properties_set, view.renamed, view.replaced, view.representation_added, "
        "view.representation_removed, view.representation_updated, view.rolled_back")
    with pytest.raises(NoSuchViewError, match=f"^no view was ever named {ns}.typo$"):  # as ViewStore.events
        events_dataframe(spark, store, view=f"{ns}.typo")


def test_events_dataframe_of_an_empty_store(spark, store):
    df = events_dataframe(spark, store)
    assert df.count() == 0 and df.columns == ["position", "view", "view_id", "stream_version", "type", "actor",
                                              "occurred_at", "commit_id", "payload"]


# -- edges found by planting bugs -----------------------------------------------------------------


def test_events_arrow_refuses_what_is_no_store():
    with pytest.raises(ValidationError, match="^store must be a ViewStore, not str$"):
        events_arrow("views.db")
    with pytest.raises(ValidationError, match="^store must be a ViewStore, not SimpleNamespace$"):
        events_arrow(SimpleNamespace(event_rows=lambda **filters: []))  # a stand-in with its method is none


@pytest.mark.parametrize(("column", "held", "said"), [
    ("occurred_at", "soon", "the occurred_at of the event at position 2 is not an integer: 'soon' (str)"),
    ("occurred_at", 1.5, "the occurred_at of the event at position 2 is not an integer: 1.5 (float)"),
    ("stream_version", "two", "the stream_version of the event at position 2 is not an integer: 'two' (str)"),
    ("payload", b"{}", "the payload of the event at position 2 is not text: b'{}' (bytes)"),
    ("commit_id", b"c", "the commit_id of the event at position 2 is not text: b'c' (bytes)"),
])
def test_a_damaged_row_is_named_as_the_log_names_it_not_truncated_nor_left_to_arrow(spark, store, column, held, said):
    """Arrow would cut 1.5 ms to 1 and carry bytes as text; text in an integer column was pyarrow's
    ArrowInvalid. Each is the CorruptLogError that ViewStore.events raises for such a row."""
    _stored(store, "bad.v", "SELECT 1 AS x", "bad", [Column("x", "int")])
    store.alter_view("bad.v", ViewChange.set_property("k", "v"))
    with sqlite3.connect(store.path) as raw:
        raw.execute("DROP TRIGGER events_append_only_update")
        raw.execute(f"UPDATE events SET {column} = ? WHERE position = 2", (held,))
    raw.close()
    for call in (lambda: events_arrow(store), lambda: events_dataframe(spark, store)):
        with pytest.raises(CorruptLogError) as raised:
            call()
        assert str(raised.value) == said
    assert events_dataframe(spark, store, limit=1).count() == 1  # a read that ends before the row is whole


@pytest.mark.parametrize(("column", "declared", "held", "said"), [
    ("commit_id", "commit_id TEXT", None, "is not text: None (NoneType)"),
    ("occurred_at", "occurred_at INTEGER", None, "is not an integer: None (NoneType)"),
    # no type, so no affinity that turns a number into text: Arrow refuses an int among strings
    ("actor", "actor NOT NULL", 5, "is not text: 5 (int)"),
])
def test_a_value_a_hand_edited_schema_let_in_is_named(store, column, declared, held, said):
    """A schema edited by hand (its NOT NULL or its column's type dropped) lets in a NULL, which
    Arrow would carry as a null in a non-nullable field, or an integer in a text column, which Arrow
    refuses with its own TypeError; each is the CorruptLogError that ViewStore.events raises."""
    _stored(store, "bad.v", "SELECT 1 AS x", "bad", [Column("x", "int")])
    store.alter_view("bad.v", ViewChange.set_property("k", "v"))
    with sqlite3.connect(store.path) as raw:
        raw.execute("PRAGMA writable_schema = ON")
        (sql,) = raw.execute("SELECT sql FROM sqlite_master WHERE name = 'events'").fetchone()
        written = f"{column} {'TEXT' if column != 'occurred_at' else 'INTEGER'} NOT NULL"
        assert written in sql
        raw.execute("UPDATE sqlite_master SET sql = ? WHERE name = 'events'", (sql.replace(written, declared),))
    raw.close()
    with sqlite3.connect(store.path) as raw:
        raw.execute("DROP TRIGGER events_append_only_update")
        raw.execute(f"UPDATE events SET {column} = ? WHERE position = 2", (held,))
    raw.close()
    with pytest.raises(CorruptLogError, match=rf"^the {column} of the event at position 2 {re.escape(said)}$"):
        events_arrow(store)


def test_events_dataframe_takes_a_range_of_log_positions(spark, store):
    """A job that loaded the log up to a position loads what came after it, with the other filters."""
    _stored(store, "pos.a", "SELECT 1 AS x", "pos", [Column("x", "int")])
    _stored(store, "pos.b", "SELECT 1 AS x", "pos", [Column("x", "int")])
    for i in range(3):
        store.alter_view("pos.a", ViewChange.set_property("k", str(i)))
    first = store.events()[0].position
    df = events_dataframe(spark, store, since_position=first + 2)
    assert [r.position for r in df.orderBy("position").collect()] == [first + 2, first + 3, first + 4]
    df = events_dataframe(spark, store, since_position=first + 1, until_position=first + 3, view="pos.a")
    assert [r.position for r in df.orderBy("position").collect()] == [first + 2, first + 3]
    assert events_arrow(store, until_position=first).column("position").to_pylist() == [first]
    with pytest.raises(ValidationError, match=r"^since_position must be a log position \(a 64-bit int\), not '3'$"):
        events_dataframe(spark, store, since_position="3")


def test_a_damaged_row_past_the_first_batch_is_named(spark, store):
    """The log moves to Arrow 8,192 rows at a time: the damaged row of a later batch is found too,
    also when every other row of its column is whole."""
    _damaged_past_one_batch(store, 8500)
    assert events_arrow(store, limit=8499).num_rows == 8499


def _damaged_past_one_batch(store, position):
    """A log of 9,001 events (more than one Arrow batch) whose row at ``position`` holds a real as its
    stream version; what events_arrow raises on it, checked."""
    _stored(store, "big.v", "SELECT 1 AS x", "big", [Column("x", "int")])
    for start in range(0, 9000, 1000):
        store.alter_view("big.v", *[ViewChange.set_property(f"k{i}", "v") for i in range(start, start + 1000)])
    with sqlite3.connect(store.path) as raw:
        raw.execute("DROP TRIGGER events_append_only_update")
        raw.execute("UPDATE events SET stream_version = 2.5 WHERE position = ?", (position,))
    raw.close()
    said = rf"^the stream_version of the event at position {position} is not an integer: 2\.5 \(float\)$"
    with pytest.raises(CorruptLogError, match=said) as raised:
        events_arrow(store)
    return raised


def test_events_dataframe_of_a_log_longer_than_one_arrow_batch(spark, store):
    _stored(store, "big.v", "SELECT 1 AS x", "big", [Column("x", "int")])
    for start in range(0, 2500, 500):
        store.alter_view("big.v", *[ViewChange.set_property(f"k{i}", "v") for i in range(start, start + 500)])
    total = store.event_count()
    assert total > 2048
    df = events_dataframe(spark, store)
    assert df.count() == total
    assert [r.position for r in df.orderBy("position").select("position").collect()] == list(range(1, total + 1))


def test_events_arrow_of_a_log_of_whole_batches_moves_every_row(store):
    """A log (or a limit) of exactly one or two Arrow batches of rows, whose last read finds no row,
    moves whole, in batches of that size, and an empty answer is an empty table of the schema."""
    _stored(store, "big.v", "SELECT 1 AS x", "big", [Column("x", "int")])
    store.alter_view("big.v", *[ViewChange.set_property(f"k{i}", "v") for i in range(_BATCH_ROWS - 1)])
    for rows in (_BATCH_ROWS, 2 * _BATCH_ROWS):
        assert store.event_count() == rows
        table = events_arrow(store)
        assert table.column("position").to_pylist() == list(range(1, rows + 1))
        assert [batch.num_rows for batch in table.to_batches()] == [_BATCH_ROWS] * (rows // _BATCH_ROWS)
        store.alter_view("big.v", *[ViewChange.set_property(f"k{i}", "w") for i in range(_BATCH_ROWS)])
    assert events_arrow(store, limit=_BATCH_ROWS).column("position").to_pylist() == list(range(1, _BATCH_ROWS + 1))
    empty = events_arrow(store, since_position=3 * _BATCH_ROWS + 1)
    assert empty.num_rows == 0 and empty.schema == EVENTS_SCHEMA


def test_events_arrow_holds_one_batch_of_rows_at_a_time_not_the_whole_log(store):
    """A log of five Arrow batches moves with only one batch of its rows held as Python objects at a
    time: under a third of what the rows of the whole log take (about a quarter: a fifth, and the
    batch's columns before Arrow takes them outside Python's heap), where reading every row first
    took all of it, and holding the batch read last while the next was read took two (0.40). The
    read is made once before it is measured, so that what its first call allocates for good (caches,
    Arrow's types) is not counted."""
    _stored(store, "big.v", "SELECT 1 AS x", "big", [Column("x", "int")])
    for start in range(0, 5 * 8192, 2048):
        store.alter_view("big.v", *[ViewChange.set_property(f"k{i}", "v") for i in range(start, start + 2048)])
    total = store.event_count()

    def peak(read):
        tracemalloc.start()
        try:
            result = read()
            return tracemalloc.get_traced_memory()[1], result
        finally:
            tracemalloc.stop()

    rows_peak, rows = peak(store.event_rows)
    events_arrow(store)
    arrow_peak, table = peak(lambda: events_arrow(store))
    assert len(rows) == table.num_rows == total == 5 * 8192 + 1
    assert table.column("position").to_pylist() == [r[0] for r in rows]
    assert arrow_peak < rows_peak / 3, (arrow_peak, rows_peak)


def test_events_dataframe_times_are_instants_in_any_session_time_zone(spark, store):
    _stored(store, "tz.v", "SELECT 1 AS x", "tz", [Column("x", "int")])
    store.alter_view("tz.v", ViewChange.set_property("k", "v"))
    saved = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "America/New_York")
    try:
        df = events_dataframe(spark, store)
        got = [r.ms for r in df.orderBy("position").selectExpr("unix_millis(occurred_at) AS ms").collect()]
    finally:
        spark.conf.set("spark.sql.session.timeZone", saved)
    assert got == [e.occurred_at for e in store.events()]
    assert df.schema["occurred_at"].dataType == T.TimestampType()


def test_a_damaged_row_ends_the_read_there_and_a_later_read_sees_later_commits(store):
    """A damaged row inside the first of two batches ends the read at once: while its error is held
    (as an except block or a caller's log holds it), the store's connection keeps no read of the log
    open, so its next read sees what another connection committed since."""
    raised = _damaged_past_one_batch(store, 100)
    other = store.__class__(store.path, catalog="prod", actor="bob")
    try:
        other.alter_view("big.v", ViewChange.set_property("late", "v"))
    finally:
        other.close()
    assert [(e.position, e.actor) for e in store.events(since_position=9002)] == [(9002, "bob")]
    assert raised.value.__traceback__ is not None  # the error, and what its frames held, is still held here


def test_events_dataframe_in_a_session_whose_arrow_batches_have_no_limit_names_the_setting(spark, store):
    """Spark reads spark.sql.execution.arrow.maxRecordsPerBatch of 0 or less as no limit, but
    PySpark cuts an Arrow table into batches of that many rows and pyarrow refuses the size: the
    call raised pyarrow's bare ValueError. It is a ValidationError naming the setting, and the
    call works again once the setting is positive."""
    _stored(store, "arrow.v", "SELECT 1 AS x", "arrow", [Column("x", "int")])
    key = "spark.sql.execution.arrow.maxRecordsPerBatch"
    saved = spark.conf.get(key)
    for value in ("0", "-1"):
        spark.conf.set(key, value)
        try:
            with pytest.raises(ValidationError) as raised:
                events_dataframe(spark, store)
        finally:
            spark.conf.set(key, saved)
        assert str(raised.value) == (
            f"cannot move the event log into Spark: PySpark makes a DataFrame from Arrow only in batches of a "
            f"positive number of rows, and the session's {key} is {value}")
        assert isinstance(raised.value.__cause__, ValueError)
    assert events_dataframe(spark, store).count() == 1


def test_a_refusal_to_make_the_dataframe_in_a_session_of_positive_batches_is_the_engines(spark):
    """Only a batch size of 0 or less is the caller's to fix: PySpark's refusal of the table in a
    session whose batches are a positive number of rows (here Spark's default) is an EngineError
    carrying PySpark's message, not a ValidationError naming the setting."""
    refused = _arrow_refused(spark, ValueError("a column PySpark could not convert"))
    assert type(refused) is EngineError
    assert str(refused) == ("cannot move the event log into Spark: PySpark could not make the DataFrame: a column "
                            "PySpark could not convert")


def test_events_dataframe_in_a_session_whose_arrow_batch_setting_python_cannot_read_is_the_engines(spark, store):
    """Spark trims control characters off an int setting before it checks it, so it takes "\\x0764";
    PySpark then reads the setting with Python's int(), which refuses it: no batch size of 0 or less
    the caller could fix as the message of that case says, so an EngineError carrying PySpark's
    message, not a ValidationError, and not the bare ValueError."""
    _stored(store, "arrow.v", "SELECT 1 AS x", "arrow", [Column("x", "int")])
    key = "spark.sql.execution.arrow.maxRecordsPerBatch"
    saved = spark.conf.get(key)
    spark.conf.set(key, "\x0764")
    try:
        assert spark.conf.get(key) == "\x0764"  # Spark kept it as given
        with pytest.raises(EngineError) as raised:
            events_dataframe(spark, store)
    finally:
        spark.conf.set(key, saved)
    assert type(raised.value) is EngineError
    assert str(raised.value) == ("cannot move the event log into Spark: PySpark could not make the DataFrame: "
                                 "invalid literal for int() with base 10: '\\x0764'")
    assert isinstance(raised.value.__cause__, ValueError)
    assert events_dataframe(spark, store).count() == 1
