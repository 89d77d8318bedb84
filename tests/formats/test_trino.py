"""Trino views: the Presto View blob, type signatures, owner and security rules, and writing."""

from __future__ import annotations

import base64
import json

import pytest

from viewstore import formats
from viewstore.errors import ValidationError
from viewstore.formats import ViewDefinition, trino
from viewstore.model import Column

MARKERS = {"presto_view": "true", "comment": "Presto View"}


def blob(document: object) -> str:
    return trino.PREFIX + base64.b64encode(json.dumps(document).encode()).decode() + trino.SUFFIX


def record(document: object, **extra) -> dict:
    return {"tableType": "VIRTUAL_VIEW", "parameters": dict(MARKERS), "viewOriginalText": blob(document),
            "viewExpandedText": trino.EXPANDED_MARKER, **extra}


MINIMAL = {"originalSql": "SELECT 42 x", "columns": [{"name": "x", "type": "bigint"}]}


@pytest.mark.parametrize("signature, iceberg", [
    ("boolean", "boolean"), ("tinyint", "int"), ("smallint", "int"), ("integer", "int"), ("bigint", "long"),
    ("real", "float"), ("double", "double"), ("date", "date"), ("uuid", "uuid"), ("varbinary", "binary"),
    ("unknown", "unknown"), ("varchar", "string"), ("varchar(20)", "string"), ("char(10)", "string"),
    ("decimal(10,2)", "decimal(10,2)"), ("decimal(38, 0)", "decimal(38,0)"), ("time(6)", "time"),
    ("decimal(5,5)", "decimal(5,5)"),  # a scale as large as the precision
    ("decimal", "decimal(38,0)"),  # Trino's decimal without parameters is decimal(38,0)
    ("timestamp(3)", "timestamp"), ("timestamp(6)", "timestamp"), ("timestamp(9)", "timestamp_ns"),
    ("timestamp", "timestamp"), ("timestamp with time zone", "timestamptz"),  # Trino's precision 3 without one
    ("timestamp(3) with time zone", "timestamptz"), ("timestamp(12) with time zone", "timestamptz_ns"),
    ("array(integer)", "list<int>"), ("map(varchar,integer)", "map<string, int>"),
    ('row("field1" integer,"field2" varchar)', "struct<field1: int, field2: string>"),
    ("row(a bigint, b array(row(c double)))", "struct<a: long, b: list<struct<c: double>>>"),
    ('row("we""ird name" integer)', 'struct<`we"ird name`: int>'),
    ("ARRAY(VARCHAR(3))", "list<string>"),
])
def test_type_signatures(signature, iceberg):
    assert str(trino.iceberg_type(signature)) == iceberg


@pytest.mark.parametrize("signature, reason", [
    ("json", "'json' has no Iceberg equivalent"),
    ("interval day to second", "'interval' has no Iceberg equivalent"),
    ("time(3) with time zone", "time with time zone"),
    ("row(integer, varchar)", "row field without a name"),
    ("row(a integer, A varchar)", "unique"),
    ("frobnicate", "unknown Trino type 'frobnicate'"),
    ("array(integer", "unexpected end"),
    ("decimal(39,0)", "precision of 1-38"),
    ("varchar(1,2)", "varchar takes one length"),
    ("decimal(10,2,3)", "precision of 1-38"),
    ('row("" integer)', "row field names must be non-empty and unique, found ''"),
    ("map(varchar)", "expected ','"),
    ("bigint extra", "unexpected 'extra'"),
    ('row("unterminated integer)', "unterminated"),
])
def test_bad_type_signatures(signature, reason):
    with pytest.raises(ValidationError, match=reason) as caught:
        trino.iceberg_type(signature, "columns[0].type")
    assert str(caught.value).startswith("columns[0].type: ")


def test_engine_type_of_iceberg_types():
    from viewstore.types import parse_type
    assert trino.engine_type(parse_type("struct<a: int, b: list<timestamptz>>")) == \
        'row("a" integer,"b" array(timestamp(6) with time zone))'
    assert trino.engine_type(parse_type("map<string, decimal(9,3)>")) == "map(varchar,decimal(9,3))"
    # Iceberg keeps times to the microsecond: Trino's time(6) holds them all, time(3) would not
    assert trino.engine_type(parse_type("time")) == "time(6)"
    assert trino.engine_type(parse_type("timestamp_ns")) == "timestamp(9)"
    assert trino.engine_type(parse_type("timestamptz_ns")) == "timestamp(9) with time zone"
    assert trino.engine_type(parse_type("unknown")) == "unknown"
    # a double quote in a row field name is doubled, as Trino quotes it, and reads back as the name
    weird = parse_type('struct<`we"ird`: int>')
    assert trino.engine_type(weird) == 'row("we""ird" integer)'
    assert trino.iceberg_type(trino.engine_type(weird)) == weird
    with pytest.raises(ValidationError, match="columns\\[2\\].type: Trino has no type for Iceberg fixed\\[16\\]"):
        trino.engine_type(parse_type("fixed[16]"), "columns[2].type")


@pytest.mark.parametrize("text, reason", [
    (None, "viewOriginalText: a Trino view keeps its definition here"),
    ("SELECT 1", "must look like '/\\* Presto View: <Base64> \\*/'"),
    ("/* Presto View: not*base64! */", "malformed Base64 payload"),
    # whole quartets of characters outside the alphabet, which a lenient decoder skips: Java's refuses them
    (blob(MINIMAL)[:24] + "!!!!" + blob(MINIMAL)[24:], "malformed Base64 payload"),
    ("/* Presto View: " + base64.b64encode(b"\xff\xfe").decode() + " */", "not UTF-8"),
    ("/* Presto View: " + base64.b64encode(b"{not json").decode() + " */", "not JSON"),
    ("/* Presto View: " + base64.b64encode(b"[1, 2]").decode() + " */", "must be a JSON object"),
    # the prefix and the suffix share the blank: no room for a payload between them
    ("/* Presto View: */", "must look like '/\\* Presto View: <Base64> \\*/', found '/\\* Presto View: \\*/'"),
    # nested deeper than Python's JSON reader goes: it raised RecursionError
    ("/* Presto View: " + base64.b64encode(b"[" * 100_000 + b"]" * 100_000).decode() + " */", "not JSON"),
])
def test_malformed_blobs(text, reason):
    with pytest.raises(ValidationError, match=reason) as caught:
        formats.decode({"tableType": "VIRTUAL_VIEW", "parameters": dict(MARKERS), "viewOriginalText": text})
    assert str(caught.value).startswith("viewOriginalText")


@pytest.mark.parametrize("sql, padding", [("SELECT 42 x", "=="), ("SELECT 42 xy", "=")])
def test_base64_without_padding_is_accepted_like_java_does(sql, padding):
    document = {**MINIMAL, "originalSql": sql}
    text = blob(document)
    assert text.endswith(f"{padding} */") and not text.endswith(f"={padding} */")
    unpadded = text.replace("=", "")
    assert trino.read_payload(unpadded) == document


@pytest.mark.parametrize("document, reason", [
    ({"columns": [{"name": "x", "type": "bigint"}]}, r"viewOriginalText\.originalSql: .*no originalSql"),
    ({"originalSql": "SELECT 1"}, r"viewOriginalText\.columns: .*non-empty columns list"),
    ({**MINIMAL, "columns": []}, r"viewOriginalText\.columns"),
    ({**MINIMAL, "columns": [{"name": "x", "type": "json"}]}, r"viewOriginalText\.columns\[0\]\.type: .*json"),
    ({**MINIMAL, "columns": [{"name": "x", "type": "bogus(1)"}]}, r"columns\[0\]\.type: .*unknown Trino type"),
    ({**MINIMAL, "columns": [{"type": "bigint"}]}, r"columns\[0\]\.name"),
    ({**MINIMAL, "columns": [{"name": "", "type": "bigint"}]},
     r"columns\[0\]\.name: must be a non-empty string, not ''"),
    ({**MINIMAL, "columns": ["x"]}, r"^viewOriginalText\.columns\[0\]: must be an object with name and type"),
    ({**MINIMAL, "columns": [{"name": "x", "type": 7}]},
     r"^viewOriginalText\.columns\[0\]\.type: must be a Trino type signature, not 7"),
    ({**MINIMAL, "columns": [{"name": "x", "type": "bigint", "comment": 7}]},
     r"^viewOriginalText\.columns\[0\]\.comment: must be a string or null, not 7"),
    ({**MINIMAL, "runAsInvoker": "yes"}, r"viewOriginalText\.runAsInvoker"),
    ({**MINIMAL, "owner": 7}, r"viewOriginalText\.owner"),
    ({**MINIMAL, "path": "x"}, r"viewOriginalText\.path"),
])
def test_bad_payloads_name_the_field(document, reason):
    with pytest.raises(ValidationError, match=reason):
        formats.decode(record(document))


def test_decode_defaults_of_a_legacy_payload():
    definition = formats.decode(record(MINIMAL))
    assert definition.sql == "SELECT 42 x"
    assert definition.security_mode == "DEFINER"  # a missing runAsInvoker is false
    assert (definition.default_catalog, definition.default_namespace, definition.owner) == (None, (), None)
    assert trino.PATH_KEY not in definition.properties
    assert definition.engine_types == ("bigint",)
    assert [(c.name, str(c.type), c.comment, c.nullable) for c in definition.columns] == [("x", "long", None, True)]


@pytest.mark.parametrize("invoker, json_owner, table_owner, owner", [
    (False, "json", "table", "table"),  # Trino replaces a definer's owner with the table owner
    (False, "json", None, "json"),
    (False, None, "table", "table"),
    (True, None, "table", "table"),
    (True, "json", "table", "json"),  # an invoker view keeps the owner its JSON names
    (True, None, None, None),
])
def test_owner(invoker, json_owner, table_owner, owner):
    document = {**MINIMAL, "runAsInvoker": invoker, **({"owner": json_owner} if json_owner else {})}
    definition = formats.decode(record(document, owner=table_owner))
    assert definition.owner == owner
    assert definition.security_mode == ("INVOKER" if invoker else "DEFINER")


def test_hms_parameters_other_than_the_markers_are_kept():
    table = record(MINIMAL)
    table["parameters"].update({"trino_version": "476", "extra": "x", "transient_lastDdlTime": "1"})
    properties = formats.decode(table).properties
    assert properties["trino_version"] == "476" and properties["extra"] == "x"
    assert "presto_view" not in properties and "transient_lastDdlTime" not in properties


def test_a_presto_view_property_stays_out_of_another_engines_record():
    """presto_view in a Hive record would make Trino take it for its own view (and refuse it without the
    Presto View blob): the flag is Trino's alone."""
    assert trino.owns_parameter("presto_view")
    hive_view = ViewDefinition(dialect="hive", sql="SELECT 1 a", columns=(Column("a", "int"),),
                               properties={"presto_view": "true", "k": "v"})
    out = formats.encode(hive_view, "hive")
    assert out["parameters"] == {"k": "v"} and formats.detect(out) == "hive"


def test_an_empty_schema_is_no_schema():
    """Trino reads a missing schema as none; an empty one names no schema either, so the view has no
    default namespace rather than a namespace level the store cannot hold."""
    definition = formats.decode(record({**MINIMAL, "catalog": "hive", "schema": ""}))
    assert (definition.default_catalog, definition.default_namespace) == ("hive", ())


def test_an_empty_catalog_is_written_and_read_as_given():
    """Unlike an empty schema, which names no namespace level, an empty catalog is a value the
    definition holds: it is written to the JSON and reads back, not left out as if there were none."""
    out = formats.encode(definition(default_catalog="", default_namespace=()), "trino")
    assert trino.read_payload(out["viewOriginalText"])["catalog"] == ""
    assert formats.decode(out).default_catalog == ""


def definition(**changes) -> ViewDefinition:
    base = dict(dialect="trino", sql="SELECT a FROM t", columns=(Column("a", "string", "the a"),),
                comment="c", default_catalog="hive", default_namespace=("sales",), owner="alice",
                security_mode="DEFINER", database="sales", name="v")
    return ViewDefinition(**{**base, **changes})


def test_encode_writes_what_trino_writes():
    out = formats.encode(definition(properties={"user.key": "x"}), "trino")
    assert out["tableType"] == "VIRTUAL_VIEW"
    assert (out["dbName"], out["tableName"], out["owner"]) == ("sales", "v", "alice")
    assert out["parameters"] == {"presto_view": "true", "comment": "Presto View", "user.key": "x",
                                 "trino_created_by": "viewstore", "trino_version": out["parameters"]["trino_version"]}
    assert out["parameters"]["trino_version"].startswith("viewstore")
    # Trino's placeholder column, an empty location and no storage format
    assert out["sd"] == {"cols": [{"name": "dummy", "type": "string", "comment": None}], "location": "",
                         "inputFormat": None, "outputFormat": None, "serdeInfo": {"serializationLib": None}}
    assert out["viewExpandedText"] == "/* Presto View */"
    encoded = out["viewOriginalText"][len("/* Presto View: "):-len(" */")]
    assert base64.b64decode(encoded).decode() == (
        '{"originalSql":"SELECT a FROM t","catalog":"hive","schema":"sales",'
        '"columns":[{"name":"a","type":"varchar","comment":"the a"}],'
        '"comment":"c","owner":"alice","runAsInvoker":false}')


def test_a_definition_that_names_its_trino_writer_keeps_it():
    """The codec labels a record trino_created_by=viewstore only when the definition does not say
    who created it: a view from elsewhere that carries the parameter (not decoded from a Trino
    record, so without its column types) keeps it."""
    out = formats.encode(definition(properties={"trino_created_by": "Trino Iceberg connector",
                                                "trino_version": "476"}), "trino")
    assert out["parameters"]["trino_created_by"] == "Trino Iceberg connector"
    assert out["parameters"]["trino_version"] == "476"


def test_encode_an_invoker_view_has_no_owner_in_the_json():
    out = formats.encode(definition(security_mode="INVOKER"), "trino")
    payload = trino.read_payload(out["viewOriginalText"])
    assert payload["runAsInvoker"] is True and "owner" not in payload
    assert out["owner"] == "alice"
    assert formats.decode(out).owner == "alice"


def test_encode_without_security_mode_is_definer():
    payload = trino.read_payload(formats.encode(definition(security_mode=None), "trino")["viewOriginalText"])
    assert payload["runAsInvoker"] is False and payload["owner"] == "alice"


def test_encode_keeps_recorded_type_strings_that_still_fit():
    kept = {"hms.trino.column-types": '["varchar(20)"]'}
    payload = trino.read_payload(formats.encode(definition(properties=kept), "trino")["viewOriginalText"])
    assert payload["columns"][0]["type"] == "varchar(20)"
    stale = {"hms.trino.column-types": '["bigint"]'}  # the column is a string now
    payload = trino.read_payload(formats.encode(definition(properties=stale), "trino")["viewOriginalText"])
    assert payload["columns"][0]["type"] == "varchar"
    unreadable = {"hms.trino.column-types": '["varchar(x)"]'}  # set by hand
    payload = trino.read_payload(formats.encode(definition(properties=unreadable), "trino")["viewOriginalText"])
    assert payload["columns"][0]["type"] == "varchar"
    # a nested field the store holds as required, which Trino's types do not say, still fits its signature
    nested = definition(columns=(Column("a", "struct<f: string not null>"),),
                        properties={"hms.trino.column-types": '["row(\\"f\\" varchar(20))"]'})
    payload = trino.read_payload(formats.encode(nested, "trino")["viewOriginalText"])
    assert payload["columns"][0]["type"] == 'row("f" varchar(20))'


def test_encode_writes_the_path_when_recorded():
    path = '[{"catalogName":"hive","schemaName":"ventes_é"}]'  # kept as written, not escaped
    out = formats.encode(definition(properties={trino.PATH_KEY: path}), "trino")
    assert trino.read_payload(out["viewOriginalText"])["path"] == json.loads(path)
    assert formats.decode(out).properties[trino.PATH_KEY] == path
    with pytest.raises(ValidationError, match="hms.trino.path"):
        formats.encode(definition(properties={trino.PATH_KEY: "{"}), "trino")
    with pytest.raises(ValidationError,
                       match=r"^properties\.hms\.trino\.path: must be a JSON list, not \{'catalogName'"):
        formats.encode(definition(properties={trino.PATH_KEY: '{"catalogName":"hive"}'}), "trino")


@pytest.mark.parametrize("changes, reason", [
    ({"columns": ()}, "columns: a Trino view needs at least one column"),
    ({"default_namespace": ("a", "b")}, "default_namespace: Trino has one schema level"),
    ({"default_catalog": None}, "default_catalog: Trino needs a default catalog"),
    ({"columns": (Column("u", "fixed[4]"),)}, r"columns\[0\]\.type: Trino has no type"),
    ({"dialect": "spark"}, "writing a trino view needs trino SQL"),
    # a lone surrogate, which UTF-8 cannot hold: it raised UnicodeEncodeError
    ({"sql": "SELECT '\ud800'"}, r"^viewOriginalText\.originalSql: is not valid Unicode \(it holds a lone surrogate\)"),
    ({"columns": (Column("a", "int"), Column("b", "int", "\udfff"))}, r"^viewOriginalText\.columns\[1\]\.comment: is "),
    ({"owner": "\ud83d"}, r"^viewOriginalText\.owner: is not valid Unicode"),
    ({"properties": {trino.PATH_KEY: '[{"catalogName":"\\ud800"}]'}}, r"^viewOriginalText\.path\[0\]\.catalogName: "),
    # in a key: the object that holds it is named
    ({"properties": {trino.PATH_KEY: '[{"\\udc80":"hive"}]'}}, r"^viewOriginalText\.path\[0\]: is not valid Unicode"),
])
def test_encode_rejects(changes, reason):
    with pytest.raises(ValidationError, match=reason):
        formats.encode(definition(**changes), "trino")


@pytest.mark.parametrize("name", [
    "trino-hms-view-full-table.reconstructed.json",
    "trino-hms-doris-hmsexternaltabletest.json",
    "trino-hms-starrocks-trinoviewtest-basic.json",
    "trino-hms-starrocks-trinoviewtest-alltypes.json",
])
def test_real_payloads_are_written_back_byte_for_byte(conformance, name):
    table = json.loads((conformance / "engine-views" / name).read_text())["hms_table"]
    out = formats.encode(formats.decode(table), "trino")
    assert out["viewOriginalText"] == table["viewOriginalText"]
    assert out["viewExpandedText"] == table["viewExpandedText"]
    assert out["parameters"] == table["parameters"]


def test_gravitino_form_is_normalised_to_trinos_form(conformance):
    table = json.loads((conformance / "engine-views" / "gravitino-written-trino-view.reconstructed.json")
                       .read_text())["hms_table"]
    definition = formats.decode(table)
    out = formats.encode(definition, "trino")
    assert out["viewExpandedText"] == "/* Presto View */"
    payload = trino.read_payload(out["viewOriginalText"])
    assert "owner" not in payload and "comment" not in payload["columns"][0]  # no explicit nulls
    assert out["parameters"] == {"presto_view": "true", "comment": "Presto View"}  # decoded from Trino: no labels
    assert formats.decode(out) == definition


def test_a_table_with_trinos_markers_is_not_claimed():
    """Trino reads a record as a view only when its table type is VIRTUAL_VIEW, whatever its parameters."""
    assert trino.claims("VIRTUAL_VIEW", MARKERS)
    assert not trino.claims("EXTERNAL_TABLE", MARKERS) and not trino.claims("MANAGED_TABLE", MARKERS)


def test_trino_prefix_is_case_sensitive():
    """Trino's prefix is ``/* Presto View: `` exactly: a blob in another case is not a Trino view."""
    payload = base64.b64encode(json.dumps(
        {"originalSql": "SELECT 1 x", "columns": [{"name": "x", "type": "integer"}]}).encode()).decode()
    text = "/* presto view: " + payload + trino.SUFFIX
    refused = ("^viewOriginalText: a Trino view definition must look like '/\\* Presto View: <Base64> \\*/', "
               "found '/\\* presto view: eyJvcmlnaW5hbFNxbCI6ICJT'$")
    with pytest.raises(ValidationError, match=refused):
        trino.read_payload(text)
    record = {"tableType": "VIRTUAL_VIEW", "parameters": {"presto_view": "true", "comment": "Presto View"},
              "viewOriginalText": text, "viewExpandedText": trino.EXPANDED_MARKER}
    with pytest.raises(ValidationError, match=refused):
        formats.decode(record)
