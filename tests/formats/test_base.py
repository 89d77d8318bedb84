"""The shared definition model, the type tokenizer, and encoding the store's View."""

from __future__ import annotations

import pytest

from viewstore import formats
from viewstore.errors import ValidationError
from viewstore.formats import ViewDefinition
from viewstore.formats.base import (TypeTokens, definition_from_view, for_dialect, second_text, second_text_properties,
                                    strip_nested, text_of)
from viewstore.model import AuditInfo, Column, SQLRepresentation, View, ViewVersion
from viewstore.types import parse_type


def make_view(identifier=("sales", "v"), representations=(SQLRepresentation("spark", "SELECT 1 AS a"),),
              properties=None, security_mode="DEFINER") -> View:
    version = ViewVersion(version_id=1, timestamp_ms=1, schema_id=0, columns=(Column("a", "int", "an a"),),
                          representations=representations, default_catalog="spark_catalog",
                          default_namespace=("sales",), summary={"engine-name": "viewstore"})
    return View(identifier=identifier, uuid="u", properties=properties or {"comment": "c", "k": "v"},
                security_mode=security_mode, current_version_id=1, versions=(version,), version_log=(),
                audit=AuditInfo(creator="alice", create_time_ms=1, last_modifier="bob", last_modified_time_ms=2),
                stream_version=1)


def test_view_definition_validates_its_fields():
    with pytest.raises(ValidationError, match="properties: 'comment' belongs in the comment field"):
        ViewDefinition(dialect="spark", sql="SELECT 1", properties={"comment": "x"})
    with pytest.raises(ValidationError, match="sql: the view SQL must not be empty"):
        ViewDefinition(dialect="spark", sql="  ")
    with pytest.raises(ValidationError, match="dialect: must not be empty, begin or end with whitespace"):
        ViewDefinition(dialect=" spark", sql="SELECT 1")
    with pytest.raises(ValidationError, match="default_namespace: levels must be non-empty strings"):
        ViewDefinition(dialect="spark", sql="SELECT 1", default_namespace=["a", ""])
    with pytest.raises(ValidationError, match=r"^default_namespace: Input should be a valid tuple$"):
        ViewDefinition(dialect="spark", sql="SELECT 1", default_namespace="sales")  # not read as its letters
    with pytest.raises(ValidationError, match="security_mode"):
        ViewDefinition(dialect="spark", sql="SELECT 1", security_mode="OWNER")
    with pytest.raises(ValidationError, match="must have a string value"):
        ViewDefinition(dialect="spark", sql="SELECT 1", properties={"k": 1})
    with pytest.raises(ValidationError, match="bogus: Extra inputs are not permitted"):
        ViewDefinition(dialect="spark", sql="SELECT 1", bogus=1)
    with pytest.raises(ValidationError, match="must have a string value"):
        ViewDefinition(dialect="spark", sql="SELECT 1", summary={"engine-name": 1})
    with pytest.raises(ValidationError) as caught:  # every bad field is named, not the first only
        ViewDefinition(dialect=" spark", sql=" ")
    assert str(caught.value) == "dialect: must not be empty, begin or end with whitespace, not ' spark'; " \
                                "sql: the view SQL must not be empty"


def test_view_definition_is_frozen_and_normalises_lists():
    definition = ViewDefinition(dialect="spark", sql="SELECT 1", default_namespace=["a", "b"],
                                columns=[Column("a", "int")])
    assert definition.default_namespace == ("a", "b") and isinstance(definition.columns, tuple)
    with pytest.raises(ValueError, match="Instance is frozen"):  # pydantic's own error
        definition.sql = "SELECT 2"  # type: ignore[misc]
    assert definition.sql == "SELECT 1"


def test_engine_types_need_one_string_per_column():
    columns = (Column("a", "int"), Column("b", "string"))
    good = ViewDefinition(dialect="trino", sql="SELECT 1", columns=columns,
                          properties={"hms.trino.column-types": '["integer", "varchar(3)"]'})
    assert good.engine_types == ("integer", "varchar(3)")
    for raw in ('["integer"]', "not json", '{"a": 1}', '["integer", 3]', "[" * 100_000 + "]" * 100_000):
        other = good.model_copy(update={"properties": {"hms.trino.column-types": raw}})
        assert other.engine_types == ()
    assert good.model_copy(update={"dialect": "spark"}).engine_types == ()  # another engine's spellings


def test_engine_types_are_found_whatever_the_case_of_the_dialect():
    """A view whose SQL is in dialect ``Trino`` keeps its Trino type spellings under ``hms.trino.``."""
    definition = ViewDefinition(dialect="Trino", sql="SELECT 1", columns=(Column("a", "string"),),
                                properties={"hms.trino.column-types": '["varchar(3)"]'})
    assert definition.engine_types == ("varchar(3)",)


def test_a_record_may_be_any_mapping():
    """A record given as a read-only mapping is read as the dict it holds, not refused as no record."""
    from types import MappingProxyType

    record = formats.encode(ViewDefinition(dialect="hive", sql="SELECT 1 a", columns=(Column("a", "int"),),
                                           database="sales", name="v"), "hive")
    assert formats.detect(MappingProxyType(record)) == "hive"
    assert formats.decode(MappingProxyType(record)) == formats.decode(record)


def test_the_second_text_is_tied_to_the_very_sql_even_with_lone_surrogates():
    """Two SQL texts that differ in a lone surrogate only (a JSON record may hold one) have different digests."""
    kept = second_text_properties("hms.hive.original-text", "SELECT a FROM t", "SELECT '\ud800'")
    assert second_text(kept, "hms.hive.original-text", "SELECT '\ud800'") == "SELECT a FROM t"
    assert second_text(kept, "hms.hive.original-text", "SELECT '\udfff'") == "SELECT '\udfff'"


def test_a_field_of_a_part_of_the_record_is_named_whole():
    assert text_of({"location": "s3://x"}, "location", "sd.location") == "s3://x"
    with pytest.raises(ValidationError, match=r"^sd\.location: must be a string, not int$"):
        text_of({"location": 1}, "location", "sd.location")


def test_strip_nested_drops_the_nested_not_null_flags_and_comments_at_every_level():
    nested = parse_type("struct<a: list<struct<b: int not null comment 'x'>> not null, "
                        "m: map<string, struct<c: int not null>> not null comment 'y'>")
    assert strip_nested(nested) == parse_type("struct<a: list<struct<b: int>>, m: map<string, struct<c: int>>>")


def test_for_dialect_picks_the_representation():
    definition = ViewDefinition(dialect="spark", sql="SELECT 1",
                                other_representations=(SQLRepresentation("Trino", "SELECT 2"),))
    chosen = for_dialect(definition, "trino")
    assert (chosen.dialect, chosen.sql, chosen.other_representations) == ("Trino", "SELECT 2", ())
    with pytest.raises(ValidationError, match=r"^dialect: writing a hive view needs hive SQL, but the view only has: "
                       r"spark, Trino \(SQL is not translated between dialects: add the view's hive SQL first, with "
                       r"ViewChange.add_representation or 'viewstore alter IDENTIFIER --add-representation hive "
                       r"SQL'\)$"):
        for_dialect(definition, "hive")
    named = definition.model_copy(update={"database": "sales", "name": "v"})
    with pytest.raises(ValidationError, match=r"'viewstore alter sales.v --add-representation hive SQL'\)$"):
        for_dialect(named, "hive")


def test_definition_from_view():
    definition = definition_from_view(make_view(representations=(
        SQLRepresentation("spark", "SELECT 1 AS a"), SQLRepresentation("trino", "SELECT 1 a"))))
    assert (definition.dialect, definition.sql) == ("spark", "SELECT 1 AS a")
    assert definition.other_representations == (SQLRepresentation("trino", "SELECT 1 a"),)
    assert (definition.database, definition.name, definition.owner) == ("sales", "v", "alice")
    assert (definition.comment, definition.properties) == ("c", {"k": "v"})
    assert (definition.default_catalog, definition.default_namespace) == ("spark_catalog", ("sales",))
    assert definition.security_mode == "DEFINER" and definition.summary == {"engine-name": "viewstore"}
    with pytest.raises(ValidationError, match="identifier: the Hive metastore has one namespace level"):
        definition_from_view(make_view(identifier=("a", "b", "v")))
    with pytest.raises(ValidationError, match="but the view 'v' has 0$"):
        definition_from_view(make_view(identifier=("v",)))


@pytest.mark.parametrize("engine", ["spark", "trino", "hive", "flink"])
def test_encode_accepts_the_stores_view(engine):
    view = make_view(representations=(SQLRepresentation(engine.upper(), "SELECT 1 AS a"),))
    out = formats.encode(view, engine)
    assert (out["dbName"], out["tableName"], out["owner"]) == ("sales", "v", "alice")
    decoded = formats.decode(out)
    assert (decoded.sql, decoded.comment, decoded.properties["k"]) == ("SELECT 1 AS a", "c", "v")
    assert [(c.name, str(c.type), c.comment) for c in decoded.columns] == [("a", "int", "an a")]


def test_encode_needs_the_engines_dialect():
    with pytest.raises(ValidationError, match="writing a trino view needs trino SQL"):
        formats.encode(make_view(), "trino")
    with pytest.raises(ValidationError, match="view: must be a View or a ViewDefinition"):
        formats.encode({"sql": "SELECT 1"}, "spark")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="did you mean 'spark'"):
        formats.encode(make_view(), "sparc")


def test_another_engines_parameters_are_not_carried_over():
    trino_view = formats.decode({
        "tableType": "VIRTUAL_VIEW", "viewOriginalText": formats.encode(ViewDefinition(
            dialect="trino", sql="SELECT 1 a", columns=(Column("a", "int"),)), "trino")["viewOriginalText"],
        "parameters": {"presto_view": "true", "comment": "Presto View", "trino_version": "476", "mine": "x",
                       "trino_created_by": "Trino Hive connector", "trino_query_id": "q1", "presto_version": "0.287",
                       "presto_query_id": "q2"}})
    as_spark = trino_view.model_copy(update={"dialect": "spark"})
    params = formats.encode(as_spark, "spark")["parameters"]
    assert not any(key.startswith(("presto_", "trino_")) for key in params) and params["mine"] == "x"
    assert formats.detect(formats.encode(as_spark, "spark")) == "spark"
    iceberg_like = as_spark.model_copy(update={"dialect": "hive", "properties": {"table_type": "ICEBERG-VIEW",
                                                                               "is_generic": "true"}})
    assert formats.detect(formats.encode(iceberg_like, "hive")) == "hive"


def test_a_hive_record_keeps_the_flink_parameters_that_mark_it_as_hive():
    """``is_generic=false`` makes a record a Hive view to Flink too: its flink keys are that record's own."""
    own = {"is_generic": "false", "flink.connector": "datagen", "flink.note": "n", "k1": "v1"}
    hive_view = ViewDefinition(dialect="hive", sql="SELECT 1 a", columns=(Column("a", "int"),), properties=own)
    for engine in ("hive", "spark"):
        out = formats.encode(hive_view.model_copy(update={"dialect": engine}), engine)
        assert own.items() <= out["parameters"].items() and formats.detect(out) == engine
    # a generic view's flag and flink keys are Flink's: another engine's record leaves them out
    generic = hive_view.model_copy(update={"properties": {**own, "is_generic": "true"}})
    assert formats.encode(generic, "hive")["parameters"] == {"k1": "v1"}
    flink_view = hive_view.model_copy(update={"dialect": "flink", "properties": {"flink.note": "n"}})
    assert formats.encode(flink_view.model_copy(update={"dialect": "hive"}), "hive")["parameters"] == {}


@pytest.mark.parametrize("text, kinds", [
    ('row("a""b" integer, `c``d` int)', ["word", "punct", "quoted", "word", "punct", "quoted", "word", "punct"]),
    ("decimal(10, 2)", ["word", "punct", "number", "punct", "number", "punct"]),
    ("ROW<`a` INT 'it''s'>", ["word", "punct", "quoted", "word", "string", "punct"]),
    ("fixed[16]", ["word", "punct", "number", "punct"]),
    ("ROW<_a INT>", ["word", "punct", "word", "word", "punct"]),
])
def test_tokenizer(text, kinds):
    tokens = TypeTokens(text, "type")
    assert [t.kind for t in tokens.tokens] == kinds
    quoted = [t.value for t in tokens.tokens if t.kind in ("quoted", "string")]
    assert all('""' not in q and "``" not in q and "''" not in q for q in quoted)


@pytest.mark.parametrize("text, reason", [
    ("int;", "unexpected character ';' at position 3"),
    ('row("a integer)', "unterminated \" quote at position 4"),
    ("a & b", "unexpected character '&'"),
    ("varchar(²)", "unexpected character '²' at position 8"),  # a digit to str.isdigit, not to a type
])
def test_tokenizer_errors_name_the_field(text, reason):
    with pytest.raises(ValidationError, match=reason) as caught:
        TypeTokens(text, "sd.cols[3].type")
    assert str(caught.value).startswith("sd.cols[3].type: ")


def test_a_quoted_name_is_no_punctuation_and_parentheses_hold_any_count_of_numbers():
    tokens = TypeTokens('"(" 1', "type")
    with pytest.raises(ValidationError, match="^type: expected '\\(' at position 0, found '\\(' in type"):
        tokens.expect("(")
    assert TypeTokens("(1, 2, 3)", "type").optional_numbers() == [1, 2, 3]


@pytest.mark.parametrize("engine, deep", [
    ("trino", "array(" * 150 + "integer" + ")" * 150),
    ("trino", "array(" * 5000 + "integer" + ")" * 5000),
    ("flink", "ARRAY<" * 150 + "INT" + ">" * 150),
    ("flink", "ARRAY<" * 5000 + "INT" + ">" * 5000),
    ("hive", "array<" * 5000 + "int" + ">" * 5000),
    ("spark", "array<" * 150 + "int" + ">" * 150),
    ("spark", "array<" * 5000 + "int" + ">" * 5000),
    ("spark", {"type": "array", "elementType": "integer", "containsNull": True}),
])
def test_types_nested_too_deep_are_validation_errors(engine, deep):
    """Every engine's type reader stops at MAX_DEPTH levels with a ValidationError, not a RecursionError."""
    from viewstore.formats import flink, hive, spark, trino
    from viewstore.types import MAX_DEPTH

    if engine == "spark" and isinstance(deep, dict):
        for _ in range(MAX_DEPTH + 5):
            deep = {"type": "array", "elementType": deep, "containsNull": True}
        reader = spark.iceberg_type
    else:
        reader = {"trino": trino.iceberg_type, "flink": flink.iceberg_type, "hive": hive.iceberg_type,
                  "spark": lambda t: spark.iceberg_type(spark.parse_type_string(t))}[engine]
    with pytest.raises(ValidationError, match=f"{MAX_DEPTH} levels"):
        reader(deep)


@pytest.mark.parametrize("engine, text", [
    ("trino", "varchar({})"), ("trino", "timestamp({}) with time zone"), ("trino", "decimal(10,{})"),
    ("flink", "VARCHAR({})"), ("flink", "BINARY({})"), ("flink", "TIMESTAMP({})"),
    ("hive", "varchar({})"), ("hive", "struct<a:decimal({},2)>"),
    ("spark", "char({})"), ("spark", "array<varchar({})>"),
])
@pytest.mark.parametrize("number", ["9" * 5000, "2147483648"])
def test_a_number_in_a_type_larger_than_a_java_int_is_a_validation_error(engine, text, number):
    """A length or precision of thousands of digits raised int()'s ValueError from every engine's type reader."""
    from viewstore.formats import flink, hive, spark, trino

    reader = {"trino": trino.iceberg_type, "flink": flink.iceberg_type, "hive": hive.iceberg_type,
              "spark": lambda t, field: spark.iceberg_type(spark.parse_type_string(t, field), field)}[engine]
    with pytest.raises(ValidationError, match=r"^sd\.cols\[0\]\.type: .*the number \d{1,20}(\.\.\.)? is larger "
                                              r"than 2147483647") as caught:
        reader(text.format(number), "sd.cols[0].type")
    assert len(str(caught.value)) < 200 or engine == "hive"  # hive quotes the whole type string
