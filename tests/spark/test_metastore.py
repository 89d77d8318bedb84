"""viewstore.spark.metastore against the real embedded Hive metastore of the test SparkSession.

Views are created by Spark SQL (and, for other engines, written through the metastore client as
those engines write them), read back raw, decoded, imported, and encoded again.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from conftest import CONFORMANCE

from viewstore import ViewStore, formats
from viewstore.errors import NoSuchViewError, ValidationError, ViewAlreadyExistsError
from viewstore.formats import ViewDefinition
from viewstore.hms import FailedRecord
from viewstore.model import Column
from viewstore.spark import import_metastore_views, read_metastore_table, write_metastore_table
from viewstore.spark.metastore import metastore_named
from viewstore.spark.types import schema_to_columns

pytestmark = pytest.mark.spark

ORDERS = ("CREATE TABLE {db}.orders (id BIGINT COMMENT 'order id', customer STRING, amount DECIMAL(10,2), "
          "items ARRAY<STRUCT<sku: STRING, qty: INT>>, attrs MAP<STRING, STRING>, placed TIMESTAMP, "
          "code CHAR(5)) USING parquet")

#: view name -> the statement (run with the database as the current one) and its query text
VIEWS = {
    "v_orders": ("CREATE VIEW v_orders (id COMMENT 'the order', customer, amount COMMENT 'in EUR', items) "
                 "COMMENT 'orders, one row each' TBLPROPERTIES ('team' = 'finance', 'quality' = 'gold') AS {q}",
                 "SELECT id, customer, amount, items FROM orders"),
    "v_big": ("CREATE VIEW v_big COMMENT 'a view over a view' AS {q}",
              "SELECT id, amount FROM v_orders WHERE amount > 100"),
    "v_nested": ("CREATE VIEW v_nested AS {q}",
                 "SELECT id, named_struct('first', items[0], 'n', size(items)) AS summary, attrs, "
                 "map_keys(attrs) AS attr_names, placed, code FROM orders"),
    "v_evolving": ("CREATE VIEW v_evolving WITH SCHEMA EVOLUTION AS {q}", "SELECT * FROM orders"),
}

#: Values that belong to one run, not to the view: times the metastore sets and Spark's session configs.
RUN_SPECIFIC = {"createTime", "lastAccessTime"}
RUN_SPECIFIC_PARAMETERS = ("transient_lastDdlTime", "view.sqlConfig.")


def _jmap(spark: Any, values: dict[str, str]) -> Any:
    jmap = spark._jvm.java.util.HashMap()
    for key, value in values.items():
        jmap.put(key, value)
    return jmap


def write_record(spark: Any, record: dict[str, Any]) -> None:
    """Create a table in the metastore from a record dict, as another engine (Trino, Iceberg) would."""
    api = spark._jvm.org.apache.hadoop.hive.metastore.api
    client = spark._jsparkSession.sharedState().externalCatalog().unwrapped().client()
    sd, serde_record = api.StorageDescriptor(), record["sd"].get("serdeInfo") or {}
    cols = spark._jvm.java.util.ArrayList()
    for col in record["sd"]["cols"]:
        cols.add(api.FieldSchema(col["name"], col["type"], col["comment"]))
    sd.setCols(cols)
    # Trino writes the location "", which Hive 2.3's metastore cannot drop; this test leaves it unset
    for key, setter in (("location", sd.setLocation), ("inputFormat", sd.setInputFormat),
                        ("outputFormat", sd.setOutputFormat)):
        if record["sd"].get(key):
            setter(record["sd"][key])
    serde = api.SerDeInfo()
    if serde_record.get("serializationLib"):
        serde.setSerializationLib(serde_record["serializationLib"])
    serde.setParameters(_jmap(spark, serde_record.get("parameters") or {}))
    sd.setSerdeInfo(serde)
    table = api.Table()
    table.setDbName(record["dbName"])
    table.setTableName(record["tableName"])
    table.setOwner(record["owner"])
    table.setTableType(record["tableType"])
    table.setParameters(_jmap(spark, record["parameters"]))
    table.setSd(sd)
    table.setPartitionKeys(spark._jvm.java.util.ArrayList())
    table.setViewOriginalText(record["viewOriginalText"])
    table.setViewExpandedText(record["viewExpandedText"])
    spark._jvm.org.apache.hadoop.hive.ql.metadata.Hive.get(client.conf()).getMSC().createTable(table)


def trino_definition(db: str, name: str) -> ViewDefinition:
    return ViewDefinition(dialect="trino", sql=f"SELECT id, amount FROM hive.{db}.orders", comment="from Trino",
                          columns=(Column("id", "long", "the id"), Column("amount", "decimal(10,2)")),
                          default_catalog="hive", default_namespace=(db,), owner="tess", security_mode="INVOKER",
                          database=db, name=name)


@pytest.fixture(scope="module")
def hms(spark, tmp_path_factory):
    """A metastore database with a table, Spark views, a Trino view, an Iceberg view and a broken record."""
    db = "hms" + uuid.uuid4().hex[:10]
    spark.sql(f"CREATE DATABASE {db}")
    try:
        spark.sql(ORDERS.format(db=db))
        spark.catalog.setCurrentDatabase(db)
        try:
            for name, (statement, query) in VIEWS.items():
                spark.sql(statement.format(q=query))
        finally:
            spark.catalog.setCurrentDatabase("default")
        write_record(spark, formats.encode(trino_definition(db, "v_trino"), "trino"))
        broken = formats.encode(trino_definition(db, "v_broken"), "trino")
        write_record(spark, {**broken, "viewOriginalText": "/* Presto View: not$base64 */"})
        metadata = json.loads((CONFORMANCE / "engine-views" / "iceberg-view-spec-example.json").read_text())["metadata"]
        metadata_file = tmp_path_factory.mktemp("iceberg") / "00001-v.metadata.json"
        metadata_file.write_text(json.dumps(metadata))
        write_record(spark, {"dbName": db, "tableName": "v_iceberg", "owner": "ivan", "tableType": "VIRTUAL_VIEW",
                             "parameters": {"table_type": "ICEBERG-VIEW", "metadata_location": metadata_file.as_uri(),
                                            "uuid": metadata["view-uuid"]},
                             "sd": {"cols": []}, "viewOriginalText": "SELECT 1", "viewExpandedText": "SELECT 1"})
        yield db
    finally:
        spark.sql(f"DROP DATABASE IF EXISTS {db} CASCADE")


def test_spark_views_read_back_raw_and_decode(spark, hms):
    for name, (_, query) in VIEWS.items():
        record = read_metastore_table(spark, hms, name)
        assert (record["dbName"], record["tableName"], record["tableType"]) == (hms, name, "VIRTUAL_VIEW")
        assert record["viewOriginalText"] == record["viewExpandedText"] == query
        assert isinstance(record["owner"], str) and record["owner"]
        engine, definition = formats.definition_from_table(record)
        assert engine == "spark" and (definition.dialect, definition.sql) == ("spark", query)
        assert (definition.default_catalog, definition.default_namespace) == ("spark_catalog", (hms,))
        assert (definition.database, definition.name, definition.owner) == (hms, name, record["owner"])
        # the columns are Spark's own view schema, names, types, nullability and comments
        assert list(definition.columns) == schema_to_columns(spark.table(f"{hms}.{name}").schema), name


def test_comments_column_comments_nested_types_and_properties(spark, hms):
    orders = formats.decode(read_metastore_table(spark, hms, "v_orders"))
    assert orders.comment == "orders, one row each"
    assert [(c.name, str(c.type), c.comment) for c in orders.columns] == [
        ("id", "long", "the order"), ("customer", "string", None), ("amount", "decimal(10,2)", "in EUR"),
        ("items", "list<struct<sku: string, qty: int>>", None)]
    assert {"team": "finance", "quality": "gold"}.items() <= orders.properties.items()
    assert formats.spark.query_output_columns(orders) == ("id", "customer", "amount", "items")

    nested = formats.decode(read_metastore_table(spark, hms, "v_nested"))
    types = {c.name: str(c.type) for c in nested.columns}
    assert types["summary"] == "struct<first: struct<sku: string, qty: int>, n: int>"
    assert types["attrs"] == "map<string, string>" and types["attr_names"] == "list<string>"
    assert types["placed"] == "timestamptz" and types["code"] == "string"
    assert dict(zip(types, nested.engine_types))["code"] == "char(5)"  # Spark's own type is kept aside
    assert [c.nullable for c in nested.columns if c.name == "summary"] == [False]

    over = formats.decode(read_metastore_table(spark, hms, "v_big"))
    assert over.sql == "SELECT id, amount FROM v_orders WHERE amount > 100"  # resolved in the default namespace
    assert over.comment == "a view over a view" and over.default_namespace == (hms,)
    assert formats.spark.schema_mode(formats.decode(read_metastore_table(spark, hms, "v_evolving"))) == "EVOLUTION"


def test_other_engines_records_read_back_as_written(spark, hms):
    record = read_metastore_table(spark, hms, "v_trino")
    written = formats.encode(trino_definition(hms, "v_trino"), "trino")
    assert _without_run_specific(record) == _without_run_specific({**written, "sd": {
        **written["sd"], "location": None, "serdeInfo": {**written["sd"]["serdeInfo"], "parameters": {}}}})
    engine, definition = formats.definition_from_table(record)
    assert engine == "trino"
    assert definition.model_copy(update={"properties": {}}) == trino_definition(hms, "v_trino")
    assert formats.detect(read_metastore_table(spark, hms, "v_iceberg")) == "iceberg"
    assert read_metastore_table(spark, hms, "orders")["tableType"] == "MANAGED_TABLE"


def test_a_hive_table_reads_back_with_its_storage_and_partition_keys(spark, target):
    spark.sql(f"CREATE TABLE {target}.parts (id BIGINT COMMENT 'the id') PARTITIONED BY (day STRING COMMENT 'the day') "
              "STORED AS PARQUET")
    record = read_metastore_table(spark, target, "parts")
    assert (record["tableType"], record["viewOriginalText"], record["viewExpandedText"]) == (
        "MANAGED_TABLE", None, None)
    assert record["partitionKeys"] == [{"name": "day", "type": "string", "comment": "the day"}]
    parquet = "org.apache.hadoop.hive.ql.io.parquet."
    assert {k: v for k, v in record["sd"].items() if k != "location"} == {
        "cols": [{"name": "id", "type": "bigint", "comment": "the id"}],
        "inputFormat": parquet + "MapredParquetInputFormat", "outputFormat": parquet + "MapredParquetOutputFormat",
        "serdeInfo": {"serializationLib": parquet + "serde.ParquetHiveSerDe",
                      "parameters": {"serialization.format": "1"}}}
    assert record["sd"]["location"].startswith("file:") and record["sd"]["location"].endswith(f"/{target}.db/parts")


def _without_run_specific(record: dict[str, Any]) -> dict[str, Any]:
    kept = {k: v for k, v in record.items() if k not in RUN_SPECIFIC}
    kept["parameters"] = {k: v for k, v in record["parameters"].items() if not k.startswith(RUN_SPECIFIC_PARAMETERS)}
    return kept


def test_import_a_whole_database(spark, hms, store):
    report = import_metastore_views(spark, store, hms)
    assert sorted(i.identifier for i in report.imported) == sorted(
        f"{hms}.{name}" for name in [*VIEWS, "v_trino", "v_iceberg"])
    assert {i.identifier.split(".")[1]: i.engine for i in report.imported} == {
        **{name: "spark" for name in VIEWS}, "v_trino": "trino", "v_iceberg": "iceberg"}
    assert [(s.name, s.reason, s.detail) for s in report.skipped] == [
        (f"{hms}.orders", "not-a-view", "a MANAGED_TABLE")]
    (failed,) = report.failed
    assert failed.name == f"{hms}.v_broken" and failed.error == "ValidationError"
    assert failed.message.startswith("viewOriginalText: malformed Base64")
    assert not report.ok and "imported 6, skipped 1, failed 1" in str(report)
    assert report.seconds > 0 and str(report).endswith(f"({report.seconds:.2f} s)")
    with pytest.raises(ValidationError, match="v_broken: ValidationError: viewOriginalText"):
        report.raise_for_failures()

    # each view is its own transaction: one view.imported event each, whatever the others did
    assert store.event_count() == 6
    assert store.history(f"{hms}.v_orders")[0].source == "hms:spark"
    assert store.history(f"{hms}.v_trino")[0].source == "hms:trino"
    assert store.history(f"{hms}.v_iceberg")[0].source == "hms:iceberg"
    orders = store.load_view(f"{hms}.v_orders")
    assert orders.comment == "orders, one row each" and orders.properties["team"] == "finance"
    assert orders.properties["owner"] == read_metastore_table(spark, hms, "v_orders")["owner"]
    trino = store.load_view(f"{hms}.v_trino")
    assert trino.security_mode == "INVOKER" and trino.properties["owner"] == "tess"

    again = import_metastore_views(spark, store, hms)
    assert again.imported == [] and len(again.failed) == 1
    assert sorted(s.reason for s in again.skipped) == ["exists"] * 6 + ["not-a-view"]
    assert store.event_count() == 6


def test_import_a_whole_database_tells_progress_for_every_table(spark, hms, store):
    seen = []
    report = import_metastore_views(spark, store, hms, progress=lambda done, total: seen.append((done, total)))
    tables = len(report.imported) + len(report.skipped) + len(report.failed)
    assert tables == 8 and seen == [(done, tables) for done in range(1, tables + 1)]

    with ViewStore(store.path.parent / "stopped.db", actor="someone") as other:

        def stop(done, total):
            if done == 3:
                raise KeyboardInterrupt  # as a user's Ctrl-C in the callback: the same, and no EngineError

        with pytest.raises(KeyboardInterrupt):
            import_metastore_views(spark, other, hms, progress=stop)
        # the tables in name order: orders (a table), v_big, v_broken; the one view among them stays imported
        assert other.list_views(hms) == [(hms, "v_big")]
        with pytest.raises(ValidationError, match="progress must be callable"):
            import_metastore_views(spark, other, hms, progress="tqdm")
        assert other.event_count() == 1


def test_a_view_dropped_between_the_listing_and_its_read_fails_alone(spark, store):
    """The metastore listed it, and it was gone when its turn came: that record fails, named as the
    listing named it, and the views before and after it are imported."""
    db = "hmsgone" + uuid.uuid4().hex[:8]
    spark.sql(f"CREATE DATABASE {db}")
    try:
        for name in ("a", "b", "c"):
            spark.sql(f"CREATE VIEW {db}.{name} AS SELECT 1 AS x")

        def drop_b(done, total):
            if done == 1:
                spark.sql(f"DROP VIEW {db}.b")

        report = import_metastore_views(spark, store, db, progress=drop_b)
    finally:
        spark.sql(f"DROP DATABASE IF EXISTS {db} CASCADE")
    assert [i.identifier for i in report.imported] == [f"{db}.a", f"{db}.c"] and report.skipped == []
    assert report.failed == [FailedRecord(f"{db}.b", "NoSuchViewError", f"no table or view {db}.b in the metastore",
                                          f"{db}.b")]


def test_encode_matches_the_record_spark_wrote(spark, hms, store):
    import_metastore_views(spark, store, hms)
    for name in VIEWS:
        written = read_metastore_table(spark, hms, name)
        # the imported view gives back the very record, run-specific values aside
        assert _without_run_specific(formats.encode(store.load_view(f"{hms}.{name}"), "spark")) == \
            _without_run_specific(written), name

    # and the same view defined in the store (not imported) gets the record Spark writes for it
    written = read_metastore_table(spark, hms, "v_orders")
    with ViewStore(store.path.parent / "defined.db", actor="someone") as other:
        view = other.create_view(
            f"{hms}.v_orders", columns=schema_to_columns(spark.table(f"{hms}.v_orders").schema),
            representations=[("spark", VIEWS["v_orders"][1])], default_catalog="spark_catalog", default_namespace=hms,
            comment="orders, one row each",
            properties={"team": "finance", "quality": "gold", "owner": written["owner"]})
        encoded = formats.encode(view, "spark")
        assert set(encoded) | RUN_SPECIFIC == set(written)
        for key in encoded:
            if key != "parameters":
                assert encoded[key] == written[key], key
        ours, theirs = (_without_run_specific(r)["parameters"] for r in (encoded, written))
        assert ours == theirs
        assert any(key.startswith("view.sqlConfig.") for key in written["parameters"])  # really set aside


def test_errors(spark, hms, store):
    with pytest.raises(NoSuchViewError, match=f"^no table or view {hms}.nope in the metastore$"):
        read_metastore_table(spark, hms, "nope")
    # a missing database is said as import_metastore_views says it, whole: the metastore, then what lists it
    missing = ("^no database no_such_db_here in the embedded Derby metastore [^;]+; SHOW DATABASES in a Spark "
               "session with Hive support and the same settings lists those it holds$")
    with pytest.raises(NoSuchViewError, match=missing):
        read_metastore_table(spark, "no_such_db_here", "nope")
    with pytest.raises(NoSuchViewError, match=missing):
        import_metastore_views(spark, store, "no_such_db_here")
    opened = []
    with pytest.raises(NoSuchViewError, match=missing):
        import_metastore_views(spark, lambda: opened.append(1) or store, "no_such_db_here")
    assert opened == []  # a store given as a function is asked for only when a view is recorded
    # the message names which of the two parts is bad, and how
    bad = ": dots, backquotes and control characters are not allowed$"
    with pytest.raises(ValidationError, match=r"^bad table name 'a\.b'" + bad):
        read_metastore_table(spark, hms, "a.b")
    with pytest.raises(ValidationError, match=rf"^bad database '{hms}\.x'" + bad):
        read_metastore_table(spark, f"{hms}.x", "v_orders")
    assert read_metastore_table(spark, hms.upper(), "V_ORDERS")["tableName"] == "v_orders"
    assert store.event_count() == 0
    with pytest.raises(ValidationError, match="store must be a ViewStore or a function returning one, not str"):
        import_metastore_views(spark, str(store.path), hms)  # a path is no store: nothing is imported


def test_a_session_without_hive_support_or_no_session_is_refused_before_anything_is_written(tmp_path):
    """In a process whose session keeps its catalog in memory (as ``viewstore demo`` makes it), and
    for what is no classic session at all: each call is a ValidationError saying what it needs."""
    import subprocess
    import sys

    code = ("import sys\n"
            "from pathlib import Path\n"
            "from viewstore import ViewStore\n"
            "from viewstore.spark import import_metastore_views, read_metastore_table, write_metastore_table\n"
            "from viewstore.spark.demo import local_session\n"
            "store = ViewStore(Path(sys.argv[1]) / 'views.db')\n"
            "record = {'dbName': 'default', 'tableName': 'v', 'tableType': 'VIRTUAL_VIEW', 'parameters': {},\n"
            "          'viewOriginalText': 'SELECT 1 AS x', 'viewExpandedText': 'SELECT 1 AS x',\n"
            "          'sd': {'cols': [{'name': 'x', 'type': 'int', 'comment': None}]}}\n"
            "spark = local_session(Path(sys.argv[1]) / 'spark')\n"
            "for session in (spark, 'a session'):\n"
            "    for call in (lambda: read_metastore_table(session, 'default', 'v'),\n"
            "                 lambda: import_metastore_views(session, store, 'default'),\n"
            "                 lambda: write_metastore_table(session, record)):\n"
            "        try:\n"
            "            call()\n"
            "        except Exception as e:\n"
            "            print(type(e).__name__, e)\n"
            "print(store.event_count(), spark.catalog.listTables('default'))\n"
            "spark.stop()\n")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=300,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    no_hive = ("ValidationError the SparkSession has no Hive metastore: build it with "
               "SparkSession.builder.enableHiveSupport()")
    no_session = ("ValidationError {} the Hive metastore needs a classic PySpark session (py4j); "
                  "Spark Connect clients have no JVM to ask")
    assert done.stdout.splitlines() == [no_hive] * 3 + [no_session.format("reading")] * 2 + [
        no_session.format("writing to"), "0 []"]


def test_an_exported_view_with_a_column_list_reads_back_in_spark(spark, store):
    """Spark resolves a view's query by the query's own column names, not the names a column list gave."""
    import viewstore.spark as vs

    db = "hmsren" + uuid.uuid4().hex[:8]
    spark.sql(f"CREATE DATABASE {db}")
    try:
        spark.sql(f"CREATE TABLE {db}.t (id BIGINT, amount DECIMAL(10,2)) USING parquet")
        spark.sql(f"INSERT INTO {db}.t VALUES (1, 5.00)")
        vs.sql(spark, store, f"CREATE VIEW {db}.by_sql (ident, amt) AS SELECT id, amount FROM {db}.t")
        vs.attach(spark, store, name="vs")
        try:
            spark.sql(f"CREATE VIEW vs.{db}.by_catalog (ident, amt) AS SELECT id, amount FROM spark_catalog.{db}.t")
        finally:
            vs.detach(spark, "vs")
        for name in ("by_sql", "by_catalog"):
            record = store.export_hms(f"{db}.{name}", "spark")
            write_record(spark, {**record, "tableName": f"{name}_exported"})
            assert [tuple(r) for r in spark.sql(f"SELECT * FROM {db}.{name}_exported").collect()] == [(1, 5)], name
            assert spark.table(f"{db}.{name}_exported").columns == ["ident", "amt"]
    finally:
        spark.sql(f"DROP DATABASE IF EXISTS {db} CASCADE")


def test_an_exported_hive_view_of_another_namespace_reads_that_namespace(spark, store):
    """A Hive record has no default namespace: its expanded text names the tables of the view's own one."""
    suffix = uuid.uuid4().hex[:8]
    sales, reports = f"hmssales{suffix}", f"hmsreports{suffix}"
    for db, ids in ((sales, "(1), (2)"), (reports, "(99)")):
        spark.sql(f"CREATE DATABASE {db}")
        spark.sql(f"CREATE TABLE {db}.orders (id BIGINT) USING parquet")
        spark.sql(f"INSERT INTO {db}.orders VALUES {ids}")
    try:
        store.create_view(f"{reports}.v", columns=[Column("id", "long")], default_namespace=sales,
                          representations=[("hive", "SELECT id FROM orders")])
        record = store.export_hms(f"{reports}.v", "hive")
        write_record(spark, record)
        # Spark reads a Hive-made view as Hive does: the expanded text, its names in the current database,
        # here the view's own (Hive's choice)
        spark.catalog.setCurrentDatabase(reports)
        try:
            assert sorted(r.id for r in spark.sql(f"SELECT id FROM {reports}.v").collect()) == [1, 2]
        finally:
            spark.catalog.setCurrentDatabase("default")
        written = read_metastore_table(spark, reports, "v")
        assert (written["viewOriginalText"], written["viewExpandedText"]) == (
            "SELECT id FROM orders", f"SELECT id FROM `{sales}`.orders")
        engine, definition = formats.definition_from_table(written)
        assert (engine, definition.sql, definition.default_namespace) == (
            "hive", f"SELECT id FROM `{sales}`.orders", (reports,))
    finally:
        for db in (sales, reports):
            spark.sql(f"DROP DATABASE IF EXISTS {db} CASCADE")


@pytest.fixture(scope="module")
def target(spark):
    """An empty metastore database with one table, ``t``, for the records written into it."""
    db = "hmswrite" + uuid.uuid4().hex[:8]
    spark.sql(f"CREATE DATABASE {db}")
    try:
        spark.sql(f"CREATE TABLE {db}.t (id BIGINT, amount DECIMAL(10,2)) USING parquet")
        spark.sql(f"INSERT INTO {db}.t VALUES (1, 5.00), (2, 7.50)")
        yield db
    finally:
        spark.sql(f"DROP DATABASE IF EXISTS {db} CASCADE")


def _exportable(store: ViewStore, db: str, name: str, where: str = "") -> str:
    """A view of ``db.t`` in every engine's dialect but Iceberg's; its identifier."""
    query = f"SELECT id, amount FROM t{where}"
    store.create_view(f"{db}.{name}", columns=[Column("id", "long", "the id"), Column("amount", "decimal(10,2)")],
                      representations=[("spark", query), ("hive", query), ("flink", query),
                                       ("trino", f"SELECT id, amount FROM hive.{db}.t{where}")],
                      default_catalog="spark_catalog", default_namespace=db, comment="amounts",
                      properties={"owner": "olga", "team": "finance"})
    return f"{db}.{name}"


def _rows(spark: Any, db: str, name: str) -> list[tuple[Any, ...]]:
    """What ``SELECT * FROM db.name`` returns, with ``db`` the current database (as Hive runs its views)."""
    spark.catalog.setCurrentDatabase(db)
    try:
        return sorted(tuple(r) for r in spark.sql(f"SELECT * FROM {db}.{name}").collect())
    finally:
        spark.catalog.setCurrentDatabase("default")


def _absent(spark: Any, db: str, name: str) -> bool:
    try:
        read_metastore_table(spark, db, name)
    except NoSuchViewError:
        return True
    return False


@pytest.mark.parametrize("engine", ["trino", "spark", "hive", "flink"])
def test_write_an_exported_record_reads_back_as_written(spark, store, target, engine):
    ident = _exportable(store, target, "v")
    written = {**store.export_hms(ident, engine), "tableName": f"w_{engine}"}
    write_metastore_table(spark, written)
    back = read_metastore_table(spark, target, f"w_{engine}")
    for key in ("dbName", "tableName", "owner", "tableType", "viewOriginalText", "viewExpandedText",
                "partitionKeys"):
        assert back[key] == written[key], key
    assert back["owner"] == "olga" and back["tableType"] == "VIRTUAL_VIEW"
    assert back["sd"]["cols"] == written["sd"]["cols"]
    for key in ("inputFormat", "outputFormat"):
        assert back["sd"][key] == written["sd"].get(key), key
    serde = written["sd"].get("serdeInfo") or {}
    assert back["sd"]["serdeInfo"] == {"serializationLib": serde.get("serializationLib"),
                                       "parameters": serde.get("parameters") or {}}
    # Trino's empty location is left unset (Hive 2.3's metastore could not drop the view otherwise)
    expected = ("", None) if engine == "trino" else (None, None)
    assert (written["sd"].get("location"), back["sd"]["location"]) == expected
    # what the metastore adds, and nothing else: its times, and transient_lastDdlTime among the parameters
    assert set(back) - set(written) <= set(RUN_SPECIFIC)
    assert isinstance(back["createTime"], int) and back["createTime"] > 0 and back["lastAccessTime"] == 0
    assert back["parameters"] == {**written["parameters"], "transient_lastDdlTime": str(back["createTime"])}
    assert "spark.sql.create.version" not in back["parameters"] or engine == "spark"  # no Spark parameters added
    engine_read, definition = formats.definition_from_table(back)
    assert engine_read == engine and definition.name == f"w_{engine}"
    if engine in ("spark", "hive"):
        assert _rows(spark, target, f"w_{engine}") == [(1, 5), (2, 7.5)]


def test_write_an_iceberg_record_reads_back_as_written_and_imports_from_its_metadata_file(spark, store, ns, tmp_path):
    """An Iceberg view's record names its metadata file, which holds its definition; the fields it
    leaves out (an owner, the view texts) stay unset."""
    spark.sql(f"CREATE DATABASE {ns}")
    store.create_view(f"{ns}.ice", columns=[Column("id", "long", "the id")], default_namespace=ns,
                      representations=[("spark", "SELECT id FROM t")], comment="from Iceberg")
    exported = store.export_iceberg(f"{ns}.ice", tmp_path / "warehouse")
    record = store.export_hms(f"{ns}.ice", "iceberg", metadata_location=exported)
    assert record["owner"] is not None and record["viewOriginalText"] == "SELECT id FROM t"
    bare = {**record, "tableName": "ice_bare", "owner": None, "viewOriginalText": None, "viewExpandedText": None}
    for written in (record, bare):
        write_metastore_table(spark, written)
        back = read_metastore_table(spark, ns, written["tableName"])
        for key in ("owner", "tableType", "viewOriginalText", "viewExpandedText", "partitionKeys"):
            assert back[key] == written[key], key
        assert back["sd"]["cols"] == written["sd"]["cols"]
        assert back["sd"]["location"] is None
        assert back["sd"]["serdeInfo"] == {"serializationLib": None, "parameters": {}}
        assert back["parameters"] == {**written["parameters"], "transient_lastDdlTime": str(back["createTime"])}
        assert back["parameters"]["metadata_location"] == exported.as_uri() and formats.detect(back) == "iceberg"

    with ViewStore(tmp_path / "imported.db", actor="ivan") as other:
        report = import_metastore_views(spark, other, ns)
        assert [(i.identifier, i.engine) for i in report.imported] == [(f"{ns}.ice", "iceberg")]
        view = other.load_view(f"{ns}.ice")
        assert (view.comment, view.columns, view.sql_for("spark")) == (
            "from Iceberg", (Column("id", "long", "the id"),), "SELECT id FROM t")
        # the second record names the same metadata file: the same view (its UUID), recorded once
        assert [(r.name, r.reason) for r in report.skipped] == [(f"{ns}.ice_bare", "exists")]
        assert report.skipped[0].detail.endswith(f"is already in the store: {ns}.ice (a view is recorded once; its "
                                                 "history is there)")
        assert other.list_views() == [(ns, "ice")] and report.failed == []


def test_a_record_the_metastore_refuses_is_a_validation_error_naming_it_and_writes_nothing(spark, store, target):
    """Hive's metastore holds names of letters, digits and _ only: a name the store takes is refused there."""
    record = {**store.export_hms(_exportable(store, target, "refused"), "hive"), "tableName": "caf\u00e9"}
    with pytest.raises(ValidationError) as refused:
        write_metastore_table(spark, record)
    assert str(refused.value) == (f"the metastore refused {target}.caf\u00e9: [InvalidObjectException] "
                                  "caf\u00e9 is not a valid object name")
    assert _absent(spark, target, "caf\u00e9")


def test_write_replaces_a_view_only_when_asked_and_never_a_table(spark, store, target):
    hive = {**store.export_hms(_exportable(store, target, "r"), "hive"), "tableName": "r"}
    write_metastore_table(spark, hive)
    first = read_metastore_table(spark, target, "r")
    # a Python caller reads the argument it can give, not the command line's option
    with pytest.raises(ViewAlreadyExistsError, match=rf"^a view {target}.r exists in the metastore \(replace=True "
                       r"replaces it\)$"):
        write_metastore_table(spark, hive)
    assert read_metastore_table(spark, target, "r") == first

    _exportable(store, target, "big", where=" WHERE amount > 6")
    spark_record = {**store.export_hms(f"{target}.big", "spark"), "tableName": "R"}  # names are case-insensitive
    write_metastore_table(spark, spark_record, replace=True)
    replaced = read_metastore_table(spark, target, "r")
    assert formats.detect(replaced) == "spark" and replaced["viewOriginalText"].endswith("WHERE amount > 6")
    assert {k: v for k, v in replaced["parameters"].items() if k != "transient_lastDdlTime"} == \
        spark_record["parameters"]  # the Hive record's parameters are gone, not merged
    assert _rows(spark, target, "r") == [(2, 7.5)]

    table = read_metastore_table(spark, target, "t")
    for replace in (False, True):
        with pytest.raises(ValidationError, match=f"{target}.t is of type MANAGED_TABLE in the metastore, not a view"):
            write_metastore_table(spark, {**hive, "tableName": "t"}, replace=replace)
    assert read_metastore_table(spark, target, "t") == table
    assert _rows(spark, target, "t") == [(1, 5), (2, 7.5)]


def test_write_never_replaces_an_external_table(spark, store, target, tmp_path):
    """Any table type but a view's is a table: an EXTERNAL_TABLE (a table with a location of its own)
    as much as a MANAGED_TABLE."""
    spark.sql(f"CREATE TABLE {target}.ext (id BIGINT) USING parquet LOCATION '{tmp_path / 'ext'}'")
    table = read_metastore_table(spark, target, "ext")
    assert table["tableType"] == "EXTERNAL_TABLE"
    hive = {**store.export_hms(_exportable(store, target, "ext"), "hive"), "tableName": "ext"}
    for replace in (False, True):
        with pytest.raises(ValidationError, match=f"^{target}.ext is of type EXTERNAL_TABLE in the metastore, "
                                                  "not a view: it is never replaced$"):
            write_metastore_table(spark, hive, replace=replace)
    assert read_metastore_table(spark, target, "ext") == table


def test_write_refuses_a_record_naming_a_folder_which_a_drop_would_delete(spark, store, target, tmp_path):
    """The metastore deletes the folder at a dropped view's location, as at a managed table's: a view
    record with a location is refused, new or replacing, and the folder outlives the views dropped."""
    def folder(name: str) -> Path:
        path = tmp_path / name
        path.mkdir()
        (path / "part-0.parquet").write_text("rows")
        return path

    hive = {**store.export_hms(_exportable(store, target, "loc"), "hive"), "tableName": "loc"}
    doomed = folder("doomed")  # a record written as it is, with no check, by the metastore client itself
    write_record(spark, {**hive, "sd": {**hive["sd"], "location": str(doomed)}})
    assert read_metastore_table(spark, target, "loc")["sd"]["location"] == str(doomed)
    spark.sql(f"DROP VIEW {target}.loc")
    assert not doomed.exists()

    kept = folder("kept")
    write_metastore_table(spark, hive)
    before = read_metastore_table(spark, target, "loc")
    records = {engine: {**store.export_hms(f"{target}.loc", engine), "tableName": "loc"}
               for engine in ("hive", "spark", "trino", "flink")}
    # an Iceberg view's record, as Iceberg's own catalog writes it with the view's folder as its location
    records["iceberg"] = {**hive, "parameters": {"table_type": "ICEBERG-VIEW", "metadata_location": "file:/w/m.json"}}
    for engine, record in records.items():
        for location in (str(kept), kept.as_uri()):
            for name, replace in (("loc", True), ("loc", False), ("loc_new", False), ("loc_new", True)):
                with pytest.raises(ValidationError) as refused:
                    write_metastore_table(spark, {**record, "tableName": name,
                                                  "sd": {**record["sd"], "location": location}}, replace=replace)
                assert str(refused.value) == (
                    f"sd.location: a view's record must name no folder, not {location!r}: the metastore deletes "
                    "the folder at a view's location when the view is dropped (Spark, Hive and Flink write no "
                    "location, Trino an empty one)"), (engine, location, name, replace)
    assert _absent(spark, target, "loc_new")
    assert read_metastore_table(spark, target, "loc") == before
    spark.sql(f"DROP VIEW {target}.loc")
    assert _absent(spark, target, "loc")
    assert (kept / "part-0.parquet").read_text() == "rows"


def test_write_keeps_the_partition_keys_of_a_record(spark, store, target):
    """partitionKeys reach the metastore as given, as Hive's CREATE VIEW ... PARTITIONED ON writes them."""
    hive = store.export_hms(_exportable(store, target, "pk"), "hive")
    record = {**hive, "tableName": "pk", "sd": {**hive["sd"], "cols": hive["sd"]["cols"][:1]},
              "partitionKeys": [{"name": "amount", "type": "decimal(10,2)", "comment": "in EUR"}]}
    write_metastore_table(spark, record)
    back = read_metastore_table(spark, target, "pk")
    assert (back["sd"]["cols"], back["partitionKeys"]) == (record["sd"]["cols"], record["partitionKeys"])
    # the partition column is the view's last column, to Spark and to the Hive reader alike
    spark.catalog.setCurrentDatabase(target)  # Hive runs a view's query in its own database
    try:
        schema = [(f.name, f.dataType.simpleString()) for f in spark.table(f"{target}.pk").schema.fields]
    finally:
        spark.catalog.setCurrentDatabase("default")
    assert schema == [("id", "bigint"), ("amount", "decimal(10,2)")]
    engine, definition = formats.definition_from_table(back)
    assert engine == "hive" and [(c.name, str(c.type), c.comment) for c in definition.columns] == [
        ("id", "long", "the id"), ("amount", "decimal(10,2)", "in EUR")]


def test_a_missing_database_names_the_metastore_asked_and_how_to_list_its_databases(spark, store):
    warehouse = Path(spark.conf.get("spark.sql.warehouse.dir").removeprefix("file:"))
    expected = (f"no database no_such_db_here in the embedded Derby metastore {warehouse.parent / 'metastore_db'} "
                f"(warehouse file:{warehouse}); SHOW DATABASES in a Spark session with Hive support and the same "
                "settings lists those it holds")
    for call in (lambda: import_metastore_views(spark, store, "no_such_db_here"),
                 lambda: read_metastore_table(spark, "no_such_db_here", "nope")):
        with pytest.raises(NoSuchViewError) as raised:
            call()
        assert str(raised.value) == expected
    assert "no_such_db_here" not in [d.name for d in spark.catalog.listDatabases()]  # as SHOW DATABASES lists


def test_a_metastore_is_named_by_its_uris_else_its_database_without_credentials():
    assert metastore_named("thrift://hms:9083", "jdbc:derby:;databaseName=/x/metastore_db", "s3a://w") == (
        "the metastore at thrift://hms:9083 (warehouse s3a://w)")
    assert metastore_named("", "", "") == "the embedded Derby metastore metastore_db"  # Hive's default
    assert metastore_named("", "jdbc:derby:/x/db;create=true", "") == "the embedded Derby metastore /x/db"
    assert metastore_named("", "jdbc:mysql://hive:secret@db.example:3306/hms?user=hive&password=secret", "") == (
        "the metastore in jdbc:mysql://db.example:3306/hms")
    assert metastore_named("", "jdbc:sqlserver://db:1433;user=hive;password=secret", "/w") == (
        "the metastore in jdbc:sqlserver://db:1433 (warehouse /w)")
    # Oracle's thin form puts the user and password before an @ with no // before them
    assert metastore_named("", "jdbc:oracle:thin:hive/secret@db.example:1521:hms", "") == (
        "the metastore in jdbc:oracle:thin:@db.example:1521:hms")
    assert metastore_named("", "jdbc:oracle:thin:hive/secret@//db.example:1521/hms", "") == (
        "the metastore in jdbc:oracle:thin:@//db.example:1521/hms")
    assert metastore_named("", "jdbc:oracle:thin:@//db.example:1521/hms", "") == (
        "the metastore in jdbc:oracle:thin:@//db.example:1521/hms")  # no user in it: as given


def test_a_metastore_address_drops_a_password_that_holds_an_at_sign():
    """Oracle's thin form quotes a password with an @ in it (user/"p@ss"@host): the user and password
    end at the last @, so no part of the password is shown as the host."""
    assert metastore_named("", 'jdbc:oracle:thin:hive/"se@cret"@db.example:1521:hms', "") == (
        "the metastore in jdbc:oracle:thin:@db.example:1521:hms")
    assert metastore_named("", 'jdbc:oracle:thin:hive/"se@cret"@//db.example:1521/hms', "") == (
        "the metastore in jdbc:oracle:thin:@//db.example:1521/hms")


def test_a_metastore_address_keeps_its_slashes_whatever_the_password_holds():
    """A password given unencoded in a //user:password@host address may hold an @ or a /: the address
    shown is still the driver's prefix, // and the host, with nothing of the password."""
    for url in ("jdbc:mysql://hive:se@cret@db.example:3306/hms", "jdbc:mysql://hive:se/cret@db.example:3306/hms"):
        assert metastore_named("", url, "") == "the metastore in jdbc:mysql://db.example:3306/hms", url


def test_a_metastore_address_with_an_at_sign_in_its_path_and_no_credentials_is_shown_whole():
    """Only an authority (//user:password@host) or Oracle's form (user/password@host) puts a user and
    password before an @: elsewhere the @ is part of a path, and the address was shown from it on."""
    for url in ("jdbc:h2:/data/a@b/metastore", "jdbc:sqlite:/data/a@b/metastore.db"):
        assert metastore_named("", url, "") == f"the metastore in {url}", url
    assert metastore_named("", "jdbc:derby:memory:/data/a@b/metastore_db", "") == (
        "the embedded Derby metastore /data/a@b/metastore_db, in memory (no folder: it ends with its JVM)")
    assert metastore_named("", "jdbc:h2:file:/data/a@b/metastore;USER=hive;PASSWORD=secret", "") == (
        "the metastore in jdbc:h2:file:/data/a@b/metastore")  # its options, credentials among them, left out
    assert metastore_named("", "jdbc:derby:;databaseName=/data/a@b/metastore_db", "") == (
        "the embedded Derby metastore /data/a@b/metastore_db")


def test_a_metastore_whose_uris_setting_is_blank_is_named_by_its_own_database():
    """hive.metastore.uris set to blanks names no remote metastore: the client starts the embedded
    one, and the message names its database, as the Derby hint does (planted, the blanks taken for
    URIs by embedded_derby named 'the metastore in ' with no address)."""
    from viewstore.spark.failures import embedded_derby

    assert embedded_derby("  ", None) == ("directory", "metastore_db")
    assert metastore_named("  ", "", "") == "the embedded Derby metastore metastore_db"
    assert metastore_named(" ", "jdbc:derby:;databaseName=/x/metastore_db;create=true", "/w") == (
        "the embedded Derby metastore /x/metastore_db (warehouse /w)")


def test_a_metastore_address_drops_a_quoted_password_that_holds_a_question_mark_or_a_semicolon():
    """A quoted password (Oracle's user/"p;ss"@host) may hold a ? or a ;, which begin a URL's options
    only outside quotes: the user and password are still left out, not shown up to that character."""
    for password in ('"se;cret"', '"se?cret"', '"s;e?c@ret"'):
        assert metastore_named("", f"jdbc:oracle:thin:hive/{password}@db.example:1521:hms", "") == (
            "the metastore in jdbc:oracle:thin:@db.example:1521:hms"), password
        assert metastore_named("", f"jdbc:oracle:thin:hive/{password}@//db.example:1521/hms?x=1", "") == (
            "the metastore in jdbc:oracle:thin:@//db.example:1521/hms"), password
    # a quote that ends before no @ quotes no option: the options, a password among them, stay out
    assert metastore_named("", 'jdbc:mysql://us"er:pw@db.example/hms?password=se"cret', "") == (
        "the metastore in jdbc:mysql://db.example/hms")


def test_a_metastore_address_keeps_a_driver_name_with_digits_or_capitals():
    """A driver's name is letters and digits in any case (db2, a vendor's DB2): the address keeps it,
    its // and the host, not the user and password (planted, a lower-case letters' name shown as
    jdbc:@host, the driver and the // lost)."""
    assert metastore_named("", "jdbc:db2://hive:secret@db.example:50000/hms", "") == (
        "the metastore in jdbc:db2://db.example:50000/hms")
    assert metastore_named("", "jdbc:Vendor:DB2://hive:secret@db.example:50000/hms", "") == (
        "the metastore in jdbc:Vendor:DB2://db.example:50000/hms")


def test_write_into_a_missing_database_writes_nothing(spark, store, target):
    record = {**store.export_hms(_exportable(store, target, "m"), "hive"), "dbName": "no_such_db_here"}
    for replace in (False, True):
        with pytest.raises(NoSuchViewError, match=r"^no database no_such_db_here in the embedded Derby metastore "):
            write_metastore_table(spark, record, replace=replace)
    assert not spark.catalog.databaseExists("no_such_db_here")


def test_a_write_into_a_missing_database_names_the_metastore_asked_and_how_to_create_it(spark, store, target):
    warehouse = Path(spark.conf.get("spark.sql.warehouse.dir").removeprefix("file:"))
    record = {**store.export_hms(_exportable(store, target, "named"), "hive"), "dbName": "no_such_db_here"}
    with pytest.raises(NoSuchViewError) as raised:
        write_metastore_table(spark, record)
    assert str(raised.value) == (
        f"no database no_such_db_here in the embedded Derby metastore {warehouse.parent / 'metastore_db'} "
        f"(warehouse file:{warehouse}): create it first (CREATE DATABASE no_such_db_here in a Spark session "
        "with Hive support and the same settings)")


def test_a_malformed_record_writes_nothing(spark, store, target):
    good = {**store.export_hms(_exportable(store, target, "bad"), "trino"), "tableName": "bad"}
    spark_good = {**store.export_hms(f"{target}.bad", "spark"), "tableName": "bad"}
    cases = {
        "malformed Base64": {**good, "viewOriginalText": "/* Presto View: not$base64 */"},
        "is not a view": {**good, "tableType": "MANAGED_TABLE"},
        "MATERIALIZED_VIEW": {**good, "tableType": "MATERIALIZED_VIEW"},
        "^parameters.presto_view: values must be strings, not True$": {
            **good, "parameters": {**good["parameters"], "presto_view": True}},
        r"sd.cols\[0\].type: must be a non-empty string, not None": {**spark_good, "sd": {"cols": [{"name": "id"}]}},
        "sd.cols: must be a list, not str": {**spark_good, "sd": {"cols": "id bigint"}},
        r"table name \(tableName\)": {**good, "tableName": "a.b"},
        r"database \(dbName\) must be a string, not NoneType": {**good, "dbName": None},
        "^owner: must be a string, not int": {  # an Iceberg view's record, which no codec decodes here
            **good, "owner": 7, "parameters": {"table_type": "ICEBERG-VIEW", "metadata_location": "file:/w/m.json"}},
        "^sd: must be a dict, not list": {**spark_good, "sd": [spark_good["sd"]]},
        "^sd.serdeInfo: must be a dict, not list": {**spark_good, "sd": {**spark_good["sd"], "serdeInfo": ["lib"]}},
        "^sd.location: must be a string, not int": {**spark_good, "sd": {**spark_good["sd"], "location": 0}},
        "^sd.serdeInfo.parameters.k: values must be strings, not 1$": {
            **spark_good, "sd": {**spark_good["sd"], "serdeInfo": {"parameters": {"k": 1}}}},
        r"^partitionKeys\[0\].type: must be a non-empty string, not None": {
            **spark_good, "partitionKeys": [{"name": "p"}]},
        "metadata_location: an Iceberg view in HMS must name its metadata file": {
            **good, "parameters": {"table_type": "ICEBERG-VIEW"}},
        "^parameters.metadata_location: an Iceberg view in HMS must name its metadata file$": {
            **good, "parameters": {"table_type": "ICEBERG-VIEW", "metadata_location": ""}},
        "must be a dict, not list": [good],
    }
    for says, record in cases.items():
        with pytest.raises(ValidationError, match=says):
            write_metastore_table(spark, record)
    with pytest.raises(ValidationError, match="replace must be True or False"):
        write_metastore_table(spark, good, replace="yes")
    assert _absent(spark, target, "bad")

    write_metastore_table(spark, good)  # and over a view, a malformed replacement changes nothing
    before = read_metastore_table(spark, target, "bad")
    for record in cases.values():
        with pytest.raises(ValidationError):
            write_metastore_table(spark, record, replace=True)
    assert read_metastore_table(spark, target, "bad") == before


def test_a_remote_metastore_is_named_by_its_uris_without_a_database_url():
    """A client of a remote metastore usually sets no JDBC address (the metastore service holds it):
    it is named by its URIs, not as Hive's default embedded Derby database."""
    assert metastore_named("thrift://hms:9083", "", "") == "the metastore at thrift://hms:9083"
    assert metastore_named("thrift://a:9083,thrift://b:9083", "", "/w") == (
        "the metastore at thrift://a:9083,thrift://b:9083 (warehouse /w)")



def test_a_derby_network_server_is_named_by_its_address_not_as_an_embedded_folder():
    """jdbc:derby://host:port/... is Derby's network client: a server many processes can share, named
    by its address (without its options), not as the folder of an embedded database."""
    assert metastore_named("", "jdbc:derby://db.example:1527//data/metastore_db;create=true", "/w") == (
        "the metastore in jdbc:derby://db.example:1527//data/metastore_db (warehouse /w)")
    assert metastore_named("", "jdbc:derby://db.example:1527/metastore_db;user=hive;password=secret", "") == (
        "the metastore in jdbc:derby://db.example:1527/metastore_db")


def test_a_metastore_address_in_oracles_oci_form_drops_its_user_and_password():
    """Oracle's OCI driver takes the thin driver's user/password@host form: its user and password are
    left out too (planted, Oracle's form read as jdbc:oracle:thin: alone showed the OCI address whole,
    password and all)."""
    assert metastore_named("", "jdbc:oracle:oci:hive/secret@db.example:1521:hms", "") == (
        "the metastore in jdbc:oracle:oci:@db.example:1521:hms")


def test_a_metastore_address_with_a_double_slash_after_an_at_sign_in_its_path_is_shown_whole():
    """Only a // before the @ makes what precedes it an authority's user and password: one after it,
    in a path, does not (planted, a // looked for anywhere in the address showed jdbc:h2:@b//metastore)."""
    assert metastore_named("", "jdbc:h2:/data/a@b//metastore", "") == "the metastore in jdbc:h2:/data/a@b//metastore"


def test_an_embedded_derby_database_is_named_as_what_its_subsubprotocol_makes_it():
    """A Derby address may begin its database's name with directory:, memory:, classpath: or jar:
    (in its path or its databaseName attribute); the message named each as a folder with that
    prefix. A directory: database is the folder after it; one in memory is no folder; one on the
    class path or in an archive is read-only."""
    assert metastore_named("", "jdbc:derby:directory:/x/metastore_db;create=true", "") == (
        "the embedded Derby metastore /x/metastore_db")
    assert metastore_named("", "jdbc:derby:;databaseName=directory:/x/metastore_db;create=true", "/w") == (
        "the embedded Derby metastore /x/metastore_db (warehouse /w)")
    for url in ("jdbc:derby:memory:ms;create=true", "jdbc:derby:;databaseName=memory:ms;create=true",
                "jdbc:derby:memory:;databaseName=ms;create=true"):
        assert metastore_named("", url, "") == (
            "the embedded Derby metastore ms, in memory (no folder: it ends with its JVM)"), url
    assert metastore_named("", "jdbc:derby:classpath:dbs/ms", "") == (
        "the embedded Derby metastore dbs/ms on the class path, read-only")
    assert metastore_named("", "jdbc:derby:jar:(/p/db.jar)dbs/ms", "") == (
        "the embedded Derby metastore dbs/ms in the archive /p/db.jar, read-only")
    # no name after the prefix is no database: the address is shown as it is
    assert metastore_named("", "jdbc:derby:memory:;create=true", "") == "the metastore in jdbc:derby:memory:"


def test_an_embedded_derby_address_with_an_empty_database_name_names_no_folder():
    """databaseName= with nothing after it names no database: no folder is made of it (planted, an
    empty name accepted gave 'the embedded Derby metastore ' with nothing after it)."""
    from viewstore.spark.failures import embedded_derby

    assert embedded_derby(None, "jdbc:derby:;databaseName=;create=true") is None
    assert not metastore_named("", "jdbc:derby:;databaseName=;create=true", "").startswith("the embedded Derby")
