"""The package type-checks under mypy (it ships ``py.typed``), and its exported types serve callers."""

from __future__ import annotations

import runpy
import textwrap
from pathlib import Path

import pytest
from mypy import api

ROOT = Path(__file__).resolve().parents[1]

#: a user's driver, written the way the README uses the API; assert_type fails the check when a
#: public signature says something other than what the call really returns
USER_SCRIPT = textwrap.dedent('''
    from pathlib import Path
    from typing import assert_type

    from pyspark.sql import DataFrame, SparkSession

    from viewstore import Column, Event, SQLRepresentation, View, ViewChange, ViewStore
    from viewstore.spark import DriftReport, RegisterReport, attach, check_views, detach, register_views, sql

    store = ViewStore("user.db", catalog="prod", actor="alice")
    created = store.create_view(
        "sales.daily_orders",
        columns=[Column("day", "date"), Column("orders", "bigint", "orders placed that day")],
        representations=[SQLRepresentation("spark", "SELECT day, count(*) AS orders FROM orders GROUP BY day")],
        default_namespace="sales", comment="Orders per day")
    assert_type(created, View)
    view = store.alter_view(
        ("sales", "daily_orders"),
        ViewChange.add_representation(SQLRepresentation("trino", "SELECT day, count(*) AS n FROM orders GROUP BY 1")),
        ViewChange.set_property("owner-team", "finance"),
        expected_version=created.stream_version)
    trino = view.sql_for("trino")
    assert trino is not None and trino.startswith("SELECT")
    loaded = store.load_view("sales.daily_orders", as_of=store.history("sales.daily_orders")[0])
    assert_type(loaded, View)
    assert loaded.current_version_id == 1 and view.current_version_id == 2
    history = store.history("sales.daily_orders")
    assert_type(history, list[Event])
    first: Event = history[0]
    print(first.stream_version, first.type, first.actor, first.occurred_at_datetime.isoformat())
    recent = store.events(actor="alice", types=["view.created"], limit=20, newest_first=True)
    assert [e.view for e in recent] == ["sales.daily_orders"]
    rows = store.query("SELECT type, count(*) AS n FROM events GROUP BY type")
    assert rows.columns == ("type", "n") and all(isinstance(row["n"], int) for row in rows)
    path = store.export_iceberg("sales.daily_orders")
    assert_type(path, Path)
    assert path.is_file()
    assert_type(store.drop_view("sales.daily_orders"), bool)
    store.close()


    def driver(spark: SparkSession, store: ViewStore) -> None:  # type-checked, not run here
        report = register_views(spark, store, "sales", prune=True)
        assert_type(report, RegisterReport)
        assert_type(check_views(spark, store), DriftReport)
        assert_type(attach(spark, store), str)
        assert_type(detach(spark), bool)
        result = sql(spark, store, "CREATE VIEW sales.v AS SELECT 1 AS x")
        assert_type(result, View | DataFrame | None)
        if isinstance(result, View):
            print(result.current_version_id)
''')


def _mypy(*args: str) -> tuple[str, int]:
    stdout, stderr, status = api.run([*args, "--config-file", str(ROOT / "pyproject.toml"), "--no-error-summary"])
    return stdout + stderr, status


@pytest.fixture(scope="module")
def mypy_cache(tmp_path_factory):
    return str(tmp_path_factory.mktemp("mypy_cache"))


def test_the_package_type_checks(monkeypatch, mypy_cache):
    monkeypatch.chdir(ROOT)  # the files of [tool.mypy] (viewstore) are relative to the project
    report, status = _mypy("--cache-dir", mypy_cache)
    assert status == 0 and report == "", f"mypy reports on viewstore:\n{report}"


def test_a_users_script_type_checks_against_the_exported_types(tmp_path, monkeypatch, mypy_cache):
    script = tmp_path / "driver.py"
    script.write_text(USER_SCRIPT)
    monkeypatch.chdir(ROOT)  # mypy finds viewstore here, as the tests import it
    report, status = _mypy("--cache-dir", mypy_cache, str(script))
    assert status == 0 and report == "", f"mypy reports on a user's script:\n{report}"
    monkeypatch.chdir(tmp_path)
    runpy.run_path(str(script), run_name="driver")  # and the script is real: it runs
