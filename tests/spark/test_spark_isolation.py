"""register_views, check_views, sql and create_view leave the caller's session as it is while they run.

Their own statements run in a session of their own, cloned from the caller's (see
``viewstore.spark.session._work_session``); other threads of the driver that use the caller's session
meanwhile never see a view's SQL configs or default namespace. The sessions here are the test
session's children (``spark.newSession()``: the same metastore, configs and current database of
their own), so what a test sets in them stays there.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections import Counter

import pytest

from viewstore import Column, SQLRepresentation, ViewStore
from viewstore.spark import attach, check_views, create_view, detach, register_views, sql

pytestmark = pytest.mark.spark

#: what the observing thread asks its session, over and over: the current database, the session time
#: zone, the same time zone through ``${...}`` substitution, and a cast that fails only in ANSI mode
OBSERVED = ("SELECT current_database() AS db, current_timezone() AS tz, '${spark.sql.session.timeZone}' AS sub, "
            "CAST('x' AS INT) AS cast")
#: the SQL configs the views record: each differs from the caller's in its time zone, ANSI mode or both
RECORDED = {"a": {"spark.sql.session.timeZone": "Asia/Kolkata", "spark.sql.ansi.enabled": "true"},
            "b": {"spark.sql.session.timeZone": "America/Lima", "spark.sql.ansi.enabled": "false"},
            "c": None}
CALLER_ZONE = "Pacific/Chatham"
QUERY = "SELECT unix_millis(TIMESTAMP'2024-01-01 00:00:00') AS ms"


def _name() -> str:
    return "t" + uuid.uuid4().hex[:10]


def _caller_sees(home: str) -> tuple:
    """What the observer sees in the caller's session: its own database and zone, substitution on, ANSI off."""
    return home, CALLER_ZONE, CALLER_ZONE, None


class Observer:
    """Runs :data:`OBSERVED` on one session in a thread of its own until stopped; counts the answers."""

    def __init__(self, session) -> None:
        self.session = session
        self.seen: Counter = Counter()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                row = self.session.sql(OBSERVED).first()
                self.seen[(row.db, row.tz, row.sub, row.cast)] += 1
            except Exception as e:  # ANSI mode: [CAST_INVALID_INPUT]
                self.seen[("error", str(e).split("]")[0] + "]")] += 1

    def __enter__(self) -> "Observer":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(timeout=120)


def _caller(spark, home: str):
    """The driver's session: its own database, time zone and ANSI mode, all set at runtime."""
    caller = spark.newSession()
    caller.sql(f"CREATE DATABASE IF NOT EXISTS {home}")
    caller.catalog.setCurrentDatabase(home)
    caller.conf.set("spark.sql.session.timeZone", CALLER_ZONE)
    caller.conf.set("spark.sql.ansi.enabled", "false")
    return caller


def _views(store, prefix: str, count: int) -> list[str]:
    """``count`` views in each of three databases, each database's views recorded under its configs."""
    databases = []
    for key, configs in RECORDED.items():
        database = f"{prefix}_{key}"
        databases.append(database)
        summary = {"spark.sql-configs": json.dumps(configs)} if configs else {}
        for i in range(count):
            store.create_view(f"{database}.v{i}", columns=[Column("ms", "long", nullable=False)],
                              representations=[SQLRepresentation("spark", QUERY)], default_namespace=database,
                              summary=summary)
    return databases


def _drop(spark, *databases: str) -> None:
    for database in databases:
        spark.sql(f"DROP DATABASE IF EXISTS {database} CASCADE")


def _concurrent_register_and_check(spark, store, prefix: str, count: int) -> dict:
    """register_views and check_views in one thread while another queries the same session."""
    home = f"{prefix}_home"
    caller = _caller(spark, home)
    databases = _views(store, prefix, count)
    try:
        with Observer(caller) as observer:
            reports = [register_views(caller, store, refresh=True) for _ in range(2)]
            checked = check_views(caller, store)
        zones = {database: caller.sql(f"SELECT ms FROM {database}.v0").first().ms for database in databases}
        return {"seen": dict(observer.seen), "expected": _caller_sees(home),
                "registered": [len(r.registered) for r in reports], "failed": [len(r.failed) for r in reports],
                "checked": checked.ok, "zones": zones, "after": tuple(caller.sql(OBSERVED).first())}
    finally:
        _drop(spark, home, *databases)


def _assert_untouched(outcome: dict, count: int, prefix: str) -> None:
    seen, expected = outcome["seen"], outcome["expected"]
    assert set(seen) == {expected}, f"the caller's session changed under another thread: {seen}"
    assert seen[expected] >= 5, "the observer must have run while the views were registered"
    assert outcome["registered"] == [3 * count] * 2 and outcome["failed"] == [0, 0] and outcome["checked"]
    # each copy still answers as where it was defined: Kolkata, Lima, and the caller's own zone (Chatham)
    assert outcome["zones"] == {f"{prefix}_a": 1704047400000, f"{prefix}_b": 1704085200000,
                                f"{prefix}_c": 1704017700000}
    assert outcome["after"] == expected


def test_register_and_check_views_leave_a_session_other_threads_use_alone(spark, store):
    """One thread queries the session (its current database, time zone, ``${...}`` substitution,
    ANSI mode) while another registers and checks views recorded under other databases, time
    zones and ANSI modes: the first never sees anything but the session's own."""
    prefix, count = _name(), 4
    _assert_untouched(_concurrent_register_and_check(spark, store, prefix, count), count, prefix)


def _in_memory_worker(root: str, queue) -> None:
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from spark_settings import build_session

    spark = build_session(Path(root) / "spark", hive=False)
    try:
        with ViewStore(Path(root) / "views.db", actor="alice") as store:
            queue.put(_concurrent_register_and_check(spark, store, "mem", 10))
    finally:
        spark.stop()


def test_the_same_holds_in_a_session_without_hive(tmp_path):
    """Spark's in-memory session catalog (a process of its own: one JVM has one kind of catalog)."""
    from spawned import spawned_results

    [outcome] = spawned_results(_in_memory_worker, [(str(tmp_path),)], timeout=300)
    _assert_untouched(outcome, 10, "mem")


def test_sql_and_create_view_leave_a_session_other_threads_use_alone(spark, store):
    """View DDL through sql() and create_view analyze and mirror in a session of their own, and
    ALTER VIEW ... WITH SCHEMA makes the copy under the view's own database and configs there: the
    caller's session never changes under the observing thread. Its own statements stay its own."""
    prefix = _name()
    home = f"{prefix}_home"
    caller = _caller(spark, home)
    databases = _views(store, prefix, 2)
    expected = _caller_sees(home)
    try:
        register_views(caller, store)
        with Observer(caller) as observer:
            for round_ in range(3):
                for database in databases:
                    for i in range(2):
                        mode = ("BINDING", "COMPENSATION")[(round_ + i) % 2]
                        sql(caller, store, f"ALTER VIEW {database}.v{i} WITH SCHEMA {mode}")
                sql(caller, store, f"CREATE OR REPLACE VIEW {home}.mine{round_} AS {QUERY}")
                create_view(caller, store, f"{home}.api{round_}", QUERY)
                sql(caller, store, f"CREATE OR REPLACE TEMPORARY VIEW temp{round_} AS SELECT {round_} AS n")
        seen = dict(observer.seen)
        assert set(seen) == {expected}, f"the caller's session changed under another thread: {seen}"
        assert seen[expected] >= 5
        # the copies answer in their own zones; the caller's own statement (a temp view) is the caller's
        assert caller.sql(f"SELECT ms FROM {databases[1]}.v0").first().ms == 1704085200000
        assert caller.sql(f"SELECT ms FROM {home}.mine2").first().ms == 1704017700000
        assert json.loads(store.load_view(f"{home}.api2").summary["spark.sql-configs"])[
            "spark.sql.session.timeZone"] == CALLER_ZONE
        assert caller.sql("SELECT n FROM temp2").first().n == 2
        assert not spark.catalog.tableExists("temp2")  # in the caller's session, not another's
    finally:
        _drop(spark, home, *databases)


def _resolved_and_recorded_in(caller, store, catalog: str, db: str) -> None:
    """With ``catalog.sales`` current in ``caller`` (holding the view ``base``), create_view and sql
    resolve bare names there and record it as the views' defaults; the caller stays there."""
    view = create_view(caller, store, f"{db}.by_api", "SELECT five FROM base")
    assert (view.default_catalog, view.default_namespace) == (catalog, ("sales",))
    view = sql(caller, store, f"CREATE VIEW spark_catalog.{db}.by_sql AS SELECT five * 2 AS ten FROM base")
    assert (view.default_catalog, view.default_namespace) == (catalog, ("sales",))
    assert caller.sql(f"SELECT ten FROM spark_catalog.{db}.by_sql").first().ten == 10
    assert tuple(caller.sql("SELECT current_catalog(), current_database()").first()) == (catalog, "sales")


def test_the_work_session_starts_as_the_callers(spark, store, tmp_path):
    """What analyzing a view depends on in the caller's session holds where the work is done:
    settings made at runtime (case sensitivity, a catalog), temporary views and functions (SQL and
    Python), session variables, a store attached as a Spark catalog, and a current catalog other
    than the session catalog. Each outcome is the one of the caller's session itself: a persistent
    view may not read a temporary object (INVALID_TEMP_OBJ_REFERENCE), and analysis may."""
    prefix = _name()
    home, db = f"{prefix}_home", f"{prefix}_db"
    caller = _caller(spark, home)
    caller.conf.set("spark.sql.caseSensitive", "true")
    caller.sql(f"CREATE TEMPORARY VIEW {prefix}_temp AS SELECT 1 AS one")
    caller.sql(f"CREATE TEMPORARY FUNCTION {prefix}_twice(x INT) RETURNS INT RETURN x * 2")
    caller.udf.register(f"{prefix}_plus_one", lambda x: x + 1, "int")
    caller.sql(f"DECLARE VARIABLE {prefix}_var INT DEFAULT 7")
    other = ViewStore(tmp_path / "other.db", actor="bob")
    catalog = attach(caller, other, name=f"{prefix}cat")  # spark.sql.catalog.<name> set at runtime
    caller.sql(f"CREATE VIEW {catalog}.sales.base AS SELECT 5 AS five")
    views = {  # name: (SQL, column, what register_views reports, what check_views reports)
        "cased": ("SELECT ID AS x FROM (SELECT 1 AS id)", "x", "UNRESOLVED_COLUMN", "broken"),
        "temp": (f"SELECT one FROM {prefix}_temp", "one", "INVALID_TEMP_OBJ_REFERENCE", "ok"),
        "function": (f"SELECT {prefix}_twice(2) AS four", "four", "INVALID_TEMP_OBJ_REFERENCE", "ok"),
        "udf": (f"SELECT {prefix}_plus_one(1) AS two", "two", "INVALID_TEMP_OBJ_REFERENCE", "ok"),
        "variable": (f"SELECT {prefix}_var AS seven", "seven", "INVALID_TEMP_OBJ_REFERENCE", "ok"),
        "attached": ("SELECT five FROM base", "five", None, "ok"),
    }
    try:
        for name, (query, column, _, _) in views.items():
            store.create_view(f"{db}.{name}", columns=[Column(column, "int")],
                              representations=[SQLRepresentation("spark", query)],
                              default_catalog=catalog if name == "attached" else None,
                              default_namespace=["sales"] if name == "attached" else [db])
        report = register_views(caller, store, db)
        assert report.registered == [f"{db}.attached"]
        assert {f.identifier: f.condition.split(".")[0] for f in report.failed} == {
            f"{db}.{name}": condition for name, (_, _, condition, _) in views.items() if condition}
        assert caller.sql(f"SELECT five FROM {db}.attached").first().five == 5
        checked = check_views(caller, store, db)
        assert {v.identifier: v.status for v in checked.views} == {
            f"{db}.{name}": status for name, (_, _, _, status) in views.items()}

        # the current catalog is the attached one: unqualified names resolve there, and it is recorded
        caller.sql(f"USE {catalog}.sales")
        _resolved_and_recorded_in(caller, store, catalog, db)
        assert caller.conf.get("spark.sql.caseSensitive") == "true"
    finally:
        detach(caller, catalog)
        other.close()
        _drop(spark, home, db)


def test_sql_from_another_thread_substitutes_as_spark_sql_there(spark, store):
    """sql() reads the statement as ``spark.sql`` would in the caller's session, whichever thread
    calls it: ``${...}`` is substituted from the caller's settings (a thread of the driver has no
    active session of its own in Spark)."""
    prefix = _name()
    home = f"{prefix}_home"
    caller = _caller(spark, home)
    caller.conf.set("viewstore.test.greeting", "hello")
    outcome = []
    statement = f"CREATE VIEW {home}.greeting AS SELECT '${{viewstore.test.greeting}}' AS word"
    thread = threading.Thread(target=lambda: outcome.append(sql(caller, store, statement)))
    try:
        thread.start()
        thread.join()
        assert outcome[0].sql_for("spark") == "SELECT 'hello' AS word"
        assert caller.sql(f"SELECT word FROM {home}.greeting").first().word == "hello"
    finally:
        _drop(spark, home)


def test_the_work_session_takes_the_callers_namespace_in_a_default_catalog(spark, store, tmp_path):
    """A clone starts in the default catalog (``spark.sql.defaultCatalog``, here set at runtime to an
    attached store) at its default namespace; the caller's current namespace there (``USE sales``)
    is where create_view and sql resolve bare names and what they record, as in the caller."""
    prefix = _name()
    db = f"{prefix}_db"
    caller = spark.newSession()
    other = ViewStore(tmp_path / "other.db", actor="bob")
    catalog = attach(caller, other, name=f"{prefix}cat")
    caller.sql(f"CREATE VIEW {catalog}.sales.base AS SELECT 5 AS five")
    caller.conf.set("spark.sql.defaultCatalog", catalog)
    caller.sql("USE sales")
    try:
        assert caller.sql("SELECT five FROM base").first().five == 5
        _resolved_and_recorded_in(caller, store, catalog, db)
    finally:
        caller.sql("USE spark_catalog.default")
        detach(caller, catalog)
        other.close()
        _drop(spark, db)
