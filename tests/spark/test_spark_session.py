"""viewstore.spark.session against the real (Hive-enabled) test SparkSession."""

from __future__ import annotations

import datetime as dt
import json
import logging
import uuid

import pytest
from pyspark.sql import types as T

from viewstore import (Column, EngineError, NoSuchViewError, SQLRepresentation, ValidationError, ViewAlreadyExistsError,
                       ViewChange, ViewStore, ViewStoreError, signals)
from viewstore.spark import (attach, check_views, create_view, detach, events_dataframe, import_metastore_views,
                            register_views, sql)
from viewstore.spark.register import table_references

pytestmark = pytest.mark.spark

ORDERS = """
CREATE TABLE {db}.orders USING parquet AS
SELECT * FROM VALUES
  (1L, DATE'2026-11-01', 'north', CAST(10.50 AS DECIMAL(10,2)), array(named_struct('sku', 'a', 'qty', 1)),
   map('channel', 'web'), TIMESTAMP'2026-11-01 09:00:00', TIMESTAMP_NTZ'2026-11-01 09:00:00'),
  (2L, DATE'2026-11-01', 'south', CAST(20.00 AS DECIMAL(10,2)), array(named_struct('sku', 'b', 'qty', 2)),
   map('channel', 'shop'), TIMESTAMP'2026-11-01 10:00:00', TIMESTAMP_NTZ'2026-11-01 10:00:00'),
  (3L, DATE'2026-11-02', 'north', CAST(30.25 AS DECIMAL(10,2)), array(named_struct('sku', 'a', 'qty', 3)),
   map('channel', 'web'), TIMESTAMP'2026-11-02 11:00:00', TIMESTAMP_NTZ'2026-11-02 11:00:00')
AS t(order_id, day, region, amount, items, attrs, placed_at, placed_local)
"""


def _name() -> str:
    return "t" + uuid.uuid4().hex[:10]


@pytest.fixture(scope="module")
def data(spark):
    """A database with an orders table, shared by the module's tests (they only read it)."""
    db = _name()
    spark.sql(f"CREATE DATABASE {db}")
    spark.sql(ORDERS.format(db=db))
    yield db
    spark.sql(f"DROP DATABASE IF EXISTS {db} CASCADE")


@pytest.fixture
def ns(spark):
    """A fresh database name for one test's views; dropped afterwards."""
    db = _name()
    yield db
    spark.catalog.setCurrentDatabase("default")
    spark.sql(f"DROP DATABASE IF EXISTS {db} CASCADE")


def _stored(store, ident, sql_text, namespace, columns=(), **kwargs):
    return store.create_view(ident, columns=list(columns), representations=[SQLRepresentation("spark", sql_text)],
                             default_namespace=namespace, **kwargs)


# -- table_references ----------------------------------------------------------------------------


def test_table_references_come_from_a_parser():
    refs = table_references("WITH c AS (SELECT * FROM sales.orders) SELECT * FROM c JOIN customers k ON c.id = k.id "
                            "WHERE c.x IN (SELECT y FROM other.t2) AND c.s = 'FROM fake.table'")
    assert refs == {("sales", "orders"), ("customers",), ("other", "t2")}
    assert table_references("SELECT * FROM range(10)") == set()
    assert table_references("SELECT FROM WHERE (") is None
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
    # Hive resolves every CTE of a WITH in the others, in any order
    assert table_references("WITH c AS (SELECT x FROM b), b AS (SELECT 1 AS x) SELECT x FROM c", "hive") == set()


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
        with pytest.raises(ValidationError, match="TABLE_OR_VIEW_NOT_FOUND"):
            report.raise_for_failures()
        assert not spark.catalog.databaseExists(other)  # only the namespace asked for
        assert spark.sql(f"SELECT count(*) AS n FROM {ns}.good").first().n == 3
    finally:
        spark.sql(f"DROP DATABASE IF EXISTS {other} CASCADE")


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
    assert sorted((f.identifier, f.condition) for f in report.failed) == [
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
    assert sorted(t.name for t in spark.catalog.listTables(ns)) == ["v1", "v2"]  # made before it raised: they stay
    for bad in (5, "print"):
        with pytest.raises(ValidationError, match="progress must be callable as progress\\(done, total\\)"):
            register_views(spark, store, f"{ns}_nothing_yet", progress=bad)
    assert not spark.catalog.databaseExists(f"{ns}_nothing_yet")


# -- create_view -------------------------------------------------------------------------------------


def test_create_view_infers_iceberg_columns(spark, store, data, ns):
    spark.sql(f"CREATE DATABASE {ns}")
    spark.catalog.setCurrentDatabase(data)
    try:
        view = create_view(
            spark, store, f"{ns}.orders_wide",
            "SELECT order_id, amount, amount * 1.0D AS amount_d, items, attrs, placed_at, placed_local, "
            "named_struct('day', day, 'region', region) AS place, count(*) OVER () AS total FROM orders",
            comment="orders, wide", column_comments={"AMOUNT": "in EUR"}, properties={"owner": "finance"})
    finally:
        spark.catalog.setCurrentDatabase("default")

    assert [(c.name, str(c.type), c.nullable) for c in view.columns] == [
        ("order_id", "long", True),
        ("amount", "decimal(10,2)", True),
        ("amount_d", "double", True),
        ("items", "list<struct<sku: string, qty: int>>", True),
        ("attrs", "map<string, string>", True),
        ("placed_at", "timestamptz", True),
        ("placed_local", "timestamp", True),
        ("place", "struct<day: date, region: string>", False),
        ("total", "long", False),
    ]
    assert view.columns[1].comment == "in EUR"
    assert view.comment == "orders, wide" and view.properties["owner"] == "finance"
    assert json.loads(view.summary["spark.query-column-names"])[:3] == ["order_id", "amount", "amount_d"]
    assert (view.default_catalog, view.default_namespace) == ("spark_catalog", (data,))
    assert set(view.summary) == {"engine-name", "engine-version", "spark.query-column-names", "spark.sql-configs"}
    assert view.summary["engine-version"] == spark.version
    assert view.representations[0].dialect == "spark"
    assert not spark.catalog.tableExists(f"{ns}.orders_wide")  # create_view stores; it does not register


def test_create_view_bare_name_goes_to_the_current_database_and_replace_makes_a_version(spark, store, data):
    spark.catalog.setCurrentDatabase(data)
    try:
        create_view(spark, store, "by_region", "SELECT region, count(*) AS n FROM orders GROUP BY region")
        with pytest.raises(ViewAlreadyExistsError):
            create_view(spark, store, "by_region", "SELECT region FROM orders")
        view = create_view(spark, store, "by_region", "SELECT region FROM orders", replace=True)
    finally:
        spark.catalog.setCurrentDatabase("default")
    assert view.identifier == (data, "by_region")
    assert view.current_version_id == 2 and [c.name for c in view.columns] == ["region"]
    view = create_view(spark, store, f"spark_catalog.{data}.by_day", f"SELECT day FROM {data}.orders")
    assert view.identifier == (data, "by_day")


def test_public_calls_refuse_arguments_of_the_wrong_type_clearly(spark, store):
    """Each says which argument is wrong and what it must be (sql's statement: see
    test_sql_of_a_statement_that_is_not_text_says_so): table_references raised TypeError, detach
    said 'attach needs ...'."""
    with pytest.raises(ValidationError, match="query must be a string, not int"):
        table_references(5)
    with pytest.raises(ValidationError, match="dialect must be a string, not NoneType"):
        table_references("SELECT 1", None)
    with pytest.raises(ValidationError, match="^detach needs a SparkSession, not int"):
        detach(5, "vs")


def test_create_view_reads_catalog_qualified_names_as_sql_does(spark, store, data, ns, tmp_path):
    """A name qualified by the session catalog is that catalog's view (spark_catalog.db.v is db.v;
    spark_catalog.v names no database, which Spark refuses), and so is one qualified by the
    store's catalog name; a name qualified by another Spark catalog is refused: create_view
    stores views of the session catalog. Nothing is stored for a refused name, in either call."""
    query = f"SELECT day FROM {data}.orders"
    assert create_view(spark, store, ("SPARK_CATALOG", ns, "a"), query).identifier == (ns, "a")
    assert create_view(spark, store, f"prod.{ns}.b", query).identifier == (ns, "b")
    with pytest.raises(ValidationError, match=r"REQUIRES_SINGLE_PART_NAMESPACE.*spark_catalog\.x"):
        create_view(spark, store, "spark_catalog.x", query)
    with pytest.raises(ValidationError, match="REQUIRES_SINGLE_PART_NAMESPACE"):
        sql(spark, store, f"CREATE VIEW spark_catalog.x AS {query}")
    attach(spark, ViewStore(tmp_path / "other.db", actor="a"), name="vs_named")
    try:
        for name in (f"vs_named.{ns}.c", "vs_named.c"):
            with pytest.raises(ValidationError, match=r"catalog 'vs_named'.*session catalog"):
                create_view(spark, store, name, query)
    finally:
        detach(spark, "vs_named")
    assert store.list_views() == [(ns, "a"), (ns, "b")]


@pytest.mark.parametrize("query, condition", [
    ("SELECT * FROM no_such_table", "TABLE_OR_VIEW_NOT_FOUND"),
    ("SELECT nope FROM range(3)", "UNRESOLVED_COLUMN"),
    ("SELEC 1", "PARSE_SYNTAX_ERROR"),
    ("SELECT id + 1 FROM range(3)", "CREATE_PERMANENT_VIEW_WITHOUT_ALIAS"),
])
def test_create_view_rejects_bad_sql_and_stores_nothing(spark, store, ns, query, condition):
    with pytest.raises(ValidationError, match=condition) as info:
        create_view(spark, store, f"{ns}.bad", query)
    assert f"{ns}.bad" in str(info.value)
    assert store.event_count() == 0


def test_create_view_explains_spark_errors(spark, store, ns):
    with pytest.raises(ValidationError) as info:
        create_view(spark, store, f"{ns}.bad", "SELECT * FROM no_such_table")
    assert "[TABLE_OR_VIEW_NOT_FOUND] The table or view `no_such_table` cannot be found" in str(info.value)


def test_create_view_never_runs_a_statement(spark, store, data, ns):
    with pytest.raises(ValidationError, match="PARSE_SYNTAX_ERROR"):
        create_view(spark, store, f"{ns}.evil", f"DROP TABLE {data}.orders")
    assert spark.catalog.tableExists(f"{data}.orders")
    assert store.event_count() == 0


@pytest.mark.parametrize("query, kind, name", [
    ("SELECT x FROM scratch", "VIEW", "scratch"),
    # shapes sqlglot does not read (the check was sqlglot's): these were stored
    ("TABLE scratch", "VIEW", "scratch"),
    ("SELECT * FROM IDENTIFIER('scratch')", "VIEW", "scratch"),
    ("WITH c AS (TABLE scratch) SELECT x FROM c", "VIEW", "scratch"),
    ("SELECT 1 AS y WHERE EXISTS (SELECT * FROM (TABLE scratch))", "VIEW", "scratch"),
    # temporary functions and session variables were never looked for: these were stored too
    ("SELECT scratch_twice(2) AS y", "FUNCTION", "scratch_twice"),
    ("SELECT 1 AS y WHERE 4 IN (SELECT system.session.scratch_twice(2))", "FUNCTION", "scratch_twice"),
    ("SELECT scratch_plus_one(1) AS y", "FUNCTION", "scratch_plus_one"),
    ("SELECT scratch_var AS y", "VARIABLE", "scratch_var"),
])
def test_create_view_refuses_what_only_this_session_has(spark, store, ns, query, kind, name):
    """Spark's own check of a persistent view: no temporary view, temporary function or session variable."""
    spark.sql("CREATE OR REPLACE TEMPORARY VIEW scratch AS SELECT 1 AS x")
    spark.sql("CREATE OR REPLACE TEMPORARY FUNCTION scratch_twice(x INT) RETURNS INT RETURN x * 2")
    spark.udf.register("scratch_plus_one", lambda x: x + 1, "int")
    spark.sql("DECLARE OR REPLACE VARIABLE scratch_var INT DEFAULT 7")
    try:
        with pytest.raises(ValidationError, match=rf"INVALID_TEMP_OBJ_REFERENCE.*`{ns}`\.`v`.*"
                                                  rf"temporary object `{name}` of the type {kind}"):
            create_view(spark, store, f"{ns}.v", query)
    finally:
        spark.catalog.dropTempView("scratch")
        spark.sql("DROP TEMPORARY FUNCTION IF EXISTS scratch_twice")
        spark.sql("DROP TEMPORARY FUNCTION IF EXISTS scratch_plus_one")
        spark.sql("DROP TEMPORARY VARIABLE IF EXISTS scratch_var")
    assert store.event_count() == 0


def test_create_view_takes_a_cte_named_like_a_temporary_view(spark, store, ns):
    spark.sql("CREATE OR REPLACE TEMPORARY VIEW scratch AS SELECT 1 AS x")
    try:
        view = create_view(spark, store, f"{ns}.v", "WITH scratch AS (SELECT 2 AS x) SELECT x FROM scratch")
        assert [c.name for c in view.columns] == ["x"] and store.event_count() == 1
    finally:
        spark.catalog.dropTempView("scratch")


# -- sql: view DDL ---------------------------------------------------------------------------------


def test_sql_create_view_stores_and_mirrors(spark, store, data, ns):
    sql(spark, store, f"CREATE DATABASE {ns}")  # any other statement goes to Spark
    sql(spark, store, f"USE {ns}")
    try:
        view = sql(spark, store, f"""
            CREATE VIEW daily (day COMMENT 'order day', orders, revenue COMMENT 'in EUR')
            COMMENT 'Orders per day'
            TBLPROPERTIES ('owner' = 'finance', 'tier' = 'gold')
            AS SELECT day, count(*) AS n, sum(amount) AS total FROM {data}.orders GROUP BY day""")
    finally:
        spark.catalog.setCurrentDatabase("default")

    assert view.identifier == (ns, "daily")
    assert [(c.name, str(c.type), c.comment) for c in view.columns] == [
        ("day", "date", "order day"), ("orders", "long", None), ("revenue", "decimal(20,2)", "in EUR")]
    assert view.comment == "Orders per day"
    assert view.properties == {"comment": "Orders per day", "owner": "finance", "tier": "gold"}
    assert json.loads(view.summary["spark.query-column-names"]) == ["day", "n", "total"]
    assert view.sql_for("spark") == f"SELECT day, count(*) AS n, sum(amount) AS total FROM {data}.orders GROUP BY day"
    assert view.default_namespace == (ns,)
    rows = spark.sql(f"SELECT day, orders FROM {ns}.daily ORDER BY day").collect()  # usable at once
    assert [(r.day, r.orders) for r in rows] == [(dt.date(2026, 11, 1), 2), (dt.date(2026, 11, 2), 1)]
    props = {r.key: r.value for r in spark.sql(f"SHOW TBLPROPERTIES {ns}.daily").collect()}
    assert props["owner"] == "finance"
    assert [e.type for e in store.history(f"{ns}.daily")] == ["view.created"]


def test_sql_and_create_view_keep_sqlglots_warnings_to_themselves(spark, store, ns, caplog):
    """sqlglot warns of a JSON path it cannot read (Spark reads it: the call returns NULL); the query's
    temporary-view check logged that warning for the caller to see. The caller's own parses still warn."""
    import sqlglot

    query = "SELECT get_json_object('{}', '$.a[') AS x"
    with caplog.at_level(logging.DEBUG, logger="sqlglot"):
        sql(spark, store, f"CREATE VIEW {ns}.j AS {query}")
        create_view(spark, store, f"{ns}.k", query + " WHERE true")
        assert [r.x for r in spark.sql(f"SELECT x FROM {ns}.j").collect()] == [None]
        assert [r for r in caplog.records if r.name == "sqlglot"] == []
        sqlglot.parse_one(query, read="spark")
    assert [r.getMessage() for r in caplog.records if r.name == "sqlglot"] == [
        "Invalid JSON path syntax. Cannot have empty segment at index 4: $.a["]


def test_sql_passes_other_statements_to_spark(spark, store):
    df = sql(spark, store, "SELECT 1 AS one")
    assert df.first().one == 1
    sql(spark, store, "CREATE OR REPLACE TEMPORARY VIEW just_here AS SELECT 2 AS two")
    try:
        assert spark.sql("SELECT two FROM just_here").first().two == 2
        assert store.event_count() == 0  # temporary views are the session's own
    finally:
        spark.catalog.dropTempView("just_here")
    with pytest.raises(ValidationError, match="TABLE_OR_VIEW_NOT_FOUND"):
        sql(spark, store, "SELECT * FROM no_such_table")


def test_sql_replace_alter_properties_rename_drop(spark, store, data, ns):
    q = f"SELECT region, count(*) AS n FROM {data}.orders GROUP BY region"
    sql(spark, store, f"CREATE VIEW {ns}.v COMMENT 'first' TBLPROPERTIES ('a' = '1') AS {q}")
    with pytest.raises(ViewAlreadyExistsError):
        sql(spark, store, f"CREATE VIEW {ns}.v AS {q}")
    assert sql(spark, store, f"CREATE VIEW IF NOT EXISTS {ns}.v AS SELECT 1 AS x").current_version_id == 1

    view = sql(spark, store, f"CREATE OR REPLACE VIEW {ns}.v TBLPROPERTIES ('b' = '2') AS {q} HAVING n > 1")
    assert view.current_version_id == 2
    assert view.comment is None and "a" not in view.properties and view.properties["b"] == "2"
    assert [r.region for r in spark.sql(f"SELECT * FROM {ns}.v").collect()] == ["north"]

    view = sql(spark, store, f"ALTER VIEW {ns}.v AS SELECT region FROM {data}.orders WHERE amount > 25")
    assert view.current_version_id == 3 and [c.name for c in view.columns] == ["region"]
    assert view.properties["b"] == "2" and view.summary["spark.query-column-names"] == '["region"]'
    assert [r.region for r in spark.sql(f"SELECT * FROM {ns}.v").collect()] == ["north"]

    view = sql(spark, store, f"ALTER VIEW {ns}.v SET TBLPROPERTIES ('steward' = 'ops', 'comment' = 'regions')")
    assert view.properties["steward"] == "ops" and view.comment == "regions" and view.current_version_id == 3
    props = {r.key: r.value for r in spark.sql(f"SHOW TBLPROPERTIES {ns}.v").collect()}
    assert props["steward"] == "ops"
    view = sql(spark, store, f"ALTER VIEW {ns}.v UNSET TBLPROPERTIES ('steward')")
    assert "steward" not in view.properties
    assert "steward" not in {r.key for r in spark.sql(f"SHOW TBLPROPERTIES {ns}.v").collect()}
    events = store.event_count()
    for clause in ("", "IF EXISTS "):  # a key the view lacks is no change, as in Spark 4.3's own catalog
        assert sql(spark, store, f"ALTER VIEW {ns}.v UNSET TBLPROPERTIES {clause}('never')") == view
    assert store.event_count() == events
    view = sql(spark, store, f"ALTER VIEW {ns}.v UNSET TBLPROPERTIES ('b', 'never')")
    assert "b" not in view.properties and store.event_count() == events + 1
    assert "b" not in {r.key for r in spark.sql(f"SHOW TBLPROPERTIES {ns}.v").collect()}

    view = sql(spark, store, f"ALTER VIEW {ns}.v RENAME TO w")
    assert view.identifier == (ns, "w")
    assert not spark.catalog.tableExists(f"{ns}.v")
    assert spark.sql(f"SELECT count(*) AS c FROM {ns}.w").first().c == 1

    assert sql(spark, store, f"DROP VIEW {ns}.w") is None
    assert not store.view_exists(f"{ns}.w") and not spark.catalog.tableExists(f"{ns}.w")
    sql(spark, store, f"DROP VIEW IF EXISTS {ns}.w")
    with pytest.raises(ValidationError, match="TABLE_OR_VIEW_NOT_FOUND"):
        sql(spark, store, f"DROP VIEW {ns}.w")
    types = [e.type for e in store.history(f"{ns}.w")]
    assert types == ["view.created",
                     "view.replaced", "view.properties_set", "view.comment_updated", "view.properties_removed",
                     "view.replaced",  # ALTER VIEW AS: the new query column names are in the summary
                     "view.comment_updated", "view.properties_set", "view.properties_removed",
                     "view.properties_removed", "view.renamed", "view.dropped"]


def test_sql_and_create_view_replacing_keep_the_security_mode(spark, store, ns):
    _stored(store, f"{ns}.v", "SELECT 1 AS x", ns, security_mode="INVOKER")
    view = sql(spark, store, f"CREATE OR REPLACE VIEW {ns}.v AS SELECT 2 AS x")
    assert view.current_version_id == 2 and view.security_mode == "INVOKER"
    view = create_view(spark, store, f"{ns}.v", "SELECT 3 AS x", replace=True)
    assert view.current_version_id == 3 and view.security_mode == "INVOKER"


@pytest.mark.parametrize("statement", ["ALTER VIEW {v} AS SELECT 2 AS x", "ALTER VIEW {v} WITH SCHEMA BINDING"])
@pytest.mark.parametrize("change", ["security", "sql"])
def test_sql_alter_never_undoes_a_change_made_meanwhile(spark, store, ns, statement, change, monkeypatch):
    """ALTER VIEW writes what it read before Spark analyzed the statement; when another process
    changed the view in between (its security mode, its SQL), the ALTER is refused with
    ConcurrencyError and that change stays, in the store and in the session copy."""
    import viewstore.spark.ddl as ddl
    from viewstore import ConcurrencyError, ViewStore

    _stored(store, f"{ns}.v", "SELECT 1 AS x", ns)
    register_views(spark, store, ns)
    real = ddl._Before

    def other_process_changes_it(spark, identifier):
        with ViewStore(store.path, actor="bob") as other:
            view = other.load_view(identifier)
            sql_text = "SELECT 7 AS x" if change == "sql" else view.sql_for("spark")
            other.replace_view(identifier, columns=view.columns, representations=[("spark", sql_text)],
                               default_namespace=view.default_namespace,
                               security_mode="INVOKER" if change == "security" else None)
        return real(spark, identifier)

    monkeypatch.setattr(ddl, "_Before", other_process_changes_it)
    with pytest.raises(ConcurrencyError):
        sql(spark, store, statement.format(v=f"{ns}.v"))
    monkeypatch.undo()
    view = store.load_view(f"{ns}.v")
    if change == "security":
        assert view.security_mode == "INVOKER" and view.sql_for("spark") == "SELECT 1 AS x"
    else:
        assert view.sql_for("spark") == "SELECT 7 AS x" and view.security_mode == "DEFINER"
    assert spark.sql(f"SELECT x FROM {ns}.v").first().x == 1  # the session copy as it was before the ALTER


@pytest.mark.parametrize("statement", ["ALTER VIEW {v} AS SELECT {n} AS x", "CREATE VIEW {v} AS SELECT {n} AS x"])
def test_sql_from_two_threads_on_one_view_keeps_the_session_copy_the_stores(spark, store, ns, statement, monkeypatch):
    """Two threads of the driver change one view through sql() at once: the one that loses in the
    store (ConcurrencyError, ViewAlreadyExistsError) must not put back what the session held
    before the winner's copy. Here the second starts just after the first has read what the
    session held, and is given 3 s."""
    import threading

    import viewstore.spark.ddl as ddl

    if statement.startswith("ALTER"):
        _stored(store, f"{ns}.v", "SELECT 1 AS x", ns)
        register_views(spark, store, ns)
    real, outcome = ddl._Before, {}

    def second():
        try:
            outcome["second"] = sql(spark, store, statement.format(v=f"{ns}.v", n=3))
        except Exception as error:  # noqa: BLE001 - either may lose
            outcome["second"] = error

    def first_reads_then_second_runs(spark, identifier):
        before = real(spark, identifier)
        if "started" not in outcome:
            outcome["started"] = thread = threading.Thread(target=second)
            thread.start()
            thread.join(timeout=3)
        return before

    monkeypatch.setattr(ddl, "_Before", first_reads_then_second_runs)
    try:
        outcome["first"] = sql(spark, store, statement.format(v=f"{ns}.v", n=2))
    except Exception as error:  # noqa: BLE001 - either may lose
        outcome["first"] = error
    outcome["started"].join(timeout=60)
    monkeypatch.undo()
    assert sum(isinstance(outcome[who], Exception) for who in ("first", "second")) <= 1, outcome
    stored = store.load_view(f"{ns}.v").sql_for("spark")
    assert stored in ("SELECT 2 AS x", "SELECT 3 AS x")
    assert spark.sql(f"SELECT x FROM {ns}.v").first().x == int(stored.split()[1]), outcome


@pytest.mark.parametrize("if_exists", [False, True])
def test_a_drop_of_a_view_another_thread_dropped_meanwhile_is_spark_s(spark, store, ns, if_exists, monkeypatch):
    """A DROP VIEW that found the stored view, then waited for the turn while another thread dropped
    it: without IF EXISTS Spark's TABLE_OR_VIEW_NOT_FOUND, as for any view that is not there (it
    returned quietly); with IF EXISTS, nothing."""
    import threading
    import time

    import viewstore.spark.ddl as ddl
    import viewstore.spark.session as session

    _stored(store, f"{ns}.v", "SELECT 1 AS x", ns)
    register_views(spark, store, ns)
    with pytest.raises(Exception) as missing:
        sql(spark, store, f"DROP VIEW {ns}.never_was")
    real, found, outcome = ddl._stored_target, threading.Event(), {}

    def noting(*args):
        ident = real(*args)
        if threading.current_thread().name == "second":
            found.set()
        return ident

    def second():
        try:
            outcome["second"] = sql(spark, store, f"DROP VIEW {'IF EXISTS ' if if_exists else ''}{ns}.v")
        except Exception as error:  # noqa: BLE001 - what it raises is the point
            outcome["second"] = error

    monkeypatch.setattr(ddl, "_stored_target", noting)
    thread = threading.Thread(target=second, name="second")
    with session._one_ddl_at_a_time():
        thread.start()
        assert found.wait(60)
        time.sleep(0.3)  # it has found the stored view and waits for the turn
        sql(spark, store, f"DROP VIEW {ns}.v")  # this thread holds the turn (it is re-entrant)
    thread.join(60)
    assert not store.view_exists(f"{ns}.v")
    if if_exists:
        assert outcome["second"] is None
    else:
        assert type(outcome["second"]) is type(missing.value), outcome
        assert "TABLE_OR_VIEW_NOT_FOUND" in str(outcome["second"]) and "TABLE_OR_VIEW_NOT_FOUND" in str(missing.value)


@pytest.mark.parametrize("prune", [False, True])
def test_register_views_passes_over_a_database_dropped_after_the_listing(spark, store, ns, prune, monkeypatch):
    """Another driver drops a database between the listing of the session's databases and the reading of
    the copies in it: its views fail to register (their database is gone), the others are unaffected."""
    import viewstore.spark.register as register

    other = _name()
    _stored(store, f"{ns}.a", "SELECT 1 AS x", ns, columns=[Column("x", "int", nullable=False)])
    _stored(store, f"{other}.b", "SELECT 2 AS x", other, columns=[Column("x", "int", nullable=False)])
    try:
        assert register_views(spark, store).ok
        real = register._database_names

        def listed_then_dropped(spark):
            names = real(spark)
            spark.sql(f"DROP DATABASE {other} CASCADE")
            return names

        monkeypatch.setattr(register, "_database_names", listed_then_dropped)
        report = register_views(spark, store, prune=prune)
        assert report.registered == report.unchanged == [f"{ns}.a"] and report.pruned == []
        assert [(f.identifier, f.condition, f.action) for f in report.failed] == [
            (f"{other}.b", "SCHEMA_NOT_FOUND", "register")]
    finally:
        spark.sql(f"DROP DATABASE IF EXISTS {other} CASCADE")


def _alter_record(spark, db, name, *, schema=None, text=None):
    """Change a view's metastore record behind Spark's back, as another engine (or damage) would."""
    client = spark._jsparkSession.sharedState().externalCatalog().unwrapped().client()
    record = client.getRawHiveTable(db, name).rawTable().getTTable()
    if schema is not None:
        record.getParameters().put("spark.sql.sources.schema", schema)
    if text is not None:
        record.setViewOriginalText(text)
        record.setViewExpandedText(text)
    spark._jvm.org.apache.hadoop.hive.ql.metadata.Hive.get(client.conf()).getMSC().alter_table(db, name, record)


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


def test_a_view_whose_text_spark_cannot_parse_fails_alone_and_is_no_engine_failure(spark, store, ns):
    """The metastore answers, so a view reading one whose stored text does not parse is that view's
    failure: reported, broken, a ValidationError; never an EngineError."""
    spark.sql(f"CREATE DATABASE {ns}")
    spark.sql(f"CREATE VIEW {ns}.src AS SELECT 1 AS x")
    _alter_record(spark, ns, "src", text="SELEC x FROMM nowhere")
    _stored(store, f"{ns}.reader", f"SELECT x FROM {ns}.src", ns, columns=[Column("x", "int", nullable=False)])
    report = register_views(spark, store, ns)
    assert [(f.identifier, f.condition) for f in report.failed] == [(f"{ns}.reader", "PARSE_SYNTAX_ERROR")]
    (entry,) = check_views(spark, store, ns).views
    assert (entry.status, entry.condition) == ("broken", "PARSE_SYNTAX_ERROR")
    with pytest.raises(ValidationError, match="PARSE_SYNTAX_ERROR"):
        create_view(spark, store, f"{ns}.again", f"SELECT x FROM {ns}.src")


@pytest.mark.parametrize("call", ["register", "check"])
def test_a_view_dropped_by_another_process_after_the_listing_is_passed_over(spark, store, ns, call, monkeypatch):
    from viewstore import ViewStore

    _stored(store, f"{ns}.a", "SELECT 1 AS x", ns, columns=[Column("x", "int", nullable=False)])
    _stored(store, f"{ns}.b", "SELECT 2 AS x", ns, columns=[Column("x", "int", nullable=False)])
    real = store.list_views

    def listed_then_dropped(*args):
        names = real(*args)
        with ViewStore(store.path, actor="bob") as other:
            other.drop_view(f"{ns}.a")
        return names

    monkeypatch.setattr(store, "list_views", listed_then_dropped)
    if call == "register":
        report = register_views(spark, store, ns)
        assert report.registered == [f"{ns}.b"] and report.ok
    else:
        report = check_views(spark, store, ns)
        assert [v.identifier for v in report.views] == [f"{ns}.b"]


def test_sql_bad_create_stores_nothing_and_leaves_the_session_alone(spark, store, data, ns):
    spark.sql(f"CREATE DATABASE {ns}")
    spark.sql(f"CREATE TABLE {ns}.taken (x INT) USING parquet")
    with pytest.raises(ValidationError, match="TABLE_OR_VIEW_NOT_FOUND"):
        sql(spark, store, f"CREATE VIEW {ns}.v AS SELECT * FROM {ns}.no_such_table")
    with pytest.raises(ValidationError, match="EXPECT_VIEW_NOT_TABLE"):
        sql(spark, store, f"CREATE OR REPLACE VIEW {ns}.taken AS SELECT 1 AS x")
    with pytest.raises(ValidationError, match="PARSE_SYNTAX_ERROR"):
        sql(spark, store, f"CREATE VIEW {ns}.v AS SELEC 1")
    assert store.event_count() == 0
    assert not spark.catalog.tableExists(f"{ns}.v")
    assert spark.catalog.getTable(f"{ns}.taken").tableType == "MANAGED"


def test_sql_store_refusal_puts_the_session_copy_back(spark, store, data, ns):
    q = f"SELECT region FROM {data}.orders"
    sql(spark, store, f"CREATE VIEW {ns}.v AS {q}")
    store.alter_view(f"{ns}.v", ViewChange.add_representation(("trino", "SELECT region FROM hive.x.orders")))
    # replacing only the spark SQL would drop the trino representation: the store refuses
    with pytest.raises(ValidationError, match="loss of view dialects"):
        sql(spark, store, f"ALTER VIEW {ns}.v AS {q} WHERE region = 'south'")
    assert spark.sql(f"SELECT count(*) AS n FROM {ns}.v").first().n == 3  # the stored definition again
    assert store.load_view(f"{ns}.v").current_version_id == 2


def test_sql_leaves_views_the_store_does_not_hold_to_spark(spark, store, data, ns):
    spark.sql(f"CREATE DATABASE {ns}")
    spark.sql(f"CREATE VIEW {ns}.hand_made AS SELECT 1 AS x")
    sql(spark, store, f"ALTER VIEW {ns}.hand_made AS SELECT 2 AS x")
    assert spark.sql(f"SELECT x FROM {ns}.hand_made").first().x == 2
    sql(spark, store, f"DROP VIEW {ns}.hand_made")
    assert not spark.catalog.tableExists(f"{ns}.hand_made")
    assert store.event_count() == 0



def test_sql_leaves_names_of_another_current_catalog_to_spark(spark, store, ns, tmp_path):
    """With another catalog current (``USE cat.sales``), Spark reads ``sales.v`` as ``cat.sales.v``:
    such DDL is that catalog's, as a bare name is, and goes to Spark; the store is not touched.
    A name the session catalog or the store's catalog name qualifies is still the store's, and so
    is a rename's new name, which Spark keeps in the renamed view's catalog."""
    from viewstore import ViewStore

    caller = spark.newSession()
    other = ViewStore(tmp_path / "other.db", actor="bob")
    catalog = attach(caller, other, name=f"{ns}cat")
    try:
        caller.sql(f"CREATE VIEW {catalog}.sales.kept AS SELECT 1 AS a")
        _stored(store, "sales.kept", "SELECT 2 AS a", ["sales"], [Column("a", "int")])
        caller.sql(f"USE {catalog}.sales")
        sql(caller, store, "CREATE VIEW sales.made AS SELECT 3 AS a")
        assert caller.sql("SELECT a FROM sales.made").first().a == 3
        assert sql(caller, store, "DROP VIEW sales.kept") is not None  # Spark's DataFrame: not the store's
        assert store.list_views() == [("sales", "kept")]
        assert other.list_views() == [("sales", "made")]
        assert store.event_count() == 1
        view = sql(caller, store, f"CREATE VIEW spark_catalog.{ns}.v AS SELECT 4 AS a")
        assert view.identifier == (ns, "v")
        assert sql(caller, store, f"ALTER VIEW spark_catalog.{ns}.v RENAME TO {ns}.w").identifier == (ns, "w")
        assert caller.sql(f"SELECT a FROM spark_catalog.{ns}.w").first().a == 4
    finally:
        caller.sql("USE spark_catalog.default")
        detach(caller, catalog)
        other.close()

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
    rows = df.orderBy("position").collect()
    events = store.events()
    assert [(r.position, r.view, r.view_id, r.stream_version, r.type, r.actor) for r in rows] == [
        (e.position, e.view, e.view_id, e.stream_version, e.type, e.actor) for e in events]
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
    assert events_dataframe(spark, store, limit=2).count() == 2
    latest = events_dataframe(spark, store, limit=2, newest_first=True).collect()
    assert [r.position for r in latest] == [e.position for e in events[:-3:-1]]
    with pytest.raises(ValidationError, match="unknown event type"):
        events_dataframe(spark, store, types="view.exploded")
    with pytest.raises(NoSuchViewError, match=f"^no view was ever named {ns}.typo$"):  # as ViewStore.events
        events_dataframe(spark, store, view=f"{ns}.typo")


def test_events_dataframe_of_an_empty_store(spark, store):
    df = events_dataframe(spark, store)
    assert df.count() == 0 and "occurred_at" in df.columns


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
    assert check_views(spark, store).ok

    spark.sql(f"DROP TABLE {ns}.src")
    spark.sql(f"CREATE TABLE {ns}.src (id BIGINT, label STRING, extra DOUBLE) USING parquet")
    report = check_views(spark, store)

    status = {v.identifier: v for v in report.views}
    assert status[f"{ns}.everything"].status == "drifted"
    assert "2 stored columns, 3 analyzed" in status[f"{ns}.everything"].problems
    assert "column 'id': type int is now long" in status[f"{ns}.ids"].problems
    assert status[f"{ns}.names"].status == "broken"
    assert status[f"{ns}.names"].condition.startswith("UNRESOLVED_COLUMN")
    assert report.skipped == [f"{ns}.trino"]
    assert not report.ok
    with pytest.raises(ValidationError, match="drifted"):
        report.raise_for_drift()

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
    with pytest.raises(ValidationError, match="progress must be callable"):
        check_views(spark, store, ns, progress=True)
    assert check_views(spark, store, "nothing_here", progress=lambda *a: seen.append(a)).views == []
    assert len(seen) == 4  # no view, no call


def test_check_views_of_a_missing_default_namespace_is_broken(spark, store):
    store.create_view("nowhere_ns.v", columns=[Column("x", "int")], representations=[("spark", "SELECT 1 AS x")],
                      default_namespace="nowhere_ns")
    (entry,) = check_views(spark, store).views
    assert entry.status == "broken" and entry.condition == "SCHEMA_NOT_FOUND"


def test_register_unknown_namespace_is_empty(spark, store):
    assert register_views(spark, store, "nothing_here").registered == []
    with pytest.raises(ValidationError):
        register_views(spark, store, "bad..namespace")
    with pytest.raises(NoSuchViewError):
        store.load_view("nothing_here.v")


# -- fixed defects ---------------------------------------------------------------------------------


def _show_create(spark, name):
    return spark.sql(f"SHOW CREATE TABLE {name}").first()[0]


def test_stored_text_reaches_spark_without_variable_substitution(spark, store, ns):
    text = "SELECT '${spark.app.name}' AS s"
    _stored(store, f"{ns}.v", text, ns, [Column("s", "string", "col ${spark.app.name}")],
            comment="${spark.app.name}", properties={"p": "${spark.app.name}"})
    spark.conf.set("spark.sql.variable.substitute", "true")
    try:
        assert register_views(spark, store, ns).registered == [f"{ns}.v"]
        assert spark.conf.get("spark.sql.variable.substitute") == "true"  # the session's own setting is back
    finally:
        spark.conf.unset("spark.sql.variable.substitute")
    assert spark.sql(f"SELECT s FROM {ns}.v").first().s == "${spark.app.name}"
    described = {r.col_name: r for r in spark.sql(f"DESCRIBE TABLE EXTENDED {ns}.v").collect()}
    assert described["s"].comment == "col ${spark.app.name}"
    assert described["Comment"].data_type == "${spark.app.name}"
    assert {r.key: r.value for r in spark.sql(f"SHOW TBLPROPERTIES {ns}.v").collect()}["p"] == "${spark.app.name}"
    assert check_views(spark, store, ns).ok
    view = create_view(spark, store, f"{ns}.w", text)  # analyzed and stored as written
    assert view.sql_for("spark") == text and view.columns[0].name == "s"


def test_sql_create_view_never_replaces_a_spark_view_the_store_does_not_hold(spark, store, ns):
    spark.sql(f"CREATE DATABASE {ns}")
    spark.sql(f"CREATE VIEW {ns}.legacy COMMENT 'hand made' AS SELECT 1 AS x")
    before = _show_create(spark, f"{ns}.legacy")
    with pytest.raises(ValidationError, match="TABLE_OR_VIEW_ALREADY_EXISTS"):
        sql(spark, store, f"CREATE VIEW {ns}.legacy AS SELECT 2 AS y")
    assert sql(spark, store, f"CREATE VIEW IF NOT EXISTS {ns}.legacy AS SELECT 2 AS y") is None
    # the store refuses this property value after Spark replaced the view: the old view comes back
    with pytest.raises(ValidationError):
        sql(spark, store, f"CREATE OR REPLACE VIEW {ns}.legacy TBLPROPERTIES ('version.history.num-entries'='x') "
                          "AS SELECT 2 AS y")
    assert _show_create(spark, f"{ns}.legacy") == before
    assert spark.sql(f"SELECT * FROM {ns}.legacy").collect()[0].x == 1
    other = _name()
    with pytest.raises(ValidationError):  # a database the statement created goes away again
        sql(spark, store, f"CREATE VIEW {other}.v TBLPROPERTIES ('version.history.num-entries'='x') AS SELECT 1 AS x")
    assert not spark.catalog.databaseExists(other)
    assert store.event_count() == 0


def test_check_views_reads_the_recorded_query_column_names(spark, store, data, ns):
    sql(spark, store, f"CREATE VIEW {ns}.v1 (order_id, amt) AS SELECT order_id AS id, amount FROM {data}.orders")
    sql(spark, store, f"CREATE VIEW {ns}.v2 (a, b) AS SELECT order_id AS `x,y`, region FROM {data}.orders")
    spark.sql(f"CREATE VIEW {ns}.hms (order_id, amt) AS SELECT order_id AS id, amount FROM {data}.orders")
    assert [i.identifier for i in import_metastore_views(spark, store, ns).imported] == [f"{ns}.hms"]
    report = check_views(spark, store, ns)
    assert report.ok, report.views
    assert len(report.views) == 3


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


def test_sql_create_view_keeps_the_schema_mode(spark, store, data, ns):
    view = sql(spark, store, f"CREATE VIEW {ns}.b WITH SCHEMA BINDING AS SELECT region FROM {data}.orders")
    assert view.summary["spark.schema-mode"] == "BINDING"
    assert "WITH SCHEMA BINDING" in _show_create(spark, f"{ns}.b")
    spark.sql(f"DROP VIEW {ns}.b")
    assert register_views(spark, store, ns).registered == [f"{ns}.b"]
    assert "WITH SCHEMA BINDING" in _show_create(spark, f"{ns}.b")
    view = sql(spark, store, f"ALTER VIEW {ns}.b AS SELECT day FROM {data}.orders")
    assert view.summary["spark.schema-mode"] == "BINDING"
    assert "WITH SCHEMA BINDING" in _show_create(spark, f"{ns}.b")


@pytest.mark.parametrize("call", [
    lambda spark, store, ns: create_view(spark, store, f"{ns}.v", None),
    lambda spark, store, ns: create_view(spark, store, f"{ns}.v", "SELECT 1 AS x", properties="ab"),
    lambda spark, store, ns: create_view(spark, store, f"{ns}.v", "SELECT 1 AS x", properties=[1, 2]),
    lambda spark, store, ns: create_view(spark, store, f"{ns}.v", "SELECT 1 AS x", properties={"a": 1}),
    lambda spark, store, ns: create_view(spark, store, f"{ns}.v", "SELECT 1 AS x", replace="yes"),
    lambda spark, store, ns: create_view(spark, store, f"{ns}.v", "SELECT 1 AS x", comment=5),
    lambda spark, store, ns: create_view(spark, store, 5, "SELECT 1 AS x"),
    lambda spark, store, ns: create_view(spark, "not a store", f"{ns}.v", "SELECT 1 AS x"),
    lambda spark, store, ns: create_view("not spark", store, f"{ns}.v", "SELECT 1 AS x"),
    lambda spark, store, ns: events_dataframe(spark, store, types=5),
    lambda spark, store, ns: events_dataframe(spark, store, actor=5),
    lambda spark, store, ns: events_dataframe(spark, None),
    lambda spark, store, ns: register_views(spark, store, refresh="x"),
    lambda spark, store, ns: register_views(spark, object()),
    lambda spark, store, ns: check_views(spark, {}),
    lambda spark, store, ns: sql(spark, None, "SELECT 1"),
])
def test_bad_arguments_raise_validation_errors_and_write_nothing(spark, store, ns, call):
    with pytest.raises(ValidationError):
        call(spark, store, ns)
    assert store.event_count() == 0


def test_sql_of_a_statement_that_is_not_text_says_so(spark, store):
    """sql(spark, store, 5) said 'the statement is empty'."""
    with pytest.raises(ValidationError, match="a statement must be SQL text, not 5"):
        sql(spark, store, 5)
    with pytest.raises(ValidationError, match="the statement is empty"):
        sql(spark, store, "  ")


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


def test_check_views_sees_a_change_of_a_spark_type_the_iceberg_type_hides(spark, store, ns):
    """A TINYINT or a collation is kept beside the Iceberg columns (``spark.schema``) and is what
    Spark reads the view as: a table column that became INT, or lost its collation, changes the
    view although its Iceberg types stay (int, string). Reading the copy now fails. A CHAR or
    VARCHAR length is no Spark type of a query's output: no drift."""
    spark.sql(f"CREATE DATABASE {ns}")
    spark.sql(f"CREATE TABLE {ns}.src USING parquet AS SELECT CAST(1 AS TINYINT) AS n, "
              f"'x' COLLATE UTF8_LCASE AS c, CAST(2 AS SMALLINT) AS k")
    sql(spark, store, f"CREATE VIEW {ns}.v AS SELECT n, c, k FROM {ns}.src")
    # the schema Spark hands its catalog names CHAR(5) and VARCHAR(10); its analysis says string
    spark.sql(f"CREATE TABLE {ns}.sized (c CHAR(5), v VARCHAR(10)) USING parquet")
    catalog = attach(spark, store, name=f"{ns}vs")
    try:
        spark.sql(f"CREATE VIEW {catalog}.{ns}.sized AS SELECT c, v FROM spark_catalog.{ns}.sized")
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


def test_register_views_puts_a_table_query_after_the_views_it_could_read(spark, store, ns):
    """sqlglot reads `TABLE b_base` as the column TABLE aliased b_base (and `(TABLE b_base)` as a table
    named TABLE): a_top had no dependency, went first and failed (TABLE_OR_VIEW_NOT_FOUND)."""
    _stored(store, f"{ns}.a_top", "TABLE b_base", ns, [Column("x", "int")])
    _stored(store, f"{ns}.a_two", "SELECT * FROM (TABLE b_base) UNION ALL SELECT 2 AS x", ns, [Column("x", "int")])
    _stored(store, f"{ns}.b_base", "SELECT 1 AS x", ns, [Column("x", "int")])
    report = register_views(spark, store, ns)
    assert report.ok, report.failed
    assert report.registered == [f"{ns}.b_base", f"{ns}.a_top", f"{ns}.a_two"]
    assert [r.x for r in spark.sql(f"SELECT x FROM {ns}.a_top").collect()] == [1]
    assert sorted(r.x for r in spark.sql(f"SELECT x FROM {ns}.a_two").collect()) == [1, 2]


def test_register_views_keeps_backslashes_in_comments_and_properties(spark, store, ns):
    text = r"C:\temp\new 50\% \'q\'"
    _stored(store, f"{ns}.v", "SELECT 1 AS x", ns, [Column("x", "int", text)], comment=text,
            properties={"path": text})
    assert register_views(spark, store, ns).ok
    described = {r.col_name: r for r in spark.sql(f"DESCRIBE TABLE EXTENDED {ns}.v").collect()}
    assert described["x"].comment == text
    assert described["Comment"].data_type == text
    assert {r.key: r.value for r in spark.sql(f"SHOW TBLPROPERTIES {ns}.v").collect()}["path"] == text


def test_events_dataframe_of_a_log_longer_than_one_arrow_batch(spark, store):
    _stored(store, "big.v", "SELECT 1 AS x", "big", [Column("x", "int")])
    for start in range(0, 2500, 500):
        store.alter_view("big.v", *[ViewChange.set_property(f"k{i}", "v") for i in range(start, start + 500)])
    total = store.event_count()
    assert total > 2048
    df = events_dataframe(spark, store)
    assert df.count() == total
    assert [r.position for r in df.orderBy("position").select("position").collect()] == list(range(1, total + 1))


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


def test_replace_records_the_comment(spark, store, ns):
    sql(spark, store, f"CREATE VIEW {ns}.v COMMENT 'first' AS SELECT 1 AS x")
    view = sql(spark, store, f"CREATE OR REPLACE VIEW {ns}.v COMMENT 'second' AS SELECT 2 AS x")
    assert view.comment == "second" and store.load_view(f"{ns}.v").comment == "second"
    described = {r.col_name: r for r in spark.sql(f"DESCRIBE TABLE EXTENDED {ns}.v").collect()}
    assert described["Comment"].data_type == "second"
    view = create_view(spark, store, f"{ns}.v", "SELECT 3 AS x", comment="third", replace=True)
    assert view.comment == "third"


def test_sql_takes_the_stores_catalog_prefix(spark, store, ns):
    assert store.catalog == "prod"
    view = sql(spark, store, f"CREATE VIEW prod.{ns}.v AS SELECT 1 AS x")
    assert view.identifier == (ns, "v")
    assert spark.sql(f"SELECT x FROM {ns}.v").first().x == 1
    assert sql(spark, store, f"DROP VIEW prod.{ns}.v") is None
    assert not store.view_exists(f"{ns}.v") and not spark.catalog.tableExists(f"{ns}.v")


def test_register_views_accounts_for_a_view_in_a_two_level_namespace(spark, store, ns):
    _stored(store, f"{ns}.v", "SELECT 1 AS x", ns, [Column("x", "int")])
    _stored(store, f"{ns}.inner.w", "SELECT 1 AS x", f"{ns}.inner", [Column("x", "int")])
    report = register_views(spark, store)
    accounted = (set(report.registered) | {f.identifier for f in report.failed}
                 | {s.identifier for s in report.skipped})
    assert accounted == {f"{ns}.v", f"{ns}.inner.w"}
    assert not report.ok and [f.identifier for f in report.failed] == [f"{ns}.inner.w"]


def test_sql_rename_never_overwrites_a_session_object_nor_moves_the_view(spark, store, ns):
    other = _name()
    spark.sql(f"CREATE DATABASE {ns}")
    spark.sql(f"CREATE DATABASE {other}")
    try:
        # views of the session the store does not hold, and a table
        spark.sql(f"CREATE VIEW {ns}.theirs COMMENT 'owned elsewhere' AS SELECT 'precious' AS x")
        spark.sql(f"CREATE TABLE {ns}.tab (x INT) USING parquet")
        spark.sql(f"CREATE VIEW {other}.v AS SELECT 'precious too' AS x")
        sql(spark, store, f"CREATE VIEW {ns}.v AS SELECT 1 AS one")
        events = store.event_count()
        for target, condition in ((f"{ns}.theirs", "TABLE_OR_VIEW_ALREADY_EXISTS"),
                                  ("theirs", "TABLE_OR_VIEW_ALREADY_EXISTS"),
                                  (f"{ns}.tab", "TABLE_OR_VIEW_ALREADY_EXISTS"),
                                  (f"{other}.v", "RENAME_TABLE_SOURCE_DESTINATION_DATABASE_MISMATCH"),
                                  (f"{other}.fresh", "RENAME_TABLE_SOURCE_DESTINATION_DATABASE_MISMATCH")):
            with pytest.raises(ValidationError, match=rf"^\[{condition}\]"):
                sql(spark, store, f"ALTER VIEW {ns}.v RENAME TO {target}")
            # Spark itself refuses the same rename of its own view (a bare name: with a Hive error)
            spark.sql(f"CREATE OR REPLACE VIEW {ns}.own AS SELECT 1 AS one")
            with pytest.raises(Exception, match=condition if "." in target else "already exists"):
                spark.sql(f"ALTER VIEW {ns}.own RENAME TO {target}")
        assert store.event_count() == events and store.view_exists(f"{ns}.v")
        assert not store.view_exists(f"{other}.fresh") and not spark.catalog.tableExists(f"{other}.fresh")
        assert spark.sql(f"SELECT x FROM {ns}.theirs").first().x == "precious"
        assert spark.sql(f"SELECT x FROM {other}.v").first().x == "precious too"
        assert spark.sql(f"SELECT one FROM {ns}.v").first().one == 1
    finally:
        spark.sql(f"DROP DATABASE IF EXISTS {other} CASCADE")


def _view_properties(spark, db, name):
    table = spark._jsparkSession.sharedState().externalCatalog().getTable(db, name)
    props = spark._jvm.scala.jdk.javaapi.CollectionConverters.asJava(table.properties())
    return {str(k): str(props.get(k)) for k in props.keySet()}


def test_sql_configs_are_recorded_and_registered_with_the_view(spark, store, ns):
    query = "SELECT unix_millis(TIMESTAMP'2024-01-01 00:00:00') AS ms"
    kolkata, utc = 1704047400000, 1704067200000
    zone = spark.conf.get("spark.sql.session.timeZone")
    spark.sql(f"CREATE DATABASE {ns}")
    try:
        spark.conf.set("spark.sql.session.timeZone", "Asia/Kolkata")  # the defining driver
        view = sql(spark, store, f"CREATE VIEW {ns}.v AS {query}")
        spark.sql(f"CREATE VIEW {ns}.own AS {query}")  # Spark's own view captures the same configs
        captured = {k[len("view.sqlConfig."):]: v for k, v in _view_properties(spark, ns, "own").items()
                    if k.startswith("view.sqlConfig.")}
        assert json.loads(view.summary["spark.sql-configs"]) == captured
        assert captured["spark.sql.session.timeZone"] == "Asia/Kolkata"
        create_view(spark, store, f"{ns}.by_api", query)

        spark.conf.set("spark.sql.session.timeZone", "UTC")  # a later driver
        spark.conf.set("spark.sql.caseSensitive", "true")  # a setting the views did not capture
        spark.sql(f"DROP VIEW {ns}.v")
        report = register_views(spark, store, ns)
        assert report.ok and sorted(report.registered) == [f"{ns}.by_api", f"{ns}.v"]
        for name in ("v", "by_api", "own"):
            assert spark.sql(f"SELECT ms FROM {ns}.{name}").first().ms == kolkata, name
            assert "view.sqlConfig.spark.sql.caseSensitive" not in _view_properties(spark, ns, name)
        assert spark.sql(f"SELECT {query[7:]}").first().ms == utc  # the session's own settings are back
        assert spark.conf.get("spark.sql.caseSensitive") == "true"
        assert register_views(spark, store, ns).unchanged == [f"{ns}.by_api", f"{ns}.v"]

        # a copy made again by vs.sql (ALTER VIEW ... SET) follows the stored configs too
        spark.sql(f"DROP VIEW {ns}.v")
        sql(spark, store, f"ALTER VIEW {ns}.v SET TBLPROPERTIES ('k' = '1')")
        assert spark.sql(f"SELECT ms FROM {ns}.v").first().ms == kolkata

        # a recorded config Spark refuses: the views fail (each of them, though the configs are set
        # once for views recorded alike), and the session's configs are put back
        for name in ("v", "by_api"):
            store.replace_view(f"{ns}.{name}", columns=view.columns, representations=view.representations,
                               default_namespace=list(view.default_namespace), default_catalog=view.default_catalog,
                               summary={**view.summary, "spark.sql-configs": json.dumps(
                                   {**captured, "spark.sql.ansi.enabled": "maybe"})})
        report = register_views(spark, store, ns)
        assert sorted(f.identifier for f in report.failed) == [f"{ns}.by_api", f"{ns}.v"]
        assert spark.conf.get("spark.sql.session.timeZone") == "UTC"
        assert spark.conf.get("spark.sql.caseSensitive") == "true"
        assert spark.conf.get("spark.sql.ansi.enabled") == "true"
    finally:
        spark.conf.set("spark.sql.session.timeZone", zone)
        spark.conf.unset("spark.sql.caseSensitive")


def test_sql_alter_view_with_schema_keeps_store_and_session_in_step(spark, store, data, ns):
    spark.sql(f"CREATE DATABASE {ns}")
    sql(spark, store, f"CREATE VIEW {ns}.v (id COMMENT 'order id', region) COMMENT 'c' TBLPROPERTIES ('k' = '1') "
                      f"AS SELECT order_id, region FROM {data}.orders")

    def session_mode():
        rows = spark.sql(f"DESCRIBE EXTENDED {ns}.v").collect()
        return next(r.data_type for r in rows if r.col_name == "View Schema Mode")

    view = sql(spark, store, f"ALTER VIEW {ns}.v WITH SCHEMA BINDING")
    assert view.current_version_id == 2 and view.summary["spark.schema-mode"] == "BINDING"
    assert view.columns[0].comment == "order id" and view.comment == "c" and view.properties["k"] == "1"
    assert session_mode() == "BINDING"
    assert spark.sql(f"DESCRIBE {ns}.v").collect()[0].comment == "order id"  # as Spark keeps it
    assert [e.type for e in store.history(f"{ns}.v")] == ["view.created", "view.replaced"]
    assert register_views(spark, store, ns).unchanged == [f"{ns}.v"]  # the copy is the stored definition

    # without a session copy, the copy is made again; Spark refuses (the table is gone): nothing changes
    spark.sql(f"CREATE TABLE {ns}.base AS SELECT 1 AS x")
    sql(spark, store, f"CREATE VIEW {ns}.w AS SELECT x FROM {ns}.base")
    spark.sql(f"DROP VIEW {ns}.w")
    spark.sql(f"DROP TABLE {ns}.base")
    events = store.event_count()
    with pytest.raises(ValidationError, match="TABLE_OR_VIEW_NOT_FOUND"):
        sql(spark, store, f"ALTER VIEW {ns}.w WITH SCHEMA TYPE EVOLUTION")
    assert store.event_count() == events and not spark.catalog.tableExists(f"{ns}.w")
    spark.sql(f"CREATE TABLE {ns}.base AS SELECT 1 AS x")
    view = sql(spark, store, f"ALTER VIEW {ns}.w WITH SCHEMA TYPE EVOLUTION")
    assert view.summary["spark.schema-mode"] == "TYPE EVOLUTION"
    assert spark.sql(f"SELECT x FROM {ns}.w").first().x == 1

    # the store refuses (a before_commit receiver vetoes the commit): the session copy is put back
    def veto(sender, events):
        raise RuntimeError("frozen")

    signals.before_commit.connect(veto)
    try:
        with pytest.raises(ViewStoreError, match="refused the change: frozen"):
            sql(spark, store, f"ALTER VIEW {ns}.w WITH SCHEMA BINDING")
    finally:
        signals.before_commit.disconnect(veto)
    rows = spark.sql(f"DESCRIBE EXTENDED {ns}.w").collect()
    assert next(r.data_type for r in rows if r.col_name == "View Schema Mode") == "TYPE EVOLUTION"
    assert store.load_view(f"{ns}.w").summary["spark.schema-mode"] == "TYPE EVOLUTION"


def test_sql_column_list_keeps_the_comments_the_query_inherits(spark, store, ns):
    spark.sql(f"CREATE DATABASE {ns}")
    spark.sql(f"CREATE TABLE {ns}.orders (id BIGINT COMMENT 'the id', amount INT COMMENT 'eur') USING parquet")
    view = sql(spark, store, f"CREATE VIEW {ns}.st (i, amt COMMENT 'own') AS SELECT id, amount FROM {ns}.orders")
    spark.sql(f"CREATE VIEW {ns}.own (i, amt COMMENT 'own') AS SELECT id, amount FROM {ns}.orders")
    spark_comments = [(r.col_name, r.comment) for r in spark.sql(f"DESCRIBE {ns}.own").collect()]
    assert spark_comments == [("i", "the id"), ("amt", "own")]
    assert [(c.name, c.comment) for c in view.columns] == spark_comments
    assert [(r.col_name, r.comment) for r in spark.sql(f"DESCRIBE {ns}.st").collect()] == spark_comments


def test_sql_create_view_creates_a_missing_database_unlike_spark(spark, store, ns):
    """Deliberate (documented in sql()): the session follows the store, whose namespaces need no creating."""
    with pytest.raises(Exception, match="SCHEMA_NOT_FOUND"):
        spark.sql(f"CREATE VIEW {ns}.v AS SELECT 1 AS one")
    assert sql(spark, store, f"CREATE VIEW {ns}.v AS SELECT 1 AS one").identifier == (ns, "v")
    assert spark.catalog.databaseExists(ns) and spark.sql(f"SELECT one FROM {ns}.v").first().one == 1


def test_sql_refuses_view_ddl_hidden_in_scripts_and_execute_immediate(spark, store, ns):
    spark.sql(f"CREATE DATABASE {ns}")
    sql(spark, store, f"CREATE VIEW {ns}.v AS SELECT 1 AS one")
    for statement in (f"EXECUTE IMMEDIATE 'CREATE VIEW {ns}.e AS SELECT 1 AS one'",
                      f"BEGIN CREATE VIEW {ns}.s AS SELECT 1 AS one; END",
                      f"BEGIN DECLARE x INT; IF 1 = 1 THEN ALTER VIEW {ns}.v RENAME TO w; END IF; END",
                      f"BEGIN EXECUTE IMMEDIATE 'DROP VIEW {ns}.v'; END",
                      f"BEGIN DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN CREATE VIEW {ns}.h AS SELECT 1 AS one; "
                      f"END; SELECT 1 / 0; END",  # in an exception handler
                      f"BEGIN USE {ns}; DROP VIEW v; END",  # a bare name that a USE in the script resolves
                      f"EXECUTE IMMEDIATE 'ALTER VIEW {ns}.v SET TBLPROPERTIES (\\'k\\' = \\'v\\')'"):
        with pytest.raises(ValidationError, match="view DDL"):
            sql(spark, store, statement)
    assert store.list_views() == [(ns, "v")] and store.event_count() == 1
    assert sorted(r.tableName for r in spark.sql(f"SHOW TABLES IN {ns}").collect()) == ["v"]
    # scripts and EXECUTE IMMEDIATE without view DDL still run
    assert sql(spark, store, "EXECUTE IMMEDIATE 'SELECT 41 + 1 AS n'").first().n == 42
    assert sql(spark, store, "BEGIN SELECT 7 AS n; END").first().n == 7
    # a script may drop its own temporary view (and any view the store does not hold), and any
    # global temporary one; a statement run once (not in a script) is judged by what it names
    sql(spark, store, "BEGIN CREATE TEMPORARY VIEW tv AS SELECT 1 AS x; DROP VIEW tv; END")
    assert not spark.catalog.tableExists("tv")
    spark.sql("CREATE GLOBAL TEMPORARY VIEW v AS SELECT 1 AS x")
    sql(spark, store, "BEGIN DROP VIEW IF EXISTS global_temp.v; END")
    spark.sql("CREATE GLOBAL TEMPORARY VIEW v AS SELECT 1 AS x")
    sql(spark, store, "EXECUTE IMMEDIATE 'DROP VIEW IF EXISTS global_temp.v'")
    assert not spark.catalog.tableExists("global_temp.v")
    with pytest.raises(ValidationError, match="view DDL"):  # a stored view's name, in a script: refused
        sql(spark, store, "BEGIN CREATE TEMPORARY VIEW v AS SELECT 2 AS y; DROP VIEW v; END")
    spark.catalog.dropTempView("v")
    # a name given as IDENTIFIER(variable) is known only when Spark runs the statement
    spark.sql(f"DECLARE OR REPLACE VARIABLE vs_test_name STRING DEFAULT '{ns}.v'")
    try:
        for statement in ("DROP VIEW IDENTIFIER(vs_test_name)",
                          "ALTER VIEW IDENTIFIER(vs_test_name) AS SELECT 2 AS one",
                          "BEGIN DROP VIEW IDENTIFIER(vs_test_name); END"):
            with pytest.raises(ValidationError, match="name written out"):
                sql(spark, store, statement)
    finally:
        spark.sql("DROP TEMPORARY VARIABLE IF EXISTS vs_test_name")
    assert store.list_views() == [(ns, "v")] and spark.catalog.tableExists(f"{ns}.v")


def test_sql_set_properties_keeps_reserved_keys_off_the_session_copy(spark, store, ns):
    spark.sql(f"CREATE DATABASE {ns}")
    sql(spark, store, f"CREATE VIEW {ns}.v AS SELECT 1 AS one")
    view = sql(spark, store, f"ALTER VIEW {ns}.v SET TBLPROPERTIES ('hms.x' = '1', 'spark.sql.y' = '2', "
                             f"'viewstore.fingerprint' = 'forged', 'team' = 'ops', 'comment' = 'c')")
    assert {"hms.x", "spark.sql.y", "team"} <= set(view.properties) and view.comment == "c"

    def copy_properties():
        return {r.key: r.value for r in spark.sql(f"SHOW TBLPROPERTIES {ns}.v").collect()}

    props = copy_properties()
    assert props["team"] == "ops" and props["viewstore.fingerprint"] != "forged"
    assert "hms.x" not in props and "spark.sql.y" not in props
    assert spark.sql(f"DESCRIBE TABLE EXTENDED {ns}.v").where("col_name = 'Comment'").first().data_type == "c"
    sql(spark, store, f"ALTER VIEW {ns}.v UNSET TBLPROPERTIES ('hms.x', 'team')")
    assert "team" not in copy_properties() and "viewstore.fingerprint" in copy_properties()


def test_a_view_without_recorded_configs_keeps_the_fingerprint_earlier_releases_gave_its_copy():
    """Copies made before configs were recorded stay unchanged for register_views: their fingerprint
    is the hash of the statement (without it), the catalog and the namespace, as it was."""
    import hashlib

    from viewstore.spark.session import FINGERPRINT, _create_statement

    target = ("spark_catalog", ("sales",))
    statement, fingerprint = _create_statement(("sales", "v"), "SELECT 1 AS x", [Column("x", "int")], "c", {"k": "1"},
                                               target)
    plain = statement.replace(f", '{FINGERPRINT}' = '{fingerprint}'", "")
    assert fingerprint == hashlib.sha256("\0".join([plain, *target[:1], *target[1]]).encode()).hexdigest()[:32]
    with_configs = _create_statement(("sales", "v"), "SELECT 1 AS x", [Column("x", "int")], "c", {"k": "1"}, target,
                                     configs={"spark.sql.session.timeZone": "UTC"})[1]
    assert with_configs != fingerprint  # views recorded under other configs are copied again


def test_the_store_id_leaves_the_fingerprints_of_the_release_before_store_ids_as_they_were():
    """The values below are what the release before store ids computed for these definitions: a copy it
    made is still found unchanged by register_views, which then only adds the store's id to it."""
    from viewstore.spark.session import FINGERPRINT, STORE, _create_statement

    target = ("spark_catalog", ("sales",))
    args = (("sales", "v"), "SELECT 1 AS x", [Column("x", "int", "the x")], "c",
            {"k": "1", "owner": "o", "comment": "c"}, target)
    store_id = str(uuid.uuid4())
    statement, fingerprint = _create_statement(*args, store_id=store_id)
    assert fingerprint == _create_statement(*args)[1] == "02dcc1d8577e2b153b66fbf4d37e2c6e"
    assert f"'{FINGERPRINT}' = '{fingerprint}'" in statement and f"'{STORE}' = '{store_id}'" in statement
    configured = _create_statement(*args, "BINDING", {"spark.sql.session.timeZone": "UTC"}, store_id)[1]
    assert configured == "fcb9db4347cae7e0dca25ea0ab211ecb"
    # a stored property of that name (a view imported from a copy) neither reaches the copy nor counts
    forged = _create_statement(*args[:4], {**args[4], STORE: "forged"}, target, store_id=store_id)
    assert forged == (statement, fingerprint)


def test_sql_alter_view_with_schema_from_another_database_and_time_zone_keeps_the_views_own(spark, store, ns):
    """Spark's ALTER VIEW ... WITH SCHEMA captures the current namespace and SQL configs again; the
    session copy keeps the view's own (the store's), whatever the driver's are at the time."""
    other, zone = f"{ns}_other", spark.conf.get("spark.sql.session.timeZone")
    spark.sql(f"CREATE DATABASE {ns}")
    spark.sql(f"CREATE DATABASE {other}")
    spark.sql(f"CREATE TABLE {ns}.t USING parquet AS SELECT 1 AS id")
    spark.sql(f"CREATE TABLE {other}.t USING parquet AS SELECT 'B' AS id")
    try:
        spark.catalog.setCurrentDatabase(ns)
        spark.conf.set("spark.sql.session.timeZone", "America/New_York")
        sql(spark, store, f"CREATE VIEW {ns}.v AS SELECT id FROM t")
        spark.catalog.setCurrentDatabase(other)
        spark.conf.set("spark.sql.session.timeZone", "UTC")
        sql(spark, store, f"ALTER VIEW {ns}.v WITH SCHEMA BINDING")
        properties = _view_properties(spark, ns, "v")
        assert properties["view.sqlConfig.spark.sql.variable.substitute"] == "false"  # the SQL is read as stored
        assert properties["view.catalogAndNamespace.part.1"] == ns
        assert properties["view.sqlConfig.spark.sql.session.timeZone"] == "America/New_York"
        assert spark.sql(f"SELECT id FROM {ns}.v").collect()[0].id == 1  # the view's own t
        assert spark.conf.get("spark.sql.session.timeZone") == "UTC"
        assert spark.catalog.currentDatabase() == other
    finally:
        spark.conf.set("spark.sql.session.timeZone", zone)
        spark.sql(f"DROP DATABASE IF EXISTS {other} CASCADE")


def test_views_recorded_under_different_configs_each_get_their_own(spark, store, ns):
    """The configs are switched key by key from one view to the next; each copy captures its own."""
    zones = ["Asia/Kolkata", "UTC", "America/New_York", "Asia/Kolkata"]
    spark.sql(f"CREATE DATABASE {ns}")
    for i, zone in enumerate(zones):
        configs = {"spark.sql.session.timeZone": zone}
        if i == 2:
            configs.update({"spark.sql.ansi.enabled": "false", "spark.sql.caseSensitive": "true"})
        _stored(store, f"{ns}.v{i}", "SELECT unix_millis(TIMESTAMP'2024-01-01 00:00:00') AS ms", ns,
                [Column("ms", "long", nullable=False)], summary={"spark.sql-configs": json.dumps(configs)})
    before = {key: spark.conf.get(key) for key in ("spark.sql.session.timeZone", "spark.sql.ansi.enabled",
                                                   "spark.sql.caseSensitive")}
    assert register_views(spark, store, ns).ok
    for i, zone in enumerate(zones):
        properties = _view_properties(spark, ns, f"v{i}")
        assert properties["view.sqlConfig.spark.sql.session.timeZone"] == zone
        assert (properties["view.sqlConfig.spark.sql.ansi.enabled"] == "false") == (i == 2)  # else the default
        assert ("view.sqlConfig.spark.sql.caseSensitive" in properties) == (i == 2)  # not carried to the next
    assert {key: spark.conf.get(key) for key in before} == before
    assert check_views(spark, store, ns).ok


# -- inside a store transaction ----------------------------------------------------------------------


def test_work_that_changes_the_session_is_refused_inside_a_store_transaction(spark, store, data, ns):
    """A rollback of the block takes back the store's part of the work, never the session's: the
    copies would outlive the definitions they copy. Reads go on."""
    from viewstore import ViewStoreError

    spark.sql(f"CREATE DATABASE {ns}")
    _stored(store, f"{ns}.base", f"SELECT order_id FROM {data}.orders", ns, [("order_id", "bigint")])
    register_views(spark, store, ns)
    before = store.event_count()
    with pytest.raises(RuntimeError, match="rolled back"):
        with store.transaction():
            store.alter_view(f"{ns}.base", ViewChange.update_comment("in the block"))
            refused = [lambda: register_views(spark, store, ns),
                       lambda: sql(spark, store, f"CREATE VIEW {ns}.ddl AS SELECT 2 AS two"),
                       lambda: sql(spark, store, f"ALTER VIEW {ns}.base SET TBLPROPERTIES ('k' = 'v')"),
                       lambda: sql(spark, store, f"DROP VIEW {ns}.base")]
            for call in refused:
                with pytest.raises(ViewStoreError, match="cannot take back"):
                    call()
            assert check_views(spark, store, ns).ok  # reading goes on
            assert sql(spark, store, f"SELECT count(*) AS n FROM {ns}.base").collect()[0].n == 3
            raise RuntimeError("rolled back")
    assert store.event_count() == before
    names = {r.viewName for r in spark.sql(f"SHOW VIEWS IN {ns}").collect()}
    assert names == {"base"}  # no copy was made of what the block never committed
    described = {r[0]: r[1] for r in spark.sql(f"DESCRIBE TABLE EXTENDED {ns}.base").collect()}
    assert "k" not in described.get("Table Properties", "")
    assert create_view(spark, store, f"{ns}.made", "SELECT 1 AS one").identifier == (ns, "made")  # after: fine


def test_create_view_goes_with_a_store_transaction(spark, store, data, ns):
    """create_view only analyzes in a session of its own and writes the store: inside a block its view
    is committed with the block, or taken back with it, and the session holds no copy either way."""
    spark.sql(f"CREATE DATABASE {ns}")
    with store.transaction():
        create_view(spark, store, f"{ns}.kept", f"SELECT order_id FROM {data}.orders")
        store.alter_view(f"{ns}.kept", ViewChange.update_comment("in the block"))
    assert store.load_view(f"{ns}.kept").comment == "in the block"
    before = store.event_count()
    with pytest.raises(RuntimeError, match="rolled back"):
        with store.transaction():
            create_view(spark, store, f"{ns}.gone", "SELECT 1 AS one")
            assert store.view_exists(f"{ns}.gone")
            raise RuntimeError("rolled back")
    assert store.event_count() == before and not store.view_exists(f"{ns}.gone")
    assert {r.viewName for r in spark.sql(f"SHOW VIEWS IN {ns}").collect()} == set()


def test_ddl_on_a_session_view_the_store_does_not_hold_goes_on_inside_a_store_transaction(spark, store, ns):
    """Only view DDL on the store's views is refused inside a block: ALTER or DROP of a view of the
    session catalog that the store does not hold goes to Spark, as outside one."""
    spark.sql(f"CREATE DATABASE {ns}")
    spark.sql(f"CREATE VIEW {ns}.handmade AS SELECT 1 AS one")
    with store.transaction():
        sql(spark, store, f"ALTER VIEW {ns}.handmade SET TBLPROPERTIES ('k' = 'v')")
        assert sql(spark, store, f"DROP VIEW {ns}.handmade") is not None  # Spark's own answer
    assert {r.viewName for r in spark.sql(f"SHOW VIEWS IN {ns}").collect()} == set()


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


def test_register_views_waits_for_view_ddl_through_sql(spark, store, ns, monkeypatch):
    """register_views in one thread while sql() in another has made the session copy of a CREATE
    OR REPLACE VIEW but not yet written the store: register_views waits for its turn, so the copy it
    makes is the store's new definition; it made the store's old one, which the session then kept
    while the store held the new."""
    import threading

    import viewstore.spark.ddl as ddl

    _stored(store, f"{ns}.v", "SELECT 1 AS x", ns)
    register_views(spark, store, ns)
    real, outcome = ddl._Definition.write, {}

    def registering():
        try:
            outcome["register"] = register_views(spark, store, ns, refresh=True)
        except Exception as error:  # noqa: BLE001 - reported below
            outcome["register"] = error

    def register_then_write(self, *args, **kwargs):
        if "thread" not in outcome:
            outcome["thread"] = thread = threading.Thread(target=registering)
            thread.start()
            thread.join(timeout=3)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(ddl._Definition, "write", register_then_write)
    sql(spark, store, f"CREATE OR REPLACE VIEW {ns}.v AS SELECT 2 AS x")
    outcome["thread"].join(timeout=60)
    monkeypatch.undo()
    assert outcome["register"].ok and outcome["register"].registered == [f"{ns}.v"], outcome
    assert store.load_view(f"{ns}.v").sql_for("spark") == "SELECT 2 AS x"
    assert spark.sql(f"SELECT x FROM {ns}.v").first().x == 2


def test_register_views_gives_up_after_the_wait_for_another_threads_turn(spark, store, ns, monkeypatch):
    """A thread that holds the turn too long makes register_views raise ConcurrencyError (busy),
    with nothing done, as sql() does."""
    import threading

    import viewstore.spark.catalog_plugin as plugin
    import viewstore.spark.session as session
    from viewstore import ConcurrencyError

    _stored(store, f"{ns}.v", "SELECT 1 AS x", ns)
    monkeypatch.setattr(session, "DDL_TURN_WAIT_S", 0.2)
    holding, release = threading.Event(), threading.Event()

    def hold():
        with session._one_ddl_at_a_time():
            holding.set()
            release.wait(30)

    thread = threading.Thread(target=hold)
    thread.start()
    holding.wait(30)
    try:
        with pytest.raises(ConcurrencyError, match="register_views") as raised:
            register_views(spark, store, ns)
    finally:
        release.set()
        thread.join(30)
    assert raised.value.busy
    assert not spark.catalog.databaseExists(ns)
    assert plugin.TRANSACTION_WAIT_S == 10.0  # the catalog bridge's wait is its own


def test_a_catalog_configured_in_mixed_case_is_matched_exactly_as_spark_does(spark, store, data, ns, tmp_path):
    """Spark matches a configured catalog's name exactly (only spark_catalog in any case): a view
    name led by a catalog configured as 'Lake' is that catalog's, never the store's; the same
    name in another case names no catalog."""
    query = f"SELECT day FROM {data}.orders"
    spark.conf.set("spark.sql.catalog.Lake", "viewstore.NoSuchCatalogClass")
    try:
        for name in (f"Lake.{ns}.c", "Lake.c"):
            with pytest.raises(ValidationError, match=r"catalog 'Lake'.*session catalog"):
                create_view(spark, store, name, query)
            with pytest.raises(ViewStoreError) as refused:  # Spark's own word: catalog 'Lake' does not load
                sql(spark, store, f"CREATE VIEW {name} AS {query}")
            assert "NoSuchCatalogClass" in str(refused.value)
        assert store.list_views() == []
        assert not spark.catalog.databaseExists("lake")
        # 'LAKE' is no catalog in Spark: LAKE.c is view c of database lake, the store's
        assert create_view(spark, store, "LAKE.c", query).identifier == ("lake", "c")
    finally:
        spark.conf.unset("spark.sql.catalog.Lake")


@pytest.mark.parametrize("holding", ["transaction", "before_commit"])
def test_a_thread_holding_a_store_waits_for_the_ddl_turn_only_as_long_as_the_catalog_waits(
        spark, store, ns, tmp_path, monkeypatch, holding):
    """A thread inside another store's transaction() block, or in one of its before_commit
    receivers, asks for the DDL turn while the thread holding the turn waits for that very store:
    it gives up (ConcurrencyError, busy) after the catalog bridge's wait (TRANSACTION_WAIT_S), not
    DDL_TURN_WAIT_S, so the two stand still no longer than a Spark statement on a held store does."""
    import threading
    import time

    import viewstore.spark.catalog_plugin as plugin
    import viewstore.spark.session as session
    from viewstore import ConcurrencyError, ViewStore

    _stored(store, f"{ns}.v", "SELECT 1 AS x", ns)
    other = ViewStore(tmp_path / "other.db", actor="a")
    monkeypatch.setattr(session, "DDL_TURN_WAIT_S", 20.0)
    monkeypatch.setattr(plugin, "TRANSACTION_WAIT_S", 0.5)
    has_turn, held = threading.Event(), threading.Event()

    def turn_then_other_store():  # as a DDL statement on ``other`` that holds the turn, then reads the store
        with session._one_ddl_at_a_time():
            has_turn.set()
            held.wait(30)
            other.view_exists("a.b")

    thread = threading.Thread(target=turn_then_other_store)
    thread.start()
    has_turn.wait(30)
    outcome = {}

    def ask_for_the_turn(*_args, **_kwargs):
        held.set()
        started = time.monotonic()
        try:
            register_views(spark, store, ns)
        except ConcurrencyError as e:
            outcome["error"] = e
        outcome["seconds"] = time.monotonic() - started

    try:
        if holding == "transaction":
            with other.transaction():
                ask_for_the_turn()
        else:
            signals.before_commit.connect(ask_for_the_turn, sender=other)
            try:
                _stored(other, "a.c", "SELECT 1 AS x", ["a"])
            finally:
                signals.before_commit.disconnect(ask_for_the_turn, sender=other)
    finally:
        held.set()
        thread.join(60)
    assert outcome["error"].busy and outcome["seconds"] < 5, outcome
    assert not spark.catalog.databaseExists(ns)
    other.close()
