"""Iceberg views registered in the Hive metastore.

Iceberg's Hive catalog registers a view as a ``VIRTUAL_VIEW`` with the parameters
``table_type=ICEBERG-VIEW`` and ``metadata_location=<the current metadata JSON file>``, plus copies of
the view properties and its ``uuid``. The metadata file is the source of truth; the HMS view texts are
only a copy of the ``hive`` representation (or of the first one).

This module reads the metadata JSON with plain ``json`` (format version 1 of the Iceberg view spec):
the current version gives the representations, default catalog and namespace and summary; its schema
gives the columns; ``properties.comment`` gives the comment. Trino's ``trino.run-as-owner`` property
marks a definer view and names its owner; a Trino-written view without it runs as invoker.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..errors import IcebergMetadataError, ValidationError
from ..model import Column, SQLRepresentation, same_uuid
from ..types import StructType, from_iceberg_json
from .base import (ViewDefinition, hms_record, invalid, parameters_of, passthrough, reserved_key,
                   text_of)
from .hive import engine_type as hive_type

__all__ = ["NAME", "claims", "owns_parameter", "decode", "encode", "load_metadata", "current_version",
           "definition_from_metadata", "definition_from_version", "METADATA_LOCATION_KEY", "VIEW_UUID_KEY"]

NAME = "iceberg"

TABLE_TYPE = "table_type"
VIEW_TABLE_TYPE = "ICEBERG-VIEW"
METADATA_LOCATION = "metadata_location"
RUN_AS_OWNER = "trino.run-as-owner"

#: The property that keeps the HMS record's ``metadata_location``.
METADATA_LOCATION_KEY = reserved_key(NAME, "metadata-location")
#: The property that keeps the metadata's ``view-uuid``.
VIEW_UUID_KEY = reserved_key(NAME, "view-uuid")

_OWN_PARAMETERS = frozenset({TABLE_TYPE, METADATA_LOCATION, "previous_metadata_location", "uuid"})


def claims(table_type: str, parameters: Mapping[str, str]) -> bool:
    """Whether the record is an Iceberg view (``table_type`` compared case-insensitively, as Iceberg does)."""
    return parameters.get(TABLE_TYPE, "").lower() == VIEW_TABLE_TYPE.lower()


def owns_parameter(key: str, parameters: Mapping[str, str] | None = None) -> bool:
    """Whether ``key`` is an HMS parameter Iceberg's Hive catalog maintains."""
    return key in _OWN_PARAMETERS


# --------------------------------------------------------------------------------------------
# Reading metadata


def load_metadata(metadata: str | bytes | Mapping[str, Any]) -> dict[str, Any]:
    """The metadata as a dict, parsing JSON text when given text.

    Raises:
        IcebergMetadataError: the text is not a JSON object (or nests deeper than the parser goes).
    """
    if isinstance(metadata, Mapping):
        return dict(metadata)
    try:
        document = json.loads(metadata)
    except (TypeError, ValueError, RecursionError) as e:  # RecursionError: nested deeper than the parser goes
        raise IcebergMetadataError(f"metadata: not a JSON document: {e}") from e
    if not isinstance(document, dict):
        raise IcebergMetadataError(f"metadata: must be a JSON object, not {type(document).__name__}")
    return document


def current_version(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """The entry of ``versions`` whose ``version-id`` is ``current-version-id``.

    Raises:
        IcebergMetadataError: the format version is not 1 (an int: not ``true`` or ``1.0``), the
            current version id is no int, or no version has it.
    """
    # (type() is int: in Python True == 1 and 1.0 == 1, which the reference's parser takes for no int)
    if type(metadata.get("format-version")) is not int or metadata["format-version"] != 1:
        raise IcebergMetadataError(f"metadata.format-version: viewstore reads view format 1, "
                                   f"not {metadata.get('format-version')!r}")
    current, versions = metadata.get("current-version-id"), metadata.get("versions")
    if type(current) is not int:
        raise IcebergMetadataError(f"metadata.current-version-id: must be an integer, not {current!r}")
    if not isinstance(versions, list):
        raise IcebergMetadataError("metadata.versions: must be a list")
    for version in versions:
        if isinstance(version, dict) and type(version.get("version-id")) is int and version["version-id"] == current:
            return version
    raise IcebergMetadataError(f"metadata.current-version-id: no version has id {current!r}")


def definition_from_metadata(metadata: str | bytes | Mapping[str, Any]) -> ViewDefinition:
    """The view definition of the current version of an Iceberg view metadata document.

    Raises:
        IcebergMetadataError: the metadata is malformed (see :func:`current_version`), or the current
            version's schema or representations are missing or broken.
    """
    document = load_metadata(metadata)
    version = current_version(document)
    schema_id = version.get("schema-id")
    schemas = document.get("schemas")
    if not isinstance(schemas, list):
        raise IcebergMetadataError("metadata.schemas: must be a list")
    schema = next((s for s in schemas if isinstance(s, dict) and s.get("schema-id") == schema_id), None)
    if schema is None:
        raise IcebergMetadataError(f"metadata.schemas: no schema has id {schema_id!r}")
    definition = definition_from_version(version, document.get("properties"), schema)
    uuid = document.get("view-uuid")
    if isinstance(uuid, str):
        definition = definition.model_copy(update={"properties": {**definition.properties, VIEW_UUID_KEY: uuid}})
    return definition


def definition_from_version(version: Mapping[str, Any], properties: Mapping[str, str] | None = None,
                            schema: Mapping[str, Any] | None = None) -> ViewDefinition:
    """The view definition of one version entry, with the view properties and the version's schema.

    A representation's ``type`` is compared case-insensitively (Iceberg's Java parser lower-cases
    it on read, so ``"SQL"`` is a SQL representation); other types are skipped.

    Args:
        version: one entry of the metadata's ``versions``.
        properties: the view's ``properties`` (the comment is taken from them).
        schema: the version's schema; without it the definition has no columns.

    Raises:
        IcebergMetadataError: no SQL representation, or a malformed schema or property.
    """
    representations = []
    for i, rep in enumerate(_typed(version.get("representations"), list, "versions.representations")):
        kind = rep.get("type") if isinstance(rep, dict) else None
        if not isinstance(kind, str) or kind.lower() != "sql":
            continue  # only SQL representations exist today; others are for future engines
        try:
            representations.append(SQLRepresentation(rep.get("dialect"), rep.get("sql")))
        except ValidationError as e:
            raise IcebergMetadataError(f"metadata.versions.representations[{i}]: {e}") from e
    if not representations:
        raise IcebergMetadataError("metadata.versions.representations: the version has no SQL representation")
    properties = _string_map(properties, "properties")
    summary = _string_map(version.get("summary"), "versions.summary")
    namespace = _typed(version.get("default-namespace"), list, "versions.default-namespace")
    if not all(isinstance(level, str) for level in namespace):
        raise IcebergMetadataError("metadata.versions.default-namespace: must be a list of strings")
    catalog = version.get("default-catalog")
    if catalog is not None and not isinstance(catalog, str):
        raise IcebergMetadataError(f"metadata.versions.default-catalog: must be a string, not {catalog!r}")

    owner, security_mode = None, None
    if RUN_AS_OWNER in properties:
        owner, security_mode = properties[RUN_AS_OWNER], "DEFINER"
    elif str(summary.get("engine-name", "")).lower() == "trino":
        security_mode = "INVOKER"  # Trino writes trino.run-as-owner for every definer view
    comment = properties.pop("comment", None)
    try:
        return ViewDefinition(
            dialect=representations[0].dialect, sql=representations[0].sql,
            other_representations=tuple(representations[1:]),
            columns=_columns(schema) if schema is not None else (),
            comment=comment, default_catalog=catalog,
            default_namespace=tuple(namespace), owner=owner, security_mode=security_mode,
            properties=properties, summary=summary)
    except ValidationError as e:
        raise IcebergMetadataError(f"metadata: {e}") from e


def _typed(value: Any, kind: type, field: str) -> Any:
    """``value`` when it has the JSON type ``kind``; an empty one when absent."""
    if value is None:
        return kind()
    if not isinstance(value, kind):
        raise IcebergMetadataError(f"metadata.{field}: must be a JSON {kind.__name__}, not {value!r}")
    return value


def _string_map(value: Any, field: str) -> dict[str, str]:
    result = dict(_typed(value, dict, field))
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in result.items()):
        raise IcebergMetadataError(f"metadata.{field}: must map strings to strings")
    return result


def _columns(schema: Mapping[str, Any]) -> tuple[Column, ...]:
    fields = schema.get("fields")
    if not isinstance(fields, list):
        raise IcebergMetadataError("metadata.schemas.fields: must be a list")
    try:  # read as the whole-file importer reads a schema (viewstore.iceberg)
        struct = from_iceberg_json({"type": "struct", "fields": fields})
    except ValidationError as e:
        raise IcebergMetadataError(f"metadata.schemas.fields: {e}") from e
    assert isinstance(struct, StructType)
    return tuple(Column(f.name, f.type, f.comment, not f.required) for f in struct.fields)


# --------------------------------------------------------------------------------------------
# HMS records


def decode(record: Mapping[str, Any], metadata: str | bytes | Mapping[str, Any] | None = None) -> ViewDefinition:
    """Read an Iceberg view registered in HMS, from its metadata document.

    Args:
        record: the HMS record (it names the metadata file in ``metadata_location``).
        metadata: the JSON of that metadata file (text or parsed). The codec does no I/O, so the
            caller reads the file.

    Raises:
        ValidationError: ``metadata_location`` is missing, or no metadata was given.
        IcebergMetadataError: the metadata is malformed or belongs to another view (its
            ``view-uuid`` differs from the record's ``uuid``).
    """
    params = parameters_of(record)
    location = params.get(METADATA_LOCATION)
    if not location:
        raise invalid(f"parameters.{METADATA_LOCATION}", "an Iceberg view in HMS must name its metadata file")
    if metadata is None:
        raise invalid("metadata", f"an Iceberg view keeps its definition in the metadata file {location!r}; "
                                  "read that file and pass its JSON")
    definition = definition_from_metadata(metadata)
    expected_uuid, uuid = params.get("uuid"), definition.properties.get(VIEW_UUID_KEY)
    if expected_uuid and uuid and not same_uuid(expected_uuid, uuid):
        raise IcebergMetadataError(f"metadata.view-uuid: {uuid} is another view than the HMS record's {expected_uuid}")
    return definition.model_copy(update={
        "properties": {**definition.properties, METADATA_LOCATION_KEY: location},
        "owner": definition.owner or text_of(record, "owner"),
        "database": text_of(record, "dbName"), "name": text_of(record, "tableName")})


def encode(definition: ViewDefinition, metadata_location: str | None = None) -> dict[str, Any]:
    """The HMS record Iceberg's Hive catalog keeps for a view whose metadata file is written.

    Args:
        definition: the view.
        metadata_location: where its metadata file is; defaults to the location the definition was
            decoded from. The codec cannot tell whether that file still describes the view:
            :meth:`viewstore.catalog.ViewStore.export_hms` uses it only while the view is unchanged.

    Raises:
        ValidationError: no metadata location is known, or ``metadata_location`` is not a
            non-empty string.
    """
    if metadata_location is not None and (not isinstance(metadata_location, str) or not metadata_location.strip()):
        raise invalid("metadata_location", f"must be a non-empty string, not {metadata_location!r}")
    location = metadata_location or definition.properties.get(METADATA_LOCATION_KEY)
    if not location:
        raise invalid("metadata_location", "an Iceberg view record must point at the view's metadata file")
    parameters = passthrough(definition.properties, lambda key: key == "comment" or key in _OWN_PARAMETERS)
    if definition.comment is not None:
        parameters["comment"] = definition.comment
    uuid = definition.properties.get(VIEW_UUID_KEY)
    if uuid:
        parameters["uuid"] = uuid
    parameters[TABLE_TYPE] = VIEW_TABLE_TYPE
    parameters[METADATA_LOCATION] = location
    text = next((r.sql for r in definition.representations if r.dialect.lower() == "hive"), definition.sql)
    try:
        cols = [{"name": c.name, "type": hive_type(c.type, lenient=True), "comment": c.comment}
                for c in definition.columns]
    except ValidationError:
        cols = []  # the HMS columns are informational only; Hive has no stand-in for this type
    return hms_record(definition, parameters=parameters, cols=cols, original_text=text, expanded_text=text)
