"""The event store: the SQLite connection, the append-only ``events`` table, and its only writer.

Every write goes through :class:`transaction` (``BEGIN IMMEDIATE`` in WAL mode, busy timeout, errors
translated in one place), or :func:`savepoint` inside a store's ``transaction()`` block, and
:meth:`EventLog.insert`. A read of more than one row runs in :func:`snapshot` (one state of the
file); an error SQLite raises in a read is a :class:`~viewstore.errors.ViewStoreError`. Optimistic
concurrency rests on the ``UNIQUE (view_id, stream_version)`` constraint; triggers refuse UPDATE
and DELETE on ``events``.
"""

from __future__ import annotations

import bisect
import functools
import gc
import os
import re
import sqlite3
import time
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Generator, Iterable, Iterator, Sequence, TypeVar, cast

import orjson

from .errors import ConcurrencyError, CorruptLogError, ValidationError, ViewStoreError
from .events import Event, StoredEvents, decode_event

__all__ = ["connect", "holds_nothing", "transaction", "savepoint", "snapshot", "EventLog", "EventStream", "QueryRows",
           "QueryStream", "query_rows", "SCHEMA_VERSION", "EVENT_COLUMNS", "dumps", "loads", "collector_paused",
           "read_store_id", "make_store_id"]

SCHEMA_VERSION = 2

EVENT_COLUMNS = ("position", "commit_id", "view_id", "stream_version", "type", "identifier", "actor",
                 "occurred_at", "payload")

#: the event types that give a stream its identifier (the only ones ``events_naming`` indexes)
NAMING_TYPES = "('view.created', 'view.imported', 'view.renamed')"
_NAMING = frozenset(("view.created", "view.imported", "view.renamed"))
#: events(types=...) of those types alone reads them through events_naming when they are at most one
#: in this many of the log's events (see EventLog._few_named), else scans the log
NAMED_SHARE = 10

# A commit's cost is mostly the pages it writes to the WAL: the events row and one page of each index
# the row enters. So the log keeps three: the stream key (optimistic concurrency, reading one stream),
# actor and time (audit; a time range without an actor reads it actor by actor, see EventLog.rows),
# and a partial index of the few events that name a stream (as_of by name), which most commits skip.
# ``position`` is the rowid: the triggers refuse deletes, so a position is never handed out twice
# and AUTOINCREMENT (another page per commit, in sqlite_sequence) would add nothing.
_META_DDL = "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"

# The store's id: a UUID naming this store (the file and its copies), kept in ``meta``. It is a row,
# not a schema change (an earlier release opens a file that has it). Files made before it existed
# lack it until something makes it: an open that runs the DDL anyway, or the first make_store_id.
_STORE_ID = "SELECT value FROM meta WHERE key = 'store_id'"
_MAKE_STORE_ID = "INSERT INTO meta (key, value) VALUES ('store_id', ?) ON CONFLICT (key) DO NOTHING"

_LOG_DDL = f"""
CREATE TABLE IF NOT EXISTS events (
    position INTEGER PRIMARY KEY,
    commit_id TEXT NOT NULL,
    view_id TEXT NOT NULL,
    stream_version INTEGER NOT NULL CHECK (stream_version >= 1),
    type TEXT NOT NULL,
    identifier TEXT NOT NULL,
    actor TEXT NOT NULL,
    occurred_at INTEGER NOT NULL,
    payload TEXT NOT NULL,
    UNIQUE (view_id, stream_version)
);
CREATE INDEX IF NOT EXISTS events_by_actor ON events (actor, occurred_at);
CREATE INDEX IF NOT EXISTS events_naming ON events (identifier) WHERE type IN {NAMING_TYPES};
DROP INDEX IF EXISTS events_by_time;
DROP INDEX IF EXISTS events_by_identifier;
CREATE TRIGGER IF NOT EXISTS events_append_only_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'the event log is append-only: events cannot be updated'); END;
CREATE TRIGGER IF NOT EXISTS events_append_only_delete BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'the event log is append-only: events cannot be deleted'); END;
"""

# every actor that ever wrote, one index seek each (a loose index scan of events_by_actor)
_ACTORS = ("WITH RECURSIVE actors(actor) AS (SELECT min(actor) FROM events UNION ALL "
           "SELECT (SELECT min(actor) FROM events WHERE actor > actors.actor) FROM actors "
           "WHERE actors.actor IS NOT NULL) SELECT actor FROM actors WHERE actor IS NOT NULL")

_INSERT = ("INSERT INTO events (commit_id, view_id, stream_version, type, identifier, actor, occurred_at, payload) "
           "VALUES (?, ?, ?, ?, ?, ?, ?, ?)")

#: a write waits for another process's write lock up to three of these (30 s) before it raises
#: ConcurrencyError(busy=True), and so does opening a store (its first reads too, which a connection
#: in exclusive locking mode keeps out); an ad-hoc query waits up to one for a lock that keeps
#: readers out (rare in WAL mode), then raises the same
BUSY_TIMEOUT_MS = 10_000

#: the longest SQLite waits for a lock in one go (the busy timeout of a store's connection), where
#: Python does not run: those waits are made of such slices, and between two of them the process's
#: signal handlers run, so that what one raises (Ctrl-C's KeyboardInterrupt) ends the wait within
#: about a slice. A store's reads wait no longer, then raise ConcurrencyError(busy=True): in WAL mode
#: an open connection (the store's) keeps any other out of exclusive locking mode, so they wait for
#: no writer, only for another connection's recovery of the WAL after a crash
LOCK_SLICE_MS = 100


def connect(path: str | Path, *, durability: str = "normal", extra_ddl: str = "") -> sqlite3.Connection:
    """Open (creating if missing) a store database: WAL, busy timeout, the log schema.

    Args:
        path: the SQLite file.
        durability: ``"normal"`` (WAL + synchronous=NORMAL: survives a process crash) or ``"full"``
            (synchronous=FULL: also survives an OS crash or power loss).
        extra_ddl: the projection schema, created in the same step.
    """
    if durability not in ("normal", "full"):
        raise ValidationError(f"durability must be 'normal' or 'full', not {durability!r}")
    try:
        conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False,
                               timeout=_lock_slice_ms() / 1000)
    except sqlite3.Error as e:  # a folder that does not exist, a path that is a folder, no permission
        raise ViewStoreError(f"cannot open {path} as a viewstore database: {e}{_open_hint(path)}") from e
    try:
        conn.execute(f"PRAGMA busy_timeout = {_lock_slice_ms()}")
        if _when_free(lambda: _set_up(conn, path, durability, _LOG_DDL + extra_ddl), 3 * BUSY_TIMEOUT_MS):
            return conn  # no write lock taken: an open does not wait behind a long write elsewhere
        with transaction(conn):
            conn.execute(_META_DDL)
            row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            version = None if row is None else _schema_version(path, row[0])
            if version is not None:
                _refuse_newer(path, version)
            columns = tuple(r[1] for r in conn.execute("PRAGMA table_info(events)"))
            if columns and columns != EVENT_COLUMNS:  # a table of another program, which the DDL would keep
                raise ViewStoreError(f"{path} is not a viewstore database: its events table has the columns "
                                     f"{', '.join(columns)}")
            for statement in _split(_LOG_DDL + extra_ddl):
                conn.execute(statement)
            if version is None or version < SCHEMA_VERSION:  # new, or upgraded by the DDL just run
                conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)",
                             (str(SCHEMA_VERSION),))
            conn.execute(_MAKE_STORE_ID, (str(uuid.uuid4()),))  # the write lock is held anyway
    except sqlite3.DatabaseError as e:
        conn.close()
        if isinstance(e, sqlite3.OperationalError) and _is_busy(e):  # _set_up's reads, WAL mode: refused 30 s
            raise ConcurrencyError(f"cannot open {path}: another connection kept it locked for "
                                   f"{3 * BUSY_TIMEOUT_MS / 1000:g} s ({e})", busy=True) from e
        raise ViewStoreError(f"cannot open {path} as a viewstore database: {e}{_open_hint(path)}") from e
    except BaseException:
        conn.close()
        raise
    return conn


def _open_hint(path: str | Path) -> str:
    """Why SQLite could not open ``path``, where the file system tells ('' where it does not): SQLite
    says "unable to open database file" for a folder, a missing folder and a folder it cannot write."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        return "; it is a folder (name the database file in it)"
    if not os.path.isdir(folder):
        return f"; there is no folder {folder}"
    if os.access(folder, os.W_OK):
        return ""
    if os.path.exists(path):
        return "; WAL mode needs to create its -wal and -shm files beside it, and that folder is not writable"
    return "; the file would be made in a folder that is not writable"


def _set_up(conn: sqlite3.Connection, path: str | Path, durability: str, ddl: str) -> bool:
    """:func:`connect`'s steps before its write: refuse another program's database, put the file in
    WAL mode, set the connection up; then whether the schema is in place (see :func:`_schema_in_place`).
    Each step may be run again (after another connection held the file)."""
    # before anything changes the file (WAL mode is kept in it): another program's database is left
    # as it was. Every viewstore file has had a schema_version row in meta from its first
    # transaction, which made it whole.
    names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE substr(name, 1, 7) <> 'sqlite_' "
                                        "ORDER BY type = 'table' DESC, name")]
    marked = (conn.execute("PRAGMA user_version").fetchone()[0]
              or conn.execute("PRAGMA application_id").fetchone()[0])
    if (names or marked) and not _has_schema_version(conn, names):
        held = f"other tables or views ({', '.join(names[:5])}{', ...' if len(names) > 5 else ''})" if names \
            else "another program's user_version or application_id"
        raise ViewStoreError(f"{path} is not a viewstore database: it holds {held}; viewstore keeps its "
                             f"catalog in a file of its own")
    if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
        conn.execute("PRAGMA journal_mode = WAL")  # needs the file to itself: refused at once while it is not
    conn.execute(f"PRAGMA synchronous = {durability.upper()}")
    conn.execute("PRAGMA temp_store = MEMORY")
    conn.execute("PRAGMA cache_size = -16000")
    return _schema_in_place(conn, path, ddl)


#: the first bytes of every SQLite database file
_SQLITE_MAGIC = b"SQLite format 3\x00"


def holds_nothing(path: str | Path) -> str | None:
    """Why ``path`` holds no database a store could be read from, or None when it holds one (or
    something :func:`connect` judges: another program's database, a file that is not SQLite).

    Nothing is held by a missing path, an empty file, or a SQLite file with an empty schema (no
    table, index or view, no user_version or application_id: ``sqlite3 x.db 'VACUUM'``, a database
    whose tables were all dropped), in which :func:`connect` would start a store. Only the file's
    header and first page are read, by a plain read: the file is not opened as a database, so no
    -wal or -shm file is made beside it. A -wal or -journal file beside it may hold a newer schema,
    so such a file is left to :func:`connect`.
    """
    path = Path(path)
    if not path.exists():
        return "there is no file"
    if not path.is_file():
        return None  # a folder: connect says it cannot open it
    try:
        with path.open("rb") as f:
            head = f.read(108)
    except OSError:
        return None  # connect says why
    if not head:
        return "the file is empty"
    if len(head) < 108 or not head.startswith(_SQLITE_MAGIC):
        return None
    if any(os.path.exists(f"{path}{suffix}") and os.path.getsize(f"{path}{suffix}") > 0
           for suffix in ("-wal", "-journal")):
        return None
    marked = head[60:64] != bytes(4) or head[68:72] != bytes(4)  # user_version, application_id
    # page 1 holds sqlite_schema's root: a leaf table page (0x0d) with no cell is an empty schema
    if marked or head[100] != 0x0D or head[103:105] != bytes(2):
        return None
    return "the file is a SQLite database with no tables"


def read_store_id(conn: sqlite3.Connection) -> str | None:
    """The store's id (a UUID, as text), or None when the file has none yet.

    Raises:
        CorruptLogError: the stored id is not a UUID (the file was changed behind the library's back).
    """
    row = conn.execute(_STORE_ID).fetchone()
    if row is None:
        return None
    try:
        return str(uuid.UUID(row[0]))
    except (ValueError, TypeError, AttributeError) as e:
        raise CorruptLogError(f"the store id in the meta table is not a UUID: {row[0]!r}") from e


def make_store_id(conn: sqlite3.Connection) -> str:
    """Inside the caller's write transaction: the store's id, made now if the file has none.

    Several processes may do this at once: the first commit's id wins, and the others read it.
    """
    conn.execute(_MAKE_STORE_ID, (str(uuid.uuid4()),))
    found = read_store_id(conn)
    assert found is not None
    return found


def _has_schema_version(conn: sqlite3.Connection, tables: list[str]) -> bool:
    if "meta" not in tables:
        return False
    try:
        return conn.execute("SELECT 1 FROM meta WHERE key = 'schema_version'").fetchone() is not None
    except sqlite3.Error:  # a meta table of another shape
        return False


_CREATED = re.compile(r"CREATE (?:UNIQUE )?(?:TABLE|INDEX|TRIGGER) IF NOT EXISTS (\w+)")
_DROPPED = re.compile(r"DROP (?:TABLE|INDEX|TRIGGER) IF EXISTS (\w+)")


def _schema_in_place(conn: sqlite3.Connection, path: str | Path, ddl: str) -> bool:
    """Whether the file holds this schema version and every object the DDL creates (and none it drops).

    Only then may an open skip the DDL, which needs the write lock: reads alone do not wait behind
    another process's write, so neither does opening a store that is already set up.

    Raises:
        CorruptLogError: a newer viewstore wrote the file, or its schema version is not a number
            (told at once, not after waiting for a write lock the open would not need).
    """
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    except sqlite3.OperationalError:  # a new file (no meta)
        return False
    version = None if row is None else _schema_version(path, row[0])
    if version is None or version < SCHEMA_VERSION:
        return False
    _refuse_newer(path, version)
    present = {name for (name,) in conn.execute("SELECT name FROM sqlite_master")}
    return set(_CREATED.findall(ddl)) <= present and not set(_DROPPED.findall(ddl)) & present


def _schema_version(path: str | Path, value: Any) -> int:
    """The schema version the meta table holds.

    Raises:
        CorruptLogError: it is not a whole number (the file was changed behind the library's back).
    """
    try:
        return int(value)
    except (ValueError, TypeError) as e:
        raise CorruptLogError(f"{path} has a schema version in its meta table that is not a number: {value!r}") from e


def _refuse_newer(path: str | Path, version: int) -> None:
    if version > SCHEMA_VERSION:
        raise CorruptLogError(f"{path} was written by a newer viewstore (schema {version}); "
                              f"this one reads schema {SCHEMA_VERSION}")


def _split(script: str) -> list[str]:
    """Split DDL into statements (triggers contain ';' inside BEGIN ... END)."""
    statements, current = [], ""
    for line in script.splitlines(keepends=True):
        current += line
        if sqlite3.complete_statement(current):  # it holds a ';', so it is no blank
            statements.append(current.strip())
            current = ""
    if current.strip():
        statements.append(current.strip())
    return statements


def _is_busy(error: sqlite3.OperationalError) -> bool:
    text = str(error).lower()
    return "locked" in text or "busy" in text


def _lock_slice_ms() -> int:
    """The busy timeout of the library's connections: :data:`LOCK_SLICE_MS`, or less when a whole
    wait (:data:`BUSY_TIMEOUT_MS`) is shorter."""
    return min(LOCK_SLICE_MS, BUSY_TIMEOUT_MS)


_T = TypeVar("_T")


def _when_free(run: Callable[[], _T], budget_ms: float, *, waited_ms: float = 0,
               on_wait: Callable[[float, float], None] | None = None) -> _T:
    """``run()``, again while another connection's lock on the file refuses it, for up to
    ``budget_ms`` in all (``waited_ms`` of which a try the caller made has spent).

    Each try waits for the lock up to the connection's busy timeout (:func:`_lock_slice_ms`) inside
    SQLite, where Python does not run; between two tries the process's signal handlers run, and
    what one raises (Ctrl-C's KeyboardInterrupt, a SIGTERM handler's SystemExit) goes on from here
    as it is. A try refused at once (SQLite waits for some locks not at all) is followed by a pause.
    Between two tries, once a second of waiting has passed and then about once a second,
    ``on_wait(waited, budget)`` is called with the seconds waited so far and ``budget_ms`` in
    seconds; what it raises goes on from here as it is.

    Raises:
        sqlite3.OperationalError: the file was still locked once the time was up (the last try's
            error), or another error of ``run``.
    """
    pause = min(_lock_slice_ms(), 10) / 1000
    started = time.monotonic() - waited_ms / 1000
    deadline = started + budget_ms / 1000
    notice = started + 1  # the first call of on_wait, a second into the wait
    while True:
        tried = time.monotonic()
        try:
            return run()
        except sqlite3.OperationalError as e:
            refused = e  # and nothing else in here: a signal handler's exception raised below has no context
        now = time.monotonic()
        if not _is_busy(refused) or now >= deadline:
            raise refused
        if on_wait is not None and now >= notice:
            on_wait(now - started, budget_ms / 1000)
            notice = started + int(time.monotonic() - started) + 1  # the next whole second, however long it took
        if now - tried < pause:
            time.sleep(min(pause, deadline - now))


def _begin_when_free(conn: sqlite3.Connection, refused: sqlite3.OperationalError,
                     on_wait: Callable[[float, float], None] | None = None) -> None:
    """``BEGIN IMMEDIATE`` was refused (``refused``): while another connection holds the write lock,
    try again (:func:`_when_free`, which calls ``on_wait`` about once a second) up to three busy
    timeouts in all, the first try's slice included.

    Raises:
        ConcurrencyError: ``busy``: the lock was not free in time.
        ViewStoreError: the transaction cannot start for another reason.
    """
    try:
        if not _is_busy(refused):
            raise refused
        _when_free(lambda: conn.execute("BEGIN IMMEDIATE"), 3 * BUSY_TIMEOUT_MS, waited_ms=_lock_slice_ms(),
                   on_wait=on_wait)
    except sqlite3.OperationalError as e:
        if _is_busy(e):
            raise ConcurrencyError(f"the database stayed locked for {3 * BUSY_TIMEOUT_MS / 1000:g} s: {e}",
                                   busy=True) from e
        raise ViewStoreError(f"cannot start a transaction: {e}") from e
    except BaseException:  # a signal handler's, between two tries, or just as a try took the lock
        _let_go(conn)
        raise


def _let_go(conn: sqlite3.Connection) -> None:
    """After an exception raised just as ``BEGIN`` returned (a signal handler's, Ctrl-C's): end the
    transaction it began, which has written nothing, so that the connection keeps no write lock. A
    ROLLBACK that fails leaves the connection inside (a store then closes it, see
    ``ViewStore._close_if_stuck``)."""
    try:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
    except sqlite3.Error:
        pass


class transaction:
    """One write transaction: ``BEGIN IMMEDIATE`` ... ``COMMIT``, or ``ROLLBACK`` on any error
    (``with transaction(conn):``).

    While another connection holds the file's write lock, ``BEGIN`` is tried again and again, each
    try waiting a short slice in SQLite (:func:`_when_free`), so that a signal's handler runs between
    two tries: what it raises (Ctrl-C's KeyboardInterrupt) reaches the caller at once, as itself,
    with no transaction left open. A database that stays locked for three busy timeouts raises
    :class:`ConcurrencyError`, never a raw ``sqlite3.OperationalError``. While it waits, ``on_wait``
    (if given) is called between two tries about once a second, from the first second on, with the
    seconds waited so far and the seconds it waits in all (see :func:`_when_free`); a write that
    does not wait never calls it.

    A class, not a generator under ``contextlib.contextmanager``: every write enters one, and that
    costs a generator and its frames each time.
    """

    __slots__ = ("conn", "on_wait")

    def __init__(self, conn: sqlite3.Connection, on_wait: Callable[[float, float], None] | None = None) -> None:
        self.conn = conn
        self.on_wait = on_wait

    def __enter__(self) -> sqlite3.Connection:
        conn = self.conn
        try:
            conn.execute("BEGIN IMMEDIATE")
            return conn
        except sqlite3.OperationalError as e:
            refused = e
        except BaseException:  # a signal handler's (Ctrl-C's), raised as BEGIN returned
            _let_go(conn)
            raise
        # outside the handler: what a signal's handler raises has no context
        _begin_when_free(conn, refused, self.on_wait)
        return conn

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: Any) -> None:
        conn = self.conn
        if error is None:
            try:
                conn.execute("COMMIT")
                return
            except BaseException as failed:
                _roll_back(conn, failed)
                raise
        _roll_back(conn, error)  # then the block's own error goes on (returning None does not stop it)


def _roll_back(conn: sqlite3.Connection, error: BaseException) -> None:
    """After ``error`` in a write transaction (its block's, or its COMMIT's): roll it back, then raise
    the ViewStoreError the error stands for, if any (see :func:`_raise_typed`)."""
    for attempt in range(3):  # an interrupt ends one try; a connection left inside holds the write lock
        try:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            break
        except sqlite3.ProgrammingError:  # closed under the write (by a signal receiver or a callback)
            raise ViewStoreError("the store was closed during the write; nothing was written") from error
        except (sqlite3.Error, MemoryError) as undo:
            if attempt == 2:
                error.add_note(f"and its ROLLBACK failed three times ({undo})")
    _raise_typed(error)


@contextmanager
def savepoint(conn: sqlite3.Connection, lost: Callable[[BaseException], None]) -> Iterator[sqlite3.Connection]:
    """A part of the write transaction that is open (a ``SAVEPOINT``): on any error what it wrote
    is rolled back, and the transaction goes on as it was before it; errors are typed as in
    :class:`transaction`.

    Some errors end the whole transaction instead: SQLite rolls it back itself when an interrupt, a
    full disk or an I/O error stops a statement, and a part that cannot be rolled back alone (its
    ``ROLLBACK TO`` fails) is rolled back with the whole transaction, so that no later commit writes
    it. Then ``lost(error)`` is called: nothing written before the part can be committed any more.
    A transaction found gone before the part starts (ended by an error in a read, which no part
    saw) is lost too, and the part is refused: outside a transaction, ``SAVEPOINT`` would start one
    of its own and ``RELEASE`` commit it alone.
    """
    if not conn.in_transaction:
        gone = ViewStoreError("the transaction ended without a commit: SQLite rolled it back after an error")
        lost(gone)
        raise gone
    try:
        conn.execute("SAVEPOINT part")
    except sqlite3.Error as error:  # as a BEGIN that fails: typed, and nothing of the part was written
        if not conn.in_transaction:
            lost(error)
        _raise_typed(error)
        raise
    try:
        yield conn
        conn.execute("RELEASE part")
    except BaseException as error:
        try:
            if not conn.in_transaction:
                lost(error)
            else:
                try:
                    conn.execute("ROLLBACK TO part")
                    conn.execute("RELEASE part")
                except sqlite3.ProgrammingError:
                    raise
                except (sqlite3.Error, MemoryError) as undo:
                    lost(error)
                    alone = f"its writes could not be rolled back alone ({undo})"
                    try:
                        conn.execute("ROLLBACK")
                    except sqlite3.ProgrammingError:
                        raise
                    except (sqlite3.Error, MemoryError) as whole:  # lost all the same: the block's end rolls back
                        error.add_note(f"{alone}, nor with the whole transaction ({whole})")
                    else:
                        error.add_note(f"{alone}: the whole transaction was rolled back")
        except sqlite3.ProgrammingError:  # closed under the write (by a signal receiver or a callback)
            raise ViewStoreError("the store was closed during the write; nothing was written") from error
        _raise_typed(error)
        raise


def _raise_typed(error: BaseException) -> None:
    """Raise the ViewStoreError a write's sqlite3 error (or bad text) stands for; return for others."""
    if isinstance(error, sqlite3.IntegrityError) and "events.view_id" in str(error):
        raise ConcurrencyError(f"another writer appended to the view first: {error}") from error
    if isinstance(error, sqlite3.OperationalError) and _is_busy(error):
        raise ConcurrencyError(f"the database was busy: {error}", busy=True) from error
    if isinstance(error, sqlite3.Error):
        raise ViewStoreError(f"the database refused the write: {error}") from error
    if isinstance(error, UnicodeEncodeError):  # a lone surrogate in some text: SQLite stores UTF-8 only
        raise ValidationError(f"text that is not valid Unicode cannot be stored: {error}") from error


@contextmanager
def snapshot(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One read transaction: in WAL mode every SELECT inside it sees the same state of the file, so
    a commit by another connection cannot land between two of them (a views row read before a
    commit and its versions after it). Inside a write transaction, which is one already, it does
    nothing. An error SQLite raises inside (an interrupt, an I/O error) is a ViewStoreError.
    """
    try:
        if conn.in_transaction:
            yield conn
            return
        conn.execute("BEGIN")
        try:
            yield conn
        finally:
            try:
                if conn.in_transaction:
                    conn.execute("COMMIT")  # read only: this just ends the snapshot
            except sqlite3.ProgrammingError:  # closed inside (a callback closed the store): nothing to end
                pass
            except sqlite3.Error:  # else the connection stays in the read, and every later write is refused
                conn.execute("ROLLBACK")
    except sqlite3.Error as error:
        raise _read_refused(error) from error


def _read_refused(error: sqlite3.Error) -> ViewStoreError:
    """The error a read's sqlite3 error stands for: :class:`ConcurrencyError` (``busy``) when another
    connection's lock kept readers out past the connection's wait, else a plain ViewStoreError."""
    if isinstance(error, sqlite3.OperationalError) and _is_busy(error):
        return ConcurrencyError(f"another connection kept readers out of the database: {error}", busy=True)
    return ViewStoreError(f"the database refused the read: {error}")


class QueryRows(list[dict[str, Any]]):
    """The rows of an ad-hoc query: a list with one dict per row (column name -> value), as before,
    which also names the result's columns in ``columns``, in order, even when no row matched.

    The names are the keys of every row: a name the statement gives twice is made unique as the
    rows' keys are (``x``, ``x_2``).
    """

    def __init__(self, rows: Iterable[dict[str, Any]] = (), columns: Iterable[str] = ()) -> None:
        super().__init__(rows)
        self.columns: tuple[str, ...] = tuple(columns)


class _ResultColumns(sqlite3.Connection):
    """A connection that keeps the column names of the last statement it ran that returns rows:
    sqlite-utils' ``query()`` yields the rows alone, so a result with none would lose them."""

    described: tuple[str, ...] | None = None

    def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
        cursor = super().execute(sql, *args)
        if cursor.description is not None:
            self.described = tuple(d[0] for d in cursor.description)
        return cursor


#: how many steps of SQLite's machine an ad-hoc query runs between two runs of Python code (about
#: a fifth of a millisecond; the call costs about 0.1 % of that)
_SIGNAL_CHECK_STEPS = 20_000


def _signal_watch(raised: list[BaseException]) -> Iterator[int]:
    """SQLite's progress handler for ad-hoc queries, as a generator that each call resumes
    (``functools.partial(next, watch)``, started before the query): Python runs the signal handlers
    due as it resumes it, inside its ``try``. What a handler raises (Ctrl-C's KeyboardInterrupt, a
    SIGTERM handler's SystemExit) is kept in ``raised`` and ends the query (1); else it goes on (0).

    A plain function would lose it: Python runs the handlers on entering one, before any ``try`` in
    it, and the sqlite3 module drops an exception a callback raises (the query ends, "interrupted").
    """
    try:
        while True:
            yield 0
    except GeneratorExit:  # closed (the query over)
        raise
    except BaseException as error:
        raised.append(error)
        yield 1


def read_only_query(path: str | Path, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> QueryRows:
    """Run an ad-hoc SELECT on a read-only connection (sqlite-utils), for audit questions: every
    row of :func:`query_rows`, as one list.

    Returns:
        The rows as dicts, with the column names in ``columns`` (see :class:`QueryRows`).

    Raises:
        As :func:`query_rows`.
    """
    with query_rows(path, sql, params) as rows, collector_paused():  # a dict a row, all kept
        return QueryRows(rows, rows.columns)


#: what reading a stream after its ``with`` block ended raises
_ENDED = "a stream is read inside its with block, which has ended (read it there, or list() it there to keep it)"
#: what a second pass of a query's rows raises
_READ_ONCE = ("a query's rows are read once, and this stream's have been (list() it on its first pass to go "
              "over them again)")


class QueryStream:
    """The rows of an ad-hoc query as they are read (see :func:`query_rows`): iterating it yields a
    dict per row (column name -> value), once; ``columns``
    names the result's columns in order, even when no row matched (as :class:`QueryRows` does).

    The rows are read once: SQLite hands each over as the statement reaches it, and none is kept. A
    second pass, after the first read some rows or all of them, raises ViewStoreError (it would give
    the rest of the first pass's rows, or nothing, as if they were all); ``list()`` the stream to go
    over its rows more than once. (A stream of events, :class:`EventStream`, reads the log again
    for each pass.)"""

    def __init__(self, first: dict[str, Any] | None, rest: Iterator[dict[str, Any]], columns: Sequence[str],
                 failed: Callable[[BaseException], BaseException], raised: list[BaseException]) -> None:
        self.columns: tuple[str, ...] = tuple(columns)
        self._first = first
        self._rest = rest
        self._failed = failed
        self._raised = raised
        self._closed = False
        self._begun = False

    def close(self) -> None:
        """End the stream: its block has ended, and its connection with it."""
        self._closed = True

    def __iter__(self) -> Iterator[dict[str, Any]]:
        """The rows, on the first pass only.

        Raises:
            ViewStoreError: the block has ended, or a pass began before (the rows are read once).
        """
        if self._closed:
            raise ViewStoreError(_ENDED)
        if self._begun:
            raise ViewStoreError(_READ_ONCE)
        self._begun = True
        return self._rows()

    def _rows(self) -> Iterator[dict[str, Any]]:
        first, self._first = self._first, None
        if first is None:
            return
        yield first
        try:
            yield from self._rest
            return
        except (sqlite3.Error, ValueError) as error:  # a later row: typed as the first one's would be
            if self._closed:  # a pass begun in the block, read on after it: its connection is closed
                raise ViewStoreError(_ENDED) from error
            if not self._raised:
                raise self._failed(error) from error
        raise self._raised[0]  # outside the handler: as the signal's handler raised it, its context untouched


@contextmanager
def query_rows(path: str | Path, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Iterator[QueryStream]:
    """Run an ad-hoc SELECT on a read-only connection (sqlite-utils), for audit questions, and give
    its rows as they are read (:class:`QueryStream`) while the block runs; the connection's one
    read transaction holds them to one state of the file (in WAL mode writers go on meanwhile,
    but no checkpoint can pass it: the WAL grows for as long as the block reads).

    A query can run for ever (a recursive CTE without an end, a join of the log with itself):
    SQLite runs it without Python, so Ctrl-C (SIGINT) would wait for it. Every
    :data:`_SIGNAL_CHECK_STEPS` steps of SQLite's machine Python code runs (:func:`_signal_watch`),
    so that the process's signal handlers run; what one raises ends the query and is raised here,
    as itself. A query that another connection's lock keeps out (one in exclusive locking mode) is
    tried again in slices (:func:`_when_free`), so that a signal acts between two of them, up to
    :data:`BUSY_TIMEOUT_MS` in all, until its first row is read.

    Raises:
        ValidationError: the statement fails or tries to write (also while its later rows are read).
        ConcurrencyError: ``busy``: another connection kept readers out that long.
        BaseException: what a signal's handler raised while the query ran (Ctrl-C's KeyboardInterrupt).
    """
    import sqlite_utils
    import sqlite_utils.db

    raised: list[BaseException] = []
    watch = _signal_watch(raised)
    next(watch)  # started here, so that each call of the handler resumes it inside its try

    def failed(error: BaseException) -> BaseException:
        """The typed error a failure of the query (not one a signal's handler ended) stands for."""
        if isinstance(error, UnicodeError):  # a lone surrogate, which SQLite cannot take as text
            return ValidationError(f"query failed: the SQL is not valid Unicode text ({error})")
        if isinstance(error, ValueError):  # sqlite-utils: no statement that returns rows (empty, ATTACH, ...)
            return ValidationError("a query must be a statement that returns rows, such as a SELECT; "
                                   f"this one returns none: {sql.strip()[:60]!r}")
        if isinstance(error, sqlite3.OperationalError) and _is_busy(error):
            return ConcurrencyError(f"another connection kept readers out of the database for "
                                    f"{BUSY_TIMEOUT_MS / 1000:g} s: {error}", busy=True)
        # the connection's read-only mode, not the file's (Python's own errors carry no SQLite code)
        if getattr(error, "sqlite_errorcode", 0) & 0xFF == sqlite3.SQLITE_READONLY:
            return ValidationError(f"query failed: a query only reads, it cannot change the store ({error})")
        return ValidationError(f"query failed: {error}")

    # as_uri percent-encodes the path: a '#', '?' or '%' in it would otherwise end or change the URI
    conn = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True, factory=_ResultColumns)
    try:
        conn.execute(f"PRAGMA busy_timeout = {_lock_slice_ms()}")
        conn.described = None
        conn.set_progress_handler(functools.partial(next, watch), _SIGNAL_CHECK_STEPS)
        database = sqlite_utils.Database(conn)

        def start() -> tuple[Iterator[dict[str, Any]], dict[str, Any] | None]:
            rows = database.query(sql, params)
            return rows, next(rows, None)

        try:
            rows, first = _when_free(start, BUSY_TIMEOUT_MS)
        except (sqlite3.Error, ValueError) as error:  # (UnicodeError is a ValueError)
            if not raised:
                raise failed(error) from error
        else:
            if first is not None:
                columns: Sequence[str] = tuple(first)
            else:
                # the names as the rows' keys would have them (sqlite-utils 4 renames a repeated name;
                # older releases kept its first place and one value)
                unique = getattr(sqlite_utils.db, "dedupe_keys", lambda keys: list(dict.fromkeys(keys)))
                columns = unique(conn.described or ())
            stream = QueryStream(first, rows, columns, failed, raised)
            try:
                yield stream
            finally:
                stream.close()
            return
        raise raised[0]  # outside the handler: as the signal's handler raised it, its context untouched
    finally:
        conn.close()


def dumps(value: Any) -> str:
    """Compact JSON text, as stored in the log and the projections.

    orjson writes exactly what ``json.dumps(value, separators=(",", ":"), ensure_ascii=False)``
    writes for the values stored here (string-keyed dicts, lists, strings, 64-bit integers, booleans,
    None; ``tests/test_json_codec.py`` checks that) at about a sixth of the cost.

    Raises:
        ValidationError: the value holds text that is not valid Unicode (a lone surrogate) or an
            integer beyond 64 bits (SQLite, Iceberg and Spark store none either).
    """
    try:
        return orjson.dumps(value).decode()
    except TypeError as e:  # orjson.JSONEncodeError is a TypeError
        raise ValidationError(f"cannot store this value as JSON: {e}") from e


#: Parse JSON text written by :func:`dumps` (orjson's parser, about 4x faster than ``json.loads``;
#: it raises ValueError on text that is not JSON). Bound directly, not wrapped: rebuild() calls it
#: for every event of the log.
loads: Callable[[str | bytes], Any] = orjson.loads


def _row_to_event(row: Sequence[Any], stored: StoredEvents | None = None) -> Event:
    position, commit_id, view_id, stream_version, type_, identifier, actor, occurred_at, payload = row
    try:
        data = loads(payload)
    except ValueError as e:
        raise CorruptLogError(f"event at position {position} has a payload that is not JSON") from e
    if not isinstance(data, dict) or not isinstance(identifier, str):
        raise CorruptLogError(f"event at position {position} has a payload that is not a JSON object, "
                              "or an identifier that is not text")
    if stored is None:
        stored = StoredEvents()
    parts = stored.identifier(identifier)
    event = stored.event(position, commit_id, view_id, stream_version, type_, parts, actor, occurred_at, data)
    if event is not None:
        return event
    envelope = {"position": position, "commit_id": commit_id, "view_id": view_id,
                "stream_version": stream_version, "type": type_, "identifier": parts,
                "actor": actor, "occurred_at": occurred_at}
    return decode_event(envelope, loads(payload))  # parsed again: StoredEvents.event changes the dict


def _events(cursor: sqlite3.Cursor) -> list[Event]:
    """The events of a cursor's rows, each decoded as it is read (call it with the collector paused:
    see :class:`collector_paused`). No list of every row is made first: keeping the rows alive until
    they are decoded cost more than reading them."""
    stored = StoredEvents()
    try:
        return [_row_to_event(r, stored) for r in cursor]
    finally:
        cursor.close()  # a damaged row ends the read there


def _decoded_before_damaged(rows: Sequence[Sequence[Any]], stored: StoredEvents) -> list[Event]:
    """The events of ``rows`` up to the first that cannot be decoded (a damaged row)."""
    events = []
    for row in rows:
        try:
            events.append(_row_to_event(row, stored))
        except ViewStoreError:
            break
    return events


class EventStream:
    """Events read from the log as they are iterated, ``batch`` rows at a time, each decoded as
    :meth:`EventLog.query` decodes it (a damaged row raises CorruptLogError naming it when it is
    reached), so that no more than a batch of them is held; and :meth:`count`, how many there are.
    Iterate it (once or more) and count it inside the one read transaction (:func:`snapshot`) it
    was made in, so that every pass reads the same events: each pass reads the log again from the
    start, whatever an earlier pass read (some events, all of them, or up to a damaged row). A
    batch read up to a damaged row gives the events before it as a batch, and the pass then raises
    the error."""

    def __init__(self, cursor: Callable[[], sqlite3.Cursor | None], count: Callable[[], int], batch: int) -> None:
        self._cursor = cursor
        self._count = count
        self._batch = batch
        self._counted: int | None = None
        self._reading: list[Generator[list[Event], None, None]] = []
        self._closed = False

    def batches(self) -> Iterator[list[Event]]:
        """The events a batch at a time, in order."""
        if self._closed:  # its read has ended: a pass now would read another state, unguarded
            raise ViewStoreError(_ENDED)
        reading = self._read()
        self._reading.append(reading)
        return self._guarded(reading)

    def _guarded(self, reading: Generator[list[Event], None, None]) -> Iterator[list[Event]]:
        """A pass's batches; one that the block's end cut off (see :meth:`close`) raises as it is read
        on, once past the batch it held, where it would end as if the events had."""
        yield from reading
        if self._closed:
            raise ViewStoreError(_ENDED)

    def _read(self) -> Generator[list[Event], None, None]:
        cursor = self._cursor()
        if cursor is None:
            self._counted = 0
            return
        stored = StoredEvents()
        read = 0
        try:
            while rows := cursor.fetchmany(self._batch):
                read += len(rows)
                try:
                    events = [_row_to_event(r, stored) for r in rows]
                except ViewStoreError as error:
                    damaged = error
                else:
                    yield events
                    continue
                # a damaged row: the events before it are given first (a table prints them before the
                # error), decoded again only here, so that a batch of good rows costs nothing more
                if good := _decoded_before_damaged(rows, stored):
                    yield good
                raise damaged
        finally:
            cursor.close()  # a damaged row, or a caller that stopped, ends the read there
        self._counted = read

    def close(self) -> None:
        """End the passes still reading (their cursors closed), before the read transaction ends."""
        for reading in self._reading:
            reading.close()
        self._reading.clear()
        self._closed = True

    def __iter__(self) -> Iterator[Event]:
        for batch in self.batches():
            yield from batch

    def count(self) -> int:
        """How many events the stream holds (known without a query once it has been read to its end)."""
        if self._counted is None:
            if self._closed:
                raise ViewStoreError(_ENDED)
            self._counted = self._count()
        return self._counted


class collector_paused:
    """Python's cyclic garbage collector paused for a block (``with collector_paused():``), unless it
    was off already; it is on again when the block ends, as it was.

    For building long lists of new objects that all stay alive, such as events decoded from the
    log: every event is a few dozen container objects, and the collections they set off walk every
    one of them again and again (a list of 46,000 events that carry a version took 100 µs an event
    with the collector running, 28 µs without). Such objects hold no reference cycles, so nothing
    waits on the collector meanwhile.

    Left young, they would all be walked by the first collection after the block (the next
    allocation sets it off): about 0.6 µs for each of the four or so an event holds, a fifth of
    ``events()``. So a block that leaves at least :data:`MANY_YOUNG` young objects ends by moving
    every object the collector tracks into its oldest generation (``gc.freeze()`` then
    ``gc.unfreeze()``: no walk), which full collections walk as they walk every long-lived object.
    A smaller one leaves them young, as the program's own (a walk of them costs little); so does any
    block when the program has frozen objects of its own (``gc.get_freeze_count()``): unfreezing
    would hand them back to the collector.
    """

    __slots__ = ("paused",)

    def __enter__(self) -> None:
        self.paused = gc.isenabled()
        if self.paused:
            gc.disable()

    def __exit__(self, *exc: object) -> None:
        if self.paused:
            if gc.get_count()[0] >= MANY_YOUNG and not gc.get_freeze_count():
                gc.freeze()
                gc.unfreeze()
            gc.enable()


#: how many young objects a :class:`collector_paused` block leaves (as ``gc.get_count()`` counts them)
#: before it moves them to the oldest generation: those of about 2,300 events, whose walk would cost
#: some 6 ms (a read of fewer promotes none of the program's young objects with them)
MANY_YOUNG = 10_000


def _position_bounds(since_position: int | None, until_position: int | None) -> tuple[int, int]:
    """An inclusive range of log positions, an open end given as the 64-bit bound."""
    return (-(2**63) if since_position is None else since_position,
            2**63 - 1 if until_position is None else until_position)


class EventLog:
    """Reads and appends the ``events`` table of one connection."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def append(self, events: Sequence[Event]) -> list[tuple[Event, dict[str, Any]]]:
        """Insert events inside the caller's transaction; returns each with its position and payload.

        Raises:
            sqlite3.IntegrityError: a stream version is taken (translated by :class:`transaction`).
        """
        return [(event.model_copy(update={"position": position}), payload)
                for event, (position, payload) in zip(events, self.insert(events))]

    def insert(self, events: Sequence[Event]) -> list[tuple[int, dict[str, Any]]]:
        """Like :meth:`append`, but returns only each event's position and payload.

        The store's write path uses this: it needs the payloads for the projections, and a copy of
        each event with its position only when a ``committed`` receiver will see it.
        """
        stored = []
        execute = self.conn.execute
        for event in events:
            payload = event.payload()
            cursor = execute(_INSERT, (event.commit_id, event.view_id, event.stream_version, event.type,
                                       ".".join(event.identifier), event.actor, event.occurred_at,
                                       dumps(payload)))
            # typeshed says int | None (None before any insert); after this INSERT it is the new row's id
            stored.append((cast(int, cursor.lastrowid), payload))
        return stored

    def stream_rows(self, view_id: str, *, after_version: int = 0, limit: int | None = None) -> list[tuple[Any, ...]]:
        """Raw rows of one stream in stream order (optionally after a version, at most ``limit``)."""
        sql = (f"SELECT {', '.join(EVENT_COLUMNS)} FROM events WHERE view_id = ? AND stream_version > ? "
               "ORDER BY stream_version")
        params: list[Any] = [view_id, after_version]
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return self.conn.execute(sql, params).fetchall()

    def stream_spelled(self, view_id: str) -> str | None:
        """The key of the stream that is ``view_id`` but for the case of its letters (a UUID's hex
        digits: the same UUID, written otherwise), ``view_id`` itself if it is one; None if none is.
        Found through the stream index, a prefix at a time: a seek for each letter and case that
        some stream's key begins with, never a scan."""
        exists = "SELECT 1 FROM events WHERE view_id = ? LIMIT 1"
        begins = "SELECT 1 FROM events WHERE view_id >= ? AND view_id < ? LIMIT 1"
        if self.conn.execute(exists, (view_id,)).fetchone() is not None:
            return view_id

        def spelled(prefix: str, rest: str) -> str | None:
            for i, char in enumerate(rest):
                if char.isascii() and char.isalpha():  # a letter: either case may be the stream's
                    for case in dict.fromkeys((char.lower(), char.upper())):
                        start = prefix + rest[:i] + case
                        if (self.conn.execute(begins, (start, start[:-1] + chr(ord(case) + 1))).fetchone() is not None
                                and (found := spelled(start, rest[i + 1:])) is not None):
                            return found
                    return None
            whole = prefix + rest
            return whole if self.conn.execute(exists, (whole,)).fetchone() is not None else None

        return spelled("", view_id)

    def stream_cursor(self, view_id: str, *, after_version: int = 0) -> sqlite3.Cursor:
        """Raw rows of one stream in stream order after a version, read as the caller iterates.

        A caller that stops early (``as_of``: at the first event after the time) reads no further.
        """
        return self.conn.execute(f"SELECT {', '.join(EVENT_COLUMNS)} FROM events WHERE view_id = ? "
                                 f"AND stream_version > ? ORDER BY stream_version", (view_id, after_version))

    def stream(self, view_id: str, *, since_position: int | None = None,
               until_position: int | None = None) -> list[Event]:
        """The events of one stream in stream order, those in an inclusive range of positions if given."""
        cursor = self._stream_select(view_id, since_position, until_position)
        with collector_paused():
            return _events(cursor)

    def _stream_select(self, view_id: str, since_position: int | None, until_position: int | None) -> sqlite3.Cursor:
        """The cursor of :meth:`stream`'s rows."""
        if since_position is None and until_position is None:
            return self.stream_cursor(view_id)
        # (a stream's positions grow with its versions: its key's range, bounded by the rowid)
        return self.conn.execute(
            f"SELECT {', '.join(EVENT_COLUMNS)} FROM events WHERE view_id = ? AND position >= ? AND position <= ? "
            "ORDER BY stream_version", (view_id, *_position_bounds(since_position, until_position)))

    def streams_that_took(self, identifier: str, *, until_ms: int | None = None) -> list[str]:
        """Streams that took this identifier (created, imported or renamed to it; up to a time), newest first.

        These are the streams that carried the identifier at some event, found through the few
        events that give a stream its name (``events_naming`` indexes only those) instead of every
        event of a busy view. Every event carries the identifier a stream has after it, and a stream
        only gets one by one of these events, so the streams are the same; and as two live views never
        share an identifier, the stream that took it last also carried it last, so the order is too.
        """
        sql = f"SELECT view_id, max(position) AS p FROM events WHERE identifier = ? AND type IN {NAMING_TYPES}"
        params: list[Any] = [identifier]
        if until_ms is not None:
            sql += " AND occurred_at <= ?"
            params.append(until_ms)
        return [r[0] for r in self.conn.execute(sql + " GROUP BY view_id ORDER BY p DESC", params)]

    def holder(self, identifier: str) -> tuple[Any, Any] | None:
        """The stream that holds this identifier in the log (its view id, and the position of the event
        by which it took it), or None when no stream does: the one that took it last, if its last
        event still carries it (every event carries the identifier its stream has after it) and is no
        drop. Two seeks: the last of the few events ``events_naming`` indexes, then that stream's last
        event. The projections' views rows say the same when they are whole; this is what a name they
        hold free is checked against (a write giving the name to another view would leave the log two
        live views of it).
        """
        return self.conn.execute(
            f"SELECT n.view_id, n.position FROM (SELECT view_id, position FROM events INDEXED BY events_naming "
            f"WHERE identifier = ?1 AND type IN {NAMING_TYPES} ORDER BY position DESC LIMIT 1) n "
            "JOIN events l ON l.view_id = n.view_id "
            "AND l.stream_version = (SELECT max(stream_version) FROM events WHERE view_id = n.view_id) "
            "WHERE l.identifier = ?1 AND l.type != 'view.dropped'", (identifier,)).fetchone()

    def history_begins_ms(self, identifier: str, live_view_id: str | None) -> int | None:
        """When the history of this identifier begins, in epoch ms: the first time a stream took it
        (created, imported or renamed to it), or the creation of ``live_view_id`` (the view that has it
        now, which may have had another name before) if earlier; None when no stream ever took it.
        Two seeks (``events_naming``, the stream key), for the error path of ``as_of``."""
        row = self.conn.execute(
            f"SELECT min(t) FROM (SELECT min(occurred_at) AS t FROM events WHERE identifier = ? AND type IN "
            f"{NAMING_TYPES} UNION ALL SELECT occurred_at FROM events WHERE view_id = ? AND stream_version = 1)",
            [identifier, live_view_id]).fetchone()
        return None if row is None else row[0]

    def gap_around(self, identifier: str, until_ms: int) -> tuple[tuple[Any, ...] | None, tuple[Any, ...] | None]:
        """What ended this identifier's last holding up to a time, and what gave it to a view next
        after that time, for a time no view had it: the rename or drop by which the stream that took
        it last by then let go of it (position, type, identifier, actor, time), and the first event
        after the time that gave it to a stream (type, time, the identifier that stream had before:
        None when the event made it), each None when there is none.

        For the error path of ``as_of``, bounded however long the streams are: the few events
        ``events_naming`` indexes for the identifier, then seeks of the stream key. Between its
        taking and the stream's next taking of it (or its last event) the taker's events carry the
        identifier, undropped, up to the one that lets go and never after, so that one is found by
        bisection, not by reading every event of a busy view in between.
        """
        took = self.conn.execute(
            f"WITH named AS (SELECT view_id, stream_version, occurred_at, position FROM events INDEXED BY "
            f"events_naming WHERE identifier = ?1 AND type IN {NAMING_TYPES}), "
            "took AS (SELECT view_id, stream_version FROM named WHERE occurred_at <= ?2 "
            "ORDER BY occurred_at DESC, position DESC LIMIT 1) "
            "SELECT view_id, stream_version, coalesce((SELECT min(stream_version) - 1 FROM named n "
            "WHERE n.view_id = took.view_id AND n.stream_version > took.stream_version), "
            "(SELECT max(stream_version) FROM events WHERE view_id = took.view_id)) FROM took",
            (identifier, until_ms)).fetchone()
        ended = None
        if took is not None:
            view_id, version, bound = took
            if isinstance(version, int) and isinstance(bound, int):  # (else a damaged row: no ending to tell)
                ended = self.conn.execute(
                    "SELECT position, type, identifier, actor, occurred_at FROM events WHERE view_id = ? "
                    "AND stream_version = ? AND occurred_at <= ?",
                    (view_id, self._letting_go(identifier, view_id, version, bound), until_ms)).fetchone()
        given = self.conn.execute(
            f"WITH gave AS (SELECT view_id, stream_version, type, occurred_at FROM events INDEXED BY events_naming "
            f"WHERE identifier = ?1 AND type IN {NAMING_TYPES} AND occurred_at > ?2 "
            "ORDER BY occurred_at, position LIMIT 1) "
            "SELECT gave.type, gave.occurred_at, b.identifier FROM gave LEFT JOIN events b "
            "ON gave.type = 'view.renamed' AND b.view_id = gave.view_id AND b.stream_version = gave.stream_version - 1",
            (identifier, until_ms)).fetchone()
        return ended, given

    def _letting_go(self, identifier: str, view_id: Any, version: int, bound: int) -> int:
        """The stream version of the event by which a stream that took this identifier at ``version``
        let go of it (renamed it away or dropped it), looked for up to ``bound`` (one past it: none did).

        Between its taking and the stream's next taking of it (or its last event) the taker's events
        carry the identifier, undropped, up to the one that lets go and never after, so that one is
        found by bisection, seeks of the stream key, not by reading every event of a busy view in between.
        """
        def lets_go(v: int) -> bool:
            row = self.conn.execute("SELECT identifier != ? OR type = 'view.dropped' FROM events "
                                    "WHERE view_id = ? AND stream_version = ?", (identifier, view_id, v)).fetchone()
            return row is None or bool(row[0])

        return bisect.bisect_left(range(version + 1, bound + 1), True, key=lets_go) + version + 1

    def let_go(self, identifier: str) -> tuple[tuple[int, str, str, str, int], tuple[str, str]] | None:
        """What became of the stream :meth:`ViewStore.history` reads for this identifier when no live
        view has it: the one dropped last under it, else the one that took it last (and has since
        renamed it away). Its event that let go of the identifier (its first rename or drop after it
        last took it: position, type, identifier, actor, time) and its last event (type,
        identifier); None when no stream took it, or the one that did holds it still.

        For the error path of a name no live view has, bounded however long the stream is: one
        statement finds the streams that took it through ``events_naming`` and seeks their keys (each
        one's last event, to find one dropped under the name; the last taker's, as it may hold the name
        still; the chosen one's), then the event that let go of it is found by bisection
        (:meth:`_letting_go`) and read by its key.
        """
        row = self.conn.execute(
            f"WITH named AS (SELECT position, view_id, stream_version FROM events INDEXED BY events_naming "
            f"WHERE identifier = ?1 AND type IN {NAMING_TYPES}), "
            "dropped AS (SELECT e.view_id, max(e.position) FROM named CROSS JOIN events e ON e.view_id = named.view_id "
            "AND e.stream_version = (SELECT max(stream_version) FROM events WHERE view_id = named.view_id) "
            "WHERE e.type = 'view.dropped' AND e.identifier = ?1), "
            "last AS (SELECT view_id, stream_version, max(position) FROM named), "
            "took AS (SELECT view_id, stream_version, max(position) FROM named WHERE view_id = coalesce("
            "(SELECT view_id FROM dropped), (SELECT view_id FROM last))) "
            "SELECT took.view_id, took.stream_version, l.stream_version, l.type, l.identifier FROM took "
            "JOIN events l ON l.view_id = took.view_id "
            "AND l.stream_version = (SELECT max(stream_version) FROM events WHERE view_id = took.view_id) "
            "WHERE NOT EXISTS (SELECT 1 FROM last CROSS JOIN events x ON x.view_id = last.view_id "
            "AND x.stream_version = (SELECT max(stream_version) FROM events WHERE view_id = last.view_id) "
            "WHERE x.identifier = ?1 AND x.type != 'view.dropped')",
            (identifier,)).fetchone()
        if row is None:
            return None
        view_id, version, bound, last_type, last_identifier = row
        if not (isinstance(version, int) and isinstance(bound, int)):  # a damaged row: no ending to tell
            return None
        gone = self.conn.execute(
            "SELECT position, type, identifier, actor, occurred_at FROM events WHERE view_id = ? "
            "AND stream_version = ?",
            (view_id, self._letting_go(identifier, view_id, version, bound))).fetchone()
        return None if gone is None else (gone, (last_type, last_identifier))

    def last_time_named(self, identifier: str) -> int | None:
        """When the last stream that carried this identifier let go of it (None: none ever did).

        That is the time of its last event under the name (a drop carries the name it ends), or of
        the event right after it: a rename, which carries the new name. An import dates its events by
        the history it brings; this says when the name was last someone else's, so that no two views
        hold one name at the same time (see import_view).

        Raises:
            CorruptLogError: the latest of those times is not an integer (SQLite orders text after
                every number, so a time stored as text is the one found).
        """
        row = self.conn.execute(
            "WITH held AS (SELECT view_id, max(stream_version) AS last FROM events WHERE identifier = ? AND view_id IN "
            f"(SELECT view_id FROM events WHERE identifier = ? AND type IN {NAMING_TYPES}) GROUP BY view_id) "
            "SELECT e.position, e.occurred_at FROM held JOIN events e ON e.view_id = held.view_id "
            "AND e.stream_version IN (held.last, held.last + 1) ORDER BY e.occurred_at DESC LIMIT 1",
            (identifier, identifier)).fetchone()
        if row is None:
            return None
        if type(row[1]) is not int:
            raise CorruptLogError(f"event at position {row[0]} has a time that is not an integer")
        time: int = row[1]
        return time

    def query(self, *, view_ids: Iterable[str] | None = None, actor: str | None = None,
              since: int | None = None, until: int | None = None, types: Iterable[str] | None = None,
              limit: int | None = None, newest_first: bool = False, since_position: int | None = None,
              until_position: int | None = None) -> list[Event]:
        """Events matching every filter given, in log order (or the reverse)."""
        with collector_paused():
            cursor = self._select(view_ids=view_ids, actor=actor, since=since, until=until, types=types, limit=limit,
                                  newest_first=newest_first, since_position=since_position,
                                  until_position=until_position)
            return [] if cursor is None else _events(cursor)

    def rows(self, *, view_ids: Iterable[str] | None = None, actor: str | None = None,
             since: int | None = None, until: int | None = None, types: Iterable[str] | None = None,
             limit: int | None = None, newest_first: bool = False, since_position: int | None = None,
             until_position: int | None = None) -> list[tuple[Any, ...]]:
        """Raw rows (columns as in :data:`EVENT_COLUMNS`) matching every filter given, in log order
        or, with ``newest_first``, the reverse (so a ``limit`` keeps the latest events); see
        :meth:`_select` for the plans."""
        cursor = self._select(view_ids=view_ids, actor=actor, since=since, until=until, types=types, limit=limit,
                              newest_first=newest_first, since_position=since_position,
                              until_position=until_position)
        return [] if cursor is None else cursor.fetchall()

    def converted_rows(self, convert: Callable[[list[tuple[Any, ...]]], _T], batch: int, *,
                       view_ids: Iterable[str] | None = None, actor: str | None = None, since: int | None = None,
                       until: int | None = None, types: Iterable[str] | None = None, limit: int | None = None,
                       newest_first: bool = False, since_position: int | None = None,
                       until_position: int | None = None) -> list[_T]:
        """What ``convert`` makes of the rows :meth:`rows` returns, given to it ``batch`` rows at a
        time as they are read: only one batch of rows is held at once (all of them, as tuples, cost
        more than the columns most callers make of them)."""
        cursor = self._select(view_ids=view_ids, actor=actor, since=since, until=until, types=types, limit=limit,
                              newest_first=newest_first, since_position=since_position,
                              until_position=until_position)
        if cursor is None:
            return []
        converted: list[_T] = []
        try:
            while rows := cursor.fetchmany(batch):
                converted.append(convert(rows))
                del rows  # before the next batch is read: one batch held at a time, not two
            return converted
        finally:
            cursor.close()  # a batch convert refused ends the read there

    def _select(self, *, view_ids: Iterable[str] | None, actor: str | None, since: int | None, until: int | None,
                types: Iterable[str] | None, limit: int | None, newest_first: bool,
                since_position: int | None = None, until_position: int | None = None) -> sqlite3.Cursor | None:
        """The cursor of :meth:`_statement`'s rows (None: no row can match)."""
        statement = self._statement(view_ids=view_ids, actor=actor, since=since, until=until, types=types,
                                    limit=limit, newest_first=newest_first, since_position=since_position,
                                    until_position=until_position)
        return None if statement is None else self.conn.execute(*statement)

    def _statement(self, *, view_ids: Iterable[str] | None, actor: str | None, since: int | None,
                   until: int | None, types: Iterable[str] | None, limit: int | None, newest_first: bool,
                   since_position: int | None = None, until_position: int | None = None,
                   counting: bool = False) -> tuple[str, list[Any]] | None:
        """The SELECT (and its parameters) of the rows (columns as in :data:`EVENT_COLUMNS`) matching every
        filter given, in log order or, with ``newest_first``, the reverse (so a ``limit`` keeps the latest events).

        ``counting``: the same rows, each a ``1`` in no order (as many: a ``limit`` keeps as many
        rows in any order), for their count; with no filter (or a ``limit`` alone) that is a scan of
        the smallest index, not of every row (1M events: 20 ms, not 0.6 s).

        ``since_position`` and ``until_position`` bound the positions (inclusive), in every plan
        below: the position is the rowid, which every index holds, so a row outside the bound is
        not read (a plan by the rowid reads only the range); one position (both bounds the same)
        is a seek of its rowid alone, whatever the other filters.

        Which index answers depends on the filters; every plan reads exactly the rows the filters
        match, whatever the times (clocks may go backwards, and several processes write):

        - ``view_ids``: the stream key, the streams' rows sorted by position.
        - an actor, or a time range (every actor: one range of ``events_by_actor`` per actor, the
          actors found with a loose index scan): the positions come from the index alone, sorted
          there (with no type filter, only the ``limit`` latest or oldest of them), and then their
          rows are read in that order; a type filter over all of them reads the rows in index order
          and sorts the few it keeps, which costs less than sorting every position first.
        - types alone, all of which name a stream (created, imported, renamed), when such events are
          few: the partial index ``events_naming`` holds exactly the events of those types, so the
          rest are never read.
        - anything else reads the table in position order (a type filter of other types, no filter).
        """
        kinds = None if types is None else list(types)
        order = " ORDER BY position DESC" if newest_first else " ORDER BY position"
        cap = "" if limit is None else f" LIMIT {int(limit)}"
        select = "SELECT 1 FROM events" if counting else f"SELECT {', '.join(EVENT_COLUMNS)} FROM events"
        where: list[str] = []
        params: list[Any] = []
        if since_position is not None and since_position == until_position:
            # the rowid's seek (with a view's, SQLite would read its stream's index)
            bounds = [("position = ?", since_position)]
        else:
            bounds = [(f"position {op} ?", bound) for bound, op in ((since_position, ">="), (until_position, "<="))
                      if bound is not None]
        for clause, bound in bounds:
            where.append(clause)
            params.append(bound)
        if view_ids is not None:
            ids = list(view_ids)
            if not ids:
                return None
            where.append(f"view_id IN ({', '.join('?' * len(ids))})")
            params.extend(ids)
        keyed = actor is not None or since is not None or until is not None
        if keyed:
            if actor is not None:
                where.append("actor = ?")
                params.append(actor)
            elif view_ids is None:  # a time range over every actor: one range of events_by_actor per actor
                where.append(f"actor IN ({_ACTORS})")
            if since is not None:
                where.append("occurred_at >= ?")
                params.append(since)
            if until is not None:
                where.append("occurred_at <= ?")
                params.append(until)
        if view_ids is None and keyed and (kinds is None or limit is not None):
            # the positions from events_by_actor alone (it holds them), sorted there; then their rows
            inner = f"SELECT position FROM events WHERE {' AND '.join(where)}"
            if kinds is None and limit is not None:  # (an IN list is read in order: no other sort)
                inner += order + cap
            where = [f"position IN ({inner})"]
        elif view_ids is None and not keyed and kinds and set(kinds) <= _NAMING and self._few_named():
            # only events that name a stream: events_naming holds exactly those
            # (bounded there too, or every entry of the index would be read)
            inner = "".join(f" AND {clause}" for clause, _ in bounds)
            where.append("position IN (SELECT position FROM events INDEXED BY events_naming "
                         f"WHERE type IN {NAMING_TYPES}{inner})")
            params.extend(bound for _, bound in bounds)
        if kinds is not None:
            where.append(f"type IN ({', '.join('?' * len(kinds))})")
            params.extend(kinds)
        return select + (" WHERE " + " AND ".join(where) if where else "") + ("" if counting else order) + cap, params

    def matching(self, batch: int, **filters: Any) -> EventStream:
        """The events :meth:`query` returns for these filters, read as they are iterated, and how many
        they are (:class:`EventStream`); use it inside one read transaction (:func:`snapshot`)."""

        def count() -> int:
            statement = self._statement(**filters, counting=True)
            if statement is None:
                return 0
            found: int = self.conn.execute(f"SELECT count(*) FROM ({statement[0]})", statement[1]).fetchone()[0]
            return found

        return EventStream(lambda: self._select(**filters), count, batch)

    def stream_events(self, view_id: str, batch: int, *, since_position: int | None = None,
                      until_position: int | None = None) -> EventStream:
        """The events :meth:`stream` returns, read as they are iterated (:class:`EventStream`)."""

        def count() -> int:
            found: int = self.conn.execute(
                "SELECT count(*) FROM events WHERE view_id = ? AND position >= ? AND position <= ?",
                (view_id, *_position_bounds(since_position, until_position))).fetchone()[0]
            return found

        return EventStream(lambda: self._stream_select(view_id, since_position, until_position), count, batch)

    def _few_named(self) -> bool:
        """Whether the events that name a stream are at most one in :data:`NAMED_SHARE` of the log.

        Reading them through ``events_naming`` then costs less than a scan of the log; where they are
        many (a log of views created and hardly changed), each is a seek of its row, and a scan costs
        less (300,000 creates and 300 renames: every rename in 151 ms that way, 63 ms by a scan). It
        counts no further than it needs to, and the count only picks the plan: both give the same rows.
        """
        total = self.conn.execute("SELECT max(position) FROM events").fetchone()[0] or 0
        most = total // NAMED_SHARE
        found = self.conn.execute(f"SELECT count(*) FROM (SELECT 1 FROM events INDEXED BY events_naming "
                                  f"WHERE type IN {NAMING_TYPES} LIMIT ?)", (most + 1,)).fetchone()[0]
        return bool(found <= most)

    def iter_rows(self, batch: int = 10_000, *, without_commit_id: bool = False) -> Iterator[list[tuple[Any, ...]]]:
        """Every event row in log order, in batches (for rebuild).

        With ``without_commit_id`` that column reads as None (the fold does not use it, and a
        rebuild of a big log need not make a string of it for every event).
        """
        columns = ["NULL" if c == "commit_id" and without_commit_id else c for c in EVENT_COLUMNS]
        cursor = self.conn.execute(f"SELECT {', '.join(columns)} FROM events ORDER BY position")
        while True:
            rows = cursor.fetchmany(batch)
            if not rows:
                return
            yield rows

    def count(self) -> int:
        count: int = self.conn.execute("SELECT count(*) FROM events").fetchone()[0]
        return count

    def actors(self) -> list[str]:
        """Every actor with an event in the log, sorted: one seek of ``events_by_actor`` per actor.

        Raises:
            CorruptLogError: an event's actor is not text (a row written behind the library's back).
        """
        actors = [actor for (actor,) in self.conn.execute(_ACTORS)]
        # the column's TEXT affinity stores a number as text, so a blob is the only damage it can hold,
        # and SQLite sorts blobs after text: last
        for actor in actors[-1:]:
            if not isinstance(actor, str):
                position = self.conn.execute("SELECT position FROM events WHERE actor = ? LIMIT 1",
                                             (actor,)).fetchone()[0]
                raise CorruptLogError(f"event at position {position} has an actor that is not text")
        return actors

    def data_version(self) -> int:
        """SQLite's counter of commits made by other connections (for cache invalidation)."""
        try:
            return self.conn.execute("PRAGMA data_version").fetchone()[0]
        except sqlite3.Error as error:  # load_view asks this outside a snapshot
            raise _read_refused(error) from error


def row_to_event(row: Sequence[Any]) -> Event:
    """Decode one raw row of ``events`` (columns as in :data:`EVENT_COLUMNS`)."""
    return _row_to_event(row)
