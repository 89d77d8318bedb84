"""The immutable events of the log: one frozen model per change, named in the past tense.

Every event carries the envelope — ``position`` (global order, set by the log), ``commit_id``
(shared by the events of one call), ``view_id`` (the view's UUID: its stream), ``stream_version``
(1, 2, 3… per view), ``type`` (a stable string), ``identifier`` (the view's name after the event),
``actor`` and ``occurred_at`` (UTC epoch milliseconds) — plus the fields of its type, which the log
stores as the JSON ``payload``.

Events that change the current version (created, replaced, representation changes, rolled back)
carry the new version itself when one was added, the resulting ``current_version_id`` and the
version-log entry, so that the projections only ever apply facts and never re-decide anything.
"""

from __future__ import annotations

import datetime as dt
import functools
from typing import Annotated, Any, Callable, ClassVar, Literal, TypeVar, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter
from typing_extensions import NotRequired, TypedDict

from .errors import CorruptLogError, _signal_as_itself, _why
from .model import (Column, Int32, Int64, ReadOnlyDict, SecurityMode, SQLRepresentation, VersionLogEntry,
                    ViewVersion, _InterruptibleDump, check_column_name, check_dialect, check_sql, identifier_str)
from .types import parse_type

__all__ = [
    "Event",
    "ViewCreated",
    "ViewReplaced",
    "RepresentationAdded",
    "RepresentationUpdated",
    "RepresentationRemoved",
    "CommentUpdated",
    "PropertiesSet",
    "PropertiesRemoved",
    "ViewRenamed",
    "ViewRolledBack",
    "ViewDropped",
    "ViewImported",
    "AnyEvent",
    "EVENT_TYPES",
    "decode_event",
    "payload_readers",
    "check_stored_version",
    "check_stored_definition",
    "check_stored_columns",
    "check_stored_fields",
    "StoredEvents",
]

# defer_build: pydantic builds an event model's validator when the model is first used, not at import, so
# a command that reads views and writes nothing (viewstore show, list) does not pay for all of them at start
_EVENT_CONFIG = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True, defer_build=True)


class Event(_InterruptibleDump):
    """The envelope every event shares."""

    model_config = _EVENT_CONFIG
    #: names of the envelope fields (stored as columns, not in the payload)
    ENVELOPE: ClassVar[tuple[str, ...]] = ("position", "commit_id", "view_id", "stream_version", "type",
                                           "identifier", "actor", "occurred_at")

    position: int | None = None
    """Global order in the log; None until the event is stored."""
    commit_id: str
    """Shared by all events written by one call."""
    view_id: str
    """The view's UUID: the stream this event belongs to."""
    stream_version: int
    """1, 2, 3, ... within the view's stream, without gaps."""
    type: str
    """What happened: ``view.created``, ``view.replaced``, ``view.renamed``, ..."""
    identifier: tuple[str, ...]
    """The view's identifier after this event (namespace levels, then the name)."""
    actor: str
    """Who made the change (the writing store's ``actor``)."""
    occurred_at: int
    """UTC time in epoch milliseconds."""

    @property
    def occurred_at_datetime(self) -> dt.datetime:
        """``occurred_at`` as an aware datetime in UTC."""
        return dt.datetime.fromtimestamp(self.occurred_at / 1000, tz=dt.timezone.utc)

    @property
    def view(self) -> str:
        """The identifier as a dotted string."""
        return identifier_str(self.identifier)

    @_signal_as_itself
    def payload(self) -> dict[str, Any]:
        """The type-specific fields, as stored in the log's JSON payload."""
        # model_dump(mode="json", exclude=_ENVELOPE) itself, less its Python wrapper (half the cost;
        # every write asks this of each of its events)
        return self.__pydantic_serializer__.to_python(self, mode="json", exclude=_ENVELOPE)


_ENVELOPE: set[str] = set(Event.ENVELOPE)  # a set: pydantic's exclude= is typed for set, not frozenset


#: A current version id as the event models take it: lax as they are (a stored "2" reads as 2), and
#: 32-bit as the log's readers read it back, so no event is made that the log could not read
_VersionId = Annotated[int, Field(ge=-(2**31), le=2**31 - 1)]


class _VersionChange(BaseModel):
    """Fields of events that may move the current version."""

    version: ViewVersion | None = None
    """The version this event added, if it added one (otherwise an existing id was reused)."""
    current_version_id: _VersionId | None = None
    """The current version after the event (None: unchanged)."""
    log_entry: VersionLogEntry | None = None
    """The version-log entry this event appended, if the current version changed."""


class ViewCreated(_VersionChange, Event):
    type: Literal["view.created"] = "view.created"
    properties: dict[str, str] = Field(default_factory=dict)
    security_mode: SecurityMode = "DEFINER"


class ViewReplaced(_VersionChange, Event):
    type: Literal["view.replaced"] = "view.replaced"
    security_mode: SecurityMode | None = None
    """The new security mode, when the replace changed it."""


class RepresentationAdded(_VersionChange, Event):
    type: Literal["view.representation_added"] = "view.representation_added"
    dialect: str
    sql: str


class RepresentationUpdated(_VersionChange, Event):
    type: Literal["view.representation_updated"] = "view.representation_updated"
    dialect: str
    sql: str


class RepresentationRemoved(_VersionChange, Event):
    type: Literal["view.representation_removed"] = "view.representation_removed"
    dialect: str


class CommentUpdated(Event):
    type: Literal["view.comment_updated"] = "view.comment_updated"
    comment: str | None
    """The new comment; None removes it."""


class PropertiesSet(Event):
    type: Literal["view.properties_set"] = "view.properties_set"
    updates: dict[str, str]


class PropertiesRemoved(Event):
    type: Literal["view.properties_removed"] = "view.properties_removed"
    removals: tuple[str, ...]


class ViewRenamed(Event):
    type: Literal["view.renamed"] = "view.renamed"
    from_identifier: tuple[str, ...]


class ViewRolledBack(_VersionChange, Event):
    type: Literal["view.rolled_back"] = "view.rolled_back"


class ViewDropped(Event):
    type: Literal["view.dropped"] = "view.dropped"


class ViewImported(Event):
    """A view brought in from elsewhere (an Iceberg metadata file, a metastore record)."""

    type: Literal["view.imported"] = "view.imported"
    source: str
    """Where it came from, e.g. ``iceberg`` or ``hms:trino``."""
    source_location: str | None = None
    versions: tuple[ViewVersion, ...]
    current_version_id: _VersionId
    version_log: tuple[VersionLogEntry, ...]
    properties: dict[str, str] = Field(default_factory=dict)
    security_mode: SecurityMode = "DEFINER"


AnyEvent = Annotated[
    Union[ViewCreated, ViewReplaced, RepresentationAdded, RepresentationUpdated, RepresentationRemoved,
          CommentUpdated, PropertiesSet, PropertiesRemoved, ViewRenamed, ViewRolledBack, ViewDropped,
          ViewImported],
    Field(discriminator="type"),
]

EVENT_TYPES: dict[str, type[Event]] = {
    cls.model_fields["type"].default: cls
    for cls in (ViewCreated, ViewReplaced, RepresentationAdded, RepresentationUpdated, RepresentationRemoved,
                CommentUpdated, PropertiesSet, PropertiesRemoved, ViewRenamed, ViewRolledBack, ViewDropped,
                ViewImported)
}


@functools.cache
def _adapter() -> TypeAdapter[Event]:
    """The reader of any event (made at first use, as the event models are)."""
    return TypeAdapter(AnyEvent)


def decode_event(envelope: dict[str, Any], payload: dict[str, Any]) -> Event:
    """Rebuild an event from its stored envelope and payload.

    Raises:
        CorruptLogError: the type is unknown or the payload does not fit it.
    """
    try:
        return _adapter().validate_python({**payload, **envelope})
    except ValueError as e:
        raise CorruptLogError(f"cannot decode event at position {envelope.get('position')}: {_why(e)}") from e


# -- stored payloads, read without building the models ----------------------------------------------
# rebuild() and as_of fold the stored payloads as plain dicts: building the models above costs about
# three times more. These TypedDicts declare the same payloads as stored (strict types, no unknown keys)
# so that a row that entered the log behind the library's back is refused before the fold reads it.

_STORED = ConfigDict(strict=True, extra="forbid")


class _ColumnData(TypedDict):
    __pydantic_config__ = _STORED  # type: ignore[misc]
    # whether the name is one and the type parses (and a representation's texts too), the fold
    # checks with the models' own rules: projections._check_types
    name: str
    type: str
    comment: NotRequired[str | None]
    nullable: NotRequired[bool]


class _RepresentationData(TypedDict):
    __pydantic_config__ = _STORED  # type: ignore[misc]
    dialect: str
    sql: str


class _VersionData(TypedDict):
    __pydantic_config__ = _STORED  # type: ignore[misc]
    version_id: Int32
    timestamp_ms: Int64
    schema_id: Int32
    columns: list[_ColumnData]
    representations: list[_RepresentationData]
    default_catalog: NotRequired[str | None]
    default_namespace: NotRequired[list[str]]
    summary: NotRequired[dict[str, str]]


class _VersionFieldsData(TypedDict):
    """The fields of a stored version but its columns, declared as in _VersionData (a test holds them
    so): a view's versions mostly repeat their columns, whose text is checked once for all of them."""
    __pydantic_config__ = _STORED  # type: ignore[misc]
    version_id: Int32
    timestamp_ms: Int64
    schema_id: Int32
    representations: list[_RepresentationData]
    default_catalog: NotRequired[str | None]
    default_namespace: NotRequired[list[str]]
    summary: NotRequired[dict[str, str]]


class _DefinitionData(TypedDict):
    """The fields of a stored version that make its definition (what a reused version must equal):
    those of _VersionData but its id, time and columns, declared alike (a test holds them so)."""
    __pydantic_config__ = _STORED  # type: ignore[misc]
    schema_id: Int32
    representations: list[_RepresentationData]
    default_catalog: NotRequired[str | None]
    default_namespace: NotRequired[list[str]]
    summary: NotRequired[dict[str, str]]


class _LogEntryData(TypedDict):
    __pydantic_config__ = _STORED  # type: ignore[misc]
    timestamp_ms: Int64
    version_id: Int32


class _VersionChangeData(TypedDict, total=False):
    __pydantic_config__ = _STORED  # type: ignore[misc]
    version: _VersionData | None
    current_version_id: Int32 | None
    log_entry: _LogEntryData | None


class _CreatedData(_VersionChangeData, total=False):
    properties: dict[str, str]
    security_mode: SecurityMode


class _ReplacedData(_VersionChangeData, total=False):
    security_mode: SecurityMode | None


class _RepresentationChangeData(_VersionChangeData):
    dialect: str
    sql: str


class _RepresentationRemovedData(_VersionChangeData):
    dialect: str


class _CommentData(TypedDict):
    __pydantic_config__ = _STORED  # type: ignore[misc]
    comment: str | None


class _PropertiesSetData(TypedDict):
    __pydantic_config__ = _STORED  # type: ignore[misc]
    updates: dict[str, str]


class _PropertiesRemovedData(TypedDict):
    __pydantic_config__ = _STORED  # type: ignore[misc]
    removals: list[str]


class _RenamedData(TypedDict):
    __pydantic_config__ = _STORED  # type: ignore[misc]
    from_identifier: list[str]


class _DroppedData(TypedDict):
    __pydantic_config__ = _STORED  # type: ignore[misc]


class _ImportedData(TypedDict):
    __pydantic_config__ = _STORED  # type: ignore[misc]
    source: str
    source_location: NotRequired[str | None]
    versions: list[_VersionData]
    current_version_id: Int32
    version_log: list[_LogEntryData]
    properties: NotRequired[dict[str, str]]
    security_mode: NotRequired[SecurityMode]


_PAYLOADS: dict[str, type] = {
    "view.created": _CreatedData, "view.replaced": _ReplacedData,
    "view.representation_added": _RepresentationChangeData,
    "view.representation_updated": _RepresentationChangeData,
    "view.representation_removed": _RepresentationRemovedData, "view.rolled_back": _VersionChangeData,
    "view.comment_updated": _CommentData, "view.properties_set": _PropertiesSetData,
    "view.properties_removed": _PropertiesRemovedData, "view.renamed": _RenamedData,
    "view.dropped": _DroppedData, "view.imported": _ImportedData,
}
assert _PAYLOADS.keys() == EVENT_TYPES.keys()

#: checks a version as stored (a payload's, or a row of ``view_versions`` as a dict); returns a copy
check_stored_version: Callable[[Any], dict[str, Any]] = TypeAdapter(_VersionData).validator.validate_python

#: check a stored version in two parts, its columns and its other fields, as check_stored_version checks them
check_stored_columns: Callable[[Any], list[dict[str, Any]]] = TypeAdapter(list[_ColumnData]).validator.validate_python
check_stored_fields: Callable[[Any], dict[str, Any]] = TypeAdapter(_VersionFieldsData).validator.validate_python

#: checks the definition fields of a stored version (see _DefinitionData); returns a copy
check_stored_definition: Callable[[Any], dict[str, Any]] = TypeAdapter(_DefinitionData).validator.validate_python


@functools.cache
def payload_readers() -> dict[str, Callable[[str | bytes], Any]]:
    """For each event type, the reader of its stored payloads: it parses the JSON text and checks it
    in one pass, and raises ``ValueError`` (pydantic's ValidationError) when the text is not JSON or
    not the payload the library writes for that type. The dict is shared: do not change it.
    """
    # made at the first call, not at import: only reading the log (rebuild, as_of) needs them
    return {kind: TypeAdapter(shape).validator.validate_json for kind, shape in _PAYLOADS.items()}


# -- stored rows read into events --------------------------------------------------------------------
# events() and history() build a model of every row they read. Validated whole (decode_event), an
# event that carries a version costs several times one that does not: the version models have an
# __init__ of their own, which validation calls for the version, each of its columns and
# representations, and its log entry. So StoredEvents checks a stored version as the fold does (its
# stored shape, strict, then the models' own rules: the column types parse, the names, dialects and SQL
# pass), builds its models from the checked values (the very objects validation makes of them, the
# fields set included; a test compares them type by type), and validates the event with its own class,
# the built models in place (pydantic takes a model instance as it is). A row that fails any of this
# goes the slow way, decode_event, which takes what the models take or raises CorruptLogError.

_set = object.__setattr__
_M = TypeVar("_M", bound=BaseModel)


def _trusted(cls: type[_M], values: dict[str, Any], fields_set: set[str]) -> _M:
    """A model of checked values, as validation makes it (see ``model.AuditInfo.trusted``)."""
    model = cls.__new__(cls)
    _set(model, "__dict__", values)
    _set(model, "__pydantic_fields_set__", fields_set)
    _set(model, "__pydantic_extra__", None)
    _set(model, "__pydantic_private__", None)
    return model


_check_log_entry: Callable[[Any], dict[str, Any]] = TypeAdapter(_LogEntryData).validator.validate_python

#: the payload fields that hold version models
_VERSION_FIELDS = ("version", "log_entry", "versions", "version_log")


@functools.cache
def _classes() -> dict[str, tuple[Callable[[Any], Any], tuple[str, ...]]]:
    """For each event type, its class's validator and which of its fields hold version models (made
    at the first read of events, which builds the event models' validators: see _EVENT_CONFIG)."""
    return {kind: (cls.__pydantic_validator__.validate_python,
                   tuple(n for n in cls.model_fields if n in _VERSION_FIELDS))
            for kind, cls in EVENT_TYPES.items()}


class StoredEvents:
    """Builds the events of stored rows, for one read: within it, equal columns and representations
    are one object each (immutable values, as ``types.parse_type`` shares its types), as a view's
    versions mostly repeat its columns and all but one of its representations; a stored identifier
    is split once (each event's ``identifier`` is still a tuple of its own: validation copies it)."""

    __slots__ = ("_columns", "_representations", "_identifiers", "_classes")

    def __init__(self) -> None:
        self._classes = _classes()
        self._columns: dict[tuple[Any, ...], Column] = {}
        self._representations: dict[tuple[str, str], SQLRepresentation] = {}
        self._identifiers: dict[str, tuple[str, ...]] = {}

    def identifier(self, text: str) -> tuple[str, ...]:
        """A stored identifier (``a.b``) as the tuple of its parts."""
        parts = self._identifiers.get(text)
        if parts is None:
            parts = self._identifiers[text] = tuple(text.split("."))
        return parts

    def event(self, position: Any, commit_id: Any, view_id: Any, stream_version: Any, kind: Any,
              identifier: tuple[str, ...], actor: Any, occurred_at: Any, payload: dict[str, Any]) -> Event | None:
        """The event of a stored row, its payload parsed (a dict, which this changes), when its type
        is known and every field is one the models take; else None, and the caller decodes the row
        with :func:`decode_event`, which raises the CorruptLogError of a damaged one."""
        known = self._classes.get(kind)
        if known is None:
            return None
        validate, version_fields = known
        try:
            for name in version_fields:
                value = payload.get(name)
                if value is None:
                    continue
                if name == "version":
                    payload[name] = self._version(value)
                elif name == "log_entry":
                    payload[name] = _log_entry(value)
                elif type(value) is list:  # else as it is: the class takes it as validation would, or not
                    payload[name] = tuple([self._version(v) if name == "versions" else _log_entry(v) for v in value])
            # the envelope over the payload, as decode_event merges them
            payload.update(position=position, commit_id=commit_id, view_id=view_id, stream_version=stream_version,
                           type=kind, identifier=identifier, actor=actor, occurred_at=occurred_at)
            event: Event = validate(payload)
        except Exception:  # whatever failed, decode_event does what it always did with the row
            return None
        return event

    def _version(self, stored: Any) -> ViewVersion:
        data = check_stored_version(stored)
        return _trusted(ViewVersion, {
            "version_id": data["version_id"], "timestamp_ms": data["timestamp_ms"], "schema_id": data["schema_id"],
            "columns": tuple([self._column(c) for c in data["columns"]]),
            "representations": tuple([self._representation(r) for r in data["representations"]]),
            "default_catalog": data.get("default_catalog"),
            "default_namespace": tuple(data.get("default_namespace", ())),
            "summary": ReadOnlyDict(data.get("summary", {}))},
            set(data))  # ViewVersion's __init__ passes what it is given

    def _column(self, data: dict[str, Any]) -> Column:
        key = (data["name"], data["type"], data.get("comment"), data.get("nullable", True))
        column = self._columns.get(key)
        if column is None:
            column = self._columns[key] = _trusted(  # Column's __init__ passes every field: all four are set
                Column, {"name": check_column_name(key[0]), "type": parse_type(key[1]), "comment": key[2],
                         "nullable": key[3]}, {"name", "type", "comment", "nullable"})
        return column

    def _representation(self, data: dict[str, Any]) -> SQLRepresentation:
        key = (data["dialect"], data["sql"])
        representation = self._representations.get(key)
        if representation is None:
            representation = self._representations[key] = _trusted(
                SQLRepresentation, {"dialect": check_dialect(key[0]), "sql": check_sql(key[1])}, {"dialect", "sql"})
        return representation


def _log_entry(stored: Any) -> VersionLogEntry:
    data = _check_log_entry(stored)
    return _trusted(VersionLogEntry, {"timestamp_ms": data["timestamp_ms"], "version_id": data["version_id"]},
                    set(data))
