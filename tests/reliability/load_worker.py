"""One process of the load test: a seeded mix of writes and reads on a shared store.

Usage: ``python load_worker.py <db> <worker> <operations> <seed> <go-file> <result-file>``.
It creates ``<go-file>.ready<worker>``, waits for ``<go-file>`` (so all workers start together), runs the operations and writes a JSON
result: every successful write with the token its event carries and the (view, version) it
returned, the property keys it set, and every exception by type.
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

from viewstore import ConcurrencyError, ViewChange, ViewStore

VIEWS = [f"load.v{i:02d}" for i in range(20)]
COLUMNS = [("id", "bigint"), ("label", "string")]


def main(db: str, worker: int, operations: int, seed: int, go: str, result: str) -> None:
    store = ViewStore(db, actor=f"worker{worker}")
    rng = random.Random(seed)
    writes: list[tuple[str, str, str, int]] = []  # (kind, token, view uuid, stream version)
    keys: list[tuple[str, str]] = []  # (view, property key) set by a successful call
    conflicts = busy = reads = 0
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
                writes.append(("comment", token, view.uuid, view.stream_version))
            elif roll < 0.50:
                key = f"key.{token}"
                view = store.alter_view(name, ViewChange.set_property(key, token))
                writes.append(("property", token, view.uuid, view.stream_version))
                keys.append((name, key))
            elif roll < 0.60:
                view = store.replace_view(name, columns=COLUMNS, representations=[
                    ("spark", f"SELECT 1 AS id, '{token}' AS label"), ("trino", "SELECT 1 AS id, 'x' AS label")],
                    default_namespace="load")
                writes.append(("replace", token, view.uuid, view.stream_version))
            elif roll < 0.70:
                view = store.alter_view(name, ViewChange.update_representation("trino", f"SELECT 2 AS id, '{token}' AS label"))
                writes.append(("representation", token, view.uuid, view.stream_version))
            elif roll < 0.80:  # optimistic: may lose the race, then must write nothing
                seen = store.load_view(name).stream_version
                key = f"opt.{token}"
                try:
                    view = store.alter_view(name, ViewChange.set_property(key, token), expected_version=seen)
                    writes.append(("optimistic", token, view.uuid, view.stream_version))
                    keys.append((name, key))
                except ConcurrencyError as e:
                    if e.expected is None:  # not the version check: the database stayed busy
                        busy += 1
                    else:
                        conflicts += 1
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
        except ConcurrencyError as e:  # the bounded retry gave up on a busy database
            busy += 1
            errors.append(f"ConcurrencyError (busy): {e}")
        except sqlite3.Error as e:  # must never happen: a raw sqlite3 error reached the caller
            errors.append(f"{type(e).__module__}.{type(e).__name__}: {e}\n{traceback.format_exc()}")
        except Exception as e:
            errors.append(f"{type(e).__module__}.{type(e).__name__}: {e}\n{traceback.format_exc()}")
    store.close()
    with open(result, "w") as f:
        json.dump({"writes": writes, "keys": keys, "conflicts": conflicts, "busy": busy, "reads": reads,
                   "errors": errors, "operations": operations}, f)


if __name__ == "__main__":
    db, worker, operations, seed, go, result = sys.argv[1:]
    main(db, int(worker), int(operations), int(seed), go, result)
