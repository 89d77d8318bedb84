"""Iceberg types: the canonical column types of viewstore.

A type is an immutable value. ``parse_type`` reads the Iceberg spelling (``long``, ``decimal(18,2)``,
``timestamptz``, ``struct<street: string, zip: int>``, ``list<string>``, ``map<string, int>``,
``fixed[16]``) and the common SQL spellings (``bigint``, ``integer``, ``varchar(20)``, ``text``,
``array<int>``, ``struct<a:int>``, ``timestamp with time zone``, ...) and returns the canonical type;
``str(type)`` gives the Iceberg spelling back, so ``str(parse_type(str(t))) == str(t)`` always holds.
Given a type object, ``parse_type`` takes it only when its spelling parses back to an equal type: one
built by hand that does not (``PrimitiveType("bigint")``, ``DecimalType(50, 60)``) is refused.
A timestamp precision above microseconds (``timestamp(9)``, with or without time zone) is Iceberg's
nanosecond type (``timestamp_ns``, ``timestamptz_ns``), as the engine codecs read it; ``time with
time zone``, which Iceberg has no type for, is refused. A length, precision or count is ASCII digits
and at most :data:`MAX_TYPE_NUMBER` (a Java ``int``, as every engine reads it).

``to_iceberg_json`` / ``from_iceberg_json`` convert to and from the schema JSON of the Iceberg spec
(nested field ids are assigned on export; on import, once no id is found used twice, they are dropped).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterator

from .errors import ValidationError

__all__ = [
    "IcebergType",
    "PrimitiveType",
    "DecimalType",
    "FixedType",
    "StructField",
    "StructType",
    "ListType",
    "MapType",
    "parse_type",
    "to_iceberg_json",
    "from_iceberg_json",
    "PRIMITIVES",
    "MAX_DEPTH",
    "MAX_TYPE_NUMBER",
    "type_number",
    "too_large",
    "check_depth",
]

#: Iceberg's primitive type names (without the parametrised decimal and fixed).
PRIMITIVES = frozenset({
    "boolean", "int", "long", "float", "double", "date", "time", "timestamp", "timestamptz",
    "timestamp_ns", "timestamptz_ns", "string", "uuid", "binary", "variant", "unknown",
})

#: how deep types may nest (``list<list<...>>``): deeper ones are refused as invalid, not left to
#: exhaust Python's recursion limit in the parser, pydantic or an engine
MAX_DEPTH = 100

#: the largest length, precision or count a type string may give: every engine reads them as a Java
#: ``int``, so a larger one is no type (and a number of thousands of digits is refused before Python
#: converts it)
MAX_TYPE_NUMBER = 2**31 - 1


def type_number(digits: str) -> int | None:
    """``digits`` (ASCII digits) as a number of at most :data:`MAX_TYPE_NUMBER`, or None when larger."""
    digits = digits.lstrip("0") or "0"  # a leading zero is no digit of the number (as Java reads it)
    if len(digits) > len(str(MAX_TYPE_NUMBER)) or int(digits) > MAX_TYPE_NUMBER:
        return None
    return int(digits)


def too_large(digits: str) -> str:
    """What is wrong with a number :func:`type_number` refused (its first 20 digits shown, no leading zero)."""
    digits = digits.lstrip("0")
    return f"the number {digits[:20]}{'...' if len(digits) > 20 else ''} is larger than {MAX_TYPE_NUMBER}"

#: SQL (and engine) spellings accepted on input, mapped to the Iceberg primitive they mean.
_ALIASES = {
    "bool": "boolean", "boolean": "boolean",
    "tinyint": "int", "byte": "int", "smallint": "int", "short": "int", "int2": "int",
    "int": "int", "integer": "int", "int4": "int",
    "bigint": "long", "long": "long", "int8": "long",
    "float": "float", "real": "float", "float4": "float",
    "double": "double", "float8": "double",
    "date": "date", "time": "time",
    "timestamp": "timestamp", "timestamp_ntz": "timestamp", "datetime": "timestamp",
    "timestamptz": "timestamptz", "timestamp_ltz": "timestamptz",
    "timestamp_ns": "timestamp_ns", "timestamptz_ns": "timestamptz_ns",
    "string": "string", "text": "string", "varchar": "string", "char": "string",
    "character": "string", "nvarchar": "string", "nchar": "string", "clob": "string",
    "uuid": "uuid",
    "binary": "binary", "varbinary": "binary", "bytea": "binary", "blob": "binary",
    "bytes": "binary",
    "variant": "variant", "unknown": "unknown",
}


class IcebergType:
    """Base of every type; ``str()`` is the canonical Iceberg spelling."""

    __slots__ = ()

    @property
    def is_primitive(self) -> bool:
        return not isinstance(self, (StructType, ListType, MapType))


@dataclass(frozen=True, slots=True)
class PrimitiveType(IcebergType):
    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class DecimalType(IcebergType):
    precision: int
    scale: int

    def __str__(self) -> str:
        return f"decimal({self.precision},{self.scale})"


@dataclass(frozen=True, slots=True)
class FixedType(IcebergType):
    length: int

    def __str__(self) -> str:
        return f"fixed[{self.length}]"


_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _quote(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _bad_flag(value: Any, what: str) -> ValidationError:
    """The refusal of a flag that is not a bool: "no" or 1 given for it would print and export by
    its truth value (``"no"`` as ``not null``), so it is refused, as a column's ``nullable`` is."""
    return ValidationError(f"{what} must be True or False, not {value!r}")


@dataclass(frozen=True, slots=True)
class StructField:
    name: str
    type: IcebergType
    required: bool = False
    comment: str | None = None

    def __post_init__(self) -> None:
        if type(self.required) is not bool:
            raise _bad_flag(self.required, f"the required flag of struct field {self.name!r}")

    def __str__(self) -> str:
        name = self.name if _PLAIN_NAME.fullmatch(self.name) else "`" + self.name.replace("`", "``") + "`"
        text = f"{name}: {self.type}"
        if self.required:
            text += " not null"
        if self.comment is not None:
            text += f" comment {_quote(self.comment)}"
        return text


@dataclass(frozen=True, slots=True)
class StructType(IcebergType):
    fields: tuple[StructField, ...]

    def __str__(self) -> str:
        return "struct<" + ", ".join(str(f) for f in self.fields) + ">"


@dataclass(frozen=True, slots=True)
class ListType(IcebergType):
    element: IcebergType
    element_required: bool = False

    def __post_init__(self) -> None:
        if type(self.element_required) is not bool:
            raise _bad_flag(self.element_required, "a list's element_required")

    def __str__(self) -> str:
        return f"list<{self.element}{' not null' if self.element_required else ''}>"


@dataclass(frozen=True, slots=True)
class MapType(IcebergType):
    key: IcebergType
    value: IcebergType
    value_required: bool = False

    def __post_init__(self) -> None:
        if type(self.value_required) is not bool:
            raise _bad_flag(self.value_required, "a map's value_required")

    def __str__(self) -> str:
        return f"map<{self.key}, {self.value}{' not null' if self.value_required else ''}>"


# --------------------------------------------------------------------------------------------
# Parsing

_TOKEN = re.compile(
    r"""\s*(?:
        (?P<str>'(?:[^'\\]|\\.|'')*')
      | (?P<qid>`(?:[^`]|``)*`|"(?:[^"]|"")*")
      | (?P<num>[0-9]+)
      | (?P<word>[A-Za-z_][A-Za-z0-9_]*)
      | (?P<punct>[<>()\[\],:])
    )""",
    re.VERBOSE,
)


class _Tokens:
    def __init__(self, text: str) -> None:
        self.text = text
        self.items: list[tuple[str, str]] = []
        pos = 0
        stripped = text.rstrip()
        while pos < len(stripped):
            m = _TOKEN.match(stripped, pos)
            if not m or m.end() == pos:
                raise ValidationError(f"unknown type {text!r}: unexpected {stripped[pos:].strip()[:20]!r}")
            kind = m.lastgroup or ""
            self.items.append((kind, m.group(kind)))
            pos = m.end()
        self.i = 0

    def peek(self, offset: int = 0) -> tuple[str, str] | None:
        j = self.i + offset
        return self.items[j] if j < len(self.items) else None

    def word(self, offset: int = 0) -> str | None:
        tok = self.peek(offset)
        return tok[1].lower() if tok and tok[0] == "word" else None

    def next(self) -> tuple[str, str]:
        tok = self.peek()
        if tok is None:
            raise ValidationError(f"unknown type {self.text!r}: it ends too early")
        self.i += 1
        return tok

    def expect(self, punct: str) -> None:
        kind, value = self.next()
        if kind != "punct" or value != punct:
            raise ValidationError(f"unknown type {self.text!r}: expected {punct!r}, found {value!r}")

    def accept(self, punct: str) -> bool:
        tok = self.peek()
        if tok and tok[0] == "punct" and tok[1] == punct:
            self.i += 1
            return True
        return False

    def number(self) -> int:
        kind, value = self.next()
        if kind != "num":
            raise ValidationError(f"unknown type {self.text!r}: expected a number, found {value!r}")
        number = type_number(value)
        if number is None:
            raise ValidationError(f"bad type {self.text[:60]!r}: {too_large(value)}")
        return number


def parse_type(text: str | IcebergType) -> IcebergType:
    """Parse an Iceberg or SQL type spelling into its canonical Iceberg type.

    A type object is returned as it is when its spelling (``str()``) parses back to an equal type:
    a view's columns are stored by their spelling, so one built by hand that does not read back
    (``PrimitiveType("garbage")``, ``DecimalType(50, 60)``, a struct with two fields of one name)
    would make a view no load could read.

    Raises:
        ValidationError: the text is not a type viewstore knows (``time with time zone`` included),
            gives a number larger than :data:`MAX_TYPE_NUMBER`, or nests deeper than
            :data:`MAX_DEPTH`; or a type object cannot be spelled, or its spelling reads back as
            another type or none.
    """
    if type(text) is str:  # the common case first: a spelling parsed before (rebuild checks every column)
        cached = _CACHE.get(text)
        if cached is not None:
            return cached
    if isinstance(text, IcebergType):
        # a type this call returned before (a loaded view's column, given back) is known good
        return text if _PARSED.get(id(text)) is text else _read_back(text)
    if not isinstance(text, str) or not text.strip():
        raise ValidationError(f"a column type must be a non-empty string, not {text!r}")
    tokens = _Tokens(text)
    result = _parse(tokens)
    if tokens.peek() is not None:
        raise ValidationError(f"unknown type {text!r}: unexpected {tokens.peek()[1]!r}")  # type: ignore[index]
    # only a str is remembered, as only a str is looked up: a subclass's spelling replaced the entry of
    # its text at each call, the type it replaced left in _PARSED, which grew without bound
    if type(text) is str and len(_CACHE) < 4096:
        _CACHE[text] = result
        _PARSED[id(result)] = result
    return result


#: the types of spellings parsed before, by spelling; and the same types by their id (the dict holds
#: each, so no other object can have that id while it is there)
_CACHE: dict[str, IcebergType] = {}
_PARSED: dict[int, IcebergType] = {}


def _read_back(t: IcebergType) -> IcebergType:
    """``t``, once the parse of its spelling is found equal to it (see :func:`parse_type`).

    Raises:
        ValidationError: ``t`` cannot be spelled, or its spelling is no type or another one.
    """
    try:
        spelling = str(t)
    except Exception as e:  # fields of the wrong kind (a name that is no string) fail in str(), or a nesting too deep
        raise ValidationError(f"{type(t).__name__} is not a valid type: it cannot be spelled "
                              f"({type(e).__name__}: {e})") from None
    try:
        parsed = parse_type(spelling)
    except ValidationError as e:
        raise ValidationError(f"type {spelling[:60]!r} is not a valid type: {e}") from None
    if parsed != t:
        raise ValidationError(f"type {spelling[:60]!r} is not a valid type: its spelling reads back as "
                              f"{parsed!r}, not as {t!r}"[:300])
    return t


def _optional_length(tokens: _Tokens) -> int | None:
    """Read a ``(n)`` as in ``varchar(20)`` or ``timestamp(3)``; the number, or None without one."""
    if tokens.accept("("):
        number = tokens.number()
        tokens.expect(")")
        return number
    return None


def _parse(tokens: _Tokens, depth: int = 0) -> IcebergType:
    kind, raw = tokens.next()
    if kind != "word":
        raise ValidationError(f"unknown type {tokens.text!r}: unexpected {raw!r}")
    word = raw.lower()
    if depth >= MAX_DEPTH and word in ("array", "list", "map", "struct"):
        raise ValidationError(f"unknown type {tokens.text[:60]!r}...: types nest deeper than {MAX_DEPTH} levels")
    if word in ("array", "list"):
        tokens.expect("<")
        element = _parse(tokens, depth + 1)
        required = _not_null(tokens)
        tokens.expect(">")
        return ListType(element, required)
    if word == "map":
        tokens.expect("<")
        key = _parse(tokens, depth + 1)
        tokens.expect(",")
        value = _parse(tokens, depth + 1)
        required = _not_null(tokens)
        tokens.expect(">")
        return MapType(key, value, required)
    if word == "struct":
        tokens.expect("<")
        fields: list[StructField] = []
        names: set[str] = set()
        if not tokens.accept(">"):
            while True:
                fields.append(_struct_field(tokens, names, depth + 1))
                if tokens.accept(">"):
                    break
                tokens.expect(",")
        return StructType(tuple(fields))
    if word in ("decimal", "numeric", "dec", "number"):
        precision, scale = 10, 0
        if tokens.accept("("):
            precision = tokens.number()
            if tokens.accept(","):
                scale = tokens.number()
            tokens.expect(")")
        if not 1 <= precision <= 38 or not 0 <= scale <= precision:
            raise ValidationError(f"bad type {tokens.text!r}: decimal precision must be 1-38 and "
                                  f"scale 0-precision, got ({precision},{scale})")
        return DecimalType(precision, scale)
    if word == "fixed":
        if tokens.accept("["):
            length = tokens.number()
            tokens.expect("]")
        else:
            tokens.expect("(")
            length = tokens.number()
            tokens.expect(")")
        if length < 1:
            raise ValidationError(f"unknown type {tokens.text!r}: fixed length must be positive")
        return FixedType(length)
    if word == "double" and tokens.word() == "precision":
        tokens.next()
        return PrimitiveType("double")
    if word in ("character", "char", "nchar") and tokens.word() == "varying":
        tokens.next()
    if word in ("timestamp", "time"):
        # timestamp(3), timestamp with time zone, timestamp without time zone; a precision above
        # microseconds (timestamp(9)) is Iceberg's nanosecond type, as the engine codecs read it
        digits = _optional_length(tokens)
        with_tz = False
        if tokens.word() in ("with", "without") and tokens.word(1) == "time" and tokens.word(2) == "zone":
            with_tz = tokens.word() == "with"
            tokens.i += 3
        if word == "time":
            if with_tz:
                raise ValidationError(f"unknown type {tokens.text!r}: a time with time zone has no Iceberg type")
            return PrimitiveType("time")
        name = "timestamptz" if with_tz else "timestamp"
        return PrimitiveType(name + "_ns" if digits is not None and digits > 6 else name)
    canonical = _ALIASES.get(word)
    if canonical is None:
        raise ValidationError(f"unknown type {tokens.text!r}: {raw!r} is not an Iceberg or SQL type")
    if canonical in ("string", "binary"):
        _optional_length(tokens)
    return PrimitiveType(canonical)


def _not_null(tokens: _Tokens) -> bool:
    if tokens.word() == "not" and tokens.word(1) == "null":
        tokens.i += 2
        return True
    return False


def _struct_field(tokens: _Tokens, names: set[str], depth: int) -> StructField:
    kind, raw = tokens.next()
    if kind == "qid":
        name = raw[1:-1].replace(raw[0] * 2, raw[0])
    elif kind in ("word", "num"):
        name = raw
    else:
        raise ValidationError(f"unknown type {tokens.text!r}: expected a field name, found {raw!r}")
    if not name:
        raise ValidationError(f"unknown type {tokens.text!r}: a struct field needs a name")
    if name.lower() in names:
        raise ValidationError(f"unknown type {tokens.text!r}: duplicate struct field {name!r}")
    names.add(name.lower())
    tokens.accept(":")
    ftype = _parse(tokens, depth)
    required = _not_null(tokens)
    comment = None
    if tokens.word() == "comment":
        tokens.next()
        kind, value = tokens.next()
        if kind != "str":
            raise ValidationError(f"unknown type {tokens.text!r}: a comment must be a quoted string")
        comment = re.sub(r"\\(.)|''", lambda m: m.group(1) or "'", value[1:-1])
    return StructField(name, ftype, required, comment)


def check_depth(t: IcebergType, what: str = "type") -> IcebergType:
    """``t``, once it is known to nest at most :data:`MAX_DEPTH` levels (for parsers other than
    :func:`parse_type`, which checks as it reads).

    Raises:
        ValidationError: it nests deeper.
    """
    level, depth = [t], 0
    while level:
        depth += 1
        if depth > MAX_DEPTH + 1:
            raise ValidationError(f"{what}: types nest deeper than {MAX_DEPTH} levels")
        nxt: list[IcebergType] = []
        for item in level:
            if isinstance(item, StructType):
                nxt.extend(f.type for f in item.fields)
            elif isinstance(item, ListType):
                nxt.append(item.element)
            elif isinstance(item, MapType):
                nxt.extend((item.key, item.value))
        level = nxt
    return t


# --------------------------------------------------------------------------------------------
# Iceberg schema JSON


def to_iceberg_json(t: IcebergType, next_id: Iterator[int]) -> Any:
    """The Iceberg JSON form of a type, drawing nested field ids from ``next_id``."""
    if isinstance(t, StructType):
        ids = [next(next_id) for _ in t.fields]
        fields = []
        for fid, f in zip(ids, t.fields):
            entry: dict[str, Any] = {"id": fid, "name": f.name, "required": f.required,
                                     "type": to_iceberg_json(f.type, next_id)}
            if f.comment is not None:
                entry["doc"] = f.comment
            fields.append(entry)
        return {"type": "struct", "fields": fields}
    if isinstance(t, ListType):
        element_id = next(next_id)
        return {"type": "list", "element-id": element_id,
                "element": to_iceberg_json(t.element, next_id), "element-required": t.element_required}
    if isinstance(t, MapType):
        key_id, value_id = next(next_id), next(next_id)
        return {"type": "map", "key-id": key_id, "key": to_iceberg_json(t.key, next_id),
                "value-id": value_id, "value": to_iceberg_json(t.value, next_id),
                "value-required": t.value_required}
    return str(t)


def from_iceberg_json(data: Any) -> IcebergType:
    """Read an Iceberg JSON type (a string for primitives, an object for nested types).

    Reads as strictly as the reference implementation: every id, ``required`` flag and name must be
    present and of its JSON type (``"required": "false"`` is refused, not taken as true), a ``doc``
    is text or null, and no id (of a struct field, a list element, a map key or value) is used twice
    anywhere in ``data`` (the error names it and the two fields). A primitive is its Iceberg name in
    any case, exactly, or ``fixed[L]`` or ``decimal(P,S)`` with ASCII digits (leading zeros allowed)
    and blanks (space, tab, line break, vertical tab, form feed) only around the numbers, inside the
    brackets. Beyond Iceberg: field names are unique within a struct ignoring case (as column names
    are in viewstore), a fixed length is positive, a decimal's precision is 1-38 and its scale at most
    its precision, and types nest at most :data:`MAX_DEPTH` deep.

    Raises:
        ValidationError: the JSON is not an Iceberg type.
    """
    return _from_json(data, 0, {}, "")


#: the blanks the reference takes around the numbers of a primitive (Java's ``\s``, not Unicode's)
_JSON_BLANK = r"[ \t\n\x0b\f\r]*"
_JSON_FIXED = re.compile(rf"fixed\[{_JSON_BLANK}([0-9]+){_JSON_BLANK}\]")
_JSON_DECIMAL = re.compile(rf"decimal\({_JSON_BLANK}([0-9]+){_JSON_BLANK},{_JSON_BLANK}([0-9]+){_JSON_BLANK}\)")


def _json_primitive(data: str) -> IcebergType:
    """A primitive type string of Iceberg JSON, matched as the reference matches it."""
    name = data.lower()
    if name in PRIMITIVES:
        return PrimitiveType(name)
    match = _JSON_FIXED.fullmatch(name) or _JSON_DECIMAL.fullmatch(name)
    if match is None:
        raise ValidationError(f"{data!r} is not an Iceberg primitive type name")
    numbers = []
    for digits in match.groups():
        number = type_number(digits)
        if number is None:
            raise ValidationError(f"bad type {data[:60]!r}: {too_large(digits)}")
        numbers.append(number)
    # the canonical spelling, so the ranges are those parse_type checks
    return parse_type(f"fixed[{numbers[0]}]" if match.re is _JSON_FIXED else f"decimal({numbers[0]},{numbers[1]})")


def _claim(ids: dict[int, str], field_id: int, path: str) -> None:
    """Record that the field at ``path`` has ``field_id``, which no other field of the type may have."""
    if field_id in ids:
        raise ValidationError(f"field id {field_id} is used twice: by {ids[field_id]!r} and by {path!r}")
    ids[field_id] = path


def _from_json(data: Any, depth: int, ids: dict[int, str], path: str) -> IcebergType:
    # a nested type's refusal names the field by its path: in a schema of many, a bare "not None" or
    # "'strin' is not ..." said not whose type it was
    of = f" of {path!r}" if path else ""
    if isinstance(data, str):
        try:
            return _json_primitive(data)
        except ValidationError as e:
            if not path:
                raise
            raise ValidationError(f"the type{of}: {e}") from None
    if not isinstance(data, dict):
        raise ValidationError(f"an Iceberg type{of} must be a string or an object, not {data!r}")
    if depth >= MAX_DEPTH:
        raise ValidationError(f"types nest deeper than {MAX_DEPTH} levels")
    prefix = path + "." if path else ""
    kind = data.get("type")
    if kind == "struct":
        fields = _get(data, "fields", list, "array", kind)
        names: set[str] = set()
        out = []
        for f in fields:
            if not isinstance(f, dict):
                raise ValidationError(f"a struct field must be an object, not {f!r}")
            field_id = _get(f, "id", int, "int", "struct field")
            name = _get(f, "name", str, "string", "struct field")
            # unique ignoring case, as everywhere in viewstore (Spark resolves names that way);
            # Iceberg alone would allow both a and A
            if not name or name.lower() in names:
                raise ValidationError(f"a struct field name must be non-empty and unique (ignoring case), "
                                      f"not {name!r}")
            names.add(name.lower())
            _claim(ids, field_id, prefix + name)
            doc = f.get("doc")
            if doc is not None and not isinstance(doc, str):
                raise ValidationError(f"the doc of struct field {name!r} must be a string, not {doc!r}")
            required = _get(f, "required", bool, "boolean", f"struct field {name!r}")
            out.append(StructField(name, _from_json(f.get("type"), depth + 1, ids, prefix + name), required, doc))
        return StructType(tuple(out))
    if kind == "list":
        _claim(ids, _get(data, "element-id", int, "int", kind), prefix + "element")
        required = _get(data, "element-required", bool, "boolean", kind)
        return ListType(_from_json(data.get("element"), depth + 1, ids, prefix + "element"), required)
    if kind == "map":
        _claim(ids, _get(data, "key-id", int, "int", kind), prefix + "key")
        _claim(ids, _get(data, "value-id", int, "int", kind), prefix + "value")
        required = _get(data, "value-required", bool, "boolean", kind)
        return MapType(_from_json(data.get("key"), depth + 1, ids, prefix + "key"),
                       _from_json(data.get("value"), depth + 1, ids, prefix + "value"), required)
    raise ValidationError(f"unknown Iceberg type{of} {data!r}")


def _get(data: dict[str, Any], key: str, kind: type[Any], name: str, where: str) -> Any:
    """``data[key]``, which must be a JSON ``name`` (ids: 32-bit, as Iceberg's ``int``)."""
    value = data.get(key)
    if value is None:
        raise ValidationError(f"malformed Iceberg {where}: missing {name} {key!r}")
    if not isinstance(value, kind) or (kind is int and (isinstance(value, bool) or not -2**31 <= value < 2**31)):
        raise ValidationError(f"malformed Iceberg {where}: {key!r} must be a {name}, not {value!r}")
    return value
