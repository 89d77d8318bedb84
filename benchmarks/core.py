"""The store's own benchmarks: commits, loads, as_of, listing, rebuild, reading events, audit queries,
storage.

Each function takes the run's :class:`Context` and returns result rows. Figures and comparators
are interleaved round by round (see :mod:`benchmarks.harness`).
"""

from __future__ import annotations

import os
import random
import resource
import shutil
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import orjson

from viewstore import ViewChange, ViewStore
from viewstore.log import EVENT_COLUMNS, connect, row_to_event
from viewstore.log import _INSERT as _INSERT_EVENT
from viewstore.projections import _UPDATE_VIEW, DDL, PROJECTION_TABLES

from . import fixtures
from .harness import Result, fmt, interleave, latencies, percentile, rate


@dataclass(frozen=True)
class Sizes:
    rounds: int
    commits: int
    """alter_view commits per round (and raw transactions per round)."""
    history_versions: int
    history_commits: int
    iceberg_commits: int
    load_calls: int
    iceberg_loads: int
    as_of_events: int
    as_of_calls: int
    list_total: int
    list_namespaces: int
    log_events: int
    log_views: int
    rebuild_rounds: int
    events_rounds: int
    audit_window: int
    audit_rounds: int
    spark_views: int
    spark_rounds: int
    cli_rounds: int
    """rounds of the CLI's start-up row, one process of each side a round"""


FULL = Sizes(rounds=15, commits=1000, history_versions=100, history_commits=300, iceberg_commits=30,
             load_calls=2000, iceberg_loads=100, as_of_events=10_000, as_of_calls=100, list_total=100_000,
             list_namespaces=10, log_events=1_000_000, log_views=5000, rebuild_rounds=5, events_rounds=3,
             audit_window=1000, audit_rounds=7, spark_views=1000, spark_rounds=3, cli_rounds=21)

QUICK = Sizes(rounds=2, commits=30, history_versions=5, history_commits=10, iceberg_commits=3, load_calls=50,
              iceberg_loads=5, as_of_events=150, as_of_calls=5, list_total=200, list_namespaces=4,
              log_events=1500, log_views=30, rebuild_rounds=1, events_rounds=1, audit_window=20, audit_rounds=2,
              spark_views=5, spark_rounds=1, cli_rounds=2)


#: how many alter_view calls share one transaction in the bulk-writer row
TRANSACTION_CALLS = 100


class Context:
    """What one run shares: sizes, a work folder, the lazily built big stores, a log function."""

    def __init__(self, workdir: Path, sizes: Sizes, *, spark: Any = None, say: Callable[[str], None] = print):
        self.workdir = workdir
        self.sizes = sizes
        self.spark = spark
        self.say = say
        self._event_log: fixtures.EventLog | None = None
        self.notes: dict[str, Any] = {}
        self._own_spark = False

    def close(self) -> None:
        if self._own_spark and self.spark is not None:
            self.spark.stop()
            self.spark = None

    def path(self, name: str) -> Path:
        return self.workdir / name

    def event_log(self) -> fixtures.EventLog:
        """The big multi-actor log, built once per run (through the public API)."""
        if self._event_log is None:
            s = self.sizes
            self.say(f"  building a {s.log_events:,}-event log through the API ({s.log_views:,} views, 20 actors)...")
            self._event_log = fixtures.event_log(self.path("log.db"), events=s.log_events, views=s.log_views)
            log = self._event_log
            self.say(f"  built {log.events:,} events in {log.calls:,} calls in {log.seconds:.1f} s")
            self.notes["event_log"] = {"events": log.events, "calls": log.calls, "views": log.views,
                                       "actors": len(log.actors), "build_seconds": round(log.seconds, 1),
                                       "events_per_call": round(log.events / log.calls, 2),
                                       "built_with": "the public ViewStore API (create_view, alter_view, "
                                                     "replace_view, rename_view), one connection per actor"}
        return self._event_log


# ---------------------------------------------------------------------------------------------
# writes


def _raw_transactions(path: Path, durability: str = "normal") -> Callable[[int], None]:
    """Single-row SQLite transactions on a connection set up exactly as the store's (same function)."""
    conn = connect(path, durability=durability)
    conn.execute("CREATE TABLE IF NOT EXISTS raw (id INTEGER PRIMARY KEY, note TEXT NOT NULL)")
    execute = conn.execute

    def commit(i: int) -> None:
        execute("BEGIN IMMEDIATE")
        execute("INSERT INTO raw (note) VALUES (?)", (f"comment {i}",))
        execute("COMMIT")

    return commit


def _comment_commits(store: ViewStore, identifier: str, tag: str) -> Callable[[int], None]:
    def commit(i: int) -> None:
        store.alter_view(identifier, ViewChange.update_comment(f"{tag} {i}"))
    return commit


def _transaction_commits(store: ViewStore, identifier: str, tag: str, per: int) -> Callable[[int], None]:
    """``per`` comment changes in one :meth:`ViewStore.transaction` (what a bulk writer can do)."""
    def commit(i: int) -> None:
        with store.transaction():
            for k in range(per):
                store.alter_view(identifier, ViewChange.update_comment(f"{tag} {i}.{k}"))
    return commit


def _store_statements(path: Path) -> Callable[[int], None]:
    """The SQL statements one comment change runs, in a store of their own, bare: driven from Python
    the way the raw transaction is, with none of the library's own work around them.

    Not the library at work (these rows bypass it, in a throwaway file): the floor that the
    schema — the events row, its stream and actor indexes, the views row — puts under alter_view.
    """
    with ViewStore(path, actor="bench") as store:
        fixtures.create(store, "floor.v")
        view = store.load_view("floor.v")
    conn = connect(path, extra_ddl=DDL)
    execute, first = conn.execute, view.stream_version + 1
    now = int(time.time() * 1000)

    def commit(i: int) -> None:
        execute("BEGIN IMMEDIATE")
        execute("PRAGMA data_version")
        execute(_INSERT_EVENT, (os.urandom(16).hex(), view.uuid, first + i, "view.comment_updated", "floor.v",
                                "bench", now, f'{{"comment":"floor {i}"}}'))
        execute(_UPDATE_VIEW, (first + i, 1, f'{{"comment":"floor {i}"}}', "DEFINER", "bench", now, i, view.uuid))
        execute("COMMIT")

    return commit


def bench_alter_view(ctx: Context) -> list[Result]:
    s = ctx.sizes
    store = ViewStore(ctx.path("alter.db"), actor="bench")
    fixtures.create(store, "bench.orders")
    ours = _comment_commits(store, "bench.orders", "comment")
    raw = _raw_transactions(ctx.path("raw.db"))
    floor = _store_statements(ctx.path("floor.db"))
    per = TRANSACTION_CALLS
    batched = _transaction_commits(store, "bench.orders", "batched", per)
    rate(50, ours), rate(50, raw)  # warm up both
    counter, floor_counter, batch_counter = iter(range(10**9)), iter(range(10**9)), iter(range(10**9))
    paired = interleave(s.rounds, lambda: rate(s.commits, lambda i: ours(next(counter))),
                        lambda: rate(s.commits, raw))
    floor_paired = interleave(s.rounds, lambda: rate(s.commits, lambda i: floor(next(floor_counter))),
                              lambda: rate(s.commits, raw))
    batch_paired = interleave(s.rounds, lambda: per * rate(max(1, s.commits // per),
                                                           lambda i: batched(next(batch_counter))),
                              lambda: rate(s.commits, raw))
    store.close()
    sm, fm, bm = paired.summary(), floor_paired.summary(), batch_paired.summary()
    return [Result("alter_view_commits", "alter_view commits/s, one process (comment change)", sm["figure"],
                   "commits/s", f"raw single-row SQLite transactions, same settings: {fmt(sm['comparator'], '/s')}",
                   sm["comparator"], sm["ratio"], f"{sm['ratio']:.2f} × raw", "≥ 0.35 × raw", sm["ratio"] >= 0.35,
                   {"per_round": paired.figure, "comparator_per_round": paired.comparator,
                    "commits_per_round": s.commits}),
            Result("alter_view_sql_floor", "the SQL of one comment change alone, none of the library's Python "
                   "(BEGIN IMMEDIATE, data_version, the event INSERT, the views UPDATE, COMMIT): the schema's floor "
                   "under alter_view",
                   fm["figure"], "commits/s", f"raw single-row SQLite transactions: {fmt(fm['comparator'], '/s')}",
                   fm["comparator"], fm["ratio"], f"{fm['ratio']:.2f} × raw", "reported", None,
                   {"per_round": floor_paired.figure, "comparator_per_round": floor_paired.comparator}),
            Result("alter_view_in_transactions", f"alter_view calls/s, {per} calls in each store.transaction() "
                   "(a bulk writer; not the one-call figure above)",
                   bm["figure"], "calls/s", f"raw single-row SQLite transactions: {fmt(bm['comparator'], '/s')}",
                   bm["comparator"], bm["ratio"], f"{bm['ratio']:.2f} × raw", "reported", None,
                   {"per_round": batch_paired.figure, "comparator_per_round": batch_paired.comparator,
                    "calls_per_transaction": per})]


def bench_durability(ctx: Context) -> list[Result]:
    s = ctx.sizes
    normal = ViewStore(ctx.path("normal.db"), actor="bench", durability="normal")
    full = ViewStore(ctx.path("full.db"), actor="bench", durability="full")
    fixtures.create(normal, "bench.orders")
    fixtures.create(full, "bench.orders")
    n, f = _comment_commits(normal, "bench.orders", "c"), _comment_commits(full, "bench.orders", "c")
    counter = iter(range(10**9))
    commits = max(10, s.commits // 2)
    paired = interleave(s.rounds, lambda: rate(commits, lambda i: f(next(counter))),
                        lambda: rate(commits, lambda i: n(next(counter))))
    normal.close()
    full.close()
    sm = paired.summary()
    return [Result("durability", "durability: alter_view commits/s with synchronous=FULL (survives power loss)",
                   sm["figure"], "commits/s", f"synchronous=NORMAL (survives a process crash): "
                   f"{fmt(sm['comparator'], 'commits/s')}", sm["comparator"], sm["ratio"],
                   f"{sm['ratio']:.2f} × NORMAL", "both reported", None,
                   {"full_per_round": paired.figure, "normal_per_round": paired.comparator})]


class IcebergFiles:
    """The comparator for commits and loads: one view kept the Iceberg way, as files.

    A pointer file holds the location of the current metadata file (what a catalog's
    ``metadata_location`` column holds). A commit rebuilds the whole metadata with pyiceberg's
    models, writes the next metadata file and fsyncs it, then swaps the pointer atomically
    (temporary file, fsync, rename). The writer keeps the parsed metadata between its own
    commits and only re-reads the pointer to detect a concurrent commit, which favours it.
    """

    def __init__(self, folder: Path, first_metadata: Path) -> None:
        from pyiceberg.view.metadata import ViewMetadata

        self.ViewMetadata = ViewMetadata
        self.folder = folder
        self.folder.mkdir(parents=True, exist_ok=True)
        self.pointer = folder / "current-pointer"
        self.number = 0
        first = folder / "00000.metadata.json"
        first.write_bytes(first_metadata.read_bytes())
        self._swap_pointer(first)
        self.current = self.load()

    def _swap_pointer(self, target: Path) -> None:
        tmp = self.folder / ".current-pointer.tmp"
        with open(tmp, "w") as f:
            f.write(str(target))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.pointer)

    def load(self) -> Any:
        """Read the pointer, then read and parse the metadata file it names."""
        location = self.pointer.read_text()
        with open(location, "rb") as f:
            return self.ViewMetadata.model_validate_json(f.read())

    def commit_comment(self, comment: str) -> None:
        expected = str(self.folder / f"{self.number:05d}.metadata.json")
        if self.pointer.read_text() != expected:
            raise RuntimeError("concurrent commit")  # never happens here: one writer
        data = self.current.model_dump(by_alias=True, exclude_none=True)
        data["properties"] = {**data.get("properties", {}), "comment": comment}
        rebuilt = self.ViewMetadata.model_validate(data)
        text = rebuilt.model_dump_json(by_alias=True, exclude_none=True).encode()
        self.number += 1
        target = self.folder / f"{self.number:05d}.metadata.json"
        with open(target, "wb") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        self._swap_pointer(target)
        self.current = rebuilt


def bench_history_commits(ctx: Context) -> list[Result]:
    s = ctx.sizes
    rows = []
    for durability in ("normal", "full"):
        store = ViewStore(ctx.path(f"history-{durability}.db"), actor="bench", durability=durability)
        fixtures.view_with_versions(store, "bench.history", s.history_versions, keep_in_metadata=True)
        exported = store.export_iceberg("bench.history", ctx.path(f"export-{durability}"))
        iceberg = IcebergFiles(ctx.path(f"iceberg-{durability}"), exported)
        assert len(iceberg.current.versions) == s.history_versions
        ours = _comment_commits(store, "bench.history", "comment")
        counter = iter(range(10**9))
        paired = interleave(s.rounds, lambda: rate(s.history_commits, lambda i: ours(next(counter))),
                            lambda: rate(s.iceberg_commits, lambda i: iceberg.commit_comment(f"comment {i}")))
        assert len(store.load_view("bench.history").versions) == s.history_versions
        store.close()
        sm = paired.summary()
        if durability == "normal":
            rows.append(Result(
                "history_commits", f"commits/s on a view with {s.history_versions} versions of history",
                sm["figure"], "commits/s",
                f"Iceberg-style commit (pyiceberg models, fsync, pointer swap): {fmt(sm['comparator'], '/s')}",
                sm["comparator"], sm["ratio"], f"{sm['ratio']:.1f} ×", "≥ 10 ×", sm["ratio"] >= 10,
                {"per_round": paired.figure, "comparator_per_round": paired.comparator}))
        else:
            rows.append(Result(
                "history_commits_full", "the same with synchronous=FULL (an fsync per commit, like the comparator)",
                sm["figure"], "commits/s", f"Iceberg-style commit: {fmt(sm['comparator'], '/s')}",
                sm["comparator"], sm["ratio"], f"{sm['ratio']:.1f} ×", "reported", None,
                {"per_round": paired.figure, "comparator_per_round": paired.comparator}))
    return rows


# ---------------------------------------------------------------------------------------------
# reads


def bench_load_view(ctx: Context) -> list[Result]:
    s = ctx.sizes
    store = ViewStore(ctx.path("load.db"), actor="bench")
    versions = min(10, s.history_versions)
    fixtures.view_with_versions(store, "bench.loaded", versions)
    for i in range(20):
        fixtures.create(store, f"bench.other_{i}", i)
    iceberg = IcebergFiles(ctx.path("iceberg-load"), store.export_iceberg("bench.loaded", ctx.path("export-load")))
    assert len(iceberg.load().versions) == versions
    ours_warm: list[float] = []
    ours_miss: list[float] = []
    ours_changed: list[float] = []
    theirs: list[float] = []
    # another connection (as another process would) commits between loads in the cache-miss rounds:
    # to other views, or to the loaded view itself
    other = ViewStore(ctx.path("load.db"), actor="someone-else")
    counter = iter(range(10**9))

    def after_commits(target: Callable[[], str], into: list[float]) -> None:
        for _ in range(max(5, s.load_calls // 20)):
            other.alter_view(target(), ViewChange.update_comment(f"c{next(counter)}"))
            start = time.perf_counter()
            view = store.load_view("bench.loaded")
            into.append(time.perf_counter() - start)
        assert view.comment == other.load_view("bench.loaded").comment

    for r in range(s.rounds):
        steps = [lambda: ours_warm.extend(latencies(s.load_calls, lambda i: store.load_view("bench.loaded"))),
                 lambda: theirs.extend(latencies(s.iceberg_loads, lambda i: iceberg.load())),
                 lambda: after_commits(lambda: f"bench.other_{next(counter) % 20}", ours_miss),
                 lambda: after_commits(lambda: "bench.loaded", ours_changed)]
        for step in (steps if r % 2 == 0 else steps[::-1]):
            step()
    other.close()
    store.close()
    p50, p99 = percentile(ours_warm, 50), percentile(ours_warm, 99)
    t50, t99 = percentile(theirs, 50), percentile(theirs, 99)

    def after(name: str, what: str, samples: list[float]) -> Result:
        """A reported row: load_view right after another connection's commit, against pyiceberg's p50."""
        m50, m99 = percentile(samples, 50), percentile(samples, 99)
        return Result(name, f"load_view p50 right after another connection {what}; p99 {fmt(m99 * 1e6, 'µs')}",
                      m50 * 1e6, "µs", f"pyiceberg p50 {fmt(t50 * 1e6, 'µs')}", t50 * 1e6, t50 / m50,
                      f"{t50 / m50:.0f} × faster", "reported", None,
                      {"p50_us": m50 * 1e6, "p99_us": m99 * 1e6, "calls": len(samples)})

    return [
        Result("load_view", f"load_view p50 (view with {versions} versions); p99 {fmt(p99 * 1e6, 'µs')}",
               p50 * 1e6, "µs", f"pyiceberg: read pointer + parse metadata: p50 {fmt(t50 * 1e6, 'µs')}, "
               f"p99 {fmt(t99 * 1e6, 'µs')}", t50 * 1e6, t50 / p50, f"{t50 / p50:.0f} × faster",
               "≥ 10 × faster at p50", t50 / p50 >= 10,
               {"p50_us": p50 * 1e6, "p99_us": p99 * 1e6, "iceberg_p50_us": t50 * 1e6, "iceberg_p99_us": t99 * 1e6,
                "p99_ratio": t99 / p99, "calls": len(ours_warm), "iceberg_calls": len(theirs)}),
        after("load_view_after_commit", "committed to another view (cached entry checked again)", ours_miss),
        after("load_view_after_change", "changed this view (its comment; the cached entry catches up with the "
              "new event)", ours_changed),
    ]


def bench_as_of(ctx: Context) -> list[Result]:
    s = ctx.sizes
    store = ViewStore(ctx.path("asof.db"), actor="bench")
    fixtures.create(store, "bench.busy")
    for i in range(2, s.as_of_events + 1):
        if i % 100 == 0:
            store.replace_view("bench.busy", columns=fixtures.COLUMNS,
                               representations=fixtures.representations(0, f" AND v = {i}"),
                               default_namespace="bench")
        else:
            store.alter_view("bench.busy", ViewChange.update_comment(f"comment {i}"))
    history = store.history("bench.busy")
    assert len(history) == s.as_of_events
    rng = random.Random(3)
    times = [e.occurred_at for e in history]
    # the answer must be the state after the last event at or before the time
    probe = rng.choice(times)
    expected = max(e.stream_version for e in history if e.occurred_at <= probe)
    assert store.load_view("bench.busy", as_of=probe).stream_version == expected
    as_of: list[float] = []
    current: list[float] = []
    for r in range(s.rounds):
        steps = [lambda: as_of.extend(latencies(s.as_of_calls,
                                                lambda i: store.load_view("bench.busy", as_of=rng.choice(times)))),
                 lambda: current.extend(latencies(s.as_of_calls, lambda i: store.load_view("bench.busy")))]
        for step in (steps if r % 2 == 0 else steps[::-1]):
            step()
    store.close()
    a50, a99, c50 = percentile(as_of, 50), percentile(as_of, 99), percentile(current, 50)
    return [Result("load_view_as_of", f"load_view(as_of=…) p50 on a view with {s.as_of_events:,} events; "
                   f"p99 {fmt(a99 * 1e3, 'ms')}", a50 * 1e3, "ms",
                   f"load_view of the current state: p50 {fmt(c50 * 1e6, 'µs')}", c50 * 1e3, a50 / c50,
                   f"{a50 / c50:.0f} × current", "≤ 5 ms", a50 * 1e3 <= 5,
                   {"p50_ms": a50 * 1e3, "p99_ms": a99 * 1e3, "current_p50_ms": c50 * 1e3, "calls": len(as_of)})]


def bench_list_views(ctx: Context) -> list[Result]:
    s = ctx.sizes
    path = ctx.path("many.db")
    ctx.say(f"  creating {s.list_total:,} views in {s.list_namespaces} namespaces through the API...")
    seconds = fixtures.many_views(path, s.list_total, s.list_namespaces)
    ctx.say(f"  created in {seconds:.1f} s ({s.list_total / seconds:,.0f} create_view/s)")
    per_namespace = s.list_total // s.list_namespaces
    with ViewStore(path, actor="bench") as store:
        assert len(store.list_views("ns003")) == per_namespace
        times = []
        for _ in range(s.rounds):
            times.extend(latencies(5, lambda i: store.list_views("ns003")))
    p50, p99 = percentile(times, 50), percentile(times, 99)
    return [Result("list_views", f"list_views of a namespace holding {per_namespace:,} of {s.list_total:,} views; "
                   f"p99 {fmt(p99 * 1e3, 'ms')}", p50 * 1e3, "ms", "—", None, None, "—", "≤ 20 ms",
                   p50 * 1e3 <= 20, {"p50_ms": p50 * 1e3, "p99_ms": p99 * 1e3,
                                     "create_view_per_s": s.list_total / seconds})]


# ---------------------------------------------------------------------------------------------
# the big log


#: every row of the log in order, as the comparators read it (straight from SQLite, around the library)
_EVERY_EVENT = f"SELECT {', '.join(EVENT_COLUMNS)} FROM events ORDER BY position"


def _bare_read(conn: sqlite3.Connection) -> Callable[[], float]:
    """Rows per second of the plainest pass over the log: every row fetched and its payload parsed
    with orjson, no checks and no fold. Not something the library could do instead; it tells how
    fast this machine is right now, so the absolute rebuild figure can be read beside it."""

    def bare() -> float:
        start, n, loads = time.perf_counter(), 0, orjson.loads
        cursor = conn.execute(_EVERY_EVENT)
        while rows := cursor.fetchmany(10_000):
            for row in rows:
                loads(row[8])
            n += len(rows)
        return n / (time.perf_counter() - start)

    return bare


def bench_rebuild(ctx: Context) -> list[Result]:
    log = ctx.event_log()
    with ViewStore(log.path, actor="bench") as store, closing(sqlite3.connect(log.path)) as bare_conn:
        bare = _bare_read(bare_conn)
        live = store.projection_dump() if log.events <= 50_000 else None

        def rebuild() -> float:
            start = time.perf_counter()
            repaired = store.rebuild()
            assert not any(repaired.values()), repaired  # the live projections matched the log
            return log.events / (time.perf_counter() - start)

        paired = interleave(ctx.sizes.rebuild_rounds, rebuild, bare)
        # the worst case: every projection row missing, so rebuild() writes them all
        with closing(sqlite3.connect(log.path)) as conn:
            conn.executescript("".join(f"DELETE FROM {table};" for table in PROJECTION_TABLES))
        start = time.perf_counter()
        repaired = store.rebuild()
        from_empty = log.events / (time.perf_counter() - start)
        if live is not None:
            assert store.projection_dump() == live
    sm = paired.summary()
    figure = sm["figure"]
    return [Result("rebuild", f"rebuild() of a {log.events:,}-event log whose projections match it (every event "
                   "replayed, every row compared, none written)", figure, "events/s",
                   f"a bare read of the same rows, payloads parsed, no checks, no fold (this machine's pace, "
                   f"not an alternative): {fmt(sm['comparator'], '/s')}", sm["comparator"], sm["ratio"],
                   f"{sm['ratio']:.2f} × a bare read", "≥ 100,000 events/s", figure >= 100_000,
                   {"per_round": paired.figure, "bare_read_per_round": paired.comparator}),
            Result("rebuild_from_empty", "rebuild() of the same log into emptied projections (every row written)",
                   from_empty, "events/s", "—", None, None, "—", "reported", None,
                   {"rows_written": repaired})]


def bench_events(ctx: Context) -> list[Result]:
    """``events()`` of the whole big log, every event built, beside the bare read of rebuild's row."""
    log = ctx.event_log()
    with ViewStore(log.path, actor="bench") as store, closing(sqlite3.connect(log.path)) as bare_conn:
        bare = _bare_read(bare_conn)

        def events() -> float:
            start = time.perf_counter()
            found = store.events()
            per_second = len(found) / (time.perf_counter() - start)
            assert len(found) == log.events
            del found  # freed outside the timing
            return per_second

        paired = interleave(ctx.sizes.events_rounds, events, bare)
    sm = paired.summary()
    us, bare_us = 1e6 / sm["figure"], 1e6 / sm["comparator"]
    return [Result("events_whole_log", f"events() of the whole {log.events:,}-event log (every row read and built "
                   "into its event model, checked)", us, "µs/event",
                   f"a bare read of the same rows, payloads parsed, no checks, no models (this machine's pace, "
                   f"not an alternative): {fmt(bare_us, 'µs/row')}", bare_us, 1 / sm["ratio"],
                   f"{1 / sm['ratio']:.1f} × a bare read's time", "reported", None,
                   {"per_round_events_per_s": paired.figure, "bare_read_per_round_rows_per_s": paired.comparator})]


def _audit_window(path: Path, actor: str, size: int) -> tuple[int, int]:
    """A time range holding about ``size`` of the actor's events, from the middle of the log."""
    conn = sqlite3.connect(path)
    times = [t for (t,) in conn.execute("SELECT occurred_at FROM events WHERE actor = ? ORDER BY occurred_at",
                                        (actor,))]
    conn.close()
    start = max(0, len(times) // 2 - size // 2)
    return times[start], times[min(len(times) - 1, start + size - 1)]


def bench_audit(ctx: Context) -> list[Result]:
    log = ctx.event_log()
    actor = log.actors[3]
    since, until = _audit_window(log.path, actor, ctx.sizes.audit_window)
    scan_conn = sqlite3.connect(log.path)

    def full_scan() -> list:
        return [row_to_event(r) for r in scan_conn.execute(_EVERY_EVENT)
                if r[6] == actor and since <= r[7] <= until]

    with ViewStore(log.path, actor="auditor") as store:
        found = store.events(actor=actor, since=since, until=until)
        assert [e.position for e in found] == [e.position for e in full_scan()]
        paired = interleave(ctx.sizes.audit_rounds,
                            lambda: timed_s(lambda: store.events(actor=actor, since=since, until=until)),
                            lambda: timed_s(full_scan))
        sm = paired.summary()
        ms = sm["figure"] * 1e3
        results = [Result("audit_query", f"audit query over a {log.events:,}-event log: one actor, a time range "
                          f"matching {len(found):,} events", ms, "ms",
                          f"full scan of the same rows in Python: {fmt(sm['comparator'] * 1e3, 'ms')}",
                          sm["comparator"] * 1e3, 1 / sm["ratio"], f"{1 / sm['ratio']:.0f} × faster", "≤ 50 ms",
                          ms <= 50, {"matched": len(found), "per_round_s": paired.figure,
                                     "scan_per_round_s": paired.comparator})]
        for name, what, filters, keep in _audit_questions(log, actor, ctx.sizes.audit_window):
            results.append(_audit_question(ctx, store, scan_conn, name, what, filters, keep))
    scan_conn.close()
    return results


def _audit_questions(log: fixtures.EventLog, actor: str, size: int) -> list[tuple[str, str, dict[str, Any], Any]]:
    """The other questions of the audit rows: name, what is asked, the filters of events(), and which
    rows of a scan in log order answer it (a function of the rows, read as a cursor gives them)."""
    conn = sqlite3.connect(log.path)
    middle = conn.execute("SELECT max(position) / 2 FROM events").fetchone()[0]
    since, until = (conn.execute("SELECT occurred_at FROM events WHERE position = ?", (p,)).fetchone()[0]
                    for p in (middle, middle + size - 1))
    conn.close()
    return [
        ("audit_time_range", "every actor's events in a time range", {"since": since, "until": until},
         lambda rows: [r for r in rows if since <= r[7] <= until]),
        ("audit_type", "every rename (a type alone)", {"types": "view.renamed"},
         lambda rows: [r for r in rows if r[4] == "view.renamed"]),
        ("audit_latest", "one actor's latest 20 events", {"actor": actor, "newest_first": True, "limit": 20},
         lambda rows: [r for r in rows if r[6] == actor][:-21:-1]),
    ]


def _audit_question(ctx: Context, store: ViewStore, scan_conn: sqlite3.Connection, name: str, what: str,
                    filters: dict[str, Any], keep: Callable[[Any], list]) -> Result:
    """One more audit question, timed against the same question answered by a scan in Python."""
    log = ctx.event_log()

    def full_scan() -> list:
        return [row_to_event(r) for r in keep(scan_conn.execute(_EVERY_EVENT))]

    found = store.events(**filters)
    assert found == full_scan()
    paired = interleave(ctx.sizes.audit_rounds, lambda: timed_s(lambda: store.events(**filters)),
                        lambda: timed_s(full_scan))
    sm = paired.summary()
    return Result(name, f"audit query over a {log.events:,}-event log: {what}, {len(found):,} events",
                  sm["figure"] * 1e3, "ms",
                  f"full scan of the same rows in Python: {fmt(sm['comparator'] * 1e3, 'ms')}",
                  sm["comparator"] * 1e3, 1 / sm["ratio"], f"{1 / sm['ratio']:.0f} × faster", "reported", None,
                  {"matched": len(found), "filters": filters, "per_round_s": paired.figure,
                   "scan_per_round_s": paired.comparator})


def timed_s(fn: Callable[[], Any]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def bench_storage(ctx: Context) -> list[Result]:
    log = ctx.event_log()
    conn = sqlite3.connect(log.path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    total = os.path.getsize(log.path) + sum(os.path.getsize(p) for p in [Path(f"{log.path}-wal")] if p.exists())
    parts: dict[str, int] = {}
    try:
        for name, size in conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name"):
            parts[name] = size
    except sqlite3.OperationalError:  # dbstat is not compiled into every SQLite
        pass
    conn.close()
    log_names = {"events", "sqlite_autoindex_events_1", "events_by_actor", "events_naming"}
    log_bytes = sum(v for k, v in parts.items() if k in log_names)
    per_event = total / log.events
    details = {"file_bytes": total, "events": log.events, "by_table_and_index": parts}
    what = f"storage: database bytes per event ({log.events:,} events, projections included"
    if log_bytes:
        details["log_bytes_per_event"] = log_bytes / log.events
        what += f"; the log and its indexes alone: {log_bytes / log.events:.0f} B"
    return [Result("storage", what + ")", per_event, "B/event", "—", None, None, "—", "reported", None, details)]


# ---------------------------------------------------------------------------------------------
# the command line


def _command(name: str) -> str:
    """The path of a console script of this environment (beside its Python, else on PATH)."""
    beside = Path(sys.executable).parent / name
    found = str(beside) if beside.exists() else shutil.which(name)
    if found is None:
        raise SystemExit(f"the {name} command is not installed")
    return found


def _process_cpu_s(argv: list[str], env: dict[str, str]) -> float:
    """CPU seconds (user + system) one process of ``argv`` took, run to its end; it must succeed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)  # what the children waited for so far took
    done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{argv} exited with {done.returncode}: {done.stderr.decode(errors='replace')}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def bench_cli_start(ctx: Context) -> list[Result]:
    s = ctx.sizes
    path = ctx.path("cli.db")
    with ViewStore(path, actor="bench") as store:
        fixtures.create(store, "bench.orders")
    # CPU time, not wall time: the start-up is CPU bound, and the wall time of a process moves with the
    # machine's load. Both sides run from bytecode a first run caches (as an installed package does),
    # in a folder of this run's own.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(ctx.path("pycache"))
    show = [_command("viewstore"), "--db", str(path), "show", "bench.orders"]
    rows = [_command("sqlite-utils"), "rows", str(path), "views", "--limit", "1"]
    for argv in (show, rows):  # the warm-up, which writes the bytecode
        _process_cpu_s(argv, env)
    paired = interleave(s.cli_rounds, lambda: _process_cpu_s(show, env), lambda: _process_cpu_s(rows, env))
    sm = paired.summary()
    return [Result("cli_start", "CLI start-up: CPU time (user + system) of `viewstore show` of a one-view store, "
                   "a fresh process each, median", sm["figure"] * 1e3, "ms",
                   f"`sqlite-utils rows` of the same file's views table: {fmt(sm['comparator'] * 1e3, 'ms')}",
                   sm["comparator"] * 1e3, sm["ratio"], f"{sm['ratio']:.2f} × sqlite-utils", "reported", None,
                   {"viewstore_cpu_s_per_round": paired.figure, "sqlite_utils_cpu_s_per_round": paired.comparator})]


CORE = {
    "alter_view": bench_alter_view,
    "history": bench_history_commits,
    "load_view": bench_load_view,
    "rebuild": bench_rebuild,
    "events": bench_events,
    "audit": bench_audit,
    "as_of": bench_as_of,
    "list_views": bench_list_views,
    "storage": bench_storage,
    "durability": bench_durability,
    "cli_start": bench_cli_start,
}
