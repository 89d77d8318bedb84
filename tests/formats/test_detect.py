"""Classifying HMS records, and the engine registry."""

from __future__ import annotations

import json
import re
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


# Shaped like the classes hive_metastore's Thrift module generates (hive_metastore.ttypes): plain classes
# whose every field is an attribute, None when unset. The fields are the ones a view's record can hold.
class FieldSchema:
    def __init__(self, name=None, type=None, comment=None):
        self.name, self.type, self.comment = name, type, comment


class SerDeInfo:
    def __init__(self, name=None, serializationLib=None, parameters=None):
        self.name, self.serializationLib, self.parameters = name, serializationLib, parameters


class StorageDescriptor:
    def __init__(self, cols=None, location=None, inputFormat=None, outputFormat=None, compressed=None,
                 numBuckets=None, serdeInfo=None, bucketCols=None, sortCols=None, parameters=None):
        self.cols, self.location, self.inputFormat, self.outputFormat = cols, location, inputFormat, outputFormat
        self.compressed, self.numBuckets, self.serdeInfo = compressed, numBuckets, serdeInfo
        self.bucketCols, self.sortCols, self.parameters = bucketCols, sortCols, parameters


class Table:
    def __init__(self, tableName=None, dbName=None, owner=None, createTime=None, lastAccessTime=None, retention=None,
                 sd=None, partitionKeys=None, parameters=None, viewOriginalText=None, viewExpandedText=None,
                 tableType=None, temporary=False, catName=None):
        self.tableName, self.dbName, self.owner, self.createTime = tableName, dbName, owner, createTime
        self.lastAccessTime, self.retention, self.sd, self.partitionKeys = lastAccessTime, retention, sd, partitionKeys
        self.parameters, self.viewOriginalText, self.viewExpandedText = parameters, viewOriginalText, viewExpandedText
        self.tableType, self.temporary, self.catName = tableType, temporary, catName


def thrift_table(record: dict) -> Table:
    """The Thrift object of an HMS record dict (its notes, keys the Thrift Table has not, left out)."""
    def columns(cols):
        return None if cols is None else [FieldSchema(c.get("name"), c.get("type"), c.get("comment")) for c in cols]

    sd = record.get("sd")
    if sd is not None:
        serde = sd.get("serdeInfo")
        sd = StorageDescriptor(cols=columns(sd.get("cols")), location=sd.get("location"),
                               inputFormat=sd.get("inputFormat"), outputFormat=sd.get("outputFormat"),
                               serdeInfo=None if serde is None else SerDeInfo(
                                   serializationLib=serde.get("serializationLib"), parameters=serde.get("parameters")))
    fields = ("tableName", "dbName", "owner", "createTime", "lastAccessTime", "parameters", "viewOriginalText",
              "viewExpandedText", "tableType")
    return Table(sd=sd, partitionKeys=columns(record.get("partitionKeys")), **{k: record.get(k) for k in fields})


def _records(conformance, store):
    """Every HMS view record the codecs meet: each engine's own (encoded) and the conformance files'."""
    from viewstore import Column, SQLRepresentation

    view = store.create_view("db.v", columns=[Column("id", "bigint", "the id"), Column("name", "string")],
                             representations=[SQLRepresentation(d, "SELECT id, name FROM t")
                                              for d in ("spark", "trino", "hive", "flink")],
                             default_namespace=["db"], comment="c")
    records = {engine: formats.encode(view, engine) for engine in ("trino", "spark", "hive", "flink")}
    records["iceberg"] = formats.encode(view, "iceberg",
                                        metadata_location="file:/wh/db/v/metadata/00000-x.metadata.json")
    for path in sorted((conformance / "engine-views").glob("*.json")):
        table = json.loads(path.read_text(encoding="utf-8")).get("hms_table")
        if table is not None:
            records[path.name] = table
    return records


def test_a_thrift_object_is_the_record_its_dict_is_for_every_codec(conformance, store):
    """The record of a Thrift Table object held the storage descriptor's columns alone: its folder,
    formats and SerDe, which a record read from the metastore holds, were left out."""
    for name, record in _records(conformance, store).items():
        table = thrift_table(record)
        got = formats.base.as_record(table)
        for key, value in record.items():
            if key == "sd":
                for part, held in value.items():
                    if part == "cols":
                        assert got["sd"]["cols"] == [{"comment": None, **c} for c in held], name
                    elif part == "serdeInfo":
                        assert got["sd"]["serdeInfo"] == {"serializationLib": None, "parameters": None, **held}, name
                    elif not part.endswith("_note"):
                        assert got["sd"][part] == held, (name, part)
            elif key == "partitionKeys":
                assert got.get(key, []) == [{"comment": None, **c} for c in value], name
            elif hasattr(table, key):
                assert got[key] == value, (name, key)
        assert _outcome(formats.detect, table) == _outcome(formats.detect, record), name
        if _outcome(formats.detect, record) != "iceberg":  # (an Iceberg view's definition is in its file)
            assert _outcome(formats.decode, table) == _outcome(formats.decode, record), name


def _outcome(read, table):
    """What ``read(table)`` gives, or the ViewStoreError it raises (type and message)."""
    try:
        return read(table)
    except ViewStoreError as e:
        return type(e), str(e)


def test_a_thrift_object_with_a_folder_and_a_serde_carries_them_as_its_dict_does():
    record = {"tableType": "VIRTUAL_VIEW", "dbName": "db", "tableName": "v", "owner": "o", "createTime": 1700000000,
              "lastAccessTime": 0, "parameters": {"comment": "c"}, "viewOriginalText": "SELECT 1 AS a",
              "viewExpandedText": "SELECT 1 AS `a`", "partitionKeys": [],
              "sd": {"cols": [{"name": "a", "type": "int", "comment": None}], "location": "file:/wh/db/v",
                     "inputFormat": "org.apache.hadoop.mapred.TextInputFormat",
                     "outputFormat": "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
                     "serdeInfo": {"serializationLib": "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe",
                                   "parameters": {"serialization.format": "1"}}}}
    assert formats.base.as_record(thrift_table(record)) == record


@pytest.mark.parametrize("sd, cols, message", [
    (StorageDescriptor(cols=[object()]), [{}],
     "sd.cols[0].name: must be a non-empty string, not None"),  # no attributes
    (StorageDescriptor(cols=[FieldSchema("a", 5)]), [{"name": "a", "type": 5}],
     "sd.cols[0].type: must be a non-empty string, not 5"),
    (StorageDescriptor(cols=7), 7, "sd.cols: must be a list, not int"),
])
def test_a_thrift_object_of_the_wrong_shape_is_refused_as_its_dict_is(sd, cols, message):
    """A column without the attributes raised an AttributeError, and columns that are no list a TypeError."""
    fields = dict(tableType="VIRTUAL_VIEW", dbName="db", tableName="v", viewOriginalText="SELECT 1 AS a",
                  viewExpandedText="SELECT 1 AS a", parameters={})
    for record in (Table(sd=sd, **fields), {**fields, "sd": {"cols": cols}}):
        with pytest.raises(ValidationError, match=f"^{re.escape(message)}$"):
            formats.decode(record)
