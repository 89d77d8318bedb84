"""Spark's persistent views in the Hive metastore.

Spark writes the view text to both ``viewOriginalText`` and ``viewExpandedText`` and describes the
rest in parameters:

* ``spark.sql.create.version`` - the Spark version that wrote the view (``2.2 or prior`` when Spark
  only altered a view another engine created);
* ``spark.sql.sources.schema`` - the case-preserving schema as Spark's StructType JSON, either as one
  key or split into ``spark.sql.sources.schema.numParts`` and ``.part.0`` ... ``.part.N-1``;
* ``view.catalogAndNamespace.numParts`` / ``.part.N`` - the current catalog and namespace when the view
  was created (Spark 2.2-2.4 wrote ``view.default.database`` instead);
* ``view.query.out.numCols`` / ``.col.N`` - the names of the query's output columns;
* ``view.schemaMode`` - ``BINDING`` (also when absent), ``COMPENSATION``, ``TYPE EVOLUTION``, ``EVOLUTION``;
* ``view.sqlConfig.<conf>`` - the SQL configurations captured at creation;
* ``view.referredTempViewNames`` and friends - JSON lists, ``[]`` for a persistent view;
* ``comment`` - the view comment.

The definition's SQL is ``viewOriginalText``. An older record whose ``viewExpandedText`` differs keeps
it in ``hms.spark.expanded-text``; Spark runs the expanded text, so it is written back only while the
SQL is unchanged, and after a change both texts are the new SQL.

``sd.cols`` repeats the schema with Hive types (names in lower case, as the metastore keeps them) when
Hive can express them, and is Spark's placeholder ``col array<string>`` otherwise. A column's Spark
type and field metadata that its Iceberg type and type string cannot give back (a collation, a
``char(n)`` nested in a struct) are kept in ``hms.spark.fields`` and written back while the column
keeps its Iceberg type, under the column's current name; like ``hms.spark.column-types`` they follow
the column, not the SQL. The codec keeps
every ``view.*`` and ``spark.sql.*`` parameter it does not turn into a field under its own name;
:func:`sql_configs`, :func:`query_output_columns` and :func:`schema_mode` read them back.

Types follow Iceberg's Spark integration: Spark ``timestamp`` (with local time zone) is Iceberg
``timestamptz`` and ``timestamp_ntz`` is ``timestamp``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..errors import ValidationError
from ..model import Column, View
from ..types import (MAX_DEPTH, DecimalType, IcebergType, ListType, MapType, PrimitiveType, StructField, StructType,
                     too_large, type_number)
from .base import (ViewDefinition, TypeTokens, bounded, chosen_engine_types, column_types_property, hive_columns_of,
                   hms_record, invalid, parameters_of, passthrough, reserved_key, second_text,
                   second_text_properties, sql_digest, text_of)

__all__ = ["NAME", "claims", "owns_parameter", "decode", "encode", "schema_json", "sql_configs",
           "query_output_columns", "recorded_query_columns", "schema_mode", "is_altered_hive_view", "iceberg_type",
           "engine_type", "SPARK_VERSION", "ALTERED_HIVE_VIEW_KEY", "EXPANDED_TEXT_KEY", "QUERY_COLUMN_NAMES",
           "QUERY_OUT_SQL_KEY", "FIELDS_KEY", "SPARK_SCHEMA", "COLLATIONS_KEY", "renamed_collations"]

NAME = "spark"

#: The Spark release whose HMS layout ``encode`` writes, and the version it records.
SPARK_VERSION = "4.3.0"

CREATE_VERSION = "spark.sql.create.version"
LEGACY_CREATE_VERSION = "2.2 or prior"
SCHEMA = "spark.sql.sources.schema"
SCHEMA_NUM_PARTS = SCHEMA + ".numParts"
SCHEMA_PART = SCHEMA + ".part."
CATALOG_NS_NUM_PARTS = "view.catalogAndNamespace.numParts"
CATALOG_NS_PART = "view.catalogAndNamespace.part."
LEGACY_DEFAULT_DATABASE = "view.default.database"
QUERY_OUT_NUM_COLS = "view.query.out.numCols"
QUERY_OUT_COL = "view.query.out.col."
#: Where the store records the query's own output column names (see :func:`recorded_query_columns`).
QUERY_COLUMN_NAMES = "spark.query-column-names"
#: The version summary key where the Spark catalog and ``viewstore.spark`` record a view's Spark
#: schema JSON when its Iceberg columns lose part of it (a collation, ``TINYINT``, ``CHAR(n)``).
SPARK_SCHEMA = "spark.schema"
SQL_CONFIG_PREFIX = "view.sqlConfig."
SCHEMA_MODE = "view.schemaMode"
REFERRED_TEMP_NAMES = ("view.referredTempViewNames", "view.referredTempFunctionsNames",
                       "view.referredTempVariablesNames")
SCHEMA_MODES = ("BINDING", "COMPENSATION", "TYPE EVOLUTION", "EVOLUTION")
SESSION_CATALOG = "spark_catalog"

#: Above this length Spark splits the schema JSON into parts (``spark.sql.sources.schemaStringLengthThreshold``).
SCHEMA_LENGTH_THRESHOLD = 4000
#: The field-metadata key where Spark keeps a ``char(n)``/``varchar(n)`` type it stores as ``string``.
CHAR_VARCHAR_KEY = "__CHAR_VARCHAR_TYPE_STRING"
#: The field-metadata key where Spark keeps the collations of a column's strings, by field path
#: (``name``, ``name.element``, ``name.key``...).
COLLATIONS_KEY = "__COLLATIONS"
#: Spark's ``sd.cols`` placeholder for a schema Hive cannot express.
PLACEHOLDER_COLUMN = {"name": "col", "type": "array<string>", "comment": "from deserializer"}

#: Set to ``"true"`` on a Hive view that Spark later altered: its SQL is HiveQL written by Hive.
ALTERED_HIVE_VIEW_KEY = reserved_key(NAME, "hive-view-altered")
#: The property that keeps ``viewExpandedText`` when it differs from the original text (the SQL);
#: written back only while the SQL is unchanged (see :func:`viewstore.formats.base.second_text`).
EXPANDED_TEXT_KEY = reserved_key(NAME, "expanded-text")
#: The digest of the SQL a record's ``view.query.out.*`` names were recorded with: the names are
#: those of that query's output, so they are written back only while the SQL is unchanged.
QUERY_OUT_SQL_KEY = reserved_key(NAME, "query-out-sql")
#: The name, Spark type and field metadata of each column whose Iceberg type and kept type string
#: cannot give them back (a collation, ``char(n)`` nested in a struct, metadata of Spark's own), as
#: a JSON list of ``[name, type, metadata]`` with ``null`` for every other column; written back for
#: the column of that name (or in that place, after a rename) while its Iceberg type is unchanged.
FIELDS_KEY = reserved_key(NAME, "fields")

_MARKER_PREFIXES = (SCHEMA, "view.catalogAndNamespace.", "view.query.out.", SQL_CONFIG_PREFIX)
_MARKER_KEYS = frozenset({CREATE_VERSION, LEGACY_DEFAULT_DATABASE, SCHEMA_MODE, *REFERRED_TEMP_NAMES})


def claims(table_type: str, parameters: Mapping[str, str]) -> bool:
    """Whether the record carries any of the parameters only Spark writes."""
    return any(key in _MARKER_KEYS or key.startswith(_MARKER_PREFIXES) for key in parameters)


def owns_parameter(key: str, parameters: Mapping[str, str] | None = None) -> bool:
    """Whether ``key`` is an HMS parameter Spark writes for views."""
    return key.startswith("spark.sql.") or key in _MARKER_KEYS or key.startswith(_MARKER_PREFIXES)


def is_altered_hive_view(source: ViewDefinition | Mapping[str, str]) -> bool:
    """Whether a Spark-marked record is really a Hive view that Spark altered later.

    Spark's ALTER on a view it did not create adds ``spark.sql.create.version = "2.2 or prior"`` and
    the schema, but none of the ``view.*`` keys a Spark-created view has.

    Args:
        source: the record's parameters, or a decoded definition.
    """
    if isinstance(source, ViewDefinition):
        return source.properties.get(ALTERED_HIVE_VIEW_KEY) == "true"
    return (source.get(CREATE_VERSION) == LEGACY_CREATE_VERSION
            and not any(key.startswith(("view.catalogAndNamespace.", "view.query.out."))
                        or key == LEGACY_DEFAULT_DATABASE for key in source))


# --------------------------------------------------------------------------------------------
# Decoding


def schema_json(parameters: Mapping[str, str]) -> str | None:
    """The schema JSON text from ``spark.sql.sources.schema``, reassembling split parts.

    Returns:
        The JSON text, or None when the record has neither form.

    Raises:
        ValidationError: ``numParts`` is not a count, or one of the parts is missing.
    """
    if SCHEMA in parameters:
        return parameters[SCHEMA]
    if SCHEMA_NUM_PARTS not in parameters:
        return None
    count = _count(parameters, SCHEMA_NUM_PARTS)
    parts = []
    for i in range(count):
        key = f"{SCHEMA_PART}{i}"
        if key not in parameters:
            raise invalid(f"parameters.{key}", f"is missing; {SCHEMA_NUM_PARTS} says there are {count} parts")
        parts.append(parameters[key])
    return "".join(parts)


def _count(parameters: Mapping[str, str], key: str) -> int:
    text = parameters[key]
    if not (text.isascii() and text.isdigit()):
        raise invalid(f"parameters.{key}", f"must be a count, not {text!r}")
    count = type_number(text)
    if count is None:
        raise invalid(f"parameters.{key}", f"must be a count Spark can read: {too_large(text)}")
    return count


def _indexed(parameters: Mapping[str, str], count_key: str, prefix: str) -> list[str]:
    values = []
    for i in range(_count(parameters, count_key)):
        key = f"{prefix}{i}"
        if key not in parameters:
            raise invalid(f"parameters.{key}", f"is missing; {count_key} is {parameters[count_key]}")
        values.append(parameters[key])
    return values


def _is_schema_key(key: str) -> bool:
    return key == SCHEMA or key.startswith(SCHEMA + ".")


def _becomes_a_field(key: str) -> bool:
    """The parameters that become definition fields (schema, comment, catalog and namespace)."""
    return (_is_schema_key(key) or key == "comment" or key.startswith("view.catalogAndNamespace.")
            or key == LEGACY_DEFAULT_DATABASE)


def decode(record: Mapping[str, Any]) -> ViewDefinition:
    """Read a Spark view record.

    The columns come from ``spark.sql.sources.schema`` (falling back to ``sd.cols``, read the way
    Spark reads Hive types); the default catalog and namespace from ``view.catalogAndNamespace.*``
    or the legacy ``view.default.database``.

    Raises:
        ValidationError: no view text, a schema JSON that does not parse or has an unsupported type,
            a missing split part, a malformed count, or an unknown ``view.schemaMode``.
    """
    params = parameters_of(record)
    original = text_of(record, "viewOriginalText")
    expanded = text_of(record, "viewExpandedText")
    sql = original if original and original.strip() else expanded
    if sql is None or not sql.strip():
        raise invalid("viewOriginalText", "a Spark view keeps its SQL here, but it is missing")
    mode = params.get(SCHEMA_MODE)
    if mode is not None and mode not in SCHEMA_MODES:
        raise invalid(f"parameters.{SCHEMA_MODE}", f"is {mode!r}, not one of {', '.join(SCHEMA_MODES)}")

    text = schema_json(params)
    kept: list[Any] = []
    if text is not None:
        columns, types, kept = _columns_from_schema_json(text)
    else:
        columns, types = _columns_from_hive(record)
    catalog, namespace = _catalog_and_namespace(params)
    properties = passthrough(params, _becomes_a_field)
    if QUERY_OUT_NUM_COLS in params:
        _indexed(params, QUERY_OUT_NUM_COLS, QUERY_OUT_COL)  # check it is complete
        properties[QUERY_OUT_SQL_KEY] = sql_digest(sql)
    properties.update(column_types_property(NAME, types))
    if any(kept):
        properties[FIELDS_KEY] = json.dumps(kept, ensure_ascii=False, separators=(",", ":"))
    properties.update(second_text_properties(EXPANDED_TEXT_KEY, expanded, sql))
    if is_altered_hive_view(params):
        properties[ALTERED_HIVE_VIEW_KEY] = "true"
    return ViewDefinition(
        dialect=NAME, sql=sql, columns=columns, comment=params.get("comment"),
        default_catalog=catalog, default_namespace=namespace, owner=text_of(record, "owner"),
        properties=properties, database=text_of(record, "dbName"), name=text_of(record, "tableName"))


def _columns_from_schema_json(text: str) -> tuple[tuple[Column, ...], list[str], list[list[Any] | None]]:
    field = f"parameters.{SCHEMA}"
    try:
        schema = json.loads(text)
    except (ValueError, RecursionError) as e:
        raise invalid(field, f"the Spark schema is not valid JSON: {e}") from e
    if not isinstance(schema, dict) or schema.get("type") != "struct" or not isinstance(schema.get("fields"), list):
        raise invalid(field, "the Spark schema must be a JSON struct type with a fields list")
    if not schema["fields"]:
        raise invalid(field, "the Spark schema has no fields")
    columns, types, kept = [], [], []
    for i, item in enumerate(schema["fields"]):
        name, type_, nullable, metadata = _struct_field(item, f"{field}.fields[{i}]")
        column = Column(name, iceberg_type(type_, f"{field}.fields[{i}].type"),
                        _comment(metadata, f"{field}.fields[{i}]"), nullable)
        columns.append(column)
        types.append(_type_string(type_, metadata))
        kept.append(None if _field_json(column, types[-1]) == (type_, metadata) else [name, type_, metadata])
    return tuple(columns), types, kept


def _columns_from_hive(record: Mapping[str, Any]) -> tuple[tuple[Column, ...], list[str]]:
    hive_columns = hive_columns_of(record)
    placeholder = [(PLACEHOLDER_COLUMN["name"], PLACEHOLDER_COLUMN["type"], PLACEHOLDER_COLUMN["comment"])]
    if not hive_columns or hive_columns == placeholder:
        raise invalid(f"parameters.{SCHEMA}", "a Spark view needs its schema here, and sd.cols holds none")
    columns = []
    for i, (name, type_string, comment) in enumerate(hive_columns):
        spark_type = parse_type_string(type_string, f"sd.cols[{i}].type")
        columns.append(Column(name, iceberg_type(spark_type, f"sd.cols[{i}].type"), comment))
    return tuple(columns), [type_string for _, type_string, _ in hive_columns]


def _catalog_and_namespace(params: Mapping[str, str]) -> tuple[str | None, tuple[str, ...]]:
    if CATALOG_NS_NUM_PARTS in params:
        parts = _indexed(params, CATALOG_NS_NUM_PARTS, CATALOG_NS_PART)
        if not parts:
            return None, ()
        return parts[0], tuple(parts[1:])
    if LEGACY_DEFAULT_DATABASE in params:
        return SESSION_CATALOG, (params[LEGACY_DEFAULT_DATABASE],)
    return None, ()


def _struct_field(item: Any, field: str) -> tuple[str, Any, bool, dict[str, Any]]:
    if not isinstance(item, dict):
        raise invalid(field, "a Spark struct field must be a JSON object")
    name, nullable, metadata = item.get("name"), item.get("nullable", True), item.get("metadata", {})
    if not isinstance(name, str) or not name:
        raise invalid(f"{field}.name", f"must be a non-empty string, not {name!r}")
    if "type" not in item:
        raise invalid(f"{field}.type", "is missing")
    if not isinstance(nullable, bool):
        raise invalid(f"{field}.nullable", f"must be true or false, not {nullable!r}")
    if not isinstance(metadata, dict):
        raise invalid(f"{field}.metadata", f"must be an object, not {metadata!r}")
    return name, item["type"], nullable, metadata


def _comment(metadata: Mapping[str, Any], field: str) -> str | None:
    comment = metadata.get("comment")
    if comment is not None and not isinstance(comment, str):
        raise invalid(f"{field}.metadata.comment", f"must be a string, not {comment!r}")
    return comment


def sql_configs(definition: ViewDefinition) -> dict[str, str]:
    """The SQL configurations Spark captured (``view.sqlConfig.*`` without the prefix)."""
    return {key[len(SQL_CONFIG_PREFIX):]: value for key, value in definition.properties.items()
            if key.startswith(SQL_CONFIG_PREFIX)}


def query_output_columns(definition: ViewDefinition) -> tuple[str, ...]:
    """The names of the query's output columns (``view.query.out.*``); empty when not recorded.

    Raises:
        ValidationError: the recorded list is incomplete.
    """
    if QUERY_OUT_NUM_COLS not in definition.properties:
        return ()
    return tuple(_indexed(definition.properties, QUERY_OUT_NUM_COLS, QUERY_OUT_COL))


def schema_mode(definition: ViewDefinition) -> str:
    """The view's schema mode; Spark reads an absent ``view.schemaMode`` as ``BINDING``."""
    return definition.properties.get(SCHEMA_MODE, "BINDING")


# --------------------------------------------------------------------------------------------
# Encoding


def encode(definition: ViewDefinition) -> dict[str, Any]:
    """The HMS record Spark 4.3 writes for this view.

    Properties decoded from a Spark record (they include ``spark.sql.create.version``) are written
    back as they are. A definition from elsewhere gets what Spark 4.3 adds by default: the create
    version, schema mode ``COMPENSATION``, empty temporary-object lists and the query output names
    (see :func:`recorded_query_columns`; the column names when none are recorded). The catalog and
    namespace become ``view.catalogAndNamespace.*``; a namespace without a catalog is recorded
    under Spark's session catalog ``spark_catalog``.

    Raises:
        ValidationError: the view has no columns or a column type Spark cannot express
            (``uuid``, ``fixed[n]``, nanosecond timestamps).
    """
    if not definition.columns:
        raise invalid("columns", "a Spark view needs at least one column")
    props = definition.properties
    kept = chosen_engine_types(props, NAME, len(definition.columns))
    # what the version's Spark schema says first (the Spark side records it with each version), then
    # what a metastore record said when the view was imported
    recorded = _matched(_schema_fields(definition) or _recorded_fields(props, len(definition.columns)),
                        definition.columns)
    fields = []
    for i, column in enumerate(definition.columns):
        type_, metadata = _field_json(column, kept[i] if kept else None, f"columns[{i}].type")
        if recorded[i] is not None:
            type_, metadata = _recorded_field(recorded[i], column, type_, metadata)
        fields.append({"name": column.name, "type": type_, "nullable": column.nullable, "metadata": metadata})
    schema_text = json.dumps({"type": "struct", "fields": fields}, ensure_ascii=False, separators=(",", ":"))

    parameters = passthrough(props, _becomes_a_field)
    if definition.comment is not None:
        parameters["comment"] = definition.comment
    if len(schema_text) <= SCHEMA_LENGTH_THRESHOLD:
        parameters[SCHEMA] = schema_text
    else:
        parts = [schema_text[i:i + SCHEMA_LENGTH_THRESHOLD]
                 for i in range(0, len(schema_text), SCHEMA_LENGTH_THRESHOLD)]
        parameters[SCHEMA_NUM_PARTS] = str(len(parts))
        parameters.update({f"{SCHEMA_PART}{i}": part for i, part in enumerate(parts)})
    if definition.default_catalog is not None or definition.default_namespace:
        parts = [definition.default_catalog or SESSION_CATALOG, *definition.default_namespace]
        parameters[CATALOG_NS_NUM_PARTS] = str(len(parts))
        parameters.update({f"{CATALOG_NS_PART}{i}": part for i, part in enumerate(parts)})

    from_spark = CREATE_VERSION in props
    if not from_spark:
        parameters[CREATE_VERSION] = SPARK_VERSION
        parameters.setdefault(SCHEMA_MODE, "COMPENSATION")
        for key in REFERRED_TEMP_NAMES:
            parameters.setdefault(key, "[]")
    _write_query_output(parameters, definition, add_missing=not from_spark)

    cols = [PLACEHOLDER_COLUMN]
    if all(_hive_compatible(field["type"]) for field in fields):
        cols = [{"name": f["name"].lower(), "type": _type_string(f["type"], f["metadata"]),
                 "comment": f["metadata"].get("comment")} for f in fields]
    return hms_record(
        definition, parameters=parameters, cols=cols, original_text=definition.sql,
        expanded_text=second_text(props, EXPANDED_TEXT_KEY, definition.sql),
        storage={"location": None,
                 "inputFormat": "org.apache.hadoop.mapred.SequenceFileInputFormat",
                 "outputFormat": "org.apache.hadoop.hive.ql.io.HiveSequenceFileOutputFormat",
                 "serdeInfo": {"serializationLib": "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe",
                               "parameters": {"serialization.format": "1"}}})


def _write_query_output(parameters: dict[str, str], definition: ViewDefinition, *, add_missing: bool) -> None:
    """Write ``view.query.out.*``, the names Spark resolves the query's output columns by.

    The names are the query's own (:func:`recorded_query_columns`) when recorded, else the record's
    list while the SQL is the one it was recorded with (:data:`QUERY_OUT_SQL_KEY`) and it fits the
    columns, else the column names, which are right only while no column list renamed the query's
    columns. A stale list (another SQL, or another column count) is never kept (for a stored view
    imported by a release that kept no digest, see :func:`with_import_digest`). Spark leaves the
    list out for ``EVOLUTION`` views, and a Spark record without one stays without.
    """
    existing = None
    if QUERY_OUT_NUM_COLS in parameters:
        try:
            existing = _indexed(parameters, QUERY_OUT_NUM_COLS, QUERY_OUT_COL)
        except ValidationError:
            existing = None
    for key in [k for k in parameters if k.startswith("view.query.out.")]:
        del parameters[key]
    if parameters.get(SCHEMA_MODE) == "EVOLUTION" or (existing is None and not add_missing):
        return
    names = recorded_query_columns(definition.summary, definition.properties, len(definition.columns))
    recorded_with = definition.properties.get(QUERY_OUT_SQL_KEY)
    if (not names and existing is not None and len(existing) == len(definition.columns)
            and recorded_with in (None, sql_digest(definition.sql))):
        names = tuple(existing)
    if not names:
        names = tuple(column.name for column in definition.columns)
    parameters[QUERY_OUT_NUM_COLS] = str(len(names))
    parameters.update({f"{QUERY_OUT_COL}{i}": name for i, name in enumerate(names)})


def with_import_digest(definition: ViewDefinition, view: View) -> ViewDefinition:
    """The definition of a stored view with :data:`QUERY_OUT_SQL_KEY` filled in for a view imported
    by a release that kept no digest: its ``view.query.out.*`` names were recorded with the SQL of
    the version the import made (id 1), so after a change they are not written back either. Without
    version 1, they are never written back (the column names are)."""
    properties = definition.properties
    if QUERY_OUT_NUM_COLS not in properties or QUERY_OUT_SQL_KEY in properties:
        return definition
    imported = next((v for v in view.versions if v.version_id == 1), None)
    sql = next((r.sql for r in imported.representations if r.dialect.lower() == NAME), None) if imported else None
    # without that version (an Iceberg round trip keeps only the latest ones) the SQL the names were
    # recorded with is unknown: no digest can match, so they are not written back
    digest = sql_digest(sql) if sql is not None else "unknown"
    return definition.model_copy(update={"properties": {**properties, QUERY_OUT_SQL_KEY: digest}})


def recorded_query_columns(summary: Mapping[str, str], properties: Mapping[str, str],
                           count: int | None = None) -> tuple[str, ...]:
    """The query's own output column names as the store recorded them; empty when not recorded.

    A column list (``CREATE VIEW v (a, b) AS SELECT x, y ...``) renames the query's columns, and
    Spark needs the query's names (``x``, ``y``) to read the view. The store keeps them in the
    version summary under :data:`QUERY_COLUMN_NAMES` as a JSON list (the Spark catalog and
    ``viewstore.spark`` write it); views recorded by earlier releases have them comma-separated in
    the view property of that name. The summary wins; a value that does not name ``count`` columns
    (when given) is ignored.
    """
    text = summary.get(QUERY_COLUMN_NAMES)
    if text is not None:
        try:
            names = json.loads(text)
        except ValueError:
            names = None
        if (isinstance(names, list) and (count is None or len(names) == count)
                and all(isinstance(name, str) and name for name in names)):
            return tuple(names)
    text = properties.get(QUERY_COLUMN_NAMES)
    if text is not None:
        names = text.split(",")
        if (count is None or len(names) == count) and all(names):
            return tuple(names)
    return ()


def _field_json(column: Column, kept: str | None, field: str = "type") -> tuple[Any, dict[str, Any]]:
    """The Spark JSON type and field metadata of a column: from its Iceberg type and comment, with
    its kept type string (:func:`_apply_kept_type`) when there is one."""
    type_ = engine_json(column.type, field)
    metadata: dict[str, Any] = {} if column.comment is None else {"comment": column.comment}
    if kept is not None:
        type_, metadata = _apply_kept_type(kept, column.type, type_, metadata)
    return type_, metadata


def _recorded_fields(properties: Mapping[str, str], count: int) -> list[Any]:
    """Read back :data:`FIELDS_KEY`; empty when absent, malformed or of another length."""
    try:
        recorded = json.loads(properties.get(FIELDS_KEY) or "null")
    except (ValueError, RecursionError):
        return []
    if not isinstance(recorded, list) or len(recorded) != count:
        return []
    return recorded


def _schema_fields(definition: ViewDefinition) -> list[Any]:
    """What :data:`SPARK_SCHEMA` in the summary says of each column, in the form of :data:`FIELDS_KEY`
    (as an HMS record holds it: a ``char(n)`` column is a string with Spark's metadata key); empty
    when there is none or it does not fit."""
    try:
        schema = json.loads(definition.summary.get(SPARK_SCHEMA) or "null")
    except (ValueError, RecursionError):
        return []
    fields = schema.get("fields") if isinstance(schema, dict) else None
    if not isinstance(fields, list) or len(fields) != len(definition.columns):
        return []
    recorded: list[Any] = []
    for item in fields:
        if not (isinstance(item, dict) and isinstance(item.get("name"), str)
                and isinstance(item.get("metadata", {}), dict)):
            return []
        type_, metadata = item.get("type"), dict(item.get("metadata", {}))
        if isinstance(type_, str) and type_.startswith(("char(", "varchar(")):
            type_, metadata = "string", {**metadata, CHAR_VARCHAR_KEY: type_}
        nested_char = isinstance(type_, dict) and any(  # Spark keeps those apart in HMS; not done here
            isinstance(t, str) and t.startswith(("char(", "varchar(")) for t in _json_leaves(type_))
        recorded.append(None if nested_char else [item["name"], type_, metadata])
    return recorded


def _json_leaves(type_: Any) -> list[Any]:
    if not isinstance(type_, dict):
        return [type_]
    children = [type_.get("elementType"), type_.get("keyType"), type_.get("valueType"),
                *(f.get("type") for f in type_.get("fields", []) if isinstance(f, dict))]
    return [leaf for child in children if child is not None for leaf in _json_leaves(child)]


def _matched(recorded: list[Any], columns: tuple[Column, ...]) -> list[Any]:
    """The recorded entry (``[name, type, metadata]``) of each column: the one of its name, else the
    one in its place if that entry's column is gone (a rename); None for the rest."""
    entries: list[Any] = [e if isinstance(e, list) and len(e) == 3 and isinstance(e[0], str) else None
                          for e in recorded]
    by_name = {e[0]: e for e in entries if e is not None}
    names = {column.name for column in columns}
    matched: list[Any] = []
    for i, column in enumerate(columns):
        entry = by_name.get(column.name)
        if entry is None and i < len(entries) and entries[i] is not None and entries[i][0] not in names:
            entry = entries[i]
        matched.append(entry)
    return matched


def _collations_fit(collations: Any, name: str, type_: Any) -> bool:
    """Whether Spark's ``__COLLATIONS`` map of a field fits its type: each path (``name``,
    ``name.element``, ``name.key``, ``name.value``...) reaches a string, each value names a provider."""
    if not (isinstance(collations, dict) and isinstance(name, str)):
        return False
    steps = {"element": "elementType", "key": "keyType", "value": "valueType"}
    for path, collation in collations.items():
        if not (isinstance(path, str) and isinstance(collation, str)
                and collation.startswith(("spark.", "icu.")) and len(collation.split(".", 1)[1]) > 0):
            return False
        if not (path == name or path.startswith(name + ".")):
            return False
        node = type_
        for step in path[len(name) + 1:].split(".") if path != name else []:
            node = node.get(steps.get(step, "")) if isinstance(node, dict) else None
        if node != "string":
            return False
    return True


def renamed_collations(collations: dict[str, str], old: str, new: str) -> dict[str, str]:
    """A field's ``__COLLATIONS`` map for the field renamed from ``old`` to ``new``: Spark keys it by
    the field's name (``old``, ``old.element``...)."""
    return {new + key[len(old):] if key == old or key.startswith(old + ".") else key: collation
            for key, collation in collations.items()}


def _nested_collations_fit(type_: Any) -> bool:
    """Whether every struct field nested in ``type_`` has a ``__COLLATIONS`` map (Spark keeps a nested
    field's in that field's own metadata) that fits the field's name and type."""
    if not isinstance(type_, dict):
        return True
    if type_.get("type") == "struct":
        for item in type_.get("fields") or []:
            metadata = item.get("metadata") or {} if isinstance(item, dict) else {}
            if COLLATIONS_KEY in metadata and not _collations_fit(metadata[COLLATIONS_KEY], item.get("name"),
                                                                   item.get("type")):
                return False
            if isinstance(item, dict) and not _nested_collations_fit(item.get("type")):
                return False
        return True
    return all(_nested_collations_fit(type_.get(key)) for key in ("elementType", "keyType", "valueType"))


def _recorded_field(recorded: Any, column: Column, type_: Any, metadata: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """The recorded Spark type and metadata of a column (``[name, type, metadata]``) while they still
    mean its Iceberg type, with the column's comment and name as they are now (Spark keys a
    collation by the field's name); else ``type_`` and ``metadata`` as given."""
    if not (isinstance(recorded, list) and len(recorded) == 3 and isinstance(recorded[0], str)
            and isinstance(recorded[2], dict)):
        return type_, metadata
    name, recorded_type, kept = recorded[0], recorded[1], dict(recorded[2])
    try:
        if iceberg_type(recorded_type) != column.type or not _nested_collations_fit(recorded_type):
            return type_, metadata
        if CHAR_VARCHAR_KEY in kept:  # it becomes the column's type in sd.cols: it must be one
            spelled = kept[CHAR_VARCHAR_KEY]
            parsed = parse_type_string(spelled) if isinstance(spelled, str) else None
            if not (isinstance(parsed, str) and parsed.startswith(("char(", "varchar("))
                    and iceberg_type(parsed) == column.type):
                return type_, metadata
    except ValidationError:
        return type_, metadata
    collations = kept.get(COLLATIONS_KEY)
    if collations is not None:
        if not _collations_fit(collations, name, recorded_type):
            return type_, metadata
        kept[COLLATIONS_KEY] = renamed_collations(collations, name, column.name)
    if column.comment is None:
        kept.pop("comment", None)
    else:
        kept["comment"] = column.comment
    return recorded_type, kept


def _apply_kept_type(kept: str, type_: IcebergType, json_type: Any,
                     metadata: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """Use the column's recorded Spark type (``tinyint``, ``char(5)``...) when it is a primitive of
    the same Iceberg type; nested types are always written from the Iceberg type."""
    try:
        recorded = parse_type_string(kept, "type")
        if not isinstance(recorded, str) or iceberg_type(recorded) != type_:
            return json_type, metadata
    except ValidationError:
        return json_type, metadata
    if recorded.startswith(("char(", "varchar(")):
        return "string", {**metadata, CHAR_VARCHAR_KEY: recorded}
    return recorded, metadata


def _hive_compatible(json_type: Any) -> bool:
    """Whether Hive can store the type in ``sd.cols`` (Spark falls back to a placeholder otherwise)."""
    if isinstance(json_type, str):
        return not json_type.startswith(("timestamp_ntz", "variant", "time(", "interval"))
    if json_type.get("type") == "array":
        return _hive_compatible(json_type["elementType"])
    if json_type.get("type") == "map":
        return _hive_compatible(json_type["keyType"]) and _hive_compatible(json_type["valueType"])
    return all(_hive_compatible(f["type"]) for f in json_type.get("fields", []))


# --------------------------------------------------------------------------------------------
# Types: Spark's JSON types and catalog strings <-> Iceberg types

#: Spark JSON names of primitive types -> Iceberg.
_JSON_TO_ICEBERG = {
    "boolean": "boolean", "byte": "int", "short": "int", "integer": "int", "long": "long", "float": "float",
    "double": "double", "date": "date", "timestamp": "timestamptz", "timestamp_ntz": "timestamp",
    "string": "string", "char": "string", "varchar": "string", "binary": "binary", "void": "unknown",
    "null": "unknown", "variant": "variant", "time": "time",
}
#: Iceberg primitive -> Spark JSON name.
_ICEBERG_TO_JSON = {
    "boolean": "boolean", "int": "integer", "long": "long", "float": "float", "double": "double",
    "date": "date", "time": "time(6)", "timestamp": "timestamp_ntz", "timestamptz": "timestamp",
    "string": "string", "binary": "binary", "variant": "variant", "unknown": "void",
}
#: Spark JSON name -> catalog string (the spelling of ``DESCRIBE`` and Hive).
_CATALOG_NAMES = {"byte": "tinyint", "short": "smallint", "integer": "int", "long": "bigint", "null": "void"}
#: Catalog / DDL spellings -> Spark JSON name.
_DDL_NAMES = {
    "boolean": "boolean", "tinyint": "byte", "byte": "byte", "smallint": "short", "short": "short",
    "int": "integer", "integer": "integer", "bigint": "long", "long": "long", "float": "float", "real": "float",
    "double": "double", "date": "date", "timestamp": "timestamp", "timestamp_ltz": "timestamp",
    "timestamp_ntz": "timestamp_ntz", "string": "string", "binary": "binary", "void": "void",
    "variant": "variant",
}


def iceberg_type(spark_type: Any, field: str = "type") -> IcebergType:
    """The Iceberg type of a Spark JSON type (``"long"``, ``{"type": "array", ...}``...).

    Raises:
        ValidationError: not a Spark type, or one without an Iceberg equivalent (intervals, UDTs).
    """
    return bounded(lambda: _iceberg_type(spark_type, field), field)


def _iceberg_type(spark_type: Any, field: str) -> IcebergType:
    if isinstance(spark_type, str):
        return _primitive(spark_type, field)
    if not isinstance(spark_type, dict):
        raise invalid(field, f"a Spark type must be a string or an object, not {spark_type!r}")
    kind = spark_type.get("type")
    try:
        if kind == "array":
            return ListType(_iceberg_type(spark_type["elementType"], f"{field}.elementType"),
                            not _flag(spark_type, "containsNull", field))
        if kind == "map":
            return MapType(_iceberg_type(spark_type["keyType"], f"{field}.keyType"),
                           _iceberg_type(spark_type["valueType"], f"{field}.valueType"),
                           not _flag(spark_type, "valueContainsNull", field))
        if kind == "struct":
            items = spark_type["fields"]
            if not isinstance(items, list):
                raise invalid(f"{field}.fields", f"must be a list of fields, not {items!r}")
            fields, seen = [], set()
            for i, item in enumerate(items):
                name, type_, nullable, metadata = _struct_field(item, f"{field}.fields[{i}]")
                if name.lower() in seen:
                    raise invalid(f"{field}.fields[{i}].name", f"duplicate field {name!r}")
                seen.add(name.lower())
                fields.append(StructField(name, _iceberg_type(type_, f"{field}.fields[{i}].type"), not nullable,
                                          _comment(metadata, f"{field}.fields[{i}]")))
            return StructType(tuple(fields))
    except KeyError as e:
        raise invalid(field, f"malformed Spark {kind} type: missing {e}") from e
    raise invalid(field, f"Spark type {kind!r} has no Iceberg equivalent")


def _flag(spark_type: Mapping[str, Any], key: str, field: str) -> bool:
    value = spark_type.get(key, True)
    if not isinstance(value, bool):
        raise invalid(f"{field}.{key}", f"must be true or false, not {value!r}")
    return value


def _primitive(text: str, field: str) -> IcebergType:
    """A primitive Spark JSON type name: ``long``, ``decimal(10,2)``, ``string collate UTF8_LCASE``..."""
    tokens = TypeTokens(text, field)
    name = tokens.word()
    if name != "decimal" and name not in _JSON_TO_ICEBERG:
        raise tokens.error(f"Spark type {name!r} has no Iceberg equivalent or is unknown")
    numbers = tokens.optional_numbers()
    if name == "string" and tokens.accept_words("collate"):
        tokens.next()  # a collation does not change the Iceberg type
    tokens.expect_end()
    if name == "decimal":
        precision, scale = (numbers + [0])[:2] if numbers else (10, 0)
        if len(numbers) > 2 or not 1 <= precision <= 38 or not 0 <= scale <= precision:
            raise tokens.error("decimal needs a precision of 1-38 and a scale of 0-precision")
        return DecimalType(precision, scale)
    if numbers and name not in ("char", "varchar", "time"):
        raise tokens.error(f"Spark type {name!r} takes no parameters")
    return PrimitiveType(_JSON_TO_ICEBERG[name])


def engine_json(type_: IcebergType, field: str = "type") -> Any:
    """The Spark JSON type Spark writes for an Iceberg type.

    Raises:
        ValidationError: Spark has no exact type for it (``uuid``, ``fixed[n]``, ``timestamp_ns``...).
    """
    if isinstance(type_, DecimalType):
        return f"decimal({type_.precision},{type_.scale})"
    if isinstance(type_, ListType):
        return {"type": "array", "elementType": engine_json(type_.element, field),
                "containsNull": not type_.element_required}
    if isinstance(type_, MapType):
        return {"type": "map", "keyType": engine_json(type_.key, field),
                "valueType": engine_json(type_.value, field), "valueContainsNull": not type_.value_required}
    if isinstance(type_, StructType):
        return {"type": "struct", "fields": [
            {"name": f.name, "type": engine_json(f.type, field), "nullable": not f.required,
             "metadata": {} if f.comment is None else {"comment": f.comment}} for f in type_.fields]}
    if isinstance(type_, PrimitiveType) and type_.name in _ICEBERG_TO_JSON:
        return _ICEBERG_TO_JSON[type_.name]
    raise invalid(field, f"Spark has no type for Iceberg {type_}")


def engine_type(type_: IcebergType, field: str = "type") -> str:
    """The Spark catalog string (``bigint``, ``array<int>``...) for an Iceberg type.

    Raises:
        ValidationError: Spark has no exact type for it.
    """
    return _type_string(engine_json(type_, field), {})


def _type_string(spark_type: Any, metadata: Mapping[str, Any]) -> str:
    """Spark's catalog string of a JSON type; a column's recorded ``char``/``varchar`` type wins."""
    recorded = metadata.get(CHAR_VARCHAR_KEY)
    if isinstance(recorded, str):
        return recorded
    if isinstance(spark_type, str):
        if spark_type == "decimal":
            return "decimal(10,0)"
        return _CATALOG_NAMES.get(spark_type, spark_type)
    kind = spark_type.get("type")
    if kind == "array":
        return f"array<{_type_string(spark_type['elementType'], {})}>"
    if kind == "map":
        return f"map<{_type_string(spark_type['keyType'], {})},{_type_string(spark_type['valueType'], {})}>"
    # a nested char/varchar is a string here, as Spark writes it: only a column's own type is recorded
    fields = ",".join(f"{_quote_if_needed(f['name'])}:{_type_string(f['type'], {})}"
                      for f in spark_type.get("fields", []))
    return f"struct<{fields}>"


def _quote_if_needed(name: str) -> str:
    plain = name and all(ch.isascii() and (ch.isalnum() or ch == "_") for ch in name) and not name.isdigit()
    return name if plain else "`" + name.replace("`", "``") + "`"


def parse_type_string(text: str, field: str = "type") -> Any:
    """Read a Spark catalog / DDL type string (``bigint``, ``struct<a:int>``...) into Spark's JSON type.

    This is how Spark reads the Hive types of ``sd.cols``: Hive's ``timestamp`` is Spark's
    ``timestamp``, which has a time zone.

    Raises:
        ValidationError: not a Spark type string.
    """
    tokens = TypeTokens(text, field)
    try:
        result = _parse_ddl(tokens)
    except RecursionError as e:
        raise invalid(field, f"types nest deeper than {MAX_DEPTH} levels") from e
    tokens.expect_end()
    return result


def _parse_ddl(tokens: TypeTokens) -> Any:
    """type := array<type> | map<type, type> | struct<name[:] type [NOT NULL] [COMMENT 'c'], ...> | name[(n[, m])]."""
    name = tokens.word()
    if name == "array":
        tokens.expect("<")
        element = _parse_ddl(tokens)
        tokens.expect(">")
        return {"type": "array", "elementType": element, "containsNull": True}
    if name == "map":
        tokens.expect("<")
        key = _parse_ddl(tokens)
        tokens.expect(",")
        value = _parse_ddl(tokens)
        tokens.expect(">")
        return {"type": "map", "keyType": key, "valueType": value, "valueContainsNull": True}
    if name == "struct":
        tokens.expect("<")
        fields: list[dict[str, Any]] = []
        while not tokens.accept(">"):
            if fields:
                tokens.expect(",")
            token = tokens.next()
            if token.kind not in ("word", "quoted", "number"):
                raise tokens.error(f"expected a field name at position {token.position}")
            tokens.accept(":")
            field_type = _parse_ddl(tokens)
            nullable = not tokens.accept_words("not", "null")
            metadata: dict[str, Any] = {}
            if tokens.accept_words("comment"):
                comment = tokens.next()
                if comment.kind != "string":
                    raise tokens.error("a comment must be a quoted string")
                metadata["comment"] = comment.value
            fields.append({"name": token.value, "type": field_type, "nullable": nullable, "metadata": metadata})
        return {"type": "struct", "fields": fields}
    numbers = tokens.optional_numbers()
    if name in ("decimal", "dec", "numeric"):
        precision, scale = (numbers + [0])[:2] if numbers else (10, 0)
        return f"decimal({precision},{scale})"
    if name in ("char", "varchar", "time") and len(numbers) == 1:
        return f"{name}({numbers[0]})"
    if name in _DDL_NAMES and not numbers:
        return _DDL_NAMES[name]
    raise tokens.error(f"unknown Spark type {name!r}")
