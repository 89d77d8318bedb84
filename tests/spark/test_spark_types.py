"""Spark <-> Iceberg type mapping (viewstore.spark.types)."""

from __future__ import annotations

import json

import pytest
from pyspark.sql import types as T

from viewstore import Column, ValidationError, parse_type
from viewstore.spark.types import (SPARK_SCHEMA, columns_to_schema, iceberg_to_spark, parse_schema, recorded_schema,
                                   schema_to_columns, schema_to_record, spark_to_iceberg)
from viewstore.types import DecimalType, FixedType, ListType, MapType, PrimitiveType, StructField, StructType

pytestmark = pytest.mark.spark


@pytest.mark.parametrize("spark_type, iceberg", [
    (T.BooleanType(), "boolean"),
    (T.IntegerType(), "int"),
    (T.LongType(), "long"),
    (T.FloatType(), "float"),
    (T.DoubleType(), "double"),
    (T.DecimalType(18, 2), "decimal(18,2)"),
    (T.DecimalType(38, 0), "decimal(38,0)"),
    (T.StringType(), "string"),
    (T.DateType(), "date"),
    (T.TimestampType(), "timestamptz"),
    (T.TimestampNTZType(), "timestamp"),
    (T.BinaryType(), "binary"),
    (T.VariantType(), "variant"),
    (T.TimeType(6), "time"),
    (T.NullType(), "unknown"),
])
def test_primitives_map_both_ways(spark_type, iceberg):
    assert str(spark_to_iceberg(spark_type)) == iceberg
    assert iceberg_to_spark(iceberg) == spark_type


@pytest.mark.parametrize("spark_type, iceberg", [
    (T.ByteType(), "int"),
    (T.ShortType(), "int"),
    (T.CharType(5), "string"),
    (T.VarcharType(20), "string"),
])
def test_narrower_spark_types_widen(spark_type, iceberg):
    assert str(spark_to_iceberg(spark_type)) == iceberg


@pytest.mark.parametrize("iceberg, spark_type", [
    ("uuid", T.StringType()),
    ("fixed[16]", T.BinaryType()),
    ("bigint", T.LongType()),  # SQL spellings are read too
])
def test_iceberg_types_spark_lacks(iceberg, spark_type):
    assert iceberg_to_spark(iceberg) == spark_type


def test_nested_types_keep_names_nullability_and_comments():
    spark_type = T.StructType([
        T.StructField("id", T.LongType(), False),
        T.StructField("address", T.StructType([
            T.StructField("street", T.StringType(), True, {"comment": "street and number"}),
            T.StructField("zip", T.IntegerType(), False),
        ]), True, {"comment": "where it's delivered"}),
        T.StructField("tags", T.ArrayType(T.StringType(), containsNull=False), True),
        T.StructField("scores", T.MapType(T.StringType(), T.DecimalType(10, 2), valueContainsNull=True), True),
        T.StructField("history", T.ArrayType(T.MapType(T.StringType(), T.TimestampNTZType(), False), True), True),
    ])
    iceberg = spark_to_iceberg(spark_type)
    assert str(iceberg) == (
        "struct<id: long not null, "
        "address: struct<street: string comment 'street and number', zip: int not null> "
        "comment 'where it\\'s delivered', "
        "tags: list<string not null>, scores: map<string, decimal(10,2)>, "
        "history: list<map<string, timestamp not null>>>")
    assert iceberg_to_spark(iceberg) == spark_type
    assert parse_type(str(iceberg)) == iceberg


def test_columns_round_trip_through_a_spark_schema():
    columns = [Column("day", "date", "the order day", nullable=False), Column("orders", "long"),
               Column("lines", "list<struct<sku: string, qty: int not null>>", None)]
    schema = columns_to_schema(columns)
    assert schema.fields[0].nullable is False and schema.fields[0].metadata == {"comment": "the order day"}
    assert schema_to_columns(schema) == columns


@pytest.mark.parametrize("spark_type, shown", [(T.DayTimeIntervalType(), "interval day to second"),
                                                (T.YearMonthIntervalType(), "interval year to month"),
                                                (T.CalendarIntervalType(), "interval")])
def test_intervals_have_no_iceberg_type(spark_type, shown):
    with pytest.raises(ValidationError) as refused:
        spark_to_iceberg(spark_type)
    assert str(refused.value) == f"Spark type {shown} has no Iceberg counterpart"


def test_a_column_of_an_unmappable_type_is_named():
    schema = T.StructType([T.StructField("gap", T.DayTimeIntervalType())])
    with pytest.raises(ValidationError) as refused:
        schema_to_columns(schema)
    assert str(refused.value) == "column 'gap': Spark type interval day to second has no Iceberg counterpart"


@pytest.mark.parametrize("iceberg", ["timestamp_ns", "timestamptz_ns"])
def test_nanosecond_timestamps_have_no_spark_type(iceberg):
    with pytest.raises(ValidationError) as refused:
        iceberg_to_spark(iceberg)
    assert str(refused.value) == f"Iceberg type {iceberg} has no Spark counterpart"


def test_bad_spelling_is_a_validation_error():
    with pytest.raises(ValidationError) as refused:
        iceberg_to_spark("struct<a int")
    assert str(refused.value) == "unknown type 'struct<a int': it ends too early"


@pytest.mark.parametrize("built", [
    PrimitiveType("bigint"), DecimalType(50, 60), ListType(DecimalType(10, 20)),
    MapType(PrimitiveType("string"), FixedType(-1), True),
    StructType((StructField("a", PrimitiveType("int")), StructField("A", PrimitiveType("int")))),
])
def test_a_hand_built_iceberg_type_that_does_not_read_back_is_refused_not_mapped(built):
    """iceberg_to_spark checks a type object once, as parse_type does, before it maps it: one built
    by hand that its spelling does not read back as is refused (planted, a type object mapped
    unchecked gave DecimalType(50,60), an array of DecimalType(10,20) and a struct with two fields of
    one name, and bigint as no Spark counterpart)."""
    with pytest.raises(ValidationError, match=r"^type '.*' is not a valid type: "):
        iceberg_to_spark(built)


def test_types_spark_infers_for_a_real_query(spark):
    """What Spark's analyzer produces maps as Iceberg's Spark integration maps it."""
    schema = spark.sql(
        "SELECT CAST(1 AS BIGINT) AS l, CAST(1 AS DOUBLE) AS d, CAST(1 AS DECIMAL(12,3)) AS dec, "
        "TIMESTAMP'2026-01-01 00:00:00' AS ts, TIMESTAMP_NTZ'2026-01-01 00:00:00' AS ntz, DATE'2026-01-01' AS dt, "
        "named_struct('a', 1, 'b', array('x')) AS s, map('k', 1.5D) AS m, X'00' AS bin").schema
    got = {c.name: str(c.type) for c in schema_to_columns(schema)}
    assert got == {"l": "long", "d": "double", "dec": "decimal(12,3)", "ts": "timestamptz", "ntz": "timestamp",
                   "dt": "date", "s": "struct<a: int not null, b: list<string not null> not null>",
                   "m": "map<string, double not null>", "bin": "binary"}


@pytest.mark.parametrize("call, argument, message", [
    (spark_to_iceberg, "int", "spark_to_iceberg needs a Spark DataType such as IntegerType(), not 'int'"),
    (spark_to_iceberg, None, "spark_to_iceberg needs a Spark DataType such as IntegerType(), not None"),
    (spark_to_iceberg, T.IntegerType,  # the class, not a type
     "spark_to_iceberg needs a Spark DataType such as IntegerType(), not <class 'pyspark.sql.types.IntegerType'>"),
    (iceberg_to_spark, T.IntegerType(), "a column type must be a non-empty string, not IntegerType()"),
    (schema_to_columns, "id int", "schema_to_columns needs a Spark StructType, not 'id int'"),
    (schema_to_columns, [T.StructField("a", T.IntegerType())],
     "schema_to_columns needs a Spark StructType, not [StructField('a', IntegerType(), True)]"),
    (columns_to_schema, None, "columns_to_schema needs Column objects, not None"),
    (columns_to_schema, "ab", "columns_to_schema needs Column objects, not 'ab'"),
    (columns_to_schema, [Column("a", "int"), ("b", "int")], "columns_to_schema needs Column objects, not ('b', 'int')"),
])
def test_bad_arguments_are_validation_errors(call, argument, message):
    with pytest.raises(ValidationError) as refused:
        call(argument)
    assert str(refused.value) == message


class _PointUDT(T.UserDefinedType):
    @classmethod
    def sqlType(cls):
        return T.ArrayType(T.DoubleType(), False)

    @classmethod
    def module(cls):
        return __name__

    def serialize(self, obj):
        return list(obj)

    def deserialize(self, datum):
        return tuple(datum)


def test_a_user_defined_type_maps_through_its_sql_type():
    assert str(spark_to_iceberg(_PointUDT())) == "list<double not null>"
    schema = T.StructType([T.StructField("p", _PointUDT(), True)])
    assert [(c.name, str(c.type)) for c in schema_to_columns(schema)] == [("p", "list<double not null>")]


def test_a_comment_that_is_not_a_string_is_no_comment():
    """Field metadata is free-form JSON: a ``comment`` that is a number or an object is no column comment."""
    schema = T.StructType([T.StructField("n", T.IntegerType(), True, {"comment": 5}),
                           T.StructField("s",
                                         T.StructType([T.StructField("a", T.LongType(), True, {"comment": {"x": 1}})]),
                                         True, {"comment": "kept"})])
    assert schema_to_columns(schema) == [Column("n", "int", None, True), Column("s", "struct<a: long>", "kept", True)]


@pytest.mark.parametrize("argument, shown", [("ab", "'ab'"), (b"ab", "b'ab'")])
def test_columns_given_as_text_are_named_whole(argument, shown):
    """Text is iterable, but a string of column names is no list of columns: the message shows what was given."""
    with pytest.raises(ValidationError, match=f"columns_to_schema needs Column objects, not {shown}$"):
        columns_to_schema(argument)


def test_a_column_without_a_comment_has_no_comment_metadata():
    schema = columns_to_schema([Column("a", "int"), Column("b", "int", "kept")])
    assert [f.metadata for f in schema.fields] == [{}, {"comment": "kept"}]


def test_an_empty_comment_is_a_comment_both_ways():
    """``COMMENT ''`` is a comment Spark keeps in the field's metadata; it is not the absence of one,
    for a column and for a field of a struct."""
    columns = [Column("a", "struct<x: int comment ''>", "")]
    schema = columns_to_schema(columns)
    assert schema.fields[0].metadata == {"comment": ""}
    assert schema.fields[0].dataType.fields[0].metadata == {"comment": ""}
    assert schema_to_columns(schema) == columns


def _collated(name="café"):
    """Spark's schema JSON of a view whose string column compares case-insensitively (more than an
    Iceberg string holds)."""
    return T.StructType([T.StructField(name, T.StringType("UTF8_LCASE"), True),
                         T.StructField("n", T.IntegerType(), False, {"comment": "a number"})]).jsonValue()


COLUMNS = [Column("café", "string"), Column("n", "int", "a number", False)]


def test_schema_to_record_records_only_what_the_columns_do_not_give_back():
    assert schema_to_record(columns_to_schema(COLUMNS).jsonValue(), COLUMNS) is None
    recorded = schema_to_record(_collated(), COLUMNS)
    assert recorded == json.dumps(_collated(), separators=(",", ":"),
                                  ensure_ascii=False)  # compact, the name as written
    assert "café" in recorded and "\\u" not in recorded and ", " not in recorded


def test_recorded_schema_is_served_only_while_it_maps_to_the_stored_columns():
    summary = {SPARK_SCHEMA: schema_to_record(_collated(), COLUMNS)}
    assert recorded_schema(summary, COLUMNS) == _collated()
    assert recorded_schema(summary, iter(COLUMNS)) == _collated()
    # the columns changed since it was recorded (a replace that kept the summary): the columns decide
    assert recorded_schema(summary, [Column("café", "string"), Column("n", "long", "a number", False)]) is None
    assert recorded_schema(summary, COLUMNS[:1]) is None
    assert recorded_schema({}, COLUMNS) is None
    for damaged in ("{not json", "[1]", "null", '{"type": "struct", "fields": 5}'):
        assert recorded_schema({SPARK_SCHEMA: damaged}, COLUMNS) is None


def test_parse_schema_reads_the_same_dict_twice_and_leaves_it_as_it_was():
    """pyspark's reader rewrites collation metadata in the dict it is given; parse_schema reads a copy."""
    schema = _collated()
    before = json.dumps(schema)
    assert parse_schema(schema) == parse_schema(schema) == T.StructType.fromJson(_collated())
    assert json.dumps(schema) == before


@pytest.mark.parametrize("schema, why", [
    ({"type": "array", "elementType": "integer", "containsNull": True}, "a Spark view schema must be a struct"),
    ([{"type": "struct", "fields": []}], "a Spark view schema must be a struct"),
    ({"type": "struct"}, "unreadable Spark schema: KeyError: 'fields'"),
    ({"type": "struct", "fields": [{"type": "integer", "nullable": True, "metadata": {}}]},
     "unreadable Spark schema: KeyError: 'name'"),
    ({"type": "struct", "fields": 5}, "unreadable Spark schema: TypeError"),
    ({"type": "struct", "fields": [{"name": 5, "type": "integer", "nullable": True, "metadata": {}}]},
     "unreadable Spark schema: AssertionError: field name 5 should be a string"),
])
def test_parse_schema_refuses_what_is_no_spark_struct_schema(schema, why):
    with pytest.raises(ValidationError) as refused:
        parse_schema(schema)
    assert str(refused.value).startswith(why)
