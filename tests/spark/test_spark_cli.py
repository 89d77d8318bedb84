"""``viewstore spark check`` and ``spark register`` on the test session (commands use the active session)."""

from __future__ import annotations

import json
import uuid

import pytest
from click.testing import CliRunner

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
        assert f"{ns}.ids" in ok.output and "1 ok" in ok.output

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


def test_spark_check_exits_1_on_a_broken_view(spark, store, ns):
    spark.sql(f"CREATE TABLE {ns}.src (id INT) USING parquet")
    create_view(spark, store, f"{ns}.ids", f"SELECT id FROM {ns}.src")
    spark.sql(f"DROP TABLE {ns}.src")
    (view,), table = _failed_check(store)
    assert view["status"] == "broken" and view["condition"] == "TABLE_OR_VIEW_NOT_FOUND"
    assert table.count("[TABLE_OR_VIEW_NOT_FOUND]") == 1, table


def test_spark_check_of_a_mistyped_store_fails_before_spark_starts(tmp_path):
    result = CliRunner().invoke(main, ["--db", str(tmp_path / "typo.db"), "spark", "check", "--json"])
    assert result.exit_code == 1 and "no viewstore database at" in result.output
    assert not (tmp_path / "typo.db").exists()


@pytest.mark.parametrize("command", ["check", "register"])
def test_a_bad_conf_is_a_usage_error_said_before_the_store_or_spark(tmp_path, command):
    """As every value not of its option's form: exit code 2, whatever --db names."""
    result = CliRunner().invoke(main, ["--db", str(tmp_path / "typo.db"), "spark", command, "--conf", "novalue"])
    assert result.exit_code == 2, result.output
    assert result.output.splitlines()[-1] == "Error: bad --conf 'novalue': use KEY=VALUE"
    assert not (tmp_path / "typo.db").exists()


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
    assert table.exit_code == 0 and table.stderr == "" and f"{ns}.v3" in table.stdout and label not in table.stdout
