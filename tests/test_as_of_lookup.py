"""The fast paths behind load_view(as_of=...) agree with the plain ones they replace."""

import random
from contextlib import closing

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
    with ViewStore(tmp_path / "s.db", actor="a") as store, closing(connect(tmp_path / "s.db")) as conn:
        _random_history(store, random.Random(5), 400)
        log = EventLog(conn)
        times = sorted({e.occurred_at for e in store.events()})
        for name in NAMES:
            assert log.streams_that_took(name) == _streams_that_carried(log, name)
            for t in times[::7] + [times[0] - 1, times[-1] + 1]:
                assert log.streams_that_took(name, until_ms=t) == _streams_that_carried(log, name, until_ms=t)


def _let_go_plainly(log: EventLog, identifier: str) -> tuple | None:
    """The plain answer, over every event of the stream history() reads for the identifier (the one
    dropped last under it, else the one that carried it last): the event after its last one under
    the name (or that one, a drop), and its last event."""
    carried = _streams_that_carried(log, identifier)
    if not carried:
        return None
    ends = [log.stream_rows(view_id)[-1] for view_id in carried]
    if ends[0][5] == identifier and ends[0][4] != "view.dropped":
        return None  # the stream that carried it last holds it still
    dropped = [row for row in ends if row[4] == "view.dropped" and row[5] == identifier]
    stream = max(dropped)[2] if dropped else carried[0]
    rows = log.stream_rows(stream)  # position, commit, view_id, version, type, identifier, actor, time, ...
    under = max(i for i, row in enumerate(rows) if row[5] == identifier)
    gone = rows[under] if rows[under][4] == "view.dropped" else rows[under + 1] if under + 1 < len(rows) else None
    if gone is None:
        return None
    return (gone[0], gone[4], gone[5], gone[6], gone[7]), (rows[-1][4], rows[-1][5])


def test_what_a_name_s_last_holder_let_go_by_is_the_plain_answer(tmp_path):
    with ViewStore(tmp_path / "s.db", actor="a") as store, closing(connect(tmp_path / "s.db")) as conn:
        log = EventLog(conn)
        rng = random.Random(11)
        kinds = set()
        for _ in range(30):  # every name, after every few steps of a random history
            _random_history(store, rng, 15)
            for name in NAMES + ["a.never"]:
                found = log.let_go(name)
                assert found == _let_go_plainly(log, name), name
                if found:  # the message tells of the view whose history history() gives
                    assert found[0][0] in {e.position for e in store.history(name)}, name
                # a live view let go of nothing
                assert (found is None) == (store.view_exists(name) or name == "a.never")
                kinds |= {found[0][1], found[1][0]} if found else set()
        assert {"view.renamed", "view.dropped"} <= kinds  # both ends, and views that went on after them, were met
        assert len(kinds) > 2


def test_as_of_equals_a_plain_fold(tmp_path):
    """Snapshots (as_of folds copies of the parsed ones, which share their versions) and the early
    stop give what folding every event gives."""
    with ViewStore(tmp_path / "s.db", actor="a") as store:
        store.create_view("a.busy", columns=[("x", "int")], representations=[("spark", "SELECT 1 AS x")],
                          default_namespace="a")
        for i in range(350):
            if i % 40 == 0:
                store.replace_view("a.busy", columns=[("x", "int")], representations=[("spark", f"SELECT {i} AS x")],
                                   default_namespace="a")
            else:
                store.alter_view("a.busy", ViewChange.update_comment(f"c{i}"))
        history = store.history("a.busy")
        with closing(connect(tmp_path / "s.db")) as conn:
            rows = EventLog(conn).stream_rows(history[0].view_id)
        store.load_view("a.busy")  # the current state cached beside them changes nothing
        for event in history[::13] + history[-3:]:
            wanted = max(e.stream_version for e in history if e.occurred_at <= event.occurred_at)
            state = None
            for row in rows[:wanted]:  # every event up to the last one at that time, from the start
                state = apply(state, row, loads(row[8]))
            assert store.load_view("a.busy", as_of=event.occurred_at) == state_to_view(state)


# -- as_of through snapshots against a fold from scratch, over random histories --------------------

import sqlite3  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

import hypothesis.strategies as st  # noqa: E402
import pytest  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule  # noqa: E402

from view_changes import CHANGES  # noqa: E402
from viewstore import CorruptLogError, NoSuchViewError, ViewStoreError, projections  # noqa: E402
from viewstore.model import Column, SQLRepresentation, VersionLogEntry, ViewVersion  # noqa: E402

SNAPSHOT_EVERY_HERE = 3  # a snapshot every third event: every history crosses many
VIEW_NAMES = st.sampled_from(["a.v1", "a.v2", "b.v3"])
#: version ids an imported view may carry: gaps, negative ids, the highest 32-bit id
IMPORTED_IDS = st.lists(st.sampled_from([-7, -6, 0, 1, 2, 5, 6, 9, 2**31 - 2, 2**31 - 1]), min_size=1, max_size=5,
                        unique=True)


def _fold_from_scratch(rows):
    """The states of a stream after each of its events, folding every event from the first."""
    states, state = [], None
    for row in rows:
        state = apply(state, row, loads(row[8]))
        states.append(state.copy())
    return states


class AsOfMachine(RuleBasedStateMachine):
    """Random histories (rollbacks, imports with odd version ids, renames, drops and re-creations,
    transactions committed or rolled back, damaged and repaired projection rows): as_of each event
    and as_of each time, from the snapshots, always answers what folding the stream from its first
    event answers (to the end of that event's commit, or to its last event at that time), in this
    store (its parsed snapshots kept across the steps) and in a fresh one."""

    @initialize()
    def open(self):
        self.patch = pytest.MonkeyPatch()
        self.patch.setattr(projections, "SNAPSHOT_EVERY", SNAPSHOT_EVERY_HERE)
        self.dir = Path(tempfile.mkdtemp())
        self.store = ViewStore(self.dir / "s.db", actor="fuzz")
        self.damaged = False

    def teardown(self):
        self.store.close()
        self.patch.undo()

    def attempt(self, call):
        try:
            call()
        except ViewStoreError:
            pass

    @rule(name=VIEW_NAMES, sql=st.integers(0, 3), replace=st.booleans())
    def create_or_replace(self, name, sql, replace):
        call = self.store.replace_view if replace else self.store.create_view
        self.attempt(lambda: call(name, columns=[("x", "int")], representations=[("spark", f"SELECT {sql} AS x")],
                                  default_namespace=name.split(".")[:-1]))

    @rule(name=VIEW_NAMES, changes=st.lists(CHANGES, min_size=1, max_size=3))
    def alter(self, name, changes):
        self.attempt(lambda: self.store.alter_view(name, *changes))

    @rule(name=VIEW_NAMES, new_name=VIEW_NAMES)
    def rename(self, name, new_name):
        self.attempt(lambda: self.store.rename_view(name, new_name))

    @rule(name=VIEW_NAMES)
    def drop(self, name):
        self.attempt(lambda: self.store.drop_view(name))

    @rule(name=VIEW_NAMES, version=st.sampled_from([-7, 0, 1, 2, 3, 2**31 - 1]))
    def rollback(self, name, version):
        self.attempt(lambda: self.store.rollback_view(name, version))

    @rule(name=VIEW_NAMES, ids=IMPORTED_IDS, data=st.data())
    def import_(self, name, ids, data):
        versions = [ViewVersion(version_id=i, timestamp_ms=1000 + 10 * k, schema_id=k % 2,
                                columns=(Column("x", "int"),),
                                representations=(SQLRepresentation("spark", f"SELECT {i}"),),
                                default_namespace=("n",)) for k, i in enumerate(ids)]
        logged = data.draw(st.lists(st.sampled_from(ids), min_size=1, max_size=6))
        log = [VersionLogEntry(timestamp_ms=1000 + 5 * k, version_id=i) for k, i in enumerate(logged)]
        self.attempt(lambda: self.store.import_view(name, source="test", versions=versions, version_log=log,
                                                    current_version_id=logged[-1]))

    @rule(steps=st.lists(st.tuples(st.sampled_from(["alter", "replace", "rename", "drop", "create", "as_of"]),
                                   VIEW_NAMES, VIEW_NAMES, st.lists(CHANGES, min_size=1, max_size=2)),
                         min_size=1, max_size=6),
          commit=st.booleans())
    def transaction(self, steps, commit):
        """Writes in a transaction, as_of read inside it (parsing snapshots it wrote), then committed
        or rolled back: what the rollback took must not be answered afterwards."""
        store = self.store
        calls = {
            "alter": lambda name, other, changes: store.alter_view(name, *changes),
            "replace": lambda name, other, changes: store.replace_view(
                name, columns=[("x", "int")], representations=[("spark", f"SELECT '{other}' AS x")],
                default_namespace=name.split(".")[:-1]),
            "rename": lambda name, other, changes: store.rename_view(name, other),
            "drop": lambda name, other, changes: store.drop_view(name),
            "create": lambda name, other, changes: store.create_view(
                name, columns=[("x", "int")], representations=[("spark", "SELECT 1 AS x")],
                default_namespace=name.split(".")[:-1]),
            "as_of": lambda name, other, changes: self.check_as_of(store),
        }
        try:
            with store.transaction():
                for kind, name, other, changes in steps:
                    self.attempt(lambda: calls[kind](name, other, changes))
                if not commit:
                    raise LookupError("rolled back")
        except LookupError:
            pass

    @rule(table=st.sampled_from(["view_versions", "view_version_log", "view_snapshots"]), pick=st.integers(0, 50))
    def damage_and_repair(self, table, pick):
        """A projection row deleted behind the store's back: as_of may refuse (CorruptLogError), never
        answer otherwise; rebuild() repairs. (A write made from a view loaded off damaged rows may carry
        the damage into the snapshot it writes, as into its other rows: only rebuild() reads the log.)"""
        with sqlite3.connect(self.store.path) as raw:
            rows = raw.execute(f"SELECT rowid FROM {table} ORDER BY rowid").fetchall()
            if rows:
                raw.execute(f"DELETE FROM {table} WHERE rowid = ?", rows[pick % len(rows)])
        raw.close()
        self.damaged = True
        self.as_of_answers_what_a_fold_from_scratch_answers()
        self.store.rebuild()
        self.damaged = False

    def check_as_of(self, store):
        log = EventLog(store._conn)
        view_ids = [r[0] for r in store._conn.execute("SELECT DISTINCT view_id FROM events")]
        for view_id in view_ids:
            rows, events = log.stream_rows(view_id), log.stream(view_id)
            folded = _fold_from_scratch(rows)
            # as_of an event: the state its whole commit left (the stream's last event of that commit)
            commit_ends = list(range(len(rows)))
            for i in reversed(range(len(rows) - 1)):
                if rows[i][1] == rows[i + 1][1]:
                    commit_ends[i] = commit_ends[i + 1]
            for row, event, wanted in zip(rows, events, (folded[j] for j in commit_ends)):
                try:
                    found = store.load_view(row[5], as_of=event)
                except NoSuchViewError:
                    assert not wanted.live
                    continue
                except CorruptLogError:
                    assert self.damaged
                    continue
                assert wanted.live and found == state_to_view(wanted)
                # as_of its time: the stream up to its last event at that time
                at_time = [s for r, s in zip(rows, folded) if r[7] <= row[7]][-1]
                try:
                    with store._reading():
                        state = store._fold_until(view_id, row[7])
                except CorruptLogError:
                    assert self.damaged
                    continue
                assert state.stream_version == at_time.stream_version
                if state.live:
                    assert state_to_view(state) == state_to_view(at_time)

    @invariant()
    def as_of_answers_what_a_fold_from_scratch_answers(self):
        self.check_as_of(self.store)  # with the snapshots it parsed before
        with ViewStore(self.store.path, actor="fresh") as fresh:
            self.check_as_of(fresh)


TestAsOfMachine = AsOfMachine.TestCase
TestAsOfMachine.settings = settings(max_examples=25, stateful_step_count=12, deadline=None,
                                    suppress_health_check=[HealthCheck.too_slow])
