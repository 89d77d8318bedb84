"""The package type-checks under mypy (it ships ``py.typed``), and its exported types serve callers."""

from __future__ import annotations

import re
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

    from viewstore import (BeforeAfter, Column, Event, SQLRepresentation, View, ViewChange, ViewDiff, ViewDiffSide,
                           ViewStore)
    from viewstore.model import diff_views
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
    diff = store.diff_view("sales.daily_orders", before=first)
    assert_type(diff, ViewDiff)
    assert_type(diff.before, ViewDiffSide)
    assert_type(diff.changed, bool)
    assert_type(diff.representations_added, tuple[SQLRepresentation, ...])
    assert_type(diff.columns_changed, tuple[BeforeAfter[Column], ...])
    assert_type(diff.comment, BeforeAfter[str | None] | None)
    assert_type(diff.properties_changed, dict[str, BeforeAfter[str]])
    assert_type(diff.default_namespace, BeforeAfter[tuple[str, ...]] | None)
    assert diff.changed and (diff.before.current_version_id, diff.after.current_version_id) == (1, 2)
    assert [r.dialect for r in diff.representations_added] == ["trino"]
    assert diff.properties_added == {"owner-team": "finance"}
    assert diff.comment is None and not diff.columns_changed
    since = store.diff_view(("sales", "daily_orders"), before=first, after=history[-1])
    assert_type(since, ViewDiff)
    assert since == diff
    assert_type(diff_views(loaded, view), ViewDiff)
    assert diff_views(loaded, view) == diff
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

#: a caller giving every argument in each form the API accepts, through the exported names of those
#: forms: mypy passes it, and it runs
ACCEPTED_FORMS = textwrap.dedent('''
    import datetime as dt
    from typing import assert_type

    from pyspark.sql import DataFrame, SparkSession

    from viewstore import (AsOf, Column, ColumnDict, ColumnLike, EventTypes, IdentifierLike, NamespaceLike,
                           RepresentationDict, RepresentationLike, RepresentationsLike, SQLRepresentation, TimeLike,
                           View, ViewChange, ViewStore, parse_type)
    from viewstore.spark import check_views, create_view, events_dataframe, register_views

    store = ViewStore("forms.db", actor="alice")
    # identifiers: a dotted string, a tuple or a list of parts
    identifiers: list[IdentifierLike] = ["s.by_string", ("s", "by_tuple"), ["s", "by_list"]]
    # columns: Column, tuples of 2 to 4 (the type as text or parsed), a list, a dict
    column_dict: ColumnDict = {"name": "g", "type": "int", "comment": "a dict", "nullable": False}
    columns: list[ColumnLike] = [Column("a", "int"), ("b", "bigint"), ("c", parse_type("string"), "text"),
                                 ("d", "date", None, False), ["e", "double"], {"name": "f", "type": "int"}, column_dict]
    only_columns = [Column("a", "int")]  # a list[Column] as it is, not a list[ColumnLike]
    # representations: one alone (SQLRepresentation, tuple, dict), or a list or tuple of any of them
    rep_dict: RepresentationDict = {"dialect": "hive", "sql": "SELECT 1 AS a"}
    each: list[RepresentationLike] = [SQLRepresentation("spark", "SELECT 1 AS a"), ("trino", "SELECT 1 AS a"),
                                      ["flink", "SELECT 1 AS a"], rep_dict]
    alone: list[RepresentationsLike] = [SQLRepresentation("spark", "SELECT 2 AS a"), ("spark", "SELECT 3 AS a"),
                                        {"dialect": "spark", "sql": "SELECT 4 AS a"}, tuple(each)]
    # namespaces: a dotted string, a tuple or a list of levels (none, for a default namespace)
    namespaces: list[NamespaceLike] = ["s", ("s",), ["s"], [], ()]
    for ident, namespace in zip(identifiers, namespaces):
        assert_type(store.create_view(ident, columns=columns, representations=each, default_namespace=namespace), View)
    store.create_view(["s", "only"], columns=only_columns, representations=[("spark", "SELECT 1 AS a")],
                      default_namespace=("s",))
    for representations in alone:
        store.replace_view(("s", "only"), columns=(Column("a", "int"),), representations=representations,
                           default_namespace=[])
    store.alter_view(["s", "only"], ViewChange.add_representation(["presto", "SELECT 5 AS a"]),
                     ViewChange.add_representation({"dialect": "dremio", "sql": "SELECT 5 AS a"}))
    store.alter_view("s.only", ViewChange.rename(["t", "moved"]))
    assert store.view_exists(["t", "moved"]) and store.list_views(["t"]) == [("t", "moved")]
    assert store.list_views(("s",)) == store.list_views("s") and len(store.list_views("s")) == 3
    # times: a datetime (naive or aware), a date, an ISO string, epoch ms (int or float), or an event for as_of
    first = store.history(["s", "by_list"])[0]
    view = store.load_view(("s", "by_list"))
    ms = view.audit.last_modified_time_ms
    utc_now = dt.datetime.now(dt.timezone.utc)
    times: list[TimeLike] = [utc_now, utc_now.replace(tzinfo=None), dt.date(9999, 12, 31), "9999-12-31T00:00Z",
                             ms, float(ms), str(ms)]
    as_ofs: list[AsOf] = [*times, first]
    for as_of in as_ofs:
        assert store.load_view(["s", "by_list"], as_of=as_of) == view
        assert not store.diff_view(["s", "by_list"], before=as_of, after=as_of).changed
        assert not store.diff_view(("s", "by_list"), before=as_of).changed
    kinds: list[EventTypes] = ["view.created", ["view.created"], ("view.created",), {"view.created"},
                               frozenset({"view.created"})]
    for since, until, types in zip(times, times, kinds):
        store.events(view=["s", "by_list"], since=since, until=until, types=types)
        assert len(store.event_rows(view=("s", "by_list"), since=first.occurred_at, until=utc_now.date(),
                                    types=types)) == 1
    assert [e.view for e in store.events(view=["s", "by_list"], since=dt.date(1970, 1, 1), until=utc_now.date())] \\
        == ["s.by_list"]
    store.close()


    def driver(spark: SparkSession, store: ViewStore) -> None:  # type-checked, not run here
        assert_type(create_view(spark, store, ["s", "made_in_spark"], "SELECT 1 AS a"), View)
        create_view(spark, store, ("s", "also"), "SELECT 1 AS a")
        register_views(spark, store, ["s"])
        check_views(spark, store, ("s",))
        frame = events_dataframe(spark, store, view=["s", "v"], since=dt.datetime(2026, 1, 1), until="2026-12-31",
                                 types=("view.created", "view.replaced"))
        assert_type(frame, DataFrame)
''')

#: a caller giving wrong forms, each on a line marked "wrong": mypy reports each of those lines (and
#: no other), and each is refused at run time too, so the types say what the calls really take
WRONG_FORMS = textwrap.dedent('''
    from typing import Callable

    from viewstore import Column, ValidationError, ViewChange, ViewStore

    store = ViewStore("wrong.db", actor="alice")
    store.create_view("s.v", columns=[Column("a", "int")], representations=[("spark", "SELECT 1 AS a")],
                      default_namespace="s")
    refused: list[str] = []


    def refuse(call: Callable[[], object]) -> None:
        try:
            call()
        except ValidationError as e:
            refused.append(str(e))
        else:
            raise AssertionError("accepted")


    refuse(lambda: store.load_view("s.v", as_of=[1]))  # wrong
    refuse(lambda: store.load_view("s.v", as_of=b"2026-01-01"))  # wrong
    refuse(lambda: store.load_view(42))  # wrong
    refuse(lambda: store.history({"s", "v"}))  # wrong
    refuse(lambda: store.events(since=[1]))  # wrong
    refuse(lambda: store.events(until={"ms": 1}))  # wrong
    refuse(lambda: store.events(types=(t for t in ["view.created"])))  # wrong
    refuse(lambda: store.list_views(namespace=42))  # wrong
    refuse(lambda: store.create_view("s.w", columns=["a"], representations=[("spark", "SELECT 1 AS a")],  # wrong
                                     default_namespace="s"))
    refuse(lambda: store.create_view("s.w", columns=[("a",)], representations=[("spark", "SELECT 1 AS a")],  # wrong
                                     default_namespace="s"))
    refuse(lambda: store.create_view("s.w", columns=[], representations=["spark", "SELECT 1 AS a"],  # wrong
                                     default_namespace="s"))
    refuse(lambda: store.create_view("s.w", columns=[], representations="SELECT 1 AS a",  # wrong
                                     default_namespace="s"))
    refuse(lambda: store.create_view("s.w", columns=[], representations=[("spark", "SELECT 1 AS a")],
                                     default_namespace=5))  # wrong
    refuse(lambda: ViewChange.rename(42))  # wrong
    refuse(lambda: ViewChange.add_representation("SELECT 1"))  # wrong
    refuse(lambda: store.diff_view("s.v", before=None))  # wrong
    refuse(lambda: store.diff_view("s.v", before=0, after=[1]))  # wrong
    assert len(refused) == 17, refused
    assert store.list_views() == [("s", "v")]
    store.close()
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


def test_a_caller_may_give_each_form_the_api_accepts(tmp_path, monkeypatch, mypy_cache):
    script = tmp_path / "forms.py"
    script.write_text(ACCEPTED_FORMS)
    monkeypatch.chdir(ROOT)
    report, status = _mypy("--cache-dir", mypy_cache, str(script))
    assert status == 0 and report == "", f"mypy reports on a caller of every accepted form:\n{report}"
    monkeypatch.chdir(tmp_path)
    runpy.run_path(str(script), run_name="forms")  # and each of those forms works


def _reports_the_wrong_lines(text, script, monkeypatch, mypy_cache, count):
    """mypy reports the ``count`` lines of ``text`` marked "# wrong", and no other; then the script
    runs (the store refuses each of those calls at run time)."""
    script.write_text(text)
    monkeypatch.chdir(ROOT)
    report, status = _mypy("--cache-dir", mypy_cache, str(script))
    wrong = {n for n, line in enumerate(text.splitlines(), 1) if line.endswith("# wrong")}
    reported = {int(n) for n in re.findall(rf"^{re.escape(str(script))}:(\d+): error:", report, re.M)}
    assert len(wrong) == count and status == 1
    assert reported == wrong, (f"mypy reports lines {sorted(reported)}, "
                               f"the wrong forms are on {sorted(wrong)}:\n{report}")
    monkeypatch.chdir(script.parent)
    runpy.run_path(str(script), run_name=script.stem)


def test_mypy_reports_each_wrong_form_that_the_api_refuses(tmp_path, monkeypatch, mypy_cache):
    _reports_the_wrong_lines(WRONG_FORMS, tmp_path / "wrong.py", monkeypatch, mypy_cache, 17)


def test_a_strict_callers_imports_of_the_spark_names_type_check(tmp_path, monkeypatch, mypy_cache):
    """Under ``mypy --strict`` (no implicit re-export) every name of ``viewstore.spark.__all__`` is one
    the module exports, taken by ``from viewstore.spark import`` or read off the module; the package
    is followed silently, as mypy reads an installed one."""
    import viewstore.spark

    names = viewstore.spark.__all__
    script = tmp_path / "strict_driver.py"
    script.write_text(f"import viewstore.spark as vs\nfrom viewstore.spark import {', '.join(names)}\n\n"
                      + "".join(f"print({name}, vs.{name})\n" for name in names))
    monkeypatch.chdir(ROOT)
    report, status = _mypy("--cache-dir", mypy_cache, "--strict", "--follow-imports=silent", str(script))
    assert status == 0 and report == "", f"mypy --strict reports on a caller of viewstore.spark:\n{report}"


#: query parameters: a list or tuple (one value per ?) or a dict (one per :name) type-check; one value
#: alone (a string, which sqlite3 would take apart into characters) is reported, as the store refuses it
QUERY_PARAMS = textwrap.dedent('''
    from viewstore import ValidationError, ViewStore

    store = ViewStore("params.db", actor="alice")
    sql = "SELECT count(*) AS n FROM events WHERE actor = ?"
    assert store.query(sql, ["alice"]) == store.query(sql, ("alice",)) == [{"n": 0}]
    assert store.query("SELECT :who AS who", {"who": "alice"}) == [{"who": "alice"}]
    with store.stream_query(sql, ["alice"]) as rows:
        assert list(rows) == [{"n": 0}]
    try:
        store.query(sql, "alice")  # wrong
    except ValidationError:
        pass
    else:
        raise AssertionError("accepted")
    store.close()
''')


def test_query_params_type_as_the_store_takes_them(tmp_path, monkeypatch, mypy_cache):
    _reports_the_wrong_lines(QUERY_PARAMS, tmp_path / "params.py", monkeypatch, mypy_cache, 1)
