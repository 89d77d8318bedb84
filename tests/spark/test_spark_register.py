"""viewstore.spark.register (register_views, table_references) against the real (Hive-enabled)
test SparkSession."""

from __future__ import annotations

import datetime as dt
import sqlite3

import pytest

from viewstore import (Column, DamagedProjectionsError, EngineError, NoSuchViewError, SQLRepresentation,
                       ValidationError, ViewChange, ViewStore)
from viewstore.spark import attach, detach, import_metastore_views, register_views, sql
from viewstore.spark.register import table_references

from spark_views import _alter_record, _ddl_turn_held_elsewhere, _meanwhile, _name, _stored, _while_its_write_waits

pytestmark = pytest.mark.spark


# -- table_references ----------------------------------------------------------------------------


def test_table_references_come_from_a_parser():
    refs = table_references("WITH c AS (SELECT * FROM sales.orders) SELECT * FROM c JOIN customers k ON c.id = k.id "
                            "WHERE c.x IN (SELECT y FROM other.t2) AND c.s = 'FROM fake.table'")
    assert refs == {("sales", "orders"), ("customers",), ("other", "t2")}
    assert table_references("SELECT * FROM range(10)") == set()
    assert table_references("SELECT FROM WHERE (") is None
    for empty in ("", "  ", ";", "-- nothing"):  # no statement: nothing read is known, not "no table"
        assert table_references(empty) is None, repr(empty)
    # sqlglot misreads Spark's TABLE query; a table named `table` unquoted looks the same to it
    for misread in ("TABLE sales.orders", "SELECT * FROM (TABLE orders)", "SELECT * FROM table t"):
        assert table_references(misread) is None, misread
    assert table_references("SELECT * FROM `table` t JOIN db.table ON true") == {("table",), ("db", "table")}
    assert table_references("TABLE sales.orders", "trino") == {("sales", "orders")}  # Trino's reads it right
    # nested past sqlglot's recursion: unknown, as unparseable text is (a RecursionError escaped)
    assert table_references("SELECT " + "(" * 3000 + "1" + ")" * 3000 + " FROM t") is None


def test_table_references_skip_a_cte_name_only_where_its_with_is_in_scope(spark):
    """A CTE somewhere in the query hid every one-part name like it: the outer `v` here was lost."""
    assert table_references("SELECT x FROM v UNION ALL SELECT x FROM (WITH v AS (SELECT 1 AS x) SELECT x FROM v) t") \
        == {("v",)}
    assert table_references("SELECT x FROM V WHERE x IN (SELECT x FROM (WITH v AS (SELECT 1 AS x) SELECT x FROM v))") \
        == {("v",)}
    # a CTE is in scope in the CTEs after it, not in itself nor in those before it (but in a WITH RECURSIVE),
    # as Spark resolves them: here over temporary views of those names
    spark.sql("CREATE OR REPLACE TEMPORARY VIEW vs_scope_a AS SELECT 10 AS x")
    spark.sql("CREATE OR REPLACE TEMPORARY VIEW vs_scope_b AS SELECT 20 AS x")
    try:
        for query, refs, rows in [
                ("WITH vs_scope_a AS (SELECT x + 1 AS x FROM vs_scope_a) SELECT x FROM vs_scope_a",
                 {("vs_scope_a",)}, [11]),
                ("WITH c AS (SELECT x FROM vs_scope_b), vs_scope_b AS (SELECT 5 AS x) "
                 "SELECT x FROM c UNION ALL SELECT x FROM Vs_Scope_B", {("vs_scope_b",)}, [20, 5]),
                ("WITH vs_scope_b AS (SELECT 5 AS x), c AS (SELECT x FROM VS_SCOPE_B) SELECT x FROM c", set(), [5]),
                ("WITH RECURSIVE vs_scope_a AS (SELECT 1 AS x UNION ALL SELECT x + 1 FROM vs_scope_a WHERE x < 3) "
                 "SELECT x FROM vs_scope_a", set(), [1, 2, 3])]:
            assert table_references(query) == refs, query
            assert [r.x for r in spark.sql(query).collect()] == rows, query
    finally:
        spark.catalog.dropTempView("vs_scope_a")
        spark.catalog.dropTempView("vs_scope_b")
    # Hive resolves every CTE of a WITH in the others, in any order (its name in any case); a dialect
    # sqlglot does not know is read as Spark's
    later = "WITH c AS (SELECT x FROM b), b AS (SELECT 1 AS x) SELECT x FROM c"
    assert table_references(later, "hive") == table_references(later, "HIVE") == set()
    assert table_references(later, "no_such_dialect") == {("b",)}


# -- register_views --------------------------------------------------------------------------------


def test_register_views_over_views_in_dependency_order(spark, store, data, ns):
    spark.sql(f"CREATE DATABASE {ns}")
    spark.sql(f"CREATE TABLE {ns}.orders AS SELECT * FROM {data}.orders")  # read unqualified below
    # names sort the wrong way round: 'a_top' reads 'b_mid', which reads 'c_base'
    _stored(store, f"{ns}.a_top", "SELECT region, sum(orders) AS orders FROM b_mid GROUP BY region", ns,
            [Column("region", "string"), Column("orders", "long")])
    _stored(store, f"{ns}.b_mid", f"SELECT day, region, count(*) AS orders FROM {ns}.c_base GROUP BY day, region", ns,
            [Column("day", "date"), Column("region", "string"), Column("orders", "long")])
    _stored(store, f"{ns}.c_base", "SELECT day, region, amount FROM orders", ns,
            [Column("day", "date", "order day"), Column("region", "string"), Column("amount", "decimal(10,2)")],
            comment="the base view")
    spark.catalog.setCurrentDatabase("default")

    report = register_views(spark, store)

    assert report.ok and not report.skipped
    assert report.registered == [f"{ns}.c_base", f"{ns}.b_mid", f"{ns}.a_top"]
    rows = spark.sql(f"SELECT * FROM {ns}.a_top ORDER BY region").collect()
    assert [(r.region, r.orders) for r in rows] == [("north", 2), ("south", 1)]
    assert spark.catalog.currentDatabase() == "default"  # the session's namespace is put back
    described = {r.col_name: r for r in spark.sql(f"DESCRIBE TABLE EXTENDED {ns}.c_base").collect()}
    assert described["day"].comment == "order day"
    assert described["Comment"].data_type == "the base view"
    assert described["View Catalog and Namespace"].data_type == f"spark_catalog.{ns}"


def test_register_views_creates_databases_and_reports_every_outcome(spark, store, data, ns):
    other = _name()
    try:
        _stored(store, f"{ns}.good", f"SELECT order_id FROM {data}.orders", ns, [Column("order_id", "long")])
        _stored(store, f"{ns}.missing", "SELECT * FROM no_such_table", ns)
        store.create_view(f"{ns}.trino_only", columns=[], representations=[("trino", "SELECT 1 AS x")],
                          default_namespace=ns)
        _stored(store, f"{other}.elsewhere", f"SELECT region FROM {data}.orders", other, [Column("region", "string")])

        report = register_views(spark, store, ns, dialect="SPARK")  # dialects match case-insensitively

        assert report.registered == [f"{ns}.good"]
        assert [(s.identifier, s.reason) for s in report.skipped] == [(f"{ns}.trino_only", "no-representation")]
        assert [(f.identifier, f.condition) for f in report.failed] == [(f"{ns}.missing", "TABLE_OR_VIEW_NOT_FOUND")]
        assert "no_such_table" in report.failed[0].message
        assert report.databases_created == [ns]
        assert not report.ok
        with pytest.raises(ValidationError) as raised:
            report.raise_for_failures()
        first, *more = report.failed[0].message.splitlines()
        assert more  # Spark's explanation goes on: only its first line is told
        assert first == ("[TABLE_OR_VIEW_NOT_FOUND] The table or view `no_such_table` cannot be found. Verify the "
                         "spelling and correctness of the schema and catalog.")
        assert str(raised.value) == f"1 view(s) failed to register:\n{ns}.missing: {first}"  # the condition once
        assert not spark.catalog.databaseExists(other)  # only the namespace asked for
        assert spark.sql(f"SELECT count(*) AS n FROM {ns}.good").first().n == 3
        assert register_views(spark, store, ns).databases_created == []  # it is there now
    finally:
        spark.sql(f"DROP DATABASE IF EXISTS {other} CASCADE")


def test_register_views_of_a_view_whose_projection_is_behind_its_log_registers_nothing_until_rebuild(
        spark, store, data, ns):
    """A view replaced (stream version 2) whose views row was put back to its first version with
    sqlite3, behind the library's back: register_views registered the old SQL, silently. Its read
    of the view refuses now (DamagedProjectionsError, naming rebuild), before anything is registered; after
    rebuild() the log's SQL is registered."""
    columns = [Column("order_id", "long")]
    _stored(store, f"{ns}.v", f"SELECT order_id FROM {data}.orders", ns, columns)
    later = SQLRepresentation("spark", f"SELECT order_id FROM {data}.orders WHERE order_id > 1")
    store.replace_view(f"{ns}.v", columns=columns, representations=[later], default_namespace=ns)
    with sqlite3.connect(store.path) as raw:
        raw.execute("UPDATE views SET stream_version = 1, current_version_id = 1")
    raw.close()
    with ViewStore(store.path) as reopened:
        said = (rf"^the projections are behind the log for view {ns}\.v .*: they hold it at stream version 1, "
                r"its log goes on to stream version 2; rebuild\(\) repairs them from the log$")
        with pytest.raises(DamagedProjectionsError, match=said):
            register_views(spark, reopened, ns)
        assert not spark.catalog.databaseExists(ns)  # nothing registered
        reopened.rebuild()
        assert register_views(spark, reopened, ns).registered == [f"{ns}.v"]
    assert spark.sql(f"SELECT count(*) AS n FROM {ns}.v").first().n == 2


def test_raise_for_failures_names_each_condition_once_and_tags_a_message_without_it():
    """A Java error's message does not start with its condition, Spark's own does: each line names
    the condition once, and only the message's first line."""
    from viewstore.spark.register import FailedView, RegisterReport

    report = RegisterReport(failed=[
        FailedView("s.json", "JsonParseException", "Unexpected character ('x')\n at [Source: x]"),
        FailedView("s.gone", "TABLE_OR_VIEW_NOT_FOUND", "[TABLE_OR_VIEW_NOT_FOUND] no table t\nSQLSTATE: 42P01",
                   "prune"),
        FailedView("s.bare", "SparkException", ""),
        FailedView("s.named", "X", "says [X] later")])
    with pytest.raises(ValidationError) as raised:
        report.raise_for_failures()
    assert str(raised.value) == ("3 view(s) failed to register, 1 stale copy(ies) could not be pruned:\n"
                                 "s.json: [JsonParseException] Unexpected character ('x')\n"
                                 "s.gone: (prune) [TABLE_OR_VIEW_NOT_FOUND] no table t\n"
                                 "s.bare: [SparkException] \n"
                                 "s.named: [X] says [X] later")


def test_a_register_reports_summary_and_dict_count_the_copies_made_apart_from_those_left():
    """The summary line (the table's title; the line printed alone when every view was left as it
    was) counts the copies made apart from those left unchanged, each other outcome, and the time to
    a hundredth of a second; the --json dict says ``ok`` with every field."""
    from viewstore.spark.register import FailedView, RegisterReport, SkippedView

    report = RegisterReport(registered=["s.a", "s.b", "s.c"], unchanged=["s.b"],
                            skipped=[SkippedView("s.t", "table-exists", "a table has the name")],
                            failed=[FailedView("s.f", "X", "[X] no")], pruned=["s.x", "s.y"], seconds=1.236)
    assert str(report) == "registered 2, already registered 1, skipped 1, failed 1, pruned 2 (1.24 s)"
    assert report.to_dict()["ok"] is False and report.to_dict()["unchanged"] == ["s.b"]
    assert RegisterReport(registered=["s.a"]).to_dict()["ok"] is True


def test_the_databases_a_registration_creates_are_reported_in_name_order(spark, store):
    base = _name()
    names = [f"{base}_c", f"{base}_a", f"{base}_b"]  # made in this order
    try:
        for ns in names:
            _stored(store, f"{ns}.v", "SELECT 1 AS x", ns, [Column("x", "int")])
        report = register_views(spark, store)
        assert report.ok and report.databases_created == sorted(names)
    finally:
        for ns in names:
            spark.sql(f"DROP DATABASE IF EXISTS {ns} CASCADE")


def test_register_views_never_replaces_a_table(spark, store, data, ns):
    spark.sql(f"CREATE DATABASE {ns}")
    spark.sql(f"CREATE TABLE {ns}.daily (day DATE, n BIGINT) USING parquet")
    spark.sql(f"INSERT INTO {ns}.daily VALUES (DATE'2026-01-01', 7)")
    _stored(store, f"{ns}.daily", f"SELECT day, count(*) AS n FROM {data}.orders GROUP BY day", ns,
            [Column("day", "date"), Column("n", "long")])
    _stored(store, f"{ns}.weekly", f"SELECT day FROM {ns}.daily", ns, [Column("day", "date")])

    report = register_views(spark, store, ns)

    assert [(s.identifier, s.reason) for s in report.skipped] == [(f"{ns}.daily", "table-exists")]
    assert report.registered == [f"{ns}.weekly"]  # it reads the table, which is what Spark resolves
    assert [tuple(r) for r in spark.sql(f"SELECT * FROM {ns}.daily").collect()] == [(dt.date(2026, 1, 1), 7)]


def test_register_views_takes_a_view_named_like_the_table_it_reads_for_no_cycle(spark, store, ns):
    """The view reads the table its name belongs to in the session, not itself: Spark's guard keeps
    the table, and the view is skipped (a failure of its own, RECURSIVE_VIEW, made the report not ok)."""
    spark.sql(f"CREATE DATABASE {ns}")
    spark.sql(f"CREATE TABLE {ns}.daily (n BIGINT) USING parquet")
    _stored(store, f"{ns}.daily", f"SELECT n FROM {ns}.daily WHERE n > 0", ns, [Column("n", "long")])
    report = register_views(spark, store, ns)
    assert report.ok, report.failed
    assert [(s.identifier, s.reason) for s in report.skipped] == [(f"{ns}.daily", "table-exists")]
    assert spark.catalog.getTable(f"{ns}.daily").tableType == "MANAGED"


def test_register_views_never_replaces_a_view_whose_record_names_a_folder(spark, store, ns, tmp_path):
    """The metastore deletes the folder a replaced view's record names, as Iceberg's Hive catalog
    writes its views: such a view is skipped, refresh or not, and its record and folder stay."""
    spark.sql(f"CREATE DATABASE {ns}")
    spark.sql(f"CREATE VIEW {ns}.v AS SELECT 1 AS x")
    folder = tmp_path / "v"
    (folder / "metadata").mkdir(parents=True)
    (folder / "metadata" / "00001-v.metadata.json").write_text("{}")
    _alter_record(spark, ns, "v", location=str(folder))
    _stored(store, f"{ns}.v", "SELECT 2 AS x", ns, [Column("x", "int")])
    _stored(store, f"{ns}.w", "SELECT 3 AS x", ns, [Column("x", "int")])
    for refresh, unchanged in ((True, []), (False, [f"{ns}.w"])):
        report = register_views(spark, store, ns, refresh=refresh)
        assert [(s.identifier, s.reason, s.detail) for s in report.skipped] == [(
            f"{ns}.v", "view-with-location", f"a view of the session catalog has this name and names the folder "
                                             f"file:{folder}, which the metastore would delete in replacing it")]
        assert (report.registered, report.unchanged, report.failed) == ([f"{ns}.w"], unchanged, []), refresh
    assert [tuple(r) for r in spark.sql(f"SELECT x FROM {ns}.v").collect()] == [(1,)]
    assert (folder / "metadata" / "00001-v.metadata.json").read_text() == "{}"


def test_register_views_with_nested_columns_and_the_stores_catalog_as_default(spark, store, data, ns):
    view = _stored(store, f"{ns}.v", f"SELECT region, items, attrs FROM {data}.orders", ns,
                   [Column("region", "string"), Column("items", "list<struct<sku: string, qty: int>>", "order lines"),
                    Column("attrs", "map<string, string>")])
    assert view.default_catalog == "prod"  # the store's catalog, not a Spark catalog: the session catalog is used
    assert register_views(spark, store, ns).registered == [f"{ns}.v"]
    row = spark.sql(f"SELECT items[0].sku AS sku, attrs['channel'] AS channel FROM {ns}.v "
                    "WHERE region = 'south'").first()
    assert (row.sku, row.channel) == ("b", "shop")
    assert spark.table(f"{ns}.v").schema["items"].metadata == {"comment": "order lines"}


def test_register_views_makes_no_session_database_for_a_namespace_of_another_catalog(spark, store, ns):
    """A view whose default catalog is another catalog of the session reads its bare names in that
    catalog's namespace: the session catalog gets no database of that name (it got one, reported as
    created)."""
    other = _name()
    catalog = attach(spark, store, name=f"{ns}vs")
    try:
        _stored(store, f"{other}.base", "SELECT 1 AS x", other, [Column("x", "int")])
        store.create_view(f"{ns}.v", columns=[Column("x", "int")], representations=[("spark", "SELECT x FROM base")],
                          default_namespace=[other], default_catalog=catalog)
        report = register_views(spark, store, ns)
        assert report.ok, report.failed
        assert report.registered == [f"{ns}.v"] and report.databases_created == [ns]
        assert not spark.catalog.databaseExists(other)
        assert spark.sql(f"SELECT x FROM {ns}.v").first().x == 1  # the store's base, through the catalog
    finally:
        detach(spark, catalog)
        spark.sql(f"DROP DATABASE IF EXISTS {other} CASCADE")


def test_register_views_replaces_earlier_copies_and_reports_cycles(spark, store, data, ns):
    _stored(store, f"{ns}.v", f"SELECT order_id FROM {data}.orders", ns, [Column("order_id", "long")])
    _stored(store, f"{ns}.same", f"SELECT region FROM {data}.orders", ns, [Column("region", "string")])
    assert register_views(spark, store, ns).unchanged == []
    again = register_views(spark, store, ns)
    assert again.registered == again.unchanged == [f"{ns}.same", f"{ns}.v"]  # identical copies stay as they are
    assert register_views(spark, store, ns, refresh=True).unchanged == []
    store.replace_view(f"{ns}.v", columns=[Column("order_id", "long")],
                       representations=[("spark", f"SELECT order_id FROM {data}.orders WHERE region = 'south'")],
                       default_namespace=ns)
    _stored(store, f"{ns}.ping", "SELECT x FROM pong", ns)
    _stored(store, f"{ns}.pong", "SELECT x FROM ping", ns)

    report = register_views(spark, store, ns)

    assert report.registered == [f"{ns}.same", f"{ns}.v"] and report.unchanged == [f"{ns}.same"]
    assert [(f.identifier, f.condition) for f in report.failed] == [  # in name order
        (f"{ns}.ping", "RECURSIVE_VIEW"), (f"{ns}.pong", "RECURSIVE_VIEW")]
    assert [r.order_id for r in spark.sql(f"SELECT * FROM {ns}.v").collect()] == [2]


def test_register_views_restores_the_namespace_after_an_error(spark, store, ns):
    _stored(store, f"{ns}.broken", "SELECT nope FROM range(3)", ns)
    spark.catalog.setCurrentDatabase("default")
    report = register_views(spark, store, ns)
    assert report.failed[0].condition.startswith("UNRESOLVED_COLUMN")
    assert spark.catalog.currentDatabase() == "default"


def test_register_views_tells_progress_as_each_view_is_settled(spark, store, data, ns):
    _stored(store, f"{ns}.a_top", f"SELECT order_id FROM {ns}.b_base", ns, [Column("order_id", "long")])
    _stored(store, f"{ns}.b_base", f"SELECT order_id FROM {data}.orders", ns, [Column("order_id", "long")])
    _stored(store, f"{ns}.c_missing", "SELECT * FROM no_such_table", ns)
    store.create_view(f"{ns}.d_trino", columns=[], representations=[("trino", "SELECT 1 AS x")], default_namespace=ns)
    _stored(store, f"{ns}.e_ping", "SELECT x FROM f_pong", ns)
    _stored(store, f"{ns}.f_pong", "SELECT x FROM e_ping", ns)
    seen = []

    def progress(done, total):
        seen.append((done, total, spark.catalog.tableExists(f"{ns}.a_top")))

    report = register_views(spark, store, ns, progress=progress)

    outcomes = len(report.registered) + len(report.skipped) + len(report.failed)
    assert outcomes == len(store.list_views(ns)) == 6
    # the view without spark SQL once the store is read, the cycle before any copy is made, then each
    # view as Spark makes its copy or refuses it (b_base before a_top, which reads it): a_top exists
    # from its own call on
    assert seen == [(1, 6, False), (3, 6, False), (4, 6, False), (5, 6, True), (6, 6, True)]
    assert report.registered == [f"{ns}.b_base", f"{ns}.a_top"]

    seen.clear()
    again = register_views(spark, store, ns, progress=progress, prune=True)  # the copies stand: unchanged
    assert again.unchanged == [f"{ns}.b_base", f"{ns}.a_top"] and [d for d, _, _ in seen] == [1, 3, 4, 5, 6]
    assert {t for _, t, _ in seen} == {6}
    calls = []
    assert register_views(spark, store, "nothing_here", progress=lambda *a: calls.append(a)).registered == []
    assert calls == []  # no view, no call


def test_register_views_stops_where_its_progress_raises_with_that_very_error(spark, store, data, ns):
    from py4j.protocol import Py4JError

    for name in ("v1", "v2", "v3"):
        _stored(store, f"{ns}.{name}", f"SELECT order_id FROM {data}.orders", ns, [Column("order_id", "long")])
    spark.catalog.setCurrentDatabase("default")
    # a py4j error or an EngineError of the callback's own is not taken for the engine's failure
    for error in (KeyError("stop"), Py4JError("the callback's own"), EngineError("the callback's own")):
        def progress(done, total, error=error):
            if done == 2:
                raise error

        with pytest.raises(type(error)) as raised:
            register_views(spark, store, ns, progress=progress, refresh=True)
        assert raised.value is error
    assert spark.catalog.currentDatabase() == "default"  # the caller's session is as it was
    # made before it raised: they stay (the session's temporary views, which Spark lists in every database, aside)
    assert sorted(t.name for t in spark.catalog.listTables(ns) if not t.isTemporary) == ["v1", "v2"]
    for bad in (5, "print"):
        with pytest.raises(ValidationError, match="progress must be callable as progress\\(done, total\\)"):
            register_views(spark, store, f"{ns}_nothing_yet", progress=bad)
    assert not spark.catalog.databaseExists(f"{ns}_nothing_yet")


@pytest.mark.parametrize("prune", [False, True])
def test_register_views_passes_over_a_database_dropped_after_the_listing(spark, store, ns, prune):
    """Another driver drops a database between the listing of the session's databases and the reading of
    the copies in it: its views fail to register (their database is gone), the others are unaffected.
    It drops it as register_views changes the catalog in between: pruning drops a stale copy in a
    database it reads first, or, without pruning, a database registering needs is created."""
    other, fresh = f"{ns}z", _name()  # other: read after ns
    _stored(store, f"{ns}.a", "SELECT 1 AS x", ns, columns=[Column("x", "int", nullable=False)])
    _stored(store, f"{ns}.stale", "SELECT 1 AS x", ns, columns=[Column("x", "int", nullable=False)])
    _stored(store, f"{other}.b", "SELECT 2 AS x", other, columns=[Column("x", "int", nullable=False)])
    try:
        assert register_views(spark, store).ok
        store.drop_view(f"{ns}.stale")
        _stored(store, f"{fresh}.c", "SELECT 3 AS x", fresh, columns=[Column("x", "int", nullable=False)])
        event, db, name = ("DropTablePreEvent", ns, "stale") if prune else ("CreateDatabasePreEvent", fresh, None)
        with _meanwhile(spark, event, db, name, f"DROP DATABASE {other} CASCADE") as seen:
            report = register_views(spark, store, prune=prune)
        assert seen[0] == event
        assert report.unchanged == [f"{ns}.a"] and sorted(report.registered) == sorted([f"{fresh}.c", f"{ns}.a"])
        assert report.pruned == ([f"{ns}.stale"] if prune else []) and report.databases_created == [fresh]
        assert [(f.identifier, f.condition, f.action) for f in report.failed] == [
            (f"{other}.b", "SCHEMA_NOT_FOUND", "register")]
    finally:
        for db in (other, fresh):
            spark.sql(f"DROP DATABASE IF EXISTS {db} CASCADE")


@pytest.mark.parametrize("prune", [False, True])
def test_register_views_leaves_a_record_spark_cannot_read_to_itself(spark, store, ns, prune):
    """A view record whose Spark schema is not JSON makes Spark fail to read every view of its database
    at once: the others are read one by one, the damaged copy of a stored view fails to register, and
    a damaged view the store does not hold is never pruned."""
    for name in ("a", "b", "gone"):
        _stored(store, f"{ns}.{name}", "SELECT 1 AS x", ns, columns=[Column("x", "int", nullable=False)])
    assert register_views(spark, store).ok
    store.drop_view(f"{ns}.gone")
    spark.sql(f"CREATE VIEW {ns}.by_hand AS SELECT 1 AS x")
    for name in ("b", "by_hand"):
        _alter_record(spark, ns, name, schema="{not json")

    report = register_views(spark, store, ns, prune=prune)

    assert report.unchanged == [f"{ns}.a"]
    assert [(f.identifier, f.condition) for f in report.failed] == [(f"{ns}.b", "JsonParseException")]
    assert report.pruned == ([f"{ns}.gone"] if prune else [])
    names = {r.viewName for r in spark.sql(f"SHOW VIEWS IN {ns}").collect()}
    assert "by_hand" in names and ("gone" not in names) == prune


def test_register_unknown_namespace_is_empty(spark, store):
    assert register_views(spark, store, "nothing_here").registered == []
    with pytest.raises(ValidationError) as refused:
        register_views(spark, store, "bad..namespace")
    assert str(refused.value) == "bad namespace level '': it must be non-empty without surrounding spaces"
    with pytest.raises(NoSuchViewError) as missing:
        store.load_view("nothing_here.v")
    assert str(missing.value) == "no such view: nothing_here.v"
    assert store.event_count() == 0


# -- fixed defects ---------------------------------------------------------------------------------


def test_register_views_of_a_view_imported_from_the_metastore(spark, store, data, ns):
    spark.sql(f"CREATE DATABASE {ns}")
    spark.sql(f"CREATE VIEW {ns}.hms COMMENT 'from hms' TBLPROPERTIES ('team' = 'ops') AS "
              f"SELECT region FROM {data}.orders")
    import_metastore_views(spark, store, ns)
    assert any(k.startswith("spark.sql.") for k in store.load_view(f"{ns}.hms").properties)
    spark.sql(f"DROP VIEW {ns}.hms")
    report = register_views(spark, store, ns)
    assert report.ok and report.registered == [f"{ns}.hms"], report.failed
    assert spark.sql(f"SELECT count(*) AS n FROM {ns}.hms").first().n == 3
    props = {r.key: r.value for r in spark.sql(f"SHOW TBLPROPERTIES {ns}.hms").collect()}
    assert props["team"] == "ops" and not any(k.startswith("hms.") for k in props)


def test_register_views_restores_a_copy_changed_in_spark(spark, store, ns):
    _stored(store, f"{ns}.z", "SELECT 1 AS x", ns, [Column("x", "int")])
    register_views(spark, store, ns)
    spark.sql(f"ALTER VIEW {ns}.z AS SELECT 2 AS x")  # keeps the fingerprint property
    report = register_views(spark, store, ns)
    assert report.registered == [f"{ns}.z"] and report.unchanged == []
    assert spark.sql(f"SELECT x FROM {ns}.z").first().x == 1
    assert register_views(spark, store, ns).unchanged == [f"{ns}.z"]


def test_register_views_leaves_a_copy_of_sql_with_blanks_around_it_as_it_is(spark, store, ns):
    """Spark keeps the query without the blanks around it: that text is the stored SQL all the same."""
    _stored(store, f"{ns}.v", "\n  SELECT 1 AS x \n\t", ns, [Column("x", "int")])
    assert register_views(spark, store, ns).registered == [f"{ns}.v"]
    assert register_views(spark, store, ns).unchanged == [f"{ns}.v"]


# -- edges found by planting bugs -----------------------------------------------------------------


def test_register_views_follows_changes_of_comments_and_properties_alone(spark, store, ns):
    _stored(store, f"{ns}.v", "SELECT 1 AS x", ns, [Column("x", "int", "old column note")], comment="old")
    assert register_views(spark, store, ns).registered == [f"{ns}.v"]
    store.alter_view(f"{ns}.v", ViewChange.update_comment("new"), ViewChange.set_property("owner", "ops"))
    store.replace_view(f"{ns}.v", columns=[Column("x", "int", "new column note")],
                       representations=[("spark", "SELECT 1 AS x")], default_namespace=ns)
    report = register_views(spark, store, ns)
    assert report.registered == [f"{ns}.v"] and report.unchanged == []
    described = {r.col_name: r for r in spark.sql(f"DESCRIBE TABLE EXTENDED {ns}.v").collect()}
    assert described["x"].comment == "new column note"
    assert described["Comment"].data_type == "new"
    assert {r.key: r.value for r in spark.sql(f"SHOW TBLPROPERTIES {ns}.v").collect()}["owner"] == "ops"


def test_register_views_orders_by_names_read_in_the_default_namespace(spark, store, ns):
    """A view whose default namespace is not its own reads a bare name there: that view goes first."""
    a, b = f"pa{ns}", f"pb{ns}"  # a sorts before b
    _stored(store, f"{a}.top", "SELECT x FROM base", b, [Column("x", "int")])  # reads b.base, unqualified
    _stored(store, f"{b}.base", "SELECT 1 AS x", b, [Column("x", "int")])
    try:
        report = register_views(spark, store)
        assert report.ok, report.failed
        assert report.registered == [f"{b}.base", f"{a}.top"]
        assert spark.sql(f"SELECT x FROM {a}.top").first().x == 1
    finally:
        spark.catalog.setCurrentDatabase("default")
        for db in (a, b):
            spark.sql(f"DROP DATABASE IF EXISTS {db} CASCADE")


def test_register_views_reads_a_default_namespace_in_capitals_as_its_database(spark, store, ns):
    """The store keeps a default namespace as written, Spark names the database in lower case: a_top,
    which reads b_base there, went first and failed (TABLE_OR_VIEW_NOT_FOUND), and the database was
    reported created in both spellings, and in capitals again on every run."""
    _stored(store, f"{ns}.a_top", "SELECT x FROM b_base", ns.upper(), [Column("x", "int")])
    _stored(store, f"{ns}.b_base", "SELECT 1 AS x", ns, [Column("x", "int")])
    report = register_views(spark, store, ns)
    assert report.ok, report.failed
    assert report.registered == [f"{ns}.b_base", f"{ns}.a_top"] and report.databases_created == [ns]
    assert spark.sql(f"SELECT x FROM {ns}.a_top").first().x == 1
    again = register_views(spark, store, ns)
    assert again.unchanged == [f"{ns}.b_base", f"{ns}.a_top"] and again.databases_created == []


def test_register_views_orders_by_a_name_that_a_cte_elsewhere_also_has(spark, store, ns):
    """The outer `b_base` is the stored view; the CTE of that name lives only in the subquery. It was
    taken for the CTE, so a_top went first and failed (TABLE_OR_VIEW_NOT_FOUND)."""
    _stored(store, f"{ns}.a_top", "SELECT x FROM b_base UNION ALL "
                                  "SELECT x FROM (WITH b_base AS (SELECT 2 AS x) SELECT x FROM b_base) t", ns,
            [Column("x", "int")])
    _stored(store, f"{ns}.b_base", "SELECT 1 AS x", ns, [Column("x", "int")])
    report = register_views(spark, store, ns)
    assert report.ok, report.failed
    assert report.registered == [f"{ns}.b_base", f"{ns}.a_top"]
    assert sorted(r.x for r in spark.sql(f"SELECT x FROM {ns}.a_top").collect()) == [1, 2]


def test_register_views_finds_names_as_words_of_the_text_in_any_case_and_quoting(spark, store, ns):
    """The texts are searched for the stored names as words: backquoted, upper case, qualified."""
    _stored(store, f"{ns}.a_top", f"SELECT x FROM `B_BASE` UNION ALL SELECT x FROM {ns}.C_Base", ns,
            [Column("x", "int")])
    _stored(store, f"{ns}.b_base", f"SELECT x FROM `{ns}`.`c_base`", ns, [Column("x", "int")])
    _stored(store, f"{ns}.c_base", "SELECT 1 AS x", ns, [Column("x", "int")])
    report = register_views(spark, store, ns)
    assert report.ok, report.failed
    assert report.registered == [f"{ns}.c_base", f"{ns}.b_base", f"{ns}.a_top"]
    assert [r.x for r in spark.sql(f"SELECT x FROM {ns}.a_top").collect()] == [1, 1]


def _registered(spark, store, ns, *views):
    """Store views of one int column ``x`` in ``ns`` (name, SQL) and register them: the report, all ok."""
    for name, text in views:
        _stored(store, f"{ns}.{name}", text, ns, [Column("x", "int")])
    report = register_views(spark, store, ns)
    assert report.ok, report.failed
    return report


def test_register_views_waits_for_every_view_a_view_reads(spark, store, ns):
    """c_top reads two stored views: it sorts between them, and waits for both (Spark refuses it before)."""
    report = _registered(spark, store, ns, ("b_base", "SELECT 1 AS x"),
                         ("c_top", "SELECT x FROM b_base UNION ALL SELECT x FROM d_base"), ("d_base", "SELECT 2 AS x"))
    assert report.registered == [f"{ns}.b_base", f"{ns}.d_base", f"{ns}.c_top"]
    assert sorted(r.x for r in spark.sql(f"SELECT x FROM {ns}.c_top").collect()) == [1, 2]


def test_register_views_orders_by_a_name_given_the_session_catalog(spark, store, ns):
    report = _registered(spark, store, ns, ("a_top", f"SELECT x FROM Spark_Catalog.{ns}.b_base"),
                         ("b_base", "SELECT 1 AS x"))
    assert report.registered == [f"{ns}.b_base", f"{ns}.a_top"]


def test_register_views_reads_a_two_part_name_as_database_and_view_whatever_the_stores_catalog(spark, ns, tmp_path):
    """Only a name of three parts or more starts with a catalog: the database named like the store's
    catalog (the views' default catalog, no Spark catalog) is a database, as Spark reads it."""
    named = ViewStore(tmp_path / "named.db", catalog=ns)
    try:
        _stored(named, f"{ns}.a_top", f"SELECT x FROM {ns}.b_base", ns, [Column("x", "int")])
        _stored(named, f"{ns}.b_base", "SELECT 1 AS x", ns, [Column("x", "int")])
        report = register_views(spark, named, ns)
    finally:
        named.close()
    assert report.ok, report.failed
    assert report.registered == [f"{ns}.b_base", f"{ns}.a_top"]
    assert [r.x for r in spark.sql(f"SELECT x FROM {ns}.a_top").collect()] == [1]


def test_register_views_registers_views_of_one_default_namespace_together(spark, store, ns):
    """Views ready at the same time go by default namespace (fewer switches of the current one), then by name."""
    other = _name()
    try:
        for name, default in (("a", other), ("b", ns), ("c", other)):
            _stored(store, f"{ns}.{name}", "SELECT 1 AS x", default, [Column("x", "int")])
        report = register_views(spark, store, ns)
        assert report.ok, report.failed
        together = [[f"{ns}.a", f"{ns}.c"], [f"{ns}.b"]]
        assert report.registered == sum(together if other < ns else together[::-1], [])
    finally:
        spark.sql(f"DROP DATABASE IF EXISTS {other} CASCADE")


def test_register_views_puts_a_table_query_after_the_views_it_could_read(spark, store, ns):
    """sqlglot reads `TABLE b_base` as the column TABLE aliased b_base (and `(TABLE b_base)` as a table
    named TABLE): a_top had no dependency, went first and failed (TABLE_OR_VIEW_NOT_FOUND)."""
    report = _registered(spark, store, ns, ("a_top", "TABLE b_base"),
                         ("a_two", "SELECT * FROM (TABLE b_base) UNION ALL SELECT 2 AS x"), ("b_base", "SELECT 1 AS x"))
    assert report.registered == [f"{ns}.b_base", f"{ns}.a_top", f"{ns}.a_two"]
    assert [r.x for r in spark.sql(f"SELECT x FROM {ns}.a_top").collect()] == [1]
    assert sorted(r.x for r in spark.sql(f"SELECT x FROM {ns}.a_two").collect()) == [1, 2]


def test_register_views_puts_a_view_that_reads_a_table_query_after_it(spark, store, ns):
    """b_mid reads a_top, whose SQL sqlglot cannot read, and c_top reads b_mid: they went first, as
    views a_top was no dependency of, and failed (TABLE_OR_VIEW_NOT_FOUND)."""
    report = _registered(spark, store, ns, ("a_top", "TABLE d_base"), ("b_mid", "SELECT x FROM a_top"),
                         ("c_top", "SELECT x FROM b_mid"), ("d_base", "SELECT 1 AS x"))
    assert report.registered == [f"{ns}.d_base", f"{ns}.a_top", f"{ns}.b_mid", f"{ns}.c_top"]
    assert [r.x for r in spark.sql(f"SELECT x FROM {ns}.c_top").collect()] == [1]


def test_register_views_groups_views_whose_sql_the_parser_cannot_read_by_default_namespace(spark, store, ns):
    """As the views it reads: b_two's default namespace sorts first, so b_two goes before a_one."""
    other = "z" + ns  # sorts after ns
    try:
        _stored(store, f"{ns}.a_one", f"TABLE {ns}.d_base", other, [Column("x", "int")])
        _stored(store, f"{ns}.b_two", f"TABLE {ns}.d_base", ns, [Column("x", "int")])
        _stored(store, f"{ns}.d_base", "SELECT 1 AS x", ns, [Column("x", "int")])
        report = register_views(spark, store, ns)
        assert report.ok, report.failed
        assert report.registered == [f"{ns}.d_base", f"{ns}.b_two", f"{ns}.a_one"]
    finally:
        spark.sql(f"DROP DATABASE IF EXISTS {other} CASCADE")


def test_register_views_keeps_backslashes_in_comments_and_properties(spark, store, ns):
    text = r"C:\temp\new 50\% \'q\'"
    _stored(store, f"{ns}.v", "SELECT 1 AS x", ns, [Column("x", "int", text)], comment=text,
            properties={"path": text})
    assert register_views(spark, store, ns).ok
    described = {r.col_name: r for r in spark.sql(f"DESCRIBE TABLE EXTENDED {ns}.v").collect()}
    assert described["x"].comment == text
    assert described["Comment"].data_type == text
    assert {r.key: r.value for r in spark.sql(f"SHOW TBLPROPERTIES {ns}.v").collect()}["path"] == text


def test_register_views_accounts_for_a_view_in_a_two_level_namespace(spark, store, ns):
    _stored(store, f"{ns}.v", "SELECT 1 AS x", ns, [Column("x", "int")])
    _stored(store, f"{ns}.inner.w", "SELECT 1 AS x", f"{ns}.inner", [Column("x", "int")])
    seen = []
    report = register_views(spark, store, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(1, 2), (2, 2)]  # the view whose database Spark would not create, then the other
    accounted = (set(report.registered) | {f.identifier for f in report.failed}
                 | {s.identifier for s in report.skipped})
    assert accounted == {f"{ns}.v", f"{ns}.inner.w"}
    # Spark's reason why the database cannot be made, not a copy's failure in a database not found
    assert not report.ok and [(f.identifier, f.condition) for f in report.failed] == [
        (f"{ns}.inner.w", "REQUIRES_SINGLE_PART_NAMESPACE")]


# -- inside a store transaction ----------------------------------------------------------------------


def test_register_views_from_two_threads_at_once_both_succeed(spark, store, ns):
    """Two threads of the driver refresh the same views at once: each report is whole and clean
    (they take turns), where Spark's CREATE OR REPLACE VIEW of one name from two sessions collided
    (TABLE_OR_VIEW_ALREADY_EXISTS, TABLE_OR_VIEW_NOT_FOUND)."""
    import threading

    for i in range(12):
        _stored(store, f"{ns}.v{i}", f"SELECT {i} AS x", ns)
    register_views(spark, store, ns)
    start, reports = threading.Barrier(2), []

    def refresh():
        start.wait()
        for _ in range(4):
            try:
                reports.append(register_views(spark, store, ns, refresh=True))
            except Exception as error:  # noqa: BLE001 - reported below
                reports.append(error)

    threads = [threading.Thread(target=refresh) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert len(reports) == 8
    assert all(not isinstance(r, Exception) and r.ok and len(r.registered) == 12 for r in reports), \
        [r if isinstance(r, Exception) else r.failed for r in reports]
    assert [spark.sql(f"SELECT x FROM {ns}.v{i}").first().x for i in range(12)] == list(range(12))


def test_register_views_waits_for_view_ddl_through_sql(spark, store, ns):
    """register_views in one thread while sql() in another has made the session copy of a CREATE
    OR REPLACE VIEW but not yet written the store: register_views waits for its turn, so the copy it
    makes is the store's new definition; it made the store's old one, which the session then kept
    while the store held the new. Here sql()'s write waits for another connection's lock, and then
    register_views starts, through a ViewStore of its own on the file, and is given 3 s."""
    import threading

    _stored(store, f"{ns}.v", "SELECT 1 AS x", ns)
    register_views(spark, store, ns)
    outcome = {}

    def registering():
        try:
            with ViewStore(store.path, actor="registrar") as own:
                outcome["register"] = register_views(spark, own, ns, refresh=True)
        except Exception as error:  # noqa: BLE001 - reported below
            outcome["register"] = error

    def register_meanwhile():
        outcome["thread"] = thread = threading.Thread(target=registering)
        thread.start()
        thread.join(timeout=3)

    with _while_its_write_waits(store, register_meanwhile) as ran:
        sql(spark, store, f"CREATE OR REPLACE VIEW {ns}.v AS SELECT 2 AS x")
    outcome["thread"].join(timeout=60)
    assert ran == [True]
    assert outcome["register"].ok and outcome["register"].registered == [f"{ns}.v"], outcome
    assert store.load_view(f"{ns}.v").sql_for("spark") == "SELECT 2 AS x"
    assert spark.sql(f"SELECT x FROM {ns}.v").first().x == 2


def test_register_views_gives_up_after_the_wait_for_another_threads_turn(spark, store, ns, monkeypatch):
    """A thread that holds the turn too long makes register_views raise ConcurrencyError (busy),
    with nothing done, as sql() does."""
    import viewstore.spark.catalog_plugin as plugin
    import viewstore.spark.session as session
    from viewstore import ConcurrencyError

    _stored(store, f"{ns}.v", "SELECT 1 AS x", ns)
    monkeypatch.setattr(session, "DDL_TURN_WAIT_S", 0.2)
    with _ddl_turn_held_elsewhere(), pytest.raises(ConcurrencyError, match="register_views") as raised:
        register_views(spark, store, ns)
    assert raised.value.busy
    assert not spark.catalog.databaseExists(ns)
    assert plugin.TRANSACTION_WAIT_S == 10.0  # the catalog bridge's wait is its own
