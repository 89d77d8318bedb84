"""The fast paths behind load_view(as_of=...) agree with the plain ones they replace."""

import random

from viewstore import ViewChange, ViewStore
from viewstore.log import EventLog, connect, loads
from viewstore.projections import apply, state_to_view

NAMES = ["a.v1", "a.v2", "b.v1", "b.v3"]


def _random_history(store: ViewStore, rng: random.Random, steps: int) -> None:
    for i in range(steps):
        name = rng.choice(NAMES)
        exists = store.view_exists(name)
        roll = rng.random()
        if not exists:
            store.create_view(name, columns=[("x", "int")], representations=[("spark", f"SELECT {i} AS x")],
                              default_namespace=name.split(".")[0])
        elif roll < 0.4:
            store.alter_view(name, ViewChange.update_comment(f"c{i}"))
        elif roll < 0.6:
            store.replace_view(name, columns=[("x", "int")], representations=[("spark", f"SELECT {i} AS x")],
                               default_namespace=name.split(".")[0])
        elif roll < 0.8:
            target = rng.choice([n for n in NAMES if n != name])
            if not store.view_exists(target):
                store.rename_view(name, target)
        else:
            store.drop_view(name)


def _streams_that_carried(log: EventLog, identifier: str, until_ms: int | None = None) -> list[str]:
    """The plain answer, over every event: streams that carried the identifier (up to a time), newest first."""
    sql = "SELECT view_id, max(position) AS p FROM events WHERE identifier = ?"
    params: list = [identifier]
    if until_ms is not None:
        sql += " AND occurred_at <= ?"
        params.append(until_ms)
    return [r[0] for r in log.conn.execute(sql + " GROUP BY view_id ORDER BY p DESC", params)]


def test_streams_that_took_a_name_are_the_streams_that_carried_it(tmp_path):
    store = ViewStore(tmp_path / "s.db", actor="a")
    _random_history(store, random.Random(5), 400)
    log = EventLog(connect(tmp_path / "s.db"))
    times = sorted({e.occurred_at for e in store.events()})
    for name in NAMES:
        assert log.streams_that_took(name) == _streams_that_carried(log, name)
        for t in times[::7] + [times[0] - 1, times[-1] + 1]:
            assert log.streams_that_took(name, until_ms=t) == _streams_that_carried(log, name, until_ms=t)
    store.close()


def test_as_of_equals_a_plain_fold(tmp_path):
    """Snapshots (as_of folds copies of the parsed ones, which share their versions) and the early
    stop give what folding every event gives."""
    store = ViewStore(tmp_path / "s.db", actor="a")
    store.create_view("a.busy", columns=[("x", "int")], representations=[("spark", "SELECT 1 AS x")],
                      default_namespace="a")
    for i in range(350):
        if i % 40 == 0:
            store.replace_view("a.busy", columns=[("x", "int")], representations=[("spark", f"SELECT {i} AS x")],
                               default_namespace="a")
        else:
            store.alter_view("a.busy", ViewChange.update_comment(f"c{i}"))
    history = store.history("a.busy")
    rows = EventLog(connect(tmp_path / "s.db")).stream_rows(history[0].view_id)
    store.load_view("a.busy")  # the current state cached beside them changes nothing
    for event in history[::13] + history[-3:]:
        wanted = max(e.stream_version for e in history if e.occurred_at <= event.occurred_at)
        state = None
        for row in rows[:wanted]:  # every event up to the last one at that time, from the start
            state = apply(state, row, loads(row[8]))
        assert store.load_view("a.busy", as_of=event.occurred_at) == state_to_view(state)
    store.close()
