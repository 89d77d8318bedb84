"""The store in a SparkSession: register stored views, define views in Spark SQL, audit in Spark.

The store is the truth and the session gets copies. A stored view becomes a *persistent* view in
the session catalog (``spark_catalog``) under its own name, so ``SELECT * FROM sales.daily_orders``
works the way it would against a metastore. Temporary views cannot carry a database name, and a
persistent view may not read a temporary one, so temporary views would not do.

How a stored view is copied into the session:

* ``CREATE OR REPLACE VIEW spark_catalog.ns.name (columns with comments) COMMENT ...
  TBLPROPERTIES (...) AS <the stored SQL, unchanged>``: the stored column names and comments, the
  view comment and the view properties (except ``comment``, the ``view.*`` and ``spark.sql.*``
  keys Spark owns or refuses, and viewstore's ``hms.*`` bookkeeping), and ``WITH SCHEMA <mode>``
  when the view records a schema mode other than Spark's default. Statements built from stored
  text run with ``spark.sql.variable.substitute=false``, so ``${...}`` in the SQL, comments and
  property values reaches Spark unchanged.
* Unqualified names in the SQL resolve in the view's default catalog and namespace: the statement
  runs with those as the current ones, and Spark records them in the view. A default catalog that
  is not a Spark catalog of the session (typically the store's own catalog name, e.g. ``prod``)
  means the session catalog. An empty default namespace means the view's own namespace.
* The SQL configs recorded with the view (the summary's ``spark.sql-configs``, or Spark's
  ``view.sqlConfig.*`` properties of a view imported from a metastore) are the SQL configs while
  the statement runs, and no other capturable ones, so Spark captures them into the copy: the
  session time zone or ANSI mode the view was defined under keeps deciding its answers. A view
  with none recorded runs under the session's configs.
* Those statements run in a session of viewstore's own, cloned from the caller's for each call
  (:func:`_work_session`): it shares the caller's session catalog, so the copies are the caller's
  at once, and starts with the caller's settings, temporary views and functions, session
  variables and attached viewstore catalogs (and, where a call records them, its current catalog
  and namespace); what is set for a view (its configs, its namespace, substitution off) is set
  there alone.
* A name that belongs to a table is never replaced.
* The copy carries the property ``viewstore.fingerprint`` (a hash of the statement and the
  namespace it ran under), so registering the same definition again leaves it alone, unless the
  copy's view text is no longer the stored SQL (an ``ALTER VIEW ... AS`` run in Spark).
* The copy carries the property ``viewstore.store``: the id of the store that made it
  (:attr:`ViewStore.store_id`, a UUID kept in the store's file). It is not part of the
  fingerprint, so copies made by releases before store ids keep theirs and are left alone by
  ``register_views``; with ``prune=True`` it adds the id to such a copy of a view it still
  holds (``ALTER VIEW ... SET TBLPROPERTIES``) instead of making it again. Only copies carrying
  the store's id are ever dropped by ``register_views(..., prune=True)``: never a table, a view
  made by hand or by another store, nor a copy of an earlier release that pruning did not reach
  while its view was stored (say, dropped before the upgrade); drop those by hand. A copy of the
  store's file (``cp``) has the same id and counts as the same store. Two stores registering
  one name in a shared metastore take turns: the copy is the store's that last made (or, when
  pruning, claimed) it.
* :func:`sql` creates the session copy before it writes the store; if the store then refuses,
  the session catalog is put back exactly as it was (the earlier view's metadata, or no view).

Every public function raises only :class:`~viewstore.errors.ViewStoreError` subclasses. What
Spark refuses (its ``AnalysisException`` and ``ParseException``) is bad input:
:class:`~viewstore.errors.ValidationError` whose message starts with Spark's error condition in
brackets, e.g. ``[TABLE_OR_VIEW_NOT_FOUND]``, followed by Spark's explanation. A failure of the
engine itself (a stopped session, a JVM py4j cannot reach, a metastore that does not answer) is
:class:`~viewstore.errors.EngineError`, whose message says so (see :mod:`viewstore.spark.failures`).
A call that fails writes nothing to the store.

The caller's session is left as it is while these functions run, so other threads may use it
meanwhile: a query there never runs under a view's SQL configs or default namespace, nor with
``${...}`` substitution off. :func:`register_views`, :func:`check_views` and :func:`create_view`
run all their statements in their own session (one per call); :func:`sql` runs there the view DDL
the store takes (analysis, the session copy), while every other statement, which is the
caller's own (``SET``, ``USE``, ``CREATE TEMPORARY VIEW``, queries), runs in the caller's session
as ``spark.sql`` would run it, its effects staying there. A catalog other than the session
catalog is loaded anew in each call's session, from its settings (Spark makes one instance of a
catalog per session): one that keeps state in its instance rather than behind its settings is not
the caller's instance there; viewstore's own (:func:`~viewstore.spark.catalog_plugin.attach`) is
connected to the same store.
"""

from __future__ import annotations

import hashlib
import heapq
import json
import logging
import re
import threading
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Iterable, Iterator, NamedTuple, Sequence

import pyarrow as pa
import sqlglot
from py4j.protocol import Py4JError
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T

from ..catalog import EventTypes, TimeLike, ViewChange, ViewStore, check_progress, thread_holds_a_store
from ..errors import (ConcurrencyError, EngineError, NoSuchViewError, ValidationError, ViewAlreadyExistsError,
                      ViewStoreError)
from ..formats.references import parse as parse_sql, tables_read
from ..formats.spark import COLLATIONS_KEY, QUERY_COLUMN_NAMES, recorded_query_columns, renamed_collations
from ..log import EVENT_COLUMNS
from ..model import (RESERVED_PREFIX, Column, Identifier, IdentifierLike, NamespaceLike, SQLRepresentation, View,
                     identifier_str, to_identifier, to_namespace, validate_properties)
from ..types import IcebergType, ListType, MapType, StructType
from . import catalog_plugin
from .catalog_plugin import active_session, attach_to_clone
from .catalog_plugin import SCHEMA_MODE  # the summary key: the view's schema binding mode, as the catalog writes it
from .catalog_plugin import SQL_CONFIGS  # the summary key: the SQL configs captured with the view (JSON)
from .failures import ENGINE_ERRORS as _ENGINE_ERRORS
from .failures import SPARK_ERRORS as _SPARK_ERRORS
from .failures import condition as _condition
from .failures import Progress, engine_calls, engine_error, environment_failure, raise_engine_failure, require_live
from .failures import explanation as _explanation
from .types import SPARK_SCHEMA, parse_schema, recorded_schema, schema_to_columns, schema_to_record

__all__ = [
    "register_views",
    "create_view",
    "sql",
    "events_dataframe",
    "check_views",
    "RegisterReport",
    "SkippedView",
    "FailedView",
    "DriftReport",
    "ViewDrift",
    "table_references",
]

_log = logging.getLogger("viewstore.spark")

#: the session catalog: where stored views are registered
SESSION_CATALOG = "spark_catalog"
#: the schema modes Spark knows; COMPENSATION is Spark 4's default
_SCHEMA_MODES = ("BINDING", "COMPENSATION", "TYPE EVOLUTION", "EVOLUTION")
#: the Spark configuration that substitutes ``${...}`` in SQL text
_SUBSTITUTE = "spark.sql.variable.substitute"
#: the field metadata Spark puts on a column whose name it made up from the expression
_AUTO_ALIAS = "__autoGeneratedAlias"
#: the session view property holding the fingerprint of the statement that created the copy
FINGERPRINT = "viewstore.fingerprint"
#: the session view property naming the store that made the copy (its :attr:`ViewStore.store_id`)
STORE = "viewstore.store"
#: Spark's error condition when CREATE OR REPLACE VIEW meets a table of that name (it never replaces one)
_TABLE_IN_THE_WAY = "EXPECT_VIEW_NOT_TABLE"
#: held while a thread runs view DDL on a store through sql() or register_views (see _one_ddl_at_a_time)
_STORE_DDL = threading.RLock()
#: how long a thread waits for another's turn at view DDL or register_views (a registration of
#: thousands of views takes tens of seconds on a busy machine) before it gives up
DDL_TURN_WAIT_S = 120.0


# -- small helpers around Spark ------------------------------------------------------------------


def _jsession(spark: SparkSession) -> Any:
    return spark._jsparkSession  # noqa: SLF001 - the classic (py4j) session is the only way to the parser


def _jvm(spark: SparkSession) -> Any:
    """The session's py4j JVM view (pyspark types it Optional: a Spark Connect session has none)."""
    return spark._jvm  # noqa: SLF001 - the classic (py4j) session is the only way to Scala's helpers


def _jlist(spark: SparkSession, scala_seq: Any) -> list[Any]:
    """A Scala collection as a Python list."""
    return list(_jvm(spark).scala.jdk.javaapi.CollectionConverters.asJava(scala_seq))


def _jmap(spark: SparkSession, scala_map: Any) -> dict[str, str]:
    converted = _jvm(spark).scala.jdk.javaapi.CollectionConverters.asJava(scala_map)
    return {str(k): str(converted.get(k)) for k in converted.keySet()}


def _option(value: Any) -> Any:
    """The value of a Scala ``Option``, or None."""
    return value.get() if value.isDefined() else None


def _spark_error(spark: SparkSession, error: BaseException, context: str, what: str) -> ViewStoreError:
    """A ValidationError carrying Spark's error condition and explanation (``context: [CONDITION] ...``),
    or an EngineError when the engine failed (``cannot <what>: the SparkSession is stopped ...``)."""
    reason = environment_failure(spark, error)
    if reason is not None:
        return EngineError(f"cannot {what}: {reason}")
    text = _explanation(error)
    condition = _condition(error)
    if not text.startswith(f"[{condition}]"):
        text = f"[{condition}] {text}"
    return ValidationError(f"{context}: {text}")


@contextmanager
def _verbatim(spark: SparkSession) -> Iterator[None]:
    """Spark parses SQL text as written: ``${...}`` is not substituted; the session's setting comes back.

    Nested uses inside one block cost nothing (register_views runs one block around all its
    statements: the setting's round trips to the JVM were about a tenth of registering a view).
    """
    active = _VERBATIM.__dict__.setdefault("sessions", set())
    if id(spark) in active:
        yield
        return
    conf = _jsession(spark).sessionState().conf()
    saved = conf.getConfString(_SUBSTITUTE) if conf.contains(_SUBSTITUTE) else None
    conf.setConfString(_SUBSTITUTE, "false")
    active.add(id(spark))
    failing = True
    try:
        yield
        failing = False
    finally:
        active.discard(id(spark))
        try:
            if saved is None:
                conf.unsetConf(_SUBSTITUTE)
            else:
                conf.setConfString(_SUBSTITUTE, saved)
        except _ENGINE_ERRORS as e:  # the session died meanwhile: the error that tells so matters more
            (_log.debug if failing else _log.warning)("could not restore the session's %s: %s", _SUBSTITUTE,
                                                      _explanation(e))


#: per thread, the sessions inside a :func:`_verbatim` block
_VERBATIM = threading.local()


def _run_verbatim(spark: SparkSession, statement: str) -> Any:
    """Run a statement built from stored text, without variable substitution; raises Spark's error."""
    with _verbatim(spark):
        return _jsession(spark).sql(statement)


def _captured_configs(spark: SparkSession) -> dict[str, str]:
    """The SQL configs Spark would capture into a view created now (Spark's own helper decides which)."""
    commands = _jvm(spark).org.apache.spark.sql.execution.command
    helper = getattr(commands, "ViewHelper$").__getattr__("MODULE$")
    return _jmap(spark, helper.sqlConfigsToProps(_jsession(spark).sessionState().conf(), ""))


def _sql_configs(view: View) -> dict[str, str] | None:
    """The SQL configs recorded with the view (summary, or Spark's HMS ``view.sqlConfig.*``), or None."""
    text = view.summary.get(SQL_CONFIGS)
    if text is not None:
        try:
            configs = json.loads(text)
        except ValueError:
            configs = None
        if isinstance(configs, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in configs.items()):
            return configs
        return None
    prefix = "view.sqlConfig."
    configs = {k[len(prefix):]: v for k, v in view.properties.items() if k.startswith(prefix)}
    return configs or None


class _Configs:
    """Sets the SQL configs a view captures, and puts the session's own back (in a session of
    viewstore's own, see :func:`_work_session`).

    Use as a context manager; :meth:`use` changes only the configs that differ from those in
    effect, so registering many views recorded under the same configs sets them once, and views
    recorded under configs that differ in one key (a time zone) change that key alone.
    """

    def __init__(self, spark: SparkSession) -> None:
        self._spark = spark
        self._conf = _jsession(spark).sessionState().conf()
        self._own_keys: set[str] | None = None  # the configs the session itself would capture (read once)
        self._original: dict[str, str | None] = {}  # the session's own value of each key touched (None: unset)
        self._now: dict[str, str | None] = {}  # what each touched key is set to now
        self._applied: dict[str, str] | None = None  # None: the session's own configs

    def __enter__(self) -> "_Configs":
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            self._set(dict(self._original))
        except _ENGINE_ERRORS as e:  # the session died meanwhile: the error that tells so matters more
            (_log.debug if exc[0] is not None else _log.warning)("could not restore the session's SQL configs: %s",
                                                                 _explanation(e))
        self._applied = None

    def use(self, configs: dict[str, str] | None) -> None:
        """Make the configs a view created now captures exactly ``configs`` (None: the session's own).

        Configs the session sets that ``configs`` lacks are unset for the moment, so a view created
        then captures the recorded configs and nothing of the driver's. The substitution setting
        of :func:`_verbatim` is left alone. A config Spark refuses raises its error, with the
        session's own configs back in effect.
        """
        if configs == self._applied:
            return
        target = dict(self._original)  # every key touched so far goes back to the session's value...
        if configs is not None:
            if self._own_keys is None:
                self._own_keys = set(_captured_configs(self._spark)) - {_SUBSTITUTE}
            wanted = {k: v for k, v in configs.items() if k != _SUBSTITUTE}
            target.update({k: wanted.get(k) for k in self._own_keys | set(wanted)})  # ...unless the view says
        try:
            self._set(target)
        except BaseException:
            self._set(dict(self._original))
            self._applied = None
            raise
        self._applied = configs

    def _set(self, target: dict[str, str | None]) -> None:
        for key, value in target.items():
            if key not in self._original:
                self._original[key] = self._conf.getConfString(key) if self._conf.contains(key) else None
                self._now[key] = self._original[key]
            if self._now[key] != value:  # a value Spark refuses leaves the key as it was
                if value is None:
                    self._conf.unsetConf(key)
                else:
                    self._conf.setConfString(key, value)
                self._now[key] = value


@contextmanager
def _captured(spark: SparkSession, configs: dict[str, str] | None) -> Iterator[None]:
    """Inside the block, the SQL configs a view captures are exactly ``configs`` (see :class:`_Configs`);
    then the session's come back. None changes nothing."""
    with _Configs(spark) as settings:
        settings.use(configs)
        yield


@contextmanager
def _work_session(spark: SparkSession, *, current: bool = False) -> Iterator[SparkSession]:
    """A session of viewstore's own for one call's statements, cloned from the caller's.

    Registering a view makes its SQL configs and its default catalog and namespace the session's
    while its statement runs, and stored text is parsed with ``${...}`` substitution off: in the
    caller's session, a query another thread ran there meanwhile would run under them. Spark's own
    ``cloneSession`` (reached through py4j) makes a session that shares the caller's SparkContext
    and shared state (the session catalog and its metastore, global temporary views, cached data),
    so a persistent view made in it is the caller's at once, and that starts with a copy of the
    caller's SQL configs (those set at runtime included: ``spark.sql.catalog.*``, the time zone,
    ANSI mode, case sensitivity, ...), temporary views and functions, SQL path, and current
    database of the session catalog. Copied here as well: the session variables (``DECLARE
    VARIABLE``, see :func:`_copy_variables`) and the stores attached as Spark catalogs
    (:func:`~viewstore.spark.catalog_plugin.attach`); with ``current``, the current catalog and
    namespace where the clone's differ (a clone starts in the default catalog, the session catalog
    or ``spark.sql.defaultCatalog``'s, at the caller's current database or that catalog's default
    namespace). Spark loads the other catalogs anew in the clone, from their settings.

    Inside the block the clone is the active session of this thread (see
    :func:`~viewstore.spark.catalog_plugin.active_session`), so the direct calls through py4j
    (parsing, loading a catalog) read its settings, as its statements do. One clone per call (not
    per view): about 5 ms, and its first statement costs 1–3 ms more than in a session that ran one
    before (in Spark's in-memory catalog and with the embedded Hive metastore alike).

    Raises:
        ValidationError: with ``current``, the current catalog or namespace cannot be used in the
            clone (Spark's condition and explanation).
        EngineError: the engine failed (see :mod:`viewstore.spark.failures`).
    """
    jsession = _jsession(spark)
    work = SparkSession(spark.sparkContext, jsession.cloneSession())
    jwork = _jsession(work)
    with active_session(work):
        _copy_variables(spark, jsession, jwork)
        attach_to_clone(jsession, jwork)
        if current:
            source, target = jsession.sessionState().catalogManager(), jwork.sessionState().catalogManager()
            catalog, namespace = source.currentCatalog().name(), source.currentNamespace()
            # the clone starts in the default catalog: the session catalog, or spark.sql.defaultCatalog's
            if (catalog, tuple(namespace)) != (target.currentCatalog().name(), tuple(target.currentNamespace())):
                try:
                    if catalog != target.currentCatalog().name():
                        target.setCurrentCatalog(catalog)
                    target.setCurrentNamespace(namespace)
                except _SPARK_ERRORS as e:
                    raise _spark_error(work, e, f"cannot use the current catalog {catalog!r} in a session of "
                                                f"its own", f"use the current catalog {catalog!r}") from e
        yield work


def _copy_variables(spark: SparkSession, jsession: Any, jclone: Any) -> None:
    """The session variables of ``jsession``, with their current values, in ``jclone`` too.

    ``cloneSession`` leaves them behind, and Spark has no call that lists them: the list is read
    from its variable manager's private map. Should that fail (a Spark release that keeps them
    otherwise), the clone goes without them (logged): a persistent view may not read a session
    variable, so registering a view that does fails either way, with another error condition.
    """
    variables = jsession.sessionState().catalogManager().tempVariableManager()
    if variables.isEmpty():
        return
    try:
        held = variables.getClass().getDeclaredField("variables")
        held.setAccessible(True)
        converters = _jvm(spark).scala.jdk.javaapi.CollectionConverters
        found = converters.asJava(held.get(variables))
        copies = jclone.sessionState().catalogManager().tempVariableManager()
        for name in list(found.keySet()):
            copies.create(converters.asScala([name]).toSeq(), found.get(name), False)
    except Py4JError as e:
        _log.warning("the session variables could not be copied into viewstore's own session: %s", e)


def _check_session(spark: Any) -> None:
    """The session must be a classic SparkSession."""
    if not isinstance(spark, SparkSession) or not hasattr(spark, "_jsparkSession"):
        raise ValidationError(f"spark must be a classic (py4j) SparkSession, not {type(spark).__name__}")


def _check_args(spark: Any, store: Any) -> None:
    """The session must be a classic SparkSession and the store a ViewStore."""
    _check_session(spark)
    if not isinstance(store, ViewStore):
        raise ValidationError(f"store must be a ViewStore, not {type(store).__name__}")


def _outside_transaction(store: ViewStore, what: str) -> None:
    """Refuse work that changes the Spark session for the store while this thread is inside a
    ``store.transaction()``: a rollback takes back the store's part, never the session's.

    Raises:
        ViewStoreError: this thread has a transaction of the store open.
    """
    if store.in_transaction:
        raise ViewStoreError(f"{what} changes the Spark session, which a rollback of the store's transaction "
                             "(store.transaction()) cannot take back: run it after the block has committed")


def _check_flag(value: Any, name: str) -> None:
    if not isinstance(value, bool):
        raise ValidationError(f"{name} must be True or False, not {value!r}")


def _quote_name(part: str) -> str:
    return "`" + part.replace("`", "``") + "`"


def _quote_string(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _session_name(identifier: Identifier) -> str:
    """The view's name in the session catalog, always with the catalog (the current one may differ)."""
    return ".".join([SESSION_CATALOG, *(_quote_name(p) for p in identifier)])


def _session_properties(properties: dict[str, str]) -> dict[str, str]:
    """The view properties the session copy carries.

    Left out: ``comment`` (the copy has COMMENT), keys Spark owns or refuses in TBLPROPERTIES
    (``view.*``, which Spark writes itself, and ``spark.sql.*``, which it refuses; both come with
    views imported from a metastore), viewstore's own ``hms.*`` bookkeeping, and the keys a copy
    gets from viewstore itself (the fingerprint and the store's id: a view imported from a copy
    has them). ``owner`` is an ordinary property of a Spark view and is kept.
    """
    return {k: v for k, v in properties.items()
            if k != "comment" and k != FINGERPRINT and k != STORE
            and not k.lower().startswith(("view.", "spark.sql.", RESERVED_PREFIX))}


def _schema_mode(view: View) -> str | None:
    """The schema binding mode recorded for the view (summary, or Spark's HMS property), or None."""
    mode = view.summary.get(SCHEMA_MODE) or view.properties.get("view.schemaMode")
    if mode is None:
        return None
    mode = " ".join(mode.upper().split())
    return mode if mode in _SCHEMA_MODES else None


def _create_statement(identifier: Identifier, query: str, columns: Sequence[Column], comment: str | None,
                      properties: dict[str, str], target: tuple[str, tuple[str, ...]],
                      schema_mode: str | None = None, configs: dict[str, str] | None = None,
                      store_id: str | None = None) -> tuple[str, str]:
    """``CREATE OR REPLACE VIEW`` for the session catalog, with the stored SQL unchanged after AS.

    Returns the statement and its fingerprint: a hash of the statement without it (and without
    the store's id), of the catalog and namespace it runs under and of the SQL configs it runs
    with (None: the session's). The statement stores the fingerprint as the view property
    ``viewstore.fingerprint``, so an identical copy need not be created again, and ``store_id``
    as ``viewstore.store``. The id is left out of the hash so that a copy made before store ids
    keeps the fingerprint it was given (register_views then adds the id to it, see
    :func:`_stamped`). A schema mode other than Spark's default (COMPENSATION) becomes
    ``WITH SCHEMA <mode>``.
    """
    head = [f"CREATE OR REPLACE VIEW {_session_name(identifier)}"]
    if columns:
        head.append("(" + ", ".join(
            _quote_name(c.name) + (f" COMMENT {_quote_string(c.comment)}" if c.comment is not None else "")
            for c in columns) + ")")
    if comment is not None:
        head.append(f"COMMENT {_quote_string(comment)}")
    props = _session_properties(properties)

    def render(props: dict[str, str]) -> str:
        clause = ["TBLPROPERTIES (" + ", ".join(f"{_quote_string(k)} = {_quote_string(v)}"
                                                for k, v in sorted(props.items())) + ")"] if props else []
        mode = [f"WITH SCHEMA {schema_mode}"] if schema_mode and schema_mode != "COMPENSATION" else []
        return " ".join(head + clause + mode) + " AS\n" + query

    plain = render(props)
    recorded = [json.dumps(sorted(configs.items()))] if configs is not None else []  # none: as before configs
    fingerprint = hashlib.sha256("\0".join([plain, target[0], *target[1], *recorded]).encode()).hexdigest()[:32]
    own = {FINGERPRINT: fingerprint} if store_id is None else {FINGERPRINT: fingerprint, STORE: store_id}
    return render({**props, **own}), fingerprint


def _is_spark_catalog(spark: SparkSession, name: str) -> bool:
    """Whether ``name`` is a catalog of this session (the session catalog or a configured one)."""
    return name.lower() == SESSION_CATALOG or spark.conf.get(f"spark.sql.catalog.{name}", None) is not None


class _CurrentNamespace:
    """Moves the session's current catalog and namespace, and puts the original ones back.

    Use as a context manager; :meth:`use` switches only when the target differs from the current.
    """

    def __init__(self, spark: SparkSession) -> None:
        self._spark = spark
        self._manager = _jsession(spark).sessionState().catalogManager()
        self._saved_catalog = self._manager.currentCatalog().name()
        self._saved_namespace = self._manager.currentNamespace()  # a Java String[], handed back as is
        self.original = (self._saved_catalog, tuple(self._saved_namespace))
        self._current: tuple[str, tuple[str, ...]] | None = self.original  # None: not known
        self._moved = False

    def __enter__(self) -> "_CurrentNamespace":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.restore(failing=exc[0] is not None)

    def use(self, catalog: str, namespace: Sequence[str]) -> None:
        """Make ``catalog.namespace`` current (raises Spark's error if the namespace is missing)."""
        target = (catalog, tuple(namespace))
        if target == self._current:
            return
        self._moved = True
        self._current = None  # until both steps succeed
        if catalog != self._manager.currentCatalog().name():
            self._spark.catalog.setCurrentCatalog(catalog)
        self._spark.catalog.setCurrentDatabase(".".join(_quote_name(p) for p in namespace))
        self._current = target

    def restore(self, failing: bool = False) -> None:
        """Put the original catalog and namespace back; a failure is logged (as a warning, unless the
        block ends in an error anyway: then the session is likely gone, and that error tells)."""
        if not self._moved:
            return
        try:
            if self._manager.currentCatalog().name() != self._saved_catalog:
                self._spark.catalog.setCurrentCatalog(self._saved_catalog)
            self._manager.setCurrentNamespace(self._saved_namespace)
        except _ENGINE_ERRORS as e:  # e.g. the original namespace was dropped meanwhile, or the session died
            (_log.debug if failing else _log.warning)("could not restore the session's current namespace %s: %s",
                                                      ".".join(self.original[1]), _explanation(e))
        self._current = self.original
        self._moved = False


def _default_target(spark: SparkSession, view: View,
                    known: dict[str, bool] | None = None) -> tuple[str, tuple[str, ...]]:
    """Where the view's unqualified names resolve: (Spark catalog, namespace).

    ``known`` caches which catalog names are Spark catalogs across calls.
    """
    catalog = view.default_catalog
    if catalog is not None and catalog.lower() != SESSION_CATALOG:
        if known is None:
            known = {}
        if catalog not in known:
            known[catalog] = _is_spark_catalog(spark, catalog)
        if not known[catalog]:
            catalog = None
    namespace = tuple(view.default_namespace) or view.namespace
    if catalog is None or catalog.lower() == SESSION_CATALOG:
        return SESSION_CATALOG, namespace
    return catalog, namespace


# -- table references, found with a parser ------------------------------------------------------


def _sqlglot_dialect(dialect: str) -> str:
    name = dialect.lower()
    try:
        sqlglot.Dialect.get_or_raise(name)
    except ValueError:
        return "spark"
    return name


def table_references(query: str, dialect: str = "spark") -> set[tuple[str, ...]] | None:
    """The tables and views a query reads, as name parts as written (lower case), CTE names excluded.

    Parsed with sqlglot in ``dialect`` (Spark's when sqlglot does not know the dialect). Table
    functions such as ``range(10)`` are not references, nor is a CTE's name where the CTE is in
    scope (in its own query, and in the CTEs after it; in Hive's dialect, in every CTE of its
    ``WITH``): see :func:`viewstore.formats.references.tables_read`.

    Returns:
        The references, or None when the query cannot be parsed (its dependencies are unknown).

    Raises:
        ValidationError: ``query`` or ``dialect`` is not a string.
    """
    for value, what in ((query, "query"), (dialect, "dialect")):
        if not isinstance(value, str):
            raise ValidationError(f"table_references: the {what} must be a string, not {type(value).__name__}")
    read = _sqlglot_dialect(dialect)
    try:
        trees = parse_sql(query, read)
    except (sqlglot.errors.SqlglotError, RecursionError):  # nested too deeply for sqlglot: unknown too
        return None
    if not trees:
        return None
    return {tuple(part.name.lower() for part in table.parts) for tree in trees for table in tables_read(tree, read)}


def _resolve_reference(reference: tuple[str, ...], view: View, store_catalog: str | None) -> Identifier:
    """The store identifier a table reference in ``view``'s SQL would name.

    A bare name is in the view's default namespace; a leading session-catalog, default-catalog or
    store-catalog name is dropped. Anything else is taken as written (and matches no stored view
    if it names another catalog).
    """
    if len(reference) == 1:
        namespace = tuple(view.default_namespace) or view.namespace
        return (*namespace, reference[0])
    catalogs = {SESSION_CATALOG, (view.default_catalog or "").lower(), (store_catalog or "").lower()} - {""}
    if len(reference) >= 3 and reference[0] in catalogs:
        return reference[1:]
    return reference


# -- register_views --------------------------------------------------------------------------------


@dataclass(frozen=True)
class SkippedView:
    """A view :func:`register_views` left alone, and why."""

    identifier: str
    reason: str
    """``no-representation`` (nothing in the dialect) or ``table-exists`` (a table has the name)."""
    detail: str


@dataclass(frozen=True)
class FailedView:
    """A view Spark refused to register (or a stale copy it would not drop), with Spark's error
    condition and explanation."""

    identifier: str
    condition: str
    """Spark's error condition, e.g. ``TABLE_OR_VIEW_NOT_FOUND``."""
    message: str
    action: str = "register"
    """``register`` (the view's copy could not be made) or ``prune`` (a stale copy could not be
    dropped, or a database could not be searched for them: then ``identifier`` is the database)."""


@dataclass
class RegisterReport:
    """What :func:`register_views` did: registered views in order, skipped ones, failed ones, and
    (with ``prune=True``) the stale copies it dropped."""

    registered: list[str] = field(default_factory=list)
    """Identifiers now queryable in the session, in the order they were registered."""
    unchanged: list[str] = field(default_factory=list)
    """Those of ``registered`` whose session copy already had this exact definition (not re-created)."""
    skipped: list[SkippedView] = field(default_factory=list)
    failed: list[FailedView] = field(default_factory=list)
    pruned: list[str] = field(default_factory=list)
    """The session copies this store had made that were dropped (``prune=True``), sorted: the store
    no longer holds those views, or they have no representation in the dialect."""
    databases_created: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """True when nothing failed (skipped views are not failures; a copy that could not be pruned is)."""
        return not self.failed

    def raise_for_failures(self) -> "RegisterReport":
        """Return self, or raise ValidationError listing the failures (for pipelines).

        Raises:
            ValidationError: at least one view failed to register, or a stale copy could not be pruned.
        """
        if self.failed:
            registering = sum(f.action == "register" for f in self.failed)
            what = [f"{registering} view(s) failed to register"] if registering else []
            if len(self.failed) > registering:
                what.append(f"{len(self.failed) - registering} stale copy(ies) could not be pruned")
            lines = [f"{f.identifier}: {'(prune) ' if f.action == 'prune' else ''}[{f.condition}] "
                     f"{f.message.splitlines()[0] if f.message else ''}" for f in self.failed]
            raise ValidationError(", ".join(what) + ":\n" + "\n".join(lines))
        return self

    def to_dict(self) -> dict[str, Any]:
        """The report as plain data (``--json``): every field, and ``ok``."""
        return {"ok": self.ok, **asdict(self)}

    def __str__(self) -> str:
        return (f"registered {len(self.registered)} ({len(self.unchanged)} unchanged), skipped {len(self.skipped)}, "
                f"failed {len(self.failed)}, pruned {len(self.pruned)} ({self.seconds:.2f} s)")


def _database_names(spark: SparkSession) -> set[str]:
    """The databases of the session catalog, lower case.

    Raises:
        EngineError: they cannot be listed (a stopped session, a metastore that does not answer).
    """
    try:
        rows = spark.sql(f"SHOW NAMESPACES IN {SESSION_CATALOG}").collect()
    except _ENGINE_ERRORS as e:
        raise engine_error(spark, e, "list the databases of the session catalog") from e
    return {r[0].lower() for r in rows}


def _ensure_databases(spark: SparkSession, names: Iterable[tuple[str, ...]], known: set[str],
                      report: RegisterReport) -> dict[tuple[str, ...], BaseException]:
    """Create missing session databases; returns the ones Spark refused to create, with the error.

    Raises:
        EngineError: the engine failed (see :mod:`viewstore.spark.failures`).
    """
    errors: dict[tuple[str, ...], BaseException] = {}
    for namespace in sorted(set(names)):
        key = ".".join(namespace)
        if key in known:
            continue
        try:
            _jsession(spark).sql(f"CREATE NAMESPACE IF NOT EXISTS {SESSION_CATALOG}."
                                 + ".".join(_quote_name(p) for p in namespace))
        except _SPARK_ERRORS as e:
            raise_engine_failure(spark, e, f"create the database {key}")
            errors[namespace] = e
            continue
        known.add(key)
        report.databases_created.append(key)
    return errors


#: a run of word characters: what a view name written in SQL is, when its name is one
_WORD = re.compile(r"\w+")


def _dependency_order(store: ViewStore, views: list[tuple[View, str]], dialect: str,
                      targets: dict[Identifier, tuple[str, tuple[str, ...]]]
                      ) -> tuple[list[tuple[View, str]], list[tuple[View, str]]]:
    """Order views so each comes after the stored views it reads; returns (ordered, in a cycle).

    Only SQL in which some stored view's name occurs is parsed: a name of word characters as one of
    the text's words (one set lookup a word, so the test grows with the texts, not with texts times
    names), another name as a substring; neither test can miss a reference. Views whose SQL the
    parser cannot read go last, so they may read any of the others. Among views that are ready at
    the same time, those sharing a default namespace go together (fewer switches of the session's
    current namespace).
    """
    by_id = {v.identifier: (v, text) for v, text in views}
    names = {v.name for v, _ in views}
    words = {name for name in names if _WORD.fullmatch(name)}
    others = names - words  # a name with a space, a dash, ... (written in backquotes)
    deps: dict[Identifier, set[Identifier]] = {}
    unparsed: list[Identifier] = []
    for view, text in views:
        lowered = text.lower()
        if words.isdisjoint(_WORD.findall(lowered)) and not any(name in lowered for name in others):
            deps[view.identifier] = set()  # no stored view's name occurs in the text: nothing to parse
            continue
        refs = table_references(text, dialect)
        if refs is None:
            unparsed.append(view.identifier)
            continue
        resolved = {_resolve_reference(r, view, store.catalog) for r in refs}
        deps[view.identifier] = {r for r in resolved if r in by_id and r != view.identifier}
    dependents: dict[Identifier, list[Identifier]] = {i: [] for i in deps}
    waiting = {i: 0 for i in deps}
    for ident, needs in deps.items():
        for need in needs:
            if need in deps:
                dependents[need].append(ident)
                waiting[ident] += 1

    def key(ident: Identifier) -> tuple[Any, ...]:
        return (*targets[ident], ident)

    ready = [key(i) for i, n in waiting.items() if n == 0]
    heapq.heapify(ready)
    ordered: list[Identifier] = []
    while ready:
        ident = heapq.heappop(ready)[-1]
        ordered.append(ident)
        for dependent in dependents[ident]:
            waiting[dependent] -= 1
            if waiting[dependent] == 0:
                heapq.heappush(ready, key(dependent))
    placed = set(ordered)
    cyclic = sorted(i for i in deps if i not in placed)
    ordered += sorted(unparsed, key=key)
    return [by_id[i] for i in ordered], [by_id[i] for i in cyclic]


def _register_one(spark: SparkSession, view: View, query: str, current: _CurrentNamespace, store_id: str,
                  target: tuple[str, tuple[str, ...]] | None = None) -> None:
    """Create (or replace) the session copy of one view; raises Spark's error."""
    target = target or _default_target(spark, view)
    configs = _sql_configs(view)
    statement, _ = _create_statement(view.identifier, query, view.columns, view.comment, view.properties, target,
                                     _schema_mode(view), configs, store_id)
    current.use(*target)
    with _captured(spark, configs):
        _run_verbatim(spark, statement)


class _Copy(NamedTuple):
    """What register_views reads of a view of the session catalog."""

    fingerprint: str | None
    text: str | None
    """The view text Spark keeps (the query of the statement that made the view)."""
    store: str | None
    """The id of the store that made it (None: not made by a store, or by a release before store ids)."""


def _session_views(spark: SparkSession, database: str, names: Sequence[str] | None = None) -> dict[str, _Copy]:
    """The views among ``names`` (None: every view) of one database of the session catalog.

    One catalog call reads them (plus one that lists the database's views, for None); tables and
    missing names are left out. So is a view whose record Spark cannot read (a damaged metastore
    record): when the batch fails, each name is read alone, so such a record hides only itself. A
    database dropped since it was listed has no views.

    Raises:
        EngineError: the engine failed (see :mod:`viewstore.spark.failures`).
        Spark's error: the database's views cannot be listed, although it exists and the engine works.
    """
    converters = _jvm(spark).scala.jdk.javaapi.CollectionConverters  # looked up once
    external = _jsession(spark).sharedState().externalCatalog()

    def read(some: Sequence[str]) -> dict[str, _Copy]:
        found = {}
        # each Java call is a round trip (about 0.1 ms): the properties are read as a Java map (one call
        # a key), and a view's text only when it carries a fingerprint to compare it with
        for table in converters.asJava(external.getTablesByName(database, converters.asScala(list(some)).toSeq())):
            if str(table.tableType().name()) != "VIEW":
                continue
            properties = converters.asJava(table.properties())
            fingerprint, store = properties.get(FINGERPRINT), properties.get(STORE)
            text = _option(table.viewOriginalText()) if fingerprint is not None else None
            found[str(table.identifier().table())] = _Copy(None if fingerprint is None else str(fingerprint),
                                                           None if text is None else str(text),
                                                           None if store is None else str(store))
        return found

    try:
        if names is None:
            names = [str(n) for n in converters.asJava(external.listViews(database, "*"))]
        return read(names) if names else {}
    except _ENGINE_ERRORS as e:
        raise_engine_failure(spark, e, f"read the views of database {database}")
        if not external.databaseExists(database):
            return {}  # dropped since the listing
        if names is None:
            raise
        failed = e
    found = {}
    for name in names:
        try:
            found.update(read([name]))
        except _SPARK_ERRORS as e:
            raise_engine_failure(spark, e, f"read the view {database}.{name}")
            _log.warning("Spark cannot read the session catalog's view %s.%s: %s", database, name, _explanation(e))
    _log.debug("the views of %s were read one by one: %s", database, _explanation(failed))
    return found


def _stamped(spark: SparkSession, identifier: Identifier, store_id: str) -> bool:
    """Give a session copy this store's id; False if Spark refuses (the caller then makes it again).

    ``ALTER VIEW ... SET TBLPROPERTIES``: nothing else of the copy changes, and its query is not
    analyzed again (so it succeeds even where the tables the copy reads are gone for now).
    """
    try:
        _jsession(spark).sql(f"ALTER VIEW {_session_name(identifier)} SET TBLPROPERTIES "
                             f"({_quote_string(STORE)} = {_quote_string(store_id)})")
    except _SPARK_ERRORS as e:
        _log.info("could not add the store id to the session copy of %s (it is made again): %s",
                  identifier_str(identifier), _explanation(e))
        return False
    return True


def _prune(spark: SparkSession, store_id: str, databases: Iterable[str], keep: set[Identifier],
           report: RegisterReport) -> dict[str, dict[str, _Copy]]:
    """Drop the views of ``databases`` that carry this store's id and whose names are not in ``keep``.

    Each is read again just before its DROP, so a copy another store (or a person) made under that
    name since the listing is left alone, and so is one whose record Spark cannot read. A refusal is
    reported, not raised; a database dropped since the listing has nothing to prune.

    Raises:
        EngineError: the engine failed (see :mod:`viewstore.spark.failures`).

    Returns:
        The views read in each database searched (for the copies of ``keep``: not read twice).
    """
    read: dict[str, dict[str, _Copy]] = {}
    for database in sorted(databases):
        try:
            views = read[database] = _session_views(spark, database)
        except _SPARK_ERRORS as e:
            report.failed.append(FailedView(database, _condition(e), _explanation(e), "prune"))
            continue
        for name in sorted(n for n, copy in views.items() if copy.store == store_id and (database, n) not in keep):
            identifier = (database, name)
            try:
                again = _session_views(spark, database, [name]).get(name)
                if again is None or again.store != store_id:
                    continue
                _jsession(spark).sql(f"DROP VIEW IF EXISTS {_session_name(identifier)}")
            except _SPARK_ERRORS as e:
                raise_engine_failure(spark, e, f"drop the stale copy {identifier_str(identifier)}")
                report.failed.append(FailedView(identifier_str(identifier), _condition(e), _explanation(e), "prune"))
            else:
                report.pruned.append(identifier_str(identifier))
    report.pruned.sort()
    return read


def _recorded_text(spark: SparkSession, statement: str) -> str | None:
    """The view text Spark records for a CREATE VIEW statement (the query as its parser cuts it out)."""
    with _verbatim(spark):
        plan = _jsession(spark).sessionState().sqlParser().parsePlan(statement)
    text = _option(plan.originalText())
    return None if text is None else str(text)


def _register(spark: SparkSession, store: ViewStore, candidates: list[tuple[View, str]], report: RegisterReport, *,
              scope: tuple[str, ...] | None, dialect: str, refresh: bool, prune: bool, progress: Progress) -> None:
    """register_views' work in ``spark`` (its own session, see :func:`_work_session`): prune, then
    create the copies of ``candidates`` (view, SQL in the dialect) that need it, into ``report``;
    ``progress`` advances as each candidate's outcome is settled.

    Raises:
        EngineError: the engine failed (see :mod:`viewstore.spark.failures`); ``report`` holds
            what was done before.
    """
    known = _database_names(spark)
    existing = set(known)
    # pruning needs the id (a file made before ids makes it now, after the catalog answered); copies
    # made without pruning carry it if the file has one, so registering from a file that cannot be
    # written still works
    pruning_id = store.store_id if prune else None
    store_id = pruning_id if pruning_id is not None else store.existing_store_id()
    read: dict[str, dict[str, _Copy]] = {}  # the views pruning read, by database
    if pruning_id is not None:
        if scope is None:
            searched = existing
        else:  # a namespace of more than one part is no database of the session catalog
            searched = {scope[0]} & existing if len(scope) == 1 else set()
        with _verbatim(spark):
            read = _prune(spark, pruning_id, searched, {v.identifier for v, _ in candidates}, report)
    if not candidates:
        return

    catalogs: dict[str, bool] = {}
    targets = {v.identifier: _default_target(spark, v, catalogs) for v, _ in candidates}
    wanted = {v.namespace for v, _ in candidates}
    wanted |= {namespace for catalog, namespace in targets.values() if catalog == SESSION_CATALOG}
    bad_databases = _ensure_databases(spark, wanted, known, report)
    copies: dict[Identifier, _Copy] = {}
    if not refresh:
        by_database: dict[tuple[str, ...], list[str]] = {}
        for view, _ in candidates:
            if ".".join(view.namespace) in existing and len(view.namespace) == 1:
                by_database.setdefault(view.namespace, []).append(view.name)
        for database, names in by_database.items():
            found = read.get(database[0])
            for name, held in (found if found is not None else _session_views(spark, database[0], names)).items():
                copies[(*database, name)] = held

    ready: list[tuple[View, str]] = []
    for view, query in candidates:
        error = bad_databases.get(view.namespace)
        if error is not None:
            report.failed.append(FailedView(identifier_str(view.identifier), _condition(error), _explanation(error)))
        else:
            ready.append((view, query))

    ordered, cyclic = _dependency_order(store, ready, dialect, targets)
    for view, _ in cyclic:
        report.failed.append(FailedView(identifier_str(view.identifier), "RECURSIVE_VIEW",
                                        "the view reads itself through other stored views"))
    progress.advance(len(candidates) - len(ordered))  # those failed already
    with _CurrentNamespace(spark) as current, _verbatim(spark), _Configs(spark) as settings:
        for view, query in ordered:
            name = identifier_str(view.identifier)
            target = targets[view.identifier]
            configs = _sql_configs(view)
            statement, fingerprint = _create_statement(view.identifier, query, view.columns, view.comment,
                                                       view.properties, target, _schema_mode(view), configs, store_id)
            copy = copies.get(view.identifier)
            try:
                # the copy's text is the query as Spark's parser cut it out of the statement: most often
                # the query itself (no parse needed), else what a parse of the statement records
                if copy is not None and copy.fingerprint == fingerprint and (
                        copy.text == query or copy.text == _recorded_text(spark, statement)) and (
                        copy.store == store_id or pruning_id is None or _stamped(spark, view.identifier, pruning_id)):
                    report.unchanged.append(name)
                else:
                    current.use(*target)
                    settings.use(configs)
                    _run_verbatim(spark, statement)
            except _SPARK_ERRORS as e:
                raise_engine_failure(spark, e, f"register view {name}")
                condition = _condition(e)
                if condition.startswith(_TABLE_IN_THE_WAY):  # Spark's own guard: a table keeps its name
                    report.skipped.append(SkippedView(name, "table-exists",
                                                      "a table of the session catalog has this name"))
                else:
                    report.failed.append(FailedView(name, condition, _explanation(e)))
            else:
                report.registered.append(name)
            progress.advance()


def _register_from(spark: SparkSession, store: ViewStore, scope: tuple[str, ...] | None, dialect: str,
                   report: RegisterReport, *, refresh: bool, prune: bool,
                   callback: Callable[[int, int], None] | None) -> None:
    """register_views' work once it has its turn: read the store's views, then register them."""
    identifiers = store.list_views(scope)
    progress = Progress(callback, len(identifiers))
    candidates: list[tuple[View, str]] = []
    for ident in identifiers:
        try:
            view = store.load_view(ident)
        except NoSuchViewError:  # dropped or renamed by another process since the listing: not the store's now
            continue
        query = view.sql_for(dialect)
        if query is None:
            report.skipped.append(SkippedView(identifier_str(ident), "no-representation",
                                              f"no {dialect!r} representation (it has {', '.join(view.dialects)})"))
        else:
            candidates.append((view, query))
    progress.advance(len(identifiers) - len(candidates))  # those passed over, and those without SQL in the dialect
    if candidates or prune:
        try:
            with _work_session(spark) as work:  # its statements run there: the caller's session stays as it is
                _register(work, store, candidates, report, scope=scope, dialect=dialect, refresh=refresh, prune=prune,
                          progress=progress)
        except EngineError as e:
            done = [f"{len(report.registered)} view(s) registered"] if report.registered else []
            done += [f"{len(report.pruned)} stale copy(ies) pruned"] if report.pruned else []
            if not done:
                raise
            raise EngineError(f"{e} (before that: {', '.join(done)}; registering again finishes the work)") from e


@engine_calls("register views")
def register_views(spark: SparkSession, store: ViewStore, namespace: NamespaceLike | None = None, *,
                   dialect: str = "spark", refresh: bool = False, prune: bool = False,
                   progress: Callable[[int, int], None] | None = None) -> RegisterReport:
    """Make the stored views queryable in the session under their own names.

    Each view with a representation in ``dialect`` (matched case-insensitively) becomes a
    persistent view in the session catalog: ``spark.sql("SELECT * FROM sales.daily_orders")``
    works afterwards. Missing databases are created. Unqualified names in a view's SQL resolve in
    its default namespace (see the module notes). Views that read other stored views are
    registered after them; the references are found with sqlglot's parser. An existing view of
    the same name is replaced; a table never is: Spark's own guard refuses, and the view is
    reported as skipped. A copy made earlier from the very same definition (the property
    ``viewstore.fingerprint`` tells, and the copy's view text is still the stored SQL, so an
    ``ALTER VIEW ... AS`` run directly in Spark is noticed) is left as it is, which makes
    registering again cheap in a persistent metastore. The catalog lookups are one listing of the
    session's databases and one batch read of the existing copies per database. A view another
    process drops (or renames away) while the views are listed is passed over.

    Its statements run in a session of its own, cloned from ``spark`` (see the module notes): the
    copies land in ``spark``'s session catalog, made under each view's configs and namespace, and
    ``spark`` itself is not changed meanwhile, so other threads may keep using it. Threads of the
    driver take turns: a call waits for another thread's ``register_views`` or view DDL on a store
    through :func:`sql` (one turn per call, for all its views), 120 s at most (:data:`DDL_TURN_WAIT_S`).

    Every copy made carries this store's id (:attr:`ViewStore.store_id`) as the property
    ``viewstore.store``. A copy left as it is may lack it (made by a release before store ids: its
    fingerprint still matches) or carry another store's (made from an identical definition);
    without ``prune`` it is left exactly as it is, as before store ids. With ``prune=True`` it
    gets this store's id with ``ALTER VIEW ... SET TBLPROPERTIES``, which neither makes the copy
    again nor analyzes its query, and still counts as unchanged: from then on it is this store's
    copy, to be pruned when the store lets go of the view.

    With ``prune=True``, the views of the session catalog that carry this store's id and are not
    named after one of the store's views with a representation in ``dialect`` (the store dropped
    the view or renamed it away, or its SQL in the dialect was removed) are dropped first, before
    any copy is made, so the session reads only what the store holds: every database of the
    session catalog is searched, or only ``namespace``'s. Nothing else is ever dropped: tables,
    views without the id (made by hand, or by a release before store ids) and views carrying
    another store's id are left alone, and so is the copy of a stored view that then fails to
    register. Databases stay, even when pruning empties them.

    The store is only read, but for one write: with ``prune``, a file made by a release before store
    ids gets its id, once the session's catalog has answered.

    Args:
        spark: the session.
        store: the store to read.
        namespace: only the views directly in this namespace (default: every view).
        dialect: the representation to register.
        refresh: create every copy again, even those that match (e.g. to capture changed tables).
        prune: drop this store's copies of views it no longer holds (see above).
        progress: called as ``progress(done, total)`` as the views' outcomes are settled: ``total``
            is the number of views listed (every view, or ``namespace``'s), ``done`` how many of them
            are registered, left unchanged, skipped, failed or passed over; it grows with each
            call, and the last call has ``done == total`` (no call when there is no view; pruning
            is not counted). It runs in the calling thread, in the middle of the call; an
            exception it raises stops the registration there and reaches the caller unchanged (the
            copies made before stay, as after an EngineError).

    Returns:
        A :class:`RegisterReport`: registered (in order), skipped (no representation in the
        dialect; the name belongs to a table), failed views (with Spark's error condition; a
        stale copy that could not be dropped has ``action="prune"``) and pruned copies.

    Raises:
        ValidationError: a bad session, store, namespace, dialect, ``refresh``, ``prune`` or
            ``progress`` (not callable).
        EngineError: the engine failed: the session is stopped, its JVM is gone, or its metastore does
            not answer (see :mod:`viewstore.spark.failures`). The message says where it stopped:
            the copies made and dropped before stay (each is a whole copy of a stored view, or was a
            stale one), so registering again finishes the work.
        ConcurrencyError: ``busy``: another thread of the driver held the turn (``register_views``,
            view DDL through :func:`sql`) for 120 s (:data:`DDL_TURN_WAIT_S`; while this thread holds
            a store, in its ``transaction()`` or a receiver, the catalog's ``TRANSACTION_WAIT_S``);
            nothing was done.
        ViewStoreError: the store is closed; this thread is inside ``store.transaction()`` (the
            copies would outlive a rollback); or, with ``prune``, it has no id yet (a file made by a
            release before store ids) and cannot make one now (see :attr:`ViewStore.store_id`);
            nothing is changed.
    """
    _check_args(spark, store)
    _outside_transaction(store, "register_views")
    if not isinstance(dialect, str) or not dialect.strip():
        raise ValidationError(f"bad dialect {dialect!r}")
    _check_flag(refresh, "refresh")
    _check_flag(prune, "prune")
    check_progress(progress)
    started = time.perf_counter()
    report = RegisterReport()
    scope = to_namespace(namespace) if namespace is not None else None
    # one turn for the whole call (not one per view), taken before the store is read: a view DDL
    # statement through sql() in another thread then has stored its definition, or not begun
    with _one_ddl_at_a_time("register_views"):
        _register_from(spark, store, scope, dialect, report, refresh=refresh, prune=prune, callback=progress)
    report.seconds = time.perf_counter() - started
    return report


# -- create_view ---------------------------------------------------------------------------------


@dataclass
class _Definition:
    """A view definition analyzed by Spark, ready for the store and the session."""

    identifier: Identifier
    query: str
    columns: list[Column]
    comment: str | None
    properties: dict[str, str]
    default_catalog: str
    default_namespace: tuple[str, ...]
    summary: dict[str, str]
    schema_mode: str | None = None
    configs: dict[str, str] | None = None

    def representations(self) -> list[SQLRepresentation]:
        return [SQLRepresentation("spark", self.query)]

    def mirror(self, spark: SparkSession, store_id: str) -> "_Before":
        """Create the session copy (and its database if needed) under the session's current namespace.

        Returns what the session held before, to put back if the store then refuses the change.
        """
        statement, _ = _create_statement(self.identifier, self.query, self.columns, self.comment, self.properties,
                                         _current(spark), self.schema_mode, self.configs, store_id)
        before = _Before(spark, self.identifier)
        try:
            if not before.database_existed:
                _jsession(spark).sql(f"CREATE NAMESPACE {before.database}")
            _run_verbatim(spark, statement)
        except _SPARK_ERRORS as e:
            before.restore()
            raise _spark_error(spark, e, f"Spark cannot create view {identifier_str(self.identifier)}",
                               f"create view {identifier_str(self.identifier)}") from e
        return before

    def write(self, store: ViewStore, *, replace: bool, replace_properties: bool) -> View:
        """Create the view, or replace it (keeping its security mode, which Spark cannot express)."""
        args: dict[str, Any] = dict(columns=self.columns, representations=self.representations(),
                    default_namespace=list(self.default_namespace), default_catalog=self.default_catalog,
                    comment=self.comment, properties=self.properties, summary=self.summary)
        if replace:
            return store.replace_view(self.identifier, replace_properties=replace_properties, **args)
        return store.create_view(self.identifier, **args)


class _Before:
    """What the session catalog held under a view's name (and whether its database existed).

    :meth:`restore` puts exactly that back after the session copy was created or replaced: the
    earlier view's metadata as it was (its text, schema, comment and properties), or no view.
    """

    def __init__(self, spark: SparkSession, identifier: Identifier) -> None:
        self._spark = spark
        self._identifier = identifier
        self.database = f"{SESSION_CATALOG}." + ".".join(_quote_name(p) for p in identifier[:-1])
        self.database_existed = bool(spark.catalog.databaseExists(self.database))
        self._saved = None
        if self.database_existed and _session_object(spark, identifier) == "view":
            external = _jsession(spark).sharedState().externalCatalog()
            self._saved = external.getTable(identifier[0], identifier[-1])

    def restore(self) -> None:
        """Put the earlier state back (best effort: a problem is logged, the caller's error matters)."""
        spark, name = self._spark, _session_name(self._identifier)
        try:
            if self._saved is not None:
                _jsession(spark).sessionState().catalog().alterTable(self._saved)
                return
            _jsession(spark).sql(f"DROP VIEW IF EXISTS {name}")
            if not self.database_existed:
                _jsession(spark).sql(f"DROP NAMESPACE IF EXISTS {self.database}")  # only if left empty
        except _ENGINE_ERRORS as e:
            _log.warning("could not put back the session's earlier %s: %s", name, _explanation(e))


def _current(spark: SparkSession) -> tuple[str, tuple[str, ...]]:
    manager = _jsession(spark).sessionState().catalogManager()
    return manager.currentCatalog().name(), tuple(manager.currentNamespace())


def _split_catalog(spark: SparkSession, store: ViewStore, parts: Sequence[str]) -> tuple[str | None, list[str]]:
    """A view name's catalog as Spark reads it, and the rest: ``(catalog, rest)``, or ``(None, parts)``
    when the name has no catalog (parts in lower case).

    A first part that is a catalog of the session (``spark_catalog`` in any case, or a configured
    one, matched exactly as Spark matches it: ``Lake`` is not ``lake``) is that catalog, when more
    parts follow; so is the store's catalog name when it is none of the session's and a database
    and a view follow (``prod.sales.v``): it means the session catalog.
    """
    written, parts = parts, [p.lower() for p in parts]
    if len(parts) > 1:
        first = parts[0]
        if first == SESSION_CATALOG:
            return first, parts[1:]
        if _is_spark_catalog(spark, written[0]):
            return written[0], parts[1:]
        if len(parts) >= 3 and store.catalog and first == store.catalog.lower():
            return SESSION_CATALOG, parts[1:]
    return None, parts


def _qualify(spark: SparkSession, store: ViewStore, identifier: IdentifierLike) -> Identifier:
    """create_view's identifier, read as :func:`sql` reads a view name: a bare name goes into the
    session's current database, a leading ``spark_catalog`` (or the store's catalog name) is dropped.

    Raises:
        ValidationError: a bad identifier; one of another Spark catalog (``vs.sales.v``), or of the
            session catalog without a database (``spark_catalog.v``, as Spark says).
    """
    parts = identifier.split(".") if isinstance(identifier, str) else identifier
    if not isinstance(parts, (tuple, list)) or not all(isinstance(p, str) for p in parts):
        return to_identifier(identifier)  # its ValidationError
    catalog, rest = _split_catalog(spark, store, parts)
    if catalog is None:
        return to_identifier((*_current(spark)[1], *parts) if len(parts) == 1 else parts)
    shown = ".".join(parts)
    if catalog != SESSION_CATALOG:
        raise ValidationError(f"{shown!r} names a view of Spark catalog {catalog!r}: create_view stores views of "
                              f"the session catalog ({SESSION_CATALOG}); use 'database.view'")
    if len(rest) != 2:
        raise ValidationError(f"[REQUIRES_SINGLE_PART_NAMESPACE] {SESSION_CATALOG} requires a single-part "
                              f"namespace: use '{SESSION_CATALOG}.database.view' or 'database.view', not {shown!r}")
    return to_identifier(rest)


def _analyze(spark: SparkSession, query: str, context: str, name: str) -> T.StructType:
    """The output schema of a query, analyzed by Spark without running it.

    The text must parse as a query, so nothing (a DDL or DML statement) can run by accident.

    Raises:
        ValidationError: Spark refuses the query (the message starts with ``context``).
        EngineError: the engine failed (see :mod:`viewstore.spark.failures`).
    """
    return parse_schema(_analyze_json(spark, query, context, name))


def _analyze_json(spark: SparkSession, query: str, context: str, name: str,
                  persistent: Identifier | None = None) -> dict[str, Any]:
    """:func:`_analyze`, with the schema in Spark's own JSON form; ``name`` is the view's.

    With ``persistent`` (the view's identifier in the store), the query is also checked as Spark
    checks a persistent view's (:func:`_refuse_temporary_objects`).
    """
    if not isinstance(query, str) or not query.strip():
        raise ValidationError(f"{context}: the SQL is empty")
    session = _jsession(spark)
    try:
        with _verbatim(spark):  # the text as stored, ``${...}`` included
            parsed = session.sessionState().sqlParser().parseQuery(query)
            frame = session.sql(query)
            schema_json = frame.schema().json()
            if persistent is not None:
                _refuse_temporary_objects(spark, parsed, frame.queryExecution().analyzed(), persistent)
    except _SPARK_ERRORS as e:
        raise _spark_error(spark, e, context, f"analyze the SQL of view {name}") from e
    schema: dict[str, Any] = json.loads(schema_json)  # a StructType's JSON: an object
    return schema


def _refuse_temporary_objects(spark: SparkSession, parsed: Any, analyzed: Any, identifier: Identifier) -> None:
    """Spark's own check of a persistent view's query: it may read no temporary view, temporary
    function or session variable, which other sessions do not have (``INVALID_TEMP_OBJ_REFERENCE``,
    raised as Spark's error).

    Spark's ``ViewHelper.verifyTemporaryObjectsNotExists`` finds the views and variables in the
    analyzed plan, subqueries included, whatever the SQL's shape (``TABLE t``, ``IDENTIFIER('t')``);
    the temporary functions it is given, as Spark's own CREATE VIEW gives them: the functions the
    parsed query calls by a session name (``f``, ``session.f``, ``system.session.f``) that are
    temporary functions of the session, read from the parsed plan's JSON (each name asked once).
    The Java catalog (``ViewStoreCatalog.checkReferences``) makes the same check for the views of
    an attached store; its jar is not on every session's classpath, so this side has its own.
    """
    jvm = _jvm(spark)
    catalog = _jsession(spark).sessionState().catalog()
    functions: list[str] = []
    asked: set[str] = set()
    for parts in _called_functions(json.loads(parsed.toJSON())):
        session_name = len(parts) == 1 or [p.lower() for p in parts[:-1]] in (["session"], ["system", "session"])
        if not session_name or parts[-1] in asked:
            continue
        asked.add(parts[-1])
        if catalog.isTemporaryFunction(jvm.org.apache.spark.sql.catalyst.FunctionIdentifier.apply(parts[-1])):
            functions.append(parts[-1])
    converters = jvm.scala.jdk.javaapi.CollectionConverters
    name = converters.asScala(list(identifier)).toSeq()  # as the store names the view
    jvm.org.apache.spark.sql.execution.command.ViewHelper.verifyTemporaryObjectsNotExists(
        False, name, analyzed, converters.asScala(functions).toSeq())


def _called_functions(tree: Any) -> list[list[str]]:
    """The name parts of every function call (``UnresolvedFunction``) in a parsed plan's JSON, in order.

    Spark writes the parts as the text of a Scala list, ``"[system, session, f]"``: a part holding
    ", " itself (a name in backquotes) is read as two, so such a function is not found.
    """
    found, todo = [], [tree]
    while todo:
        node = todo.pop()
        if isinstance(node, dict):
            parts = node.get("nameParts")
            if str(node.get("class", "")).endswith(".UnresolvedFunction") and isinstance(parts, str) \
                    and parts.startswith("[") and parts.endswith("]"):
                found.append(parts[1:-1].split(", "))
            todo.extend(reversed(list(node.values())))
        elif isinstance(node, list):
            todo.extend(reversed(node))
    return found


def _view_schema(analyzed: dict[str, Any], columns: Sequence[Column]) -> dict[str, Any]:
    """Spark's schema JSON of a view: the query's (collations, metadata), with the view's column names and comments."""
    fields = []
    for item, column in zip(analyzed["fields"], columns):
        metadata = {k: v for k, v in (item.get("metadata") or {}).items() if k != "comment"}
        if column.comment is not None:
            metadata["comment"] = column.comment
        collations = metadata.get(COLLATIONS_KEY)  # keyed by the field's name (and paths below it)
        if isinstance(collations, dict):
            metadata[COLLATIONS_KEY] = renamed_collations(collations, item["name"], column.name)
        fields.append({**item, "name": column.name, "metadata": metadata})
    return {**analyzed, "fields": fields}


def _prepare(spark: SparkSession, identifier: Identifier, query: str, *, column_names: Sequence[
             tuple[str, str | None]] | None = None, comment: str | None = None,
             column_comments: dict[str, str] | None = None, properties: dict[str, str] | None = None,
             schema_mode: str | None = None) -> _Definition:
    """Analyze ``query`` with Spark and build the definition to store (nothing is written).

    Raises:
        ValidationError: Spark rejects the query, a column lacks an alias, the query reads a
            temporary view, or the column list or comments do not fit the query's output.
    """
    context = f"invalid SQL for view {identifier_str(identifier)}"
    if not isinstance(query, str) or not query.strip():
        raise ValidationError(f"{context}: the SQL must be a non-empty string, not {query!r}")
    if comment is not None and not isinstance(comment, str):
        raise ValidationError(f"a comment must be a string, not {comment!r}")
    if column_comments is not None and (not isinstance(column_comments, dict) or not all(
            isinstance(k, str) and (v is None or isinstance(v, str)) for k, v in column_comments.items())):
        raise ValidationError("column_comments must be a dict of column name to comment")
    props = validate_properties(properties)
    query = query.strip()
    if len(identifier) != 2:
        raise ValidationError(f"{context}: [REQUIRES_SINGLE_PART_NAMESPACE] a Spark view lives in a "
                              f"database: use 'database.view', not {identifier_str(identifier)!r}")
    analyzed = _analyze_json(spark, query, context, identifier_str(identifier), persistent=identifier)
    schema = parse_schema(analyzed)
    unnamed = [f.name for f in schema.fields if (f.metadata or {}).get(_AUTO_ALIAS)]
    if unnamed:
        raise ValidationError(f"{context}: [CREATE_PERMANENT_VIEW_WITHOUT_ALIAS] give these expressions a "
                              f"name with AS: {', '.join(unnamed)}")
    query_names = [f.name for f in schema.fields]
    columns = schema_to_columns(schema)
    if column_names:
        if len(column_names) != len(columns):
            kind = "NOT_ENOUGH_DATA_COLUMNS" if len(column_names) > len(columns) else "TOO_MANY_DATA_COLUMNS"
            raise ValidationError(f"{context}: [CREATE_VIEW_COLUMN_ARITY_MISMATCH.{kind}] {len(column_names)} "
                                  f"view columns {[n for n, _ in column_names]} but the query has "
                                  f"{len(columns)}: {query_names}")
        # a column without its own comment keeps the one the query gives it (from a table), as in Spark
        columns = [Column(name, c.type, note if note is not None else c.comment, c.nullable)
                   for (name, note), c in zip(column_names, columns)]
    if column_comments:
        by_name = {c.name.lower(): i for i, c in enumerate(columns)}
        unknown = sorted(n for n in column_comments if str(n).lower() not in by_name)
        if unknown:
            raise ValidationError(f"column_comments names unknown column(s) {unknown}; the view has "
                                  f"{[c.name for c in columns]}")
        for name, note in column_comments.items():
            i = by_name[name.lower()]
            columns[i] = Column(columns[i].name, columns[i].type, note, columns[i].nullable)
    catalog, namespace = _current(spark)
    summary = {"engine-name": "spark", "engine-version": spark.version,
               QUERY_COLUMN_NAMES: json.dumps(query_names, separators=(",", ":"), ensure_ascii=False)}
    if schema_mode is not None:
        summary[SCHEMA_MODE] = schema_mode
    recorded = schema_to_record(_view_schema(analyzed, columns), columns)
    if recorded is not None:  # what the columns lose: a collation, TINYINT, ... (see viewstore.spark.types)
        summary[SPARK_SCHEMA] = recorded
    configs = dict(sorted(_captured_configs(spark).items()))
    summary[SQL_CONFIGS] = json.dumps(configs, separators=(",", ":"), ensure_ascii=False)
    return _Definition(identifier=identifier, query=query, columns=columns, comment=comment, properties=props,
                       default_catalog=catalog, default_namespace=namespace, summary=summary,
                       schema_mode=schema_mode, configs=configs)


@engine_calls("create the view")
def create_view(spark: SparkSession, store: ViewStore, identifier: IdentifierLike, sql: str, *,
                comment: str | None = None, column_comments: dict[str, str] | None = None,
                replace: bool = False, properties: dict[str, str] | None = None) -> View:
    """Store a view defined in Spark SQL, with the columns Spark infers for it.

    Spark analyzes the query without running it. The columns get Iceberg types as Iceberg's Spark
    integration maps them (see :mod:`viewstore.spark.types`) and Spark's nullability; the version
    has one ``spark`` representation, the session's current catalog and namespace as its defaults,
    and the summary ``engine-name=spark``, ``engine-version=<Spark version>``,
    ``spark.query-column-names`` (the query's own column names, a JSON list) and
    ``spark.sql-configs`` (the SQL configs Spark would capture for a view created now, such as the
    session time zone and ANSI mode, a JSON object; :func:`register_views` creates the copy under
    them), and ``spark.schema`` (Spark's schema JSON of the view) when the Iceberg types lose part
    of it, such as a string collation (see :mod:`viewstore.spark.types`). The SQL is analyzed
    as written (``${...}`` is not substituted), in a session cloned from ``spark`` under its
    current catalog, namespace and configs: ``spark`` is not changed, not even for a moment. To
    make the view queryable, use :func:`register_views`, or :func:`sql` which does both. Since only
    the store is written, it may run inside ``store.transaction()``: the view is committed with the
    block, or taken back with it.

    Args:
        spark: the session that analyzes the query.
        store: where the view goes.
        identifier: ``"database.view"``; a bare name goes into the session's current database. A
            leading ``spark_catalog`` (or the store's catalog name) is dropped, as :func:`sql` reads
            names; a name of another Spark catalog is refused.
        sql: the query (Spark SQL).
        comment: the view comment.
        column_comments: comments by column name.
        replace: replace an existing view (a new version; other dialects may not be dropped
            unless the view allows it) instead of failing.
        properties: view properties.

    Returns:
        The stored view.

    Raises:
        ValidationError: Spark rejects the SQL (the message holds Spark's error condition, e.g.
            ``[TABLE_OR_VIEW_NOT_FOUND]``, and explanation); an expression has no alias; the query
            reads a temporary view; a bad argument (not a classic SparkSession, not a ViewStore, an
            identifier, SQL, comment, property, flag).
        ViewAlreadyExistsError: the view exists and ``replace`` is false.
        EngineError: the engine failed (a stopped session, a lost JVM, a metastore that does not answer).
    """
    _check_args(spark, store)
    _check_flag(replace, "replace")
    ident = _qualify(spark, store, identifier)
    if not replace and store.view_exists(ident):
        raise ViewAlreadyExistsError(f"view already exists: {identifier_str(ident)}")
    with _work_session(spark, current=True) as work:  # ${...} substitution is off there alone
        definition = _prepare(work, ident, sql, comment=comment, column_comments=column_comments,
                              properties=properties)
    return definition.write(store, replace=replace, replace_properties=False)


# -- sql: view DDL in Spark SQL -----------------------------------------------------------------


def _passthrough(spark: SparkSession, statement: str) -> DataFrame:
    try:
        return spark.sql(statement)
    except _SPARK_ERRORS as e:
        raise _spark_error(spark, e, "Spark refused the statement", "run the statement") from e


def _store_target(spark: SparkSession, store: ViewStore, parts: Sequence[str], *,
                  renamed: bool = False) -> Identifier | None:
    """The store identifier a view name in DDL means, or None when it belongs to another Spark catalog
    (``renamed``: the new name of ``ALTER VIEW ... RENAME TO``, see :func:`_named_in_store`).

    Raises:
        ViewStoreError: it is the store's, and this thread is inside a transaction of the store
            (the DDL would change the session too, which a rollback cannot take back).
    """
    ident = _named_in_store(spark, store, parts, renamed=renamed)
    if ident is not None:
        _outside_transaction(store, "view DDL on the store through sql()")
    return ident


def _named_in_store(spark: SparkSession, store: ViewStore, parts: Sequence[str], *,
                    renamed: bool = False) -> Identifier | None:
    """See :func:`_store_target`. A leading ``spark_catalog`` (or the store's catalog name, when
    that is not a Spark catalog) is dropped. A name without a catalog is, as Spark reads it, in the
    session's current catalog (a bare one in its current namespace): the store's only while that
    is the session catalog. The new name of a rename (``renamed``) is in the renamed view's
    catalog instead, as in Spark.
    """
    catalog, rest = _split_catalog(spark, store, parts)
    if catalog == SESSION_CATALOG:
        # spark_catalog.v names no database: Spark refuses it (REQUIRES_SINGLE_PART_NAMESPACE), the
        # new name of a rename too (below, as a name without a database)
        return to_identifier(rest) if len(rest) > 1 or renamed else None
    if catalog is not None:
        return None
    if renamed:
        return to_identifier(rest)
    catalog, namespace = _current(spark)
    if catalog.lower() != SESSION_CATALOG:
        return None
    return to_identifier((*namespace, rest[0]) if len(rest) == 1 else rest)


def _is_temporary(spark: SparkSession, parts: Sequence[str]) -> bool:
    catalog = _jsession(spark).sessionState().catalog()
    if len(parts) == 1:
        return bool(catalog.getTempView(parts[0]).isDefined())
    if len(parts) == 2 and parts[0].lower() == "global_temp":
        return bool(catalog.getGlobalTempView(parts[1]).isDefined())
    return False


def _session_object(spark: SparkSession, identifier: Identifier) -> str | None:
    """``"view"``, ``"table"`` or None: what the session catalog holds under the name."""
    name = _session_name(identifier)
    try:
        if not spark.catalog.tableExists(name):
            return None
        kind = spark.catalog.getTable(name).tableType
    except _ENGINE_ERRORS:
        return None
    return "view" if kind and kind.upper() == "VIEW" else "table"


def _sync(spark: SparkSession, store: ViewStore, identifier: Identifier) -> None:
    """Make the session copy match the store (best effort: problems are logged, not raised)."""
    try:
        view = store.load_view(identifier)
    except NoSuchViewError:
        view = None
    try:
        if view is None or view.sql_for("spark") is None:
            if _session_object(spark, identifier) == "view":
                _jsession(spark).sql(f"DROP VIEW IF EXISTS {_session_name(identifier)}")
            return
        # the copy carries the store's id: a file made before ids makes it now (after the store's change)
        with _work_session(spark) as work, _CurrentNamespace(work) as current:
            _register_one(work, view, view.sql_for("spark") or "", current, store.store_id)
    except (*_ENGINE_ERRORS, ViewStoreError) as e:
        _log.warning("the session copy of %s could not follow the store: %s", identifier_str(identifier),
                     _explanation(e))


def _run_session(spark: SparkSession, statement: str, identifier: Identifier) -> None:
    """Run a follow-up statement on the session copy; log instead of failing (the store decided)."""
    try:
        _jsession(spark).sql(statement)
    except _ENGINE_ERRORS as e:
        _log.warning("the session copy of %s could not follow the store: %s", identifier_str(identifier),
                     _explanation(e))


def _ddl_create(spark: SparkSession, store: ViewStore, plan: Any, statement: str) -> View | DataFrame | None:
    ident = _store_target(spark, store, _named(spark, plan.child()))
    if ident is None:
        return _passthrough(spark, statement)
    with _one_ddl_at_a_time():
        or_replace, if_not_exists = bool(plan.replace()), bool(plan.allowExisting())
        mode = " ".join(str(plan.viewSchemaMode().toString()).upper().split())
        if store.view_exists(ident):
            if if_not_exists:
                _sync(spark, store, ident)
                return store.load_view(ident)
            if not or_replace:
                raise ViewAlreadyExistsError(f"view already exists: {identifier_str(ident)}")
        elif not or_replace:
            held = _session_object(spark, ident)
            if held is not None:  # a view or table of the session that the store does not hold: as in Spark
                if if_not_exists:
                    return None
                raise ValidationError(f"[TABLE_OR_VIEW_ALREADY_EXISTS] cannot create view {identifier_str(ident)}: "
                                      f"the session catalog already has a {held} of that name (not a stored view)")
        column_names = [(str(pair._1()), _option(pair._2())) for pair in _jlist(spark, plan.userSpecifiedColumns())]
        # analyzed and mirrored under the caller's current namespace and configs, in a session of its own
        with _work_session(spark, current=True) as work:
            definition = _prepare(work, ident, _option(plan.originalText()) or "", column_names=column_names or None,
                                  comment=_option(plan.comment()), properties=_jmap(spark, plan.properties()),
                                  schema_mode=mode if mode in _SCHEMA_MODES else None)
            before = definition.mirror(work, store.store_id)
            try:
                return definition.write(store, replace=or_replace, replace_properties=True)
            except BaseException:
                before.restore()
                raise


@contextmanager
def _one_ddl_at_a_time(what: str = "sql()") -> Iterator[None]:
    """Inside the block, no other thread of the driver runs view DDL on a store through :func:`sql`
    or registers views (:func:`register_views`).

    Such a statement reads what the session holds, changes the session copy and the store, and
    puts the copy back if the store refuses: two at once on one view could put back a copy older
    than the one the other has just stored, and a register_views meanwhile could copy the store's
    definition of before the statement. Two register_views of one view at once collide in Spark
    (``TABLE_OR_VIEW_ALREADY_EXISTS``). The wait is bounded: after :data:`DDL_TURN_WAIT_S` it
    gives up; a thread that holds a store meanwhile (inside its ``transaction()`` block, or in one
    of its signal receivers) gives up after the catalog's ``TRANSACTION_WAIT_S``, as Spark's calls
    into a held store do, since the thread holding the turn may be waiting for that very store.

    Raises:
        ConcurrencyError: ``busy``: another thread held the turn that long; nothing was changed
            (``what`` names the call in the message).
    """
    wait = min(DDL_TURN_WAIT_S, catalog_plugin.TRANSACTION_WAIT_S) if thread_holds_a_store() else DDL_TURN_WAIT_S
    if not _STORE_DDL.acquire(timeout=wait):
        raise ConcurrencyError(f"{what}: another thread of this driver ran view DDL through sql() or "
                               f"register_views for {wait:g} s: nothing was changed, run it again",
                               busy=True)
    try:
        yield
    finally:
        _STORE_DDL.release()


def _stored_target(spark: SparkSession, store: ViewStore, parts: list[str]) -> Identifier | None:
    """The stored view a DDL statement on an existing view names, or None (then Spark handles it).

    Raises:
        ViewStoreError: it is a stored view, and this thread is inside a transaction of the store.
        EngineError: it is a stored view, and the session's metastore does not answer (the store
            decides some of these statements first: a session copy that cannot follow must not let it).
    """
    if _is_temporary(spark, parts):
        return None
    ident = _named_in_store(spark, store, parts)
    if ident is None or not store.view_exists(ident):
        return None
    _outside_transaction(store, "view DDL on the store through sql()")
    require_live(spark, "run the statement", metastore=True)
    return ident


def _ddl_alter_as(spark: SparkSession, store: ViewStore, plan: Any, statement: str) -> View | DataFrame:
    ident = _stored_target(spark, store, _named(spark, plan.child()))
    if ident is None:
        return _passthrough(spark, statement)
    with _one_ddl_at_a_time():
        view = store.load_view(ident)
        # ALTER VIEW ... AS keeps the view's comment and properties but, as in Spark, not the column list
        with _work_session(spark, current=True) as work:
            definition = _prepare(work, ident, str(plan.originalText()), comment=view.comment,
                                  properties=dict(view.properties), schema_mode=_schema_mode(view))
            before = definition.mirror(work, store.store_id)
            try:
                # the view as read before Spark analyzed the statement (its schema mode is kept): a change
                # another process made meanwhile ends in ConcurrencyError, never under this one
                return store.replace_view(ident, columns=definition.columns,
                                          representations=definition.representations(),
                                          default_namespace=list(definition.default_namespace),
                                          default_catalog=definition.default_catalog, summary=definition.summary,
                                          expected_version=view.stream_version)
            except BaseException:
                before.restore()
                raise


def _ddl_schema_binding(spark: SparkSession, store: ViewStore, plan: Any, statement: str) -> View | DataFrame:
    """``ALTER VIEW name WITH SCHEMA mode``: a new version that differs only in its schema mode.

    As in Spark, the SQL, column names and comments, comment and properties stay. The session
    copy changes first: Spark's own ``ALTER VIEW ... WITH SCHEMA`` on it (which does not analyze
    the query again), or, without a copy, a new copy with the new mode; either under the view's
    default namespace and SQL configs, which Spark captures into the copy again. If Spark or then
    the store refuses, the session is put back as it was.
    """
    ident = _stored_target(spark, store, _named(spark, plan.child()))
    if ident is None:
        return _passthrough(spark, statement)
    with _one_ddl_at_a_time():
        view = store.load_view(ident)
        query = view.sql_for("spark")
        if query is None:
            raise ValidationError(f"view {identifier_str(ident)} has no Spark SQL (its dialects: "
                                  f"{', '.join(view.dialects)})")
        mode = " ".join(str(plan.viewSchemaMode().toString()).upper().split())
        configs = _sql_configs(view)
        target = _default_target(spark, view)
        copy, fingerprint = _create_statement(ident, query, view.columns, view.comment, view.properties, target, mode,
                                              configs, store.store_id)
        with _work_session(spark) as work:  # the view's namespace and configs are set there alone
            before = _Before(work, ident)
            try:
                has_copy = _session_object(work, ident) == "view"
                if not has_copy and not before.database_existed:
                    _jsession(work).sql(f"CREATE NAMESPACE {before.database}")
                # Spark's ALTER captures the current catalog, namespace and SQL configs again, as CREATE does
                with _CurrentNamespace(work) as current, _captured(work, configs), _verbatim(work):
                    current.use(*target)
                    if has_copy:
                        name = _session_name(ident)
                        _jsession(work).sql(f"ALTER VIEW {name} WITH SCHEMA {mode}")
                        _jsession(work).sql(f"ALTER VIEW {name} SET TBLPROPERTIES ({_quote_string(FINGERPRINT)} = "
                                            f"{_quote_string(fingerprint)}, {_quote_string(STORE)} = "
                                            f"{_quote_string(store.store_id)})")  # what registering would make
                    else:
                        _run_verbatim(work, copy)
            except _SPARK_ERRORS as e:
                before.restore()
                raise _spark_error(work, e, f"Spark cannot alter view {identifier_str(ident)}",
                                   f"alter view {identifier_str(ident)}") from e
            try:
                # the definition as read before: a change another process made meanwhile (its SQL, say) ends
                # in ConcurrencyError instead of being put back
                return store.replace_view(ident, columns=view.columns, representations=view.representations,
                                          default_namespace=list(view.default_namespace),
                                          default_catalog=view.default_catalog,
                                          summary={**view.summary, SCHEMA_MODE: mode},
                                          expected_version=view.stream_version)
            except BaseException:
                before.restore()
                raise


def _ddl_set_properties(spark: SparkSession, store: ViewStore, plan: Any, statement: str) -> View | DataFrame:
    ident = _stored_target(spark, store, _named(spark, plan.child()))
    if ident is None:
        return _passthrough(spark, statement)
    with _one_ddl_at_a_time():
        updates = _jmap(spark, plan.properties())
        changes = [ViewChange.update_comment(v) if k == "comment" else ViewChange.set_property(k, v)
                   for k, v in sorted(updates.items())]
        view = store.alter_view(ident, *changes)
        # the copy gets what register_views would give it: the comment and the keys a session copy carries
        shown = {k: v for k, v in sorted(updates.items()) if k == "comment" or _session_properties({k: v})}
        _follow_properties(spark, store, view, "SET TBLPROPERTIES (" + ", ".join(
            f"{_quote_string(k)} = {_quote_string(v)}" for k, v in shown.items()) + ")" if shown else None)
        return view


def _ddl_unset_properties(spark: SparkSession, store: ViewStore, plan: Any, statement: str) -> View | DataFrame:
    ident = _stored_target(spark, store, _named(spark, plan.child()))
    if ident is None:
        return _passthrough(spark, statement)
    with _one_ddl_at_a_time():
        keys = [str(k) for k in _jlist(spark, plan.propertyKeys())]
        # a key the view does not have is no change, with or without IF EXISTS, as in Spark 4.3's own catalog
        changes = [ViewChange.update_comment(None) if k == "comment" else ViewChange.remove_property(k) for k in keys]
        view = store.alter_view(ident, *changes)
        kept = [k for k in keys if k == "comment" or _session_properties({k: ""})]
        _follow_properties(spark, store, view, "UNSET TBLPROPERTIES IF EXISTS ("
                           + ", ".join(_quote_string(k) for k in kept) + ")" if kept else None)
        return view


def _follow_properties(spark: SparkSession, store: ViewStore, view: View, clause: str | None) -> None:
    """Bring a property or comment change to the session copy (or register the view if it has none).

    ``clause`` is the ``SET``/``UNSET TBLPROPERTIES`` clause for the session copy, or None when
    the change concerns only keys a Spark view does not carry.
    """
    if _session_object(spark, view.identifier) != "view":
        _sync(spark, store, view.identifier)
    elif clause is not None:
        _run_session(spark, f"ALTER VIEW {_session_name(view.identifier)} {clause}", view.identifier)


def _ddl_rename(spark: SparkSession, store: ViewStore, plan: Any, statement: str) -> View | DataFrame:
    ident = _stored_target(spark, store, _named(spark, plan.child()))
    if ident is None:
        return _passthrough(spark, statement)
    with _one_ddl_at_a_time():
        new_parts = [str(p).lower() for p in _jlist(spark, plan.newName())]
        target: tuple[str, ...] | None
        if len(new_parts) == 1:
            target = (*ident[:-1], new_parts[0])
        else:
            target = _store_target(spark, store, new_parts, renamed=True)
        if target is None:
            raise ValidationError(f"cannot rename {identifier_str(ident)} into another catalog "
                                  f"({'.'.join(new_parts)}); the store keeps its views")
        if len(target) != 2:
            raise ValidationError(f"[REQUIRES_SINGLE_PART_NAMESPACE] a Spark view lives in a database: "
                                  f"{identifier_str(target)}")
        if target[:-1] != ident[:-1]:  # as in Spark: a view is renamed within its database, never moved
            raise ValidationError(f"[RENAME_TABLE_SOURCE_DESTINATION_DATABASE_MISMATCH] cannot rename "
                                  f"{identifier_str(ident)} to {identifier_str(target)}: the databases differ")
        if store.view_exists(target):
            raise ViewAlreadyExistsError(f"view already exists: {identifier_str(target)}")
        held = _session_object(spark, target)
        if held is not None:  # a view or table the store does not hold is never overwritten, as in Spark
            raise ValidationError(f"[TABLE_OR_VIEW_ALREADY_EXISTS] cannot rename {identifier_str(ident)} to "
                                  f"{identifier_str(target)}: the session catalog already has a {held} of that name")
        view = store.rename_view(ident, target)
        if _session_object(spark, ident) == "view":
            new_name = ".".join(_quote_name(p) for p in target)  # Spark wants it without the catalog
            _run_session(spark, f"ALTER VIEW {_session_name(ident)} RENAME TO {new_name}", target)
        else:
            _sync(spark, store, target)
        return view


def _named(spark: SparkSession, child: Any) -> list[str]:
    """The name parts a view DDL plan's child spells out.

    Raises:
        ValidationError: the name is not written out (``IDENTIFIER(variable)``): which view it
            means is only known when Spark runs the statement, too late to keep the store in step.
    """
    for method in ("nameParts", "multipartIdentifier"):
        try:
            return _jlist(spark, getattr(child, method)())
        except Py4JError:
            continue
    raise ValidationError("view DDL through sql() needs the view's name written out: IDENTIFIER() of a "
                          "variable or an expression names a view only when Spark runs it")


def _ddl_drop(spark: SparkSession, store: ViewStore, plan: Any, statement: str) -> DataFrame | None:
    ident = _stored_target(spark, store, _named(spark, plan.child()))
    if ident is None:
        return _passthrough(spark, statement)
    with _one_ddl_at_a_time():
        if not store.drop_view(ident) and not plan.ifExists():
            # another thread dropped it while this one waited for the turn: Spark says it is not found
            return _passthrough(spark, statement)
        if _session_object(spark, ident) == "view":
            _run_session(spark, f"DROP VIEW IF EXISTS {_session_name(ident)}", ident)
        return None


_DDL = {
    "CreateView": _ddl_create,
    "AlterViewAs": _ddl_alter_as,
    "AlterViewSchemaBinding": _ddl_schema_binding,
    "SetViewProperties": _ddl_set_properties,
    "UnsetViewProperties": _ddl_unset_properties,
    "DropView": _ddl_drop,
}


#: the plans of view DDL statements as Spark's parser names them (a RENAME is a RenameTable of a view)
_VIEW_DDL = {"CreateView", "AlterViewAs", "AlterViewSchemaBinding", "SetViewProperties", "UnsetViewProperties",
             "DropView"}


def _hidden_view_ddl(spark: SparkSession, store: ViewStore, plan: Any) -> str | None:
    """The view DDL inside a SQL script or an ``EXECUTE IMMEDIATE`` of a literal statement, or None.

    The plan tree is walked, exception handlers included; the statement of ``EXECUTE IMMEDIATE
    'text'`` is parsed as well. A statement held in a variable or built by an expression is not
    known before it runs. A ``DROP VIEW`` counts when it may drop a stored view: inside a script,
    where a ``USE`` or a temporary view may change what a name means before it runs, when the
    store holds a view of that name in any namespace (``global_temp`` names aside); outside one,
    when the name is a stored view's. A script may drop its own temporary views under other names,
    as ``sql()`` passes a DROP of another view to Spark. A name given as ``IDENTIFIER(variable)``
    is refused.
    """
    parser = _jsession(spark).sessionState().sqlParser()
    stored_names = {ident[-1] for ident in store.list_views()}
    stack = [(plan, False)]  # (node, inside a script)
    while stack:
        node, in_script = stack.pop()
        kind: str = node.getClass().getSimpleName()
        if kind == "DropView":
            name = _named(spark, node.child())
            if in_script:
                dropped = name[-1].lower() in stored_names and not (len(name) == 2 and name[0].lower() == "global_temp")
            else:
                dropped = _stored_target(spark, store, name) is not None
            if dropped:
                return kind
            continue
        if kind in _VIEW_DDL or (kind == "RenameTable" and node.isView()):
            return kind
        if kind == "CompoundBody":  # its exception handlers are not among its children
            in_script = True
            stack.extend((handler.body(), True) for handler in _jlist(spark, node.handlers()))
        if kind == "UnresolvedExecuteImmediate":
            text = node.sqlStmtStr()
            if text.getClass().getSimpleName() == "Literal" and text.value() is not None:
                try:
                    stack.append((parser.parsePlan(str(text.value().toString())), in_script))
                except _SPARK_ERRORS:
                    pass  # Spark reports it when the statement runs
            continue
        if kind == "SingleStatement":  # a statement of a script: its own children skip the statement
            stack.append((node.parsedPlan(), True))
            continue
        stack.extend((child, in_script) for child in _jlist(spark, node.children()))
    return None


@engine_calls("run the statement")
def sql(spark: SparkSession, store: ViewStore, statement: str) -> View | DataFrame | None:
    """Run one Spark SQL statement; view DDL goes to the store and is mirrored into the session.

    Spark's own parser reads the statement. These go to the store:

    * ``CREATE [OR REPLACE] VIEW [IF NOT EXISTS] name [(col [COMMENT '...'], ...)] [COMMENT '...']
      [TBLPROPERTIES (...)] AS query``: Spark analyzes the query and creates the session copy
      first; only then is the view stored (``OR REPLACE`` makes the given properties and comment
      the view's whole property map; a listed column without COMMENT keeps the comment the query
      gives it, e.g. from its table, as in Spark). ``IF NOT EXISTS`` on a stored view only makes
      sure the session has it. Without ``OR REPLACE``, a view or table of the session catalog that the
      store does not hold is left alone: ``[TABLE_OR_VIEW_ALREADY_EXISTS]``, or nothing at all
      (None is returned) with ``IF NOT EXISTS``. ``WITH SCHEMA <mode>`` is kept: the summary's
      ``spark.schema-mode`` records it and the session copy gets it.
    * ``ALTER VIEW name AS query``: a new version; as in Spark, the column comments are dropped,
      the view comment and properties stay.
    * ``ALTER VIEW name WITH SCHEMA <mode>``: a new version with that ``spark.schema-mode`` and
      otherwise the same definition (SQL, columns and comments stay, as in Spark).
    * ``ALTER VIEW name SET TBLPROPERTIES (...)`` / ``UNSET TBLPROPERTIES [IF EXISTS] (...)``
      (the key ``comment`` is the view comment; unsetting a key the view lacks changes nothing,
      with or without ``IF EXISTS``, as in Spark 4.3), ``ALTER VIEW name RENAME TO other``,
      ``DROP VIEW [IF EXISTS] name``: the store decides, then the session copy follows. As in
      Spark, RENAME keeps the view in its database (``[RENAME_TABLE_SOURCE_DESTINATION_DATABASE_MISMATCH]``)
      and never replaces a view or table of the session catalog (``[TABLE_OR_VIEW_ALREADY_EXISTS]``).

    A view name is read as Spark reads it: a bare name is in the session's current database, and a
    name without a catalog (``sales.v``) is in the current catalog, so while another catalog is
    current (``USE vs.sales``) it is that catalog's and goes to Spark; ``spark_catalog.sales.v``
    (or the store's catalog name, when no Spark catalog has it) names the store's. Unlike Spark
    (``[SCHEMA_NOT_FOUND]``), CREATE VIEW in a database the session lacks creates the database, on
    purpose: the store's
    namespaces need no creating, and the session follows the store as :func:`register_views`
    does (which creates missing databases too); if the statement then fails, the database it
    created is dropped again. ALTER and DROP of a name the store
    does not hold (a temporary view, a view the store does not manage), names in other Spark
    catalogs, ``CREATE TEMPORARY VIEW`` and every other statement go to ``spark.sql`` unchanged.
    A SQL script (``BEGIN ... END``) or ``EXECUTE IMMEDIATE 'statement'`` holding view DDL
    (``CREATE``/``ALTER``/``DROP VIEW``) is refused, since it would bypass the store; an
    ``EXECUTE IMMEDIATE`` whose statement comes from a variable or expression cannot be inspected
    and goes to Spark as it is. ``SET``/``UNSET TBLPROPERTIES`` reach the session copy only for
    the keys :func:`register_views` copies (not ``view.*``, ``spark.sql.*``, ``hms.*``).

    ``${...}`` in the statement is substituted as ``spark.sql`` would, from the session's settings
    whichever thread calls; the text stored is the result, and it reaches Spark unchanged from
    then on.

    Every statement that is not view DDL the store takes runs in ``spark`` itself, as
    ``spark.sql`` would run it, so its effects (``SET``, ``USE``, a temporary view) are the
    session's. The store's view DDL is analyzed and mirrored into the session catalog in a session
    cloned from ``spark`` (under its current catalog, namespace and configs; an ``ALTER VIEW ...
    WITH SCHEMA`` under the view's own, as :func:`register_views` makes a copy), so ``spark`` is
    not changed meanwhile and other threads may keep using it.

    Returns:
        The stored view after CREATE, ALTER and RENAME; None after DROP (and after a CREATE VIEW
        IF NOT EXISTS that found a session object the store does not hold); otherwise the DataFrame
        ``spark.sql`` returns.

    Raises:
        ValidationError: ``spark`` is not a classic SparkSession or ``store`` not a ViewStore; the
            statement is empty or does not parse, Spark rejects it (the message holds Spark's
            error condition and explanation), the store refuses the change, or a script or
            ``EXECUTE IMMEDIATE`` holds view DDL.
        ViewAlreadyExistsError: CREATE VIEW (without OR REPLACE / IF NOT EXISTS) of a stored view,
            or RENAME onto a stored view.
        ConcurrencyError: the view changed since the statement read it (another process), or
            (``busy``) another thread's view DDL on a store through ``sql`` (or its ``register_views``)
            held the driver's turn for 120 s (:data:`DDL_TURN_WAIT_S`; the catalog's
            ``TRANSACTION_WAIT_S`` while this thread holds a store): threads take turns, so that
            a statement the store refuses never puts back a session copy older than the one
            another thread has just stored.
        ViewStoreError: view DDL on the store while this thread is inside ``store.transaction()``
            (the session copy would outlive a rollback); nothing is changed.
        EngineError: the engine failed (a stopped session, a lost JVM, a metastore that does not
            answer); view DDL on a stopped session, or one whose metastore does not answer, is
            refused before the store is touched. Once the store has taken a change, the session
            copy follows as it can: a failure then is logged (logger ``viewstore.spark``), and the
            call returns the stored view.
    """
    _check_args(spark, store)
    if not isinstance(statement, str):
        raise ValidationError(f"a statement must be SQL text, not {statement!r}")
    if not statement.strip():
        raise ValidationError("the statement is empty")
    # read as spark.sql reads it, from any thread: Spark's parser substitutes ${...} from the
    # settings of this thread's active session (a driver's other threads have none)
    with active_session(spark):
        try:
            plan = _jsession(spark).sessionState().sqlParser().parsePlan(statement)
        except _SPARK_ERRORS as e:
            raise _spark_error(spark, e, "cannot parse the statement", "parse the statement") from e
        kind = plan.getClass().getSimpleName()
        scripted = kind in ("CompoundBody", "UnresolvedExecuteImmediate")
        hidden = _hidden_view_ddl(spark, store, plan) if scripted else None
    if hidden is not None:
        raise ValidationError(f"view DDL ({hidden}) inside a SQL script or EXECUTE IMMEDIATE would reach "
                              f"Spark only, not the store: run each view statement with sql() itself")
    is_rename = kind == "RenameTable" and plan.isView()
    handler = _ddl_rename if is_rename else _DDL.get(kind)
    if handler is None:
        return _passthrough(spark, statement)
    # the store decides first for some statements: a session that cannot follow must not let it
    require_live(spark, "run the statement")
    # the copies carry the store's id: a file made before ids makes it only when a copy is made (see
    # the handlers), never for a statement that goes to Spark or that Spark or the store refuses
    return handler(spark, store, plan, statement)


# -- events_dataframe ------------------------------------------------------------------------------

#: the DataFrame's columns: (name, Arrow type, column of the log's ``events`` table)
_EVENT_FIELDS = (
    ("position", pa.int64(), "position"),
    ("view", pa.string(), "identifier"),
    ("view_id", pa.string(), "view_id"),
    ("stream_version", pa.int64(), "stream_version"),
    ("type", pa.string(), "type"),
    ("actor", pa.string(), "actor"),
    ("occurred_at", pa.timestamp("ms", tz="UTC"), "occurred_at"),
    ("commit_id", pa.string(), "commit_id"),
    ("payload", pa.string(), "payload"),
)

EVENTS_SCHEMA = pa.schema([pa.field(name, kind, nullable=False) for name, kind, _ in _EVENT_FIELDS])


def events_arrow(store: ViewStore, *, view: IdentifierLike | None = None, actor: str | None = None,
                 since: TimeLike | None = None, until: TimeLike | None = None, types: EventTypes | None = None,
                 limit: int | None = None, newest_first: bool = False) -> pa.Table:
    """The event log (filtered and ordered as :meth:`ViewStore.events` does) as a ``pyarrow.Table``.

    Raises:
        NoSuchViewError: ``view`` names no view that ever had that identifier.
        ValidationError: not a ViewStore; a bad identifier, time, type or limit.
    """
    if not isinstance(store, ViewStore):
        raise ValidationError(f"store must be a ViewStore, not {type(store).__name__}")
    rows = store.event_rows(view=view, actor=actor, since=since, until=until, types=types, limit=limit,
                            newest_first=newest_first)
    columns = list(zip(*rows)) if rows else [() for _ in EVENT_COLUMNS]
    arrays = []
    for _, kind, column in _EVENT_FIELDS:
        values = columns[EVENT_COLUMNS.index(column)]
        if pa.types.is_timestamp(kind):  # epoch milliseconds in the log
            arrays.append(pa.array(values, type=pa.int64()).cast(kind))
        else:
            arrays.append(pa.array(values, type=kind))
    return pa.Table.from_arrays(arrays, schema=EVENTS_SCHEMA)


@engine_calls("move the event log into Spark")
def events_dataframe(spark: SparkSession, store: ViewStore, *, view: IdentifierLike | None = None,
                     actor: str | None = None, since: TimeLike | None = None, until: TimeLike | None = None,
                     types: EventTypes | None = None, limit: int | None = None,
                     newest_first: bool = False) -> DataFrame:
    """The event log as a typed DataFrame, moved from SQLite to Spark through Arrow.

    Columns: ``position`` (long), ``view`` (the identifier after the event), ``view_id``,
    ``stream_version`` (long), ``type``, ``actor``, ``occurred_at`` (timestamp, UTC),
    ``commit_id`` and ``payload`` (the event's fields as a JSON string; use ``from_json`` or
    ``get_json_object``). The filters, ``limit`` and ``newest_first`` are those of
    :meth:`ViewStore.events`.

    Example::

        events_dataframe(spark, store).createOrReplaceTempView("view_events")
        spark.sql("SELECT actor, count(*) AS changes FROM view_events GROUP BY actor")

    Raises:
        NoSuchViewError: ``view`` names no view that ever had that identifier.
        ValidationError: not a classic SparkSession or not a ViewStore; a bad identifier, time,
            type or limit.
        EngineError: the engine failed: the session is stopped (its DataFrame could never be read),
            or its JVM is gone.
    """
    _check_args(spark, store)
    require_live(spark, "move the event log into Spark")
    table = events_arrow(store, view=view, actor=actor, since=since, until=until, types=types, limit=limit,
                         newest_first=newest_first)
    return spark.createDataFrame(table)


# -- check_views -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ViewDrift:
    """How one view's stored columns compare with what Spark analyzes today."""

    identifier: str
    status: str
    """``ok``, ``drifted`` (analyzes, but the columns differ) or ``broken`` (does not analyze)."""
    problems: tuple[str, ...] = ()
    condition: str | None = None
    """Spark's error condition when broken."""
    stored: tuple[str, ...] = ()
    """The stored columns as ``name type``, with ``not null`` after a required one."""
    analyzed: tuple[str, ...] = ()
    """The analyzed columns as ``name type [not null]`` (empty when broken)."""


@dataclass
class DriftReport:
    """The result of :func:`check_views`: one entry per view with a spark representation."""

    views: list[ViewDrift] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    """Views without a spark representation."""
    seconds: float = 0.0

    @property
    def drifted(self) -> list[ViewDrift]:
        return [v for v in self.views if v.status == "drifted"]

    @property
    def broken(self) -> list[ViewDrift]:
        return [v for v in self.views if v.status == "broken"]

    @property
    def ok(self) -> bool:
        """True when every checked view analyzes and matches its stored columns."""
        return all(v.status == "ok" for v in self.views)

    def raise_for_drift(self) -> "DriftReport":
        """Return self, or raise ValidationError naming the drifted and broken views (for pipelines).

        Raises:
            ValidationError: a view drifted or no longer analyzes.
        """
        bad = [v for v in self.views if v.status != "ok"]
        if bad:
            lines = [f"{v.identifier} ({v.status}): {'; '.join(v.problems)}" for v in bad]
            raise ValidationError(f"{len(bad)} view(s) drifted from their stored columns:\n" + "\n".join(lines))
        return self

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "views": [asdict(v) for v in self.views], "skipped": list(self.skipped),
                "seconds": self.seconds}

    def __str__(self) -> str:
        return (f"{len(self.views)} checked: {len(self.views) - len(self.drifted) - len(self.broken)} ok, "
                f"{len(self.drifted)} drifted, {len(self.broken)} broken")


def _bare(t: IcebergType) -> str:
    """A type's spelling without comments and nullability (:func:`_loosened` compares nullability)."""
    if isinstance(t, StructType):
        return "struct<" + ", ".join(f"{f.name}: {_bare(f.type)}" for f in t.fields) + ">"
    if isinstance(t, ListType):
        return f"list<{_bare(t.element)}>"
    if isinstance(t, MapType):
        return f"map<{_bare(t.key)}, {_bare(t.value)}>"
    return str(t)


def _query_names(view: View) -> list[str] | None:
    """The query's own output column names as recorded with the view, or None.

    As the store records them (:func:`viewstore.formats.spark.recorded_query_columns`), else from
    Spark's metastore properties ``view.query.out.numCols`` / ``view.query.out.col.N`` (views
    imported from a metastore).
    """
    recorded = recorded_query_columns(view.summary, view.properties)
    if recorded:
        return list(recorded)
    props = view.properties
    count = props.get("view.query.out.numCols", "")
    if count.isdigit():
        names = [props.get(f"view.query.out.col.{i}") for i in range(int(count))]
        if all(n is not None for n in names):
            return names  # type: ignore[return-value]
    return None


def _loosened(stored: IcebergType, analyzed: IcebergType, path: str) -> list[str]:
    """The nested fields, list elements and map values (as paths: ``s.a``, ``l.element``, ``m.value``)
    that ``stored`` requires and ``analyzed``, a type of the same shape, lets be null."""
    if isinstance(stored, StructType) and isinstance(analyzed, StructType):
        found = []
        for want, got in zip(stored.fields, analyzed.fields):
            inner = f"{path}.{want.name}"
            found += [inner] if want.required and not got.required else []
            found += _loosened(want.type, got.type, inner)
        return found
    if isinstance(stored, ListType) and isinstance(analyzed, ListType):
        inner = f"{path}.element"
        return ([inner] if stored.element_required and not analyzed.element_required else []) + _loosened(
            stored.element, analyzed.element, inner)
    if isinstance(stored, MapType) and isinstance(analyzed, MapType):
        inner = f"{path}.value"
        return (_loosened(stored.key, analyzed.key, f"{path}.key")
                + ([inner] if stored.value_required and not analyzed.value_required else [])
                + _loosened(stored.value, analyzed.value, inner))
    return []


def _spelled(column: Column) -> str:
    """``name type``, and ``not null`` for a required column (as the drift report shows columns)."""
    return f"{column.name} {column.type}" + ("" if column.nullable else " not null")


def _spark_types(schema: dict[str, Any] | T.StructType | None) -> list[str] | None:
    """Each field's Spark type as Spark spells it without nullability (``tinyint``, ``string collate
    UTF8_LCASE``, ``struct<a:smallint>``), or None for no schema. ``CHAR(n)`` and ``VARCHAR(n)``
    are ``string``: a query's analysis gives them as strings (their length in field metadata, as in a
    view Spark reads), while the schema Spark hands a catalog for a view may name them."""
    if schema is None:
        return None
    fields = (parse_schema(schema) if isinstance(schema, dict) else schema).fields
    return [_unsized(f.dataType).simpleString() for f in fields]


def _unsized(data_type: T.DataType) -> T.DataType:
    """``data_type`` with ``STRING`` for each ``CHAR(n)`` and ``VARCHAR(n)`` in it."""
    if isinstance(data_type, (T.CharType, T.VarcharType)):
        return T.StringType()
    if isinstance(data_type, T.ArrayType):
        return T.ArrayType(_unsized(data_type.elementType), data_type.containsNull)
    if isinstance(data_type, T.MapType):
        return T.MapType(_unsized(data_type.keyType), _unsized(data_type.valueType), data_type.valueContainsNull)
    if isinstance(data_type, T.StructType):
        return T.StructType([T.StructField(f.name, _unsized(f.dataType), f.nullable) for f in data_type.fields])
    return data_type


def _compare(view: View, analyzed: list[Column], schema: T.StructType | None = None) -> list[str]:
    """What differs between the view's stored columns and ``analyzed``, the columns of its query's
    Spark ``schema`` as analyzed now. Where the view records Spark's own schema (a TINYINT or a
    collation its Iceberg types cannot hold, which Spark reads the view as), a column's Spark type
    is compared too."""
    stored = list(view.columns)
    problems = []
    wanted, found = _spark_types(recorded_schema(view.summary, stored)), _spark_types(schema)
    if len(stored) != len(analyzed):
        problems.append(f"{len(stored)} stored columns, {len(analyzed)} analyzed")
    expected_names = [c.name for c in stored]
    recorded = _query_names(view)
    if recorded is not None and len(recorded) == len(stored):
        expected_names = recorded  # the query's own names, when a column list renamed them
    for i, (want, col, got) in enumerate(zip(expected_names, stored, analyzed)):
        if want.lower() != got.name.lower():
            problems.append(f"column {i + 1}: name {want!r} is now {got.name!r}")
        if _bare(col.type) != _bare(got.type):
            problems.append(f"column {col.name!r}: type {col.type} is now {got.type}")
            continue
        if wanted is not None and found is not None and wanted[i] != found[i]:
            problems.append(f"column {col.name!r}: Spark type {wanted[i]} is now {found[i]}")
        # a required column that may now be null breaks what readers rely on; the other way round does not
        if not col.nullable and got.nullable:
            problems.append(f"column {col.name!r}: not null is now nullable")
        problems += [f"column {col.name!r}: {inner} not null is now nullable"
                     for inner in _loosened(col.type, got.type, col.name)]
    return problems


def _check(work: SparkSession, view: View, query: str, current: _CurrentNamespace, settings: _Configs) -> ViewDrift:
    """How one view with Spark SQL compares, analyzed in ``work`` under its namespace and configs."""
    name = identifier_str(view.identifier)
    stored = tuple(_spelled(c) for c in view.columns)
    try:
        current.use(*_default_target(work, view))
        settings.use(_sql_configs(view))
        schema = _analyze(work, query, name, name)
    except ValidationError as e:
        cause = e.__cause__
        return ViewDrift(name, "broken", (str(e),), _condition(cause) if cause else None, stored)
    except _SPARK_ERRORS as e:  # the default namespace does not exist
        raise_engine_failure(work, e, f"check view {name}")
        return ViewDrift(name, "broken", (_explanation(e),), _condition(e), stored)
    try:
        analyzed = schema_to_columns(schema)
    except ValidationError as e:
        return ViewDrift(name, "broken", (str(e),), None, stored)
    problems = _compare(view, analyzed, schema)
    return ViewDrift(name, "drifted" if problems else "ok", tuple(problems), None, stored,
                     tuple(_spelled(c) for c in analyzed))


@engine_calls("check views")
def check_views(spark: SparkSession, store: ViewStore, namespace: NamespaceLike | None = None, *,
                progress: Callable[[int, int], None] | None = None) -> DriftReport:
    """Check that every view with a spark representation still analyzes and still has its columns.

    Each view's Spark SQL is analyzed (not run) under its default catalog and namespace and the SQL
    configs recorded with it; the result's column count, names and Iceberg types are compared with
    the stored columns, and so is each column's Spark type where the view records Spark's own
    schema (the summary's ``spark.schema``: a ``TINYINT`` or a collation its Iceberg type cannot
    hold, and which Spark reads the view as; ``column 'n': Spark type tinyint is now int``).
    ``CHAR(n)`` and ``VARCHAR(n)`` count as strings, as in a query's output. When a column list
    renamed the query's columns, the names are compared with the query's own names as recorded
    with the view (the summary's
    ``spark.query-column-names``, or Spark's ``view.query.out.*`` properties of a view imported
    from a metastore).

    Nullability is compared one way. A column stored as required (not null), or a required field,
    list element or map value inside one, that the query may now return null for has drifted:
    readers of the view rely on it never being null (``column 'id': not null is now nullable``,
    ``column 's': s.a not null is now nullable``). A nullable column whose query now never returns
    null has not drifted: every reader still copes. Comments are not compared: a view's column
    comments are its own documentation (from its column list, or inherited from a table when it
    was defined), Spark derives a comment from the query only where a table's column passes
    through unchanged, and a changed table comment changes neither the rows nor what readers may
    rely on. Nothing is created or changed, in the session or the store: the views are analyzed in
    a session cloned from ``spark`` (see the module notes), under their own configs and namespaces
    there, so other threads may keep using ``spark`` meanwhile.

    Args:
        spark: the session whose tables the views read.
        store: the store.
        namespace: only the views directly in this namespace (default: every view).
        progress: called as ``progress(done, total)`` as the views are checked: ``total`` is the
            number of views listed (every view, or ``namespace``'s), ``done`` how many of them are
            checked, skipped (no spark representation) or passed over (dropped meanwhile); it grows
            with each call, and the last call has ``done == total`` (no call when there is no
            view). It runs in the calling thread, in the middle of the call; an exception it
            raises stops the check there and reaches the caller unchanged.

    Returns:
        A :class:`DriftReport`; ``report.ok`` is false when a view drifted or is broken, and
        ``report.raise_for_drift()`` turns that into an error for pipelines.

    Raises:
        ValidationError: not a classic SparkSession or not a ViewStore, a bad namespace, or a
            ``progress`` that is not callable.
        EngineError: the engine failed (a stopped session, a lost JVM, a metastore that does not
            answer): a view that does not analyze because of that is not reported as broken.
    """
    _check_args(spark, store)
    check_progress(progress)
    started = time.perf_counter()
    report = DriftReport()
    identifiers = store.list_views(to_namespace(namespace) if namespace is not None else None)
    done = Progress(progress, len(identifiers))
    # each view is analyzed under its own namespace and configs in a session of its own, not the caller's
    with _work_session(spark) as work, _CurrentNamespace(work) as current, _Configs(work) as settings:
        for ident in identifiers:
            try:
                view = store.load_view(ident)
            except NoSuchViewError:  # dropped or renamed by another process since the listing
                done.advance()
                continue
            query = view.sql_for("spark")
            if query is None:
                report.skipped.append(identifier_str(ident))
            else:
                report.views.append(_check(work, view, query, current, settings))
            done.advance()
    report.seconds = time.perf_counter() - started
    return report
