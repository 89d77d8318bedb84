"""The load_view cache: a commit by another connection is visible to the very next load."""

import pytest

from viewstore import NoSuchViewError, ViewChange, ViewStore


def _create(store, name, sql="SELECT 1 AS x"):
    return store.create_view(name, columns=[("x", "int")], representations=[("spark", sql)],
                             default_namespace=name.split(".")[0])


def test_every_kind_of_foreign_commit_is_seen_by_the_next_load(tmp_path):
    mine, theirs = ViewStore(tmp_path / "s.db", actor="me"), ViewStore(tmp_path / "s.db", actor="them")
    _create(mine, "a.v")
    _create(mine, "a.other")
    assert mine.load_view("a.v").comment is None  # cached now

    theirs.alter_view("a.other", ViewChange.update_comment("elsewhere"))  # another view: entry still good
    assert mine.load_view("a.v").comment is None
    theirs.alter_view("a.v", ViewChange.update_comment("theirs"))
    assert mine.load_view("a.v").comment == "theirs"

    first = mine.load_view("a.v").uuid
    theirs.drop_view("a.v")
    with pytest.raises(NoSuchViewError):
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
    mine.close()
    theirs.close()


def test_a_call_returning_after_a_newer_commit_does_not_cache_its_older_state(tmp_path):
    # A write returns its View after the store's lock is released; another thread's write may land
    # in between. The returning call must not put its (now older) state back in the cache: the
    # next load would be stale. A committed receiver writes again in exactly that gap.
    from viewstore import signals

    store = ViewStore(tmp_path / "s.db", actor="me")
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
