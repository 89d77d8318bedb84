"""Spark SQL types <-> Iceberg types, as Iceberg's own Spark integration pairs them.

========================  ==========================  ============================================
Spark                     Iceberg                     notes
========================  ==========================  ============================================
BooleanType               boolean
ByteType, ShortType,      int                         Iceberg has no 8- or 16-bit integers; back
IntegerType                                           to Spark they become IntegerType
LongType                  long
FloatType / DoubleType    float / double
DecimalType(p, s)         decimal(p,s)
StringType, CharType(n),  string                      Iceberg strings have no length
VarcharType(n)
DateType                  date
TimeType(p)               time                        Iceberg time is microseconds: TimeType(6)
TimestampType             timestamptz                 Spark's TIMESTAMP is local-time-zone aware
TimestampNTZType          timestamp
BinaryType                binary                      Iceberg fixed[n] becomes BinaryType
VariantType               variant
NullType                  unknown
StructType                struct<...>                 nullable <-> optional; the ``comment``
                                                      metadata <-> the field doc
ArrayType(e, containsNull)  list<e>                   containsNull=False <-> element required
MapType(k, v, valueContainsNull)  map<k, v>           valueContainsNull=False <-> value required
========================  ==========================  ============================================

Iceberg ``uuid`` reads as StringType. Interval, geometry and geography types, and Iceberg's
nanosecond timestamps, have no counterpart and raise :class:`~viewstore.errors.ValidationError`.

What the mapping loses is kept beside the columns: string collations (``STRING COLLATE
UTF8_LCASE`` is an Iceberg ``string``), ``TINYINT``/``SMALLINT`` and Spark's other field metadata.
When a view's Spark schema holds more than its stored columns give back, the version summary
records Spark's schema JSON under :data:`SPARK_SCHEMA` (:func:`schema_to_record`; most views
record nothing), and Spark is served that schema as long as it still maps to exactly the stored
columns (:func:`recorded_schema`), so a collated column keeps comparing case-insensitively.
"""

from __future__ import annotations

import json
from typing import Any, Iterable

from pyspark.sql import types as T

from ..errors import ValidationError
from ..formats.spark import SPARK_SCHEMA  # the version summary key holding Spark's schema JSON of a view
from ..model import Column
from ..types import (DecimalType, FixedType, IcebergType, ListType, MapType, PrimitiveType, StructField,
                     StructType, parse_type)

__all__ = ["spark_to_iceberg", "iceberg_to_spark", "schema_to_columns", "columns_to_schema", "SPARK_SCHEMA",
           "schema_to_record", "recorded_schema", "parse_schema"]


#: Spark atomic types (by class) and the Iceberg primitive each one becomes
_TO_ICEBERG: dict[type, str] = {
    T.BooleanType: "boolean",
    T.ByteType: "int",
    T.ShortType: "int",
    T.IntegerType: "int",
    T.LongType: "long",
    T.FloatType: "float",
    T.DoubleType: "double",
    T.StringType: "string",
    T.CharType: "string",
    T.VarcharType: "string",
    T.DateType: "date",
    T.TimeType: "time",
    T.TimestampType: "timestamptz",
    T.TimestampNTZType: "timestamp",
    T.BinaryType: "binary",
    T.VariantType: "variant",
    T.NullType: "unknown",
}

#: Iceberg primitives and the Spark type each one becomes
_TO_SPARK: dict[str, T.DataType] = {
    "boolean": T.BooleanType(),
    "int": T.IntegerType(),
    "long": T.LongType(),
    "float": T.FloatType(),
    "double": T.DoubleType(),
    "string": T.StringType(),
    "uuid": T.StringType(),
    "date": T.DateType(),
    "time": T.TimeType(6),
    "timestamptz": T.TimestampType(),
    "timestamp": T.TimestampNTZType(),
    "binary": T.BinaryType(),
    "variant": T.VariantType(),
    "unknown": T.NullType(),
}

_COMMENT = "comment"


def spark_to_iceberg(data_type: T.DataType) -> IcebergType:
    """The Iceberg type of a Spark type, e.g. ``DecimalType(18, 2)`` -> ``decimal(18,2)``.

    Nested types keep their shape: struct field names, nullability (as ``required``) and
    ``comment`` metadata (as the field doc), array element and map value nullability.

    Raises:
        ValidationError: not a Spark DataType instance (a type name such as ``"int"``, or the class
            ``IntegerType`` itself), or a Spark type with no Iceberg counterpart (intervals, geometry, ...).
    """
    if not isinstance(data_type, T.DataType):
        raise ValidationError(f"spark_to_iceberg needs a Spark DataType such as IntegerType(), not {data_type!r}")
    if isinstance(data_type, T.StructType):
        return StructType(tuple(
            StructField(f.name, spark_to_iceberg(f.dataType), not f.nullable, _comment(f))
            for f in data_type.fields))
    if isinstance(data_type, T.ArrayType):
        return ListType(spark_to_iceberg(data_type.elementType), not data_type.containsNull)
    if isinstance(data_type, T.MapType):
        return MapType(spark_to_iceberg(data_type.keyType), spark_to_iceberg(data_type.valueType),
                       not data_type.valueContainsNull)
    if isinstance(data_type, T.DecimalType):
        return DecimalType(data_type.precision, data_type.scale)
    if isinstance(data_type, T.UserDefinedType):
        return spark_to_iceberg(data_type.sqlType())
    name = _TO_ICEBERG.get(type(data_type))
    if name is None:
        raise ValidationError(f"Spark type {data_type.simpleString()} has no Iceberg counterpart")
    return PrimitiveType(name)


def iceberg_to_spark(iceberg_type: IcebergType | str) -> T.DataType:
    """The Spark type of an Iceberg type (or of its spelling, e.g. ``"list<string>"``).

    Raises:
        ValidationError: an unknown spelling, or an Iceberg type Spark cannot hold
            (``timestamp_ns``, ``timestamptz_ns``).
    """
    return _to_spark(parse_type(iceberg_type))


def _to_spark(t: IcebergType) -> T.DataType:
    """The Spark type of ``t``, a type :func:`parse_type` has checked (its parts are not checked again)."""
    if isinstance(t, StructType):
        return T.StructType([
            T.StructField(f.name, _to_spark(f.type), not f.required,
                          {_COMMENT: f.comment} if f.comment is not None else None)
            for f in t.fields])
    if isinstance(t, ListType):
        return T.ArrayType(_to_spark(t.element), not t.element_required)
    if isinstance(t, MapType):
        return T.MapType(_to_spark(t.key), _to_spark(t.value), not t.value_required)
    if isinstance(t, DecimalType):
        return T.DecimalType(t.precision, t.scale)
    if isinstance(t, FixedType):
        return T.BinaryType()
    assert isinstance(t, PrimitiveType)
    spark_type = _TO_SPARK.get(t.name)
    if spark_type is None:
        raise ValidationError(f"Iceberg type {t} has no Spark counterpart")
    return spark_type


def schema_to_columns(schema: T.StructType) -> list[Column]:
    """View columns from a Spark schema: name, Iceberg type, ``comment`` metadata, nullability.

    Raises:
        ValidationError: ``schema`` is not a Spark StructType, or a column type has no Iceberg counterpart.
    """
    if not isinstance(schema, T.StructType):
        raise ValidationError(f"schema_to_columns needs a Spark StructType, not {schema!r}")
    columns = []
    for field in schema.fields:
        try:
            iceberg_type = spark_to_iceberg(field.dataType)
        except ValidationError as e:
            raise ValidationError(f"column {field.name!r}: {e}") from e
        columns.append(Column(field.name, iceberg_type, _comment(field), field.nullable))
    return columns


def columns_to_schema(columns: Iterable[Column]) -> T.StructType:
    """The Spark schema of view columns (the inverse of :func:`schema_to_columns`).

    Raises:
        ValidationError: ``columns`` is not an iterable of :class:`~viewstore.Column`, or a column
            type Spark cannot hold.
    """
    if isinstance(columns, (str, bytes)) or not isinstance(columns, Iterable):
        raise ValidationError(f"columns_to_schema needs Column objects, not {columns!r}")
    columns = list(columns)
    for c in columns:
        if not isinstance(c, Column):
            raise ValidationError(f"columns_to_schema needs Column objects, not {c!r}")
    return T.StructType([
        T.StructField(c.name, iceberg_to_spark(c.type), c.nullable,
                      {_COMMENT: c.comment} if c.comment is not None else None)
        for c in columns])


def _comment(field: T.StructField) -> str | None:
    comment = (field.metadata or {}).get(_COMMENT)
    return comment if isinstance(comment, str) else None


def schema_to_record(schema: dict[str, Any], columns: Iterable[Column]) -> str | None:
    """Spark's schema JSON of a view (``StructType.jsonValue()`` form, as Spark wrote it) to record
    beside ``columns``, or None when the columns give the same schema back.

    Raises:
        ValidationError: an unreadable schema, or a column type Spark cannot hold.
    """
    if parse_schema(schema) == columns_to_schema(columns):
        return None
    return json.dumps(schema, separators=(",", ":"), ensure_ascii=False)


def recorded_schema(summary: dict[str, str], columns: Iterable[Column]) -> dict[str, Any] | None:
    """The Spark schema JSON recorded in a version summary, if it maps to exactly ``columns``; else None.

    A summary kept while the columns changed (or an unreadable one) yields None: the columns
    decide then.
    """
    text = summary.get(SPARK_SCHEMA)
    if text is None:
        return None
    try:
        schema = json.loads(text)
        if isinstance(schema, dict) and schema_to_columns(parse_schema(schema)) == list(columns):
            return schema
    except ValueError:  # ValidationError is one too
        pass
    return None


def parse_schema(schema: dict[str, Any]) -> T.StructType:
    """A Spark StructType from its JSON form (a dict), which is left unchanged.

    pyspark's ``fromJson`` rewrites the collation metadata of the dict it reads (a second read of
    the same dict fails), so it reads a copy.

    Raises:
        ValidationError: not a readable Spark struct schema.
    """
    if not isinstance(schema, dict) or schema.get("type") != "struct":
        raise ValidationError(f"a Spark view schema must be a struct, not {schema!r}")
    try:
        return T.StructType.fromJson(json.loads(json.dumps(schema)))
    except (KeyError, TypeError, ValueError, AssertionError) as e:
        raise ValidationError(f"unreadable Spark schema: {type(e).__name__}: {e}") from e
