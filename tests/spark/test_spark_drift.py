"""viewstore.spark.drift (check_views) against the real (Hive-enabled) test SparkSession."""

from __future__ import annotations

import json
import uuid

import pytest
from pyspark.sql import types as T

from viewstore import Column, ValidationError
from viewstore.spark import attach, check_views, create_view, detach, import_metastore_views, sql

from spark_views import _stored

pytestmark = pytest.mark.spark


# -- check_views -----------------------------------------------------------------------------------


def test_check_views_finds_drift_after_a_table_changes(spark, store, ns):
    spark.sql(f"CREATE DATABASE {ns}")
    spark.sql(f"CREATE TABLE {ns}.src (id INT, name STRING) USING parquet")
    spark.sql(f"USE {ns}")
    try:
        create_view(spark, store, f"{ns}.everything", "SELECT * FROM src")
        create_view(spark, store, f"{ns}.ids", "SELECT id FROM src")
        create_view(spark, store, f"{ns}.names", "SELECT name FROM src")
    finally:
        spark.catalog.setCurrentDatabase("default")
    store.create_view(f"{ns}.trino", columns=[], representations=[("trino", "SELECT 1 AS x")], default_namespace=ns)
    report = check_views(spark, store)
    assert report.ok and report.raise_for_drift() is report  # for pipelines: check_views(...).raise_for_drift()

    spark.sql(f"DROP TABLE {ns}.src")
    spark.sql(f"CREATE TABLE {ns}.src (id BIGINT, label STRING, extra DOUBLE) USING parquet")
    report = check_views(spark, store)

    status = {v.identifier: v for v in report.views}
    assert status[f"{ns}.everything"].status == "drifted"
    assert list(status) == [f"{ns}.everything", f"{ns}.ids", f"{ns}.names"]
    assert status[f"{ns}.everything"].problems == (
        "2 stored columns, 3 analyzed", "column 'id': type int is now long", "column 2: name 'name' is now 'label'")
    assert status[f"{ns}.ids"].problems == ("column 'id': type int is now long",)
    (unresolved,) = status[f"{ns}.names"].problems  # Spark's explanation (the entry names the view)
    assert unresolved.startswith(
        "[UNRESOLVED_COLUMN.WITH_SUGGESTION] A column, variable, or function parameter with name `name` cannot be "
        "resolved. Did you mean one of the following? [`id`, `label`, `extra`]. SQLSTATE: 42703"), unresolved
    assert status[f"{ns}.names"].status == "broken"
    assert status[f"{ns}.names"].condition.startswith("UNRESOLVED_COLUMN")
    assert report.skipped == [f"{ns}.trino"]
    assert not report.ok
    with pytest.raises(ValidationError) as raised:
        report.raise_for_drift()
    assert str(raised.value) == (
        f"3 view(s) drifted from their stored columns:\n{ns}.everything (drifted): 2 stored columns, 3 analyzed; "
        f"column 'id': type int is now long; column 2: name 'name' is now 'label'\n{ns}.ids (drifted): column 'id': "
        f"type int is now long\n{ns}.names (broken): {unresolved}")

    spark.sql(f"DROP TABLE {ns}.src")
    report = check_views(spark, store)
    assert {v.condition for v in report.views} == {"TABLE_OR_VIEW_NOT_FOUND"}


def test_check_views_sees_a_required_column_become_nullable(spark, store, ns):
    """Readers rely on a column stored as not null; the other way round, and comments, are no drift."""
    spark.sql(f"CREATE DATABASE {ns}")
    spark.sql(f"CREATE VIEW {ns}.src AS SELECT 1 AS id, named_struct('a', 1) AS s, array(1) AS l, "
              f"map('k', 1) AS m, CAST(NULL AS INT) AS maybe")
    view = create_view(spark, store, f"{ns}.v", f"SELECT id, s, l, m, maybe FROM {ns}.src",
                       column_comments={"id": "the id, a comment Spark does not derive"})
    assert [c.nullable for c in view.columns] == [False, False, False, False, True]
    (entry,) = check_views(spark, store, ns).views
    assert entry.status == "ok" and entry.stored == entry.analyzed == (
        "id int not null", "s struct<a: int not null> not null", "l list<int not null> not null",
        "m map<string, int not null> not null", "maybe int")

    spark.sql(f"CREATE OR REPLACE VIEW {ns}.src AS SELECT CAST(NULL AS INT) AS id, "
              f"named_struct('a', CAST(NULL AS INT)) AS s, array(CAST(NULL AS INT)) AS l, "
              f"map('k', CAST(NULL AS INT)) AS m, 2 AS maybe")
    (entry,) = check_views(spark, store, ns).views

    assert entry.status == "drifted"
    assert entry.problems == ("column 'id': not null is now nullable", "column 's': s.a not null is now nullable",
                              "column 'l': l.element not null is now nullable",
                              "column 'm': m.value not null is now nullable")
    assert entry.analyzed == ("id int", "s struct<a: int> not null", "l list<int> not null",
                              "m map<string, int> not null", "maybe int not null")


def test_check_views_follows_nullability_into_a_struct_a_list_or_a_map_value_of_a_struct(spark, store, ns):
    """A required field deeper down that may now be null has drifted (s.o.a, l.element.a, m.value.a);
    a nullable field, element or value that is now required has not (b, e.element, v.value)."""
    spark.sql(f"CREATE DATABASE {ns}")
    inner = "named_struct('a', {a}, 'b', {b})"
    columns = "named_struct('o', {s}) AS s, array({s}) AS l, map('k', {s}) AS m, array({n}) AS e, map('k', {n}) AS v"
    before = inner.format(a="1", b="CAST(NULL AS INT)")
    spark.sql(f"CREATE VIEW {ns}.src AS SELECT " + columns.format(s=before, n="CAST(NULL AS INT)"))
    create_view(spark, store, f"{ns}.v", f"SELECT s, l, m, e, v FROM {ns}.src")
    after = inner.format(a="CAST(NULL AS INT)", b="2")
    spark.sql(f"CREATE OR REPLACE VIEW {ns}.src AS SELECT " + columns.format(s=after, n="2"))
    report = check_views(spark, store, ns)
    (entry,) = report.views
    assert (entry.status, entry.problems) == ("drifted", (
        "column 's': s.o.a not null is now nullable", "column 'l': l.element.a not null is now nullable",
        "column 'm': m.value.a not null is now nullable"))
    assert not report.ok  # a drifted view alone, none broken
    with pytest.raises(ValidationError) as raised:
        report.raise_for_drift()
    assert str(raised.value) == (f"1 view(s) drifted from their stored columns:\n{ns}.v (drifted): "
                                 + "; ".join(entry.problems))


def test_check_views_reports_a_broken_view_from_raise_for_drift(spark, store, ns):
    spark.sql(f"CREATE DATABASE {ns}")
    _stored(store, f"{ns}.v", "SELECT nope FROM range(1)", ns, [Column("nope", "long")])
    report = check_views(spark, store, ns)
    assert [v.status for v in report.views] == ["broken"]
    with pytest.raises(ValidationError, match=rf"^1 view\(s\) drifted from their stored columns:\n{ns}\.v \(broken\): "
                                              r"\[UNRESOLVED_COLUMN\.WITH_SUGGESTION\] A column, variable, or function "
                                              r"parameter with name `nope` cannot be resolved\."):
        report.raise_for_drift()  # the view's name once, then Spark's reason


def test_check_views_counts_in_its_progress_a_view_dropped_while_it_checks(spark, store, ns):
    spark.sql(f"CREATE DATABASE {ns}")
    for name in ("a", "b", "c"):
        _stored(store, f"{ns}.{name}", "SELECT 1 AS x", ns, [Column("x", "int", nullable=False)])
    seen = []

    def drop_the_next(done, total):
        seen.append((done, total))
        if done == 1:
            store.drop_view(f"{ns}.b")  # as another process may, between the listing and its turn

    report = check_views(spark, store, ns, progress=drop_the_next)
    assert seen == [(1, 3), (2, 3), (3, 3)]
    assert [v.identifier for v in report.views] == [f"{ns}.a", f"{ns}.c"] and report.ok


def test_check_views_compares_the_querys_own_names_under_a_column_list(spark, store, data, ns):
    sql(spark, store, f"CREATE VIEW {ns}.renamed (a, b) AS SELECT order_id, region FROM {data}.orders")
    report = check_views(spark, store, ns)
    assert report.ok, report.views


def test_check_views_tells_progress_for_every_view_listed(spark, store, data, ns):
    spark.sql(f"CREATE DATABASE {ns}")
    _stored(store, f"{ns}.a_ok", f"SELECT order_id FROM {data}.orders", ns, [Column("order_id", "long")])
    _stored(store, f"{ns}.b_broken", "SELECT nope FROM range(1)", ns, [Column("nope", "long")])
    store.create_view(f"{ns}.c_trino", columns=[], representations=[("trino", "SELECT 1 AS x")], default_namespace=ns)
    _stored(store, f"{ns}.d_drifted", f"SELECT region FROM {data}.orders", ns, [Column("region", "int")])
    seen = []
    report = check_views(spark, store, ns, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(1, 4), (2, 4), (3, 4), (4, 4)]
    assert len(report.views) + len(report.skipped) == 4
    assert [v.status for v in report.views] == ["ok", "broken", "drifted"] and report.skipped == [f"{ns}.c_trino"]

    def stop(done, total):
        if done == 2:
            raise ZeroDivisionError("enough")

    with pytest.raises(ZeroDivisionError, match="enough"):
        check_views(spark, store, ns, progress=stop)
    with pytest.raises(ValidationError, match=r"^progress must be callable as progress\(done, total\), not True$"):
        check_views(spark, store, ns, progress=True)
    assert check_views(spark, store, "nothing_here", progress=lambda *a: seen.append(a)).views == []
    assert len(seen) == 4  # no view, no call


def test_check_views_of_a_missing_default_namespace_is_broken(spark, store):
    store.create_view("nowhere_ns.v", columns=[Column("x", "int")], representations=[("spark", "SELECT 1 AS x")],
                      default_namespace="nowhere_ns")
    (entry,) = check_views(spark, store).views
    assert entry.status == "broken" and entry.condition == "SCHEMA_NOT_FOUND"
    (problem,) = entry.problems  # Spark's explanation
    assert problem.startswith("[SCHEMA_NOT_FOUND] The schema `spark_catalog`.`nowhere_ns` cannot be found.")


def test_check_views_leads_a_failure_without_a_condition_in_its_message_with_its_java_class(spark, store):
    """A view's default catalog that Spark cannot load fails before the query is analyzed, with an
    error whose message does not start with its condition, as Spark's own do: here a JDBC catalog
    without its url, a plain Java IllegalArgumentException. Its class leads the reason, as the
    condition leads Spark's."""
    catalog = "no_url_" + uuid.uuid4().hex[:8]
    spark.conf.set(f"spark.sql.catalog.{catalog}",
                   "org.apache.spark.sql.execution.datasources.v2.jdbc.JDBCTableCatalog")
    try:
        store.create_view("default.v", columns=[Column("x", "int")], representations=[("spark", "SELECT 1 AS x")],
                          default_namespace="default", default_catalog=catalog)
        (entry,) = check_views(spark, store).views
    finally:
        spark.conf.unset(f"spark.sql.catalog.{catalog}")
    assert (entry.status, entry.condition) == ("broken", "IllegalArgumentException")
    assert entry.problems == ("[IllegalArgumentException] requirement failed: Option 'url' is required.",)


# -- fixed defects ---------------------------------------------------------------------------------


def test_check_views_reads_the_recorded_query_column_names(spark, store, data, ns):
    sql(spark, store, f"CREATE VIEW {ns}.v1 (order_id, amt) AS SELECT order_id AS id, amount FROM {data}.orders")
    sql(spark, store, f"CREATE VIEW {ns}.v2 (a, b) AS SELECT order_id AS `x,y`, region FROM {data}.orders")
    spark.sql(f"CREATE VIEW {ns}.hms (order_id, amt) AS SELECT order_id AS id, amount FROM {data}.orders")
    spark.sql(f"CREATE VIEW {ns}.hms_one (n) AS SELECT order_id AS id FROM {data}.orders")  # one column
    assert [i.identifier for i in import_metastore_views(spark, store, ns).imported] == [f"{ns}.hms", f"{ns}.hms_one"]
    report = check_views(spark, store, ns)
    assert report.ok, report.views
    assert len(report.views) == 4


# -- edges found by planting bugs -----------------------------------------------------------------


def test_check_views_sees_a_decimal_precision_or_scale_change(spark, store, ns):
    spark.sql(f"CREATE DATABASE {ns}")
    spark.sql(f"CREATE TABLE {ns}.src (amount DECIMAL(10,2)) USING parquet")
    create_view(spark, store, f"{ns}.amounts", f"SELECT amount FROM {ns}.src")
    assert check_views(spark, store, ns).ok
    spark.sql(f"DROP TABLE {ns}.src")
    spark.sql(f"CREATE TABLE {ns}.src (amount DECIMAL(12,4)) USING parquet")
    (entry,) = check_views(spark, store, ns).views
    assert entry.status == "drifted"
    assert entry.problems == ("column 'amount': type decimal(10,2) is now decimal(12,4)",)


@pytest.mark.parametrize("before, after, problem", [
    # a changed type is named alone when the column may be null too
    ("1 AS id", "CAST(NULL AS BIGINT) AS id", "column 'id': type int is now long"),
    ("named_struct('a', 1) AS s", "named_struct('b', 1) AS s",  # a struct field renamed
     "column 's': type struct<a: int not null> is now struct<b: int not null>"),
    ("map(named_struct('a', 1), 2) AS m", "map(named_struct('a', CAST(NULL AS INT)), 2) AS m",
     "column 'm': m.key.a not null is now nullable"),
    # fewer columns analyzed than stored is drift, even where those left match
    ("1 AS a, 2 AS b", "1 AS a", "2 stored columns, 1 analyzed"),
], ids=["type and nullability", "struct field renamed", "a map key's field nullable", "a column gone"])
def test_check_views_names_what_changed_in_a_column_of_the_view_it_reads(spark, store, ns, before, after, problem):
    spark.sql(f"CREATE DATABASE {ns}")
    spark.sql(f"CREATE VIEW {ns}.src AS SELECT {before}")
    create_view(spark, store, f"{ns}.v", f"SELECT * FROM {ns}.src")
    spark.sql(f"CREATE OR REPLACE VIEW {ns}.src AS SELECT {after}")
    (entry,) = check_views(spark, store, ns).views
    assert entry.status == "drifted" and entry.problems == (problem,)


def test_check_views_sees_a_change_of_a_spark_type_the_iceberg_type_hides(spark, store, ns):
    """A TINYINT or a collation is kept beside the Iceberg columns (``spark.schema``) and is what
    Spark reads the view as: a table column that became INT, or lost its collation, changes the
    view although its Iceberg types stay (int, string). Reading the copy now fails. A CHAR or
    VARCHAR length is no Spark type of a query's output: no drift."""
    spark.sql(f"CREATE DATABASE {ns}")
    spark.sql(f"CREATE TABLE {ns}.src USING parquet AS SELECT CAST(1 AS TINYINT) AS n, "
              f"'x' COLLATE UTF8_LCASE AS c, CAST(2 AS SMALLINT) AS k")
    sql(spark, store, f"CREATE VIEW {ns}.v AS SELECT n, c, k FROM {ns}.src")
    # the schema Spark hands its catalog names CHAR(5) and VARCHAR(10), in an array and a map too; its
    # analysis says string
    spark.sql(f"CREATE TABLE {ns}.sized (c CHAR(5), v VARCHAR(10), a ARRAY<VARCHAR(3)>, m MAP<VARCHAR(2), CHAR(1)>) "
              f"USING parquet")
    catalog = attach(spark, store, name=f"{ns}vs")
    try:
        spark.sql(f"CREATE VIEW {catalog}.{ns}.sized AS SELECT c, v, a, m FROM spark_catalog.{ns}.sized")
    finally:
        detach(spark, catalog)
    assert all("spark.schema" in store.load_view(f"{ns}.{name}").summary for name in ("v", "sized"))
    assert check_views(spark, store, ns).ok
    spark.sql(f"DROP TABLE {ns}.src")
    spark.sql(f"CREATE TABLE {ns}.src USING parquet AS SELECT 1000 AS n, 'x' AS c, CAST(2 AS SMALLINT) AS k")
    with pytest.raises(Exception, match="CAST_OVERFLOW"):
        spark.sql(f"SELECT n FROM {ns}.v").collect()

    entries = {v.identifier: v for v in check_views(spark, store, ns).views}

    assert entries[f"{ns}.sized"].status == "ok"
    entry = entries[f"{ns}.v"]
    assert entry.status == "drifted"
    assert entry.problems == ("column 'n': Spark type tinyint is now int",
                              "column 'c': Spark type string collate UTF8_LCASE is now string")
    assert entry.stored == entry.analyzed == ("n int", "c string", "k int")


def test_check_views_compares_names_in_any_case_as_spark_resolves_them(spark, store, ns):
    """Spark's names are case-insensitive: a stored ``Region`` is the query's ``region``."""
    spark.sql(f"CREATE DATABASE {ns}")  # the default namespace
    _stored(store, f"{ns}.v", "SELECT 'north' AS region", ns, [Column("Region", "string", nullable=False)])
    report = check_views(spark, store, ns)
    assert report.ok, report.views


def test_check_views_compares_every_column_when_the_recorded_query_names_are_fewer(spark, store, ns):
    """Query column names recorded for fewer columns than the view stores are not the query's: the
    stored names are compared then, and every column with them."""
    spark.sql(f"CREATE DATABASE {ns}")  # the default namespace
    _stored(store, f"{ns}.v", "SELECT 1 AS a, 2 AS b", ns,
            [Column("a", "int", nullable=False), Column("b", "string", nullable=False)],
            summary={"spark.query-column-names": '["a"]'})
    [drift] = check_views(spark, store, ns).views
    assert drift.problems == ("column 'b': type string is now int",)


@pytest.mark.parametrize("properties", [
    {"view.query.out.numCols": "2", "view.query.out.col.0": "id"},
    {"view.query.out.numCols": "two", "view.query.out.col.0": "id", "view.query.out.col.1": "n"},
], ids=["a name missing", "no count"])
def test_check_views_compares_the_stored_names_when_spark_s_query_column_properties_are_incomplete(
        spark, store, ns, properties):
    """Spark's view.query.out properties without a name for every column, or without a count, name no
    query columns: the stored names are compared (a missing name or a count of letters raised)."""
    spark.sql(f"CREATE DATABASE {ns}")  # the default namespace
    _stored(store, f"{ns}.v", "SELECT 1 AS a, 2 AS b", ns,
            [Column("a", "int", nullable=False), Column("b", "int", nullable=False)], properties=properties)
    report = check_views(spark, store, ns)
    assert report.ok, report.views


def test_check_views_reports_a_column_of_a_type_iceberg_cannot_hold_as_broken(spark, store, ns):
    """Spark analyzes the query, but an interval column has no Iceberg type to compare: that view is
    broken (no Spark condition), and the others are checked."""
    spark.sql(f"CREATE DATABASE {ns}")  # the default namespace
    _stored(store, f"{ns}.a", "SELECT INTERVAL '1' DAY AS d", ns, [Column("d", "string")])
    _stored(store, f"{ns}.b", "SELECT 1 AS x", ns, [Column("x", "int", nullable=False)])
    report = check_views(spark, store, ns)
    assert [(v.identifier, v.status, v.condition) for v in report.views] == [
        (f"{ns}.a", "broken", None), (f"{ns}.b", "ok", None)]
    assert report.views[0].problems == ("column 'd': Spark type interval day has no Iceberg counterpart",)
    assert report.views[0].analyzed == ()


def test_check_views_analyzes_under_the_sql_configs_recorded_with_the_view(spark, store, ns):
    """Under the recorded spark.sql.timestampType=TIMESTAMP_NTZ a timestamp literal is a timestamp
    without time zone (Iceberg's timestamp); under the session's default it is Spark's TIMESTAMP."""
    spark.sql(f"CREATE DATABASE {ns}")  # the default namespace
    query = "SELECT TIMESTAMP'2026-01-01 00:00:00' AS t"
    assert spark.sql(query).schema["t"].dataType == T.TimestampType()  # the session's own configs
    _stored(store, f"{ns}.v", query, ns, [Column("t", "timestamp", nullable=False)],
            summary={"spark.sql-configs": json.dumps({"spark.sql.timestampType": "TIMESTAMP_NTZ"})})
    report = check_views(spark, store, ns)
    assert report.ok, report.views


def test_check_views_report_counts_each_status_once_and_keeps_the_skipped_in_its_dict(spark, store, ns):
    spark.sql(f"CREATE DATABASE {ns}")
    spark.sql(f"CREATE TABLE {ns}.src (id INT, name STRING) USING parquet")
    create_view(spark, store, f"{ns}.fine", "SELECT 1 AS one")
    create_view(spark, store, f"{ns}.ids", f"SELECT id FROM {ns}.src")
    create_view(spark, store, f"{ns}.names", f"SELECT name FROM {ns}.src")
    store.create_view(f"{ns}.trino", columns=[], representations=[("trino", "SELECT 1 AS x")], default_namespace=ns)
    spark.sql(f"DROP TABLE {ns}.src")
    spark.sql(f"CREATE TABLE {ns}.src (id BIGINT) USING parquet")

    report = check_views(spark, store, ns)

    assert [(v.identifier, v.status) for v in report.views] == [
        (f"{ns}.fine", "ok"), (f"{ns}.ids", "drifted"), (f"{ns}.names", "broken")]
    assert str(report) == "3 checked: 1 ok, 1 drifted, 1 broken"
    as_dict = report.to_dict()
    assert as_dict["ok"] is False and as_dict["skipped"] == [f"{ns}.trino"]
    assert [(v["identifier"], v["status"]) for v in as_dict["views"]] == [
        (f"{ns}.fine", "ok"), (f"{ns}.ids", "drifted"), (f"{ns}.names", "broken")]
    assert as_dict["views"][2]["condition"].startswith("UNRESOLVED_COLUMN")
