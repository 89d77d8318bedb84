"""Value models: identifiers, columns, representations, versions and the View itself.

Everything here is immutable (frozen pydantic models holding tuples, and read-only dicts: see
:class:`ReadOnlyDict`) and does no I/O; the events, the projections and the public API all speak in
these values.
"""

from __future__ import annotations

import copy
import os
import re
from pathlib import Path
from typing import (TYPE_CHECKING, Annotated, Any, Callable, ClassVar, Generic, Literal, NoReturn, Protocol, TypeAlias,
                    TypeVar)

from pydantic import (AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, PlainSerializer, PrivateAttr,
                      SerializerFunctionWrapHandler, StrictBool, StrictInt, StrictStr, WithJsonSchema, computed_field,
                      model_serializer)
from pydantic import ValidationError as PydanticValidationError

from .errors import ValidationError, _keep_signal, _signal_as_itself, _signal_as_itself_within
from .types import IcebergType, parse_type, type_number

__all__ = [
    "Identifier",
    "IdentifierLike",
    "NamespaceLike",
    "to_identifier",
    "identifier_str",
    "normalize_name",
    "Column",
    "SQLRepresentation",
    "ViewVersion",
    "VersionLogEntry",
    "AuditInfo",
    "View",
    "ReadOnlyDict",
    "ViewHistory",
    "ViewDiff",
    "ViewDiffSide",
    "BeforeAfter",
    "diff_views",
    "SecurityMode",
    "validate_properties",
    "validate_property_value",
    "VERSION_HISTORY_SIZE",
    "METADATA_COMPRESSION",
    "RESERVED_PREFIX",
]

#: A view identifier: the namespace levels followed by the view name, all normalised.
Identifier = tuple[str, ...]

#: A view identifier as the API takes it: a dotted string (``"sales.daily"``) or its parts, a tuple or
#: a list (``("sales", "daily")``), normalised by :func:`to_identifier`
IdentifierLike: TypeAlias = str | tuple[str, ...] | list[str]

#: A namespace as the API takes it: a dotted string (``"a.b"``) or its levels, a tuple or a list
#: (``("a", "b")``), normalised by :func:`to_namespace` (a view's default namespace may have no level)
NamespaceLike: TypeAlias = str | tuple[str, ...] | list[str]

SecurityMode = Literal["DEFINER", "INVOKER"]

#: Iceberg's ``int`` (version and schema ids): 32 bits, as the reference implementation reads them
Int32 = Annotated[int, Field(strict=True, ge=-(2**31), le=2**31 - 1)]
#: Iceberg's ``long`` (timestamps in ms): 64 bits, what SQLite and Spark store
Int64 = Annotated[int, Field(strict=True, ge=-(2**63), le=2**63 - 1)]


# (isspace() and indexing, not strip(): rebuild() runs these for every version in the log)
def check_column_name(v: str) -> str:
    if not v or v.isspace():
        raise ValidationError("a column name must be non-empty")
    return v


def check_dialect(v: str) -> str:
    if not v or v[0].isspace() or v[-1].isspace():
        raise ValidationError(f"bad dialect {v!r}: it must not be empty, begin or end with whitespace")
    return v


def check_sql(v: str) -> str:
    if not v or v.isspace():
        raise ValidationError("the SQL of a representation must not be empty")
    return v


# Text with a rule, used by the models below; the fold checks stored versions with the same functions
# (projections._check_types), so that what a rebuild accepts from the log, the event models accept too.
#: a column name: not empty or blank
ColumnName = Annotated[StrictStr, AfterValidator(check_column_name)]
#: a representation's dialect: free text, not empty, not beginning or ending with whitespace (``my engine`` is one)
Dialect = Annotated[StrictStr, AfterValidator(check_dialect)]
#: a representation's SQL: not blank
SQLText = Annotated[StrictStr, AfterValidator(check_sql)]

#: a UUID as the Iceberg spec writes one (``view-uuid``): 36 characters, hex digits in groups of
#: 8-4-4-4-12, either case. Python's ``uuid.UUID`` takes other spellings too (braces, ``urn:uuid:``, no
#: hyphens), which Java's ``UUID.fromString`` refuses: a view carrying one would be exported with it.
_UUID_TEXT = re.compile(r"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}")


def is_uuid_text(value: str) -> bool:
    """Whether ``value`` is a UUID in its standard spelling (see ``_UUID_TEXT``)."""
    return _UUID_TEXT.fullmatch(value) is not None


def same_uuid(a: object, b: object) -> bool:
    """Whether ``a`` and ``b`` are one UUID: the same text, or two spellings of it (see
    ``_UUID_TEXT``) that differ only in the case of their hex digits, as Java's ``UUID.fromString``
    reads them alike and Iceberg's ``assert-view-uuid`` compares them (``equalsIgnoreCase``). A
    view keeps its UUID as written (an export writes it back so); its identity is the UUID."""
    if a == b:
        return isinstance(a, str)
    return (isinstance(a, str) and isinstance(b, str) and is_uuid_text(a) and is_uuid_text(b)
            and a.lower() == b.lower())


_NAME_MAX = 255
_BAD_NAME = re.compile(r"[.\x00-\x1f\x7f`]")


def normalize_name(part: Any, what: str = "name") -> str:
    """Normalise one identifier part: lower case, no dots, no control characters or backquotes.

    Names are case-insensitive, as in the Hive metastore, Spark and Trino: ``Sales`` and ``sales``
    are the same namespace.
    """
    if not isinstance(part, str):
        article = "an" if what[:1] in ("a", "e", "i", "o", "u") else "a"
        raise ValidationError(f"{article} {what} must be a string, not {type(part).__name__}")
    if not part or part != part.strip():
        raise ValidationError(f"bad {what} {part!r}: it must be non-empty without surrounding spaces")
    name = part.lower()
    if len(name) > _NAME_MAX:  # as stored: lower case may be longer ('\u0130' is 'i' and a combining dot)
        raise ValidationError(f"bad {what} {part[:20]!r}...: longer than {_NAME_MAX} characters")
    if _BAD_NAME.search(part):
        raise ValidationError(f"bad {what} {part!r}: dots, backquotes and control characters are not allowed")
    check_unicode(part, what)
    return name


def check_unicode(text: str, what: str) -> str:
    """Refuse text with a lone surrogate: SQLite stores UTF-8, which cannot hold one (and pydantic's JSON
    dump would silently replace one in a dict key)."""
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as e:
            raise ValidationError(f"bad {what} {text!r}: it is not valid Unicode (a lone surrogate)") from e
    return text


def to_path(value: Any, what: str) -> Path:
    """``value`` as a Path the store can record (text in UTF-8), or a ValidationError naming ``what``."""
    try:
        text = os.fspath(value) if isinstance(value, (str, os.PathLike)) else None
    except TypeError:  # an __fspath__ that returns neither text nor bytes
        text = None
    if not isinstance(text, str) or not text.strip():
        raise ValidationError(f"a {what} must be a path (text or os.PathLike), not {value!r}")
    try:
        text.encode("utf-8")  # SQLite's file names, JSON and URIs are UTF-8
    except UnicodeError as e:  # a lone surrogate (one from bytes that are not UTF-8, too)
        raise ValidationError(f"a {what} must be a path in UTF-8, not {text!r} ({e})") from e
    return Path(text)


def to_identifier(identifier: IdentifierLike) -> Identifier:
    """Normalise ``"ns.view"``, ``"a.b.view"`` or ``("ns", "view")`` into a tuple identifier.

    Raises:
        ValidationError: fewer than two parts (a namespace and a name), or a bad part.
    """
    if isinstance(identifier, str):
        cached = _IDENTIFIERS.get(identifier)
        if cached is not None:
            return cached
        parts: tuple[Any, ...] = tuple(identifier.split("."))
    elif isinstance(identifier, (tuple, list)):
        parts = tuple(identifier)
    else:
        raise ValidationError(f"an identifier must be a 'namespace.name' string or a tuple, not {identifier!r}")
    if len(parts) < 2:
        raise ValidationError(f"bad identifier {identifier!r}: it needs a namespace and a name, as 'ns.view'")
    result = tuple(normalize_name(p, "identifier part") for p in parts)
    if isinstance(identifier, str) and len(_IDENTIFIERS) < 4096:
        _IDENTIFIERS[identifier] = result
    return result


#: valid identifier strings already normalised (every load_view and write starts here)
_IDENTIFIERS: dict[str, Identifier] = {}


def to_namespace(namespace: NamespaceLike) -> tuple[str, ...]:
    """Normalise a namespace (``"a.b"`` or ``("a", "b")``); it must have at least one level."""
    if isinstance(namespace, str):
        parts: tuple[Any, ...] = tuple(namespace.split("."))
    elif isinstance(namespace, (tuple, list)):
        parts = tuple(namespace)
    else:
        raise ValidationError(f"a namespace must be a string or a tuple, not {namespace!r}")
    if not parts:
        raise ValidationError("a namespace needs at least one level")
    return tuple(normalize_name(p, "namespace level") for p in parts)


def identifier_str(identifier: Identifier) -> str:
    return ".".join(identifier)


def id_runs(ids: Any) -> list[list[int]]:
    """Integer ids as their runs of consecutive ids, sorted: ``[5, 1, 2, 3]`` is ``[[1, 3], [5, 5]]``."""
    distinct = sorted(set(ids))
    if distinct and distinct[-1] - distinct[0] == len(distinct) - 1:  # one run, as most views' versions are
        return [[distinct[0], distinct[-1]]]
    runs: list[list[int]] = []
    for i in distinct:
        if runs and i == runs[-1][1] + 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return runs


def id_ranges(ids: Any) -> str:
    """Version ids for a message, runs shortened: ``1-3, 5, 7-3000`` (a run from a negative id, which
    an imported view may have, as ``-3 to -1``)."""
    return ", ".join(str(a) if a == b else f"{a}-{b}" if a >= 0 else f"{a} to {b}"
                     for a, b in id_runs(ids)) or "none"


def validate_properties(properties: Any) -> dict[str, str]:
    """Check a property map: non-empty string keys, string values (see :func:`validate_property_value`)."""
    if properties is None:
        return {}
    if not isinstance(properties, dict):
        raise ValidationError(f"properties must be a dict of strings, not {type(properties).__name__}")
    for key, value in properties.items():
        validate_property_value(validate_property_key(key), value)
    return dict(properties)


#: Prefix of the view properties the metastore codecs keep for themselves (``hms.<engine>.<what>``):
#: bookkeeping of viewstore, never written to a metastore record nor to Iceberg metadata.
RESERVED_PREFIX = "hms."

#: the view property that bounds how many versions an Iceberg metadata file keeps (default 10)
VERSION_HISTORY_SIZE = "version.history.num-entries"
#: the view property naming the codec of its Iceberg metadata files: ``gzip`` or ``none`` (any case)
METADATA_COMPRESSION = "write.metadata.compression-codec"


def validate_property_value(key: str, value: Any) -> str:
    """A property's value: text; for ``version.history.num-entries``, a positive int; for
    ``write.metadata.compression-codec``, ``gzip`` or ``none`` in any case. These are refused when they
    are set (the Iceberg reference fails that very commit), not when a later export reads them."""
    if not isinstance(value, str):
        raise ValidationError(f"property {key!r} must have a string value, not {value!r}")
    if key == VERSION_HISTORY_SIZE and history_size(value) is None:
        raise ValidationError(f"{VERSION_HISTORY_SIZE} must be a positive integer, not {value!r}")
    if key == METADATA_COMPRESSION and value.lower() not in ("gzip", "none"):
        raise ValidationError(f"{METADATA_COMPRESSION} must be gzip or none, not {value!r}")
    return value


def history_size(value: str) -> int | None:
    """A ``version.history.num-entries`` value as the reference reads it (Java's ``Integer.parseInt``: a
    sign, then ASCII digits, leading zeros however many), when it is a positive 32-bit int; else None.
    (Not ``int()``: Python refuses a text of more than 4300 digits with a ValueError of its own.)"""
    match = re.fullmatch(r"([+-]?)([0-9]+)", value)
    number = type_number(match[2]) if match and match[1] != "-" else None
    return number or None


def validate_property_key(key: Any) -> str:
    if not isinstance(key, str) or not key.strip():
        raise ValidationError(f"bad property key {key!r}: it must be a non-empty string")
    return check_unicode(key, "property key")


_K = TypeVar("_K")
_V = TypeVar("_V")


class ReadOnlyDict(dict[_K, _V]):
    """The dicts a :class:`View` holds (its ``properties``, a version's ``summary``): a dict in every
    way but change. Reading, ``isinstance(x, dict)``, equality, ``dict(x)`` and ``x.copy()`` (plain
    dicts to edit), ``x | other`` (a plain dict too), JSON dumps, copies and pickling work as for a
    dict; setting, deleting, ``pop``, ``popitem``, ``setdefault``, ``update``, ``clear`` and ``|=``
    raise TypeError, as changing a tuple does. The store hands every reader the same View, so a
    change made in place would reach every later ``load_view``; a view is changed through the store.
    """

    __slots__ = ()

    def _refuse(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError("a View is read-only: change the view through the store (alter_view with a "
                        "ViewChange, or replace_view), or edit a copy (dict(view.properties))")

    __setitem__ = __delitem__ = _refuse
    pop = popitem = setdefault = update = clear = _refuse
    __ior__ = _refuse

    def __reduce__(self) -> tuple[Any, ...]:  # copies and pickles are built whole, not item by item
        return type(self), (dict(self),)


#: a string map of a View, read-only once built (see :class:`ReadOnlyDict`)
ReadOnlyMap = Annotated[dict[str, str], AfterValidator(ReadOnlyDict)]


def _to_type(value: Any) -> IcebergType:
    return parse_type(value)


def _type_text(value: IcebergType) -> str:
    """A column type's dump: its text. A signal that comes while it runs (Ctrl-C) is kept for the
    library's dump around it (see :func:`~viewstore.errors._keep_signal`): in JSON mode
    pydantic-core reports it by its text alone. (One whose handler Python runs as this is entered,
    before its ``try``, is not: a JSON dump of a model with no Python serializer around its columns
    then raises pydantic's error.)"""
    try:
        return str(value)
    except BaseException as e:
        _keep_signal(e)
        raise


ColumnType = Annotated[
    IcebergType,
    BeforeValidator(_to_type),
    PlainSerializer(_type_text, return_type=str),
    WithJsonSchema({"type": "string"}),
]

_FROZEN = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)


class _InterruptibleDump(BaseModel):
    """A model that holds columns, whose dump runs Python code (a column type's text): a signal that
    comes while ``model_dump`` or ``model_dump_json`` runs (Ctrl-C) goes on as itself, not as
    pydantic's ``PydanticSerializationError`` (see :func:`~viewstore.errors._signal_as_itself`)."""

    model_dump = _signal_as_itself(BaseModel.model_dump)
    model_dump_json = _signal_as_itself(BaseModel.model_dump_json)

    if TYPE_CHECKING:  # a model's own fields, as BaseModel takes them (mypy would take the fields of this one: none)
        def __init__(self, /, **data: Any) -> None: ...


class Column(_InterruptibleDump):
    """One output column of a view: ``Column("amount", "decimal(18,2)", "in EUR")``."""

    model_config = _FROZEN

    name: ColumnName
    """The column name, kept as given (case preserved)."""
    type: ColumnType
    """The canonical Iceberg type; ``str(column.type)`` is its Iceberg spelling."""
    comment: StrictStr | None = None
    """The column comment (Iceberg's field ``doc``)."""
    # strict, as every flag and number of the models: "no", 0 or 1.0 in a caller's data is refused, not
    # taken for a flag by its truth value
    nullable: StrictBool = True
    """False for a required column."""

    def __init__(self, name: Any = None, type: Any = None, comment: str | None = None,
                 nullable: bool = True, **data: Any) -> None:
        if data:
            raise ValidationError(f"unknown column fields {sorted(data)}")
        try:
            super().__init__(name=name, type=type, comment=comment, nullable=nullable)
        except PydanticValidationError as e:  # a field's check that raised a ValueError is inside it
            raise _wrap(e, "column") from e


class SQLRepresentation(BaseModel):
    """The view's query in one SQL dialect: ``SQLRepresentation("spark", "SELECT ...")``.

    The SQL is kept byte for byte; the dialect is stored as given and compared case-insensitively.
    """

    model_config = _FROZEN

    # strict: bytes or numbers are refused, not decoded or converted behind the caller's back
    dialect: Dialect
    sql: SQLText

    def __init__(self, dialect: Any = None, sql: Any = None, **data: Any) -> None:
        if data:
            raise ValidationError(f"unknown representation fields {sorted(data)}")
        try:
            super().__init__(dialect=dialect, sql=sql)
        except PydanticValidationError as e:
            raise _wrap(e, "representation") from e


class VersionLogEntry(BaseModel):
    """One change of the current version: when, and to which version id."""

    model_config = _FROZEN

    timestamp_ms: Int64
    version_id: Int32

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except PydanticValidationError as e:
            raise _wrap(e, "version log entry") from e


class ViewVersion(_InterruptibleDump):
    """An immutable Iceberg view version: one definition of the view."""

    model_config = _FROZEN

    version_id: Int32
    timestamp_ms: Int64
    schema_id: Int32
    columns: tuple[Column, ...]
    representations: tuple[SQLRepresentation, ...]
    default_catalog: str | None = None
    default_namespace: tuple[str, ...] = ()
    summary: ReadOnlyMap = Field(default_factory=ReadOnlyDict)

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except PydanticValidationError as e:
            raise _wrap(e, "view version") from e


# A model made without validation (``Model.model_construct(...)``) holds whatever it was given, or
# lacks a field: the write API checks every model it is given with these, as its constructor would
# have, so that such a model is refused as the ValidationError its constructor raises. A model its
# constructor made passes the quick checks (no pydantic call); any other is validated again whole.

def _validated_again(value: Any, what: str) -> Any:
    try:
        return type(value).model_validate(dict(value.__dict__))
    except PydanticValidationError as e:
        raise _wrap(e, what) from e


def _plain_column(fields: dict[str, Any]) -> bool:
    name, comment, column_type = fields.get("name"), fields.get("comment"), fields.get("type")
    # the type as parse_type gives it (a type object is checked to read back from its spelling)
    if (len(fields) == 4 and type(name) is str and isinstance(column_type, IcebergType)
            and parse_type(column_type) is column_type
            and (comment is None or type(comment) is str) and type(fields.get("nullable")) is bool):
        check_column_name(name)
        return True
    return False


def _plain_representation(fields: dict[str, Any]) -> bool:
    dialect, sql = fields.get("dialect"), fields.get("sql")
    if len(fields) == 2 and type(dialect) is str and type(sql) is str:
        check_dialect(dialect)
        check_sql(sql)
        return True
    return False


def _plain_log_entry(fields: dict[str, Any]) -> bool:
    time, version = fields.get("timestamp_ms"), fields.get("version_id")
    return (len(fields) == 2 and type(time) is int and -_I64 <= time < _I64
            and type(version) is int and -_I32 <= version < _I32)


_I32, _I64 = 2**31, 2**63
#: per model: whether its fields are of the types its constructor leaves (raising what a field's own
#: check raises), and the name a refusal gives it
_PLAIN: dict[type, tuple[Callable[[dict[str, Any]], bool], str]] = {
    Column: (_plain_column, "column"), SQLRepresentation: (_plain_representation, "representation"),
    VersionLogEntry: (_plain_log_entry, "version log entry")}

_Checked = TypeVar("_Checked", Column, SQLRepresentation, VersionLogEntry)


def checked(value: _Checked) -> _Checked:
    """A :class:`Column`, :class:`SQLRepresentation` or :class:`VersionLogEntry` as its constructor
    would make it (see above): ``value`` itself when its constructor made it.

    Raises:
        ValidationError: a field its constructor refuses, named.
    """
    plain, what = _PLAIN[type(value)] if type(value) in _PLAIN else _PLAIN[_base(value)]
    if plain(value.__dict__):
        return value
    return _validated_again(value, what)


def _base(value: Any) -> type:
    return next(cls for cls in _PLAIN if isinstance(value, cls))


def _plain_version(fields: dict[str, Any]) -> bool:
    """Whether a version's fields are of the types its constructor leaves (the columns and
    representations aside: tuples, whose models the caller checks)."""
    get = fields.get
    vid, time, schema, catalog = get("version_id"), get("timestamp_ms"), get("schema_id"), get("default_catalog")
    namespace, summary = get("default_namespace"), get("summary")
    if not (len(fields) == 8 and type(vid) is int and type(time) is int and type(schema) is int
            and -_I32 <= vid < _I32 and -_I64 <= time < _I64 and -_I32 <= schema < _I32
            and type(get("columns")) is tuple and type(get("representations")) is tuple
            and (catalog is None or type(catalog) is str) and type(namespace) is tuple
            and type(summary) is ReadOnlyDict):
        return False
    for part in namespace:
        if type(part) is not str:
            return False
    for key, value in summary.items():
        if type(key) is not str or type(value) is not str:
            return False
    return True


def checked_version(version: ViewVersion, columns: Callable[[Any], tuple[Column, ...]] | None = None) -> ViewVersion:
    """``version`` as :class:`ViewVersion` would make it, its columns and representations too (see
    above). ``columns``, given, checks the version's columns in place of :func:`checked`
    of each (an import checks each distinct list once).

    Raises:
        ValidationError: a field its constructor refuses, named.
    """
    fields = version.__dict__
    cols, reps = fields.get("columns"), fields.get("representations")
    if _plain_version(fields):  # what the constructor made? (cols and reps are tuples then)
        assert cols is not None and reps is not None
        # the columns as they are (``columns`` gives the very tuple back for Columns its constructor made)
        plain = (columns(cols) is cols if columns is not None
                 else all(type(c) is Column and checked(c) is c for c in cols))
        if plain and all(type(r) is SQLRepresentation and checked(r) is r for r in reps):
            return version
    data = dict(fields)
    if isinstance(cols, tuple):
        data["columns"] = (columns(cols) if columns is not None
                           else tuple(checked(c) if isinstance(c, Column) else c for c in cols))
    if isinstance(reps, tuple):
        data["representations"] = tuple(checked(r) if isinstance(r, SQLRepresentation) else r
                                        for r in reps)
    try:
        return ViewVersion.model_validate(data)
    except PydanticValidationError as e:
        raise _wrap(e, "view version") from e


class _RefusedAsOurs(BaseModel):
    """A model whose constructor refuses a field as the library's ValidationError (``bad audit info:
    create_time_ms: Input should be a valid integer, not '1'``), not pydantic's, named by ``_what``."""

    _what: ClassVar[str]

    def __init__(self, /, **data: Any) -> None:
        try:
            super().__init__(**data)
        except PydanticValidationError as e:
            raise _wrap(e, self._what) from e


class AuditInfo(_RefusedAsOurs):
    """Who created the view and when, and who changed it last and when (UTC epoch ms)."""

    model_config = _FROZEN
    _what = "audit info"

    creator: str
    create_time_ms: Int64
    last_modifier: str
    last_modified_time_ms: Int64

    @classmethod
    def trusted(cls, creator: str, create_time_ms: int, last_modifier: str, last_modified_time_ms: int) -> "AuditInfo":
        """The AuditInfo of values already checked (a folded state's), unvalidated: the very object
        ``model_construct`` makes of every field, at about a quarter of its cost (every write builds one
        for the View it returns)."""
        info = cls.__new__(cls)
        setattr_ = object.__setattr__
        setattr_(info, "__dict__", {"creator": creator, "create_time_ms": create_time_ms,
                                    "last_modifier": last_modifier, "last_modified_time_ms": last_modified_time_ms})
        setattr_(info, "__pydantic_fields_set__",
                 {"creator", "create_time_ms", "last_modifier", "last_modified_time_ms"})
        setattr_(info, "__pydantic_extra__", None)
        setattr_(info, "__pydantic_private__", None)
        return info


class ViewHistory(Protocol):
    """Where a :class:`View` the store built finds its versions and version log when first asked
    for them (see :meth:`View.lazy`): a view with thousands of versions is loaded without building
    every one of them."""

    def versions(self) -> tuple["ViewVersion", ...]:
        """Every version, by id (may raise :class:`~viewstore.errors.CorruptLogError`)."""
        ...

    def version_log(self) -> tuple["VersionLogEntry", ...]:
        ...

    def version(self, version_id: int) -> "ViewVersion | None":
        """The version with that id, None if there is none."""
        ...

    def version_ids(self) -> tuple[int, ...]:
        """Every version's id, in order, without building the versions."""
        ...


#: the fields of a View that a lazily built one fills in on first use
_LATER = ("versions", "version_log")


class View(_RefusedAsOurs):
    """The state of one view, as loaded from the store (current, or ``as_of`` a time).

    A View the store returns builds ``versions`` and ``version_log`` the first time they are read
    (the current version's accessors, ``columns``, ``sql_for`` and the like, do not need them): a
    view's history can be long, and most callers read only its current version. Either way a View
    is an immutable value: the tuples are built once, every reader gets the same ones, and equality,
    ``model_dump``, copies and pickling see every field. Its ``properties`` and each version's
    ``summary`` are :class:`ReadOnlyDict`: dicts that raise TypeError on any change in place (the
    store gives every ``load_view`` the same View); change a view with ``ViewStore.alter_view``
    (a ``ViewChange``) or ``replace_view``, or edit a copy, ``dict(view.properties)``.
    """

    model_config = _FROZEN
    _what = "view"

    identifier: tuple[str, ...]
    """The namespace levels, then the name: ``("sales", "daily")``."""
    uuid: str
    """The view's UUID (Iceberg's ``view-uuid``): kept across renames, new for a view created again."""
    properties: ReadOnlyMap
    """The view's properties, its comment among them (``comment``); read-only."""
    security_mode: SecurityMode
    """``"DEFINER"`` or ``"INVOKER"``: whose rights the view's SQL runs with."""
    current_version_id: Int32
    """The id of the current version (:attr:`current_version`)."""
    versions: tuple[ViewVersion, ...]
    """Every version the view has had, by id (a rollback makes an old one current, not a new one)."""
    version_log: tuple[VersionLogEntry, ...]
    """Each change of the current version, oldest first: when, and to which version."""
    audit: AuditInfo
    """Who created the view and when, and who changed it last and when."""
    stream_version: StrictInt
    """How many events the view's stream holds: pass it as ``expected_version``."""

    _history: ViewHistory | None = PrivateAttr(default=None)

    @classmethod
    def lazy(cls, history: ViewHistory, **fields: Any) -> "View":
        """A View of trusted values (no validation) whose ``versions`` and ``version_log`` come from
        ``history`` when first read. ``fields`` are the other fields, every one of them; the View
        holds a read-only copy of ``properties``."""
        fields["properties"] = ReadOnlyDict(fields["properties"])
        view = cls.__new__(cls)
        setattr_ = object.__setattr__
        setattr_(view, "__dict__", fields)
        setattr_(view, "__pydantic_fields_set__", set(_ALL_FIELDS))
        setattr_(view, "__pydantic_extra__", None)
        setattr_(view, "__pydantic_private__", {"_history": history})
        return view

    if not TYPE_CHECKING:
        def __getattr__(self, item: str) -> Any:
            if item in _LATER:  # not built yet (a field that is there is found without coming here)
                fields = self.__dict__
                private = object.__getattribute__(self, "__pydantic_private__")
                history = private.get("_history") if private else None
                if history is None:  # a View made with model_construct and without this field
                    raise AttributeError(f"'View' object has no attribute {item!r}")
                # two threads may both build it: the first to store it wins, and both return that one
                return fields.setdefault(item, getattr(history, item)())
            return super().__getattr__(item)

    def _complete(self) -> None:
        """Build the fields not built yet (equality, dumps and copies compare and copy every field)."""
        for name in _LATER:
            if name not in self.__dict__:
                getattr(self, name)

    def __eq__(self, other: Any) -> bool:
        if not isinstance(other, View):
            return super().__eq__(other)
        if type(self) is not type(other):
            return False
        self._complete()
        other._complete()
        return self.__dict__ == other.__dict__  # the history they were built from does not matter

    def __hash__(self) -> int:  # as a frozen model's: of its field values (a dict of properties: unhashable)
        self._complete()
        return hash(tuple(self.__dict__[name] for name in type(self).model_fields))

    # no return annotation: pydantic would take it for the shape of a dump (Any: no JSON schema)
    # (a Ctrl-C in the handler's dump is raised as itself, which pydantic-core then reports with it as
    # the cause: what the handler raised has lost it once this returns to pydantic-core)
    @model_serializer(mode="wrap")
    @_signal_as_itself_within
    def _serialize(self, handler: SerializerFunctionWrapHandler):
        self._complete()
        data = handler(self)  # a dict, in python and JSON mode alike
        # in the order of the fields, whichever were built last
        return {name: data[name] for name in _ALL_FIELDS if name in data}

    def __copy__(self) -> "View":
        self._complete()
        return super().__copy__()

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> "View":
        # as pydantic copies a model, less the history: a copy is whole, and its history may be
        # anything (a lock, a connection) that cannot be copied
        self._complete()
        copied = type(self).__new__(type(self))
        setattr_ = object.__setattr__
        setattr_(copied, "__dict__", copy.deepcopy(self.__dict__, memo))
        setattr_(copied, "__pydantic_extra__", None)
        setattr_(copied, "__pydantic_fields_set__", set(self.__pydantic_fields_set__))
        setattr_(copied, "__pydantic_private__", {"_history": None})
        return copied

    def __getstate__(self) -> dict[Any, Any]:
        self._complete()
        state = super().__getstate__()
        state["__pydantic_private__"] = {"_history": None}
        return state

    def __iter__(self) -> Any:  # in the order of the fields, as a View built whole gives them
        return iter([(name, getattr(self, name)) for name in _ALL_FIELDS])

    def __repr_args__(self) -> Any:
        return [(name, getattr(self, name)) for name in _ALL_FIELDS]

    # The history is built before pydantic serializes: an error raised inside the serializer (a
    # damaged version: CorruptLogError) would reach the caller as pydantic's own serialization error;
    # a Ctrl-C that comes inside it (a column type's str) goes on as itself.
    @_signal_as_itself
    def model_dump(self, **kwargs: Any) -> dict[str, Any]:
        self._complete()
        return super().model_dump(**kwargs)

    @_signal_as_itself
    def model_dump_json(self, **kwargs: Any) -> str:
        self._complete()
        return super().model_dump_json(**kwargs)

    def model_copy(self, *, update: Any = None, deep: bool = False) -> "View":
        self._complete()
        return super().model_copy(update=update, deep=deep)

    @property
    def namespace(self) -> tuple[str, ...]:
        """The identifier's namespace levels (all but the name)."""
        return self.identifier[:-1]

    @property
    def name(self) -> str:
        """The view's name (the identifier's last part)."""
        return self.identifier[-1]

    @property
    def current_version(self) -> ViewVersion:
        """The version ``current_version_id`` names."""
        return self._version(self.current_version_id)  # projections guarantee this never fails

    @property
    def comment(self) -> str | None:
        """The view's comment (its ``comment`` property), or None."""
        return self.properties.get("comment")

    @property
    def columns(self) -> tuple[Column, ...]:
        """The current version's columns."""
        return self.current_version.columns

    @property
    def representations(self) -> tuple[SQLRepresentation, ...]:
        """The current version's SQL, one per dialect."""
        return self.current_version.representations

    @property
    def default_catalog(self) -> str | None:
        """The current version's default catalog (for the SQL's unqualified names), or None."""
        return self.current_version.default_catalog

    @property
    def default_namespace(self) -> tuple[str, ...]:
        """The current version's default namespace (for the SQL's unqualified names; empty: none)."""
        return self.current_version.default_namespace

    @property
    def summary(self) -> dict[str, str]:
        """The current version's summary (read-only)."""
        return self.current_version.summary

    def _version(self, version_id: int) -> ViewVersion:
        """The version with that id (LookupError if none), built alone if the others are not built yet."""
        if "versions" not in self.__dict__:
            history: ViewHistory | None = (self.__pydantic_private__ or {}).get("_history")
            if history is not None:
                found = history.version(version_id)
                if found is None:
                    raise LookupError(version_id)
                return found
        for version in self.versions:
            if version.version_id == version_id:
                return version
        raise LookupError(version_id)

    @property
    def version_ids(self) -> tuple[int, ...]:
        """The ids of the view's versions, in order (those of ``versions``); a View the store built
        reads them without building ``versions`` (``show`` of a view with 10,000 versions builds the
        few it lists)."""
        if "versions" not in self.__dict__:
            history: ViewHistory | None = (self.__pydantic_private__ or {}).get("_history")
            if history is not None:
                return history.version_ids()
        return tuple(v.version_id for v in self.versions)

    def version(self, version_id: int) -> ViewVersion:
        """The version with that id.

        Raises:
            ValidationError: the view has no such version, or ``version_id`` is not an int (``"1"``).
        """
        if isinstance(version_id, bool) or not isinstance(version_id, int):  # else "no version 1; it has 1"
            raise ValidationError(f"a version id must be an integer, not {version_id!r}")
        try:
            return self._version(version_id)
        except LookupError:
            known = id_ranges(v.version_id for v in self.versions)
            raise ValidationError(f"view {identifier_str(self.identifier)} has no version {version_id}; "
                                  f"it has {known}") from None

    def sql_for(self, dialect: str) -> str | None:
        """The SQL of the current version in ``dialect`` (case-insensitive), or None.

        Raises:
            ValidationError: ``dialect`` is not a string.
        """
        if not isinstance(dialect, str):
            raise ValidationError(f"a dialect is a string such as 'spark', not {dialect!r}")
        wanted = dialect.lower()
        for rep in self.representations:
            if rep.dialect.lower() == wanted:
                return rep.sql
        return None

    @property
    def dialects(self) -> tuple[str, ...]:
        """The dialects of the current version's representations, spelled as stored."""
        return tuple(r.dialect for r in self.representations)


_ALL_FIELDS = tuple(View.model_fields)


T = TypeVar("T")


class BeforeAfter(_InterruptibleDump, Generic[T]):
    """A value that differs between the two sides of a :class:`ViewDiff`: what it was, what it became."""

    model_config = _FROZEN

    before: T
    after: T


class ViewDiffSide(_RefusedAsOurs):
    """One side of a :class:`ViewDiff`: the view's identifier then, its UUID (two sides of another
    UUID are two views that held the name in turn), its current version and stream version, and who
    changed it last and when (UTC epoch ms), as its :class:`AuditInfo` says."""

    model_config = _FROZEN
    _what = "diff side"

    identifier: tuple[str, ...]
    uuid: str
    current_version_id: Int32
    stream_version: StrictInt
    last_modifier: str
    last_modified_time_ms: Int64


class ViewDiff(_InterruptibleDump):
    """What differs between two states of a view (:func:`diff_views`, ``ViewStore.diff_view``).

    ``before`` and ``after`` say which state each side is. The rest holds only what differs (empty,
    or None, where the two sides agree), in the terms of :class:`View`:

    - ``columns_added`` / ``columns_removed`` (the columns themselves, in their side's order) and
      ``columns_changed`` (type, nullability, comment or the case of the name), a column being the
      same column on both sides when its name is, case aside (as the store compares them);
      ``column_order``: the column names of each side, when the columns on both sides come in
      another order;
    - ``representations_added`` / ``removed`` / ``changed``, a dialect being the same on both sides
      case aside (a changed one holds the whole representation of each side: SQL, dialect spelling);
    - ``comment``, ``security_mode``, ``default_catalog``, ``default_namespace``;
    - ``properties_added`` (key: value), ``properties_changed`` (key: before and after) and
      ``properties_removed`` (key: the value it had); the ``comment`` property is ``comment``, not here.

    ``changed`` is whether anything differs, the sides' identifier, UUID and current version id
    included (their stream versions and last changes are not: a change undone between the two
    moments leaves no difference; ``ViewStore.events`` lists every change).
    """

    model_config = _FROZEN

    before: ViewDiffSide
    after: ViewDiffSide
    columns_added: tuple[Column, ...] = ()
    columns_removed: tuple[Column, ...] = ()
    columns_changed: tuple[BeforeAfter[Column], ...] = ()
    column_order: BeforeAfter[tuple[str, ...]] | None = None
    representations_added: tuple[SQLRepresentation, ...] = ()
    representations_removed: tuple[SQLRepresentation, ...] = ()
    representations_changed: tuple[BeforeAfter[SQLRepresentation], ...] = ()
    comment: BeforeAfter[str | None] | None = None
    properties_added: dict[str, str] = Field(default_factory=dict)
    properties_changed: dict[str, BeforeAfter[str]] = Field(default_factory=dict)
    properties_removed: dict[str, str] = Field(default_factory=dict)
    security_mode: BeforeAfter[SecurityMode] | None = None
    default_catalog: BeforeAfter[str | None] | None = None
    default_namespace: BeforeAfter[tuple[str, ...]] | None = None

    @computed_field  # type: ignore[prop-decorator]  # (mypy does not follow a decorator over a property)
    @property
    def changed(self) -> bool:
        """Whether the two sides differ at all (see the class docstring)."""
        sides = ("identifier", "uuid", "current_version_id")
        return (any(getattr(self.before, name) != getattr(self.after, name) for name in sides)
                or any(getattr(self, name) for name in type(self).model_fields if name not in ("before", "after")))

    # as a View's (no return annotation: see View._serialize): the dump asks ``changed``, Python code
    # run after the fields, and a Ctrl-C that comes as it is entered (before any try in it) would be
    # reported by a JSON dump by its text alone; the handler lets it through to this serializer as
    # it is, which keeps it for the dump
    @model_serializer(mode="wrap")
    @_signal_as_itself_within
    def _serialize(self, handler: SerializerFunctionWrapHandler):
        return handler(self)


def _side(view: View) -> ViewDiffSide:
    return ViewDiffSide(identifier=view.identifier, uuid=view.uuid, current_version_id=view.current_version_id,
                        stream_version=view.stream_version, last_modifier=view.audit.last_modifier,
                        last_modified_time_ms=view.audit.last_modified_time_ms)


def _matched(before: tuple[Any, ...], after: tuple[Any, ...], key: Callable[[Any], str]
             ) -> tuple[tuple[Any, ...], tuple[Any, ...], tuple[BeforeAfter[Any], ...]]:
    """Items of two sides paired by ``key``: those only after, those only before, and the pairs that differ."""
    old = {key(item): item for item in before}
    new = {key(item) for item in after}
    return (tuple(item for item in after if key(item) not in old),
            tuple(item for item in before if key(item) not in new),
            tuple(BeforeAfter(before=old[key(item)], after=item) for item in after
                  if key(item) in old and old[key(item)] != item))


def _pair(before: Any, after: Any) -> BeforeAfter[Any] | None:
    return None if before == after else BeforeAfter(before=before, after=after)


def diff_views(before: View, after: View) -> ViewDiff:
    """What differs between two states of a view (see :class:`ViewDiff`); any two Views may be
    compared, though ``ViewStore.diff_view`` compares two moments of one view (its docstring has
    an example).

    Raises:
        ValidationError: ``before`` or ``after`` is not a View.
    """
    for side, value in (("before", before), ("after", after)):
        if not isinstance(value, View):
            raise ValidationError(f"{side} must be a View, not {type(value).__name__}")
    columns = _matched(before.columns, after.columns, lambda c: c.name.lower())
    shared = {c.name.lower() for c in before.columns} & {c.name.lower() for c in after.columns}
    order = [tuple(c.name for c in side.columns) for side in (before, after)]
    reordered = [name.lower() for name in order[0] if name.lower() in shared] != \
        [name.lower() for name in order[1] if name.lower() in shared]
    reps = _matched(before.representations, after.representations, lambda r: r.dialect.lower())
    old = {k: v for k, v in before.properties.items() if k != "comment"}
    new = {k: v for k, v in after.properties.items() if k != "comment"}
    return ViewDiff(
        before=_side(before), after=_side(after),
        columns_added=columns[0], columns_removed=columns[1], columns_changed=columns[2],
        column_order=BeforeAfter(before=order[0], after=order[1]) if reordered else None,
        representations_added=reps[0], representations_removed=reps[1], representations_changed=reps[2],
        comment=_pair(before.comment, after.comment),
        properties_added={k: v for k, v in new.items() if k not in old},
        properties_changed={k: BeforeAfter(before=old[k], after=v) for k, v in new.items() if k in old and old[k] != v},
        properties_removed={k: v for k, v in old.items() if k not in new},
        security_mode=_pair(before.security_mode, after.security_mode),
        default_catalog=_pair(before.default_catalog, after.default_catalog),
        default_namespace=_pair(before.default_namespace, after.default_namespace),
    )


def _wrap(error: PydanticValidationError, what: str) -> ValidationError:
    """One ValidationError of a model's refusal: ``bad column: type: Input should be ...``. A field's
    check that raised a ValidationError of its own already says what it refused (``bad dialect ' spark':
    ...``): its message stands alone, not behind the model's and the field's names again."""
    parts, own = [], []
    for item in error.errors():
        ctx = item.get("ctx") or {}
        inner = ctx.get("error")
        msg = str(inner) if inner is not None else item.get("msg", "")
        loc = ".".join(str(x) for x in item.get("loc", ()))
        if item.get("type") in _SAYS_WHAT_IT_GOT:  # a flag or a number of another type: show which
            msg += f", not {_short(item.get('input'))}"
        own.append(isinstance(inner, ValidationError))
        parts.append(msg if own[-1] or not loc else f"{loc}: {msg}")
    if len(parts) == 1 and own[0]:
        return ValidationError(parts[0])
    return ValidationError(f"bad {what}: " + "; ".join(parts))


#: pydantic's errors of a strict flag or number given another type ("no", "1", 1.0, True for an int),
#: which :func:`_wrap` follows with the value refused, as the library's own checks do
_SAYS_WHAT_IT_GOT = frozenset({"bool_type", "int_type"})


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
