"""Projections: the current state of every view, folded from the log.

The schema is declared with SQLModel in :mod:`viewstore.schema` and created from the SQL compiled
from it (:data:`DDL`). The fold (:func:`apply`) works on the stored event rows and their JSON
payloads, so the live path (one commit) and ``ViewStore.rebuild()`` (the whole log, compared with
the tables by :meth:`Projections.replace`) run the very same code and must give the same tables.

Tables:
    views             one row per view ever created: identifier, live flag, current version id,
                      properties, security mode, audit fields, stream version
    view_versions     every version of every view (immutable rows)
    view_version_log  every change of the current version, in order
    view_snapshots    the folded state every ``SNAPSHOT_EVERY`` events of a stream (for ``as_of``), its
                      versions and version log named, not copied (see :meth:`ViewState.to_json`)

The projections are written in the transaction of the events they fold, so they have always applied
the whole log: no "position" row is kept (it cost a page write per commit and was never read).
"""

from __future__ import annotations

import sqlite3
from bisect import bisect_left
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import islice
from typing import Any, Callable, ClassVar, Hashable, Iterable, Iterator, Sequence

from pydantic import ConfigDict, TypeAdapter

from .errors import CorruptLogError, DamagedProjectionsError, _held, _why
from .events import (_trusted, check_stored_columns, check_stored_definition, check_stored_fields,
                     check_stored_version, payload_readers)
from .log import dumps, loads
from .model import (AuditInfo, Column, ReadOnlyDict, SecurityMode, SQLRepresentation, VersionLogEntry, View,
                    ViewVersion, check_column_name, check_dialect, check_sql, id_runs, identifier_str, to_identifier)
from .types import parse_type

__all__ = ["Projections", "ViewState", "Versions", "VersionLog", "apply", "fold_stored", "DDL", "SNAPSHOT_EVERY",
           "state_to_view"]

#: a snapshot of a stream's state is kept every this many events, so ``as_of`` folds at most this many
SNAPSHOT_EVERY = 100
#: parsed snapshots kept for ``as_of`` (per store): at most this many, holding at most this many versions
#: and version-log entries in all (each parsed snapshot holds its own copy of its view's version rows,
#: so a few of a view with 10,000 versions weigh what hundreds of short ones do)
PARSED_SNAPSHOTS = 256
PARSED_SNAPSHOT_ENTRIES = 200_000


PROJECTION_TABLES = ("views", "view_versions", "view_version_log", "view_snapshots")




def _damaged(where: str, error: Exception) -> DamagedProjectionsError:
    return DamagedProjectionsError(f"the projections are damaged at {where} ({_why(error)}); rebuild() repairs "
                                   "them from the log")


def out_of_step(view: str, view_id: str, held: int | None, head: Any, *,
                at_least: bool = False) -> DamagedProjectionsError:
    """The error of a view whose projection rows are not those of the end of its stream in the log:
    they hold it at stream version ``held`` (None: no row of it), the log's last event of it is at
    ``head`` (None: none; ``at_least``: it goes on to ``head`` at least). The two are written in one
    transaction, so only damage (a file edited or partly restored behind the library's back) parts them."""
    holds = "no row of it" if held is None else f"it at stream version {held}"
    if head is None:
        where, log = "ahead of", "its log holds no event of it"
    elif type(head) is int and held is not None and head < held:
        where, log = "ahead of", f"its log ends at stream version {head}"
    else:
        where, log = "behind", f"its log goes on to stream version {_held(head, int)}"
        log += " at least" if at_least else ""
    return DamagedProjectionsError(f"the projections are {where} the log for view {view} ({view_id}): they hold "
                                   f"{holds}, {log}; rebuild() repairs them from the log")


def named_out_of_step(view_id: str, held: str, live: bool, named: Any, kind: Any) -> DamagedProjectionsError:
    """The error of a views row at its stream's last stream version whose name or live flag is not
    what that last event leaves (``named``, and live unless ``kind`` is a drop): changed behind the
    library's back."""
    logged = f"{_held(named)}{' (dropped)' if kind == 'view.dropped' else ''}"
    return DamagedProjectionsError(f"the projections name view {view_id} {held}{'' if live else ' (dropped)'}, "
                                   f"but its log's last event leaves it {logged}; rebuild() repairs them from the log")


def held_in_log(view: str, view_id: Any, position: Any) -> DamagedProjectionsError:
    """The error of a name the projections hold free (no live views row has it) while the log's
    view ``view_id`` took it at ``position`` and holds it still: a views row deleted, or its name or
    live flag changed, behind the library's back."""
    return DamagedProjectionsError(f"the projections hold no live view {view}, but the log does: view {_held(view_id)} "
                                   f"took the name at position {_held(position, int)} and holds it still; "
                                   "rebuild() repairs them from the log")


#: the SQL that creates the projection tables (``IF NOT EXISTS``), run by :func:`viewstore.log.connect`:
#: the text :func:`viewstore.schema.ddl` compiles from the SQLModel declarations there (a test holds
#: the two equal), kept here so that opening a store needs no SQLAlchemy
DDL = """\
CREATE TABLE IF NOT EXISTS views (
    view_id VARCHAR NOT NULL,
    namespace VARCHAR NOT NULL,
    name VARCHAR NOT NULL,
    live INTEGER NOT NULL,
    stream_version INTEGER NOT NULL,
    current_version_id INTEGER NOT NULL,
    properties VARCHAR NOT NULL,
    security_mode VARCHAR NOT NULL,
    creator VARCHAR NOT NULL,
    created_at INTEGER NOT NULL,
    modifier VARCHAR NOT NULL,
    modified_at INTEGER NOT NULL,
    last_position INTEGER NOT NULL,
    PRIMARY KEY (view_id)
);
CREATE INDEX IF NOT EXISTS views_by_name ON views (namespace, name);
CREATE INDEX IF NOT EXISTS views_by_namespace ON views (live, namespace, name);
CREATE UNIQUE INDEX IF NOT EXISTS views_live_name ON views (namespace, name) WHERE live = 1;
CREATE TABLE IF NOT EXISTS view_versions (
    view_id VARCHAR NOT NULL,
    version_id INTEGER NOT NULL,
    timestamp_ms INTEGER NOT NULL,
    schema_id INTEGER NOT NULL,
    columns VARCHAR NOT NULL,
    representations VARCHAR NOT NULL,
    default_catalog VARCHAR,
    default_namespace VARCHAR NOT NULL,
    summary VARCHAR NOT NULL,
    PRIMARY KEY (view_id, version_id)
);
CREATE TABLE IF NOT EXISTS view_version_log (
    view_id VARCHAR NOT NULL,
    seq INTEGER NOT NULL,
    timestamp_ms INTEGER NOT NULL,
    version_id INTEGER NOT NULL,
    PRIMARY KEY (view_id, seq)
);
CREATE TABLE IF NOT EXISTS view_snapshots (
    view_id VARCHAR NOT NULL,
    stream_version INTEGER NOT NULL,
    occurred_at INTEGER NOT NULL,
    state VARCHAR NOT NULL,
    PRIMARY KEY (view_id, stream_version)
);
DROP TABLE IF EXISTS projection;
"""


#: each projection table's columns, in the order of its declaration (the order the row builders
#: write), and how many of them lead as the primary key; read off :data:`DDL` by SQLite itself
def _table_columns() -> dict[str, tuple[tuple[str, ...], int]]:
    conn = sqlite3.connect(":memory:")
    try:
        conn.executescript(DDL)
        found = {}
        for table in PROJECTION_TABLES:
            info = conn.execute(f"PRAGMA table_info({table})").fetchall()  # cid, name, type, notnull, default, pk
            found[table] = (tuple(row[1] for row in info), sum(1 for row in info if row[5]))
        return found
    finally:
        conn.close()


_TABLE_COLUMNS = _table_columns()


#: a version as read from ``view_versions``, not parsed yet: (version_id, timestamp_ms, schema_id, columns,
#: representations, default_catalog, default_namespace, summary), the JSON columns as stored text
StoredRow = tuple[Any, ...]


class _Shelf:
    """What the states of one stream share of its versions: every version one of them added, in the
    order they were added. Entries are only ever appended (see :class:`Versions`), so each state sees a
    prefix; what is derived from the entries (parsed versions, models, indexes) is filled in on first
    use and holds for every prefix."""

    __slots__ = ("view_id", "ids", "slots", "items", "models", "max_ids", "max_schema_ids", "indexes")

    def __init__(self, view_id: str, ids: list[int], items: list[Any]) -> None:
        self.view_id = view_id
        self.ids = ids                                  # version ids, in the order added
        self.slots = {vid: i for i, vid in enumerate(ids)}  # version id -> its place in ids
        self.items = items                              # a StoredRow until parsed, then the checked dict
        self.models: dict[int, ViewVersion] = {}        # by place: the model, once built
        self.max_ids: list[int] = []                    # [i]: the highest id of the first i + 1 versions
        self.max_schema_ids: list[int] = []             # [i]: the same of their schema ids
        # key function -> (how many places it covers, key -> places in order)
        self.indexes: dict[Callable[[dict[str, Any]], Hashable], tuple[int, dict[Hashable, list[int]]]] = {}


class Versions(Mapping[int, dict[str, Any]]):
    """The versions of a view's state: version id -> the stored version (a dict as the log holds it).

    A stream never loses a version, and a write folds its events into a copy of the state it read, so
    copies share one :class:`_Shelf` and each sees the first ``len(self)`` of its entries: a copy costs
    nothing, however many versions the view has. A state that adds a version where another state of
    the stream already added one past their common prefix (a write that failed and was decided again;
    an ``as_of`` fold from a cached snapshot) takes a shelf of its own first. Only the store's folds add,
    and they run under the store's lock; reading (a View building its versions) needs no lock.

    Versions read back from ``view_versions`` are kept as stored text and parsed, and checked as
    :func:`_check_types` checks them, when first used: a load reads the current version, not all of
    them. A damaged one raises CorruptLogError when it is used.
    """

    __slots__ = ("_shelf", "_n")

    def __init__(self, view_id: str = "", rows: Iterable[StoredRow | dict[str, Any]] = ()) -> None:
        if rows == ():  # a new view's (rebuild() makes one per view): nothing to check
            self._shelf, self._n = _Shelf(view_id, [], []), 0
            return
        items = list(rows)
        ids = [item["version_id"] if isinstance(item, dict) else item[0] for item in items]
        # the ids are read without parsing the versions, and the rules take the next id from them
        if any(type(vid) is not int or not -2**31 <= vid < 2**31 for vid in ids):
            raise TypeError("a version id that is not a 32-bit integer")
        self._shelf = _Shelf(view_id, ids, items)
        self._n = len(ids)
        if len(self._shelf.slots) != self._n:
            raise ValueError("a version id given twice")

    def __len__(self) -> int:
        return self._n

    def __iter__(self) -> Iterator[int]:
        return islice(self._shelf.ids, self._n)

    def __contains__(self, version_id: object) -> bool:
        place = self._shelf.slots.get(version_id)  # type: ignore[call-overload]
        return place is not None and place < self._n

    def __getitem__(self, version_id: int) -> dict[str, Any]:
        place = self._shelf.slots.get(version_id)
        if place is None or place >= self._n:
            raise KeyError(version_id)
        return self._item(place)

    def __repr__(self) -> str:
        return f"Versions({list(self)})"

    def _item(self, place: int) -> dict[str, Any]:
        shelf = self._shelf
        item = shelf.items[place]
        if type(item) is not dict:  # a stored row: parse it once for every state that shares it
            item = shelf.items[place] = _stored_version(shelf.view_id, item)
        return item

    def copy(self) -> "Versions":
        twin = object.__new__(Versions)
        twin._shelf, twin._n = self._shelf, self._n
        return twin

    def add(self, version_id: int, version: dict[str, Any]) -> bool:
        """Add a version (a checked dict); False, adding nothing, if there is one with that id (a
        version is never replaced, see :func:`_add_version`)."""
        shelf, n = self._shelf, self._n
        place = shelf.slots.get(version_id)
        if place is not None and place < n:
            return False
        if len(shelf.ids) != n:  # another state of the stream added past our prefix
            shelf = self._own_shelf()
        shelf.slots[version_id] = n
        shelf.ids.append(version_id)
        shelf.items.append(version)
        self._n = n + 1
        return True

    def of(self, version_ids: Iterable[int]) -> list[dict[str, Any]]:
        """The versions with these ids (KeyError if one is not there)."""
        slots, items, n = self._shelf.slots, self._shelf.items, self._n
        found = []
        for version_id in version_ids:
            place = slots[version_id]
            if place >= n:
                raise KeyError(version_id)
            version = items[place]
            found.append(version if type(version) is dict else self._item(place))
        return found

    def _own_shelf(self) -> _Shelf:
        old, n = self._shelf, self._n
        shelf = _Shelf(old.view_id, old.ids[:n], old.items[:n])
        # dict() copies in one step: a View building its models (no lock) may add to them meanwhile
        shelf.models = {place: model for place, model in dict(old.models).items() if place < n}
        shelf.max_ids = old.max_ids[:n]
        shelf.max_schema_ids = old.max_schema_ids[:n]
        self._shelf = shelf
        return shelf

    def max_id(self) -> int:
        """The highest version id (of a live view's versions: there is at least one)."""
        n, shelf = self._n, self._shelf
        highest, ids = shelf.max_ids, shelf.ids
        for place in range(len(highest), n):
            highest.append(max(highest[-1], ids[place]) if place else ids[place])
        return highest[n - 1]

    def max_schema_id(self) -> int:
        """The highest schema id of the versions (of a live view's: there is at least one)."""
        n, shelf = self._n, self._shelf
        highest = shelf.max_schema_ids
        for place in range(len(highest), n):
            schema_id = self._item(place)["schema_id"]
            highest.append(max(highest[-1], schema_id) if place else schema_id)
        return highest[n - 1]

    def places(self, key: Callable[[dict[str, Any]], Hashable], value: Hashable, *,
               definition_only: bool = False) -> list[int]:
        """The places (in the order added) of the versions whose ``key(version)`` is ``value``.

        The index of ``key`` is built on first use (every version read once) and extended as
        versions are added, so a write finds an identical version without looking at every one.
        With ``definition_only``, ``key`` reads only the fields of :func:`_stored_definition`, and a
        version not parsed yet is read for those alone (its columns are checked when it is used)."""
        found = self._index(key, definition_only).get(value)
        if not found:
            return []
        return found[:bisect_left(found, self._n)]  # a longer state's places past ours are not ours

    def first_place(self, key: Callable[[dict[str, Any]], Hashable], value: Hashable) -> int | None:
        """The place of the first version added whose ``key(version)`` is ``value``, None if none is.

        The index of ``key`` is extended only as far as the first match: the schema of a replace is
        usually that of the first version."""
        shelf, n = self._shelf, self._n
        covered, index = shelf.indexes.get(key, (0, {}))
        found = index.get(value)
        if found and found[0] < n:
            return found[0]
        for place in range(covered, n):  # not among the places indexed so far: go on to the first match
            here = key(self._item(place))
            index.setdefault(here, []).append(place)
            if here == value:
                shelf.indexes[key] = (place + 1, index)
                return place
        if covered < n:
            shelf.indexes[key] = (n, index)
        return None

    def _index(self, key: Callable[[dict[str, Any]], Hashable], definition_only: bool) -> dict[Hashable, list[int]]:
        shelf, n = self._shelf, self._n
        covered, index = shelf.indexes.get(key, (0, {}))
        if covered < n:
            items, view_id = shelf.items, shelf.view_id
            for place in range(covered, n):
                item = items[place]
                if type(item) is not dict:
                    item = _stored_definition(view_id, item) if definition_only else self._item(place)
                index.setdefault(key(item), []).append(place)
            shelf.indexes[key] = (n, index)
        return index

    def at(self, place: int) -> tuple[int, dict[str, Any]]:
        """The id and version at a place (as :meth:`places` gives them)."""
        return self._shelf.ids[place], self._item(place)

    def model(self, version_id: int, shared: dict[tuple[Any, ...], Any] | None = None) -> ViewVersion | None:
        """The model of a version, built once for every state that shares it; None if there is none.
        Columns and representations equal to one in ``shared`` are that one (see :func:`_version_model`)."""
        shelf = self._shelf
        place = shelf.slots.get(version_id)
        if place is None or place >= self._n:
            return None
        model = shelf.models.get(place)
        if model is None:
            model = shelf.models[place] = _version_model(self._item(place), shared)
        return model

    def models(self) -> tuple[ViewVersion, ...]:
        """Every version's model, by id; equal columns (and representations) of the versions built
        here are one object, as those of the events of one read are."""
        shared: dict[tuple[Any, ...], Any] = {}
        return tuple(self.model(vid, shared) for vid in sorted(self))  # type: ignore[misc]


class VersionLog(Sequence[tuple[int, int]]):
    """A state's version log, (timestamp_ms, version_id) pairs: like :class:`Versions`, a prefix of a
    list that the states of a stream share and only ever append to."""

    __slots__ = ("_items", "_n")

    def __init__(self, pairs: Iterable[tuple[int, int]] = ()) -> None:
        self._items = list(pairs)
        self._n = len(self._items)

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return self._items[:self._n][index]
        if not -self._n <= index < self._n:
            raise IndexError(index)
        return self._items[index if index >= 0 else self._n + index]

    def __iter__(self) -> Iterator[tuple[int, int]]:
        return islice(self._items, self._n)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (VersionLog, list, tuple)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    def __repr__(self) -> str:
        return f"VersionLog({list(self)})"

    def copy(self) -> "VersionLog":
        twin = object.__new__(VersionLog)
        twin._items, twin._n = self._items, self._n
        return twin

    def since(self, start: int) -> list[tuple[int, int]]:
        """The pairs from ``start`` on."""
        return self._items[start:self._n]

    def append(self, pair: tuple[int, int]) -> None:
        items = self._items
        if len(items) != self._n:  # another state of the stream appended past our prefix
            items = self._items = items[:self._n]
        items.append(pair)
        self._n += 1

    def extend(self, pairs: Iterable[tuple[int, int]]) -> None:
        for pair in pairs:
            self.append(pair)


def _check_log(pairs: list[Any]) -> VersionLog:
    """A version log read back (rows of ``view_version_log``, a snapshot's lists): pairs of integers."""
    checked = []
    for pair in pairs:
        if type(pair) is not tuple:
            if type(pair) is not list:
                raise TypeError(f"the version log holds {pair!r}, not a (timestamp_ms, version_id) pair")
            pair = tuple(pair)
        if len(pair) != 2 or type(pair[0]) is not int or type(pair[1]) is not int:
            raise TypeError(f"the version log holds {pair!r}, not a (timestamp_ms, version_id) pair of integers")
        checked.append(pair)
    return VersionLog(checked)


@dataclass(slots=True)
class ViewState:
    """The mutable working state of one view while events are folded into it.

    Read back from the projections (a ``views`` row, a snapshot), a state is built through pydantic
    (:data:`_read_state`), which checks every field against these annotations: projections are
    derived data that nothing guards but rebuild(), so damage ends in CorruptLogError instead of a
    wrong view or a stray error. Values are coerced only where the meaning is plain (SQLite's 0 and 1
    for ``live``). The versions and the version log are checked by their readers: the log's pairs when
    read, each version when first used (see :class:`Versions`).
    """

    __pydantic_config__: ClassVar[ConfigDict] = ConfigDict(extra="forbid", arbitrary_types_allowed=True)
    view_id: str
    namespace: str
    name: str
    live: bool
    stream_version: int
    current_version_id: int
    properties: dict[str, str]
    security_mode: SecurityMode
    creator: str
    created_at: int
    modifier: str
    modified_at: int
    last_position: int
    versions: Versions = field(default_factory=Versions)
    version_log: VersionLog = field(default_factory=VersionLog)
    # what the writer still has to store
    new_versions: list[int] = field(default_factory=list)
    log_saved: int = 0
    snapshots: list[tuple[int, int, str]] = field(default_factory=list)
    stored_key: tuple[str, str, bool] | None = None
    """(namespace, name, live) of this view's row in ``views`` as stored now; None: no row yet."""
    qualified: str = ""
    """``namespace.name`` as the fold last split it ("": not yet), so it splits only on a change."""

    @property
    def identifier(self) -> tuple[str, ...]:
        return (*self.namespace.split("."), self.name)

    def current_version(self) -> dict[str, Any]:
        """The current version, parsed and checked if it was not yet (see :class:`Versions`). Every
        state holds it: a load, a snapshot's read and a fold refuse a state that would not.

        Raises:
            CorruptLogError: its row in ``view_versions`` is damaged.
        """
        return self.versions[self.current_version_id]

    def to_json(self) -> str:
        """The snapshot of this state: its fields, with its versions and version log named, not copied.

        Within the store a stream's versions are only ever added (rows of ``view_versions`` keyed by
        view and version id) and its version log only grows (rows of ``view_version_log`` keyed by
        view and seq, 1 to n), so a state names its versions by their ids, as runs of consecutive
        ids (``version_id_runs``: ``[[1, 3000]]``), and its log by its length (``version_log_length``:
        the first so many rows of the stream's log). A snapshot then has the same size at 10 versions
        and at 10,000, where copying the versions (or listing their ids and the log's entries) made
        each snapshot larger than the one before. The runs are sorted: a state read back from the
        projections and one folded from the log must give the same text, or rebuild() would count a
        repair where there is none."""
        return dumps({
            "view_id": self.view_id, "namespace": self.namespace, "name": self.name, "live": self.live,
            "stream_version": self.stream_version, "current_version_id": self.current_version_id,
            "properties": self.properties, "security_mode": self.security_mode, "creator": self.creator,
            "created_at": self.created_at, "modifier": self.modifier, "modified_at": self.modified_at,
            "last_position": self.last_position, "version_id_runs": id_runs(self.versions),
            "version_log_length": len(self.version_log),
        })

    @classmethod
    def from_json(cls, data: str, versions: Callable[[list[list[int]]], dict[int, StoredRow | dict[str, Any]]],
                  log: Callable[[int], list[Any]]) -> "ViewState":
        """A state from its snapshot (see :meth:`to_json`).

        ``versions(runs)`` gives (at least) the versions with the ids of these runs of consecutive
        ids (``[[first, last], ...]``, sorted), by id: rows of ``view_versions`` as read (parsed when
        first used), or versions already checked. ``log(n)`` gives the first ``n`` entries of the
        stream's version log, in order, as (timestamp_ms, version_id) rows. The snapshots of earlier releases
        are read too: those that list their version ids and log entries, and the older ones that
        copy their versions whole.

        Raises:
            CorruptLogError: the snapshot is not one the library wrote, or names a version or log
                entries that ``versions`` or ``log`` lack.
        """
        try:
            d = loads(data)
            if not isinstance(d, dict):
                raise TypeError("it is not a JSON object")
            view_id = d.get("view_id")
            if not isinstance(view_id, str):
                raise TypeError("it names no view")
            if "versions" in d:  # a snapshot written when they held whole versions
                if not isinstance(d["versions"], list):
                    raise TypeError("its versions are not a list")
                d["versions"] = Versions(view_id, [_check_types(check_stored_version(v)) for v in d["versions"]])
            elif "version_ids" in d:  # a snapshot written when they listed the ids
                named = d.pop("version_ids")
                if not (isinstance(named, list) and all(type(i) is int for i in named)):
                    raise TypeError("it does not name its versions")
                stored = versions(id_runs(named))
                d["versions"] = Versions(view_id, [stored[i] for i in named])
            else:
                runs = _check_runs(d.pop("version_id_runs", None))
                stored = versions(runs)
                # a damaged run as long as 2**32 ids stops at the first id not found: no list that long is made
                d["versions"] = Versions(view_id, [stored[i] for first, last in runs for i in range(first, last + 1)])
            if "version_log_length" in d:
                if "version_log" in d:
                    raise TypeError("it holds its version log and names it by its length")
                d["version_log"] = _named_log(view_id, d.pop("version_log_length"), log)
            else:  # a snapshot of an earlier release: the log's entries themselves
                if not isinstance(d.get("version_log"), list):
                    raise TypeError("its version log is not a list")
                d["version_log"] = _check_log(d["version_log"])
            state = _read_state(d)
            if state.current_version_id not in state.versions:
                raise KeyError(state.current_version_id)
        except KeyError as e:
            raise DamagedProjectionsError(f"the snapshot of view {d.get('view_id')} names version {e}, "
                                          f"which view_versions does not hold; rebuild() repairs it") from e
        except (ValueError, TypeError) as e:
            raise DamagedProjectionsError(f"a snapshot in view_snapshots is damaged ({_why(e)}); "
                                          "rebuild() repairs it") from e
        return state

    def copy(self) -> "ViewState":
        return ViewState(self.view_id, self.namespace, self.name, self.live, self.stream_version,
                         self.current_version_id, dict(self.properties), self.security_mode, self.creator,
                         self.created_at, self.modifier, self.modified_at, self.last_position,
                         self.versions.copy(), self.version_log.copy(), [], len(self.version_log), [],
                         self.stored_key, self.qualified)


#: a ViewState from a dict read back from the projections, every field checked (see ViewState)
_read_state: Callable[[dict[str, Any]], ViewState] = TypeAdapter(ViewState).validator.validate_python


def _check_runs(runs: Any) -> list[list[int]]:
    """A snapshot's ``version_id_runs`` as :meth:`ViewState.to_json` writes them: pairs of 32-bit
    version ids, each run's first id at most its last, runs sorted and apart (TypeError if not)."""
    if not isinstance(runs, list):
        raise TypeError("it does not name its versions")
    after = -2**31 - 2  # the last id of the run before (none yet: any 32-bit id may come first)
    for run in runs:
        if not (type(run) is list and len(run) == 2 and type(run[0]) is int and type(run[1]) is int
                and after + 1 < run[0] <= run[1] < 2**31):
            raise TypeError(f"its versions are named by {run!r}, not by a run [first, last] of 32-bit "
                            "version ids after the run before it")
        after = run[1]
    return runs


def _named_log(view_id: str, length: Any, log: Callable[[int], list[Any]]) -> VersionLog:
    """The version log a snapshot names by its length: the first ``length`` entries ``log`` gives.

    Raises:
        TypeError: the length is not a count.
        CorruptLogError: ``log`` gives fewer entries.
    """
    if type(length) is not int or not 0 <= length < 2**62:
        raise TypeError(f"its version log is named by {length!r}, not by a length")
    entries = log(length)
    if len(entries) != length:
        raise DamagedProjectionsError(f"the snapshot of view {view_id} names the first {length} entries of its "
                                      f"version log, and view_version_log holds {len(entries)} of them; "
                                      "rebuild() repairs it")
    return _check_log(entries)


def _check_types(version: dict[str, Any]) -> dict[str, Any]:
    """The version, once each of its column types parses (cached) and its column names, dialects and
    SQL pass the models' own rules (ValidationError, a ValueError, if not).

    The stored shape (:func:`viewstore.events.check_stored_version`) only says these are text: this
    says viewstore can read them, and that the event models take what the fold took."""
    for column in version["columns"]:
        parse_type(column["type"])
        check_column_name(column["name"])
    _check_representations(version["representations"])
    return version


def _check_representations(representations: list[dict[str, Any]]) -> None:
    """A version's representations pass the models' rules: at least one (the library never writes a
    version without), each dialect and SQL valid (ValueError if not)."""
    if not representations:
        raise ValueError("a version without representations")
    for representation in representations:
        check_dialect(representation["dialect"])
        check_sql(representation["sql"])


def _stored_version(view_id: str, row: StoredRow) -> dict[str, Any]:
    """A row of ``view_versions`` (see :data:`StoredRow`) parsed and checked as the fold checks a version.

    A view's versions mostly repeat their columns: the text of a list of columns is parsed and
    checked once (:func:`_stored_columns`), the other fields of each row as :func:`_checked_row`
    checks the whole row. A row that fails is read again by :func:`_checked_row`, which raises
    what it always raised.

    Raises:
        DamagedProjectionsError: the row is damaged.
    """
    try:
        version_id, ts, schema_id, columns, reps, catalog, namespace_json, summary = row
        checked = _stored_columns(columns)
        fields = check_stored_fields({
            "version_id": version_id, "timestamp_ms": ts, "schema_id": schema_id,
            "representations": loads(reps), "default_catalog": catalog,
            "default_namespace": loads(namespace_json), "summary": loads(summary)})
        _check_representations(fields["representations"])
    except Exception:  # noqa: BLE001 - whatever failed, the whole row's check says why
        return _checked_row(view_id, row)
    return {"version_id": fields["version_id"], "timestamp_ms": fields["timestamp_ms"],
            "schema_id": fields["schema_id"], "columns": checked, "representations": fields["representations"],
            "default_catalog": fields["default_catalog"], "default_namespace": fields["default_namespace"],
            "summary": fields["summary"]}


@lru_cache(maxsize=256)
def _stored_columns(text: Any) -> list[dict[str, Any]]:
    """A version's stored columns (JSON text) parsed and checked as :func:`_checked_row` checks them;
    the list is shared by the versions that stored the same text (nothing changes a checked version)."""
    columns = check_stored_columns(loads(text))
    for column in columns:
        parse_type(column["type"])
        check_column_name(column["name"])
    return columns


def _checked_row(view_id: str, row: StoredRow) -> dict[str, Any]:
    """A row of ``view_versions`` parsed and checked whole (see :func:`_stored_version`).

    Raises:
        DamagedProjectionsError: the row is damaged.
    """
    try:
        version_id, ts, schema_id, columns, reps, catalog, namespace_json, summary = row
        return _check_types(check_stored_version({
            "version_id": version_id, "timestamp_ms": ts, "schema_id": schema_id,
            "columns": loads(columns), "representations": loads(reps),
            "default_catalog": catalog, "default_namespace": loads(namespace_json),
            "summary": loads(summary)}))
    except (ValueError, TypeError) as e:
        raise _damaged(f"view {view_id}", e) from e


def _stored_definition(view_id: str, row: StoredRow) -> dict[str, Any]:
    """The fields of a row of ``view_versions`` that make its definition (schema id, representations,
    default catalog and namespace, summary), parsed and checked as :func:`_stored_version` checks them.

    A write that may reuse a version reads every version's definition once (to index them), and
    this costs about half of parsing the whole row.

    Raises:
        DamagedProjectionsError: one of those fields is damaged.
    """
    try:
        _id, _ts, schema_id, _columns, reps, catalog, namespace_json, summary = row
        definition = check_stored_definition({
            "schema_id": schema_id, "representations": loads(reps), "default_catalog": catalog,
            "default_namespace": loads(namespace_json), "summary": loads(summary)})
        _check_representations(definition["representations"])
        return definition
    except (ValueError, TypeError) as e:
        raise _damaged(f"view {view_id}", e) from e


def _add_version(state: ViewState, version: dict[str, Any], position: int) -> None:
    """Add a version an event carries. A version is immutable (Iceberg's rule) and the library adds
    each id once, so an event that carries an id the view has is damage: taken, it would redefine
    that version under every later state (and a version reused by id would change with it)."""
    _check_types(version)
    vid = version["version_id"]
    if not state.versions.add(vid, version):
        raise CorruptLogError(f"event at position {position} adds version {vid} to view {_held(state.view_id)}, "
                              "which has a version of that id")
    state.new_versions.append(vid)


def _version_change(state: ViewState, payload: dict[str, Any], position: int) -> None:
    version = payload.get("version")
    if version is not None:
        _add_version(state, version, position)
    current = payload.get("current_version_id")
    if current is not None:
        # (rebuild() folds every event: the version the event itself added needs no look-up)
        if (version is None or current != version["version_id"]) and current not in state.versions:
            raise CorruptLogError(f"event at position {position} makes version {current} of view "
                                  f"{_held(state.view_id)} current, which it does not have")
        state.current_version_id = current
    entry = payload.get("log_entry")
    if entry is not None:
        # an entry records the version the event left current (the library writes them equal)
        if entry["version_id"] != state.current_version_id:
            raise CorruptLogError(f"event at position {position} logs version {_held(entry['version_id'], int)} of "
                                  f"view {_held(state.view_id)} as current, "
                                  f"where version {state.current_version_id} is")
        state.version_log.append((entry["timestamp_ms"], entry["version_id"]))


_CREATING = frozenset(("view.created", "view.imported"))


def apply(state: ViewState | None, row: Sequence[Any], payload: dict[str, Any]) -> ViewState:
    """Fold one stored event (a row of ``events`` and its decoded payload) into a view's state.

    rebuild() runs this for every event of the log, so the common case (an event of a view that
    exists, keeping its name) comes first and does as little as it can.

    Raises:
        CorruptLogError: the event does not fit the state (an event before ``created``, a gap).
    """
    position, _commit, view_id, stream_version, kind, identifier, actor, occurred_at = row[:8]
    if state is not None and kind not in _CREATING:
        if kind == "view.comment_updated":
            comment = payload["comment"]
            if comment is None:
                state.properties.pop("comment", None)
            else:
                state.properties["comment"] = comment
        elif kind == "view.properties_set":
            state.properties.update(payload["updates"])
        elif kind == "view.properties_removed":
            for key in payload["removals"]:
                state.properties.pop(key, None)
        elif kind == "view.dropped":
            state.live = False
        elif kind == "view.renamed":
            pass  # the identifier below carries the new name
        else:
            if kind == "view.replaced" and payload.get("security_mode"):
                state.security_mode = payload["security_mode"]
            _version_change(state, payload, position)
    elif state is None and kind in _CREATING:
        state = ViewState(view_id, "", "", True, 0, 0, dict(payload.get("properties") or {}),
                          payload.get("security_mode") or "DEFINER", actor, occurred_at, actor, occurred_at,
                          position)
        if kind == "view.imported":
            for version in payload["versions"]:
                _add_version(state, version, position)
            state.version_log.extend((e["timestamp_ms"], e["version_id"]) for e in payload["version_log"])
            state.current_version_id = payload["current_version_id"]
            if state.current_version_id not in state.versions:
                raise CorruptLogError(f"event at position {position} imports view {_held(view_id)} "
                                      f"with current version {state.current_version_id}, which it does not carry")
        else:
            _version_change(state, payload, position)
            if not state.versions:
                raise CorruptLogError(f"event at position {position} creates view {_held(view_id)} without a version")
    elif state is None:
        raise CorruptLogError(f"{kind} at position {position} for view {_held(view_id)}, which was never created")
    else:
        raise CorruptLogError(f"{kind} at position {position} for view {_held(view_id)}, which already exists")
    if stream_version != state.stream_version + 1:
        raise CorruptLogError(f"view {_held(view_id)}: stream version {_held(stream_version, int)} "
                              f"follows {state.stream_version}")
    state.stream_version = stream_version
    if identifier != state.qualified:  # created or renamed: check and split the identifier only then
        if identifier_str(to_identifier(identifier)) != identifier:
            raise ValueError(f"{identifier!r} is not an identifier as the library writes them")
        state.namespace, _, state.name = identifier.rpartition(".")
        state.qualified = identifier
    state.modifier, state.modified_at = actor, occurred_at
    state.last_position = position
    if stream_version % SNAPSHOT_EVERY == 0:
        state.snapshots.append((stream_version, occurred_at, state.to_json()))
    return state


def fold_stored(states: dict[str, ViewState], rows: Iterable[Sequence[Any]]) -> None:
    """Fold event rows as read back from the log into ``states`` (by view id): each payload is parsed
    and checked, then folded with :func:`apply`.

    The library only appends events it has validated, but a row can enter the file behind its back
    (another program, a hand-edited or badly restored file). Reading the log (rebuild, as_of) checks
    every payload against the shape the library writes (:func:`viewstore.events.payload_readers`) and
    the envelope's types, so such a row ends in CorruptLogError instead of reaching the projections.
    rebuild() folds the whole log through here, so the loop keeps to the few steps each row needs.

    Raises:
        CorruptLogError: a payload is not JSON or not the payload of its type, an envelope holds
            values of the wrong type, or an event does not fit its state (see :func:`apply`).
    """
    readers = payload_readers()
    get = states.get
    row: Sequence[Any] = ()
    try:
        for row in rows:
            payload = readers[row[4]](row[8])
            if type(row[5]) is not str or type(row[6]) is not str or not row[6] or type(row[7]) is not int:
                raise TypeError("its identifier and actor must be text (an actor is never empty) and its time "
                                "an integer")
            view_id = row[2]
            states[view_id] = apply(get(view_id), row, payload)
    except (ValueError, TypeError, KeyError, AttributeError, IndexError) as e:
        raise CorruptLogError(f"event at position {row[0]} ({_held(row[4])}) is not an event this library wrote: "
                              f"{_why(e) if row[4] in readers else 'no event type has that name'}") from e


def _columns(data: list[dict[str, Any]], shared: dict[tuple[Any, ...], Any]) -> tuple[Column, ...]:
    columns = []
    for c in data:
        comment, nullable = c.get("comment"), c.get("nullable", True)
        key = ("column", c["name"], c["type"], comment, type(comment), nullable, type(nullable))
        column = shared.get(key)
        if column is None:
            column = shared[key] = _trusted(Column, {"name": c["name"], "type": parse_type(c["type"]),
                                                     "comment": comment, "nullable": nullable}, set(_COLUMN_FIELDS))
        columns.append(column)
    return tuple(columns)


def _representations(data: list[dict[str, Any]], shared: dict[tuple[Any, ...], Any]) -> tuple[SQLRepresentation, ...]:
    representations = []
    for r in data:
        key = ("representation", r["dialect"], r["sql"])
        representation = shared.get(key)
        if representation is None:
            representation = shared[key] = _trusted(SQLRepresentation, {"dialect": r["dialect"], "sql": r["sql"]},
                                                    {"dialect", "sql"})
        representations.append(representation)
    return tuple(representations)


def _version_model(v: dict[str, Any], shared: dict[tuple[Any, ...], Any] | None = None) -> ViewVersion:
    """The model of a stored version (checked when it was read or folded, so built without validation).
    Its columns and representations equal to one in ``shared`` are that one (the models are
    immutable), and the new ones go into it: a view's versions mostly repeat their columns."""
    if shared is None:
        shared = {}
    return _trusted(ViewVersion, {  # as ViewVersion.model_construct makes it of every field, at less cost
        "version_id": v["version_id"], "timestamp_ms": v["timestamp_ms"], "schema_id": v["schema_id"],
        "columns": _columns(v["columns"], shared),
        "representations": _representations(v["representations"], shared),
        "default_catalog": v.get("default_catalog"), "default_namespace": tuple(v.get("default_namespace") or ()),
        "summary": ReadOnlyDict(v.get("summary") or {})}, set(_VERSION_FIELDS))


_COLUMN_FIELDS, _VERSION_FIELDS = tuple(Column.model_fields), tuple(ViewVersion.model_fields)


class _History:
    """A View's versions and version log (see :class:`viewstore.model.ViewHistory`): those of the
    state it was made of, held as they were then (the state's later copies only add past them)."""

    __slots__ = ("_versions", "_log")

    def __init__(self, versions: Versions, log: VersionLog) -> None:
        self._versions, self._log = versions.copy(), log.copy()

    def versions(self) -> tuple[ViewVersion, ...]:
        return self._versions.models()

    def version_log(self) -> tuple[VersionLogEntry, ...]:
        fields = {"timestamp_ms", "version_id"}
        return tuple([_trusted(VersionLogEntry, {"timestamp_ms": t, "version_id": v}, set(fields))
                      for t, v in self._log])

    def version(self, version_id: int) -> ViewVersion | None:
        return self._versions.model(version_id)

    def version_ids(self) -> tuple[int, ...]:
        return tuple(sorted(self._versions))


def state_to_view(state: ViewState) -> View:
    """The public, immutable View of a folded state.

    Its versions and version log are built when first read, from what the state holds now: building
    a View costs the same for a view of one version and one of thousands, and a load or a write that
    nobody asks the history of builds none of it. Version models are built once per stream (the
    states of a stream share them, see :class:`Versions`).
    """
    return View.lazy(
        _History(state.versions, state.version_log),
        identifier=state.identifier, uuid=state.view_id, properties=state.properties,
        security_mode=state.security_mode, current_version_id=state.current_version_id,
        audit=AuditInfo.trusted(state.creator, state.created_at, state.modifier, state.modified_at),
        stream_version=state.stream_version)


def _text(value: Any) -> str:
    if type(value) is not str:
        raise TypeError(f"{_held(value)} is not text")
    return value


def _insert(table: str, verb: str = "INSERT") -> str:
    columns = _TABLE_COLUMNS[table][0]
    return f"{verb} INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"


_STATE_COLUMNS = _TABLE_COLUMNS["views"][0]
_UPSERT_VIEW = _insert("views", "INSERT OR REPLACE")
_INSERT_VERSION = _insert("view_versions", "INSERT OR REPLACE")
_INSERT_LOG = _insert("view_version_log")
_INSERT_SNAPSHOT = _insert("view_snapshots", "INSERT OR REPLACE")
# Only the changed columns, none of them indexed: SQLite then rewrites just the row's table page, where
# INSERT OR REPLACE deletes and re-inserts the row and so rewrites a page of each of the four indexes
# of ``views`` too. A commit's cost is mostly the pages it writes to the WAL.
_UPDATE_VIEW = ("UPDATE views SET stream_version = ?, current_version_id = ?, properties = ?, security_mode = ?, "
                "modifier = ?, modified_at = ?, last_position = ? WHERE view_id = ?")
# A views row and, in the same statement, its view's last event in the log (a seek of the log's stream
# key and one of the event's row, about 2 µs, where a query of its own costs 4): the row must be at that
# event's stream version, under its identifier and live unless it is a drop. A views row is written with
# the events it folds, so only damage parts them, and a read of it is refused instead of giving a state
# the log never had.
_SELECT_STATE = (f"SELECT {', '.join('v.' + c for c in _STATE_COLUMNS)}, e.stream_version, e.identifier, e.type "
                 "FROM views AS v LEFT JOIN events AS e ON e.view_id = v.view_id "
                 "AND e.stream_version = (SELECT max(stream_version) FROM events WHERE view_id = v.view_id) "
                 "WHERE v.view_id = ?")
_SELECT_VERSIONS = ("SELECT version_id, timestamp_ms, schema_id, columns, representations, default_catalog, "
                    "default_namespace, summary FROM view_versions")
# The versions in a snapshot's runs of ids: one index range per run (CROSS JOIN keeps the runs the outer
# loop; the other way round, every version of the view is read once per run). Read into a dict by id,
# so no ORDER BY (it cost a sort of every row).
_SELECT_VERSION_RUNS = ("SELECT v.version_id, v.timestamp_ms, v.schema_id, v.columns, v.representations, "
                        "v.default_catalog, v.default_namespace, v.summary FROM json_each(?) AS r "
                        "CROSS JOIN view_versions AS v WHERE v.view_id = ? "
                        "AND v.version_id BETWEEN json_extract(r.value, '$[0]') AND json_extract(r.value, '$[1]')")
# A stream's first entries of its version log, as a snapshot names them; a seq that is not an integer
# (damage: seq 1.5 would sort among them) is left out, so the entries found fall short of the length.
_SELECT_LOG_PREFIX = ("SELECT timestamp_ms, version_id FROM view_version_log WHERE view_id = ? "
                      "AND seq BETWEEN 1 AND ? AND typeof(seq) = 'integer' ORDER BY seq")
# The letters that follow each of the prefixes (a JSON list) among a namespace's live names (or among the
# live namespaces), by a loose index scan of ``views_by_namespace``: the first step of a prefix seeks the
# first name after it, each next step the first name after every one that begins with the prefix and the
# letter before (char() of the next code point: SQLite compares text by its UTF-8 bytes, which sort as the
# code points do; the last code point, U+10FFFF, has none after it), until a name found does not begin
# with the prefix (compared, not matched with LIKE or GLOB: a prefix may hold their wildcards). At most
# :at_most letters a prefix and :budget seeks in all, each prefix's first letter sought before any second.
_NEXT_LETTERS_OF = """WITH RECURSIVE next(prefix, found, n) AS (
    SELECT value, (SELECT min({column}) FROM views WHERE {scope} AND {column} > value), 1 FROM json_each(:prefixes)
    UNION ALL
    SELECT prefix, (SELECT min({column}) FROM views WHERE {scope}
                    AND {column} >= prefix || char(unicode(substr(found, length(prefix) + 1, 1)) + 1)), n + 1
    FROM next WHERE substr(found, 1, length(prefix)) = prefix AND n < :at_most
                    AND unicode(substr(found, length(prefix) + 1, 1)) < 1114111
    LIMIT :budget
) SELECT prefix, substr(found, length(prefix) + 1, 1) FROM next WHERE substr(found, 1, length(prefix)) = prefix"""
_NEXT_LETTERS = _NEXT_LETTERS_OF.format(column="name", scope="live = 1 AND namespace = :namespace")
_NAMESPACE_NEXT_LETTERS = _NEXT_LETTERS_OF.format(column="namespace", scope="live = 1")

# The live namespaces on one side of a typed one (not it), nearest first, at most :each_side of them:
# a loose index scan of ``views_by_namespace`` as _LIVE_NAMESPACES is, from the typed one outwards
_NAMESPACES_BESIDE = """WITH RECURSIVE ns(namespace, n) AS (
    SELECT (SELECT {nearest}(namespace) FROM views WHERE live = 1 AND namespace {side} :typed), 1
    UNION ALL
    SELECT (SELECT {nearest}(v.namespace) FROM views AS v WHERE v.live = 1 AND v.namespace {side} ns.namespace), n + 1
    FROM ns WHERE ns.namespace IS NOT NULL AND n < :each_side)
SELECT namespace FROM ns WHERE namespace IS NOT NULL"""
_NAMESPACES_BEFORE = _NAMESPACES_BESIDE.format(nearest="max", side="<")
_NAMESPACES_AFTER = _NAMESPACES_BESIDE.format(nearest="min", side=">")

# The namespaces of live views, sorted, by a loose index scan of ``views_by_namespace``: each step
# seeks the next namespace after the one before, where DISTINCT would read every live view.
_LIVE_NAMESPACES = """WITH RECURSIVE ns(namespace) AS (
    SELECT (SELECT min(namespace) FROM views WHERE live = 1)
    UNION ALL
    SELECT (SELECT min(v.namespace) FROM views AS v WHERE v.live = 1 AND v.namespace > ns.namespace)
    FROM ns WHERE ns.namespace IS NOT NULL)
SELECT namespace FROM ns WHERE namespace IS NOT NULL"""


@dataclass(slots=True)
class _Rows:
    views: list[tuple[Any, ...]] = field(default_factory=list)          # whole rows (new, renamed, dropped)
    view_updates: list[tuple[Any, ...]] = field(default_factory=list)   # the changed columns of a stored row
    versions: list[tuple[Any, ...]] = field(default_factory=list)
    log: list[tuple[Any, ...]] = field(default_factory=list)
    snapshots: list[tuple[Any, ...]] = field(default_factory=list)


def _changed_rows(states: Iterable[ViewState]) -> _Rows:
    """The projection rows the fold changed in these states; marks the states as stored."""
    rows = _Rows()
    for s in states:
        key = (s.namespace, s.name, s.live)
        if s.stored_key == key:  # the row exists and keeps its identifier and live flag
            rows.view_updates.append((s.stream_version, s.current_version_id, dumps(s.properties), s.security_mode,
                                      s.modifier, s.modified_at, s.last_position, s.view_id))
        else:
            rows.views.append((s.view_id, s.namespace, s.name, int(s.live), s.stream_version,
                               s.current_version_id, dumps(s.properties), s.security_mode, s.creator,
                               s.created_at, s.modifier, s.modified_at, s.last_position))
        s.stored_key = key
        if s.new_versions:
            for v in s.versions.of(s.new_versions):
                rows.versions.append((s.view_id, v["version_id"], v["timestamp_ms"], v["schema_id"],
                                      dumps(v["columns"]), dumps(v["representations"]), v.get("default_catalog"),
                                      dumps(v.get("default_namespace") or []), dumps(v.get("summary") or {})))
        logged = len(s.version_log)
        if logged != s.log_saved:
            for seq, (ts, vid) in enumerate(s.version_log.since(s.log_saved), s.log_saved + 1):
                rows.log.append((s.view_id, seq, ts, vid))
            s.log_saved = logged
        if s.snapshots:  # (most writes make none: no generator for them)
            rows.snapshots.extend((s.view_id, sv, at, data) for sv, at, data in s.snapshots)
            s.snapshots = []
        if s.new_versions:
            s.new_versions = []
    return rows


class Projections:
    """Reads and writes the projection tables of one connection."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        # parsed snapshots by (view id, stream version): a snapshot is the fold of an immutable log
        # prefix, so it never changes; as_of on a busy view parses the same few again and again
        self._snapshots: dict[tuple[str, int], ViewState] = {}
        self._held = 0  # the versions and log entries the parsed snapshots hold, each its own copy

    # -- writing ------------------------------------------------------------------------------

    def save(self, states: Iterable[ViewState]) -> None:
        """Store what the fold changed, inside the caller's transaction."""
        rows = _changed_rows(states)
        conn = self.conn
        if rows.views:
            conn.executemany(_UPSERT_VIEW, rows.views)
        if rows.view_updates and conn.executemany(_UPDATE_VIEW, rows.view_updates).rowcount != len(rows.view_updates):
            raise DamagedProjectionsError("a row of the views projection vanished under a write; run rebuild()")
        if rows.versions:
            conn.executemany(_INSERT_VERSION, rows.versions)
        if rows.log:
            conn.executemany(_INSERT_LOG, rows.log)
        if rows.snapshots:
            conn.executemany(_INSERT_SNAPSHOT, rows.snapshots)

    def replace(self, states: Iterable[ViewState]) -> dict[str, int]:
        """Make the projection tables hold exactly the rows of these freshly folded states (a rebuild).

        Each table is compared with what it holds and only the rows that differ are deleted or
        written, so a rebuild of consistent projections writes nothing, and one that repairs a few
        rows writes those. Returns, per table, how many rows were rewritten, added or removed.
        """
        self.forget_parsed()
        states = list(states)
        holders: dict[str, str] = {}
        for state in states:
            if state.live:
                other = holders.setdefault(state.qualified, state.view_id)
                if other != state.view_id:
                    raise CorruptLogError(f"the log leaves two live views named {state.qualified} ({_held(other)} and "
                                          f"{_held(state.view_id)}); the library never writes such a log")
        rows = _changed_rows(states)
        assert not rows.view_updates, "replace() takes fresh states, which have no stored rows"
        repaired = {}
        for table, new in (("views", rows.views), ("view_versions", rows.versions),
                           ("view_version_log", rows.log), ("view_snapshots", rows.snapshots)):
            repaired[table] = self._sync(table, new)
        if any(repaired.values()):
            # a repair changes rows without moving any stream version: tell the other stores' caches
            self.conn.execute("INSERT INTO meta (key, value) VALUES ('projection_repairs', '1') ON CONFLICT (key) "
                              "DO UPDATE SET value = CAST(value AS INTEGER) + 1")
        return repaired

    def repairs(self) -> object:
        """A counter of the rebuilds that repaired these projections (any store, any process), as
        stored: a cache of projection rows is stale when it changed."""
        row = self.conn.execute("SELECT value FROM meta WHERE key = 'projection_repairs'").fetchone()
        return row[0] if row is not None else None

    def forget_parsed(self) -> None:
        """Drop the parsed snapshots (after another store repaired the tables they came from, or a
        rollback took back rows they were read from), and with them the count of what they held."""
        self._snapshots.clear()
        self._held = 0

    def _sync(self, table: str, new_rows: list[tuple[Any, ...]]) -> int:
        columns, key_width = _TABLE_COLUMNS[table]
        key_names = columns[:key_width]
        wanted = {row[:key_width]: row for row in new_rows}
        stale = []
        for row in self.conn.execute(f"SELECT {', '.join(columns)} FROM {table}"):
            key = row[:key_width]
            if wanted.get(key) == row:
                del wanted[key]  # already stored as it should be
            else:
                stale.append(key)  # wrong, or of no view the log knows
        # delete first, then insert: a changed row never meets its old self (or an old name) in an index
        if stale:
            where = " AND ".join(f"{k} = ?" for k in key_names)
            self.conn.executemany(f"DELETE FROM {table} WHERE {where}", stale)
        if wanted:
            self.conn.executemany(_insert(table), wanted.values())
        return len(set(stale) | wanted.keys())

    # -- reading ------------------------------------------------------------------------------

    def live_view_id(self, namespace: str, name: str) -> str | None:
        row = self.conn.execute("SELECT view_id FROM views WHERE namespace = ? AND name = ? AND live = 1",
                                (namespace, name)).fetchone()
        return row[0] if row else None

    def names_near(self, namespace: str, name: str, each_side: int) -> list[str]:
        """Names of live views in ``namespace``: up to ``each_side`` sorting before ``name`` and as many
        from it on, two seeks of ``views_by_namespace`` however many views it holds. Not text ones
        (damaged rows) are left out: this reads for a hint in an error message."""
        rows = [*self.conn.execute("SELECT name FROM views WHERE live = 1 AND namespace = ? AND name < ? "
                                   "ORDER BY name DESC LIMIT ?", (namespace, name, each_side)),
                *self.conn.execute("SELECT name FROM views WHERE live = 1 AND namespace = ? AND name >= ? "
                                   "ORDER BY name LIMIT ?", (namespace, name, each_side))]
        return [row[0] for row in rows if type(row[0]) is str]

    def names_among(self, namespace: str, names: Iterable[str]) -> list[str]:
        """Those of ``names`` that live views of ``namespace`` have, one seek of ``views_by_namespace``
        each. Not text ones (damaged rows) are left out, as :meth:`names_near` does."""
        names = list(names)
        if not names:
            return []
        rows = self.conn.execute(f"SELECT name FROM views WHERE live = 1 AND namespace = ? AND name IN "
                                 f"({', '.join('?' * len(names))})", (namespace, *names))
        return [row[0] for row in rows if type(row[0]) is str]

    def next_letters(self, namespace: str, prefixes: Iterable[str], at_most: int,
                     budget: int) -> list[tuple[str, str]]:
        """The letters that follow each of ``prefixes`` in the names of live views in ``namespace``, as
        (prefix, letter) pairs, each prefix's in sort order: at most ``at_most`` letters a prefix, and
        ``budget`` seeks of ``views_by_namespace`` in all (one a letter, and one more a prefix whose
        letters end), every prefix's first letter sought before any second. Not text names (damaged
        rows) end a prefix's letters: this reads for a hint in an error message."""
        params = {"namespace": namespace, "prefixes": dumps(list(prefixes)), "at_most": at_most, "budget": budget}
        return [(row[0], row[1]) for row in self.conn.execute(_NEXT_LETTERS, params)]

    def namespaces_near(self, namespace: str, each_side: int) -> list[str]:
        """Namespaces of live views other than ``namespace``: up to ``each_side`` sorting before it
        (nearest first) and as many after it, one seek of ``views_by_namespace`` each however many
        namespaces and views there are. Not text ones (damaged rows) are left out: this reads for a
        hint in an error message."""
        params = {"typed": namespace, "each_side": each_side}
        rows = [*self.conn.execute(_NAMESPACES_BEFORE, params), *self.conn.execute(_NAMESPACES_AFTER, params)]
        return [row[0] for row in rows if type(row[0]) is str]

    def namespaces_among(self, namespaces: Iterable[str]) -> list[str]:
        """Those of ``namespaces`` that hold a live view, one seek of ``views_by_namespace`` each
        (not a read of their views)."""
        rows = self.conn.execute("SELECT value FROM json_each(?) WHERE EXISTS (SELECT 1 FROM views "
                                 "WHERE live = 1 AND namespace = value)", (dumps(list(namespaces)),))
        return [row[0] for row in rows]

    def namespace_next_letters(self, prefixes: Iterable[str], at_most: int, budget: int) -> list[tuple[str, str]]:
        """The letters that follow each of ``prefixes`` in the namespaces of live views, as
        :meth:`next_letters` reads those of a namespace's names."""
        params = {"prefixes": dumps(list(prefixes)), "at_most": at_most, "budget": budget}
        return [(row[0], row[1]) for row in self.conn.execute(_NAMESPACE_NEXT_LETTERS, params)]

    def latest_view_id(self, namespace: str, name: str) -> str | None:
        """The live view of that name, else the one of that name dropped last."""
        row = self.conn.execute("SELECT view_id FROM views WHERE namespace = ? AND name = ? "
                                "ORDER BY live DESC, last_position DESC LIMIT 1", (namespace, name)).fetchone()
        return row[0] if row else None

    def load(self, view_id: str) -> ViewState | None:
        """The state of a view as its projection rows hold it; None when ``views`` has no row of it.

        Raises:
            DamagedProjectionsError: its rows are damaged, or are not those of the end of its stream
                in the log (behind it, or ahead, or under another name or live flag):
                :meth:`ViewStore.rebuild` repairs them.
        """
        conn = self.conn
        row = conn.execute(_SELECT_STATE, (view_id,)).fetchone()
        if row is None:
            return None
        try:
            data = dict(zip(_STATE_COLUMNS, row))  # (the log's last event, the last three, is left out)
            data["properties"] = loads(data["properties"])
            data["version_log"] = _check_log(conn.execute("SELECT timestamp_ms, version_id FROM view_version_log "
                                                          "WHERE view_id = ? ORDER BY seq", (view_id,)).fetchall())
            data["versions"] = Versions(view_id, self._version_rows(view_id))
            state = _read_state(data)
            head, named, kind = row[-3:]
            if state.stream_version != head:
                raise out_of_step(f"{state.namespace}.{state.name}", view_id, state.stream_version, head)
            if named != f"{state.namespace}.{state.name}" or state.live != (kind != "view.dropped"):
                raise named_out_of_step(view_id, f"{state.namespace}.{state.name}", state.live, named, kind)
            if state.current_version_id not in state.versions:
                raise KeyError(f"the current version {state.current_version_id} is not among its versions")
        except (ValueError, TypeError, KeyError) as e:
            raise _damaged(f"view {view_id}", e) from e
        state.current_version()  # parsed and checked now: a damaged one fails the load, not a later read
        state.stored_key = (state.namespace, state.name, state.live)
        state.qualified = f"{state.namespace}.{state.name}"
        state.log_saved = len(state.version_log)
        return state

    def _version_rows(self, view_id: str, runs: list[list[int]] | None = None) -> list[StoredRow]:
        """The rows of a view's versions, not parsed (a :class:`Versions` parses each when first
        used): all of them by id, or those in these runs of ids (``[[first, last], ...]``), in no
        particular order."""
        if runs is None:
            return self.conn.execute(_SELECT_VERSIONS + " WHERE view_id = ? ORDER BY version_id", (view_id,)).fetchall()
        return self.conn.execute(_SELECT_VERSION_RUNS, (dumps(runs), view_id)).fetchall()

    def _log_rows(self, view_id: str, length: int) -> list[tuple[Any, Any]]:
        """The first ``length`` entries of a view's version log (seq 1 to ``length``), as
        (timestamp_ms, version_id) rows: fewer if the table lacks some."""
        return self.conn.execute(_SELECT_LOG_PREFIX, (view_id, length)).fetchall()

    def snapshot_before(self, view_id: str, until_ms: int | None, until_version: int | None = None) -> ViewState | None:
        """The latest snapshot of a stream taken at or before a time, or at or before a stream version."""
        column, bound = ("occurred_at", until_ms) if until_version is None else ("stream_version", until_version)
        row = self.conn.execute(f"SELECT stream_version FROM view_snapshots WHERE view_id = ? AND {column} <= ? "
                                "ORDER BY stream_version DESC LIMIT 1", (view_id, bound)).fetchone()
        if row is None:
            return None
        key = (view_id, row[0])
        state = self._snapshots.get(key)
        if state is None:
            (data,) = self.conn.execute("SELECT state FROM view_snapshots WHERE view_id = ? AND stream_version = ?",
                                        key).fetchone()
            state = ViewState.from_json(data, lambda runs: {row[0]: row for row in self._version_rows(view_id, runs)},
                                        lambda length: self._log_rows(view_id, length))
            size = len(state.versions) + len(state.version_log)
            if len(self._snapshots) >= PARSED_SNAPSHOTS or self._held + size > PARSED_SNAPSHOT_ENTRIES:
                self.forget_parsed()  # bounded by count and by what they hold (long histories)
            self._snapshots[key] = state
            self._held += size
        return state.copy()  # the fold changes the state it is given

    def live_identifiers(self, namespace: str | None = None) -> list[tuple[str, ...]]:
        if namespace is None:
            rows = self.conn.execute("SELECT namespace, name FROM views WHERE live = 1 ORDER BY namespace, name")
            try:
                return [(*_text(ns).split("."), _text(name)) for ns, name in rows]
            except (AttributeError, TypeError) as e:
                raise _damaged("a name or namespace in views", e) from e
        # one namespace: split it once, not once per view (10,000 views: half the time of the call)
        levels = tuple(namespace.split("."))
        names = self.conn.execute("SELECT name FROM views WHERE live = 1 AND namespace = ? ORDER BY name",
                                  (namespace,)).fetchall()
        if any(type(row[0]) is not str for row in names):
            try:
                for (name,) in names:
                    _text(name)  # raises at the first one that is not text
            except TypeError as e:
                raise _damaged(f"a name in views of namespace {namespace}", e) from e
        return [levels + row for row in names]

    def namespaces(self) -> list[tuple[str, ...]]:
        """The namespaces of live views, sorted: one index seek per namespace (a loose index scan of
        ``views_by_namespace``), so the time grows with the namespaces, not with the views."""
        try:
            return [tuple(_text(r[0]).split(".")) for r in self.conn.execute(_LIVE_NAMESPACES)]
        except (AttributeError, TypeError) as e:
            raise _damaged("a namespace in views", e) from e

    def dump(self) -> dict[str, list[tuple[Any, ...]]]:
        """Every projection row, sorted: what :meth:`ViewStore.rebuild` must reproduce."""
        return {table: sorted(self.conn.execute(f"SELECT * FROM {table}").fetchall(), key=repr)
                for table in PROJECTION_TABLES}
