"""Hive's own views in the Hive metastore (and any view without another engine's markers).

Hive keeps the text the user wrote in ``viewOriginalText`` and the fully qualified, back-quoted text
it executes in ``viewExpandedText``; the columns are ``sd.cols`` with Hive type strings and the
comment is the ``comment`` parameter. Unqualified names in the original text resolve against the
view's own database.

The definition's SQL is the expanded text; the original text is kept in the property
``hms.hive.original-text`` when it differs, and written back only while the SQL is unchanged (after
the SQL changes, both texts are the new SQL; see :func:`viewstore.formats.base.second_text`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import ValidationError
from ..model import Column
from ..types import DecimalType, IcebergType, ListType, MapType, PrimitiveType, StructType, parse_type
from .base import (VIRTUAL_VIEW, TypeTokens, ViewDefinition, chosen_engine_types, column_types_property,
                   hive_columns_of, hms_record, invalid, parameters_of, passthrough, reserved_key, second_text,
                   second_text_properties, strip_nested, text_of)

__all__ = ["NAME", "claims", "owns_parameter", "decode", "encode", "iceberg_type", "engine_type",
           "ORIGINAL_TEXT_KEY"]

NAME = "hive"

#: The property that keeps ``viewOriginalText`` when it differs from the expanded text (the SQL).
ORIGINAL_TEXT_KEY = reserved_key(NAME, "original-text")


def claims(table_type: str, parameters: Mapping[str, str]) -> bool:
    """Every virtual view no other engine claims is a Hive view (checked last)."""
    return table_type == VIRTUAL_VIEW


def owns_parameter(key: str) -> bool:
    """Hive writes no parameters of its own besides ``comment``."""
    return False


def decode(record: Mapping[str, Any]) -> ViewDefinition:
    """Read a Hive view record.

    Raises:
        ValidationError: the record has neither view text, or a column type that is not a Hive type
            with an Iceberg equivalent (``uniontype``, intervals...).
    """
    params = parameters_of(record)
    original = text_of(record, "viewOriginalText")
    expanded = text_of(record, "viewExpandedText")
    sql = expanded if expanded and expanded.strip() else original
    if sql is None or not sql.strip():
        raise invalid("viewExpandedText", "a Hive view needs its SQL in viewExpandedText or viewOriginalText")
    hive_columns = hive_columns_of(record)  # a record without them (a trimmed copy) has no columns
    columns = tuple(Column(name, iceberg_type(type_, f"sd.cols[{i}].type"), comment)
                    for i, (name, type_, comment) in enumerate(hive_columns))

    properties = passthrough(params, lambda key: key == "comment")
    properties.update(column_types_property(NAME, [type_ for _, type_, _ in hive_columns]))
    properties.update(second_text_properties(ORIGINAL_TEXT_KEY, original, sql))
    database = text_of(record, "dbName")
    return ViewDefinition(
        dialect=NAME, sql=sql, columns=columns, comment=params.get("comment"),
        default_namespace=(database,) if database else (), owner=text_of(record, "owner"),
        properties=properties, database=database, name=text_of(record, "tableName"))


def encode(definition: ViewDefinition) -> dict[str, Any]:
    """The HMS record Hive writes for this view.

    Hive has no default catalog, resolves unqualified names against the view's own database, and
    its column types carry no nullability or nested comments: those parts are not written.

    Raises:
        ValidationError: the view has no columns or a column type Hive cannot express.
    """
    if not definition.columns:
        raise invalid("columns", "a Hive view needs at least one column")
    kept = chosen_engine_types(definition.properties, NAME, len(definition.columns))
    cols = []
    for i, column in enumerate(definition.columns):
        type_ = kept[i] if kept and _consistent(kept[i], column.type) else \
            engine_type(column.type, f"columns[{i}].type")
        cols.append({"name": column.name, "type": type_, "comment": column.comment})
    parameters = passthrough(definition.properties, lambda key: key == "comment")
    if definition.comment is not None:
        parameters["comment"] = definition.comment
    return hms_record(definition, parameters=parameters, cols=cols,
                      original_text=second_text(definition.properties, ORIGINAL_TEXT_KEY, definition.sql),
                      expanded_text=definition.sql)


def _consistent(type_string: str, type_: IcebergType) -> bool:
    try:
        return iceberg_type(type_string) == strip_nested(type_)
    except ValidationError:
        return False


# --------------------------------------------------------------------------------------------
# Types: Hive type strings <-> Iceberg types

_TO_HIVE = {
    "boolean": "boolean", "int": "int", "long": "bigint", "float": "float", "double": "double",
    "date": "date", "timestamp": "timestamp", "timestamptz": "timestamp with local time zone",
    "string": "string", "binary": "binary",
}

#: Where Hive has no exact type, the stand-in Iceberg's own Hive integration writes (lenient mode).
_STAND_INS = {"time": "string", "uuid": "string", "timestamp_ns": "timestamp",
              "timestamptz_ns": "timestamp with local time zone"}


def iceberg_type(type_string: str, field: str = "type") -> IcebergType:
    """The Iceberg type of a Hive column type (``bigint``, ``varchar(20)``, ``array<int>``...).

    Raises:
        ValidationError: not a Hive type with an Iceberg equivalent.
    """
    try:
        return parse_type(_without_local(type_string, field))
    except ValidationError as e:
        raise invalid(field, str(e)) from e


def _without_local(type_string: str, field: str) -> str:
    """Hive 3 spells ``timestamptz`` as ``timestamp with local time zone``; the shared parser knows
    it as ``timestamp with time zone``, so drop each ``local`` that follows ``with``."""
    tokens = TypeTokens(type_string, field)
    for i in reversed(range(len(tokens.tokens))):
        if tokens.at_word("with", "local", "time", "zone", offset=i):
            local = tokens.tokens[i + 1]
            type_string = type_string[:local.position] + type_string[local.position + len(local.value):]
    return type_string


def engine_type(type_: IcebergType, field: str = "type", *, lenient: bool = False) -> str:
    """The Hive type string for an Iceberg type.

    Args:
        type_: the Iceberg type.
        field: the field name to use in errors.
        lenient: write Iceberg's own stand-ins (``string`` for ``uuid``, ``binary`` for ``fixed``)
            instead of failing; used where the HMS columns are informational only.

    Raises:
        ValidationError: Hive has no exact type for it and ``lenient`` is false.
    """
    if isinstance(type_, DecimalType):
        return f"decimal({type_.precision},{type_.scale})"
    if isinstance(type_, ListType):
        return f"array<{engine_type(type_.element, field, lenient=lenient)}>"
    if isinstance(type_, MapType):
        key = engine_type(type_.key, field, lenient=lenient)
        return f"map<{key},{engine_type(type_.value, field, lenient=lenient)}>"
    if isinstance(type_, StructType):
        fields = ",".join(f"{f.name}:{engine_type(f.type, field, lenient=lenient)}" for f in type_.fields)
        return f"struct<{fields}>"
    name = str(type_)
    if name in _TO_HIVE:
        return _TO_HIVE[name]
    if lenient and isinstance(type_, PrimitiveType) and name in _STAND_INS:
        return _STAND_INS[name]
    if lenient and name.startswith("fixed"):
        return "binary"
    raise invalid(field, f"Hive has no type for Iceberg {type_}")
