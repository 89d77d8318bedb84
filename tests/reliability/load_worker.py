"""One process of the load test: a seeded mix of writes and reads on a shared store.

Usage: ``python load_worker.py <db> <worker> <operations> <seed> <go-file> <result-file> [<busy-timeout-ms>]``.
It creates ``<go-file>.ready<worker>``, waits for ``<go-file>`` (so all workers start together), runs the operations and writes a JSON
result: every successful write with the token its event carries, the (view, version) it returned
and, for an optimistic write, the version it expected; every lost optimistic race with the version
it expected and the one it met; the property keys it set; and every exception by type. With a busy
timeout (milliseconds) the store waits that long for the write lock instead of its default.
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

import viewstore.log
from viewstore import ConcurrencyError, ViewChange, ViewStore

VIEWS = [f"load.v{i:02d}" for i in range(20)]
COLUMNS = [("id", "bigint"), ("label", "string")]


def main(db: str, worker: int, operations: int, seed: int, go: str, result: str, busy_timeout_ms: int | None) -> None:
    if busy_timeout_ms is not None:
        viewstore.log.BUSY_TIMEOUT_MS = busy_timeout_ms
    store = ViewStore(db, actor=f"worker{worker}")
    rng = random.Random(seed)
    writes: list[tuple[str, str, str, int, int | None]] = []  # (kind, token, view uuid, stream version, expected)
    lost_races: list[tuple[str, int, int]] = []  # (view, expected version, version met)
    keys: list[tuple[str, str]] = []  # (view, property key) set by a successful call
    busy = reads = 0
    errors: list[str] = []
    open(f"{go}.ready{worker}", "w").close()
    while not os.path.exists(go):
        time.sleep(0.001)
    for i in range(operations):
        name = rng.choice(VIEWS)
        token = f"w{worker}-{i}"
        roll = rng.random()
        try:
            if roll < 0.30:
                view = store.alter_view(name, ViewChange.update_comment(token))
                writes.append(("comment", token, view.uuid, view.stream_version, None))
            elif roll < 0.50:
                key = f"key.{token}"
                view = store.alter_view(name, ViewChange.set_property(key, token))
                writes.append(("property", token, view.uuid, view.stream_version, None))
                keys.append((name, key))
            elif roll < 0.60:
                view = store.replace_view(name, columns=COLUMNS, representations=[
                    ("spark", f"SELECT 1 AS id, '{token}' AS label"), ("trino", "SELECT 1 AS id, 'x' AS label")],
                    default_namespace="load")
                writes.append(("replace", token, view.uuid, view.stream_version, None))
            elif roll < 0.70:
                view = store.alter_view(name, ViewChange.update_representation("trino", f"SELECT 2 AS id, '{token}' AS label"))
                writes.append(("representation", token, view.uuid, view.stream_version, None))
            elif roll < 0.80:  # optimistic, on a key every worker overwrites: may lose the race, then writes nothing
                seen = store.load_view(name).stream_version
                try:
                    view = store.alter_view(name, ViewChange.set_property("shared", token), expected_version=seen)
                    writes.append(("optimistic", token, view.uuid, view.stream_version, seen))
                    keys.append((name, "shared"))
                except ConcurrencyError as e:
                    if e.busy:  # not the version check: the database stayed locked
                        busy += 1
                    else:
                        lost_races.append((name, e.expected, e.actual))
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
        json.dump({"writes": writes, "lost_races": lost_races, "keys": keys, "busy": busy, "reads": reads,
                   "errors": errors}, f)


if __name__ == "__main__":
    db, worker, operations, seed, go, result, *timeout = sys.argv[1:]
    main(db, int(worker), int(operations), int(seed), go, result, int(timeout[0]) if timeout else None)
