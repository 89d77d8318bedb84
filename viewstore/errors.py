"""The one error hierarchy of viewstore.

Every public call either succeeds completely or raises one of these and writes nothing::

    ViewStoreError                      the root: catch this to catch everything viewstore raises
    ├── NoSuchViewError                 no live view has that identifier (also a LookupError); for
    │                                   history and events(view=...), no view ever had it
    ├── ViewAlreadyExistsError          a live view already has that identifier
    ├── ConcurrencyError                the view changed since the caller's expected_version,
    │                                   or (busy) the database, or the store in another thread,
    │                                   stayed held past a bounded wait
    ├── ValidationError                 bad identifier, type, SQL, dialect, property, version id
    │                                   (also a ValueError)
    ├── IcebergMetadataError            an Iceberg view metadata file is broken or does not fit
    ├── CorruptLogError                 the file holds an event or projection row the library did not write
    │   └── DamagedProjectionsError     a projection row is damaged, or a view's rows are behind or
    │                                   ahead of its log: rebuild() repairs them from the log
    ├── EngineError                     Spark or its metastore failed, not the input: the session is
    │                                   stopped, its JVM is gone, the metastore does not answer
    └── NotInstalledError               an optional dependency (pyspark, ...) is missing
"""

from __future__ import annotations

import functools
import sys
import threading
from typing import Callable, ParamSpec, TypeVar

from pydantic_core import PydanticSerializationError

__all__ = [
    "ViewStoreError",
    "NoSuchViewError",
    "ViewAlreadyExistsError",
    "ConcurrencyError",
    "ValidationError",
    "IcebergMetadataError",
    "CorruptLogError",
    "DamagedProjectionsError",
    "EngineError",
    "NotInstalledError",
]


class ViewStoreError(Exception):
    """Root of every error viewstore raises on purpose."""


class NoSuchViewError(ViewStoreError, LookupError):
    """The identifier names no live view (or, with ``as_of``, no view live at that time); for
    ``history`` and ``events(view=...)``, which read dropped and renamed views too, no view ever had it.
    For a name a view held once, the message says what became of the view ``history`` gives for it
    (the one dropped last under it, else the one that took it last): renamed to what, or dropped;
    when, by whom, and its name now."""


class ViewAlreadyExistsError(ViewStoreError):
    """A live view already uses the identifier."""


class ConcurrencyError(ViewStoreError):
    """A write lost a race: the view moved past ``expected_version``, or the database stayed busy.

    Attributes:
        view: the identifier string, when known.
        expected: the stream version the caller expected, when given.
        actual: the stream version found, when known.
        busy: the database stayed locked by another writer past the wait, or another thread held
            the store (a transaction, a receiver) or the Spark driver's view DDL turn that long
            (not a lost race).
    """

    def __init__(self, message: str, *, view: str | None = None, expected: int | None = None,
                 actual: int | None = None, busy: bool = False) -> None:
        super().__init__(message)
        self.view = view
        self.expected = expected
        self.actual = actual
        self.busy = busy


class ValidationError(ViewStoreError, ValueError):
    """Input that can never succeed: a bad name, type, SQL text, dialect, property or version id."""


class IcebergMetadataError(ViewStoreError):
    """An Iceberg view metadata file that is malformed, inconsistent, or belongs to another view."""


class CorruptLogError(ViewStoreError):
    """The file holds something the library did not write: an event it cannot read back (not JSON,
    not the payload of its type, out of order), or damaged projection rows (``rebuild()`` repairs
    those from the log). The message names the event's position or the view."""


class DamagedProjectionsError(CorruptLogError):
    """The projection rows (the current state the library keeps beside the log) are damaged, or
    behind or ahead of a view's log, while the log itself read back as the library wrote it:
    :meth:`~viewstore.ViewStore.rebuild` repairs them from the log. The message says so and names
    the view or the row."""


def _held(value: object, kind: type = str) -> str:
    """A value read back from a row, for an error's message: as it is when it has the type the
    library writes there (``kind``), else by its repr and its type (``b'a.b' (bytes)``, ``2.5
    (float)``, ``'0x2' (str)``), so that a message about a row damaged behind the library's back
    shows what the row really held, not a text that could be another value's."""
    return str(value) if type(value) is kind else f"{value!r} ({type(value).__name__})"


def _why(error: Exception) -> str:
    """A one-line reason: pydantic's first problems as ``field: message``, else the error itself."""
    problems = getattr(error, "errors", None)
    if not callable(problems):
        return str(error) or type(error).__name__
    return "; ".join(f"{'.'.join(map(str, p['loc'])) or 'the payload'}: {p['msg']}"
                     for p in problems(include_url=False)[:3])


def _signal_within(error: BaseException) -> BaseException | None:
    """The exception that is no error (Ctrl-C's ``KeyboardInterrupt``, a signal handler's
    ``SystemExit``) a Python function called by pydantic-core raised, which pydantic-core reports as
    its own ``PydanticSerializationError`` (its cause): a signal's handler runs inside whatever
    Python code runs when it comes, a serializer's (``str`` of a column type) too. None otherwise."""
    cause = error.__cause__
    return cause if isinstance(cause, BaseException) and not isinstance(cause, Exception) else None


_P = ParamSpec("_P")
_R = TypeVar("_R")

#: the signal a serializer within a dump of this thread raised as itself (see :func:`_signal_as_itself`)
_raised = threading.local()


def _signal_as_itself(function: Callable[_P, _R], *, within: bool = False) -> Callable[_P, _R]:
    """``function``, but for the signal (see :func:`_signal_within`) that came while it had
    pydantic-core dump a model whose serializer is Python code (a column type's text, a View's
    own): that goes on as itself, not as pydantic's ``PydanticSerializationError``. The one wrapper
    of the library's dumps that may run such a serializer.

    pydantic-core keeps the signal as its error's cause in Python mode, but not once that error has
    come through a Python serializer around it (a View's own), nor in JSON mode: there it reports it
    by its text alone. So a serializer that pydantic-core calls ``within`` a dump (the View's own, a
    column type's text, what a handler lets through as it is) keeps the signal it raises for its
    thread (:func:`_keep_signal`), and the wrapped dump around it takes it from there when
    pydantic-core's error comes without it; the dump lets it go then (the signal holds the frames of
    its traceback, and what they hold), and each wrapped call begins without one. A serializer run
    by a dump that is none of these (a user's ``TypeAdapter(View)``, a user's model holding a View)
    keeps nothing: that dump raises pydantic's error, as it would for any model."""

    @functools.wraps(function)
    def dumping(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        _raised.signal = None
        try:
            return function(*args, **kwargs)
        except PydanticSerializationError as e:
            signal = _signal_within(e) or _raised.signal  # else a serializer's within, kept without it
            if signal is None:
                raise
        except BaseException as e:  # as it is: a handler lets through what a computed field raised
            _raised.signal = None
            if within:
                _keep_signal(e)
            raise
        _raised.signal = None
        if within:
            _keep_signal(signal)
        raise signal  # outside the handler: as the signal's handler raised it

    return dumping


def _signal_as_itself_within(function: Callable[_P, _R]) -> Callable[_P, _R]:
    """:func:`_signal_as_itself` for a serializer pydantic-core calls within a dump."""
    return _signal_as_itself(function, within=True)


#: the code every wrapped dump runs (see :func:`_keep_signal`)
_DUMPING = getattr(_signal_as_itself(len), "__code__")


def _keep_signal(error: BaseException) -> None:
    """Keep ``error``, when it is a signal (see :func:`_signal_within`) raised by a serializer that
    pydantic-core called, for the dump of :func:`_signal_as_itself` that called pydantic-core, to
    take when pydantic-core's error reaches it without the signal. Kept only when such a dump is on
    the stack above the serializer's caller: another dump (a user's ``TypeAdapter``) would never
    take it, and it would stay held with the frames of its traceback till the thread's next dump.
    The frames are walked only here, on the way out of a dump a signal ended."""
    if isinstance(error, Exception):
        return
    frame = sys._getframe(1).f_back  # the frame that called pydantic-core (above the serializer that asks)
    while frame is not None:
        if frame.f_code is _DUMPING:
            _raised.signal = error
            return
        frame = frame.f_back


class EngineError(ViewStoreError):
    """The engine failed, not the caller's input: the SparkSession is stopped, the JVM behind it is
    gone, the session's metastore does not answer (unreachable, its Derby database held by
    another process), its catalog in memory cannot be made, or a setting the session was built
    with is one Spark refuses. The message says which, and what could not be done; the same call
    may succeed once the engine works again.
    Spark refusing what it was asked (a query that does not analyze) is a :class:`ValidationError`,
    not this."""


#: how a message says to install what the Spark integration needs (pyspark, pyarrow): the spark extra,
#: from a checkout as the README installs it, or from a package index that has viewstore
INSTALL_SPARK = "install the spark extra: pip install -e '.[spark]' in a checkout, or pip install 'viewstore[spark]'"


class NotInstalledError(ViewStoreError, ImportError):
    """An optional dependency is not installed; the message says which extra to install."""
