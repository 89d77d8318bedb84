"""The store in a SparkSession: how a stored view is copied into the session, and the plumbing the
calls share.

The calls live in the modules beside this one, which import it (never the reverse):
:mod:`viewstore.spark.register` (``register_views``), :mod:`viewstore.spark.ddl` (``create_view``,
``sql``), :mod:`viewstore.spark.audit` (``events_dataframe``) and :mod:`viewstore.spark.drift`
(``check_views``). These notes are the "module notes" their docstrings refer to. This module
holds what they share: small helpers around py4j, Spark's errors as viewstore's
(:func:`_spark_error`), stored text run as written (:func:`_verbatim`), the SQL configs a copy
captures (:class:`_Configs`, :func:`_captured`), the session of viewstore's own each call works in
(:func:`_work_session`), the argument checks, the statement that makes a copy and its fingerprint
(:func:`_create_statement`, :func:`_register_one`), the current catalog and namespace
(:class:`_CurrentNamespace`, :func:`_default_target`), and the turn the driver's threads take at
view DDL (:func:`_one_ddl_at_a_time`).

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
* :func:`~viewstore.spark.ddl.sql` creates the session copy before it writes the store; if the
  store then refuses, the session catalog is put back exactly as it was (the earlier view's
  metadata, or no view).

Every public function raises only :class:`~viewstore.errors.ViewStoreError` subclasses. What
Spark refuses (its ``AnalysisException`` and ``ParseException``) is bad input:
:class:`~viewstore.errors.ValidationError` whose message starts with Spark's error condition in
brackets, e.g. ``[TABLE_OR_VIEW_NOT_FOUND]``, followed by Spark's explanation. A failure of the
engine itself (a stopped session, a JVM py4j cannot reach, a metastore that does not answer) is
:class:`~viewstore.errors.EngineError`, whose message says so (see :mod:`viewstore.spark.failures`).
A call that fails writes nothing to the store.

The caller's session is left as it is while these functions run, so other threads may use it
meanwhile: a query there never runs under a view's SQL configs or default namespace, nor with
``${...}`` substitution off. :func:`~viewstore.spark.register.register_views`,
:func:`~viewstore.spark.drift.check_views` and :func:`~viewstore.spark.ddl.create_view` run all
their statements in their own session (one per call); :func:`~viewstore.spark.ddl.sql` runs there
the view DDL the store takes (analysis, the session copy), while every other statement, which is the
caller's own (``SET``, ``USE``, ``CREATE TEMPORARY VIEW``, queries), runs in the caller's session
as ``spark.sql`` would run it, its effects staying there. A catalog other than the session
catalog is loaded anew in each call's session, from its settings (Spark makes one instance of a
catalog per session): one that keeps state in its instance rather than behind its settings is not
the caller's instance there; viewstore's own (:func:`~viewstore.spark.catalog_plugin.attach`) is
connected to the same store.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from contextlib import contextmanager
from typing import Any, Iterator, Sequence

from py4j.protocol import Py4JError
from pyspark.sql import SparkSession

from ..catalog import ViewStore, thread_holds_a_store
from ..errors import ConcurrencyError, EngineError, ValidationError, ViewStoreError
from ..model import RESERVED_PREFIX, Column, Identifier, View
from . import catalog_plugin
from .catalog_plugin import active_session, attach_to_clone
from .catalog_plugin import SCHEMA_MODE  # the summary key: the view's schema binding mode, as the catalog writes it
from .catalog_plugin import SQL_CONFIGS  # the summary key: the SQL configs captured with the view (JSON)
from .failures import ENGINE_ERRORS as _ENGINE_ERRORS
from .failures import SPARK_ERRORS as _SPARK_ERRORS
from .failures import condition as _condition
from .failures import environment_failure, tagged
from .failures import explanation as _explanation

_log = logging.getLogger("viewstore.spark")

#: the session catalog: where stored views are registered
SESSION_CATALOG = "spark_catalog"
#: the schema modes Spark knows; COMPENSATION is Spark 4's default
_SCHEMA_MODES = ("BINDING", "COMPENSATION", "TYPE EVOLUTION", "EVOLUTION")
#: the Spark configuration that substitutes ``${...}`` in SQL text
_SUBSTITUTE = "spark.sql.variable.substitute"
#: the session view property holding the fingerprint of the statement that created the copy
FINGERPRINT = "viewstore.fingerprint"
#: the session view property naming the store that made the copy (its :attr:`ViewStore.store_id`)
STORE = "viewstore.store"
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
    return ValidationError(f"{context}: {tagged(_condition(error), _explanation(error))}")


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
