"""One process of the load test: a seeded mix of writes and reads on a shared store.

Usage: ``python load_worker.py <db> <worker> <operations> <seed> <go-file> <result-file> [<busy-timeout-ms>]``.
It creates ``<go-file>.ready<worker>``, waits for ``<go-file>`` (so all workers start together), runs
the operations and writes a JSON result: every successful write with the token its event carries (or
its event type, for a write whose event carries no text of the caller's), the (view, version) it
returned and, for an optimistic write,
the version it expected; every lost optimistic race with the version it expected and the one it met;
the property keys and dialects it set and removed; the names its own views ended with; and every
exception by type. With a busy timeout (milliseconds) a write waits up to three times that long for
the write lock (``log.BUSY_TIMEOUT_MS``) instead of the default 30 s.

Every write kind is in the mix. On the 20 shared views, which every worker writes: comments, properties
set and removed, replace_view, a representation updated, added and removed, a counter property
incremented with ``expected_version`` (a lost update leaves it short), and rollback_view to version 1
(with ``expected_version``). On views of its own, made under the same contention: create_view,
replace_view, rename_view, a rename in alter_view, rollback_view and drop_view.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import random
import sqlite3
import sys
import time
import traceback
from typing import Any

import viewstore.log
from viewstore import ConcurrencyError, ValidationError, ViewChange, ViewStore

VIEWS = [f"load.v{i:02d}" for i in range(20)]
COLUMNS = [("id", "bigint"), ("label", "string")]
INITIAL_SQL = "SELECT 1 AS id, 'a' AS label"


def main(db: str, worker: int, operations: int, seed: int, go: str, result: str, busy_timeout_ms: int | None) -> None:
    if busy_timeout_ms is not None:
        viewstore.log.BUSY_TIMEOUT_MS = busy_timeout_ms
    store = ViewStore(db, actor=f"worker{worker}")
    rng = random.Random(seed)
    # (kind, token or event type, view uuid, stream version, expected version or None)
    writes: list[tuple[str, str, str, int, int | None]] = []
    lost_races: list[tuple[str, int, int]] = []  # (view, expected version, version met)
    keys: list[tuple[str, str]] = []  # (view, property key) set by a successful call
    removed_keys: list[tuple[str, str]] = []  # (view, property key) removed by a successful call
    dialects: list[tuple[str, str, int]] = []  # (view uuid, dialect, version) added by a successful call
    removed_dialects: list[tuple[str, str, int]] = []  # (view uuid, dialect, version) removed by one
    wiped: list[tuple[str, str, int]] = []  # (view uuid, dialect, added at) that was gone when removed
    own: dict[str, Any] = {}  # this worker's view: uuid, name, live, stream version, current version id
    finals: list[dict[str, Any]] = []  # every view of its own, as this worker last left it
    busy = reads = 0
    errors: list[str] = []

    def wrote(kind: str, mark: str, view: Any, expected: int | None = None) -> None:
        writes.append((kind, mark, view.uuid, view.stream_version, expected))

    def optimistic(name: str, attempt: Any) -> None:
        nonlocal busy
        try:
            attempt()
        except ConcurrencyError as e:
            if e.busy:  # not the version check: the database stayed locked
                busy += 1
            else:
                lost_races.append((name, e.expected, e.actual))

    open(f"{go}.ready{worker}", "w").close()
    while not os.path.exists(go):
        time.sleep(0.001)
    for i in range(operations):
        name = rng.choice(VIEWS)
        token = f"w{worker}-{i}"
        roll = rng.random()
        try:
            if roll < 0.20:
                wrote("comment", token, store.alter_view(name, ViewChange.update_comment(token)))
            elif roll < 0.36:
                mine = [k for v, k in keys if v == name and (v, k) not in removed_keys]
                if roll < 0.31 or not mine:
                    key = f"key.{token}"
                    wrote("property", token, store.alter_view(name, ViewChange.set_property(key, token)))
                    keys.append((name, key))
                else:  # remove a key of its own: no other worker touches it
                    key = rng.choice(mine)
                    wrote("property_removed", "view.properties_removed",
                          store.alter_view(name, ViewChange.remove_property(key)))
                    removed_keys.append((name, key))
            elif roll < 0.43:
                wrote("replace", token, store.replace_view(name, columns=COLUMNS, representations=[
                    ("spark", f"SELECT 1 AS id, '{token}' AS label"), ("trino", "SELECT 1 AS id, 'x' AS label")],
                    default_namespace="load"))
            elif roll < 0.49:
                wrote("representation", token, store.alter_view(
                    name, ViewChange.update_representation("trino", f"SELECT 2 AS id, '{token}' AS label")))
            elif roll < 0.57:
                view = store.load_view(name)
                mine_d = [(d, at) for u, d, at in dialects if u == view.uuid
                          and not any(r[:2] == (u, d) for r in removed_dialects + wiped)]
                if roll < 0.53 or not mine_d:
                    dialect = f"d_w{worker}_{i}"
                    view = store.alter_view(name, ViewChange.add_representation((dialect, f"SELECT '{token}'")))
                    wrote("dialect_added", token, view)
                    dialects.append((view.uuid, dialect, view.stream_version))
                else:  # one it added; a replace or a rollback since then may have taken it away
                    dialect, at = rng.choice(mine_d)
                    try:
                        view = store.alter_view(name, ViewChange.remove_representation(dialect))
                    except ValidationError:
                        wiped.append((view.uuid, dialect, at))
                    else:
                        wrote("dialect_removed", "view.representation_removed", view)
                        removed_dialects.append((view.uuid, dialect, view.stream_version))
            elif roll < 0.67:  # a counter every worker increments: a lost update leaves it short
                seen = store.load_view(name)
                count = int(seen.properties.get("counter", "0"))

                def increment() -> None:
                    view = store.alter_view(name, ViewChange.set_property("counter", str(count + 1)),
                                            expected_version=seen.stream_version)
                    wrote("counter", f'"{count + 1}"', view, seen.stream_version)

                optimistic(name, increment)
            elif roll < 0.70:
                seen = store.load_view(name)
                if seen.current_version_id == 1:
                    reads += 1
                else:
                    optimistic(name, lambda: wrote("rollback", "view.rolled_back",
                                                   store.rollback_view(name, 1, expected_version=seen.stream_version),
                                                   seen.stream_version))
            elif roll < 0.82:  # a view of its own, through its whole life
                if not own.get("live"):
                    new = f"load.p{worker}_{i}"
                    view = store.create_view(new, columns=COLUMNS, default_namespace="load",
                                             representations=[("spark", INITIAL_SQL)], comment=token)
                    wrote("create", token, view)
                    own = {"name": new, "live": True, "uuid": view.uuid, "version_id": view.current_version_id}
                    finals.append(own)
                else:
                    what = rng.choice(["replace", "rename", "alter_rename", "rollback", "drop"])
                    if what == "replace":
                        view = store.replace_view(own["name"], columns=COLUMNS, default_namespace="load",
                                                  representations=[("spark", f"SELECT '{token}' AS label")])
                        wrote("own_replace", token, view)
                    elif what in ("rename", "alter_rename"):
                        new = f"load.r{worker}_{i}"
                        view = (store.rename_view(own["name"], new) if what == "rename"
                                else store.alter_view(own["name"], ViewChange.rename(new)))
                        wrote(what, new.split(".")[1], view)  # its event carries the new name
                        own["name"] = new
                    elif what == "rollback" and own["version_id"] != 1:
                        view = store.rollback_view(own["name"], 1)
                        wrote("own_rollback", "view.rolled_back", view)
                    elif what == "rollback":  # nothing to roll back: a read instead
                        view = store.load_view(own["name"])
                        reads += 1
                    else:
                        dropped_at = store.load_view(own["name"]).stream_version + 1
                        if store.drop_view(own["name"]) is not True:
                            raise AssertionError(f"drop_view of the live {own['name']} did not drop it")
                        writes.append(("drop", "view.dropped", own["uuid"], dropped_at, None))
                        own["live"] = False
                    if own["live"]:
                        own["version_id"] = view.current_version_id
            else:
                reads += 1
                kind = rng.randrange(5)
                if kind == 0:
                    store.load_view(name)
                elif kind == 1:
                    store.list_views("load")
                elif kind == 2:
                    store.history(name)
                elif kind == 3:
                    store.events(view=name, limit=20)
                else:
                    store.load_view(name, as_of=dt.datetime.now(dt.timezone.utc))
        except ConcurrencyError as e:  # the bounded wait gave up on a busy database
            busy += 1
            if not e.busy:
                errors.append(f"ConcurrencyError not marked busy: {e}")
        except sqlite3.Error as e:  # must never happen: a raw sqlite3 error reached the caller
            errors.append(f"{type(e).__module__}.{type(e).__name__}: {e}\n{traceback.format_exc()}")
        except Exception as e:
            errors.append(f"{type(e).__module__}.{type(e).__name__}: {e}\n{traceback.format_exc()}")
    store.close()
    with open(result, "w") as f:
        json.dump({"writes": writes, "lost_races": lost_races, "keys": keys, "removed_keys": removed_keys,
                   "dialects": dialects, "removed_dialects": removed_dialects, "wiped": wiped, "own": finals,
                   "busy": busy, "reads": reads, "errors": errors}, f)


if __name__ == "__main__":
    db, worker, operations, seed, go, result, *timeout = sys.argv[1:]
    main(db, int(worker), int(operations), int(seed), go, result, int(timeout[0]) if timeout else None)
