"""Trino (and Presto) views in the Hive metastore.

Trino marks its views with the parameters ``presto_view=true`` and ``comment=Presto View`` and keeps
the whole definition in ``viewOriginalText`` as ``/* Presto View: <Base64 of a JSON document> */``.
The JSON has ``originalSql``, ``catalog``, ``schema``, ``columns`` (name, type signature, optional
comment), ``comment``, ``owner``, ``runAsInvoker`` and, in recent versions, ``path``. The HMS columns
hold one placeholder (``dummy string``) and ``viewExpandedText`` is the marker ``/* Presto View */``.

Reading follows Trino's rules, not looser ones: ``presto_view`` must be exactly ``true``; the comment
is compared case-insensitively; a missing ``runAsInvoker`` means definer security.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from typing import Any

from ..model import Column
from ..types import DecimalType, IcebergType, ListType, MapType, PrimitiveType, StructField, StructType
from .base import (VIRTUAL_VIEW, TypeTokens, ViewDefinition, bounded, chosen_engine_types, column_types_property,
                   hms_record, invalid, parameters_of, passthrough, reserved_key, strip_nested, text_of)

__all__ = ["NAME", "claims", "is_materialized_view", "owns_parameter", "decode", "encode", "read_payload",
           "iceberg_type", "engine_type", "PATH_KEY"]

NAME = "trino"

FLAG = "presto_view"
VIEW_COMMENT = "Presto View"
MATERIALIZED_VIEW_COMMENT = "Presto Materialized View"
PREFIX = "/* Presto View: "
SUFFIX = " */"
EXPANDED_MARKER = "/* Presto View */"

#: The property that keeps the JSON ``path`` list (compact JSON text) when the payload has one.
PATH_KEY = reserved_key(NAME, "path")

#: What this codec writes as ``trino_created_by`` when the definition does not say.
CREATED_BY = "viewstore"

_OWN_PARAMETERS = frozenset({FLAG, "trino_created_by", "trino_version", "trino_query_id",
                             "presto_version", "presto_query_id"})


def claims(table_type: str, parameters: Mapping[str, str]) -> bool:
    """Whether the record is a Trino view, following Trino's own test.

    Args:
        table_type: the record's ``tableType``.
        parameters: the record's parameters.

    Returns:
        True for a Trino view; False when the record has no ``presto_view`` parameter.

    Raises:
        ValidationError: the record carries ``presto_view`` but is not a logical view to Trino: a
            materialized view, a flag other than exactly ``true``, or a comment other than
            ``Presto View``. (Trino treats such a record as neither its own view nor a Hive view.)
    """
    if FLAG not in parameters:
        return False
    flag, comment = parameters[FLAG], parameters.get("comment")
    if flag != "true":
        raise invalid(f"parameters.{FLAG}", f"is {flag!r}; Trino accepts only exactly 'true', and with the "
                                            "flag present the record is not a Hive view either")
    if is_materialized_view(parameters):
        raise invalid("parameters.comment", f"{comment!r} marks a Trino materialized view, not a logical view")
    if comment is None or comment.lower() != VIEW_COMMENT.lower():
        raise invalid("parameters.comment", f"is {comment!r}; a Trino view has presto_view=true together with "
                                            f"comment {VIEW_COMMENT!r}")
    return table_type == VIRTUAL_VIEW


def is_materialized_view(parameters: Mapping[str, str]) -> bool:
    """Whether the parameters mark a Trino materialized view (``presto_view=true`` with the comment
    ``Presto Materialized View`` in any case), as Trino itself tells one from a view."""
    comment = parameters.get("comment")
    return (parameters.get(FLAG) == "true" and comment is not None
            and comment.lower() == MATERIALIZED_VIEW_COMMENT.lower())


def owns_parameter(key: str, parameters: Mapping[str, str] | None = None) -> bool:
    """Whether ``key`` is an HMS parameter Trino writes (other engines' records leave it out)."""
    return key in _OWN_PARAMETERS


# --------------------------------------------------------------------------------------------
# Decoding


def read_payload(text: str | None, field: str = "viewOriginalText") -> dict[str, Any]:
    """The JSON document inside ``/* Presto View: <Base64> */``.

    Args:
        text: the ``viewOriginalText`` of the record.
        field: the field name to use in errors.

    Raises:
        ValidationError: the text is missing, lacks the prefix or suffix, or holds malformed Base64,
            bytes that are not UTF-8, or something other than a JSON object.
    """
    if text is None:
        raise invalid(field, "a Trino view keeps its definition here, but the field is missing")
    if not text.startswith(PREFIX) or not text.endswith(SUFFIX) or len(text) < len(PREFIX) + len(SUFFIX):
        raise invalid(field, f"a Trino view definition must look like '{PREFIX}<Base64>{SUFFIX}', "
                             f"found {text[:40]!r}")
    encoded = text[len(PREFIX):len(text) - len(SUFFIX)]
    try:
        # Java's decoder treats the padding as optional, so restore it before decoding.
        raw = base64.b64decode(encoded + "=" * (-len(encoded) % 4), validate=True)
    except (binascii.Error, ValueError) as e:
        raise invalid(field, f"malformed Base64 payload in the Presto View text: {e}") from e
    try:
        document = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise invalid(field, f"the Presto View payload is not UTF-8: {e}") from e
    except (ValueError, RecursionError) as e:
        raise invalid(field, f"the Presto View payload is not JSON: {e}") from e
    if not isinstance(document, dict):
        raise invalid(field, f"the Presto View payload must be a JSON object, not {type(document).__name__}")
    return document


def _optional_string(document: Mapping[str, Any], key: str, field: str) -> str | None:
    value = document.get(key)
    if value is not None and not isinstance(value, str):
        raise invalid(f"{field}.{key}", f"must be a string or null, not {value!r}")
    return value


def decode(record: Mapping[str, Any]) -> ViewDefinition:
    """Read a Trino view record.

    Columns, comment, default catalog and schema, owner and security come from the JSON payload;
    the HMS ``comment`` is the constant marker and ``sd.cols`` is a placeholder. When the view runs
    as its definer and the HMS table has an owner, that owner wins, as in Trino.

    Raises:
        ValidationError: the payload is malformed (see :func:`read_payload`), has no ``originalSql``
            or ``columns``, or names a type that is not a Trino type or has no Iceberg equivalent.
    """
    field = "viewOriginalText"
    params = parameters_of(record)
    document = read_payload(text_of(record, field), field)

    sql = document.get("originalSql")
    if not isinstance(sql, str):
        raise invalid(f"{field}.originalSql", "the Presto View JSON has no originalSql string")
    raw_columns = document.get("columns")
    if not isinstance(raw_columns, list) or not raw_columns:
        raise invalid(f"{field}.columns", "the Presto View JSON needs a non-empty columns list")
    columns, types = [], []
    for i, item in enumerate(raw_columns):
        where = f"{field}.columns[{i}]"
        if not isinstance(item, Mapping):
            raise invalid(where, "must be an object with name and type")
        name, signature = item.get("name"), item.get("type")
        if not isinstance(name, str) or not name:
            raise invalid(f"{where}.name", f"must be a non-empty string, not {name!r}")
        if not isinstance(signature, str):
            raise invalid(f"{where}.type", f"must be a Trino type signature, not {signature!r}")
        columns.append(Column(name, iceberg_type(signature, f"{where}.type"), _optional_string(item, "comment", where)))
        types.append(signature)

    run_as_invoker = document.get("runAsInvoker")
    if run_as_invoker is None:
        run_as_invoker = False  # Trino reads a missing flag as false: definer security
    if not isinstance(run_as_invoker, bool):
        raise invalid(f"{field}.runAsInvoker", f"must be true or false, not {run_as_invoker!r}")

    properties = passthrough(params, lambda key: key in (FLAG, "comment"))
    properties.update(column_types_property(NAME, types))
    path = document.get("path")
    if path is not None:
        if not isinstance(path, list):
            raise invalid(f"{field}.path", f"must be a list, not {path!r}")
        properties[PATH_KEY] = json.dumps(path, ensure_ascii=False, separators=(",", ":"))

    json_owner = _optional_string(document, "owner", field)
    table_owner = text_of(record, "owner")
    owner = (json_owner or table_owner) if run_as_invoker else (table_owner or json_owner)
    schema = _optional_string(document, "schema", field)
    return ViewDefinition(
        dialect=NAME, sql=sql, columns=tuple(columns),
        comment=_optional_string(document, "comment", field),
        default_catalog=_optional_string(document, "catalog", field),
        default_namespace=(schema,) if schema else (),
        owner=owner, security_mode="INVOKER" if run_as_invoker else "DEFINER",
        properties=properties, database=text_of(record, "dbName"), name=text_of(record, "tableName"))


# --------------------------------------------------------------------------------------------
# Encoding


def encode(definition: ViewDefinition) -> dict[str, Any]:
    """The HMS record Trino writes for this view.

    Parameters decoded from a Trino record are written back as they are; a definition from
    elsewhere is labelled ``trino_created_by=viewstore`` and ``trino_version=viewstore <version>``.
    A definition without a security mode is written with Trino's default, definer security. For
    an invoker view the JSON has no owner (Trino forbids one); the HMS owner still records it.

    Raises:
        ValidationError: the view has no columns, a namespace of more than one level, a schema
            without a catalog, a column type Trino cannot express, a malformed path property, or
            text with a lone surrogate (the JSON is UTF-8; the message names the field).
    """
    if not definition.columns:
        raise invalid("columns", "a Trino view needs at least one column")
    if len(definition.default_namespace) > 1:
        raise invalid("default_namespace", f"Trino has one schema level, not {definition.default_namespace}")
    if definition.default_namespace and definition.default_catalog is None:
        raise invalid("default_catalog", "Trino needs a default catalog when the view has a default schema "
                                          "(replace the view with one: default_catalog=, --default-catalog)")

    kept = chosen_engine_types(definition.properties, NAME, len(definition.columns))
    payload: dict[str, Any] = {"originalSql": definition.sql}
    if definition.default_catalog is not None:
        payload["catalog"] = definition.default_catalog
    if definition.default_namespace:
        payload["schema"] = definition.default_namespace[0]
    payload["columns"] = []
    for i, column in enumerate(definition.columns):
        signature = kept[i] if kept and _consistent(kept[i], column.type) else \
            engine_type(column.type, f"columns[{i}].type")
        entry = {"name": column.name, "type": signature}
        if column.comment is not None:
            entry["comment"] = column.comment
        payload["columns"].append(entry)
    if definition.comment is not None:
        payload["comment"] = definition.comment
    run_as_invoker = definition.security_mode == "INVOKER"
    if not run_as_invoker and definition.owner is not None:
        payload["owner"] = definition.owner
    payload["runAsInvoker"] = run_as_invoker
    if PATH_KEY in definition.properties:
        try:
            path = json.loads(definition.properties[PATH_KEY])
        except ValueError as e:
            raise invalid(f"properties.{PATH_KEY}", f"must be a JSON list: {e}") from e
        if not isinstance(path, list):
            raise invalid(f"properties.{PATH_KEY}", f"must be a JSON list, not {path!r}")
        payload["path"] = path

    try:
        encoded = base64.b64encode(json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
    except UnicodeEncodeError as e:  # a lone surrogate, which UTF-8 cannot hold
        raise invalid(_not_unicode(payload, "viewOriginalText"), "is not valid Unicode (it holds a lone surrogate), "
                                                                 "so the Presto View JSON cannot be written") from e
    parameters = passthrough(definition.properties, lambda key: key in (FLAG, "comment"))
    parameters.update({FLAG: "true", "comment": VIEW_COMMENT})
    if reserved_key(NAME, "column-types") not in definition.properties:
        # Not decoded from a Trino record: label the record the way Trino labels the views it writes.
        parameters.setdefault("trino_created_by", CREATED_BY)
        parameters.setdefault("trino_version", _writer_version())
    return hms_record(
        definition, parameters=parameters,
        cols=[{"name": "dummy", "type": "string", "comment": None}],
        original_text=PREFIX + encoded.decode("ascii") + SUFFIX, expanded_text=EXPANDED_MARKER,
        storage={"location": "", "inputFormat": None, "outputFormat": None,
                 "serdeInfo": {"serializationLib": None}})


def _not_unicode(value: Any, where: str) -> str:
    """Where in the payload a string that UTF-8 cannot encode sits (``viewOriginalText.columns[0].name``)."""
    if isinstance(value, dict):
        items = [(f"{where}.{key}", item) for key, item in value.items()]
    elif isinstance(value, list):
        items = [(f"{where}[{i}]", item) for i, item in enumerate(value)]
    else:
        return where
    for inner, item in items:
        try:
            json.dumps(item, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            return _not_unicode(item, inner)
    return where


def _writer_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"viewstore {version('viewstore')}"
    except PackageNotFoundError:
        return "viewstore"


def _consistent(signature: str, type_: IcebergType) -> bool:
    """Whether a recorded signature still spells the column's (current) Iceberg type."""
    try:
        return iceberg_type(signature, "type") == strip_nested(type_)
    except ValueError:
        return False


# --------------------------------------------------------------------------------------------
# Types: Trino type signatures <-> Iceberg types

_SIMPLE = {
    "boolean": "boolean", "tinyint": "int", "smallint": "int", "integer": "int", "int": "int",
    "bigint": "long", "real": "float", "double": "double", "date": "date", "varbinary": "binary",
    "uuid": "uuid", "unknown": "unknown",
}
_WITHOUT_ICEBERG_EQUIVALENT = frozenset({
    "json", "ipaddress", "interval", "hyperloglog", "p4hyperloglog", "qdigest", "tdigest", "setdigest",
    "color", "geometry", "sphericalgeography", "bingtile", "kdbtree", "jsonpath", "variant",
})
_TO_TRINO = {
    "boolean": "boolean", "int": "integer", "long": "bigint", "float": "real", "double": "double",
    "date": "date", "time": "time(6)", "timestamp": "timestamp(6)", "timestamptz": "timestamp(6) with time zone",
    "timestamp_ns": "timestamp(9)", "timestamptz_ns": "timestamp(9) with time zone", "string": "varchar",
    "uuid": "uuid", "binary": "varbinary", "unknown": "unknown",
}


def iceberg_type(signature: str, field: str = "type") -> IcebergType:
    """The Iceberg type of a Trino type signature.

    ``tinyint``/``smallint``/``integer`` become ``int``, ``varchar(n)``/``char(n)`` ``string``,
    ``timestamp(p)`` ``timestamp`` (``timestamp_ns`` above microseconds), ``... with time zone`` the
    ``tz`` variant, ``array(t)`` a list, ``map(k,v)`` a map and ``row("a" t, ...)`` a struct.

    Args:
        signature: e.g. ``row("field1" integer,"field2" varchar)``.
        field: the field name to use in errors.

    Raises:
        ValidationError: not a Trino type, or a Trino type without an Iceberg equivalent
            (``json``, ``time with time zone``, a row field without a name...).
    """
    tokens = TypeTokens(signature, field)

    def parse() -> IcebergType:
        result = _parse(tokens)
        tokens.expect_end()
        return result

    return bounded(parse, field)


def _parse(tokens: TypeTokens) -> IcebergType:
    """type := name [ "(" parameters ")" ] [ "with time zone" ]; row/array/map parameters are types."""
    name = tokens.word()
    if name in _SIMPLE:
        return PrimitiveType(_SIMPLE[name])
    if name in ("varchar", "char"):
        if len(tokens.optional_numbers()) > 1:
            raise tokens.error(f"{name} takes one length")
        return PrimitiveType("string")
    if name == "decimal":
        numbers = tokens.optional_numbers() or [38, 0]
        precision, scale = (numbers + [0])[:2]
        if len(numbers) > 2 or not 1 <= precision <= 38 or not 0 <= scale <= precision:
            raise tokens.error("decimal needs a precision of 1-38 and a scale of 0-precision")
        return DecimalType(precision, scale)
    if name == "time":
        tokens.optional_numbers()
        if tokens.accept_words("with", "time", "zone"):
            raise tokens.error("Trino's 'time with time zone' has no Iceberg equivalent")
        return PrimitiveType("time")
    if name == "timestamp":
        precision = (tokens.optional_numbers() or [3])[0]  # Trino's plain timestamp has precision 3
        with_zone = tokens.accept_words("with", "time", "zone")
        base = "timestamptz" if with_zone else "timestamp"
        return PrimitiveType(base if precision <= 6 else base + "_ns")
    if name == "array":
        tokens.expect("(")
        element = _parse(tokens)
        tokens.expect(")")
        return ListType(element)
    if name == "map":
        tokens.expect("(")
        key = _parse(tokens)
        tokens.expect(",")
        value = _parse(tokens)
        tokens.expect(")")
        return MapType(key, value)
    if name == "row":
        tokens.expect("(")
        fields: list[StructField] = []
        while True:
            fields.append(_row_field(tokens, {f.name.lower() for f in fields}))
            if tokens.accept(")"):
                return StructType(tuple(fields))
            tokens.expect(",")
    if name in _WITHOUT_ICEBERG_EQUIVALENT:
        raise tokens.error(f"Trino type {name!r} has no Iceberg equivalent")
    raise tokens.error(f"unknown Trino type {name!r}")


def _row_field(tokens: TypeTokens, seen: set[str]) -> StructField:
    """field := ( "quoted name" | name ) type; a field without a name is rejected."""
    token, following = tokens.peek(), tokens.peek(1)
    named = token is not None and (
        token.kind == "quoted"
        or (token.kind == "word" and following is not None and following.kind in ("word", "quoted")))
    if not named:
        raise tokens.error("a row field without a name has no Iceberg equivalent")
    name = tokens.next().value
    if not name or name.lower() in seen:
        raise tokens.error(f"row field names must be non-empty and unique, found {name!r}")
    return StructField(name, _parse(tokens))


def engine_type(type_: IcebergType, field: str = "type") -> str:
    """The Trino type signature Trino writes for an Iceberg type (nested nullability and comments,
    which Trino types do not have, are left out).

    Raises:
        ValidationError: Trino has no exact type for it (``fixed[n]``, ``variant``).
    """
    if isinstance(type_, DecimalType):
        return f"decimal({type_.precision},{type_.scale})"
    if isinstance(type_, ListType):
        return f"array({engine_type(type_.element, field)})"
    if isinstance(type_, MapType):
        return f"map({engine_type(type_.key, field)},{engine_type(type_.value, field)})"
    if isinstance(type_, StructType):
        fields = ",".join('"' + f.name.replace('"', '""') + '" ' + engine_type(f.type, field) for f in type_.fields)
        return f"row({fields})"
    if isinstance(type_, PrimitiveType) and type_.name in _TO_TRINO:
        return _TO_TRINO[type_.name]
    raise invalid(field, f"Trino has no type for Iceberg {type_}")
