"""What Spark, py4j and a lost JVM raise, as viewstore errors: a refusal, or a failure of the engine.

A call into Spark fails for one of two kinds of reasons, and viewstore tells them apart:

* Spark refuses what it was asked: a query that does not analyze, a name it rejects. That is the
  caller's input (:class:`~viewstore.errors.ValidationError` with Spark's error condition in
  brackets), or, in a report, the one view's failure.
* The engine itself fails: the session was stopped, the JVM behind it is gone (py4j cannot reach
  it), the session's metastore does not answer (unreachable, its Derby database held by
  another process), a session's catalog in memory cannot be made (its warehouse folder cannot be),
  or a setting the session was built with is one Spark refuses. That is an
  :class:`~viewstore.errors.EngineError` saying so.

Spark's errors do not say which kind they are (a metastore that cannot start shows as a Hive client
error, a stopped session as ``INTERNAL_ERROR``), so the session is asked when a call fails: is it
stopped, does py4j reach its JVM, does its catalog (Hive's metastore, or one in memory) answer
``databaseExists("default")``? Only
if it is well is the failure the request's. The question costs one or two JVM round trips, and is
asked only after a failure, and before view DDL on a stored view through ``sql``, which may write
the store before the session follows (:func:`require_live`). It goes to the session the failing
call ran in: for the statements the calls run in a session cloned from the caller's
(:func:`viewstore.spark.session._work_session`), the clone, which shares the caller's SparkContext,
JVM and metastore, so its answer is the caller's session's too.

A long call tells the caller's ``progress(done, total)`` how far it is (:class:`Progress`); what the
callback raises is neither a refusal nor a failure of the engine: it reaches the caller unchanged,
past every handler here (:func:`engine_calls`).

PySpark logs every error of Spark's that carries a query context as it makes it, at ERROR with its
traceback (a record of JSON on stderr), caught or not. Inside a call here each such error is caught
and raised as a viewstore error with Spark's message, or reported as one view's failure, so its
record would say it a second time, once a view in a report of many: :func:`engine_calls` drops
the records made on its own thread while it runs. A refusal of the caller's own ``spark.sql`` is
logged as PySpark does.
"""

from __future__ import annotations

import functools
import logging
import re
import threading
from typing import Any, Callable, NamedTuple, TypeVar

from py4j.protocol import Py4JError, Py4JJavaError, Py4JNetworkError
from pyspark.errors import PySparkException
from pyspark.errors.exceptions.captured import CapturedException, ParseException
from pyspark.logger import PySparkLogger

from ..catalog import CallerRaised
from ..errors import EngineError

__all__ = ["ENGINE_ERRORS", "SPARK_ERRORS", "condition", "explanation", "engine_error", "environment_failure",
           "engine_calls", "metastore_silent", "Progress", "raise_engine_failure", "require_live",
           "session_down", "summary", "tagged"]

#: what Spark answers from the JVM: a refusal of the request, or a failure of the engine
SPARK_ERRORS = (CapturedException, Py4JJavaError)
#: everything a call into Spark may raise: the above, PySpark's own errors, py4j's, a lost connection to the JVM
ENGINE_ERRORS = (PySparkException, Py4JError, ConnectionError)

_F = TypeVar("_F", bound=Callable[..., Any])


def condition(error: BaseException) -> str:
    """Spark's error condition (``TABLE_OR_VIEW_NOT_FOUND``), or the Java exception's class name."""
    if isinstance(error, CapturedException):
        found = error.getCondition()
        if found:
            return found
        return type(error).__name__
    if isinstance(error, Py4JJavaError):
        # a Spark error PySpark does not convert (SparkException) still has Spark's own condition
        found = _java_condition(error.java_exception)
        if found:
            return found
        name: str = error.java_exception.getClass().getSimpleName()
        return name
    return type(error).__name__


def _java_condition(throwable: Any) -> str | None:
    """The condition of a Java exception that is one of Spark's (a ``SparkThrowable``), or None."""
    try:
        found = throwable.getCondition()
    except Py4JError:  # no such method: not one of Spark's
        return None
    return str(found) if found else None


def explanation(error: BaseException) -> str:
    """Spark's explanation without the plan dump; a parse error keeps its pointer into the SQL."""
    if isinstance(error, ParseException):
        # the Java text has the pointer into the SQL; str() would add the JVM stack trace when
        # spark.sql.pyspark.jvmStacktrace.enabled is set
        return _java_message(getattr(error, "_origin", None)) or str(error).strip()
    if isinstance(error, CapturedException):
        # PySpark gives the message of Spark's own errors only: a Java one (a bad path's
        # IllegalArgumentException) has its message on the Java exception
        return error.getMessage().strip() or _java_message(getattr(error, "_origin", None))
    if isinstance(error, Py4JJavaError):
        return str(error.java_exception.getMessage() or error.java_exception.toString())
    return str(error)


def _java_message(throwable: Any) -> str:
    """A captured error's Java exception's message (its class and text when it has none), or "" if
    there is none to ask."""
    if throwable is None:
        return ""
    try:
        return str(throwable.getMessage() or throwable.toString()).strip()
    except ENGINE_ERRORS:
        return ""


def summary(error: BaseException) -> str:
    """``[CONDITION] first line of the explanation``, for one-line messages."""
    return tagged(condition(error), _first_line(explanation(error)))


def tagged(condition: str, text: str) -> str:
    """``text`` led by ``[condition]``, once: Spark's own messages already start with it."""
    tag = f"[{condition}]"
    return text if text.startswith(tag) else f"{tag} {text}"


def _first_line(text: str, limit: int = 300) -> str:
    line = (text.strip().splitlines() or [""])[0].strip()
    return line if len(line) <= limit else line[:limit - 3] + "..."


def _root_cause(error: BaseException) -> str | None:
    """The message of the innermost Java cause of a failure (``Another instance of Derby ...``), or None.

    Follows ``getCause()``, a SQL exception's ``getNextException()`` and a JDO exception's
    nested ones: the metastore's own reason is usually several wrappers down.
    """
    if isinstance(error, Py4JJavaError):
        throwable = error.java_exception
    else:
        throwable = getattr(error, "_origin", None)  # a captured exception keeps the Java one
    found = None
    seen: set[int] = set()
    try:
        while throwable is not None and len(seen) < 64:
            key = int(throwable.hashCode())
            if key in seen:
                break
            seen.add(key)
            message = throwable.getMessage()
            if message:
                found = str(message)
            following = None
            for method in ("getNextException", "getNestedExceptions"):
                try:
                    value = getattr(throwable, method)()
                except Py4JError:
                    continue
                if value is not None and method == "getNestedExceptions":
                    value = value[0] if len(value) else None
                if value is not None:
                    following = value
                    break
            throwable = following if following is not None else throwable.getCause()
    except ENGINE_ERRORS:
        pass
    return found


def _gone(error: BaseException) -> str:
    said = _first_line(str(error), 120) or type(error).__name__  # a ConnectionError may say nothing
    return f"the SparkSession's JVM is gone (py4j cannot reach it: {said}); start a new session"


def _jvm_session(spark: Any) -> Any:
    """The JVM session behind a classic PySpark session; None for anything else (None, a Console...)."""
    return getattr(spark, "_jsparkSession", None) if spark is not None else None


def session_down(spark: Any) -> str | None:
    """Why the session can run nothing (it is stopped, or py4j cannot reach its JVM), or None."""
    jsession = _jvm_session(spark)
    if jsession is None:
        return None
    try:
        context = getattr(spark, "_sc", None)
        if context is not None and getattr(context, "_jsc", True) is None:  # PySpark's stop() clears it
            return "the SparkSession is stopped; start a new one"
        if jsession.sparkContext().isStopped():
            return "the SparkSession is stopped; start a new one"
    except ENGINE_ERRORS as error:
        return _gone(error)
    return None


def environment_failure(spark: Any, error: BaseException) -> str | None:
    """Why ``error`` is the engine's failure rather than a refusal of the request, or None.

    The session is asked (see the module notes): stopped, unreachable, a metastore that does not
    answer. Errors that never come from Spark's answer (py4j's own, a lost connection, PySpark's)
    are the engine's whatever the session says.
    """
    if isinstance(error, (ConnectionError, Py4JNetworkError)):
        return _gone(error)
    down = session_down(spark)
    if down is not None:
        return down
    if not isinstance(error, SPARK_ERRORS):
        return f"Spark failed: {summary(error)}"
    return metastore_silent(spark, error)


def metastore_silent(spark: Any, error: BaseException | None = None) -> str | None:
    """Why the session's catalog does not answer ``databaseExists("default")``, or None (it answers,
    or ``spark`` is no classic session): for Hive's catalog, its metastore does not answer; for a
    catalog in memory (no metastore), it cannot be made. ``error``, a failure that led to the
    question, may name the cause."""
    jsession = _jvm_session(spark)
    if jsession is None:
        return None
    try:
        jsession.sharedState().externalCatalog().databaseExists("default")
    except ENGINE_ERRORS as probe:
        probed = _root_cause(probe)
        refused = _refused_setting(probed or explanation(probe))
        if refused is not None:  # the session's state cannot be built: the metastore was never asked
            return refused
        cause = _first_line((_root_cause(error) if error is not None else None) or probed or explanation(
            error if error is not None else probe))
        if not _hive_catalog(jsession):
            return f"the session's catalog (in memory) cannot be made: {cause}"
        return f"the session's metastore does not answer: {cause}{_derby_hint(jsession)}"
    return None


def _hive_catalog(jsession: Any) -> bool:
    """Whether the session's catalog is Hive's (a metastore behind it) rather than one in memory;
    True when the session cannot say (the metastore's wording is the long-standing one)."""
    try:
        return str(jsession.sharedState().conf().get("spark.sql.catalogImplementation", "in-memory")) == "hive"
    except ENGINE_ERRORS:
        return True


#: Spark's refusal of a setting's value: its condition, the value, the setting, what Spark wants
_REFUSED_SETTING = re.compile(r"\[(INVALID_CONF_VALUE[\w.]*)\] The value '(.*)' in the config \"([^\"]+)\" is "
                              r"invalid\.\s*(.*?)\s*(?:SQLSTATE: \w+)?$", re.DOTALL)


def _refused_setting(cause: str) -> str | None:
    """Why a session can run nothing when a setting it was built with is one Spark refuses (``ten``
    for an int), naming the setting, its value and what Spark wants; None for any other cause. Spark
    checks a typed setting given to the builder only when it builds the session's state, which every
    statement and the metastore's catalog need, so it shows as any call failing."""
    match = _REFUSED_SETTING.match(cause.strip())
    if match is None:
        return None
    condition, value, setting, wants = match.groups()
    wants = wants.rstrip(".")
    wanted = f" ({wants[:1].lower()}{wants[1:]})" if wants else ""
    return (f"the session can run nothing: its setting {setting} is '{value}', which Spark refuses{wanted} "
            f"[{condition}]; correct it where the session is built")


def _derby_hint(jsession: Any) -> str:
    """A word on the embedded Derby metastore of a session whose catalog is Hive's (its caller decides
    that): a database in a folder one process at a time can use (Hive hides that reason); "" for
    any other metastore (remote, another database, a Derby one in memory or read-only, which no
    other process holds)."""
    try:
        shared = jsession.sharedState()
        # the settings the session's Hive client is built from (the context's, hive-site.xml's)
        settings = shared.hadoopConf()
        uris, url = (settings.get(key) for key in ("hive.metastore.uris", "javax.jdo.option.ConnectionURL"))
    except ENGINE_ERRORS:
        return ""
    derby = embedded_derby(None if uris is None else str(uris), None if url is None else str(url))
    if derby is None or derby.kind != "directory":
        return ""
    return (f" (the metastore is an embedded Derby database, {derby.name}, which one process at a time "
            f"can use: is another Spark session using it?)")


#: the metastore database Hive uses when no javax.jdo.option.ConnectionURL is set
HIVE_DEFAULT_URL = "jdbc:derby:;databaseName=metastore_db;create=true"

#: Derby's subsubprotocols, which may begin an embedded database's name: ``directory:`` (a folder, the
#: kind of a name that begins with none), ``memory:``, ``classpath:`` and ``jar:``
_DERBY_KIND = re.compile(r"(directory|memory|classpath|jar):")


class DerbyDatabase(NamedTuple):
    """An embedded Derby database, as its JDBC address names it."""

    #: Derby's subsubprotocol: ``directory`` (a folder, the default), ``memory`` (held by the JVM, no
    #: folder), ``classpath`` or ``jar`` (read-only, on the class path or in an archive)
    kind: str
    #: what follows it: the folder of a ``directory`` database (``jar``: ``(ARCHIVE)PATH``)
    name: str

    def __str__(self) -> str:
        """The database as a message names it: a folder by its path, another by what it is."""
        if self.kind == "directory":
            return self.name
        if self.kind == "memory":
            return f"{self.name}, in memory (no folder: it ends with its JVM)"
        archive = re.fullmatch(r"\((.*)\)(.*)", self.name, re.DOTALL) if self.kind == "jar" else None
        where = f"{archive[2]} in the archive {archive[1]}" if archive else f"{self.name} on the class path"
        return f"{where}, read-only"


def _derby_named(name: str) -> tuple[str | None, str]:
    """The subsubprotocol a Derby database name begins with (None if none) and the name after it."""
    match = _DERBY_KIND.match(name)
    return (match[1], name[match.end():]) if match is not None else (None, name)


def embedded_derby(uris: str | None, url: str | None) -> DerbyDatabase | None:
    """The embedded Derby database a metastore keeps its data in, from its Hive settings
    ``hive.metastore.uris`` and ``javax.jdo.option.ConnectionURL`` (Hive's default database where no
    URL is set); None for a remote metastore (URIs set), another database, a Derby address that names
    no database, or a Derby network server's (``jdbc:derby://host:1527/...``, which many processes
    can share). The database is the address's path, else (none before its first ``;``, or a
    subsubprotocol alone) the ``databaseName`` attribute's, as Derby reads it; its kind is the
    subsubprotocol either begins with (``jdbc:derby:memory:;databaseName=ms``)."""
    if uris is not None and uris.strip():  # a server elsewhere: its database is its own
        return None
    url = url or HIVE_DEFAULT_URL
    # embedded is jdbc:derby: with no // after it: the network client's address names a host first
    match = re.match(r"jdbc:derby:(?!//)([^;]*)(.*)", url, re.DOTALL)
    if match is None:
        return None
    kind, name = _derby_named(match[1])
    attribute = re.search(r";databaseName=([^;]*)", match[2])
    # Derby reads the attribute only when the address names no database before its first ';'
    if not name and attribute is not None and attribute[1]:
        named_kind, name = _derby_named(attribute[1])
        kind = kind or named_kind
    return DerbyDatabase(kind or "directory", name) if name else None


def raise_engine_failure(spark: Any, error: BaseException, what: str) -> None:
    """Raise an EngineError (``cannot <what>: <reason>``) if ``error`` is the engine's failure; return
    if it is a refusal of the request (the caller reports or raises that)."""
    reason = environment_failure(spark, error)
    if reason is not None:
        raise EngineError(f"cannot {what}: {reason}") from error


def engine_error(spark: Any, error: BaseException, what: str) -> EngineError:
    """An EngineError for a failure that cannot be the request's (``what`` failed: a read of the catalog, say)."""
    reason = environment_failure(spark, error)
    if reason is None:
        reason = f"Spark failed: {summary(error)}"
    return EngineError(f"cannot {what}: {reason}")


def require_live(spark: Any, what: str, *, metastore: bool = False) -> None:
    """Raise EngineError unless the session can run statements (before a call changes anything); with
    ``metastore``, unless its metastore answers too (one more round trip: for a call that writes the
    store before the session follows)."""
    down = session_down(spark)
    if down is None and metastore:
        down = metastore_silent(spark)
    if down is not None:
        raise EngineError(f"cannot {what}: {down}")


class Progress:
    """A long call's count of the units of its work (views) settled, told to the caller's
    ``progress(done, total)`` (checked with :func:`viewstore.catalog.check_progress`) as they settle,
    as :meth:`ViewStore.rebuild <viewstore.catalog.ViewStore.rebuild>` tells its own. What the
    callback raises stops the call there and reaches its caller unchanged, through :func:`engine_calls`."""

    __slots__ = ("_callback", "done", "total")

    def __init__(self, callback: Callable[[int, int], None] | None, total: int) -> None:
        self._callback = callback
        self.done = 0
        self.total = total

    def advance(self, units: int = 1) -> None:
        """``units`` more are settled (none: the callback is not called)."""
        if units <= 0:
            return
        self.done += units
        if self._callback is not None:
            try:
                self._callback(self.done, self.total)
            except BaseException as error:
                raise CallerRaised(error) from None


#: PySpark's loggers of the errors it makes with a query context (of a SQL text, of a DataFrame call)
_QUERY_CONTEXT_LOGGERS = ("SQLQueryContextLogger", "DataFrameQueryContextLogger")
_inside = threading.local()  # calls: how many engine_calls the thread is inside


class _OurCalls(logging.Filter):
    """Drops the records logged while the thread logging them is inside a call of :func:`engine_calls`."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not getattr(_inside, "calls", 0)


_FILTER = _OurCalls()


def _quiet_our_calls() -> None:
    """Puts the filter on PySpark's query-context loggers, once, and again should someone have cleared
    the filters. A logger not made yet is made as PySpark makes it (its own class, with its JSON
    handler), which sets logging's class of new loggers for a moment: only then, not on every call."""
    for name in _QUERY_CONTEXT_LOGGERS:
        logger = logging.Logger.manager.loggerDict.get(name)
        if not isinstance(logger, logging.Logger):  # not made yet (or only a placeholder of a child's)
            logger = PySparkLogger.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)


def engine_calls(what: str) -> Callable[[_F], _F]:
    """Decorate a public call taking the session first: whatever Spark, py4j or PySpark raise and the
    call does not turn into a viewstore error itself becomes an :func:`engine_error`; what the
    caller's progress callback raised (see :class:`Progress`) is raised as it is. While it runs,
    PySpark's records of the errors it makes on the call's thread are dropped (see the module's text)."""

    def decorate(fn: _F) -> _F:
        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any:
            _quiet_our_calls()
            _inside.calls = getattr(_inside, "calls", 0) + 1
            try:
                return fn(*args, **kwargs)
            except ENGINE_ERRORS as error:
                spark = kwargs.get("spark", args[0] if args else None)
                raise engine_error(spark, error, what) from error
            except CallerRaised as raised:
                callers = raised.error
            finally:
                _inside.calls -= 1
            raise callers  # outside the handler: the callback's exception, its context untouched
        return call  # type: ignore[return-value]
    return decorate
