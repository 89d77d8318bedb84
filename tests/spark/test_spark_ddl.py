"""viewstore.spark.ddl (create_view, and sql with its view DDL) against the real (Hive-enabled) test
SparkSession."""

from __future__ import annotations

import datetime as dt
import json
import logging
import re

import pytest
from pyspark.errors import AnalysisException

from viewstore import Column, ValidationError, ViewAlreadyExistsError, ViewChange, ViewStore, ViewStoreError, signals
from viewstore.spark import attach, check_views, create_view, detach, register_views, sql

from spark_views import _alter_record, _name, _stored, _view_properties, _while_its_write_waits

pytestmark = pytest.mark.spark


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
        events = store.event_count()
        with pytest.raises(ViewAlreadyExistsError, match=f"^view already exists: {data}.by_region$"):
            create_view(spark, store, "by_region", "SELECT region FROM orders")
        assert store.event_count() == events
        view = create_view(spark, store, "by_region", "SELECT region FROM orders", replace=True)
    finally:
        spark.catalog.setCurrentDatabase("default")
    assert view.identifier == (data, "by_region")
    assert view.current_version_id == 2 and [c.name for c in view.columns] == ["region"]
    view = create_view(spark, store, f"spark_catalog.{data}.by_day", f"SELECT day FROM {data}.orders")
    assert view.identifier == (data, "by_day")


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
    with ViewStore(tmp_path / "other.db", actor="a") as other:  # closed once detached
        attach(spark, other, name="vs_named")
        try:
            for name in (f"vs_named.{ns}.c", "vs_named.c"):
                with pytest.raises(ValidationError, match=r"catalog 'vs_named'.*session catalog"):
                    create_view(spark, store, name, query)
        finally:
            detach(spark, "vs_named")
    assert store.list_views() == [(ns, "a"), (ns, "b")]


def test_a_view_named_like_the_session_catalog_is_a_view_of_the_current_database(spark, store, ns):
    """A name of one part is the view's own, as Spark reads it: spark_catalog alone names a view of
    the current database, not the catalog."""
    spark.sql(f"CREATE DATABASE {ns}")
    spark.sql(f"USE {ns}")
    try:
        assert sql(spark, store, "CREATE VIEW spark_catalog AS SELECT 1 AS x").identifier == (ns, "spark_catalog")
        view = create_view(spark, store, "spark_catalog", "SELECT 2 AS x", replace=True)
    finally:
        spark.catalog.setCurrentDatabase("default")
    assert view.identifier == (ns, "spark_catalog") and view.current_version_id == 2
    assert spark.sql(f"SELECT x FROM {ns}.spark_catalog").first().x == 1


def test_a_view_name_of_three_parts_is_refused_as_spark_refuses_it(spark, store, ns):
    """A view of the session catalog lives in a database: ns.x.v names none, in create_view and in sql."""
    spark.sql(f"CREATE DATABASE {ns}")
    with pytest.raises(AnalysisException, match="REQUIRES_SINGLE_PART_NAMESPACE"):
        spark.sql(f"CREATE VIEW {ns}.x.v AS SELECT 1 AS x")
    with pytest.raises(ValidationError, match=rf"REQUIRES_SINGLE_PART_NAMESPACE.*{ns}\.x\.v"):
        create_view(spark, store, f"{ns}.x.v", "SELECT 1 AS x")
    with pytest.raises(ValidationError, match="REQUIRES_SINGLE_PART_NAMESPACE"):
        sql(spark, store, f"CREATE VIEW {ns}.x.v AS SELECT 1 AS x")
    assert store.event_count() == 0


def test_create_view_refuses_an_identifier_part_or_a_replace_flag_of_the_wrong_type(spark, store, ns):
    with pytest.raises(ValidationError, match="identifier part must be a string, not int$"):
        create_view(spark, store, (ns, 5), "SELECT 1 AS x")
    with pytest.raises(ValidationError, match="^replace must be True or False, not 1$"):
        create_view(spark, store, f"{ns}.v", "SELECT 1 AS x", replace=1)
    assert store.event_count() == 0


def test_create_view_refuses_column_comments_of_the_wrong_shape_or_for_no_column_of_the_query(spark, store, ns):
    for comments in (["x"], {"x": 1}, {1: "one"}):
        with pytest.raises(ValidationError) as refused:
            create_view(spark, store, f"{ns}.v", "SELECT 1 AS x", column_comments=comments)
        assert str(refused.value) == "column_comments must be a dict of column name to comment"
    spark.sql(f"CREATE DATABASE {ns}")
    with pytest.raises(ValidationError) as refused:
        create_view(spark, store, f"{ns}.v", "SELECT 1 AS x, 2 AS y", column_comments={"Y": "two", "z": "c", "A": "a"})
    assert str(refused.value) == "column_comments names unknown column(s) ['A', 'z']; the view has ['x', 'y']"
    with pytest.raises(ValidationError) as refused:
        create_view(spark, store, f"{ns}.v", "SELECT 1 AS x", column_comments={"z": "c"})
    assert str(refused.value) == "column_comments names unknown column(s) ['z']; the view has ['x']"
    assert store.event_count() == 0


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


def test_create_view_analyzes_the_sql_as_every_session_will_read_it(spark, store, ns):
    """${...} is not substituted: a query that parses only once substituted is refused, since the
    text is stored as written and read so in every session."""
    spark.conf.set("viewstore.test.n", "1")
    try:
        with pytest.raises(ValidationError, match="PARSE_SYNTAX_ERROR"):
            create_view(spark, store, f"{ns}.v", "SELECT ${viewstore.test.n} AS n")
    finally:
        spark.conf.unset("viewstore.test.n")
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
    ("SELECT session.scratch_twice(2) AS y", "FUNCTION", "scratch_twice"),
    ("SELECT SESSION.scratch_twice(2) AS y", "FUNCTION", "scratch_twice"),
    ("SELECT SYSTEM.Session.scratch_twice(2) AS y", "FUNCTION", "scratch_twice"),
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


def test_create_view_stores_the_sql_without_the_blanks_around_it(spark, store, ns):
    view = create_view(spark, store, f"{ns}.v", "\n  SELECT 1 AS x \t\n")
    assert view.sql_for("spark") == "SELECT 1 AS x"


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


def test_sql_create_view_with_a_column_list_of_the_wrong_length_is_refused_as_spark_refuses_it(spark, store, ns):
    spark.sql(f"CREATE DATABASE {ns}")
    for columns, query in (("(a, b)", "SELECT 1 AS x"), ("(a)", "SELECT 1 AS x, 2 AS y")):
        with pytest.raises(AnalysisException) as spark_own:
            spark.sql(f"CREATE VIEW {ns}.spark_own {columns} AS {query}")
        condition = spark_own.value.getCondition()
        assert condition.startswith("CREATE_VIEW_COLUMN_ARITY_MISMATCH."), condition
        with pytest.raises(ValidationError, match=re.escape(f"[{condition}]")):
            sql(spark, store, f"CREATE VIEW {ns}.v {columns} AS {query}")
    assert store.event_count() == 0 and not spark.catalog.tableExists(f"{ns}.v")


def test_sql_create_view_if_not_exists_of_a_stored_view_brings_its_session_copy_back(spark, store, ns):
    """IF NOT EXISTS on a stored view stores nothing, but makes sure the session has its copy."""
    sql(spark, store, f"CREATE VIEW {ns}.v AS SELECT 1 AS x")
    spark.sql(f"DROP VIEW {ns}.v")  # the copy dropped in Spark by hand
    view = sql(spark, store, f"CREATE VIEW IF NOT EXISTS {ns}.v AS SELECT 2 AS y")
    assert view.current_version_id == 1 and [c.name for c in view.columns] == ["x"]
    assert spark.sql(f"SELECT x FROM {ns}.v").first().x == 1


def test_sql_create_view_if_not_exists_of_a_stored_view_without_spark_sql_drops_its_session_copy(spark, store, ns):
    """The stored view has no Spark SQL any more (another process made it again in another dialect):
    the session copy, which would read the old definition, goes."""
    sql(spark, store, f"CREATE VIEW {ns}.v AS SELECT 1 AS x")
    store.drop_view(f"{ns}.v")
    store.create_view(f"{ns}.v", columns=[Column("x", "int")], representations=[("trino", "SELECT 1 AS x")],
                      default_namespace=ns)
    view = sql(spark, store, f"CREATE VIEW IF NOT EXISTS {ns}.v AS SELECT 2 AS x")
    assert view.dialects == ("trino",) and store.event_count() == 3
    assert not spark.catalog.tableExists(f"{ns}.v")


def test_sql_replace_alter_properties_rename_drop(spark, store, data, ns):
    q = f"SELECT region, count(*) AS n FROM {data}.orders GROUP BY region"
    sql(spark, store, f"CREATE VIEW {ns}.v COMMENT 'first' TBLPROPERTIES ('a' = '1') AS {q}")
    with pytest.raises(ViewAlreadyExistsError, match=f"^view already exists: {ns}.v$"):
        sql(spark, store, f"CREATE VIEW {ns}.v AS {q}")
    assert store.event_count() == 1
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
def test_sql_alter_never_undoes_a_change_made_meanwhile(spark, store, ns, statement, change):
    """ALTER VIEW writes what it read before Spark analyzed the statement; when another process
    changed the view in between (its security mode, its SQL), the ALTER is refused with
    ConcurrencyError and that change stays, in the store and in the session copy. Here the other
    writer (a second ViewStore on the file, in a thread of its own) holds the write lock, its change
    made but not committed, while the ALTER reads the view, and commits once the ALTER's write
    waits for the lock (the store's lock_wait signal)."""
    import threading

    from viewstore import ConcurrencyError, ViewStore, signals

    _stored(store, f"{ns}.v", "SELECT 1 AS x", ns)
    register_views(spark, store, ns)
    changed, commit, waits, outcome = threading.Event(), threading.Event(), [], {}

    def other_process_changes_it():
        try:
            with ViewStore(store.path, actor="bob") as other, other.transaction():
                view = other.load_view(f"{ns}.v")
                sql_text = "SELECT 7 AS x" if change == "sql" else view.sql_for("spark")
                other.replace_view(f"{ns}.v", columns=view.columns, representations=[("spark", sql_text)],
                                   default_namespace=view.default_namespace,
                                   security_mode="INVOKER" if change == "security" else None)
                changed.set()
                commit.wait(60)
        except Exception as error:  # noqa: BLE001 - asserted below
            outcome["error"] = error
            changed.set()

    def alter_waits(sender, **kwargs):
        waits.append(kwargs["waited"])
        commit.set()

    other = threading.Thread(target=other_process_changes_it)
    other.start()
    assert changed.wait(60) and outcome == {}, outcome
    signals.lock_wait.connect(alter_waits, sender=store)
    try:
        with pytest.raises(ConcurrencyError) as refused:
            sql(spark, store, statement.format(v=f"{ns}.v"))
    finally:
        signals.lock_wait.disconnect(alter_waits, sender=store)
        commit.set()
        other.join(60)
    assert outcome == {} and len(waits) >= 1
    assert str(refused.value) == f"view {ns}.v is at stream version 2, not the expected 1"
    view = store.load_view(f"{ns}.v")
    if change == "security":
        assert view.security_mode == "INVOKER" and view.sql_for("spark") == "SELECT 1 AS x"
    else:
        assert view.sql_for("spark") == "SELECT 7 AS x" and view.security_mode == "DEFINER"
    assert spark.sql(f"SELECT x FROM {ns}.v").first().x == 1  # the session copy as it was before the ALTER


@pytest.mark.parametrize("statement, second_statement", [
    ("ALTER VIEW {v} AS SELECT {n} AS x", "ALTER VIEW {v} AS SELECT {n} AS x"),
    # a CREATE VIEW would see the first's copy in the session and refuse to replace it: OR REPLACE does not
    ("CREATE VIEW {v} AS SELECT {n} AS x", "CREATE OR REPLACE VIEW {v} AS SELECT {n} AS x")], ids=["alter", "create"])
def test_sql_from_two_threads_on_one_view_keeps_the_session_copy_the_stores(spark, store, ns, statement,
                                                                             second_statement):
    """Two threads of the driver change one view through sql() at once: the one that loses in the
    store (ConcurrencyError, ViewAlreadyExistsError) must not put back what the session held
    before the winner's copy. Here the first has made its session copy and its write waits for the
    lock that a third connection holds (the store's lock_wait signal); then the lock is let go and
    the second starts, through a ViewStore of its own on the file, and is given 3 s: without the
    driver's turn at view DDL it would win in the store, and the first put back what it found."""
    import threading

    from viewstore import ViewStore

    if statement.startswith("ALTER"):
        _stored(store, f"{ns}.v", "SELECT 1 AS x", ns)
        register_views(spark, store, ns)
    outcome = {}

    def second():
        try:
            with ViewStore(store.path, actor="second") as own:
                outcome["second"] = sql(spark, own, second_statement.format(v=f"{ns}.v", n=3))
        except Exception as error:  # noqa: BLE001 - either may lose
            outcome["second"] = error

    def second_runs():
        outcome["started"] = thread = threading.Thread(target=second)
        thread.start()
        thread.join(timeout=3)

    with _while_its_write_waits(store, second_runs) as ran:
        try:
            outcome["first"] = sql(spark, store, statement.format(v=f"{ns}.v", n=2))
        except Exception as error:  # noqa: BLE001 - either may lose
            outcome["first"] = error
    outcome["started"].join(timeout=60)
    assert ran == [True]
    assert sum(isinstance(outcome[who], Exception) for who in ("first", "second")) <= 1, outcome
    stored = store.load_view(f"{ns}.v").sql_for("spark")
    assert stored in ("SELECT 2 AS x", "SELECT 3 AS x")
    assert spark.sql(f"SELECT x FROM {ns}.v").first().x == int(stored.split()[1]), outcome


@pytest.mark.parametrize("if_exists", [False, True])
def test_a_drop_of_a_view_another_thread_dropped_meanwhile_is_spark_s(spark, store, ns, if_exists):
    """A DROP VIEW that found the stored view, then waited for the turn while another thread dropped
    it: without IF EXISTS Spark's TABLE_OR_VIEW_NOT_FOUND, as for any view that is not there (it
    returned quietly); with IF EXISTS, nothing. The second thread waits for the turn, which this
    one holds, once its stack is in the turn's wait (it found the stored view before it)."""
    import sys
    import threading
    import time

    import viewstore.spark.session as session

    _stored(store, f"{ns}.v", "SELECT 1 AS x", ns)
    register_views(spark, store, ns)
    not_found = "Spark refused the statement: [TABLE_OR_VIEW_NOT_FOUND] The table or view `spark_catalog`.`{}`.`{}` " \
                "cannot be found. Verify the spelling and correctness of the schema and catalog.\n"
    with pytest.raises(ValidationError) as missing:
        sql(spark, store, f"DROP VIEW {ns}.never_was")
    assert str(missing.value).startswith(not_found.format(ns, "never_was"))
    assert str(missing.value).endswith("To tolerate the error on drop use DROP VIEW IF EXISTS or DROP TABLE IF EXISTS. "
                                       "SQLSTATE: 42P01")
    outcome = {}

    def second():
        try:
            outcome["second"] = sql(spark, store, f"DROP VIEW {'IF EXISTS ' if if_exists else ''}{ns}.v")
        except Exception as error:  # noqa: BLE001 - what it raises is the point
            outcome["second"] = error

    def waits_for_the_turn(thread):
        frame = sys._current_frames().get(thread.ident)
        while frame is not None:
            if frame.f_code is session._one_ddl_at_a_time.__wrapped__.__code__:
                return True
            frame = frame.f_back
        return False

    thread = threading.Thread(target=second, name="second")
    with session._one_ddl_at_a_time():
        thread.start()
        deadline = time.monotonic() + 60
        while not waits_for_the_turn(thread):
            assert thread.is_alive() and time.monotonic() < deadline, outcome
            time.sleep(0.01)
        sql(spark, store, f"DROP VIEW {ns}.v")  # this thread holds the turn (it is re-entrant)
    thread.join(60)
    assert not store.view_exists(f"{ns}.v")
    if if_exists:
        assert outcome["second"] is None
    else:
        assert type(outcome["second"]) is ValidationError, outcome
        assert str(outcome["second"]).startswith(not_found.format(ns, "v"))


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
    with pytest.raises(ValidationError) as raised:
        sql(spark, store, f"ALTER VIEW {ns}.v AS {q} WHERE region = 'south'")
    assert str(raised.value) == (
        f"Cannot replace view {ns}.v due to loss of view dialects ['trino'] (set the view property "
        "replace.drop-dialect.allowed=true to allow it, or remove it with alter_view: "
        "ViewChange.remove_representation, --remove-representation)")
    assert spark.sql(f"SELECT count(*) AS n FROM {ns}.v").first().n == 3  # the stored definition again
    assert store.load_view(f"{ns}.v").current_version_id == 2


def test_sql_interrupted_while_the_store_writes_puts_the_session_back(spark, store, ns):
    """Ctrl-C while the store writes (a before_commit receiver's KeyboardInterrupt reaches the caller
    as itself): the session copy made for the statement goes again, and so does its database."""
    def interrupt(sender, events):
        raise KeyboardInterrupt

    signals.before_commit.connect(interrupt)
    try:
        with pytest.raises(KeyboardInterrupt):
            sql(spark, store, f"CREATE VIEW {ns}.v AS SELECT 1 AS x")
    finally:
        signals.before_commit.disconnect(interrupt)
    assert not spark.catalog.databaseExists(ns) and store.event_count() == 0


def test_sql_leaves_views_the_store_does_not_hold_to_spark(spark, store, data, ns):
    spark.sql(f"CREATE DATABASE {ns}")
    spark.sql(f"CREATE VIEW {ns}.hand_made AS SELECT 1 AS x")
    sql(spark, store, f"ALTER VIEW {ns}.hand_made AS SELECT 2 AS x")
    assert spark.sql(f"SELECT x FROM {ns}.hand_made").first().x == 2
    sql(spark, store, f"DROP VIEW {ns}.hand_made")
    assert not spark.catalog.tableExists(f"{ns}.hand_made")
    assert store.event_count() == 0


def test_a_two_part_name_is_database_and_view_even_when_the_database_is_named_like_the_stores_catalog(
        spark, ns, tmp_path):
    """Only a name of three parts or more starts with the store's catalog name, as in Spark's reading."""
    named = ViewStore(tmp_path / "named.db", catalog=ns)
    try:
        assert create_view(spark, named, f"{ns}.a", "SELECT 1 AS x").identifier == (ns, "a")
        assert sql(spark, named, f"CREATE VIEW {ns}.b AS SELECT 2 AS x").identifier == (ns, "b")
        assert named.list_views() == [(ns, "a"), (ns, "b")]
    finally:
        named.close()
    assert spark.sql(f"SELECT x FROM {ns}.b").first().x == 2


def test_sql_leaves_ddl_on_a_temporary_view_named_like_a_stored_view_to_spark(spark, store, ns):
    """A bare name is the temporary view's first, as Spark reads it: DROP VIEW v drops that, not the stored view."""
    sql(spark, store, f"CREATE VIEW {ns}.v AS SELECT 1 AS x")
    spark.sql(f"USE {ns}")
    try:
        spark.sql("CREATE TEMPORARY VIEW v AS SELECT 2 AS x")
        assert sql(spark, store, "DROP VIEW v") is not None  # Spark's answer: it ran the statement
        assert store.view_exists(f"{ns}.v") and spark.sql("SELECT x FROM v").first().x == 1
    finally:
        spark.catalog.dropTempView("v")
        spark.catalog.setCurrentDatabase("default")


def test_sql_leaves_ddl_on_a_global_temporary_view_to_spark_in_any_case(spark, store):
    """GLOBAL_TEMP.v is the global temporary view v, as Spark reads it, though the store holds a view global_temp.v."""
    _stored(store, "global_temp.v", "SELECT 1 AS x", "default")
    spark.sql("CREATE OR REPLACE GLOBAL TEMPORARY VIEW v AS SELECT 2 AS x")
    try:
        assert sql(spark, store, "DROP VIEW GLOBAL_TEMP.v") is not None  # Spark's answer: it ran the statement
        assert not spark.catalog.tableExists("global_temp.v")
        assert store.view_exists("global_temp.v") and store.event_count() == 1
    finally:
        spark.sql("DROP VIEW IF EXISTS global_temp.v")


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


# -- fixed defects ---------------------------------------------------------------------------------


def _show_create(spark, name):
    return spark.sql(f"SHOW CREATE TABLE {name}").first()[0]


def test_sql_create_view_never_replaces_a_spark_view_the_store_does_not_hold(spark, store, ns):
    spark.sql(f"CREATE DATABASE {ns}")
    spark.sql(f"CREATE VIEW {ns}.legacy COMMENT 'hand made' AS SELECT 1 AS x")
    before = _show_create(spark, f"{ns}.legacy")
    refusal = rf"^\[TABLE_OR_VIEW_ALREADY_EXISTS\] cannot create view {ns}\.%s: the session catalog already has a %s " \
              r"of that name \(not a stored view\)$"
    with pytest.raises(ValidationError, match=refusal % ("legacy", "view")):
        sql(spark, store, f"CREATE VIEW {ns}.legacy AS SELECT 2 AS y")
    assert sql(spark, store, f"CREATE VIEW IF NOT EXISTS {ns}.legacy AS SELECT 2 AS y") is None
    spark.sql(f"CREATE TABLE {ns}.tab (x INT) USING parquet")  # a table too, as Spark leaves it alone
    with pytest.raises(ValidationError, match=refusal % ("tab", "table")):
        sql(spark, store, f"CREATE VIEW {ns}.tab AS SELECT 2 AS y")
    assert sql(spark, store, f"CREATE VIEW IF NOT EXISTS {ns}.tab AS SELECT 2 AS y") is None
    assert spark.catalog.getTable(f"{ns}.tab").tableType == "MANAGED"
    # the store refuses this property value after Spark replaced the view: the old view comes back
    with pytest.raises(ValidationError) as refused:
        sql(spark, store, f"CREATE OR REPLACE VIEW {ns}.legacy TBLPROPERTIES ('version.history.num-entries'='x') "
                          "AS SELECT 2 AS y")
    assert str(refused.value) == "version.history.num-entries must be a positive integer, not 'x'"
    assert _show_create(spark, f"{ns}.legacy") == before
    assert spark.sql(f"SELECT * FROM {ns}.legacy").collect()[0].x == 1
    other = _name()
    with pytest.raises(ValidationError) as refused:  # a database the statement created goes away again
        sql(spark, store, f"CREATE VIEW {other}.v TBLPROPERTIES ('version.history.num-entries'='x') AS SELECT 1 AS x")
    assert str(refused.value) == "version.history.num-entries must be a positive integer, not 'x'"
    assert not spark.catalog.databaseExists(other)
    assert store.event_count() == 0


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
    spark.conf.set("spark.sql.legacy.viewSchemaBindingMode", "false")  # Spark's parser gives no mode then
    try:
        view = sql(spark, store, f"CREATE VIEW {ns}.a AS SELECT 1 AS x")
    finally:
        spark.conf.unset("spark.sql.legacy.viewSchemaBindingMode")
    assert "spark.schema-mode" not in view.summary


def test_sql_of_a_statement_that_is_not_text_says_so(spark, store):
    """sql(spark, store, 5) said 'the statement is empty'."""
    with pytest.raises(ValidationError, match="a statement must be SQL text, not 5"):
        sql(spark, store, 5)
    with pytest.raises(ValidationError, match="the statement is empty"):
        sql(spark, store, "  ")


# -- edges found by planting bugs -----------------------------------------------------------------


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


def test_the_stores_catalog_name_given_in_mixed_case_is_dropped_in_any_case(spark, ns, tmp_path):
    named = ViewStore(tmp_path / "named.db", catalog="Prod")
    try:
        assert create_view(spark, named, f"prod.{ns}.a", "SELECT 1 AS x").identifier == (ns, "a")
        assert sql(spark, named, f"CREATE VIEW PROD.{ns}.b AS SELECT 2 AS x").identifier == (ns, "b")
    finally:
        named.close()


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
    vetoes = []

    def veto(sender, events):
        vetoes.append(RuntimeError("frozen"))
        raise vetoes[-1]

    signals.before_commit.connect(veto)
    try:
        with pytest.raises(ViewStoreError) as raised:
            sql(spark, store, f"ALTER VIEW {ns}.w WITH SCHEMA BINDING")
        assert type(raised.value) is ViewStoreError and str(raised.value) == \
            "a before_commit receiver refused the change: frozen"
        assert len(vetoes) == 1 and raised.value.__cause__ is vetoes[0]
    finally:
        signals.before_commit.disconnect(veto)
    rows = spark.sql(f"DESCRIBE EXTENDED {ns}.w").collect()
    assert next(r.data_type for r in rows if r.col_name == "View Schema Mode") == "TYPE EVOLUTION"
    assert store.load_view(f"{ns}.w").summary["spark.schema-mode"] == "TYPE EVOLUTION"


def test_sql_alter_view_with_schema_of_a_view_without_spark_sql_is_refused(spark, store, ns):
    store.create_view(f"{ns}.v", columns=[Column("x", "int")], representations=[("trino", "SELECT 1 AS x")],
                      default_namespace=ns)
    with pytest.raises(ValidationError, match=rf"^view {ns}\.v has no Spark SQL \(its dialects: trino\)$"):
        sql(spark, store, f"ALTER VIEW {ns}.v WITH SCHEMA BINDING")
    assert store.event_count() == 1 and not spark.catalog.databaseExists(ns)


def test_sql_alter_view_with_schema_makes_the_database_the_copy_needs_and_drops_it_when_spark_refuses(
        spark, store, ns):
    """A stored view whose database the session lacks: the database is made for its new copy, as
    CREATE VIEW makes one, and goes again when Spark refuses the copy."""
    _stored(store, f"{ns}.broken", f"SELECT x FROM {ns}.no_such_table", ns)
    with pytest.raises(ValidationError, match="TABLE_OR_VIEW_NOT_FOUND"):
        sql(spark, store, f"ALTER VIEW {ns}.broken WITH SCHEMA BINDING")
    assert not spark.catalog.databaseExists(ns) and store.event_count() == 1
    _stored(store, f"{ns}.v", "SELECT 1 AS x", ns)
    view = sql(spark, store, f"ALTER VIEW {ns}.v WITH SCHEMA BINDING")
    assert view.summary["spark.schema-mode"] == "BINDING"
    assert spark.sql(f"SELECT x FROM {ns}.v").first().x == 1


def test_sql_column_list_keeps_the_comments_the_query_inherits(spark, store, ns):
    spark.sql(f"CREATE DATABASE {ns}")
    spark.sql(f"CREATE TABLE {ns}.orders (id BIGINT COMMENT 'the id', amount INT COMMENT 'eur') USING parquet")
    view = sql(spark, store, f"CREATE VIEW {ns}.st (i, amt COMMENT 'own') AS SELECT id, amount FROM {ns}.orders")
    spark.sql(f"CREATE VIEW {ns}.own (i, amt COMMENT 'own') AS SELECT id, amount FROM {ns}.orders")
    spark_comments = [(r.col_name, r.comment) for r in spark.sql(f"DESCRIBE {ns}.own").collect()]
    assert spark_comments == [("i", "the id"), ("amt", "own")]
    assert [(c.name, c.comment) for c in view.columns] == spark_comments
    assert [(r.col_name, r.comment) for r in spark.sql(f"DESCRIBE {ns}.st").collect()] == spark_comments


def test_a_column_list_and_column_comments_keep_each_columns_nullability(spark, store, ns):
    """Naming a column, or giving it a comment, leaves it as the query makes it: not null stays not null."""
    query = "SELECT 1 AS x, CAST(NULL AS INT) AS y"
    view = sql(spark, store, f"CREATE VIEW {ns}.listed (a COMMENT 'one', b) AS {query}")
    assert [(c.name, c.nullable, c.comment) for c in view.columns] == [("a", False, "one"), ("b", True, None)]
    view = create_view(spark, store, f"{ns}.commented", query, column_comments={"X": "one", "y": "none"})
    assert [(c.name, c.nullable, c.comment) for c in view.columns] == [("x", False, "one"), ("y", True, "none")]


def test_a_column_comment_of_none_drops_the_comment_the_query_inherits(spark, store, ns):
    spark.sql(f"CREATE DATABASE {ns}")
    spark.sql(f"CREATE TABLE {ns}.t (id BIGINT COMMENT 'the id', n INT COMMENT 'a count') USING parquet")
    view = create_view(spark, store, f"{ns}.v", f"SELECT id, n, CAST(n AS TINYINT) AS b FROM {ns}.t",
                       column_comments={"id": None})
    assert [(c.name, c.comment) for c in view.columns] == [("id", None), ("n", "a count"), ("b", None)]
    # Spark's schema of the view (recorded, as the Iceberg types lose TINYINT) says the same
    fields = json.loads(view.summary["spark.schema"])["fields"]
    assert [f["metadata"].get("comment") for f in fields] == [None, "a count", None]


def test_a_column_list_renames_the_collation_spark_keeps_for_a_column(spark, store, ns):
    """Spark keys a column's collation by its name: the name the column list gives it, not the query's."""
    view = sql(spark, store, f"CREATE VIEW {ns}.v (b) AS SELECT 'x' COLLATE UTF8_LCASE AS c")
    (field,) = json.loads(view.summary["spark.schema"])["fields"]
    assert field["name"] == "b" and field["metadata"]["__COLLATIONS"] == {"b": "spark.UTF8_LCASE"}
    assert check_views(spark, store, ns).ok


def test_sql_create_view_creates_a_missing_database_unlike_spark(spark, store, ns):
    """Deliberate (documented in sql()): the session follows the store, whose namespaces need no creating."""
    with pytest.raises(Exception, match="SCHEMA_NOT_FOUND"):
        spark.sql(f"CREATE VIEW {ns}.v AS SELECT 1 AS one")
    assert sql(spark, store, f"CREATE VIEW {ns}.v AS SELECT 1 AS one").identifier == (ns, "v")
    assert spark.catalog.databaseExists(ns) and spark.sql(f"SELECT one FROM {ns}.v").first().one == 1


def test_sql_create_view_spark_refuses_drops_the_database_it_made_for_it(spark, store, ns):
    """The query analyzes, but Spark refuses the view itself (two columns of one name): the
    database made for its session copy goes again, one that was there stays (empty as it is), and
    the store is not written."""
    missing = _name()
    spark.sql(f"CREATE DATABASE {ns}")
    for database in (missing, ns):
        with pytest.raises(ValidationError, match="COLUMN_ALREADY_EXISTS"):
            sql(spark, store, f"CREATE VIEW {database}.v AS SELECT 1 AS x, 2 AS x")
    assert not spark.catalog.databaseExists(missing)
    assert spark.catalog.databaseExists(ns)
    assert store.event_count() == 0


def test_sql_refuses_view_ddl_hidden_in_scripts_and_execute_immediate(spark, store, ns):
    spark.sql(f"CREATE DATABASE {ns}")
    sql(spark, store, f"CREATE VIEW {ns}.v AS SELECT 1 AS one")
    hidden = ("view DDL ({}) inside a SQL script or EXECUTE IMMEDIATE would reach Spark only, not the store: run "
              "each view statement with sql() itself")
    for statement, plan in ((f"EXECUTE IMMEDIATE 'CREATE VIEW {ns}.e AS SELECT 1 AS one'", "CreateView"),
                            (f"BEGIN CREATE VIEW {ns}.s AS SELECT 1 AS one; END", "CreateView"),
                            (f"BEGIN DECLARE x INT; IF 1 = 1 THEN ALTER VIEW {ns}.v RENAME TO w; END IF; END",
                             "RenameTable"),
                            (f"BEGIN EXECUTE IMMEDIATE 'DROP VIEW {ns}.v'; END", "DropView"),
                            (f"BEGIN DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN CREATE VIEW {ns}.h AS SELECT 1 AS "
                             f"one; END; SELECT 1 / 0; END", "CreateView"),  # in an exception handler
                            (f"BEGIN USE {ns}; DROP VIEW v; END", "DropView"),  # a bare name a USE in it resolves
                            (f"BEGIN USE {ns}; DROP VIEW V; END", "DropView"),  # in another case
                            (f"EXECUTE IMMEDIATE 'ALTER VIEW {ns}.v SET TBLPROPERTIES (\\'k\\' = \\'v\\')'",
                             "SetViewProperties")):
        with pytest.raises(ValidationError) as raised:
            sql(spark, store, statement)
        assert str(raised.value) == hidden.format(plan), statement
    assert store.list_views() == [(ns, "v")] and store.event_count() == 1
    assert sorted(r.tableName for r in spark.sql(f"SHOW TABLES IN {ns}").collect()) == ["v"]
    # scripts and EXECUTE IMMEDIATE without view DDL still run
    assert sql(spark, store, "EXECUTE IMMEDIATE 'SELECT 41 + 1 AS n'").first().n == 42
    assert sql(spark, store, "BEGIN SELECT 7 AS n; END").first().n == 7
    spark.sql(f"CREATE TABLE {ns}.t0 (x INT) USING parquet")  # a RENAME of a table is no view DDL
    sql(spark, store, f"BEGIN ALTER TABLE {ns}.t0 RENAME TO {ns}.t1; END")
    assert spark.catalog.tableExists(f"{ns}.t1") and not spark.catalog.tableExists(f"{ns}.t0")
    with pytest.raises(ValidationError, match=r"^Spark refused the statement: "
                                              r"\[INVALID_EXPR_TYPE_FOR_QUERY_EXECUTE_IMMEDIATE\]"):
        sql(spark, store, "EXECUTE IMMEDIATE NULL")  # a literal of no text
    with pytest.raises(ValidationError, match="PARSE_SYNTAX_ERROR"):  # Spark's refusal, when it runs the statement
        sql(spark, store, "EXECUTE IMMEDIATE 'SELEC 1'")
    # a script may drop its own temporary view (and any view the store does not hold), and any
    # global temporary one; a statement run once (not in a script) is judged by what it names
    sql(spark, store, "BEGIN CREATE TEMPORARY VIEW tv AS SELECT 1 AS x; DROP VIEW tv; END")
    assert not spark.catalog.tableExists("tv")
    spark.sql("CREATE GLOBAL TEMPORARY VIEW v AS SELECT 1 AS x")
    sql(spark, store, "BEGIN DROP VIEW IF EXISTS global_temp.v; END")
    spark.sql("CREATE GLOBAL TEMPORARY VIEW v AS SELECT 1 AS x")
    sql(spark, store, "BEGIN DROP VIEW IF EXISTS GLOBAL_TEMP.v; END")  # global_temp in any case
    assert not spark.catalog.tableExists("global_temp.v")
    spark.sql("CREATE GLOBAL TEMPORARY VIEW v AS SELECT 1 AS x")
    sql(spark, store, "EXECUTE IMMEDIATE 'DROP VIEW IF EXISTS global_temp.v'")
    assert not spark.catalog.tableExists("global_temp.v")
    with pytest.raises(ValidationError) as raised:  # a stored view's name, in a script: refused
        sql(spark, store, "BEGIN CREATE TEMPORARY VIEW v AS SELECT 2 AS y; DROP VIEW v; END")
    assert str(raised.value) == hidden.format("DropView")
    spark.catalog.dropTempView("v")
    # a name given as IDENTIFIER(variable) is known only when Spark runs the statement
    spark.sql(f"DECLARE OR REPLACE VARIABLE vs_test_name STRING DEFAULT '{ns}.v'")
    try:
        for statement in ("DROP VIEW IDENTIFIER(vs_test_name)",
                          "ALTER VIEW IDENTIFIER(vs_test_name) AS SELECT 2 AS one",
                          "BEGIN DROP VIEW IDENTIFIER(vs_test_name); END"):
            with pytest.raises(ValidationError) as raised:
                sql(spark, store, statement)
            assert str(raised.value) == ("view DDL through sql() needs the view's name written out: IDENTIFIER() of "
                                         "a variable or an expression names a view only when Spark runs it")
    finally:
        spark.sql("DROP TEMPORARY VARIABLE IF EXISTS vs_test_name")
    assert store.list_views() == [(ns, "v")] and spark.catalog.tableExists(f"{ns}.v")


def test_sql_set_properties_keeps_reserved_keys_off_the_session_copy(spark, store, ns, caplog):
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
    # the view's own keys of these names go; the copy's (its fingerprint, the store's id) stay
    sql(spark, store, f"ALTER VIEW {ns}.v UNSET TBLPROPERTIES ('viewstore.fingerprint', 'viewstore.store')")
    assert "viewstore.fingerprint" not in store.load_view(f"{ns}.v").properties
    assert {"viewstore.fingerprint", "viewstore.store"} <= set(copy_properties())
    # keys no copy carries alone: the copy has nothing to follow, and nothing is logged
    with caplog.at_level(logging.WARNING, logger="viewstore"):
        view = sql(spark, store, f"ALTER VIEW {ns}.v SET TBLPROPERTIES ('hms.z' = '3')")
    assert view.properties["hms.z"] == "3" and "hms.z" not in copy_properties()
    assert [r.getMessage() for r in caplog.records if r.name.startswith("viewstore")] == []


def test_sql_set_properties_of_a_stored_view_without_a_session_copy_makes_the_copy(spark, store, ns):
    spark.sql(f"CREATE DATABASE {ns}")
    _stored(store, f"{ns}.v", "SELECT 1 AS x", ns)
    view = sql(spark, store, f"ALTER VIEW {ns}.v SET TBLPROPERTIES ('team' = 'ops')")
    assert view.properties == {"team": "ops"}
    assert _view_properties(spark, ns, "v")["team"] == "ops" and spark.sql(f"SELECT x FROM {ns}.v").first().x == 1
    assert _view_properties(spark, ns, "v")["viewstore.store"] == store.store_id  # a copy prune=True may drop


def test_sql_set_properties_of_a_stored_view_spark_cannot_analyze_stores_them_and_logs_why_no_copy_follows(
        spark, store, ns, caplog):
    """The store decided: the change is kept, and the copy that cannot be made is logged, not raised."""
    spark.sql(f"CREATE DATABASE {ns}")
    _stored(store, f"{ns}.v", f"SELECT x FROM {ns}.gone", ns, columns=[Column("x", "int")])
    with caplog.at_level(logging.WARNING, logger="viewstore"):
        view = sql(spark, store, f"ALTER VIEW {ns}.v SET TBLPROPERTIES ('team' = 'ops')")
    assert view.properties == {"team": "ops"} and store.load_view(f"{ns}.v").properties == {"team": "ops"}
    messages = [r.getMessage() for r in caplog.records if r.name.startswith("viewstore")]
    assert len(messages) == 1 and messages[0].startswith(f"the session copy of {ns}.v could not follow the store: ")
    assert "TABLE_OR_VIEW_NOT_FOUND" in messages[0]
    assert not spark.catalog.tableExists(f"{ns}.v")


def test_sql_never_replaces_nor_drops_a_session_view_whose_record_names_a_folder(spark, store, ns, tmp_path, caplog):
    """The metastore deletes the folder a dropped or replaced view's record names, as Iceberg's Hive
    catalog writes its views: a statement that would replace such a view of the session catalog is
    refused and changes nothing; one the store decides alone (a DROP, CREATE VIEW IF NOT EXISTS of
    a stored view) leaves it, and logs why."""
    spark.sql(f"CREATE DATABASE {ns}")
    folders = {}
    for name in ("a", "b", "c", "d"):
        spark.sql(f"CREATE VIEW {ns}.{name} AS SELECT 1 AS x")
        folders[name] = tmp_path / name
        folders[name].mkdir()
        (folders[name] / "00001-v.metadata.json").write_text("{}")
        _alter_record(spark, ns, name, location=str(folders[name]))
    for name in ("b", "c", "d"):
        _stored(store, f"{ns}.{name}", "SELECT 2 AS x", ns, [Column("x", "int")])
    versions = {name: store.load_view(f"{ns}.{name}").stream_version for name in ("b", "c", "d")}

    def kept(name):
        return f"the session catalog's view {ns}.{name} names the folder file:{folders[name]}, which the metastore " \
               "would delete with it: it is left as it is"

    for name, statement in (("a", f"CREATE OR REPLACE VIEW {ns}.a AS SELECT 3 AS x"),
                            ("b", f"CREATE OR REPLACE VIEW {ns}.b AS SELECT 3 AS x"),
                            ("b", f"ALTER VIEW {ns}.b AS SELECT 3 AS x"),
                            ("b", f"ALTER VIEW {ns}.b WITH SCHEMA EVOLUTION")):
        with pytest.raises(ValidationError) as refused:
            sql(spark, store, statement)
        assert str(refused.value) == kept(name) + "; nothing was changed", statement
    assert not store.view_exists(f"{ns}.a") and store.load_view(f"{ns}.b").stream_version == versions["b"]

    with caplog.at_level(logging.WARNING, logger="viewstore"):
        assert sql(spark, store, f"CREATE VIEW IF NOT EXISTS {ns}.c AS SELECT 3 AS x").stream_version == versions["c"]
        assert sql(spark, store, f"DROP VIEW {ns}.d") is None
    assert [r.getMessage() for r in caplog.records if r.name.startswith("viewstore")] == [
        f"the session copy of {ns}.{name} does not follow the store: {kept(name)}" for name in ("c", "d")]
    assert not store.view_exists(f"{ns}.d")
    for name, folder in folders.items():
        assert spark.sql(f"SELECT x FROM {ns}.{name}").first().x == 1, name  # the views Spark had, as they were
        assert (folder / "00001-v.metadata.json").read_text() == "{}", name


def test_what_the_session_catalog_held_is_read_once_before_a_view_is_replaced(spark, ns):
    """The record of a view about to be replaced (kept to put it back) is the one read to tell it is a
    view: its metastore calls, as Spark counts them, are those of finding a table or nothing there."""
    from viewstore.spark.ddl import _Before

    metrics = spark._jvm.org.apache.spark.metrics.source.HiveCatalogMetrics

    def calls(name):
        before = metrics.METRIC_HIVE_CLIENT_CALLS().getCount()
        held = _Before(spark, (ns, name))
        return metrics.METRIC_HIVE_CLIENT_CALLS().getCount() - before, held._saved is not None

    spark.sql(f"CREATE DATABASE {ns}")
    spark.sql(f"CREATE VIEW {ns}.v AS SELECT 1 AS x")
    spark.sql(f"CREATE TABLE {ns}.t (x INT)")
    table, saved = calls("t")
    assert not saved and table > 0
    assert calls("v") == (table, True)
    assert calls("none")[1] is False


def test_sql_rename_reads_the_new_name_as_spark_reads_it_for_its_own_views(spark, store, ns):
    """A session catalog view's new name is a database and a name at most, whatever the first of
    three parts is (a configured catalog in its own case, spark_catalog, the store's catalog name);
    of two parts, the first is a database (spark_catalog.x, lake.x): Spark's own view is refused
    with the same condition, and the store's changes in neither the store nor the session."""
    sql(spark, store, f"CREATE VIEW {ns}.v AS SELECT 1 AS x")
    spark.sql(f"CREATE VIEW {ns}.own AS SELECT 1 AS x")
    spark.conf.set("spark.sql.catalog.Lake", "viewstore.NoSuchCatalogClass")
    try:
        for target, refusal in (
                (f"Lake.{ns}.w", f"[IDENTIFIER_TOO_MANY_NAME_PARTS] `Lake`.`{ns}`.`w` is not a valid identifier as "
                                 f"it has more than 2 name parts"),
                (f"spark_catalog.{ns}.w", f"[IDENTIFIER_TOO_MANY_NAME_PARTS] `spark_catalog`.`{ns}`.`w` is not a "
                                          f"valid identifier as it has more than 2 name parts"),
                (f"prod.{ns}.w", f"[IDENTIFIER_TOO_MANY_NAME_PARTS] `prod`.`{ns}`.`w` is not a valid identifier as "
                                 f"it has more than 2 name parts"),
                (f"{ns}.x.`y`", f"[IDENTIFIER_TOO_MANY_NAME_PARTS] `{ns}`.`x`.`y` is not a valid identifier as it has "
                                f"more than 2 name parts"),
                ("spark_catalog.x", f"[RENAME_TABLE_SOURCE_DESTINATION_DATABASE_MISMATCH] cannot rename {ns}.v to "
                                    f"spark_catalog.x: the databases differ"),
                ("Lake.x", f"[RENAME_TABLE_SOURCE_DESTINATION_DATABASE_MISMATCH] cannot rename {ns}.v to lake.x: "
                           f"the databases differ")):
            with pytest.raises(ValidationError) as refused:
                sql(spark, store, f"ALTER VIEW {ns}.v RENAME TO {target}")
            assert str(refused.value) == refusal, target
            condition = refusal[1:refusal.index("]")]
            with pytest.raises(AnalysisException) as spark_s:
                spark.sql(f"ALTER VIEW {ns}.own RENAME TO {target}")
            assert spark_s.value.getCondition() == condition, target
    finally:
        spark.conf.unset("spark.sql.catalog.Lake")
    assert store.list_views() == [(ns, "v")] and store.event_count() == 1
    assert spark.sql(f"SELECT x FROM {ns}.v").first().x == 1


def test_sql_alter_table_rename_of_a_stored_view_is_sparks_refusal(spark, store, ns):
    """ALTER TABLE ... RENAME names a table: Spark refuses it for a view, and the store is not touched."""
    sql(spark, store, f"CREATE VIEW {ns}.v AS SELECT 1 AS one")
    with pytest.raises(ValidationError, match=r"^Spark refused the statement: "
                                              r"\[EXPECT_TABLE_NOT_VIEW\.USE_ALTER_VIEW\]"):
        sql(spark, store, f"ALTER TABLE {ns}.v RENAME TO {ns}.w")
    assert store.list_views() == [(ns, "v")] and store.event_count() == 1
    assert spark.sql(f"SELECT one FROM {ns}.v").first().one == 1 and not spark.catalog.tableExists(f"{ns}.w")


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


def test_sql_alter_view_as_records_the_current_database_as_spark_does(spark, store, ns):
    """Spark's ALTER VIEW ... AS captures the current database again: a bare name in the new query
    is read there, in the session copy and, from the stored default namespace, in every copy after."""
    other = f"{ns}_other"
    spark.sql(f"CREATE DATABASE {ns}")
    spark.sql(f"CREATE DATABASE {other}")
    spark.sql(f"CREATE TABLE {ns}.t USING parquet AS SELECT 1 AS id")
    spark.sql(f"CREATE TABLE {other}.t USING parquet AS SELECT 2 AS id")
    try:
        sql(spark, store, f"CREATE VIEW {ns}.v AS SELECT id FROM {ns}.t")
        spark.catalog.setCurrentDatabase(other)
        view = sql(spark, store, f"ALTER VIEW {ns}.v AS SELECT id FROM t")
        spark.catalog.setCurrentDatabase("default")
        assert view.default_namespace == (other,)
        assert spark.sql(f"SELECT id FROM {ns}.v").first().id == 2
        spark.sql(f"DROP VIEW {ns}.v")
        assert register_views(spark, store, ns).registered == [f"{ns}.v"]
        assert spark.sql(f"SELECT id FROM {ns}.v").first().id == 2
    finally:
        spark.catalog.setCurrentDatabase("default")
        spark.sql(f"DROP DATABASE IF EXISTS {other} CASCADE")


# -- inside a store transaction ----------------------------------------------------------------------


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
            assert type(refused.value) is ValidationError
            assert str(refused.value) == "Spark refused the statement: " \
                "[CANNOT_LOAD_CATALOG.PLUGIN_CLASS_NOT_FOUND] Cannot load catalog 'Lake' with the plugin class " \
                "'viewstore.NoSuchCatalogClass': cannot find the plugin class. SQLSTATE: 46103"
        assert store.list_views() == []
        assert not spark.catalog.databaseExists("lake")
        # 'LAKE' is no catalog in Spark: LAKE.c is view c of database lake, the store's
        assert create_view(spark, store, "LAKE.c", query).identifier == ("lake", "c")
    finally:
        spark.conf.unset("spark.sql.catalog.Lake")


def _spark_comment(spark, name):
    """The view's comment as Spark describes it, or None."""
    rows = spark.sql(f"DESCRIBE TABLE EXTENDED {name}").collect()
    return next((r.data_type for r in rows if r.col_name == "Comment"), None)


def test_sql_alter_as_set_and_unset_keep_the_comment_and_properties_as_spark_does(spark, store, ns):
    plain = _name()  # the same statements on a view of Spark's own catalog are the reference
    spark.sql(f"CREATE DATABASE {plain}")
    try:
        seen = []
        for name, run in ((f"{plain}.v", spark.sql), (f"{ns}.v", lambda statement: sql(spark, store, statement))):
            run(f"CREATE VIEW {name} COMMENT 'first' TBLPROPERTIES ('steward' = 'ops') AS SELECT 1 AS x")
            run(f"ALTER VIEW {name} AS SELECT 2 AS x")
            properties = {r.key: r.value for r in spark.sql(f"SHOW TBLPROPERTIES {name}").collect()}
            after_as = (_spark_comment(spark, name), properties.get("steward"))
            run(f"ALTER VIEW {name} SET TBLPROPERTIES ('comment' = 'second')")
            after_set = _spark_comment(spark, name)
            run(f"ALTER VIEW {name} UNSET TBLPROPERTIES ('comment')")
            seen.append((after_as, after_set, _spark_comment(spark, name)))
    finally:
        spark.sql(f"DROP DATABASE IF EXISTS {plain} CASCADE")
    assert seen[0] == (("first", "ops"), "second", None)
    assert seen[1] == seen[0]
    view = store.load_view(f"{ns}.v")
    assert view.comment is None and view.properties["steward"] == "ops"
    assert [e.type for e in store.history(f"{ns}.v")][1:] == ["view.replaced", "view.comment_updated",
                                                              "view.comment_updated"]


def test_sql_rename_of_a_stored_view_without_a_session_copy_makes_the_copy_under_the_new_name(spark, store, ns):
    spark.sql(f"CREATE DATABASE {ns}")
    _stored(store, f"{ns}.v", "SELECT 1 AS x", ns)
    assert sql(spark, store, f"ALTER VIEW {ns}.v RENAME TO w").identifier == (ns, "w")
    assert spark.sql(f"SELECT x FROM {ns}.w").first().x == 1 and not spark.catalog.tableExists(f"{ns}.v")


def test_sql_rename_to_a_name_in_another_case_names_the_view_as_stored(spark, store, ns):
    sql(spark, store, f"CREATE VIEW {ns}.v AS SELECT 1 AS x")
    sql(spark, store, f"CREATE VIEW {ns}.other AS SELECT 2 AS x")
    spark.sql(f"CREATE TABLE {ns}.kept (x INT) USING parquet")
    with pytest.raises(ViewAlreadyExistsError, match=f"^view already exists: {ns}.other$"):
        sql(spark, store, f"ALTER VIEW {ns}.v RENAME TO Other")
    with pytest.raises(ValidationError, match=f"cannot rename {ns}.v to {ns}.kept: "):
        sql(spark, store, f"ALTER VIEW {ns}.v RENAME TO KEPT")
    view = sql(spark, store, f"ALTER VIEW {ns}.v RENAME TO Renamed")
    assert view.identifier == (ns, "renamed") and store.list_views(ns) == [(ns, "other"), (ns, "renamed")]
    assert spark.sql(f"SELECT x FROM {ns}.RENAMED").first().x == 1
