"""Flink views: flink.schema.* parameters, Flink data types, flink.comment, and writing."""

from __future__ import annotations

import pytest

from viewstore import formats
from viewstore.errors import ValidationError
from viewstore.formats import ViewDefinition, flink
from viewstore.model import Column
from viewstore.types import parse_type


def record(**parameters: str) -> dict:
    return {"tableType": "VIRTUAL_VIEW", "dbName": "db1", "tableName": "v", "owner": "ann",
            "parameters": {"is_generic": "true", **parameters}, "sd": {"cols": []},
            "viewOriginalText": "select x from v1", "viewExpandedText": "SELECT `v1`.`x` FROM `c`.`db1`.`v1`"}


@pytest.mark.parametrize("data_type, iceberg, nullable", [
    ("INT", "int", True), ("INT NOT NULL", "int", False), ("INTEGER NULL", "int", True),
    ("TINYINT", "int", True), ("SMALLINT", "int", True), ("BIGINT NOT NULL", "long", False),
    ("FLOAT", "float", True), ("DOUBLE", "double", True), ("DOUBLE PRECISION", "double", True),
    ("BOOLEAN", "boolean", True), ("DATE", "date", True), ("TIME(0)", "time", True),
    ("TIME WITHOUT TIME ZONE", "time", True),
    ("VARCHAR(2147483647)", "string", True), ("STRING", "string", True), ("CHAR(10)", "string", True),
    ("BYTES", "binary", True), ("VARBINARY(10)", "binary", True), ("BINARY(16)", "fixed[16]", True),
    ("BINARY", "fixed[1]", True),  # Flink's BINARY without a length is BINARY(1)
    ("DECIMAL(10, 2)", "decimal(10,2)", True), ("DECIMAL", "decimal(10,0)", True), ("NUMERIC(5)", "decimal(5,0)", True),
    ("TIMESTAMP(3)", "timestamp", True), ("TIMESTAMP", "timestamp", True), ("TIMESTAMP(9)", "timestamp_ns", True),
    ("TIMESTAMP(6) WITHOUT TIME ZONE", "timestamp", True),
    ("TIMESTAMP(3) WITH LOCAL TIME ZONE", "timestamptz", True), ("TIMESTAMP_LTZ(3)", "timestamptz", True),
    ("TIMESTAMP_LTZ(9) NOT NULL", "timestamptz_ns", False),
    ("ARRAY<INT NOT NULL>", "list<int not null>", True), ("INT ARRAY", "list<int>", True),
    ("MAP<STRING, BIGINT NOT NULL>", "map<string, long not null>", True),
    ("ROW<`a` INT NOT NULL 'the a', `b c` STRING>", "struct<a: int not null comment 'the a', `b c`: string>", True),
    ("ROW(a INT, b ARRAY<ROW<c DOUBLE>>) NOT NULL", "struct<a: int, b: list<struct<c: double>>>", False),
    ("ROW<`it``s` INT 'it''s'>", "struct<`it``s`: int comment 'it\\'s'>", True),
    # a description that reads as a keyword is no NULL or ARRAY suffix
    ("ROW<`a` INT 'null', `b` INT 'array'>", "struct<a: int comment 'null', b: int comment 'array'>", True),
    ("NULL", "unknown", True), ("varchar(3)", "string", True),
])
def test_data_types(data_type, iceberg, nullable):
    type_, is_nullable = flink.parse_data_type(data_type)
    assert (str(type_), is_nullable) == (iceberg, nullable)


@pytest.mark.parametrize("data_type, reason", [
    ("MULTISET<INT>", "'MULTISET' has no Iceberg equivalent"),
    ("INT MULTISET", "MULTISET has no Iceberg equivalent"),
    ("RAW('java.lang.Object', 'abc')", "'RAW' has no Iceberg equivalent"),
    ("INTERVAL DAY", "'INTERVAL'"),
    ("TIMESTAMP(3) WITH TIME ZONE", "TIMESTAMP WITH TIME ZONE has no Iceberg equivalent"),
    ("FROB", "'FROB' has no Iceberg equivalent or is unknown"),
    ("ROW<`a` INT, `A` STRING>", "duplicate ROW field"),
    ("DECIMAL(0, 0)", "precision of 1-38"),
    ("BINARY(0)", "BINARY takes one positive length"),
    ("MAP<INT>", "expected ','"),
    ("INT NOT", "unexpected 'NOT'"),
    ("ROW<`` INT>", "expected a ROW field name at position 4"),
    ("BINARY(1, 2)", "BINARY takes one positive length"),
    ("VARCHAR(1, 2)", "VARCHAR takes one length"),
])
def test_bad_data_types(data_type, reason):
    with pytest.raises(ValidationError, match=reason) as caught:
        flink.parse_data_type(data_type, "parameters.flink.schema.0.data-type")
    assert str(caught.value).startswith("parameters.flink.schema.0.data-type: ")


def test_decode_a_generic_view():
    definition = formats.decode(record(**{
        "flink.schema.0.name": "x", "flink.schema.0.data-type": "BIGINT NOT NULL", "flink.schema.0.comment": "ex",
        "flink.schema.1.name": "ts", "flink.schema.1.data-type": "TIMESTAMP_LTZ(3)",
        "flink.comment": "the view", "comment": "not the flink comment", "flink.k": "v"}))
    assert definition.dialect == "flink"
    assert definition.sql == "select x from v1"
    assert definition.properties[flink.EXPANDED_TEXT_KEY] == "SELECT `v1`.`x` FROM `c`.`db1`.`v1`"
    assert [(c.name, str(c.type), c.comment, c.nullable) for c in definition.columns] == [
        ("x", "long", "ex", False), ("ts", "timestamptz", None, True)]
    assert definition.engine_types == ("BIGINT NOT NULL", "TIMESTAMP_LTZ(3)")
    assert definition.comment == "the view"
    assert definition.properties[flink.PLAIN_COMMENT_KEY] == "not the flink comment"
    assert definition.properties["flink.k"] == "v"
    assert (definition.owner, definition.database, definition.name) == ("ann", "db1", "v")
    # Flink's expanded query resolved `v1` in c.db1: the view's own database, so no default namespace; and
    # c is the creating session's name for the metastore, never a default catalog
    assert (definition.default_catalog, definition.default_namespace, definition.security_mode) == (None, (), None)
    assert "is_generic" not in definition.properties


def test_a_plain_comment_parameter_is_written_back():
    table = record(**{"flink.schema.0.name": "x", "flink.schema.0.data-type": "INT", "comment": "plain"})
    definition = formats.decode(table)
    assert definition.comment is None
    assert formats.encode(definition, "flink")["parameters"] == table["parameters"]


def test_decode_flink_110_keys():
    definition = formats.decode(record(**{"flink.generic.table.schema.0.name": "a",
                                          "flink.generic.table.schema.0.data-type": "INT",
                                          "flink.generic.table.schema.0.comment": "the a"}))
    assert [(c.name, str(c.type), c.comment) for c in definition.columns] == [("a", "int", "the a")]
    assert not any(key.startswith("flink.generic") for key in definition.properties)


@pytest.mark.parametrize("parameters, reason", [
    ({}, r"parameters\.flink\.schema\.0\.name: a Flink view keeps its schema"),
    ({"flink.schema.0.name": "a"}, r"parameters\.flink\.schema\.0\.data-type: is missing"),
    ({"flink.schema.0.name": "a", "flink.schema.0.data-type": "INT", "flink.schema.2.name": "c",
      "flink.schema.2.data-type": "INT"}, r"parameters\.flink\.schema\.1\.name: is missing"),
    ({"flink.schema.0.name": "a", "flink.schema.0.data-type": "MULTISET<INT>"},
     r"parameters\.flink\.schema\.0\.data-type: .*MULTISET"),
    # an index of thousands of digits raised int()'s ValueError; Flink reads indexes as Java ints
    ({"flink.schema.0.name": "a", "flink.schema.0.data-type": "INT", f"flink.schema.{'9' * 5000}.name": "b"},
     r"parameters\.flink\.schema\.9{67}\.\.\.: is no column key Flink can read.*the number 9{20}\.\.\. is larger"),
    # a key of 80 characters is named whole, a longer one by its first 80
    ({"flink.schema.0.name": "a", "flink.schema.0.data-type": "INT", f"flink.schema.{'9' * 62}.name": "b"},
     r"^parameters\.flink\.schema\.9{62}\.name: is no column key Flink can read"),
    ({"flink.schema.0.name": "a", "flink.schema.0.data-type": "INT", "flink.generic.table.schema.2147483648.name": "b"},
     r"parameters\.flink\.generic\.table\.schema\.2147483648\.name: is no column key Flink can read"),
])
def test_bad_schema_parameters(parameters, reason):
    with pytest.raises(ValidationError, match=reason):
        formats.decode(record(**parameters))


def test_keys_flinks_column_pattern_does_not_match_are_no_columns():
    """Flink finds column indexes with the pattern ``flink.schema.(\\d+).name`` (ASCII digits, an
    attribute after them): a key of other digits or without an attribute is a plain parameter, kept
    and written back."""
    table = record(**{"flink.schema.0.name": "a", "flink.schema.0.data-type": "INT",
                      "flink.schema.\u0661.name": "b", "flink.schema.3": "x"})
    definition = formats.decode(table)
    assert [(c.name, str(c.type)) for c in definition.columns] == [("a", "int")]
    assert (definition.properties["flink.schema.\u0661.name"], definition.properties["flink.schema.3"]) == ("b", "x")
    assert formats.encode(definition, "flink")["parameters"] == table["parameters"]
    # Flink counts the columns by their names: an attribute of an index without a name adds none
    stray = formats.decode(record(**{"flink.schema.0.name": "a", "flink.schema.0.data-type": "INT",
                                     "flink.schema.1.comment": "c", "flink.schema.1.data-type": "INT"}))
    assert [c.name for c in stray.columns] == ["a"]


def test_the_current_schema_keys_win_over_flink_110s():
    """Flink's HiveCatalog reads the schema under the current keys and falls back to Flink 1.10's
    (flink.generic.table.schema.*) only when there are none."""
    table = record(**{"flink.schema.0.name": "a", "flink.schema.0.data-type": "INT",
                      "flink.generic.table.schema.0.name": "old", "flink.generic.table.schema.0.data-type": "STRING"})
    assert [(c.name, str(c.type)) for c in formats.decode(table).columns] == [("a", "int")]


def definition(**changes) -> ViewDefinition:
    base = dict(dialect="flink", sql="select x, ts from v1",
                columns=(Column("x", "long", "ex", nullable=False), Column("ts", "timestamptz")),
                comment="the view", owner="ann", database="db1", name="v")
    return ViewDefinition(**{**base, **changes})


def test_encode_writes_what_flinks_hive_catalog_writes():
    out = formats.encode(definition(properties={"flink.k": "v"}), "flink")
    assert out["parameters"] == {
        "is_generic": "true", "flink.k": "v", "flink.comment": "the view",
        "flink.schema.0.name": "x", "flink.schema.0.data-type": "BIGINT NOT NULL", "flink.schema.0.comment": "ex",
        "flink.schema.1.name": "ts", "flink.schema.1.data-type": "TIMESTAMP(6) WITH LOCAL TIME ZONE"}
    assert out["sd"]["cols"] == []
    assert out["viewOriginalText"] == out["viewExpandedText"] == "select x, ts from v1"


def test_encode_drops_stale_schema_keys_and_keeps_fitting_type_strings():
    stale = {"flink.schema.5.name": "gone", "flink.schema.5.data-type": "INT", "flink.schema.1.expr": "x + 1",
             "hms.flink.column-types": '["BIGINT NOT NULL", "TIMESTAMP_LTZ(3)"]'}
    out = formats.encode(definition(properties=stale), "flink")
    assert "flink.schema.5.name" not in out["parameters"] and "flink.schema.1.expr" not in out["parameters"]
    assert out["parameters"]["flink.schema.1.data-type"] == "TIMESTAMP_LTZ(3)"
    nullable_now = {"hms.flink.column-types": '["BIGINT", "TIMESTAMP_LTZ(3)"]'}  # the column became NOT NULL
    assert formats.encode(definition(properties=nullable_now), "flink")["parameters"][
        "flink.schema.0.data-type"] == "BIGINT NOT NULL"
    unreadable = {"hms.flink.column-types": '["BIGINT NOT NULL", "TIMESTAMP_LTZ(x)"]'}  # set by hand
    assert formats.encode(definition(properties=unreadable), "flink")["parameters"][
        "flink.schema.1.data-type"] == "TIMESTAMP(6) WITH LOCAL TIME ZONE"


def test_engine_types_of_iceberg_types():
    assert flink.engine_type(parse_type("struct<a: int not null comment 'the a', b: map<string, list<fixed[4]>>>")) \
        == "ROW<`a` INT NOT NULL 'the a', `b` MAP<VARCHAR(2147483647) NOT NULL, ARRAY<BINARY(4)>>>"
    assert flink.engine_type(parse_type("decimal(9,2)"), nullable=False) == "DECIMAL(9, 2) NOT NULL"
    # Iceberg's Flink integration writes an Iceberg time as Flink's TimeType(), TIME(0)
    assert flink.engine_type(parse_type("time")) == "TIME(0)"
    # a back quote in a field name and a quote in its comment are doubled, as Flink quotes them, and read back
    quoted = parse_type("struct<`it``s`: int comment 'it\\'s'>")
    assert flink.engine_type(quoted) == "ROW<`it``s` INT 'it''s'>"
    assert flink.parse_data_type(flink.engine_type(quoted)) == (quoted, True)
    with pytest.raises(ValidationError, match="Flink has no type for Iceberg uuid"):
        flink.engine_type(parse_type("uuid"))


def test_encode_rejects_a_view_without_columns():
    with pytest.raises(ValidationError, match="columns: a Flink view needs at least one column"):
        formats.encode(definition(columns=()), "flink")


def test_a_non_generic_view_is_a_hive_view():
    table = {"tableType": "VIRTUAL_VIEW", "parameters": {"is_generic": "false"}, "viewOriginalText": "q",
             "viewExpandedText": "expanded q", "sd": {"cols": [{"name": "i", "type": "int"}]}}
    engine, definition = formats.definition_from_table(table)
    assert engine == "hive" and definition.sql == "expanded q"


def test_flink_keys_beside_a_flag_java_reads_as_true_are_flinks():
    """Flink parses is_generic with Java's Boolean.parseBoolean, which ignores case: beside TRUE the
    flink.* keys are Flink's own (another engine's record leaves them out), beside false a Hive record's."""
    assert flink.owns_parameter("flink.comment", {"is_generic": "TRUE"})
    assert not flink.owns_parameter("flink.comment", {"is_generic": "false"})


def test_the_expanded_query_is_written_back_only_with_the_query_it_was_recorded_with():
    definition = formats.decode(record(**{"flink.schema.0.name": "x", "flink.schema.0.data-type": "INT"}))
    same = formats.encode(definition, "flink")
    assert (same["viewOriginalText"], same["viewExpandedText"]) == (
        "select x from v1", "SELECT `v1`.`x` FROM `c`.`db1`.`v1`")
    # Flink runs the expanded query: after the query changes, the old one must not be written
    changed = formats.encode(definition.model_copy(update={"sql": "select 2 as x"}), "flink")
    assert (changed["viewOriginalText"], changed["viewExpandedText"]) == ("select 2 as x", "select 2 as x")
    unproven = {k: v for k, v in definition.properties.items() if k != flink.EXPANDED_TEXT_KEY + "-sql"}
    out = formats.encode(definition.model_copy(update={"properties": unproven}), "flink")
    assert out["viewExpandedText"] == "select x from v1"


def test_flink_reads_more_than_ten_columns_in_index_order():
    """Column indexes are numbers: a record of twelve columns reads them all, in index order."""
    params = {"is_generic": "true"}
    for i in range(12):
        params[f"flink.schema.{i}.name"] = f"c{i}"
        params[f"flink.schema.{i}.data-type"] = "INT"
    record = {"tableType": "VIRTUAL_VIEW", "dbName": "db", "tableName": "v", "parameters": params,
              "viewOriginalText": "select 1", "viewExpandedText": "select 1"}
    definition = flink.decode(record)
    assert [c.name for c in definition.columns] == [f"c{i}" for i in range(12)]


def test_a_view_of_another_namespace_is_written_with_its_table_names_qualified():
    """Flink runs the expanded query in the view's own catalog and database: `v1` would be db1.v1 there."""
    elsewhere = definition(sql="select x from v1", default_namespace=("sales",), database="db1", name="v")
    out = formats.encode(elsewhere, "flink")
    assert (out["viewOriginalText"], out["viewExpandedText"]) == ("select x from v1", "select x from `sales`.v1")
    # read back: the original query with the namespace the expanded one was qualified with
    back = formats.decode(out)
    assert (back.sql, back.default_namespace) == ("select x from v1", ("sales",))
    assert formats.encode(back, "flink") == out
    # the view in its own database is written as before
    same = formats.encode(elsewhere.model_copy(update={"default_namespace": ("db1",)}), "flink")
    assert same["viewOriginalText"] == same["viewExpandedText"] == "select x from v1"


def flink_record(original: str | None, expanded: str) -> dict:
    return {**record(**{"flink.schema.0.name": "id", "flink.schema.0.data-type": "BIGINT"}),
            "viewOriginalText": original, "viewExpandedText": expanded}


def test_the_creators_database_is_read_from_flinks_expanded_query():
    """A view of db1 created while the session was in hive.sales: its `orders` is sales.orders. The catalog
    `hive` is the session's own name for the metastore, so it is never the default catalog."""
    sql = "SELECT o.id FROM orders o JOIN archive.orders a ON o.id = a.id"
    expanded = ("SELECT `o`.`id`\nFROM `hive`.`sales`.`orders` AS `o`\nINNER JOIN `hive`.`archive`.`orders` AS `a` "
                "ON `o`.`id` = `a`.`id`")
    definition = formats.decode(flink_record(sql, expanded))
    assert (definition.sql, definition.default_catalog, definition.default_namespace) == (sql, None, ("sales",))
    # written back as Flink wrote it: Flink's own expanded query, not one qualified with `sales`
    out = formats.encode(definition, "flink")
    assert (out["viewOriginalText"], out["viewExpandedText"]) == (sql, expanded)
    assert formats.decode(out) == definition
    # a view that now resolves its names elsewhere is not written with the old expansion
    own = formats.encode(definition.model_copy(update={"default_namespace": ("db1",)}), "flink")
    assert own["viewExpandedText"] == sql
    other = formats.encode(definition.model_copy(update={"default_namespace": ("crm",)}), "flink")
    assert other["viewExpandedText"] == "SELECT o.id FROM `crm`.orders o JOIN archive.orders a ON o.id = a.id"


@pytest.mark.parametrize("original", [None, "", " \n"])
def test_a_view_without_an_original_query_is_read_from_the_expanded_one(original):
    definition = formats.decode(flink_record(original, "SELECT `v1`.`id` FROM `hive`.`db1`.`v1`"))
    assert definition.sql == "SELECT `v1`.`id` FROM `hive`.`db1`.`v1`"
    assert flink.EXPANDED_TEXT_KEY not in definition.properties and definition.default_namespace == ()


@pytest.mark.parametrize("original, expanded", [(None, None), ("", " "), (" \n", "")])
def test_a_view_without_a_query_in_either_text_is_refused(original, expanded):
    with pytest.raises(ValidationError,
                       match=r"^viewOriginalText: a Flink view keeps its query here, but it is missing$"):
        formats.decode({**flink_record(original, "x"), "viewExpandedText": expanded})


@pytest.mark.parametrize("database", ["db1", "DB1"])
def test_an_expanded_query_that_names_the_records_own_database_gives_no_default(database):
    """`orders` resolved in the view's own database (the case of its name aside): the view's own
    namespace means exactly that, so the default namespace stays empty; the catalog is never taken."""
    sql = "SELECT id FROM orders"
    expanded = f"SELECT `orders`.`id`\nFROM `hive`.`{database}`.`orders` AS `orders`"
    definition = formats.decode(flink_record(sql, expanded))
    assert (definition.database, definition.default_catalog, definition.default_namespace) == ("db1", None, ())
    out = formats.encode(definition, "flink")
    assert (out["viewOriginalText"], out["viewExpandedText"]) == (sql, expanded)
    assert formats.decode(out) == definition
    # moved to another database, the view resolves its names there: Flink's old expansion is not written
    moved = formats.encode(definition.model_copy(update={"database": "db2"}), "flink")
    assert moved["viewExpandedText"] == sql


@pytest.mark.parametrize("original, expanded", [
    ("SELECT * FROM a JOIN b ON true",  # expanded with two databases: the creator's is not known
     "SELECT *\nFROM `hive`.`sales`.`a` AS `a`\nINNER JOIN `hive`.`crm`.`b` AS `b` ON TRUE"),
    ("SELECT * FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' MINUTES))",  # sqlglot cannot read it
     "SELECT *\nFROM TABLE(TUMBLE(TABLE `hive`.`sales`.`t`, DESCRIPTOR(`ts`), INTERVAL '1' MINUTE))"),
    ("SELECT * FROM sales.t", "SELECT *\nFROM `hive`.`sales`.`t` AS `t`"),  # nothing is unqualified
])
def test_an_expanded_query_that_names_no_one_default_gives_none(original, expanded):
    definition = formats.decode(flink_record(original, expanded))
    assert (definition.default_catalog, definition.default_namespace) == (None, ())
    assert formats.encode(definition, "flink")["viewExpandedText"] == expanded


def test_a_query_that_cannot_be_qualified_safely_is_refused():
    elsewhere = definition(sql="SELECT * FROM TABLE(TUMBLE(TABLE v1, DESCRIPTOR(ts), INTERVAL '1' MINUTES))",
                           default_namespace=("sales",), database="db1", name="v")
    with pytest.raises(ValidationError, match="^viewExpandedText: .*'sales'.*sqlglot cannot parse.*database.table"):
        formats.encode(elsewhere, "flink")
