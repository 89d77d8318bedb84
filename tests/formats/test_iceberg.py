"""Iceberg views registered in HMS: reading the metadata JSON, and the HMS record."""

from __future__ import annotations

import copy
import json

import pytest

from viewstore import formats
from viewstore.errors import IcebergMetadataError, ValidationError
from viewstore.formats import ViewDefinition, iceberg
from viewstore.model import Column, SQLRepresentation

UUID = "fa6506c3-7681-40c8-86dc-e36561f83385"
METADATA = {
    "view-uuid": UUID, "format-version": 1, "location": "s3://bucket/v",
    "properties": {"comment": "daily", "k": "v"},
    "current-schema-id": 1, "current-version-id": 2,
    "schemas": [{"type": "struct", "schema-id": 1, "fields": [
        {"id": 1, "name": "n", "required": True, "type": "long", "doc": "count"},
        {"id": 2, "name": "tags", "required": False,
         "type": {"type": "list", "element-id": 3, "element": "string", "element-required": False}}]}],
    "versions": [
        {"version-id": 1, "timestamp-ms": 1, "schema-id": 1, "summary": {}, "default-namespace": [],
         "representations": [{"type": "sql", "sql": "old", "dialect": "spark"}]},
        {"version-id": 2, "timestamp-ms": 2, "schema-id": 1, "summary": {"engine-name": "Spark"},
         "default-catalog": "prod", "default-namespace": ["sales"],
         "representations": [{"type": "sql", "sql": "SELECT 1", "dialect": "spark"},
                             {"type": "sql", "sql": "SELECT 1 FROM h", "dialect": "hive"}]}],
    "version-log": [{"timestamp-ms": 1, "version-id": 1}, {"timestamp-ms": 2, "version-id": 2}],
}
RECORD = {"tableType": "VIRTUAL_VIEW", "dbName": "sales", "tableName": "v", "owner": "bob",
          "parameters": {"table_type": "ICEBERG-VIEW", "metadata_location": "s3://bucket/v/metadata/2.json",
                         "uuid": UUID, "comment": "daily", "k": "v"},
          "viewOriginalText": "SELECT 1 FROM h", "viewExpandedText": "SELECT 1 FROM h"}


def test_definition_from_metadata_reads_the_current_version():
    definition = iceberg.definition_from_metadata(METADATA)
    assert (definition.dialect, definition.sql) == ("spark", "SELECT 1")
    assert definition.other_representations == (SQLRepresentation("hive", "SELECT 1 FROM h"),)
    assert [r.dialect for r in definition.representations] == ["spark", "hive"]
    assert (definition.default_catalog, definition.default_namespace) == ("prod", ("sales",))
    assert definition.comment == "daily"
    assert definition.properties == {"k": "v", iceberg.VIEW_UUID_KEY: UUID}
    assert definition.summary == {"engine-name": "Spark"}
    assert [(c.name, str(c.type), c.comment, c.nullable) for c in definition.columns] == [
        ("n", "long", "count", False), ("tags", "list<string>", None, True)]
    assert (definition.owner, definition.security_mode) == (None, None)
    assert iceberg.definition_from_metadata(json.dumps(METADATA)) == definition


def test_entries_that_are_no_objects_and_a_uuid_that_is_no_text_are_passed_over():
    metadata = changed(["view-uuid"], 5)
    metadata["versions"].insert(0, "v0")
    metadata["schemas"].insert(0, 1)
    definition = iceberg.definition_from_metadata(metadata)
    assert (definition.sql, [c.name for c in definition.columns]) == ("SELECT 1", ["n", "tags"])
    assert iceberg.VIEW_UUID_KEY not in definition.properties


def changed(path: list, value) -> dict:
    metadata = copy.deepcopy(METADATA)
    target = metadata
    for step in path[:-1]:
        target = target[step]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return metadata


@pytest.mark.parametrize("metadata, reason", [
    ("{", "metadata: not a JSON document"),
    ("[]", "metadata: must be a JSON object"),
    (changed(["format-version"], 2), "metadata.format-version"),
    (changed(["current-version-id"], 7), "metadata.current-version-id: no version has id 7"),
    (changed(["versions"], KeyError), "metadata.versions: must be a list"),
    (changed(["versions"], 5), r"^metadata\.versions: must be a list$"),  # not a TypeError from iterating it
    (changed(["versions"], {"version-id": 2}), r"^metadata\.versions: must be a list$"),  # not "no version has id 2"
    (changed(["schemas", 0, "schema-id"], 9), "metadata.schemas: no schema has id 1"),
    (changed(["schemas"], KeyError), r"^metadata\.schemas: must be a list$"),
    (changed(["schemas"], {"schema-id": 1}), r"^metadata\.schemas: must be a list$"),
    (changed(["schemas", 0, "fields"], KeyError), r"^metadata\.schemas\.fields: must be a list$"),
    (changed(["schemas", 0, "fields"], {"id": 1}), r"^metadata\.schemas\.fields: must be a list$"),
    (changed(["versions", 1, "representations"], []), "no SQL representation"),
    (changed(["versions", 1, "representations", 0, "sql"], " "), r"representations\[0\]"),
    (changed(["schemas", 0, "fields", 0, "type"], "bigint"),
     "metadata.schemas.fields: the type of 'n': .bigint. is not an Iceberg"),
    (changed(["schemas", 0, "fields", 0, "required"], "false"), "metadata.schemas.fields: .*must be a boolean"),
    # a list's element id that a column has too: the reference's Schema refuses the repeated id
    (changed(["schemas", 0, "fields", 1, "type", "element-id"], 1),
     "metadata.schemas.fields: field id 1 is used twice: by 'n' and by 'tags.element'"),
    (changed(["versions", 1, "default-namespace"], "sales"), "default-namespace"),
    (changed(["versions", 1, "default-namespace"], ["sales", 1]),
     "metadata.versions.default-namespace: must be a list of strings"),
    (changed(["versions", 1, "default-catalog"], 3), "metadata.versions.default-catalog: must be a string, not 3"),
    (changed(["properties"], {"k": 1}), "metadata.properties: must map strings to strings"),
    (5, "metadata: not a JSON document"),
])
def test_malformed_metadata(metadata, reason):
    with pytest.raises(IcebergMetadataError, match=reason):
        iceberg.definition_from_metadata(metadata)


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000, '{"a": ' * 100_000 + "1" + "}" * 100_000])
def test_metadata_nested_deeper_than_json_reads_is_an_iceberg_metadata_error(text):
    """JSON nested thousands of levels deep raised the parser's RecursionError through decode()."""
    with pytest.raises(IcebergMetadataError, match=r"^metadata: not a JSON document: maximum recursion depth "
                                                   r"exceeded while decoding a JSON (array|object) from a unicode "
                                                   r"string$"):
        iceberg.definition_from_metadata(text)
    with pytest.raises(IcebergMetadataError, match=r"^metadata: not a JSON document: "):
        formats.decode(RECORD, metadata=text.encode())


def test_trino_security_rules():
    version = METADATA["versions"][1] | {"summary": {"engine-name": "trino", "engine-version": "476"}}
    definer = iceberg.definition_from_version(version, {"trino.run-as-owner": "alice"})
    assert (definer.security_mode, definer.owner) == ("DEFINER", "alice")
    assert definer.properties["trino.run-as-owner"] == "alice"
    invoker = iceberg.definition_from_version(version, {})
    assert (invoker.security_mode, invoker.owner, invoker.columns) == ("INVOKER", None, ())
    named = version | {"summary": {"engine-name": "Trino"}}  # the engine name in any case
    assert iceberg.definition_from_version(named, {}).security_mode == "INVOKER"


def test_decode_an_hms_record_needs_its_metadata():
    with pytest.raises(ValidationError, match="metadata: an Iceberg view keeps its definition in the metadata "
                                              "file 's3://bucket/v/metadata/2.json'"):
        formats.decode(RECORD)
    no_location = {**RECORD, "parameters": {"table_type": "ICEBERG-VIEW"}}
    with pytest.raises(ValidationError, match="parameters.metadata_location"):
        formats.decode(no_location, metadata=METADATA)
    blank = {**RECORD, "parameters": {**RECORD["parameters"], "metadata_location": ""}}
    with pytest.raises(ValidationError, match="parameters.metadata_location: an Iceberg view in HMS must name"):
        formats.decode(blank, metadata=METADATA)


def test_decode_an_hms_record():
    engine, definition = formats.definition_from_table(RECORD, metadata=json.dumps(METADATA))
    assert engine == "iceberg"
    assert (definition.database, definition.name, definition.owner) == ("sales", "v", "bob")
    assert definition.properties[iceberg.METADATA_LOCATION_KEY] == "s3://bucket/v/metadata/2.json"
    assert definition.sql == "SELECT 1"  # the metadata, not the HMS text


@pytest.mark.parametrize("field", ["dbName", "tableName", "owner"])
def test_a_record_whose_names_are_not_text_is_refused(field):
    """The database and name an Iceberg view's record gives are checked as every other codec checks
    them: a number there would become the definition's database or name unchecked."""
    with pytest.raises(ValidationError, match=rf"^{field}: must be a string, not int$"):
        formats.decode({**RECORD, field: 5}, metadata=METADATA)


def test_a_definer_views_run_as_owner_wins_over_the_records_owner():
    """Trino runs a definer Iceberg view as the user its trino.run-as-owner names, whoever owns the
    metastore record."""
    metadata = copy.deepcopy(METADATA)
    metadata["properties"]["trino.run-as-owner"] = "alice"
    definition = formats.decode(RECORD, metadata=metadata)  # the record's owner is bob
    assert (definition.security_mode, definition.owner) == ("DEFINER", "alice")


def test_metadata_of_another_view_is_rejected():
    with pytest.raises(IcebergMetadataError, match="metadata.view-uuid: .* is another view"):
        formats.decode(RECORD, metadata=changed(["view-uuid"], "00000000-0000-0000-0000-000000000000"))


def test_encode_points_at_the_metadata_file():
    definition = formats.decode(RECORD, metadata=METADATA)
    out = formats.encode(definition, "iceberg")
    assert out["parameters"] == RECORD["parameters"]
    assert out["viewOriginalText"] == out["viewExpandedText"] == "SELECT 1 FROM h"  # the hive representation
    assert out["sd"]["cols"] == [{"name": "n", "type": "bigint", "comment": "count"},
                                 {"name": "tags", "type": "array<string>", "comment": None}]
    moved = formats.encode(definition, "iceberg", metadata_location="s3://bucket/v/metadata/3.json")
    assert moved["parameters"]["metadata_location"] == "s3://bucket/v/metadata/3.json"
    assert formats.decode(out, metadata=METADATA) == definition


def test_encode_without_a_hive_representation_copies_the_first():
    definition = ViewDefinition(dialect="trino", sql="SELECT 2", columns=(Column("u", "uuid"),),
                                other_representations=(SQLRepresentation("spark", "SELECT 3"),))
    out = formats.encode(definition, "iceberg", metadata_location="file:/m.json")
    assert out["viewOriginalText"] == "SELECT 2"
    assert out["sd"]["cols"] == [{"name": "u", "type": "string", "comment": None}]
    assert out["parameters"] == {"table_type": "ICEBERG-VIEW", "metadata_location": "file:/m.json"}
    with_hive = definition.model_copy(update={"other_representations": (SQLRepresentation("HIVE", "SELECT 4"),)})
    assert formats.encode(with_hive, "iceberg", metadata_location="file:/m.json")["viewOriginalText"] == "SELECT 4"


def test_encode_writes_no_stale_parameter_of_iceberg_s_own():
    """``uuid`` and ``previous_metadata_location`` are the Hive catalog's to write: a property of that
    name (a Hive view's TBLPROPERTIES, say) would point the record at another view or an old file."""
    definition = ViewDefinition(dialect="spark", sql="SELECT 1 a", columns=(Column("a", "int"),), properties={
        "uuid": "00000000-0000-0000-0000-000000000000", "previous_metadata_location": "file:/old.json",
        "table_type": "VIEW", "metadata_location": "file:/old.json", "k": "v"})
    out = formats.encode(definition, "iceberg", metadata_location="file:/m.json")
    assert out["parameters"] == {"table_type": "ICEBERG-VIEW", "metadata_location": "file:/m.json", "k": "v"}
    assert formats.encode(definition.model_copy(update={"dialect": "hive"}), "hive")["parameters"] == {"k": "v"}


def test_encode_needs_a_metadata_location():
    definition = ViewDefinition(dialect="spark", sql="SELECT 1")
    with pytest.raises(ValidationError, match="metadata_location: an Iceberg view record must point"):
        formats.encode(definition, "iceberg")
    with pytest.raises(ValidationError, match="metadata_location: must be a non-empty string, not ' '"):
        formats.encode(definition, "iceberg", metadata_location=" ")
    with pytest.raises(ValidationError, match="metadata_location: only Iceberg view records"):
        formats.encode(definition.model_copy(update={"columns": (Column("a", "int"),)}), "spark",
                       metadata_location="file:/m.json")


@pytest.mark.parametrize("path, value", [
    (["versions", 1, "representations"], True),
    (["properties"], 1),
    (["properties"], {"k": 1}),
    (["versions", 1, "summary"], []),
    (["versions", 1, "default-catalog"], 3),
    (["schemas", 0, "fields", 0], "n"),
    (["schemas", 0, "fields", 0, "required"], "yes"),
    (["schemas", 0, "fields", 0, "doc"], 5),
    (["properties"], {"": "x"}),  # refused by the definition itself
])
def test_wrongly_typed_metadata_is_an_iceberg_metadata_error(path, value):
    with pytest.raises(IcebergMetadataError, match=r"^metadata"):
        iceberg.definition_from_metadata(changed(path, value))


@pytest.mark.parametrize("path, value, message", [
    (["format-version"], True, r"^metadata\.format-version: viewstore reads view format 1, not True$"),
    (["format-version"], 1.0, r"^metadata\.format-version: viewstore reads view format 1, not 1\.0$"),
    (["current-version-id"], True, r"^metadata\.current-version-id: must be an integer, not True$"),
    (["current-version-id"], 2.0, r"^metadata\.current-version-id: must be an integer, not 2\.0$"),
    # a version whose id is a real is no version 2, as True is no version 1
    (["versions", 1, "version-id"], 2.0, r"^metadata\.current-version-id: no version has id 2$"),
])
def test_a_format_version_or_version_id_that_is_a_boolean_or_a_real_is_refused(path, value, message):
    """Python's True == 1 and 1.0 == 1 let such metadata through as format 1 and version 1, where
    the whole-file importer refuses them as no int; the codec refuses them too, by its decode as well."""
    metadata = changed(path, value)
    with pytest.raises(IcebergMetadataError, match=message):
        iceberg.definition_from_metadata(metadata)
    with pytest.raises(IcebergMetadataError, match=message):
        formats.decode(RECORD, metadata=json.dumps(metadata))


def test_representation_type_is_read_case_insensitively_as_java_does():
    metadata = copy.deepcopy(METADATA)
    spark_sql, hive_sql = metadata["versions"][1]["representations"]
    spark_sql["type"], hive_sql["type"] = "SQL", "Sql"
    definition = iceberg.definition_from_metadata(metadata)
    assert definition.representations == (SQLRepresentation("spark", "SELECT 1"),
                                           SQLRepresentation("hive", "SELECT 1 FROM h"))
    hive_sql["type"] = "substrait"  # another kind of representation is still skipped
    assert iceberg.definition_from_metadata(metadata).representations == (SQLRepresentation("spark", "SELECT 1"),)
