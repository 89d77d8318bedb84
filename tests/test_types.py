import itertools

import pytest

from viewstore.errors import ValidationError
from viewstore.types import (MAX_DEPTH, DecimalType, FixedType, ListType, MapType, PrimitiveType, StructField,
                             StructType, check_depth,
                             from_iceberg_json, parse_type, to_iceberg_json)


@pytest.mark.parametrize("text, canonical", [
    ("bigint", "long"), ("BIGINT", "long"), ("long", "long"), ("integer", "int"), ("smallint", "int"),
    ("tinyint", "int"), ("int", "int"), ("boolean", "boolean"), ("bool", "boolean"), ("float", "float"),
    ("real", "float"), ("double", "double"), ("double precision", "double"), ("date", "date"),
    ("time", "time"), ("time(3)", "time"), ("time(9)", "time"), ("time without time zone",
                                                                 "time"), ("timestamp", "timestamp"),
    ("timestamp(3)", "timestamp"), ("timestamp(6)", "timestamp"), ("timestamp(9)", "timestamp_ns"),
    ("TIMESTAMP(7) WITHOUT TIME ZONE", "timestamp_ns"), ("timestamp(6) with time zone", "timestamptz"),
    ("timestamp(9) with time zone", "timestamptz_ns"), ("array<timestamp(9)>", "list<timestamp_ns>"),
    ("timestamp with time zone", "timestamptz"), ("timestamp without time zone", "timestamp"),
    ("timestamptz", "timestamptz"), ("timestamp_ntz", "timestamp"), ("timestamp_ltz", "timestamptz"),
    ("timestamp_ns", "timestamp_ns"), ("timestamptz_ns", "timestamptz_ns"),
    ("string", "string"), ("text", "string"), ("varchar(20)", "string"), ("char(3)", "string"),
    ("char varying(9)", "string"), ("character varying(9)", "string"), ("nchar varying(9)", "string"),
    ("\tint \n", "int"), ("uuid", "uuid"), ("binary", "binary"), ("varbinary", "binary"),
    ("variant", "variant"), ("unknown", "unknown"),
    ("decimal(18,2)", "decimal(18,2)"), ("decimal(18, 2)", "decimal(18,2)"),
    ("numeric(9,3)", "decimal(9,3)"), ("decimal", "decimal(10,0)"), ("fixed[16]", "fixed[16]"),
    ("fixed(4)", "fixed[4]"), ("array<int>", "list<int>"), ("list<string>", "list<string>"),
    ("array<varchar(3)>", "list<string>"), ("map<string, decimal(10,2)>", "map<string, decimal(10,2)>"),
    ("map<varchar(5),bigint>", "map<string, long>"),
    ("struct<street: string, zip: int>", "struct<street: string, zip: int>"),
    ("struct<street:varchar(9),zip:integer>", "struct<street: string, zip: int>"),
    ("struct<a int, b array<struct<c: bigint>>>", "struct<a: int, b: list<struct<c: long>>>"),
    ("struct<`weird name`: int>", "struct<`weird name`: int>"),
    ("int2", "int"), ("int4", "int"), ("byte", "int"), ("short", "int"), ("int8", "long"),
    ("float4", "float"), ("float8", "double"),
    ("blob", "binary"), ("datetime", "timestamp"), ("nvarchar(10)", "string"),
    ("clob", "string"), ("bytea", "binary"), ("bytes", "binary"), ("varbinary(16)", "binary"), ("binary(4)", "binary"),
    ("number(10,2)", "decimal(10,2)"), ("number", "decimal(10,0)"), ("dec(5)", "decimal(5,0)"),
    ("decimal(38,38)", "decimal(38,38)"), ("decimal(1,0)", "decimal(1,0)"),
    ('struct<"a ""b""": int, `c``d`: int>',
     'struct<`a "b"`: int, `c``d`: int>'), ("struct<1: int>", "struct<`1`: int>"),
    ("struct<_id: int>", "struct<_id: int>"), ("struct<a_b1: int>", "struct<a_b1: int>"),
    ("STRUCT<a: INT NOT NULL COMMENT 'x', b: ARRAY<INT NOT NULL>>",
     "struct<a: int not null comment 'x', b: list<int not null>>"),
])
def test_parse_and_print(text, canonical):
    t = parse_type(text)
    assert str(t) == canonical
    assert parse_type(str(t)) == t


def test_nested_details_round_trip():
    t = parse_type("struct<a: int not null comment 'it''s', b: list<string not null>, c: map<int, long not null>>")
    assert isinstance(t, StructType)
    assert t.fields[0].required and t.fields[0].comment == "it's"
    assert str(t.fields[0]) == "a: int not null comment 'it\\'s'"  # a quote is printed escaped, as a backslash is
    assert isinstance(t.fields[1].type, ListType) and t.fields[1].type.element_required
    assert isinstance(t.fields[2].type, MapType) and t.fields[2].type.value_required
    assert parse_type(str(t)) == t


@pytest.mark.parametrize("bad", ["", "  ", "blob2", "decimal(50,2)", "decimal(5,6)", "map<int>", "array<int",
                                 "struct<a int, a string>", "fixed[0]", "int int", "list<>", "varchar(x)", 42, None,
                                 "time with time zone", "TIME(3) WITH TIME ZONE",
                                 "list(int>", "map<string: int>", "decimal(10,2]", "fixed[4)", "struct<a: int)",
                                 "varchar()", "fixed[]", "decimal(,2)", "decimal('10')", "struct<a int, A string>",
                                 'struct<"x": int, `X`: int>', "struct<``: int>", 'struct<"": int>', "decimal(0,0)",
                                 "decimal(39,0)", "struct<a: int comment `x`>", "fixed[16", "fixed(4", "varchar(20",
                                 "list<int not nul>", "struct<A int, a string>",
                                 "struct<a: int not x>", "int(11)", "double float"])
def test_unknown_types_are_validation_errors(bad):
    with pytest.raises(ValidationError):
        parse_type(bad)


@pytest.mark.parametrize("blank", ["", " \t\n"])
def test_a_blank_type_is_said_to_be_no_type(blank):
    with pytest.raises(ValidationError, match="a column type must be a non-empty string"):
        parse_type(blank)


@pytest.mark.parametrize("text, found", [("struct<'a': int>", "'a'"), ("struct<: int>", ":"), ("struct<, a: int>", ","),
                                         ("struct<a: int, <: int>", "<")])
def test_a_struct_field_that_starts_with_no_name_is_refused_naming_what_came_instead(text, found):
    with pytest.raises(ValidationError) as raised:
        parse_type(text)
    assert str(raised.value) == f"unknown type {text!r}: expected a field name, found {found!r}"


def test_the_spellings_parse_type_remembers_are_bounded_and_one_past_the_bound_is_still_parsed():
    from viewstore import types

    before, known = dict(types._CACHE), dict(types._PARSED)
    types._CACHE.clear()
    types._PARSED.clear()
    try:
        for n in range(1, 4098):
            assert parse_type(f"fixed[{n}]") == FixedType(n)
        assert len(types._CACHE) == 4096 and "fixed[4096]" in types._CACHE and "fixed[4097]" not in types._CACHE
        assert len(types._PARSED) == 4096  # the types it remembers by id are those it remembers by spelling
        assert parse_type("fixed[4097]") == FixedType(4097)
    finally:  # the other tests' spellings remembered again, as a process that never filled it has them
        types._CACHE.clear()
        types._CACHE.update(before)
        types._PARSED.clear()
        types._PARSED.update(known)


def test_type_values():
    assert parse_type("decimal(3,1)") == DecimalType(3, 1)
    assert parse_type("fixed[2]") == FixedType(2)
    assert parse_type("long") == PrimitiveType("long")
    assert not parse_type("list<int>").is_primitive and parse_type("int").is_primitive
    assert not parse_type("map<int, int>").is_primitive and not parse_type("struct<a: int>").is_primitive
    decimal = DecimalType(3, 1)
    assert parse_type(decimal) is decimal  # a type is its own parse


def test_a_field_name_keeps_its_case_whatever_spelling_was_parsed_before():
    assert str(parse_type("struct<Ab: int>")) == "struct<Ab: int>"
    assert str(parse_type("struct<ab: int>")) == "struct<ab: int>"


def test_iceberg_json_round_trip():
    t = parse_type("struct<a: int not null comment 'x', b: list<map<string, decimal(9,2)>>>")
    data = to_iceberg_json(t, itertools.count(1))
    assert data["fields"][0] == {"id": 1, "name": "a", "required": True, "type": "int", "doc": "x"}
    assert data["fields"][1]["id"] == 2  # top-level ids first, then nested ones
    lst = data["fields"][1]["type"]
    assert lst["type"] == "list" and lst["element-id"] == 3 and lst["element"]["type"] == "map"
    assert from_iceberg_json(data) == t
    assert from_iceberg_json("decimal(9, 2)") == DecimalType(9, 2)
    required = parse_type("struct<a: list<int not null>, b: map<string, int not null>>")
    data = to_iceberg_json(required, itertools.count(1))
    assert data["fields"][0]["type"]["element-required"] is True and data["fields"][1]["type"]["value-required"] is True
    assert from_iceberg_json(data) == required
    empty = parse_type("struct<a: int comment ''>")  # an empty comment is a doc, not none
    assert to_iceberg_json(empty, itertools.count(1))["fields"][0]["doc"] == ""
    assert from_iceberg_json(to_iceberg_json(empty, itertools.count(1))) == empty
    with pytest.raises(ValidationError, match=r"^unknown Iceberg type \{'type': 'tuple'\}$"):
        from_iceberg_json({"type": "tuple"})
    with pytest.raises(ValidationError, match="^malformed Iceberg list: missing int 'element-id'$"):
        from_iceberg_json({"type": "list"})


def test_iceberg_json_ids_go_level_by_level_as_the_reference_assigns_them():
    """A struct's fields take their ids before any nested id is drawn, and a map's key id comes before
    its value id, both before the ids nested in them."""
    t = parse_type("struct<a: list<int>, b: map<string, struct<c: int>>, d: int>")
    data = to_iceberg_json(t, itertools.count(1))
    assert [f["id"] for f in data["fields"]] == [1, 2, 3]
    a, b = data["fields"][0]["type"], data["fields"][1]["type"]
    assert a["element-id"] == 4
    assert (b["key-id"], b["value-id"], b["value"]["fields"][0]["id"]) == (5, 6, 7)


def test_an_iceberg_json_primitive_is_read_in_any_case_and_never_as_a_nested_type():
    """The reference lower-cases a primitive's name before it looks it up; a nested type is an object,
    never its spelling as a string."""
    assert from_iceberg_json("LONG") == PrimitiveType("long")
    assert from_iceberg_json("Decimal(9, 2)") == DecimalType(9, 2) and from_iceberg_json("FIXED[16]") == FixedType(16)
    for spelled in ("list<int>", "map<string, int>", "struct<a: int>", "bigint", "fixed(16)"):
        with pytest.raises(ValidationError, match="is not an Iceberg primitive type name"):
            from_iceberg_json(spelled)


@pytest.mark.parametrize("name", ["boolean", "int", "long", "float", "double", "date", "time", "timestamp",
                                  "timestamptz", "timestamp_ns", "timestamptz_ns", "string", "uuid", "binary",
                                  "unknown", "variant"])
def test_every_primitive_the_iceberg_spec_names_is_read_and_written_as_that_name(name):
    """The spec's primitive types, as its schema JSON spells them: each reads as itself, from JSON
    and as a column type, and is written back as the same name."""
    t = from_iceberg_json(name)
    assert t == PrimitiveType(name) == parse_type(name)
    assert to_iceberg_json(t, itertools.count(1)) == name == str(t)


@pytest.mark.parametrize("data, expected", [
    ("decimal(09,2)", DecimalType(9, 2)), ("decimal(9,02)", DecimalType(9, 2)), ("fixed[016]", FixedType(16)),
    ("fixed[0000000000016]", FixedType(16)), ("fixed[0002147483647]", FixedType(2147483647)),
    ("fixed[ 16]", FixedType(16)), ("fixed[16 ]", FixedType(16)), ("fixed[\t16\n]", FixedType(16)),
    ("decimal( 9 , 2 )", DecimalType(9, 2)), ("decimal(9,\r\n2)", DecimalType(9, 2)),
    ("decimal(\x0b9,2\x0c)", DecimalType(9, 2)), ("DECIMAL(9 ,2)", DecimalType(9, 2)),
])
def test_an_iceberg_json_primitive_takes_leading_zeros_and_blanks_around_its_numbers(data, expected):
    """The reference matches fixed[L] and decimal(P,S) with a pattern that takes any ASCII digits
    (read as a Java int, so leading zeros too) and Java's blanks around each number."""
    assert from_iceberg_json(data) == expected


@pytest.mark.parametrize("data", [
    "decimal (9,2)", "fixed [16]", " long", "long ", "\tint", "string\n", "fixed[16] ", " decimal(9,2)",
    "fixed[\u00a016]", "fixed[16\u2003]", "decimal(9,\x1c2)", "fixed[\uff116]", "decimal(9 2)", "fixed[+16]",
])
def test_an_iceberg_json_primitive_has_no_blank_the_reference_refuses(data):
    """Blanks only inside the brackets, around a number, and only Java's (space, tab, line breaks,
    vertical tab, form feed): not before the bracket, not around the name, not Unicode's others."""
    with pytest.raises(ValidationError, match="is not an Iceberg primitive type name"):
        from_iceberg_json(data)


def test_an_iceberg_json_number_larger_than_a_java_int_is_refused_whatever_its_zeros():
    with pytest.raises(ValidationError, match="the number 2147483648 is larger than 2147483647"):
        from_iceberg_json("fixed[0002147483648]")
    with pytest.raises(ValidationError, match="the number 9999999999999999999"):
        from_iceberg_json("decimal(9,99999999999999999999999)")


@pytest.mark.parametrize("data, message", [
    ("decimal(39,0)", "precision must be 1-38"),  # as the reference refuses it
    # beyond the reference, which takes these: no engine has such a type
    ("decimal(0,0)", "precision must be 1-38"), ("decimal(5,6)",
                                                 "scale 0-precision"), ("decimal(00,0)", "got \\(0,0\\)"),
    ("fixed[0]", "fixed length must be positive"), ("fixed[000]", "fixed length must be positive"),
])
def test_an_iceberg_json_primitive_has_the_ranges_parse_type_keeps(data, message):
    with pytest.raises(ValidationError, match=message):
        from_iceberg_json(data)


def _field(fid, name, ftype):
    return {"id": fid, "name": name, "required": False, "type": ftype}


@pytest.mark.parametrize("data, message", [
    ({"type": "struct", "fields": [_field(1, "a", "int"), _field(1, "b", "int")]},
     "id 1 is used twice: by 'a' and by 'b'"),
    ({"type": "struct", "fields": [_field(1, "a", "int"), _field(2, "b", {
        "type": "list", "element-id": 1, "element": "int", "element-required": False})]},
     "id 1 is used twice: by 'a' and by 'b.element'"),
    ({"type": "struct", "fields": [_field(1, "a", {
        "type": "map", "key-id": 2, "key": "string", "value-id": 2, "value": "int", "value-required": False})]},
     "id 2 is used twice: by 'a.key' and by 'a.value'"),
    ({"type": "struct", "fields": [_field(1, "a", {"type": "struct", "fields": [_field(3, "b", "int")]}),
                                   _field(2, "c", {"type": "struct", "fields": [_field(3, "d", "int")]})]},
     "id 3 is used twice: by 'a.b' and by 'c.d'"),
    ({"type": "list", "element-id": 5, "element-required": True, "element": {"type": "struct", "fields": [
        _field(5, "a", "int")]}}, "id 5 is used twice: by 'element' and by 'element.a'"),
    ({"type": "map", "key-id": 1, "key": "int", "value-id": 2, "value-required": True, "value": {
        "type": "list", "element-id": 1, "element": "int", "element-required": True}},
     "id 1 is used twice: by 'key' and by 'value.element'"),
])
def test_a_field_id_used_twice_anywhere_in_iceberg_json_is_refused(data, message):
    """The reference's Schema indexes every field by id, nested ones, list elements and map keys and
    values too, and refuses a schema in which two of them share one."""
    with pytest.raises(ValidationError, match=f"field {message}"):
        from_iceberg_json(data)


def test_each_field_id_once_reads_however_the_ids_are_spread():
    data = {"type": "struct", "fields": [_field(7, "a", {"type": "map", "key-id": 1, "key": "int", "value-id": 9,
                                                         "value-required": False, "value": "int"}),
                                         _field(-3, "b", {"type": "list", "element-id": 0, "element": "int",
                                                          "element-required": False})]}
    assert str(from_iceberg_json(data)) == "struct<a: map<int, int>, b: list<int>>"


@pytest.mark.parametrize("data, message", [
    ({"type": "struct", "fields": [{"id": 1, "name": "a", "required": "false", "type": "int"}]},
     "'required' must be a boolean"),
    ({"type": "struct", "fields": [{"id": 1, "name": "a", "type": "int"}]}, "missing boolean 'required'"),
    ({"type": "struct", "fields": [{"id": True, "name": "a", "required": False, "type": "int"}]}, "'id' must be a int"),
    ({"type": "struct", "fields": [{"id": 2**31, "name": "a", "required": False, "type": "int"}]},
     "'id' must be a int"),
    ({"type": "struct", "fields": [{"id": -(2**31) - 1, "name": "a", "required": False, "type": "int"}]},
     "'id' must be a int"),
    ({"type": "struct", "fields": [{"id": 1, "name": 5, "required": False, "type": "int"}]}, "'name' must be a string"),
    ({"type": "struct", "fields": [{"id": 1, "name": "a", "required": False, "type": "int", "doc": 5}]},
     "must be a string"),
    ({"type": "struct", "fields": [{"id": 1, "name": "a", "required": False, "type": "int"},
                                   {"id": 2, "name": "A", "required": False, "type": "int"}]}, "ignoring case"),
    ({"type": "struct", "fields": [{"id": 1, "name": "A", "required": False, "type": "int"},
                                   {"id": 2, "name": "a", "required": False, "type": "int"}]}, "ignoring case"),
    ({"type": "struct", "fields": [{"id": 1, "name": "", "required": False, "type": "int"}]}, "must be non-empty"),
    ({"type": "struct", "fields": ["a"]}, "must be an object"), ({"type": "struct"}, "missing array 'fields'"),
    ({"type": "list", "element-id": 1, "element": "int", "element-required": 0}, "must be a boolean"),
    ({"type": "map", "key-id": 1, "key": "string", "value": "int", "value-required": False}, "missing int 'value-id'"),
    ({"type": "map", "value-id": 2, "key": "string", "value": "int", "value-required": False}, "missing int 'key-id'"),
    ({"type": "list", "element": "int", "element-required": False}, "missing int 'element-id'"),
])
def test_iceberg_json_is_read_as_strictly_as_the_reference(data, message):
    with pytest.raises(ValidationError, match=message):
        from_iceberg_json(data)


@pytest.mark.parametrize("data, message", [
    (5, "an Iceberg type must be a string or an object, not 5"),
    ({"type": "struct", "fields": [_field(1, "a", "int"), {"id": 2, "name": "b", "required": False}]},
     "an Iceberg type of 'b' must be a string or an object, not None"),
    ({"type": "struct", "fields": [_field(1, "a", {"type": "list", "element-id": 2, "element-required": False})]},
     "an Iceberg type of 'a.element' must be a string or an object, not None"),
    ({"type": "map", "key-id": 1, "key": "int", "value-id": 2, "value": [], "value-required": False},
     "an Iceberg type of 'value' must be a string or an object, not \\[\\]"),
    # a type of no known name or kind, or out of range, as deep as it is
    ({"type": "struct", "fields": [_field(1, "a", {"type": "list", "element-id": 2, "element-required": False,
                                                   "element": "strin"})]},
     "the type of 'a.element': 'strin' is not an Iceberg primitive type name"),
    ({"type": "struct", "fields": [_field(1, "a", "int"), _field(2, "b", {"type": "lst", "element-id": 3})]},
     "unknown Iceberg type of 'b' {'type': 'lst', 'element-id': 3}"),
    ({"type": "struct", "fields": [_field(1, "a", "decimal(40,2)")]},
     "the type of 'a': bad type 'decimal\\(40,2\\)': decimal precision must be 1-38 and scale 0-precision, "
     "got \\(40,2\\)"),
    ({"type": "unknown-kind"}, "unknown Iceberg type {'type': 'unknown-kind'}"),  # the type itself: no path
])
def test_an_iceberg_json_type_missing_or_of_another_kind_is_named_by_its_path(data, message):
    """In a schema of many fields, 'not None' or "'strin' is not ..." alone did not say whose type it was."""
    with pytest.raises(ValidationError, match=f"^{message}$"):
        from_iceberg_json(data)


def test_types_nest_at_most_max_depth():
    assert str(parse_type("list<" * (MAX_DEPTH - 1) + "int" + ">" * (MAX_DEPTH - 1))).count("list") == MAX_DEPTH - 1
    for text in ("array<" * 5000 + "int" + ">" * 5000, "struct<a:" * 5000 + "int" + ">" * 5000):
        with pytest.raises(ValidationError, match=f"nest deeper than {MAX_DEPTH}"):
            parse_type(text)


@pytest.mark.parametrize("wrap", [
    lambda t: ListType(t),
    lambda t: MapType(PrimitiveType("string"), t),
    lambda t: MapType(t, PrimitiveType("int")),
    lambda t: StructType((StructField("a", PrimitiveType("int")), StructField("b", t))),
], ids=["list element", "map value", "map key", "second struct field"])
def test_every_reader_takes_max_depth_levels_of_nesting_and_refuses_one_more(wrap):
    """parse_type, check_depth (for the engines' parsers) and from_iceberg_json draw the line at
    the same depth, whichever part of a nested type goes deeper."""
    t = PrimitiveType("int")
    for _ in range(MAX_DEPTH):
        t = wrap(t)
    assert parse_type(str(t)) == t and check_depth(t) is t
    assert from_iceberg_json(to_iceberg_json(t, itertools.count(1))) == t
    deeper = wrap(t)
    with pytest.raises(ValidationError, match=f"^column c: types nest deeper than {MAX_DEPTH} levels$"):
        check_depth(deeper, "column c")
    for read in (lambda: parse_type(str(deeper)), lambda: check_depth(deeper),
                 lambda: from_iceberg_json(to_iceberg_json(deeper, itertools.count(1)))):
        with pytest.raises(ValidationError, match=f"nest deeper than {MAX_DEPTH} levels"):
            read()


def test_a_field_name_ending_in_a_newline_keeps_it():
    t = parse_type("struct<`a\n`: int>")
    assert t.fields[0].name == "a\n" and str(t) == "struct<`a\n`: int>" and parse_type(str(t)) == t


@pytest.mark.parametrize("comment", ["C:\\temp", "ends with \\", "a\\'b", "two \\\\ slashes"])
def test_struct_comment_with_backslash_round_trips(comment):
    """Backslashes and quotes in a struct field comment survive printing and parsing again."""
    t = StructType((StructField("a", PrimitiveType("int"), False, comment),))
    parsed = parse_type(str(t))
    assert parsed == t
    assert parsed.fields[0].comment == comment
    assert str(parsed) == str(t)


HUGE = "9" * 5000  # more digits than Python converts to an int without complaint (4300)


@pytest.mark.parametrize("text", [f"decimal({HUGE})", f"varchar({HUGE})", f"fixed[{HUGE}]", f"timestamp({HUGE})",
                                  "varchar(2147483648)", "fixed[99999999999]"])
def test_a_length_or_precision_larger_than_a_java_int_is_a_validation_error(text):
    """Every engine reads a type's numbers as a Java int; a larger one (even of thousands of digits,
    which int() refuses with a plain ValueError) is no type."""
    with pytest.raises(ValidationError, match=r"the number 9+(\.\.\.)? is larger than 2147483647|the number "
                                              r"2147483648 is larger"):
        parse_type(text)


def test_the_largest_java_int_is_still_a_length():
    assert parse_type("varchar(2147483647)") == PrimitiveType("string")
    assert parse_type("fixed[2147483647]") == FixedType(2147483647)


def test_leading_zeros_are_no_digits_of_a_length():
    """A number is as large as its value, however many zeros lead it (as a Java int is read)."""
    assert parse_type("fixed[00000000000016]") == FixedType(16)
    assert parse_type("decimal(000000000009,0000000000002)") == DecimalType(9, 2)
    with pytest.raises(ValidationError, match="the number 2147483648 is larger"):
        parse_type("fixed[0002147483648]")


@pytest.mark.parametrize("text", ["decimal(\u0661\u0660,\u0662)", "varchar(\uff12\uff10)", "fixed[\u0967]"])
def test_numbers_in_types_are_ascii_digits(text):
    """'decimal(١٠,٢)' is no SQL type (the engines' own parsers refuse it); it was read as decimal(10,2)."""
    with pytest.raises(ValidationError, match="unknown type"):
        parse_type(text)


@pytest.mark.parametrize("not_a_flag", ["no", "yes", "false", 0, 1, 1.0, None])
def test_a_nested_type_s_required_flags_are_flags_not_values_with_a_truth_value(not_a_flag):
    """A struct field's required, a list's element_required and a map's value_required took any value:
    "no" (truthy) printed as ``not null`` and was exported to Iceberg JSON as it was, whereas a
    column's nullable refuses it."""
    import re

    int_ = PrimitiveType("int")
    got = re.escape(repr(not_a_flag))
    refused = f"^the required flag of struct field 'a' must be True or False, not {got}$"
    with pytest.raises(ValidationError, match=refused):
        StructField("a", int_, not_a_flag)
    with pytest.raises(ValidationError, match=f"^a list's element_required must be True or False, not {got}$"):
        ListType(int_, not_a_flag)
    with pytest.raises(ValidationError, match=f"^a map's value_required must be True or False, not {got}$"):
        MapType(int_, int_, not_a_flag)
    nested = StructType((StructField("a", ListType(int_, True), True), StructField("b", MapType(int_, int_))))
    assert str(nested) == "struct<a: list<int not null> not null, b: map<int, int>>"


_INT = PrimitiveType("int")


@pytest.mark.parametrize("built", [
    PrimitiveType("garbage"), PrimitiveType("bigint"), PrimitiveType("LONG"), DecimalType(50, 60), DecimalType(True, 0),
    DecimalType(10.0, 2), FixedType(-1), FixedType(0), ListType("int"), MapType(_INT, "string"),
    StructType((StructField(1, _INT),)),  # type: ignore[arg-type]
    StructType((StructField("", _INT),)), StructType((StructField("a", _INT), StructField("A", _INT))),
    StructType((StructField("a", _INT, comment=5),)),  # type: ignore[arg-type]
    StructType(("a",)),  # type: ignore[arg-type]
])
def test_a_hand_built_type_whose_spelling_does_not_read_back_as_it_is_refused(built):
    with pytest.raises(ValidationError, match="is not a valid type"):
        parse_type(built)


@pytest.mark.parametrize("built", [
    _INT, DecimalType(38, 0), FixedType(16), ListType(_INT, True), MapType(PrimitiveType("string"), _INT, True),
    StructType((StructField("a b", _INT, True, "it's"), StructField("B", ListType(DecimalType(1, 1))))),
    StructType(()),
])
def test_a_hand_built_type_that_reads_back_is_its_own_parse(built):
    assert parse_type(built) is built and parse_type(str(built)) == built
    parsed = parse_type(str(built))
    assert parse_type(parsed) is parsed  # one parse_type made (known good at once) too


def test_a_type_too_deep_to_spell_is_refused():
    deep: ListType | PrimitiveType = _INT
    for _ in range(MAX_DEPTH + 1):
        deep = ListType(deep)
    with pytest.raises(ValidationError, match="is not a valid type"):
        parse_type(deep)


def test_the_refusal_of_a_hand_built_type_names_the_type_and_its_spelling_up_to_sixty_characters():
    """The message says which type it was: the class of one that cannot be spelled (not the error's),
    and the spelling of one that does not read back, cut at 60 characters (planted, the class of the
    error named as the type, or the spelling cut at 6 characters, and only "is not a valid type" was
    matched)."""
    with pytest.raises(ValidationError) as unspellable:
        parse_type(StructType((StructField(1, _INT),)))  # type: ignore[arg-type]
    assert str(unspellable.value) == ("StructType is not a valid type: it cannot be spelled "
                                      "(TypeError: expected string or bytes-like object, got 'int')")
    with pytest.raises(ValidationError) as garbage:
        parse_type(PrimitiveType("garbage"))
    assert str(garbage.value) == ("type 'garbage' is not a valid type: unknown type 'garbage': "
                                  "'garbage' is not an Iceberg or SQL type")
    long_name = "x" * 80
    with pytest.raises(ValidationError) as long:
        parse_type(StructType((StructField(long_name, _INT), StructField(long_name.upper(), _INT))))
    assert str(long.value).startswith(f"type 'struct<{'x' * 53}' is not a valid type: unknown type ")


def test_a_spelling_parsed_again_is_the_type_parsed_the_first_time_and_is_remembered_once():
    """A spelling parsed before is answered from the table of spellings: the same object, and the
    table of types by id beside it does not grow (planted, the table of spellings not looked up first
    parsed it again, a new object each time, each one added to the table by id, unbounded)."""
    from viewstore import types

    before, known = dict(types._CACHE), dict(types._PARSED)
    types._CACHE.clear()  # a table already at its bound would remember nothing
    types._PARSED.clear()
    try:
        first = parse_type("map<string, list<decimal(12,3) not null>>")
        for _ in range(3):
            assert parse_type("map<string, list<decimal(12,3) not null>>") is first
        assert list(types._PARSED.values()) == list(types._CACHE.values()) == [first]
    finally:
        types._CACHE.clear()
        types._CACHE.update(before)
        types._PARSED.clear()
        types._PARSED.update(known)


def test_a_spelling_given_as_a_str_subclass_does_not_grow_what_parse_type_remembers():
    """A str subclass (numpy's str_ is one) is not looked up in the table of spellings, as its own
    __eq__ and __hash__ may say anything: it was still added to it, replacing the entry of that
    spelling while the type it had replaced stayed in the table by id, one more at every call,
    without bound. Such a spelling is parsed each time and remembered by neither table."""
    from viewstore import types

    class Spelling(str):
        pass

    before, known = dict(types._CACHE), dict(types._PARSED)
    types._CACHE.clear()
    types._PARSED.clear()
    try:
        for _ in range(3):
            assert parse_type(Spelling("map<int, string>")) == MapType(_INT, PrimitiveType("string"))
        assert types._CACHE == {} and types._PARSED == {}
        plain = parse_type("map<int, string>")  # the spelling as a str is remembered as before
        assert list(types._CACHE.items()) == [("map<int, string>", plain)] and list(types._PARSED.values()) == [plain]
        assert type(next(iter(types._CACHE))) is str
    finally:
        types._CACHE.clear()
        types._CACHE.update(before)
        types._PARSED.clear()
        types._PARSED.update(known)
