"""The load_view cache: a commit by another connection is visible to the very next load."""

import tempfile
from pathlib import Path

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, settings
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule

from view_changes import CHANGES, DIALECTS, SQL
from viewstore import NoSuchViewError, ViewChange, ViewStore, ViewStoreError
from viewstore.catalog import CATCH_UP_EVENTS


def _gone(name, what):
    """What load_view says of a name whose view another store dropped or renamed away: when, by whom."""
    return rf"^no such view: {name} \({what} at [-0-9]+ [:0-9]+ UTC by them; its history remains\)$"


def _create(store, name, sql="SELECT 1 AS x"):
    return store.create_view(name, columns=[("x", "int")], representations=[("spark", sql)],
                             default_namespace=name.split(".")[0])


def test_every_kind_of_foreign_commit_is_seen_by_the_next_load(tmp_path):
    with ViewStore(tmp_path / "s.db", actor="me") as mine, ViewStore(tmp_path / "s.db", actor="them") as theirs:
        _create(mine, "a.v")
        _create(mine, "a.other")
        assert mine.load_view("a.v").comment is None  # cached now

        theirs.alter_view("a.other", ViewChange.update_comment("elsewhere"))  # another view: entry still good
        assert mine.load_view("a.v").comment is None
        theirs.alter_view("a.v", ViewChange.update_comment("theirs"))
        assert mine.load_view("a.v").comment == "theirs"

        first = mine.load_view("a.v").uuid
        theirs.drop_view("a.v")
        with pytest.raises(NoSuchViewError, match=_gone("a.v", "dropped")):
            mine.load_view("a.v")
        _create(theirs, "a.v", "SELECT 2 AS x")  # same name, another stream
        again = mine.load_view("a.v")
        assert again.uuid != first and again.sql_for("spark") == "SELECT 2 AS x"

        theirs.rename_view("a.v", "a.w")
        theirs.rename_view("a.other", "a.v")  # the name now belongs to a third stream
        assert mine.load_view("a.v").comment == "elsewhere"
        assert mine.load_view("a.w").uuid == again.uuid

        # our own write after theirs starts from their state (no lost update)
        theirs.alter_view("a.w", ViewChange.set_property("k1", "theirs"))
        mine.alter_view("a.w", ViewChange.set_property("k2", "mine"))
        assert theirs.load_view("a.w").properties == {"k1": "theirs", "k2": "mine"}


def test_a_call_returning_after_a_newer_commit_does_not_cache_its_older_state(tmp_path):
    # A write returns its View after the store's lock is released; another thread's write may land
    # in between. The returning call must not put its (now older) state back in the cache: the
    # next load would be stale. A committed receiver writes again in exactly that gap.
    from viewstore import signals

    with ViewStore(tmp_path / "s.db", actor="me") as store:
        _create(store, "a.v")
        nested = []

        def write_again(sender, events):
            if not nested:
                nested.append(store.alter_view("a.v", ViewChange.update_comment("second")))

        signals.committed.connect(write_again)
        try:
            first = store.alter_view("a.v", ViewChange.update_comment("first"))
        finally:
            signals.committed.disconnect(write_again)
        assert first.comment == "first" and nested[0].comment == "second"
        assert store.load_view("a.v").comment == "second"
        assert store.load_view("a.v").stream_version == 3
        store.alter_view("a.v", ViewChange.set_property("k", "v"))  # decided from the current state
        assert store.load_view("a.v").stream_version == 4


def test_a_load_reads_one_state_while_another_store_commits_in_the_middle(tmp_path, monkeypatch):
    """load_view reads the views row, the version log and the versions (and first the name): another
    process committing between two of those reads must not make a View of two states."""
    with ViewStore(tmp_path / "s.db", actor="them") as theirs:
        _create(theirs, "a.v")
        theirs.alter_view("a.v", ViewChange.update_comment("bump"))
        with ViewStore(tmp_path / "s.db", actor="me") as mine:  # nothing cached: it reads the projection rows
            versions = mine._projections._version_rows

            def rows_after_their_commit(*args, **kwargs):
                monkeypatch.setattr(mine._projections, "_version_rows", versions)
                theirs.alter_view("a.v", ViewChange.update_representation("spark", "SELECT 2 AS x"))  # a new version
                return versions(*args, **kwargs)

            monkeypatch.setattr(mine._projections, "_version_rows", rows_after_their_commit)
            seen = mine.load_view("a.v")
            assert seen.stream_version == 2 and [v.version_id for v in seen.versions] == [1]  # before their commit
            assert seen == theirs.load_view("a.v", as_of=theirs.history("a.v")[1])
            assert mine.load_view("a.v").current_version_id == 2  # and the next load sees it

            theirs.alter_view("a.v", ViewChange.update_comment("bump again"))
        with ViewStore(tmp_path / "s.db", actor="me") as mine:
            load = mine._projections.load

            def load_after_their_rename(view_id):
                monkeypatch.setattr(mine._projections, "load", load)
                theirs.rename_view("a.v", "a.w")
                return load(view_id)

            monkeypatch.setattr(mine._projections, "load", load_after_their_rename)
            assert mine.load_view("a.v").identifier == ("a", "v")  # the name it was asked for, as it was then
            with pytest.raises(NoSuchViewError, match=_gone("a.v", r"renamed to a.w \(live\)")):
                mine.load_view("a.v")
            assert mine.load_view("a.w").comment == "bump again"


def test_a_cached_view_catches_up_with_foreign_commits_as_a_fresh_store_reads_them(tmp_path):
    """A view another store changed is brought up to date from its new events, not read again: it
    must be the very View a store with nothing cached reads, and our writes must go on from it."""
    path = tmp_path / "s.db"
    with ViewStore(path, actor="me") as mine, ViewStore(path, actor="them") as theirs:
        _create(mine, "a.v")
        mine.alter_view("a.v", ViewChange.set_property("mine", "1"))

        def check(name="a.v"):
            with ViewStore(path, actor="fresh") as fresh:
                assert mine.load_view(name) == fresh.load_view(name)

        steps = [
            lambda: theirs.alter_view("a.v", ViewChange.update_comment("theirs")),
            lambda: theirs.alter_view("a.v", ViewChange.set_property("k", "v"), ViewChange.remove_property("mine")),
            lambda: theirs.replace_view("a.v", columns=[("x", "int"), ("y", "int")],
                                        representations=[("spark", "SELECT 1 AS x, 2 AS y")], default_namespace="a"),
            lambda: theirs.alter_view("a.v", ViewChange.add_representation(("trino", "SELECT 1 AS x, 2 AS y"))),
            lambda: theirs.rollback_view("a.v", 1),
            lambda: (theirs.rename_view("a.v", "a.w"), theirs.rename_view("a.w", "a.v")),  # away and back
        ]
        for step in steps:
            mine.load_view("a.v")  # cached
            step()
            check()
            # our next write starts from the caught-up state and stores exactly what it changes
            mine.alter_view("a.v", ViewChange.set_property("turn", str(mine.load_view("a.v").stream_version)))
            check()
        mine.load_view("a.v")
        mine.replace_view("a.v", columns=[("x", "int")], representations=[("spark", "SELECT 3 AS x")],
                          default_namespace="a")  # a version and a log entry of our own after theirs
        check()

        mine.load_view("a.v")
        for i in range(CATCH_UP_EVENTS + 1):  # too far behind: read again instead
            theirs.alter_view("a.v", ViewChange.update_comment(f"many {i}"))
        check()
        assert mine.load_view("a.v").comment == f"many {CATCH_UP_EVENTS}"

        theirs.rename_view("a.v", "a.gone")  # renamed away: the name has no live view
        with pytest.raises(NoSuchViewError, match=_gone("a.v", r"renamed to a.gone \(live\)")):
            mine.load_view("a.v")
        mine.load_view("a.gone")
        theirs.drop_view("a.gone")
        with pytest.raises(NoSuchViewError, match=_gone("a.gone", "dropped")):
            mine.load_view("a.gone")
        assert mine.rebuild() == {"views": 0, "view_versions": 0, "view_version_log": 0, "view_snapshots": 0}


def test_a_view_caught_up_across_a_snapshot_writes_none_again(tmp_path):
    """Another store's commits crossed a stream version at which a snapshot is kept: the catch-up
    folds that event too, but the snapshot is theirs to store, so our next write must not."""
    from viewstore.projections import SNAPSHOT_EVERY

    path = tmp_path / "s.db"
    with ViewStore(path, actor="me") as mine, ViewStore(path, actor="them") as theirs:
        _create(mine, "a.v")
        for i in range(SNAPSHOT_EVERY - 3):
            mine.alter_view("a.v", ViewChange.update_comment(f"mine {i}"))
        mine.load_view("a.v")
        for i in range(4):
            theirs.alter_view("a.v", ViewChange.update_comment(f"theirs {i}"))
        assert mine.load_view("a.v").stream_version == SNAPSHOT_EVERY + 2
        mine.alter_view("a.v", ViewChange.update_comment("mine again"))
        assert mine.rebuild() == {"views": 0, "view_versions": 0, "view_version_log": 0, "view_snapshots": 0}


def test_a_repair_by_another_stores_rebuild_reaches_the_cache(tmp_path):
    import sqlite3

    with ViewStore(tmp_path / "s.db", actor="them") as theirs:
        with ViewStore(tmp_path / "s.db", actor="me") as mine:
            _create(mine, "a.v")
            mine.alter_view("a.v", ViewChange.set_property("owner", "alice"))
            conn = sqlite3.connect(tmp_path / "s.db")
            with conn:
                conn.execute("""UPDATE views SET properties = '{"owner":"mallory"}'""")  # damage of the right type
            conn.close()
        with ViewStore(tmp_path / "s.db", actor="me") as mine:
            assert mine.load_view("a.v").properties == {"owner": "mallory"}  # undetectable until a rebuild
            assert theirs.rebuild()["views"] == 1
            assert mine.load_view("a.v").properties == {"owner": "alice"}  # same stream version, yet seen
            assert theirs.rebuild()["views"] == 0
            assert mine.load_view("a.v").properties == {"owner": "alice"}
            conn = sqlite3.connect(tmp_path / "s.db")
            with conn:
                conn.execute("""UPDATE views SET properties = '{"owner":"eve"}'""")
            conn.close()
        with ViewStore(tmp_path / "s.db", actor="me") as mine:
            assert mine.load_view("a.v").properties == {"owner": "eve"}
            assert theirs.rebuild()["views"] == 1  # a second repair, told as the first was
            assert mine.load_view("a.v").properties == {"owner": "alice"}


def test_a_snapshot_repaired_by_another_stores_rebuild_reaches_as_of(tmp_path):
    """The snapshots a store keeps parsed for as_of are forgotten once another store's rebuild
    repairs rows, as the cached views are."""
    import json
    import sqlite3

    from viewstore.projections import SNAPSHOT_EVERY

    with ViewStore(tmp_path / "s.db", actor="me") as mine, ViewStore(tmp_path / "s.db", actor="them") as theirs:
        mine.create_view("a.v", columns=[("x", "int")], representations=[("spark", "SELECT 1 AS x")],
                         default_namespace="a")
        for i in range(SNAPSHOT_EVERY):
            mine.alter_view("a.v", ViewChange.set_property("i", str(i)))
        after_snapshot = mine.history("a.v")[SNAPSHOT_EVERY]  # stream version 101: folded from the snapshot at 100
        conn = sqlite3.connect(tmp_path / "s.db")
        with conn:
            (state,) = conn.execute("SELECT state FROM view_snapshots").fetchone()
            damaged = json.loads(state)
            damaged["properties"]["owner"] = "mallory"  # damage of the right type
            conn.execute("UPDATE view_snapshots SET state = ?", (json.dumps(damaged),))
        conn.close()
        # undetectable until a rebuild
        assert mine.load_view("a.v", as_of=after_snapshot).properties["owner"] == "mallory"
        assert theirs.rebuild()["view_snapshots"] == 1
        assert mine.load_view("a.v", as_of=after_snapshot).properties == {"i": str(SNAPSHOT_EVERY - 1)}


def test_the_cache_holds_a_bounded_number_of_views(tmp_path, monkeypatch):
    import viewstore.catalog

    monkeypatch.setattr(viewstore.catalog, "CACHED_VIEWS", 3)
    with ViewStore(tmp_path / "s.db", actor="me") as store:
        for i in range(10):
            _create(store, f"a.v{i}", f"SELECT {i} AS x")
        for _ in range(2):
            for i in range(10):
                assert store.load_view(f"a.v{i}").sql_for("spark") == f"SELECT {i} AS x"
                assert len(store._cache) <= 3
        store.alter_view("a.v0", ViewChange.update_comment("still right after being forgotten"))
        assert store.load_view("a.v0").comment == "still right after being forgotten"


def test_a_write_that_adds_a_version_reuses_the_other_version_models(tmp_path):
    with ViewStore(tmp_path / "s.db", actor="me") as store:
        first = _create(store, "a.v")
        second = store.replace_view("a.v", columns=[("x", "int")], representations=[("spark", "SELECT 2 AS x")],
                                    default_namespace="a")
        third = store.alter_view("a.v", ViewChange.update_representation("spark", "SELECT 3 AS x"))
        assert second.versions[0] is first.versions[0] and third.versions[:2] == second.versions
        assert all(a is b for a, b in zip(third.versions, second.versions))
        assert [v.version_id for v in third.versions] == [1, 2, 3]
        with ViewStore(tmp_path / "s.db", actor="other") as other:
            assert third == other.load_view("a.v")  # as a fresh read builds it


# -- two stores on one file, random operations: every load agrees with a store that caches nothing --

WHO = st.sampled_from([0, 1])
NAMES = st.sampled_from(["a.v1", "a.v2", "b.v3"])
PEEK = st.booleans()


def _load_or_none(store, name, as_of=None):
    """The view, or None where there is none by that name (then, or now)."""
    try:
        return store.load_view(name, as_of=as_of)
    except NoSuchViewError:
        return None


class TwoStores(RuleBasedStateMachine):
    """Two stores write to one file in turns and each loads at random moments, so a cached view is
    any number of foreign events behind (past the catch-up bound too); with ``peek`` the other store
    loads the views a write touched right after it. Whatever either store loads, and whatever a write
    returns, must be what a store that has cached nothing reads at that moment."""

    @initialize()
    def open(self):
        self.path = Path(tempfile.mkdtemp()) / "s.db"
        self.stores = [ViewStore(self.path, actor="first"), ViewStore(self.path, actor="second")]
        for name in ("a.v1", "b.v3"):  # most steps then find a view to change
            _create(self.stores[0], name)

    def teardown(self):
        for store in self.stores:
            store.close()

    def fresh(self, name):
        with ViewStore(self.path, actor="fresh") as fresh:
            return _load_or_none(fresh, name)

    def write(self, who, call, peek, *names):
        store = self.stores[who]
        count = store.event_count()
        try:
            returned = call(store)
        except ViewStoreError:
            assert store.event_count() == count  # a failed call writes nothing
            return
        if returned is not None:  # the View a write returns is the view as it now is
            assert returned == self.fresh(returned.identifier)
        if peek:
            for name in names:
                self.load(1 - who, name)

    @rule(who=WHO, name=NAMES, sql=SQL, reps=st.lists(st.tuples(DIALECTS, SQL), max_size=2), replace=st.booleans(),
          peek=PEEK)
    def create_or_replace(self, who, name, sql, reps, replace, peek):
        self.write(who, lambda s: (s.replace_view if replace else s.create_view)(
            name, columns=[("x", "int")], representations=[("spark", sql), *reps], default_namespace=name[0]),
            peek, name)

    @rule(who=WHO, name=NAMES, changes=st.lists(CHANGES, min_size=1, max_size=3), peek=PEEK)
    def alter(self, who, name, changes, peek):
        renamed_to = (f"{name[0]}.{n}" for n in ("v1", "v5"))  # the names CHANGES renames a view to
        self.write(who, lambda s: s.alter_view(name, *changes), peek, name, *renamed_to)

    @rule(who=WHO, name=NAMES, to=NAMES, peek=PEEK)
    def rename(self, who, name, to, peek):
        self.write(who, lambda s: s.rename_view(name, to), peek, name, to)

    @rule(who=WHO, name=NAMES, peek=PEEK)
    def drop(self, who, name, peek):
        def call(s):
            s.drop_view(name)  # returns whether a view was dropped, not a View
        self.write(who, call, peek, name)

    @rule(who=WHO, name=NAMES, version=st.integers(1, 4), peek=PEEK)
    def rollback(self, who, name, version, peek):
        self.write(who, lambda s: s.rollback_view(name, version), peek, name)

    @rule(who=WHO, name=NAMES, peek=PEEK)
    def many_comments(self, who, name, peek):
        """More events at once than a cached view catches up with."""
        def call(s):
            for i in range(CATCH_UP_EVENTS + 1):
                s.alter_view(name, ViewChange.update_comment(f"many {i}"))
        self.write(who, call, peek, name)

    @rule(who=WHO)
    def rebuild(self, who):
        assert self.stores[who].rebuild() == {"views": 0, "view_versions": 0, "view_version_log": 0,
                                              "view_snapshots": 0}

    @rule(who=WHO, name=NAMES)
    def load(self, who, name):
        assert _load_or_none(self.stores[who], name) == self.fresh(name)

    @rule(who=WHO, name=NAMES, pick=st.integers(0, 200), by_time=st.booleans())
    def load_as_of(self, who, name, pick, by_time):
        """A past state reuses the models of the store's cached View of that stream, however stale."""
        with ViewStore(self.path, actor="fresh") as fresh:
            try:
                history = fresh.history(name)
            except NoSuchViewError:
                return
            at = history[pick % len(history)]
            at = at.occurred_at if by_time else at
            assert _load_or_none(self.stores[who], name, at) == _load_or_none(fresh, name, at)


TestTwoStores = TwoStores.TestCase
TestTwoStores.settings = settings(max_examples=200, stateful_step_count=30, deadline=None,
                                  suppress_health_check=[HealthCheck.too_slow])
