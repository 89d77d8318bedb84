"""Spark views: schema JSON, catalog and namespace, view.* parameters, and the Spark 4.3 layout."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from viewstore import ViewChange, formats
from viewstore.errors import ValidationError
from viewstore.formats import ViewDefinition, spark
from viewstore.formats.base import sql_digest
from viewstore.model import Column, SQLRepresentation
from viewstore.types import parse_type

CAPTURED = json.loads((Path(__file__).parent / "data" / "spark-4.3-hms-views.json").read_text(encoding="utf-8"))
RECORDS = CAPTURED["records"]
#: more records captured the same way: collations, char/varchar in a struct, void, time, schema modes
TYPED = json.loads((Path(__file__).parent / "data" / "spark-4.3-hms-views-types.json").read_text(
    encoding="utf-8"))["records"]


def schema(*fields: dict) -> str:
    return json.dumps({"type": "struct", "fields": list(fields)}, separators=(",", ":"))


def field(name: str, type_, nullable: bool = True, **metadata) -> dict:
    return {"name": name, "type": type_, "nullable": nullable, "metadata": metadata}


def record(schema_json: str | None = None, **parameters) -> dict:
    params = {"spark.sql.create.version": "3.5.3", **parameters}
    if schema_json is not None:
        params["spark.sql.sources.schema"] = schema_json
    return {"tableType": "VIRTUAL_VIEW", "parameters": params, "viewOriginalText": "SELECT 1 AS a",
            "viewExpandedText": "SELECT 1 AS a"}


@pytest.mark.parametrize("spark_type, iceberg", [
    ("boolean", "boolean"), ("byte", "int"), ("short", "int"), ("integer", "int"), ("long", "long"),
    ("float", "float"), ("double", "double"), ("date", "date"), ("string", "string"), ("binary", "binary"),
    ("timestamp", "timestamptz"), ("timestamp_ntz", "timestamp"), ("decimal(10,2)", "decimal(10,2)"),
    ("decimal", "decimal(10,0)"), ("void", "unknown"), ("variant", "variant"), ("time(6)", "time"),
    ("string collate UTF8_LCASE", "string"), ("char(3)", "string"),
    ({"type": "array", "elementType": "integer", "containsNull": False}, "list<int not null>"),
    ({"type": "array", "elementType": "integer"}, "list<int>"),  # containsNull left out: nulls allowed
    ({"type": "map", "keyType": "string", "valueType": "long", "valueContainsNull": True}, "map<string, long>"),
    ({"type": "struct", "fields": [field("x", "integer", False, comment="xc"), field("y", "string")]},
     "struct<x: int not null comment 'xc', y: string>"),
])
def test_json_types(spark_type, iceberg):
    assert str(spark.iceberg_type(spark_type)) == iceberg


@pytest.mark.parametrize("spark_type, reason", [
    ("interval day to second", "'interval' has no Iceberg equivalent"),
    ("calendarinterval", "'calendarinterval'"),
    ({"type": "udt", "class": "x"}, "'udt' has no Iceberg equivalent"),
    ({"type": "array"}, "missing 'elementType'"),
    # fields that are no list: they were read as a list's items (a string's characters), or TypeError's
    # text was given as what is missing
    ({"type": "struct", "fields": None}, r"^parameters\.spark\.sql\.sources\.schema\.fields\[0\]\.type\.fields: "
                                         r"must be a list of fields, not None$"),
    ({"type": "struct", "fields": "ab"}, r"\.type\.fields: must be a list of fields, not 'ab'$"),
    ({"type": "array", "elementType": "integer", "containsNull": "yes"}, "containsNull"),
    (7, "a Spark type must be a string or an object"),
    ("decimal(40,2)", "precision of 1-38"),
    ("decimal(5,7)", "a scale of 0-precision"),
    ("string(5)", "Spark type 'string' takes no parameters"),
    ("integer collate UTF8_LCASE", "unexpected 'collate'"),
    ({"type": "struct", "fields": [field("a", "integer"), field("A", "long")]},
     r"fields\[1\]\.name: duplicate field 'A'"),
])
def test_bad_json_types(spark_type, reason):
    with pytest.raises(ValidationError, match=reason):
        spark.iceberg_type(spark_type, "parameters.spark.sql.sources.schema.fields[0].type")


def test_decode_schema_json_keeps_case_comments_and_nullability():
    table = record(schema(field("Id", "long", False), field("name", "string", comment="customer name"),
                          field("c", "string", __CHAR_VARCHAR_TYPE_STRING="char(5)"),
                          field("t", "byte"),
                          field("s", {"type": "struct", "fields": [field("a b", "integer")]})))
    definition = formats.decode(table)
    assert [(c.name, str(c.type), c.comment, c.nullable) for c in definition.columns] == [
        ("Id", "long", None, False), ("name", "string", "customer name", True), ("c", "string", None, True),
        ("t", "int", None, True), ("s", "struct<`a b`: int>", None, True)]
    assert definition.engine_types == ("bigint", "string", "char(5)", "tinyint", "struct<`a b`:int>")
    assert spark.FIELDS_KEY not in definition.properties  # the types and metadata say all there is


@pytest.mark.parametrize("schema_json, reason", [
    ("{not json", "parameters.spark.sql.sources.schema: the Spark schema is not valid JSON"),
    ('{"type": "array"}', "must be a JSON struct type"),
    (json.dumps({"type": "map", "fields": [field("a", "long")]}), "must be a JSON struct type"),
    ('{"type": "struct", "fields": []}', "has no fields"),
    (schema({"type": "long"}), r"fields\[0\]\.name"),
    (schema({"name": "a"}), r"fields\[0\]\.type: is missing"),
    (schema(7), r"fields\[0\]: a Spark struct field must be a JSON object$"),
    (schema(field("a", "long") | {"nullable": "yes"}), r"fields\[0\]\.nullable: must be true or false, not 'yes'$"),
    (schema(field("a", "long", metadata_is="odd") | {"metadata": []}), r"fields\[0\]\.metadata"),
    (schema(field("a", "long", comment=3)), r"fields\[0\]\.metadata\.comment"),
    (schema(field("a", "interval year to month")), r"fields\[0\]\.type: .*interval"),
])
def test_bad_schema_json_names_the_field(schema_json, reason):
    with pytest.raises(ValidationError, match=reason):
        formats.decode(record(schema_json))


def test_split_schema_parts_are_joined_in_numeric_order():
    text = schema(field("a", "long"), field("b", "string"))
    parts = [text[i:i + 7] for i in range(0, len(text), 7)]
    assert len(parts) > 10  # so part.10 sorts before part.2 as text
    params = {"spark.sql.sources.schema.numParts": str(len(parts)),
              **{f"spark.sql.sources.schema.part.{i}": p for i, p in enumerate(parts)}}
    assert spark.schema_json(params) == text
    assert [c.name for c in formats.decode(record(**params)).columns] == ["a", "b"]
    with pytest.raises(ValidationError, match=r"schema\.numParts: must be a count"):
        spark.schema_json({"spark.sql.sources.schema.numParts": "x"})
    # Spark reads the single key first, as CatalogTable.readLargeTableProp does
    both = {**params, "spark.sql.sources.schema": schema(field("c", "integer"))}
    assert [c.name for c in formats.decode(record(**both)).columns] == ["c"]


def test_without_schema_json_the_hive_columns_are_read_as_spark_reads_them():
    table = record(None)
    table["sd"] = {"cols": [{"name": "ts", "type": "timestamp", "comment": "when"},
                            {"name": "m", "type": "map<string,array<int>>", "comment": None}]}
    definition = formats.decode(table)
    assert [(c.name, str(c.type), c.comment) for c in definition.columns] == [
        ("ts", "timestamptz", "when"), ("m", "map<string, list<int>>", None)]
    assert definition.engine_types == ("timestamp", "map<string,array<int>>")


def test_the_placeholder_columns_are_not_a_schema():
    table = record(None)
    table["sd"] = {"cols": [dict(spark.PLACEHOLDER_COLUMN)]}
    with pytest.raises(ValidationError, match="parameters.spark.sql.sources.schema: a Spark view needs its schema"):
        formats.decode(table)


@pytest.mark.parametrize("parameters, catalog, namespace", [
    ({"view.catalogAndNamespace.numParts": "3", "view.catalogAndNamespace.part.0": "cat",
      "view.catalogAndNamespace.part.1": "a", "view.catalogAndNamespace.part.2": "b"}, "cat", ("a", "b")),
    ({"view.default.database": "db2"}, "spark_catalog", ("db2",)),
    ({}, None, ()),
])
def test_catalog_and_namespace(parameters, catalog, namespace):
    definition = formats.decode(record(schema(field("a", "long")), **parameters))
    assert (definition.default_catalog, definition.default_namespace) == (catalog, namespace)
    assert not any(key.startswith(("view.catalogAndNamespace", "view.default")) for key in definition.properties)


@pytest.mark.parametrize("parameters, reason", [
    ({"view.catalogAndNamespace.numParts": "2", "view.catalogAndNamespace.part.0": "c"},
     r"view\.catalogAndNamespace\.part\.1: is missing"),
    ({"view.query.out.numCols": "1"}, r"view\.query\.out\.col\.0: is missing"),
    ({"view.schemaMode": "LOOSE"}, r"view\.schemaMode: is 'LOOSE'"),
    # counts of thousands of digits raised int()'s ValueError; Spark reads them as Java ints
    ({"view.catalogAndNamespace.numParts": "9" * 5000},
     r"view\.catalogAndNamespace\.numParts: must be a count Spark can read: the number 9{20}\.\.\. is larger"),
    ({"view.query.out.numCols": "2147483648"}, r"view\.query\.out\.numCols: .* 2147483648 is larger than 2147483647"),
    # Spark reads a count with Java's Integer.parseInt, which refuses surrounding spaces
    ({"view.query.out.numCols": " 1", "view.query.out.col.0": "x"}, r"view\.query\.out\.numCols: must be a count"),
    ({"view.query.out.numCols": "\u00b2", "view.query.out.col.0": "x"}, r"view\.query\.out\.numCols: must be a count"),
])
def test_incomplete_view_parameters(parameters, reason):
    with pytest.raises(ValidationError, match=reason):
        formats.decode(record(schema(field("a", "long")), **parameters))


def test_a_split_schema_of_more_parts_than_spark_can_count_is_a_validation_error():
    with pytest.raises(ValidationError, match=r"spark\.sql\.sources\.schema\.numParts: must be a count Spark can "
                                              r"read: the number 9{20}\.\.\. is larger than 2147483647"):
        formats.decode(record(**{"spark.sql.sources.schema.numParts": "9" * 5000}))


def test_a_decimal_without_parameters_is_sparks_default_decimal():
    """Spark reads the JSON type "decimal" as DecimalType.USER_DEFAULT, decimal(10,0), and spells it so."""
    definition = formats.decode(record(schema(field("d", "decimal"))))
    assert (str(definition.columns[0].type), definition.engine_types) == ("decimal(10,0)", ("decimal(10,0)",))


def test_a_spark_22_view_altered_by_a_later_spark_is_not_an_altered_hive_view():
    """Spark 2.2 recorded a view's database in view.default.database but no create version, which a
    later Spark's ALTER fills in as "2.2 or prior". Only Spark writes that key: the view is Spark's."""
    table = record(schema(field("a", "long")), **{"spark.sql.create.version": "2.2 or prior",
                                                   "view.default.database": "db"})
    definition = formats.decode(table)
    assert not spark.is_altered_hive_view(table["parameters"]) and not spark.is_altered_hive_view(definition)
    assert spark.ALTERED_HIVE_VIEW_KEY not in definition.properties
    assert (definition.default_catalog, definition.default_namespace) == ("spark_catalog", ("db",))


def test_accessors_for_the_kept_parameters():
    definition = formats.decode(record(
        schema(field("a", "long")), **{"view.sqlConfig.spark.sql.ansi.enabled": "false",
                                       "view.query.out.numCols": "1", "view.query.out.col.0": "x"}))
    assert spark.sql_configs(definition) == {"spark.sql.ansi.enabled": "false"}
    assert spark.query_output_columns(definition) == ("x",)
    assert spark.schema_mode(definition) == "BINDING"


# --------------------------------------------------------------------------------------------
# Records captured from Spark 4.3


def test_the_captured_records_are_all_there():
    """The tests below run once for each record: a data file that lost some would run fewer."""
    assert sorted(RECORDS) == ["v_all", "v_customers", "v_evo", "v_hivecompat", "v_nn"]
    assert sorted(TYPED) == ["v_binding", "v_collate", "v_evo", "v_interval", "v_null", "v_rename", "v_struct",
                             "v_time", "v_typeevo", "v_types"]


@pytest.mark.parametrize("name", sorted(RECORDS))
def test_captured_spark_records_are_written_back_exactly(name):
    table = RECORDS[name]
    assert formats.detect(table) == "spark"
    definition = formats.decode(table)
    assert formats.encode(definition, "spark") == table


@pytest.mark.parametrize("name", sorted(set(TYPED) - {"v_interval"}))
def test_more_captured_spark_records_are_written_back_exactly(name):
    """Among them a collation (only in the field metadata), a char(3) nested in a struct (sd.cols has
    it as string, as Spark writes it) and a void column (which Hive's sd.cols holds)."""
    table = TYPED[name]
    assert formats.detect(table) == "spark"
    assert formats.encode(formats.decode(table), "spark") == table


def test_an_interval_column_is_refused_as_spark_records_it():
    with pytest.raises(ValidationError, match="interval"):
        formats.decode(TYPED["v_interval"])


def test_a_collation_is_written_back_while_the_column_keeps_its_type(store):
    def field_of(record, name):
        return next(f for f in json.loads(record["parameters"]["spark.sql.sources.schema"])["fields"]
                    if f["name"] == name)

    view = store.import_hms(TYPED["v_collate"])
    assert view.properties[spark.FIELDS_KEY] == \
        '[["sl","string",{"__COLLATIONS":{"sl":"spark.UTF8_LCASE"}}],null]'  # only what the type cannot say
    store.alter_view("d1.v_collate", ViewChange.set_property("team", "x"))
    assert field_of(store.export_hms("d1.v_collate", "spark"), "sl")["metadata"] == {
        "__COLLATIONS": {"sl": "spark.UTF8_LCASE"}}
    columns = [Column("sl", "string", "lower-cased"), Column("id", "long")]
    store.replace_view("d1.v_collate", columns=columns, representations=view.representations,
                       default_namespace=view.default_namespace, default_catalog=view.default_catalog)
    assert field_of(store.export_hms("d1.v_collate", "spark"), "sl")["metadata"] == {
        "__COLLATIONS": {"sl": "spark.UTF8_LCASE"}, "comment": "lower-cased"}  # a new comment keeps it
    columns = [Column("lower_s", "string"), Column("id", "long")]  # renamed: Spark keys it by the new name
    store.replace_view("d1.v_collate", columns=columns, representations=view.representations,
                       default_namespace=view.default_namespace, default_catalog=view.default_catalog)
    assert field_of(store.export_hms("d1.v_collate", "spark"), "lower_s")["metadata"] == {
        "__COLLATIONS": {"lower_s": "spark.UTF8_LCASE"}}
    columns = [Column("sl", "int"), Column("id", "long")]
    store.replace_view("d1.v_collate", columns=columns, representations=[("spark", "SELECT 1 AS sl, id FROM t")],
                       default_namespace=view.default_namespace, default_catalog=view.default_catalog)
    assert field_of(store.export_hms("d1.v_collate", "spark"), "sl") == {
        "name": "sl", "type": "integer", "nullable": True, "metadata": {}}  # another type: not a collation


def test_the_spark_schema_a_spark_session_recorded_is_written_to_the_metastore():
    """Views made in Spark (the catalog plugin, viewstore.spark.sql) record Spark's schema JSON in the
    summary when the Iceberg columns lose part of it; a Spark record of the view keeps that part."""
    schema = {"type": "struct", "fields": [
        {"name": "s", "type": "string", "nullable": True, "metadata": {"__COLLATIONS": {"s": "spark.UTF8_LCASE"}}},
        {"name": "c", "type": "char(3)", "nullable": True, "metadata": {"comment": "old"}},
        {"name": "b", "type": "byte", "nullable": True, "metadata": {}},
        {"name": "n", "type": {"type": "struct", "fields": [{"name": "x", "type": "varchar(2)", "nullable": True,
                                                              "metadata": {}}]}, "nullable": True, "metadata": {}}]}
    columns = (Column("s", "string"), Column("c", "string", "a char"), Column("b", "int"),
               Column("n", "struct<x: string>"))
    definition = fresh(columns=columns, summary={spark.SPARK_SCHEMA: json.dumps(schema)})
    record = spark.encode(definition)
    fields = json.loads(record["parameters"]["spark.sql.sources.schema"])["fields"]
    assert fields[0] == schema["fields"][0]
    assert fields[1] == {"name": "c", "type": "string", "nullable": True,
                         "metadata": {"comment": "a char", "__CHAR_VARCHAR_TYPE_STRING": "char(3)"}}
    assert fields[2]["type"] == "byte"
    assert fields[3]["type"] == {"type": "struct", "fields": [  # a nested char is not brought over
        {"name": "x", "type": "string", "nullable": True, "metadata": {}}]}
    assert [c["type"] for c in record["sd"]["cols"]] == ["string", "char(3)", "tinyint", "struct<x:string>"]
    schema["fields"][1]["type"] = "varchar(4)"
    varchar = fresh(columns=columns, summary={spark.SPARK_SCHEMA: json.dumps(schema)})
    assert _written_fields(varchar)[1] == {"name": "c", "type": "string", "nullable": True, "metadata": {
        "comment": "a char", "__CHAR_VARCHAR_TYPE_STRING": "varchar(4)"}}
    retyped = fresh(columns=(Column("s", "int"), *columns[1:]), summary=definition.summary)
    assert json.loads(spark.encode(retyped)["parameters"]["spark.sql.sources.schema"])["fields"][0] == {
        "name": "s", "type": "integer", "nullable": True, "metadata": {}}  # the recorded one no longer fits
    widened = fresh(columns=(*columns, Column("e", "int")), summary=definition.summary)
    assert _written_fields(widened)[0]["metadata"] == {}  # recorded for four columns, not five


_SUMMARY_S = '{"name":"s","type":"string","nullable":true,"metadata":{"__COLLATIONS":{"s":"icu.UNICODE"}}}'


@pytest.mark.parametrize("damaged", [
    '{"type":"struct","fields":[' + _SUMMARY_S + ',{"name":"t","type":"integer","nullable":true,"metadata":{}}',
    '[' + _SUMMARY_S + ',{"name":"t","type":"integer","nullable":true,"metadata":{}}]',  # no struct
    '{"type":"struct","fields":[' + _SUMMARY_S + ']}',  # one field for two columns
    '{"type":"struct","fields":[' + _SUMMARY_S + ',"t"]}',
    '{"type":"struct","fields":[' + _SUMMARY_S + ',{"name":1,"type":"integer"}]}',
    '{"type":"struct","fields":[' + _SUMMARY_S + ',{"name":"t","type":"integer","metadata":[]}]}'])
def test_a_spark_schema_in_the_summary_that_does_not_fit_leaves_what_an_import_kept(damaged):
    """A version's Spark schema that is no JSON, no struct of one field object per column, is not
    used, not even its fields that would fit: what an import kept is written, as when the summary
    has none."""
    imported = '[["s","string",{"__COLLATIONS":{"s":"spark.UTF8_LCASE"}}],null]'
    definition = fresh(columns=(Column("s", "string"), Column("t", "int")), properties={spark.FIELDS_KEY: imported},
                       summary={spark.SPARK_SCHEMA: damaged})
    assert _written_fields(definition) == [
        {"name": "s", "type": "string", "nullable": True, "metadata": {"__COLLATIONS": {"s": "spark.UTF8_LCASE"}}},
        {"name": "t", "type": "integer", "nullable": True, "metadata": {}}]


def _written_fields(definition):
    return json.loads(spark.encode(definition)["parameters"]["spark.sql.sources.schema"])["fields"]


def test_the_versions_spark_schema_wins_over_what_an_import_kept():
    """A view imported from a metastore (hms.spark.fields) and then changed in Spark (spark.schema in
    the new version's summary): the version's schema is the current one."""
    imported = '[["s","string",{"__COLLATIONS":{"s":"spark.UTF8_LCASE"}}]]'
    now = {"type": "struct", "fields": [{"name": "s", "type": "string", "nullable": True,
                                         "metadata": {"__COLLATIONS": {"s": "icu.UNICODE"}}}]}
    definition = fresh(columns=(Column("s", "string"),), properties={spark.FIELDS_KEY: imported},
                       summary={spark.SPARK_SCHEMA: json.dumps(now)})
    assert _written_fields(definition)[0]["metadata"] == {"__COLLATIONS": {"s": "icu.UNICODE"}}
    assert _written_fields(fresh(columns=(Column("s", "string"),), properties={spark.FIELDS_KEY: imported}))[0][
        "metadata"] == {"__COLLATIONS": {"s": "spark.UTF8_LCASE"}}


def test_a_kept_collation_stays_with_its_column_when_columns_move():
    recorded = '[["sl","string",{"__COLLATIONS":{"sl":"spark.UTF8_LCASE"}}],null]'
    swapped = fresh(columns=(Column("plain", "string"), Column("sl", "string")),
                    properties={spark.FIELDS_KEY: recorded})
    assert [f["metadata"] for f in _written_fields(swapped)] == [{}, {"__COLLATIONS": {"sl": "spark.UTF8_LCASE"}}]
    renamed = fresh(columns=(Column("lower_s", "string"), Column("plain", "string")),
                    properties={spark.FIELDS_KEY: recorded})  # sl is gone: its place's column took its name
    assert [f["metadata"] for f in _written_fields(renamed)] == [{"__COLLATIONS": {"lower_s": "spark.UTF8_LCASE"}}, {}]


@pytest.mark.parametrize("recorded", [
    '[["a",{"type":"array","elementType":"integer","containsNull":true},'
    '{"__COLLATIONS":{"a.element":"spark.UTF8_LCASE"}}]]',
    '[["a","string",{"__COLLATIONS":{"a":"UTF8_LCASE"}}]]',
    '[["a","string",{"__COLLATIONS":{"a.element":"icu.UNICODE"}}]]',
    '[["a","string",{"__COLLATIONS":{"b":"spark.UTF8_LCASE"}}]]',
    '[["a","string",{"__COLLATIONS":{"a":"spark."}}]]',  # a provider without a collation name
    # a path that only begins with the field's name, one character short of a dot
    '[["a",{"type":"array","elementType":"string","containsNull":true},'
    '{"__COLLATIONS":{"a_element":"spark.UTF8_LCASE"}}]]',
    '[["a","string",{"__COLLATIONS":{"a":"spark.UTF8_LCASE"}}],null]'])  # kept for two columns, not one
def test_collations_that_do_not_fit_the_type_are_not_written(recorded):
    type_ = ("list<string>" if "a_element" in recorded else "list<int>") if "array" in recorded else "string"
    field_ = _written_fields(fresh(columns=(Column("a", type_),), properties={spark.FIELDS_KEY: recorded}))[0]
    assert field_["metadata"] == {}


def test_a_nested_fields_collation_is_checked_too():
    """Spark keeps a struct field's collation in that field's own metadata."""
    def recorded(field_type):
        return json.dumps([["st", {"type": "struct", "fields": [
            {"name": "f", "type": field_type, "nullable": True,
             "metadata": {"__COLLATIONS": {"f": "spark.UTF8_LCASE"}}}]}, {}]])

    good = fresh(columns=(Column("st", "struct<f: string>"),), properties={spark.FIELDS_KEY: recorded("string")})
    assert _written_fields(good)[0]["type"]["fields"][0]["metadata"] == {"__COLLATIONS": {"f": "spark.UTF8_LCASE"}}
    bad = fresh(columns=(Column("st", "struct<f: int>"),), properties={spark.FIELDS_KEY: recorded("integer")})
    assert _written_fields(bad)[0]["type"]["fields"][0]["metadata"] == {}
    inner = json.loads(recorded("integer"))[0][1]
    deeper = json.dumps([["o", {"type": "struct", "fields": [field("st", inner)]}, {}]])
    written = _written_fields(fresh(columns=(Column("o", "struct<st: struct<f: int>>"),),
                                    properties={spark.FIELDS_KEY: deeper}))
    assert written[0]["type"]["fields"][0]["type"]["fields"][0]["metadata"] == {}  # checked at any depth


def test_a_collation_on_an_array_element_is_written_back():
    recorded = ('[["a",{"type":"array","elementType":"string","containsNull":true},'
                '{"__COLLATIONS":{"a.element":"icu.UNICODE_CI"}}]]')
    field_ = _written_fields(fresh(columns=(Column("a", "list<string>"),), properties={spark.FIELDS_KEY: recorded}))[0]
    assert field_["metadata"] == {"__COLLATIONS": {"a.element": "icu.UNICODE_CI"}}


def test_a_kept_fields_comment_is_the_columns_comment_now():
    recorded = '[["a","string",{"__COLLATIONS":{"a":"spark.UTF8_LCASE"},"comment":"old"}]]'
    field_ = _written_fields(fresh(columns=(Column("a", "string"),), properties={spark.FIELDS_KEY: recorded}))[0]
    assert field_["metadata"] == {"__COLLATIONS": {"a": "spark.UTF8_LCASE"}}  # the comment was dropped since


def test_a_kept_char_type_is_written_only_for_a_string_column():
    recorded = '[["a","integer",{"__CHAR_VARCHAR_TYPE_STRING":"char(3)"}]]'
    out = spark.encode(fresh(columns=(Column("a", "int"),), properties={spark.FIELDS_KEY: recorded}))
    assert json.loads(out["parameters"]["spark.sql.sources.schema"])["fields"][0] == {
        "name": "a", "type": "integer", "nullable": True, "metadata": {}}
    assert out["sd"]["cols"][0]["type"] == "int"


def test_renamed_collations_rename_the_fields_paths_alone():
    collations = {"a": "spark.UTF8_LCASE", "a.element": "icu.UNICODE", "ab": "spark.UTF8_LCASE"}
    assert spark.renamed_collations(collations, "a", "b") == {
        "b": "spark.UTF8_LCASE", "b.element": "icu.UNICODE", "ab": "spark.UTF8_LCASE"}


@pytest.mark.parametrize("recorded", [
    '[["a","string",{"__CHAR_VARCHAR_TYPE_STRING":"char(x"}]]', '[["a","string",{"__CHAR_VARCHAR_TYPE_STRING":"int"}]]',
    '[["a","string",{"__COLLATIONS":["UTF8_LCASE"]}]]', '[["a",5,{}]]', '[["string",{}]]', '[["a","int",{}]]',
    '{"a":1}', '[["a","string",{"__COLLATIONS":{"a":"spark.UTF8_LCASE"}}', '[["a","string","spark.UTF8_LCASE"]]'])
def test_a_malformed_kept_field_is_not_written(recorded):
    """``hms.*`` properties can be set by hand like any other: what does not fit is left out."""
    definition = fresh(properties={spark.FIELDS_KEY: recorded}, columns=(Column("a", "string"),))
    field_ = json.loads(spark.encode(definition)["parameters"]["spark.sql.sources.schema"])["fields"][0]
    assert field_ == {"name": "a", "type": "string", "nullable": True, "metadata": {}}


def test_captured_record_types():
    definition = formats.decode(RECORDS["v_all"])
    assert [(c.name, str(c.type), c.comment) for c in definition.columns] == [
        ("Id", "long", "the id"), ("nm", "string", "customer name"), ("ts", "timestamptz", None),
        ("ntz", "timestamp", None), ("d", "decimal(10,2)", None), ("a", "list<int>", None),
        ("m", "map<string, int>", None), ("s", "struct<x: int comment 'xc', y: string>", None),
        ("c", "string", None), ("v", "string", None)]
    assert definition.engine_types[-2:] == ("char(5)", "varchar(20)")
    assert spark.query_output_columns(definition)[:2] == ("Id", "name")  # before the column list renamed it
    assert definition.properties["k1"] == "v1"
    nn = formats.decode(RECORDS["v_nn"])
    assert [(c.name, str(c.type), c.nullable) for c in nn.columns] == [
        ("Id", "long", True), ("nn", "long", False), ("arr", "list<int not null>", False),
        ("st", "struct<p: int not null, q: string>", False)]
    assert spark.query_output_columns(formats.decode(RECORDS["v_evo"])) == ()
    assert spark.schema_mode(formats.decode(RECORDS["v_evo"])) == "EVOLUTION"


def fresh(**changes) -> ViewDefinition:
    """A definition that did not come from Spark (no spark.sql.create.version property)."""
    base = dict(dialect="spark", sql="SELECT Id, name FROM customers",
                columns=(Column("Id", "long"), Column("name", "string", "customer name")),
                comment="customers view", default_catalog="spark_catalog", default_namespace=("sales",),
                owner="root", database="sales", name="v_customers")
    return ViewDefinition(**{**base, **changes})


def test_a_fresh_definition_is_written_as_spark_43_writes_it():
    written = RECORDS["v_customers"]
    out = formats.encode(fresh(), "spark")
    session_configs = {k: v for k, v in written["parameters"].items() if k.startswith("view.sqlConfig.")}
    assert out["parameters"] == {k: v for k, v in written["parameters"].items() if k not in session_configs}
    assert {k: v for k, v in out.items() if k != "parameters"} == {
        k: v for k, v in written.items() if k != "parameters"}


@pytest.mark.parametrize("type_, spark_type", [
    ("timestamp", "timestamp_ntz"), ("variant", "variant"),
    ("map<timestamp, int>", {"type": "map", "keyType": "timestamp_ntz", "valueType": "integer",
                             "valueContainsNull": True})])
def test_a_schema_hive_cannot_hold_gets_the_placeholder_columns(type_, spark_type):
    out = formats.encode(fresh(columns=(Column("c", type_),)), "spark")
    assert out["sd"]["cols"] == [spark.PLACEHOLDER_COLUMN]
    assert json.loads(out["parameters"]["spark.sql.sources.schema"])["fields"][0]["type"] == spark_type


def test_recorded_narrow_types_are_written_back():
    kept = {"hms.spark.column-types": '["tinyint", "varchar(20)"]'}
    out = formats.encode(fresh(columns=(Column("t", "int"), Column("v", "string")), properties=kept), "spark")
    fields = json.loads(out["parameters"]["spark.sql.sources.schema"])["fields"]
    assert [f["type"] for f in fields] == ["byte", "string"]
    assert fields[1]["metadata"] == {"__CHAR_VARCHAR_TYPE_STRING": "varchar(20)"}
    assert [c["type"] for c in out["sd"]["cols"]] == ["tinyint", "varchar(20)"]
    assert formats.decode(out).engine_types == ("tinyint", "varchar(20)")


@pytest.mark.parametrize("kept", ['["char(x"]', '["struct<,a:int>"]', '["uniontype<int>"]'])
def test_a_recorded_type_that_is_no_spark_type_is_not_written(kept):
    """``hms.spark.column-types`` can be set by hand: a type string Spark cannot read gives way to the
    column's own type."""
    out = formats.encode(fresh(columns=(Column("v", "string"),), properties={"hms.spark.column-types": kept}), "spark")
    assert json.loads(out["parameters"]["spark.sql.sources.schema"])["fields"] == [
        {"name": "v", "type": "string", "nullable": True, "metadata": {}}]
    assert out["sd"]["cols"] == [{"name": "v", "type": "string", "comment": None}]


def test_a_long_schema_is_split_into_parts():
    columns = tuple(Column(f"column_with_a_long_name_{i:03}", "decimal(38,10)", "x" * 20) for i in range(60))
    out = formats.encode(fresh(columns=columns), "spark")
    params = out["parameters"]
    assert "spark.sql.sources.schema" not in params
    count = int(params["spark.sql.sources.schema.numParts"])
    assert count > 1 and all(len(params[f"spark.sql.sources.schema.part.{i}"]) <= 4000 for i in range(count))
    assert formats.decode(out).columns == columns


def test_query_output_names_follow_the_schema_mode():
    evolution = formats.encode(fresh(properties={"view.schemaMode": "EVOLUTION"}), "spark")["parameters"]
    assert not any(key.startswith("view.query.out") for key in evolution)
    stale = {"spark.sql.create.version": "3.5.3", "view.query.out.numCols": "1", "view.query.out.col.0": "old"}
    rewritten = formats.encode(fresh(properties=stale), "spark")["parameters"]
    assert (rewritten["view.query.out.numCols"], rewritten["view.query.out.col.1"]) == ("2", "name")
    assert "view.schemaMode" not in rewritten  # decoded from Spark 3.5: nothing is added


def test_query_output_names_are_the_recorded_query_columns_not_the_renamed_ones(store):
    """A column list renames the query's columns; Spark resolves the query's output by its own names."""
    renamed = dict(columns=[Column("ident", "long"), Column("amt", "decimal(10,2)")],
                   representations=[("spark", "SELECT id, amount FROM t")], default_namespace=["hx"])

    def query_out(identifier):
        return spark.query_output_columns(formats.decode(store.export_hms(identifier, "spark")))

    # the Spark catalog records them in the version summary, viewstore.spark.sql in a property
    store.create_view("hx.by_catalog", **renamed, summary={"spark.query-column-names": '["id","amount"]'})
    store.create_view("hx.by_sql", **renamed, properties={"spark.query-column-names": "id,amount"})
    store.create_view("hx.both", **renamed, summary={"spark.query-column-names": '["id","amount"]'},
                      properties={"spark.query-column-names": "old,names"})
    for name in ("by_catalog", "by_sql", "both"):
        assert query_out(f"hx.{name}") == ("id", "amount"), name
    # with nothing recorded, or nothing that fits the columns, the column names are all there is
    store.create_view("hx.plain", **renamed)
    store.create_view("hx.unfit", **renamed, summary={"spark.query-column-names": '["id"]'},
                      properties={"spark.query-column-names": "a,b,c"})
    assert query_out("hx.plain") == query_out("hx.unfit") == ("ident", "amt")
    # recorded names replace a list decoded from a record, which may predate the column list
    stale = {"spark.sql.create.version": "4.3.0", "view.query.out.numCols": "2",
             "view.query.out.col.0": "Id", "view.query.out.col.1": "name"}
    out = formats.encode(fresh(properties=stale, summary={"spark.query-column-names": '["a","b"]'}), "spark")
    assert spark.query_output_columns(formats.decode(out)) == ("a", "b")
    assert spark.query_output_columns(
        formats.decode(formats.encode(fresh(properties=stale), "spark"))) == ("Id", "name")
    # a list without the digest of its SQL (set by hand, or by a release that kept none) is written back
    # while it fits the columns; with the digest of another SQL it is stale
    undigested = {**stale, "view.query.out.col.0": "x", "view.query.out.col.1": "y"}
    out = formats.encode(fresh(properties=undigested), "spark")
    assert spark.query_output_columns(formats.decode(out)) == ("x", "y")
    other_sql = {**undigested, spark.QUERY_OUT_SQL_KEY: sql_digest("SELECT 2")}
    out = formats.encode(fresh(properties=other_sql), "spark")
    assert spark.query_output_columns(formats.decode(out)) == ("Id", "name")


@pytest.mark.parametrize("properties, summary", [
    ({"view.query.out.numCols": "2", "view.query.out.col.0": "x"}, {}),  # an incomplete list set by hand
    ({}, {"spark.query-column-names": '["x",""]'}),  # a name that is empty
    ({"spark.query-column-names": "x,"}, {}),
    ({}, {"spark.query-column-names": "x,y"}),  # names in the summary that are no JSON list
])
def test_query_output_names_that_are_no_names_are_not_written(properties, summary):
    out = formats.encode(fresh(properties=properties, summary=summary), "spark")
    assert spark.query_output_columns(formats.decode(out)) == ("Id", "name")


def test_sparks_own_parameters_stay_out_of_another_engines_record():
    table = record(schema(field("a", "integer")), **{"spark.sql.statistics.totalSize": "0", "k": "v"})
    assert spark.owns_parameter("spark.sql.statistics.totalSize") and not spark.owns_parameter("k")
    assert not spark.owns_parameter("spark.note")  # Spark writes spark.sql.* keys, not every spark.* one
    definition = formats.decode(table).model_copy(
        update={"other_representations": (SQLRepresentation("hive", "SELECT 1 AS a"),)})
    params = formats.encode(definition, "hive")["parameters"]
    assert "k" in params and not any(key.startswith("spark.") for key in params)


def test_a_namespace_without_catalog_goes_under_the_session_catalog():
    params = formats.encode(fresh(default_catalog=None), "spark")["parameters"]
    assert [params[f"view.catalogAndNamespace.part.{i}"] for i in range(2)] == ["spark_catalog", "sales"]
    none = formats.encode(fresh(default_catalog=None, default_namespace=()), "spark")["parameters"]
    assert not any(key.startswith("view.catalogAndNamespace") for key in none)
    # a catalog without a namespace is recorded alone, and reads back
    alone = formats.encode(fresh(default_catalog="cat", default_namespace=()), "spark")
    assert {k: v for k, v in alone["parameters"].items() if k.startswith("view.catalogAndNamespace")} == {
        "view.catalogAndNamespace.numParts": "1", "view.catalogAndNamespace.part.0": "cat"}
    assert (formats.decode(alone).default_catalog, formats.decode(alone).default_namespace) == ("cat", ())


def test_an_altered_hive_view_is_written_back_as_it_was():
    table = record(schema(field("key", "string")), **{"spark.sql.create.version": "2.2 or prior", "k": "v"})
    definition = formats.decode(table)
    assert spark.is_altered_hive_view(definition)
    out = formats.encode(definition, "spark")
    assert out["parameters"] == table["parameters"]
    assert formats.decode(out) == definition


@pytest.mark.parametrize("type_, reason", [("uuid", "uuid"), ("fixed[3]", "fixed"), ("timestamp_ns", "timestamp_ns")])
def test_types_spark_cannot_hold(type_, reason):
    with pytest.raises(ValidationError, match=rf"columns\[0\]\.type: Spark has no type for Iceberg {reason}"):
        formats.encode(fresh(columns=(Column("a", type_),)), "spark")
    with pytest.raises(ValidationError, match="columns: a Spark view needs at least one column"):
        formats.encode(fresh(columns=()), "spark")


def test_ddl_type_strings():
    assert spark.parse_type_string("struct<`a b`:int not null comment 'c', d:decimal(5,1)>") == {
        "type": "struct", "fields": [
            {"name": "a b", "type": "integer", "nullable": False, "metadata": {"comment": "c"}},
            {"name": "d", "type": "decimal(5,1)", "nullable": True, "metadata": {}}]}
    assert spark.engine_type(parse_type("map<string, list<timestamptz>>")) == "map<string,array<timestamp>>"
    with pytest.raises(ValidationError, match="unknown Spark type 'uniontype'"):
        spark.parse_type_string("uniontype<int,string>", "sd.cols[0].type")
    # Spark's DDL spellings: a field without a colon, numeric, real, timestamp_ltz
    assert spark.parse_type_string("struct<a int>") == {
        "type": "struct", "fields": [{"name": "a", "type": "integer", "nullable": True, "metadata": {}}]}
    assert [spark.parse_type_string(t) for t in ("numeric(5,2)", "real", "timestamp_ltz", "time(6)")] == [
        "decimal(5,2)", "float", "timestamp", "time(6)"]
    # a field name Hive keeps all digits, which the catalog string leaves unquoted
    assert spark.parse_type_string("struct<1:int>")["fields"][0]["name"] == "1"
    with pytest.raises(ValidationError, match="a comment must be a quoted string"):
        spark.parse_type_string("struct<a:int comment 5>")
    with pytest.raises(ValidationError, match=r"^type: expected a field name at position 7 in type 'struct<,a:int>'$"):
        spark.parse_type_string("struct<,a:int>")
    with pytest.raises(ValidationError,
                       match=r"^type: expected a type name at position 6, found '>' in type 'array<>'$"):
        spark.parse_type_string("array<>")
    with pytest.raises(ValidationError, match="unknown Spark type 'char'"):
        spark.parse_type_string("char(3,4)")


def test_a_field_name_with_a_back_quote_is_quoted_as_spark_quotes_it():
    """Spark's catalog string back-quotes a field name that is not a plain word and doubles a back
    quote inside it, so that the string reads back as the same type."""
    type_ = parse_type("struct<`a``b`: int>")
    assert spark.engine_type(type_) == "struct<`a``b`:int>"
    assert spark.engine_type(parse_type("struct<`1`: int, a1: int>")) == "struct<`1`:int,a1:int>"  # all digits
    assert spark.engine_type(parse_type("struct<`é`: int>")) == "struct<`é`:int>"  # a letter outside ASCII
    assert spark.iceberg_type(spark.parse_type_string(spark.engine_type(type_))) == type_


def test_the_expanded_text_is_written_back_only_with_the_sql_it_was_recorded_with():
    older = {**record(schema(field("a", "integer"))), "dbName": "db", "tableName": "v",
             "viewOriginalText": "SELECT 1 AS a", "viewExpandedText": "SELECT 1 AS `a`"}
    definition = formats.decode(older)
    same = formats.encode(definition, "spark")
    assert (same["viewOriginalText"], same["viewExpandedText"]) == ("SELECT 1 AS a", "SELECT 1 AS `a`")
    # Spark runs viewExpandedText: after the SQL changes, the old expanded text must not be written
    changed = formats.encode(definition.model_copy(update={"sql": "SELECT 2 AS a"}), "spark")
    assert (changed["viewOriginalText"], changed["viewExpandedText"]) == ("SELECT 2 AS a", "SELECT 2 AS a")
    # a kept text without the digest of its SQL cannot be shown to belong to it
    unproven = {k: v for k, v in definition.properties.items() if k != spark.EXPANDED_TEXT_KEY + "-sql"}
    out = formats.encode(definition.model_copy(update={"properties": unproven}), "spark")
    assert out["viewExpandedText"] == "SELECT 1 AS a"


def test_a_blank_original_text_gives_way_to_the_expanded_one():
    table = {**record(schema(field("a", "integer"))), "viewOriginalText": "  ", "viewExpandedText": "SELECT 1 AS a"}
    assert formats.decode(table).sql == "SELECT 1 AS a"


def test_spark_field_without_nullable_is_nullable():
    """A schema field without ``nullable`` is nullable, as in Spark, nested fields too."""
    schema = {"type": "struct", "fields": [
        {"name": "a", "type": "integer", "metadata": {}},
        {"name": "s", "type": {"type": "struct", "fields": [{"name": "x", "type": "long"}]}}]}
    record = {"tableType": "VIRTUAL_VIEW",
              "parameters": {"spark.sql.create.version": "3.5.3", "spark.sql.sources.schema": json.dumps(schema)},
              "viewOriginalText": "SELECT 1 AS a", "viewExpandedText": "SELECT 1 AS a"}
    definition = spark.decode(record)
    assert [c.nullable for c in definition.columns] == [True, True]
    assert definition.columns[1].type == parse_type("struct<x: long>")  # nested field not required


def _spark_definition(name_length: int) -> ViewDefinition:
    return ViewDefinition(dialect="spark", sql="SELECT 1", columns=(Column("a" * name_length, parse_type("string")),),
                          database="db", name="v")


def _schema_length(name_length: int) -> int:
    field = {"name": "a" * name_length, "type": "string", "nullable": True, "metadata": {}}
    return len(json.dumps({"type": "struct", "fields": [field]}, ensure_ascii=False, separators=(",", ":")))


def test_spark_splits_the_schema_only_above_the_threshold():
    """The schema is split into parts only when longer than the threshold, as Spark's
    ``CatalogTable.splitLargeTableProp`` does: a schema of exactly the threshold stays in one key."""
    n = spark.SCHEMA_LENGTH_THRESHOLD - _schema_length(0)
    assert _schema_length(n) == spark.SCHEMA_LENGTH_THRESHOLD
    params = spark.encode(_spark_definition(n))["parameters"]
    assert spark.SCHEMA in params and spark.SCHEMA_NUM_PARTS not in params
    assert len(params[spark.SCHEMA]) == spark.SCHEMA_LENGTH_THRESHOLD
    params = spark.encode(_spark_definition(n + 1))["parameters"]
    assert spark.SCHEMA not in params and params[spark.SCHEMA_NUM_PARTS] == "2"
    assert len(params[spark.SCHEMA_PART + "1"]) == 1
