"""Spark benchmarks: register_views against a hand-written loop, and the event log as a DataFrame.

The session is the test suite's (``tests/spark_settings.py``: local[2], quiet, fast), without Hive:
views are registered in Spark's in-memory session catalog.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from viewstore import ViewStore

from .harness import Result, fmt, interleave

TESTS = Path(__file__).resolve().parents[1] / "tests"


def session(ctx: Any) -> Any:
    """The run's SparkSession: the one given to the run, else one built here (and stopped at the end)."""
    if ctx.spark is None:
        sys.path.insert(0, str(TESTS))
        from spark_settings import build_session

        ctx.say("  starting a local SparkSession (tests/spark_settings.py, no Hive)...")
        ctx.spark = build_session(ctx.path("spark"), hive=False)
        ctx._own_spark = True
    return ctx.spark


#: the SQL configs a view defined in a default local session records (viewstore.spark.sql records them)
CONFIGS = json.dumps({"spark.sql.ansi.enabled": "true", "spark.sql.session.timeZone": "Etc/UTC"},
                     separators=(",", ":"))


def _views(path: Path, count: int) -> ViewStore:
    """``count`` views whose Spark SQL runs anywhere (it reads range(), no table), with the SQL
    configs recorded as ``viewstore.spark.sql`` records them (registering applies them)."""
    store = ViewStore(path, actor="bench")
    for i in range(count):
        store.create_view(f"bench_ns{i % 4}.view_{i:05d}", columns=[("id", "bigint"), ("value", "bigint")],
                          representations=[
                              ("spark", f"SELECT id, id * {i} AS value FROM range(10)"),
                              ("trino", f"SELECT x AS id, x * {i} AS value FROM UNNEST(sequence(0, 9)) t(x)")],
                          default_namespace=f"bench_ns{i % 4}", comment=f"view {i}",
                          summary={"spark.sql-configs": CONFIGS})
    return store


def bench_register_views(ctx: Any) -> list[Result]:
    from viewstore.spark import register_views

    spark = session(ctx)
    count = ctx.sizes.spark_views
    store = _views(ctx.path("spark-views.db"), count)

    def ours() -> float:
        start = time.perf_counter()
        report = register_views(spark, store, refresh=True)  # every view created again, as the loop does
        seconds = time.perf_counter() - start
        assert len(report.registered) == count and not report.failed, report
        return seconds

    def by_hand() -> float:
        start = time.perf_counter()
        for ident in store.list_views():
            view = store.load_view(ident)
            spark.sql(f"CREATE OR REPLACE TEMP VIEW {'_'.join(ident)} AS {view.sql_for('spark')}")
        return time.perf_counter() - start

    ours(), by_hand()  # warm up: databases created, the analyzer's code paths compiled
    paired = interleave(ctx.sizes.spark_rounds, ours, by_hand)
    start = time.perf_counter()
    again = register_views(spark, store)  # nothing changed: the fingerprints say so
    unchanged = time.perf_counter() - start
    assert len(again.unchanged) == count
    assert spark.sql(f"SELECT * FROM bench_ns1.view_{1:05d}").count() == 10
    for ident in store.list_views():  # leave the session as it was (the test suite shares it)
        spark.catalog.dropTempView("_".join(ident))
    for namespace in sorted({ident[0] for ident in store.list_views()}):
        spark.sql(f"DROP DATABASE IF EXISTS {namespace} CASCADE")
    store.close()
    sm = paired.summary()
    return [Result("spark_register_views", f"Spark: register_views for {count:,} views (persistent views, "
                   f"every one created again); unchanged re-run {fmt(unchanged, 's')}", sm["figure"], "s",
                   f"hand-written CREATE OR REPLACE TEMP VIEW loop: {fmt(sm['comparator'], 's')}",
                   sm["comparator"], sm["ratio"], f"{sm['ratio']:.2f} × the loop", "≤ 1.2 × its time",
                   sm["ratio"] <= 1.2, {"per_round_s": paired.figure, "loop_per_round_s": paired.comparator,
                                        "unchanged_rerun_s": unchanged})]


def bench_events_dataframe(ctx: Any) -> list[Result]:
    from viewstore.spark import events_dataframe
    from viewstore.spark.audit import events_arrow

    spark = session(ctx)
    log = ctx.event_log()
    times, arrow_times, counts = [], [], None
    with ViewStore(log.path, actor="bench") as store:
        for _ in range(ctx.sizes.spark_rounds):
            start = time.perf_counter()
            events_arrow(store)
            arrow_times.append(time.perf_counter() - start)
            start = time.perf_counter()
            rows = events_dataframe(spark, store).groupBy("type").count().collect()
            times.append(time.perf_counter() - start)
            counts = {r["type"]: r["count"] for r in rows}
    assert counts is not None and sum(counts.values()) == log.events
    figure = statistics.median(times)
    return [Result("spark_events_dataframe", f"Spark: events_dataframe of {log.events:,} events, then count by "
                   f"type (of which SQLite to Arrow {fmt(statistics.median(arrow_times), 's')})", figure, "s",
                   "—", None, None, "—", "≤ 15 s", figure <= 15,
                   {"per_round_s": times, "arrow_s": arrow_times, "counts": counts})]


SPARK = {
    "spark_register_views": bench_register_views,
    "spark_events_dataframe": bench_events_dataframe,
}
