"""viewstore as a Spark catalog: Spark SQL view statements read and write the store.

Example::

    import viewstore.spark
    viewstore.spark.attach(spark, store, name="vs")
    spark.sql("CREATE VIEW vs.sales.big_orders AS SELECT id, amount FROM spark_catalog.sales.orders "
              "WHERE amount > 100")
    spark.sql("SELECT * FROM vs.sales.big_orders").show()

How it works: a small Java class, ``io.viewstore.spark.ViewStoreCatalog`` (built into
``jars/viewstore-spark-catalog.jar`` of this package), implements Spark 4's ``ViewCatalog``.
:func:`attach` adds the jar to the session, registers the class under the catalog name and hands
the catalog instance a Python object through py4j callbacks. Each catalog call (loadView,
createView, ...) becomes one JSON request that this module answers from the store, so each Spark
statement is one store call, recorded as events by the store's actor.

What a Spark view becomes in the store:

* the query text, verbatim, as the ``spark`` representation;
* Spark's current catalog and namespace as the default catalog and namespace;
* the view schema (aliased names, column comments, nullability) as the columns, in Iceberg types;
* ``COMMENT`` as the comment and ``TBLPROPERTIES`` as the properties (Spark's reserved ``owner``
  and ``table_type`` are not stored: ``owner`` reads back as the view's creator, and a
  ``table_type`` property set outside Spark is kept but not served: every view is Spark's ``VIEW``);
* in the version summary: ``engine-name`` (``spark``), ``engine-version``, and the Spark-only
  parts of the definition: ``spark.query-column-names`` (a JSON list), ``spark.schema-mode`` and
  ``spark.sql-configs`` (a JSON object of the SQL configs Spark captured), and ``spark.schema``
  (Spark's schema JSON) when the columns lose part of it, such as a string collation (see
  :mod:`viewstore.spark.types`); Spark is served that schema while it fits the stored columns.

``ALTER VIEW ... SET/UNSET TBLPROPERTIES`` reaches the catalog as "replace the view with this whole
new view"; when the definition is the one Spark loaded, the change is recorded as comment and
property events only (no new version), exactly as :meth:`~viewstore.ViewStore.alter_view` would
record it. A changed query or schema (``ALTER VIEW ... AS``, ``CREATE OR REPLACE``) makes a new
version, or reuses an identical one, as :meth:`~viewstore.ViewStore.replace_view` does. Spark
reads a view and then replaces it; if another writer changed the view in between, the statement
fails and writes nothing instead of overwriting that change.

Threads and errors: callbacks run on py4j threads while the calling thread waits inside
``spark.sql``; the store is thread-safe and this module never calls into Spark from a callback.
Every failure is answered as a small error envelope that the Java side raises as a Spark
``AnalysisException`` (``TABLE_OR_VIEW_NOT_FOUND``, ``VIEW_NOT_FOUND``,
``TABLE_OR_VIEW_ALREADY_EXISTS``, ``RECURSIVE_VIEW``, or ``USER_RAISED_EXCEPTION`` with a message
naming the view). The Java side itself refuses a new definition that reads a temporary object, that
has an expression without an alias, or that reads (through any catalog) the view itself, with Spark's
``INVALID_TEMP_OBJ_REFERENCE``, ``CREATE_PERMANENT_VIEW_WITHOUT_ALIAS`` and ``RECURSIVE_VIEW``, before
it calls the store; ``loadView`` refuses a stored view that reads itself
through views of this catalog (a cycle written through the Python API) with ``RECURSIVE_VIEW``.

Only classic PySpark (py4j) can host the catalog: Spark Connect clients have no JVM to call back
from, and :func:`attach` refuses them. The Java API is ``@Evolving``: the jar is built for one
Spark minor version (:data:`SUPPORTED_SPARK`).
"""

from __future__ import annotations

import functools
import json
import logging
import threading
from collections import OrderedDict
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, NamedTuple, cast

from ..catalog import ViewChange, ViewStore
from ..errors import (INSTALL_SPARK, ConcurrencyError, EngineError, NoSuchViewError, NotInstalledError,
                      ValidationError, ViewAlreadyExistsError, ViewStoreError)
from ..formats.references import parse as parse_sql, tables_read
from ..formats.spark import QUERY_COLUMN_NAMES
from ..model import Column, SQLRepresentation, View, normalize_name, to_identifier, to_namespace
from .failures import engine_calls, session_down
from .types import (SPARK_SCHEMA, columns_to_schema, parse_schema, recorded_schema, schema_to_columns,
                    schema_to_record)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["attach", "detach", "jar_path", "session_conf", "check_spark_version", "spark_schema_to_columns",
           "columns_to_spark_schema", "SUPPORTED_SPARK", "CATALOG_CLASS", "ENGINE_NAME", "QUERY_COLUMN_NAMES",
           "SCHEMA_MODE", "SQL_CONFIGS"]

_log = logging.getLogger(__name__)

#: the Spark minor version the catalog jar is built and tested for
SUPPORTED_SPARK = "4.3"
#: the Java class to name in ``spark.sql.catalog.<name>``
CATALOG_CLASS = "io.viewstore.spark.ViewStoreCatalog"
#: how long a catalog call from Spark waits for a store that another thread holds in a transaction
#: (or in a signal receiver): that thread may be waiting for the very Spark statement making the call
TRANSACTION_WAIT_S = 10.0
_BRIDGE_INTERFACE = "io.viewstore.spark.ViewStoreBridge"
_JAR = Path(__file__).resolve().parent / "jars" / "viewstore-spark-catalog.jar"

#: the version summary's engine name for views written through the catalog
ENGINE_NAME = "spark"
#: summary key: Spark's schema binding mode (BINDING, COMPENSATION, TYPE EVOLUTION)
SCHEMA_MODE = "spark.schema-mode"
#: summary key: the SQL configs Spark captured with the view, as a JSON object
SQL_CONFIGS = "spark.sql-configs"
_DEFAULT_SCHEMA_MODE = "COMPENSATION"
#: view properties that Spark reserves: it sends them with every view but they are not TBLPROPERTIES
_RESERVED = ("owner", "table_type")
#: the ``table_type`` Spark gives a view unless TBLPROPERTIES name one (Spark compares it case-sensitively)
_SPARK_VIEW_TYPE = "VIEW"
_SESSION_CATALOG = "spark_catalog"

class _Attached(NamedTuple):
    """A bridge attached to a catalog of a session, and the session, held weakly."""

    bridge: "_Bridge"
    # java.lang.ref.WeakReferences to the JVM session, its SparkContext and the catalog the bridge is
    # attached to: the entry keeps none of them alive
    session: Any
    context: Any
    catalog: Any


#: the bridges attached, by (JVM session id, catalog name), for the clones of their sessions (see
#: attach_to_clone); an entry goes at the next attach once its session is stopped or collected
_ATTACHED: dict[tuple[int, str], _Attached] = {}
_ATTACH_LOCK = threading.Lock()


def jar_path() -> Path:
    """The catalog jar shipped in this package (for ``spark.jars`` when building a session)."""
    return _JAR


def session_conf(name: str = "vs") -> dict[str, str]:
    """The settings that declare the catalog at session build; :func:`attach` must still follow.

    Example::

        builder = SparkSession.builder
        for key, value in session_conf("vs").items():
            builder = builder.config(key, value)
        spark = builder.getOrCreate()
        attach(spark, store, name="vs")

    Args:
        name: the catalog name.

    Raises:
        ValidationError: a bad catalog name.
    """
    name = normalize_name(name, "catalog name")
    return {"spark.jars": str(_JAR), f"spark.sql.catalog.{name}": CATALOG_CLASS}


@engine_calls("attach the store as a Spark catalog")
def attach(spark: SparkSession, store: ViewStore, name: str = "vs") -> str:
    """Make ``store`` the Spark catalog ``name`` of this session.

    Adds the catalog jar to the session unless it is already there, sets
    ``spark.sql.catalog.<name>`` and connects the catalog to the store. Attaching again replaces
    the store. Safe to call while other threads use the session.

    Args:
        spark: a classic (py4j) SparkSession running Spark 4.3.
        store: the store that holds the views; its actor is recorded with every change.
        name: the catalog name, normalised as store names are (lower case, no dots).

    Returns:
        The catalog name to use in SQL.

    Raises:
        ValidationError: ``spark`` is a Spark Connect session (or not a SparkSession), ``store`` is
            not a ViewStore, the name is bad, or the name is taken by another catalog class.
        NotInstalledError: the session runs a Spark version the catalog was not built for, or the
            jar is missing from the installation.
        EngineError: the engine failed (a stopped session, a lost JVM, a metastore that does not answer).
    """
    jsession = _jvm_session(spark, "attach")
    name = normalize_name(name, "catalog name")
    if not isinstance(store, ViewStore):
        raise ValidationError(f"attach needs a ViewStore, not {type(store).__name__}")
    if name == _SESSION_CATALOG:
        raise ValidationError(f"{_SESSION_CATALOG} is Spark's own session catalog; attach the store under another name")
    version = str(spark.version)
    check_spark_version(version)
    if not _JAR.is_file():
        raise NotInstalledError(f"the catalog jar is missing from this installation ({_JAR.name}); reinstall viewstore")
    down = session_down(spark)
    if down is not None:  # once attached before, its jar, setting and catalog are there: nothing below asks the context
        # refused, it changes nothing: the stores of stopped sessions are let go of by the next attach that
        # succeeds, and detach still finds this session's
        raise EngineError(f"cannot attach the store as a Spark catalog: {down}")
    from pyspark.java_gateway import ensure_callback_server_started

    key = f"spark.sql.catalog.{name}"
    with _ATTACH_LOCK:
        configured = spark.conf.get(key, None)
        if configured not in (None, CATALOG_CLASS):
            raise ValidationError(f"catalog {name!r} is already configured as {configured}; choose another name")
        if not _jar_added(jsession):
            spark.sql(f"ADD JAR '{_sql_string(str(_JAR))}'")
        if configured is None:
            spark.conf.set(key, CATALOG_CLASS)
        try:
            # the catalog's class is named in the session's settings, and it and the bridge's interface
            # come from the jar added to the session: both as the session sees them, from any thread
            with active_session(spark):
                jcatalog = jsession.sessionState().catalogManager().catalog(name)
                if jcatalog.getClass().getName() != CATALOG_CLASS:
                    raise ValidationError(f"catalog {name!r} is already loaded as {jcatalog.getClass().getName()}; "
                                          f"choose another name")
                gateway = spark.sparkContext._gateway
                ensure_callback_server_started(gateway)
                bridge = _Bridge(store, name, version)
                jcatalog.attach(bridge)
        except BaseException:
            if configured is None:  # the setting made above: a refused attach leaves the name as it was found
                spark.conf.unset(key)
            raise
        _release_gone()
        # pyspark types _jvm Optional (a Spark Connect session has none): this session is classic
        weak = cast(Any, spark._jvm).java.lang.ref.WeakReference  # noqa: SLF001
        _ATTACHED[(_session_id(jsession), name)] = _Attached(bridge, weak(jsession), weak(jsession.sparkContext()),
                                                             weak(jcatalog))
    return name


def _release_gone() -> None:
    """Forget the bridges of sessions that are stopped or that the JVM collected (under ``_ATTACH_LOCK``).

    A long-running driver that makes and stops sessions (or lets go of ``newSession()``s) would
    keep every store it attached otherwise. The Java catalog of a live session holds its bridge
    itself (py4j keeps a Python object handed to Java while Java holds it), so an entry only
    serves the clones of its session; one whose session cannot be asked (the JVM is gone) goes too.
    A stopped session's catalog is disconnected as well: the driver may still hold the session
    object, and through it the catalog would keep the bridge and its store. The session itself is
    never handed to Python here (``refersTo``): py4j would hold it a while.
    """
    from py4j.protocol import Py4JError

    for key, entry in list(_ATTACHED.items()):
        try:
            context = None if entry.session.refersTo(None) else entry.context.get()
            gone = context is None or bool(context.isStopped())
        except Py4JError:
            gone = True
        if gone:
            del _ATTACHED[key]
            try:
                jcatalog = entry.catalog.get()
                if jcatalog is not None:
                    jcatalog.detach()
            except Py4JError:
                pass  # the JVM is gone, and the catalog with it


def attach_to_clone(jsession: Any, jclone: Any) -> None:
    """Connect the viewstore catalogs of ``jclone``, a ``cloneSession()`` of ``jsession``, to its stores.

    For :mod:`viewstore.spark.session`, which runs its statements in such a clone, with the clone
    active (see :func:`active_session`). Spark makes every catalog of a session anew from the
    session's settings, so a clone's copy of a catalog :func:`attach` connected in ``jsession``
    has no store; each gets the one attached there (the same bridge: the same store and actor). A
    catalog the clone cannot load is left as it is (logged); statements that use it then fail
    there as they would in any new session.
    """
    from py4j.protocol import Py4JError

    with _ATTACH_LOCK:
        source = _session_id(jsession)
        for (session, name), entry in sorted(_ATTACHED.items(), key=lambda item: item[0][1]):
            if session != source:
                continue
            try:
                if not entry.session.refersTo(jsession):  # a collected session's id, now another's
                    continue
                jcatalog = jclone.sessionState().catalogManager().catalog(name)
                if jcatalog.getClass().getName() == CATALOG_CLASS:
                    jcatalog.attach(entry.bridge)
            except Py4JError as e:
                _log.warning("viewstore catalog %r could not be connected in a clone of its session: %s", name, e)


@contextmanager
def active_session(spark: Any) -> Iterator[None]:
    """Inside the block, the JVM thread that serves this thread works for ``spark``.

    Spark reads settings from the thread's active session (``SQLConf.get``): the class a catalog
    name is configured with, ``${...}`` substitution in its parser, and more; and it loads a
    catalog's class with the thread's context class loader, which sees a jar added at runtime
    (``ADD JAR``) only on the thread that added it. ``spark.sql`` makes its session the active one
    while it runs, but a direct call through py4j (loading a catalog) gets the thread's: in
    PySpark, the first session made and its class loader on the thread that made it, and neither
    on other threads. So without this, a catalog set at runtime in another session, or loaded from
    another thread, is not found. Here ``spark`` is the active session, and its class loader for
    added jars the context class loader, as ``ADD JAR`` makes them; both are put back afterwards.
    PySpark serves each Python thread with a JVM thread of its own, so no other thread is affected.
    """
    jvm, jsession = spark._jvm, spark._jsparkSession  # noqa: SLF001
    sessions = getattr(jvm, "org.apache.spark.sql.classic.SparkSession")
    thread = jvm.java.lang.Thread.currentThread()
    previous, loader = sessions.getActiveSession(), thread.getContextClassLoader()
    sessions.setActiveSession(jsession)
    thread.setContextClassLoader(jsession.sharedState().jarClassLoader())
    try:
        yield
    finally:
        thread.setContextClassLoader(loader)
        if previous.isDefined():
            sessions.setActiveSession(previous.get())
        else:
            sessions.clearActiveSession()


def check_spark_version(version: str) -> None:
    """Refuse a Spark version whose minor differs from :data:`SUPPORTED_SPARK`.

    Raises:
        ValidationError: ``version`` is not a string.
        NotInstalledError: the version is not a supported one.
    """
    if not isinstance(version, str):
        raise ValidationError(f"a Spark version must be a string such as '4.3.0', not {type(version).__name__}")
    if ".".join(str(version).split(".")[:2]) != SUPPORTED_SPARK:
        raise NotInstalledError(f"viewstore's Spark catalog is built for Spark {SUPPORTED_SPARK}.x; this session runs "
                                f"Spark {version} (the spark extra pins a supported pyspark; {INSTALL_SPARK})")


@engine_calls("detach the store's Spark catalog")
def detach(spark: SparkSession, name: str = "vs") -> bool:
    """Disconnect the store from catalog ``name``; its statements then fail with a clear error.

    Spark keeps the catalog instance for the session's lifetime, so :func:`attach` can connect a
    store again later.

    Args:
        spark: the session given to :func:`attach`.
        name: the catalog name.

    Returns:
        Whether a store was attached.

    Raises:
        ValidationError: ``spark`` is not a classic SparkSession, or a bad name.
        EngineError: the engine failed (a lost JVM, say).
    """
    jsession = _jvm_session(spark, "detach")
    name = normalize_name(name, "catalog name")
    with _ATTACH_LOCK:
        bridge = _ATTACHED.pop((_session_id(jsession), name), None)
        if spark.conf.get(f"spark.sql.catalog.{name}", None) != CATALOG_CLASS:
            return False
        with active_session(spark):
            jcatalog = jsession.sessionState().catalogManager().catalog(name)
        was_attached = bool(jcatalog.isAttached())
        jcatalog.detach()
    return was_attached or bridge is not None


def _jvm_session(spark: Any, what: str) -> Any:
    """The JVM SparkSession behind a classic PySpark session; refuses Spark Connect clearly (``what``:
    the call, for the message)."""
    message = ("viewstore's Spark catalog needs a classic PySpark session (py4j): Spark Connect clients "
               "have no driver JVM to host the catalog; run the pipeline as a classic PySpark driver")
    from pyspark.sql import SparkSession  # installed: this module's own imports need it
    from pyspark.sql.utils import is_remote

    if is_remote() or type(spark).__module__.startswith("pyspark.sql.connect"):
        raise ValidationError(message)
    if not isinstance(spark, SparkSession):
        raise ValidationError(f"{what} needs a SparkSession, not {type(spark).__name__}")
    return spark._jsparkSession  # a classic session's, set when it was made


def _session_id(jsession: Any) -> int:
    return int(jsession.hashCode())


def _jar_added(jsession: Any) -> bool:
    jars = jsession.sparkContext().listJars()
    return any(str(j).rsplit("/", 1)[-1] == _JAR.name for j in _scala_seq(jars))


def _scala_seq(seq: Any) -> list[Any]:
    return [seq.apply(i) for i in range(seq.size())]


def _sql_string(text: str) -> str:
    return text.replace("\\", "\\\\").replace("'", "\\'")


# ------------------------------------------------------------------------------------------------
# The Python side of the bridge


class _Refusal(Exception):
    """A failure to answer with an error envelope (never crosses py4j)."""

    def __init__(self, envelope: dict[str, Any]) -> None:
        super().__init__(envelope.get("message", envelope.get("kind")))
        self.envelope = envelope


class _Bridge:
    """Answers the catalog calls of one Spark catalog from one store.

    py4j calls :meth:`call` (the Java interface ``io.viewstore.spark.ViewStoreBridge``) on a
    callback thread; nothing here calls back into Spark, and the store lock is taken by each store
    call in turn, never across a handler (so the receivers of a write made here run without it). A
    thread inside ``store.transaction()`` or a ``before_commit`` receiver does hold it across the
    Spark calls it makes, so a call waits for the store so held only so long
    (:data:`TRANSACTION_WAIT_S`).
    """

    class Java:
        implements = [_BRIDGE_INTERFACE]

    def __init__(self, store: ViewStore, name: str, spark_version: str) -> None:
        self.store = store
        self.name = name
        self.spark_version = spark_version
        # (JVM thread, identifier) -> stream version that loadView served on that thread
        self._served: OrderedDict[tuple[int, tuple[str, ...]], int] = OrderedDict()
        self._served_lock = threading.Lock()
        self._handlers: dict[str, Callable[[dict[str, Any]], Any]] = {
            "listViews": self._list_views, "loadView": self._load_view, "viewExists": self._view_exists,
            "createView": self._create_view, "replaceView": self._replace_view,
            "createOrReplaceView": self._create_or_replace_view, "dropView": self._drop_view,
            "renameView": self._rename_view,
        }

    def call(self, operation: str, request: str) -> str:
        """Answer one catalog call: a JSON request in, a JSON envelope ``{"ok"|"error": ...}`` out.

        A call waits for a store held by a transaction or a receiver at most
        :data:`TRANSACTION_WAIT_S`: a thread inside ``store.transaction()`` that runs Spark SQL
        reading this catalog holds the store while it waits for Spark, which waits for this call;
        that SQL fails, and the block goes on.
        """
        try:
            handler = self._handlers.get(operation)
            if handler is None:
                raise _Refusal(self._message(f"unknown catalog operation {operation!r}"))
            try:
                self.store._wait_turn(TRANSACTION_WAIT_S)
            except ConcurrencyError as e:
                raise _Refusal(self._message(
                    f"a transaction of the store (store.transaction()) or a signal receiver held it for "
                    f"{TRANSACTION_WAIT_S:g} s: Spark SQL over this catalog cannot run inside such a block or "
                    f"receiver (it waits for Spark, Spark for it); run it after the block")) from e
            return json.dumps({"ok": handler(json.loads(request))})
        except _Refusal as refusal:
            return json.dumps({"error": refusal.envelope})
        except Exception as error:  # a bug: answer it rather than let py4j raise a huge error in Spark
            _log.exception("viewstore catalog %r failed in %s", self.name, operation)
            return json.dumps({"error": self._message(f"internal error in {operation}: "
                                                      f"{type(error).__name__}: {error}")})

    # -- helpers -----------------------------------------------------------------------------

    def _message(self, text: str) -> dict[str, Any]:
        return {"kind": "user", "message": f"viewstore catalog '{self.name}': {text}"}

    def _display(self, ident: dict[str, Any]) -> str:
        """The view name as the user wrote it, catalog included: vs.sales.`a.b`."""
        return ".".join(_quote_part(p) for p in [self.name, *ident["namespace"], ident["name"]])

    def _refuse(self, ident: dict[str, Any], action: str, error: Exception) -> _Refusal:
        if isinstance(error, NoSuchViewError):
            return _Refusal({"kind": "no_such_view", **ident})
        if isinstance(error, ViewAlreadyExistsError):
            return _Refusal({"kind": "view_already_exists", **ident})
        if isinstance(error, ConcurrencyError):
            return _Refusal(self._message(f"cannot {action} view {self._display(ident)}: another writer changed it "
                                          f"while Spark was working on it; nothing was written, run the statement "
                                          f"again"))
        return _Refusal(self._message(f"cannot {action} view {self._display(ident)}: {error}"))

    def _identifier(self, ident: dict[str, Any]) -> tuple[str, ...]:
        if not ident["namespace"]:
            raise ValidationError(f"a view needs a namespace: use {self.name}.<namespace>.{_quote_part(ident['name'])}")
        return to_identifier([*ident["namespace"], ident["name"]])

    def _remember(self, thread: Any, ident: tuple[str, ...], stream_version: int) -> None:
        if thread is None:
            return
        with self._served_lock:
            self._served[(thread, ident)] = stream_version
            self._served.move_to_end((thread, ident))
            while len(self._served) > 1024:
                self._served.popitem(last=False)

    def _recall(self, thread: Any, ident: tuple[str, ...]) -> int | None:
        with self._served_lock:
            return self._served.pop((thread, ident), None)

    # -- operations --------------------------------------------------------------------------

    def _list_views(self, request: dict[str, Any]) -> list[dict[str, Any]]:
        namespace = request["namespace"]
        if not namespace:
            return []
        try:
            found = self.store.list_views(to_namespace(namespace))
        except ViewStoreError as e:
            raise _Refusal(self._message(f"cannot list views in {'.'.join(map(_quote_part, [self.name, *namespace]))}:"
                                         f" {e}")) from e
        return [{"namespace": list(i[:-1]), "name": i[-1]} for i in found]

    def _load_view(self, request: dict[str, Any]) -> dict[str, Any]:
        ident = request["ident"]
        try:
            key = self._identifier(ident)
            view = self.store.load_view(key)
        except (NoSuchViewError, ValidationError) as e:
            raise _Refusal({"kind": "no_such_view", **ident}) from e
        except ViewStoreError as e:
            raise self._refuse(ident, "load", e) from e
        sql = view.sql_for(ENGINE_NAME)
        if sql is None:
            raise _Refusal(self._message(f"view {self._display(ident)} has no Spark SQL (its dialects: "
                                         f"{', '.join(view.dialects)}); add a 'spark' representation to use it "
                                         f"from Spark"))
        catalogs = request.get("catalogs")
        try:
            served = self._spark_view(view, sql, catalogs)
        except ValidationError as e:
            raise self._refuse(ident, "load", e) from e
        # a cycle written outside Spark (the Python API, the CLI) would overflow the JVM stack before
        # Spark's own limit on nested views (spark.sql.view.maxNestedViewDepth) stops it
        self._check_cycle(key, _stored_definition(view), catalogs)
        self._remember(request.get("thread"), key, view.stream_version)
        return served

    def _view_exists(self, request: dict[str, Any]) -> bool:
        ident = request["ident"]
        try:
            return self.store.view_exists(self._identifier(ident))
        except ValidationError:
            return False
        except ViewStoreError as e:
            raise self._refuse(ident, "look up", e) from e

    def _create_view(self, request: dict[str, Any]) -> dict[str, Any]:
        ident = request["ident"]
        try:
            key = self._identifier(ident)
            definition = self._definition(request["view"])
            self._check_cycle(key, definition, request.get("catalogs"))
            view = self.store.create_view(key, **definition)
        except ViewStoreError as e:
            raise self._refuse(ident, "create", e) from e
        return self._spark_view(view, view.sql_for(ENGINE_NAME) or "", request.get("catalogs"))

    def _create_or_replace_view(self, request: dict[str, Any]) -> dict[str, Any]:
        """SQL's CREATE OR REPLACE as one store call: replace_view(replace_properties=True).

        The events are those :meth:`~viewstore.ViewStore.replace_view` records: a new (or reused)
        version when the definition changed, then the comment and property changes that make the
        properties exactly the statement's.
        """
        ident = request["ident"]
        try:
            key = self._identifier(ident)
            incoming = request["view"]
            definition = self._definition(incoming)
            current = self._current(key)
            if current is not None:
                self._keep_unchanged(definition, incoming, current, request.get("catalogs"))
            self._check_cycle(key, definition, request.get("catalogs"))
            # the decisions above hold only for the view as read: a concurrent change is refused
            expected = current.stream_version if current is not None else 0
            view = self.store.replace_view(key, **definition, replace_properties=True, expected_version=expected)
        except ViewStoreError as e:
            raise self._refuse(ident, "create or replace", e) from e
        return self._spark_view(view, view.sql_for(ENGINE_NAME) or "", request.get("catalogs"))

    def _replace_view(self, request: dict[str, Any]) -> dict[str, Any]:
        """Spark's read-modify-write (ALTER VIEW): record only what changed, atomically.

        An unchanged definition means a property statement: it becomes the comment and property
        changes :meth:`~viewstore.ViewStore.alter_view` would record. Otherwise the view is
        replaced as by :meth:`~viewstore.ViewStore.replace_view`. Either way the write expects the
        stream version that ``loadView`` served on the same JVM thread.
        """
        ident = request["ident"]
        try:
            key = self._identifier(ident)
            expected = self._recall(request.get("thread"), key)
            current = self.store.load_view(key)
            if expected is None:
                expected = current.stream_version
            elif expected != current.stream_version:
                raise ConcurrencyError("changed since Spark loaded it", expected=expected,
                                       actual=current.stream_version)
            incoming = request["view"]
            definition = self._definition(incoming)
            if self._keep_unchanged(definition, incoming, current, request.get("catalogs")):
                changes = _property_changes(current.properties, definition["properties"], definition["comment"])
                view = self.store.alter_view(key, *changes, expected_version=expected)
            else:
                self._check_cycle(key, definition, request.get("catalogs"))
                view = self.store.replace_view(key, **definition, replace_properties=True, expected_version=expected)
        except ViewStoreError as e:
            raise self._refuse(ident, "alter", e) from e
        return self._spark_view(view, view.sql_for(ENGINE_NAME) or "", request.get("catalogs"))

    def _drop_view(self, request: dict[str, Any]) -> bool:
        ident = request["ident"]
        try:
            key = self._identifier(ident)
        except ValidationError:
            return False
        try:
            return self.store.drop_view(key)
        except ViewStoreError as e:
            raise self._refuse(ident, "drop", e) from e

    def _rename_view(self, request: dict[str, Any]) -> None:
        ident, target = request["ident"], request["target"]
        namespace = list(target["namespace"])
        # Spark passes the target qualified with the catalog name as its first part
        if len(namespace) > 1 and namespace[0] == self.name:
            namespace = namespace[1:]
        try:
            key = self._identifier(ident)
            new_key = self._identifier({"namespace": namespace, "name": target["name"]})
            view = self.store.load_view(key)
            self._check_cycle(new_key, _stored_definition(view), request.get("catalogs"))
            self.store.rename_view(key, new_key)
        except ViewAlreadyExistsError as e:
            raise _Refusal({"kind": "view_already_exists", **target}) from e
        except ViewStoreError as e:
            raise self._refuse(ident, "rename", e) from e

    def _check_cycle(self, key: tuple[str, ...], definition: dict[str, Any], catalogs: list[str] | None) -> None:
        """Refuse a definition through which the view would read itself (``RECURSIVE_VIEW``, as Spark).

        Reading such a view overflows the JVM stack. The Java side refuses a new definition from
        Spark's analysis of it (through every catalog); this check also covers a rename, and follows
        the views of this catalog that the Spark SQL names (parsed with sqlglot; SQL it cannot parse
        is not followed).
        """
        sql = next((r.sql for r in definition["representations"] if r.dialect.lower() == ENGINE_NAME), None)
        if sql is None:
            return
        known = self._catalogs(catalogs)
        start = _references(sql, self._spark_catalog(definition["default_catalog"], catalogs),
                            tuple(definition["default_namespace"]) or key[:-1], self.name, known)
        stack: list[tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]]  # (a view it reads, the path to it)
        stack = [(ref, (key, ref)) for ref in reversed(start)]
        seen: set[tuple[str, ...]] = set()
        while stack:
            ident, path = stack.pop()
            if ident == key:  # Spark's own error for a view that reads itself
                raise _Refusal({"kind": "recursive_view", "view": _spark_name((self.name, *key)),
                                "path": " -> ".join(_spark_name((self.name, *p)) for p in path)})
            if ident in seen:
                continue
            seen.add(ident)
            try:
                view = self.store.load_view(ident)
            except ViewStoreError:
                continue
            text = view.sql_for(ENGINE_NAME)
            if text is not None:
                refs = _references(text, self._spark_catalog(view.default_catalog, catalogs),
                                   tuple(view.default_namespace) or tuple(view.namespace), self.name, known)
                stack.extend((ref, (*path, ref)) for ref in reversed(refs))

    def _keep_unchanged(self, definition: dict[str, Any], incoming: dict[str, Any], current: View,
                        catalogs: list[str] | None) -> bool:
        """Adjust a replacing ``definition`` to the view it replaces; True if its definition stays.

        What Spark cannot express is kept: the security mode, the reserved properties, and, when
        Spark sent back the definition it loaded, the current version itself (with its other
        dialects and its summary), so that only the properties can change.
        """
        definition["security_mode"] = current.security_mode
        definition["properties"].update(_reserved(current.properties))
        sql = current.sql_for(ENGINE_NAME)
        if sql is None or not self._same_definition(incoming, self._spark_view(current, sql, catalogs)):
            return False
        definition.update(columns=current.columns, representations=current.representations,
                          default_catalog=current.default_catalog, default_namespace=current.default_namespace,
                          summary=current.summary)
        return True

    def _current(self, key: tuple[str, ...]) -> View | None:
        try:
            return self.store.load_view(key)
        except NoSuchViewError:
            return None

    # -- translation -------------------------------------------------------------------------

    def _definition(self, view: dict[str, Any]) -> dict[str, Any]:
        """The store arguments for a view Spark handed over (create_view / replace_view keywords)."""
        mode = view.get("schemaMode") or _DEFAULT_SCHEMA_MODE
        if mode.upper() == "EVOLUTION":
            raise ValidationError("WITH SCHEMA EVOLUTION is not supported for views in this catalog (Spark 4.3 cannot "
                                  "read such views back after a base table changes); use WITH SCHEMA COMPENSATION "
                                  "(the default), BINDING or TYPE EVOLUTION")
        properties = dict(view.get("properties") or {})
        table_type = properties.get("table_type", _SPARK_VIEW_TYPE)
        if table_type != _SPARK_VIEW_TYPE:  # Spark sends a written one in place of its own
            raise ValidationError(f"the property 'table_type' is reserved (Spark sets it to {_SPARK_VIEW_TYPE!r} for "
                                  f"a view) and the store would not keep table_type={table_type!r}; remove it from "
                                  f"TBLPROPERTIES")
        comment = properties.pop("comment", None)
        summary = {"engine-name": ENGINE_NAME, "engine-version": self.spark_version,
                   QUERY_COLUMN_NAMES: _compact(list(view.get("queryColumnNames") or [])), SCHEMA_MODE: mode}
        configs = view.get("sqlConfigs") or {}
        if configs:
            summary[SQL_CONFIGS] = _compact(dict(sorted(configs.items())))
        columns = spark_schema_to_columns(view["schema"])
        recorded = schema_to_record(view["schema"], columns)
        if recorded is not None:  # what the columns lose (a collation, TINYINT, ...): served back as is
            summary[SPARK_SCHEMA] = recorded
        return {"columns": columns,
                "representations": [SQLRepresentation(ENGINE_NAME, view["queryText"])],
                "default_catalog": view.get("currentCatalog") or None,
                "default_namespace": list(view.get("currentNamespace") or []),
                "comment": comment, "properties": _spark_properties(properties), "summary": summary}

    def _spark_catalog(self, name: str | None, catalogs: list[str] | None) -> str:
        """The Spark catalog a stored default catalog means, decided as ``register_views`` decides.

        The catalog itself when the session has a catalog of that name (``catalogs``, sent with
        each call); otherwise (the store's catalog name such as ``prod``, which the Python API and
        the CLI record, or none) the session catalog, ``spark_catalog``.
        """
        if name is not None and (name.lower() == _SESSION_CATALOG or name in self._catalogs(catalogs)):
            return name
        return _SESSION_CATALOG

    def _catalogs(self, catalogs: list[str] | None) -> frozenset[str]:
        """The catalog names of the session (as sent with a call; this one alone when none were sent)."""
        return frozenset(catalogs if catalogs is not None else ()) | {self.name}

    def _spark_view(self, view: View, sql: str, catalogs: list[str] | None) -> dict[str, Any]:
        """What Spark gets for a stored view (the inverse of :meth:`_definition`).

        Unqualified names resolve as in :func:`viewstore.spark.register_views`: in the default
        catalog if it is a catalog of the session, else in ``spark_catalog``; in the default
        namespace, or the view's own namespace when that is empty.
        """
        summary = view.summary
        names = _json_or(summary.get(QUERY_COLUMN_NAMES), list, [])
        configs = _json_or(summary.get(SQL_CONFIGS), dict, {})
        # a stored table_type is not Spark's to read (METRIC_VIEW would make the view a metric view):
        # Spark gets none and types the view VIEW; the store keeps it for the engines it may mean something to
        properties = _spark_properties(view.properties)
        properties["owner"] = view.properties.get("owner", view.audit.creator)
        return {"queryText": sql, "currentCatalog": self._spark_catalog(view.default_catalog, catalogs),
                "currentNamespace": list(view.default_namespace) or list(view.namespace),
                "schemaMode": summary.get(SCHEMA_MODE, _DEFAULT_SCHEMA_MODE),
                "queryColumnNames": names, "sqlConfigs": configs,
                "schema": _served_schema(view), "properties": properties}

    @staticmethod
    def _same_definition(incoming: dict[str, Any], served: dict[str, Any]) -> bool:
        """Whether Spark sent back the definition it loaded (so only properties may differ).

        The schema is compared with the one served to Spark, not with the stored columns: Spark
        sees some Iceberg types as wider ones (``uuid`` as ``string``, ``fixed[n]`` as ``binary``),
        and reading those back would change the stored types.
        """
        for key in ("queryText", "currentCatalog", "currentNamespace", "schemaMode", "queryColumnNames", "sqlConfigs"):
            if (incoming.get(key) or None) != (served.get(key) or None):
                return False
        # both are readable: _definition read the incoming one first, and a served one is the columns' or a
        # recorded schema that reads as them
        return parse_schema(incoming["schema"]) == parse_schema(served["schema"])


def _stored_definition(view: View) -> dict[str, Any]:
    """What :meth:`_Bridge._check_cycle` reads of a definition, from a stored view."""
    return {"representations": view.representations, "default_catalog": view.default_catalog,
            "default_namespace": view.default_namespace}


def _spark_properties(properties: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in properties.items() if k not in _RESERVED}


def _reserved(properties: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in properties.items() if k in _RESERVED}


def _property_changes(old: dict[str, str], new: dict[str, str], comment: str | None) -> list[ViewChange]:
    """The alter_view changes that turn the properties ``old`` into ``new`` with ``comment``."""
    changes: list[ViewChange] = []
    if old.get("comment") != comment:
        changes.append(ViewChange.update_comment(comment))
    for key, value in new.items():
        if key != "comment" and old.get(key) != value:
            changes.append(ViewChange.set_property(key, value))
    for key in sorted(old):
        if key != "comment" and key not in new:
            changes.append(ViewChange.remove_property(key))
    return changes


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _json_or(text: str | None, kind: type, default: Any) -> Any:
    if text is None:
        return default
    try:
        value = json.loads(text)
    except ValueError:
        return default
    return value if isinstance(value, kind) else default


@functools.lru_cache(maxsize=4096)
def _references(sql: str, catalog: str, namespace: tuple[str, ...], ours: str,
                catalogs: frozenset[str]) -> tuple[tuple[str, ...], ...]:
    """The views of catalog ``ours`` that Spark SQL reads, as store identifiers (best effort).

    Names resolve as Spark resolves them: a name of two or more parts whose first part is a catalog
    of the session (``catalogs``, or ``spark_catalog`` in any case) is in that catalog
    (``ours.ns.view``, a namespace of any depth); any other name is in the view's current catalog
    ``catalog`` (``ns.view``, ``n1.n2.view``), a bare ``view`` in its current namespace. Table
    functions are skipped, and so are CTE names where the CTE is in scope
    (:func:`viewstore.formats.references.tables_read`).
    Remembered for the last few thousand texts: every ``loadView`` follows the views a view reads
    (parsing one costs a few hundred microseconds; the answer depends on nothing but the
    arguments).
    """
    try:
        trees = parse_sql(sql, "spark")
    except Exception:  # sqlglot cannot parse every Spark statement: then there is nothing to follow
        return ()
    found: list[tuple[str, ...]] = []
    for table in (table for tree in trees for table in tables_read(tree, "spark")):
        parts = [p.name for p in table.parts]
        where = catalog
        if len(parts) > 1 and (parts[0] in catalogs or parts[0].lower() == _SESSION_CATALOG):
            where, parts = parts[0], parts[1:]
        elif len(parts) == 1:
            parts = [*namespace, *parts]
        if where != ours or len(parts) < 2:  # a view of this catalog has a namespace
            continue
        try:
            found.append(to_identifier(parts))
        except ValidationError:
            continue
    return tuple(found)


def _spark_name(parts: tuple[str, ...]) -> str:
    """A name as Spark's errors show it: every part in backquotes (`vs`.`sales`.`a`)."""
    return ".".join("`" + p.replace("`", "``") + "`" for p in parts)


def _quote_part(part: str) -> str:
    if part and (part[0].isalpha() or part[0] == "_") and all(c.isalnum() or c == "_" for c in part):
        return part
    return "`" + part.replace("`", "``") + "`"


# ------------------------------------------------------------------------------------------------
# Spark schema JSON <-> store columns (through viewstore.spark.types, the one type mapping)


def spark_schema_to_columns(schema: dict[str, Any]) -> tuple[Column, ...]:
    """Columns (Iceberg types, comments, nullability) from Spark's ``StructType.json()`` form.

    Raises:
        ValidationError: a type an Iceberg view schema cannot hold (intervals, for instance).
    """
    return tuple(schema_to_columns(parse_schema(schema)))


def _served_schema(view: View) -> dict[str, Any]:
    """The Spark schema JSON served for a view: the recorded one if it still fits the columns, else theirs."""
    recorded = recorded_schema(view.summary, view.columns)
    return recorded if recorded is not None else columns_to_spark_schema(view.columns)


def columns_to_spark_schema(columns: tuple[Column, ...]) -> dict[str, Any]:
    """Spark's ``StructType.json()`` form of stored columns.

    Raises:
        ValidationError: a column type Spark cannot hold (Iceberg's nanosecond timestamps).
    """
    return columns_to_schema(columns).jsonValue()
