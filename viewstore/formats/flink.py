"""Flink views in the Hive metastore (Flink's HiveCatalog).

A view Flink creates is "generic": the parameter ``is_generic=true``, no ``sd.cols``, and the schema
serialized into parameters with the ``flink.`` prefix: ``flink.schema.N.name``,
``flink.schema.N.data-type`` (a Flink data type such as ``VARCHAR(2147483647)``, ``BIGINT NOT NULL``,
``ROW<`a` INT>``) and optionally ``flink.schema.N.comment``. Flink 1.10 used the prefix
``flink.generic.table.schema.`` instead. The view comment is ``flink.comment`` (not ``comment``).
``viewOriginalText`` holds the query as written and ``viewExpandedText`` Flink's expanded query.

A view with ``is_generic=false`` (or without the flag and without ``flink.connector``) is a Hive view
to Flink too, and is decoded by the Hive codec.

The definition's SQL is the original query; the expanded query is kept in the property
``hms.flink.expanded-text`` when it differs (and written back only while the SQL is unchanged:
Flink runs the expanded query, so after a change both texts are the new SQL), and a plain
``comment`` parameter (not Flink's) in ``hms.flink.comment-parameter``.

Flink resolved the original query's unqualified table names, when the view was created, in the
session's current catalog and database, which need not be the view's; its expanded query names
them (``SELECT `t`.`a` FROM `cat`.`db`.`t` AS `t```), and so does the one :func:`encode` writes for
a view whose default namespace is another database (``db``.t). When every unqualified name of the
original is expanded with one database (:func:`~viewstore.formats.qualify.implied_namespace`) and
that is not the record's own (compared case-insensitively), it is the definition's default
namespace, so the original keeps its meaning; otherwise (the record's own database, texts that
cannot be read or paired, names that disagree, none unqualified) the definition has none, as the
view's own namespace is where its names resolve. The definition never has a default catalog: the
catalog in Flink's expanded query is the creating session's name for this metastore, which means
nothing to another engine.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import ValidationError
from ..model import Column
from ..types import (DecimalType, FixedType, IcebergType, ListType, MapType, PrimitiveType, StructField, StructType,
                     too_large, type_number)
from .base import (ViewDefinition, TypeTokens, bounded, chosen_engine_types, column_types_property, hms_record, invalid,
                   parameters_of, passthrough, reserved_key, second_text, second_text_properties, text_of)
from .qualify import implied_namespace, needs_qualifying, qualify_tables

__all__ = ["NAME", "claims", "owns_parameter", "decode", "encode", "parse_data_type", "iceberg_type",
           "engine_type", "EXPANDED_TEXT_KEY", "PLAIN_COMMENT_KEY"]

NAME = "flink"

IS_GENERIC = "is_generic"
COMMENT = "flink.comment"
SCHEMA_PREFIX = "flink.schema."
LEGACY_SCHEMA_PREFIX = "flink.generic.table.schema."

#: The property that keeps ``viewExpandedText`` when it differs from the original text (the SQL);
#: written back only while the SQL is unchanged (see :func:`viewstore.formats.base.second_text`).
EXPANDED_TEXT_KEY = reserved_key(NAME, "expanded-text")
#: The property that keeps a plain ``comment`` parameter (Flink's own comment is ``flink.comment``).
PLAIN_COMMENT_KEY = reserved_key(NAME, "comment-parameter")


def claims(table_type: str, parameters: Mapping[str, str]) -> bool:
    """Whether Flink reads the record as its own generic view.

    Like Flink: ``is_generic`` parsed as a Java boolean (``true`` in any case) decides; without the
    flag, a ``flink.connector`` or ``flink.connector.type`` parameter makes the object generic.
    """
    flag = parameters.get(IS_GENERIC)
    if flag is not None:
        return flag.lower() == "true"
    return "flink.connector" in parameters or "flink.connector.type" in parameters


def owns_parameter(key: str, parameters: Mapping[str, str] | None = None) -> bool:
    """Whether ``key`` is an HMS parameter Flink writes for its own (generic) views.

    ``is_generic`` and the ``flink.`` keys are Flink's unless ``parameters`` (the record's, or the
    view's properties) flag the object as not generic (``is_generic`` other than true): Flink itself
    then reads it as a Hive object, and they are that record's own parameters.
    """
    if parameters is not None and parameters.get(IS_GENERIC, "true").lower() != "true":
        return False
    return key == IS_GENERIC or key.startswith("flink.")


def _column_key(key: str) -> tuple[str, int, str] | None:
    """Split ``flink.schema.3.data-type`` into (prefix, 3, "data-type"); None for other keys.

    Raises:
        ValidationError: the index is larger than a Java int (Flink could not read the key either).
    """
    for prefix in (SCHEMA_PREFIX, LEGACY_SCHEMA_PREFIX):
        if key.startswith(prefix):
            index, _, attribute = key[len(prefix):].partition(".")
            if index.isascii() and index.isdigit() and attribute:
                number = type_number(index)
                if number is None:
                    raise invalid(f"parameters.{key if len(key) <= 80 else key[:80] + '...'}",
                                  f"is no column key Flink can read, as its index is no Java int: {too_large(index)}")
                return prefix, number, attribute
    return None


# --------------------------------------------------------------------------------------------
# Decoding


def decode(record: Mapping[str, Any]) -> ViewDefinition:
    """Read a generic Flink view record.

    Raises:
        ValidationError: no view text, no schema parameters, a gap in the column indexes, a column
            without a data type, or a data type that is not Flink's or has no Iceberg equivalent.
    """
    params = parameters_of(record)
    original = text_of(record, "viewOriginalText")
    expanded = text_of(record, "viewExpandedText")
    sql = original if original and original.strip() else expanded
    if sql is None or not sql.strip():
        raise invalid("viewOriginalText", "a Flink view keeps its query here, but it is missing")

    prefix = _schema_prefix(params)
    indexes = sorted({parts[1] for key in params if (parts := _column_key(key)) and parts[0] == prefix
                      and parts[2] == "name"})
    if not indexes:
        raise invalid(f"parameters.{SCHEMA_PREFIX}0.name",
                      "a Flink view keeps its schema in flink.schema.N.* parameters, and there are none")
    columns, types = [], []
    for i in range(indexes[-1] + 1):
        name_key, type_key = f"{prefix}{i}.name", f"{prefix}{i}.data-type"
        if name_key not in params:
            raise invalid(f"parameters.{name_key}", f"is missing, but column {indexes[-1]} exists")
        if type_key not in params:
            raise invalid(f"parameters.{type_key}", "is missing; every Flink view column needs a data type")
        type_, nullable = parse_data_type(params[type_key], f"parameters.{type_key}")
        columns.append(Column(params[name_key], type_, params.get(f"{prefix}{i}.comment"), nullable))
        types.append(params[type_key])

    consumed = {IS_GENERIC, COMMENT, "comment"}
    for i in range(len(columns)):
        consumed.update(f"{prefix}{i}.{attribute}" for attribute in ("name", "data-type", "comment"))
    properties = passthrough(params, consumed.__contains__)
    properties.update(column_types_property(NAME, types))
    if "comment" in params:
        properties[PLAIN_COMMENT_KEY] = params["comment"]
    properties.update(second_text_properties(EXPANDED_TEXT_KEY, expanded, sql))
    database = text_of(record, "dbName")
    implied = _implied(sql, expanded)
    return ViewDefinition(
        dialect=NAME, sql=sql, columns=tuple(columns), comment=params.get(COMMENT),
        default_namespace=(implied,) if implied and needs_qualifying((implied,), database) else (),
        owner=text_of(record, "owner"), properties=properties, database=database, name=text_of(record, "tableName"))


def _implied(sql: str, expanded: str | None) -> str | None:
    """The database the expanded query gives the unqualified names of ``sql`` (None when it names none)."""
    return implied_namespace(sql, expanded, NAME) if expanded and expanded != sql else None


def _schema_prefix(params: Mapping[str, str]) -> str:
    """The current prefix when any current column key exists, else Flink 1.10's."""
    prefixes = {parts[0] for key in params if (parts := _column_key(key))}
    return SCHEMA_PREFIX if SCHEMA_PREFIX in prefixes or not prefixes else LEGACY_SCHEMA_PREFIX


# --------------------------------------------------------------------------------------------
# Encoding


def encode(definition: ViewDefinition) -> dict[str, Any]:
    """The HMS record Flink's HiveCatalog writes for this view.

    Flink has no default catalog or namespace for a stored view: it runs the expanded query in
    the view's own catalog and database. When the default namespace is another database, the
    expanded query is the SQL with each unqualified table name qualified with it
    (:func:`~viewstore.formats.qualify.qualify_tables`); the catalog is not written, as Flink's name
    for the catalog of this metastore is the session's choice, and a ``database.table`` name
    resolves in the view's own catalog.

    Raises:
        ValidationError: the view has no columns or a column type Flink cannot express
            (``uuid``, ``variant``), or its default namespace is another database and its SQL
            cannot be qualified safely.
    """
    if not definition.columns:
        raise invalid("columns", "a Flink view needs at least one column")
    kept = chosen_engine_types(definition.properties, NAME, len(definition.columns))
    parameters = passthrough(definition.properties,
                             lambda key: key in (IS_GENERIC, COMMENT, "comment") or _column_key(key) is not None)
    parameters[IS_GENERIC] = "true"
    for i, column in enumerate(definition.columns):
        data_type = kept[i] if kept and _consistent(kept[i], column) else \
            engine_type(column.type, nullable=column.nullable, field=f"columns[{i}].type")
        parameters[f"{SCHEMA_PREFIX}{i}.name"] = column.name
        parameters[f"{SCHEMA_PREFIX}{i}.data-type"] = data_type
        if column.comment is not None:
            parameters[f"{SCHEMA_PREFIX}{i}.comment"] = column.comment
    if definition.comment is not None:
        parameters[COMMENT] = definition.comment
    if PLAIN_COMMENT_KEY in definition.properties:
        parameters["comment"] = definition.properties[PLAIN_COMMENT_KEY]
    return hms_record(definition, parameters=parameters, cols=[], original_text=definition.sql,
                      expanded_text=_expanded_text(definition))


def _expanded_text(definition: ViewDefinition) -> str:
    """The expanded query to write: the kept one while it was recorded with the SQL and resolves the
    unqualified names in the view's namespace; else the SQL, qualified when that namespace is not
    the record's database.

    Raises:
        ValidationError: the SQL must be qualified and cannot be (see :func:`qualify_tables`).
    """
    sql, namespace = definition.sql, definition.default_namespace
    kept = second_text(definition.properties, EXPANDED_TEXT_KEY, sql)
    resolving = _implied(sql, kept)
    if resolving is None:  # the kept text names no database: it is what Flink runs in the record's database
        fits = not needs_qualifying(namespace, definition.database)
    else:  # it names one: that must be the view's (its own database when it has no other)
        fits = not needs_qualifying(namespace or ((definition.database,) if definition.database else ()),
                                    resolving)
    if fits:
        return kept
    if needs_qualifying(namespace, definition.database):
        return qualify_tables(sql, NAME, namespace, "viewExpandedText")
    return sql


def _consistent(data_type: str, column: Column) -> bool:
    try:
        return parse_data_type(data_type) == (column.type, column.nullable)
    except ValidationError:
        return False


# --------------------------------------------------------------------------------------------
# Types: Flink data types <-> Iceberg types

_MAX_LENGTH = 2147483647
_SIMPLE = {"boolean": "boolean", "tinyint": "int", "smallint": "int", "int": "int", "integer": "int",
           "bigint": "long", "float": "float", "date": "date", "string": "string", "bytes": "binary",
           "null": "unknown"}
_TO_FLINK = {
    "boolean": "BOOLEAN", "int": "INT", "long": "BIGINT", "float": "FLOAT", "double": "DOUBLE",
    "date": "DATE", "time": "TIME(0)", "timestamp": "TIMESTAMP(6)",
    "timestamptz": "TIMESTAMP(6) WITH LOCAL TIME ZONE", "timestamp_ns": "TIMESTAMP(9)",
    "timestamptz_ns": "TIMESTAMP(9) WITH LOCAL TIME ZONE", "string": f"VARCHAR({_MAX_LENGTH})",
    "binary": f"VARBINARY({_MAX_LENGTH})", "unknown": "NULL",
}


def parse_data_type(text: str, field: str = "data-type") -> tuple[IcebergType, bool]:
    """The Iceberg type of a Flink data type, and whether it is nullable.

    Accepts the serialized forms (``VARCHAR(2147483647)``, ``TIMESTAMP(3) WITH LOCAL TIME ZONE``,
    ``ROW<`a` INT NOT NULL 'comment'>``, ``MAP<STRING, INT>``, ``DECIMAL(10, 2)``) and the usual
    shorthands (``STRING``, ``BYTES``, ``TIMESTAMP_LTZ(3)``, ``INT ARRAY``, ``ROW(a INT)``).
    ``BINARY(n)`` becomes ``fixed[n]``, as in Iceberg's Flink integration.

    Raises:
        ValidationError: not a Flink data type, or one without an Iceberg equivalent (``MULTISET``,
            ``RAW``, intervals, ``TIMESTAMP WITH TIME ZONE``).
    """
    tokens = TypeTokens(text, field)
    nullable: list[bool] = []

    def parse() -> IcebergType:
        result, is_nullable = _parse(tokens)
        tokens.expect_end()
        nullable.append(is_nullable)
        return result

    return bounded(parse, field), nullable[0]


def iceberg_type(text: str, field: str = "data-type") -> IcebergType:
    """The Iceberg type of a Flink data type (see :func:`parse_data_type`).

    Raises:
        ValidationError: not a Flink data type, or one without an Iceberg equivalent.
    """
    return parse_data_type(text, field)[0]


def _parse(tokens: TypeTokens) -> tuple[IcebergType, bool]:
    """data type := base [NOT NULL | NULL] { ARRAY [NOT NULL | NULL] }  (``INT ARRAY`` is ``ARRAY<INT>``)."""
    type_ = _parse_base(tokens)
    nullable = _nullability(tokens)
    while tokens.at_word("array") or tokens.at_word("multiset"):
        if tokens.word() == "multiset":
            raise tokens.error("Flink MULTISET has no Iceberg equivalent")
        type_, nullable = ListType(type_, not nullable), _nullability(tokens)
    return type_, nullable


def _nullability(tokens: TypeTokens) -> bool:
    if tokens.accept_words("not", "null"):
        return False
    tokens.accept_words("null")
    return True


def _parse_base(tokens: TypeTokens) -> IcebergType:
    """One type name with its parameters: ``DECIMAL(10, 2)``, ``MAP<K, V>``, ``TIMESTAMP(3) WITH ...``."""
    name = tokens.word()
    if name in _SIMPLE:
        return PrimitiveType(_SIMPLE[name])
    if name == "double":
        tokens.accept_words("precision")
        return PrimitiveType("double")
    if name in ("char", "varchar"):
        if len(tokens.optional_numbers()) > 1:
            raise tokens.error(f"{name.upper()} takes one length")
        return PrimitiveType("string")
    if name in ("binary", "varbinary"):
        numbers = tokens.optional_numbers() or [1 if name == "binary" else _MAX_LENGTH]
        if len(numbers) > 1 or numbers[0] < 1:
            raise tokens.error(f"{name.upper()} takes one positive length")
        return FixedType(numbers[0]) if name == "binary" else PrimitiveType("binary")
    if name in ("decimal", "dec", "numeric"):
        numbers = tokens.optional_numbers() or [10, 0]
        precision, scale = (numbers + [0])[:2]
        if len(numbers) > 2 or not 1 <= precision <= 38 or not 0 <= scale <= precision:
            raise tokens.error("DECIMAL needs a precision of 1-38 and a scale of 0-precision")
        return DecimalType(precision, scale)
    if name == "time":
        tokens.optional_numbers()
        tokens.accept_words("without", "time", "zone")
        return PrimitiveType("time")
    if name in ("timestamp", "timestamp_ltz"):
        precision = (tokens.optional_numbers() or [6])[0]
        with_zone = name == "timestamp_ltz"
        if name == "timestamp":
            if tokens.accept_words("with", "local", "time", "zone"):
                with_zone = True
            elif tokens.accept_words("with", "time", "zone"):
                raise tokens.error("Flink's TIMESTAMP WITH TIME ZONE has no Iceberg equivalent")
            else:
                tokens.accept_words("without", "time", "zone")
        base = "timestamptz" if with_zone else "timestamp"
        return PrimitiveType(base if precision <= 6 else base + "_ns")
    if name == "array":
        tokens.expect("<")
        element, nullable = _parse(tokens)
        tokens.expect(">")
        return ListType(element, not nullable)
    if name == "map":
        tokens.expect("<")
        key, _ = _parse(tokens)  # Iceberg map keys are always required
        tokens.expect(",")
        value, nullable = _parse(tokens)
        tokens.expect(">")
        return MapType(key, value, not nullable)
    if name == "row":
        return _parse_row(tokens)
    raise tokens.error(f"Flink type {name.upper()!r} has no Iceberg equivalent or is unknown")


def _parse_row(tokens: TypeTokens) -> StructType:
    """ROW<name type ['description'], ...> or ROW(name type, ...)."""
    close = ">" if tokens.accept("<") else ")"
    if close == ")":
        tokens.expect("(")
    fields: list[StructField] = []
    seen: set[str] = set()
    while not tokens.accept(close):
        if fields:
            tokens.expect(",")
        token = tokens.next()
        if token.kind not in ("word", "quoted") or not token.value:
            raise tokens.error(f"expected a ROW field name at position {token.position}")
        if token.value.lower() in seen:
            raise tokens.error(f"duplicate ROW field {token.value!r}")
        seen.add(token.value.lower())
        type_, nullable = _parse(tokens)
        description = None
        following = tokens.peek()
        if following is not None and following.kind == "string":
            description = tokens.next().value
        fields.append(StructField(token.value, type_, not nullable, description))
    return StructType(tuple(fields))


def engine_type(type_: IcebergType, *, nullable: bool = True, field: str = "type") -> str:
    """The Flink data type (serialized form) for an Iceberg type.

    Raises:
        ValidationError: Flink has no exact type for it (``uuid``, ``variant``).
    """
    suffix = "" if nullable else " NOT NULL"
    if isinstance(type_, DecimalType):
        return f"DECIMAL({type_.precision}, {type_.scale}){suffix}"
    if isinstance(type_, FixedType):
        return f"BINARY({type_.length}){suffix}"
    if isinstance(type_, ListType):
        return f"ARRAY<{engine_type(type_.element, nullable=not type_.element_required, field=field)}>{suffix}"
    if isinstance(type_, MapType):
        key = engine_type(type_.key, nullable=False, field=field)
        value = engine_type(type_.value, nullable=not type_.value_required, field=field)
        return f"MAP<{key}, {value}>{suffix}"
    if isinstance(type_, StructType):
        fields = []
        for f in type_.fields:
            text = "`" + f.name.replace("`", "``") + "` " + engine_type(f.type, nullable=not f.required, field=field)
            if f.comment is not None:
                text += " '" + f.comment.replace("'", "''") + "'"
            fields.append(text)
        return f"ROW<{', '.join(fields)}>{suffix}"
    if isinstance(type_, PrimitiveType) and type_.name in _TO_FLINK:
        return _TO_FLINK[type_.name] + suffix
    raise invalid(field, f"Flink has no type for Iceberg {type_}")
