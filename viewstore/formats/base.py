"""What every engine codec shares: the decoded definition, the HMS record helpers, a type tokenizer.

An HMS record is a dict shaped like the metastore's Thrift ``Table``::

    {"dbName": "sales", "tableName": "v", "owner": "alice", "tableType": "VIRTUAL_VIEW",
     "parameters": {...}, "sd": {"cols": [{"name": "id", "type": "bigint", "comment": None}]},
     "viewOriginalText": "...", "viewExpandedText": "..."}

A codec turns such a record into a :class:`ViewDefinition` (``decode``) and back (``encode``).

Property keys
-------------
``ViewDefinition.properties`` keeps every HMS parameter the codec did not turn into a field, under
its own name (``view.sqlConfig.spark.sql.session.timeZone``, ``trino_version``, user properties...).
What a codec learns from elsewhere in the record goes under the reserved ``hms.<engine>.`` prefix
(for example ``hms.trino.column-types`` or ``hms.hive.original-text``). Reserved keys are read back
by ``encode`` of the same engine and are never written into HMS parameters.

The second view text
--------------------
An HMS record has two texts, ``viewOriginalText`` and ``viewExpandedText``. The definition's SQL is
the one the engine treats as the view's query; when the other differs, it is kept under a reserved
key together with the SHA-256 of the SQL it was recorded with (:func:`second_text_properties`).
``encode`` writes the kept text back only while the SQL is still that one; once the SQL changes (or
when the digest is missing) both texts are the current SQL, so an engine never runs an old query
(:func:`second_text`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..errors import ValidationError
from ..model import (RESERVED_PREFIX, Column, SecurityMode, SQLRepresentation, View, _InterruptibleDump,
                     validate_properties)
from ..types import (MAX_DEPTH, IcebergType, ListType, MapType, StructField, StructType, check_depth, too_large,
                     type_number)

__all__ = [
    "ViewDefinition",
    "VIRTUAL_VIEW",
    "RESERVED_PREFIX",
    "HMS_MANAGED_PARAMETERS",
    "OWNER_PROPERTY",
    "OWNER_PARAMETER_KEY",
    "reserved_key",
    "invalid",
    "as_record",
    "parameters_of",
    "string_map",
    "text_of",
    "hive_columns_of",
    "hive_columns",
    "passthrough",
    "strip_nested",
    "column_types_property",
    "chosen_engine_types",
    "sql_digest",
    "second_text_properties",
    "second_text",
    "definition_from_view",
    "for_dialect",
    "hms_record",
    "Token",
    "TypeTokens",
]

#: The HMS table type of every logical view, whatever engine wrote it.
VIRTUAL_VIEW = "VIRTUAL_VIEW"


#: Parameters the metastore maintains itself: dropped on decode, never written on encode.
HMS_MANAGED_PARAMETERS = frozenset({"transient_lastDdlTime"})

#: The store's view property that holds the owner of a view imported from the metastore (the HMS
#: table owner). :func:`definition_from_view` makes it the record's owner and never writes it as
#: a parameter; a view without it is owned by its creator.
OWNER_PROPERTY = "owner"


#: Where the store keeps an HMS *parameter* named ``owner`` (Hive's ``TBLPROPERTIES ('owner'=...)``),
#: so that it neither becomes nor hides the view's owner (:data:`OWNER_PROPERTY`);
#: :func:`definition_from_view` gives it back as that parameter.
OWNER_PARAMETER_KEY = f"{RESERVED_PREFIX}owner-parameter"


def reserved_key(engine: str, what: str) -> str:
    """The property key under which the ``engine`` codec keeps ``what``: ``hms.trino.path``."""
    return f"{RESERVED_PREFIX}{engine}.{what}"


def bounded(parse: Callable[[], IcebergType], field: str) -> IcebergType:
    """Run an engine type parser so that a type nested too deeply is a ValidationError, whether the
    parser's recursion runs out first (RecursionError) or the result nests past MAX_DEPTH."""
    try:
        return check_depth(parse(), field)
    except RecursionError as e:
        raise invalid(field, f"types nest deeper than {MAX_DEPTH} levels") from e


def invalid(field: str, message: str) -> ValidationError:
    """A ValidationError whose message starts with the field that is wrong.

    Args:
        field: where the bad value sits, e.g. ``"viewOriginalText"`` or ``"parameters.is_generic"``.
        message: what is wrong with it.
    """
    return ValidationError(f"{field}: {message}")


# --------------------------------------------------------------------------------------------
# The decoded definition


class ViewDefinition(_InterruptibleDump):
    """One logical view as an engine stored it in the Hive metastore, in engine-neutral terms.

    It carries everything needed to create the view in the store (dialect and SQL, columns with
    Iceberg types, comment, default catalog and namespace, owner, security mode, properties) and,
    through ``properties``, everything engine-specific needed to write the same record back.

    Example::

        ViewDefinition(dialect="trino", sql="SELECT 1 x", columns=(Column("x", "int"),),
                       database="sales", name="v")
    """

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    dialect: str
    """The SQL dialect of ``sql``: ``trino``, ``spark``, ``hive``, ``flink`` or, for an Iceberg view,
    the free-form dialect string of its first representation (``spark-sql``...)."""
    sql: str
    """The view's SQL, byte for byte (for Hive the expanded text that Hive executes)."""
    columns: tuple[Column, ...] = ()
    """The output columns with Iceberg types; ``engine_types`` has the engine's own spellings."""
    comment: str | None = None
    """The view comment."""
    default_catalog: str | None = None
    """The catalog unqualified names resolve against, when the engine records one."""
    default_namespace: tuple[str, ...] = ()
    """The namespace unqualified names resolve against (empty when not recorded)."""
    owner: str | None = None
    """The owner: the HMS table owner, or the owner the engine's own payload names."""
    security_mode: SecurityMode | None = None
    """``DEFINER`` or ``INVOKER`` for engines that have the notion (Trino); None otherwise."""
    properties: dict[str, str] = Field(default_factory=dict)
    """Everything else: HMS parameters under their own names, codec facts under ``hms.<engine>.``."""
    summary: dict[str, str] = Field(default_factory=dict)
    """The Iceberg version summary (``engine-name``...), only for Iceberg views."""
    other_representations: tuple[SQLRepresentation, ...] = ()
    """Further SQL representations (only Iceberg views have more than one)."""
    database: str | None = None
    """The HMS database (``dbName``) the record lives in."""
    name: str | None = None
    """The HMS table name (``tableName``) of the view."""

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError:
            raise
        except ValueError as e:  # pydantic's own ValidationError is a ValueError
            raise _wrap_pydantic(e) from e

    @field_validator("dialect")
    @classmethod
    def _check_dialect(cls, value: str) -> str:
        if not value or value != value.strip():
            raise invalid("dialect", f"must not be empty, begin or end with whitespace, not {value!r}")
        return value

    @field_validator("sql")
    @classmethod
    def _check_sql(cls, value: str) -> str:
        if not value.strip():
            raise invalid("sql", "the view SQL must not be empty")
        return value

    @field_validator("default_namespace", mode="before")
    @classmethod
    def _check_namespace(cls, value: Any) -> Any:
        if isinstance(value, list):
            value = tuple(value)
        if isinstance(value, tuple):
            for level in value:
                if not isinstance(level, str) or not level:
                    raise invalid("default_namespace", f"levels must be non-empty strings, not {level!r}")
        return value

    @field_validator("properties", mode="before")
    @classmethod
    def _check_properties(cls, value: Any) -> dict[str, str]:
        checked = validate_properties(value)
        if "comment" in checked:
            raise invalid("properties", "'comment' belongs in the comment field, not in properties")
        return checked

    @field_validator("summary", mode="before")
    @classmethod
    def _check_summary(cls, value: Any) -> dict[str, str]:
        return validate_properties(value)

    @property
    def engine_types(self) -> tuple[str, ...]:
        """The engine's own type string of each column (``varchar(20)``, ``BIGINT NOT NULL``...).

        Empty when the definition does not carry them (Iceberg views: ``str(column.type)`` is the
        engine type there).
        """
        return chosen_engine_types(self.properties, self.dialect.lower(), len(self.columns))

    @property
    def representations(self) -> tuple[SQLRepresentation, ...]:
        """All SQL representations, the primary ``(dialect, sql)`` first."""
        return (SQLRepresentation(self.dialect, self.sql), *self.other_representations)


def _wrap_pydantic(error: ValueError) -> ValidationError:
    errors = getattr(error, "errors", None)
    if not callable(errors):
        return ValidationError(f"bad view definition: {error}")
    parts = []
    for item in errors():
        inner = (item.get("ctx") or {}).get("error")
        message = str(inner) if inner is not None else item.get("msg", "")
        location = ".".join(str(x) for x in item.get("loc", ()))
        parts.append(message if message.startswith(f"{location}:") or not location else f"{location}: {message}")
    return ValidationError("; ".join(parts))


def column_types_property(engine: str, types: Iterable[str]) -> dict[str, str]:
    """The reserved property that keeps the engine type string of each column, as a JSON list."""
    return {reserved_key(engine, "column-types"): json.dumps(list(types), ensure_ascii=False)}


def chosen_engine_types(properties: Mapping[str, str], engine: str, count: int) -> tuple[str, ...]:
    """Read back :func:`column_types_property`; empty when absent, malformed or of another length."""
    raw = properties.get(reserved_key(engine, "column-types"))
    if raw is None:
        return ()
    try:
        types = json.loads(raw)
    except (ValueError, RecursionError):
        return ()
    if not isinstance(types, list) or len(types) != count or not all(isinstance(t, str) for t in types):
        return ()
    return tuple(types)


def sql_digest(sql: str) -> str:
    """``sha256:<hex>`` of ``sql``: ties something a codec keeps to the SQL it was recorded with."""
    return "sha256:" + hashlib.sha256(sql.encode("utf-8", "surrogatepass")).hexdigest()


def second_text_properties(key: str, text: str | None, sql: str) -> dict[str, str]:
    """The properties that keep the record's other view text under ``key``, tied to ``sql``.

    Args:
        key: the reserved key, e.g. ``hms.spark.expanded-text``.
        text: the other text as the record holds it (None when absent).
        sql: the definition's SQL that ``text`` was recorded with.

    Returns:
        ``{key: text, key + "-sql": "sha256:<hex of sql>"}``, or nothing when ``text`` is absent or
        equal to ``sql``.
    """
    if text is None or text == sql:
        return {}
    return {key: text, f"{key}-sql": sql_digest(sql)}


def second_text(properties: Mapping[str, str], key: str, sql: str) -> str:
    """The other view text to write for ``sql``: the kept one when it was recorded with this very
    SQL (see :func:`second_text_properties`), otherwise ``sql`` itself."""
    text = properties.get(key)
    if text is not None and properties.get(f"{key}-sql") == sql_digest(sql):
        return text
    return sql


# --------------------------------------------------------------------------------------------
# Reading an HMS record


def as_record(table: Any) -> Mapping[str, Any]:
    """Accept a record dict, or an object with the Thrift ``Table`` attributes, as a mapping.

    Raises:
        ValidationError: ``table`` is neither.
    """
    if isinstance(table, Mapping):
        return table
    if hasattr(table, "tableType") and hasattr(table, "parameters"):
        return _object_to_record(table)
    raise invalid("table", f"an HMS table record must be a dict, not {type(table).__name__}")


def _object_to_record(table: Any) -> dict[str, Any]:
    """The record of a Thrift ``Table`` object: the fields a record read from the metastore holds
    (:func:`viewstore.spark.metastore.record_from_thrift_json`), with the object's values as they are
    (checked as a record's are), so that every codec reads the object as it reads that record: the
    storage descriptor's folder, formats and SerDe too, not its columns alone."""
    record: dict[str, Any] = {key: getattr(table, key, None) for key in (
        "dbName", "tableName", "owner", "createTime", "lastAccessTime", "tableType", "parameters",
        "viewOriginalText", "viewExpandedText")}

    def columns(cols: Any) -> Any:  # (what is no list is left for the record's check to refuse)
        if not isinstance(cols, (list, tuple)):
            return cols
        return [{"name": getattr(c, "name", None), "type": getattr(c, "type", None),
                 "comment": getattr(c, "comment", None)} for c in cols]

    sd = getattr(table, "sd", None)
    if sd is not None:
        record["sd"] = {"cols": columns(getattr(sd, "cols", None)),
                        **{key: getattr(sd, key, None) for key in ("location", "inputFormat", "outputFormat")}}
        serde = getattr(sd, "serdeInfo", None)
        if serde is not None:
            record["sd"]["serdeInfo"] = {key: getattr(serde, key, None) for key in ("serializationLib", "parameters")}
    keys = getattr(table, "partitionKeys", None)
    record["partitionKeys"] = [] if keys is None else columns(keys)
    return record


def parameters_of(record: Mapping[str, Any]) -> dict[str, str]:
    """The record's ``parameters`` as a dict of strings (an absent map is empty).

    Raises:
        ValidationError: ``parameters`` is not a map of strings to strings.
    """
    return string_map(record.get("parameters"), "parameters")


def string_map(value: Any, field: str) -> dict[str, str]:
    """``value`` (the record's field ``field``: ``parameters``, ``sd.serdeInfo.parameters``) as a
    dict of strings; None is empty.

    Raises:
        ValidationError: ``value`` is not a map of strings to strings.
    """
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise invalid(field, f"must be a map of strings, not {type(value).__name__}")
    for key, item in value.items():
        if not isinstance(key, str):
            raise invalid(field, f"keys must be strings, not {key!r}")
        if not isinstance(item, str):
            raise invalid(f"{field}.{key}", f"values must be strings, not {item!r}")
    return dict(value)


def text_of(record: Mapping[str, Any], key: str, field: str | None = None) -> str | None:
    """A string field of the record (``viewOriginalText``, ``owner``...), None when absent;
    ``field`` names it in errors when ``record`` is a part of the whole (``sd.location``).

    Raises:
        ValidationError: the field is present but not a string.
    """
    value = record.get(key)
    if value is not None and not isinstance(value, str):
        raise invalid(field or key, f"must be a string, not {type(value).__name__}")
    return value


def hive_columns_of(record: Mapping[str, Any]) -> list[tuple[str, str, str | None]]:
    """The ``sd.cols`` of the record as ``(name, hive type string, comment)`` triples.

    Raises:
        ValidationError: ``sd`` or ``sd.cols`` has the wrong shape.
    """
    sd = record.get("sd")
    if sd is None:
        return []
    if not isinstance(sd, Mapping):
        raise invalid("sd", f"must be an object, not {type(sd).__name__}")
    return hive_columns(sd.get("cols"), "sd.cols")


def hive_columns(cols: Any, field: str) -> list[tuple[str, str, str | None]]:
    """A list of HMS columns (the record's field ``field``: ``sd.cols``, ``partitionKeys``) as
    ``(name, hive type string, comment)`` triples; None is empty.

    Raises:
        ValidationError: it is not a list of objects with a name and a type (strings).
    """
    if cols is None:
        return []
    if not isinstance(cols, list):
        raise invalid(field, f"must be a list, not {type(cols).__name__}")
    result = []
    for i, col in enumerate(cols):
        if not isinstance(col, Mapping):
            raise invalid(f"{field}[{i}]", "must be an object with name and type")
        name, type_, comment = col.get("name"), col.get("type"), col.get("comment")
        if not isinstance(name, str) or not name:
            raise invalid(f"{field}[{i}].name", f"must be a non-empty string, not {name!r}")
        if not isinstance(type_, str) or not type_:
            raise invalid(f"{field}[{i}].type", f"must be a non-empty string, not {type_!r}")
        if comment is not None and not isinstance(comment, str):
            raise invalid(f"{field}[{i}].comment", f"must be a string, not {comment!r}")
        result.append((name, type_, comment))
    return result


def passthrough(params: Mapping[str, str], consumed: Callable[[str], bool]) -> dict[str, str]:
    """The parameters a codec keeps as properties: all but the consumed, managed and reserved ones."""
    return {key: value for key, value in params.items()
            if not consumed(key) and key not in HMS_MANAGED_PARAMETERS and not key.startswith(RESERVED_PREFIX)}


def strip_nested(t: IcebergType) -> IcebergType:
    """``t`` without nested ``not null`` flags and field comments: what Trino and Hive types keep."""
    if isinstance(t, StructType):
        return StructType(tuple(StructField(f.name, strip_nested(f.type)) for f in t.fields))
    if isinstance(t, ListType):
        return ListType(strip_nested(t.element))
    if isinstance(t, MapType):
        return MapType(strip_nested(t.key), strip_nested(t.value))
    return t


# --------------------------------------------------------------------------------------------
# Writing an HMS record


def definition_from_view(view: View) -> ViewDefinition:
    """The store's view as a definition: its first representation is the primary one.

    The owner is the view's ``owner`` property (:data:`OWNER_PROPERTY`, set when the view was
    imported from a metastore record), else the view's creator. A parameter named ``owner`` that
    the record had (:data:`OWNER_PARAMETER_KEY`) is a property of the definition again.

    Raises:
        ValidationError: the view's namespace has more than one level (an HMS database is one).
    """
    namespace = view.identifier[:-1]
    if len(namespace) != 1:
        raise invalid("identifier", f"the Hive metastore has one namespace level (a database), "
                                    f"but the view {'.'.join(view.identifier)!r} has {len(namespace)}")
    first, *others = view.representations
    properties = {k: v for k, v in view.properties.items() if k not in ("comment", OWNER_PROPERTY)}
    if OWNER_PARAMETER_KEY in view.properties:
        properties[OWNER_PROPERTY] = view.properties[OWNER_PARAMETER_KEY]  # the parameter, written back as one
    return ViewDefinition(
        dialect=first.dialect, sql=first.sql, other_representations=tuple(others),
        columns=view.columns, comment=view.comment,
        default_catalog=view.default_catalog, default_namespace=view.default_namespace,
        owner=view.properties.get(OWNER_PROPERTY) or view.audit.creator, security_mode=view.security_mode,
        properties=properties,
        summary=dict(view.summary), database=namespace[0], name=view.identifier[-1])


def for_dialect(definition: ViewDefinition, dialect: str) -> ViewDefinition:
    """The definition with the representation in ``dialect`` (case-insensitive) as its only SQL.

    Raises:
        ValidationError: the definition has no SQL in that dialect.
    """
    for rep in definition.representations:
        if rep.dialect.lower() == dialect.lower():
            return definition.model_copy(update={"dialect": rep.dialect, "sql": rep.sql, "other_representations": ()})
    have = ", ".join(r.dialect for r in definition.representations)
    name = f"{definition.database}.{definition.name}" if definition.database and definition.name else "IDENTIFIER"
    raise invalid("dialect", f"writing a {dialect} view needs {dialect} SQL, but the view only has: {have} "
                             f"(SQL is not translated between dialects: add the view's {dialect} SQL first, "
                             f"with ViewChange.add_representation or 'viewstore alter {name} "
                             f"--add-representation {dialect} SQL')")


def hms_record(definition: ViewDefinition, *, parameters: dict[str, str], cols: list[dict[str, Any]],
               original_text: str, expanded_text: str, storage: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Assemble the HMS ``Table`` record of a view (the shape :func:`as_record` reads)."""
    sd: dict[str, Any] = {"cols": cols}
    if storage:
        sd.update(storage)
    return {
        "dbName": definition.database,
        "tableName": definition.name,
        "owner": definition.owner,
        "tableType": VIRTUAL_VIEW,
        "parameters": parameters,
        "sd": sd,
        "partitionKeys": [],
        "viewOriginalText": original_text,
        "viewExpandedText": expanded_text,
    }


# --------------------------------------------------------------------------------------------
# A tokenizer for engine type strings (Trino signatures, Flink data types, Spark catalog strings)


class Token(NamedTuple):
    """One token of a type string."""

    kind: str
    """``word``, ``number``, ``quoted`` (an identifier in double or back quotes), ``string`` (in
    single quotes) or ``punct`` (one of ``( ) < > , : [ ]``)."""
    value: str
    """The text; for quoted kinds the content with the doubled quotes undone."""
    position: int
    """Where the token starts in the type string."""


_PUNCTUATION = "()<>,:[]"
_QUOTES = {'"': "quoted", "`": "quoted", "'": "string"}


def _tokenize(text: str, field: str) -> list[Token]:
    """Split a type string into words, numbers, quoted names, quoted strings and punctuation."""
    tokens: list[Token] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
        elif ch.isalpha() or ch == "_":
            start = i
            while i < n and (text[i].isalnum() or text[i] == "_"):
                i += 1
            tokens.append(Token("word", text[start:i], start))
        elif "0" <= ch <= "9":
            start = i
            while i < n and "0" <= text[i] <= "9":
                i += 1
            tokens.append(Token("number", text[start:i], start))
        elif ch in _QUOTES:
            start, i, chars = i, i + 1, []
            while True:
                if i >= n:
                    raise invalid(field, f"unterminated {ch} quote at position {start} in type {text!r}")
                if text[i] == ch:
                    if i + 1 < n and text[i + 1] == ch:  # a doubled quote stands for one
                        chars.append(ch)
                        i += 2
                        continue
                    i += 1
                    break
                chars.append(text[i])
                i += 1
            tokens.append(Token(_QUOTES[ch], "".join(chars), start))
        elif ch in _PUNCTUATION:
            tokens.append(Token("punct", ch, i))
            i += 1
        else:
            raise invalid(field, f"unexpected character {ch!r} at position {i} in type {text!r}")
    return tokens


class TypeTokens:
    """A cursor over the tokens of one type string, for small recursive-descent parsers.

    Every error it raises is a ValidationError naming ``field`` and quoting the whole type string.
    """

    def __init__(self, text: str, field: str) -> None:
        self.text = text
        self.field = field
        self.tokens = _tokenize(text, field)
        self.index = 0

    def error(self, message: str) -> ValidationError:
        """A ValidationError about this type string."""
        return invalid(self.field, f"{message} in type {self.text!r}")

    def peek(self, offset: int = 0) -> Token | None:
        """The token ``offset`` places ahead, without consuming it."""
        j = self.index + offset
        return self.tokens[j] if j < len(self.tokens) else None

    def next(self) -> Token:
        """Consume and return the next token.

        Raises:
            ValidationError: the type string ends here.
        """
        token = self.peek()
        if token is None:
            raise self.error("unexpected end")
        self.index += 1
        return token

    def at_word(self, *words: str, offset: int = 0) -> bool:
        """Whether the tokens ahead are exactly these words (case-insensitive)."""
        for k, word in enumerate(words):
            token = self.peek(offset + k)
            if token is None or token.kind != "word" or token.value.lower() != word:
                return False
        return True

    def accept_words(self, *words: str) -> bool:
        """Consume these words if they come next."""
        if self.at_word(*words):
            self.index += len(words)
            return True
        return False

    def at_punct(self, punct: str) -> bool:
        """Whether the next token is this punctuation."""
        token = self.peek()
        return token is not None and token.kind == "punct" and token.value == punct

    def accept(self, punct: str) -> bool:
        """Consume this punctuation if it comes next."""
        if self.at_punct(punct):
            self.index += 1
            return True
        return False

    def expect(self, punct: str) -> None:
        """Consume this punctuation.

        Raises:
            ValidationError: something else comes next.
        """
        token = self.next()
        if token.kind != "punct" or token.value != punct:
            raise self.error(f"expected {punct!r} at position {token.position}, found {token.value!r}")

    def word(self) -> str:
        """Consume a word and return it in lower case.

        Raises:
            ValidationError: the next token is not a word.
        """
        token = self.next()
        if token.kind != "word":
            raise self.error(f"expected a type name at position {token.position}, found {token.value!r}")
        return token.value.lower()

    def number(self) -> int:
        """Consume an unsigned integer.

        Raises:
            ValidationError: the next token is not a number, or one larger than a Java int.
        """
        token = self.next()
        if token.kind != "number":
            raise self.error(f"expected a number at position {token.position}, found {token.value!r}")
        number = type_number(token.value)
        if number is None:
            raise invalid(self.field, f"{too_large(token.value)} (at position {token.position} of the type)")
        return number

    def optional_numbers(self) -> list[int]:
        """Consume ``(n)`` or ``(n, m)`` if it comes next; the numbers, or an empty list."""
        numbers: list[int] = []
        if self.accept("("):
            numbers.append(self.number())
            while self.accept(","):
                numbers.append(self.number())
            self.expect(")")
        return numbers

    def expect_end(self) -> None:
        """Check that every token was consumed.

        Raises:
            ValidationError: tokens are left over.
        """
        token = self.peek()
        if token is not None:
            raise self.error(f"unexpected {token.value!r} at position {token.position}")
