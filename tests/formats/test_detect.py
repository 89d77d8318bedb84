"""Classifying HMS records, and the engine registry."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from viewstore import formats
from viewstore.errors import ValidationError, ViewStoreError


def view(**parameters: str) -> dict:
    return {"tableType": "VIRTUAL_VIEW", "parameters": parameters}


@pytest.mark.parametrize("parameters, engine", [
    ({"presto_view": "true", "comment": "Presto View"}, "trino"),
    ({"presto_view": "true", "comment": "PRESTO VIEW"}, "trino"),
    ({"spark.sql.create.version": "3.5.3"}, "spark"),
    ({"view.query.out.numCols": "0"}, "spark"),
    ({"view.default.database": "db"}, "spark"),
    ({"view.catalogAndNamespace.numParts": "1", "view.catalogAndNamespace.part.0": "c"}, "spark"),
    ({"spark.sql.sources.schema": "{}"}, "spark"),
    ({"is_generic": "true"}, "flink"),
    ({"is_generic": "TRUE"}, "flink"),  # Java's Boolean.parseBoolean ignores case
    ({"flink.connector": "datagen"}, "flink"),
    ({"is_generic": "false", "flink.connector": "datagen"}, "hive"),  # the flag decides when present
    ({"connector": "hive"}, "hive"),
    ({}, "hive"),
    ({"comment": "Presto View"}, "hive"),  # the comment alone is not Trino's marker
    ({"table_type": "ICEBERG-VIEW", "metadata_location": "s3://m.json"}, "iceberg"),
    ({"table_type": "iceberg-view", "metadata_location": "s3://m.json"}, "iceberg"),
    ({"table_type": "ICEBERG-VIEW", "spark.sql.create.version": "3.5.3"}, "iceberg"),  # Iceberg first
    ({"table_type": "ICEBERG-VIEW", "presto_view": "true", "comment": "Presto View"}, "iceberg"),
    ({"spark.sql.create.version": "3.5.3", "is_generic": "true"}, "spark"),  # Spark before Flink
    # Trino before Spark: Trino reads a record with its flag as its view, whatever else a Spark ALTER added
    ({"presto_view": "true", "comment": "Presto View", "spark.sql.create.version": "2.2 or prior"}, "trino"),
])
def test_detect(parameters, engine):
    assert formats.detect(view(**parameters)) == engine


@pytest.mark.parametrize("table, reason", [
    (view(presto_view="TRUE", comment="Presto View"), "presto_view: is 'TRUE'"),
    (view(presto_view="false", comment="Presto View"), "presto_view: is 'false'"),
    (view(presto_view="true", comment="Presto Materialized View"), "materialized view"),
    (view(presto_view="true", comment="presto materialized view"), "materialized view"),
    (view(presto_view="true"), "comment: is None"),
    (view(presto_view="true", comment="my view"), "comment: is 'my view'"),
    ({"tableType": "MATERIALIZED_VIEW", "parameters": {}}, "Hive materialized view"),
    ({"tableType": "MANAGED_TABLE", "parameters": {}}, "'MANAGED_TABLE' is not a view"),
    ({"tableType": "virtual_view", "parameters": {}}, "'virtual_view' is not a view"),  # Hive's types are upper case
    ({"parameters": {}}, "tableType: is missing"),
    ({"tableType": "VIRTUAL_VIEW", "parameters": {"a": 1}}, r"^parameters\.a: values must be strings, not 1$"),
    # the key is what is wrong: the message says so, where it read "..., not 'a'" of a string value
    ({"tableType": "VIRTUAL_VIEW", "parameters": {1: "a"}}, r"^parameters: keys must be strings, not 1$"),
    ({"tableType": "VIRTUAL_VIEW", "parameters": ["a"]}, "parameters: must be a map"),
    ("not a record", "table: an HMS table record must be a dict"),
    (SimpleNamespace(tableType="VIRTUAL_VIEW"), "table: an HMS table record must be a dict, not SimpleNamespace"),
])
def test_detect_rejects(table, reason):
    with pytest.raises(ValidationError, match=reason):
        formats.detect(table)


@pytest.mark.parametrize("table, kind", [
    ({"tableType": "MANAGED_TABLE", "parameters": {}}, "a MANAGED_TABLE"),
    ({"tableType": "EXTERNAL_TABLE"}, "a EXTERNAL_TABLE"),
    ({"tableType": "MATERIALIZED_VIEW", "parameters": {}}, "a MATERIALIZED_VIEW"),
    (view(presto_view="true", comment="PRESTO MATERIALIZED VIEW"), "a Trino materialized view"),
    (view(presto_view="true", comment="Presto View"), None),
    (view(presto_view="TRUE", comment="Presto Materialized View"), None),  # malformed: detect says why
    (view(), None),
    ({"parameters": {}}, None),
])
def test_not_a_view_names_the_objects_a_bulk_import_skips(table, kind):
    assert formats.not_a_view(table) == kind


def test_a_hive_view_altered_by_spark_is_spark_and_flagged():
    record = {"tableType": "VIRTUAL_VIEW", "viewOriginalText": "select `t`.`a` from `db`.`t`",
              "viewExpandedText": "select `t`.`a` from `db`.`t`",
              "parameters": {"spark.sql.create.version": "2.2 or prior",
                             "spark.sql.sources.schema": '{"type":"struct","fields":[{"name":"a","type":"integer"}]}'}}
    assert formats.detect(record) == "spark"
    definition = formats.decode(record)
    assert formats.spark.is_altered_hive_view(definition)
    assert definition.properties[formats.spark.ALTERED_HIVE_VIEW_KEY] == "true"
    created_by_spark = {**record, "parameters": {**record["parameters"], "view.query.out.numCols": "1",
                                                 "view.query.out.col.0": "a"}}
    assert not formats.spark.is_altered_hive_view(formats.decode(created_by_spark))


def test_detect_accepts_a_thrift_like_object():
    table = SimpleNamespace(
        tableType="VIRTUAL_VIEW", dbName="db", tableName="v", owner="o", viewOriginalText="SELECT 1 AS a",
        viewExpandedText="SELECT 1 AS `a`", parameters={"comment": "c"},
        sd=SimpleNamespace(cols=[SimpleNamespace(name="a", type="int", comment="the a")]))
    assert formats.detect(table) == "hive"
    engine, definition = formats.definition_from_table(table)
    assert (engine, definition.database, definition.name, definition.owner) == ("hive", "db", "v", "o")
    assert [(c.name, str(c.type), c.comment) for c in definition.columns] == [("a", "int", "the a")]
    table.partitionKeys = [SimpleNamespace(name="ds", type="string", comment=None)]  # a partitioned view's
    assert [c.name for c in formats.definition_from_table(table)[1].columns] == ["a", "ds"]


def test_a_thrift_like_object_without_a_storage_descriptor_is_read_from_its_parameters():
    schema = '{"type":"struct","fields":[{"name":"a","type":"integer","nullable":true,"metadata":{}}]}'
    table = SimpleNamespace(
        tableType="VIRTUAL_VIEW", dbName="db", tableName="v", owner="o", viewOriginalText="SELECT 1 AS a",
        viewExpandedText="SELECT 1 AS a", sd=None,
        parameters={"spark.sql.create.version": "4.0.0", "spark.sql.sources.schema": schema})
    engine, definition = formats.definition_from_table(table)
    assert (engine, definition.database, definition.name) == ("spark", "db", "v")
    assert [(c.name, str(c.type)) for c in definition.columns] == [("a", "int")]


def test_registry_is_an_explicit_dict_of_modules():
    assert list(formats.ENGINES) == ["trino", "spark", "flink", "hive", "iceberg"]
    for name, module in formats.ENGINES.items():
        assert module.NAME == name
        for function in ("claims", "owns_parameter", "decode", "encode"):
            assert callable(getattr(module, function))
    assert set(formats.DETECTION_ORDER) == set(formats.ENGINES)
    assert formats.DETECTION_ORDER[-1] == "hive"


def test_get_format():
    assert formats.get_format("spark") is formats.spark
    assert formats.get_format(" Trino ") is formats.trino
    with pytest.raises(ValidationError, match="^engine: must be a string, not int$"):
        formats.get_format(3)  # type: ignore[arg-type]


@pytest.mark.parametrize("name, suggestion", [("sprak", "spark"), ("trin", "trino"), ("icebreg", "iceberg"),
                                              ("flnk", "flink"), (" SPRAK ", "spark"), ("ice", "iceberg")])
def test_get_format_suggests_the_closest_name(name, suggestion):
    with pytest.raises(ValidationError) as caught:
        formats.get_format(name)
    assert str(caught.value) == (f"engine: unknown engine format {name!r}; did you mean {suggestion!r}? "
                                 "Known: trino, spark, flink, hive, iceberg")


def test_get_format_without_a_close_name_lists_the_known_ones():
    with pytest.raises(ValidationError) as caught:
        formats.get_format("postgres")
    assert str(caught.value) == "engine: unknown engine format 'postgres'. Known: trino, spark, flink, hive, iceberg"
    assert isinstance(caught.value, ViewStoreError)


def test_decode_rejects_metadata_for_a_view_that_is_not_iceberg():
    record = {"tableType": "VIRTUAL_VIEW", "viewOriginalText": "SELECT 1", "parameters": {},
              "sd": {"cols": [{"name": "a", "type": "int"}]}}
    with pytest.raises(ValidationError, match="only Iceberg views take a metadata document"):
        formats.decode(record, metadata={})


KEYS = ["presto_view", "comment", "spark.sql.create.version", "spark.sql.sources.schema",
        "spark.sql.sources.schema.numParts", "spark.sql.sources.schema.part.0", "view.catalogAndNamespace.numParts",
        "view.catalogAndNamespace.part.0", "view.default.database", "view.query.out.numCols", "view.query.out.col.0",
        "view.schemaMode", "is_generic", "flink.schema.0.name", "flink.schema.0.data-type", "flink.schema.1.name",
        "flink.generic.table.schema.0.name", "flink.comment", "table_type", "metadata_location", "uuid"]
VALUES = st.sampled_from(["true", "TRUE", "Presto View", "Presto Materialized View", "1", "2", "-1", "²", "",
                          "INT", "ROW<`a` INT", "{", '{"type":"struct","fields":[{"name":"a","type":"long"}]}',
                          "ICEBERG-VIEW", "EVOLUTION", "2.2 or prior"]) | st.text(max_size=6)
TEXTS = st.none() | st.sampled_from(["/* Presto View */", "/* Presto View: e30= */", "/* Presto View: eyJ */",
                                     "SELECT 1"]) | st.text(max_size=10) | st.integers()
COLUMNS = st.lists(st.fixed_dictionaries({"name": st.text(max_size=3) | st.none(),
                                          "type": st.sampled_from(["int", "struct<a:int>", "uniontype<int>", "x("])}),
                   max_size=2)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(KEYS), VALUES, max_size=6), TEXTS, TEXTS, COLUMNS | st.none(),
       st.sampled_from(["VIRTUAL_VIEW", "MATERIALIZED_VIEW", "EXTERNAL_TABLE"]))
def test_any_record_decodes_or_fails_with_a_viewstore_error(parameters, original, expanded, cols, table_type):
    table = {"tableType": table_type, "parameters": parameters, "viewOriginalText": original,
             "viewExpandedText": expanded, "sd": {"cols": cols}}
    try:
        engine, definition = formats.definition_from_table(table, metadata=None)
    except ViewStoreError:
        return
    assert engine in formats.ENGINES and isinstance(definition, formats.ViewDefinition)
