"""ViewStore.transaction(): several writes committed together, or none of them."""

import sqlite3
import threading
import time

import pytest

from viewstore import (
    ConcurrencyError,
    CorruptLogError,
    NoSuchViewError,
    ViewAlreadyExistsError,
    ViewChange,
    ViewStore,
    ViewStoreError,
    signals,
)

COLS = [("x", "int")]


def make(store, ident):
    return store.create_view(ident, columns=COLS, representations=[("spark", "SELECT 1 AS x")],
                             default_namespace="a")


def snapshot(store):
    """Everything the file holds: the log and every projection row."""
    return store.query("SELECT * FROM events ORDER BY position"), store.projection_dump()


@pytest.fixture
def recorded():
    """What the signals were sent, in order: (signal, event types[, error type])."""
    seen = []

    def committed(sender, events):
        seen.append(("committed", [e.type for e in events]))

    def failed(sender, events, error):
        seen.append(("failed", [e.type for e in events], type(error).__name__))

    def before(sender, events):
        seen.append(("before", [e.type for e in events]))

    signals.committed.connect(committed)
    signals.commit_failed.connect(failed)
    signals.before_commit.connect(before)
    yield seen
    signals.committed.disconnect(committed)
    signals.commit_failed.disconnect(failed)
    signals.before_commit.disconnect(before)


def test_the_writes_commit_together_and_others_see_them_only_then(store, recorded):
    make(store, "a.v")
    make(store, "a.w")
    with ViewStore(store.path, actor="bob") as other:
        recorded.clear()
        assert not store.in_transaction
        with store.transaction() as same:
            assert same is store and store.in_transaction
            seen_elsewhere = []
            thread = threading.Thread(target=lambda: seen_elsewhere.append(store.in_transaction))
            thread.start()
            thread.join()
            assert seen_elsewhere == [False]  # it is this thread's transaction
            store.rename_view("a.v", "a.tmp")
            store.rename_view("a.w", "a.v")
            moved = store.rename_view("a.tmp", "a.w")
            # the writes see each other; another connection sees none of them yet
            assert store.list_views() == [("a", "v"), ("a", "w")] and moved.identifier == ("a", "w")
            assert other.event_count() == 2 and other.load_view("a.v").stream_version == 1
            assert [s for s, *_ in recorded] == ["before", "before", "before"]  # committed waits for the commit
        assert [s for s, *_ in recorded] == ["before", "before", "before", "committed", "committed", "committed"]
        assert not store.in_transaction
        assert other.event_count() == 5
        swapped = other.load_view("a.v")
        assert (swapped.stream_version == 2
                and [e.type for e in other.history("a.v")] == ["view.created", "view.renamed"])
        # each write keeps its own commit id, and the projections are what a replay makes
        assert len({e.commit_id for e in other.events(types="view.renamed")}) == 3
        live = store.projection_dump()
        assert store.rebuild() == {"views": 0, "view_versions": 0, "view_version_log": 0, "view_snapshots": 0}
        assert store.projection_dump() == live


def test_an_exception_in_the_block_writes_nothing(store, recorded):
    make(store, "a.v")
    before = snapshot(store)
    recorded.clear()
    with pytest.raises(RuntimeError, match="changed my mind"):
        with store.transaction():
            make(store, "a.new")
            store.alter_view("a.v", ViewChange.update_comment("new"), ViewChange.set_property("k", "1"))
            store.drop_view("a.v")
            raise RuntimeError("changed my mind")  # the caller's own exception reaches it unchanged
    assert snapshot(store) == before
    # the store's cache holds nothing of what was rolled back
    assert store.load_view("a.v").properties == {} and not store.view_exists("a.new")
    assert recorded[-3:] == [("failed", ["view.created"], "RuntimeError"),
                             ("failed", ["view.comment_updated", "view.properties_set"], "RuntimeError"),
                             ("failed", ["view.dropped"], "RuntimeError")]
    assert not any(s == "committed" for s, *_ in recorded)
    # and the store goes on as before
    assert store.alter_view("a.v", ViewChange.update_comment("later")).stream_version == 2


def test_committed_is_sent_for_each_write_of_a_block_in_the_order_made(store, recorded):
    make(store, "a.v")
    recorded.clear()
    with store.transaction():
        make(store, "a.w")
        store.alter_view("a.v", ViewChange.update_comment("c"), ViewChange.set_property("k", "1"))
        store.drop_view("a.w")
    writes = [["view.created"], ["view.comment_updated", "view.properties_set"], ["view.dropped"]]
    assert recorded == [("before", w) for w in writes] + [("committed", w) for w in writes]


def test_committed_is_sent_for_a_block_of_a_store_that_has_repaired_its_projections(store, recorded):
    make(store, "a.v")
    with sqlite3.connect(store.path) as raw:
        for table in store.projection_dump():
            raw.execute(f"DELETE FROM {table}")
    raw.close()
    assert any(store.rebuild().values())  # a repair: the store counts it
    recorded.clear()
    with store.transaction():
        store.alter_view("a.v", ViewChange.update_comment("c"))
    assert recorded == [("before", ["view.comment_updated"]), ("committed", ["view.comment_updated"])]


def test_a_blocks_committed_events_carry_their_positions_as_the_log_holds_them(store):
    make(store, "a.v")
    sent = []

    def after(sender, events):
        sent.append(events)

    signals.committed.connect(after)
    try:
        with store.transaction():
            store.alter_view("a.v", ViewChange.update_comment("c"), ViewChange.set_property("k", "1"))
            store.alter_view("a.v", ViewChange.update_comment("d"))
    finally:
        signals.committed.disconnect(after)
    logged = store.events()[1:]
    assert [[e.position for e in events] for events in sent] == [[2, 3], [4]]
    assert sent == [logged[:2], logged[2:]]


def test_a_blocks_events_carry_the_time_it_began(store):
    """Every event of a block carries one time: when the block took the write lock (after the time
    read before it, no later than its first write's return), not when each write was made."""
    make(store, "a.v")
    time.sleep(0.005)  # the create's millisecond is past: no event of the view is later than the block's
    began = time.time_ns() // 1_000_000
    with store.transaction():
        store.alter_view("a.v", ViewChange.update_comment("first"))
        first_returned = time.time_ns() // 1_000_000
        time.sleep(0.005)
        store.alter_view("a.v", ViewChange.update_comment("second"))
    times = {e.occurred_at for e in store.history("a.v")[1:]}
    assert len(times) == 1 and began <= times.pop() <= first_returned


def test_as_of_inside_a_rolled_back_transaction_leaves_nothing_behind(store):
    from viewstore.projections import SNAPSHOT_EVERY

    make(store, "a.v")
    with pytest.raises(KeyError):
        with store.transaction():
            store.alter_view("a.v", ViewChange.set_property("only", "in the block"))
            for i in range(SNAPSHOT_EVERY + 4):
                store.alter_view("a.v", ViewChange.set_property("k", f"rolled back {i}"))
            last = store.history("a.v")[-1]
            assert store.load_view("a.v", as_of=last).properties["k"] == f"rolled back {SNAPSHOT_EVERY + 3}"
            # a read before the last event starts from the snapshot the block wrote, parsed and kept:
            # the rollback must forget it, since the same stream version comes back with other contents
            assert store.load_view("a.v", as_of=store.history("a.v")[-2]).properties["only"] == "in the block"
            raise KeyError("no")
    for i in range(SNAPSHOT_EVERY + 5):  # the same stream versions again, other contents
        store.alter_view("a.v", ViewChange.set_property("k", f"kept {i}"))
    for event in store.history("a.v")[-7:]:
        with ViewStore(store.path) as fresh:
            expected = fresh.load_view("a.v", as_of=event)
        assert store.load_view("a.v", as_of=event) == expected
        assert expected.properties["k"].startswith("kept") and "only" not in expected.properties


def test_as_of_a_time_sees_a_block_whole_or_not_at_all(store):
    """Other readers see the block's writes together; so does as_of at any time. Each write used to
    be dated when it was made, so after a slow block as_of a time inside it showed half of it, under
    a name no reader ever saw (the swap's temporary name)."""
    store.create_view("a.daily", columns=COLS, representations=[("spark", "SELECT 1 AS x")], default_namespace="a")
    store.create_view("a.daily_v2", columns=COLS, representations=[("spark", "SELECT 2 AS x")], default_namespace="a")
    time.sleep(0.005)  # the block's moment comes after the creates'
    with store.transaction():
        for old, new in (("a.daily", "a.tmp"), ("a.daily_v2", "a.daily"), ("a.tmp", "a.daily_v2")):
            store.rename_view(old, new)
            time.sleep(0.005)
    renames = store.events(types="view.renamed")
    assert len({e.occurred_at for e in renames}) == 1  # one moment, as one commit is
    before, after = renames[0].occurred_at - 1, renames[0].occurred_at
    for when in (before, after):
        with pytest.raises(NoSuchViewError):
            store.load_view("a.tmp", as_of=when)
    assert store.load_view("a.daily", as_of=before).representations[0].sql == "SELECT 1 AS x"
    assert store.load_view("a.daily", as_of=after).representations[0].sql == "SELECT 2 AS x"
    assert len({e.commit_id for e in renames}) == 3  # each write keeps its own commit


def _every_read(store, names, times):
    """What every read of the store answers for these names: loads (now, at each time, at each of
    their events), histories, listings, the log and the projection rows."""
    seen = {"list": store.list_views(), "namespaces": store.list_namespaces(), "events": store.events(),
            "count": store.event_count(), "rows": store.projection_dump()}
    for name in names:
        try:
            named = store.events(view=name)
        except NoSuchViewError:  # no view ever had the name
            named = []
        seen[("events", name)] = named or None
        for key, read in [(("load", name), lambda: store.load_view(name)),
                          (("history", name), lambda: store.history(name)),
                          *[((t, name), lambda t=t: store.load_view(name, as_of=t)) for t in times],
                          *[((e.position, name), lambda e=e: store.load_view(name, as_of=e)) for e in named]]:
            try:
                seen[key] = read()
            except ViewStoreError as e:
                seen[key] = type(e).__name__
    return seen


def test_every_write_in_a_block_commits_or_rolls_back_as_a_replay_and_another_store_see_it(store):
    """Each write API in one block, with reads inside: rolled back, every read (cached or not, as_of
    a time or an event) answers as before it, as it does in another store on the file; committed,
    as in another store, with projections a replay leaves as they are."""
    import json

    from conftest import CONFORMANCE
    from viewstore.projections import SNAPSHOT_EVERY

    iceberg = CONFORMANCE / "iceberg-view" / "view-spec-appendix-a-00002.metadata.json"
    hms = json.loads((CONFORMANCE / "engine-views" / "spark-hms-view-3.5.reconstructed.json")
                     .read_text(encoding="utf-8"))["hms_table"]
    for name in ("a.v", "a.w", "a.r", "a.d", "a.t"):
        make(store, name)
    store.replace_view("a.r", columns=COLS, representations=[("spark", "SELECT 2 AS x")], default_namespace="a")
    time.sleep(0.005)
    names = ["a.v", "a.w", "a.r", "a.d", "a.t", "a.new", "a.tmp", "a.t2", "a.imported", "a.hms"]
    times = [store.events()[-1].occurred_at, 4102444800000]  # the last commit before, and far ahead

    def block():
        for i in range(SNAPSHOT_EVERY + 5):
            store.alter_view("a.v", ViewChange.set_property("k", f"in the block {i}"))
        store.load_view("a.v", as_of=store.history("a.v")[-1])  # a snapshot read inside
        make(store, "a.new")
        store.drop_view("a.new")
        store.create_view("a.new", columns=COLS, representations=[("spark", "SELECT 5 AS x")], default_namespace="a")
        for old, new in (("a.w", "a.tmp"), ("a.t", "a.w"), ("a.tmp", "a.t")):
            store.rename_view(old, new)
        store.alter_view("a.t", ViewChange.rename("a.t2"), ViewChange.update_comment("moved"),
                         ViewChange.add_representation(("trino", "SELECT 1 AS x")))
        store.rollback_view("a.r", 1)
        store.drop_view("a.d")
        store.import_iceberg(iceberg, "a.imported")
        store.import_hms(hms, "a.hms")
        store.rebuild()
        _every_read(store, names, times)

    for name in names:  # the cache holds what can be held
        if store.view_exists(name):
            store.load_view(name)
    before = _every_read(store, names, times)
    with pytest.raises(KeyError):
        with store.transaction():
            block()
            raise KeyError("no")
    assert _every_read(store, names, times) == before
    with ViewStore(store.path) as other:
        assert _every_read(other, names, times) == before
    with store.transaction():
        block()
        inside = _every_read(store, names, times)
    assert _every_read(store, names, times) == inside
    with ViewStore(store.path) as other:
        assert _every_read(other, names, times) == inside
        assert other.rebuild() == {"views": 0, "view_versions": 0, "view_version_log": 0, "view_snapshots": 0}


def test_a_vetoed_write_of_each_kind_leaves_the_block_as_it_was(store):
    """Every write API vetoed inside a block (its events decided, then refused): the block's log and
    projections are as before that write, and the same write then goes through."""
    import json

    from conftest import CONFORMANCE

    hms = json.loads((CONFORMANCE / "engine-views" / "spark-hms-view-3.5.reconstructed.json")
                     .read_text(encoding="utf-8"))["hms_table"]
    iceberg = CONFORMANCE / "iceberg-view" / "view-spec-appendix-a-00002.metadata.json"
    for name in ("a.v", "a.w", "a.r", "a.d"):
        make(store, name)
    store.replace_view("a.r", columns=COLS, representations=[("spark", "SELECT 2 AS x")], default_namespace="a")
    writes = {
        "create": lambda: make(store, "a.new"),
        "replace": lambda: store.replace_view("a.v", columns=COLS, representations=[("spark", "SELECT 3 AS x")],
                                              default_namespace="a"),
        "alter": lambda: store.alter_view("a.v", ViewChange.update_comment("c"), ViewChange.set_property("k", "v"),
                                          ViewChange.add_representation(("trino", "SELECT 1 AS x"))),
        "remove_representation": lambda: store.alter_view("a.v", ViewChange.remove_representation("trino")),
        "rollback": lambda: store.rollback_view("a.r", 1),
        "rename": lambda: store.rename_view("a.w", "a.w2"),
        "drop": lambda: store.drop_view("a.d"),
        "import_iceberg": lambda: store.import_iceberg(iceberg, "a.imported"),
        "import_hms": lambda: store.import_hms(hms, "a.hms"),
    }
    vetoing = []

    def veto(sender, events):
        if vetoing:
            raise PermissionError("not now")

    signals.before_commit.connect(veto)
    try:
        with store.transaction():
            for kind, write in writes.items():
                before = store.projection_dump(), store.events()
                vetoing.append(kind)
                with pytest.raises(ViewStoreError, match="not now"):
                    write()
                vetoing.clear()
                assert (store.projection_dump(), store.events()) == before, kind
                write()
    finally:
        signals.before_commit.disconnect(veto)
    assert store.list_views() == [("a", "hms"), ("a", "imported"), ("a", "new"), ("a", "r"), ("a", "v"), ("a", "w2")]
    assert store.rebuild() == {"views": 0, "view_versions": 0, "view_version_log": 0, "view_snapshots": 0}


def test_expected_versions_count_the_blocks_own_writes(store):
    make(store, "a.v")
    with ViewStore(store.path, actor="bob") as other:
        other.load_view("a.v")  # cached at stream version 1
        with store.transaction():
            store.alter_view("a.v", ViewChange.update_comment("one"), expected_version=1)
            with pytest.raises(ConcurrencyError) as stale:
                store.alter_view("a.v", ViewChange.update_comment("again"), expected_version=1)
            assert stale.value.actual == 2
            store.alter_view("a.v", ViewChange.update_comment("two"), expected_version=2)
            assert store.drop_view("a.v", expected_version=3)
            make(store, "a.v")  # a new stream under the name
        with pytest.raises(ConcurrencyError, match="^view a.v is at stream version 1, not the expected 3$"):
            other.alter_view("a.v", ViewChange.update_comment("bob"), expected_version=3)
        assert other.alter_view("a.v", ViewChange.update_comment("bob"), expected_version=1).comment == "bob"
    assert [e.type for e in store.events(view="a.v")] == [
        "view.created", "view.comment_updated", "view.comment_updated", "view.dropped", "view.created",
        "view.comment_updated"]


def _damaged_under_the_cache(store, ident):
    """A view whose views row vanishes under its cached state: its next write fails after its event
    was written (the cached state updates that row in place)."""
    make(store, ident)
    store.load_view(ident)
    raw = sqlite3.connect(store.path)
    raw.execute("DELETE FROM views WHERE name = ?", (ident.split(".")[-1],))
    raw.commit()
    raw.close()


def test_a_write_that_fails_inside_writes_nothing_and_the_rest_commits(store, recorded):
    make(store, "a.v")
    _damaged_under_the_cache(store, "a.damaged")
    with store.transaction():
        make(store, "a.first")
        # refused after its event was written: the write's rows go, the transaction's stay
        with pytest.raises(CorruptLogError, match="vanished"):
            store.alter_view("a.damaged", ViewChange.update_comment("lost"))
        with pytest.raises(ViewAlreadyExistsError, match="^view already exists: a.v$"):  # refused while deciding
            make(store, "a.v")
        with pytest.raises(ConcurrencyError, match="^view a.v is at stream version 1, not the expected 7$"):
            store.alter_view("a.v", ViewChange.update_comment("stale"), expected_version=7)
        store.alter_view("a.v", ViewChange.update_comment("kept"))
    types = [(e.identifier, e.type) for e in store.events()]
    assert types[2:] == [(("a", "first"), "view.created"), (("a", "v"), "view.comment_updated")]
    assert ("failed", ["view.comment_updated"], "DamagedProjectionsError") in recorded
    assert [s for s, *_ in recorded].count("committed") == 2 + 2
    assert store.load_view("a.v").comment == "kept"


def test_writes_after_the_transaction_vanished_unseen_are_refused(store):
    """SQLite may end the transaction on an error no write saw (a read inside the block failing on
    an I/O error): the next write must not run on its own, as a SAVEPOINT outside a transaction would."""
    make(store, "a.v")
    before = snapshot(store)
    with pytest.raises(ViewStoreError, match="nothing of this block was written"):
        with store.transaction():
            make(store, "a.one")
            store._conn.execute("ROLLBACK")  # what SQLite does itself after such an error
            with pytest.raises(ViewStoreError, match="ended without a commit"):
                make(store, "a.two")
            with pytest.raises(ViewStoreError, match="no write can be made in this block"):
                make(store, "a.three")
    assert snapshot(store) == before and store.list_views() == [("a", "v")]


def test_a_vetoed_write_inside_writes_nothing(store):
    make(store, "a.v")

    def veto(sender, events):
        if any(e.type == "view.dropped" for e in events):
            raise PermissionError("views are not dropped here")

    signals.before_commit.connect(veto)
    try:
        with store.transaction():
            with pytest.raises(ViewStoreError, match="refused the change"):
                store.drop_view("a.v")
            store.alter_view("a.v", ViewChange.update_comment("still here"))
    finally:
        signals.before_commit.disconnect(veto)
    assert [e.type for e in store.history("a.v")] == ["view.created", "view.comment_updated"]


def test_transactions_do_not_nest_nor_start_or_write_from_a_receiver(store):
    make(store, "a.v")
    before = snapshot(store)
    with pytest.raises(ViewStoreError, match="do not nest"):
        with store.transaction():
            make(store, "a.w")
            with store.transaction():
                pass  # pragma: no cover - refused on entry
    assert snapshot(store) == before

    refused = []

    def writes(sender, events):
        for attempt in (lambda: store.transaction().__enter__(), lambda: make(store, "a.sneaky")):
            try:
                attempt()
            except ViewStoreError as e:
                refused.append(str(e))

    signals.before_commit.connect(writes)
    try:
        make(store, "a.outside")  # a receiver of a plain write
        with store.transaction():
            make(store, "a.inside")  # and of a write inside a transaction
    finally:
        signals.before_commit.disconnect(writes)
    assert len(refused) == 4 and not store.view_exists("a.sneaky")
    # each says why: a transaction from inside a plain write, one inside a block, a write inside a block's write
    assert refused[0] == "a transaction cannot start inside another call of this store (a signal receiver?)"
    assert "transactions do not nest" in refused[2] and "already writing in this thread" in refused[3]
    assert store.view_exists("a.outside") and store.view_exists("a.inside")


def test_export_is_refused_inside_and_works_after(store, tmp_path):
    make(store, "a.v")
    with store.transaction():
        store.alter_view("a.v", ViewChange.update_comment("new"))
        with pytest.raises(ViewStoreError, match="export after the transaction"):
            store.export_iceberg("a.v", tmp_path / "out")
        assert not (tmp_path / "out").exists()
        assert store.export_hms("a.v", "spark")["parameters"]["comment"] == "new"  # a record, not a write
    assert store.export_iceberg("a.v", tmp_path / "out").exists()


def test_other_threads_wait_for_the_transaction(store):
    make(store, "a.v")
    seen = []

    def reader():
        seen.append(store.load_view("a.v").comment)

    with store.transaction():
        store.alter_view("a.v", ViewChange.update_comment("first"))
        thread = threading.Thread(target=reader)
        thread.start()
        time.sleep(0.2)
        assert seen == []  # it waits for the store's lock: it never sees a state that may roll back
        store.alter_view("a.v", ViewChange.update_comment("second"))
    thread.join(5)
    assert seen == ["second"]


def test_a_thread_that_carries_a_copy_of_the_blocks_context_is_not_in_it(store):
    """A thread run in a copy of the block's context (``asyncio.to_thread``, ``contextvars.copy_context``)
    carries its marker, but the block is the thread's that began it."""
    import contextvars

    make(store, "a.v")
    seen = []
    with store.transaction():
        context = contextvars.copy_context()
        thread = threading.Thread(target=context.run, args=(lambda: seen.append(store.in_transaction),))
        thread.start()
        thread.join(5)
        assert store.in_transaction
    assert seen == [False]


def test_a_block_of_another_store_inside_a_block_leaves_the_outer_one_usable(store, tmp_path):
    """Each block marks its context, and gives the mark back when it ends: the outer block's store
    goes on writing after the inner block of another store ended."""
    make(store, "a.v")
    with ViewStore(tmp_path / "other.db", actor="bob") as other:
        with store.transaction():
            with other.transaction():
                make(other, "a.w")
                store.alter_view("a.v", ViewChange.set_property("copied", "to the other store"))
                assert other.in_transaction and store.in_transaction
            assert not other.in_transaction and store.in_transaction
            store.alter_view("a.v", ViewChange.update_comment("after the other block"))
        assert other.list_views() == [("a", "w")]
        # blocks entered by hand may end in another order: each gives back its own mark only
        outer, inner = store.transaction(), other.transaction()
        outer.__enter__()
        inner.__enter__()
        outer.__exit__(None, None, None)
        other.alter_view("a.w", ViewChange.update_comment("after the outer block ended"))
        assert other.in_transaction and not store.in_transaction
        inner.__exit__(None, None, None)
        assert other.load_view("a.w").comment == "after the outer block ended"
    moved = store.load_view("a.v")
    assert moved.comment == "after the other block" and moved.properties["copied"] == "to the other store"
    assert not store.in_transaction
    from viewstore.catalog import _BLOCK

    assert _BLOCK.get() == frozenset()  # no mark outlives its block (each block would copy them all)


def test_a_block_ends_only_in_the_thread_that_began_it(store, recorded):
    """Ended from another thread, the block committed there, then failed to let go of the store's
    lock (a RuntimeError), which the first thread kept for ever: every other thread of the store hung.
    Now the other thread is refused and the block stays open for the thread that began it to end."""
    make(store, "a.v")
    recorded.clear()
    block = store.transaction()
    block.__enter__()
    make(store, "a.w")
    with pytest.raises(ViewStoreError, match="entered already"):
        block.__enter__()  # a context manager is entered once
    refused = []

    def end_it_here():
        try:
            block.__exit__(None, None, None)
        except ViewStoreError as e:
            refused.append(str(e))

    thread = threading.Thread(target=end_it_here)
    thread.start()
    thread.join(5)
    assert len(refused) == 1 and "thread that began it" in refused[0]
    with ViewStore(store.path) as other:
        assert store.in_transaction and other.list_views() == [("a", "v")]  # still open, uncommitted
    make(store, "a.x")
    block.__exit__(None, None, None)
    assert [s for s, *_ in recorded] == ["before", "before", "committed", "committed"]
    seen = []
    reader = threading.Thread(target=lambda: seen.append(store.list_views()))
    reader.start()
    reader.join(5)
    assert seen == [[("a", "v"), ("a", "w"), ("a", "x")]]  # the store's lock was let go


def test_another_task_of_the_thread_neither_joins_nor_reads_an_open_block(store):
    """asyncio tasks share their thread, so they do not wait for a block another task holds open
    across an await: a write of theirs joined it (and was rolled back with it after returning as
    done), and a read saw what it had not committed. Both are refused now; the block's own task
    goes on."""
    import asyncio

    make(store, "a.v")
    outcomes = []

    async def block():
        with pytest.raises(KeyError):
            with store.transaction():
                make(store, "a.mine")
                await asyncio.sleep(0.05)
                assert store.in_transaction and store.view_exists("a.mine")  # still its own
                raise KeyError("rolled back")

    async def other():
        await asyncio.sleep(0.01)
        outcomes.append(store.in_transaction)
        for call in (lambda: make(store, "a.theirs"), lambda: store.load_view("a.v"), store.list_views,
                     lambda: store.transaction().__enter__()):
            try:
                call()
                outcomes.append("done")
            except ViewStoreError as e:
                outcomes.append("another task" in str(e))

    async def main():
        await asyncio.gather(block(), other())

    asyncio.run(main())
    assert outcomes == [False, True, True, True, True]
    assert store.list_views() == [("a", "v")] and store.event_count() == 1
    make(store, "a.after")  # and once the block has ended, every task may write
    assert store.list_views() == [("a", "after"), ("a", "v")]


def test_another_writer_waits_for_the_commit(store):
    make(store, "a.v")
    with ViewStore(store.path, actor="bob") as other:
        done = []

        def write():
            done.append(other.alter_view("a.v", ViewChange.set_property("bob", "1")).stream_version)

        with store.transaction():
            store.alter_view("a.v", ViewChange.update_comment("mine"))
            thread = threading.Thread(target=write)
            thread.start()
            time.sleep(0.3)
            assert done == []  # the file's write lock is held from the start of the block
        thread.join(10)
        assert done == [3]
        assert [e.actor for e in store.history("a.v")] == ["alice", "alice", "bob"]


def _another_process(path, what, queue):
    """In a process of its own, while the parent holds a block open: a block, a plain write or a read."""
    import viewstore.log as log_module

    log_module.BUSY_TIMEOUT_MS = 200  # three tries of 0.2 s, not of 10 s
    store = ViewStore(path, actor="child")
    try:
        if what == "read":
            queue.put((what, store.load_view("a.v").comment, store.event_count()))
            return
        if what == "block":
            with store.transaction():
                store.alter_view("a.v", ViewChange.update_comment("child"))
        else:
            store.alter_view("a.v", ViewChange.update_comment("child"))
        queue.put((what, "written"))
    except ConcurrencyError as e:
        queue.put((what, "busy" if e.busy else "lost"))
    finally:
        store.close()


def test_other_processes_wait_for_the_block_and_read_what_was_committed(store):
    from spawned import spawned_results

    make(store, "a.v")
    with store.transaction():
        store.alter_view("a.v", ViewChange.update_comment("parent"))
        seen = spawned_results(_another_process, [(str(store.path), what) for what in ("block", "write", "read")])
        store.alter_view("a.v", ViewChange.set_property("k", "after"))
    assert sorted(seen) == [("block", "busy"), ("read", None, 1), ("write", "busy")]
    assert [(e.actor, e.type) for e in store.history("a.v")] == [
        ("alice", "view.created"), ("alice", "view.comment_updated"), ("alice", "view.properties_set")]


def test_a_busy_file_is_a_concurrency_error_at_the_start(tmp_path, monkeypatch):
    import viewstore.log as log_module

    monkeypatch.setattr(log_module, "BUSY_TIMEOUT_MS", 100)
    with ViewStore(tmp_path / "b.db", actor="alice") as store:
        make(store, "a.v")
        holder = sqlite3.connect(store.path, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")  # another process in a long write
        try:
            block = store.transaction()
            with pytest.raises(ConcurrencyError) as info:
                with block:
                    pytest.fail("the block must not run")  # pragma: no cover
            assert info.value.busy
            with pytest.raises(ViewStoreError, match="entered already"):  # a new one is needed to try again
                block.__enter__()
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        with store.transaction():  # and once the file is free again, it works
            store.alter_view("a.v", ViewChange.update_comment("free"))
        assert store.load_view("a.v").comment == "free"


def test_closing_the_store_inside_writes_nothing(store):
    make(store, "a.v")
    path = store.path
    with pytest.raises(ViewStoreError, match="closed"):
        with store.transaction():
            make(store, "a.w")
            store.close()
    with pytest.raises(ViewStoreError, match="closed"):
        with store.transaction():
            pass  # pragma: no cover - refused on entry
    with ViewStore(path) as again:
        assert again.list_views() == [("a", "v")]


def test_a_receiver_that_closes_the_store_during_a_write_of_a_block_writes_nothing(store):
    """A before_commit receiver closes the store while the block's second write is being made: that
    write and the block fail with the store's own error, and neither write reaches the file. (An
    assertion failing inside the block would give way to the block's own error on leaving it.)"""
    make(store, "a.v")
    path = store.path

    def closing(sender, events):
        if events[0].view == "a.v":
            sender.close()

    signals.before_commit.connect(closing)
    try:
        with pytest.raises(ViewStoreError) as ended:
            with store.transaction():
                make(store, "a.w")
                with pytest.raises(ViewStoreError) as failed:  # its message is checked after the block
                    store.alter_view("a.v", ViewChange.update_comment("closed"))
    finally:
        signals.before_commit.disconnect(closing)
    assert str(failed.value) == "the store was closed during the write; nothing was written"
    assert isinstance(failed.value.__cause__, sqlite3.ProgrammingError)
    assert str(ended.value) == "the store was closed during the write; nothing was written"
    assert store.closed
    with ViewStore(path) as again:
        assert again.list_views() == [("a", "v")] and again.load_view("a.v").comment is None
        assert again.event_count() == 1


def test_a_file_without_an_id_gets_one_inside_a_transaction(tmp_path):
    from test_store_id import _meta, _old_file

    path = _old_file(tmp_path)
    with ViewStore(path, actor="alice") as store:
        with store.transaction():
            made = store.store_id
            store.alter_view("a.v", ViewChange.update_comment("x"))
        assert _meta(path)["store_id"] == made
    (tmp_path / "again").mkdir()
    with pytest.raises(RuntimeError):
        with ViewStore(_old_file(tmp_path / "again"), actor="alice") as store:
            with store.transaction():
                store.store_id
                raise RuntimeError("no")
    assert "store_id" not in _meta(tmp_path / "again" / "old.db")  # rolled back with the rest


def test_a_lookup_error_inside_rolls_back_what_came_before(store):
    with pytest.raises(NoSuchViewError, match="^no such view: a.missing$"):
        with store.transaction():
            make(store, "a.new")
            store.alter_view("a.missing",
                             ViewChange.update_comment("x"))  # the block does not catch it: the whole transaction goes
    assert store.event_count() == 0 and store.list_views() == []


def test_a_store_id_made_in_a_rolled_back_transaction_is_not_kept(tmp_path):
    """The id made inside went with the rollback: the store must not go on naming itself by it."""
    from test_store_id import _meta, _old_file

    path = _old_file(tmp_path)
    with ViewStore(path, actor="alice") as store, ViewStore(path, actor="bob") as other:
        with pytest.raises(RuntimeError):
            with store.transaction():
                rolled_back = store.store_id
                raise RuntimeError("no")
        assert store.existing_store_id() is None  # the file has none
        kept = other.store_id  # another store makes the file's id
        assert kept != rolled_back and _meta(path)["store_id"] == kept
        assert store.store_id == kept


def test_a_repair_rolled_back_inside_does_not_hide_another_stores_repair(store):
    """A rebuild() inside a block counts a repair in the file; the rollback takes the count back, so
    the store must not take the next repair, another store's, for its own and keep its stale rows."""
    store.create_view("a.v", columns=COLS, representations=[("spark", "SELECT 1 AS x")], default_namespace="a",
                      properties={"owner": "alice"})
    raw = sqlite3.connect(store.path)
    with raw:
        raw.execute("""UPDATE views SET properties = '{"owner":"mallory"}'""")  # damage of the right type
    raw.close()
    with pytest.raises(RuntimeError):
        with store.transaction():
            assert store.rebuild()["views"] == 1
            assert store.load_view("a.v").properties == {"owner": "alice"}
            raise RuntimeError("no")
    assert store.load_view("a.v").properties == {"owner": "mallory"}  # the repair went with the rest
    with ViewStore(store.path, actor="bob") as other:
        assert other.rebuild()["views"] == 1
    assert store.load_view("a.v").properties == {"owner": "alice"}


def _sqlite_interrupts(conn, when):
    """Make SQLite interrupt the statements ``when(sql)`` picks, as it does on an interrupt (or as an
    I/O error or a full disk ends a statement): an interrupted write rolls the whole transaction back."""
    chosen = [False]

    def starting(sql):
        chosen[0] = when(sql)

    conn.set_trace_callback(starting)
    conn.set_progress_handler(lambda: chosen[0], 1)


def _sqlite_interrupts_nothing(conn):
    conn.set_trace_callback(None)
    conn.set_progress_handler(None, 1)


def _a_write_failing_in_a_block(store, failing):
    """Inside a block, after one write: a write that fails (its view's rows vanished under the cache)
    while SQLite interrupts each statement that starts with ``failing`` (its undoing). Returns the
    write's own error, typed."""
    make(store, "a.first")
    _sqlite_interrupts(store._conn, lambda sql: sql.startswith(failing))
    try:
        with pytest.raises(CorruptLogError, match="vanished") as failed:
            store.alter_view("a.damaged", ViewChange.update_comment("lost"))
    finally:
        _sqlite_interrupts_nothing(store._conn)
    return failed.value


WHOLE_ROLLBACK = ("the transaction was rolled back whole when a write in it failed (SQLite ends a transaction on an "
                  "interrupt, a full disk or an I/O error) (%s): nothing of this block was written")


def test_a_transaction_sqlite_rolled_back_whole_commits_nothing_after(store, recorded):
    """A write whose statement SQLite ends by rolling the whole transaction back (an interrupt, a full
    disk, an I/O error): the block's earlier writes are gone, so no later write of it may be made
    (each would commit on its own) and the block ends in an error, with nothing written."""
    for name in ("a.v", "a.w", "a.x"):
        make(store, name)
    before = snapshot(store)
    recorded.clear()
    with pytest.raises(ViewStoreError, match="rolled back") as ended:
        with store.transaction():
            store.alter_view("a.v", ViewChange.update_comment("first"))
            _sqlite_interrupts(store._conn, lambda sql: sql.startswith("INSERT INTO events"))
            try:
                with pytest.raises(ViewStoreError, match="interrupted") as interrupted:
                    store.alter_view("a.w", ViewChange.update_comment("interrupted"))
            finally:
                _sqlite_interrupts_nothing(store._conn)
            assert interrupted.value.__notes__[-1].endswith("the block's writes before this one are undone too")
            assert store.load_view("a.v").comment is None  # undone, so no longer read either
            with pytest.raises(ViewStoreError, match="rolled back"):
                store.alter_view("a.x", ViewChange.update_comment("third"))
    assert str(ended.value) == (WHOLE_ROLLBACK % "interrupted")
    assert snapshot(store) == before
    assert store.load_view("a.v").comment is None and store.load_view("a.x").comment is None
    assert [s for s, *_ in recorded if s != "before"] == ["failed", "failed"]  # the interrupted write, the first
    assert recorded[-1] == ("failed", ["view.comment_updated"], "ViewStoreError")
    store.alter_view("a.x", ViewChange.update_comment("later"))  # and the store goes on
    assert store.load_view("a.x").comment == "later"


def test_commit_failed_events_of_a_rolled_back_block_have_no_position(store):
    """The events commit_failed gets were never committed: they carry no position, which the next
    committed event may take (it did carry the one its insert had been given, so a receiver logging
    positions named one position for two events)."""
    make(store, "a.v")
    failed = []

    def receiver(sender, events, error):
        failed.extend(events)

    signals.commit_failed.connect(receiver)
    try:
        with pytest.raises(KeyError):
            with store.transaction():
                store.alter_view("a.v", ViewChange.update_comment("undone"))
                raise KeyError("no")
    finally:
        signals.commit_failed.disconnect(receiver)
    assert [(e.type, e.position) for e in failed] == [("view.comment_updated", None)]
    store.alter_view("a.v", ViewChange.update_comment("kept"))
    assert store.history("a.v")[-1].position == 2


def test_a_transaction_sqlite_ended_with_no_write_after_says_so(store, recorded):
    """SQLite ended the block's transaction (an I/O error in a statement, caught by the caller) and no
    write of the block came after to notice: the block's end says that its writes were rolled back,
    and sends commit_failed for them; it said only 'cannot commit - no transaction is active'."""
    make(store, "a.v")
    before = snapshot(store)
    recorded.clear()
    with pytest.raises(ViewStoreError, match="rolled back") as ended:
        with store.transaction():
            store.alter_view("a.v", ViewChange.update_comment("first"))
            store._conn.execute("ROLLBACK")  # what SQLite does on its own after some errors
    assert str(ended.value) == (WHOLE_ROLLBACK % "SQLite ended the transaction (after an I/O error?)")
    assert snapshot(store) == before
    assert [s for s, *_ in recorded] == ["before", "failed"]
    store.alter_view("a.v", ViewChange.update_comment("later"))  # and the store goes on
    assert store.load_view("a.v").comment == "later"


def test_a_savepoint_that_cannot_start_is_a_typed_error_and_the_block_goes_on(store, recorded):
    """A write's SAVEPOINT that SQLite refuses (interrupted here; out of memory, an I/O error) fails
    that write with a ViewStoreError, as a BEGIN that fails does outside a block; nothing of it is
    written and the block goes on."""
    make(store, "a.v")
    recorded.clear()
    with store.transaction():
        store.alter_view("a.v", ViewChange.update_comment("first"))
        _sqlite_interrupts(store._conn, lambda sql: sql.startswith("SAVEPOINT"))
        try:
            with pytest.raises(ViewStoreError, match="interrupted"):
                make(store, "a.w")
        finally:
            _sqlite_interrupts_nothing(store._conn)
        store.alter_view("a.v", ViewChange.set_property("k", "after"))
    assert store.list_views() == [("a", "v")]
    assert [e.type for e in store.history("a.v")] == ["view.created", "view.comment_updated", "view.properties_set"]
    assert [s for s, *_ in recorded] == ["before", "before", "committed", "committed"]  # nothing was decided for it


@pytest.mark.parametrize("in_block", [False, True])
def test_a_read_that_sqlite_refuses_is_a_typed_error(store, in_block):
    """A read whose statement SQLite stops (interrupted here; an I/O error, out of memory) raises a
    ViewStoreError, in a block or not, and the block goes on."""
    make(store, "a.v")
    reads = {"load_view": lambda: store.load_view("a.v"), "list_views": store.list_views,
             "history": lambda: store.history("a.v"), "events": store.events, "event_count": store.event_count,
             "as_of": lambda: store.load_view("a.v", as_of=store.history("a.v")[0])}

    def each_read_fails():
        for name, read in reads.items():
            store._cache.clear()  # so that load_view reads the file
            _sqlite_interrupts(store._conn, lambda sql: sql.startswith(("SELECT", "BEGIN", "PRAGMA", "WITH")))
            try:
                with pytest.raises(ViewStoreError, match="interrupted"):
                    read()
            finally:
                _sqlite_interrupts_nothing(store._conn)

    if in_block:
        with store.transaction():
            store.alter_view("a.v", ViewChange.update_comment("in the block"))
            each_read_fails()
            store.alter_view("a.v", ViewChange.set_property("k", "after"))
        assert store.load_view("a.v").comment == "in the block" and store.load_view("a.v").properties["k"] == "after"
    else:
        each_read_fails()
        assert store.load_view("a.v").stream_version == 1


def test_a_read_whose_end_sqlite_refuses_leaves_no_read_open(store):
    """A read's COMMIT that fails would leave the connection inside the read: every later write and
    transaction() was refused ('cannot start a transaction within a transaction')."""
    make(store, "a.v")
    _sqlite_interrupts(store._conn, lambda sql: sql == "COMMIT")
    try:
        assert store.list_views() == [("a", "v")]  # read whole; its end is rolled back instead
    finally:
        _sqlite_interrupts_nothing(store._conn)
    store.alter_view("a.v", ViewChange.update_comment("plain"))
    with store.transaction():
        store.alter_view("a.v", ViewChange.set_property("k", "block"))
    assert [e.type for e in store.history("a.v")] == ["view.created", "view.comment_updated", "view.properties_set"]


def test_a_savepoint_that_cannot_roll_back_rolls_the_whole_transaction_back(store):
    """A failed write whose ROLLBACK TO fails itself (interrupted) would leave its rows in the
    transaction, for the block's commit to write: the whole transaction goes instead, with a typed
    error, and nothing is written."""
    make(store, "a.v")
    _damaged_under_the_cache(store, "a.damaged")
    before = snapshot(store)
    with pytest.raises(ViewStoreError, match="rolled back"):
        with store.transaction():
            failed = _a_write_failing_in_a_block(store, "ROLLBACK TO")
            assert failed.__notes__[-1].endswith("the block's writes before this one are undone too")
            # rolled back at once: the block reads what was committed, and the file's write lock is free
            assert store.list_views() == [("a", "v")]
            other = sqlite3.connect(store.path, isolation_level=None, timeout=0)
            other.execute("BEGIN IMMEDIATE")
            other.execute("ROLLBACK")
            other.close()
            with pytest.raises(ViewStoreError, match="rolled back"):
                store.alter_view("a.v", ViewChange.update_comment("after"))
    assert snapshot(store) == before
    assert not store._conn.in_transaction
    store.alter_view("a.v", ViewChange.update_comment("later"))
    assert [e.type for e in store.history("a.v")] == ["view.created", "view.comment_updated"]


def test_a_plain_write_whose_rollback_is_interrupted_once_rolls_back_on_a_second_try(store):
    make(store, "a.v")
    _damaged_under_the_cache(store, "a.damaged")
    before = snapshot(store)
    tries = []
    _sqlite_interrupts(store._conn, lambda sql: sql == "ROLLBACK" and not tries.append(sql) and len(tries) == 1)
    try:
        with pytest.raises(CorruptLogError, match="vanished"):  # the write's own error, typed
            store.alter_view("a.damaged", ViewChange.update_comment("lost"))
    finally:
        _sqlite_interrupts_nothing(store._conn)
    assert len(tries) == 2 and snapshot(store) == before
    store.alter_view("a.v", ViewChange.update_comment("after"))  # the store goes on


def test_a_plain_write_whose_commit_sqlite_refuses_is_rolled_back_typed_and_told(store, recorded):
    """The COMMIT of a plain write fails (interrupted, as an I/O error would end it): the write is
    rolled back, raises the typed error of the database's refusal, writes nothing, and commit_failed
    is sent; the store goes on."""
    make(store, "a.v")
    before = snapshot(store)
    recorded.clear()
    positions = []

    def failed(sender, events, error):
        positions.extend(e.position for e in events)

    signals.commit_failed.connect(failed)
    _sqlite_interrupts(store._conn, lambda sql: sql == "COMMIT")
    try:
        with pytest.raises(ViewStoreError, match="refused the write: interrupted") as caught:
            store.alter_view("a.v", ViewChange.update_comment("lost"))
    finally:
        _sqlite_interrupts_nothing(store._conn)
        signals.commit_failed.disconnect(failed)
    assert isinstance(caught.value.__cause__, sqlite3.OperationalError)
    assert recorded == [("before", ["view.comment_updated"]), ("failed", ["view.comment_updated"], "ViewStoreError")]
    assert positions == [None]  # its row was inserted before the COMMIT failed, but it was never committed
    assert snapshot(store) == before and not store._conn.in_transaction
    assert store.load_view("a.v").comment is None
    store.alter_view("a.v", ViewChange.update_comment("after"))
    assert [e.type for e in store.history("a.v")] == ["view.created", "view.comment_updated"]


def test_a_write_that_decided_no_event_sends_no_commit_failed_when_its_commit_fails(store, recorded):
    """Setting a property to the value it has decides nothing: its empty COMMIT failing is no failed
    commit of events, so commit_failed is not sent."""
    make(store, "a.v")
    store.alter_view("a.v", ViewChange.set_property("k", "1"))
    before = snapshot(store)
    recorded.clear()
    _sqlite_interrupts(store._conn, lambda sql: sql == "COMMIT")
    try:
        with pytest.raises(ViewStoreError, match="refused the write: interrupted"):
            store.alter_view("a.v", ViewChange.set_property("k", "1"))
    finally:
        _sqlite_interrupts_nothing(store._conn)
    assert recorded == [] and snapshot(store) == before


@pytest.mark.parametrize("in_block", [False, True])
def test_a_write_that_cannot_roll_back_closes_the_store_and_writes_nothing(store, in_block):
    """A connection left inside its transaction would keep the failed write's rows and the file's
    write lock: the store closes it (which rolls back), and says so."""
    make(store, "a.v")
    _damaged_under_the_cache(store, "a.damaged")
    before = snapshot(store)
    path = store.path
    _sqlite_interrupts(store._conn, lambda sql: sql == "ROLLBACK")
    with pytest.raises(ViewStoreError) as caught:
        if in_block:
            with store.transaction():
                make(store, "a.first")
                store.alter_view("a.damaged", ViewChange.update_comment("lost"))
        else:
            store.alter_view("a.damaged", ViewChange.update_comment("lost"))
    assert any("the store was closed" in note for note in caught.value.__notes__)
    assert "and its ROLLBACK failed three times (interrupted)" in caught.value.__notes__
    with pytest.raises(ViewStoreError, match="closed"):
        store.load_view("a.v")
    with ViewStore(path, actor="bob") as again:  # nothing was written, and the file is free to write
        assert snapshot(again) == before
        again.alter_view("a.v", ViewChange.update_comment("after"))


@pytest.mark.parametrize("failing, note", [
    ("ROLLBACK TO", "its writes could not be rolled back alone (interrupted): the whole transaction was rolled back"),
    ("ROLLBACK", "its writes could not be rolled back alone (interrupted), nor with the whole transaction "
                 "(interrupted)"),
], ids=["alone", "alone nor whole"])
def test_a_write_of_a_block_that_cannot_be_rolled_back_alone_fails_as_itself_and_the_block_writes_nothing(
        store, failing, note):
    """Inside a block, a failed write's ROLLBACK TO fails, and then the ROLLBACK of the whole
    transaction succeeds, or fails too (the block's end then rolls it back): the write raises its
    own error with a note that says which, and the block ends in the error of a block rolled back
    whole: nothing is written, and the store goes on. (The note said the whole transaction was
    rolled back before its ROLLBACK was tried, and another note then that it could not be.)"""
    make(store, "a.v")
    _damaged_under_the_cache(store, "a.damaged")
    before = snapshot(store)
    with pytest.raises(ViewStoreError, match="^the transaction was rolled back whole when a write in it failed"):
        with store.transaction():
            failed = _a_write_failing_in_a_block(store, failing)
    assert failed.__notes__ == [
        note, "the transaction was rolled back whole when a write in it failed (SQLite ends a transaction on an "
              "interrupt, a full disk or an I/O error): the block's writes before this one are undone too"]
    assert not store.closed and snapshot(store) == before
    store.alter_view("a.v", ViewChange.update_comment("after"))
    assert store.load_view("a.v").comment == "after"


def test_thread_holds_a_store_inside_a_block_and_a_receiver_run_under_the_store(store):
    """thread_holds_a_store: true in the thread of a transaction() block and in a before_commit or
    commit_failed receiver (code of the caller's run while the store is held), false elsewhere and
    afterwards."""
    from viewstore import signals
    from viewstore.catalog import thread_holds_a_store

    seen = {}

    def receiver(sender, **_kwargs):
        seen["receiver"] = thread_holds_a_store()

    def failed(sender, events, error):
        seen["failed"] = thread_holds_a_store()

    def veto(sender, events):
        raise PermissionError("no")

    assert not thread_holds_a_store()
    with store.transaction():
        seen["block"] = thread_holds_a_store()
        other = threading.Thread(target=lambda: seen.setdefault("other thread", thread_holds_a_store()))
        other.start()
        other.join(10)
    seen["after"] = thread_holds_a_store()
    signals.before_commit.connect(receiver, sender=store)
    try:
        make(store, "a.v")
    finally:
        signals.before_commit.disconnect(receiver, sender=store)
    signals.before_commit.connect(veto, sender=store)
    signals.commit_failed.connect(failed, sender=store)
    try:
        with pytest.raises(ViewStoreError, match="refused"):
            store.alter_view("a.v", ViewChange.update_comment("x"))
    finally:
        signals.before_commit.disconnect(veto, sender=store)
        signals.commit_failed.disconnect(failed, sender=store)
    with pytest.raises(ValueError):
        with store.transaction():
            raise ValueError("rolled back")
    assert seen == {"block": True, "other thread": False, "after": False, "receiver": True, "failed": True}
    assert not thread_holds_a_store()


# -- a name given up and taken again inside one block (the log is asked of a name the rows hold free) --

def _agrees_after_commit(store, name, uuids):
    """The file's log and rows agree (a rebuild repairs nothing; a fresh store reads the same views),
    and the events of ``name`` are those of the views ``uuids``, in that order of creation."""
    views = {ident: store.load_view(ident) for ident in store.list_views()}
    assert store.rebuild() == {"views": 0, "view_versions": 0, "view_version_log": 0, "view_snapshots": 0}
    with ViewStore(store.path, actor="bob") as fresh:
        assert {ident: fresh.load_view(ident) for ident in fresh.list_views()} == views
        assert list(dict.fromkeys(e.view_id for e in fresh.events(view=name))) == uuids
        assert fresh.history(name)[-1].view_id == uuids[-1]


def test_a_name_dropped_inside_a_block_is_created_again_in_it(store):
    old = make(store, "a.v")
    with store.transaction():
        assert store.drop_view("a.v")
        new = make(store, "a.v")
    assert new.uuid != old.uuid and store.list_views() == [("a", "v")]
    _agrees_after_commit(store, "a.v", [old.uuid, new.uuid])


def test_a_name_renamed_away_inside_a_block_is_created_again_in_it(store):
    old = make(store, "a.v")
    with store.transaction():
        store.rename_view("a.v", "a.moved")
        new = make(store, "a.v")
    assert store.list_views() == [("a", "moved"), ("a", "v")]
    assert store.load_view("a.moved").uuid == old.uuid and store.load_view("a.v").uuid == new.uuid
    _agrees_after_commit(store, "a.v", [old.uuid, new.uuid])


def test_another_view_is_renamed_into_a_name_dropped_inside_the_same_block(store):
    old, other = make(store, "a.v"), make(store, "a.w")
    with store.transaction():
        store.drop_view("a.v")
        store.rename_view("a.w", "a.v")
    assert store.list_views() == [("a", "v")] and store.load_view("a.v").uuid == other.uuid
    _agrees_after_commit(store, "a.v", [old.uuid, other.uuid])


def test_a_replace_view_creates_a_name_dropped_inside_the_same_block(store):
    old = make(store, "a.v")
    with store.transaction():
        store.drop_view("a.v")
        new = store.replace_view("a.v", columns=COLS, representations=[("spark", "SELECT 2 AS x")],
                                 default_namespace="a")
    assert new.uuid != old.uuid and new.stream_version == 1 and new.sql_for("spark") == "SELECT 2 AS x"
    _agrees_after_commit(store, "a.v", [old.uuid, new.uuid])


def test_a_name_another_write_of_the_block_took_is_refused_and_writes_nothing(store):
    old, other = make(store, "a.v"), make(store, "a.w")
    with store.transaction():
        store.drop_view("a.v")
        new = make(store, "a.v")
        before = snapshot(store)
        with pytest.raises(ViewAlreadyExistsError, match="^view already exists: a.v$"):
            make(store, "a.v")
        with pytest.raises(ViewAlreadyExistsError):
            store.rename_view("a.w", "a.v")
        assert snapshot(store) == before
    assert store.load_view("a.v").uuid == new.uuid and store.load_view("a.w").uuid == other.uuid
    _agrees_after_commit(store, "a.v", [old.uuid, new.uuid])
