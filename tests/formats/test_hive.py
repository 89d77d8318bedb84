"""Hive views: the two texts, Hive column types, and writing."""

from __future__ import annotations

import pytest

from viewstore import formats
from viewstore.errors import ValidationError
from viewstore.formats import ViewDefinition, hive
from viewstore.formats.base import column_types_property, second_text_properties
from viewstore.model import Column
from viewstore.types import PrimitiveType, StructField, StructType, parse_type


def record(*cols: tuple[str, str, str | None], **extra) -> dict:
    return {"tableType": "VIRTUAL_VIEW", "dbName": "default", "tableName": "v", "owner": "hive",
            "parameters": {"comment": "hive view", "transient_lastDdlTime": "1735732800"},
            "sd": {"cols": [{"name": n, "type": t, "comment": c} for n, t, c in cols]},
            "viewOriginalText": "SELECT key FROM src", "viewExpandedText": "SELECT `src`.`key` FROM `default`.`src`",
            **extra}


@pytest.mark.parametrize("hive_type, iceberg", [
    ("tinyint", "int"), ("smallint", "int"), ("int", "int"), ("bigint", "long"), ("float", "float"),
    ("double", "double"), ("boolean", "boolean"), ("string", "string"), ("varchar(20)", "string"),
    ("char(10)", "string"), ("binary", "binary"), ("date", "date"), ("timestamp", "timestamp"),
    ("timestamp with local time zone", "timestamptz"), ("TIMESTAMP WITH LOCAL TIME ZONE", "timestamptz"),
    ("decimal(10,2)", "decimal(10,2)"),
    ("array<int>", "list<int>"), ("map<string,bigint>", "map<string, long>"),
    ("struct<a:int,b:timestamp with local time zone>", "struct<a: int, b: timestamptz>"),
    ("ARRAY<STRUCT<X:STRING>>", "list<struct<X: string>>"), ("struct<>", "struct<>"),
    ("map<string, array<int>>", "map<string, list<int>>"),  # a blank before a type name is no part of it
    ("array<" * 100 + "int" + ">" * 100, "list<" * 100 + "int" + ">" * 100),  # nested as deep as is read
])
def test_hive_types(hive_type, iceberg):
    assert str(hive.iceberg_type(hive_type)) == iceberg


@pytest.mark.parametrize("hive_type", ["uniontype<int,string>", "interval_day_time", "void", "array<int",
                                       "array<int>>"])
def test_bad_hive_types_name_the_field(hive_type):
    with pytest.raises(ValidationError) as caught:
        formats.decode(record(("a", hive_type, None)))
    assert str(caught.value).startswith("sd.cols[0].type: ")


def test_decode_keeps_both_texts():
    definition = formats.decode(record(("key", "string", "the key"), ("n", "varchar(5)", None)))
    assert definition.dialect == "hive"
    assert definition.sql == "SELECT `src`.`key` FROM `default`.`src`"
    assert definition.properties[hive.ORIGINAL_TEXT_KEY] == "SELECT key FROM src"
    assert definition.default_namespace == ("default",) and definition.default_catalog is None
    assert (definition.comment, definition.owner, definition.database, definition.name) == (
        "hive view", "hive", "default", "v")
    assert [(c.name, str(c.type), c.comment) for c in definition.columns] == [
        ("key", "string", "the key"), ("n", "string", None)]
    assert definition.engine_types == ("string", "varchar(5)")
    assert "transient_lastDdlTime" not in definition.properties  # the metastore maintains it


@pytest.mark.parametrize("database", [None, ""])
def test_a_record_without_a_database_has_no_default_namespace(database):
    definition = formats.decode(record(("a", "int", None), dbName=database))
    assert (definition.database, definition.default_namespace) == (database, ())


def test_a_partitioned_views_partition_columns_are_its_last_columns():
    """CREATE VIEW ... PARTITIONED ON (ds) keeps ds in partitionKeys, apart from sd.cols: Hive and
    Spark read it as the view's last column. Written back, every column is in sd.cols."""
    partitioned = record(("key", "string", None), ("n", "int", "count"), viewOriginalText="SELECT key, n, ds FROM src",
                         viewExpandedText="SELECT `src`.`key`, `src`.`n`, `src`.`ds` FROM `default`.`src`",
                         partitionKeys=[{"name": "ds", "type": "varchar(10)", "comment": "day"}])
    definition = formats.decode(partitioned)
    assert [(c.name, str(c.type), c.comment) for c in definition.columns] == [
        ("key", "string", None), ("n", "int", "count"), ("ds", "string", "day")]
    assert definition.engine_types == ("string", "int", "varchar(10)")
    out = formats.encode(definition, "hive")
    assert out["sd"]["cols"] == [{"name": "key", "type": "string", "comment": None},
                                 {"name": "n", "type": "int", "comment": "count"},
                                 {"name": "ds", "type": "varchar(10)", "comment": "day"}]
    assert out["partitionKeys"] == []
    with pytest.raises(ValidationError, match=r"^partitionKeys\[1\]\.type: "):
        formats.decode({**partitioned, "partitionKeys": [{"name": "ds", "type": "string"},
                                                         {"name": "hr", "type": "uniontype<int>"}]})
    with pytest.raises(ValidationError, match=r"^partitionKeys: must be a list"):
        formats.decode({**partitioned, "partitionKeys": "ds"})


@pytest.mark.parametrize("expanded", [None, "", " \n"])
def test_without_expanded_text_the_original_text_is_the_sql(expanded):
    definition = formats.decode(record(("a", "int", None), viewExpandedText=expanded))
    assert definition.sql == "SELECT key FROM src"
    assert hive.ORIGINAL_TEXT_KEY not in definition.properties


def test_a_view_without_text_is_rejected():
    with pytest.raises(ValidationError, match="viewExpandedText: a Hive view needs its SQL"):
        formats.decode(record(("a", "int", None), viewExpandedText="", viewOriginalText=None))


@pytest.mark.parametrize("sd, reason", [
    ("cols", "sd: must be an object"),
    ([], "sd: must be an object, not list"),
    ({"cols": "a"}, "sd.cols: must be a list"),
    ({"cols": [{"name": "", "type": "int"}]}, r"sd\.cols\[0\]\.name"),
    ({"cols": [{"name": "a"}]}, r"sd\.cols\[0\]\.type"),
    ({"cols": [{"name": "a", "type": ""}]}, r"sd\.cols\[0\]\.type: must be a non-empty string, not ''"),
    ({"cols": [{"name": "a", "type": "int"}, "b"]}, r"sd\.cols\[1\]: must be an object"),
    ({"cols": [{"name": "a", "type": "int", "comment": 1}]}, r"sd\.cols\[0\]\.comment"),
])
def test_malformed_columns(sd, reason):
    with pytest.raises(ValidationError, match=reason):
        formats.decode({**record(), "sd": sd})


def test_encode():
    definition = ViewDefinition(
        dialect="hive", sql="SELECT `t`.`a` FROM `db`.`t`", database="db", name="v", owner="o", comment="c",
        columns=(Column("a", "timestamptz", "x"), Column("b", "struct<p: int not null comment 'dropped'>")),
        properties={**second_text_properties(hive.ORIGINAL_TEXT_KEY, "SELECT a FROM t", "SELECT `t`.`a` FROM `db`.`t`"),
                    "k": "v"})
    out = formats.encode(definition, "hive")
    assert out["parameters"] == {"k": "v", "comment": "c"}
    assert out["sd"]["cols"] == [{"name": "a", "type": "timestamp with local time zone", "comment": "x"},
                                 {"name": "b", "type": "struct<p:int>", "comment": None}]
    assert (out["viewOriginalText"], out["viewExpandedText"]) == ("SELECT a FROM t", "SELECT `t`.`a` FROM `db`.`t`")


@pytest.mark.parametrize("type_", ["uuid", "fixed[2]", "time", "timestamp_ns", "variant"])
def test_types_hive_cannot_hold(type_):
    definition = ViewDefinition(dialect="hive", sql="SELECT 1", columns=(Column("a", type_),))
    with pytest.raises(ValidationError, match=r"columns\[0\]\.type: Hive has no type for Iceberg"):
        formats.encode(definition, "hive")


def test_lenient_stand_ins_follow_icebergs_hive_integration():
    assert hive.engine_type(parse_type("list<uuid>"), lenient=True) == "array<string>"
    assert hive.engine_type(parse_type("fixed[16]"), lenient=True) == "binary"
    assert hive.engine_type(parse_type("time"), lenient=True) == "string"
    assert hive.engine_type(parse_type("timestamp_ns"), lenient=True) == "timestamp"
    assert hive.engine_type(parse_type("timestamptz_ns"), lenient=True) == "timestamp with local time zone"


def test_a_kept_hive_type_is_written_while_it_fits_the_column_whatever_its_nested_not_null():
    """Hive types carry no nested not null: a kept spelling fits a column that has one, not one of another type."""
    kept = ["struct<p:varchar(5)>", "array<struct<q:char(2)>>", "map<string,struct<r:varchar(3)>>"]
    definition = ViewDefinition(dialect="hive", sql="SELECT 1", columns=(
        Column("s", "struct<p: string not null>"), Column("l", "list<struct<q: string not null>>"),
        Column("m", "map<string, struct<r: string not null comment 'r'>>")),
        properties=column_types_property("hive", kept))
    assert [c["type"] for c in formats.encode(definition, "hive")["sd"]["cols"]] == kept
    changed = definition.model_copy(update={"columns": (Column("s", "struct<p: int>"), *definition.columns[1:])})
    assert [c["type"] for c in formats.encode(changed, "hive")["sd"]["cols"]] == ["struct<p:int>", *kept[1:]]
    unreadable = definition.model_copy(update={"properties": column_types_property("hive", [
        "struct<p:varchar(5)", "array<struct<q:char(2)>>", "map<string,struct<r:varchar(3)>>"])})  # set by hand
    assert [c["type"] for c in formats.encode(unreadable, "hive")["sd"]["cols"]] == ["struct<p:string>", *kept[1:]]


def test_only_a_virtual_view_is_claimed():
    assert hive.claims("VIRTUAL_VIEW", {}) and not hive.claims("MANAGED_TABLE", {})
    assert not hive.claims("MATERIALIZED_VIEW", {})


def test_encode_needs_columns():
    with pytest.raises(ValidationError, match="columns: a Hive view needs at least one column"):
        formats.encode(ViewDefinition(dialect="hive", sql="SELECT 1"), "hive")


def test_the_original_text_is_written_back_only_with_the_sql_it_was_recorded_with():
    definition = formats.decode(record(("key", "string", None)))
    same = formats.encode(definition, "hive")
    assert (same["viewOriginalText"], same["viewExpandedText"]) == (
        "SELECT key FROM src", "SELECT `src`.`key` FROM `default`.`src`")
    changed = formats.encode(definition.model_copy(update={"sql": "SELECT 2 AS key"}), "hive")
    assert (changed["viewOriginalText"], changed["viewExpandedText"]) == ("SELECT 2 AS key", "SELECT 2 AS key")
    unproven = {k: v for k, v in definition.properties.items() if k != hive.ORIGINAL_TEXT_KEY + "-sql"}
    out = formats.encode(definition.model_copy(update={"properties": unproven}), "hive")
    assert out["viewOriginalText"] == "SELECT `src`.`key` FROM `default`.`src`"


@pytest.mark.parametrize("hive_type, field_name", [
    ("struct<größe:int>", "größe"), ("struct<a$b:int>", "a$b"), ("struct<1x:int>", "1x"),
    ("struct<x y:int>", "x y"), ("struct<a.b:int>", "a.b"), ("struct<名前:int>", "名前"),
    ("struct<a:int,_b:int>", "_b"), ("struct<a:int, b:int>", " b"),  # Hive keeps the space, as here
])
def test_struct_field_names_are_read_as_hive_reads_them(hive_type, field_name):
    (*_, last) = hive.iceberg_type(hive_type).fields
    assert last.name == field_name and str(last.type) == "int"
    assert hive.iceberg_type(f"array<{hive_type}>").element.fields[-1].name == field_name


@pytest.mark.parametrize("hive_type, reason", [
    ("struct<a-b:int>", "expected ':' at position 8, found '-'"),
    ("struct<`a`:int>", "expected a struct field name at position 7, found '`'"),
    ("struct<a:int,A:int>", "duplicate struct field 'A'"),
    ("struct<A:int,a:int>", "duplicate struct field 'a'"),
    ("struct<:int>", "expected a struct field name"),
    ("struct<a²:int>", "expected ':' at position 8, found '²'"),  # no letter or digit to Hive (Java)
    ("array<,int>", "expected a type name at position 6, found ','"),
    ("uniontype<int,string>", "Hive uniontype has no Iceberg equivalent"),
    ("array<" * 101 + "int" + ">" * 101, "nested more than 100 levels"),
])
def test_bad_struct_types(hive_type, reason):
    with pytest.raises(ValidationError, match=reason):
        hive.iceberg_type(hive_type, "sd.cols[0].type")


def test_struct_field_names_hive_can_hold_round_trip_and_others_are_refused():
    names = ["größe", "a$b", "1x", "x y", "a.b", " lead"]
    type_ = parse_type("struct<" + ", ".join(f"`{n}`: list<int>" for n in names) + ">")
    definition = ViewDefinition(dialect="hive", sql="SELECT 1", columns=(Column("s", type_),), database="d", name="v")
    out = formats.encode(definition, "hive")
    assert out["sd"]["cols"][0]["type"] == "struct<größe:array<int>,a$b:array<int>,1x:array<int>,x y:array<int>," \
                                           "a.b:array<int>, lead:array<int>>"
    assert formats.decode(out).columns == definition.columns
    for name in ["x:y", "a,b", "a>b", "a`b", "a'b", "a-b"]:
        struct = StructType((StructField(name, PrimitiveType("int")),))
        bad = ViewDefinition(dialect="hive", sql="SELECT 1", columns=(Column("s", struct),))
        with pytest.raises(ValidationError, match=r"columns\[0\]\.type: Hive struct field names"):
            formats.encode(bad, "hive")
    # an empty name is no type at all: the column refuses it before any engine's encoder sees it
    with pytest.raises(ValidationError, match="a struct field needs a name"):
        Column("s", StructType((StructField("", PrimitiveType("int")),)))


def _elsewhere(namespace: tuple[str, ...], sql: str = "SELECT id FROM orders o JOIN crm.customers c ON true") \
        -> ViewDefinition:
    return ViewDefinition(dialect="hive", sql=sql, columns=(Column("id", "long"),), default_namespace=namespace,
                          database="reports", name="v", owner="o")


def test_a_view_of_another_namespace_is_written_with_its_table_names_qualified():
    """Hive runs the expanded text in the view's database: `orders` would be reports.orders there."""
    out = formats.encode(_elsewhere(("sales",)), "hive")
    assert out["viewOriginalText"] == "SELECT id FROM orders o JOIN crm.customers c ON true"
    assert out["viewExpandedText"] == "SELECT id FROM `sales`.orders o JOIN crm.customers c ON true"
    # read back: the SQL is the expanded text, so the view means what it meant, in the record's database
    back = formats.decode(out)
    assert (back.sql, back.default_namespace) == (out["viewExpandedText"], ("reports",))
    assert back.properties[hive.ORIGINAL_TEXT_KEY] == out["viewOriginalText"]
    assert formats.encode(back, "hive") == out


@pytest.mark.parametrize("namespace", [("reports",), ("REPORTS",), ()])
def test_a_view_of_its_own_database_is_written_as_it_is(namespace):
    out = formats.encode(_elsewhere(namespace, "SELECT 1 FROM orders ; garbage ("), "hive")
    assert out["viewOriginalText"] == out["viewExpandedText"] == "SELECT 1 FROM orders ; garbage ("


def test_sql_that_cannot_be_qualified_safely_is_refused():
    with pytest.raises(ValidationError, match="^viewExpandedText: the view's unqualified table names resolve in "
                                              "'sales', not in the record's database.*sqlglot cannot parse"):
        formats.encode(_elsewhere(("sales",), "SELECT id FROM orders WHERE ("), "hive")
