"""Hive's own views in the Hive metastore (and any view without another engine's markers).

Hive keeps the text the user wrote in ``viewOriginalText`` and the fully qualified, back-quoted text
it executes in ``viewExpandedText``; the columns are ``sd.cols`` with Hive type strings (a
partitioned view's partition columns, kept apart in ``partitionKeys``, come after them, as Hive and
Spark read them; :func:`encode` writes every column in ``sd.cols``, so a view written back is not
partitioned) and the comment is the ``comment`` parameter. Unqualified names in the original text
resolve against the view's own database: a view whose default namespace is another database is written with its table
names qualified in the expanded text (see :func:`encode`).

The definition's SQL is the expanded text; the original text is kept in the property
``hms.hive.original-text`` when it differs, and written back only while the SQL is unchanged (after
the SQL changes, both texts are the new SQL; see :func:`viewstore.formats.base.second_text`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..errors import ValidationError
from ..model import Column
from ..types import (MAX_DEPTH, DecimalType, IcebergType, ListType, MapType, PrimitiveType, StructField, StructType,
                     parse_type)
from .base import (VIRTUAL_VIEW, ViewDefinition, chosen_engine_types, column_types_property, hive_columns,
                   hive_columns_of, hms_record, invalid, parameters_of, passthrough, reserved_key, second_text,
                   second_text_properties, strip_nested, text_of)
from .qualify import needs_qualifying, qualify_tables

__all__ = ["NAME", "claims", "owns_parameter", "decode", "encode", "iceberg_type", "engine_type",
           "ORIGINAL_TEXT_KEY"]

NAME = "hive"

#: The property that keeps ``viewOriginalText`` when it differs from the expanded text (the SQL).
ORIGINAL_TEXT_KEY = reserved_key(NAME, "original-text")


def claims(table_type: str, parameters: Mapping[str, str]) -> bool:
    """Every virtual view no other engine claims is a Hive view (checked last)."""
    return table_type == VIRTUAL_VIEW


def owns_parameter(key: str, parameters: Mapping[str, str] | None = None) -> bool:
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
    # A partitioned view (PARTITIONED ON) keeps its partition columns apart from sd.cols, in
    # partitionKeys: they are its last columns, as Hive and Spark read them. A record without either
    # (a trimmed copy) has no columns.
    cols, keys = hive_columns_of(record), hive_columns(record.get("partitionKeys"), "partitionKeys")
    columns = tuple(Column(name, iceberg_type(type_, f"{field}[{i}].type"), comment)
                    for field, part in (("sd.cols", cols), ("partitionKeys", keys))
                    for i, (name, type_, comment) in enumerate(part))

    properties = passthrough(params, lambda key: key == "comment")
    properties.update(column_types_property(NAME, [type_ for _, type_, _ in cols + keys]))
    properties.update(second_text_properties(ORIGINAL_TEXT_KEY, original, sql))
    database = text_of(record, "dbName")
    return ViewDefinition(
        dialect=NAME, sql=sql, columns=columns, comment=params.get("comment"),
        default_namespace=(database,) if database else (), owner=text_of(record, "owner"),
        properties=properties, database=database, name=text_of(record, "tableName"))


def encode(definition: ViewDefinition) -> dict[str, Any]:
    """The HMS record Hive writes for this view.

    Hive has no default catalog, resolves unqualified names against the view's own database, and
    its column types carry no nullability or nested comments: those parts are not written. When the
    default namespace is another database, the expanded text (which Hive runs) is the SQL with each
    unqualified table name qualified with it (:func:`~viewstore.formats.qualify.qualify_tables`);
    the original text stays the SQL as written.

    Raises:
        ValidationError: the view has no columns or a column type Hive cannot express, or its
            default namespace is another database and its SQL cannot be qualified safely.
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
    expanded = definition.sql
    if needs_qualifying(definition.default_namespace, definition.database):
        expanded = qualify_tables(expanded, NAME, definition.default_namespace, "viewExpandedText")
    return hms_record(definition, parameters=parameters, cols=cols,
                      original_text=second_text(definition.properties, ORIGINAL_TEXT_KEY, definition.sql),
                      expanded_text=expanded)


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

    Struct field names are read as Hive's own type parser reads them: any run of letters and
    digits (Unicode), ``_``, ``.``, ``$`` and spaces, kept exactly (``struct<x y:int>`` has a field
    ``x y``). Primitive type names are compared case-insensitively and may have surrounding spaces.

    Raises:
        ValidationError: not a Hive type with an Iceberg equivalent (``uniontype``, intervals...),
            or nested more than :data:`~viewstore.types.MAX_DEPTH` levels deep.
    """
    parser = _HiveTypeParser(type_string, field)
    result = parser.parse_type(0)
    if parser.index < len(parser.tokens):
        raise parser.error(f"unexpected {parser.tokens[parser.index][1]!r}")
    return result


def _is_name_char(ch: str) -> bool:
    """The characters Hive's type parser reads as part of a name (Java letters and digits, ``_.$`` and space)."""
    return ch.isalpha() or ch.isdecimal() or ch in "_.$ "


class _HiveTypeParser:
    """Hive's type grammar over its tokens: runs of name characters, and single other characters."""

    def __init__(self, text: str, field: str) -> None:
        self.text, self.field, self.index = text, field, 0
        self.tokens: list[tuple[int, str]] = []
        i = 0
        while i < len(text):
            j = i + 1
            if _is_name_char(text[i]):
                while j < len(text) and _is_name_char(text[j]):
                    j += 1
            self.tokens.append((i, text[i:j]))
            i = j

    def error(self, message: str) -> ValidationError:
        return invalid(self.field, f"{message} in Hive type {self.text!r}")

    def next(self, what: str) -> tuple[int, str]:
        if self.index >= len(self.tokens):
            raise self.error(f"expected {what}, found the end")
        token = self.tokens[self.index]
        self.index += 1
        return token

    def expect(self, punct: str) -> None:
        position, text = self.next(repr(punct))
        if text != punct:
            raise self.error(f"expected {punct!r} at position {position}, found {text!r}")

    def accept(self, punct: str) -> bool:
        if self.index < len(self.tokens) and self.tokens[self.index][1] == punct:
            self.index += 1
            return True
        return False

    def parse_type(self, depth: int) -> IcebergType:
        if depth > MAX_DEPTH:
            raise self.error(f"types nested more than {MAX_DEPTH} levels deep are not supported")
        position, text = self.next("a type")
        name = text.strip().lower()
        if not name or not _is_name_char(text[0]):
            raise self.error(f"expected a type name at position {position}, found {text!r}")
        if name == "array":
            self.expect("<")
            element = self.parse_type(depth + 1)
            self.expect(">")
            return ListType(element)
        if name == "map":
            self.expect("<")
            key = self.parse_type(depth + 1)
            self.expect(",")
            value = self.parse_type(depth + 1)
            self.expect(">")
            return MapType(key, value)
        if name == "struct":
            return self._struct(depth)
        if name == "uniontype":
            raise self.error("Hive uniontype has no Iceberg equivalent")
        end = position + len(text)
        if self.accept("("):  # decimal(10,2), varchar(20): the shared parser reads the parameters
            while self.next("')'")[1] != ")":
                pass
            end = self.tokens[self.index - 1][0] + 1
        primitive = self.text[position:end].strip()
        try:  # a name and its parentheses: always a primitive (list, map, struct need '<' after the name)
            return parse_type(_WITH_LOCAL_TIME_ZONE.sub("with time zone", primitive))
        except ValidationError as e:
            raise self.error(str(e)) from e

    def _struct(self, depth: int) -> StructType:
        self.expect("<")
        fields: list[StructField] = []
        seen: set[str] = set()
        if self.accept(">"):
            return StructType(())
        while True:
            position, name = self.next("a field name")
            if not _is_name_char(name[0]):
                raise self.error(f"expected a struct field name at position {position}, found {name!r}")
            if name.lower() in seen:
                raise self.error(f"duplicate struct field {name!r}")
            seen.add(name.lower())
            self.expect(":")
            fields.append(StructField(name, self.parse_type(depth + 1)))
            if self.accept(">"):
                return StructType(tuple(fields))
            self.expect(",")


#: Hive 3 spells ``timestamptz`` as ``timestamp with local time zone``; the shared parser knows it as
#: ``timestamp with time zone``.
_WITH_LOCAL_TIME_ZONE = re.compile(r"\bwith\s+local\s+time\s+zone\b", re.IGNORECASE)


def engine_type(type_: IcebergType, field: str = "type", *, lenient: bool = False) -> str:
    """The Hive type string for an Iceberg type.

    Args:
        type_: the Iceberg type.
        field: the field name to use in errors.
        lenient: write Iceberg's own stand-ins (``string`` for ``uuid``, ``binary`` for ``fixed``)
            instead of failing; used where the HMS columns are informational only.

    Raises:
        ValidationError: Hive has no exact type for it and ``lenient`` is false, or a struct field
            name has a character Hive's type parser does not read as part of a name (``:``, ``,``,
            ``<``, quotes...).
    """
    if isinstance(type_, DecimalType):
        return f"decimal({type_.precision},{type_.scale})"
    if isinstance(type_, ListType):
        return f"array<{engine_type(type_.element, field, lenient=lenient)}>"
    if isinstance(type_, MapType):
        key = engine_type(type_.key, field, lenient=lenient)
        return f"map<{key},{engine_type(type_.value, field, lenient=lenient)}>"
    if isinstance(type_, StructType):
        for f in type_.fields:
            if not f.name or not all(_is_name_char(ch) for ch in f.name):
                raise invalid(field, f"Hive struct field names hold only letters, digits, '_', '.', '$' and "
                                     f"spaces; the field {f.name!r} cannot be written")
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
