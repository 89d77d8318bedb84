"""ViewStore: the public API. Each call is one transaction that decides events, appends them to
the log, folds them into the projections, and then tells the signals; inside
:meth:`ViewStore.transaction` each is a savepoint of the block's one transaction instead.

The decisions follow the Iceberg reference implementation's view rules: which changes make a new
version, when an identical definition reuses a version id, when the version log grows, which
dialects a replace may drop.
"""

from __future__ import annotations

import datetime as dt
import difflib
import functools
import gc
import getpass
import heapq
import inspect
import logging
import math
import os
import re
import contextvars
import threading
import time
import uuid as uuidlib
from contextlib import AbstractContextManager, closing as _closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import (TYPE_CHECKING, Any, Callable, Hashable, Iterable, Iterator, Required, Sequence,
                    TypeAlias, TypedDict, TypeVar)

from . import signals
from .errors import (ConcurrencyError, CorruptLogError, NoSuchViewError, ValidationError, ViewAlreadyExistsError,
                     ViewStoreError, _held, _signal_as_itself)
from .events import (CommentUpdated, Event, PropertiesRemoved, PropertiesSet, RepresentationAdded,
                     RepresentationRemoved, RepresentationUpdated, ViewCreated, ViewDropped, ViewImported,
                     ViewRenamed, ViewReplaced, ViewRolledBack)
from .log import (EventLog, EventStream, QueryRows, QueryStream, collector_paused, connect, make_store_id, query_rows,
                  read_only_query, read_store_id, savepoint, snapshot, transaction)
from .model import (Column, Identifier, IdentifierLike, NamespaceLike, SQLRepresentation, VersionLogEntry, View,
                    checked, checked_version, is_uuid_text,
                    ViewDiff, ViewVersion, check_unicode, diff_views, id_ranges, identifier_str, normalize_name,
                    to_identifier, to_namespace, to_path, validate_properties, validate_property_key,
                    validate_property_value)
from .projections import DDL, Projections, ViewState, apply, fold_stored, held_in_log, out_of_step, state_to_view
from .types import IcebergType

if TYPE_CHECKING:
    from .iceberg import ImportedView

__all__ = ["ViewStore", "ViewChange", "DROP_DIALECT_ALLOWED", "TimeLike", "AsOf", "EventTypes", "ColumnLike",
           "ColumnDict", "RepresentationLike", "RepresentationDict", "RepresentationsLike"]

# The forms the API's arguments take, as its normalisers accept them (for type checkers: the
# normalisers check every argument at run time all the same).

#: A time (``since``, ``until``, ``as_of``; see :func:`to_epoch_ms`): a datetime (naive meaning UTC),
#: a date (its midnight, UTC; an ``until`` date includes the whole day), an ISO 8601 string, or epoch
#: milliseconds (a number, or a string of digits).
TimeLike: TypeAlias = dt.datetime | dt.date | str | int | float

#: What :meth:`ViewStore.load_view` takes as ``as_of``: a time, or an :class:`Event` of the view's
#: history (the view right after that event's commit).
AsOf: TypeAlias = TimeLike | Event

#: The event types to filter by (``view.created``, ...): one, or several in a list, tuple or set.
EventTypes: TypeAlias = str | list[str] | tuple[str, ...] | set[str] | frozenset[str]


class ColumnDict(TypedDict, total=False):
    """A column as a dict of :class:`Column`'s arguments: ``{"name": "day", "type": "date"}``."""

    name: Required[str]
    type: Required[str | IcebergType]
    comment: str | None
    nullable: bool


#: A column of ``create_view`` and ``replace_view``: a :class:`Column`, its arguments as a tuple
#: ``(name, type[, comment[, nullable]])`` or a list (``["day", "date"]``), or a :class:`ColumnDict`.
ColumnLike: TypeAlias = (Column | tuple[str, str | IcebergType] | tuple[str, str | IcebergType, str | None]
                         | tuple[str, str | IcebergType, str | None, bool] | list[str] | ColumnDict)


class RepresentationDict(TypedDict):
    """A representation as a dict of :class:`SQLRepresentation`'s arguments: ``{"dialect": "spark", "sql": "..."}``."""

    dialect: str
    sql: str


#: One representation: a :class:`SQLRepresentation`, a ``(dialect, sql)`` tuple or a list of those two,
#: or a :class:`RepresentationDict`.
RepresentationLike: TypeAlias = SQLRepresentation | tuple[str, str] | list[str] | RepresentationDict

#: The ``representations`` of ``create_view`` and ``replace_view``: a list or tuple of
#: :data:`RepresentationLike` (at least one), or a single :class:`SQLRepresentation`, ``(dialect, sql)``
#: tuple or :class:`RepresentationDict` (a list of two strings alone would be a list of two representations).
RepresentationsLike: TypeAlias = (SQLRepresentation | tuple[str, str] | RepresentationDict
                                  | Sequence[RepresentationLike])

#: the view property that lets a replace drop a dialect the current version has
DROP_DIALECT_ALLOWED = "replace.drop-dialect.allowed"

_T = TypeVar("_T")


def _check_positions(since_position: Any, until_position: Any) -> None:
    """Refuse a bound of a range of log positions that is no 64-bit int (SQLite holds no integer
    beyond 64 bits: it would raise OverflowError)."""
    for position, what in ((since_position, "since_position"), (until_position, "until_position")):
        if position is not None and (type(position) is not int or not -(2**63) <= position < 2**63):
            raise ValidationError(f"{what} must be a log position (a 64-bit int), not {position!r}")


@dataclass(frozen=True, slots=True)
class ViewChange:
    """One change of an :meth:`ViewStore.alter_view` batch. Build them with the static methods. A
    change with a bad field (a key, SQL, dialect or name that is not one; a kind there is no method
    for), made by a static method or by the class itself, raises
    :class:`~viewstore.errors.ValidationError` as it is made, before any store is asked."""

    kind: str
    key: str | None = None
    value: str | None = None
    representation: SQLRepresentation | None = None

    def __post_init__(self) -> None:
        kind = self.kind
        if kind == "update_comment":
            if self.value is not None and not isinstance(self.value, str):
                raise ValidationError(f"a comment must be a string or None, not {self.value!r}")
        elif kind == "set_property":
            validate_property_value(validate_property_key(self.key), self.value)
        elif kind == "remove_property":
            validate_property_key(self.key)
        elif kind in ("add_representation", "update_representation"):
            if not isinstance(self.representation, SQLRepresentation):
                raise ValidationError(f"{kind} needs a representation, SQLRepresentation(dialect, sql), "
                                      f"not {self.representation!r}")
            # one made without validation is validated now (the same object when it was)
            object.__setattr__(self, "representation", checked(self.representation))
        elif kind == "remove_representation":
            if not isinstance(self.key, str) or not self.key.strip():
                raise ValidationError(f"bad dialect {self.key!r}")
        elif kind == "rename":
            key = self.key
            name = (normalize_name(key, "view name") if isinstance(key, str) and "." not in key
                    else identifier_str(to_identifier(key)) if isinstance(key, str) else None)
            if name is None:
                raise ValidationError(f"a rename needs the new name as text, not {key!r}")
            object.__setattr__(self, "key", name)  # as the library writes names: lower case
        else:
            raise ValidationError(f"unknown change {kind!r}; build changes with ViewChange's static methods")

    @staticmethod
    def update_comment(comment: str | None) -> "ViewChange":
        """Set the comment (None removes it)."""
        return ViewChange("update_comment", value=comment)

    @staticmethod
    def set_property(key: str, value: str) -> "ViewChange":
        """Set a view property (the key ``comment`` is the view comment, logged as the property it is
        set as: ``view.properties_set``, where :meth:`update_comment` logs ``view.comment_updated``)."""
        return ViewChange("set_property", key=key, value=value)

    @staticmethod
    def remove_property(key: str) -> "ViewChange":
        """Remove a view property; removing one the view lacks changes nothing."""
        return ViewChange("remove_property", key=key)

    @staticmethod
    def add_representation(representation: RepresentationLike) -> "ViewChange":
        """Add the SQL of a dialect the current version lacks (a new version)."""
        return ViewChange("add_representation", representation=_representation(representation))

    @staticmethod
    def update_representation(dialect: str, sql: str) -> "ViewChange":
        """Change the SQL of a dialect the current version has (a new version)."""
        return ViewChange("update_representation", representation=SQLRepresentation(dialect, sql))

    @staticmethod
    def remove_representation(dialect: str) -> "ViewChange":
        """Remove a dialect's SQL (a new version); the last representation cannot be removed (not even
        when a later change of the batch adds another: the changes apply in order)."""
        return ViewChange("remove_representation", key=dialect)

    @staticmethod
    def rename(new_name: IdentifierLike) -> "ViewChange":
        """Rename: a bare name stays in the namespace; a dotted identifier, a tuple or a list moves the view."""
        if isinstance(new_name, str):
            return ViewChange("rename", key=new_name)
        return ViewChange("rename", key=identifier_str(to_identifier(new_name)))


def _representation(value: Any) -> SQLRepresentation:
    if isinstance(value, SQLRepresentation):
        return checked(value)  # one made without validation is validated now
    if isinstance(value, dict):
        return SQLRepresentation(**value)
    if isinstance(value, (tuple, list)) and len(value) == 2:
        return SQLRepresentation(*value)
    raise ValidationError(f"a representation must be SQLRepresentation(dialect, sql) or (dialect, sql), not {value!r}")


def _representations(values: Any) -> tuple[SQLRepresentation, ...]:
    if isinstance(values, (SQLRepresentation, dict)) or (isinstance(values, tuple) and len(values) == 2
                                                         and all(isinstance(v, str) for v in values)):
        values = [values]
    if not isinstance(values, (list, tuple)):
        # the SQL alone (or None) is the usual slip: say what the argument takes, not "none given"
        hint = f": the SQL needs its dialect, as [('spark', {values!r})]" if isinstance(values, str) else ""
        raise ValidationError("representations must be a list of SQLRepresentation(dialect, sql) or (dialect, sql), "
                              f"not {values!r}{hint}")
    if not values:
        raise ValidationError("a view needs at least one SQL representation")
    if isinstance(values, list) and len(values) == 2 and all(isinstance(v, str) for v in values):
        # the slip of writing one representation as a list: say so rather than refuse "'spark'"
        raise ValidationError(f"representations {values!r} is a list of two representations, each a string: give "
                              f"one as a tuple {tuple(values)!r}, or in a list [{tuple(values)!r}]")
    reps = tuple(_representation(v) for v in values)
    _check_dialects(reps)
    return reps


def _check_dialects(reps: Iterable[SQLRepresentation]) -> None:
    seen: set[str] = set()
    for rep in reps:
        key = rep.dialect.lower()
        if key in seen:
            raise ValidationError(f"Invalid view version: Cannot add multiple queries for dialect {key}")
        seen.add(key)


def _column(value: Any) -> Column:
    if isinstance(value, Column):
        return checked(value)  # one made without validation is validated now
    if isinstance(value, dict):
        return Column(**value)
    if isinstance(value, (tuple, list)) and 2 <= len(value) <= 4:
        return Column(*value)
    raise ValidationError(f"a column must be Column(name, type, comment=None, nullable=True), not {value!r}")


def _columns(values: Any) -> tuple[Column, ...]:
    if values is None:
        raise ValidationError("columns are required (an empty list is allowed)")
    if not isinstance(values, (list, tuple)):
        raise ValidationError(f"columns must be a list, not {type(values).__name__}")
    cols = tuple(_column(v) for v in values)
    seen: set[str] = set()
    for c in cols:
        if c.name.lower() in seen:
            raise ValidationError(f"duplicate column name {c.name!r}")
        seen.add(c.name.lower())
    return cols


def _default_namespace(value: Any) -> tuple[str, ...]:
    if value is None:
        raise ValidationError("default_namespace is required (an empty list is allowed)")
    parts = (tuple(value.split(".")) if isinstance(value, str)
             else tuple(value) if isinstance(value, (list, tuple)) else None)
    if parts is None or not all(isinstance(p, str) and p.strip() for p in parts):
        raise ValidationError(f"bad default namespace {value!r}")
    return parts


def _summary(value: Any) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(k, str) and k and isinstance(v, str)
                                              for k, v in value.items()):
        raise ValidationError(f"a summary must be a dict of non-empty string keys to strings, not {value!r}")
    for key in value:
        check_unicode(key, "summary key")
    return dict(value)


def _security_mode(value: Any) -> str:
    if not isinstance(value, str) or value.upper() not in ("DEFINER", "INVOKER"):
        raise ValidationError(f"security_mode must be DEFINER or INVOKER, not {value!r}")
    return value.upper()


def check_definition(columns: Sequence[ColumnLike], representations: RepresentationsLike,
                     default_namespace: NamespaceLike, default_catalog: str | None = None,
                     comment: str | None = None, properties: dict[str, str] | None = None,
                     security_mode: str | None = "DEFINER", summary: dict[str, str] | None = None) -> dict[str, Any]:
    """The parts of a view definition as :meth:`ViewStore.create_view` and ``replace_view`` take
    them, checked and normalised without a store (the CLI checks its input before it starts a file).
    A ``security_mode`` of None stays None: a replace keeps the view's mode.

    Raises:
        ValidationError: a bad column, type, representation, dialect, namespace, property, ...
    """
    props = validate_properties(properties)
    if comment is not None:
        if not isinstance(comment, str):
            raise ValidationError(f"a comment must be a string, not {comment!r}")
        props["comment"] = comment
    if default_catalog is not None and (not isinstance(default_catalog, str) or not default_catalog.strip()):
        raise ValidationError(f"bad default catalog {default_catalog!r}")
    return {"columns": _columns(columns), "representations": _representations(representations),
            "default_namespace": _default_namespace(default_namespace), "default_catalog": default_catalog,
            "properties": props, "comment_given": comment is not None,
            "security_mode": None if security_mode is None else _security_mode(security_mode),
            "summary": _summary(summary)}


def _a_number(value: TimeLike) -> bool:
    """Whether a time was given as a number (or a string of digits) that :func:`to_epoch_ms` reads as
    epoch milliseconds, not as a datetime, a date or an ISO string."""
    if isinstance(value, str):
        text = value.strip()
        return re.fullmatch(r"-?[0-9]+", text) is not None and not (len(text) == 8 and text.isdigit())  # a date
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def to_epoch_ms(value: TimeLike, what: str = "time") -> int:
    """Epoch milliseconds from a datetime (naive means UTC), a date, an ISO string or a number.

    A string of digits is epoch milliseconds, except eight digits: a date as ISO 8601's basic format
    writes it (``20261125``), refused if it is not one (as milliseconds it would be a moment of
    1970-01-01 or -02, which no store holds). A date alone with a time zone (``2026-11-25+01:00``)
    is that day's midnight in that zone. A date and a time are joined by ``T`` (``t``, or a blank as
    RFC 3339 allows; Python's parser takes any character there). A number is floored to its
    millisecond, as a datetime is.

    Raises:
        ValidationError: not a time, or one beyond the 64-bit milliseconds the log stores.
    """
    if isinstance(value, bool):
        raise ValidationError(f"bad {what} {value!r}")
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValidationError(f"bad {what} {value!r}: not a finite number of epoch milliseconds")
        value = math.floor(value)  # the millisecond it falls in, as for a datetime (int() rounds -1.5 up to -1)
    if isinstance(value, str):
        text = value.strip()
        basic_date = len(text) == 8 and text.isascii() and text.isdigit()  # unsigned: -12345678 is ms
        if basic_date and not _basic_date(text):
            raise ValidationError(f"bad {what} {text!r}: eight digits are a date (YYYYMMDD), and this is none")
        if re.fullmatch(r"-?[0-9]+", text) and not basic_date:
            value = int(text)
        else:
            try:
                value = _zoned_date(text) or dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
                if not _date_then_time(text):
                    raise ValueError("a date and a time are joined by T")
            except ValueError as e:
                raise ValidationError(f"bad {what} {text!r}: use ISO 8601 (2026-11-22T10:00:00Z) or epoch ms") from e
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        value = dt.datetime(value.year, value.month, value.day)
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.timezone.utc)
        # in integers: value.timestamp() * 1000 is a float, 1 ms low for about one time in five
        value = (value - _EPOCH) // dt.timedelta(milliseconds=1)
    if not isinstance(value, int):
        raise ValidationError(f"bad {what} {value!r}: give a datetime, an ISO string or epoch milliseconds")
    if not -(2**63) <= value < 2**63:
        raise ValidationError(f"bad {what} {value}: beyond the 64-bit epoch milliseconds the log stores")
    return value


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


#: a time zone at the end of an ISO string (``Z``, ``+01:00``), which a date alone may carry
_ZONE = re.compile(r"(?:Z|[+-][0-9]{2}(?::?[0-9]{2})?)$")


def _zoned_date(text: str) -> dt.datetime | None:
    """A date alone with a time zone (``2026-11-25+01:00``, ``20261125-05``, ``2026-11-25Z``): its
    midnight in that zone; None for any other text. Python's ISO parser takes any character between
    a date and a time, so it reads such a zone as a time of day (``+01:00`` as 01:00, in UTC).

    Raises:
        ValueError: a zone of 24 hours or more, or of 60 minutes or more.
    """
    zone = _ZONE.search(text)
    if zone is None or zone.start() > 10:  # no zone, or after more than a date (2026-11-25, 2026-W48-3)
        return None
    try:  # (a date alone never parses with its last part cut off as a zone: "2026-11" of "2026-11-25")
        day = dt.date.fromisoformat(text[:zone.start()])
    except ValueError:
        return None
    offset = zone.group()
    hours, minutes = (0, 0) if offset == "Z" else (int(offset[1:3]), int(offset[-2:]) if len(offset) > 3 else 0)
    if minutes > 59:
        raise ValueError(f"no time zone {offset}")
    sign = -1 if offset[0] == "-" else 1  # (a zone of 24 hours or more is a ValueError of timezone's)
    return dt.datetime.combine(day, dt.time(), dt.timezone(sign * dt.timedelta(hours=hours, minutes=minutes)))


def _date_then_time(text: str) -> bool:
    """Whether ``text``, which Python's ISO parser has read, is a date alone (with a zone or not) or
    a date, ``T`` (``t`` or a blank, as RFC 3339 allows) and a time: the parser takes any character
    between the two, so it read ``2026-11-25x10:00`` as 10:00."""
    return _date_alone(text) or any(_is_date(text[:at]) for at in range(11)  # a date: ten characters at most
                                    if text[at:at + 1] in ("T", "t", " "))


def _date_alone(text: str) -> bool:
    """Whether ``text`` is what the ISO parser takes as a date alone, with a time zone or not."""
    return _is_date(text) or _is_date(_ZONE.sub("", text))


def _is_date(text: str) -> bool:
    try:
        dt.date.fromisoformat(text)
    except ValueError:
        return False
    return True


def _until_ms(value: TimeLike) -> int:
    """The inclusive end of a time range: a date alone (a ``date``, ``2026-11-25``, ``20261125``,
    ``2026-W48-3``) means the whole of that day, up to its last millisecond."""
    ms = to_epoch_ms(value, "until")
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return ms + 86_400_000 - 1
    if isinstance(value, str) and _date_alone(value.strip()):
        return ms + 86_400_000 - 1
    return ms


def _basic_date(text: str) -> bool:
    try:
        dt.date(int(text[:4]), int(text[4:6]), int(text[6:]))
    except ValueError:
        return False
    return True


def _all_of(values: Any, kind: type, what: str) -> list[Any]:
    if not isinstance(values, (list, tuple)) or not all(isinstance(v, kind) for v in values):
        raise ValidationError(f"{what} must be a list of {kind.__name__}, not {values!r}"[:300])
    return list(values)


def _named(check: Callable[..., Any], value: Any, where: str, *args: Any) -> Any:
    """``check(value, *args)``, its ValidationError told with ``where`` the value is (``versions[2]: ...``)."""
    try:
        return check(value, *args)
    except ValidationError as e:
        raise ValidationError(f"{where}: {e}") from e


def _check_batch(batch: Any) -> None:
    if type(batch) is not int or batch < 1:
        raise ValidationError(f"batch must be a positive number of events, not {batch!r}")


def _check_expected(value: Any) -> None:
    if type(value) is not int:
        raise ValidationError(f"expected_version must be a stream version (an int), not {value!r}")


def _check_params(params: Any) -> None:
    """Refuse query parameters that are no sequence or dict, or that are text or bytes: sqlite3
    would take 'alice' apart into five values ("there are 5 supplied") and b'x' into one number, and
    binds :name ones from a dict only (a UserDict it reads as a sequence, raising KeyError 0)."""
    if isinstance(params, (str, bytes, bytearray)) or not isinstance(params, (Sequence, dict)):
        raise ValidationError(f"params must be a list or tuple of values (one per ?) or a dict (one per :name), "
                              f"not {params!r}; one value is given as [value]")


def _expect_missing(ident: Identifier, expected_version: int | None) -> None:
    """A view that does not exist is at stream version 0: any other expectation is stale."""
    if expected_version is not None:
        _check_expected(expected_version)
        if expected_version != 0:
            raise ConcurrencyError(f"view {identifier_str(ident)} does not exist (expected version "
                                   f"{expected_version})", view=identifier_str(ident), expected=expected_version,
                                   actual=0)


def _either(names: list[str]) -> str:
    """Names as a message offers them: ``a``, ``a or b``, ``a, b or c``."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def _closest(typed: str, typos: list[str], names: list[str], cutoff: float) -> list[str]:
    """Those a suggestion for ``typed`` offers, at most :data:`SUGGESTED_NAMES`: first ``typos`` (names
    one typo away, however low difflib's ratio of a short one: ``bgi`` and ``big``, 0.67), then those of
    ``names`` at least ``cutoff`` close by that ratio; each closest first, as difflib ranks them (by
    ratio, a tie the greater name first). The ratio of one typo is counted, not run (difflib's matching
    of a long name costs milliseconds): its matches are the letters the typo left. A typed text of one
    or two letters is left to the cutoff: a typo is half of it or more, and ``x`` would be offered
    every name of one letter."""
    def ratio(name: str) -> float:
        return 2 * (min(len(typed), len(name)) - (len(typed) == len(name))) / (len(typed) + len(name))
    found = sorted(typos, key=lambda n: (ratio(n), n), reverse=True)[:SUGGESTED_NAMES] if len(typed) > 2 else []
    if len(found) < SUGGESTED_NAMES:
        found += _close_matches(typed, [n for n in names if n not in found], SUGGESTED_NAMES - len(found), cutoff)
    return found


def _close_matches(typed: str, names: list[str], n: int, cutoff: float) -> list[str]:
    """``difflib.get_close_matches(typed, names, n, cutoff)``, its full ratio run for fewer names: those
    whose quick ratio (a bound of the full one: the letters in common, in any order) passes the cutoff
    are compared best bound first, until no bound left can beat the n-th ratio found. difflib's ratio
    of two long names much alike (``q`` * 150 and a letter) costs milliseconds, and a window of such
    names all pass its quick filters: get_close_matches ran it for every one."""
    matcher = difflib.SequenceMatcher()
    matcher.set_seq2(typed)  # difflib caches what it learns of the second sequence: the typed one
    bounded = []
    for name in names:
        matcher.set_seq1(name)
        if matcher.real_quick_ratio() >= cutoff:
            bound = matcher.quick_ratio()
            if bound >= cutoff:
                bounded.append((bound, name))
    best: list[tuple[float, str]] = []  # the n best (ratio, name) so far, the least first
    for bound, name in sorted(bounded, reverse=True):
        if len(best) == n and bound < best[0][0]:
            break  # (a bound equal to the n-th ratio may still tie it and win on the name, as difflib ranks)
        matcher.set_seq1(name)
        ratio = matcher.ratio()
        if ratio >= cutoff:
            if len(best) < n:
                heapq.heappush(best, (ratio, name))
            else:
                heapq.heappushpop(best, (ratio, name))
    return [name for _, name in sorted(best, reverse=True)]


def _near(typed: str, near: Callable[[str, int], list[str]], among: Callable[[list[str]], list[str]],
          next_letters: Callable[[list[str], int, int], list[tuple[str, str]]]) -> tuple[list[str], list[str]]:
    """What a suggestion for ``typed`` (a name in its namespace, or a namespace) compares with, of the
    live ones ``near``, ``among`` and ``next_letters`` read, and which of those are one typo away: the
    :data:`SUGGESTION_WINDOW` each side of it in sort order (``near``) and those one typo anywhere would
    make of it: a letter added, dropped or changed, or two neighbours swapped, wherever they sort
    (``among`` looks them up). A typo at position i leaves the first i letters, so only the positions up
    to the longest start the typed text shares with a live one (that of a neighbour in the window) are
    tried, in the first :data:`SUGGESTION_POSITIONS`, and a letter is added or changed there only as one
    of those that follow its start among the live ones (``next_letters``: up to
    :data:`SUGGESTION_LETTERS` a position, :data:`SUGGESTION_SEEKS` in all). Index seeks all, however
    many there are to compare with. Returns (those compared, those one typo away)."""
    found = near(typed, SUGGESTION_WINDOW)
    if not found:
        return [], []
    # the live ones sharing the longest start with it sort next to it: its neighbours in the window
    neighbours = (max((n for n in found if n < typed), default=""), min((n for n in found if n > typed), default=""))
    reach = min(max(len(os.path.commonprefix((typed, n))) for n in neighbours), SUGGESTION_POSITIONS - 1)
    guesses = {typed[:i] + typed[i + 1:] for i in range(min(reach + 1, len(typed)))}
    guesses.update(typed[:i] + typed[i + 1] + typed[i] + typed[i + 2:]
                   for i in range(min(reach + 1, len(typed) - 1)))
    for prefix, letter in next_letters([typed[:i] for i in range(reach + 1)], SUGGESTION_LETTERS,
                                       SUGGESTION_SEEKS):
        guesses.update((prefix + letter + typed[len(prefix) + 1:], prefix + letter + typed[len(prefix):]))
    guesses -= {typed, ""}
    typos = among(sorted(guesses))
    return list(dict.fromkeys(found + typos)), typos


def _time_text(ms: int, form: str = "table") -> str:
    """An epoch-ms time as everything viewstore prints writes it, in UTC, always with a four-digit
    year: ``table`` ``2026-11-25 18:43:50.232`` (a table's cell, the zone said in its header),
    ``utc`` ``2026-11-25 18:43:50.232 UTC``, ``second`` ``2026-11-25 18:43:50 UTC`` (a message's)
    or ``iso`` ``2026-11-25T18:43:50.232+00:00`` (JSON's); ``1234 ms`` where a datetime cannot hold
    it (beyond the years 1 to 9999: an imported file may carry any 64-bit time)."""
    second, milli = divmod(ms, 1000)
    texts = _second_texts(second)
    if texts is None:
        return f"{ms} ms"
    if form == "table":
        return f"{texts[0]}.{milli:03d}"
    if form == "iso":
        return f"{texts[1]}.{milli:03d}+00:00"
    return f"{texts[0]}.{milli:03d} UTC" if form == "utc" else f"{texts[0]} UTC"


@functools.lru_cache(maxsize=4096)
def _second_texts(second: int) -> tuple[str, str] | None:
    """A second of epoch time (UTC) as :func:`_time_text` starts it, with a space (``0768-11-25 18:43:50``)
    and as ISO 8601 writes it (``0768-11-25T18:43:50``); None where a datetime cannot hold it.

    Written by hand, as ``strftime("%Y")`` leaves out the zeros of a year before 1000 on some C
    libraries. Remembered, as the events of a table come in runs of the same second: writing a
    datetime out costs a few microseconds, more than anything else in an event's row but its details.
    """
    try:
        at = _EPOCH + dt.timedelta(seconds=second)  # in integers: through a float, 1 ms off now and then
    except OverflowError:
        return None
    day = f"{at.year:04d}-{at.month:02d}-{at.day:02d}"
    clock = f"{at.hour:02d}:{at.minute:02d}:{at.second:02d}"
    return f"{day} {clock}", f"{day}T{clock}"


def _let_go_text(position: int, kind: str, target: object, actor: object, ms: object, form: str,
                 after_target: str = "") -> str:
    """How a view let go of a name, from the event that did (its log position, type, identifier,
    actor and time), as the errors of a name no view has say it: ``dropped at T by A``, or
    ``renamed to X at T by A`` (``after_target``, a note such as "(live)", written after X), the time
    as :func:`_time_text`'s ``form``.

    Raises:
        CorruptLogError: the event's time is not an integer or its actor not text.
    """
    if type(ms) is not int or not isinstance(actor, str):
        raise CorruptLogError(f"event at position {position} has a time that is not an integer or an "
                              "actor that is not text")
    by = f"at {_time_text(ms, form)} by {actor if actor.isprintable() else repr(actor)}"
    return f"dropped {by}" if kind == "view.dropped" else f"renamed to {_held(target)}{after_target} {by}"


def _version_json(version_id: int, timestamp_ms: int, schema_id: int, columns: Sequence[Column],
                  reps: Sequence[SQLRepresentation], default_catalog: str | None,
                  default_namespace: Sequence[str], summary: dict[str, str]) -> dict[str, Any]:
    return {"version_id": version_id, "timestamp_ms": timestamp_ms, "schema_id": schema_id,
            "columns": [_column_json(c) for c in columns],
            "representations": [{"dialect": r.dialect, "sql": r.sql} for r in reps],
            "default_catalog": default_catalog, "default_namespace": list(default_namespace),
            "summary": dict(summary)}


def _column_json(c: Column) -> dict[str, Any]:
    return {"name": c.name, "type": str(c.type), "comment": c.comment, "nullable": c.nullable}


def _items_key(values: Iterable[dict[str, Any]]) -> tuple[tuple[tuple[str, Any], ...], ...]:
    """A list of string-keyed dicts (columns, representations) as a hashable key: two lists have the
    same key when they are equal (dicts compare by their items, in any order)."""
    return tuple(tuple(sorted(d.items())) for d in values)


def _definition_key(version: dict[str, Any]) -> Hashable:
    """What makes two versions the same definition, so that a replace or an alteration reuses an
    existing version instead of adding one (Iceberg's rule): the schema id, the representations in
    their order, the default catalog and namespace, and the summary. Versions with equal keys are
    equal in each of these, and only those are. It reads those fields alone (``definition_only``)."""
    return (version["schema_id"], _items_key(version["representations"]), version.get("default_catalog"),
            tuple(version.get("default_namespace") or ()), tuple(sorted((version.get("summary") or {}).items())))


def _columns_key(version: dict[str, Any]) -> Hashable:
    """The structure of a version's schema: equal columns, equal key."""
    return _items_key(version["columns"])


def _schema_id(state: ViewState, columns_json: list[dict[str, Any]]) -> int:
    """Iceberg's rule: a structurally identical schema reuses its id (of the first version added with
    it), otherwise highest + 1 (the state is a live view's: it has a version; a new view's first
    version takes schema id 0 where it is made)."""
    same = state.versions.first_place(_columns_key, _items_key(columns_json))
    if same is not None:
        return state.versions.at(same)[1]["schema_id"]
    return state.versions.max_schema_id() + 1


_logger = logging.getLogger("viewstore")

#: how many views a store keeps cached (their folded states and Views)
CACHED_VIEWS = 2048
#: a cached view that another connection changed by at most this many events is brought up to date by
#: folding them (see ViewStore._catch_up); beyond that, reading its projection rows costs less
CATCH_UP_EVENTS = 64
#: at most this many close names suggested by the message of a name no view ever had, and how close
#: (difflib's ratio; 0.75 lets one typo in a name of four letters through, not names merely alike)
SUGGESTED_NAMES = 3
SUGGESTION_CUTOFF = 0.75
#: the names a suggestion compares with, each side of the typed name in its namespace's sort order, and
#: the namespaces each side of a mistyped namespace: a namespace of 100,000 views, or a store of 100,000
#: namespaces, is not read whole for an error message (a typo past the first letters sorts beside the
#: name it misspells)
SUGGESTION_WINDOW = 500
#: beyond the window, the names one typo would make of the typed one are looked up (see _near): a letter
#: added or changed at a position is one of at most this many that follow the letters before it among the
#: namespace's names (or the namespaces)
SUGGESTION_LETTERS = 100
#: and at most this many such letters are sought in all, one seek of an index each
SUGGESTION_SEEKS = 500
#: a typo is looked for in at most this many first positions of the typed name (a name's longest, 255
#: letters, and one after it): a namespace of several levels may be longer
SUGGESTION_POSITIONS = 256

#: what a write of a store inside the block of one of its streams of events (which holds a read open
#: on its connection, so that BEGIN is refused) is told
_IN_STREAM = ("a write cannot run inside the with block of a stream of events (stream_events, stream_history), "
              "which reads one state of the log: write after the block, or list() the events in it first")

#: what a transaction() that SQLite ended when a write in it failed is told (see ViewStore._lose_batch)
_LOST = ("the transaction was rolled back whole when a write in it failed (SQLite ends a transaction on an "
         "interrupt, a full disk or an I/O error)")

#: the store files this thread holds a write transaction on (see ViewStore._write_transaction)
_WRITING = threading.local()

#: per thread: how many stores it holds while it runs code of the caller's (a transaction() block, a
#: signal receiver or callback run under the store), see thread_holds_a_store
_HOLDING = threading.local()


def thread_holds_a_store() -> bool:
    """Whether the calling thread runs code of the caller's while it holds a store: inside a
    :meth:`ViewStore.transaction` block, or in a signal receiver or callback a store runs while it
    is held. Another thread waiting for such a thread to let go may wait for ever if this one waits
    for it in turn (``viewstore.spark`` uses this to bound its own waits)."""
    return getattr(_HOLDING, "count", 0) > 0


def check_progress(progress: Callable[[int, int], None] | None) -> Callable[[int, int], None] | None:
    """``progress`` as the long calls take it (:meth:`ViewStore.rebuild`, and ``viewstore.spark``'s
    ``register_views``, ``check_views`` and ``import_metastore_views``): None, or a callable to be
    called as ``progress(done, total)``.

    Raises:
        ValidationError: ``progress`` is neither (checked before the call does anything).
    """
    if progress is not None and not callable(progress):
        raise ValidationError(f"progress must be callable as progress(done, total), not {progress!r}")
    return progress


class CallerRaised(BaseException):
    """What a caller's callback (a ``progress``) raised, on its way out of the call that called it:
    a BaseException, so no handler on the way (the write's typing of sqlite3 and Unicode errors,
    Spark's and py4j's) takes it for its own; the call raises :attr:`error` as it was."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(error)
        self.error = error


@contextmanager
def _holding() -> Iterator[None]:
    _HOLDING.count = getattr(_HOLDING, "count", 0) + 1
    try:
        yield
    finally:
        _HOLDING.count -= 1


#: a mark for each transaction() block the task (or other context) running holds open, of any store:
#: asyncio tasks share their thread, so another task does not wait for a block held open across an
#: ``await`` (see ViewStore._usable), while a block of another store inside one leaves it usable
_BLOCK: contextvars.ContextVar[frozenset[object]] = contextvars.ContextVar("viewstore_block", default=frozenset())
_OTHER_TASK = ("a transaction of this store is open in this thread, held by another task (asyncio?): this call "
               "would see, or join, what the block has not committed, and cannot wait for it here; make it "
               "once the block has ended")


class _Plan:
    """The events one call decided, with the state they apply to."""

    def __init__(self, state: ViewState | None, view_id: str, identifier: Identifier, actor: str, now: int,
                 stream_version: int) -> None:
        self.state = state
        self.view_id = view_id
        self.identifier = identifier
        self.actor = actor
        self.now = now
        self.next_version = stream_version + 1
        self.commit_id = os.urandom(16).hex()  # 128 random bits, as uuid4().hex has, at a fifth of the cost
        self.events: list[Event] = []
        #: for a long write (an import's history): called with how many events are stored so far, every
        #: ``stored_every`` of them and after the last (see ViewStore._write_once)
        self.on_stored: Callable[[int], None] | None = None
        self.stored_every = 0

    def add(self, cls: type[Event], **fields: Any) -> None:
        self.events.append(cls(position=None, commit_id=self.commit_id, view_id=self.view_id,
                               stream_version=self.next_version, identifier=self.identifier, actor=self.actor,
                               occurred_at=self.now, **fields))
        self.next_version += 1


class ViewStore:
    """An embedded catalog of logical SQL views kept as an append-only event log in SQLite.

    Args:
        path: the SQLite file (a store is started in it if it is missing or empty).
        catalog: the catalog name: the default catalog of views created without one.
        actor: who makes the changes (default: the operating-system user).
        durability: ``"normal"`` (WAL, synchronous=NORMAL: survives a process crash) or ``"full"``
            (synchronous=FULL: survives power loss too).
        warehouse: the folder under which Iceberg metadata is exported (default: ``warehouse``
            beside the database file).

    One store holds one SQLite connection shared by all threads under a lock; several processes
    may open the same file. Every public call either succeeds completely or raises a
    :class:`~viewstore.errors.ViewStoreError` and writes nothing (a call of the wrong shape, a required
    keyword argument left out or an unknown one, is Python's own TypeError, before anything is read).
    Each write of one view returns the :class:`~viewstore.model.View` as the write left it
    (:meth:`drop_view`: whether there was one).

    Raises:
        ValidationError: a bad path, catalog name, actor or ``durability``.
        ViewStoreError: a file that cannot be opened, or that holds another
            program's tables.

    Besides the errors each method lists, any call may raise :class:`~viewstore.errors.ViewStoreError`
    when the store is closed, when SQLite fails (an interrupt, an I/O error), or when it comes from
    another asyncio task while a :meth:`transaction` is open in this thread; and any write when a
    ``before_commit`` receiver vetoes it (its exception, wrapped unless it is a ViewStoreError), or
    :class:`~viewstore.errors.ConcurrencyError` with ``busy`` set when another process kept the
    file locked (about 30 s, during which :data:`~viewstore.signals.lock_wait` is sent about once a
    second; what a signal's handler raises meanwhile, Ctrl-C's KeyboardInterrupt, ends the wait at
    once and reaches the caller as itself, nothing written). A call that reads a damaged row
    (written behind the library's back) raises :class:`~viewstore.errors.CorruptLogError`; where the
    damage is in the projection rows, or a view's rows are behind its log (or ahead of it), its
    subclass :class:`~viewstore.errors.DamagedProjectionsError`, and :meth:`rebuild` repairs the
    projections.
    """

    def __init__(self, path: str | Path, *, catalog: str | None = None, actor: str | None = None,
                 durability: str = "normal", warehouse: str | Path | None = None) -> None:
        # resolved once: a later chdir must not make query() (which opens the file again) read another
        self.path = to_path(path, "store path").resolve()
        if catalog is not None and (not isinstance(catalog, str) or not catalog.strip()):
            raise ValidationError(f"bad catalog name {catalog!r}")
        self.catalog = catalog
        self.actor = actor if actor is not None else _os_user()
        if not isinstance(self.actor, str) or not self.actor.strip():
            raise ValidationError(f"bad actor {actor!r}: an actor is a name "
                                  "(leave it out for the operating-system user)")
        self.durability = durability
        self.warehouse = to_path(warehouse, "warehouse") if warehouse is not None else self.path.parent / "warehouse"
        self._conn = connect(self.path, durability=durability, extra_ddl=DDL)
        self._log = EventLog(self._conn)
        self._projections = Projections(self._conn)
        self._lock = threading.RLock()
        # identifier -> (state, its View or None, the data_version at which it was known current)
        self._cache: dict[Identifier, tuple[ViewState, View | None, int]] = {}
        self._data_version = self._log.data_version()
        self._repairs = self._projections.repairs()
        self._store_id: str | None = None  # read (or made) when first asked for
        self._closed = False
        # while transaction() is open: the (events, stored rows) of each write in it, for the signals
        self._batch: list[tuple[list[Event], list[tuple[int, dict[str, Any]]]]] | None = None
        self._in_call = False  # a write of the open transaction is running (see _write_transaction)
        self._batch_thread: int | None = None  # the thread that opened it
        self._batch_marker: object | None = None  # and its mark in _BLOCK, in the context that opened it
        self._batch_time = 0  # when it took the write lock: the time of every event written in it
        self._batch_lost: BaseException | None = None  # the error with which SQLite ended it (see log.savepoint)
        self._calling_out = 0  # receivers or callbacks running while the store is held (see _wait_turn)
        # what a write's wait for another connection's lock calls (see _FileWrite): bound once, not per write
        self._on_lock_wait = self._lock_waited

    # -- lifecycle --------------------------------------------------------------------------------

    def close(self) -> None:
        """Close the store's connection (again: nothing); later calls raise ViewStoreError."""
        with self._lock:
            if not self._closed:
                self._closed = True
                self._conn.close()

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called: a closed store refuses every call."""
        return self._closed

    def __enter__(self) -> "ViewStore":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ViewStore({str(self.path)!r}, catalog={self.catalog!r}, actor={self.actor!r})"

    # -- reading ----------------------------------------------------------------------------------

    def _fresh(self) -> None:
        """Note whether another connection has committed since we last looked (SQLite's data_version).

        Cached views cached before such a commit are checked again before use (see _live_state).
        """
        self._usable()
        self._note_version(self._log.data_version())

    def _closed_error(self) -> ViewStoreError:
        """The error of a call to a closed store: what is wrong, and what to do (a closed store stays closed)."""
        return ViewStoreError(f"the store is closed (open a new ViewStore on {self.path})")

    def _usable(self) -> None:
        """Under the store's lock: refuse a call to a closed store, or one from another task (or
        context) of the thread that holds a :meth:`transaction` open."""
        if self._closed:
            raise self._closed_error()
        if self._batch is not None and self._batch_marker not in _BLOCK.get():
            raise ViewStoreError(_OTHER_TASK)

    def _note_version(self, version: int) -> None:
        """Take note of SQLite's data_version as read just now (see :meth:`_fresh`)."""
        if version != self._data_version:
            repairs = self._projections.repairs()
            if repairs != self._repairs:  # another store's rebuild() repaired rows no stream version names
                self._repairs = repairs
                self._cache.clear()
                self._projections.forget_parsed()
        self._data_version = version

    @contextmanager
    def _reading(self, version: int | None = None) -> Iterator[None]:
        """The store's lock and one read snapshot of the file (see :func:`viewstore.log.snapshot`):
        what a read finds in several tables, or by name and then by id, comes from one state of the
        log, even while other processes commit.

        Args:
            version: a data_version the caller read just before (under the lock), so as not to
                read it again; the snapshot may then be newer, and the cache only more cautious.
        """
        with self._lock:
            if self._closed or self._batch is not None:  # (most calls need not call it)
                self._usable()
            with snapshot(self._conn):
                if version is None:
                    self._fresh()
                else:
                    self._note_version(version)
                yield

    def _live_state(self, ident: Identifier) -> ViewState | None:
        cached = self._cache.get(ident)
        if cached is not None:
            state = cached[0]
            if cached[2] == self._data_version:  # nobody else committed since it was known current
                return state
            caught_up = self._catch_up(ident, state, cached[1])
            if caught_up is not None:
                return caught_up
            del self._cache[ident]
        view_id = self._projections.live_view_id(identifier_str(ident[:-1]), ident[-1])
        if view_id is None:
            return None
        loaded = self._projections.load(view_id)
        if loaded is not None:
            self._remember(ident, (loaded, None, self._data_version))
        return loaded

    def _free_in_log(self, ident: Identifier) -> None:
        """Check a name the projections hold free (``_live_state`` found no view) against the log,
        before a read says no view has it or a write gives it to a view: a view of the log that
        holds it still means the views rows are damaged (one deleted, or its name or live flag
        changed), and a write giving the name to another view would leave the log two live views of
        one name, which ``rebuild()`` cannot repair. One statement (:meth:`EventLog.holder`).

        Raises:
            DamagedProjectionsError: the log's view holds the name.
        """
        held = self._log.holder(identifier_str(ident))
        if held is not None:
            raise held_in_log(identifier_str(ident), *held)

    def _catch_up(self, ident: Identifier, state: ViewState, view: View | None) -> ViewState | None:
        """A cached state (and its View, if built) after other connections committed: brought up to
        date by folding the events its stream gained since, usually none (they changed other views).
        None when it gained more than :data:`CATCH_UP_EVENTS` (reading the projection rows then
        costs less), or when those events dropped the view or renamed it away from ``ident``.

        Folding the stored events with :func:`apply` is how the projection rows were made in the
        first place, so this gives the rows' state without reading and parsing every version of
        the view again: a load after another process's commit costs that commit, not the view's
        history. The view that is live under ``ident`` after its own events is the one live under
        it now, since two live views never share an identifier.
        """
        rows = self._log.stream_rows(state.view_id, after_version=state.stream_version, limit=CATCH_UP_EVENTS + 1)
        if not rows:  # its stream did not move, so neither did it
            self._cache[ident] = (state, view, self._data_version)
            return state
        if len(rows) > CATCH_UP_EVENTS:
            return None
        states = {state.view_id: state.copy()}
        fold_stored(states, rows)
        caught_up = states[state.view_id]
        if not caught_up.live or caught_up.identifier != ident:
            return None
        caught_up.current_version()  # checked now (a rollback may have made a version read but not parsed current)
        # What the fold marks as still to store, the other connection stored: a write starts from a
        # copy(), which clears those marks; and the views row keeps the name and live flag it had.
        new_view = state_to_view(caught_up) if view is not None else None
        self._remember(ident, (caught_up, new_view, self._data_version))
        return caught_up

    def _remember(self, ident: Identifier, entry: tuple[ViewState, View | None, int]) -> None:
        """Cache a view's state, forgetting the oldest entry beyond :data:`CACHED_VIEWS` (a store that
        has loaded 100,000 views must not hold them all: that was 788 MB)."""
        cache = self._cache
        cache[ident] = entry
        if len(cache) > CACHED_VIEWS:
            del cache[next(iter(cache))]  # insertion order: the oldest (a bound on memory, not an LRU)

    def _view(self, ident: Identifier, state: ViewState) -> View:
        """The View of a live state that :meth:`_live_state` gave for ``ident``, cached with it."""
        cached = self._cache.get(ident)
        if cached is not None and cached[0] is state and cached[1] is not None:
            return cached[1]
        view = state_to_view(state)
        self._remember(ident, (state, view, self._data_version))
        return view

    def load_view(self, identifier: IdentifierLike, *, as_of: AsOf | None = None) -> View:
        """Load a view: its current state, or its state at ``as_of``.

        ``as_of`` is a time (:data:`TimeLike`: a datetime, naive meaning UTC; a date; an ISO 8601 string;
        epoch ms) or an :class:`Event` of a view that carried this identifier (one that
        ``events(view=identifier)`` lists: the view :meth:`history` shows, or an earlier one of that name).
        At a time, the view that had this identifier then is returned; if none had, the view known
        by this identifier now (the live one, else the one dropped last under it, as :meth:`history`
        picks; not one renamed away from it since, known by its new name) is returned as it was
        then (under its old name). Times have millisecond resolution, so two
        commits in one millisecond are one moment; an event is exact: the view right after that
        event's commit, whole (every event of one ``alter_view`` batch gives the view the batch left;
        each write of a :meth:`transaction` is a commit of its own). A name a view held only inside
        one commit (``alter_view`` renaming it twice) or one :meth:`transaction` is in its history, so
        ``as_of`` that event finds the view, but no time names it. An imported view's events keep
        its source's times (see :meth:`import_view`), so a time before the import gives the view as
        that history says it was, a state this store never held itself.

        Raises:
            NoSuchViewError: no live view has that identifier (at that time, where the view's history
                begins then said, and a number that read as seconds would fall in it said to look like
                seconds; a time in a gap of the name's history told what ended it before and what gave
                it back after; or the event dropped it).
            ValidationError: a bad identifier or time, or an event of no view that carried this
                identifier, or not of this store's log.
            DamagedProjectionsError: the view's projection rows are damaged, or behind or ahead of
                its log (:meth:`rebuild` repairs them from the log).
        """
        ident = to_identifier(identifier)
        if isinstance(as_of, Event):
            return self._load_at_event(ident, as_of)
        if as_of is not None:
            return self._load_as_of(ident, to_epoch_ms(as_of, "as_of"), as_of)
        with self._lock:
            if self._closed or self._batch is not None:  # (a load from the cache need not call it)
                self._usable()
            cached = self._cache.get(ident)
            version = self._log.data_version()
            if cached is not None and cached[1] is not None and cached[2] == version:
                return cached[1]  # nobody committed since it was known current: no snapshot needed
            with self._reading(version):
                state = self._live_state(ident)
                if state is None:
                    raise self._no_such_view(ident)
                return self._view(ident, state)

    def _fold_until(self, view_id: str, until_ms: int | None, event: Event | None = None) -> ViewState | None:
        """The state of a stream at a time, or right after the commit of one of its events (from the
        latest snapshot before). That event must be the log's row at its stream version, else
        ValidationError; the events after it that share its row's commit are folded too."""
        version = event.stream_version if event is not None else None
        # as_of an event: from a snapshot before its row, so that the row itself, and so its commit, is read
        state = (self._projections.snapshot_before(view_id, until_ms, None if version is None else version - 1)
                 if until_ms is not None or version is not None else None)
        after = state.stream_version if state else 0
        states = {view_id: state} if state is not None else {}
        commit: str | None = None  # the commit of the event's row, once read
        for row in self._log.stream_cursor(view_id, after_version=after):
            try:
                if until_ms is not None and row[7] > until_ms:
                    break  # a stream's times never go backwards (see _now), so no later event is earlier
                if version is not None and row[3] > version and row[1] != commit:
                    break
            except TypeError as e:
                raise CorruptLogError(f"event at position {row[0]} has a time or a stream version that is not "
                                      f"an integer (time {_held(row[7], int)}, "
                                      f"stream version {_held(row[3], int)})") from e
            if event is not None and row[3] == version:
                if row[0] != event.position:
                    break
                commit = row[1]
            fold_stored(states, (row,))
        if event is not None and commit is None:
            raise ValidationError(f"that event ({event.type} of {event.view}, stream version "
                                  f"{event.stream_version}) is not in this store's log")
        state = states.get(view_id)
        if state is not None and state.live:
            state.current_version()  # checked now, so the View built of it reads a good current version
        return state

    def _load_at_event(self, ident: Identifier, event: Event) -> View:
        name = identifier_str(ident)
        with self._reading():
            if event.view_id not in self._log.streams_that_took(name):
                if not self._log.stream_rows(event.view_id, limit=1):  # of no view here: say so, not "not of x"
                    raise ValidationError(f"that event ({event.type} of {event.view}) is not in this store's log "
                                          "(an event of another store?)")
                raise ValidationError(f"that event ({event.type} of {event.view}) is not of the history of {name}")
            state = self._fold_until(event.view_id, None, event)
            if state is None or not state.live:
                raise NoSuchViewError(f"view {identifier_str(state.identifier) if state else name} was dropped "
                                      "by that event")
            return state_to_view(state)

    def _load_as_of(self, ident: Identifier, ms: int, given: TimeLike) -> View:
        with self._reading():
            for view_id in self._log.streams_that_took(identifier_str(ident), until_ms=ms):
                state = self._fold_until(view_id, ms)
                if state is not None and state.live and state.identifier == ident:
                    return state_to_view(state)
            # not named so then: the view known by this name now, as it was then (under its old name)
            latest = self._projections.latest_view_id(identifier_str(ident[:-1]), ident[-1])
            if latest is not None:
                state = self._fold_until(latest, ms)
                if state is not None and state.live:
                    return state_to_view(state)
            first = self._log.history_begins_ms(identifier_str(ident), latest)
            hint = self._did_you_mean(ident) if first is None else ""  # a typo, as in history()
            # in a gap of its history: what ended the name before then, and what gave it back after
            gap = self._gap_text(identifier_str(ident), ms) if type(first) is int and ms >= first else ""
        # say where the name's history begins: a time before it is the usual slip
        if first is None:
            raise NoSuchViewError(f"no view was ever named {identifier_str(ident)}{hint}")
        if type(first) is not int:  # a real, a text or a blob written behind the library's back
            raise CorruptLogError(f"the history of {identifier_str(ident)} holds an event whose time is not an "
                                  f"integer ({_held(first, int)})")
        since = f" (its history begins at {_time_text(first, 'iso')})" if ms < first else ""
        # time.time() given: the second it names, read as seconds, reaches into the history (the view
        # may be younger than the second's start) and is not in the future
        if ms < first and _a_number(given) and first < (ms + 1) * 1000 and ms * 1000 <= self._now(None):
            since += f" (as_of is in epoch milliseconds; {ms} looks like seconds)"
        raise NoSuchViewError(f"no view {identifier_str(ident)} existed at {_time_text(ms, 'iso')}{since}{gap}")

    def _gap_text(self, name: str, ms: int) -> str:
        """`` (dropped at T by A; made again at T2)`` or the like, for a time in a gap of a name's
        history (:meth:`EventLog.gap_around`): how the view that had it last before then let go of it
        (as :meth:`_no_such_view` says it), and what gave it to a view next after then; "" if neither is
        in the log. Only the error path of ``as_of`` reads for it."""
        ended, given = self._log.gap_around(name, ms)
        said = []
        if ended is not None:
            position, kind, target, actor, at = ended
            said.append(_let_go_text(position, kind, target, actor, at, "iso"))
        if given is not None:
            kind, at, before = given
            if type(at) is not int:  # a time written behind the library's back
                raise CorruptLogError(f"the history of {name} holds an event whose time is not an integer "
                                      f"({_held(at, int)})")
            how = ("imported" if kind == "view.imported" else "made again" if before is None
                   else f"{_held(before)} renamed to it")
            said.append(f"{how} at {_time_text(at, 'iso')}")
        return f" ({'; '.join(said)})" if said else ""

    def diff_view(self, identifier: IdentifierLike, *, before: AsOf, after: AsOf | None = None) -> ViewDiff:
        """What changed in a view between two moments: its state at ``before`` against its state at
        ``after`` (None: now), each loaded as :meth:`load_view` loads it with ``as_of`` (a time or an
        :class:`Event`; the view known by this identifier then, or the one known by it now as it
        was then, under the name it had: so a rename between the two shows as two identifiers). Both
        are read from one state of the file. The answer (:class:`~viewstore.model.ViewDiff`) holds
        each side's identifier, UUID, current version and last change, and only what differs:
        columns, representations (by dialect, with each side's SQL), comment, properties, security
        mode, default catalog and namespace; ``changed`` says whether anything does. It compares
        the two states, not the events between them: a change undone in between is not there
        (:meth:`events` lists those). A time before an imported view's import finds it as its
        source's history says it was then (the import keeps those times), not a state this store held.

        Example::

            first = store.history("sales.daily")[0]
            diff = store.diff_view("sales.daily", before=first)      # right after it was created, and now
            for change in diff.representations_changed:
                print(change.after.dialect, change.before.sql, "->", change.after.sql)
            store.diff_view("sales.daily", before="2026-11-24", after="2026-11-25T12:00")

        Raises:
            NoSuchViewError: no view had that identifier at ``before`` (say, a time before it was
                created), or none has it at ``after`` (dropped or renamed away by then; with ``after``
                left out, none has it now), as :meth:`load_view` says for that side, the message
                starting with the side (``before: ``, ``after: ``, ``after (now): ``).
            ValidationError: a bad identifier, a ``before`` that is None or not a time or event, a
                bad ``after`` (either checked before any view is looked up, named in the message), or
                an event of no view that carried this identifier (as :meth:`load_view`).
        """
        if before is None:
            raise ValidationError("before must be a time or an event (after=None is now; before has no default)")
        # both times checked before either side is looked up, each error naming its argument
        start = before if isinstance(before, Event) else to_epoch_ms(before, "before")
        end = after if after is None or isinstance(after, Event) else to_epoch_ms(after, "after")
        sides: list[View] = []
        with self._reading():  # both sides from one state of the file
            for side, moment in (("before", start), ("after", end)):
                try:
                    sides.append(self.load_view(identifier, as_of=moment))
                except NoSuchViewError as e:  # which side is missing: with two events, no message says
                    raise NoSuchViewError(f"{side}{' (now)' if moment is None else ''}: {e}") from None
        return diff_views(*sides)

    def view_exists(self, identifier: IdentifierLike) -> bool:
        """Whether a live view has this identifier.

        Raises:
            ValidationError: a bad identifier.
        """
        ident = to_identifier(identifier)
        with self._reading():
            if self._live_state(ident) is not None:
                return True
            self._free_in_log(ident)
            return False

    def list_views(self, namespace: NamespaceLike | None = None) -> list[tuple[str, ...]]:
        """Identifiers of the live views, all or those directly in ``namespace``, sorted by namespace
        (its dotted text: ``b.x`` before ``b.c.y``), then name.

        Raises:
            ValidationError: a bad namespace.
        """
        ns = identifier_str(to_namespace(namespace)) if namespace is not None else None
        with self._reading():
            return self._projections.live_identifiers(ns)

    def list_namespaces(self) -> list[tuple[str, ...]]:
        """The namespaces holding at least one live view, sorted."""
        with self._reading():
            return self._projections.namespaces()

    def history(self, identifier: IdentifierLike, *, since_position: int | None = None,
                until_position: int | None = None) -> list[Event]:
        """Every event of the view, oldest first: the live view of that name, else the one dropped
        last under it, else the one that took the name last and has since been renamed. (A view
        renamed away lives on under its new name, so a view dropped under the name comes first even
        when another took the name after it; the NoSuchViewError for the name tells of this view.)

        Args:
            since_position, until_position: an inclusive range of log positions
                (:attr:`Event.position`), as :meth:`events` takes it: only the view's events in it
                are read (a range given backwards holds none).

        Raises:
            NoSuchViewError: no view, live or dropped, ever had that name (the message offers the
                live names close to it, as :meth:`load_view`'s does).
            ValidationError: a bad identifier or position.
        """
        ident = to_identifier(identifier)
        _check_positions(since_position, until_position)
        with self._reading():
            return self._log.stream(self._history_stream(ident), since_position=since_position,
                                    until_position=until_position)

    def _history_stream(self, ident: Identifier) -> str:
        """The stream :meth:`history` reads for an identifier (inside a read)."""
        view_id = self._projections.latest_view_id(identifier_str(ident[:-1]), ident[-1])
        if view_id is None:
            renamed = self._log.streams_that_took(identifier_str(ident))
            if not renamed:  # a typo, as like as not: offer the close live names, as load_view does
                raise NoSuchViewError(f"no view was ever named {identifier_str(ident)}{self._did_you_mean(ident)}")
            view_id = renamed[0]
        return view_id

    def events(self, *, view: IdentifierLike | None = None, actor: str | None = None,
               since: TimeLike | None = None, until: TimeLike | None = None, types: EventTypes | None = None,
               limit: int | None = None, newest_first: bool = False, since_position: int | None = None,
               until_position: int | None = None) -> list[Event]:
        """Events matching every filter given, in log order (oldest first).

        Args:
            view: every view that ever carried this identifier (across renames and re-creations);
                one that no view ever carried raises, as :meth:`history` does.
            actor: who made the change.
            since, until: an inclusive time range (:data:`TimeLike`: a datetime, a date, an ISO string or
                epoch ms); an ``until`` that is a date alone (a ``date``, ``"2026-11-25"``) includes that
                whole day. A range given backwards holds no event, as a position range given backwards
                does (a poller's ``since=last + 1, until=now`` within one millisecond asks for nothing
                new); ``viewstore audit`` refuses a ``--since`` after ``--until``, a slip on a command line.
            types: one event type or several (``view.created``, ``view.replaced``, ...).
            limit: at most this many events: the oldest ones, or the latest with ``newest_first``.
            newest_first: the reverse of log order; ``limit=20, newest_first=True`` gives the last 20.
            since_position, until_position: an inclusive range of log positions (:attr:`Event.position`);
                only the events in it are read, so ``since_position=p, until_position=p`` reads the
                one event at ``p`` (if it matches the other filters), however long the view's history.

        Raises:
            NoSuchViewError: ``view`` names no view, live or dropped, that ever had that identifier
                (the message offers the live names close to it; the other filters answer an empty
                list when nothing matches).
            ValidationError: a bad identifier, time, type, limit or position.
            CorruptLogError: an event read is damaged (a row written behind the library's back that
                the read's checks refuse), named by its position.
        """
        return self._event_query(view, actor, since, until, types, limit, newest_first, self._log.query,
                                 since_position, until_position)

    def event_rows(self, *, view: IdentifierLike | None = None, actor: str | None = None,
                   since: TimeLike | None = None, until: TimeLike | None = None, types: EventTypes | None = None,
                   limit: int | None = None, newest_first: bool = False, since_position: int | None = None,
                   until_position: int | None = None) -> list[tuple[Any, ...]]:
        """The rows of the ``events`` table that :meth:`events` would return, as plain tuples.

        For bulk transfer (Arrow, Spark): no model is built per event. The columns are those of
        :data:`viewstore.log.EVENT_COLUMNS` (position, commit_id, view_id, stream_version, type,
        identifier, actor, occurred_at in epoch ms, payload as JSON text); the filters are those of
        :meth:`events`.

        Raises:
            NoSuchViewError: ``view`` names no view that ever had that identifier.
            ValidationError: a bad identifier, time, type, limit or position.
        """
        return self._event_query(view, actor, since, until, types, limit, newest_first, self._log.rows,
                                 since_position, until_position)

    def _converted_event_rows(self, convert: Callable[[list[tuple[Any, ...]]], _T], batch: int, *,
                              view: IdentifierLike | None = None, actor: str | None = None,
                              since: TimeLike | None = None, until: TimeLike | None = None,
                              types: EventTypes | None = None, limit: int | None = None, newest_first: bool = False,
                              since_position: int | None = None, until_position: int | None = None) -> list[_T]:
        """What ``convert`` makes of the rows :meth:`event_rows` returns, given to it ``batch`` rows
        at a time as they are read, all from one read snapshot of the log (other connections may
        commit meanwhile): only one batch of rows is held at a time. For the library's bulk readers
        (:func:`viewstore.spark.audit.events_arrow`): ``convert`` runs inside the read, under the
        store's lock, so it must only convert.

        Raises:
            NoSuchViewError, ValidationError: as :meth:`event_rows` raises them; and what ``convert`` raises.
        """
        return self._event_query(view, actor, since, until, types, limit, newest_first,
                                 functools.partial(self._log.converted_rows, convert, batch),
                                 since_position, until_position)

    def _event_query(self, view: Any, actor: Any, since: Any, until: Any, types: Any, limit: Any,
                     newest_first: Any, read: Callable[..., list[Any]], since_position: Any = None,
                     until_position: Any = None) -> list[Any]:
        filters = self._event_filters(view, actor, since, until, types, limit, newest_first, since_position,
                                      until_position)
        with self._reading():
            return read(**self._matching(view, filters))

    def _event_filters(self, view: Any, actor: Any, since: Any, until: Any, types: Any, limit: Any,
                       newest_first: Any, since_position: Any, until_position: Any) -> dict[str, Any]:
        """The filters of :meth:`events`, checked, as :meth:`EventLog.query` takes them (but the view's)."""
        from .events import EVENT_TYPES

        kinds = None
        if types is not None:
            if not isinstance(types, (str, list, tuple, set, frozenset)):
                raise ValidationError(f"types must be an event type or a list of them, not {types!r}")
            kinds = [types] if isinstance(types, str) else list(types)
            unknown = [t for t in kinds if t not in EVENT_TYPES]
            if unknown:
                raise ValidationError(f"unknown event type(s) {', '.join(unknown)}; "
                                      f"known: {', '.join(sorted(EVENT_TYPES))}")
        if actor is not None:
            if not isinstance(actor, str):
                raise ValidationError(f"an actor must be a string, not {actor!r}")
            check_unicode(actor, "actor")
        if limit is not None and (type(limit) is not int or limit < 0):
            raise ValidationError(f"limit must be a whole number of events, not {limit!r}")
        if type(newest_first) is not bool:
            raise ValidationError(f"newest_first must be True or False, not {newest_first!r}")
        _check_positions(since_position, until_position)
        since_ms = to_epoch_ms(since, "since") if since is not None else None
        until_ms = _until_ms(until) if until is not None else None
        return dict(actor=actor, since=since_ms, until=until_ms, types=kinds, limit=limit, newest_first=newest_first,
                    since_position=since_position, until_position=until_position)

    def _matching(self, view: Any, filters: dict[str, Any]) -> dict[str, Any]:
        """The filters with the streams that ever had ``view``'s identifier (inside a read)."""
        view_ids = None
        if view is not None:
            ident = to_identifier(view)
            view_ids = self._log.streams_that_took(identifier_str(ident))
            if not view_ids:  # a typo is not a view without events, as history() says (with the close names)
                raise NoSuchViewError(f"no view was ever named {identifier_str(ident)}{self._did_you_mean(ident)}")
        return {"view_ids": view_ids, **filters}

    @contextmanager
    def stream_events(self, *, view: IdentifierLike | None = None, actor: str | None = None,
                      since: TimeLike | None = None, until: TimeLike | None = None, types: EventTypes | None = None,
                      limit: int | None = None, newest_first: bool = False, since_position: int | None = None,
                      until_position: int | None = None, batch: int = 1000) -> Iterator[EventStream]:
        """The events :meth:`events` returns, read from the log as the block iterates them, ``batch`` at
        a time, so that a log of any length is read in bounded memory (``viewstore audit``)::

            with store.stream_events(actor="alice") as events:
                for event in events:
                    ...

        The block reads one state of the log (one read transaction): iterating the stream again, or
        its ``count()``, gives the same events, whatever other connections commit meanwhile. In WAL
        mode they go on committing, but no checkpoint can pass a read transaction, so the WAL file
        grows for as long as the block runs; and the store's own calls from other threads wait for
        the block to end. A write of this store inside the block (which holds its read) is refused.

        Raises:
            As :meth:`events`; a damaged row raises CorruptLogError naming it where it is read
            (after the events before it, a batch of their own).
            ViewStoreError: a write of this store inside the block, nothing written.
        """
        _check_batch(batch)
        filters = self._event_filters(view, actor, since, until, types, limit, newest_first, since_position,
                                      until_position)
        with self._reading(), _closing(self._log.matching(batch, **self._matching(view, filters))) as stream:
            yield stream

    @contextmanager
    def stream_history(self, identifier: IdentifierLike, *, since_position: int | None = None,
                       until_position: int | None = None, batch: int = 1000) -> Iterator[EventStream]:
        """The events :meth:`history` returns, read as the block iterates them (as :meth:`stream_events`).

        Raises:
            As :meth:`history`; a damaged row raises CorruptLogError naming it where it is read.
        """
        _check_batch(batch)
        ident = to_identifier(identifier)
        _check_positions(since_position, until_position)
        with self._reading(), _closing(self._log.stream_events(
                self._history_stream(ident), batch, since_position=since_position,
                until_position=until_position)) as stream:
            yield stream

    def query(self, sql: str, params: list[Any] | tuple[Any, ...] | dict[str, Any] = ()) -> QueryRows:
        """Answer an ad-hoc audit question in SQL over the log and the projections (read-only).

        Tables: ``events`` (position, commit_id, view_id, stream_version, type, identifier, actor,
        occurred_at, payload JSON), ``views``, ``view_versions``, ``view_version_log``.

        Returns a list with a dict per row (column name -> value); its ``columns`` attribute names the
        result's columns in order, also when no row matched (see :class:`~viewstore.log.QueryRows`).

        Example::

            store.query("SELECT actor, count(*) AS n FROM events GROUP BY actor ORDER BY n DESC")

        Ctrl-C ends a query that would run for ever: what a signal's handler raises while the query
        runs (Ctrl-C's KeyboardInterrupt, a SIGTERM handler's SystemExit) ends it and reaches the
        caller as it is.

        Raises:
            ValidationError: the statement fails, or tries to write (the connection is read-only); or
                ``params`` is not a list or tuple (one value per ``?``) or a dict (one per ``:name``).
        """
        if not isinstance(sql, str):
            raise ValidationError(f"a query must be SQL text, not {sql!r}")
        _check_params(params)
        if self._closed:
            raise self._closed_error()
        return read_only_query(self.path, sql, params)

    @contextmanager
    def stream_query(self, sql: str,
                     params: list[Any] | tuple[Any, ...] | dict[str, Any] = ()) -> Iterator[QueryStream]:
        """The rows :meth:`query` returns, read as the block iterates them (a dict per row, once), so
        that an answer of any length is read in bounded memory (``viewstore query``); ``columns``
        names the result's columns. The statement reads one state of the file while the block runs
        (writers go on in WAL mode, but the WAL grows until it ends). The rows are read once: a
        second pass raises (``list()`` them to go over them again), where a stream of events
        (:meth:`stream_events`) reads its events again.

        Raises:
            As :meth:`query`; also while the rows are iterated.
            ViewStoreError: a second pass of the rows, or a pass after the block has ended.
        """
        if not isinstance(sql, str):
            raise ValidationError(f"a query must be SQL text, not {sql!r}")
        _check_params(params)
        if self._closed:
            raise self._closed_error()
        with query_rows(self.path, sql, params) as rows:
            yield rows

    def event_count(self) -> int:
        """How many events the log holds."""
        with self._reading():
            return self._log.count()

    def actors(self) -> list[str]:
        """Every actor that has an event in the log, sorted: who ever changed anything here.

        ``events(actor=...)`` of a name not among them holds no event; this tells a typo from an actor
        who made no change in the range asked about. One index seek per actor, however long the log.

        Raises:
            CorruptLogError: an event's actor is not text (a row written behind the library's back).
        """
        with self._reading():
            return self._log.actors()

    @property
    def store_id(self) -> str:
        """A UUID naming this store, kept in its file (the ``meta`` table); it never changes.

        It tells which store made something outside the file: ``viewstore.spark.register_views``
        writes it into each session copy it makes, and prunes only copies carrying it. A new file
        gets its id when it is created. A file made by a release before store ids gets one the
        first time it is asked for, in a short write transaction (opening such a file writes
        nothing); several processes asking at once agree on one. A copy of the file (``cp``, a
        restored backup) carries the same id, and so counts as the same store.

        Raises:
            ConcurrencyError: the file had no id yet and stayed locked by another writer (``busy``).
            CorruptLogError: the stored id is not a UUID.
            ViewStoreError: the store is closed; or the file had no id yet and cannot be written,
                or this is asked inside another call of this store (a signal receiver).
        """
        with self._lock:
            found = self.existing_store_id()
            if found is None:
                if self._in_call if self._batch is not None else self._conn.in_transaction:
                    raise ViewStoreError(f"{self.path} has no store id yet, and one cannot be made inside "
                                         "another call of this store (a signal receiver?)")
                with self._write_transaction():
                    found = make_store_id(self._conn)
                if self._batch is None:  # inside transaction(), kept once committed (a rollback takes it back)
                    self._store_id = found
            return found

    def existing_store_id(self) -> str | None:
        """The store's id if its file has one, else None (a file made before store ids that nothing
        has asked for one yet): never writes, unlike :attr:`store_id`.

        Raises:
            CorruptLogError: the stored id is not a UUID.
            ViewStoreError: the store is closed.
        """
        if self._store_id is not None and not self._closed:
            return self._store_id
        with self._lock:
            with self._reading():
                found = read_store_id(self._conn)
            if found is not None and self._batch is None:  # not one this thread's transaction may roll back
                self._store_id = found
            return found

    # -- writing ----------------------------------------------------------------------------------

    def _now(self, state: ViewState | None) -> int:
        # inside transaction() its writes are one moment, as they are one commit to other readers
        now = self._batch_time if self._batch is not None else time.time_ns() // 1_000_000
        # a stream's times never go backwards, so as_of can trust them
        return max(now, state.modified_at) if state is not None else now

    def _write(self, decide: Callable[[], _Plan | None]) -> tuple[_Plan | None, ViewState | None]:
        """Run ``decide`` and write its events in one transaction; tell the signals.

        A write that loses a race it did not ask to detect (no ``expected_version``: another writer
        took the stream version first) is decided again, a bounded number of times. A database that
        stayed locked through the whole wait is not tried again: that would multiply the wait.
        """
        for attempt in range(5):
            try:
                return self._write_once(decide)
            except ConcurrencyError as error:
                # inside this thread's transaction() the write lock was held throughout: no race to
                # decide again (another thread's block, opened meanwhile, is no reason not to retry)
                if error.expected is not None or error.busy or attempt == 4 or self.in_transaction:
                    raise
                time.sleep(0.002 * (attempt + 1))
        raise AssertionError("unreachable")

    def _write_once(self, decide: Callable[[], _Plan | None]) -> tuple[_Plan | None, ViewState | None]:
        with self._lock:
            self._usable()
            plan: _Plan | None = None
            stored: list[tuple[int, dict[str, Any]]] = []
            try:
                with self._write_transaction():
                    # checked once the write lock is held: no other commit can come between this and ours
                    self._fresh()
                    plan = decide()
                    if plan is None or not plan.events:
                        return plan, None
                    if signals.before_commit.receivers:  # building the list costs; most stores have none
                        try:
                            with self._calling():
                                signals.before_commit.send(self, events=list(plan.events))
                        except ViewStoreError:
                            raise
                        except Exception as veto:
                            raise ViewStoreError(f"a before_commit receiver refused the change: {veto}") from veto
                    if plan.on_stored is None:
                        stored = self._log.insert(plan.events)
                    else:
                        for start in range(0, len(plan.events), plan.stored_every):
                            stored += self._log.insert(plan.events[start:start + plan.stored_every])
                            plan.on_stored(len(stored))
                    state = plan.state.copy() if plan.state is not None else None
                    for event, (position, payload) in zip(plan.events, stored):
                        row = (position, event.commit_id, event.view_id, event.stream_version, event.type,
                               identifier_str(event.identifier), event.actor, event.occurred_at)
                        state = apply(state, row, payload)
                    assert state is not None
                    self._projections.save([state])
            except BaseException as error:
                self._cache.clear()
                if plan is not None and plan.events:  # (a callback's own exception, not its wrapper)
                    self._tell_failed(plan.events, error.error if isinstance(error, CallerRaised) else error)
                raise
            # committed: cache the new state with its View (which shares its versions and their models)
            if plan.state is not None:
                self._cache.pop(plan.state.identifier, None)
            if state.live:
                self._remember(state.identifier, (state, state_to_view(state), self._data_version))
            if self._batch is not None:  # not committed yet: transaction() tells the signals when it is
                self._batch.append((plan.events, stored))
                return plan, state
        if signals.committed.receivers:  # only then are copies of the events with their positions needed
            _notify(signals.committed, self, events=_positioned(plan.events, stored))  # the commit stands
        return plan, state

    def _wait_turn(self, timeout: float) -> None:
        """Wait until the store is free, for a caller that must not wait for it for ever: a catalog
        call from Spark, served on py4j's callback thread, for a Spark statement that the thread
        holding the store may be running (code of the caller's, run while the store is held: a
        :meth:`transaction` block, a signal receiver, rebuild's ``progress``, which waits for
        Spark, which waits for this call). Only the time the store is held by such code counts: a
        plain call (a long rebuild()) ends by itself, and is waited for. The lock is let go at once:
        the caller's own calls take it each in turn, so its signal receivers do not run under it.

        Raises:
            ConcurrencyError: ``busy``: another thread held the store in such code for ``timeout`` seconds.
        """
        waited = 0.0
        while True:
            asked = time.monotonic()
            if self._lock.acquire(timeout=0.05):
                self._lock.release()
                return
            if self._batch is not None or self._calling_out:  # it may be waiting for this very call
                waited += time.monotonic() - asked
                if waited >= timeout:
                    raise ConcurrencyError(f"the store stayed held for {timeout:g} s by a transaction or a "
                                           "callback in another thread", busy=True)

    @contextmanager
    def _calling(self) -> Iterator[None]:
        """Around code of the caller's that runs while the store is held: signal receivers, callbacks
        (see :meth:`_wait_turn`)."""
        self._calling_out += 1
        try:
            with _holding():
                yield
        finally:
            self._calling_out -= 1

    def _report(self, progress: Callable[[int, int], None], done: int, total: int) -> None:
        """Call a caller's ``progress(done, total)`` while the store is held; what it raises leaves
        as :class:`CallerRaised` (the public call raises it as it was)."""
        with self._calling():
            try:
                progress(done, total)
            except BaseException as error:
                raise CallerRaised(error) from None

    @property
    def in_transaction(self) -> bool:
        """Whether the calling thread (and asyncio task) has a :meth:`transaction` of this store
        open: what it has written is not committed yet and may still be rolled back. Work with
        effects outside the file is refused meanwhile: :meth:`export_iceberg` (files), and ``viewstore.spark``'s
        ``register_views`` and view DDL on the store through ``sql()`` (copies in a Spark session);
        its ``create_view`` writes only the store and goes on."""
        return (self._batch is not None and self._batch_thread == threading.get_ident()
                and self._batch_marker in _BLOCK.get())

    def transaction(self) -> AbstractContextManager["ViewStore"]:
        """Make the writes of a ``with`` block one transaction: committed together when the block
        ends, or not at all if it raises.

        ::

            with store.transaction():                      # swap two names, or neither
                store.rename_view("sales.daily", "sales.tmp")
                store.rename_view("sales.daily_v2", "sales.daily")
                store.rename_view("sales.tmp", "sales.daily_v2")

        Each write inside is still whole or nothing on its own: one that raises (a name taken, a
        stale ``expected_version``) writes nothing, and the block may catch that and go on, except
        after an error with which SQLite ends the whole transaction (an interrupt, a full disk, an
        I/O error): then every later write of the block is refused, and the block raises. The
        writes see each other's effects; other connections see none of them until the block ends,
        and then all. ``committed`` is sent for each write once the block has committed, in order;
        if the block raises, ``commit_failed`` is sent for each write it had made, with that error.
        ``before_commit`` is sent per write, before its events are written, as outside. Each write
        keeps its own ``commit_id``; their events all carry one time, when the block began (after any
        wait for another writer), so that ``load_view(as_of=...)`` sees the block whole or not at
        all, as other readers do (a stream's times still never go backwards; an import keeps the
        times of the history it brings, and an :meth:`import_hms` record's are when it was read).

        The transaction holds the file's write lock from the start of the block to its end (other
        processes' writes wait for it, up to their busy timeout) and the store's lock (other threads
        using this store wait). Keep it short. Inside it, :meth:`query` (another connection) sees
        only what was committed, and work whose effects a rollback could not take back is refused
        (see :attr:`in_transaction`). Transactions do not nest, and a block is ended in the thread
        that began it. Another asyncio task of that thread (which shares the store's lock with the
        block's task, so cannot wait for it) has its calls to the store refused while the block is
        open.

        Raises:
            ConcurrencyError: the database stayed locked by another writer (``busy``), at the start;
                nothing was written.
            ViewStoreError: the store is closed, a transaction is already open in this thread (or in
                another asyncio task of it), SQLite rolled the transaction back when a write in it
                failed, or the commit failed (nothing was written), or the block is ended in another
                thread than the one that began it (refused: it stays open) or entered twice. An
                exception raised in the block rolls every write of the block back and reaches the
                caller unchanged.
        """
        return _Block(self._transaction())

    @contextmanager
    def _transaction(self) -> Iterator["ViewStore"]:
        with self._lock:
            self._usable()  # closed, or another task's block
            if self._batch is not None:
                raise ViewStoreError("a transaction of this store is already open in this thread; "
                                     "transactions do not nest")
            if self._conn.in_transaction:
                if self.path not in _WRITING.__dict__.get("files", ()):  # a read open in this thread: a stream's block
                    raise ViewStoreError(_IN_STREAM)
                raise ViewStoreError("a transaction cannot start inside another call of this store "
                                     "(a signal receiver?)")
            done: list[tuple[list[Event], list[tuple[int, dict[str, Any]]]]] = []
            repairs = self._repairs  # a rebuild() inside counts its repair in the file, which a rollback takes back
            try:
                with self._write_transaction():
                    marker = object()
                    _BLOCK.set(_BLOCK.get() | {marker})
                    try:  # set inside: whatever interrupts the block, it ends it
                        self._batch, self._batch_thread, self._batch_marker = done, threading.get_ident(), marker
                        self._batch_time = time.time_ns() // 1_000_000
                        with _holding():
                            yield self
                    finally:
                        lost, self._batch_lost = self._batch_lost, None
                        if lost is None and not self._conn.in_transaction:  # SQLite ended it, no write since
                            lost = ViewStoreError("SQLite ended the transaction (after an I/O error?)")
                        self._batch = self._batch_thread = self._batch_marker = None
                        # its own mark only: blocks of other stores may end in another order
                        _BLOCK.set(_BLOCK.get() - {marker})
                    if lost is not None:
                        raise ViewStoreError(f"{_LOST} ({lost}): nothing of this block was written")
            except BaseException as error:
                # the states and snapshots read inside may hold what was just rolled back; and a repair
                # counted inside is not in the file, so another store's next one must not pass for it
                self._cache.clear()
                self._projections.forget_parsed()
                self._repairs = repairs
                for events, _ in done:
                    self._tell_failed(events, error)
                raise
        if done and signals.committed.receivers:
            for events, stored in done:
                _notify(signals.committed, self, events=_positioned(events, stored))

    def _lock_waited(self, waited: float, timeout: float) -> None:
        """Send ``lock_wait``: a write has waited ``waited`` seconds for another connection's write
        lock, and waits ``timeout`` in all (called by :func:`viewstore.log._when_free` during the wait
        only). What a receiver raises is logged; the wait goes on."""
        if signals.lock_wait.receivers:
            with self._calling():
                _notify(signals.lock_wait, self, waited=waited, timeout=timeout)

    def _tell_failed(self, events: list[Event], error: BaseException) -> None:
        """Send ``commit_failed`` for a write's events, as decided: with no position, since none was
        committed (the next committed event may take the one its insert was given). The caller is owed
        the write's own error, so what a receiver raises is only noted on it."""
        if signals.commit_failed.receivers:
            with self._calling():
                hooks = _notify(signals.commit_failed, self, events=events, error=error)
            for hook in hooks:
                error.add_note(f"a commit_failed receiver raised too: {hook!r}")

    def _close_if_stuck(self, error: BaseException) -> None:
        """After a failed write: a connection still inside its transaction (its ROLLBACK failed, again
        and again) would hold the file's write lock, and the failed write's rows, for as long as it
        stays open. Closing it is what rolls them back then; the store is closed with it."""
        if not self._closed and self._conn.in_transaction:
            self.close()
            error.add_note("the store's connection could not roll the write back, so the store was closed "
                           "(closing rolled it back; nothing was written): open the store again")

    def _lose_batch(self, error: BaseException) -> None:
        """SQLite ended the open transaction() when a write in it failed (see :func:`viewstore.log.savepoint`)."""
        self._batch_lost = error

    def _write_transaction(self) -> AbstractContextManager[None]:
        """A write transaction on the store's connection: a :class:`_FileWrite` (around
        :class:`viewstore.log.transaction`), or inside :meth:`transaction` a savepoint of the block's
        (:meth:`_write_part`).

        A write that would wait for itself is refused at once: a signal receiver or a callback
        of a write in this thread writing through this or another ViewStore on the same file (this
        thread holds the file's write lock, so that store would wait out every retry and then fail,
        and this one's connection is inside the write).
        """
        if self._batch is not None:  # inside transaction(): each write is a savepoint of it
            return self._write_part()
        return _FileWrite(self)

    @contextmanager
    def _write_part(self) -> Iterator[None]:
        """A write inside the open :meth:`transaction`: a savepoint of it (:func:`viewstore.log.savepoint`)."""
        if self._in_call:
            raise ViewStoreError("this store is already writing in this thread (from a signal receiver or "
                                 "a callback?); a write cannot start inside another")
        if self._batch_lost is not None:  # a write now would commit on its own
            raise ViewStoreError(f"{_LOST} ({self._batch_lost}): no write can be made in this block; "
                                 "leave it (it raises) and start again")
        self._in_call = True
        try:
            with savepoint(self._conn, lost=self._lose_batch):
                yield
        except BaseException as error:
            if self._batch_lost is not None:
                error.add_note(f"{_LOST}: the block's writes before this one are undone too")
            raise
        finally:
            self._in_call = False

    def _no_such_view(self, ident: Identifier) -> NoSuchViewError:
        """The error for an identifier no live view has, saying, when a view had it once, what became
        of the view :meth:`history` reads for it (the one dropped last under it, else the one that took
        it last: dropped, or renamed: to what, when, by whom, and where it is now) and that its events
        are still there. Only this error path reads for it: index seeks, bounded however many events the
        view had under the name (see :meth:`EventLog.let_go`)."""
        name = identifier_str(ident)
        fate = self._log.let_go(name)
        if fate is None:
            self._free_in_log(ident)
            return NoSuchViewError(f"no such view: {name}{self._did_you_mean(ident)}")
        (position, kind, target, actor, ms), (last_kind, last_name) = fate
        target, last_name = _held(target), _held(last_name)
        renamed = kind != "view.dropped"
        live = renamed and last_kind != "view.dropped"  # renamed away, and live now (under that name or another)
        what = _let_go_text(position, kind, target, actor, ms, "second",
                            " (live)" if live and last_name == target else "")
        if renamed and not live:
            what += f", since dropped{'' if last_name == target else f' as {last_name}'}"
        elif live and last_name != target:
            what += f", now {last_name} (live)"
        return NoSuchViewError(f"no such view: {name} ({what}; its history remains)")

    def _did_you_mean(self, ident: Identifier) -> str:
        """`` (did you mean a or b?)`` naming the close live names (:meth:`_close_names`), or "" if none are."""
        close = self._close_names(ident)
        return f" (did you mean {_either(close)}?)" if close else ""

    def _close_names(self, ident: Identifier) -> list[str]:
        """The live views whose names are close to one no view ever had, for its error, at most
        :data:`SUGGESTED_NAMES` (see :func:`_closest`): one typo away first, then those difflib's ratio puts
        at least :data:`SUGGESTION_CUTOFF` close; those of its namespace, else those of the namespaces
        close to its own (a typo there). Bounded: of a namespace, the names :func:`_near` reads are
        compared, however many views it holds; of the namespaces, those it reads, however many there are."""
        namespace, name = identifier_str(ident[:-1]), ident[-1]
        compared, typos = self._near_name(namespace, name)
        found = _closest(name, typos, compared, SUGGESTION_CUTOFF)
        if found:
            return [f"{namespace}.{n}" for n in found]
        # get_close_matches' default cutoff (0.6) for the namespace (a typo in a short one), the suggestion's
        # for the whole name, which is one typo away where its namespace is and its name the one typed
        compared, typos = self._near_namespace(namespace)
        namespaces = _closest(namespace, typos, compared, 0.6)
        candidates = [f"{ns}.{n}" for ns in namespaces for n in self._near_name(ns, name)[0]]
        whole = [f"{ns}.{name}" for ns in namespaces if ns in typos and f"{ns}.{name}" in candidates]
        return _closest(identifier_str(ident), whole, candidates, SUGGESTION_CUTOFF)

    def _near_name(self, namespace: str, name: str) -> tuple[list[str], list[str]]:
        """:func:`_near` of ``name`` among the live names of ``namespace``."""
        p = self._projections
        return _near(name, functools.partial(p.names_near, namespace),
                     functools.partial(p.names_among, namespace), functools.partial(p.next_letters, namespace))

    def _near_namespace(self, namespace: str) -> tuple[list[str], list[str]]:
        """:func:`_near` of ``namespace`` among the namespaces of live views, other than it."""
        p = self._projections
        return _near(namespace, p.namespaces_near, p.namespaces_among, p.namespace_next_letters)

    def _plan_for(self, ident: Identifier, expected_version: int | None, *, must_exist: bool = True) -> _Plan:
        if expected_version is not None:
            _check_expected(expected_version)
        state = self._live_state(ident)
        if state is None:
            if must_exist:
                raise self._no_such_view(ident)
            return _Plan(None, str(uuidlib.uuid4()), ident, self.actor, self._now(None), 0)
        if expected_version is not None and expected_version != state.stream_version:
            raise ConcurrencyError(
                f"view {identifier_str(ident)} is at stream version {state.stream_version}, "
                f"not the expected {expected_version}", view=identifier_str(ident), expected=expected_version,
                actual=state.stream_version)
        state.current_version()  # checked before anything is decided (a View is built of it once committed)
        return _Plan(state, state.view_id, ident, self.actor, self._now(state), state.stream_version)

    def _result(self, ident: Identifier, result: tuple[_Plan | None, ViewState | None]) -> View:
        """The View a write returns: the state it wrote (or, for a no-op, the state it found).

        This runs after the store's lock was released, so another thread may have committed since:
        the View comes from the cache only if the cache still holds this very state, and is never
        put back into it (that would hide the newer commit from the next load).
        """
        plan, state = result
        if state is None:  # nothing changed
            assert plan is not None and plan.state is not None
            state = plan.state
        with self._lock:
            cached = self._cache.get(state.identifier)
            if cached is not None and cached[0] is state and cached[1] is not None:
                return cached[1]
        return state_to_view(state)

    def create_view(self, identifier: IdentifierLike, *, columns: Sequence[ColumnLike],
                    representations: RepresentationsLike, default_namespace: NamespaceLike,
                    default_catalog: str | None = None,
                    comment: str | None = None, properties: dict[str, str] | None = None,
                    security_mode: str = "DEFINER", summary: dict[str, str] | None = None,
                    expected_version: int | None = None) -> View:
        """Create a view with its first version (id 1).

        Raises:
            ViewAlreadyExistsError: a live view has that identifier.
            ValidationError: a bad identifier, column, type, representation, dialect, property.
            ConcurrencyError: ``expected_version`` is not 0 (the version of a view not yet created).
        """
        ident = to_identifier(identifier)
        definition = self._definition(columns, representations, default_namespace, default_catalog, comment,
                                      properties, _security_mode(security_mode), summary)

        def decide() -> _Plan:
            if self._live_state(ident) is not None:
                raise ViewAlreadyExistsError(f"view already exists: {identifier_str(ident)}")
            self._free_in_log(ident)
            _expect_missing(ident, expected_version)
            plan = self._plan_for(ident, None, must_exist=False)
            self._add_create(plan, definition)
            return plan

        return self._result(ident, self._write(decide))

    def _definition(self, columns: Any, representations: Any, default_namespace: Any, default_catalog: Any,
                    comment: Any, properties: Any, security_mode: Any, summary: Any) -> dict[str, Any]:
        d = check_definition(columns, representations, default_namespace, default_catalog, comment, properties,
                             security_mode, summary)
        if d["default_catalog"] is None:
            d["default_catalog"] = self.catalog
        return d

    def _add_create(self, plan: _Plan, d: dict[str, Any]) -> None:
        version = _version_json(1, plan.now, 0, d["columns"], d["representations"], d["default_catalog"],
                                d["default_namespace"], d["summary"])
        plan.add(ViewCreated, version=version, current_version_id=1,
                 log_entry={"timestamp_ms": plan.now, "version_id": 1}, properties=d["properties"],
                 security_mode=d["security_mode"] or "DEFINER")

    def replace_view(self, identifier: IdentifierLike, *, columns: Sequence[ColumnLike],
                     representations: RepresentationsLike, default_namespace: NamespaceLike,
                     default_catalog: str | None = None, comment: str | None = None,
                     properties: dict[str, str] | None = None, security_mode: str | None = None,
                     summary: dict[str, str] | None = None, expected_version: int | None = None,
                     replace_properties: bool = False) -> View:
        """CREATE OR REPLACE: create the view, or make this definition its current version.

        An identical existing version is reused; replacing with the current definition adds nothing.
        Given properties are merged into the view's (Iceberg's rule); a given comment replaces the old.
        With ``replace_properties=True`` the given properties and comment become the view's whole
        property map instead (SQL's CREATE OR REPLACE): others are removed.
        The security mode changes only when ``security_mode`` is given: left out (None), the view
        keeps its own (a view created by this call is ``DEFINER``), so replacing the SQL of an
        ``INVOKER`` view never makes it run with its definer's rights.
        A replace may not drop a dialect of the current version unless the view property
        ``replace.drop-dialect.allowed`` is ``true`` (in any case, as the reference reads a boolean)
        in the properties the replace leaves (those it is given count).
        The events: ``view.replaced`` when the current version or the security mode changes; then
        what is set (``view.comment_updated`` for the comment, then one ``view.properties_set``);
        then what ``replace_properties`` removes (``view.comment_updated``, then one
        ``view.properties_removed``).

        Raises:
            ValidationError: bad input (``replace_properties`` not True or False, too), or a dialect
                would be dropped.
            ConcurrencyError: ``expected_version`` is stale.
        """
        ident = to_identifier(identifier)
        if not isinstance(replace_properties, bool):  # "false" is truthy: it would remove the other properties
            raise ValidationError(f"replace_properties must be True or False, not {replace_properties!r}")
        d = self._definition(columns, representations, default_namespace, default_catalog, comment, properties,
                             security_mode, summary)

        def decide() -> _Plan:
            state = self._live_state(ident)
            if state is None:
                self._free_in_log(ident)
                _expect_missing(ident, expected_version)
                plan = self._plan_for(ident, None, must_exist=False)
                self._add_create(plan, d)
                return plan
            plan = self._plan_for(ident, expected_version)
            new_props = d["properties"] if replace_properties else {**state.properties, **d["properties"]}
            current = state.versions[state.current_version_id]
            new_dialects = {r.dialect.lower() for r in d["representations"]}
            lost = sorted({r["dialect"].lower() for r in current["representations"]} - new_dialects)
            if lost and new_props.get(DROP_DIALECT_ALLOWED, "false").lower() != "true":
                raise ValidationError(
                    f"Cannot replace view {identifier_str(ident)} due to loss of view dialects {lost} "
                    f"(set the view property {DROP_DIALECT_ALLOWED}=true to allow it, or remove it with "
                    f"alter_view: ViewChange.remove_representation, --remove-representation)")
            change = self._version_change(plan, state, d["columns"], d["representations"], d["default_catalog"],
                                          d["default_namespace"], d["summary"])
            wanted = d["security_mode"]
            security = wanted if wanted is not None and wanted != state.security_mode else None
            if change is not None or security is not None:
                fields = change or {}
                plan.add(ViewReplaced, **fields, security_mode=security)
            self._add_property_events(plan, state.properties, d["properties"])
            if replace_properties:
                if "comment" in state.properties and "comment" not in d["properties"]:
                    plan.add(CommentUpdated, comment=None)
                removals = tuple(sorted(k for k in state.properties if k != "comment" and k not in d["properties"]))
                if removals:
                    plan.add(PropertiesRemoved, removals=removals)
            return plan

        return self._result(ident, self._write(decide))

    def _add_property_events(self, plan: _Plan, old: dict[str, str], given: dict[str, str]) -> None:
        comment = given.get("comment")
        if comment is not None and comment != old.get("comment"):
            plan.add(CommentUpdated, comment=comment)
        updates = {k: v for k, v in given.items() if k != "comment" and old.get(k) != v}
        if updates:
            plan.add(PropertiesSet, updates=updates)

    def _version_change(self, plan: _Plan, state: ViewState, columns: Sequence[Column],
                        reps: Sequence[SQLRepresentation], default_catalog: str | None,
                        default_namespace: Sequence[str], summary: dict[str, str]) -> dict[str, Any] | None:
        """Iceberg's add-or-reuse of a version; None when the definition is already current."""
        cols = [_column_json(c) for c in columns]
        schema_id = _schema_id(state, cols)
        candidate = _version_json(0, plan.now, schema_id, columns, reps, default_catalog, default_namespace, summary)
        # the lowest id of an identical version, looked up in an index the state's stream keeps
        versions = state.versions
        same = versions.places(_definition_key, _definition_key(candidate), definition_only=True)
        reused = min((versions.at(place)[0] for place in same), default=None)  # parsed whole: its columns checked
        if reused is not None:
            if reused == state.current_version_id:
                return None
            return {"version": None, "current_version_id": reused,
                    "log_entry": {"timestamp_ms": plan.now, "version_id": reused}}
        vid = versions.max_id() + 1
        if vid >= 2**31 or schema_id >= 2**31:  # Iceberg's ids are 32-bit (an imported view may hold the highest)
            raise ValidationError(f"view {identifier_str(plan.identifier)} has no "
                                  f"{'version' if vid >= 2**31 else 'schema'} id left to give a new version "
                                  "(ids are 32-bit integers)")
        candidate["version_id"] = vid
        return {"version": candidate, "current_version_id": vid,
                "log_entry": {"timestamp_ms": plan.now, "version_id": vid}}

    def alter_view(self, identifier: IdentifierLike, *changes: ViewChange,
                   expected_version: int | None = None) -> View:
        """Apply a batch of changes in one commit (all or none).

        Representation changes in a batch make one new version (or reuse an identical one);
        comment and property changes make no version. The changes apply in order, each to what
        the ones before it left. A no-op change writes nothing (a comment or property set to the
        value it has, a property the view lacks removed, a rename to its own name, a dialect's SQL
        set to what it is), nor do representation changes that end where they began (a dialect
        added and removed again). The events come in this order: comment, property and rename
        changes (in the order given) first, then the representation changes (the last one
        carrying the new version).

        Raises:
            NoSuchViewError: no live view has that identifier.
            ViewAlreadyExistsError: a rename onto the name of another live view.
            ValidationError: a duplicate or unknown dialect, removing the last representation, a
                bad change.
            ConcurrencyError: ``expected_version`` is stale.
        """
        ident = to_identifier(identifier)
        for change in changes:
            if not isinstance(change, ViewChange):
                raise ValidationError(f"alter_view takes ViewChange values, not {change!r}")

        def decide() -> _Plan:
            plan = self._plan_for(ident, expected_version)
            state = plan.state
            assert state is not None
            props = dict(state.properties)
            reps: list[SQLRepresentation] | None = None  # built on the first representation change only
            current = state.versions[state.current_version_id]["representations"]
            rep_events: list[tuple[type[Event], dict[str, Any]]] = []
            for change in changes:
                if change.kind in ("add_representation", "update_representation", "remove_representation"):
                    if reps is None:
                        reps = [SQLRepresentation.model_construct(dialect=r["dialect"], sql=r["sql"]) for r in current]
                    event = self._representation_change(ident, reps, change)
                    if event is not None:
                        rep_events.append(event)
                else:
                    self._simple_change(plan, ident, props, change)
            # the batch's representation changes make one version, decided last; changes that end
            # where they started (a dialect added and removed) write nothing, nor does the same SQL
            # again, in any batch
            if rep_events and [(r.dialect, r.sql) for r in reps or ()] != [(r["dialect"], r["sql"]) for r in current]:
                assert reps is not None
                self._flush_representations(plan, state, reps, rep_events)
            return plan

        return self._result(ident, self._write(decide))

    def _representation_change(self, ident: Identifier, reps: list[SQLRepresentation],
                               change: ViewChange) -> tuple[type[Event], dict[str, Any]] | None:
        """Apply one representation change to ``reps``: its event, or None for no change (the same SQL)."""
        rep = change.representation
        dialects = [r.dialect.lower() for r in reps]
        if change.kind == "add_representation":
            assert rep is not None
            if rep.dialect.lower() in dialects:
                raise ValidationError(f"Invalid view version: Cannot add multiple queries for dialect "
                                      f"{rep.dialect.lower()} (view {identifier_str(ident)}; "
                                      f"to change its SQL: ViewChange.update_representation, --update-representation)")
            reps.append(rep)
            return RepresentationAdded, {"dialect": rep.dialect, "sql": rep.sql}
        dialect = rep.dialect if rep is not None else change.key
        assert dialect is not None
        if dialect.lower() not in dialects:
            raise ValidationError(f"view {identifier_str(ident)} has no {dialect!r} representation; "
                                  f"it has {[r.dialect for r in reps]}")
        i = dialects.index(dialect.lower())
        if change.kind == "update_representation":
            assert rep is not None
            if reps[i].sql == rep.sql:
                return None
            reps[i] = SQLRepresentation.model_construct(dialect=reps[i].dialect, sql=rep.sql)
            return RepresentationUpdated, {"dialect": reps[i].dialect, "sql": rep.sql}
        if len(reps) == 1:
            # the changes apply in order: an add later in the batch comes too late, so say to put it first
            raise ValidationError(f"cannot remove the last representation of {identifier_str(ident)}: add the "
                                  "other dialect first (an earlier change of the batch), or drop the view")
        removed = reps.pop(i)
        return RepresentationRemoved, {"dialect": removed.dialect}

    def _flush_representations(self, plan: _Plan, state: ViewState, reps: list[SQLRepresentation],
                               rep_events: list[tuple[type[Event], dict[str, Any]]]) -> None:
        """Write a batch's representation events; the last one carries the version change."""
        for cls, fields in rep_events[:-1]:
            plan.add(cls, **fields)
        cls, fields = rep_events[-1]
        current = state.versions[state.current_version_id]
        columns = [Column.model_construct(name=c["name"], type=c["type"], comment=c.get("comment"),
                                          nullable=c.get("nullable", True)) for c in current["columns"]]
        change = self._version_change(plan, state, columns, reps, current.get("default_catalog"),
                                      current.get("default_namespace") or [], current.get("summary") or {})
        plan.add(cls, **fields, **(change or {}))

    def _simple_change(self, plan: _Plan, ident: Identifier, props: dict[str, str], change: ViewChange) -> None:
        if change.kind == "update_comment":
            if props.get("comment") != change.value:
                if change.value is None:
                    props.pop("comment", None)
                else:
                    props["comment"] = change.value
                plan.add(CommentUpdated, comment=change.value)
        elif change.kind == "set_property":
            assert change.key is not None and change.value is not None
            if props.get(change.key) != change.value:
                props[change.key] = change.value
                plan.add(PropertiesSet, updates={change.key: change.value})
        elif change.kind == "remove_property":
            assert change.key is not None
            if change.key in props:
                del props[change.key]
                plan.add(PropertiesRemoved, removals=(change.key,))
        elif change.kind == "rename":
            assert change.key is not None
            target = (*plan.identifier[:-1], change.key) if "." not in change.key else tuple(change.key.split("."))
            self._add_rename(plan, target)
        else:
            raise ValidationError(f"unknown change {change.kind!r}")

    def _add_rename(self, plan: _Plan, target: Identifier) -> None:
        if target == plan.identifier:
            return
        holder = self._live_state(target)
        if holder is not None and holder.view_id != plan.view_id:  # its own first name is free again
            raise ViewAlreadyExistsError(f"cannot rename {identifier_str(plan.identifier)}: "
                                         f"view already exists: {identifier_str(target)}")
        if holder is None:
            self._free_in_log(target)
        source = plan.identifier
        plan.identifier = target
        plan.add(ViewRenamed, from_identifier=source)

    def rename_view(self, identifier: IdentifierLike, new_identifier: IdentifierLike, *,
                    expected_version: int | None = None) -> View:
        """Give a view another identifier (in any namespace). Its own identifier again changes nothing
        (no event), as a no-op change of :meth:`alter_view` does.

        Raises:
            NoSuchViewError: no live view has ``identifier``.
            ViewAlreadyExistsError: another live view has ``new_identifier``.
            ValidationError: a bad identifier.
            ConcurrencyError: ``expected_version`` is stale.
        """
        ident, target = to_identifier(identifier), to_identifier(new_identifier)

        def decide() -> _Plan:
            plan = self._plan_for(ident, expected_version)
            self._add_rename(plan, target)
            return plan

        return self._result(target, self._write(decide))

    def drop_view(self, identifier: IdentifierLike, *, expected_version: int | None = None) -> bool:
        """Drop a view; its history stays in the log. Returns False when there was no such view.

        Raises:
            ValidationError: a bad identifier.
            ConcurrencyError: ``expected_version`` is stale (also: it names a version, 1 or more, of
                a view that does not exist).
        """
        ident = to_identifier(identifier)

        def decide() -> _Plan | None:
            if self._live_state(ident) is None:
                self._free_in_log(ident)
                _expect_missing(ident, expected_version)
                return None
            plan = self._plan_for(ident, expected_version)
            plan.add(ViewDropped)
            return plan

        plan, _ = self._write(decide)
        return plan is not None

    def rollback_view(self, identifier: IdentifierLike, version_id: int, *,
                      expected_version: int | None = None) -> View:
        """Make an earlier version current again (a new version-log entry, no new version). The
        current version again changes nothing (no event), as a no-op change of :meth:`alter_view` does.

        Raises:
            NoSuchViewError: no live view has that identifier.
            ValidationError: the view has no such version, or a bad identifier.
            ConcurrencyError: ``expected_version`` is stale.
        """
        ident = to_identifier(identifier)
        if isinstance(version_id, bool) or not isinstance(version_id, int):
            raise ValidationError(f"a version id must be an integer, not {version_id!r}")

        def decide() -> _Plan:
            plan = self._plan_for(ident, expected_version)
            state = plan.state
            assert state is not None
            if version_id not in state.versions:
                raise ValidationError(f"view {identifier_str(ident)} has no version {version_id}; "
                                      f"it has {id_ranges(state.versions)}")
            state.versions[version_id]  # parsed and checked before it becomes current (CorruptLogError)
            if version_id != state.current_version_id:
                plan.add(ViewRolledBack, current_version_id=version_id,
                         log_entry={"timestamp_ms": plan.now, "version_id": version_id})
            return plan

        return self._result(ident, self._write(decide))

    def import_view(self, identifier: IdentifierLike, *, source: str, versions: Sequence[ViewVersion],
                    version_log: Sequence[VersionLogEntry], current_version_id: int,
                    properties: dict[str, str] | None = None, security_mode: str = "DEFINER",
                    view_uuid: str | None = None, source_location: str | None = None,
                    progress: Callable[[int, int], None] | None = None) -> View:
        """Record a view brought in from elsewhere, keeping its versions, log and original times.

        The history becomes events with the original timestamps: ``view.imported`` with the
        versions that existed at the first version-log entry, then one ``view.replaced`` (a new
        version became current) or ``view.rolled_back`` (an older one did) per later entry. Events
        dated while another view held the identifier (since dropped or renamed) are dated just after
        it let go instead; the versions and the version log keep their own times.

        Args:
            progress: called as ``progress(done, total)`` while the events are made and then
                written, each event counted once made and once written: ``total`` is twice the
                number of events the import records, and the last call has ``done == total``
                (about a hundred calls, however long the history). An exception it raises stops
                the import (nothing is written) and reaches the caller unchanged.

        Raises:
            ViewAlreadyExistsError: a live view has that identifier, or the UUID is already in the store.
            ValidationError: a bad argument (``progress`` not callable), or versions and log that do
                not fit together.
        """
        check_progress(progress)
        try:
            # the history's events and states all stay alive until written, and hold no cycles: a
            # running collector walked them again and again, a third of a long import
            with collector_paused():
                return self._import_write(self._import_plan(identifier, source, versions, version_log,
                                                            current_version_id, properties, security_mode,
                                                            view_uuid, source_location, progress))
        except CallerRaised as raised:
            callers = raised.error
        raise callers  # outside the handler: the callback's exception, its context untouched

    def _import_plan(self, identifier: IdentifierLike, source: str, versions: Sequence[ViewVersion],
                     version_log: Sequence[VersionLogEntry], current_version_id: int,
                     properties: dict[str, str] | None, security_mode: str, view_uuid: str | None,
                     source_location: str | None, progress: Callable[[int, int], None] | None,
                     built: bool = False) -> _Plan:
        """:meth:`import_view`'s events, made before the write and dated as the history dates them
        (:meth:`_import_write` writes them); what ``progress`` raises leaves as :class:`CallerRaised`.
        The versions given are needed no longer: the events hold versions of their own. ``built``:
        the versions and log entries are models their constructors made in this call (a file that
        :meth:`import_iceberg` read), which no caller has held, so not checked again."""
        ident = to_identifier(identifier)
        for value, what, optional in ((source, "source", False), (source_location, "source_location", True),
                                      (view_uuid, "view_uuid", True)):
            if not (value is None and optional) and (not isinstance(value, str) or not value.strip()):
                raise ValidationError(f"{what} must be non-empty text, not {value!r}")
        if view_uuid is not None and not is_uuid_text(view_uuid):  # an export writes it as the view-uuid
            raise ValidationError(f"view_uuid must be a UUID written as 8-4-4-4-12 hex digits, not {view_uuid!r}")
        versions = _all_of(versions, ViewVersion, "versions")
        version_log = _all_of(version_log, VersionLogEntry, "version_log")
        # models made without validation are validated now; the columns that versions share, once (a
        # version's constructor copies the tuple it is given, not the columns in it: they are named by
        # the ids of the columns)
        checked_lists: dict[tuple[int, ...], tuple[Any, tuple[Column, ...] | None]] = {}

        def columns(cols: tuple[Any, ...]) -> tuple[Column, ...]:
            key = tuple(map(id, cols))
            hit = checked_lists.get(key)
            if hit is None:  # (the columns are kept with their result, so that their ids name them throughout)
                made = tuple(checked(c) if isinstance(c, Column) else c for c in cols)
                same = all(type(c) is Column and a is c for a, c in zip(made, cols))
                hit = checked_lists[key] = (cols, None if same else made)
            return cols if hit[1] is None else hit[1]  # None: these very columns, as they are

        if not built:
            versions = [_named(checked_version, v, f"versions[{i}]", columns) for i, v in enumerate(versions)]
            version_log = [_named(checked, e, f"version_log[{i}]") for i, e in enumerate(version_log)]
        if type(current_version_id) is not int:
            raise ValidationError(f"current_version_id must be a version id (an int), not {current_version_id!r}")
        props = validate_properties(properties)
        mode = _security_mode(security_mode)
        steps = _import_steps(list(versions), list(version_log), current_version_id)
        count = len(steps)
        every = max(1, -(-count // 50))  # at most 50 calls as events are made, 50 as they are written
        plan = _Plan(None, view_uuid or str(uuidlib.uuid4()), ident, self.actor, 0, 0)
        # a taken name or UUID is refused before the events are made (and again as they are written)
        with self._reading():
            self._import_free(ident, plan.view_id)
        # each step's version, as JSON, is let go once its event is made of it
        steps.reverse()
        made = 0
        while steps:
            plan.now, kind, fields = steps.pop()
            if made:
                plan.add(kind, **fields)
            else:
                plan.add(ViewImported, source=source, source_location=source_location, properties=props,
                         security_mode=mode, **fields)
            made += 1
            if progress is not None and (made % every == 0 or made == count):
                self._report(progress, made, 2 * count)
        if progress is not None:
            reported = progress  # (narrowed for the closure)
            plan.on_stored = lambda stored: self._report(reported, count + stored, 2 * count)
            plan.stored_every = every
        return plan

    def _import_free(self, ident: Identifier, view_id: str) -> None:
        """Refuse an import whose name a live view has, or whose UUID is in the store (written in
        either case: the same UUID, see :func:`~viewstore.model.same_uuid`)."""
        if self._live_state(ident) is not None:
            raise ViewAlreadyExistsError(f"view already exists: {identifier_str(ident)}")
        self._free_in_log(ident)
        key = self._log.stream_spelled(view_id)
        if key is not None:
            held = self._projections.load(key)
            which = (f": {identifier_str(held.identifier)}{'' if held.live else ', dropped'}"
                     if held is not None else "")
            spelled = "" if key == view_id else f" (written {key})"
            raise ViewAlreadyExistsError(f"a view with UUID {view_id} is already in the store{spelled}{which} "
                                         "(a view is recorded once; its history is there)")

    def _import_write(self, plan: _Plan) -> View:
        """Write the events :meth:`_import_plan` made, once the view's name and UUID are known free."""
        events = plan.events
        ident = plan.identifier

        def decide() -> _Plan:
            self._import_free(ident, plan.view_id)
            # The events keep the history's own times, except where another view held this name
            # (dropped, or renamed away): those move to just after it let go, so that a time names
            # one view, and as_of a time agrees with as_of that view's events.
            taken = self._log.last_time_named(identifier_str(ident))
            plan.events = events if taken is None or events[0].occurred_at > taken else [
                e if e.occurred_at > taken else e.model_copy(update={"occurred_at": taken + 1}) for e in events]
            return plan

        state = self._write(decide)[1]
        # the View is built without the events: let go of them (unless transaction() keeps them for its signals)
        plan.events = []
        del decide, events
        assert state is not None
        return self._result(ident, (None, state))

    # -- maintenance ------------------------------------------------------------------------------

    def rebuild(self, progress: Callable[[int, int], None] | None = None) -> dict[str, int]:
        """Replay the whole log and make the projections match it (in one transaction).

        Only projection rows that differ from the replay are rewritten, so rebuilding consistent
        projections writes nothing, and the result says what was repaired.

        Args:
            progress: called as ``progress(done, total)`` while events are replayed; an exception
                it raises stops the rebuild (nothing is written) and reaches the caller unchanged.

        Returns:
            For each projection table (``views``, ``view_versions``, ``view_version_log``,
            ``view_snapshots``), how many rows were rewritten, added or removed: all zero when
            the projections already matched the log.

        Raises:
            CorruptLogError: a row of the log that this library did not write (naming its position);
                nothing is written.
            ValidationError: ``progress`` is not callable.
            ConcurrencyError: the database stayed locked (``busy`` is set).
        """
        check_progress(progress)
        try:
            return self._rebuild(progress)
        except CallerRaised as raised:
            callers = raised.error
        raise callers  # outside the handler: the callback's exception, its context untouched

    def _rebuild(self, progress: Callable[[int, int], None] | None) -> dict[str, int]:
        """:meth:`rebuild`'s work; what ``progress`` raises leaves as :class:`CallerRaised`."""
        with self._lock:
            self._fresh()
            with self._write_transaction():
                total = self._log.count()
                states: dict[str, ViewState] = {}
                done = 0
                # The fold makes a few short-lived dicts per event and no cycles; the cyclic garbage
                # collector would still walk the growing states again and again (about 7% of a rebuild).
                collecting = gc.isenabled()
                gc.disable()
                try:
                    for rows in self._log.iter_rows(without_commit_id=True):
                        fold_stored(states, rows)
                        done += len(rows)
                        if progress is not None:
                            self._report(progress, done, total)
                    repaired = self._projections.replace(states.values())
                finally:
                    # free the fold's objects while the collector is still off: back on, its first
                    # pass would walk every one of them (0.3 s after a 1M-event rebuild)
                    states.clear()
                    if collecting:
                        gc.enable()
            self._cache.clear()
            if any(repaired.values()):
                self._repairs = self._projections.repairs()
            return repaired

    def projection_dump(self) -> dict[str, list[tuple[Any, ...]]]:
        """Every projection row (for checking that :meth:`rebuild` reproduces the live state)."""
        with self._reading():
            return self._projections.dump()

    # -- Iceberg ----------------------------------------------------------------------------------

    def export_iceberg(self, identifier: IdentifierLike, location: str | Path | None = None, *,
                       gzip: bool | None = None, progress: Callable[[int, int], None] | None = None) -> Path:
        """Write the view's Iceberg metadata file; returns its path. See :mod:`viewstore.iceberg`.
        A view unchanged since the latest file there (same codec) has nothing to commit: no file is
        written, and that file's path is returned.

        ``gzip`` writes ``NNNNN-<uuid>.gz.metadata.json``; left out, the view's
        ``write.metadata.compression-codec`` property decides (``gzip`` or ``none``), else plain JSON.
        The spec's metadata has no field for the security mode, so the file does not carry it
        (:meth:`import_iceberg` takes it as an argument).

        Args:
            progress: called as ``progress(done, total)`` while the view's versions are read from
                the store and then put in the metadata, each counted once read and once put in
                (only those the file keeps: ``version.history.num-entries``); the last call has
                ``done == total`` (about two hundred calls, however many versions). An exception
                it raises stops the export (no file is written) and reaches the caller unchanged.

        Raises:
            NoSuchViewError: no live view has that identifier.
            IcebergMetadataError: the location holds another view's metadata, or cannot be written
                (or a stored property it reads is not one it can follow).
            ValidationError: a bad identifier, location, ``gzip`` (not True, False or None) or
                ``progress`` (not callable).
            DamagedProjectionsError: the view's stored rows are damaged, or behind its log
                (``rebuild()`` repairs them).
            ViewStoreError: called inside this thread's open :meth:`transaction`.
        """
        from .iceberg import exclusive, metadata_folder, metadata_gzip, write_metadata, written_already

        if gzip is not None and not isinstance(gzip, bool):  # "false" is truthy: it would write gzip
            raise ValidationError(f"gzip must be True, False or None, not {gzip!r}")
        check_progress(progress)
        if self.in_transaction:
            raise ViewStoreError("export_iceberg writes files, which a rollback cannot take back: export "
                                 "after the transaction has committed")
        base = to_path(location, "location") if location is not None else None
        view = self.load_view(identifier)  # a view that does not exist makes no folder
        if base is None:
            base = self.warehouse.joinpath(*view.identifier)
        counted: tuple[int, int] | None = None
        if not metadata_folder(base, view.properties).is_dir():
            # nor one whose versions are damaged (CorruptLogError): the file lists them all
            counted = self._read_versions(view, progress)
        # one export to a metadata folder at a time (threads, processes), each with the view as it is
        # once it has the lock: numbers are never taken twice, and a higher number never holds older
        # state; if write.metadata.path changed meanwhile, the lock of the folder it names is taken
        while True:
            folder = metadata_folder(base, view.properties)
            with exclusive(base, folder):
                view = self.load_view(view.identifier)
                if metadata_folder(base, view.properties) == folder:
                    # the latest file named after this very state holds its metadata: nothing to build
                    file_uuid = self._export_uuid(view, base, gzip)
                    found = written_already(base, folder, file_uuid, metadata_gzip(view.properties, gzip))
                    if found is not None:
                        if progress is not None:  # all of it done at once
                            total = self._export_total(view)
                            progress(total, total)
                        return found
                    if counted is None:
                        counted = self._read_versions(view, progress)
                    if progress is None:
                        return write_metadata(view, base, gzip=gzip, file_uuid=file_uuid)
                    read, total = counted
                    done = [read]

                    def built(count: int) -> None:
                        # (the view may have changed since its versions were read: never past total)
                        done[0] = min(read + count, total)
                        reported(done[0], total)

                    reported = progress  # (narrowed for the closure)
                    path = write_metadata(view, base, gzip=gzip, progress=built, file_uuid=file_uuid)
                    if done[0] != total:  # it changed, and the file keeps fewer: the call that ends it
                        progress(total, total)
                    return path

    def _export_uuid(self, view: View, base: Path, gzip: bool | None) -> str:
        """The UUID the export of ``view`` to ``base`` names its file with (see
        :func:`viewstore.iceberg.export_uuid`): of its state, by the commit of its last event.

        Raises:
            DamagedProjectionsError: the view's projection is behind its log (its rows would be exported,
                and the file named after the state of an event whose rows they need not be).
        """
        from .iceberg import export_uuid, metadata_gzip

        codec = metadata_gzip(view.properties, gzip)
        with self._reading():
            rows = self._log.stream_rows(view.uuid, after_version=view.stream_version - 1, limit=2)
            # a later event: a commit since the view was read, or (the projection in this same read
            # not past it: its load refuses that) a projection behind its log
            later = rows[1][3] if len(rows) > 1 else None
            held = self._projections.load(view.uuid) if later is not None else None
        if later is not None and held is None:
            raise out_of_step(identifier_str(view.identifier), view.uuid, None, later, at_least=True)
        if not rows or rows[0][3] != view.stream_version:  # the projection and the log disagree: no name of a state
            return str(uuidlib.uuid4())
        return export_uuid(view.uuid, view.stream_version, rows[0][1], base, codec)

    @staticmethod
    def _export_total(view: View) -> int:
        """The ``total`` of an export's progress: the view's versions, and those its file keeps."""
        from .iceberg import retained_count

        count = len(view.version_ids)
        return count + retained_count(view.properties, count)

    @staticmethod
    def _read_versions(view: View, progress: Callable[[int, int], None] | None) -> tuple[int, int]:
        """Build every version of ``view`` (an export lists them), calling ``progress(done, total)``
        as they are read; returns their number and ``total``: that number and how many of them the
        export's file keeps (the other half of its work)."""
        ids = view.version_ids
        total = ViewStore._export_total(view)
        if progress is None:
            view.versions
            return len(ids), total
        every = max(1, -(-len(ids) // 100))  # at most a hundred calls
        for done, version_id in enumerate(ids, 1):
            view.version(version_id)  # built once: view.versions is made of the same models
            if done % every == 0 or done == len(ids):
                progress(done, total)
        view.versions
        return len(ids), total

    def import_iceberg(self, metadata: str | Path | ImportedView, identifier: IdentifierLike, *,
                       security_mode: str = "DEFINER", progress: Callable[[int, int], None] | None = None) -> View:
        """Record a view from an Iceberg metadata file (plain or gzip), with its whole history.

        The file has no field for the security mode (Iceberg does not run views as their definer
        or invoker; :meth:`export_iceberg` leaves the mode out), so the view is recorded with
        ``security_mode``: DEFINER unless told otherwise. The events keep the file's version times,
        so ``as_of`` a time before this import shows the view as the file's history says it was then.

        Args:
            metadata: the file's path (or a view location's, or a folder of metadata files: see
                :func:`~viewstore.iceberg.read_metadata`), which is read; or what ``read_metadata``
                returned for it, which is taken as it is (the file is not read again). Either way the
                path as given is the view's ``source_location``.
            progress: called as ``progress(done, total)`` once the file is read, while its history's
                events are made and written, as :meth:`import_view` calls it (``total`` is twice the
                number of events; the last call has ``done == total``). An exception it raises stops
                the import (nothing is written) and reaches the caller unchanged.

        Raises:
            IcebergMetadataError: the file is unreadable or invalid as the reference implementation judges.
            ViewAlreadyExistsError: the identifier or the view UUID is taken.
            ValidationError: a bad identifier, path, security mode or ``progress`` (not callable), or what
                the store's own rules refuse in a valid file (properties such as
                ``version.history.num-entries: "0"``, an empty key).
        """
        from .iceberg import ImportedView, read_metadata

        check_progress(progress)
        ident = to_identifier(identifier)
        if not isinstance(metadata, (str, os.PathLike, ImportedView)):  # (a dict of the file's JSON, say)
            raise ValidationError("metadata must be a path (a metadata file's, or a view location's) or what "
                                  f"viewstore.iceberg.read_metadata returned, not {type(metadata).__name__}")
        try:
            with collector_paused():  # the file's versions too (see import_view)
                given = isinstance(metadata, ImportedView)  # else read here: its models made by their constructors
                meta = metadata if isinstance(metadata, ImportedView) else read_metadata(metadata)
                del metadata
                plan = self._import_plan(ident, "iceberg", meta.versions, meta.version_log, meta.current_version_id,
                                         meta.properties, security_mode, meta.view_uuid, meta.path, progress,
                                         built=not given)
                # the file's versions are let go before the write (unless the caller holds what it read)
                del meta
                return self._import_write(plan)
        except CallerRaised as raised:
            callers = raised.error
        raise callers  # outside the handler: the callback's exception, its context untouched

    # -- Hive metastore records -------------------------------------------------------------------

    def import_hms(self, table: Any, identifier: IdentifierLike | None = None, *,
                   metadata_file: str | Path | None = None) -> View:
        """Record a view from an engine-native Hive metastore record (Trino, Spark, Hive, Flink, Iceberg).

        The record is decoded by :mod:`viewstore.formats` and recorded as one ``view.imported``
        event with ``source="hms:<engine>"``: one version with the view's SQL in the engine's
        dialect, columns, default catalog and namespace; the comment, the metastore owner (as the
        ``owner`` property) and the decoded properties. An Iceberg view's metadata file (at
        ``metadata_location``, a local path or ``file:`` URI) is read and its whole history
        imported. See :mod:`viewstore.hms`.

        Args:
            table: an HMS table record (a dict shaped like the Thrift ``Table``).
            identifier: where to record it; defaults to the record's ``dbName.tableName``.
            metadata_file: for an Iceberg view, a local copy of the metadata file to read instead.

        Raises:
            ValidationError: the record is not a logical view or is malformed (the message names
                the field), or no identifier is given or recorded.
            IcebergMetadataError: an Iceberg view's metadata file is unreadable, invalid or another view's.
            ViewAlreadyExistsError: a live view has the identifier (or the Iceberg view UUID is in the store).
        """
        from .hms import prepare_import

        return prepare_import(table, identifier, metadata_file=metadata_file).import_into(self)

    def export_hms(self, identifier: IdentifierLike, engine: str, *,
                   metadata_location: str | Path | None = None) -> dict[str, Any]:
        """The Hive metastore record ``engine`` itself would write for the view (see :func:`viewstore.formats.encode`).

        The record's owner is the view's ``owner`` property, else its creator.

        Args:
            identifier: the view.
            engine: ``trino``, ``spark``, ``hive``, ``flink`` or ``iceberg``.
            metadata_location: for ``iceberg`` only, the metadata file the record points at: a URI
                (``s3://...``) as given, a local path (such as :meth:`export_iceberg` returns) as its
                absolute ``file:`` URI. By default, the file the view was imported from by
                :meth:`import_hms`, but only while the view is unchanged since (renames aside).

        Raises:
            NoSuchViewError: no live view has that identifier.
            ValidationError: an unknown engine, no SQL in the engine's dialect, a namespace of more
                than one level, or something the engine cannot express; for ``iceberg``, no
                ``metadata_location`` while the view changed since its import or was not imported
                from an Iceberg HMS record; ``metadata_location`` for another engine.
        """
        from .formats import encode, get_format
        from .hms import imported_metadata_location, metadata_location_uri

        view = self.load_view(identifier)
        if metadata_location is not None:
            metadata_location = metadata_location_uri(metadata_location)
        elif get_format(engine).NAME == "iceberg":
            metadata_location = imported_metadata_location(view, self.history(view.identifier))
        return encode(view, engine, metadata_location=metadata_location)


class _Block:
    """What :meth:`ViewStore.transaction` returns: its block, entered once and ended in the thread
    that began it. The block holds the store's lock, which only that thread can let go: ended in
    another thread, it would commit there and leave the lock taken for ever (every other thread of
    the store waiting). Dropped unended, its generator's finalizer rolls it back."""

    __slots__ = ("_inner", "_thread")

    def __init__(self, inner: AbstractContextManager[ViewStore]) -> None:
        self._inner = inner
        self._thread: int | None = None

    def __enter__(self) -> ViewStore:
        if self._thread is not None:
            raise ViewStoreError("this transaction() was entered already: call store.transaction() for each block")
        self._thread = threading.get_ident()
        return self._inner.__enter__()

    def __exit__(self, *exc: Any) -> bool | None:
        if threading.get_ident() != self._thread:
            raise ViewStoreError("a transaction ends in the thread that began it (it holds the store until "
                                 "then); it is still open, with nothing committed or rolled back")
        return self._inner.__exit__(*exc)


class _FileWrite:
    """A write of a store outside its :meth:`ViewStore.transaction`: :class:`viewstore.log.transaction`
    on its connection, refused at once if this thread already writes the file through this or another store
    (see :meth:`ViewStore._write_transaction`); a connection the failed write leaves inside its
    transaction is closed with the store (see :meth:`ViewStore._close_if_stuck`). A class, not a
    contextmanager generator: every such write enters one."""

    __slots__ = ("store", "inner", "held")

    def __init__(self, store: ViewStore) -> None:
        self.store = store
        self.inner = transaction(store._conn, store._on_lock_wait)

    def __enter__(self) -> None:
        store = self.store
        self.held: set[Path] = _WRITING.__dict__.setdefault("files", set())
        if store.path in self.held:
            # this store (a receiver of its write: lock_wait, its write waiting to begin; before_commit,
            # its write under way on the connection, where BEGIN is refused) or another on the file
            raise ViewStoreError(f"this thread is already writing to {store.path}, through this or another "
                                 "ViewStore (from a signal receiver or a callback?); that write would wait for "
                                 "itself")
        if store._conn.in_transaction:  # a read of this store open in this thread: a stream's block
            raise ViewStoreError(_IN_STREAM)
        self.held.add(store.path)
        try:
            self.inner.__enter__()
        except BaseException as error:
            self._end(error)
            raise

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: Any) -> None:
        try:
            self.inner.__exit__(kind, error, tb)  # COMMIT; or ROLLBACK, and the typed error raised
        except BaseException as raised:
            self._end(raised)
            raise
        self._end(error)  # the block's own error, if any, goes on

    def _end(self, error: BaseException | None) -> None:
        try:
            if error is not None:
                self.store._close_if_stuck(error)
        finally:
            self.held.discard(self.store.path)


def _positioned(events: list[Event], stored: list[tuple[int, dict[str, Any]]]) -> list[Event]:
    """The events with the positions the log gave them (as far as they were stored)."""
    return [e.model_copy(update={"position": p}) for e, (p, _) in zip(events, stored)] + events[len(stored):]


_COLUMNS = {"columns"}


def _import_steps(versions: list[ViewVersion], log: list[VersionLogEntry],
                  current_version_id: int) -> list[tuple[int, type[Event], dict[str, Any]]]:
    """Turn an imported version list and log into (time, event type, fields) steps."""
    if not versions:
        raise ValidationError("an imported view needs at least one version")
    by_id = {v.version_id: v for v in versions}
    if len(by_id) != len(versions):
        raise ValidationError("duplicate version ids")
    if current_version_id not in by_id:
        raise ValidationError(f"current version {current_version_id} is not among the versions {sorted(by_id)}")
    for rep_version in versions:
        if not rep_version.representations:
            raise ValidationError(f"version {rep_version.version_id} has no representation")
        _check_dialects(rep_version.representations)
        for key in rep_version.summary:  # a JSON dump would store a lone surrogate in a key replaced
            check_unicode(key, "summary key")
    # The log keeps the file's order: it is a list. Its times need not rise (a writer stamps an added
    # version with its own clock and a rollback with the committer's), so only the events' times are
    # kept from going backwards. Entries that name a version the file no longer holds go as the
    # reference implementation's retention drops them: every entry up to and including the last
    # such one (keeping an earlier entry would claim its version stayed current past the gap). A log
    # that then does not end at the current version gets an entry for it, at the file's latest time.
    unknown = [i for i, e in enumerate(log) if e.version_id not in by_id]
    entries = log[unknown[-1] + 1:] if unknown else list(log)
    if not entries or entries[-1].version_id != current_version_id:
        last = max([by_id[current_version_id].timestamp_ms] + [e.timestamp_ms for e in entries])
        entries.append(VersionLogEntry(timestamp_ms=last, version_id=current_version_id))

    # A version enters its event as JSON, validated again as the event is made, but for its columns:
    # a history's versions mostly share them, so each distinct list is validated from its JSON once,
    # and the events take those Columns (validated models, which the event's validation keeps as
    # they are). Validating every version's columns again cost a third of a long import.
    # (Equal Columns dump to the same JSON, so a list of them is validated the same way.)
    columns_of: dict[tuple[Column, ...], tuple[Column, ...]] = {}

    @_signal_as_itself  # (a column's type dumps through its str)
    def dump(v: ViewVersion) -> dict[str, Any]:
        data = v.model_dump(mode="json", exclude=_COLUMNS)
        columns = columns_of.get(v.columns)
        if columns is None:
            columns = columns_of[v.columns] = tuple(Column(**c.model_dump(mode="json")) for c in v.columns)
        data["columns"] = columns
        return data

    # The entry that added a version made it current at the version's own time (as the reference
    # dates both): the version comes with that entry, not before it, even within one millisecond
    # (a transaction block's writes share one).
    added_by: dict[int, int] = {}
    for i, entry in enumerate(entries):
        if entry.timestamp_ms == by_id[entry.version_id].timestamp_ms:
            added_by.setdefault(entry.version_id, i)

    def there(v: ViewVersion, i: int) -> bool:
        """Whether ``v`` existed at entry ``i``."""
        return v.timestamp_ms <= entries[i].timestamp_ms and added_by.get(v.version_id, i) <= i

    first = entries[0]
    introduced: set[int] = {v.version_id for v in versions if there(v, 0)}
    introduced.add(first.version_id)
    steps: list[tuple[int, type[Event], dict[str, Any]]] = [(
        first.timestamp_ms, ViewImported,
        {"versions": tuple(dump(by_id[i]) for i in sorted(introduced)), "current_version_id": first.version_id,
         "version_log": (first.model_dump(),)})]
    # A version an entry of its own adds comes with that entry, never along with another; the others
    # come along with the first entry they existed at: taken by time from a sorted queue, so that each
    # entry looks only at the versions it brings (looking at every version at every entry made an
    # import of 10,000 versions take 50 s)
    waiting = sorted((v.timestamp_ms, k) for k, v in enumerate(versions)
                     if v.version_id not in introduced and v.version_id not in added_by)
    taken = 0
    for i, entry in enumerate(entries[1:], 1):
        ready: list[int] = []
        while taken < len(waiting) and waiting[taken][0] <= entry.timestamp_ms:
            ready.append(waiting[taken][1])
            taken += 1
        added = [versions[k] for k in sorted(ready)
                 if versions[k].version_id not in introduced and versions[k].version_id != entry.version_id]
        at = max(steps[-1][0], entry.timestamp_ms)
        # versions that appeared without becoming current ride along with the next step
        fields: dict[str, Any] = {"current_version_id": entry.version_id, "log_entry": entry.model_dump()}
        if entry.version_id not in introduced:
            introduced.add(entry.version_id)
            steps.append((at, ViewReplaced, {**fields, "version": dump(by_id[entry.version_id])}))
        else:
            steps.append((at, ViewRolledBack, fields))
        for v in added:
            introduced.add(v.version_id)
            steps.append((at, ViewReplaced, {"version": dump(v), "current_version_id": None, "log_entry": None}))
    # those never current after the log come at their own times, so in time order (ids need not follow it)
    rest = sorted((v for v in versions if v.version_id not in introduced), key=lambda v: (v.timestamp_ms, v.version_id))
    for v in rest:
        steps.append((max(steps[-1][0], v.timestamp_ms), ViewReplaced,
                      {"version": dump(v), "current_version_id": None, "log_entry": None}))
    return steps


def _notify(signal: Any, store: ViewStore, **kwargs: Any) -> list[Exception]:
    """Send ``signal`` to each of its receivers in turn: one that raises is logged (logger
    ``viewstore``) and the others still run. Returns what they raised."""
    raised: list[Exception] = []
    if signal.is_muted:  # blinker's Signal.muted(), as send honours it
        return raised
    for receiver in signal.receivers_for(store):
        try:
            if inspect.iscoroutinefunction(receiver):  # send refuses these too: nothing would await it
                raise RuntimeError(f"cannot send {signal.name} to a coroutine function ({receiver!r})")
            receiver(store, **kwargs)
        except Exception as error:
            _logger.exception("a %s receiver raised", signal.name)
            raised.append(error)
    return raised


def _os_user() -> str:
    try:
        return getpass.getuser()
    except Exception:  # no user name in this environment
        return "unknown"
