"""Failures of the engine itself, provoked for real: each is an EngineError that says what happened.

The run's own session must survive, so the broken sessions live in spawned processes: one whose
Hive metastore is the run's own Derby database, which the run's session holds (Derby lets one
process boot it); one whose session is stopped, then one whose JVM is killed. Each process tries
every public call of viewstore.spark (and the CLI) and reports what each raised.
"""

from __future__ import annotations

import os
import re
import sqlite3
from pathlib import Path
from typing import Any, Callable

import pytest

from viewstore import Column, SQLRepresentation, ViewStore, formats
from viewstore.formats import ViewDefinition

from spawned import spawned_results

pytestmark = pytest.mark.spark

#: Hive retries a metastore that fails to start ten times, two seconds apart: once, at once, is enough here
_FAIL_FAST = ("--conf spark.hadoop.hive.hmshandler.retry.attempts=0 "
              "--conf spark.hadoop.hive.hmshandler.retry.interval=1ms pyspark-shell")


def _outcome(call: Callable[[], Any]) -> dict[str, Any]:
    """What a call did: the error's class, message and chain of causes (their classes, from the
    error's ``__cause__`` down), or the class of what it returned."""
    from viewstore import ViewStoreError

    try:
        value = call()
    except Exception as error:  # noqa: BLE001 - reporting any error is the point
        causes, cause = [], error.__cause__
        while cause is not None:
            causes.append(type(cause).__name__)
            cause = cause.__cause__
        return {"raised": type(error).__name__, "typed": isinstance(error, ViewStoreError), "message": str(error),
                "causes": causes}
    return {"returned": type(value).__name__}


def _cli(*args: str) -> dict[str, Any]:
    from click.testing import CliRunner

    from viewstore.cli import main

    result = CliRunner().invoke(main, list(args))
    return {"exit": result.exit_code, "output": result.output,
            "escaped": None if result.exception is None or isinstance(result.exception, SystemExit)
            else type(result.exception).__name__}


def _calls(spark: Any, store: Any, ns: str) -> dict[str, Callable[[], Any]]:
    """Every public call of viewstore.spark that works with a session, on views of ``ns``."""
    import viewstore.spark as vs

    return {
        "register_views": lambda: vs.register_views(spark, store),
        "check_views": lambda: vs.check_views(spark, store),
        "create_view": lambda: vs.create_view(spark, store, f"{ns}.c", f"SELECT x FROM {ns}.a"),
        "sql create": lambda: vs.sql(spark, store, f"CREATE VIEW {ns}.d AS SELECT 1 AS x"),
        "sql set properties": lambda: vs.sql(spark, store, f"ALTER VIEW {ns}.a SET TBLPROPERTIES ('k' = 'v')"),
        "sql rename": lambda: vs.sql(spark, store, f"ALTER VIEW {ns}.b RENAME TO {ns}.renamed"),
        "sql drop": lambda: vs.sql(spark, store, f"DROP VIEW {ns}.b"),
        "events_dataframe": lambda: vs.events_dataframe(spark, store),
        "read_metastore_table": lambda: vs.read_metastore_table(spark, ns, "a"),
        "import_metastore_views": lambda: vs.import_metastore_views(spark, store, ns),
        "write_metastore_table": lambda: vs.write_metastore_table(spark, formats.encode(ViewDefinition(
            dialect="hive", sql="SELECT 1 AS x", columns=(Column("x", "int"),), database=ns, name="written"), "hive")),
        "attach": lambda: vs.attach(spark, store, "vs_broken"),
        "detach": lambda: vs.detach(spark, "vs_broken"),
    }


def _in_held_metastore(root: str, store_path: str, old_path: str, ns: str, queue: Any) -> None:
    """A Hive session on the run's own metastore (the run holds its Derby database): every call."""
    os.environ["PYSPARK_SUBMIT_ARGS"] = _FAIL_FAST
    from spark_settings import build_session
    from viewstore.spark import events_dataframe as vs_events_dataframe
    from viewstore.spark import register_views
    from viewstore.spark import sql as vs_sql

    spark = build_session(Path(root))
    with ViewStore(store_path, actor="child") as store, ViewStore(old_path, actor="child") as old:
        events = store.event_count()
        calls = _calls(spark, store, ns)
        outcomes = {name: _outcome(calls[name]) for name in
                    ("register_views", "check_views", "create_view", "sql create", "sql set properties", "sql rename",
                     "sql drop", "read_metastore_table", "import_metastore_views", "write_metastore_table", "attach")}
        spark.sql("CREATE TEMPORARY VIEW temporary_one AS SELECT 1 AS x")  # the metastore has no part in it
        outcomes["sql drop of a temporary view"] = _outcome(lambda: vs_sql(spark, store, "DROP VIEW temporary_one"))
        outcomes["register_views prune, a file made before ids"] = _outcome(
            lambda: register_views(spark, old, prune=True))
        outcomes["cli check"] = _cli("--db", store_path, "spark", "check")
        import viewstore.spark.audit as audit

        read, process = audit.events_arrow, spark.sparkContext._gateway.proc

        def read_then_lost(*args: Any, **kwargs: Any) -> Any:  # the JVM dies between the log's read and Spark
            table = read(*args, **kwargs)
            process.kill()
            process.wait()
            return table

        audit.events_arrow = read_then_lost  # last: the session is gone after it
        outcomes["events_dataframe, lost partway"] = _outcome(lambda: vs_events_dataframe(spark, store))
        audit.events_arrow = read
        queue.put({"held": {"outcomes": outcomes, "events written": store.event_count() - events,
                            "old file's id": old.existing_store_id(), "root": root}})


def _in_stopped_then_lost_session(root: str, store_path: str, ns: str, queue: Any) -> None:
    """A session that is stopped, then one whose JVM is killed: every call, in each."""
    from spark_settings import build_session
    from viewstore.spark import register_views

    import viewstore.spark.register as register

    spark = build_session(Path(root) / "stopped", hive=False)
    with ViewStore(store_path, actor="child") as store:
        from viewstore.spark import attach, detach

        attach(spark, store, "vs_stopped")
        events = store.event_count()
        made = register._run_verbatim

        def made_then_stopped(spark: Any, statement: str) -> Any:  # the session ends after the first copy
            result = made(spark, statement)
            spark.stop()
            return result

        register._run_verbatim = made_then_stopped
        stopped = {"register_views, stopped partway": _outcome(lambda: register_views(spark, store))}
        register._run_verbatim = made
        stopped.update({name: _outcome(call) for name, call in _calls(spark, store, ns).items()
                        if name in ("register_views", "check_views", "create_view", "sql create", "sql set properties",
                                    "events_dataframe", "read_metastore_table", "import_metastore_views",
                                    "write_metastore_table", "attach")})
        try:  # the first disconnects the store, the second finds none
            stopped["detach, twice"] = {"returned": [detach(spark, "vs_stopped") for _ in range(2)]}
        except Exception as error:  # noqa: BLE001 - reporting any error is the point
            stopped["detach, twice"] = {"raised": type(error).__name__, "message": str(error)}
        stopped["cli check, a session that cannot start"] = _cli("--db", store_path, "spark", "check",
                                                                 "--master", "local-cluster[1,1,512]")
        stopped_events = store.event_count() - events

        import viewstore.spark.metastore as metastore
        from viewstore.spark import import_metastore_views

        spark = build_session(Path(root) / "lost")  # a Hive metastore of its own
        assert register_views(spark, store).ok
        process = spark.sparkContext._gateway.proc
        read = metastore._read

        def read_then_lost(*args: Any) -> Any:  # the JVM dies after the first record is read
            record = read(*args)
            process.kill()
            process.wait()
            return record

        metastore._read = read_then_lost
        with ViewStore(Path(root) / "imported.db", actor="child") as imported:
            lost = {"import_metastore_views, lost partway":
                    _outcome(lambda: import_metastore_views(spark, imported, ns))}
            metastore._read = read
            lost.update({name: _outcome(call) for name, call in _calls(spark, store, ns).items()})
            lost["cli check"] = _cli("--db", store_path, "spark", "check")
            lost["cli demo"] = _cli("--db", store_path, "demo")
            queue.put({"stopped": {"outcomes": stopped, "events written": stopped_events},
                       "lost": {"outcomes": lost, "events written": store.event_count() - events - stopped_events,
                                "imported": [".".join(i) for i in imported.list_views()]}})


def _scenario(kind: str, *args: Any) -> None:
    """One child process: the held metastore, or the stopped then lost session (both run at once)."""
    (_in_held_metastore if kind == "held" else _in_stopped_then_lost_session)(*args)


def _store(path: Path, ns: str) -> Path:
    with ViewStore(path, actor="alice") as store:
        store.create_view(f"{ns}.a", columns=[Column("x", "int", nullable=False)],
                          representations=[SQLRepresentation("spark", "SELECT 1 AS x")], default_namespace=ns)
        store.create_view(f"{ns}.b", columns=[Column("x", "int", nullable=False)],
                          representations=[SQLRepresentation("spark", f"SELECT x FROM {ns}.a")], default_namespace=ns)
    return path


@pytest.fixture(scope="module")
def broken(spark, tmp_path_factory):
    """What every call did in each broken session, by scenario: held, stopped, lost."""
    tmp = tmp_path_factory.mktemp("broken")
    url = spark.conf.get("spark.hadoop.javax.jdo.option.ConnectionURL")
    root = re.fullmatch(r"jdbc:derby:;databaseName=(.+)/metastore_db;create=true", url).group(1)
    ns = "broken_ns"
    held_store, lost_store, old = _store(tmp / "held.db", ns), _store(tmp / "lost.db", ns), _store(tmp / "old.db", ns)
    conn = sqlite3.connect(old)
    conn.execute("DELETE FROM meta WHERE key = 'store_id'")  # a file as a release before store ids left it
    conn.commit()
    conn.close()
    results = spawned_results(_scenario, [("held", root, str(held_store), str(old), ns),
                                          ("stopped", str(tmp), str(lost_store), ns)], timeout=300)
    return {scenario: result for each in results for scenario, result in each.items()}


def _engine_errors(outcomes: dict[str, Any], names: list[str], says: str) -> None:
    for name in names:
        outcome = outcomes[name]
        assert outcome.get("raised") == "EngineError", (name, outcome)
        assert says in outcome["message"], (name, outcome["message"])


def test_a_metastore_held_by_another_process_is_an_engine_error_that_names_the_cause(broken):
    held = broken["held"]
    # view DDL the store decides first (properties, rename, drop) is refused before the store is written
    _engine_errors(held["outcomes"], ["register_views", "check_views", "create_view", "sql create",
                                      "sql set properties", "sql rename", "sql drop",
                                      "read_metastore_table", "import_metastore_views", "write_metastore_table",
                                      "attach"],
                   "the session's metastore does not answer")
    # Hive hides Derby's own reason (another process has booted the database): the message names the suspect
    assert f"embedded Derby database, {held['root']}/metastore_db, which one process at a time can use: is " \
           f"another Spark session using it?" in held["outcomes"]["check_views"]["message"]
    assert held["events written"] == 0
    assert held["outcomes"]["sql drop of a temporary view"] == {"returned": "DataFrame"}  # only stored views are asked


def test_an_engine_failure_told_after_sparks_error_has_that_error_as_its_cause(broken):
    """raise_engine_failure raises its EngineError from Spark's error: a traceback (a log's, a
    debugger's) goes on down to what Spark raised, and what the JVM said."""
    check = broken["held"]["outcomes"]["check_views"]
    assert check["message"].startswith("cannot check view broken_ns.a: the session's metastore does not answer")
    assert check["causes"] == ["AnalysisException"]
    stopped = broken["stopped"]["outcomes"]["register_views, stopped partway"]  # "(before that: ...)" wraps it
    assert stopped["message"].startswith("cannot register view broken_ns.b: the SparkSession is stopped")
    assert stopped["causes"] == ["EngineError", "Py4JJavaError"]


def test_prune_on_a_failing_metastore_writes_no_store_id(broken):
    held = broken["held"]
    _engine_errors(held["outcomes"], ["register_views prune, a file made before ids"],
                   "the session's metastore does not answer")
    assert held["old file's id"] is None


def test_events_dataframe_that_loses_the_jvm_after_the_log_is_read_says_what_it_was_moving(broken):
    """Past the check of a live session, the engine's failure is named by what the call was doing
    (its engine_calls' words), with py4j's error as its cause."""
    outcome = broken["held"]["outcomes"]["events_dataframe, lost partway"]
    assert outcome["raised"] == "EngineError" and len(outcome["causes"]) == 1, outcome
    assert re.fullmatch(r"cannot move the event log into Spark: the SparkSession's JVM is gone \(py4j cannot "
                        r"reach it: .+\); start a new session", outcome["message"], re.S), outcome


def _stopped_while_the_log_moves(root: str, queue: Any) -> None:
    """A Hive session of its own, stopped (not killed) once events_dataframe has moved the log's rows
    into its JVM and before the DataFrame is made of them: what the call did."""
    from pyspark import SparkContext
    from spark_settings import build_session
    from viewstore.spark import events_dataframe

    spark = build_session(Path(root))
    store = ViewStore(_store(Path(root) / "moved.db", "moved_ns"), actor="child")
    moved = SparkContext._serialize_to_jvm

    def moved_then_stopped(context: Any, *args: Any, **kwargs: Any) -> Any:  # as another thread may stop it
        result = moved(context, *args, **kwargs)
        spark.stop()
        return result

    SparkContext._serialize_to_jvm = moved_then_stopped
    queue.put(_outcome(lambda: events_dataframe(spark, store)))


def test_events_dataframe_of_a_hive_session_stopped_while_the_log_moves_says_it_is_stopped(tmp_path):
    """PySpark still makes the DataFrame in a session stopped while the rows were moved, one that
    can never be read: the call raised nothing and returned it."""
    [outcome] = spawned_results(_stopped_while_the_log_moves, [(str(tmp_path),)], timeout=300)
    assert outcome.get("raised") == "EngineError", outcome
    assert outcome["message"] == ("cannot move the event log into Spark: the SparkSession is stopped; "
                                  "start a new one")


def test_the_cli_reports_a_failing_metastore_in_one_line(broken):
    cli = broken["held"]["outcomes"]["cli check"]
    assert cli["exit"] == 1 and cli["escaped"] is None, cli
    assert cli["output"].startswith("error: cannot check view broken_ns.a: the session's metastore does not answer")
    assert len(cli["output"].strip().splitlines()) == 1


def test_a_stopped_session_says_so(broken):
    stopped = broken["stopped"]
    # create_view and check_views as well: each works in a clone of the session, and Spark's
    # cloneSession refuses a stopped SparkContext before anything is analyzed or stored
    _engine_errors(stopped["outcomes"], ["register_views", "check_views", "create_view", "sql create",
                                         "sql set properties", "events_dataframe", "read_metastore_table",
                                         "import_metastore_views", "write_metastore_table", "attach"],
                   "the SparkSession is stopped")
    assert stopped["events written"] == 0


def test_detach_disconnects_the_store_of_a_stopped_session(broken):
    assert broken["stopped"]["outcomes"]["detach, twice"] == {"returned": [True, False]}


def test_register_views_stopped_partway_says_how_far_it_got(broken):
    outcome = broken["stopped"]["outcomes"]["register_views, stopped partway"]
    assert outcome.get("raised") == "EngineError", outcome
    assert outcome["message"] == ("cannot register view broken_ns.b: the SparkSession is stopped; start a new one "
                                  "(before that: 1 view(s) registered; registering again finishes the work)")


def test_the_cli_reports_a_session_that_cannot_start_in_one_line(broken):
    cli = broken["stopped"]["outcomes"]["cli check, a session that cannot start"]
    assert cli["exit"] == 1 and cli["escaped"] is None, cli
    # a master of a form Spark reads, which it refuses at the start (a worker of less memory than an executor's)
    assert cli["output"].startswith("error: Spark could not start a session:") and "512 MiB/worker" in cli["output"]


def test_import_metastore_views_that_loses_the_jvm_partway_says_how_far_it_got(broken):
    lost = broken["lost"]
    outcome = lost["outcomes"]["import_metastore_views, lost partway"]
    assert outcome.get("raised") == "EngineError", outcome
    assert outcome["message"].startswith("cannot read broken_ns.b from the metastore: the SparkSession's JVM is gone")
    assert outcome["message"].endswith("(before that: 1 view(s) imported; importing again picks up the rest)")
    assert lost["imported"] == ["broken_ns.a"]  # its own transaction: it stays


def test_a_lost_jvm_says_so_in_every_call(broken):
    lost = broken["lost"]
    calls = [name for name in lost["outcomes"] if not name.startswith("cli ") and "partway" not in name]
    _engine_errors(lost["outcomes"], calls, "the SparkSession's JVM is gone")
    assert lost["events written"] == 0
    for command in ("cli check", "cli demo"):
        cli = lost["outcomes"][command]
        assert cli["exit"] == 1 and cli["escaped"] is None, cli
        assert cli["output"].startswith("error: cannot use the active SparkSession: the SparkSession's JVM is gone")



# -- telling a refusal from a failure of the engine, in the run's own (well) session -----------------


def test_a_refusal_is_the_requests_and_an_error_of_pyspark_itself_the_engines(spark):
    from pyspark.errors import AnalysisException, PySparkValueError

    from viewstore.spark.failures import environment_failure, summary

    with pytest.raises(AnalysisException) as refused:  # Spark's answer: the query is the caller's
        spark.sql("SELECT no_such_column")
    assert environment_failure(spark, refused.value) is None
    assert re.match(r"\[UNRESOLVED_COLUMN\.[A-Z_]+\] ", summary(refused.value))
    assert summary(refused.value).count("[UNRESOLVED_COLUMN") == 1  # Spark's own tag, not repeated
    with pytest.raises(PySparkValueError) as own:  # PySpark's, never Spark's answer: the engine's
        spark.createDataFrame([])
    assert environment_failure(spark, own.value) == f"Spark failed: {summary(own.value)}"


def test_a_java_error_spark_passes_on_without_a_condition_says_its_class_and_message(spark, store, ns):
    """PySpark gives the text of Spark's own errors only: a Java one it raises as its own class (a path
    Hadoop refuses is an IllegalArgumentException) is told by the Java exception's class and message."""
    from pyspark.errors import IllegalArgumentException

    from viewstore import ValidationError
    from viewstore.spark import sql as vs_sql
    from viewstore.spark.failures import condition, explanation, summary

    statement = f"CREATE TABLE {ns}.t (a INT) USING parquet LOCATION ''"
    with pytest.raises(IllegalArgumentException) as raised:
        spark.sql(statement)
    assert raised.value.getCondition() is None and raised.value.getMessage() == ""  # PySpark's own say
    assert (condition(raised.value), explanation(raised.value)) == (
        "IllegalArgumentException", "Can not create a Path from an empty string")
    assert summary(raised.value) == "[IllegalArgumentException] Can not create a Path from an empty string"
    events = store.event_count()
    with pytest.raises(ValidationError) as refused:
        vs_sql(spark, store, statement)
    assert str(refused.value) == ("Spark refused the statement: [IllegalArgumentException] "
                                  "Can not create a Path from an empty string")
    assert store.event_count() == events and not spark.catalog.tableExists(f"{ns}.t")


def test_a_parse_error_keeps_its_pointer_into_the_sql_and_leaves_out_the_jvm_stack_trace(spark, store, ns):
    """With spark.sql.pyspark.jvmStacktrace.enabled (set to debug), PySpark adds the JVM's stack trace
    to an error's text: a refusal of a statement says what it says without it."""
    from viewstore import ValidationError
    from viewstore.spark import sql as vs_sql

    at = len(f"CREATE VIEW {ns}.v AS ")
    expected = ("cannot parse the statement: [PARSE_SYNTAX_ERROR] Syntax error at or near 'SELEC'. SQLSTATE: "
                f"42601 (line 1, pos {at})\n\n== SQL ==\nCREATE VIEW {ns}.v AS SELEC 1\n{'-' * at}^^^")
    for enabled in ("false", "true"):
        spark.conf.set("spark.sql.pyspark.jvmStacktrace.enabled", enabled)
        try:
            with pytest.raises(ValidationError) as refused:
                vs_sql(spark, store, f"CREATE VIEW {ns}.v AS SELEC 1")
        finally:
            spark.conf.unset("spark.sql.pyspark.jvmStacktrace.enabled")
        assert str(refused.value) == expected, enabled
    assert store.event_count() == 0


def test_pyspark_logs_no_record_of_an_error_a_call_here_raises_or_reports_and_the_callers_own_as_before(
        spark, store, ns):
    """PySpark logs each error with a query context as it makes it, caught or not: inside a call here
    (a report of failed views, a refusal raised as a ValidationError) that record is dropped; an error
    of the caller's own spark.sql is logged as PySpark logs it."""
    import logging

    from pyspark.errors import AnalysisException
    from pyspark.logger import PySparkLogger

    from viewstore.errors import ValidationError
    from viewstore.spark import check_views, create_view, register_views

    class Kept(logging.Handler):
        def __init__(self) -> None:
            super().__init__()
            self.messages: list[str] = []

        def emit(self, record: logging.LogRecord) -> None:
            self.messages.append(record.getMessage())

    kept = Kept()
    logger = PySparkLogger.getLogger("SQLQueryContextLogger")  # PySpark's class, which its calls need
    level = logger.level
    logger.setLevel(logging.ERROR)  # the demo's tests set it higher for their session
    logger.addHandler(kept)
    try:
        spark.sql(f"CREATE DATABASE {ns}")
        store.create_view(f"{ns}.broken", columns=[Column("x", "int")],
                          representations=[("spark", "SELECT no_such_column FROM (SELECT 1 AS a)")],
                          default_namespace=ns)
        report = register_views(spark, store, ns)
        assert [(f.identifier, f.condition) for f in report.failed] == [
            (f"{ns}.broken", "UNRESOLVED_COLUMN.WITH_SUGGESTION")]
        assert [v.status for v in check_views(spark, store, ns).views] == ["broken"]
        with pytest.raises(ValidationError, match="TABLE_OR_VIEW_NOT_FOUND"):
            create_view(spark, store, f"{ns}.refused", "SELECT * FROM no_such_table_here")
        assert kept.messages == []
        with pytest.raises(AnalysisException):
            spark.sql("SELECT * FROM no_such_table_here")
        assert len(kept.messages) == 1 and kept.messages[0].startswith("[TABLE_OR_VIEW_NOT_FOUND]")
        logger.filters.clear()  # taken off: the next call puts the filter back
        with pytest.raises(ValidationError, match="TABLE_OR_VIEW_NOT_FOUND"):
            create_view(spark, store, f"{ns}.refused", "SELECT * FROM no_such_table_here")
        assert len(kept.messages) == 1
    finally:
        logger.removeHandler(kept)
        logger.setLevel(level)


def test_a_query_context_logger_standing_as_a_placeholder_of_a_childs_is_made_as_pyspark_makes_it(spark, store):
    """A logger under PySpark's name made first (``DataFrameQueryContextLogger.app``) leaves a
    placeholder where PySpark's own goes: a call makes PySpark's logger there, with the filter."""
    import logging

    from pyspark.logger import PySparkLogger

    from viewstore.spark import check_views
    from viewstore.spark.failures import _FILTER

    loggers = logging.Logger.manager.loggerDict
    name = "DataFrameQueryContextLogger"
    saved = loggers.pop(name, None)  # none yet when no call has made it in this process
    try:
        logging.getLogger(f"{name}.app")
        assert isinstance(loggers[name], logging.PlaceHolder)
        assert check_views(spark, store).ok
        assert isinstance(loggers[name], PySparkLogger) and _FILTER in loggers[name].filters
    finally:
        loggers.pop(f"{name}.app", None)
        if saved is not None:
            loggers[name] = saved


def test_a_lost_connection_to_the_jvm_is_the_engines_whatever_the_session_says(spark):
    from py4j.protocol import Py4JNetworkError

    from viewstore.spark.failures import environment_failure

    reason = environment_failure(spark, Py4JNetworkError("Answer from Java side is empty"))
    assert reason == ("the SparkSession's JVM is gone (py4j cannot reach it: Answer from Java side is empty); "
                      "start a new session")
    for lost in (ConnectionRefusedError(111, "Connection refused"), ConnectionResetError("Connection reset by peer")):
        assert environment_failure(spark, lost) == (f"the SparkSession's JVM is gone (py4j cannot reach it: {lost}); "
                                                    "start a new session")
    assert environment_failure(spark, BrokenPipeError()) == (  # one that says nothing is named by its class
        "the SparkSession's JVM is gone (py4j cannot reach it: BrokenPipeError); start a new session")


def test_a_java_error_of_no_condition_is_named_by_its_class_and_told_by_its_message_or_its_name(spark):
    """What py4j raises for a Java exception that is none of Spark's (a metastore client's, say)."""
    from py4j.protocol import Py4JJavaError
    from pyspark.errors.exceptions.captured import IllegalArgumentException

    from viewstore.spark.failures import condition, explanation, summary

    jvm = spark._jvm
    error = Py4JJavaError("An error occurred", jvm.java.lang.IllegalStateException("the metastore is closed"))
    assert (condition(error), explanation(error)) == ("IllegalStateException", "the metastore is closed")
    assert summary(error) == "[IllegalStateException] the metastore is closed"
    assert explanation(Py4JJavaError("An error occurred", jvm.java.lang.NullPointerException())) \
        == "java.lang.NullPointerException"
    captured = IllegalArgumentException(origin=jvm.java.lang.IllegalArgumentException("no condition"))  # as PySpark
    assert condition(captured) == "IllegalArgumentException"  # makes it of Java's own, which has no condition


def test_a_spark_error_left_as_a_java_error_is_named_by_its_condition_or_else_by_its_class(spark):
    """A SparkException that PySpark does not convert reaches the caller as py4j's Java error: its
    own condition leads it, and one without a condition (getCondition is null) is named by its
    class, not by the text of that null."""
    from py4j.protocol import Py4JJavaError

    from viewstore.spark.failures import condition, summary

    jvm = spark._jvm
    own = Py4JJavaError("An error occurred", jvm.org.apache.spark.SparkException.internalError("boom"))
    assert condition(own) == "INTERNAL_ERROR" and summary(own).startswith("[INTERNAL_ERROR] ")
    plain = Py4JJavaError("An error occurred", jvm.org.apache.spark.SparkException("no condition here"))
    assert condition(plain) == "SparkException"
    assert summary(plain) == "[SparkException] no condition here"


def test_the_root_cause_of_a_failure_is_the_innermost_message_found_down_its_causes(spark):
    """Down getCause(), a SQL exception's getNextException(), past causes without a message; a cycle of
    causes ends."""
    import threading

    from py4j.protocol import Py4JJavaError

    from viewstore.spark.failures import _root_cause

    jvm = spark._jvm
    booted = jvm.java.lang.IllegalStateException("Another instance of Derby may have already booted the database")
    wrapped = jvm.java.lang.RuntimeException("Unable to instantiate the client",
                                             jvm.java.lang.RuntimeException("Failed to start database", booted))
    assert _root_cause(Py4JJavaError("o", wrapped)) == "Another instance of Derby may have already booted the database"
    chained = jvm.java.sql.SQLException("Failed to start database")
    chained.setNextException(jvm.java.sql.SQLException("XSDB6: Another instance of Derby"))
    assert _root_cause(Py4JJavaError("o", chained)) == "XSDB6: Another instance of Derby"
    silent_below = jvm.java.lang.RuntimeException("the client failed", jvm.java.lang.NullPointerException())
    assert _root_cause(Py4JJavaError("o", silent_below)) == "the client failed"
    first = jvm.java.lang.RuntimeException("first")
    second = jvm.java.lang.RuntimeException("second", first)
    first.initCause(second)
    found = []
    walk = threading.Thread(target=lambda: found.append(_root_cause(Py4JJavaError("o", first))), daemon=True)
    walk.start()
    walk.join(30)
    assert found == ["second"]


def test_a_metastore_in_memory_gets_no_word_on_a_derby_database_one_process_can_use(spark):
    from viewstore.spark.failures import _derby_hint

    key = "javax.jdo.option.ConnectionURL"
    conf = spark._jsparkSession.sharedState().hadoopConf()  # what the session's Hive client is built from
    saved = conf.get(key)
    try:
        conf.set("hive.metastore.uris", "thrift://127.0.0.1:1")  # a remote metastore: its database is not ours
        assert _derby_hint(spark._jsparkSession) == ""
        conf.unset("hive.metastore.uris")
        conf.set(key, "jdbc:derby:memory:;databaseName=metastore_db;create=true")
        assert _derby_hint(spark._jsparkSession) == ""
        conf.set(key, "jdbc:derby:;databaseName=/some/where/metastore_db;create=true")
        assert _derby_hint(spark._jsparkSession).startswith(" (the metastore is an embedded Derby database, "
                                                             "/some/where/metastore_db, which one process")
        conf.set(key, "jdbc:derby:/else/where/metastore_db;create=true")  # the database as the URL's path
        assert _derby_hint(spark._jsparkSession).startswith(" (the metastore is an embedded Derby database, "
                                                             "/else/where/metastore_db, which one process")
        conf.unset(key)  # Hive's default: metastore_db in the working directory
        assert _derby_hint(spark._jsparkSession).startswith(" (the metastore is an embedded Derby database, "
                                                             "metastore_db, which one process")
    finally:
        if saved is None:
            conf.unset(key)
        else:
            conf.set(key, saved)


def test_a_first_line_of_the_limit_is_kept_whole_and_a_longer_one_cut_to_it():
    from viewstore.spark.failures import _first_line

    assert _first_line("x" * 300 + "\nmore") == "x" * 300
    assert _first_line("x" * 301) == "x" * 297 + "..."


def test_progress_of_no_units_tells_the_callback_nothing():
    from viewstore.spark.failures import Progress

    seen = []
    progress = Progress(lambda done, total: seen.append((done, total)), 2)
    progress.advance(0)
    progress.advance(2)
    assert seen == [(2, 2)]


def test_a_parse_errors_explanation_keeps_its_pointer_into_the_sql(spark):
    from pyspark.errors import ParseException

    from viewstore.spark.failures import explanation

    with pytest.raises(ParseException) as refused:
        spark.sql("SELEC 1")
    assert explanation(refused.value).endswith("== SQL ==\nSELEC 1\n^^^")


def _in_memory_child(root: Path, settings: dict[str, str], *lines: str) -> list[str]:
    """What a child process printed, its lines: a session whose catalog is in memory, built with
    ``settings``, and a store at ``root``/views.db with one view s.v, then ``lines`` run with both
    (``said(call)`` is what a call returned, or its error's class and message). A child: a session's
    broken state would be the whole JVM's."""
    import json
    import subprocess
    import sys

    code = "\n".join([
        "import json, sys",
        "from pathlib import Path",
        "from pyspark.sql import SparkSession",
        "from viewstore import Column, ViewStore",
        "import viewstore.spark as vs",
        "root = Path(sys.argv[1])",
        "builder = SparkSession.builder.master('local[1]').config('spark.ui.enabled', 'false')",
        "for key, value in {'spark.sql.catalogImplementation': 'in-memory', **json.loads(sys.argv[2])}.items():",
        "    builder = builder.config(key, value)",
        "spark = builder.getOrCreate()",
        "spark.sparkContext.setLogLevel('OFF')",
        "def said(call):",
        "    try:",
        "        return repr(call())",
        "    except Exception as e:",
        "        return f'{type(e).__name__} {e}'",
        "with ViewStore(root / 'views.db') as store:",
        "    store.create_view('s.v', columns=[Column('x', 'int')], default_namespace=('s',),",
        "                      representations=[('spark', 'SELECT 1 AS x')])",
        *(f"    {line}" for line in lines),
        "spark.stop()",
    ])
    done = subprocess.run([sys.executable, "-c", code, str(root), json.dumps(settings)], capture_output=True,
                          text=True, timeout=300, cwd=root)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_a_session_built_with_a_setting_spark_refuses_says_which_setting_not_that_the_metastore_is_silent(tmp_path):
    """Spark checks a typed setting given to the builder only when it builds the session's state,
    which the metastore's catalog needs too: its probe failed, and the call said the metastore did
    not answer (with a word on Derby, for a session whose catalog is in memory). It names the
    setting, its value and what Spark wants; nothing is written."""
    printed = _in_memory_child(
        tmp_path, {"spark.sql.warehouse.dir": str(tmp_path / "warehouse"),
                   "spark.sql.execution.arrow.maxRecordsPerBatch": "ten"},
        "print(said(lambda: vs.events_dataframe(spark, store)), said(lambda: vs.register_views(spark, store)),",
        "      store.event_count(), sep='\\n')")
    refused = ("the session can run nothing: its setting spark.sql.execution.arrow.maxRecordsPerBatch is 'ten', "
               "which Spark refuses (it should be a/an 'int' value) [INVALID_CONF_VALUE.TYPE_MISMATCH]; correct it "
               "where the session is built")
    assert printed == [f"EngineError cannot move the event log into Spark: {refused}",
                       f"EngineError cannot register views: {refused}", "1"]


def test_a_session_whose_catalog_is_in_memory_gets_no_word_on_a_derby_database_when_it_cannot_be_made(tmp_path):
    """A session whose catalog is in memory has no Hive metastore, so no Derby database: when its
    catalog cannot be made (its warehouse folder would be under a file), the call says why, with no
    word on a Derby database another process may hold, nor on a metastore: there is none to answer."""
    (tmp_path / "a file").write_text("")
    printed = _in_memory_child(tmp_path, {"spark.sql.warehouse.dir": str(tmp_path / "a file" / "warehouse")},
                               "print(said(lambda: vs.check_views(spark, store)))")
    assert printed == ["EngineError cannot check view s.v: the session's catalog (in memory) cannot be made: "
                       f"Parent path is not a directory: file:{tmp_path}/a file"]


def test_a_refused_setting_is_read_from_sparks_message_and_no_other_cause_is_taken_for_one():
    from viewstore.spark.failures import _refused_setting

    assert _refused_setting("[INVALID_CONF_VALUE.OUT_OF_RANGE_OF_OPTIONS] The value 'x' in the config \"a.b\" is "
                            "invalid. It should be one of 'ON', 'OFF'. SQLSTATE: 22022") == (
        "the session can run nothing: its setting a.b is 'x', which Spark refuses (it should be one of 'ON', 'OFF') "
        "[INVALID_CONF_VALUE.OUT_OF_RANGE_OF_OPTIONS]; correct it where the session is built")
    assert _refused_setting("[INVALID_CONF_VALUE.REQUIREMENT] The value '' in the config \"a.b\" is invalid.") == (
        "the session can run nothing: its setting a.b is '', which Spark refuses [INVALID_CONF_VALUE.REQUIREMENT]; "
        "correct it where the session is built")
    assert _refused_setting("Another instance of Derby may have already booted the database /x/metastore_db.") is None


def test_a_refused_setting_whose_value_or_reason_runs_over_lines_is_still_read():
    """A value read from a file may keep its newline, and a reason may run over two lines: the
    refusal is still read, not taken for a metastore that does not answer (planted, the pattern
    without DOTALL read neither)."""
    from viewstore.spark.failures import _refused_setting

    assert _refused_setting("[INVALID_CONF_VALUE.TYPE_MISMATCH] The value 'ten\n' in the config \"a.b\" is invalid. "
                            "It should be an int. SQLSTATE: 22022") == (
        "the session can run nothing: its setting a.b is 'ten\n', which Spark refuses (it should be an int) "
        "[INVALID_CONF_VALUE.TYPE_MISMATCH]; correct it where the session is built")
    assert _refused_setting("[INVALID_CONF_VALUE.REQUIREMENT] The value 'x' in the config \"a.b\" is invalid. "
                            "It should be\nan int. SQLSTATE: 22022") == (
        "the session can run nothing: its setting a.b is 'x', which Spark refuses (it should be\nan int) "
        "[INVALID_CONF_VALUE.REQUIREMENT]; correct it where the session is built")


def test_a_refused_setting_is_read_from_a_message_with_space_around_it():
    """A Java message may end in a newline or spaces: they are not taken for what Spark wants (the
    SQLSTATE would be), and space before the condition does not hide the refusal."""
    from viewstore.spark.failures import _refused_setting

    assert _refused_setting(" [INVALID_CONF_VALUE.OUT_OF_RANGE_OF_OPTIONS] The value 'x' in the config \"a.b\" is "
                            "invalid. It should be one of 'ON', 'OFF'. SQLSTATE: 22022 \n") == (
        "the session can run nothing: its setting a.b is 'x', which Spark refuses (it should be one of 'ON', 'OFF') "
        "[INVALID_CONF_VALUE.OUT_OF_RANGE_OF_OPTIONS]; correct it where the session is built")


def test_a_derby_network_server_is_no_embedded_database():
    """Embedded Derby is jdbc:derby: with no // after it; jdbc:derby://host:port/... is the network
    client's address of a server many processes can share: no folder, so no one-process word."""
    from viewstore.spark.failures import embedded_derby

    for url in ("jdbc:derby://db.example:1527//data/metastore_db;create=true",
                "jdbc:derby://db.example:1527/metastore_db;user=hive;password=secret",
                "jdbc:derby://db.example/;databaseName=/data/metastore_db"):
        assert embedded_derby(None, url) is None, url
    assert embedded_derby(None, "jdbc:derby:/data/metastore_db;create=true") == ("directory", "/data/metastore_db")
    assert embedded_derby(None, "jdbc:derby:metastore_db") == ("directory", "metastore_db")
    assert embedded_derby(None, "jdbc:derby:;databaseName=/data/metastore_db;create=true") == (
        "directory", "/data/metastore_db")


def test_an_embedded_derby_database_s_kind_is_its_subsubprotocol_in_its_path_or_its_database_name():
    from viewstore.spark.failures import embedded_derby

    assert embedded_derby(None, "jdbc:derby:directory:/data/ms") == ("directory", "/data/ms")
    assert embedded_derby(None, "jdbc:derby:;databaseName=directory:/data/ms;create=true") == ("directory", "/data/ms")
    assert embedded_derby(None, "jdbc:derby:memory:;databaseName=ms;create=true") == ("memory", "ms")
    assert embedded_derby(None, "jdbc:derby:;databaseName=memory:ms") == ("memory", "ms")
    assert embedded_derby(None, "jdbc:derby:classpath:dbs/ms") == ("classpath", "dbs/ms")
    assert embedded_derby(None, "jdbc:derby:jar:(/p/db.jar)dbs/ms;user=x") == ("jar", "(/p/db.jar)dbs/ms")
    assert embedded_derby(None, "jdbc:derby:C:/data/ms") == ("directory", "C:/data/ms")  # a drive, no kind
    assert embedded_derby(None, "jdbc:derby:memory:;create=true") is None  # no name: no database


def test_the_derby_word_names_a_directory_database_s_folder_and_is_not_given_in_memory_or_read_only(spark):
    """The word on a database one process at a time can use named a directory: database with its
    prefix as a folder, and was given to one in memory named by its databaseName attribute, which no
    other process can hold; nor can one read-only (on the class path, in an archive) be held."""
    from viewstore.spark.failures import _derby_hint

    key = "javax.jdo.option.ConnectionURL"
    conf = spark._jsparkSession.sharedState().hadoopConf()  # what the session's Hive client is built from
    saved = conf.get(key)
    try:
        conf.set(key, "jdbc:derby:directory:/some/where/metastore_db;create=true")
        assert _derby_hint(spark._jsparkSession).startswith(" (the metastore is an embedded Derby database, "
                                                             "/some/where/metastore_db, which one process")
        for url in ("jdbc:derby:;databaseName=memory:metastore_db;create=true", "jdbc:derby:classpath:dbs/ms",
                    "jdbc:derby:jar:(/p/db.jar)dbs/ms"):
            conf.set(key, url)
            assert _derby_hint(spark._jsparkSession) == "", url
    finally:
        if saved is None:
            conf.unset(key)
        else:
            conf.set(key, saved)


def test_a_session_built_without_hive_support_is_no_hive_session_and_gets_no_derby_word(tmp_path):
    """A session built with no catalogImplementation set (no enableHiveSupport) has its catalog in
    memory: it is not taken for Hive's, so the Derby word, given only where the catalog is Hive's
    (environment_failure decides, once), is not given to it (planted, an unset setting read as hive
    gave it the word on a Derby database one process can use)."""
    import subprocess
    import sys

    code = "\n".join([
        "from pyspark.sql import SparkSession",
        "from viewstore.spark.failures import _hive_catalog",
        "spark = SparkSession.builder.master('local[1]').config('spark.ui.enabled', 'false').getOrCreate()",
        "js = spark._jsparkSession",
        "print(js.sharedState().conf().contains('spark.sql.catalogImplementation'), _hive_catalog(js))",
        "spark.stop()",
    ])
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["False False"]


def test_a_catalog_in_memory_that_cannot_be_made_gives_the_first_line_of_its_cause_cut_to_the_limit(tmp_path):
    """The cause of a catalog in memory that cannot be made is cut as the metastore's is: a long one
    to its limit, not whole (planted, the in-memory wording without _first_line gave the whole
    cause)."""
    blocker = tmp_path / ("f" * 200)
    blocker.write_text("")
    printed = _in_memory_child(tmp_path, {"spark.sql.warehouse.dir": str(blocker / ("w" * 200))},
                               "print(said(lambda: vs.check_views(spark, store)))")
    said = "EngineError cannot check view s.v: the session's catalog (in memory) cannot be made: "
    assert len(printed) == 1 and printed[0].startswith(said + "Parent path is not a directory: file:"), printed
    assert len(printed[0]) == len(said) + 300 and printed[0].endswith("...")


def test_a_derby_subsubprotocol_begins_a_name_alone_and_an_empty_database_name_attribute_leaves_the_address_s():
    """directory:, memory:, classpath: or jar: begin a name or are part of a folder's path; an empty
    databaseName attribute leaves the address's own name; only a jar: name is an archive and a path
    (planted, the prefix looked for anywhere, an empty attribute taken as the name, and the archive
    form read in a class path name, passed)."""
    from viewstore.spark.failures import embedded_derby

    assert embedded_derby(None, "jdbc:derby:/data/memory:ms") == ("directory", "/data/memory:ms")
    assert embedded_derby(None, "jdbc:derby:;databaseName=/data/jar:ms") == ("directory", "/data/jar:ms")
    assert embedded_derby(None, "jdbc:derby:/data/ms;databaseName=;create=true") == ("directory", "/data/ms")
    assert str(embedded_derby(None, "jdbc:derby:classpath:(dbs)ms")) == "(dbs)ms on the class path, read-only"


def test_a_derby_address_naming_its_database_in_its_path_and_its_database_name_is_the_path_s():
    """Derby takes the databaseName attribute only when the address names no database before its
    first ';': a path beside the attribute is the database opened, not the attribute's."""
    from viewstore.spark.failures import embedded_derby

    assert embedded_derby(None, "jdbc:derby:/data/a;databaseName=/data/b;create=true") == ("directory", "/data/a")
    assert embedded_derby(None, "jdbc:derby:/data/a;databaseName=memory:b") == ("directory", "/data/a")
    assert embedded_derby(None, "jdbc:derby:classpath:dbs/a;databaseName=/data/b") == ("classpath", "dbs/a")
    # an address naming no database, or a subsubprotocol alone, takes the attribute's, as before
    assert embedded_derby(None, "jdbc:derby:;databaseName=/data/b") == ("directory", "/data/b")
    assert embedded_derby(None, "jdbc:derby:memory:;databaseName=b") == ("memory", "b")
