"""Stores the benchmarks measure, built through viewstore's public API only.

Nothing here inserts rows behind the library's back: every event comes from a ``ViewStore`` call,
so the log, the projections, the snapshots and the stream versions are exactly what real use makes.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from pathlib import Path

from viewstore import Column, SQLRepresentation, ViewChange, ViewStore

COLUMNS = [Column("day", "date", "the order day"), Column("region", "string"), Column("orders", "bigint"),
           Column("revenue", "decimal(18,2)", "in EUR"), Column("updated_at", "timestamptz")]


def representations(i: int, tag: str = "") -> list[SQLRepresentation]:
    """A view's SQL in two dialects; ``i`` and ``tag`` make the definition distinct."""
    where = f"WHERE region_id = {i}{tag}"
    return [
        SQLRepresentation("spark", f"SELECT day, region, count(*) AS orders, sum(amount) AS revenue, "
                                   f"max(ts) AS updated_at FROM sales.orders {where} GROUP BY day, region"),
        SQLRepresentation("trino", f"SELECT day, region, count(*) AS orders, sum(amount) AS revenue, "
                                   f"max(ts) AS updated_at FROM sales.orders {where} GROUP BY 1, 2"),
    ]


def create(store: ViewStore, identifier: str, i: int = 0, **extra) -> None:
    store.create_view(identifier, columns=COLUMNS, representations=representations(i),
                      default_namespace=identifier.rsplit(".", 1)[0], comment=f"view {i}", **extra)


def view_with_versions(store: ViewStore, identifier: str, versions: int, *, keep_in_metadata: bool = False) -> None:
    """A view whose history holds ``versions`` versions (one create, then replaces).

    With ``keep_in_metadata`` the view's ``version.history.num-entries`` keeps all of them in an
    exported Iceberg metadata file (Iceberg's default keeps the newest 10).
    """
    props = {"version.history.num-entries": str(versions)} if keep_in_metadata else None
    create(store, identifier, 0, properties=props)
    for v in range(2, versions + 1):
        store.replace_view(identifier, columns=COLUMNS, representations=representations(0, f" AND v = {v}"),
                           default_namespace=identifier.rsplit(".", 1)[0])


def many_views(path: Path, total: int, namespaces: int) -> float:
    """``total`` views spread evenly over ``namespaces`` namespaces; returns the build time in seconds."""
    start = time.perf_counter()
    with ViewStore(path, actor="builder") as store:
        for i in range(total):
            create(store, f"ns{i % namespaces:03d}.view_{i:07d}", i)
    return time.perf_counter() - start


@dataclass
class EventLog:
    """An audit-style log built by many actors through the API."""

    path: Path
    events: int
    calls: int
    actors: list[str]
    views: int
    seconds: float


def event_log(path: Path, *, events: int, views: int, actors: int = 20, block: int = 200,
              seed: int = 7) -> EventLog:
    """Fill a store with at least ``events`` events from ``actors`` actors working on ``views`` views.

    Each actor has its own ``ViewStore`` (its own connection, as separate processes would) and the
    actors take turns in blocks of ``block`` calls. Each actor mostly changes the views its team owns
    (nine calls in ten) and sometimes anyone's. The calls are a realistic mix: alter_view batches of
    comment and property changes (one to four events per call), replaces and representation updates
    that add versions, property removals, and a few renames.
    """
    rng = random.Random(seed)
    names = [f"ns{i % 50:02d}.view_{i:06d}" for i in range(views)]
    start = time.perf_counter()
    stores = [ViewStore(path, actor=f"user{a:02d}") for a in range(actors)]
    try:
        calls = 0
        for i, name in enumerate(names):
            create(stores[i % actors], name, i)
            calls += 1
        total = stores[0].event_count()
        turn = 0
        while total < events:
            actor = turn % actors
            store = stores[actor]
            turn += 1
            for _ in range(block):
                if total >= events:
                    break
                k = rng.randrange(views)
                if rng.random() < 0.9:  # one of the actor's own views
                    k = k - k % actors + actor if k - k % actors + actor < views else actor
                name = names[k]
                roll = rng.random()
                seq = f"{turn}-{calls}"
                if roll < 0.70:
                    changes = [ViewChange.update_comment(f"comment {seq}")]
                    for j in range(rng.randrange(4)):
                        changes.append(ViewChange.set_property(f"owner.{j}", f"team-{seq}"))
                    store.alter_view(name, *changes)
                    total += len(changes)
                elif roll < 0.80:
                    store.replace_view(name, columns=COLUMNS, representations=representations(k, f" AND s = '{seq}'"),
                                       default_namespace=name.rsplit(".", 1)[0])
                    total += 1
                elif roll < 0.90:
                    store.alter_view(name, ViewChange.update_representation("trino", f"SELECT {k} AS s -- {seq}"))
                    total += 1
                elif roll < 0.995:
                    store.alter_view(name, ViewChange.set_property("tmp", seq), ViewChange.remove_property("tmp"))
                    total += 2
                else:
                    new_name = f"{name.rsplit('.', 1)[0]}.renamed_{k}_{calls}"
                    store.rename_view(name, new_name)
                    names[k] = new_name
                    total += 1
                calls += 1
        total = stores[0].event_count()
    finally:
        for s in stores:
            s.close()
    return EventLog(path, total, calls, [f"user{a:02d}" for a in range(actors)], views,
                    time.perf_counter() - start)
