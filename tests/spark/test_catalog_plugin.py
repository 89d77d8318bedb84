"""viewstore as a Spark catalog: every view statement through real Spark against a real store file."""

from __future__ import annotations

import json
import logging
import re
import threading
from decimal import Decimal
from pathlib import Path

import pytest

from viewstore import Column, SQLRepresentation, ViewChange, ViewStore
from viewstore.errors import INSTALL_SPARK, NotInstalledError, ValidationError
from viewstore.spark import attach, detach
from viewstore.spark import build_jar
from viewstore.spark.catalog_plugin import (QUERY_COLUMN_NAMES, SCHEMA_MODE, SQL_CONFIGS, SUPPORTED_SPARK, _Bridge,
                                            check_spark_version, jar_path, session_conf)

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]
DB = "catplug"  # the spark_catalog database holding the base table
ORDERS = f"spark_catalog.{DB}.orders"
BIG_SQL = f"SELECT id, amount FROM {ORDERS} WHERE amount > 100"
README_CREATE = (f"CREATE VIEW vs.sales.big_orders (id COMMENT 'order id', amount) COMMENT 'big ones' "
                 f"TBLPROPERTIES ('team'='finance') AS {BIG_SQL}")


@pytest.fixture(scope="module")
def orders(spark):
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {DB}")
    spark.sql(f"DROP TABLE IF EXISTS {ORDERS}")
    spark.sql(f"CREATE TABLE {ORDERS} (id BIGINT, amount DECIMAL(10,2), tag SMALLINT) USING parquet")
    spark.sql(f"INSERT INTO {ORDERS} VALUES (1, 50.00, 1), (2, 150.00, 2), (3, 300.00, 3)")
    return ORDERS


@pytest.fixture
def vs(spark, store, orders):
    """The test's fresh store attached to the running session as catalog ``vs``."""
    assert attach(spark, store, name="vs") == "vs"
    yield store
    spark.sql("USE spark_catalog.default")
    detach(spark, "vs")


def run(spark, statement):
    return [tuple(row) for row in spark.sql(statement).collect()]


def fails(spark, statement, condition, *fragments):
    """Run a statement that must fail with a short, clean Spark AnalysisException."""
    from pyspark.errors import AnalysisException

    with pytest.raises(AnalysisException) as caught:
        spark.sql(statement).collect()
    error = caught.value
    message = str(error)
    assert error.getCondition() == condition, message
    assert len(message) < 1500, f"{len(message)} characters: {message[:300]}"
    assert "Traceback" not in message and "py4j" not in message.lower()
    for fragment in fragments:
        assert fragment in message, message
    return message


def kinds(store):
    return [e.type for e in store.events()]


def commits(store):
    """Event types grouped by commit, in log order."""
    groups: dict[str, list[str]] = {}
    for event in store.events():
        groups.setdefault(event.commit_id, []).append(event.type)
    return list(groups.values())


# -- CREATE and SELECT --------------------------------------------------------------------------


def test_readme_example_creates_a_view_recorded_as_one_event(spark, vs):
    run(spark, README_CREATE)
    rows = run(spark, "SELECT * FROM vs.sales.big_orders ORDER BY id")
    assert rows == [(2, Decimal("150.00")), (3, Decimal("300.00"))]

    (event,) = vs.events()
    assert (event.type, event.identifier, event.actor) == ("view.created", ("sales", "big_orders"), "alice")
    view = vs.load_view("sales.big_orders")
    assert view.representations == (SQLRepresentation("spark", BIG_SQL),)  # Spark's captured text, verbatim
    assert (view.default_catalog, view.default_namespace) == ("spark_catalog", ("default",))
    assert view.columns == (Column("id", "long", "order id"), Column("amount", "decimal(10,2)"))
    assert view.comment == "big ones" and view.properties == {"comment": "big ones", "team": "finance"}
    summary = view.summary
    assert summary["engine-name"] == "spark" and summary["engine-version"] == spark.version
    assert json.loads(summary[QUERY_COLUMN_NAMES]) == ["id", "amount"]
    assert summary[SCHEMA_MODE] == "COMPENSATION"
    configs = json.loads(summary[SQL_CONFIGS])
    assert configs["spark.sql.session.timeZone"] == spark.conf.get("spark.sql.session.timeZone")
    assert list(configs) == sorted(configs)  # in key order, whatever order Spark gives them in


def test_current_catalog_and_namespace_become_the_defaults(spark, vs):
    spark.sql(f"USE spark_catalog.{DB}")
    run(spark, "CREATE VIEW vs.sales.cheap AS SELECT id FROM orders WHERE amount < 100")
    spark.sql("USE spark_catalog.default")
    assert run(spark, "SELECT * FROM vs.sales.cheap") == [(1,)]
    view = vs.load_view("sales.cheap")
    assert (view.default_catalog, view.default_namespace) == ("spark_catalog", (DB,))
    assert view.sql_for("spark") == "SELECT id FROM orders WHERE amount < 100"


def test_views_over_views_inside_the_catalog(spark, vs):
    run(spark, README_CREATE)
    spark.sql("USE vs.sales")
    run(spark, "CREATE VIEW top_order AS SELECT id FROM big_orders WHERE amount > 200")
    run(spark, "CREATE VIEW vs.reports.top_ids AS SELECT max(id) AS top FROM vs.sales.top_order")
    spark.sql("USE spark_catalog.default")
    assert run(spark, "SELECT * FROM vs.sales.top_order") == [(3,)]
    assert run(spark, "SELECT * FROM vs.reports.top_ids") == [(3,)]
    child = vs.load_view("sales.top_order")
    assert (child.default_catalog, child.default_namespace) == ("vs", ("sales",))
    # a view in spark_catalog may read a catalog view too
    run(spark, f"CREATE OR REPLACE VIEW {DB}.over_catalog AS SELECT count(*) AS n FROM vs.sales.big_orders")
    assert run(spark, f"SELECT n FROM {DB}.over_catalog") == [(2,)]


def test_names_are_normalised_as_the_store_normalises_them(spark, vs):
    run(spark, f"CREATE VIEW vs.Sales.Big_Orders AS {BIG_SQL}")
    assert vs.list_views() == [("sales", "big_orders")]
    assert len(run(spark, "SELECT * FROM vs.SALES.big_ORDERS")) == 2
    assert run(spark, "SHOW VIEWS IN vs.SALES") == [("sales", "big_orders", False)]
    run(spark, "ALTER VIEW vs.sales.BIG_ORDERS SET TBLPROPERTIES ('Team'='x')")
    assert vs.load_view("sales.big_orders").properties == {"Team": "x"}  # property keys are kept as given
    run(spark, "DROP VIEW vs.SALES.big_orders")
    assert vs.list_views() == []


def test_python_api_views_are_usable_from_spark(spark, vs):
    vs.create_view("sales.py_view", columns=[Column("id", "long"), Column("amount", "decimal(10,2)", "in EUR")],
                   representations=[("spark", f"SELECT id, amount FROM {ORDERS}"),
                                    ("trino", "SELECT id, amount FROM hive.catplug.orders")],
                   default_namespace=["default"], default_catalog="spark_catalog")
    assert len(run(spark, "SELECT * FROM vs.sales.py_view")) == 3
    described = dict((r[0], r[2]) for r in run(spark, "DESCRIBE vs.sales.py_view"))
    assert described == {"id": None, "amount": "in EUR"}
    extended = dict((r[0], r[1]) for r in run(spark, "DESCRIBE EXTENDED vs.sales.py_view"))
    assert extended["View Schema Mode"] == "COMPENSATION"  # Spark's default: the version records no mode
    run(spark, "ALTER VIEW vs.sales.py_view SET TBLPROPERTIES ('x'='y')")
    view = vs.load_view("sales.py_view")
    assert view.current_version_id == 1 and view.dialects == ("spark", "trino")
    assert kinds(vs) == ["view.created", "view.properties_set"]


def test_spark_s_summary_keys_holding_other_json_read_as_missing(spark, vs):
    """A version whose summary (written through the Python API) holds other JSON under Spark's keys is
    served as one without them: Spark's defaults, and the columns' names; so Spark sends back the
    definition it loaded, and a property change is no new version."""
    vs.create_view("sales.odd", columns=[Column("x", "int")], default_namespace=["sales"],
                   representations=[("spark", "SELECT 1 AS x")],
                   summary={QUERY_COLUMN_NAMES: '{"x": 1}', SQL_CONFIGS: '["spark.sql.session.timeZone"]'})
    assert run(spark, "SELECT x FROM vs.sales.odd") == [(1,)]
    extended = dict((r[0], r[1]) for r in run(spark, "DESCRIBE EXTENDED vs.sales.odd"))
    assert "View Query Output Columns" not in extended and extended["View Schema Mode"] == "COMPENSATION"
    run(spark, "ALTER VIEW vs.sales.odd SET TBLPROPERTIES ('k'='v')")
    assert vs.load_view("sales.odd").current_version_id == 1 and kinds(vs) == ["view.created", "view.properties_set"]


def test_unqualified_names_resolve_as_register_views_resolves_them(spark, vs, tmp_path):
    """The Python API and the CLI record the store's catalog name (or none): that means spark_catalog."""
    from viewstore.spark import register_views

    nameless = ViewStore(tmp_path / "nameless.db", actor="etl")  # the CLI's default: no catalog name
    try:
        for store in (vs, nameless):
            store.create_view(f"{DB}.big", columns=[Column("id", "long"), Column("amount", "decimal(10,2)")],
                              representations=[("spark", "SELECT id, amount FROM orders WHERE amount > 100")],
                              default_namespace=[DB])
            store.create_view(f"{DB}.no_namespace", columns=[Column("n", "long")],
                              representations=[("spark", "SELECT count(*) AS n FROM orders")], default_namespace=[])
        assert vs.load_view(f"{DB}.big").default_catalog == "prod"
        assert nameless.load_view(f"{DB}.big").default_catalog is None
        for store in (vs, nameless):
            attach(spark, store, name="vs")
            assert run(spark, f"SELECT id FROM vs.{DB}.big ORDER BY id") == [(2,), (3,)]
            assert run(spark, f"SELECT n FROM vs.{DB}.no_namespace") == [(3,)]
            described = dict((r[0], r[1]) for r in run(spark, f"DESCRIBE EXTENDED vs.{DB}.big"))
            assert described["View Current Catalog"] == "spark_catalog"
            # a property change is still no new version: Spark sent back the definition it loaded
            run(spark, f"ALTER VIEW vs.{DB}.big SET TBLPROPERTIES ('x'='y')")
            view = store.load_view(f"{DB}.big")
            assert view.current_version_id == 1 and view.default_catalog == store.catalog
        # register_views gives the same answers
        report = register_views(spark, vs, DB)
        assert report.ok
        assert run(spark, f"SELECT id FROM {DB}.big ORDER BY id") == [(2,), (3,)]
        assert run(spark, f"SELECT n FROM {DB}.no_namespace") == [(3,)]
        # a default catalog that is a catalog of the session keeps meaning that catalog
        attach(spark, vs, name="vs")
        vs.create_view("sales.inner", columns=[Column("x", "int")], representations=[("spark", "SELECT 1 AS x")],
                       default_namespace=["sales"], default_catalog="vs")
        vs.create_view("sales.outer", columns=[Column("x", "int")], representations=[("spark", "SELECT x FROM inner")],
                       default_namespace=["sales"], default_catalog="vs")
        assert run(spark, "SELECT x FROM vs.sales.outer") == [(1,)]
    finally:
        spark.sql(f"DROP VIEW IF EXISTS spark_catalog.{DB}.big")
        spark.sql(f"DROP VIEW IF EXISTS spark_catalog.{DB}.no_namespace")
        nameless.close()


def test_a_view_made_in_another_catalog_of_the_session_reads_its_bare_names_there(spark, vs, tmp_path):
    """The current catalog of the statement that made the view is any catalog of the session, not only
    this one or spark_catalog."""
    other = ViewStore(tmp_path / "other.db", catalog="other", actor="bob")
    attach(spark, other, name="vs_names")
    try:
        run(spark, "CREATE VIEW vs_names.sales.inner AS SELECT 1 AS x")
        spark.sql("USE vs_names.sales")
        run(spark, "CREATE VIEW vs.sales.outer AS SELECT x FROM inner")
        spark.sql("USE spark_catalog.default")
        assert vs.load_view("sales.outer").default_catalog == "vs_names"
        assert run(spark, "SELECT x FROM vs.sales.outer") == [(1,)]
        described = dict((r[0], r[1]) for r in run(spark, "DESCRIBE EXTENDED vs.sales.outer"))
        assert described["View Current Catalog"] == "vs_names"
        # Spark sends back the definition it loaded: a property change keeps the version (and its other dialect)
        vs.alter_view("sales.outer", ViewChange.add_representation(("trino", "SELECT x FROM vs_names.sales.inner")))
        run(spark, "ALTER VIEW vs.sales.outer SET TBLPROPERTIES ('k'='v')")
        view = vs.load_view("sales.outer")
        assert view.dialects == ("spark", "trino") and view.properties == {"k": "v"}
        assert kinds(vs)[-1] == "view.properties_set" and view.current_version_id == 2
    finally:
        detach(spark, "vs_names")
        other.close()


def test_a_default_catalog_naming_the_session_catalog_in_capitals_is_served_as_recorded(store):
    """Spark takes the session catalog's name in any case: SPARK_CATALOG is that catalog, served as
    written (as a catalog of the session is), not the store's name for none of them."""
    bridge = _Bridge(store, "vs", "4.3.0")
    store.create_view("sales.v", columns=[Column("x", "int")], default_catalog="SPARK_CATALOG",
                      default_namespace=["sales"], representations=[("spark", "SELECT 1 AS x")])
    served = json.loads(bridge.call("loadView", json.dumps({"ident": {"namespace": ["sales"], "name": "v"},
                                                            "catalogs": ["spark_catalog", "vs"]})))["ok"]
    assert (served["currentCatalog"], served["currentNamespace"]) == ("SPARK_CATALOG", ["sales"])


def test_what_iceberg_types_lose_is_recorded_and_served_back(spark, vs):
    """A collation (and TINYINT, VARCHAR) survives the store: WHERE name = 'ALICE' matches as in Spark."""
    from viewstore.spark import sql

    spark.sql(f"CREATE TABLE IF NOT EXISTS spark_catalog.{DB}.people (name STRING COLLATE UTF8_LCASE, "
              f"rank TINYINT, code VARCHAR(5)) USING parquet")
    spark.sql(f"INSERT OVERWRITE spark_catalog.{DB}.people VALUES ('alice', 1, 'a'), ('Bob', 2, 'b')")
    query = f"SELECT name, rank, code FROM spark_catalog.{DB}.people"
    try:
        run(spark, f"CREATE VIEW vs.{DB}.by_catalog AS {query}")
        sql(spark, vs, f"CREATE VIEW {DB}.by_sql (who COMMENT 'the person', rank, code) AS {query}")
        spark.sql(f"CREATE VIEW spark_catalog.{DB}.own (who COMMENT 'the person', rank, code) AS {query}")
        own = spark.table(f"spark_catalog.{DB}.own").schema
        for name, column in (("by_catalog", "name"), ("by_sql", "who")):
            view = vs.load_view(f"{DB}.{name}")
            assert [str(c.type) for c in view.columns] == ["string", "int", "string"]  # Iceberg types
            assert "spark.schema" in view.summary
            served = spark.table(f"vs.{DB}.{name}").schema
            assert served.fields[0].dataType == own.fields[0].dataType  # STRING COLLATE UTF8_LCASE
            assert served.fields[1].dataType == own.fields[1].dataType  # TINYINT
            assert run(spark, f"SELECT count(*) FROM vs.{DB}.{name} WHERE {column} = 'ALICE'") == [(1,)]
        assert spark.table(f"vs.{DB}.by_sql").schema.fields[0].metadata["comment"] == "the person"
        assert run(spark, f"SELECT count(*) FROM spark_catalog.{DB}.own WHERE who = 'ALICE'") == [(1,)]
        # a property change is no new version; a view whose columns map exactly records nothing
        run(spark, f"ALTER VIEW vs.{DB}.by_catalog SET TBLPROPERTIES ('x'='y')")
        assert vs.load_view(f"{DB}.by_catalog").current_version_id == 1
        run(spark, f"CREATE VIEW vs.{DB}.plain AS SELECT id, amount FROM {ORDERS}")
        assert "spark.schema" not in vs.load_view(f"{DB}.plain").summary
        # a version whose columns no longer fit the recorded schema: the columns decide
        view = vs.load_view(f"{DB}.by_catalog")
        vs.replace_view(f"{DB}.by_catalog", columns=[Column("name", "string"), Column("rank", "int")],
                        representations=[("spark", f"SELECT name, rank FROM spark_catalog.{DB}.people")],
                        default_namespace=[DB], default_catalog="spark_catalog",
                        summary={**view.summary, QUERY_COLUMN_NAMES: '["name","rank"]'})
        assert spark.table(f"vs.{DB}.by_catalog").schema.simpleString() == "struct<name:string,rank:int>"
    finally:
        spark.sql(f"DROP VIEW IF EXISTS spark_catalog.{DB}.own")
        spark.sql(f"DROP VIEW IF EXISTS spark_catalog.{DB}.by_sql")
        spark.sql(f"DROP TABLE IF EXISTS spark_catalog.{DB}.people")


def test_property_changes_keep_types_spark_sees_as_wider_ones(spark, vs):
    """Spark sees uuid as string and fixed[n] as binary; a property change must not store those."""
    vs.create_view("s.u2", columns=[Column("id", "uuid"), Column("raw", "fixed[4]")], default_namespace=["s"],
                   representations=[("spark", "SELECT uuid() AS id, X'00010203' AS raw"),
                                    ("trino", "SELECT uuid() AS id, X'00010203' AS raw")])
    run(spark, "ALTER VIEW vs.s.u2 SET TBLPROPERTIES ('k'='v')")
    run(spark, "ALTER VIEW vs.s.u2 UNSET TBLPROPERTIES ('k')")
    view = vs.load_view("s.u2")
    assert [str(c.type) for c in view.columns] == ["uuid", "fixed[4]"]
    assert view.current_version_id == 1 and view.dialects == ("spark", "trino")
    assert kinds(vs) == ["view.created", "view.properties_set", "view.properties_removed"]
    assert run(spark, "DESCRIBE vs.s.u2") == [("id", "string", None), ("raw", "binary", None)]


def test_spark_views_are_usable_from_python_cli_and_iceberg(spark, vs, tmp_path):
    from click.testing import CliRunner

    from viewstore.cli import main

    run(spark, README_CREATE)
    assert vs.load_view("sales.big_orders").sql_for("SPARK") == BIG_SQL
    result = CliRunner().invoke(main, ["--db", str(vs.path), "show", "sales.big_orders", "--json"])
    assert result.exit_code == 0, result.output
    shown = json.loads(result.output)
    assert shown["representations"] == [{"dialect": "spark", "sql": BIG_SQL}]
    metadata = json.loads(vs.export_iceberg("sales.big_orders", tmp_path / "ice").read_text())
    (version,) = metadata["versions"]
    assert version["summary"]["engine-name"] == "spark"
    assert version["representations"][0]["sql"] == BIG_SQL
    assert version["default-catalog"] == "spark_catalog" and version["default-namespace"] == ["default"]
    fields = {f["name"]: f for f in metadata["schemas"][0]["fields"]}
    assert fields["id"]["type"] == "long" and fields["id"]["doc"] == "order id"


def test_spark_types_become_iceberg_types_and_read_back(spark, vs):
    run(spark, "CREATE VIEW vs.sales.types AS SELECT CAST(1 AS TINYINT) AS b, CAST(2 AS SMALLINT) AS s, "
               "current_timestamp() AS ts, CAST(NULL AS TIMESTAMP_NTZ) AS ntz, array(1, 2) AS arr, "
               "map('a', 1.5D) AS m, named_struct('x', 1, 'y', 'z') AS st, CAST(1 AS DECIMAL(5,2)) AS d, "
               "CAST('x' AS VARCHAR(3)) AS vc, CAST('x' AS BINARY) AS bin, DATE'2026-01-01' AS day, NULL AS n")
    columns = {c.name: str(c.type) for c in vs.load_view("sales.types").columns}
    assert columns == {"b": "int", "s": "int", "ts": "timestamptz", "ntz": "timestamp", "arr": "list<int not null>",
                       "m": "map<string, double not null>", "st": "struct<x: int not null, y: string not null>",
                       "d": "decimal(5,2)", "vc": "string", "bin": "binary", "day": "date", "n": "unknown"}
    (row,) = spark.sql("SELECT * FROM vs.sales.types").collect()
    assert (row.b, row.s, row.arr, row.m, row.st.y, row.d, row.vc) == (1, 2, [1, 2], {"a": 1.5}, "z",
                                                                       Decimal("1.00"), "x")


# -- CREATE variants, SHOW, DESCRIBE ----------------------------------------------------------


def test_create_if_not_exists_and_create_or_replace(spark, vs):
    run(spark, README_CREATE)
    run(spark, "CREATE VIEW IF NOT EXISTS vs.sales.big_orders AS SELECT 1 AS x")
    assert kinds(vs) == ["view.created"]

    run(spark, f"CREATE OR REPLACE VIEW vs.sales.big_orders AS SELECT id FROM {ORDERS} WHERE amount > 200")
    view = vs.load_view("sales.big_orders")
    assert view.current_version_id == 2 and view.properties == {}
    # one atomic commit: the new version and the properties SQL's CREATE OR REPLACE drops
    assert commits(vs)[-1] == ["view.replaced", "view.comment_updated", "view.properties_removed"]
    assert run(spark, "SELECT * FROM vs.sales.big_orders") == [(3,)]

    before = vs.event_count()
    run(spark, f"CREATE OR REPLACE VIEW vs.sales.big_orders AS SELECT id FROM {ORDERS} WHERE amount > 200")
    assert vs.event_count() == before  # the same definition again changes nothing

    run(spark, "CREATE OR REPLACE VIEW vs.sales.fresh AS SELECT 1 AS one")
    assert kinds(vs)[-1] == "view.created"


def test_what_spark_cannot_express_survives_a_replace(spark, vs):
    """Other dialects, the security mode and reserved properties set through the Python API stay."""
    run(spark, README_CREATE)
    vs.alter_view("sales.big_orders", ViewChange.add_representation(("trino", "SELECT id, amount FROM big")),
                  ViewChange.set_property("owner", "finance-team"))
    before = vs.event_count()
    run(spark, f"CREATE OR REPLACE VIEW vs.sales.big_orders (id COMMENT 'order id', amount) COMMENT 'big ones' "
               f"TBLPROPERTIES ('team'='sales') AS {BIG_SQL}")
    view = vs.load_view("sales.big_orders")
    assert [e.type for e in vs.events()][before:] == ["view.properties_set"]  # same definition: no version
    assert view.dialects == ("spark", "trino") and view.current_version_id == 2
    assert view.properties == {"comment": "big ones", "team": "sales", "owner": "finance-team"}
    extended = {r[0]: r[1] for r in run(spark, "DESCRIBE EXTENDED vs.sales.big_orders")}
    assert extended["Owner"] == "finance-team"

    vs.create_view("sales.invoker", columns=[Column("x", "int", nullable=False)], default_namespace=["default"],
                   representations=[("spark", "SELECT 1 AS x")], security_mode="INVOKER")
    run(spark, "ALTER VIEW vs.sales.invoker AS SELECT 2 AS x")
    view = vs.load_view("sales.invoker")
    assert view.security_mode == "INVOKER" and view.current_version_id == 2


def test_create_or_replace_makes_a_version_only_when_what_spark_is_served_changes(spark, vs):
    """What Spark does not see of a stored version (its recorded default catalog, summary keys of its
    own, Iceberg types Spark reads as wider ones) is no change: the same statement again records nothing.
    What Spark captures with the text (the current namespace, the SQL configs, the query's column names) is."""
    statement = "CREATE OR REPLACE VIEW vs.sales.ids AS SELECT uuid() AS id, X'00010203' AS raw"
    run(spark, statement)
    made = vs.load_view("sales.ids")
    vs.replace_view("sales.ids", columns=[Column(c.name, t, c.comment, c.nullable)
                                          for c, t in zip(made.columns, ("uuid", "fixed[4]"))],
                    representations=made.representations, default_catalog="prod",
                    default_namespace=made.default_namespace, summary={**made.summary, "reviewed-by": "bob"})
    before = vs.event_count()
    run(spark, statement)
    assert vs.event_count() == before
    view = vs.load_view("sales.ids")
    assert view.current_version_id == 2 and view.default_catalog == "prod"
    assert [str(c.type) for c in view.columns] == ["uuid", "fixed[4]"] and view.summary["reviewed-by"] == "bob"
    spark.sql(f"USE spark_catalog.{DB}")  # the namespace the statement runs in is part of the definition
    run(spark, statement)
    spark.sql("USE spark_catalog.default")
    view = vs.load_view("sales.ids")
    assert view.current_version_id == 3 and view.default_namespace == (DB,)
    # and so are the SQL configs Spark captures: another session time zone (in the same namespace) is a new version
    zone = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "Asia/Kathmandu" if zone != "Asia/Kathmandu" else "UTC")
    spark.sql(f"USE spark_catalog.{DB}")
    try:
        run(spark, statement)
    finally:
        spark.conf.set("spark.sql.session.timeZone", zone)
        spark.sql("USE spark_catalog.default")
    view = vs.load_view("sales.ids")
    assert view.current_version_id == 4 and kinds(vs)[before:] == ["view.replaced"] * 2
    assert view.default_namespace == (DB,)
    assert json.loads(view.summary[SQL_CONFIGS])["spark.sql.session.timeZone"] != zone
    # the same text and schema over a table whose column was renamed: Spark reads the view by the new name
    table = f"spark_catalog.{DB}.renamed"
    statement = f"CREATE OR REPLACE VIEW vs.sales.named (a) AS SELECT * FROM {table}"
    try:
        spark.sql(f"DROP TABLE IF EXISTS {table}")
        spark.sql(f"CREATE TABLE {table} (old INT) USING parquet")
        run(spark, statement)
        spark.sql(f"DROP TABLE {table}")
        spark.sql(f"CREATE TABLE {table} (new INT) USING parquet")
        spark.sql(f"INSERT INTO {table} VALUES (7)")
        run(spark, statement)
        view = vs.load_view("sales.named")
        assert view.current_version_id == 2 and json.loads(view.summary[QUERY_COLUMN_NAMES]) == ["new"]
        assert run(spark, "SELECT a FROM vs.sales.named") == [(7,)]
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {table}")


def test_show_views_and_like(spark, vs):
    for name in ("big_orders", "big_spenders", "small_orders"):
        run(spark, f"CREATE VIEW vs.sales.{name} AS {BIG_SQL}")
    run(spark, f"CREATE VIEW vs.other.elsewhere AS {BIG_SQL}")
    assert run(spark, "SHOW VIEWS IN vs.sales") == [("sales", n, False)
                                                     for n in ("big_orders", "big_spenders", "small_orders")]
    assert [r[1] for r in run(spark, "SHOW VIEWS IN vs.sales LIKE 'big*'")] == ["big_orders", "big_spenders"]
    assert run(spark, "SHOW VIEWS IN vs.nothing_here") == []
    spark.sql("USE vs.other")
    assert [r[1] for r in run(spark, "SHOW VIEWS")] == ["elsewhere"]
    spark.sql("USE vs.not_yet")  # a namespace needs no view to be used
    run(spark, "CREATE VIEW fresh AS SELECT 1 AS x")
    assert vs.list_views("not_yet") == [("not_yet", "fresh")]
    run(spark, "CREATE VIEW vs.n1.n2.deep AS SELECT 1 AS x")  # a namespace of two levels is listed whole
    assert run(spark, "SHOW VIEWS IN vs.n1.n2") == [("n1.n2", "deep", False)]
    spark.sql("USE spark_catalog.default")
    spark.sql("USE vs")  # the catalog itself: no namespace, no views
    assert run(spark, "SHOW VIEWS") == []
    run(spark, "CREATE VIEW vs.sales.made_at_the_top AS SELECT 1 AS x")  # Spark's current namespace is none
    assert vs.load_view("sales.made_at_the_top").default_namespace == ()


def test_namespace_and_table_statements_say_the_catalog_has_none(spark, vs):
    for statement in ("SHOW NAMESPACES IN vs", "CREATE NAMESPACE vs.sales", "DROP NAMESPACE IF EXISTS vs.sales",
                      "DESCRIBE NAMESPACE vs.sales"):
        fails(spark, statement, "MISSING_CATALOG_ABILITY.NAMESPACES", "Catalog vs does not support namespaces")
    for statement in ("SHOW TABLES IN vs.sales", "CREATE TABLE vs.sales.t (x INT)", "DROP TABLE vs.sales.t"):
        fails(spark, statement, "MISSING_CATALOG_ABILITY.TABLES")
    assert vs.event_count() == 0


def test_describe_show_create_and_show_tblproperties(spark, vs):
    run(spark, README_CREATE)
    assert run(spark, "DESCRIBE vs.sales.big_orders") == [("id", "bigint", "order id"),
                                                          ("amount", "decimal(10,2)", None)]
    extended = {r[0]: r[1] for r in run(spark, "DESCRIBE EXTENDED vs.sales.big_orders")}
    assert extended["Owner"] == "alice" and extended["Comment"] == "big ones"
    assert extended["View Text"] == BIG_SQL and extended["View Current Catalog"] == "spark_catalog"
    assert extended["View Query Output Columns"] == "[id, amount]"
    ((ddl,),) = run(spark, "SHOW CREATE TABLE vs.sales.big_orders")
    assert "CREATE VIEW vs.sales.big_orders" in ddl and "id COMMENT 'order id'" in ddl
    assert "TBLPROPERTIES" in ddl and "'team' = 'finance'" in ddl and ddl.rstrip().endswith(BIG_SQL)
    assert run(spark, "SHOW TBLPROPERTIES vs.sales.big_orders") == [("team", "finance")]


def test_an_owner_in_tblproperties_is_replaced_by_spark_before_the_catalog_is_called(spark, vs, monkeypatch):
    """Spark 4.3 puts the current user over a written ``owner`` for every catalog but its own, so the
    catalog never sees the user's value (spark_catalog keeps it); ALTER VIEW refuses the key outright."""
    from viewstore.spark import catalog_plugin

    bridge = next(entry.bridge for entry in catalog_plugin._ATTACHED.values() if entry.bridge.store is vs)
    sent: list[dict[str, str]] = []
    create = bridge._handlers["createView"]
    monkeypatch.setitem(bridge._handlers, "createView",
                        lambda request: sent.append(dict(request["view"]["properties"])) or create(request))
    run(spark, "CREATE VIEW vs.sales.owned TBLPROPERTIES ('owner'='someone', 'team'='x') AS SELECT 1 AS one")
    assert sent == [{"owner": spark.sparkContext.sparkUser(), "team": "x", "table_type": "VIEW"}]
    assert vs.load_view("sales.owned").properties == {"team": "x"}
    assert {r[0]: r[1] for r in run(spark, "DESCRIBE EXTENDED vs.sales.owned")}["Owner"] == "alice"
    run(spark, f"CREATE DATABASE IF NOT EXISTS {DB}")
    run(spark, f"CREATE OR REPLACE VIEW spark_catalog.{DB}.owned TBLPROPERTIES ('owner'='someone') AS SELECT 1 AS one")
    assert ("owner", "someone") in run(spark, f"SHOW TBLPROPERTIES spark_catalog.{DB}.owned")
    for view in ("vs.sales.owned", f"spark_catalog.{DB}.owned"):
        fails(spark, f"ALTER VIEW {view} SET TBLPROPERTIES ('owner'='someone')",
              "UNSUPPORTED_FEATURE.SET_TABLE_PROPERTY", "owner is a reserved table property")
    assert [e.type for e in vs.events()] == ["view.created"]


def test_a_table_type_in_tblproperties_other_than_spark_s_own_is_refused(spark, vs):
    """Spark sends a written ``table_type`` in place of its own ``VIEW``; the store keeps no
    ``table_type`` from Spark, so any other value (Spark compares case-sensitively) is refused,
    not dropped; ALTER VIEW never gets that far: Spark's parser refuses the key."""
    for statement in ("CREATE VIEW vs.sales.typed TBLPROPERTIES ('table_type'='x', 'team'='t') AS SELECT 1 AS one",
                      "CREATE OR REPLACE VIEW vs.sales.typed TBLPROPERTIES ('table_type'='view') AS SELECT 1 AS one"):
        fails(spark, statement, "USER_RAISED_EXCEPTION", "view vs.sales.typed", "'table_type' is reserved",
              "would not keep")
    assert vs.event_count() == 0
    run(spark, "CREATE VIEW vs.sales.typed TBLPROPERTIES ('table_type'='VIEW', 'team'='t') AS SELECT 1 AS one")
    run(spark, "CREATE OR REPLACE VIEW vs.sales.typed TBLPROPERTIES ('table_type'='VIEW', 'TABLE_TYPE'='x') "
               "AS SELECT 1 AS one")  # another spelling is a plain property to Spark, and kept
    fails(spark, "CREATE OR REPLACE VIEW vs.sales.typed TBLPROPERTIES ('table_type'='METRIC_VIEW') AS SELECT 1 AS one",
          "USER_RAISED_EXCEPTION", "cannot create or replace view vs.sales.typed", "'table_type' is reserved")
    for statement in ("SET TBLPROPERTIES ('table_type'='x')", "UNSET TBLPROPERTIES ('table_type')"):
        fails(spark, f"ALTER VIEW vs.sales.typed {statement}", "UNSUPPORTED_FEATURE.SET_TABLE_PROPERTY",
              "table_type is a reserved table property")
    assert vs.load_view("sales.typed").properties == {"TABLE_TYPE": "x"}
    assert [e.type for e in vs.events()] == ["view.created", "view.properties_set", "view.properties_removed"]
    assert run(spark, "SHOW TBLPROPERTIES vs.sales.typed") == [("TABLE_TYPE", "x")]


def test_a_table_type_set_outside_spark_is_kept_but_not_served_to_spark(spark, vs):
    """Spark reads ``table_type`` from a catalog view's properties: METRIC_VIEW made it parse the
    SQL as a metric view's YAML (INVALID_METRIC_VIEW_YAML). Spark gets none, the store keeps it."""
    vs.create_view("sales.plain", columns=[Column("id", "long")], default_namespace=[DB],
                   default_catalog="spark_catalog", representations=[("spark", "SELECT id FROM orders WHERE id > 1")])
    vs.alter_view("sales.plain", ViewChange.set_property("table_type", "METRIC_VIEW"))
    assert run(spark, "SELECT * FROM vs.sales.plain ORDER BY id") == [(2,), (3,)]
    assert {r[0]: r[1] for r in run(spark, "DESCRIBE EXTENDED vs.sales.plain")}["Type"] == "VIEW"
    run(spark, "ALTER VIEW vs.sales.plain SET TBLPROPERTIES ('team'='t')")  # Spark sends its VIEW back
    assert run(spark, "SHOW TBLPROPERTIES vs.sales.plain") == [("team", "t")]
    assert vs.load_view("sales.plain").properties == {"table_type": "METRIC_VIEW", "team": "t"}
    assert kinds(vs) == ["view.created", "view.properties_set", "view.properties_set"]


# -- ALTER, RENAME, DROP ------------------------------------------------------------------------


def test_alter_properties_records_property_events_not_versions(spark, vs):
    run(spark, README_CREATE)
    run(spark, "ALTER VIEW vs.sales.big_orders SET TBLPROPERTIES ('a'='1', 'b'='2')")
    run(spark, "ALTER VIEW vs.sales.big_orders UNSET TBLPROPERTIES ('a')")
    run(spark, "ALTER VIEW vs.sales.big_orders SET TBLPROPERTIES ('comment'='huge ones')")
    run(spark, "ALTER VIEW vs.sales.big_orders SET TBLPROPERTIES ('b'='2')")  # no change: no event
    run(spark, "ALTER VIEW vs.sales.big_orders UNSET TBLPROPERTIES ('nokey')")  # as in Spark 4.3: no error
    assert commits(vs) == [["view.created"], ["view.properties_set", "view.properties_set"],
                           ["view.properties_removed"], ["view.comment_updated"]]
    view = vs.load_view("sales.big_orders")
    assert view.current_version_id == 1 and len(view.versions) == 1
    assert view.properties == {"comment": "huge ones", "team": "finance", "b": "2"}
    assert view.columns[0].comment == "order id"
    run(spark, "ALTER VIEW vs.sales.big_orders SET TBLPROPERTIES ('z'='1')")
    run(spark, "ALTER VIEW vs.sales.big_orders UNSET TBLPROPERTIES ('team', 'z', 'b')")  # removed in key order
    assert [e.payload()["removals"] for e in list(vs.events())[-3:]] == [["b"], ["team"], ["z"]]
    run(spark, "ALTER VIEW vs.sales.big_orders UNSET TBLPROPERTIES ('comment')")
    view = vs.load_view("sales.big_orders")
    assert (view.comment, view.properties) == (None, {}) and kinds(vs)[-1] == "view.comment_updated"


def test_alter_view_as_makes_a_new_version(spark, vs):
    run(spark, README_CREATE)
    run(spark, f"ALTER VIEW vs.sales.big_orders AS SELECT id, amount FROM {ORDERS} WHERE amount > 200")
    view = vs.load_view("sales.big_orders")
    assert view.current_version_id == 2 and view.sql_for("spark").endswith("amount > 200")
    assert view.properties == {"comment": "big ones", "team": "finance"}
    assert kinds(vs) == ["view.created", "view.replaced"]
    assert run(spark, "SELECT id FROM vs.sales.big_orders") == [(3,)]
    run(spark, f"ALTER VIEW vs.sales.big_orders AS SELECT id, amount FROM {ORDERS} WHERE amount > 200")
    assert vs.event_count() == 2
    run(spark, "ALTER VIEW vs.sales.big_orders WITH SCHEMA BINDING")  # the schema mode is part of a version
    view = vs.load_view("sales.big_orders")
    assert view.current_version_id == 3 and view.summary[SCHEMA_MODE] == "BINDING"


def test_rename_within_and_across_namespaces(spark, vs):
    run(spark, README_CREATE)
    run(spark, "ALTER VIEW vs.sales.big_orders RENAME TO vs.sales.bigger")
    run(spark, "ALTER VIEW vs.sales.bigger RENAME TO biggest")
    run(spark, "ALTER VIEW vs.sales.biggest RENAME TO vs.archive.biggest")
    assert vs.list_views() == [("archive", "biggest")]
    assert kinds(vs) == ["view.created"] + ["view.renamed"] * 3
    assert [e.payload()["from_identifier"] for e in vs.events(types="view.renamed")] == [
        ["sales", "big_orders"], ["sales", "bigger"], ["sales", "biggest"]]
    assert len(run(spark, "SELECT * FROM vs.archive.biggest")) == 2
    # a name of two parts is a namespace and a name, as Spark reads it, even when the namespace has the
    # catalog's name
    run(spark, "ALTER VIEW vs.archive.biggest RENAME TO vs.biggest")
    assert vs.list_views() == [("vs", "biggest")]


def test_drop_view_and_if_exists(spark, vs):
    run(spark, README_CREATE)
    run(spark, "DROP VIEW vs.sales.big_orders")
    run(spark, "DROP VIEW IF EXISTS vs.sales.big_orders")
    run(spark, "DROP VIEW IF EXISTS vs.top_level")  # names no view can have: nothing to drop either
    run(spark, "DROP VIEW IF EXISTS vs.sales.`a.b`")
    assert kinds(vs) == ["view.created", "view.dropped"]
    assert not vs.view_exists("sales.big_orders")
    assert [e.type for e in vs.history("sales.big_orders")] == ["view.created", "view.dropped"]


# -- the same events as the Python API ---------------------------------------------------------


def _comparable(store):
    """Events without what differs between two stores (ids, times, positions), grouped by commit."""
    groups: dict[str, list] = {}
    for event in store.events():
        payload = event.payload()
        for key in ("version", "log_entry"):
            if isinstance(payload.get(key), dict):
                payload[key] = {k: v for k, v in payload[key].items() if k != "timestamp_ms"}
        groups.setdefault(event.commit_id, []).append((event.type, event.identifier, event.actor, payload))
    return list(groups.values())


def test_spark_statements_record_what_the_python_api_records(spark, vs, tmp_path):
    statements = [
        README_CREATE,
        "ALTER VIEW vs.sales.big_orders SET TBLPROPERTIES ('a'='1', 'b'='2')",
        "ALTER VIEW vs.sales.big_orders UNSET TBLPROPERTIES ('a')",
        "ALTER VIEW vs.sales.big_orders SET TBLPROPERTIES ('comment'='huge ones')",
        f"ALTER VIEW vs.sales.big_orders AS SELECT id, amount FROM {ORDERS} WHERE amount > 200",
        f"CREATE OR REPLACE VIEW vs.sales.big_orders (order_id) AS SELECT id FROM {ORDERS}",
        "ALTER VIEW vs.sales.big_orders RENAME TO vs.archive.all_orders",
        "DROP VIEW vs.archive.all_orders",
    ]
    for statement in statements:
        run(spark, statement)

    configs = vs.history("archive.all_orders")[0].version.summary[SQL_CONFIGS]

    def summary(*names):
        return {"engine-name": "spark", "engine-version": spark.version, QUERY_COLUMN_NAMES: json.dumps(
            list(names), separators=(",", ":")), SCHEMA_MODE: "COMPENSATION", SQL_CONFIGS: configs}

    where = dict(default_catalog="spark_catalog", default_namespace=["default"])
    py = ViewStore(tmp_path / "python.db", catalog="prod", actor="alice")
    py.create_view("sales.big_orders", columns=[Column("id", "long", "order id"), Column("amount", "decimal(10,2)")],
                   representations=[SQLRepresentation("spark", BIG_SQL)], comment="big ones",
                   properties={"team": "finance"}, summary=summary("id", "amount"), **where)
    py.alter_view("sales.big_orders", ViewChange.set_property("a", "1"), ViewChange.set_property("b", "2"))
    py.alter_view("sales.big_orders", ViewChange.remove_property("a"))
    py.alter_view("sales.big_orders", ViewChange.update_comment("huge ones"))
    py.replace_view("sales.big_orders", columns=[Column("id", "long"), Column("amount", "decimal(10,2)")],
                    representations=[("spark", f"SELECT id, amount FROM {ORDERS} WHERE amount > 200")],
                    summary=summary("id", "amount"), **where)
    py.replace_view("sales.big_orders", columns=[Column("order_id", "long")],
                    representations=[("spark", f"SELECT id FROM {ORDERS}")], summary=summary("id"),
                    replace_properties=True, **where)
    py.rename_view("sales.big_orders", "archive.all_orders")
    py.drop_view("archive.all_orders")
    try:
        assert _comparable(vs) == _comparable(py)
    finally:
        py.close()


# -- threads --------------------------------------------------------------------------------------


def test_concurrent_statements_from_two_threads(spark, vs):
    """Two threads alter one view at once: a lost race is refused, never silently overwritten. The
    first round always races: each thread goes through a catalog of its own (a store each on the
    file), both load the view while a third connection holds the write lock, which is let go once
    both writes wait for it (the stores' lock_wait signals): one goes through, the other is refused.
    The rounds after it race as the threads happen to meet."""
    from pyspark.errors import AnalysisException

    from viewstore import signals

    run(spark, README_CREATE)
    applied: list[str] = []
    refused: list[str] = []
    failures: list[BaseException] = []

    def alter(catalog, key):
        try:
            run(spark, f"ALTER VIEW {catalog}.sales.big_orders SET TBLPROPERTIES ('{key}'='v')")
            applied.append(key)
        except AnalysisException as e:  # a lost race is refused, never silently overwritten
            if e.getCondition() != "USER_RAISED_EXCEPTION" or "another writer changed it" not in str(e):
                failures.append(e)
            refused.append(key)

    held, release, waiting = threading.Event(), threading.Event(), set()

    def holder():
        with ViewStore(vs.path, actor="holder") as third, third.transaction():
            held.set()
            release.wait(60)

    def waits(sender, **kwargs):
        waiting.add(id(sender))
        if len(waiting) == 2:
            release.set()

    other = ViewStore(vs.path, actor="bob")
    attach(spark, other, name="vs_b")
    holding = threading.Thread(target=holder)
    holding.start()
    assert held.wait(60)
    for store in (vs, other):
        signals.lock_wait.connect(waits, sender=store)
    try:
        racing = [threading.Thread(target=alter, args=(catalog, f"w_race{k}"))
                  for k, catalog in enumerate(("vs", "vs_b"))]
        for t in racing:
            t.start()
        for t in racing:
            t.join(120)
    finally:
        for store in (vs, other):
            signals.lock_wait.disconnect(waits, sender=store)
        release.set()
        holding.join(60)
        detach(spark, "vs_b")
        other.close()
    assert not failures, failures
    assert len(waiting) == 2 and len(applied) == 1 and len(refused) == 1, (applied, refused)

    def worker(k):
        try:
            run(spark, f"CREATE VIEW vs.t{k}.own AS SELECT id FROM vs.sales.big_orders")
            for i in range(8):
                alter("vs", f"w{k}_{i}")
                assert len(run(spark, f"SELECT * FROM vs.t{k}.own")) == 2
        except BaseException as e:  # pragma: no cover - reported below
            failures.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not failures, failures
    assert len(applied) + len(refused) == 18
    props = vs.load_view("sales.big_orders").properties
    assert sorted(k for k in props if k.startswith("w")) == sorted(applied)
    assert vs.list_views() == [("sales", "big_orders"), ("t0", "own"), ("t1", "own")]


def test_a_change_between_load_and_replace_is_refused(spark, vs):
    """Spark reads a view and then replaces it; a write in between must not be overwritten."""
    from pyspark.errors import AnalysisException

    run(spark, README_CREATE)
    jvm = spark.sparkContext._jvm
    gateway = spark.sparkContext._gateway
    catalog = spark._jsparkSession.sessionState().catalogManager().catalog("vs")
    namespace = gateway.new_array(jvm.java.lang.String, 1)
    namespace[0] = "sales"
    ident = jvm.org.apache.spark.sql.connector.catalog.Identifier.of(namespace, "big_orders")
    loaded = catalog.loadView(ident)
    vs.alter_view("sales.big_orders", ViewChange.set_property("meanwhile", "yes"))
    with pytest.raises(AnalysisException) as caught:  # called directly, as Spark calls it
        catalog.replaceView(ident, loaded)
    assert caught.value.getCondition() == "USER_RAISED_EXCEPTION"
    assert "cannot alter view vs.sales.big_orders: another writer changed it" in str(caught.value)
    assert vs.load_view("sales.big_orders").properties["meanwhile"] == "yes"
    catalog.replaceView(ident, catalog.loadView(ident))  # loaded afresh, the same replace goes through
    loaded = catalog.loadView(ident)
    vs.drop_view("sales.big_orders")
    with pytest.raises(AnalysisException) as caught:  # dropped in between: the view is missing, as Spark says
        catalog.replaceView(ident, loaded)
    assert caught.value.getCondition() == "VIEW_NOT_FOUND" and "The view sales.big_orders cannot be found" in str(
        caught.value)


# -- error paths ----------------------------------------------------------------------------------


def test_missing_views(spark, vs):
    not_found = "`vs`.`sales`.`missing`"
    for statement in ("SELECT * FROM vs.sales.missing", "DESCRIBE vs.sales.missing",
                      "SHOW CREATE TABLE vs.sales.missing", "SHOW TBLPROPERTIES vs.sales.missing",
                      "ALTER VIEW vs.sales.missing SET TBLPROPERTIES ('a'='b')",
                      "ALTER VIEW vs.sales.missing AS SELECT 1 AS x",
                      "ALTER VIEW vs.sales.missing RENAME TO vs.sales.other"):
        fails(spark, statement, "TABLE_OR_VIEW_NOT_FOUND", not_found)
    fails(spark, "DROP VIEW vs.sales.missing", "VIEW_NOT_FOUND", "sales.missing")
    fails(spark, "SELECT * FROM vs.sales.`a.b`", "TABLE_OR_VIEW_NOT_FOUND", "`vs`.`sales`.`a.b`")
    assert vs.event_count() == 0


def test_a_view_over_a_missing_view_loads_and_reading_it_names_the_missing_one(spark, vs):
    vs.create_view("sales.orphan", columns=[Column("x", "int")], default_namespace=["sales"],
                   representations=[("spark", "SELECT x FROM vs.sales.gone")])
    assert run(spark, "DESCRIBE vs.sales.orphan") == [("x", "int", None)]
    fails(spark, "SELECT * FROM vs.sales.orphan", "TABLE_OR_VIEW_NOT_FOUND", "`vs`.`sales`.`gone`")
    assert vs.event_count() == 1


def test_existing_views(spark, vs):
    run(spark, README_CREATE)
    run(spark, "CREATE VIEW vs.sales.other AS SELECT 1 AS x")
    fails(spark, "CREATE VIEW vs.sales.big_orders AS SELECT 1 AS x", "TABLE_OR_VIEW_ALREADY_EXISTS",
          "`vs`.`sales`.`big_orders`")
    fails(spark, "CREATE VIEW vs.Sales.BIG_ORDERS AS SELECT 1 AS x", "TABLE_OR_VIEW_ALREADY_EXISTS")
    fails(spark, "ALTER VIEW vs.sales.big_orders RENAME TO vs.sales.other", "VIEW_ALREADY_EXISTS", "vs.sales.other")
    assert vs.event_count() == 2


@pytest.mark.parametrize("statement, fragments", [
    ("CREATE VIEW vs.sales.evo WITH SCHEMA EVOLUTION AS SELECT 1 AS x",
     ["cannot create view vs.sales.evo", "WITH SCHEMA EVOLUTION is not supported"]),
    ("CREATE VIEW vs.top_level AS SELECT 1 AS x", ["cannot create view vs.top_level", "a view needs a namespace"]),
    ("CREATE VIEW vs.sales.`a.b` AS SELECT 1 AS x", ["cannot create view vs.sales.`a.b`", "dots"]),
    ("CREATE VIEW vs._sales.`a``b` AS SELECT 1 AS x", ["cannot create view vs._sales.`a``b`", "backquotes"]),
    ("CREATE VIEW vs.sales.spans AS SELECT INTERVAL 1 DAY AS span",
     ["view vs.sales.spans", "column 'span'", "no Iceberg counterpart"]),
])
def test_definitions_the_store_refuses(spark, vs, statement, fragments):
    fails(spark, statement, "USER_RAISED_EXCEPTION", "viewstore catalog 'vs'", *fragments)
    assert vs.event_count() == 0


def test_alter_errors_write_nothing(spark, vs):
    run(spark, README_CREATE)
    fails(spark, "ALTER VIEW vs.sales.big_orders WITH SCHEMA EVOLUTION", "USER_RAISED_EXCEPTION",
          "cannot alter view vs.sales.big_orders", "WITH SCHEMA EVOLUTION")
    vs.create_view("sales.two_dialects", columns=[Column("x", "int")], default_namespace=["default"],
                   representations=[("spark", "SELECT 1 AS x"), ("trino", "SELECT 1 AS x")])
    fails(spark, "ALTER VIEW vs.sales.two_dialects AS SELECT 2 AS x", "USER_RAISED_EXCEPTION",
          "cannot alter view vs.sales.two_dialects", "loss of view dialects ['trino']")
    assert vs.event_count() == 2


def test_views_spark_cannot_read(spark, vs):
    vs.create_view("sales.trino_only", columns=[Column("x", "int")], default_namespace=["sales"],
                   representations=[("trino", "SELECT 1 AS x")])
    fails(spark, "SELECT * FROM vs.sales.trino_only", "USER_RAISED_EXCEPTION",
          "view vs.sales.trino_only has no Spark SQL (its dialects: trino)")
    vs.create_view("sales.nanos", columns=[Column("at", "timestamp_ns")], default_namespace=["sales"],
                   representations=[("spark", "SELECT current_timestamp() AS at")])
    fails(spark, "DESCRIBE vs.sales.nanos", "USER_RAISED_EXCEPTION",
          "cannot load view vs.sales.nanos", "timestamp_ns has no Spark counterpart")


def test_a_view_that_would_read_itself_is_refused(spark, vs):
    run(spark, "CREATE VIEW vs.sales.a AS SELECT 1 AS x")
    run(spark, "CREATE VIEW vs.sales.b AS SELECT x FROM vs.sales.a")
    fails(spark, "CREATE OR REPLACE VIEW vs.sales.a AS SELECT x FROM vs.sales.b", "RECURSIVE_VIEW",
          "`vs`.`sales`.`a` -> `vs`.`sales`.`b` -> `vs`.`sales`.`a`")
    spark.sql("USE vs.sales")
    fails(spark, "ALTER VIEW a AS WITH t AS (SELECT * FROM b) SELECT x FROM t", "RECURSIVE_VIEW")
    fails(spark, "ALTER VIEW a AS SELECT 1 AS x WHERE 1 IN (SELECT x FROM b)", "RECURSIVE_VIEW")
    spark.sql("USE spark_catalog.default")
    assert kinds(vs) == ["view.created", "view.created"]
    assert run(spark, "SELECT * FROM vs.sales.b") == [(1,)]


def test_a_cycle_through_another_catalog_is_refused(spark, vs, tmp_path):
    """Reading such a view overflowed the JVM stack (a py4j StackOverflowError, not an AnalysisException)."""
    other = ViewStore(tmp_path / "other.db", catalog="other", actor="bob")
    attach(spark, other, name="vs_cycle")
    try:
        run(spark, "CREATE VIEW vs.sales.a AS SELECT 1 AS x")
        run(spark, "CREATE VIEW vs_cycle.sales.b AS SELECT x FROM vs.sales.a")
        run(spark, "CREATE VIEW vs.sales.c AS SELECT x FROM vs_cycle.sales.b")
        fails(spark, "ALTER VIEW vs.sales.a AS SELECT x FROM vs.sales.c", "RECURSIVE_VIEW",
              "`vs`.`sales`.`a` -> `vs`.`sales`.`c` -> `vs_cycle`.`sales`.`b` -> `vs`.`sales`.`a`")
        fails(spark, "CREATE OR REPLACE VIEW vs.Sales.A AS SELECT x FROM vs.sales.c", "RECURSIVE_VIEW")
        assert kinds(vs) == ["view.created", "view.created"]
        assert run(spark, "SELECT * FROM vs.sales.c") == [(1,)]
    finally:
        detach(spark, "vs_cycle")
        other.close()


def test_a_cycle_written_outside_spark_reads_as_recursive_view(spark, vs):
    """Views that read each other through the Python API overflowed the JVM stack when read (a py4j
    StackOverflowError, before Spark's spark.sql.view.maxNestedViewDepth stops it); loading one is
    now refused as Spark refuses such a definition, and writes nothing."""
    def make(name, sql, write=vs.create_view):
        write(name, columns=[Column("x", "int")], default_namespace=["sales"], representations=[("spark", sql)])

    make("sales.a", "SELECT 1 AS x")
    make("sales.b", "SELECT x FROM vs.sales.a")
    make("sales.reader", "SELECT x FROM vs.sales.b")  # reads into the cycle, without being in it
    make("sales.a", "WITH t AS (SELECT x FROM vs.sales.b) SELECT x FROM t", vs.replace_view)
    make("sales.self", "SELECT 1 AS x WHERE 1 IN (SELECT x FROM vs.sales.self)")
    events = vs.event_count()
    fails(spark, "SELECT * FROM vs.sales.a", "RECURSIVE_VIEW",
          "`vs`.`sales`.`a` -> `vs`.`sales`.`b` -> `vs`.`sales`.`a`")
    fails(spark, "SELECT * FROM vs.sales.reader", "RECURSIVE_VIEW",
          "`vs`.`sales`.`b` -> `vs`.`sales`.`a` -> `vs`.`sales`.`b`")
    fails(spark, "SELECT * FROM vs.sales.self", "RECURSIVE_VIEW", "`vs`.`sales`.`self` -> `vs`.`sales`.`self`")
    fails(spark, "DESCRIBE vs.sales.a", "RECURSIVE_VIEW")  # every statement that loads it
    assert vs.event_count() == events
    run(spark, "CREATE OR REPLACE VIEW vs.sales.a AS SELECT 2 AS x")  # replacing or dropping it mends the cycle
    assert run(spark, "SELECT * FROM vs.sales.reader") == [(2,)]
    run(spark, "DROP VIEW vs.sales.self")
    assert not vs.view_exists("sales.self")


def test_a_name_of_three_parts_naming_no_catalog_is_read_in_the_view_s_catalog(spark, vs):
    """Spark reads n1.n2.v, whose first part is no catalog of the session, in the view's current catalog:
    a view there is read, and a cycle written outside Spark through such names is refused on loading
    as RECURSIVE_VIEW (it was not followed: reading it overflowed the JVM stack)."""
    def make(name, sql, write=vs.create_view):
        write(name, columns=[Column("x", "int")], default_catalog="vs", default_namespace=["sales"],
              representations=[("spark", sql)])

    make("n1.n2.base", "SELECT 1 AS x")
    make("sales.reader", "SELECT x FROM n1.n2.base")
    assert run(spark, "SELECT x FROM vs.sales.reader") == [(1,)]
    make("n1.n2.loop", "SELECT x FROM n1.n2.base")
    make("n1.n2.base", "SELECT x FROM n1.n2.loop", vs.replace_view)
    events = vs.event_count()
    fails(spark, "SELECT * FROM vs.sales.reader", "RECURSIVE_VIEW",
          "`vs`.`n1`.`n2`.`base` -> `vs`.`n1`.`n2`.`loop` -> `vs`.`n1`.`n2`.`base`")
    assert vs.event_count() == events


def _rename(bridge, namespace, name, target_namespace, target_name, catalogs=None):
    """The bridge's answer to Spark's renameView of namespace.name to target_namespace.target_name (with the
    session's catalogs, when given), as JSON."""
    request = {"ident": {"namespace": namespace, "name": name},
               "target": {"namespace": target_namespace, "name": target_name}}
    return json.loads(bridge.call("renameView", json.dumps(
        request if catalogs is None else {**request, "catalogs": catalogs})))


@pytest.mark.parametrize("namespace, b_namespace, b_sql", [
    (["sales"], [], "SELECT x FROM vs.sales.a2"),
    # b reads a2 in its outer query; the CTE of that name lives only in the subquery (a one-part name was
    # skipped when any CTE of the query had it, wherever its WITH stood)
    (["sales"], ["sales"], "SELECT x FROM a2 UNION ALL SELECT x FROM (WITH a2 AS (SELECT 1 AS x) SELECT x FROM a2) t"),
    # a CTE does not see itself: its a2 is the view
    (["sales"], ["sales"], "WITH a2 AS (SELECT x FROM a2) SELECT x FROM a2"),
    # a namespace of two levels: a name of four parts (it was not followed)
    (["n1", "n2"], [], "SELECT x FROM vs.n1.n2.a2"),
    # and a bare name in a default namespace of two levels
    (["n1", "n2"], ["n1", "n2"], "SELECT x FROM a2"),
    # a name of three parts whose first part is no catalog of the session is in the view's own catalog
    (["n1", "n2"], ["sales"], "SELECT x FROM n1.n2.a2"),
])
def test_a_rename_that_would_make_a_view_read_itself_is_refused_as_spark_names_it(store, namespace, b_namespace,
                                                                                   b_sql):
    bridge = _Bridge(store, "vs", "4.3.0")
    store.create_view((*namespace, "b"), columns=[Column("x", "int")], default_catalog="vs",
                      default_namespace=b_namespace, representations=[("spark", b_sql)])
    store.create_view((*namespace, "a"), columns=[Column("x", "int")], default_namespace=[],
                      representations=[("spark", f"SELECT x FROM vs.{'.'.join(namespace)}.b")])
    answer = _rename(bridge, namespace, "a", namespace, "a2")
    prefix = "".join(f"`{part}`." for part in ("vs", *namespace))
    assert answer == {"error": {"kind": "recursive_view", "view": f"{prefix}`a2`",
                                "path": f"{prefix}`a2` -> {prefix}`b` -> {prefix}`a2`"}}
    assert store.event_count() == 2


def test_a_rename_follows_bare_names_in_the_namespace_of_views_that_record_none(store):
    """A view whose definition records no default namespace reads bare names in its own namespace:
    the view renamed, and each view it reads in turn (the renamed one's Spark SQL under a dialect
    spelt in capitals, as the store keeps it)."""
    bridge = _Bridge(store, "vs", "4.3.0")
    for name, dialect, sql in (("b", "spark", "SELECT x FROM a2"), ("a", "SPARK", "SELECT x FROM b")):
        store.create_view(("sales", name), columns=[Column("x", "int")], default_catalog="vs", default_namespace=[],
                          representations=[(dialect, sql)])
    answer = _rename(bridge, ["sales"], "a", ["sales"], "a2")
    assert answer == {"error": {"kind": "recursive_view", "view": "`vs`.`sales`.`a2`",
                                "path": "`vs`.`sales`.`a2` -> `vs`.`sales`.`b` -> `vs`.`sales`.`a2`"}}
    assert store.event_count() == 2


def test_a_name_whose_first_part_is_the_catalog_s_in_another_case_is_not_followed_into_it(store):
    """Spark matches catalog names exactly: in a view of this catalog, VS.sales.a2 is a view of the
    namespace vs.sales, so renaming sales.a to sales.a2 closes no cycle."""
    bridge = _Bridge(store, "vs", "4.3.0")
    for name, sql in (("b", "SELECT x FROM VS.sales.a2"), ("a", "SELECT x FROM vs.sales.b")):
        store.create_view(("sales", name), columns=[Column("x", "int")], default_catalog="vs",
                          default_namespace=["sales"], representations=[("spark", sql)])
    assert _rename(bridge, ["sales"], "a", ["sales"], "a2") == {"ok": None}
    assert store.list_views() == [("sales", "a2"), ("sales", "b")]


def test_a_name_whose_first_part_is_a_catalog_of_the_session_is_in_that_catalog(store):
    """Spark reads other.a2 as the view a2 of the catalog other when the session has one of that name, and
    as the view a2 of the namespace other of the view's catalog when it has not: only then does renaming
    other.a to other.a2 close a cycle."""
    bridge = _Bridge(store, "vs", "4.3.0")
    for name, sql in (("b", "SELECT x FROM other.a2"), ("a", "SELECT x FROM b")):
        store.create_view(("other", name), columns=[Column("x", "int")], default_catalog="vs",
                          default_namespace=["other"], representations=[("spark", sql)])

    assert _rename(bridge, ["other"], "a", ["other"], "a2", ["spark_catalog", "vs"]) == {"error": {
        "kind": "recursive_view", "view": "`vs`.`other`.`a2`",
        "path": "`vs`.`other`.`a2` -> `vs`.`other`.`b` -> `vs`.`other`.`a2`"}}
    assert _rename(bridge, ["other"], "a", ["other"], "a2", ["spark_catalog", "vs", "other"]) == {"ok": None}
    assert store.list_views() == [("other", "a2"), ("other", "b")]


def test_a_rename_reads_the_bare_names_of_the_renamed_view_in_its_default_namespace(store):
    """The renamed view records a default namespace other than its own: its bare names are read there."""
    bridge = _Bridge(store, "vs", "4.3.0")
    store.create_view("other.b", columns=[Column("x", "int")], default_catalog="vs", default_namespace=["other"],
                      representations=[("spark", "SELECT x FROM vs.sales.a2")])
    store.create_view("sales.a", columns=[Column("x", "int")], default_catalog="vs", default_namespace=["other"],
                      representations=[("spark", "SELECT x FROM b")])
    answer = _rename(bridge, ["sales"], "a", ["sales"], "a2")
    assert answer == {"error": {"kind": "recursive_view", "view": "`vs`.`sales`.`a2`",
                                "path": "`vs`.`sales`.`a2` -> `vs`.`other`.`b` -> `vs`.`sales`.`a2`"}}
    assert store.event_count() == 2


def test_a_new_name_beginning_with_the_catalog_s_name_in_capitals_is_a_namespace_of_that_name(store):
    """Spark matches catalog names exactly: RENAME TO VS.archive.b names the namespace vs.archive of this
    catalog (the store lower-cases it), not the namespace archive."""
    bridge = _Bridge(store, "vs", "4.3.0")
    store.create_view("sales.a", columns=[Column("x", "int")], default_namespace=["sales"],
                      representations=[("spark", "SELECT 1 AS x")])
    assert _rename(bridge, ["sales"], "a", ["VS", "archive"], "b") == {"ok": None}
    assert store.list_views() == [("vs", "archive", "b")]


def test_a_cycle_is_named_along_the_first_path_in_reading_order(store):
    """Of the paths back to the view, the refusal names the one met first reading each query from the
    left (a reads b, then e; b reads c, then d; each of c, d and e reads the renamed view)."""
    bridge = _Bridge(store, "vs", "4.3.0")
    for name, sql in (("c", "SELECT x FROM a2"), ("d", "SELECT x FROM a2"), ("e", "SELECT x FROM a2"),
                      ("b", "SELECT x FROM c UNION ALL SELECT x FROM d"),
                      ("a", "SELECT x FROM b UNION ALL SELECT x FROM e")):
        store.create_view(("sales", name), columns=[Column("x", "int")], default_catalog="vs",
                          default_namespace=["sales"], representations=[("spark", sql)])
    answer = _rename(bridge, ["sales"], "a", ["sales"], "a2")
    assert answer["error"]["path"] == "`vs`.`sales`.`a2` -> `vs`.`sales`.`b` -> `vs`.`sales`.`c` -> `vs`.`sales`.`a2`"


def test_a_definition_the_bridge_is_given_that_would_read_itself_is_refused(store):
    """The Java side refuses such a definition from Spark's analysis before it calls the store; the bridge
    refuses it too, in each call that writes a definition, and writes nothing."""
    bridge = _Bridge(store, "vs", "4.3.0")
    for name, sql in (("a", "SELECT 1 AS x"), ("b", "SELECT x FROM a"), ("d", "SELECT x FROM c")):
        store.create_view(("sales", name), columns=[Column("x", "int")], default_catalog="vs",
                          default_namespace=["sales"], representations=[("spark", sql)])

    def ask(operation, name, **request):
        return json.loads(bridge.call(operation, json.dumps({"ident": {"namespace": ["sales"], "name": name},
                                                             **request})))

    loaded = ask("loadView", "a")["ok"]
    for operation, name, reads in (("createView", "c", "d"), ("createOrReplaceView", "a", "b"),
                                   ("replaceView", "a", "b")):
        assert ask(operation, name, view={**loaded, "queryText": f"SELECT x FROM {reads}"}) == {"error": {
            "kind": "recursive_view", "view": f"`vs`.`sales`.`{name}`",
            "path": f"`vs`.`sales`.`{name}` -> `vs`.`sales`.`{reads}` -> `vs`.`sales`.`{name}`"}}
    assert ask("createView", "e", view={**loaded, "queryText": "SELECT x FROM e"}) == {"error": {
        "kind": "recursive_view", "view": "`vs`.`sales`.`e`", "path": "`vs`.`sales`.`e` -> `vs`.`sales`.`e`"}}
    assert store.event_count() == 3


def test_a_rename_follows_no_view_without_spark_sql_and_no_name_the_store_cannot_hold(store):
    """Only Spark SQL is followed: a view of Trino SQL alone is renamed, and a view read on the way
    that has none reads nothing; a name no view can have (a dot in a part) is passed over."""
    bridge = _Bridge(store, "vs", "4.3.0")
    for name, dialect, sql in (("t", "trino", "SELECT x FROM t2"), ("b", "trino", "SELECT x FROM a2"),
                               ("a", "spark", "SELECT x FROM b UNION ALL SELECT x FROM sales.`c.d`")):
        store.create_view(("sales", name), columns=[Column("x", "int")], default_catalog="vs",
                          default_namespace=["sales"], representations=[(dialect, sql)])
    assert _rename(bridge, ["sales"], "t", ["sales"], "t2") == {"ok": None}
    assert _rename(bridge, ["sales"], "a", ["sales"], "a2") == {"ok": None}
    assert store.list_views() == [("sales", "a2"), ("sales", "b"), ("sales", "t2")]


def test_a_rename_the_store_refuses_is_refused_naming_the_view_and_writes_nothing(store):
    bridge = _Bridge(store, "vs", "4.3.0")
    store.create_view("sales.a", columns=[Column("x", "int")], default_namespace=["sales"],
                      representations=[("spark", "SELECT 1 AS x")])
    assert _rename(bridge, ["sales"], "gone", ["sales"], "b") == {"error": {
        "kind": "no_such_view", "namespace": ["sales"], "name": "gone"}}
    assert _rename(bridge, ["sales"], "a", ["sales"], "b.c") == {"error": {
        "kind": "user", "message": "viewstore catalog 'vs': cannot rename view vs.sales.a: bad identifier part "
                                   "'b.c': dots, backquotes and control characters are not allowed"}}
    assert store.list_views() == [("sales", "a")] and store.event_count() == 1


def test_a_summary_s_spark_keys_holding_no_json_are_served_as_missing(store):
    """The Python API may record any text under Spark's summary keys: text that is no JSON is served as
    none (the columns' own names, no SQL configs), as other JSON is."""
    bridge = _Bridge(store, "vs", "4.3.0")
    store.create_view("sales.odd", columns=[Column("x", "int")], default_namespace=["sales"],
                      representations=[("spark", "SELECT 1 AS x")],
                      summary={QUERY_COLUMN_NAMES: "[x", SQL_CONFIGS: "not json"})
    loaded = json.loads(bridge.call("loadView", json.dumps({"ident": {"namespace": ["sales"], "name": "odd"}})))
    assert (loaded["ok"]["queryColumnNames"], loaded["ok"]["sqlConfigs"]) == ([], {})


def test_the_catalog_keeps_sqlglots_warnings_to_itself(spark, vs, caplog):
    """Following the views a view reads parses its SQL with sqlglot, which warns of a JSON path it cannot
    read (Spark reads it: the call returns NULL); that warning reached the caller's logging."""
    with caplog.at_level(logging.DEBUG, logger="sqlglot"):
        run(spark, "CREATE VIEW vs.sales.j AS SELECT get_json_object('{}', '$.b[') AS x")
        assert run(spark, "SELECT x FROM vs.sales.j") == [(None,)]
    assert [r for r in caplog.records if r.name == "sqlglot"] == []


def test_views_over_temporary_objects_are_refused_as_spark_refuses_them(spark, vs):
    """Spark's own INVALID_TEMP_OBJ_REFERENCE: the Hive session's analyzer lacks the check for catalog views,
    and such a view read nothing outside the session (over a session variable, not even inside it)."""
    run(spark, README_CREATE)
    spark.range(2).createOrReplaceTempView("vs_temp")
    spark.range(2).createOrReplaceGlobalTempView("vs_global")
    spark.sql("CREATE TEMPORARY FUNCTION vs_plus(x BIGINT) RETURNS BIGINT RETURN x + 1")
    spark.sql("DECLARE VARIABLE vs_var INT DEFAULT 5")
    try:
        for statement, kind, name in [
                ("CREATE VIEW vs.sales.t AS SELECT id FROM vs_temp", "VIEW", "`vs_temp`"),
                ("CREATE VIEW vs.sales.t AS SELECT id FROM global_temp.vs_global", "VIEW", "`global_temp`.`vs_global`"),
                (f"CREATE VIEW vs.sales.t AS SELECT id FROM {ORDERS} WHERE id IN (SELECT id FROM vs_temp)", "VIEW",
                 "`vs_temp`"),
                ("CREATE VIEW vs.sales.t AS WITH w AS (SELECT vs_plus(1) AS y) SELECT y FROM w", "FUNCTION",
                 "`vs_plus`"),
                ("CREATE VIEW vs.sales.t AS SELECT vs_var AS v", "VARIABLE", "`vs_var`"),
                ("CREATE OR REPLACE VIEW vs.sales.big_orders AS SELECT id FROM vs_temp", "VIEW", "`vs_temp`"),
                ("ALTER VIEW vs.sales.big_orders AS SELECT vs_plus(id) AS id FROM vs_temp", "VIEW", "`vs_temp`"),
                ("ALTER VIEW vs.sales.big_orders AS SELECT vs_plus(id) AS id FROM vs.sales.big_orders", "FUNCTION",
                 "`vs_plus`")]:
            target = "`vs`.`sales`.`t`" if " vs.sales.t " in statement else "`vs`.`sales`.`big_orders`"
            fails(spark, statement, "INVALID_TEMP_OBJ_REFERENCE",
                  f"persistent object {target} of the type VIEW", f"temporary object {name} of the type {kind}")
        assert kinds(vs) == ["view.created"]
        # a CTE that has a temporary view's name is no temporary view
        run(spark, "CREATE VIEW vs.sales.cte AS WITH vs_temp AS (SELECT 7 AS id) SELECT id FROM vs_temp")
        assert run(spark, "SELECT * FROM vs.sales.cte") == [(7,)]
        # a stored definition that reads a name this session shadows with a temporary view is not new:
        # its properties change as before
        vs.create_view("sales.shadowed", columns=[Column("id", "long")], default_namespace=[DB],
                       representations=[("spark", "SELECT id FROM orders")])
        spark.range(2).createOrReplaceTempView("orders")
        run(spark, "ALTER VIEW vs.sales.shadowed SET TBLPROPERTIES ('k'='v')")
        assert vs.load_view("sales.shadowed").properties == {"k": "v"}
        assert run(spark, "SELECT count(*) FROM vs.sales.shadowed") == [(3,)]  # the table, not the temporary view
    finally:
        spark.catalog.dropTempView("orders")
        spark.catalog.dropTempView("vs_temp")
        spark.catalog.dropGlobalTempView("vs_global")
        spark.sql("DROP TEMPORARY FUNCTION IF EXISTS vs_plus")
        spark.sql("DROP TEMPORARY VARIABLE IF EXISTS vs_var")


def test_a_new_definition_with_an_expression_spark_named_is_refused_as_spark_refuses_it(spark, vs):
    """Spark's own CREATE_PERMANENT_VIEW_WITHOUT_ALIAS: the Hive session's analyzer lacks the check for
    catalog views, which stored the name Spark made up for the expression ("(1 + 1)", which may differ in
    another Spark release) as a column name, where Spark's own catalog and a session without Hive refuse
    the definition, with or without a column list."""
    run(spark, README_CREATE)
    for statement in ["CREATE VIEW vs.sales.t AS SELECT 1 + 1",
                      "CREATE VIEW vs.sales.t (n) AS SELECT 1 + 1",
                      f"CREATE VIEW vs.sales.t AS SELECT count(*) FROM {ORDERS}",
                      f"CREATE OR REPLACE VIEW vs.sales.big_orders AS SELECT id, amount * 2 FROM {ORDERS}",
                      "ALTER VIEW vs.sales.big_orders AS SELECT 1 + 1"]:
        target = "`vs`.`sales`.`t`" if " vs.sales.t " in statement else "`vs`.`sales`.`big_orders`"
        fails(spark, statement, "CREATE_PERMANENT_VIEW_WITHOUT_ALIAS", f"permanent view {target}")
    assert kinds(vs) == ["view.created"]
    run(spark, "CREATE VIEW vs.sales.t (n) AS SELECT 1 + 1 AS two")  # an alias of its own, as Spark asks
    assert run(spark, "SELECT n FROM vs.sales.t") == [(2,)]


def test_a_detached_catalog_says_how_to_attach(spark, vs):
    run(spark, README_CREATE)
    detach(spark, "vs")
    fails(spark, "SELECT * FROM vs.sales.big_orders", "USER_RAISED_EXCEPTION",
          "viewstore catalog 'vs' has no store attached", "attach(spark, store, name='vs')")
    attach(spark, vs, name="vs")
    assert len(run(spark, "SELECT * FROM vs.sales.big_orders")) == 2


def test_attach_and_detach_in_another_session_and_from_another_thread(spark, store, orders):
    """Spark finds a catalog's class in the active session's settings; attach and detach make the
    session they are given the active one while they load it (the session of a ``newSession()``,
    or any session from a thread of the driver, is not), and leave the thread's as it was."""
    other = spark.newSession()
    active = getattr(spark._jvm, "org.apache.spark.sql.classic.SparkSession").getActiveSession

    def in_a_thread(call, *args):
        outcome = []
        thread = threading.Thread(target=lambda: outcome.append((call(*args), active().isDefined())))
        thread.start()
        thread.join()
        return outcome[0]

    assert attach(other, store, name="vs_other") == "vs_other"
    assert active().get().equals(spark._jsparkSession)  # the thread's active session is back
    run(other, "CREATE VIEW vs_other.sales.v AS SELECT 1 AS one")
    assert run(other, "SELECT one FROM vs_other.sales.v") == [(1,)]
    assert spark.conf.get("spark.sql.catalog.vs_other", None) is None  # the other session's setting alone
    assert in_a_thread(detach, other, "vs_other") == (True, False)
    fails(other, "SELECT * FROM vs_other.sales.v", "USER_RAISED_EXCEPTION", "no store attached")
    assert in_a_thread(attach, spark, store, "vs_thread") == ("vs_thread", False)
    assert run(spark, "SELECT one FROM vs_thread.sales.v") == [(1,)]
    assert detach(spark, "vs_thread")


def test_a_closed_store_gives_a_clean_error(spark, vs):
    run(spark, README_CREATE)
    vs.close()
    fails(spark, "SELECT * FROM vs.sales.big_orders", "USER_RAISED_EXCEPTION",
          f"cannot load view vs.sales.big_orders: the store is closed (open a new ViewStore on {vs.path})")
    fails(spark, "CREATE VIEW vs.sales.other AS SELECT 1 AS x", "USER_RAISED_EXCEPTION",
          f"cannot create view vs.sales.other: the store is closed (open a new ViewStore on {vs.path})")


class _FailingPythonSide:
    """A Python side that fails as a broken driver would: it raises, or answers nonsense."""

    class Java:
        implements = ["io.viewstore.spark.ViewStoreBridge"]

    def __init__(self, answer):
        self.answer = answer

    def call(self, operation, request):
        if self.answer is None:
            raise RuntimeError("the driver is in trouble\n" + "  a long traceback line\n" * 200)
        return self.answer


@pytest.mark.parametrize("answer, fragment", [
    (None, "loadView got no answer from the Python driver (it failed; its log has the traceback)"),
    ("not json", "unreadable answer to loadView"),
])
def test_a_failing_python_side_still_gives_a_clean_spark_error(spark, vs, answer, fragment):
    """The Java side wraps whatever comes back over py4j: no 10 KB Py4JJavaError reaches the user."""
    catalog = spark._jsparkSession.sessionState().catalogManager().catalog("vs")
    catalog.attach(_FailingPythonSide(answer))
    try:
        fails(spark, "SELECT * FROM vs.sales.big_orders", "USER_RAISED_EXCEPTION", "viewstore catalog 'vs'", fragment)
    finally:
        attach(spark, vs, name="vs")
    run(spark, README_CREATE)
    assert len(run(spark, "SELECT * FROM vs.sales.big_orders")) == 2


def test_the_bridge_answers_bad_requests_without_raising(store):
    bridge = _Bridge(store, "vs", "4.3.0")
    unknown = json.loads(bridge.call("alterView", "{}"))
    assert unknown == {"error": {"kind": "user", "message": "viewstore catalog 'vs': unknown catalog operation "
                                                           "'alterView'"}}
    broken = json.loads(bridge.call("loadView", "{not json"))
    assert broken["error"]["kind"] == "user" and "internal error in loadView" in broken["error"]["message"]


def test_the_bridge_s_refusals_name_the_call_and_the_name_as_spark_shows_it(store):
    """Listing a namespace the store cannot hold, and looking up or dropping a view of a closed store:
    each refusal names what it could not do and the name with the catalog first, quoted as Spark quotes it."""
    bridge = _Bridge(store, "vs", "4.3.0")

    def ask(operation, request):
        return json.loads(bridge.call(operation, json.dumps(request)))

    listed = ask("listViews", {"namespace": ["sales", "a.b"]})
    assert listed == {"error": {"kind": "user", "message": "viewstore catalog 'vs': cannot list views in "
                                                           "vs.sales.`a.b`: bad namespace level 'a.b': dots, "
                                                           "backquotes and control characters are not allowed"}}
    store.close()
    for operation, action in (("viewExists", "look up"), ("dropView", "drop")):
        assert ask(operation, {"ident": {"namespace": ["sales"], "name": "v"}}) == {"error": {
            "kind": "user", "message": f"viewstore catalog 'vs': cannot {action} view vs.sales.v: the store is closed "
                                       f"(open a new ViewStore on {store.path})"}}



def test_each_thread_s_replace_expects_the_version_its_own_last_load_served(store):
    """Spark loads a view and then replaces it on the same thread: a load on another thread does not
    take the place of this thread's, and a load is used by one replace only."""
    bridge = _Bridge(store, "vs", "4.3.0")
    for name in ("a", "b"):
        store.create_view(("sales", name), columns=[Column("x", "int")], default_namespace=["sales"],
                          representations=[("spark", "SELECT 1 AS x")])

    def ask(operation, name, thread, **request):
        return json.loads(bridge.call(operation, json.dumps({"ident": {"namespace": ["sales"], "name": name},
                                                             "thread": thread, **request})))

    loaded = ask("loadView", "a", 1)["ok"]
    assert "ok" in ask("loadView", "b", 2)
    store.alter_view("sales.a", ViewChange.set_property("meanwhile", "yes"))
    assert ask("replaceView", "a", 1, view={**loaded, "properties": {"k": "v"}}) == {"error": {
        "kind": "user", "message": "viewstore catalog 'vs': cannot alter view vs.sales.a: another writer changed it "
                                   "while Spark was working on it; nothing was written, run the statement again"}}
    assert store.load_view("sales.a").properties == {"meanwhile": "yes"}
    loaded = ask("loadView", "a", 1)["ok"]
    assert "ok" in ask("replaceView", "a", 1, view={**loaded, "properties": {**loaded["properties"], "k": "v"}})
    store.alter_view("sales.a", ViewChange.set_property("later", "yes"))
    # no load on this thread since its last replace: the view as it is now is replaced
    assert "ok" in ask("replaceView", "a", 1, view={**loaded, "properties": {"k": "w"}})
    assert store.load_view("sales.a").properties == {"k": "w"}


def test_the_bridge_remembers_the_loads_of_the_1024_threads_that_loaded_last(store):
    """A thread that loads a view again counts as one of the latest: loads on 1024 other threads since
    its first load do not make its replace forget what it read."""
    bridge = _Bridge(store, "vs", "4.3.0")
    store.create_view("sales.a", columns=[Column("x", "int")], default_namespace=["sales"],
                      representations=[("spark", "SELECT 1 AS x")])

    def ask(operation, thread, **request):
        return json.loads(bridge.call(operation, json.dumps({"ident": {"namespace": ["sales"], "name": "a"},
                                                             "thread": thread, **request})))

    ask("loadView", 0)
    for thread in range(1, 1024):
        ask("loadView", thread)
    loaded = ask("loadView", 0)["ok"]  # its latest load
    ask("loadView", 1024)  # a 1025th: the first to have loaded but not since goes
    store.alter_view("sales.a", ViewChange.set_property("meanwhile", "yes"))
    assert "another writer changed it" in ask("replaceView", 0, view={**loaded, "properties": {"k": "v"}})[
        "error"]["message"]
    assert store.load_view("sales.a").properties == {"meanwhile": "yes"}
    loaded = ask("loadView", 2)["ok"]
    assert "ok" in ask("replaceView", 1, view={**loaded, "properties": {"k": "v"}})  # 1 was forgotten


def test_the_bridge_waits_out_a_long_plain_call_of_another_thread(tmp_path, monkeypatch):
    """The bound on the wait is for a transaction or a receiver that may be waiting for Spark: a
    plain call of another thread that holds the store longer (here a write waiting for another
    process's write lock; a rebuild() of a big log) ends by itself, and a catalog call waits for it."""
    import sqlite3

    import viewstore.log as log_module
    from viewstore import ConcurrencyError
    from viewstore.spark import catalog_plugin

    monkeypatch.setattr(log_module, "BUSY_TIMEOUT_MS", 300)
    monkeypatch.setattr(catalog_plugin, "TRANSACTION_WAIT_S", 0.2)
    with ViewStore(tmp_path / "s.db", actor="alice") as store:
        store.create_view("sales.v", columns=[("x", "int")], representations=[("spark", "SELECT 1 AS x")],
                          default_namespace="sales")
        bridge = _Bridge(store, "vs", "4.3.0")
        holder = sqlite3.connect(store.path, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")  # another process in a long write
        outcome = []

        def write():
            try:
                store.alter_view("sales.v", ViewChange.update_comment("waits"))
            except ConcurrencyError as e:
                outcome.append(e.busy)

        writer = threading.Thread(target=write)
        writer.start()
        while store._lock.acquire(blocking=False):  # until the writer holds the store (waiting for the file)
            store._lock.release()
        try:
            answer = json.loads(bridge.call("viewExists", json.dumps({"ident": {"namespace": ["sales"], "name": "v"}})))
        finally:
            writer.join(10)
            holder.execute("ROLLBACK")
            holder.close()
        assert outcome == [True] and answer == {"ok": True}


def _ask_from_another_thread(bridge, operation, request):
    """A catalog call as Spark makes it while the caller waits for Spark: on another thread, waited
    for (here at most 5 s, where Spark would wait for ever)."""
    answers = []
    thread = threading.Thread(target=lambda: answers.append(json.loads(bridge.call(operation, json.dumps(request)))))
    thread.start()
    thread.join(5)
    return answers[0] if answers else "still waiting"


def test_a_receiver_of_a_write_made_through_the_bridge_may_use_the_catalog(store, monkeypatch):
    """A committed receiver runs Spark SQL over the catalog after a Spark DROP VIEW: the bridge must
    not hold the store through the receivers of the write it made, or that SQL waits for the bound."""
    from viewstore import signals
    from viewstore.spark import catalog_plugin

    monkeypatch.setattr(catalog_plugin, "TRANSACTION_WAIT_S", 0.3)
    store.create_view("sales.v", columns=[("x", "int")], representations=[("spark", "SELECT 1 AS x")],
                      default_namespace="sales")
    bridge = _Bridge(store, "vs", "4.3.0")
    ident = {"namespace": ["sales"], "name": "v"}
    seen = []

    def committed(sender, events):
        seen.append(_ask_from_another_thread(bridge, "viewExists", {"ident": ident}))

    signals.committed.connect(committed)
    try:
        assert json.loads(bridge.call("dropView", json.dumps({"ident": ident}))) == {"ok": True}
    finally:
        signals.committed.disconnect(committed)
    assert seen == [{"ok": False}]


def test_the_bridge_gives_up_on_a_store_held_by_a_receiver_that_waits_for_spark(store, monkeypatch):
    """A before_commit receiver (run while the store is held) that runs Spark SQL over the catalog
    waits for Spark, which waits for the catalog: the call fails after the bound, as inside a transaction."""
    from viewstore import signals
    from viewstore.spark import catalog_plugin

    monkeypatch.setattr(catalog_plugin, "TRANSACTION_WAIT_S", 0.3)
    bridge = _Bridge(store, "vs", "4.3.0")
    seen = []

    def before(sender, events):
        seen.append(_ask_from_another_thread(bridge, "viewExists", {"ident": {"namespace": ["sales"], "name": "v"}}))

    signals.before_commit.connect(before)
    try:
        store.create_view("sales.v", columns=[("x", "int")], representations=[("spark", "SELECT 1 AS x")],
                          default_namespace="sales")
    finally:
        signals.before_commit.disconnect(before)
    assert seen == [{"error": {"kind": "user", "message": (
        "viewstore catalog 'vs': a transaction of the store (store.transaction()) or a signal receiver held it for "
        "0.3 s: Spark SQL over this catalog cannot run inside such a block or receiver (it waits for Spark, Spark "
        "for it); run it after the block")}}]
    assert store.view_exists("sales.v")  # the write the receiver saw goes on


# -- attach --------------------------------------------------------------------------------------


def test_attach_refuses_spark_connect(spark, store, monkeypatch):
    monkeypatch.setenv("SPARK_CONNECT_MODE_ENABLED", "1")  # how PySpark itself marks a Connect client
    with pytest.raises(ValidationError) as refused:
        attach(spark, store, name="vs")
    assert str(refused.value) == ("viewstore's Spark catalog needs a classic PySpark session (py4j): Spark Connect "
                                  "clients have no driver JVM to host the catalog; run the pipeline as a classic "
                                  "PySpark driver")


def test_attach_refuses_bad_arguments(spark, store):
    with pytest.raises(ValidationError, match="^attach needs a SparkSession, not ViewStore$"):
        attach(store, store)
    with pytest.raises(ValidationError, match="^attach needs a ViewStore, not str$"):
        attach(spark, "views.db")
    with pytest.raises(ValidationError) as refused:
        attach(spark, store, name="my.catalog")
    assert str(refused.value) == ("bad catalog name 'my.catalog': dots, backquotes and control characters are not "
                                  "allowed")
    with pytest.raises(ValidationError) as refused:
        attach(spark, store, name="spark_catalog")
    assert str(refused.value) == "spark_catalog is Spark's own session catalog; attach the store under another name"
    assert attach(spark, store, name="VS_Upper") == "vs_upper"
    assert detach(spark, "vs_upper") is True
    assert detach(spark, "never_attached") is False


def test_attach_refuses_a_name_configured_as_another_catalog_class_and_leaves_it(spark, store):
    """Before Spark is asked to load it: the setting names the class it holds, and stays as it was."""
    other = "org.example.NoSuchCatalog"
    spark.conf.set("spark.sql.catalog.vs_taken", other)
    try:
        with pytest.raises(ValidationError) as refused:
            attach(spark, store, name="vs_taken")
        assert str(refused.value) == f"catalog 'vs_taken' is already configured as {other}; choose another name"
        assert spark.conf.get("spark.sql.catalog.vs_taken") == other
    finally:
        spark.conf.unset("spark.sql.catalog.vs_taken")


def test_attach_refuses_a_name_spark_has_loaded_as_another_catalog_and_sets_nothing(spark, store):
    """Spark keeps the catalog it loaded under a name after its setting is gone: attach names that
    catalog's class, and leaves the name unset, as it found it."""
    other = "org.apache.spark.sql.execution.datasources.v2.jdbc.JDBCTableCatalog"
    spark.conf.set("spark.sql.catalog.vs_loaded", other)
    spark.conf.set("spark.sql.catalog.vs_loaded.url", "jdbc:derby:memory:vs_loaded;create=true")
    try:
        spark.sql("SHOW NAMESPACES IN vs_loaded").collect()
        spark.conf.unset("spark.sql.catalog.vs_loaded")
        with pytest.raises(ValidationError) as refused:
            attach(spark, store, name="vs_loaded")
        assert str(refused.value) == f"catalog 'vs_loaded' is already loaded as {other}; choose another name"
        assert spark.conf.get("spark.sql.catalog.vs_loaded", None) is None
    finally:
        spark.conf.unset("spark.sql.catalog.vs_loaded")
        spark.conf.unset("spark.sql.catalog.vs_loaded.url")


def _attach_a_catalog_spark_cannot_load(root: str, store_path: str, queue) -> None:
    """A session that has a jar of the catalog jar's name without the catalog class in it (a broken
    or foreign file): attach's refusal, and what it left in the session's settings."""
    import zipfile

    from spark_settings import build_session
    from viewstore.errors import EngineError

    spark = build_session(Path(root) / "spark", hive=False)
    try:
        jar = Path(root) / jar_path().name
        with zipfile.ZipFile(jar, "w") as archive:
            archive.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n")
        spark.sql(f"ADD JAR '{jar}'")
        try:
            with ViewStore(store_path, actor="child") as store:  # refused, Spark holds it nowhere
                attach(spark, store, name="vs")
            refused = None
        except EngineError as error:
            refused = str(error)
        queue.put((refused, spark.conf.get("spark.sql.catalog.vs", None)))
    finally:
        spark.stop()


def test_attach_refused_as_spark_cannot_load_the_catalog_leaves_the_name_unset(tmp_path):
    """The load fails in Spark (its own condition, said once); the setting attach made for it is
    taken back, as for every refused attach, and the store is untouched."""
    from spawned import spawned_results

    ViewStore(tmp_path / "views.db", actor="a").close()
    [(refused, setting)] = spawned_results(_attach_a_catalog_spark_cannot_load,
                                           [(str(tmp_path), str(tmp_path / "views.db"))], timeout=300)
    assert refused == ("cannot attach the store as a Spark catalog: Spark failed: "
                       "[CANNOT_LOAD_CATALOG.PLUGIN_CLASS_NOT_FOUND] Cannot load catalog 'vs' with the plugin class "
                       "'io.viewstore.spark.ViewStoreCatalog': cannot find the plugin class. SQLSTATE: 46103")
    assert setting is None
    with ViewStore(tmp_path / "views.db", actor="a") as store:
        assert store.list_views() == [] and store.event_count() == 0


def test_a_clone_of_the_session_leaves_alone_what_the_catalog_s_name_was_set_to_after_attach(spark, vs, caplog):
    """create_view analyzes in a clone of the session, where Spark loads each catalog from its
    setting: set anew after attach, the name's catalog there is another class, left unconnected, or
    one that cannot be loaded, logged; the call goes on either way."""
    from viewstore.spark import create_view
    from viewstore.spark.catalog_plugin import CATALOG_CLASS

    jdbc = "org.apache.spark.sql.execution.datasources.v2.jdbc.JDBCTableCatalog"
    spark.conf.set("spark.sql.catalog.vs.url", "jdbc:derby:memory:vs_clone;create=true")
    try:
        for n, configured in enumerate((jdbc, "org.example.NoSuchCatalog")):
            spark.conf.set("spark.sql.catalog.vs", configured)
            caplog.clear()
            with caplog.at_level(logging.WARNING, logger="viewstore"):
                view = create_view(spark, vs, f"sales.cloned{n}", "SELECT 1 AS x")
            assert view.identifier == ("sales", f"cloned{n}")
            messages = [r.getMessage() for r in caplog.records if r.name.startswith("viewstore")]
            if configured == jdbc:
                assert messages == []
            else:
                assert len(messages) == 1 and messages[0].startswith(
                    "viewstore catalog 'vs' could not be connected in a clone of its session: "), messages
                assert "org.example.NoSuchCatalog" in messages[0]
    finally:
        spark.conf.set("spark.sql.catalog.vs", CATALOG_CLASS)
        spark.conf.unset("spark.sql.catalog.vs.url")
    assert run(spark, "SHOW VIEWS IN vs.sales") == [("sales", "cloned0", False), ("sales", "cloned1", False)]


def test_only_the_supported_spark_minor_is_accepted():
    check_spark_version(f"{SUPPORTED_SPARK}.0")
    check_spark_version(f"{SUPPORTED_SPARK}.7")
    for other in ("4.2.1", "4.4.0", "5.0.0"):
        with pytest.raises(NotInstalledError) as refused:
            check_spark_version(other)
        assert str(refused.value) == (f"viewstore's Spark catalog is built for Spark {SUPPORTED_SPARK}.x; this session "
                                      f"runs Spark {other} (the spark extra pins a supported pyspark; {INSTALL_SPARK})")
        assert isinstance(refused.value, ImportError)  # caught where a missing package is
    for wrong, shown in ((4.3, "float"), (None, "NoneType")):  # a version is Spark's text: a float 4.3 passed as one
        with pytest.raises(ValidationError) as refused:
            check_spark_version(wrong)
        assert str(refused.value) == f"a Spark version must be a string such as '4.3.0', not {shown}"
    pyproject = (ROOT / "pyproject.toml").read_text()
    major, minor = map(int, SUPPORTED_SPARK.split("."))
    assert f'"pyspark>={major}.{minor},<{major}.{minor + 1}"' in pyproject


def test_session_conf_names_the_shipped_jar():
    assert session_conf("VS") == {"spark.jars": str(jar_path()),
                                  "spark.sql.catalog.vs": "io.viewstore.spark.ViewStoreCatalog"}


# -- the jar -------------------------------------------------------------------------------------


def test_the_jar_is_built_from_the_current_sources():
    info = build_jar.jar_info()
    assert info["source_sha256"] == build_jar.source_digest(), (
        "the catalog jar is stale: run python -m viewstore.spark.build_jar and commit the jar")
    assert info["spark_minor"] == SUPPORTED_SPARK and info["java_release"] == 17
    assert build_jar.main(["--check"]) == 0
    sources = {p.name for p in build_jar.SOURCE_DIR.rglob("*.java")}
    assert sources == {"ViewStoreCatalog.java", "ViewStoreBridge.java"}
    assert build_jar.JAR_PATH == jar_path()


def test_the_jar_builds_again_from_the_sources_byte_for_byte_the_same(tmp_path):
    """Two builds give the same bytes, with the entries and the build record of the shipped jar."""
    import zipfile

    first, second = tmp_path / "one" / "catalog.jar", tmp_path / "two" / "catalog.jar"
    info = build_jar.build(first)
    assert build_jar.build(second) == info == build_jar.jar_info(first) == build_jar.jar_info()
    assert first.read_bytes() == second.read_bytes()
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["catalog.jar", "catalog.jar", "one", "two"]
    with zipfile.ZipFile(first) as built, zipfile.ZipFile(jar_path()) as shipped:
        assert built.namelist() == shipped.namelist()
        assert built.read("META-INF/MANIFEST.MF") == shipped.read("META-INF/MANIFEST.MF")
        assert {e.date_time for e in built.infolist()} == {(1980, 1, 1, 0, 0, 0)}


def test_the_jar_command_tells_a_missing_or_stale_jar_and_a_build_that_fails(tmp_path):
    """The command, run from a copy of its module beside a copy of the sources: it works on the
    java and jars folders next to its file."""
    import os
    import shutil
    import subprocess
    import sys
    import zipfile

    script = tmp_path / "build_jar.py"
    shutil.copy(Path(build_jar.__file__), script)
    jar = tmp_path / "jars" / build_jar.JAR_PATH.name

    def command(*args, **env):
        done = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, timeout=300,
                              cwd=tmp_path, env={**os.environ, **env})
        return done.returncode, done.stdout, done.stderr

    missing = (1, f"{jar.name}: missing or without a build record\n", "")
    assert command("--check") == missing
    jar.parent.mkdir()
    with zipfile.ZipFile(jar, "w") as zf:
        zf.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\r\n\r\n")
    assert command("--check") == missing
    shutil.copytree(build_jar.SOURCE_DIR, tmp_path / "java")
    shutil.copy(build_jar.JAR_PATH, jar)
    assert command("--check") == (0, f"{jar.name} is up to date\n", "")

    source = tmp_path / "java" / "io" / "viewstore" / "spark" / "ViewStoreBridge.java"
    text = source.read_text()
    source.write_text(text + "\nclass Broken { int x = ; }\n")
    assert command("--check") == (1, f"{jar.name} is stale: rebuild with python -m viewstore.spark.build_jar\n", "")
    code, out, err = command()
    assert (code, out) == (1, "") and err.startswith("javac failed:\n") and "ViewStoreBridge.java" in err
    assert jar.read_bytes() == build_jar.JAR_PATH.read_bytes()  # the jar before stays, and nothing beside it
    assert sorted(p.name for p in jar.parent.iterdir()) == [jar.name]
    assert command(PATH=str(tmp_path)) == (1, "", "javac (JDK 17 or later) is needed to build the jar\n")
    source.write_text(text)
    jar.unlink()
    shipped = build_jar.jar_info()
    assert command() == (0, f"built {jar.name} against Spark {shipped['spark_version']} "
                            f"(sources {shipped['source_sha256'][:12]})\n", "")
    assert build_jar.jar_info(jar) == shipped and command("--check")[0] == 0


def test_no_machine_paths_in_the_jar_or_sources():
    import zipfile

    with zipfile.ZipFile(jar_path()) as zf:
        blob = b"".join(zf.read(n) for n in zf.namelist())
    sources = sorted(build_jar.SOURCE_DIR.rglob("*.java"))
    assert [path.name for path in sources] == ["ViewStoreBridge.java", "ViewStoreCatalog.java"]  # none passed over
    for path in sources:
        blob += path.read_bytes()
    assert not re.search(rb"/(work|home|tmp|usr)/", blob)


# -- the docs ------------------------------------------------------------------------------------


def test_the_docs_example_runs(spark, tmp_path, monkeypatch):
    """The pipeline in docs/spark-catalog.md runs as written on the running session."""
    text = (ROOT / "docs" / "spark-catalog.md").read_text()
    (code,) = re.findall(r"```python\n(.*?)```", text, re.S)
    monkeypatch.chdir(tmp_path)
    scope: dict = {}
    try:
        exec(compile(code, "docs/spark-catalog.md", "exec"), scope)
    finally:
        if "store" in scope:
            detach(spark, "vs")
            scope["store"].close()
        spark.sql("USE spark_catalog.default")


def test_spark_sql_inside_a_transaction_of_the_store_fails_instead_of_waiting_for_ever(spark, vs, monkeypatch):
    """The thread in the block holds the store and waits for Spark; Spark's catalog call waits for
    the store: the call gives up after a bound, the statement fails, the block goes on."""
    from viewstore.spark import catalog_plugin

    monkeypatch.setattr(catalog_plugin, "TRANSACTION_WAIT_S", 0.5)
    run(spark, README_CREATE)
    with vs.transaction():
        vs.alter_view("sales.big_orders", ViewChange.update_comment("changed in the block"))
        fails(spark, "SELECT * FROM vs.sales.big_orders", "USER_RAISED_EXCEPTION",
              "a transaction of the store (store.transaction()) or a signal receiver held it for 0.5 s",
              "run it after the block")
        vs.alter_view("sales.big_orders", ViewChange.set_property("after", "the failure"))
    assert len(run(spark, "SELECT * FROM vs.sales.big_orders")) == 2  # and after the block, it works
    described = dict((k, v) for k, v, *_ in run(spark, "DESCRIBE TABLE EXTENDED vs.sales.big_orders"))
    assert "changed in the block" in described["Comment"]


def test_spark_sql_waits_for_a_short_transaction_of_another_thread(spark, vs):
    run(spark, README_CREATE)
    entered, done = threading.Event(), []

    def writer():
        with vs.transaction():
            vs.alter_view("sales.big_orders", ViewChange.update_comment("from the other thread"))
            entered.set()
            threading.Event().wait(0.4)
        done.append(True)

    thread = threading.Thread(target=writer)
    thread.start()
    entered.wait(5)
    # asked while the other thread is in its block: it waits for the commit, then reads it
    described = dict((k, v) for k, v, *_ in run(spark, "DESCRIBE TABLE EXTENDED vs.sales.big_orders"))
    assert "from the other thread" in described["Comment"]
    thread.join(5)
    assert done == [True] and len(run(spark, "SELECT * FROM vs.sales.big_orders")) == 2


# -- the bridges of sessions that are gone -------------------------------------------------------


def test_attach_lets_go_of_the_bridges_of_sessions_the_jvm_collected(spark, store, tmp_path):
    """A driver that attaches a store to many ``newSession()``s and lets go of them: once the JVM
    has collected a session, the next attach forgets its bridge (and the store it holds), while
    the bridges of sessions still alive stay, and their clones are still connected."""
    import gc
    import time

    from viewstore.spark import catalog_plugin
    from viewstore.spark.catalog_plugin import _session_id

    jvm = spark._jvm
    kept = spark.newSession()
    attach(kept, store, name="vs_kept")
    watched = []
    for i in range(8):
        session = spark.newSession()
        attach(session, ViewStore(tmp_path / f"v{i}.db", actor="a"), name="vs_gone")
        watched.append(((_session_id(session._jsparkSession), "vs_gone"),
                        jvm.java.lang.ref.WeakReference(session._jsparkSession)))
        del session
    assert all(key in catalog_plugin._ATTACHED for key, _ in watched)
    gc.collect()
    # py4j tells the JVM of released objects from a thread of its own, by and by: collect until the
    # count of collected sessions stays put (one may stay reachable, through a JVM thread's active session)
    deadline, counts = time.monotonic() + 20, [0]
    while time.monotonic() < deadline and not (counts[-1] and counts[-3:] == counts[-1:] * 3):
        jvm.java.lang.System.gc()
        time.sleep(0.3)
        counts.append(sum(ref.refersTo(None) for _, ref in watched))  # never hands a session to py4j
    collected = [key for key, ref in watched if ref.refersTo(None)]
    assert collected, "the JVM collected none of the sessions: the test proves nothing"
    attach(spark.newSession(), store, name="vs_next")
    assert not [key for key in collected if key in catalog_plugin._ATTACHED]
    assert all(key in catalog_plugin._ATTACHED for key, ref in watched if not ref.refersTo(None))
    assert (_session_id(kept._jsparkSession), "vs_kept") in catalog_plugin._ATTACHED
    run(kept, "CREATE VIEW vs_kept.sales.v AS SELECT 1 AS one")
    from viewstore.spark import create_view
    # create_view analyzes in a clone of ``kept``: its vs_kept must be connected to the store there
    with ViewStore(tmp_path / "reader.db", actor="a") as reading:  # create_view attaches it nowhere
        reader = create_view(kept, reading, "sales.w", "SELECT one FROM vs_kept.sales.v")
    assert [c.name for c in reader.columns] == ["one"]
    assert detach(kept, "vs_kept")


def _attach_and_stop(root: str, store_path: str, cycles: int, queue) -> None:
    """Sessions made, attached and stopped one after another in one driver: the bridges left."""
    from spark_settings import build_session
    from viewstore.spark import catalog_plugin

    with ViewStore(store_path, actor="child") as store:  # closed after the last session stopped
        for i in range(cycles):
            spark = build_session(Path(root) / str(i), hive=False)
            attach(spark, store, name="vs")
            attach(spark, store, name="vs_second")
            spark.stop()
        spark = build_session(Path(root) / "last", hive=False)
        attach(spark, store, name="vs")
        queue.put(sorted(name for _, name in catalog_plugin._ATTACHED))
        spark.stop()


def test_attach_lets_go_of_the_bridges_of_stopped_sessions(tmp_path):
    """Many attach/stop cycles in one driver leave only the bridge of the session that runs."""
    from spawned import spawned_results

    ViewStore(tmp_path / "views.db", actor="a").close()
    [left] = spawned_results(_attach_and_stop, [(str(tmp_path / "spark"), str(tmp_path / "views.db"), 4)],
                             timeout=300)
    assert left == ["vs"]


def _stop_holding_the_session(root: str, store_path: str, queue) -> None:
    """A session attached, stopped and still held by the driver, then a new one attached: whether
    the first store is let go of."""
    import gc
    import time
    import weakref

    from spark_settings import build_session

    first = build_session(Path(root) / "first", hive=False)
    store = ViewStore(store_path, actor="child")
    attach(first, store, name="vs")
    gone = weakref.ref(store)
    del store
    first.stop()  # ``first`` stays referenced, as a driver's variable or a test fixture keeps it
    second = build_session(Path(root) / "second", hive=False)
    # the first store is left to be let go of (what this tells); the second is closed after its session stopped
    with ViewStore(store_path, actor="child") as kept:
        attach(second, kept, name="vs")
        deadline = time.monotonic() + 30
        while gone() is not None and time.monotonic() < deadline:
            gc.collect()
            second._jvm.java.lang.System.gc()
            second._jvm.java.lang.System.runFinalization()
            time.sleep(0.3)
        queue.put(gone() is None)
        assert first is not None
        second.stop()


def test_attach_lets_go_of_the_store_of_a_stopped_session_the_driver_still_holds(tmp_path):
    """The next attach disconnects the catalog of a stopped session, so the store it held is let
    go of even while the stopped session object lives on; only the map entry went before."""
    from spawned import spawned_results

    ViewStore(tmp_path / "views.db", actor="a").close()
    [released] = spawned_results(_stop_holding_the_session, [(str(tmp_path / "spark"), str(tmp_path / "views.db"))],
                                 timeout=300)
    assert released


def _attach_again_after_stop(root: str, store_path: str, queue) -> None:
    """Sessions attached, then stopped (one itself, one a newSession of it): what attaching again says."""
    from spark_settings import build_session

    from viewstore.errors import EngineError
    from viewstore.spark import catalog_plugin

    spark = build_session(Path(root), hive=False)
    other = spark.newSession()
    store = ViewStore(store_path, actor="child")
    attach(spark, store, name="vs")
    attach(other, store, name="vs")
    spark.stop()
    said = []
    for session in (spark, other):
        try:
            said.append(f"attached as {attach(session, store, name='vs')}")
        except EngineError as error:
            said.append(str(error))
    queue.put((said, sorted(name for _, name in catalog_plugin._ATTACHED)))


def test_attach_again_to_a_stopped_session_is_refused(tmp_path):
    """A session whose jar, setting and catalog were in place from an earlier attach asked its stopped
    context nothing, so attaching to it again succeeded (and held the store) where the first attach to
    a stopped session raises EngineError; refused, it changes nothing (the catalogs attached before
    are still held, for detach to find)."""
    from spawned import spawned_results

    ViewStore(tmp_path / "views.db", actor="a").close()
    [(said, left)] = spawned_results(_attach_again_after_stop, [(str(tmp_path / "spark"), str(tmp_path / "views.db"))],
                                     timeout=300)
    assert said == ["cannot attach the store as a Spark catalog: the SparkSession is stopped; start a new one"] * 2
    assert left == ["vs", "vs"]


def test_drop_view_answers_whether_it_dropped_a_view_as_spark_s_view_catalog_says(spark, vs):
    """ViewCatalog.dropView: true if a view was deleted, false if none exists (SQL's DROP VIEW asks
    viewExists first, so only a direct caller sees the answer)."""
    run(spark, README_CREATE)
    jvm = spark.sparkContext._jvm
    namespace = spark.sparkContext._gateway.new_array(jvm.java.lang.String, 1)
    namespace[0] = "sales"
    catalog = spark._jsparkSession.sessionState().catalogManager().catalog("vs")
    ident = jvm.org.apache.spark.sql.connector.catalog.Identifier.of(namespace, "big_orders")
    missing = jvm.org.apache.spark.sql.connector.catalog.Identifier.of(namespace, "missing")
    assert catalog.dropView(ident) is True
    assert catalog.dropView(ident) is False and catalog.dropView(missing) is False
    nameless = jvm.org.apache.spark.sql.connector.catalog.Identifier.of(
        spark.sparkContext._gateway.new_array(jvm.java.lang.String, 0), "big_orders")
    # no view can have a name without a namespace
    assert catalog.viewExists(nameless) is False and catalog.dropView(nameless) is False
    assert kinds(vs) == ["view.created", "view.dropped"]


def _call_racing(bridge, operation, request, code, writes, caller=None):
    """``bridge.call(operation, request)`` while another writer makes its change (``writes``, given
    the other writer's store) once, as ``code`` returns on this thread (called from ``caller``'s
    code, if given): between the bridge's read of the view and its write, where only a race can
    act. The bridge's answer, as a dict."""
    import sys

    other = ViewStore(bridge.store.path, actor="bob")
    done = []

    def hook(frame, event, arg):
        if event == "return" and frame.f_code is code and not done and (
                caller is None or (frame.f_back is not None and frame.f_back.f_code is caller)):
            done.append(True)
            writes(other)
    sys.setprofile(hook)
    try:
        answer = json.loads(bridge.call(operation, json.dumps(request)))
    finally:
        sys.setprofile(None)
        other.close()
    assert done == [True]
    return answer


def test_a_create_or_replace_of_a_view_another_writer_creates_meanwhile_is_refused(store):
    """CREATE OR REPLACE of a view the store did not hold when the bridge read it expects it still
    missing (version 0): a view another writer creates between that read and the write is not
    replaced unseen (its definition decided nothing): the statement is refused, to be run again."""
    bridge = _Bridge(store, "vs", "4.3.0")
    store.create_view("sales.t", columns=[Column("x", "int")], default_namespace=["sales"],
                      representations=[("spark", "SELECT 1 AS x")])
    view = json.loads(bridge.call("loadView", json.dumps({"ident": {"namespace": ["sales"], "name": "t"}})))["ok"]
    answer = _call_racing(bridge, "createOrReplaceView", {"ident": {"namespace": ["sales"], "name": "v"}, "view": view},
                          _Bridge._current.__code__, lambda other: other.create_view(
                              "sales.v", columns=[Column("y", "int")], default_namespace=["sales"],
                              representations=[("spark", "SELECT 2 AS y")]))
    assert answer == {"error": {"kind": "user", "message": (
        "viewstore catalog 'vs': cannot create or replace view vs.sales.v: another writer changed it while Spark "
        "was working on it; nothing was written, run the statement again")}}
    kept = store.load_view("sales.v")  # the other writer's view, as it made it
    assert (kept.stream_version, kept.sql_for("spark"), [c.name for c in kept.columns]) == (1, "SELECT 2 AS y", ["y"])


def test_a_replace_with_no_load_on_its_thread_expects_the_version_it_read(store):
    """A replace (ALTER VIEW) on a thread that loaded no view reads the view and expects that
    version: another writer's change between that read and the write is refused, not overwritten."""
    bridge = _Bridge(store, "vs", "4.3.0")
    store.create_view("sales.v", columns=[Column("x", "int")], default_namespace=["sales"],
                      representations=[("spark", "SELECT 1 AS x")])
    loaded = json.loads(bridge.call("loadView", json.dumps({"ident": {"namespace": ["sales"], "name": "v"},
                                                            "thread": 1})))["ok"]
    answer = _call_racing(bridge, "replaceView", {"ident": {"namespace": ["sales"], "name": "v"}, "thread": 2,
                                                  "view": {**loaded, "properties": {"k": "v"}}},
                          ViewStore.load_view.__code__,
                          lambda other: other.alter_view("sales.v", ViewChange.set_property("meanwhile", "yes")),
                          caller=_Bridge._replace_view.__code__)  # the store's read inside the replace
    assert answer == {"error": {"kind": "user", "message": (
        "viewstore catalog 'vs': cannot alter view vs.sales.v: another writer changed it while Spark was working "
        "on it; nothing was written, run the statement again")}}
    assert store.load_view("sales.v").properties == {"meanwhile": "yes"}
