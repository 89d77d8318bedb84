"""``viewstore spark check`` and ``spark register`` on the test session (commands use the active session)."""

from __future__ import annotations

import json
import os
import uuid

import click
import pytest
from click.testing import CliRunner

from viewstore import ViewStore
from viewstore.cli import main
from viewstore.spark import create_view, register_views

pytestmark = pytest.mark.spark


def test_spark_check_exits_1_on_drift_and_prints_json(spark, store, tmp_path):
    ns = "t" + uuid.uuid4().hex[:10]
    spark.sql(f"CREATE DATABASE {ns}")
    try:
        spark.sql(f"CREATE TABLE {ns}.src (id INT) USING parquet")
        create_view(spark, store, f"{ns}.ids", f"SELECT id FROM {ns}.src")
        runner = CliRunner()
        ok = runner.invoke(main, ["--db", str(store.path), "spark", "check", ns])
        assert ok.exit_code == 0, ok.output
        assert ok.output.splitlines() == ["1 checked: 1 ok, 0 drifted, 0 broken",  # counted, not listed
                                          "ok, matching their stored columns: 1 view (--json lists them)"]

        spark.sql(f"DROP TABLE {ns}.src")
        spark.sql(f"CREATE TABLE {ns}.src (id STRING) USING parquet")
        bad = runner.invoke(main, ["--db", str(store.path), "spark", "check", "--json"])
        assert bad.exit_code == 1
        report = json.loads(bad.output)
        assert report["ok"] is False
        (view,) = report["views"]
        assert view["status"] == "drifted" and view["problems"] == ["column 'id': type int is now string"]
    finally:
        spark.sql(f"DROP DATABASE IF EXISTS {ns} CASCADE")


@pytest.fixture
def ns(spark):
    """A fresh database for one test's tables and views; dropped afterwards."""
    name = "t" + uuid.uuid4().hex[:10]
    spark.sql(f"CREATE DATABASE {name}")
    yield name
    spark.catalog.setCurrentDatabase("default")
    spark.sql(f"DROP DATABASE IF EXISTS {name} CASCADE")


def _failed_check(store, *args):
    """``viewstore spark check`` as JSON and as a table (wide enough for whole lines), both exiting 1:
    the report's views, and the table's text."""
    runner = CliRunner()
    result = runner.invoke(main, ["--db", str(store.path), "spark", "check", *args, "--json"])
    table = runner.invoke(main, ["--db", str(store.path), "spark", "check", *args], env={"COLUMNS": "300"})
    assert result.exit_code == table.exit_code == 1, (result.output, table.output)
    return json.loads(result.output)["views"], table.output


def _store_with_one_view(db):
    """A store at ``db`` holding sales.one (spark SQL ``SELECT 1 AS x``), closed again for the
    command that reads it."""
    with ViewStore(db, actor="t") as store:
        store.create_view("sales.one", columns=[("x", "int")], default_namespace="sales",
                          representations=[("spark", "SELECT 1 AS x")])


def test_spark_check_exits_1_on_a_broken_view(spark, store, ns):
    spark.sql(f"CREATE TABLE {ns}.src (id INT) USING parquet")
    create_view(spark, store, f"{ns}.ids", f"SELECT id FROM {ns}.src")
    spark.sql(f"DROP TABLE {ns}.src")
    (view,), table = _failed_check(store)
    assert view["status"] == "broken" and view["condition"] == "TABLE_OR_VIEW_NOT_FOUND"
    assert table.count("[TABLE_OR_VIEW_NOT_FOUND]") == 1, table
    assert table.count(f"{ns}.ids") == 1 and view["problems"][0].startswith("[TABLE_OR_VIEW_NOT_FOUND]"), table


def test_a_command_run_on_another_thread_uses_the_running_session_and_leaves_it_running(spark, store, ns):
    """A session's active one is the JVM thread's: on another thread of the process no session is
    active, but the builder hands back the running default one. The command takes it as running (no
    note on an in-memory catalog, which is said only of a session the command started) and does not
    stop it."""
    import threading

    spark.sql(f"CREATE TABLE {ns}.src (id INT) USING parquet")
    create_view(spark, store, f"{ns}.ids", f"SELECT id FROM {ns}.src")
    results = []
    thread = threading.Thread(target=lambda: results.append(CliRunner().invoke(
        main, ["--db", str(store.path), "spark", "register", ns], env={"COLUMNS": "300"})))
    thread.start()
    thread.join()
    (result,) = results
    assert result.exit_code == 0, result.output
    assert f"{ns}.ids" in result.output and "note: the session catalog was in memory" not in result.output
    assert spark.sql(f"SELECT count(*) AS n FROM {ns}.ids").first().n == 0  # running, and the copy is there


_REGISTER_IN_A_RUNNING_IN_MEMORY_SESSION = """
import json, sys
from click.testing import CliRunner
from pyspark.sql import SparkSession
from viewstore.cli import main

program = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
           .config("spark.sql.warehouse.dir", sys.argv[2]).getOrCreate())
result = CliRunner().invoke(main, ["--db", sys.argv[1], "spark", "register"], env={"COLUMNS": "300"})
print(json.dumps({"exit": result.exit_code, "out": result.output, "copy": program.catalog.tableExists("sales.one"),
                  "catalog": program.conf.get("spark.sql.catalogImplementation")}))
"""


def test_register_in_a_program_s_running_in_memory_session_gives_no_note_that_the_copies_end_with_it(tmp_path):
    """The note that the copies ended with the command is said of a session the command started and
    stopped; in a program's running session with an in-memory catalog they stay as long as it runs."""
    import subprocess
    import sys

    _store_with_one_view(tmp_path / "views.db")
    env = {name: value for name, value in os.environ.items() if name not in ("SPARK_SUBMIT_OPTS", "SPARK_CONF_DIR")}
    done = subprocess.run([sys.executable, "-c", _REGISTER_IN_A_RUNNING_IN_MEMORY_SESSION, str(tmp_path / "views.db"),
                           str(tmp_path / "wh")], capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    run = json.loads(done.stdout.splitlines()[-1])
    assert (run["exit"], run["copy"], run["catalog"]) == (0, True, "in-memory"), run
    assert "sales.one" in run["out"] and "note:" not in run["out"], run["out"]


def test_a_closed_pipe_keeps_the_exit_code_of_a_registration_that_failed(store, tmp_path):
    """`viewstore spark register | head -1`: a view failed, whether or not anybody read the report.
    In a process of its own, which starts (and stops) a session of its own."""
    import subprocess
    import sys

    store.create_view("s.broken", columns=[], representations=[("spark", "SELECT x FROM no_such_table_here")],
                      default_namespace="s")
    reader = subprocess.Popen([sys.executable, "-m", "viewstore", "--db", str(store.path), "spark", "register",
                               "--master", "local[1]", "--conf", "spark.ui.enabled=false",
                               "--conf", f"spark.sql.warehouse.dir={tmp_path / 'warehouse'}"],
                              cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    reader.stdout.close()
    assert reader.wait(timeout=240) == 1


def test_spark_check_of_a_mistyped_store_fails_before_spark_starts(tmp_path):
    result = CliRunner().invoke(main, ["--db", str(tmp_path / "typo.db"), "spark", "check", "--json"])
    assert result.exit_code == 1
    assert json.loads(result.output) == {"error": {
        "type": "ViewStoreError", "exit_code": 1,
        "message": f"no viewstore database at {tmp_path / 'typo.db'} (create or import a view to start one there; "
                   "--db or VIEWSTORE_DB names another)"}}
    assert not (tmp_path / "typo.db").exists()


@pytest.mark.parametrize("command", [["check"], ["register"], ["import", "sales"],
                                     ["metastore-write", "sales.v", "--engine", "spark"]])
def test_a_bad_conf_is_a_usage_error_said_before_the_store_or_spark(tmp_path, command):
    """As every value not of its option's form: exit code 2, whatever --db names."""
    result = CliRunner().invoke(main, ["--db", str(tmp_path / "typo.db"), "spark", *command, "--conf", "novalue"])
    assert result.exit_code == 2, result.output
    assert result.output.splitlines()[-1] == "Error: bad --conf 'novalue': use KEY=VALUE"
    assert not (tmp_path / "typo.db").exists()


@pytest.mark.parametrize("option", [["--master", "lokal[2]"], ["--conf", "spark.master=lokal[2]"]])
@pytest.mark.parametrize("command", [["check"], ["register"], ["import", "sales"],
                                     ["metastore-write", "sales.v", "--engine", "spark"]])
def test_a_master_spark_refuses_is_a_usage_error_said_before_the_store_or_spark(tmp_path, command, option):
    """Spark's launcher ends its JVM at such a master with a Java stack trace on stderr, which a
    script reading one JSON line there cannot parse: it is said first, as one."""
    result = CliRunner().invoke(main, ["--db", str(tmp_path / "typo.db"), "spark", *command, *option, "--json"])
    assert result.exit_code == 2, result.output
    given = "--master 'lokal[2]'" if option[0] == "--master" else "--conf 'spark.master=lokal[2]'"
    assert json.loads(result.output) == {"error": {
        "type": "UsageError", "exit_code": 2,
        "message": f"bad {given}: a Spark master is local, local[N] (N of 1 or more), local[*], local[N, F] "
                   "(F failures a task may have), local-cluster[N, C, M], spark://HOST:PORT, "
                   "k8s://URL or yarn"}}
    assert not (tmp_path / "typo.db").exists()


@pytest.mark.parametrize("master", ["local[nonsense]", "local[0]", "local[00]", "local[-1]", "local[2,x]",
                                    "local[0, 1]", "local[ 2]", "local[2]x", "local[]", "local[\u0663]",
                                    "local[2,\u00a03]", "local[99999999999]", "local-cluster[1]",
                                    "local-cluster[2,1,1024", "localhost"])
def test_a_local_master_spark_s_context_cannot_read_is_a_usage_error_said_before_spark(tmp_path, master):
    """Spark's launcher takes any master beginning with local, but its context reads only the local
    forms (and no thread count of 0, no number past a Java int): at any other it logged an error
    with a Java stack trace before the clean one. Refused as a master of no form, by --master and
    by --conf, one JSON line with --json, the store untouched."""
    for option in (["--master", master], ["--conf", f"spark.master={master}"]):
        result = CliRunner().invoke(main, ["--db", str(tmp_path / "typo.db"), "spark", "register", *option, "--json"])
        assert result.exit_code == 2, result.output
        given = f"--master {master!r}" if option[0] == "--master" else f"--conf {option[1]!r}"
        assert json.loads(result.output)["error"]["message"] == (
            f"bad {given}: a Spark master is local, local[N] (N of 1 or more), local[*], local[N, F] "
            "(F failures a task may have), local-cluster[N, C, M], spark://HOST:PORT, "
            "k8s://URL or yarn")
    assert not (tmp_path / "typo.db").exists()


@pytest.mark.parametrize("master", ["local", "local[2]", "local[*]", "local[2,3]", "local[*, 3]", "local[2 ,\t3]",
                                    "local-cluster[2,1,1024]", "local-cluster[ 2 , 1 , 1024 ]", "spark://host:7077",
                                    "k8s://https://host:443", "yarn"])
def test_every_master_spark_s_launcher_takes_is_given_as_spark_master_before_the_confs(master):
    """What the launcher takes (a master beginning spark, k8s or yarn, or a local one of a form Spark's
    context reads) passes the check, by --master or by --conf; --master comes first, so a --conf
    spark.master given too is the one set."""
    from viewstore.spark.cli import _settings

    assert _settings(master, ()) == [("spark.master", master)]
    assert _settings(None, (f"spark.master={master}", "spark.ui.enabled=false")) == [
        ("spark.master", master), ("spark.ui.enabled", "false")]
    assert _settings(master, ("spark.master=local[1]",)) == [("spark.master", master), ("spark.master", "local[1]")]
    assert _settings(None, ()) == [] and _settings("", ()) == []


_OWN_SESSION_RUNS = """
import json, os, sys
from pathlib import Path
from click.testing import CliRunner
from pyspark import SparkContext
from viewstore import ViewStore
from viewstore.cli import main

root = Path(sys.argv[1])
db = str(root / "views.db")
with ViewStore(db, actor="t") as store:
    store.create_view("sales.one", columns=[("x", "int")], default_namespace="sales",
                      representations=[{"sql": "SELECT 1 AS x", "dialect": "spark"}])
hive = ["--hive", "--conf",
        f"spark.hadoop.javax.jdo.option.ConnectionURL=jdbc:derby:;databaseName={root / 'ms'};create=true"]
runs = {"hive": ["spark", "register", "--master", "local[1]", *hive],
        "check": ["spark", "check", "--json", *hive],
        "in memory": ["spark", "register", "--conf", f"spark.sql.warehouse.dir={root / 'wh'}"],
        "in memory, no copy": ["spark", "register", "--dialect", "trino",
                               "--conf", f"spark.sql.warehouse.dir={root / 'wh'}"],
        "bad master": ["spark", "register", "--master", "local-cluster[1,1,512]"]}
out = {}
before = os.environ.get("SPARK_SUBMIT_OPTS")
for name, args in runs.items():
    result = CliRunner().invoke(main, ["--db", db, *args], env={"COLUMNS": "300"})
    out[name] = {"exit": result.exit_code, "output": result.output,
                 "escaped": None if result.exception is None or isinstance(result.exception, SystemExit)
                 else repr(result.exception), "running after": SparkContext._active_spark_context is not None,
                 "java options as before": os.environ.get("SPARK_SUBMIT_OPTS") == before,
                 "local ip": os.environ.get("SPARK_LOCAL_IP"),
                 "the jvm's local ip": SparkContext._jvm.java.lang.System.getenv("SPARK_LOCAL_IP")}
print(json.dumps(out))
"""


_LOGGING_AROUND_A_COMMAND = """
import json, sys
from pathlib import Path
from click.testing import CliRunner
from pyspark.logger import PySparkLogger
from pyspark.sql import SparkSession
from viewstore.cli import main

root = Path(sys.argv[1])
program = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
program.stop()  # the program's JVM runs on, with no session: a command starts its own
jvm = program._jvm
spark_logging = jvm.java.lang.Class.forName("org.apache.spark.internal.Logging$").getField("MODULE$").get(None)


def levels():
    return [str(jvm.org.apache.logging.log4j.LogManager.getRootLogger().getLevel()),
            str(spark_logging.sparkShellThresholdLevel()), PySparkLogger.getLogger("SQLQueryContextLogger").level]


before = levels()
result = CliRunner().invoke(main, ["--db", str(root / "views.db"), "spark", "register", "--json",
                                   "--conf", f"spark.sql.warehouse.dir={root / 'wh'}"])
print(json.dumps({"exit": result.exit_code, "before": before, "after": levels(), "out": result.output}))
probe = jvm.org.apache.logging.log4j.LogManager.getLogger("org.apache.spark.ProbeOfTheProgram")
probe.info("probe at info")  # what a program's Spark logs now: its console shows WARN and up, as before
probe.warn("probe at warn")
"""


def test_a_command_in_a_program_whose_jvm_runs_leaves_the_program_s_logging_as_it_was(tmp_path):
    """A command quiets the session it starts (errors only); the JVM's root level, the level a
    PySpark console shows the JVM's records from (which Spark's setLogLevel clears: INFO records
    would flood the console with the root level alone put back) and PySpark's logger of analysis
    errors are the program's again afterwards."""
    import subprocess
    import sys

    _store_with_one_view(tmp_path / "views.db")
    env = {name: value for name, value in os.environ.items() if name not in ("SPARK_SUBMIT_OPTS", "SPARK_CONF_DIR")}
    done = subprocess.run([sys.executable, "-c", _LOGGING_AROUND_A_COMMAND, str(tmp_path)], capture_output=True,
                          text=True, timeout=300, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    run = json.loads(done.stdout)
    assert run["exit"] == 0, run["out"]
    assert run["before"] == ["INFO", "WARN", 30]  # PySpark's defaults (30: WARNING)
    assert run["after"] == run["before"]
    assert "probe at warn" in done.stderr and "probe at info" not in done.stderr


def test_hive_with_spark_s_default_warehouse_makes_it_in_a_working_directory_whose_name_has_a_blank(tmp_path):
    """--hive without a warehouse set: Spark's own default, the working directory's spark-warehouse,
    which Spark's Hive catalog made under a folder named with the blank escaped ("a%20b")."""
    import subprocess
    import sys

    work = tmp_path / "a b"
    work.mkdir()
    _store_with_one_view(work / "views.db")
    done = subprocess.run([sys.executable, "-m", "viewstore", "--db", "views.db", "spark", "register", "--hive",
                           "--master", "local[1]", "--conf", "spark.ui.enabled=false"],
                          cwd=work, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (work / "spark-warehouse" / "sales.db").is_dir()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a b"]
    # a warehouse the user sets is Spark's, as given (a metastore of its own, whose databases are new)
    done = subprocess.run([sys.executable, "-m", "viewstore", "--db", "views.db", "spark", "register", "--hive",
                           "--master", "local[1]", "--conf", "spark.ui.enabled=false", "--conf",
                           f"spark.sql.warehouse.dir={tmp_path / 'given'}", "--conf",
                           f"spark.hadoop.javax.jdo.option.ConnectionURL=jdbc:derby:;databaseName={tmp_path / 'ms'};"
                           f"create=true"], cwd=work, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "given" / "sales.db").is_dir()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a b", "given", "ms"]

@pytest.mark.parametrize("file", ["spark-defaults.conf", "hive-site.xml"])
def test_hive_with_hive_s_warehouse_set_in_spark_s_conf_folder_keeps_that_warehouse(tmp_path, file):
    """--hive with Hive's warehouse (which Spark takes when its own is not set) set not on the
    command line but in the conf folder the JVM starts from, in spark-defaults.conf or in a
    hive-site.xml: the warehouse is that one, not Spark's default folder in the working directory."""
    import subprocess
    import sys

    work, conf = tmp_path / "work", tmp_path / "conf"
    work.mkdir()
    conf.mkdir()
    settings = {"hive.metastore.warehouse.dir": str(tmp_path / "given"),
                "javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={tmp_path / 'ms'};create=true"}
    if file == "spark-defaults.conf":
        text = "".join(f"spark.hadoop.{key} {value}\n" for key, value in settings.items())
    else:
        text = "<configuration>\n" + "".join(f"<property><name>{key}</name><value>{value}</value></property>\n"
                                              for key, value in settings.items()) + "</configuration>\n"
    (conf / file).write_text(text)
    _store_with_one_view(work / "views.db")
    env = {**{name: value for name, value in os.environ.items() if name != "SPARK_SUBMIT_OPTS"},
           "SPARK_CONF_DIR": str(conf)}
    done = subprocess.run([sys.executable, "-m", "viewstore", "--db", "views.db", "spark", "register", "--hive",
                           "--master", "local[1]", "--conf", "spark.ui.enabled=false"],
                          cwd=work, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "given" / "sales.db").is_dir()
    assert not (work / "spark-warehouse").exists()


def test_hive_with_spark_s_own_warehouse_set_in_spark_defaults_conf_keeps_that_warehouse(tmp_path):
    """--hive with Spark's own warehouse key (spark.sql.warehouse.dir) in the spark-defaults.conf
    of the conf folder the JVM starts from, not on the command line: the databases go there, and no
    spark-warehouse folder is made in the working directory (a setting of the session would win
    over the JVM's default)."""
    import subprocess
    import sys

    work, conf, given = tmp_path / "work", tmp_path / "conf", tmp_path / "given"
    work.mkdir()
    conf.mkdir()
    (conf / "spark-defaults.conf").write_text(
        f"spark.sql.warehouse.dir {given}\n"
        f"spark.hadoop.javax.jdo.option.ConnectionURL jdbc:derby:;databaseName={tmp_path / 'ms'};create=true\n")
    _store_with_one_view(work / "views.db")
    environment = dict(os.environ, SPARK_CONF_DIR=str(conf))
    environment.pop("SPARK_SUBMIT_OPTS", None)
    done = subprocess.run([sys.executable, "-m", "viewstore", "--db", "views.db", "spark", "register", "--hive",
                           "--master", "local[1]", "--conf", "spark.ui.enabled=false", "--json"],
                          cwd=work, env=environment, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout)["registered"] == ["sales.one"]
    assert (given / "sales.db").is_dir()
    assert not (work / "spark-warehouse").exists()


def test_a_command_with_no_session_running_starts_one_from_its_options_and_stops_it(tmp_path):
    """In a process with no session (as from a shell), each command starts its own from --master,
    --conf and --hive, and stops it at the end; a session Spark cannot start is an error, not a traceback.
    The environment variables the JVM is started with are its own, not left set in the process.

    The process's JVM, started by the first command, keeps the settings it was started with (its
    --master and --conf) as defaults of every later session, but --hive is a setting of a command's
    own session alone: a command without it, after those with it, has a catalog in memory (it had
    the Hive metastore, and the copy there, unchanged)."""
    import subprocess
    import sys

    env = {name: value for name, value in os.environ.items() if name != "SPARK_LOCAL_IP"}
    done = subprocess.run([sys.executable, "-c", _OWN_SESSION_RUNS, str(tmp_path)], capture_output=True, text=True,
                          timeout=600, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    runs = json.loads(done.stdout)
    assert {name: (run["exit"], run["escaped"], run["running after"]) for name, run in runs.items()} == {
        "hive": (0, None, False), "check": (0, None, False), "in memory": (0, None, False),
        "in memory, no copy": (0, None, False), "bad master": (1, None, False)}, runs
    # the log4j file given to the JVM the first command started is the JVM's alone: the process's
    # environment (a program's own later spark-submit) is as it was
    assert [run["java options as before"] for run in runs.values()] == [True] * 5
    # the JVM listens on 127.0.0.1 (it was started with SPARK_LOCAL_IP), and the process's
    # environment is left without it, as it was
    assert [(run["local ip"], run["the jvm's local ip"]) for run in runs.values()] == [(None, "127.0.0.1")] * 5
    in_memory = runs["in memory"]["output"].splitlines()
    assert in_memory[0].startswith("registered 1, already registered 0, skipped 0, failed 0, pruned 0 (")
    assert in_memory[-1] == ("note: the session catalog was in memory, so these copies ended with the command "
                             "(use --hive, or a persistent catalog in spark-defaults.conf)")
    # a run that made no copy (no view has SQL in the dialect) has no copies to lose: no note
    none_made = runs["in memory, no copy"]["output"]
    assert none_made.startswith("registered 0, already registered 0, skipped 1, failed 0, pruned 0 (")
    assert "no stored view has SQL in the dialect 'trino'" in none_made and "note:" not in none_made, none_made
    hive = runs["hive"]["output"]
    assert (hive.startswith("registered 1, already registered 0, skipped 0, failed 0, pruned 0 (")
            and "note:" not in hive)
    assert (tmp_path / "ms").is_dir()  # the metastore named by --conf, with Hive support from --hive
    # the database it made is in the metastore's warehouse (Spark's default, in the working
    # directory), not in a temporary one that went with the command
    assert (tmp_path / "spark-warehouse" / "sales.db").is_dir()
    check = json.loads(runs["check"]["output"])  # a later session of the same metastore has the copy
    assert check["ok"] is True and [(v["identifier"], v["status"]) for v in check["views"]] == [("sales.one", "ok")]
    # a master of a form Spark reads, which it refuses at the start (a worker of less memory than an executor's)
    assert runs["bad master"]["output"] == ("error: Spark could not start a session: [SparkException] "
                                            "Asked to launch cluster with 512 MiB/worker but requested "
                                            "1024 MiB/executor\n")


def test_a_conf_value_may_hold_an_equals_sign():
    from viewstore.spark.cli import _settings

    assert _settings(None, ("spark.a=b=c", "spark.empty=")) == [("spark.a", "b=c"), ("spark.empty", "")]


def test_spark_register_tells_a_copy_it_could_not_drop_from_one_it_could_not_make():
    import io

    from viewstore.cli import CliContext, _Console
    from viewstore.spark.cli import _print_registered
    from viewstore.spark.register import FailedView, RegisterReport

    cli = CliContext(db="unused.db", actor="carol", catalog=None)
    cli.console = _Console(file=io.StringIO(), width=300, markup=False, emoji=False, highlight=False)
    _print_registered(cli, RegisterReport(failed=[
        FailedView("s.made", "TABLE_OR_VIEW_NOT_FOUND", "no table t", "register"),
        FailedView("s.stale", "INSUFFICIENT_PERMISSIONS", "[INSUFFICIENT_PERMISSIONS] not yours", "prune")]))
    lines = cli.console.file.getvalue().splitlines()
    made, stale = (next(line for line in lines if name in line) for name in ("s.made", "s.stale"))
    assert "failed" in made and "[TABLE_OR_VIEW_NOT_FOUND] no table t" in made and "could not drop" not in made
    assert "could not drop the stale copy: [INSUFFICIENT_PERMISSIONS] not yours" in stale


def test_spark_register_lists_the_copies_it_made_and_counts_those_it_left_unchanged_below_alone():
    """A copy left as it was is among the report's registered views too: it is counted below the
    table, not listed in it as well."""
    import io

    from viewstore.cli import CliContext, _Console
    from viewstore.spark.cli import _print_registered
    from viewstore.spark.register import RegisterReport

    cli = CliContext(db="unused.db", actor="carol", catalog=None)
    cli.console = _Console(file=io.StringIO(), width=300, markup=False, emoji=False, highlight=False)
    _print_registered(cli, RegisterReport(registered=["s.made", "s.kept"], unchanged=["s.kept"]))
    lines = cli.console.file.getvalue().splitlines()
    assert [line.split("│")[1].strip() for line in lines if "registered" in line and "│" in line] == ["s.made"]
    assert "s.kept" not in "\n".join(lines)
    assert lines[-1] == "already registered, left unchanged: 1 view (--json lists them)"


def test_spark_register_and_check_tables_lead_a_failure_with_its_condition_as_raise_for_failures_does():
    """One rule (failures.tagged): a message that starts with its condition keeps it, any other (one
    that names it further on included) is led by it, in the tables as in raise_for_failures."""
    import io
    import re

    from viewstore import ValidationError
    from viewstore.cli import CliContext, _Console
    from viewstore.spark.cli import _print_drift, _print_registered
    from viewstore.spark.drift import DriftReport, ViewDrift
    from viewstore.spark.register import FailedView, RegisterReport

    cli = CliContext(db="unused.db", actor="carol", catalog=None)
    cli.console = _Console(file=io.StringIO(), width=300, markup=False, emoji=False, highlight=False)
    report = RegisterReport(failed=[FailedView("s.named", "X", "says [X] later"),
                                    FailedView("s.own", "Y", "[Y] says it first\nSQLSTATE: 42000"),
                                    FailedView("s.java", "JsonParseException", "Unexpected character")])
    _print_registered(cli, report)
    _print_drift(cli, DriftReport(views=[ViewDrift("s.broken", "broken", ("says [X] later",), "X")]))
    out = cli.console.file.getvalue()
    with pytest.raises(ValidationError) as raised:
        report.raise_for_failures()
    lines = str(raised.value).splitlines()[1:]
    assert lines == ["s.named: [X] says [X] later", "s.own: [Y] says it first",
                     "s.java: [JsonParseException] Unexpected character"]
    for line in lines:
        name, details = line.split(": ", 1)
        assert re.search(rf"^│ {re.escape(name)} +│ failed +│ {re.escape(details)} +│$", out, re.M), out
    assert re.search(r"^│ s\.broken +│ broken +│ \[X\] says \[X\] later +│$", out, re.M), out


def test_spark_register_lists_each_pruned_copy_and_the_first_200_characters_of_a_failure():
    import io
    import re

    from viewstore.cli import CliContext, _Console
    from viewstore.spark.cli import _print_registered
    from viewstore.spark.register import FailedView, RegisterReport

    cli = CliContext(db="unused.db", actor="carol", catalog=None)
    cli.console = _Console(file=io.StringIO(), width=400, markup=False, emoji=False, highlight=False)
    explanation = "[UNRESOLVED_COLUMN] " + "x" * 300 + "\nSQLSTATE: 42703"
    _print_registered(cli, RegisterReport(failed=[FailedView("s.long", "UNRESOLVED_COLUMN", explanation)],
                                          pruned=["s.gone", "s.old"]))
    out = cli.console.file.getvalue()
    long = next(line for line in out.splitlines() if "s.long" in line)
    assert f"│ {explanation[:200]} │" in long and "42703" not in out, out
    pruned = "a copy this store made of a view it no longer holds"
    for name in ("s.gone", "s.old"):
        assert re.search(rf"^│ {name} +│ pruned +│ {pruned} +│$", out, re.M), out


def test_spark_register_lists_each_skipped_view_with_why():
    import io
    import re

    from viewstore.cli import CliContext, _Console
    from viewstore.spark.cli import _print_registered
    from viewstore.spark.register import RegisterReport, SkippedView

    cli = CliContext(db="unused.db", actor="carol", catalog=None)
    cli.console = _Console(file=io.StringIO(), width=300, markup=False, emoji=False, highlight=False)
    _print_registered(cli, RegisterReport(registered=["s.made"], skipped=[
        SkippedView("s.tab", "table-exists", "a table of the session catalog has the name")]))
    out = cli.console.file.getvalue()
    assert re.search(r"^│ s\.tab +│ skipped +│ a table of the session catalog has the name +│$", out, re.M), out

def test_spark_register_of_no_view_prints_its_table_with_no_row_and_no_count_line():
    """A report with no view at all (none registered, none left unchanged) is its table, empty
    under its header, not the summary line alone that stands for a table of folded views only."""
    import io

    from viewstore.cli import CliContext, _Console
    from viewstore.spark.cli import _print_registered
    from viewstore.spark.register import RegisterReport

    cli = CliContext(db="unused.db", actor="carol", catalog=None)
    cli.console = _Console(file=io.StringIO(), width=300, markup=False, emoji=False, highlight=False)
    _print_registered(cli, RegisterReport())
    lines = cli.console.file.getvalue().splitlines()
    assert lines[0].strip() == str(RegisterReport())
    assert [cell.strip() for cell in next(line for line in lines if "view" in line).split("┃")[1:-1]] == [
        "view", "outcome", "details"]
    assert "--json lists them" not in cli.console.file.getvalue()


def test_spark_check_shows_the_first_200_characters_of_a_broken_views_reason_with_its_condition_once():
    import io

    from viewstore.cli import CliContext, _Console
    from viewstore.spark.cli import _print_drift
    from viewstore.spark.drift import DriftReport, ViewDrift

    cli = CliContext(db="unused.db", actor="carol", catalog=None)
    cli.console = _Console(file=io.StringIO(), width=400, markup=False, emoji=False, highlight=False)
    explanation = "[UNRESOLVED_COLUMN.WITH_SUGGESTION] " + "x" * 300
    _print_drift(cli, DriftReport(views=[
        ViewDrift("s.long", "broken", (explanation, "SQLSTATE: 42703"), "UNRESOLVED_COLUMN.WITH_SUGGESTION"),
        ViewDrift("s.bare", "broken", ("no table t",), "TABLE_OR_VIEW_NOT_FOUND")]))
    lines = cli.console.file.getvalue().splitlines()
    long, bare = (next(line for line in lines if name in line) for name in ("s.long", "s.bare"))
    assert f"│ {explanation[:200]} │" in long and "42703" not in "".join(lines), lines
    assert "│ [TABLE_OR_VIEW_NOT_FOUND] no table t " in bare, lines


def test_spark_check_gives_each_problem_of_a_view_a_line_of_its_own():
    import io

    from viewstore.cli import CliContext, _Console
    from viewstore.spark.cli import _print_drift
    from viewstore.spark.drift import DriftReport, ViewDrift

    cli = CliContext(db="unused.db", actor="carol", catalog=None)
    cli.console = _Console(file=io.StringIO(), width=300, markup=False, emoji=False, highlight=False)
    problems = ("column 'a': type int is now string", "column 'b': not null is now nullable")
    _print_drift(cli, DriftReport(views=[ViewDrift("s.v", "drifted", problems)]))
    lines = cli.console.file.getvalue().splitlines()
    first = next(i for i, line in enumerate(lines) if "s.v" in line)
    assert problems[0] in lines[first] and problems[1] not in lines[first], lines
    assert problems[1] in lines[first + 1] and "s.v" not in lines[first + 1], lines


def test_spark_check_shows_a_required_column_become_nullable(spark, store, ns):
    spark.sql(f"CREATE VIEW {ns}.src AS SELECT 1 AS id")
    create_view(spark, store, f"{ns}.ids", f"SELECT id FROM {ns}.src")
    spark.sql(f"CREATE OR REPLACE VIEW {ns}.src AS SELECT CAST(NULL AS INT) AS id")
    (view,), table = _failed_check(store, ns)
    assert (view["status"], view["problems"]) == ("drifted", ["column 'id': not null is now nullable"])
    assert (view["stored"], view["analyzed"]) == (["id int not null"], ["id int"])
    assert "column 'id': not null is now nullable" in table, table


def _without_seconds(text):
    report = json.loads(text)
    report.pop("seconds")
    return report


@pytest.mark.parametrize("command, label", [("register", "registering"), ("check", "checking")])
def test_spark_commands_draw_progress_on_a_terminal_and_print_the_same(spark, store, ns, command, label):
    import re

    from terminal import run_with_terminal_stderr

    for i in range(4):
        create_view(spark, store, f"{ns}.v{i}", f"SELECT {i} AS n")
    store.create_view(f"{ns}.trino", columns=[], representations=[("trino", "SELECT 1 AS x")], default_namespace=ns)
    register_views(spark, store, ns)  # the copies match the store: each run below reports the same
    args = ["--db", str(store.path), "spark", command, ns, "--json"]
    piped = CliRunner().invoke(main, args)  # stderr is no terminal there: nothing but the report
    assert (piped.exit_code, piped.stderr) == (0, ""), piped.output
    code, stdout, terminal = run_with_terminal_stderr(main, args)
    assert code == 0 and _without_seconds(stdout) == _without_seconds(piped.stdout)
    assert label in terminal and "5/5" in terminal, terminal  # every view listed, the trino one too
    assert label not in stdout
    if command == "register":
        assert json.loads(stdout)["unchanged"] == [f"{ns}.v{i}" for i in range(4)]
    else:
        assert json.loads(stdout)["skipped"] == [f"{ns}.trino"]

    table = CliRunner().invoke(main, args[:-1], env={"COLUMNS": "200"})
    assert table.exit_code == 0 and table.stderr == "" and label not in table.stdout
    rows = [line for line in table.stdout.splitlines() if f"{ns}.v" in line]
    if command == "register":  # nothing made: said so, and the copies left as they were counted, not listed
        assert rows == [], table.stdout
        lines = table.stdout.splitlines()
        assert re.fullmatch(r"registered 0, already registered 4, skipped 1, failed 0, pruned 0 \(\d+\.\d\d s\)",
                            lines[0]), table.stdout
        assert f"│ {ns}.trino │ skipped │ no 'spark' representation (it has trino) │" in table.stdout
        assert lines[-1] == "already registered, left unchanged: 4 views (--json lists them)"
    else:  # every view matches: no table, the summary and the count of the views that match
        assert rows == [], table.stdout
        assert re.fullmatch(r"4 checked: 4 ok, 0 drifted, 0 broken", table.stdout.splitlines()[0]), table.stdout
        assert table.stdout.splitlines()[1:] == ["ok, matching their stored columns: 4 views (--json lists them)",
                                                 f"not checked (no spark representation): {ns}.trino"]


def test_spark_register_again_of_one_view_counts_it_in_the_line_below_the_report(spark, store, ns):
    """One view left as it was is counted as any number is: 'left unchanged: 1 view', not left out."""
    create_view(spark, store, f"{ns}.only", "SELECT 1 AS n")
    register_views(spark, store, ns)
    table = CliRunner().invoke(main, ["--db", str(store.path), "spark", "register", ns], env={"COLUMNS": "200"})
    assert table.exit_code == 0, table.output
    assert table.stdout.splitlines()[-1] == "already registered, left unchanged: 1 view (--json lists them)"


def test_spark_checks_table_lists_the_findings_broken_first_and_counts_the_views_that_match(spark, store, ns):
    """With thousands of views, an 'ok' row each hid the one that drifted: the table lists the views
    with a finding, broken before drifted (each in the report's order), and the views that match are
    one count line below it; --json lists every view. Exit code 1, as before."""
    spark.sql(f"CREATE TABLE {ns}.src (id INT) USING parquet")
    spark.sql(f"CREATE TABLE {ns}.gone (id INT) USING parquet")
    for name, query in (("a_drifted", f"SELECT id FROM {ns}.src"), ("b_ok", "SELECT 1 AS n"),
                        ("c_broken", f"SELECT id FROM {ns}.gone"), ("d_drifted", f"SELECT id + 1 AS id FROM {ns}.src"),
                        ("e_ok", "SELECT 'x' AS s")):
        create_view(spark, store, f"{ns}.{name}", query)
    spark.sql(f"DROP TABLE {ns}.gone")
    spark.sql(f"DROP TABLE {ns}.src")
    spark.sql(f"CREATE TABLE {ns}.src (id STRING) USING parquet")
    views, table = _failed_check(store, ns)
    assert [(v["identifier"], v["status"]) for v in views] == [
        (f"{ns}.a_drifted", "drifted"), (f"{ns}.b_ok", "ok"), (f"{ns}.c_broken", "broken"),
        (f"{ns}.d_drifted", "drifted"), (f"{ns}.e_ok", "ok")]
    lines = table.splitlines()
    assert lines[0] == "5 checked: 2 ok, 2 drifted, 1 broken"
    listed = [(line.split("│")[1].strip(), line.split("│")[2].strip()) for line in lines if line.startswith("│ ")
              and line.split("│")[1].strip()]
    assert listed == [(f"{ns}.c_broken", "broken"), (f"{ns}.a_drifted", "drifted"),
                      (f"{ns}.d_drifted", "drifted")], table
    assert "_ok" not in table and lines[-1] == "ok, matching their stored columns: 2 views (--json lists them)"

def test_spark_checks_table_keeps_the_report_s_order_within_each_kind_of_finding():
    """The report is in the store's order, by namespace then name: namespace s before s-t, though
    the text "s-t.b" sorts before "s.c". The table puts broken views before drifted ones and keeps
    that order within each, whatever the names' text order."""
    import io

    from viewstore.cli import CliContext, _Console
    from viewstore.spark.cli import _print_drift
    from viewstore.spark.drift import DriftReport, ViewDrift

    cli = CliContext(db="unused.db", actor="carol", catalog=None)
    cli.console = _Console(file=io.StringIO(), width=300, markup=False, emoji=False, highlight=False)
    _print_drift(cli, DriftReport(views=[
        ViewDrift("s.b", "drifted", ("column 'a': type int is now string",)),
        ViewDrift("s.c", "broken", ("no table t",), "TABLE_OR_VIEW_NOT_FOUND"),
        ViewDrift("s.d", "ok", ()),
        ViewDrift("s-t.a", "drifted", ("column 'a': type int is now string",)),
        ViewDrift("s-t.b", "broken", ("no table u",), "TABLE_OR_VIEW_NOT_FOUND")]))
    lines = cli.console.file.getvalue().splitlines()
    listed = [line.split("│")[1].strip() for line in lines if line.startswith("│ ") and line.split("│")[1].strip()]
    assert listed == ["s.c", "s-t.b", "s.b", "s-t.a"], lines
    assert lines[-1] == "ok, matching their stored columns: 1 view (--json lists them)"


def test_spark_check_of_views_without_spark_sql_alone_names_them(spark, store, ns):
    store.create_view(f"{ns}.trino", columns=[], representations=[("trino", "SELECT 1 AS x")], default_namespace=ns)
    result = CliRunner().invoke(main, ["--db", str(store.path), "spark", "check", ns], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "0 checked: 0 ok, 0 drifted, 0 broken" in result.stdout
    assert f"not checked (no spark representation): {ns}.trino" in result.stdout


def test_spark_check_of_a_namespace_checks_its_views_alone(spark, store, ns):
    """NAMESPACE narrows the check to its views: a broken view of another namespace is neither
    listed nor counted, nor fails the check; without NAMESPACE it is."""
    store.create_view(f"{ns}.one", columns=[("x", "int")], representations=[("spark", "SELECT 1 AS x")],
                      default_namespace=ns)
    store.create_view(f"{ns}_other.gone", columns=[("x", "int")],
                      representations=[("spark", "SELECT x FROM no_such_table_here")], default_namespace=ns)
    runner = CliRunner()
    narrowed = runner.invoke(main, ["--db", str(store.path), "spark", "check", ns], env={"COLUMNS": "300"})
    assert narrowed.exit_code == 0, narrowed.output
    assert narrowed.output.splitlines()[0] == "1 checked: 1 ok, 0 drifted, 0 broken" and "gone" not in narrowed.output
    whole = runner.invoke(main, ["--db", str(store.path), "spark", "check", "--json"])
    assert whole.exit_code == 1
    assert [(v["identifier"], v["status"]) for v in json.loads(whole.output)["views"]] == [
        (f"{ns}.one", "ok"), (f"{ns}_other.gone", "broken")]


def test_spark_check_lists_each_view_left_unchecked_under_its_table():
    """The line under a check's table names every view without Spark SQL, in the report's order,
    not the first of them alone."""
    import io

    from viewstore.cli import CliContext, _Console
    from viewstore.spark.cli import _print_drift
    from viewstore.spark.drift import DriftReport, ViewDrift

    cli = CliContext(db="unused.db", actor="carol", catalog=None)
    cli.console = _Console(file=io.StringIO(), width=300, markup=False, emoji=False, highlight=False)
    _print_drift(cli, DriftReport(views=[ViewDrift("s.a", "ok", ())], skipped=["s.t1", "s-t.t2"]))
    assert cli.console.file.getvalue().splitlines()[-2:] == [
        "ok, matching their stored columns: 1 view (--json lists them)",
        "not checked (no spark representation): s.t1, s-t.t2"]


def _metastore_database(spark, ns):
    """In ``ns``: a table, a view Spark made, and a view as Hive writes it (no Spark properties)."""
    from test_metastore import write_record

    from viewstore import formats
    from viewstore.formats import ViewDefinition
    from viewstore.model import Column

    spark.sql(f"CREATE TABLE {ns}.orders (id BIGINT) USING parquet")
    spark.sql(f"CREATE VIEW {ns}.v_spark AS SELECT id FROM {ns}.orders")
    write_record(spark, formats.encode(ViewDefinition(dialect="hive", sql=f"SELECT id FROM {ns}.orders",
                                                      columns=(Column("id", "bigint"),), owner="hana",
                                                      database=ns, name="v_hive"), "hive"))


def test_spark_import_imports_the_views_skips_the_table_and_then_the_stored_views(spark, ns, tmp_path):
    from test_metastore import trino_definition, write_record

    from viewstore import ViewStore, formats

    _metastore_database(spark, ns)
    db = tmp_path / "imported.db"  # no store yet: the import starts one
    runner = CliRunner()
    first = runner.invoke(main, ["--db", str(db), "spark", "import", ns], env={"COLUMNS": "300"})
    assert first.exit_code == 0, first.output
    assert "imported 2, skipped 1, failed 0" in first.stdout and first.stderr == ""
    assert "in the store already" not in first.stdout
    assert f"{ns}.orders" in first.stdout and "not-a-view" in first.stdout and "a MANAGED_TABLE" in first.stdout
    with ViewStore(db, actor="someone") as store:
        assert store.list_views(ns) == [(ns, "v_hive"), (ns, "v_spark")]
        assert [store.history(f"{ns}.{name}")[0].source for name in ("v_hive", "v_spark")] == ["hms:hive", "hms:spark"]

    broken = formats.encode(trino_definition(ns, "v_broken"), "trino")
    write_record(spark, {**broken, "viewOriginalText": "/* Presto View: not$base64 */"})
    again = runner.invoke(main, ["--db", str(db), "spark", "import", ns, "--json"])
    assert again.exit_code == 1 and again.stderr == "", again.output  # a view failed: the report, exit code 1
    report = json.loads(again.stdout)
    assert report["imported"] == []
    # every row, each by both keys: the record's name and the view's identifier
    assert [(s["name"], s["identifier"], s["reason"]) for s in report["skipped"]] == [
        (f"{ns}.orders", f"{ns}.orders", "not-a-view"), (f"{ns}.v_hive", f"{ns}.v_hive", "exists"),
        (f"{ns}.v_spark", f"{ns}.v_spark", "exists")]
    (failed,) = report["failed"]
    assert (failed["name"], failed["identifier"], failed["error"]) == (f"{ns}.v_broken", f"{ns}.v_broken",
                                                                        "ValidationError")
    assert failed["message"].startswith("viewOriginalText: malformed Base64")
    with ViewStore(db, actor="someone") as store:
        assert store.event_count() == 2
    # the table lists the table skipped and the failure, and counts the views in the store already
    table = runner.invoke(main, ["--db", str(db), "spark", "import", ns], env={"COLUMNS": "300"})
    assert table.exit_code == 1 and table.stderr == "", table.output
    assert f"{ns}.v_hive" not in table.stdout and f"{ns}.v_spark" not in table.stdout, table.stdout
    assert f"│ {ns}.orders │ not-a-view │ a MANAGED_TABLE │" in table.stdout, table.stdout
    assert f"│ {ns}.v_broken │ ValidationError │" in table.stdout, table.stdout
    assert table.stdout.splitlines()[-2:-1] == ["skipped as in the store already: 2 views (--json lists them)"]


def test_spark_import_of_a_missing_database_exits_1_and_starts_no_store(spark, tmp_path):
    db = tmp_path / "new.db"
    result = CliRunner().invoke(main, ["--db", str(db), "spark", "import", "no_such_db_here"])
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith("error: no database no_such_db_here in the embedded Derby metastore ")
    assert result.stderr.endswith(" lists those it holds\n") and result.stdout == ""
    as_json = CliRunner().invoke(main, ["--db", str(db), "spark", "import", "no_such_db_here", "--json"])
    assert as_json.exit_code == 1 and as_json.stdout == ""
    assert json.loads(as_json.stderr)["error"]["type"] == "NoSuchViewError"
    assert not db.exists()


def test_spark_import_into_a_file_that_is_no_store_fails_before_the_metastore_is_read(spark, tmp_path):
    import sqlite3

    other = tmp_path / "other.db"
    with sqlite3.connect(other) as raw:
        raw.execute("CREATE TABLE t (x INT)")
    raw.close()
    before = other.read_bytes()
    result = CliRunner().invoke(main, ["--db", str(other), "spark", "import", "no_such_db_here"])
    assert result.exit_code == 1 and result.stdout == "", result.output
    assert "is not a viewstore database" in result.stderr and "no_such_db_here" not in result.stderr, result.stderr
    assert other.read_bytes() == before


def test_spark_import_with_viewstore_db_set_but_empty_is_a_usage_error_before_the_metastore_is_read(spark, tmp_path,
                                                                                                    monkeypatch):
    monkeypatch.chdir(tmp_path)  # the default ./viewstore.db would be here
    result = CliRunner().invoke(main, ["spark", "import", "no_such_db_here"], env={"VIEWSTORE_DB": ""})
    assert result.exit_code == 2, result.output
    assert "VIEWSTORE_DB is set but empty" in result.stderr and "no_such_db_here" not in result.output
    assert list(tmp_path.iterdir()) == []


def test_demo_with_viewstore_db_set_but_empty_is_a_usage_error_not_a_temporary_store(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["demo"], env={"VIEWSTORE_DB": " "})
    assert result.exit_code == 2 and "VIEWSTORE_DB is set but empty" in result.stderr, result.output
    assert list(tmp_path.iterdir()) == []


def test_spark_import_draws_progress_on_a_terminal_and_prints_the_same(spark, ns, store):
    import re

    from terminal import run_with_terminal_stderr

    _metastore_database(spark, ns)
    args = ["--db", str(store.path), "spark", "import", ns, "--json"]
    assert CliRunner().invoke(main, args).exit_code == 0  # the views are stored: each run below skips them all
    piped = CliRunner().invoke(main, args)
    assert (piped.exit_code, piped.stderr) == (0, ""), piped.output
    code, stdout, terminal = run_with_terminal_stderr(main, args)
    assert code == 0 and _without_seconds(stdout) == _without_seconds(piped.stdout)
    assert len(json.loads(stdout)["skipped"]) == 3
    assert "importing" in terminal and "3/3" in terminal, terminal
    assert "importing" not in stdout

    def without_seconds(text):
        return re.sub(r"\(\d+\.\d\d s\)", "(s)", text)

    table = CliRunner().invoke(main, args[:-1], env={"COLUMNS": "200"})
    code, stdout, terminal = run_with_terminal_stderr(main, args[:-1])
    assert table.exit_code == code == 0 and table.stderr == ""
    assert "imported 0, skipped 3, failed 0" in table.stdout and "importing" not in table.stdout
    assert without_seconds(stdout) == without_seconds(table.stdout)


def test_spark_metastore_write_writes_the_engines_record(spark, store, ns):
    from viewstore import Column
    from viewstore.spark import read_metastore_table

    spark.sql(f"CREATE TABLE {ns}.src (id INT) USING parquet")
    spark.sql(f"INSERT INTO {ns}.src VALUES (3)")
    store.create_view(f"{ns}.ids", columns=[Column("id", "int")], default_catalog="spark_catalog",
                      default_namespace=ns, representations=[("spark", "SELECT id FROM src"),
                                                             ("trino", f"SELECT id FROM hive.{ns}.src")])
    runner = CliRunner()
    args = ["--db", str(store.path), "spark", "metastore-write", f"{ns}.ids"]
    done = runner.invoke(main, [*args, "--engine", "trino"])
    assert done.exit_code == 0, done.output
    assert done.output.strip() == f"wrote {ns}.ids to the metastore as trino keeps it"
    assert read_metastore_table(spark, ns, "ids")["parameters"]["presto_view"] == "true"

    again = runner.invoke(main, [*args, "--engine", "spark", "--json"])
    assert again.exit_code == 1 and again.stdout == ""
    assert json.loads(again.stderr)["error"] == {
        "type": "ViewAlreadyExistsError", "exit_code": 1,
        "message": f"a view {ns}.ids exists in the metastore (--replace replaces it)"}
    assert "presto_view" in read_metastore_table(spark, ns, "ids")["parameters"]  # unchanged

    replaced = runner.invoke(main, [*args, "--engine", "SPARK", "--replace", "--json"])
    assert replaced.exit_code == 0, replaced.output
    assert json.loads(replaced.stdout) == {"identifier": f"{ns}.ids", "written": f"{ns}.ids", "engine": "spark",
                                            "replace": True}
    assert "presto_view" not in read_metastore_table(spark, ns, "ids")["parameters"]
    assert [r.id for r in spark.sql(f"SELECT * FROM {ns}.ids").collect()] == [3]

    store.create_view(f"{ns}.more", columns=[Column("id", "int")], default_catalog="spark_catalog",
                      default_namespace=ns, representations=[("spark", "SELECT id FROM src")])
    more = runner.invoke(main, ["--db", str(store.path), "spark", "metastore-write", f"{ns}.more", "--engine", "spark",
                                "--json"])
    assert more.exit_code == 0, more.output
    assert json.loads(more.stdout) == {"identifier": f"{ns}.more", "written": f"{ns}.more", "engine": "spark",
                                        "replace": False}

    store.create_view("no_such_db_here.v", columns=[Column("id", "int")], default_namespace=(),
                      representations=[("spark", "SELECT 1 AS id")])
    missing = runner.invoke(main, ["--db", str(store.path), "spark", "metastore-write", "no_such_db_here.v",
                                   "--engine", "spark"])
    assert (missing.exit_code, missing.stdout) == (1, "")
    assert missing.stderr.startswith("error: no database no_such_db_here in the embedded Derby metastore ")
    assert missing.stderr.endswith(": create it first (CREATE DATABASE no_such_db_here in a Spark session with "
                                   "Hive support and the same settings)\n")
    assert not spark.catalog.databaseExists("no_such_db_here")

    iceberg = runner.invoke(main, [*args, "--engine", "iceberg"])
    assert iceberg.exit_code == 2 and "'iceberg' is not one of" in iceberg.output


def test_a_command_that_starts_spark_says_nothing_on_stderr_but_the_jvms_own_warning_and_leaves_no_warehouse(
        tmp_path):
    """A command that starts the process's JVM gives it log4j at errors only (no notice of Spark's
    default profile, of its log level, of Hadoop's native library) and, without --hive, its session
    a warehouse of its own that goes with it, not a spark-warehouse folder in the working directory.
    The JVM's warning of the incubator module Spark loads comes before any setting: it stays. A
    user's own log4j file and warehouse (here in Spark's conf folder), and log4j set in the
    environment's Java options, are left to work as they do. A catalog in memory said with
    --conf spark.sql.catalogImplementation=in-memory is Spark's default said aloud: it gets a
    temporary warehouse too.

    Spark puts its default warehouse in the working directory of the JVM, which is the process's
    when the JVM starts (a later chdir does not move it): each command here runs in a process of
    its own whose working directory is the folder checked. Where that path has a space, Spark
    escapes it twice and makes its folder beside it (``in%20memory/work/spark-warehouse`` for
    ``in memory/work``), so the folders' names here have none, and nothing but the test's own
    files may appear anywhere under ``tmp_path``."""
    import subprocess
    import sys

    from viewstore import ViewStore

    db = tmp_path / "views.db"
    with ViewStore(db, actor="t") as store:
        store.create_view("sales.one", columns=[("x", "int")], default_namespace="sales",
                          representations=[{"sql": "SELECT 1 AS x", "dialect": "spark"}])
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "log4j2.properties").write_text(
        "rootLogger.level = info\nrootLogger.appenderRef.stderr.ref = console\nappender.console.type = Console\n"
        "appender.console.name = console\nappender.console.target = SYSTEM_ERR\n"
        "appender.console.layout.type = PatternLayout\nappender.console.layout.pattern = USER %p %c{1}: %m%n\n")
    (conf / "spark-defaults.conf").write_text(f"spark.sql.warehouse.dir {tmp_path / 'user-warehouse'}\n")
    (conf / "java-options.properties").write_text(
        (conf / "log4j2.properties").read_text().replace("USER %p", "JAVA OPTIONS %p"))
    started = {}
    for name, extra, options in (
            ("quiet", {}, []), ("in-memory", {}, ["--conf", "spark.sql.catalogImplementation=in-memory"]),
            ("user's", {"SPARK_CONF_DIR": str(conf)}, []),
            # log4j in the environment's Java options, which the JVM reads before its command line
            ("java options", {"JAVA_TOOL_OPTIONS": f"-Dlog4j.configurationFile={conf / 'java-options.properties'}"},
             [])):
        work, temporary = tmp_path / name / "work", tmp_path / name / "tmp"
        work.mkdir(parents=True)
        temporary.mkdir()
        env = {**{k: v for k, v in os.environ.items() if k != "SPARK_CONF_DIR"}, "TMPDIR": str(temporary), **extra}
        started[name] = (work, temporary, subprocess.Popen(
            [sys.executable, "-m", "viewstore", "--db", str(db), "spark", "register", "--master", "local[1]",
             "--conf", "spark.ui.enabled=false", *options], cwd=work, env=env, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True))
    done = {name: (work, temporary, *process.communicate(timeout=300), process.returncode)
            for name, (work, temporary, process) in started.items()}

    work, temporary, out, err, code = done["quiet"]
    assert code == 0, err
    assert out.splitlines()[-1].startswith("note: the session catalog was in memory"), out
    assert err == "WARNING: Using incubator modules: jdk.incubator.vector\n"
    assert list(work.iterdir()) == [] and list(temporary.iterdir()) == []  # its warehouse went with it

    work, temporary, out, err, code = done["in-memory"]
    assert code == 0, err
    assert out.splitlines()[-1].startswith("note: the session catalog was in memory"), out
    assert err == "WARNING: Using incubator modules: jdk.incubator.vector\n"
    assert list(work.iterdir()) == [] and list(temporary.iterdir()) == []
    assert sorted(path.name for path in tmp_path.iterdir()) == [
        "conf", "in-memory", "java options", "quiet", "user's", "user-warehouse", "views.db"]

    work, temporary, out, err, code = done["user's"]
    assert code == 0, err
    assert "USER WARN NativeCodeLoader: " in err and "default log4j profile" not in err, err  # their pattern
    assert (tmp_path / "user-warehouse" / "sales.db").is_dir() and list(work.iterdir()) == []

    work, temporary, out, err, code = done["java options"]
    assert code == 0, err
    assert "JAVA OPTIONS WARN NativeCodeLoader: " in err and "default log4j profile" not in err, err


@pytest.mark.parametrize("as_json", [False, True])
def test_ctrl_c_in_a_spark_import_of_many_views_says_how_far_it_got_and_that_those_stay(spark, ns, tmp_path, as_json):
    """Ctrl-C during `spark import` said only 'interrupted': whether the views done before stayed,
    and what a run again would do, were left to guess. It says it now as `hms import` does: how
    many of the database's tables and views were done, that the views imported stay, and that a
    run again skips them. The SIGINT is real, sent as the fourth view's record is to be read."""
    import signal
    import sys

    from viewstore import ViewStore
    from viewstore.spark import metastore

    for i in range(8):
        spark.sql(f"CREATE VIEW {ns}.v{i} AS SELECT {i} AS n")
    db = tmp_path / "imported.db"
    reads = []

    def hook(frame, event, arg):  # a real SIGINT as the fourth record is to be read
        if event == "call" and frame.f_code.co_name == "_read" and frame.f_code.co_filename == metastore.__file__:
            reads.append(1)
            if len(reads) == 4:
                sys.setprofile(None)
                os.kill(os.getpid(), signal.SIGINT)

    # Python's own Ctrl-C (the SparkContext of this process puts in one of its own)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.setprofile(hook)
    try:
        result = CliRunner().invoke(main, ["--db", str(db), "spark", "import", ns, *(["--json"] if as_json else [])])
    finally:
        sys.setprofile(None)
        signal.signal(signal.SIGINT, previous)
    assert (result.exit_code, result.stdout) == (130, ""), result.output
    said = (f"interrupted after 3 of 8 tables and views of {ns}: each view is its own transaction, so the views "
            "imported stay, and a run again skips them")
    if as_json:
        assert json.loads(result.stderr) == {"error": {"type": "KeyboardInterrupt", "message": said, "exit_code": 130}}
    else:
        assert result.stderr == said + "\n"
    with ViewStore(db) as store:
        assert store.list_views(ns) == [(ns, f"v{i}") for i in range(3)]
    again = json.loads(CliRunner().invoke(main, ["--db", str(db), "spark", "import", ns, "--json"]).stdout)
    assert [i["identifier"] for i in again["imported"]] == [f"{ns}.v{i}" for i in range(3, 8)]
    assert [(s["identifier"], s["reason"]) for s in again["skipped"]] == [(f"{ns}.v{i}", "exists") for i in range(3)]


@pytest.mark.parametrize("settled, said", [([], "0"), ([(2, 5)], "2 of 5")])
def test_ctrl_c_in_a_spark_import_says_of_how_many_only_once_the_count_is_known(spark, tmp_path, monkeypatch,
                                                                                 settled, said):
    """Before the first view is settled the import has not counted the database's tables and views:
    the message says how many were done, not 'of 0'."""
    from viewstore.spark import cli as spark_cli

    def interrupted_import(session, store, database, progress):
        for done, total in settled:
            progress(done, total)
        raise KeyboardInterrupt

    monkeypatch.setattr(spark_cli, "import_metastore_views", interrupted_import)
    result = CliRunner().invoke(main, ["--db", str(tmp_path / "i.db"), "spark", "import", "sales"])
    assert (result.exit_code, result.stdout) == (130, ""), result.output
    assert result.stderr == (f"interrupted after {said} tables and views of sales: each view is its own transaction, "
                             "so the views imported stay, and a run again skips them\n")


def test_spark_register_in_a_dialect_no_view_has_names_those_the_views_have(spark, store, ns):
    """A dialect is any name, so `--dialect klingon` is no error; but it skipped every view as
    `no-representation` and said no more. When not one view has SQL in the dialect, the report
    names the dialects they have, and the command says so in a line of its own."""
    create_view(spark, store, f"{ns}.one", "SELECT 1 AS n")
    store.create_view(f"{ns}.trino", columns=[], representations=[("trino", "SELECT 1 AS x"), ("hive", "SELECT 1 x")],
                      default_namespace=ns)
    report = register_views(spark, store, ns, dialect="klingon")
    assert report.registered == [] and [s.reason for s in report.skipped] == ["no-representation"] * 2
    assert report.other_dialects == ["hive", "spark", "trino"]
    assert register_views(spark, store, ns).other_dialects == []  # one view has spark SQL: nothing to say

    args = ["--db", str(store.path), "spark", "register", ns, "--dialect", "klingon"]
    table = CliRunner().invoke(main, args, env={"COLUMNS": "300"})
    assert (table.exit_code, table.stderr) == (0, ""), table.output
    lines = table.stdout.splitlines()
    assert f"│ {ns}.one   │ skipped │ no 'klingon' representation (it has spark)       │" in lines, table.stdout
    assert lines[-1] == (f"no stored view of {ns} has SQL in the dialect 'klingon'; theirs: hive, spark, trino "
                         "(--dialect names the one to register)"), table.stdout
    as_json = CliRunner().invoke(main, [*args, "--json"])
    assert as_json.exit_code == 0 and json.loads(as_json.stdout)["other_dialects"] == ["hive", "spark", "trino"]

def test_spark_register_of_every_namespace_in_a_dialect_no_view_has_names_those_the_views_have(spark, tmp_path):
    """Without a namespace (every stored view), the line naming the dialects the views have is
    said too, of no namespace."""
    with ViewStore(tmp_path / "views.db", actor="t") as store:
        store.create_view("nowhere.t", columns=[], representations=[("trino", "SELECT 1 AS x")],
                          default_namespace="nowhere")
    result = CliRunner().invoke(main, ["--db", str(store.path), "spark", "register", "--dialect", "klingon"],
                                env={"COLUMNS": "300"})
    assert (result.exit_code, result.stderr) == (0, ""), result.output
    assert result.stdout.splitlines()[-1] == ("no stored view has SQL in the dialect 'klingon'; theirs: trino "
                                              "(--dialect names the one to register)"), result.stdout


def test_the_spark_group_s_help_says_how_to_install_what_it_needs():
    """``viewstore spark --help`` says how to install pyspark (INSTALL_SPARK, as every message that needs
    it), and keeps its examples as written (\\b: not rewrapped)."""
    from viewstore.errors import INSTALL_SPARK

    result = CliRunner().invoke(main, ["spark", "--help"])
    assert result.exit_code == 0, result.output
    assert f"Work with the store from Spark (needs pyspark; {INSTALL_SPARK})." in " ".join(result.output.split())
    assert ("\n      viewstore spark check sales --master 'local[2]'\n      viewstore spark check --json\n"
            in result.output)


@pytest.mark.parametrize("command", [["check"], ["register"], ["import", "sales"],
                                     ["metastore-write", "sales.v", "--engine", "spark"]])
def test_an_empty_master_is_a_usage_error_as_an_empty_db_is(tmp_path, command):
    """--master '' was taken as no --master at all (spark-defaults.conf's, or local), silently, where
    an empty --db, --actor, --catalog or --location is refused."""
    result = CliRunner().invoke(main, ["--db", str(tmp_path / "typo.db"), "spark", *command, "--master", ""])
    assert result.exit_code == 2, result.output
    assert result.output.splitlines()[-1] == "Error: Invalid value for '--master': must not be empty"
    result = CliRunner().invoke(main, ["--db", str(tmp_path / "typo.db"), "spark", *command, "--master", "",
                                       "--json"])
    assert result.exit_code == 2, result.output
    assert json.loads(result.output) == {"error": {
        "type": "BadParameter", "exit_code": 2, "message": "Invalid value for '--master': must not be empty"}}
    assert not (tmp_path / "typo.db").exists()


@pytest.mark.parametrize("master", ["local[2147483647]", "local[*, 2147483647]", "local-cluster[2,1,2147483647]"])
def test_a_local_master_number_at_a_java_int_s_largest_passes_the_check(master):
    """The context reads each number as a Java int: its largest value is one it reads (planted, > taken
    as >= refused local[2147483647])."""
    from viewstore.spark.cli import _settings

    assert _settings(master, ()) == [("spark.master", master)]


@pytest.mark.parametrize("master", ["local[2147483648]", "local[2, 2147483648]", "local-cluster[2,1,2147483648]",
                                    "local[4294967296]", "local[2,]", "local[*,]"])
def test_a_local_master_one_past_a_java_int_or_of_no_failure_count_is_refused(master):
    """One past a Java int's largest value, and a failure count left empty after its comma, are masters
    the context cannot read (planted, a bound of 2**31 or 2**32 - 1 let local[2147483648] through, and
    [0-9]* after the comma local[2,])."""
    from viewstore.spark.cli import _settings

    for args in ((master, ()), (None, (f"spark.master={master}",))):
        with pytest.raises(click.UsageError, match=r"a Spark master is local, local\[N\] \(N of 1 or more\)"):
            _settings(*args)
