"""ViewStore.import_hms / export_hms on the engine-view conformance records and on bad input."""

from __future__ import annotations

import base64
import gzip
import json
import sqlite3
import string
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import CONFORMANCE
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from viewstore import ViewChange, ViewStore, formats
from viewstore.errors import (ConcurrencyError, CorruptLogError, IcebergMetadataError, NoSuchViewError,
                              ValidationError, ViewAlreadyExistsError, ViewStoreError)
from viewstore.formats import ViewDefinition
from viewstore.hms import (FailedRecord, HmsImportReport, ImportedRecord, SkippedRecord, imported_metadata_location,
                           metadata_file_path, metadata_location_uri, prepare_import)
from viewstore.model import Column, SQLRepresentation, VersionLogEntry, ViewVersion

ENGINE_VIEWS = CONFORMANCE / "engine-views"


def load(name: str) -> dict[str, Any]:
    return json.loads((ENGINE_VIEWS / name).read_text(encoding="utf-8"))


def _connector_case(case: dict[str, Any]) -> dict[str, Any]:
    return {"tableType": "VIRTUAL_VIEW", "parameters": {"presto_view": "true", "comment": "Presto View"},
            "viewOriginalText": case["viewOriginalText"], "viewExpandedText": "/* Presto View */"}


def _session_catalog_case(case: dict[str, Any]) -> dict[str, Any]:
    source = case["catalog_table"]
    return {"tableType": "VIRTUAL_VIEW", "parameters": source["properties"],
            "viewOriginalText": source["viewText"], "viewExpandedText": source["viewText"],
            "sd": {"cols": [{"name": n, "type": t, "comment": None} for n, t in source["schema"]]}}


def positive_records() -> list[tuple[str, dict[str, Any]]]:
    """Every view record of the conformance data that a decoder must accept (Iceberg views aside:
    their metadata file is elsewhere, see the Iceberg tests below)."""
    records = []
    for path in sorted(ENGINE_VIEWS.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        table = data.get("hms_table")
        if table is not None and path.name not in (
                "trino-hms-materialized-view-marker.reconstructed.json", "iceberg-view-in-hms.reconstructed.json"):
            records.append((path.name, table))
    for i, case in enumerate(load("flink-hivecatalog-nongeneric-view-compat.reconstructed.json")["cases"]):
        records.append((f"flink-nongeneric[{i}]", case["hms_table"]))
    for i, case in enumerate(load("trino-connectorviewdefinition-json-cases.json")["cases"]):
        records.append((f"trino-connector-json[{i}]", _connector_case(case)))
    for i, case in enumerate(load("spark-sessioncatalogsuite-views.reconstructed.json")["cases"]):
        records.append((f"spark-session-catalog[{i}]", _session_catalog_case(case)))
    alter = load("spark-alter-hive-view-side-effect.reconstructed.json")
    records += [("spark-alter:hms_before", alter["hms_before"]), ("spark-alter:hms_after", alter["hms_after_expected"])]
    return records


def negative_records() -> list[tuple[str, dict[str, Any]]]:
    records = [("trino-materialized-view", load("trino-hms-materialized-view-marker.reconstructed.json")["hms_table"])]
    for case in load("hms-detection-cases.json")["cases"]:
        if case["expected"].startswith(("unknown/reject", "not a logical view")):
            records.append((case["id"], {"tableType": case["tableType"], "parameters": case["parameters"],
                                         "viewOriginalText": "SELECT 1", "viewExpandedText": "SELECT 1"}))
    return records


POSITIVE = positive_records()
NEGATIVE = negative_records()


def test_the_conformance_data_gives_enough_cases():
    assert len(POSITIVE) == 10 + 2 + 5 + 2 + 2
    assert [name for name, _ in NEGATIVE] == ["trino-materialized-view", "presto-flag-uppercase",
                                              "trino-materialized-view", "hive-materialized-view"]


@pytest.mark.parametrize("name, table", POSITIVE, ids=[n for n, _ in POSITIVE])
def test_every_positive_conformance_record_imports(store, name, table):
    engine, definition = formats.definition_from_table(table)
    before = store.event_count()
    view = store.import_hms(table, "imported.v")

    assert store.event_count() == before + 1
    (event,) = store.history("imported.v")
    assert (event.type, event.source, event.actor) == ("view.imported", f"hms:{engine}", "alice")
    assert view.identifier == ("imported", "v") and view.current_version_id == 1 and len(view.versions) == 1
    assert view.representations == definition.representations
    assert view.representations[0].dialect == engine
    assert view.columns == definition.columns
    assert view.comment == definition.comment
    assert (view.default_catalog, view.default_namespace) == (definition.default_catalog,
                                                              definition.default_namespace)
    assert view.properties.get("owner") == (definition.owner or None)
    assert view.security_mode == (definition.security_mode or "DEFINER")
    assert {k: v for k, v in view.properties.items() if k not in ("comment", "owner")} == definition.properties

    # the store gives back exactly the record the codec writes for the decoded view
    if engine == "hive" and not definition.columns:
        return  # a trimmed record without sd.cols: Hive itself cannot write a view without columns
    exported = store.export_hms("imported.v", engine)
    assert exported == formats.encode(definition.model_copy(update={
        "database": "imported", "name": "v", "owner": definition.owner or "alice",
        "security_mode": view.security_mode}), engine)
    again = formats.decode(exported)
    assert (again.sql, again.columns, again.comment) == (definition.sql, definition.columns, definition.comment)


#: what each negative record is refused with: the field, and why it is no logical view
NEGATIVE_MESSAGES = {
    "trino-materialized-view": "parameters.comment: 'Presto Materialized View' marks a Trino materialized view, "
                               "not a logical view",
    "presto-flag-uppercase": "parameters.presto_view: is 'TRUE'; Trino accepts only exactly 'true', and with the "
                             "flag present the record is not a Hive view either",
    "hive-materialized-view": "tableType: MATERIALIZED_VIEW is a Hive materialized view, not a logical view",
}


@pytest.mark.parametrize("name, table", NEGATIVE, ids=[n for n, _ in NEGATIVE])
def test_negative_conformance_records_are_refused_and_nothing_is_written(store, name, table):
    store.create_view("other.v", columns=[], representations=[("spark", "SELECT 1")], default_namespace="other")
    with pytest.raises(ValidationError) as refused:
        store.import_hms(table, "imported.v")
    assert str(refused.value) == NEGATIVE_MESSAGES[name]
    assert store.event_count() == 1 and store.list_views() == [("other", "v")]


@pytest.mark.parametrize("case", range(2))
def test_a_hive_record_flink_wrote_is_stable_through_export(store, case):
    """decode -> import -> export -> decode: Flink's is_generic=false is the Hive record's own parameter."""
    record = {**load("flink-hivecatalog-nongeneric-view-compat.reconstructed.json")["cases"][case]["hms_table"],
              "dbName": "db", "tableName": "v", "owner": "flo"}
    engine, definition = formats.definition_from_table(record)
    store.import_hms(record)
    exported = store.export_hms("db.v", "hive")
    assert engine == "hive" and exported["parameters"] == record["parameters"]
    assert (exported["viewOriginalText"], exported["viewExpandedText"]) == (
        record["viewOriginalText"], record["viewExpandedText"])
    assert formats.definition_from_table(exported) == (engine, definition)


def test_hive_and_flink_exports_keep_the_default_namespace_by_qualifying_names(store):
    """Hive and Flink resolve unqualified names in the record's database, which has no other default."""
    for engine, sql in (("hive", "SELECT id FROM orders"), ("flink", "SELECT id FROM orders")):
        store.create_view(f"reports.{engine}_v", columns=[Column("id", "long")], representations=[(engine, sql)],
                          default_namespace="sales")
        record = store.export_hms(f"reports.{engine}_v", engine)
        assert (record["viewOriginalText"], record["viewExpandedText"]) == (sql, "SELECT id FROM `sales`.orders")
        # imported again, the view reads sales.orders still: Hive's SQL is the qualified text in the record's
        # database, Flink's the original in the namespace the expanded query was qualified with
        again = store.import_hms(record, f"copies.{engine}_v")
        meaning = {"hive": ("SELECT id FROM `sales`.orders", ("reports",)), "flink": (sql, ("sales",))}[engine]
        assert (again.sql_for(engine), again.default_namespace) == meaning
        assert store.export_hms(f"copies.{engine}_v", engine) == {**record, "dbName": "copies"}

    store.create_view("reports.odd", columns=[Column("id", "long")], default_namespace="sales",
                      representations=[("hive", "SELECT id FROM orders WHERE (")])
    events = store.event_count()
    with pytest.raises(ValidationError, match="^viewExpandedText: the view's unqualified table names resolve in "
                                              "'sales'"):
        store.export_hms("reports.odd", "hive")
    assert store.event_count() == events


def flink_generic_record(database: str, expanded_database: str) -> dict[str, Any]:
    """A view of ``database`` that Flink's session, in hive.``expanded_database``, created from
    ``SELECT id FROM orders``."""
    return {"dbName": database, "tableName": "v", "tableType": "VIRTUAL_VIEW", "owner": "ann",
            "parameters": {"is_generic": "true", "flink.schema.0.name": "id", "flink.schema.0.data-type": "BIGINT"},
            "sd": {"cols": []}, "partitionKeys": [], "viewOriginalText": "SELECT id FROM orders",
            "viewExpandedText": f"SELECT `orders`.`id`\nFROM `hive`.`{expanded_database}`.`orders` AS `orders`"}


def test_a_flink_view_keeps_the_database_its_creator_was_in(store):
    """Flink resolved `orders` in the creating session's hive.sales, not in the view's db1: its expanded
    query says so, and the imported view reads sales.orders in the store and in every engine. `hive` is
    that session's name for the metastore: it never becomes the view's default catalog."""
    record = flink_generic_record("db1", "sales")
    view = store.import_hms(record)
    assert (view.sql_for("flink"), view.default_catalog, view.default_namespace) == (
        "SELECT id FROM orders", None, ("sales",))
    exported = store.export_hms("db1.v", "flink")
    assert exported == record
    assert formats.decode(exported) == formats.decode(record)
    # other engines' SQL for the view resolves in the same namespace, in each engine's own catalog
    store.alter_view("db1.v", ViewChange.add_representation(("hive", "SELECT id FROM orders")),
                     ViewChange.add_representation(("spark", "SELECT id FROM orders")),
                     ViewChange.add_representation(("trino", "SELECT id FROM orders")))
    assert store.export_hms("db1.v", "hive")["viewExpandedText"] == "SELECT id FROM `sales`.orders"
    spark_view = formats.decode(store.export_hms("db1.v", "spark"))
    assert (spark_view.default_catalog, spark_view.default_namespace) == ("spark_catalog", ("sales",))
    events = store.event_count()
    with pytest.raises(ValidationError, match="^default_catalog: Trino needs a default catalog"):
        store.export_hms("db1.v", "trino")  # Trino's catalog is the user's to name, not Flink's
    assert store.event_count() == events
    assert store.export_hms("db1.v", "flink") == record


@pytest.mark.parametrize("expanded_database", ["db1", "DB1"])
def test_a_flink_view_of_its_own_database_has_no_default_namespace(store, expanded_database):
    """Flink resolved `orders` in the view's own database: the view's own namespace says exactly that."""
    record = flink_generic_record("db1", expanded_database)
    view = store.import_hms(record)
    assert (view.default_catalog, view.default_namespace) == (None, ())
    exported = store.export_hms("db1.v", "flink")
    assert exported == record
    assert formats.decode(exported) == formats.decode(record)


def test_the_identifier_defaults_to_the_records_database_and_name(store):
    spark_view = store.import_hms(load("spark-hms-view-3.5.reconstructed.json")["hms_table"])
    trino_view = store.import_hms(load("trino-hms-view-full-table.reconstructed.json")["hms_table"])
    assert spark_view.identifier == ("sales", "v_customers") and trino_view.identifier == ("sales", "v_orders")
    assert store.history("sales.v_customers")[0].source_location == "sales.v_customers"
    nameless = load("trino-hms-starrocks-trinoviewtest-basic.json")["hms_table"]
    with pytest.raises(ValidationError, match="identifier: the record has no dbName and tableName"):
        store.import_hms(nameless)
    tableless = {**load("hive-native-view.reconstructed.json")["hms_table"], "tableName": None}
    with pytest.raises(ValidationError, match="identifier: the record has no dbName and tableName"):
        store.import_hms(tableless)
    shouting = {**load("hive-native-view.reconstructed.json")["hms_table"], "dbName": "Default", "tableName": "V_Src"}
    assert store.import_hms(shouting).identifier == ("default", "v_src")
    # given an identifier, a record without a table name imports, and names no place in the metastore
    store.import_hms(tableless, "copies.v")
    assert store.history("copies.v")[0].source_location is None
    assert store.event_count() == 4


@pytest.mark.parametrize("now_ms", [0, 1_700_000_000_000])
def test_a_record_is_one_version_of_the_first_schema_at_the_time_given(now_ms):
    prepared = prepare_import(load("hive-native-view.reconstructed.json")["hms_table"], now_ms=now_ms)
    (version,) = prepared.versions
    assert (version.version_id, version.schema_id, version.timestamp_ms) == (1, 0, now_ms)
    assert prepared.version_log == (VersionLogEntry(timestamp_ms=now_ms, version_id=1),)
    assert prepared.current_version_id == 1


def test_a_record_imported_without_a_time_is_timestamped_at_the_import_in_milliseconds():
    before = time.time_ns() // 1_000_000
    prepared = prepare_import(load("hive-native-view.reconstructed.json")["hms_table"])
    after = time.time_ns() // 1_000_000
    (version,) = prepared.versions
    assert before <= version.timestamp_ms <= after
    assert prepared.version_log == (VersionLogEntry(timestamp_ms=version.timestamp_ms, version_id=1),)


@pytest.mark.parametrize("now_ms, says", [(2**63, "less than or equal to 9223372036854775807"),
                                          ("soon", "a valid integer, not 'soon'")])
def test_a_time_no_version_can_hold_is_refused_naming_the_field(now_ms, says):
    with pytest.raises(ValidationError, match=f"^bad view version: timestamp_ms: Input should be {says}$"):
        prepare_import(load("hive-native-view.reconstructed.json")["hms_table"], now_ms=now_ms)


def test_an_imported_view_is_a_normal_view(store):
    table = load("trino-hms-view-full-table.reconstructed.json")["hms_table"]
    store.import_hms(table)
    count = store.event_count()
    with pytest.raises(ViewAlreadyExistsError, match="^view already exists: sales.v_orders$"):
        store.import_hms(table)
    assert store.event_count() == count
    view = store.alter_view("sales.v_orders", ViewChange.add_representation(
        ("spark", "SELECT order_id, amount FROM sales.orders")), ViewChange.update_comment("now in two dialects"))
    assert view.current_version_id == 2 and view.dialects == ("trino", "spark")
    spark_record = store.export_hms("sales.v_orders", "spark")
    assert spark_record["viewOriginalText"] == "SELECT order_id, amount FROM sales.orders"
    assert not any(key.startswith(("presto_view", "trino_")) for key in spark_record["parameters"])
    assert spark_record["parameters"]["comment"] == "now in two dialects"
    assert spark_record["owner"] == table["owner"] == "alice"
    dump = store.projection_dump()
    store.rebuild()
    assert store.projection_dump() == dump


# -- the owner -----------------------------------------------------------------------------------


def test_the_owner_is_the_owner_property_or_the_creator(store):
    table = load("spark-hms-view-3.5.reconstructed.json")["hms_table"]
    view = store.import_hms(table)
    assert view.properties["owner"] == "bob" != view.audit.creator
    record = store.export_hms("sales.v_customers", "spark")
    assert record["owner"] == "bob" and "owner" not in record["parameters"]
    store.alter_view("sales.v_customers", ViewChange.set_property("owner", "carol"))
    assert store.export_hms("sales.v_customers", "spark")["owner"] == "carol"
    store.alter_view("sales.v_customers", ViewChange.remove_property("owner"))
    assert store.export_hms("sales.v_customers", "spark")["owner"] == "alice"
    store.create_view("sales.native", columns=[("a", "int")], representations=[("trino", "SELECT 1 a")],
                      default_namespace="sales")
    trino_record = store.export_hms("sales.native", "trino")
    assert trino_record["owner"] == "alice" and formats.decode(trino_record).owner == "alice"


# -- the second view text follows the SQL ---------------------------------------------------------


TWO_TEXT_RECORDS = {
    "spark": {"dbName": "db", "tableName": "sv", "tableType": "VIRTUAL_VIEW",
              "parameters": {"spark.sql.create.version": "3.5.3", "view.query.out.numCols": "1",
                             "view.query.out.col.0": "a", "spark.sql.sources.schema": json.dumps(
                                 {"type": "struct", "fields": [{"name": "a", "type": "integer", "nullable": True,
                                                                "metadata": {}}]})},
              "viewOriginalText": "SELECT 1 AS a", "viewExpandedText": "SELECT 1 AS `a`"},
    "hive": {"dbName": "db", "tableName": "hv", "tableType": "VIRTUAL_VIEW", "parameters": {},
             "sd": {"cols": [{"name": "a", "type": "int"}]},
             "viewOriginalText": "select 1 as a from t", "viewExpandedText": "select 1 as `a` from `db`.`t`"},
    "flink": {"dbName": "db", "tableName": "fv", "tableType": "VIRTUAL_VIEW",
              "parameters": {"is_generic": "true", "flink.schema.0.name": "a", "flink.schema.0.data-type": "INT"},
              "viewOriginalText": "select a from t", "viewExpandedText": "SELECT `t`.`a` FROM `c`.`db`.`t`"},
}


@pytest.mark.parametrize("engine", sorted(TWO_TEXT_RECORDS))
def test_after_the_sql_changes_export_writes_the_new_sql_to_both_texts(store, engine):
    record = TWO_TEXT_RECORDS[engine]
    texts = (record["viewOriginalText"], record["viewExpandedText"])
    ident = ".".join(store.import_hms(record).identifier)
    out = store.export_hms(ident, engine)
    assert (out["viewOriginalText"], out["viewExpandedText"]) == texts

    store.alter_view(ident, ViewChange.update_representation(engine, "SELECT 2 AS a"))
    out = store.export_hms(ident, engine)
    assert (out["viewOriginalText"], out["viewExpandedText"]) == ("SELECT 2 AS a", "SELECT 2 AS a")

    store.rollback_view(ident, 1)  # the recorded SQL is current again, and so are both recorded texts
    out = store.export_hms(ident, engine)
    assert (out["viewOriginalText"], out["viewExpandedText"]) == texts


def test_the_query_output_names_are_written_back_only_with_the_sql_they_name(store):
    """``CREATE VIEW v (a, b) AS SELECT id, s FROM t`` records the query's names ``id, s``; Spark
    resolves the view's columns by them, so after the SQL changes they would break the view."""
    record = {"dbName": "db", "tableName": "renamed", "tableType": "VIRTUAL_VIEW",
              "parameters": {"spark.sql.create.version": "4.3.0", "view.query.out.numCols": "2",
                             "view.query.out.col.0": "id", "view.query.out.col.1": "s",
                             "spark.sql.sources.schema": json.dumps({"type": "struct", "fields": [
                                 {"name": n, "type": "string", "nullable": True, "metadata": {}} for n in "ab"]})},
              "viewOriginalText": "SELECT id, s FROM t", "viewExpandedText": "SELECT id, s FROM t"}

    def names():
        params = store.export_hms("db.renamed", "spark")["parameters"]
        return [params[f"view.query.out.col.{i}"] for i in range(int(params["view.query.out.numCols"]))]

    store.import_hms(record)
    assert names() == ["id", "s"]
    store.alter_view("db.renamed", ViewChange.update_representation("spark", "SELECT id AS a, s AS b FROM t"))
    assert names() == ["a", "b"]  # the new query's own names: the columns', as nothing renames them
    store.rollback_view("db.renamed", 1)
    assert names() == ["id", "s"]


# -- importing many records ------------------------------------------------------------------------


def test_a_report_skips_tables_and_materialized_views_without_failing(store):
    view = formats.encode(ViewDefinition(dialect="hive", sql="SELECT 1", columns=(Column("a", "int"),),
                                         database="db", name="v"), "hive")
    report = HmsImportReport()
    report.import_one(store, "db.t", {"dbName": "db", "tableName": "t", "tableType": "MANAGED_TABLE",
                                      "parameters": {}})
    report.import_one(store, "db.mv", {"dbName": "db", "tableName": "mv", "tableType": "MATERIALIZED_VIEW"})
    report.import_one(store, "db.tmv", {"dbName": "db", "tableName": "tmv", "tableType": "VIRTUAL_VIEW",
                                        "parameters": {"presto_view": "true", "comment": "Presto Materialized View"}})
    report.import_one(store, "db.v", view)
    report.import_one(store, "db.v", view)
    report.import_one(store, "db.bad", {"dbName": "db", "tableName": "bad", "parameters": {}})
    assert report.skipped == [SkippedRecord("db.t", "not-a-view", "a MANAGED_TABLE", "db.t"),
                              SkippedRecord("db.mv", "not-a-view", "a MATERIALIZED_VIEW", "db.mv"),
                              SkippedRecord("db.tmv", "not-a-view", "a Trino materialized view", "db.tmv"),
                              SkippedRecord("db.v", "exists", "view already exists: db.v", "db.v")]
    assert report.imported == [ImportedRecord("db.v", "hive", 1, "db.v")]
    assert report.failed == [FailedRecord("db.bad", "ValidationError",
                                          "tableType: is missing; a view record has table type VIRTUAL_VIEW", "db.bad")]
    assert store.list_views() == [("db", "v")] and store.event_count() == 1
    report.failed.append(FailedRecord("db.lost", "EngineError", "cannot read db.lost\nthe metastore's own lines"))
    with pytest.raises(ValidationError) as raised:
        report.raise_for_failures()
    assert str(raised.value) == ("2 record(s) failed to import:\n"
                                 "db.bad: ValidationError: tableType: is missing; a view record has table type "
                                 "VIRTUAL_VIEW\n"
                                 "db.lost: EngineError: cannot read db.lost")
    report.failed.clear()
    assert report.ok and report.raise_for_failures() is report
    assert str(report).startswith("imported 1, skipped 4, failed 0")


def test_a_report_names_a_view_by_the_identifier_it_is_imported_under(store):
    report = HmsImportReport()
    report.import_one(store, "sales.v_customers", load("spark-hms-view-3.5.reconstructed.json")["hms_table"],
                      "copies.customers")
    assert report.imported == [ImportedRecord("copies.customers", "spark", 1, "sales.v_customers")]
    assert store.list_views() == [("copies", "customers")]


def test_a_report_names_the_records_it_skips_or_fails_by_the_identifier_given(store):
    """import_one's identifier, given, is the view the record would be: the rows of a record skipped
    as no view, or failed before the store was written, carry it, not the record's own name; an
    identifier that names no view leaves it None."""
    report = HmsImportReport()
    table = {"dbName": "db", "tableName": "t", "tableType": "MANAGED_TABLE", "parameters": {}}
    report.import_one(store, "db.t", table, "copies.t")
    report.import_one(store, "db.bad", {"dbName": "db", "tableName": "bad", "parameters": {}}, "copies.bad")
    report.import_one(store, "db.t", table, "copies.no`name")
    assert report.skipped[0] == SkippedRecord("db.t", "not-a-view", "a MANAGED_TABLE", "copies.t")
    assert report.failed == [FailedRecord("db.bad", "ValidationError",
                                          "tableType: is missing; a view record has table type VIRTUAL_VIEW",
                                          "copies.bad")]
    assert report.skipped[1:] == [SkippedRecord("db.t", "not-a-view", "a MANAGED_TABLE", None)]
    assert store.event_count() == 0


def test_an_error_of_the_store_itself_is_raised_not_noted_as_the_records(store, monkeypatch):
    """Every record after it would meet it: a closed store, or one another process keeps locked
    (each record would wait its own timeout before failing the same way)."""
    import viewstore.log as log_module

    record = load("hive-native-view.reconstructed.json")["hms_table"]
    monkeypatch.setattr(log_module, "BUSY_TIMEOUT_MS", 100)
    holder = sqlite3.connect(store.path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    report = HmsImportReport()
    try:
        with pytest.raises(ConcurrencyError) as raised:
            report.import_one(store, "default.v_src", record)
        assert raised.value.busy
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert report == HmsImportReport() and store.event_count() == 0
    store.close()
    assert store.closed
    with pytest.raises(ViewStoreError, match="the store is closed"):
        report.import_one(store, "default.v_src", record)
    assert report == HmsImportReport()
    broken = {**record, "viewOriginalText": None, "viewExpandedText": None}  # the record's own error is noted
    report.import_one(store, "default.bad", broken)
    assert [f.name for f in report.failed] == ["default.bad"]


def test_a_records_own_concurrency_error_is_noted_and_a_damaged_log_ends_the_import(store):
    """Another writer that took the view's stream first fails that record alone (not busy: the store
    answers); a damaged log (a name's last holder let go of it at a time that is no integer) is the
    store's own error, which every record after it would meet: raised, and nothing is written."""
    record = load("hive-native-view.reconstructed.json")["hms_table"]
    store.create_view("default.v_src", columns=[("a", "int")], representations=[("hive", "SELECT 1 AS a")],
                      default_namespace="default")
    store.drop_view("default.v_src")
    with sqlite3.connect(store.path) as raw:  # the other writer: its row holds every stream's next version
        raw.execute("CREATE TRIGGER taken BEFORE INSERT ON events BEGIN "
                    "SELECT RAISE(ABORT, 'UNIQUE constraint failed: events.view_id, events.stream_version'); END")
    raw.close()
    report = HmsImportReport()
    report.import_one(store, "default.v_src", record)
    assert report.failed == [FailedRecord("default.v_src", "ConcurrencyError", "another writer appended to the view "
                                          "first: UNIQUE constraint failed: events.view_id, events.stream_version",
                                          "default.v_src")]
    with sqlite3.connect(store.path) as raw:
        raw.execute("DROP TRIGGER taken")
        raw.execute("DROP TRIGGER events_append_only_update")
        raw.execute("UPDATE events SET occurred_at = 'soon' WHERE position = 2")
    raw.close()
    with pytest.raises(CorruptLogError, match="^event at position 2 has a time that is not an integer$"):
        report.import_one(store, "default.v_src", record)
    assert len(report.failed) == 1 and not report.imported and store.event_count() == 2


# -- export errors --------------------------------------------------------------------------------


def test_export_errors(store):
    store.create_view("sales.v", columns=[("a", "int")], representations=[("spark", "SELECT 1 AS a")],
                      default_namespace="sales")
    store.create_view("a.b.v", columns=[("a", "int")], representations=[("trino", "SELECT 1 a")],
                      default_namespace="a")
    with pytest.raises(NoSuchViewError, match="^no such view: sales.nope$"):
        store.export_hms("sales.nope", "spark")
    with pytest.raises(ValidationError, match="unknown engine format 'sprak'; did you mean 'spark'"):
        store.export_hms("sales.v", "sprak")
    with pytest.raises(ValidationError, match="writing a trino view needs trino SQL"):
        store.export_hms("sales.v", "trino")
    with pytest.raises(ValidationError, match="one namespace level"):
        store.export_hms("a.b.v", "trino")
    with pytest.raises(ValidationError, match="metadata_location"):
        store.export_hms("sales.v", "iceberg")


# -- bad input ------------------------------------------------------------------------------------


def trino_record(payload: Any) -> dict[str, Any]:
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return {"dbName": "s", "tableName": "v", "tableType": "VIRTUAL_VIEW",
            "parameters": {"presto_view": "true", "comment": "Presto View"},
            "viewOriginalText": "/* Presto View: " + base64.b64encode(data).decode() + " */",
            "viewExpandedText": "/* Presto View */"}


BAD_RECORDS = {
    "malformed Base64": ({**trino_record({}), "viewOriginalText": "/* Presto View: ab$c== */"},
                         r"viewOriginalText: malformed Base64"),
    "JSON without originalSql": (trino_record({"catalog": "hive", "schema": "s",
                                               "columns": [{"name": "a", "type": "bigint"}]}),
                                 r"viewOriginalText\.originalSql"),
    "a payload that is not JSON": (trino_record(b"{nope"), r"viewOriginalText"),
    "unknown Trino type": (trino_record({"originalSql": "SELECT 1", "columns": [{"name": "a", "type": "wibble(3)"}]}),
                           r"viewOriginalText\.columns\[0\]\.type: unknown Trino type 'wibble'"),
    "Spark schema that does not parse": (
        {"dbName": "s", "tableName": "v", "tableType": "VIRTUAL_VIEW", "viewOriginalText": "SELECT 1 AS a",
         "parameters": {"spark.sql.create.version": "4.3.0", "spark.sql.sources.schema": "{not json"}},
        r"parameters\.spark\.sql\.sources\.schema: the Spark schema is not valid JSON"),
    "unknown Flink type": (
        {"dbName": "s", "tableName": "v", "tableType": "VIRTUAL_VIEW", "viewOriginalText": "SELECT 1",
         "parameters": {"is_generic": "true", "flink.schema.0.name": "a", "flink.schema.0.data-type": "WIBBLE"}},
        r"parameters\.flink\.schema\.0\.data-type: Flink type 'WIBBLE'"),
    "a type length of thousands of digits": (
        {"dbName": "s", "tableName": "v", "tableType": "VIRTUAL_VIEW", "viewExpandedText": "SELECT 1",
         "sd": {"cols": [{"name": "a", "type": f"varchar({'9' * 5000})"}]}},
        r"sd\.cols\[0\]\.type: .*the number 9{20}\.\.\. is larger than 2147483647"),
    "a schema count of thousands of digits": (
        {"dbName": "s", "tableName": "v", "tableType": "VIRTUAL_VIEW", "viewOriginalText": "SELECT 1 AS a",
         "parameters": {"spark.sql.create.version": "4.3.0", "spark.sql.sources.schema.numParts": "9" * 5000}},
        r"parameters\.spark\.sql\.sources\.schema\.numParts: must be a count Spark can read"),
    "a table": ({"dbName": "s", "tableName": "v", "tableType": "MANAGED_TABLE", "parameters": {}},
                r"tableType: 'MANAGED_TABLE' is not a view"),
    "no table type": ({"dbName": "s", "tableName": "v", "parameters": {}}, r"tableType: is missing"),
    "parameters that are not strings": ({"tableType": "VIRTUAL_VIEW", "parameters": {"comment": 3}},
                                        r"parameters\.comment"),
    "not a record": ("VIRTUAL_VIEW", r"table: an HMS table record must be a dict"),
    "a bad table name": ({**trino_record({"originalSql": "SELECT 1", "columns": []}), "tableName": "a.b"},
                         r"dots"),
    "a metadata file for a Spark view": (
        load("spark-hms-view-3.5.reconstructed.json")["hms_table"], r"metadata_file: only Iceberg views"),
}


@pytest.mark.parametrize("what", sorted(BAD_RECORDS))
def test_bad_records_raise_validation_error_naming_the_field_and_write_nothing(store, what):
    table, message = BAD_RECORDS[what]
    store.create_view("other.v", columns=[], representations=[("spark", "SELECT 1")], default_namespace="other")
    extra = {"metadata_file": "m.json"} if what == "a metadata file for a Spark view" else {}
    with pytest.raises(ValidationError, match=message):
        store.import_hms(table, **extra)
    assert store.event_count() == 1 and store.list_views() == [("other", "v")]


# -- Iceberg views in HMS -------------------------------------------------------------------------


def iceberg_record(location: str, uuid: str | None = None) -> dict[str, Any]:
    parameters = {"table_type": "ICEBERG-VIEW", "metadata_location": location}
    if uuid:
        parameters["uuid"] = uuid
    return {"dbName": "db", "tableName": "iv", "owner": "ivan", "tableType": "VIRTUAL_VIEW",
            "parameters": parameters, "viewOriginalText": "SELECT 1", "viewExpandedText": "SELECT 1"}


def test_an_iceberg_record_and_its_metadata_file_may_write_its_uuid_in_either_case(store, tmp_path):
    """The record's uuid and the file's view-uuid are one UUID when they differ only in case (Java's
    UUID.fromString reads both alike): the file was refused as another view's. It is imported now,
    the view's UUID as its file writes it; a UUID that differs in a digit is still refused."""
    metadata = load("iceberg-core-ValidViewMetadata.json")["metadata"]
    written = metadata["view-uuid"].upper()
    assert written != metadata["view-uuid"]
    path = tmp_path / "00002-x.metadata.json"
    path.write_text(json.dumps({**metadata, "view-uuid": written}))
    other = ("0" if written[0] != "0" else "1") + metadata["view-uuid"][1:]
    with pytest.raises(IcebergMetadataError, match=rf"^metadata\.view-uuid: {written} is another view than the "
                                                   rf"HMS record's {other}$"):
        store.import_hms(iceberg_record(path.as_uri(), other))
    assert store.event_count() == 0
    view = store.import_hms(iceberg_record(path.as_uri(), metadata["view-uuid"]))
    assert view.uuid == written and view.identifier == ("db", "iv")


def test_an_iceberg_view_in_hms_imports_its_whole_history(store, tmp_path):
    metadata = load("iceberg-core-ValidViewMetadata.json")["metadata"]
    path = tmp_path / "meta data" / "00002-x.metadata.json"
    path.parent.mkdir()
    path.write_text(json.dumps(metadata))
    view = store.import_hms(iceberg_record(path.as_uri(), metadata["view-uuid"]))

    with ViewStore(tmp_path / "reference.db", actor="alice") as into:
        reference = into.import_iceberg(path, "db.iv")
    assert view.uuid == reference.uuid == metadata["view-uuid"]
    assert (view.versions, view.version_log, view.current_version_id) == \
        (reference.versions, reference.version_log, reference.current_version_id)
    assert [e.type for e in store.history("db.iv")] == ["view.imported", "view.replaced"]
    first = store.history("db.iv")[0]
    assert (first.source, first.source_location) == ("hms:iceberg", path.as_uri())
    assert view.properties["owner"] == "ivan" and view.comment == metadata["properties"]["comment"]
    assert view.properties[formats.iceberg.METADATA_LOCATION_KEY] == path.as_uri()
    assert view.representations[0].dialect == "spark-sql"

    record = store.export_hms("db.iv", "iceberg")
    assert record["parameters"]["metadata_location"] == path.as_uri()
    assert record["parameters"]["uuid"] == metadata["view-uuid"] and record["owner"] == "ivan"

    # the codecs' bookkeeping (hms.*) stays in the store: the Iceberg metadata gets the view's own properties
    exported = json.loads(store.export_iceberg("db.iv", tmp_path / "out").read_text())
    assert exported["properties"] == {**metadata["properties"], "owner": "ivan"}


def test_an_iceberg_record_points_at_a_metadata_file_that_describes_the_view(store, tmp_path, monkeypatch):
    metadata = load("iceberg-view-spec-example.json")["metadata"]
    imported = tmp_path / "00001-x.metadata.json"
    imported.write_text(json.dumps(metadata))
    view = store.import_hms(iceberg_record(imported.as_uri(), metadata["view-uuid"]))
    assert store.export_hms("db.iv", "iceberg")["parameters"]["metadata_location"] == imported.as_uri()
    store.rename_view("db.iv", "db.renamed")  # a rename leaves the metadata file as it is
    assert store.export_hms("db.renamed", "iceberg")["parameters"]["metadata_location"] == imported.as_uri()

    store.replace_view("db.renamed", columns=view.columns, representations=[("spark", "SELECT 42")],
                       default_namespace=["default"])
    before = store.event_count()
    with pytest.raises(ValidationError, match=r"metadata_location: the view db.renamed changed \(view.replaced\) "
                                              r"since it was imported from .*; write its metadata with export_iceberg"):
        store.export_hms("db.renamed", "iceberg")
    written = store.export_iceberg("db.renamed", tmp_path / "out")
    record = store.export_hms("db.renamed", "iceberg", metadata_location=written)
    assert record["parameters"]["metadata_location"] == written.absolute().as_uri()
    assert record["viewOriginalText"] == "SELECT 42" and store.event_count() == before
    # the record and the file it names bring the current view into another store
    with ViewStore(tmp_path / "other.db", actor="bob") as into:
        other = into.import_hms(record)
    assert other.representations == store.load_view("db.renamed").representations

    remote = "s3://wh/db/renamed/metadata/00002-x.metadata.json"
    assert store.export_hms("db.renamed", "iceberg",
                            metadata_location=remote)["parameters"]["metadata_location"] == remote
    monkeypatch.chdir(tmp_path)
    relative = store.export_hms("db.renamed", "iceberg", metadata_location="out/m.json")
    assert relative["parameters"]["metadata_location"] == (tmp_path / "out" / "m.json").as_uri()
    with pytest.raises(ValidationError, match="metadata_location: must be a non-empty string"):
        store.export_hms("db.renamed", "iceberg", metadata_location=" ")
    with pytest.raises(ValidationError, match="metadata_location: only Iceberg view records"):
        store.export_hms("db.renamed", "spark", metadata_location=remote)


def test_the_metadata_file_is_judged_for_the_view_as_it_was_loaded(store, tmp_path):
    """Events after the loaded view's are not its changes: the file still describes the view as loaded."""
    metadata = load("iceberg-view-spec-example.json")["metadata"]
    imported = tmp_path / "00001-x.metadata.json"
    imported.write_text(json.dumps(metadata))
    store.import_hms(iceberg_record(imported.as_uri(), metadata["view-uuid"]))
    loaded = store.load_view("db.iv")
    store.alter_view("db.iv", ViewChange.set_property("k", "v"))
    history = store.history("db.iv")
    assert imported_metadata_location(loaded, history) == imported.as_uri()
    with pytest.raises(ValidationError, match=r"changed \(view\.properties_set\)"):
        imported_metadata_location(store.load_view("db.iv"), history)


def test_the_iceberg_engine_is_named_in_any_case_and_still_checks_the_metadata_file(store, tmp_path):
    metadata = load("iceberg-view-spec-example.json")["metadata"]
    imported = tmp_path / "00001-x.metadata.json"
    imported.write_text(json.dumps(metadata))
    store.import_hms(iceberg_record(imported.as_uri(), metadata["view-uuid"]))
    assert store.export_hms("db.iv", "ICEBERG")["parameters"]["metadata_location"] == imported.as_uri()
    store.alter_view("db.iv", ViewChange.set_property("k", "v"))
    with pytest.raises(ValidationError, match=r"metadata_location: the view db.iv changed"):
        store.export_hms("db.iv", " Iceberg ")


def test_a_view_imported_from_a_metadata_file_itself_needs_a_metadata_location(store, tmp_path):
    """Only an import of an Iceberg view's HMS record knows the file the metastore points at; a view
    recorded from a metadata file (source iceberg) has none, whatever its properties say."""
    version = ViewVersion(version_id=1, timestamp_ms=1000, schema_id=0, columns=(Column("a", "long"),),
                          representations=(SQLRepresentation("spark", "SELECT 1 AS a"),), default_namespace=("db",))
    store.import_view("db.fromfile", source="iceberg", source_location=str(tmp_path / "m.json"), versions=[version],
                      version_log=[VersionLogEntry(timestamp_ms=1000, version_id=1)], current_version_id=1,
                      properties={formats.iceberg.METADATA_LOCATION_KEY: "s3://made/up.json"})
    with pytest.raises(ValidationError, match="metadata_location: the view db.fromfile was not imported from an "
                                              "Iceberg view's HMS record"):
        store.export_hms("db.fromfile", "iceberg")


def test_a_report_counts_the_versions_an_iceberg_view_brings(store, tmp_path):
    metadata = load("iceberg-core-ValidViewMetadata.json")["metadata"]
    path = tmp_path / "m.metadata.json"
    path.write_text(json.dumps(metadata))
    report = HmsImportReport()
    report.import_one(store, "db.iv", iceberg_record(str(path)))
    assert report.imported == [ImportedRecord("db.iv", "iceberg", len(metadata["versions"]), "db.iv")]
    assert len(metadata["versions"]) > 1


def test_a_view_not_imported_from_an_iceberg_record_needs_a_metadata_location(store, tmp_path):
    store.create_view("db.v", columns=[("a", "int")], representations=[("spark", "SELECT 1 AS a")],
                      default_namespace="db", properties={formats.iceberg.METADATA_LOCATION_KEY: "s3://made/up.json"})
    with pytest.raises(ValidationError, match="metadata_location: the view db.v was not imported from an Iceberg"):
        store.export_hms("db.v", "iceberg")
    written = store.export_iceberg("db.v", tmp_path / "v")
    assert store.export_hms("db.v", "iceberg", metadata_location=written)["parameters"]["metadata_location"] == \
        written.as_uri()


def test_an_iceberg_view_reads_a_plain_path_a_gzip_file_or_a_local_copy(store, tmp_path):
    example = load("iceberg-view-spec-example.json")["metadata"]
    plain = tmp_path / "00001-a.metadata.json"
    plain.write_text(json.dumps({**example, "view-uuid": "c3c4d2b3-0000-4000-8000-000000000000"}))
    assert store.import_hms(iceberg_record(str(plain)), "db.plain").current_version_id == 1
    zipped = tmp_path / "00001-b.gz.metadata.json"
    zipped.write_bytes(gzip.compress(json.dumps({**example, "view-uuid": "c3c4d2b3-0000-4000-8000-000000000001"})
                                     .encode()))
    assert store.import_hms(iceberg_record(f"file://{zipped}"), "db.zipped").uuid.startswith("c3c4d2b3")
    # the conformance record points at S3: it imports from a local copy, and keeps its location
    remote = load("iceberg-view-in-hms.reconstructed.json")["hms_table"]
    with pytest.raises(ValidationError, match="parameters.metadata_location: 's3://.*' is not a local file"):
        store.import_hms(remote, "db.remote")
    copy = tmp_path / "copy.json"
    copy.write_text(json.dumps(example))
    view = store.import_hms(remote, "db.remote", metadata_file=copy)
    assert view.uuid == remote["parameters"]["uuid"] == example["view-uuid"]
    assert view.properties[formats.iceberg.METADATA_LOCATION_KEY] == remote["parameters"]["metadata_location"]
    with pytest.raises(ViewAlreadyExistsError, match="UUID"):  # the same Iceberg view again
        store.import_hms(iceberg_record(str(plain)), "db.again")
    assert store.event_count() == 3


def test_an_iceberg_view_with_upper_case_representation_types_imports(store, tmp_path):
    metadata = load("iceberg-view-spec-example.json")["metadata"]
    for version in metadata["versions"]:
        for representation in version["representations"]:
            representation["type"] = "SQL"  # Iceberg's Java parser lower-cases the type on read
    path = tmp_path / "00001-x.metadata.json"
    path.write_text(json.dumps(metadata))
    view = store.import_hms(iceberg_record(str(path)))
    with ViewStore(tmp_path / "reference.db", actor="alice") as into:
        reference = into.import_iceberg(path, "db.iv")
    assert view.representations == reference.representations and view.representations


def test_bad_iceberg_views_write_nothing(store, tmp_path):
    example = load("iceberg-view-spec-example.json")["metadata"]
    path = tmp_path / "m.json"
    path.write_text(json.dumps(example))
    cases = [
        (iceberg_record(str(tmp_path / "missing.json")), IcebergMetadataError, "cannot read"),
        (iceberg_record(str(tmp_path / "lone\ud800surrogate.json")), IcebergMetadataError, "cannot read"),
        (iceberg_record(str(path), "00000000-0000-4000-8000-000000000000"), IcebergMetadataError, "another view"),
        (iceberg_record("hdfs://nn/warehouse/v/metadata/1.json"), ValidationError, "not a local file"),
        (iceberg_record("file://otherhost/m.json"), ValidationError, "another host"),
        (iceberg_record(""), ValidationError, "parameters.metadata_location"),
    ]
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({**example, "current-version-id": 7}))
    cases.append((iceberg_record(str(broken)), IcebergMetadataError, "current"))
    for table, error, message in cases:
        with pytest.raises(error, match=message):
            store.import_hms(table, "db.iv")
    assert store.event_count() == 0


def test_metadata_locations():
    assert metadata_file_path("/w/m.json") == Path("/w/m.json")
    assert metadata_file_path("file:/w/a%20b.json") == Path("/w/a b.json")
    assert metadata_file_path("file:///w/m.json") == Path("/w/m.json")
    assert metadata_file_path("file://localhost/w/m.json") == Path("/w/m.json")
    assert metadata_file_path("relative/m.json") == Path("relative/m.json")
    for remote in ("s3://b/m.json", "s3a://b/m.json", "hdfs://nn/m.json", "abfss://c@a/m.json"):
        with pytest.raises(ValidationError, match="not a local file"):
            metadata_file_path(remote)
    with pytest.raises(ValidationError, match="^metadata_location: '/w/lone.*' cannot be a URI"):
        metadata_location_uri("/w/lone\ud800.json")  # a lone surrogate, which a URI cannot hold
    # a blank before a scheme makes no URI an engine reads, and urlsplit drops it and any newline or tab
    for slip in (" s3://b/m.json", "s3://b/m.json ", "s3://b/m\n.json", "s3://b/m\t.json", "\t/w/m.json", "/w/m.json\n",
                 "file:/w/m\x7f.json"):
        with pytest.raises(ValidationError, match=r"^metadata_location: .* has blanks at its ends or a control "
                                                  r"character; give the location alone$"):
            metadata_location_uri(slip)


def test_a_drive_letter_is_a_path_not_a_uri_scheme(tmp_path, monkeypatch):
    """A one-letter scheme is a Windows drive: the location is a path, written as its file: URI, which
    reads back as that file."""
    monkeypatch.chdir(tmp_path)
    uri = metadata_location_uri("C:/w/m.json")
    assert uri == Path("C:/w/m.json").absolute().as_uri()
    assert metadata_file_path(uri) == Path("C:/w/m.json").absolute()
    assert metadata_file_path("C:/w/m.json") == Path("C:/w/m.json")


# -- the store keeps everything an engine needs to write its record back -------------------------


names = st.text(string.ascii_lowercase + "_", min_size=1, max_size=8)


@st.composite
def engine_records(draw) -> tuple[str, dict[str, Any]]:
    """A record as an engine writes it, for a view defined anywhere (the engine adds its defaults)."""
    engine = draw(st.sampled_from(["trino", "spark", "hive", "flink"]))
    columns = draw(st.lists(st.builds(Column, names, st.sampled_from(
        ["int", "long", "string", "date", "decimal(9,2)", "list<string>", "map<string, int>",
         "struct<a: int, b: list<string>>"]), st.none() | st.text(max_size=6)),
        min_size=1, max_size=4, unique_by=lambda c: c.name))
    database = draw(names)
    # Hive and Flink run a view in its own database: another default namespace qualifies the names of
    # its SQL (which this arbitrary text has none of), so their views here resolve in their database
    namespace = draw(st.sampled_from([(), (database,)])) if engine in ("hive", "flink") else \
        draw(st.just(()) | st.tuples(names))
    catalog = draw(st.sampled_from(["hive", "spark_catalog"])) if namespace and engine != "hive" else None
    definition = ViewDefinition(
        dialect=engine, sql=draw(st.text(min_size=1, max_size=20).filter(str.strip)), columns=tuple(columns),
        comment=draw(st.none() | st.text(max_size=10)), default_catalog=catalog, default_namespace=namespace,
        owner=draw(names), security_mode=draw(st.sampled_from(["DEFINER", "INVOKER"])) if engine == "trino" else None,
        properties=draw(st.dictionaries(names.map(lambda k: f"user.{k}"), st.text(max_size=6), max_size=2)),
        database=database, name=draw(names))
    return engine, formats.encode(definition, engine)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(engine_records())
def test_export_gives_back_the_record_that_was_imported(engine_and_record):
    engine, record = engine_and_record
    with tempfile.TemporaryDirectory() as folder:
        with ViewStore(Path(folder) / "p.db", actor="someone-else") as store:
            view = store.import_hms(record)
            assert store.export_hms(view.identifier, engine) == record


def test_the_metastore_owner_wins_over_an_owner_parameter():
    """The metastore's owner wins over a stray ``owner`` table parameter."""
    record = {"dbName": "db", "tableName": "hv", "tableType": "VIRTUAL_VIEW", "owner": "table-owner",
              "parameters": {"owner": "param-owner"}, "sd": {"cols": [{"name": "a", "type": "int"}]},
              "viewOriginalText": "select 1 as a", "viewExpandedText": "select 1 as `a`"}
    assert prepare_import(record).properties["owner"] == "table-owner"


@pytest.mark.parametrize("table_owner", ["hive", None])
def test_an_owner_parameter_is_neither_lost_nor_taken_for_the_owner(store, table_owner):
    """Hive's ``TBLPROPERTIES ('owner'='data-team')`` is a parameter like any other; the record's
    owner (or, without one, the view's creator) stays the owner."""
    record = {"dbName": "db", "tableName": "hv", "tableType": "VIRTUAL_VIEW", "owner": table_owner,
              "parameters": {"owner": "data-team", "comment": "c"}, "sd": {"cols": [{"name": "a", "type": "int"}]},
              "viewOriginalText": "select 1 as a", "viewExpandedText": "select 1 as `a`"}
    view = store.import_hms(record)
    assert view.properties.get("owner") == table_owner and view.properties["hms.owner-parameter"] == "data-team"
    out = store.export_hms("db.hv", "hive")
    assert out["owner"] == (table_owner or "alice")
    assert out["parameters"] == {"owner": "data-team", "comment": "c"}
    assert "hms.owner-parameter" not in store.export_iceberg("db.hv").read_text()  # a metastore fact only


def test_an_iceberg_views_own_owner_property_stays_its_property(store, tmp_path):
    """An Iceberg view's properties come from its metadata file, not from HMS parameters."""
    metadata = load("iceberg-core-ValidViewMetadata.json")["metadata"]
    metadata["properties"] = {**metadata.get("properties", {}), "owner": "alice"}
    path = tmp_path / "m.metadata.json"
    path.write_text(json.dumps(metadata))
    view = store.import_hms(iceberg_record(str(path)) | {"owner": None})
    assert view.properties["owner"] == "alice" and "hms.owner-parameter" not in view.properties
    assert json.loads(store.export_iceberg("db.iv").read_text())["properties"]["owner"] == "alice"
    assert store.export_hms("db.iv", "iceberg")["owner"] == "alice"


def test_a_view_imported_before_the_digest_was_kept_drops_stale_query_output_names(store):
    """A store written by an earlier release holds the list without hms.spark.query-out-sql: it
    belongs to the SQL of the imported version."""
    record = {"dbName": "db", "tableName": "old", "tableType": "VIRTUAL_VIEW",
              "parameters": {"spark.sql.create.version": "4.3.0", "view.query.out.numCols": "1",
                             "view.query.out.col.0": "id", "spark.sql.sources.schema": json.dumps({
                                 "type": "struct", "fields": [{"name": "a", "type": "long", "nullable": True,
                                                               "metadata": {}}]})},
              "viewOriginalText": "SELECT id FROM t", "viewExpandedText": "SELECT id FROM t"}
    prepared = prepare_import(record)
    properties = {k: v for k, v in prepared.properties.items() if k != "hms.spark.query-out-sql"}
    store.import_view(prepared.identifier, **{**prepared.import_view_arguments(), "properties": properties})
    assert store.export_hms("db.old", "spark")["parameters"]["view.query.out.col.0"] == "id"
    store.alter_view("db.old", ViewChange.update_representation("spark", "SELECT id AS a FROM t"))
    assert store.export_hms("db.old", "spark")["parameters"]["view.query.out.col.0"] == "a"


def test_query_output_names_whose_sql_is_unknown_are_not_written_back(store):
    """A view imported by an earlier release and then through Iceberg, which keeps only the latest
    versions: version 1, whose SQL the names were recorded with, is gone."""
    version = ViewVersion(version_id=4, timestamp_ms=1000, schema_id=0, columns=(Column("a", "long"),),
                          representations=(SQLRepresentation("spark", "SELECT id AS a FROM t"),),
                          default_namespace=("db",))
    store.import_view("db.trimmed", source="test", versions=[version],
                      version_log=[VersionLogEntry(timestamp_ms=1000, version_id=4)], current_version_id=4,
                      properties={"spark.sql.create.version": "4.3.0", "view.query.out.numCols": "1",
                                  "view.query.out.col.0": "id"})
    assert store.export_hms("db.trimmed", "spark")["parameters"]["view.query.out.col.0"] == "a"


def test_an_iceberg_views_own_owner_wins_over_the_metastores(store, tmp_path):
    metadata = load("iceberg-core-ValidViewMetadata.json")["metadata"]
    metadata["properties"] = {**metadata.get("properties", {}), "owner": "alice"}
    path = tmp_path / "m.metadata.json"
    path.write_text(json.dumps(metadata))
    view = store.import_hms(iceberg_record(str(path)))  # the record's owner is ivan
    assert view.properties["owner"] == "alice"
    assert json.loads(store.export_iceberg("db.iv").read_text())["properties"]["owner"] == "alice"
