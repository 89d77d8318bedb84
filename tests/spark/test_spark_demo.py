"""``viewstore demo`` end to end, on the test session (the command uses the active session)."""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner

from viewstore import ViewStore
from viewstore.cli import main

pytestmark = pytest.mark.spark


def test_demo_runs_every_step_and_leaves_a_consistent_store(spark, tmp_path):
    namespace = "demo" + uuid.uuid4().hex[:8]
    # brackets in a path are data: they were read as markup (this one's "[/b]" closing no tag: a traceback)
    folder = tmp_path / "[red]shop["
    folder.mkdir()
    db = folder / "b]demo.db"
    with ViewStore(db, actor="carol") as earlier:  # a change before the run: no part of the run's audit
        earlier.create_view("elsewhere.older", columns=[("one", "int")], representations=[("spark", "SELECT 1 AS one")],
                            default_namespace="elsewhere")
    spark.sql(f"CREATE DATABASE {namespace}")  # a database of the name may be there already
    spark.catalog.setCurrentDatabase(namespace)
    try:
        result = CliRunner().invoke(main, ["--db", str(db), "demo", "--namespace", namespace],
                                    env={"COLUMNS": "120"})
        assert result.exit_code == 0, result.output + repr(result.exception)
        out = result.output
        for step in range(1, 8):
            assert f"Step {step}/7" in out
        assert "TABLE_OR_VIEW_NOT_FOUND" in out  # the new driver's session lacks the views
        assert f"registered in dependency order: {namespace}.daily_orders, {namespace}.region_totals" in out
        assert "the original figures are back" in out and "both answers agree" in out
        assert "Demo finished" in out
        assert f"store: {db}" in out
        assert f"$ viewstore --db {db}" in out  # the commands name the store kept
        assert "keeping the store" not in out and "(temporary: use" not in out
        assert "carol" not in out  # the audit answers for this run alone
        assert spark.catalog.currentDatabase() == namespace  # the session's current database is back

        with ViewStore(db) as store:
            daily = store.load_view(f"{namespace}.daily_orders")
            totals = store.load_view(f"{namespace}.region_totals")
            assert daily.current_version_id == 1 and len(daily.versions) == 2  # replaced, then rolled back
            assert [str(c.type) for c in daily.columns] == ["date", "string", "long", "decimal(20,2)"]
            assert sorted(totals.dialects) == ["spark", "trino"]
            assert totals.comment == "Orders and revenue per region, all days"
            assert {(e.actor, e.type) for e in store.events(actor="bob")} == {
                ("bob", "view.comment_updated"), ("bob", "view.representation_added")}
            metadata = sorted((folder / "warehouse" / namespace).glob("*/metadata/*.metadata.json"))
            assert len(metadata) == 2
            assert json.loads(metadata[0].read_text())["current-version-id"] == 1
        assert spark.sql(f"SELECT count(*) AS n FROM {namespace}.region_totals").first().n == 4
    finally:
        spark.catalog.setCurrentDatabase("default")
        spark.sql(f"DROP DATABASE IF EXISTS {namespace} CASCADE")


def test_run_demo_without_a_session_uses_the_one_running_and_leaves_it_as_it_was(spark, tmp_path, monkeypatch):
    """The builder hands back the session already running: the demo set its settings (one shuffle
    partition, adaptive execution off) and stopped it at the end. Now it is used as it is and left
    running. The temporary store and the work directory are gone after the run; the result holds
    the figures and files the steps made, the audit of this run in order."""
    import io
    import logging
    import tempfile

    from pyspark.logger import PySparkLogger
    from rich.console import Console

    from viewstore.spark import run_demo

    namespace = "demo" + uuid.uuid4().hex[:8]
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    settings = {"spark.sql.shuffle.partitions": "3", "spark.sql.adaptive.enabled": "true"}
    before = {key: spark.conf.get(key) for key in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    quiet = PySparkLogger.getLogger("SQLQueryContextLogger")
    level = quiet.level
    quiet.setLevel(logging.NOTSET)
    records: list[logging.LogRecord] = []
    kept = logging.Handler()
    kept.emit = records.append  # type: ignore[method-assign]
    quiet.addHandler(kept)
    printed = io.StringIO()
    try:
        result = run_demo(Console(file=printed, width=250), namespace=namespace)
        assert spark.sql("SELECT 1 AS one").first().one == 1  # running
        assert {key: spark.conf.get(key) for key in settings} == settings
        assert records == [] and quiet.level == logging.NOTSET  # the errors it caught logged nothing, left as set
        out = printed.getvalue()
        assert "the session already running in this process (left running)" in out and " started in " not in out
        assert "store: " in out and "(temporary: use viewstore --db demo.db demo to keep it)" in out
        assert "viewstore --db demo.db demo      (the same, keeping the store)" in out
        assert "$ viewstore --db demo.db show" in out
        assert list(tmp_path.iterdir()) == []  # the work directory, the store in it, the exported files
        assert result.store_path.name == "demo.db" and result.store_path.parent.parent == tmp_path

        daily, totals = f"{namespace}.daily_orders", f"{namespace}.region_totals"
        assert result.registered == [daily, totals]
        query = (f"SELECT c.region, count(*) AS orders, sum(o.amount) AS revenue FROM {namespace}.orders o "
                 f"JOIN {namespace}.customers c ON o.customer_id = c.customer_id {{}} GROUP BY c.region ORDER BY 1")
        every = [tuple(r) for r in spark.sql(query.format("")).collect()]
        large = [tuple(r) for r in spark.sql(query.format("WHERE o.amount >= 50")).collect()]
        assert result.totals_before == result.totals_rolled_back == every and len(every) == 4
        assert result.totals_replaced == large != every
        assert [(p.parent.parent.name, p.name.endswith(".metadata.json")) for p in result.exported] == [
            ("daily_orders", True), ("region_totals", True)]
        assert result.audit_python == result.audit_spark == [
            ("alice", daily, "view.created", 1), ("alice", daily, "view.replaced", 1),
            ("alice", daily, "view.rolled_back", 1), ("alice", totals, "view.created", 1),
            ("bob", totals, "view.comment_updated", 1), ("bob", totals, "view.representation_added", 1)]
        assert list(result.step_seconds) == ["tables", "define views", "register", "trino", "replace and rollback",
                                             "export", "audit"]
        assert result.seconds >= sum(result.step_seconds.values()) - 0.5 > 0

        # a second run, with a store of its own: the views the session keeps from the first are not in it
        again = run_demo(Console(file=io.StringIO(), width=250), namespace=namespace)
        assert again.registered == [daily, totals] and again.audit_python == result.audit_python
        assert again.totals_before == again.totals_rolled_back == every
    finally:
        quiet.removeHandler(kept)
        quiet.setLevel(level)
        for key, value in before.items():
            spark.conf.set(key, value)
        spark.catalog.setCurrentDatabase("default")
        spark.sql(f"DROP DATABASE IF EXISTS {namespace} CASCADE")


_NOT_A_NAME = "namespace must be a database name of letters, digits and _ (not starting with a digit), not "


@pytest.mark.parametrize("kwargs, message", [
    ({"console": 5}, "console must be a rich Console (rich.console.Console) or None, not int"),
    ({"db": 5}, "a db must be a path (text or os.PathLike), not 5"),
    ({"db": " "}, "a db must be a path (text or os.PathLike), not ' '"),
    ({"spark": 5}, "spark must be a classic (py4j) SparkSession, not int"),
    ({"namespace": 5}, f"{_NOT_A_NAME}int"),
    ({"namespace": ""}, f"{_NOT_A_NAME}''"),
    ({"namespace": "a.b"}, f"{_NOT_A_NAME}'a.b'"),
    ({"namespace": "1a"}, f"{_NOT_A_NAME}'1a'"),
    ({"namespace": "x; DROP DATABASE y"}, f"{_NOT_A_NAME}'x; DROP DATABASE y'"),
    ({"namespace": "Global_Temp"}, "namespace 'Global_Temp' is Spark's global temporary database, where no table or "
                                  "view can be made; choose another"),
])
def test_run_demo_refuses_arguments_of_the_wrong_type_before_it_starts(spark, tmp_path, kwargs, message):
    """Bad arguments are a ValidationError saying which, raised before anything is made (no store
    file, no database, nothing printed); they were AttributeError, TypeError or EngineError."""
    import io

    from rich.console import Console

    from viewstore import ValidationError
    from viewstore.spark import run_demo

    out = io.StringIO()
    args = {"console": Console(file=out), "db": tmp_path / "demo.db", "spark": spark, **kwargs}
    databases = {d.name for d in spark.catalog.listDatabases()}
    with pytest.raises(ValidationError) as raised:
        run_demo(args.pop("console"), **args)
    assert str(raised.value) == message
    assert not (tmp_path / "demo.db").exists() and out.getvalue() == ""
    assert {d.name for d in spark.catalog.listDatabases()} == databases


def test_run_demo_with_no_session_running_refuses_the_global_temporary_database_before_spark_starts(tmp_path):
    """In a process without a session, the name checked is Spark's default one, before a JVM starts."""
    import subprocess
    import sys

    code = ("from viewstore.spark import run_demo\n"
            "from pyspark import SparkContext\n"
            "try:\n"
            "    run_demo(namespace='GLOBAL_TEMP')\n"
            "except Exception as e:\n"
            "    print(type(e).__name__, e, SparkContext._active_spark_context)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.stdout == ("ValidationError namespace 'GLOBAL_TEMP' is Spark's global temporary database, where no "
                           "table or view can be made; choose another None\n"), done.stderr
    assert list(tmp_path.iterdir()) == []


def test_run_demo_with_no_session_running_starts_a_local_one_and_stops_it_at_the_end(tmp_path):
    """In a process without a session (as ``viewstore demo`` starts): a local session with its catalog
    in memory, stopped when the demo ends, and its work directory gone. Its JVM listens on 127.0.0.1
    (started with SPARK_LOCAL_IP), and the process's environment is left without it, as it was."""
    import os
    import subprocess
    import sys

    code = ("import io, json, os, tempfile, sys\n"
            "tempfile.tempdir = sys.argv[1]\n"
            "from pyspark import SparkContext\n"
            "from rich.console import Console\n"
            "from viewstore.spark import run_demo\n"
            "out = io.StringIO()\n"
            "result = run_demo(Console(file=out, width=250), namespace='own')\n"
            "print(json.dumps({'out': out.getvalue(), 'registered': result.registered, "
            "'steps': list(result.step_seconds),"
            " 'same': result.totals_before == result.totals_rolled_back != result.totals_replaced,"
            " 'stopped': SparkContext._active_spark_context is None, 'local ip': os.environ.get('SPARK_LOCAL_IP'),"
            " 'the jvm s local ip': SparkContext._jvm.java.lang.System.getenv('SPARK_LOCAL_IP')}))\n")
    work = tmp_path / "tmp"
    work.mkdir()
    env = {name: value for name, value in os.environ.items() if name != "SPARK_LOCAL_IP"}
    done = subprocess.run([sys.executable, "-c", code, str(work)], capture_output=True, text=True, timeout=600,
                          cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    # the JVM it starts logs errors only: none of Spark's start-up lines (its default level, said as a
    # shell's, with how to change it) reach stderr; the JVM's own incubator warning comes before log4j
    said = [line for line in done.stderr.splitlines() if line and not line.startswith("WARNING: Using incubator")]
    assert said == [], done.stderr
    result = json.loads(done.stdout)
    assert (result["local ip"], result["the jvm s local ip"]) == (None, "127.0.0.1")
    assert re.search(r"Spark 4\.3\.\d+ started in \d+\.\d s \(local, in-memory catalog\)", result["out"])
    assert "Demo finished" in result["out"] and "(left running)" not in result["out"]
    assert result["registered"] == ["own.daily_orders", "own.region_totals"] and result["same"] is True
    assert result["steps"] == ["spark start", "tables", "define views", "register", "trino", "replace and rollback",
                               "export", "audit"]
    assert result["stopped"] is True
    assert list(tmp_path.iterdir()) == [work] and list(work.iterdir()) == []  # the work directory and its warehouse

def test_a_local_session_whose_jvm_it_starts_keeps_the_user_s_own_spark_local_ip(tmp_path):
    """With SPARK_LOCAL_IP set by the user, the JVM local_session starts gets that address, not
    127.0.0.1, and the process's environment keeps it."""
    import os
    import subprocess
    import sys

    code = ("import json, os, sys\n"
            "from pathlib import Path\n"
            "from pyspark import SparkContext\n"
            "from viewstore.spark.demo import local_session\n"
            "session = local_session(Path(sys.argv[1]))\n"
            "print(json.dumps({'local ip': os.environ.get('SPARK_LOCAL_IP'),"
            " 'the jvm s local ip': SparkContext._jvm.java.lang.System.getenv('SPARK_LOCAL_IP')}))\n"
            "session.stop()\n")
    env = {**os.environ, "SPARK_LOCAL_IP": "localhost"}
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "work")], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout) == {"local ip": "localhost", "the jvm s local ip": "localhost"}

def test_a_hive_local_session_in_a_jvm_already_running_keeps_derby_log_under_its_workdir(tmp_path):
    """A JVM already running (here a stopped in-memory session's) takes no new Java options: Derby's
    home is set in it as a system property, so derby.log is not left in the working directory."""
    import subprocess
    import sys

    code = ("import sys\n"
            "from pathlib import Path\n"
            "from viewstore.spark.demo import local_session\n"
            "root = Path(sys.argv[1])\n"
            "local_session(root / 'first').stop()\n"
            "spark = local_session(root / 'second', hive=True)\n"
            "spark.sql('SHOW DATABASES').collect()\n"
            "spark.stop()\n")
    work = tmp_path / "work"
    work.mkdir()
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True,
                          timeout=300, cwd=work)
    assert done.returncode == 0, done.stderr[-3000:]
    assert list(work.iterdir()) == []
    assert (tmp_path / "second" / "derby.log").is_file() and (tmp_path / "second" / "metastore_db").is_dir()


def test_jvm_environment_sets_each_variable_inside_the_block_and_puts_back_what_was_there(monkeypatch):
    """A variable the process has already (a user's own SPARK_SUBMIT_OPTS, which the JVM's
    options are put in front of) has the new value inside the block, and its own after it; one
    it had not is gone again."""
    import os

    from viewstore.spark.demo import jvm_environment

    monkeypatch.setenv("VIEWSTORE_TEST_HELD", "own")
    monkeypatch.delenv("VIEWSTORE_TEST_NEW", raising=False)
    with jvm_environment({"VIEWSTORE_TEST_HELD": "given", "VIEWSTORE_TEST_NEW": "given"}):
        assert (os.environ["VIEWSTORE_TEST_HELD"], os.environ["VIEWSTORE_TEST_NEW"]) == ("given", "given")
    assert os.environ["VIEWSTORE_TEST_HELD"] == "own" and "VIEWSTORE_TEST_NEW" not in os.environ


def test_the_local_session_has_the_settings_it_names(spark):
    """The test session is one (hive=True): two cores, one shuffle partition, no UI, no adaptive
    execution, 1 GB, a serial GC and a JIT that stops at C1, errors-only logging, and the warehouse,
    the Derby metastore and Derby's own home under the directory given."""
    import logging

    from pyspark.logger import PySparkLogger

    conf = dict(spark.sparkContext.getConf().getAll())
    root = Path(conf["spark.sql.warehouse.dir"].removeprefix("file:")).parent
    assert conf["spark.sql.warehouse.dir"] == f"file:{root / 'warehouse'}"
    assert (conf["spark.master"], conf["spark.ui.enabled"], conf["spark.ui.showConsoleProgress"],
            conf["spark.default.parallelism"], conf["spark.driver.memory"]) == ("local[2]", "false", "false", "1", "1g")
    assert (spark.conf.get("spark.sql.shuffle.partitions"), spark.conf.get("spark.sql.adaptive.enabled"),
            spark.conf.get("spark.sql.catalogImplementation")) == ("1", "false", "hive")
    options = conf["spark.driver.extraJavaOptions"].split()  # after those pyspark adds
    assert options[options.index("-XX:+UseSerialGC"):] == [
        "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", f"-Dlog4j.configurationFile=file:{root / 'log4j2.properties'}",
        f"-Dderby.system.home={root}"]
    assert "rootLogger.level = error\n" in (root / "log4j2.properties").read_text()
    assert conf["spark.hadoop.javax.jdo.option.ConnectionURL"] == \
        f"jdbc:derby:;databaseName={root / 'metastore_db'};create=true"
    assert (root / "metastore_db").is_dir() and (root / "derby.log").is_file()  # not in the working directory
    assert PySparkLogger.getLogger("SQLQueryContextLogger").level == logging.CRITICAL
