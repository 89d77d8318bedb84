"""``viewstore spark ...`` and ``viewstore demo``: the commands that need pyspark.

Both are loaded by the main CLI only when called (see ``_LAZY_COMMANDS`` in :mod:`viewstore.cli`).
A command that needs a SparkSession uses the one already active in the process (a notebook, a
test) and leaves it running; otherwise it starts one and stops it at the end.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

import click
from pyspark import SparkConf, SparkContext
from pyspark.find_spark_home import _find_spark_home
from pyspark.sql import SparkSession
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..cli import CliContext, folded_views, json_option, json_text, not_empty, pass_cli, usage_error
from ..errors import INSTALL_SPARK, EngineError, ViewAlreadyExistsError
from ..formats.cli import import_interrupted, print_import_report
from ..log import holds_nothing
from ..model import identifier_str, to_identifier
from ..tables import data_table, visible
from .demo import QUIET_LOG4J, jvm_environment, quiet_analysis_errors, run_demo, running_session
from .drift import check_views
from .failures import ENGINE_ERRORS, engine_error, summary, tagged
from .metastore import import_metastore_views, write_metastore_table
from .register import register_views

__all__ = ["spark", "demo"]

#: the engines whose record the command writes (an Iceberg record needs its metadata file written first)
METASTORE_ENGINES = ("trino", "spark", "hive", "flink")


def _active() -> SparkSession | None:
    """The session already running in the process, if any (:func:`~viewstore.spark.demo.running_session`).

    Raises:
        EngineError: its JVM is gone.
    """
    try:
        return running_session()
    except ENGINE_ERRORS as e:
        raise engine_error(None, e, "use the active SparkSession") from e


#: what Spark's launcher takes a master URL to begin with: it ends the JVM at any other, with a Java
#: stack trace on stderr before the Python error that the JVM exited, so such a value is refused first
_MASTER_PREFIXES = ("local", "spark", "k8s", "yarn")
_MASTER_FORMS = ("a Spark master is local, local[N] (N of 1 or more), local[*], local[N, F] (F failures a task "
                 "may have), local-cluster[N, C, M], spark://HOST:PORT, k8s://URL or yarn")
_BLANKS = r"[ \t\n\x0b\f\r]*"  # Java's \s (Python's takes other blanks too)
_NUMBER = rf"{_BLANKS}[0-9]+{_BLANKS}"  # a number of local-cluster[N, C, M], blanks about it
#: the local masters Spark's context reads: local, local[N], local[*], local[N, F] and local[*, F] (F
#: failures a task may have), local-cluster[N, C, M]; its launcher takes any master beginning with
#: "local", and the context logs an error with a Java stack trace at any other
_LOCAL_MASTER = re.compile(rf"local(\[(?P<threads>[0-9]+|\*)({_BLANKS},{_BLANKS}[0-9]+)?\])?"
                           rf"|local-cluster\[{_NUMBER},{_NUMBER},{_NUMBER}\]")
_JAVA_INT_MAX = 2**31 - 1  # the context reads each number as a Java int


def _master_refused(master: str) -> bool:
    """True if Spark refuses ``master`` by its form alone: a prefix its launcher does not take, or a
    local master not of a form its context reads, with a number past a Java int, or of no threads
    (``local[0]``: the context reads it, then refuses it)."""
    if not master.startswith(_MASTER_PREFIXES):
        return True
    if not master.startswith("local"):
        return False  # the cluster manager of a plugin may take other masters of these prefixes
    match = _LOCAL_MASTER.fullmatch(master)
    if match is None:
        return True
    threads = match["threads"]
    return (threads not in (None, "*") and int(threads) == 0) or any(
        int(number) > _JAVA_INT_MAX for number in re.findall("[0-9]+", master))


def _settings(master: str | None, confs: tuple[str, ...]) -> list[tuple[str, str]]:
    """--master as ``spark.master``, then the --conf options, as (key, value), checked before
    anything is opened (a usage error)."""
    if master and _master_refused(master):
        raise usage_error(f"bad --master {master!r}: {_MASTER_FORMS}")
    settings = [("spark.master", master)] if master else []
    for item in confs:
        key, sep, value = item.partition("=")
        if not sep:
            raise usage_error(f"bad --conf {item!r}: use KEY=VALUE")
        if key == "spark.master" and _master_refused(value):
            raise usage_error(f"bad --conf {item!r}: {_MASTER_FORMS}")
        settings.append((key, value))
    return settings


@contextmanager
def _session(master: str | None, confs: tuple[str, ...], hive: bool) -> Iterator[tuple[SparkSession, bool]]:
    """The active session, or a new one from the options (and spark-defaults.conf), stopped at the
    end of the block; True if new.

    PySpark starts the process's JVM with the settings of its first session, and the JVM keeps
    them as the defaults of every later session of the process. The JVM that a command starts is
    given the user's --master and --conf only (they may be settings a JVM takes only when it
    starts: the driver's memory, Java options, class path); the command's own settings (the Hive
    catalog of --hive, the application name, a temporary warehouse) go to its session alone, so a
    later session of the process (a second command run by ``main()``, the program's own) does not
    inherit them. See :func:`_start_jvm` for the JVM's logging.

    Raises:
        EngineError: the active session's JVM is gone, or Spark could not start a session.
    """
    active = _active()
    if active is not None:
        yield active, False
        return
    given = _settings(master, confs)  # --conf after --master, as before
    workdir = Path(tempfile.mkdtemp(prefix="viewstore-spark-"))
    try:
        with _logging_kept():
            try:
                _start_jvm(given, workdir)
                builder = SparkSession.builder.appName("viewstore").config("spark.ui.showConsoleProgress", "false")
                for key, value in given:
                    builder = builder.config(key, value)
                if hive:
                    builder = builder.enableHiveSupport()
                    if _hive_without_warehouse(dict(given)):
                        # Spark's default is the folder as a URI, which its Hive catalog escapes again:
                        # "a b/spark-warehouse" would be made as "a%20b/spark-warehouse"; a path is not
                        builder = builder.config("spark.sql.warehouse.dir", str(Path.cwd() / "spark-warehouse"))
                elif _in_memory_without_warehouse(dict(given)):
                    builder = builder.config("spark.sql.warehouse.dir", str(workdir / "warehouse"))
                session = builder.getOrCreate()
            except ENGINE_ERRORS as e:
                raise EngineError(f"Spark could not start a session: {summary(e)}") from e
            try:
                session.sparkContext.setLogLevel("ERROR")
                quiet_analysis_errors()
                yield session, True
            finally:
                try:
                    session.stop()
                except ENGINE_ERRORS:  # its JVM is gone: the error that says so is on its way
                    pass
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


@contextmanager
def _logging_kept() -> Iterator[None]:
    """The program's logging as it was before the block, again after it: a command quiets the
    session it starts (``setLogLevel("ERROR")``, PySpark's records of analysis errors), and both
    outlive the session, in the Python process and in a JVM that ran before the command (a JVM
    the block starts is the command's own, and stays quiet). Spark's ``setLogLevel`` also clears
    the level from which a PySpark console shows the JVM's records (WARN, while the root logger's
    is INFO), which no public call sets: it is put back where Spark keeps it."""
    from pyspark.logger import PySparkLogger

    analysis = PySparkLogger.getLogger("SQLQueryContextLogger")
    level = analysis.level
    jvm = SparkContext._jvm
    saved: tuple[Any, Any, Any, Any] | None = None
    if jvm is not None:
        try:
            logging_object = jvm.java.lang.Class.forName("org.apache.spark.internal.Logging$").getField(
                "MODULE$").get(None)
            log4j = jvm.org.apache.logging.log4j
            saved = (log4j.core.config.Configurator, log4j.LogManager.getRootLogger().getLevel(), logging_object,
                     logging_object.sparkShellThresholdLevel())
        except ENGINE_ERRORS:  # the JVM is gone: the session's start says so
            saved = None
    try:
        yield
    finally:
        analysis.setLevel(level)
        if saved is not None:
            configurator, root, logging_object, threshold = saved
            try:
                configurator.setRootLevel(root)
                getattr(logging_object, "sparkShellThresholdLevel_$eq")(threshold)
            except ENGINE_ERRORS:  # the JVM is gone
                pass


#: where a user's Java options may set log4j's configuration, which a JVM's own command line would override
_JAVA_OPTION_VARIABLES = ("SPARK_SUBMIT_OPTS", "JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS")


def _start_jvm(given: list[tuple[str, str]], workdir: Path) -> None:
    """Start the process's JVM with the user's settings ``given``, unless one runs already.

    The JVM listens on 127.0.0.1 unless ``SPARK_LOCAL_IP`` names an address. The variables it is
    started with are its own: the process's environment is left as it was.

    Its start-up says nothing on stderr but errors (log4j's notice of Spark's default profile, its
    level, Hadoop's warning of no native library) unless the user set up log4j: a log4j2 file in
    Spark's conf folder, or log4j in the Java options of the environment. The Java options of
    ``spark.driver.extraJavaOptions`` (--conf, spark-defaults.conf) come after these, so a log4j
    setting there wins by itself. The JVM's own warning of the incubator module Spark loads is the
    JVM's, before any setting applies: it stays.
    """
    if SparkContext._gateway is not None:
        return
    environment = {"SPARK_LOCAL_IP": os.environ.get("SPARK_LOCAL_IP", "127.0.0.1")}  # unless the user names one
    if not _user_log4j():
        log4j = workdir / "log4j2.properties"
        log4j.write_text(QUIET_LOG4J)
        before = os.environ.get("SPARK_SUBMIT_OPTS")
        environment["SPARK_SUBMIT_OPTS"] = f"-Dlog4j.configurationFile={log4j.as_uri()} {before or ''}".strip()
    with jvm_environment(environment):  # the JVM has its own copy: a later spark-submit of the program gets none
        SparkContext._ensure_initialized(conf=SparkConf(loadDefaults=False).setAll(given))


def _user_log4j() -> bool:
    """Whether the user set up log4j for a JVM Spark starts: log4j in the Java options of the
    environment, or a configuration file where log4j looks for one, Spark's conf folder (a
    ``.template`` is none)."""
    if any("log4j" in os.environ.get(variable, "") for variable in _JAVA_OPTION_VARIABLES):
        return True
    folder = Path(os.environ.get("SPARK_CONF_DIR") or Path(_find_spark_home()) / "conf")
    return any((folder / f"{name}.{ext}").is_file() for name in ("log4j2-test", "log4j2")
               for ext in ("properties", "yaml", "yml", "json", "jsn", "xml"))


def _hive_without_warehouse(given: dict[str, str]) -> bool:
    """Whether a session with --hive would have its warehouse where Spark puts it by default, in the
    working directory (a ``spark-warehouse`` folder): no warehouse set by the user's settings or the
    JVM's (spark-defaults.conf), neither Spark's nor Hive's, nor by a ``hive-site.xml`` the JVM
    finds (in Spark's conf folder, say). Asks the JVM, which runs by then."""
    defaults = SparkConf()  # the JVM's: spark-defaults.conf and the settings it was started with
    keys = ("spark.sql.warehouse.dir", "spark.hadoop.hive.metastore.warehouse.dir")
    if any(key in given or defaults.contains(key) for key in keys):
        return False
    jvm = SparkContext._jvm
    return jvm is None or jvm.org.apache.spark.util.Utils.getContextOrSparkClassLoader().getResource(
        "hive-site.xml") is None


def _in_memory_without_warehouse(given: dict[str, str]) -> bool:
    """Whether a session without --hive would keep an in-memory catalog with its warehouse in the
    working directory (Spark's default, a ``spark-warehouse`` folder): no catalog implementation
    and no warehouse set, by the user's settings or the JVM's (spark-defaults.conf)."""
    defaults = SparkConf()  # the JVM's: spark-defaults.conf and the settings it was started with
    implementation = given.get("spark.sql.catalogImplementation", defaults.get("spark.sql.catalogImplementation"))
    return implementation in (None, "in-memory") and "spark.sql.warehouse.dir" not in given \
        and not defaults.contains("spark.sql.warehouse.dir")


def _session_options(hive_use: str | None, printed: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The options of a command that starts a session: --master, --conf, --hive (unless ``hive_use``
    is None: a command whose session always has Hive support) and --json."""
    options: list[Callable[[Callable[..., Any]], Callable[..., Any]]] = [
        # '' is a usage error, as an empty --db is: it was taken as no --master (spark-defaults.conf's)
        click.option("--master", callback=not_empty,
                     help="Spark master, e.g. local[2] (default: spark-defaults.conf or local)."),
        click.option("--conf", "confs", multiple=True, metavar="KEY=VALUE", help="A Spark setting (repeatable)."),
        json_option(f"Print {printed} as JSON."),
    ]
    if hive_use is not None:
        options.insert(2, click.option("--hive", is_flag=True, help=f"Enable Hive support ({hive_use})."))

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        for option in reversed(options):
            fn = option(fn)
        return fn
    return decorate


@click.group(short_help="Work with the store from Spark (needs pyspark).", help=f"""\
Work with the store from Spark (needs pyspark; {INSTALL_SPARK}).

Examples:

\b
    viewstore spark check sales --master 'local[2]'
    viewstore spark check --json
    viewstore spark register --hive --prune
    viewstore --db views.db spark import sales
""")
def spark() -> None:
    """The ``viewstore spark`` group (its help is given above, built with the install hint)."""


@spark.command(short_help="Check that views still analyze in Spark with their stored columns.")
@click.argument("namespace", required=False)
@_session_options("to see the tables of a Hive metastore", "the drift report")
@pass_cli
@click.pass_context
def check(ctx: click.Context, cli: CliContext, namespace: str | None, master: str | None, confs: tuple[str, ...],
          hive: bool, as_json: bool) -> None:
    """Check that every view with Spark SQL still analyzes and still has its stored columns.

    Compared: the columns' count, names and types (Spark's own too where the view records them:
    a TINYINT, a collation), and that a column (or nested field) stored as not null cannot be null
    now; comments are not compared. The table lists only the views with a finding, those that no
    longer analyze (broken) first, then those that drifted; the views that match are folded into one
    count line below it. --json lists every view, each with its stored and analyzed columns as
    "name type", with "not null" after a required one. Exit code 0 when every view matches, 1 when
    a view drifted or no longer analyzes, so a pipeline can fail on it.

    Example:

    \b
        viewstore --db views.db spark check sales --hive --json
    """
    _report(ctx, cli, master, confs, hive, as_json, "checking",
            lambda session, store, progress: check_views(session, store, namespace, progress=progress),
            lambda report, own, in_memory: _print_drift(cli, report))


@spark.command(short_help="Register the stored views in the session catalog.")
@click.argument("namespace", required=False)
@click.option("--dialect", default="spark", show_default=True, help="The representation to register.")
@click.option("--refresh", is_flag=True, help="Create every copy again, even those that match the store.")
@click.option("--prune", is_flag=True,
              help="Drop this store's copies of views it no longer holds (never anything else).")
@_session_options("register into the Hive metastore", "the report")
@pass_cli
@click.pass_context
def register(ctx: click.Context, cli: CliContext, namespace: str | None, dialect: str, refresh: bool, prune: bool,
             master: str | None, confs: tuple[str, ...], hive: bool, as_json: bool) -> None:
    """Register every stored view (or those of NAMESPACE) as a view of the session catalog.

    This is register_views: copies that already match the store are left alone, a table is never
    replaced. With --prune, views this store registered earlier that it no longer holds (dropped,
    renamed, or without SQL in the dialect) are dropped; views made by hand, by other stores or by
    releases before store ids, and tables, never are. Copies outlive the command only in a
    persistent catalog: --hive (a Hive metastore), or one that spark-defaults.conf sets up.
    The copies left unchanged are folded into one count line below the table; --json lists every
    view. Exit code 1 when a view failed to register or a stale copy could not be dropped.

    Example:

    \b
        viewstore --db views.db spark register sales --hive --prune --json
    """
    def show(report: Any, own: bool, in_memory: bool) -> None:
        _print_registered(cli, report)
        if report.other_dialects:
            of = f" of {namespace}" if namespace is not None else ""
            cli.console.print(visible(f"no stored view{of} has SQL in the dialect {dialect!r}; theirs: "
                                      f"{', '.join(report.other_dialects)} (--dialect names the one to register)"))
        if own and in_memory and report.registered:  # (a run that made no copy has none to lose)
            cli.console.print("note: the session catalog was in memory, so these copies ended with the command "
                              "(use --hive, or a persistent catalog in spark-defaults.conf)")

    _report(ctx, cli, master, confs, hive, as_json, "registering",
            lambda session, store, progress: register_views(session, store, namespace, dialect=dialect,
                                                            refresh=refresh, prune=prune, progress=progress), show)


@spark.command("import", short_help="Import every view of a Hive metastore database.")
@click.argument("database")
@_session_options(None, "the import report")
@pass_cli
@click.pass_context
def import_(ctx: click.Context, cli: CliContext, database: str, master: str | None, confs: tuple[str, ...],
            as_json: bool) -> None:
    """Import every view of DATABASE in the Hive metastore into the store, as DATABASE.VIEW.

    This is import_metastore_views, in a session with Hive support (the metastore
    hive-site.xml or --conf spark.hadoop.hive.metastore.uris=... names; without one, Spark's
    embedded one in the working directory). Spark, Hive, Trino, Flink and Iceberg views are
    recognised. Each view is its own transaction; tables, and views already in the store, are
    skipped, so running it again imports only new views. The report is that of 'viewstore hms
    import': the views already in the store are folded into one count line, not listed; --json
    lists every view. Exit code 1 when a view failed (the others are imported) or the database
    does not exist. A store file is started only when a view is imported.

    Examples:

    \b
        viewstore --db views.db spark import sales
        viewstore --db views.db spark import sales --json
    """
    def call(session: SparkSession, store: Any, progress: Callable[[int, int], None]) -> Any:
        seen = [0, 0]  # the views settled, of how many tables and views (once the first is settled)

        def counted(done: int, total: int) -> None:
            seen[:] = [done, total]
            progress(done, total)

        try:
            return import_metastore_views(session, store, database, progress=counted)
        except KeyboardInterrupt as e:
            of = f" of {seen[1]}" if seen[1] else ""
            raise import_interrupted(f"{seen[0]}{of} tables and views of {database}", "view") from e

    _report(ctx, cli, master, confs, True, as_json, "importing", call,
            lambda report, own, in_memory: print_import_report(cli, report), create=True)


@spark.command("metastore-write", short_help="Write a view into the Hive metastore as an engine keeps it.")
@click.argument("identifier")
@click.option("--engine", required=True, type=click.Choice(METASTORE_ENGINES, case_sensitive=False),
              help="Whose record to write (as 'viewstore hms export' prints it).")
@click.option("--replace", is_flag=True, help="Replace a view of that name (never a table).")
@_session_options("the metastore to write to",
                  '{"identifier": ..., "written": DATABASE.NAME, "engine": ..., "replace": true or false}')
@pass_cli
def metastore_write(cli: CliContext, identifier: str, engine: str, replace: bool, master: str | None,
                    confs: tuple[str, ...], hive: bool, as_json: bool) -> None:
    """Write the record ENGINE keeps for the stored view IDENTIFIER into the session's Hive metastore.

    This is write_metastore_table with the record of 'viewstore hms export': the view lands in the
    metastore database of its namespace, named as in the store, exactly as the engine writes it.
    The database must exist; a view of that name is an error unless --replace, and a table is never
    replaced. The metastore is the session's: give --hive (or set one up in spark-defaults.conf).

    Examples:

    \b
        viewstore spark metastore-write sales.d --engine trino --hive
        viewstore spark metastore-write sales.d --engine spark --replace --json
    """
    _settings(master, confs)  # a command line that cannot be right is said before the store is opened
    record = cli.store().export_hms(identifier, engine.lower())  # a view the engine cannot keep: before Spark
    written = f"{record['dbName']}.{record['tableName']}"
    with _session(master, confs, hive) as (session, own):
        try:
            write_metastore_table(session, record, replace=replace)
        except ViewAlreadyExistsError as e:  # the API's message names replace=True: say the option here
            raise ViewAlreadyExistsError(f"a view {written} exists in the metastore (--replace replaces it)") from e
    if as_json:
        # named under "identifier" as every other report names its view; "written" as before, for scripts reading it
        click.echo(json_text({"identifier": identifier_str(to_identifier(identifier)), "written": written,
                              "engine": engine.lower(), "replace": replace}))
    else:
        cli.console.print(visible(f"wrote {written} to the metastore as {engine.lower()} keeps it"))


def _report(ctx: click.Context, cli: CliContext, master: str | None, confs: tuple[str, ...], hive: bool,
            as_json: bool, label: str, call: Callable[[SparkSession, Any, Callable[[int, int], None]], Any],
            show: Callable[[Any, bool, bool], None], *, create: bool = False) -> None:
    """Run ``call`` (a check, a registration or an import) in a session, with a progress bar
    (``label``) on a terminal, print its report, and exit with 1 unless it is ``ok``; a session this
    command started is stopped afterwards. ``call`` gets the store; with ``create``, where the path
    holds no store yet, a function that starts one there (called only when something is written)."""
    _settings(master, confs)  # a command line that cannot be right is said before the store is opened
    store: Any
    if create and holds_nothing(cli.db) is not None:
        cli.check_environment()  # VIEWSTORE_DB='' is said now, not once Spark has started
        store = lambda: cli.store(create=True)  # noqa: E731 - a store file only for a view to import
    else:
        store = cli.store()  # a mistyped --db (or a file that is no store) fails before Spark starts
    with _session(master, confs, hive) as (session, own):
        try:
            with cli.progress(label) as progress:
                report = call(session, store, progress)
            in_memory = session.conf.get("spark.sql.catalogImplementation", "in-memory") == "in-memory"
        except ENGINE_ERRORS as e:
            raise engine_error(session, e, "read the session's settings") from e
    cli.failing = not report.ok
    if as_json:
        click.echo(json_text(report.to_dict()))
    else:
        show(report, own, in_memory)
    if not report.ok:
        ctx.exit(1)


def _print_registered(cli: CliContext, report: Any) -> None:
    colours = {"registered": "green", "skipped": "yellow", "failed": "red", "pruned": "cyan"}
    table = data_table("view", "outcome", "details", title=str(report), names=["view"])
    unchanged = set(report.unchanged)  # counted below the table, not listed (--json lists them)
    for name in report.registered:
        if name not in unchanged:
            table.add_row(name, Text("registered", style=colours["registered"]), "")
    for skipped in report.skipped:
        table.add_row(skipped.identifier, Text("skipped", style=colours["skipped"]), skipped.detail)
    for failed in report.failed:
        details = tagged(failed.condition, (failed.message.splitlines() or [""])[0][:200])
        if failed.action == "prune":
            details = f"could not drop the stale copy: {details}"
        table.add_row(failed.identifier, Text("failed", style=colours["failed"]), details)
    for name in report.pruned:
        table.add_row(name, Text("pruned", style=colours["pruned"]),
                      "a copy this store made of a view it no longer holds")
    _print_folded(cli, table, report, len(unchanged), "already registered, left unchanged")


def _print_folded(cli: CliContext, table: Table, report: Any, folded: int, what: str) -> None:
    """A report's table, or its summary alone when each of its views is among the ``folded`` (the
    table would have no row), and the line counting those, ``what`` they are, not listed (--json
    lists them)."""
    if table.row_count or not folded:
        cli.console.print(table)
    else:
        cli.console.print(str(report))
    if folded:
        cli.console.print(folded_views(what, folded))


#: the order of a check's findings in its table: the views that no longer analyze first
_FINDINGS = {"broken": 0, "drifted": 1}


def _print_drift(cli: CliContext, report: Any) -> None:
    colours = {"drifted": "yellow", "broken": "red"}
    table = data_table("view", "status", "details", title=str(report), names=["view"])
    # the views with a finding, broken before drifted, each kind in the report's order (sorted is
    # stable); the views that match are counted below the table, not listed (--json lists them)
    for view in sorted((v for v in report.views if v.status != "ok"), key=lambda v: _FINDINGS[v.status]):
        details = "\n".join(view.problems)
        if view.condition:
            details = tagged(view.condition, details.split("\n")[0][:200])
        table.add_row(view.identifier, Text(view.status, style=colours[view.status]), details)
    _print_folded(cli, table, report, len(report.views) - table.row_count, "ok, matching their stored columns")
    if report.skipped:
        cli.console.print(visible(f"not checked (no spark representation): {', '.join(report.skipped)}"))


@click.command(short_help="Run the end-to-end demo on a local SparkSession.")
@click.option("--namespace", default="sales", show_default=True, help="The database for the demo's tables and views.")
@pass_cli
def demo(cli: CliContext, namespace: str) -> None:
    """Run the end-to-end demo on a local SparkSession (about half a minute).

    Sample tables, two views defined in Spark SQL (one reading the other), a new driver
    registering them, a trino representation and a comment, a replace and its rollback, Iceberg
    metadata export, and one audit question asked in Python and in Spark SQL. The store is a
    temporary file unless --db (or VIEWSTORE_DB) names one.

    Example:

    \b
        viewstore --db demo.db demo
    """
    cli.check_environment()  # VIEWSTORE_DB='' is a mistake here too, not a reason to use a temporary file
    # the demo's own text uses rich markup; cli.console prints data and reads none
    run_demo(Console(), db=cli.db if cli.db_explicit else None, spark=_active(), namespace=namespace)
