"""The end-to-end demo behind ``viewstore demo``: one pipeline, from sample tables to an audit answer.

Steps: sample data as Spark tables; two views defined in Spark SQL through :func:`viewstore.spark.sql`
(one reading the other); a new driver registering them from the store and querying them; a second
dialect and a comment; a replaced definition and its rollback; Iceberg view metadata; and one audit
question answered twice, with ``store.events`` and with Spark SQL over :func:`events_dataframe`.

The demo plays two people, ``alice`` (a data engineer) and ``bob`` (an analytics engineer), so
the audit has something to tell. Everything runs on a local SparkSession with an in-memory
catalog, or on the session already running in the process (left running, its settings as they
are); the store is a temporary file unless a path is given (``viewstore --db demo.db demo``), and
a second run on the same store changes only what the demo changes again.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import re
import shutil
import tempfile
import time
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any, Iterator

from pyspark import SparkContext
from pyspark.errors import AnalysisException, PySparkRuntimeError
from pyspark.sql import SparkSession
from pyspark.sql import types as T
from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table

from ..catalog import ViewChange, ViewStore, _time_text
from ..errors import ValidationError, ViewStoreError
from ..model import SQLRepresentation, View, to_path
from .audit import events_dataframe
from .ddl import sql
from .drift import check_views
from .failures import engine_calls
from .register import register_views
from .session import _check_session

__all__ = ["run_demo", "DemoResult", "local_session"]

_STEPS = 7
#: a database name the demo can write into its SQL as it is
_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

DAILY = "daily_orders"
TOTALS = "region_totals"

_DAILY_SQL = """CREATE VIEW IF NOT EXISTS daily_orders (
    day COMMENT 'order day',
    region,
    orders COMMENT 'number of orders',
    revenue COMMENT 'sum of order amounts in EUR')
COMMENT 'Orders and revenue per day and region'
AS SELECT o.day, c.region, count(*) AS orders, sum(o.amount) AS revenue
FROM orders o JOIN customers c ON o.customer_id = c.customer_id
GROUP BY o.day, c.region"""

_DAILY_REPLACEMENT = (_DAILY_SQL.replace("CREATE VIEW IF NOT EXISTS", "CREATE OR REPLACE VIEW")
                      .replace("GROUP BY o.day", "WHERE o.amount >= 50\nGROUP BY o.day"))

_TOTALS_SQL = """CREATE VIEW IF NOT EXISTS region_totals
COMMENT 'Orders and revenue per region'
AS SELECT region, sum(orders) AS orders, sum(revenue) AS revenue
FROM daily_orders
GROUP BY region"""

_TOTALS_TRINO = ("SELECT region, sum(orders) AS orders, sum(revenue) AS revenue\n"
                 "FROM daily_orders\nGROUP BY region")

_AUDIT_SQL = """SELECT actor, view, type, count(*) AS events
FROM view_events
WHERE occurred_at >= timestamp_millis({since_ms})
GROUP BY actor, view, type
ORDER BY actor, view, type"""


@dataclass
class DemoResult:
    """What the demo did, for callers and tests."""

    store_path: Path
    namespace: str
    registered: list[str] = field(default_factory=list)
    totals_before: list[tuple[Any, ...]] = field(default_factory=list)
    totals_replaced: list[tuple[Any, ...]] = field(default_factory=list)
    totals_rolled_back: list[tuple[Any, ...]] = field(default_factory=list)
    exported: list[Path] = field(default_factory=list)
    audit_python: list[tuple[str, str, str, int]] = field(default_factory=list)
    audit_spark: list[tuple[str, str, str, int]] = field(default_factory=list)
    step_seconds: dict[str, float] = field(default_factory=dict)
    started_ms: int = 0
    seconds: float = 0.0


#: log4j's settings for a JVM started quiet: errors only, on stderr. PySpark's JVM starts logging as a
#: shell does, at the level of its main class's logger (else WARN, said on stderr with a line on how
#: to change it), so that logger is set too.
QUIET_LOG4J = ("rootLogger.level = error\nrootLogger.appenderRef.stderr.ref = console\n"
               "appender.console.type = Console\nappender.console.name = console\n"
               "appender.console.target = SYSTEM_ERR\nappender.console.layout.type = PatternLayout\n"
               "appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n\n"
               "logger.gateway.name = org.apache.spark.api.python.PythonGatewayServer\n"
               "logger.gateway.level = error\n")


def local_session(workdir: Path, *, app_name: str = "viewstore-demo", hive: bool = False) -> SparkSession:
    """A quiet local SparkSession with its warehouse under ``workdir``.

    The catalog is in memory, or with ``hive=True`` a real Hive metastore in an embedded Derby
    database under ``workdir`` (Derby's ``derby.log`` too, in a JVM already running as well).

    The settings are the fast ones measured for small local work: two cores, one shuffle
    partition, no UI, a serial GC and a JIT that stops at C1, errors-only logging.
    """
    workdir.mkdir(parents=True, exist_ok=True)
    log4j = workdir / "log4j2.properties"
    log4j.write_text(QUIET_LOG4J)
    java_options = f"-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Dlog4j.configurationFile=file:{log4j}"
    if hive:  # Derby's home, where it writes derby.log (else the working directory)
        java_options += f" -Dderby.system.home={workdir}"
        if SparkContext._jvm is not None:  # noqa: SLF001 - a JVM already running (a stopped session's) takes no options
            SparkContext.setSystemProperty("derby.system.home", str(workdir))
    builder = (
        SparkSession.builder.master("local[2]")
        .appName(app_name)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.default.parallelism", "1")
        .config("spark.sql.adaptive.enabled", "false")
        .config("spark.driver.memory", "1g")
        .config("spark.sql.warehouse.dir", str(workdir / "warehouse"))
        .config("spark.driver.extraJavaOptions", java_options)
    )
    if hive:
        builder = builder.enableHiveSupport().config(
            "spark.hadoop.javax.jdo.option.ConnectionURL",
            f"jdbc:derby:;databaseName={workdir / 'metastore_db'};create=true")
    else:
        builder = builder.config("spark.sql.catalogImplementation", "in-memory")
    # the JVM, if this starts it, listens on 127.0.0.1 unless SPARK_LOCAL_IP names an address
    with jvm_environment({"SPARK_LOCAL_IP": os.environ.get("SPARK_LOCAL_IP", "127.0.0.1")}):
        session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    quiet_analysis_errors()
    return session


@contextmanager
def jvm_environment(environment: dict[str, str]) -> Iterator[None]:
    """Inside the block, the process's environment has ``environment`` added, for a JVM started
    there (it keeps a copy of its own); afterwards it is as it was, so a later ``spark-submit`` of
    the program, or a child process, does not get them."""
    saved = {name: os.environ.get(name) for name in environment}
    os.environ.update(environment)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def quiet_analysis_errors() -> None:
    """Stop PySpark from logging a large JSON record for every caught analysis error."""
    from pyspark.logger import PySparkLogger

    PySparkLogger.getLogger("SQLQueryContextLogger").setLevel(logging.CRITICAL)


class _Printer:
    """The demo's output: step headings, SQL, tables and the equivalent commands."""

    def __init__(self, console: Console, db_hint: str) -> None:
        self.console = console
        self.db_hint = db_hint
        self.step = 0

    def heading(self, title: str) -> None:
        self.step += 1
        self.console.print()
        self.console.rule(f"[bold cyan]Step {self.step}/{_STEPS} · {title}", align="left")

    def say(self, text: str) -> None:
        self.console.print(text)

    def sql(self, text: str) -> None:
        self.console.print(Syntax(text, "sql", theme="ansi_dark", background_color="default", word_wrap=True))

    def command(self, text: str) -> None:
        """A command line or code line the step is equivalent to."""
        self.console.print(f"[dim]  $ {escape(text).replace('<db>', escape(self.db_hint))}[/dim]")

    def code(self, text: str) -> None:
        self.console.print(f"[dim]  >>> {escape(text)}[/dim]")

    def rows(self, title: str, header: list[str], rows: list[tuple[Any, ...]]) -> None:
        table = Table(*header, title=escape(title), title_justify="left")
        for row in rows:  # data (a stored view's comment, a path) prints as it is, never as markup
            table.add_row(*("" if v is None else escape(str(v)) for v in row))
        self.console.print(table)

    def ok(self, text: str) -> None:
        self.console.print(f"[green]✓[/green] {text}")


@contextmanager
def _timed(result: DemoResult, name: str) -> Iterator[None]:
    start = time.perf_counter()
    try:
        yield
    finally:
        result.step_seconds[name] = round(time.perf_counter() - start, 2)


def _sample_tables(spark: SparkSession, namespace: str) -> tuple[int, int]:
    """Write the demo's orders and customers as Spark tables (deterministic data)."""
    customers = [(i, f"customer {i}", ("north", "south", "east", "west")[i % 4]) for i in range(1, 13)]
    start = dt.date(2026, 11, 1)
    orders = [(n, 1 + (n * 7) % 12, start + dt.timedelta(days=n % 5), Decimal(f"{15 + (n * 37) % 90}.00"))
              for n in range(1, 61)]
    customer_schema = T.StructType([T.StructField("customer_id", T.IntegerType(), False),
                                    T.StructField("name", T.StringType()),
                                    T.StructField("region", T.StringType())])
    order_schema = T.StructType([T.StructField("order_id", T.LongType(), False),
                                 T.StructField("customer_id", T.IntegerType()),
                                 T.StructField("day", T.DateType()),
                                 T.StructField("amount", T.DecimalType(10, 2))])
    if not spark.catalog.databaseExists(namespace):
        spark.sql(f"CREATE DATABASE {namespace}")
    spark.createDataFrame(customers, customer_schema).write.mode("overwrite").saveAsTable(f"{namespace}.customers")
    spark.createDataFrame(orders, order_schema).write.mode("overwrite").saveAsTable(f"{namespace}.orders")
    return len(orders), len(customers)


def _totals(spark: SparkSession, namespace: str) -> list[tuple[Any, ...]]:
    rows = spark.sql(f"SELECT region, orders, revenue FROM {namespace}.{TOTALS} ORDER BY region").collect()
    return [tuple(r) for r in rows]


@engine_calls("run the demo")
def run_demo(console: Console | None = None, *, db: str | Path | None = None, spark: SparkSession | None = None,
             namespace: str = "sales") -> DemoResult:
    """Run the demo pipeline and print each step.

    Args:
        console: where to print (default: a new rich Console on stdout).
        db: the store's SQLite file; default a temporary one, removed at the end.
        spark: a session to use (and leave running); default the session already running in the
            process (the one ``SparkSession.builder.getOrCreate()`` would return, left running and
            its settings as they are), else a local one (:func:`local_session`) stopped at the end.
        namespace: the database for the sample tables and views: its tables of those names are
            written over, and its views of those names dropped unless the store holds them (a
            second run keeps the stored views).

    Returns:
        A :class:`DemoResult` with the figures the steps printed.

    Raises:
        EngineError: Spark could not start, or failed (a session passed in was stopped, say).
        ValidationError: an argument of the wrong type, or a namespace that is not a plain
            database name (letters, digits and ``_``) or is Spark's global temporary database
            (``global_temp``); raised before anything is made or printed.
        ViewStoreError: a step failed (it should not: please report it).
    """
    given = spark is not None
    if spark is None:
        spark = running_session()  # its global temporary database is the one to check the namespace against
    _check_demo_args(console, db, spark, namespace)
    console = console or Console()
    started = time.perf_counter()
    workdir = Path(tempfile.mkdtemp(prefix="viewstore-demo-"))
    store_path = Path(db) if db is not None else workdir / "demo.db"
    db_hint = str(db) if db is not None else "demo.db"
    out = _Printer(console, db_hint)
    result = DemoResult(store_path=store_path, namespace=namespace, started_ms=time.time_ns() // 1_000_000)
    own_session = spark is None
    temporary = "  (temporary: use viewstore --db demo.db demo to keep it)" if db is None else ""
    console.print(Panel.fit(
        "[bold]viewstore demo[/bold]: SQL views kept as an event log in one SQLite file, used from Spark\n"
        f"store: {escape(str(store_path))}{temporary}", border_style="cyan"))
    alice = ViewStore(store_path, actor="alice")
    bob = ViewStore(store_path, actor="bob")
    try:
        if spark is None:
            with console.status("starting a local SparkSession..."), _timed(result, "spark start"):
                spark = local_session(workdir / "spark")
            out.say(f"Spark {spark.version} started in {result.step_seconds['spark start']:.1f} s "
                    f"(local, in-memory catalog)")
        elif not given:  # (PySpark's records of the errors the steps catch are dropped: see failures)
            out.say(f"Spark {spark.version}: the session already running in this process (left running)")
        original_db = spark.catalog.currentDatabase()
        try:
            _steps(spark, alice, bob, out, result, namespace)
        finally:
            spark.catalog.setCurrentDatabase(original_db)
    finally:
        alice.close()
        bob.close()
        if own_session and spark is not None:
            spark.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    result.seconds = round(time.perf_counter() - started, 1)
    console.print()
    console.print("[dim]time per step: " + " · ".join(f"{k} {v:.1f} s" for k, v in result.step_seconds.items())
                  + "[/dim]")
    shown = escape(db_hint)  # a path is data: brackets in it are not markup
    keep = "" if db is not None else f"  viewstore --db {shown} demo      (the same, keeping the store)\n"
    console.print(Panel.fit(f"[bold green]Demo finished in {result.seconds:.1f} s.[/bold green] Next:\n{keep}"
                            f"  viewstore --db {shown} show {namespace}.{DAILY}\n"
                            f"  viewstore --db {shown} history {namespace}.{DAILY}\n"
                            f"  viewstore --db {shown} audit --actor bob", border_style="green"))
    return result


def running_session() -> SparkSession | None:
    """The session already running in the process, if any: this thread's active one, else the
    default one the builder hands back (on a thread other than the one that made it, none is active;
    a caller that asked the builder for a session of its own would get it, with its settings applied,
    and stop it at the end)."""
    try:
        return SparkSession.active()
    except PySparkRuntimeError as e:
        if e.getCondition() == "NO_ACTIVE_OR_DEFAULT_SESSION":
            return None
        raise


def _check_demo_args(console: Any, db: Any, spark: Any, namespace: Any) -> None:
    """run_demo's arguments, checked before anything is made.

    The namespace is written into the demo's SQL as it is, so it must be a plain name.

    Raises:
        ValidationError: which argument is wrong, and why.
    """
    if console is not None and not isinstance(console, Console):
        raise ValidationError(f"console must be a rich Console (rich.console.Console) or None, not "
                              f"{type(console).__name__}")
    if db is not None:
        to_path(db, "db")  # the store's own check of a path
    if spark is not None:
        _check_session(spark)
    if not isinstance(namespace, str) or not _PLAIN_NAME.fullmatch(namespace):
        shown = repr(namespace) if isinstance(namespace, str) else type(namespace).__name__
        raise ValidationError(f"namespace must be a database name of letters, digits and _ (not starting with "
                              f"a digit), not {shown}")
    # the one plain name Spark reserves: the session's global temporary database (global_temp by default)
    reserved = spark.conf.get("spark.sql.globalTempDatabase", "global_temp") if spark is not None else "global_temp"
    if namespace.lower() == str(reserved).lower():
        raise ValidationError(f"namespace {namespace!r} is Spark's global temporary database, where no table "
                              f"or view can be made; choose another")


def _steps(spark: SparkSession, alice: ViewStore, bob: ViewStore, out: _Printer, result: DemoResult,
           namespace: str) -> None:
    daily, totals = f"{namespace}.{DAILY}", f"{namespace}.{TOTALS}"

    out.heading("Sample data as Spark tables")
    with _timed(result, "tables"):
        n_orders, n_customers = _sample_tables(spark, namespace)
    out.code(f'spark.createDataFrame(rows, schema).write.saveAsTable("{namespace}.orders")')
    out.ok(f"{namespace}.orders ({n_orders} rows) and {namespace}.customers ({n_customers} rows)")

    out.heading("Two views defined in Spark SQL, stored in viewstore (alice)")
    out.say("viewstore.spark.sql() sends view DDL to the store and mirrors it into the session; "
            "any other statement goes to spark.sql(). (IF NOT EXISTS: a second run keeps the stored views.)")
    with _timed(result, "define views"):
        for name in (totals, daily):  # copies an earlier run left in the session, of views this store lacks:
            if not alice.view_exists(name):  # IF NOT EXISTS would keep them and store nothing
                spark.sql(f"DROP VIEW IF EXISTS {name}")
        sql(spark, alice, f"USE {namespace}")
        out.code(f'sql(spark, store, "USE {namespace}")')
        for ddl in (_DAILY_SQL, _TOTALS_SQL):
            out.sql(ddl)
            view = sql(spark, alice, ddl)
            if isinstance(view, View):
                out.ok(f"{'.'.join(view.identifier)}: stored (version {view.current_version_id}) and usable "
                       f"in this session")
        spark.catalog.setCurrentDatabase("default")
    stored = alice.load_view(daily)
    out.rows(f"{daily}: columns as stored (Iceberg types inferred by Spark)", ["column", "type", "comment"],
             [(c.name, str(c.type), c.comment) for c in stored.columns])
    out.say(f"default namespace [bold]{'.'.join(stored.default_namespace)}[/bold]: unqualified names in the "
            f"SQL (orders, customers, daily_orders) resolve there, wherever the view is used.")
    out.command(f"viewstore --db <db> show {daily}")

    out.heading("A new driver registers the views from the store")
    out.say("A new driver's session has the tables but not the views. To start from the same point, "
            "this session's copies are dropped first.")
    with _timed(result, "register"):
        for name in (totals, daily):
            spark.sql(f"DROP VIEW IF EXISTS {name}")
        try:
            spark.sql(f"SELECT * FROM {totals}").collect()
        except AnalysisException as e:
            out.say(f"SELECT * FROM {totals}  →  [red]{e.getCondition()}[/red]")
        report = register_views(spark, alice, namespace)
        report.raise_for_failures()
        result.registered = list(report.registered)
        result.totals_before = _totals(spark, namespace)
    out.code(f'register_views(spark, store, "{namespace}")')
    out.ok(f"registered in dependency order: {', '.join(report.registered)} ({report.seconds:.2f} s)")
    out.sql(f"SELECT region, orders, revenue FROM {totals} ORDER BY region")
    out.rows(totals, ["region", "orders", "revenue"], result.totals_before)

    out.heading("A second dialect and a comment (bob)")
    with _timed(result, "trino"):
        view = bob.load_view(totals)
        changes = [ViewChange.update_comment("Orders and revenue per region, all days")]
        current = view.sql_for("trino")
        if current is None:
            changes.append(ViewChange.add_representation(SQLRepresentation("trino", _TOTALS_TRINO)))
        elif current != _TOTALS_TRINO:
            changes.append(ViewChange.update_representation("trino", _TOTALS_TRINO))
        view = bob.alter_view(totals, *changes)
    out.code(f'store.alter_view("{totals}", ViewChange.add_representation(("trino", "...")), '
             f'ViewChange.update_comment("..."))')
    out.command(f"viewstore --db <db> alter {totals} --add-representation trino \"SELECT ...\" "
                f"--comment \"Orders and revenue per region, all days\"")
    out.rows(f"{totals}: representations (version {view.current_version_id})", ["dialect", "sql"],
             [(r.dialect, r.sql) for r in view.representations])

    out.heading("Replace a definition, then roll it back (alice)")
    with _timed(result, "replace and rollback"):
        before = alice.load_view(daily).current_version_id
        sql(spark, alice, f"USE {namespace}")
        try:
            out.sql(_DAILY_REPLACEMENT)
            sql(spark, alice, _DAILY_REPLACEMENT)
            replaced = alice.load_view(daily)
        finally:
            spark.catalog.setCurrentDatabase("default")
        result.totals_replaced = _totals(spark, namespace)
        out.rows(f"{totals} now (reads {DAILY} version {replaced.current_version_id})",
                 ["region", "orders", "revenue"], result.totals_replaced)
        rolled = alice.rollback_view(daily, before)
        register_views(spark, alice, namespace).raise_for_failures()
        result.totals_rolled_back = _totals(spark, namespace)
    out.code(f'store.rollback_view("{daily}", {before}); register_views(spark, store, "{namespace}")')
    out.command(f"viewstore --db <db> rollback {daily} {before}")
    out.rows(f"{totals} after the rollback ({DAILY} back at version {rolled.current_version_id})",
             ["region", "orders", "revenue"], result.totals_rolled_back)
    if result.totals_rolled_back != result.totals_before:
        raise ViewStoreError("the rollback did not bring the original figures back")
    out.ok("the original figures are back")
    out.rows(f"{daily}: version log", ["when (UTC)", "version"],
             [(_time_text(e.timestamp_ms), e.version_id) for e in rolled.version_log])

    out.heading("Iceberg view metadata")
    with _timed(result, "export"):
        for name in (daily, totals):
            path = alice.export_iceberg(name)
            result.exported.append(path)
            meta = json.loads(path.read_text())
            current = next(v for v in meta["versions"] if v["version-id"] == meta["current-version-id"])
            out.rows(str(path), ["format-version", "current-version-id", "versions", "dialects"],
                     [(meta["format-version"], meta["current-version-id"], len(meta["versions"]),
                       ", ".join(r["dialect"] for r in current["representations"]))])
    out.command(f"viewstore --db <db> export {daily}")

    out.heading("Audit: who changed which view during this run, and how?")
    with _timed(result, "audit"):
        since = result.started_ms
        events = alice.events(since=since)
        counts = Counter((e.actor, e.view, e.type) for e in events)
        result.audit_python = sorted((a, v, t, n) for (a, v, t), n in counts.items())
        out.code(f"Counter((e.actor, e.view, e.type) for e in store.events(since={since}))")
        out.rows("answered with store.events", ["actor", "view", "type", "events"], result.audit_python)
        events_dataframe(spark, alice).createOrReplaceTempView("view_events")
        try:
            query = _AUDIT_SQL.format(since_ms=since)
            out.code('events_dataframe(spark, store).createOrReplaceTempView("view_events")')
            out.sql(query)
            result.audit_spark = [(r.actor, r.view, r.type, r.events) for r in spark.sql(query).collect()]
        finally:
            spark.catalog.dropTempView("view_events")
        out.rows("answered with Spark SQL over events_dataframe", ["actor", "view", "type", "events"],
                 result.audit_spark)
        if result.audit_spark != result.audit_python:
            raise ViewStoreError("the two audit answers differ")
        drift = check_views(spark, alice, namespace)
    out.ok("both answers agree")
    out.command(f"viewstore --db <db> audit --since {since}")
    if drift.ok:
        out.ok(f"drift check: {drift}")
    else:
        raise ValidationError(f"the demo's views drifted: {drift}")
    out.command("viewstore --db <db> spark check")
    out.say("  (run it where the views' tables are: the demo's lived in this session only, so a new "
            "session reports its views broken)")


