"""Every engine-view conformance file goes through detect/decode; every field of its expected block is checked.

The files live in ``../shared/conformance/engine-views`` (the ``conformance`` fixture). Each file has a
checker picked by its shape; a file without a checker, or an ``expected`` field nobody checks, fails.
Each rule or note an expected block states in words (``rule``, ``note``, ``decoder_rules``...) has a
check of its own in :data:`RULES`; a rule without one fails too.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import CONFORMANCE

from viewstore import formats
from viewstore.errors import IcebergMetadataError, ValidationError
from viewstore.formats import ViewDefinition, iceberg, spark, trino
from viewstore.model import Column

ENGINE_VIEWS = "engine-views"
EXPECTED_FILES = {
    "flink-hivecatalog-generic-view.reconstructed.json",
    "flink-hivecatalog-nongeneric-view-compat.reconstructed.json",
    "gravitino-written-trino-view.reconstructed.json",
    "hive-native-view.reconstructed.json",
    "hms-detection-cases.json",
    "iceberg-core-ValidViewMetadata.json",
    "iceberg-view-in-hms.reconstructed.json",
    "iceberg-view-spec-example.json",
    "iceberg-view-written-by-trino.reconstructed.json",
    "spark-alter-hive-view-side-effect.reconstructed.json",
    "spark-hms-view-3.5.reconstructed.json",
    "spark-hms-view-4.0-schema-mode.reconstructed.json",
    "spark-hms-view-split-schema.reconstructed.json",
    "spark-sessioncatalogsuite-views.reconstructed.json",
    "trino-connectorviewdefinition-json-cases.json",
    "trino-hms-doris-hmsexternaltabletest.json",
    "trino-hms-materialized-view-marker.reconstructed.json",
    "trino-hms-starrocks-trinoviewtest-alltypes.json",
    "trino-hms-starrocks-trinoviewtest-basic.json",
    "trino-hms-view-full-table.reconstructed.json",
}

#: Fields of ``expected`` blocks that explain rather than state a value.
NOTES = {"note", "rule", "rules", "columns_rule", "differences_from_trino_writer"}

# Collected at import time from the same directory the ``conformance`` fixture points at.
FILES_ON_DISK = sorted(p.name for p in (CONFORMANCE / ENGINE_VIEWS).glob("*.json"))


def load(conformance: Path, name: str) -> dict[str, Any]:
    return json.loads((conformance / ENGINE_VIEWS / name).read_text(encoding="utf-8"))


def test_every_conformance_file_is_present(conformance):
    on_disk = {p.name for p in (conformance / ENGINE_VIEWS).glob("*.json")}
    assert on_disk == EXPECTED_FILES
    assert set(FILES_ON_DISK) == EXPECTED_FILES
    assert len(FILES_ON_DISK) == 20


@pytest.mark.parametrize("name", FILES_ON_DISK)
def test_conformance_file(conformance, name):
    data = load(conformance, name)
    checker = CHECKERS.get(name) or (check_view_file if "hms_table" in data else None)
    assert checker is not None, f"no checker for {name}"
    checker(conformance, data)


# --------------------------------------------------------------------------------------------
# Checking one ``expected`` block against a decoded definition


def resolve(value: Any, table: dict[str, Any]) -> Any:
    """``"viewExpandedText (fully qualified)"`` in an expected block means that field of the record."""
    if isinstance(value, str):
        head = value.split(" (")[0]
        if head in ("viewOriginalText", "viewExpandedText"):
            return table[head]
        if value.startswith("see viewExpandedText"):
            return table["viewExpandedText"]
    return value


def engine_type_strings(definition: ViewDefinition) -> list[str]:
    return list(definition.engine_types) or [str(c.type) for c in definition.columns]


def check_expected(definition: ViewDefinition, expected: dict[str, Any], table: dict[str, Any],
                   metadata: dict[str, Any] | None = None) -> None:
    """Assert every field of ``expected`` against ``definition``; fail on a field nobody checks."""
    dialect = definition.dialect.lower()
    for key, value in expected.items():
        value = resolve(value, table)
        if key in NOTES:
            assert isinstance(value, (str, list))
        elif key == "dialect":
            assert definition.dialect == value
        elif key in ("sql", "sql_for_execution"):
            assert definition.sql == value
        elif key == "sql_original":
            assert definition.properties.get(f"hms.{dialect}.original-text", definition.sql) == value
        elif key == "sql_expanded_guess":
            assert definition.properties.get(f"hms.{dialect}.expanded-text", definition.sql) == value
        elif key == "default_catalog":
            assert definition.default_catalog == value
        elif key == "default_schema":
            assert definition.default_namespace == ((value,) if value is not None else ())
        elif key == "default_namespace":
            assert list(definition.default_namespace) == value
        elif key == "viewCatalogAndNamespace":
            assert [definition.default_catalog, *definition.default_namespace] == value
        elif key == "columns":
            check_columns(definition, value)
        elif key == "comment":
            assert definition.comment == value
        elif key == "owner":
            assert definition.owner == value
        elif key == "run_as_invoker":
            assert definition.security_mode == {None: None, True: "INVOKER", False: "DEFINER"}[value]
        elif key == "path":
            assert json.loads(definition.properties.get(trino.PATH_KEY, "[]")) == value
        elif key == "query_output_columns":
            assert list(spark.query_output_columns(definition)) == value
        elif key == "sql_configs":
            assert spark.sql_configs(definition) == value
        elif key == "schema_mode":
            assert spark.schema_mode(definition) == value.split(" (")[0]
        elif key == "summary":
            assert definition.summary == value
        elif key == "current_version_id":
            assert metadata is not None and iceberg.current_version(metadata)["version-id"] == value
        else:
            pytest.fail(f"expected field {key!r} is not checked")


def check_columns(definition: ViewDefinition, expected: list[dict[str, Any]]) -> None:
    assert [c.name for c in definition.columns] == [e["name"] for e in expected]
    types = engine_type_strings(definition)
    for column, engine_type, want in zip(definition.columns, types, expected):
        for key, value in want.items():
            if key == "name":
                continue
            elif key == "type":
                assert engine_type == value, column.name
            elif key in ("comment", "doc"):
                assert column.comment == value, column.name
            elif key == "required":
                assert column.nullable is (not value), column.name
            else:
                pytest.fail(f"column field {key!r} is not checked")


# --------------------------------------------------------------------------------------------
# Checkers by file shape


def check_view_file(conformance: Path, data: dict[str, Any]) -> None:
    """A file with one ``hms_table`` and an ``expected`` block for its decoded definition."""
    table, expected = data["hms_table"], data["expected"]
    engine, definition = formats.definition_from_table(table)
    assert engine == expected["dialect"]
    check_expected(definition, expected, table)
    if "decoded_json" in data:
        assert trino.read_payload(table["viewOriginalText"]) == data["decoded_json"]
    assert definition.database == table.get("dbName")
    assert definition.name == table.get("tableName")


def check_split_schema(conformance: Path, data: dict[str, Any]) -> None:
    table, expected = data["hms_table"], data["expected"]
    assert set(expected) == {"dialect", "reassembled_schema_json", "rule"}
    assert formats.detect(table) == expected["dialect"] == "spark"
    assert spark.schema_json(table["parameters"]) == expected["reassembled_schema_json"]
    definition = formats.decode(table)
    assert [(c.name, str(c.type), c.comment) for c in definition.columns] == [
        ("Id", "long", None), ("name", "string", "customer name")]
    # the rule: a missing part is an error naming it
    broken = {k: v for k, v in table["parameters"].items() if k != "spark.sql.sources.schema.part.1"}
    with pytest.raises(ValidationError, match=r"spark\.sql\.sources\.schema\.part\.1"):
        formats.decode({**table, "parameters": broken})


def check_materialized_view_marker(conformance: Path, data: dict[str, Any]) -> None:
    expected = data["expected"]
    assert set(expected) == {"is_logical_view", "classification", "note"}
    assert expected["is_logical_view"] is False
    assert expected["classification"] == "trino-materialized-view"
    with pytest.raises(ValidationError, match="materialized view"):
        formats.detect(data["hms_table"])
    with pytest.raises(ValidationError, match="materialized view"):
        formats.decode(data["hms_table"])


def check_detection_cases(conformance: Path, data: dict[str, Any]) -> None:
    cases = data["cases"]
    assert len(cases) == 11
    for case in cases:
        table = {"tableType": case["tableType"], "parameters": case["parameters"]}
        text = case["expected"]
        outcome = text.split()[0].split("/")[0]
        assert isinstance(case["trino"], str)
        if text.startswith(("unknown/reject", "not a logical view")):
            with pytest.raises(ValidationError) as caught:
                formats.detect(table)
            reason = str(caught.value).lower()
            assert ("materialized" in reason) if "materialized" in case["id"] else ("presto_view" in reason), case["id"]
        else:
            assert outcome in formats.ENGINES, case["id"]
            assert formats.detect(table) == outcome, case["id"]
            assert spark.is_altered_hive_view(case["parameters"]) is ("HiveQL" in text), case["id"]


def check_connector_json_cases(conformance: Path, data: dict[str, Any]) -> None:
    assert len(data["cases"]) == 5
    assert len(data["decoder_rules"]) == 4
    for case in data["cases"]:
        assert trino.read_payload(case["viewOriginalText"]) == json.loads(case["json"])
        table = {"tableType": "VIRTUAL_VIEW", "parameters": {"presto_view": "true", "comment": "Presto View"},
                 "viewOriginalText": case["viewOriginalText"], "viewExpandedText": "/* Presto View */"}
        assert formats.detect(table) == "trino"
        check_expected(formats.decode(table), case["expected"], table)
    # decoder rule 4: a definer view takes the HMS table owner
    owned = {"tableType": "VIRTUAL_VIEW", "owner": "hms-owner",
             "parameters": {"presto_view": "true", "comment": "Presto View"},
             "viewOriginalText": data["cases"][3]["viewOriginalText"]}
    assert formats.decode(owned).owner == "hms-owner"


def check_flink_nongeneric(conformance: Path, data: dict[str, Any]) -> None:
    assert len(data["cases"]) == 2
    for case in data["cases"]:
        table, expected = case["hms_table"], case["expected_by_flink"]
        engine, definition = formats.definition_from_table(table)
        for key, value in expected.items():
            if key == "kind":
                assert value == "hive view" and engine == "hive"
            elif key == "schema_from":
                assert value == "sd.cols"
                assert [(c["name"], c["type"]) for c in table["sd"]["cols"]] == \
                    [(c.name, t) for c, t in zip(definition.columns, definition.engine_types)]
            elif key == "originalQuery":
                assert definition.properties["hms.hive.original-text"] == value
            elif key == "expandedQuery":
                assert definition.sql == value
            elif key == "options":
                assert value.items() <= definition.properties.items()
            else:
                pytest.fail(f"expected field {key!r} is not checked")


def check_spark_session_catalog(conformance: Path, data: dict[str, Any]) -> None:
    assert len(data["cases"]) == 2
    for case in data["cases"]:
        source = case["catalog_table"]
        assert source["tableType"] == "VIEW"
        table = {  # the Spark CatalogTable as the metastore record Spark writes for it
            "tableType": "VIRTUAL_VIEW", "parameters": source["properties"],
            "viewOriginalText": source["viewText"], "viewExpandedText": source["viewText"],
            "sd": {"cols": [{"name": n, "type": t, "comment": None} for n, t in source["schema"]]},
        }
        engine, definition = formats.definition_from_table(table)
        assert engine == "spark"
        assert [(c.name, str(c.type)) for c in definition.columns] == [
            ("col1", "int"), ("col2", "string"), ("a", "int"), ("b", "string")]
        check_expected(definition, case["expected"], table)


def check_spark_alter(conformance: Path, data: dict[str, Any]) -> None:
    before, after = data["hms_before"], data["hms_after_expected"]
    assert set(data["expected"]) == {"note"}
    engine, hive_definition = formats.definition_from_table(before)
    assert engine == "hive" and hive_definition.sql == before["viewExpandedText"]
    assert hive_definition.columns == ()  # the record is trimmed: it has no sd.cols
    assert not spark.is_altered_hive_view(hive_definition)
    engine, definition = formats.definition_from_table(after)
    assert engine == "spark"
    assert spark.is_altered_hive_view(definition)
    assert definition.sql == after["viewOriginalText"] == before["viewExpandedText"]
    assert definition.comment == "hive view"
    assert [(c.name, str(c.type)) for c in definition.columns] == [("key", "string")]
    assert definition.default_namespace == () and definition.default_catalog is None


def check_iceberg_metadata(conformance: Path, data: dict[str, Any]) -> None:
    metadata = data["metadata"]
    definition = iceberg.definition_from_metadata(metadata)
    assert definition == iceberg.definition_from_metadata(json.dumps(metadata))
    check_expected(definition, data["expected"], {}, metadata)


#: the columns of the Trino-written view (its file gives the version alone, without the schema)
COLUMNS = (Column("orderkey", "long"),)


def check_iceberg_written_by_trino(conformance: Path, data: dict[str, Any]) -> None:
    definition = iceberg.definition_from_version(data["metadata_current_version"], data["properties"])
    check_expected(definition, data["expected"], {})
    # rule: run_as_invoker = ('trino.run-as-owner' absent)
    without_owner = {k: v for k, v in data["properties"].items() if k != "trino.run-as-owner"}
    invoker = iceberg.definition_from_version(data["metadata_current_version"], without_owner)
    assert invoker.security_mode == "INVOKER" and invoker.owner is None
    rules = data["expected"]["rules"]
    assert len(rules) == 5 and "only when default-catalog is non-null" in rules[1]
    # rule 2: an Iceberg reader keeps default-namespace as the spec says, catalog or not; Trino would
    # read no schema without a catalog, so a Trino record of it is refused rather than written changed
    version = {**data["metadata_current_version"], "default-catalog": None}
    no_catalog = iceberg.definition_from_version(version, data["properties"])
    assert no_catalog.default_namespace == ("sales",) and no_catalog.default_catalog is None
    with pytest.raises(ValidationError, match="Trino needs a default catalog"):
        trino.encode(no_catalog.model_copy(update={"database": "sales", "name": "v", "columns": COLUMNS}))
    # rule 3 is about Trino's writer (the view's own namespace, not the session schema; both are
    # "sales" in this file): a reader takes both as written
    assert (definition.default_catalog, definition.default_namespace) == ("ice", ("sales",))
    # rule 4: no SQL path is stored, so none is read (a Trino record of it has none either)
    assert trino.PATH_KEY not in definition.properties
    payload = trino.decode(trino.encode(definition.model_copy(update={"database": "sales", "name": "v",
                                                                      "columns": COLUMNS})))
    assert trino.PATH_KEY not in payload.properties
    # rule 5: trino-version is not a summary key: the summary is the file's own
    assert "trino-version" not in definition.summary
    assert definition.summary == data["metadata_current_version"]["summary"]


def check_iceberg_in_hms(conformance: Path, data: dict[str, Any]) -> None:
    table, expected = data["hms_table"], data["expected"]
    assert set(expected) == {"classification", "source_of_truth", "note"}
    assert expected["classification"] == "iceberg-view"
    assert formats.detect(table) == "iceberg"
    # source of truth: the metadata file, never the HMS text
    with pytest.raises(ValidationError, match="metadata_location|metadata file"):
        formats.decode(table)
    metadata = load(conformance, "iceberg-view-spec-example.json")["metadata"]
    engine, definition = formats.definition_from_table(table, metadata=metadata)
    assert engine == "iceberg"
    assert definition.sql == metadata["versions"][0]["representations"][0]["sql"] != table["viewOriginalText"]
    assert definition.dialect == "spark" and definition.comment == "Daily event counts"
    assert definition.properties[iceberg.METADATA_LOCATION_KEY] == table["parameters"]["metadata_location"]
    other = load(conformance, "iceberg-core-ValidViewMetadata.json")["metadata"]
    with pytest.raises(IcebergMetadataError, match="view-uuid"):
        formats.decode(table, metadata={**other, "view-uuid": "00000000-0000-0000-0000-000000000000"})


CHECKERS = {
    "spark-hms-view-split-schema.reconstructed.json": check_split_schema,
    "trino-hms-materialized-view-marker.reconstructed.json": check_materialized_view_marker,
    "hms-detection-cases.json": check_detection_cases,
    "trino-connectorviewdefinition-json-cases.json": check_connector_json_cases,
    "flink-hivecatalog-nongeneric-view-compat.reconstructed.json": check_flink_nongeneric,
    "spark-sessioncatalogsuite-views.reconstructed.json": check_spark_session_catalog,
    "spark-alter-hive-view-side-effect.reconstructed.json": check_spark_alter,
    "iceberg-core-ValidViewMetadata.json": check_iceberg_metadata,
    "iceberg-view-spec-example.json": check_iceberg_metadata,
    "iceberg-view-written-by-trino.reconstructed.json": check_iceberg_written_by_trino,
    "iceberg-view-in-hms.reconstructed.json": check_iceberg_in_hms,
}


# --------------------------------------------------------------------------------------------
# The rules and notes of the expected blocks: each one stated as behaviour is asserted here


#: Keys whose text states a rule (``source.note`` is provenance, and ``trino`` in the detection
#: cases says what Trino itself does; the detection checker holds viewstore to ``expected``).
RULE_KEYS = NOTES | {"decoder_rules"}


def stated_rules(data: Any, path: str = "") -> list[str]:
    """The paths of every rule or note in a conformance file (``expected.rule``, ``cases[1].expected.rule``...)."""
    found = []
    if isinstance(data, dict):
        for key, value in data.items():
            inner = f"{path}.{key}" if path else key
            if key in RULE_KEYS and inner != "source.note":
                found.append(inner)
            elif key != "source":
                found.extend(stated_rules(value, inner))
    elif isinstance(data, list):
        for i, item in enumerate(data):
            found.extend(stated_rules(item, f"{path}[{i}]"))
    return found


def rule_flink_generic(conformance: Path, data: dict[str, Any]) -> None:
    """Generic when is_generic parses as true (Java's Boolean.parseBoolean) or, without the flag, when
    flink.connector / flink.connector.type is present; otherwise a Hive object, schema from sd.cols."""
    table = data["hms_table"]
    params = table["parameters"]
    without = {k: v for k, v in params.items() if k != "is_generic"}

    def engine(parameters: dict[str, str]) -> str:
        return formats.detect({**table, "parameters": parameters})

    for flag in ("true", "TRUE", "True"):
        assert engine({**params, "is_generic": flag}) == "flink", flag
    for flag in ("false", "yes", "1", " true", ""):  # parseBoolean: anything but 'true' in some case is false
        assert engine({**params, "is_generic": flag}) == "hive", flag
    assert engine(without) == "hive"
    for key in ("flink.connector", "flink.connector.type"):
        assert engine({**without, key: "datagen"}) == "flink", key
    hive_object = {**table, "parameters": without, "sd": {"cols": [{"name": "x", "type": "int", "comment": "c"}]}}
    kind, definition = formats.definition_from_table(hive_object)
    assert kind == "hive" and [(c.name, str(c.type), c.comment) for c in definition.columns] == [("x", "int", "c")]


def rule_flink_nongeneric(conformance: Path, data: dict[str, Any]) -> None:
    """For a cross-engine decoder these are plain Hive-style views (no flink.* keys)."""
    for case in data["cases"]:
        table = case["hms_table"]
        assert not any(key.startswith("flink.") for key in table["parameters"])
        assert formats.detect(table) == "hive"


def rule_gravitino(conformance: Path, data: dict[str, Any]) -> None:
    """Explicit JSON nulls, the blob in viewExpandedText, no trino_* parameters: read as Trino's own form."""
    table = data["hms_table"]
    differences = data["expected"]["differences_from_trino_writer"]
    assert len(differences) == 3
    # 1: explicit nulls instead of omitted keys read as the omitted keys do
    payload = trino.read_payload(table["viewOriginalText"])
    assert payload["owner"] is None and payload["columns"][0]["comment"] is None
    definition = formats.decode(table)
    assert definition.owner is None and definition.columns[0].comment is None
    # 2: the blob repeated in viewExpandedText means what Trino's marker means
    assert table["viewExpandedText"] == table["viewOriginalText"]
    assert formats.decode({**table, "viewExpandedText": trino.EXPANDED_MARKER}) == definition
    # 3: without trino_* parameters; written back in Trino's own form, still without them
    assert set(table["parameters"]) == {"presto_view", "comment"}
    record = formats.encode(definition, "trino")
    assert record["viewExpandedText"] == trino.EXPANDED_MARKER
    assert record["parameters"] == {"presto_view": "true", "comment": "Presto View"}
    assert formats.decode(record) == definition


def rule_free_form_dialects(conformance: Path, data: dict[str, Any]) -> None:
    """Dialect strings are free-form: matched case-insensitively, never by prefix."""
    from viewstore.formats.base import for_dialect

    definition = iceberg.definition_from_metadata(data["metadata"])
    assert definition.dialect == "spark-sql"
    assert for_dialect(definition, "SPARK-SQL").sql == definition.sql
    for other in ("spark", "spark-"):
        with pytest.raises(ValidationError, match=f"writing a {other} view needs {other} SQL"):
            for_dialect(definition, other)


def rule_iceberg_in_hms(conformance: Path, data: dict[str, Any]) -> None:
    """No engine's markers: only table_type tells it from a Hive-native view."""
    table = data["hms_table"]
    params = table["parameters"]
    assert not any(key in ("presto_view", "spark.sql.create.version") or key.startswith("flink.") for key in params)
    assert formats.detect(table) == "iceberg"
    assert formats.detect({**table, "parameters": {k: v for k, v in params.items() if k != "table_type"}}) == "hive"


def rule_spark_altered_hive_view(conformance: Path, data: dict[str, Any]) -> None:
    """create.version '2.2 or prior' together with no view.query.out.* / view.catalogAndNamespace.* flags it."""
    params = data["hms_after_expected"]["parameters"]
    assert spark.is_altered_hive_view(params)
    assert not spark.is_altered_hive_view({**params, "spark.sql.create.version": "3.5.3"})
    for key in ("view.query.out.numCols", "view.catalogAndNamespace.numParts"):
        assert not spark.is_altered_hive_view({**params, key: "0"}), key
        assert not spark.is_altered_hive_view(formats.decode({**data["hms_after_expected"],
                                                               "parameters": {**params, key: "0"}})), key


def rule_spark_columns(conformance: Path, data: dict[str, Any]) -> None:
    """Prefer spark.sql.sources.schema (case preserved); fall back to sd.cols."""
    table = data["hms_table"]
    assert [c["name"] for c in table["sd"]["cols"]] == ["id", "name"]  # the metastore's lower case
    assert [c.name for c in formats.decode(table).columns] == ["Id", "name"]
    without = {k: v for k, v in table["parameters"].items() if k != "spark.sql.sources.schema"}
    fallback = formats.decode({**table, "parameters": without})
    assert [(c.name, str(c.type), c.comment) for c in fallback.columns] == [
        ("id", "long", None), ("name", "string", "customer name")]


def rule_spark_schema_modes(conformance: Path, data: dict[str, Any]) -> None:
    """The four schema modes (TYPE EVOLUTION with a space); EVOLUTION never with a column list."""
    table = data["hms_table"]
    for mode in ("BINDING", "COMPENSATION", "TYPE EVOLUTION", "EVOLUTION"):
        definition = formats.decode({**table, "parameters": {**table["parameters"], "view.schemaMode": mode}})
        assert spark.schema_mode(definition) == mode
        written = formats.encode(definition.model_copy(update={"database": "sales", "name": "v"}), "spark")
        has_names = any(key.startswith("view.query.out.") for key in written["parameters"])
        assert has_names is (mode != "EVOLUTION"), mode
    for bad in ("TYPE_EVOLUTION", "binding", "Evolution"):
        with pytest.raises(ValidationError, match=r"view\.schemaMode"):
            formats.decode({**table, "parameters": {**table["parameters"], "view.schemaMode": bad}})


def rule_spark_legacy_default_database(conformance: Path, data: dict[str, Any]) -> None:
    """view.default.database maps to [spark_catalog, db]; neither key means no default (the expanded
    text Spark < 2.2 runs is kept and written back)."""
    source = data["cases"][1]["catalog_table"]
    table = {"tableType": "VIRTUAL_VIEW", "parameters": {"spark.sql.create.version": "2.1.2"},
             "viewOriginalText": source["viewText"], "viewExpandedText": "SELECT `tbl1`.`a` FROM `db2`.`tbl1`",
             "sd": {"cols": [{"name": n, "type": t, "comment": None} for n, t in source["schema"]]}}
    definition = formats.decode(table)
    assert (definition.default_catalog, definition.default_namespace) == (None, ())
    assert definition.properties[spark.EXPANDED_TEXT_KEY] == table["viewExpandedText"]
    assert formats.encode(definition.model_copy(update={"database": "db3", "name": "view2"}),
                          "spark")["viewExpandedText"] == table["viewExpandedText"]
    legacy = formats.decode({**table, "parameters": {**table["parameters"], **source["properties"]}})
    assert (legacy.default_catalog, legacy.default_namespace) == ("spark_catalog", ("db2",))


def rule_trino_decoder(conformance: Path, data: dict[str, Any]) -> None:
    """Rules 1-3 (rule 4, the HMS owner of a definer view, is checked with the cases)."""
    rules = data["decoder_rules"]
    assert "except originalSql and columns" in rules[0] and "Do not default it to true" in rules[1]

    def table(document: dict[str, Any]) -> dict[str, Any]:
        blob = base64.b64encode(json.dumps(document).encode()).decode()
        return {"tableType": "VIRTUAL_VIEW", "parameters": {"presto_view": "true", "comment": "Presto View"},
                "viewOriginalText": f"/* Presto View: {blob} */", "viewExpandedText": "/* Presto View */"}

    minimal = json.loads(data["cases"][0]["json"])
    assert set(minimal) == {"originalSql", "columns"}
    # 1: only originalSql and columns are needed
    for key in ("originalSql", "columns"):
        with pytest.raises(ValidationError, match=rf"viewOriginalText\.{key}"):
            formats.decode(table({k: v for k, v in minimal.items() if k != key}))
    # 2: a missing runAsInvoker is definer security; 3: missing owner, comment, catalog, schema and path are empty
    definition = formats.decode(table(minimal))
    assert definition.security_mode == "DEFINER"
    assert (definition.owner, definition.comment, definition.default_catalog, definition.default_namespace) == \
        (None, None, None, ())
    assert trino.PATH_KEY not in definition.properties
    assert "path" not in trino.read_payload(formats.encode(definition.model_copy(
        update={"database": "s", "name": "v"}), "trino")["viewOriginalText"])


def rule_trino_materialized_view(conformance: Path, data: dict[str, Any]) -> None:
    """Neither a Trino view nor a Hive view: a bulk import skips it as a Trino materialized view."""
    assert formats.not_a_view(data["hms_table"]) == "a Trino materialized view"
    check_materialized_view_marker(conformance, data)


def rule_trino_placeholders(conformance: Path, data: dict[str, Any]) -> None:
    """The HMS comment is the constant 'Presto View' (the view's own is in the JSON); sd.cols is a
    placeholder, never the schema."""
    table = data["hms_table"]
    definition = formats.decode(table)
    assert table["parameters"]["comment"] == "Presto View" != definition.comment == data["decoded_json"]["comment"]
    assert [c.name for c in definition.columns] == ["orderkey", "totalprice"]
    other_cols = {**table, "sd": {**table["sd"], "cols": [{"name": "x", "type": "int", "comment": "not it"}]}}
    assert formats.decode(other_cols) == definition
    record = formats.encode(definition, "trino")
    assert record["parameters"]["comment"] == "Presto View"
    assert record["sd"]["cols"] == [{"name": "dummy", "type": "string", "comment": None}]


#: (file, path of the rule) -> the check that asserts it
RULES = {
    ("flink-hivecatalog-generic-view.reconstructed.json", "expected.rule"): rule_flink_generic,
    ("flink-hivecatalog-nongeneric-view-compat.reconstructed.json", "note"): rule_flink_nongeneric,
    ("gravitino-written-trino-view.reconstructed.json", "expected.differences_from_trino_writer"): rule_gravitino,
    ("iceberg-core-ValidViewMetadata.json", "expected.note"): rule_free_form_dialects,
    ("iceberg-view-in-hms.reconstructed.json", "expected.note"): rule_iceberg_in_hms,
    ("iceberg-view-written-by-trino.reconstructed.json", "expected.rules"): check_iceberg_written_by_trino,
    ("spark-alter-hive-view-side-effect.reconstructed.json", "expected.note"): rule_spark_altered_hive_view,
    ("spark-hms-view-3.5.reconstructed.json", "expected.columns_rule"): rule_spark_columns,
    ("spark-hms-view-4.0-schema-mode.reconstructed.json", "expected.note"): rule_spark_schema_modes,
    ("spark-hms-view-split-schema.reconstructed.json", "expected.rule"): check_split_schema,
    ("spark-sessioncatalogsuite-views.reconstructed.json", "cases[1].expected.rule"):
        rule_spark_legacy_default_database,
    ("trino-connectorviewdefinition-json-cases.json", "decoder_rules"): rule_trino_decoder,
    ("trino-hms-materialized-view-marker.reconstructed.json", "expected.note"): rule_trino_materialized_view,
    ("trino-hms-view-full-table.reconstructed.json", "expected.note"): rule_trino_placeholders,
}


def test_every_rule_of_the_conformance_files_has_a_check(conformance):
    stated = {(name, path) for name in FILES_ON_DISK for path in stated_rules(load(conformance, name))}
    assert stated == set(RULES)


@pytest.mark.parametrize("name, path", sorted(RULES))
def test_conformance_rule(conformance, name, path):
    RULES[name, path](conformance, load(conformance, name))
