"""ViewStore.diff_view: a view at two moments (a time or an event each; the second one now by
default), loaded as load_view(as_of=...) loads them, and what differs between them."""

import datetime as dt
import time

import pytest

from viewstore import Column, NoSuchViewError, SQLRepresentation, ValidationError, ViewChange, ViewStore
from viewstore.model import diff_views

COLS = [Column("day", "date"), Column("orders", "bigint", "orders that day")]
SPARK = "SELECT day, count(*) AS orders FROM orders GROUP BY day"


def make(store, ident="sales.daily", **kw):
    args = dict(columns=COLS, representations=[("spark", SPARK)], default_namespace="sales")
    args.update(kw)
    return store.create_view(ident, **args)


def _next_millisecond():
    """Sleep into a later millisecond, so that a commit after this is at a later time than one before."""
    time.sleep(0.003)


def test_a_view_unchanged_since_is_no_change(store):
    make(store)
    make(store, "sales.other")  # another view's commits change nothing of this one
    (created,) = store.history("sales.daily")
    diff = store.diff_view("sales.daily", before=created)
    assert not diff.changed
    assert diff.before == diff.after and diff.after.identifier == ("sales", "daily")
    assert diff == store.diff_view("sales.daily", before=created, after=created)


def test_a_comment_change_is_the_comment_alone(store):
    make(store, comment="Orders per day")
    view = store.alter_view("sales.daily", ViewChange.update_comment("Orders each day"))
    diff = store.diff_view("sales.daily", before=store.history("sales.daily")[0])
    assert diff.changed
    assert (diff.comment.before, diff.comment.after) == ("Orders per day", "Orders each day")
    assert diff.before.current_version_id == diff.after.current_version_id == 1  # a comment is not a version
    assert (diff.before.stream_version, diff.after.stream_version) == (1, view.stream_version)
    assert not (diff.properties_added or diff.properties_changed or diff.properties_removed)
    assert diff.model_dump(exclude={"before", "after", "comment", "changed"}) == \
        diff_views(view, view).model_dump(exclude={"before", "after", "comment", "changed"})


def test_properties_set_changed_and_removed(store):
    make(store, properties={"owner": "sales", "tier": "gold", "old": "yes"})
    store.alter_view("sales.daily", ViewChange.set_property("owner", "finance"), ViewChange.remove_property("old"),
                     ViewChange.set_property("team", "bi"))
    diff = store.diff_view("sales.daily", before=store.history("sales.daily")[0])
    assert diff.properties_added == {"team": "bi"}
    assert {k: (v.before, v.after) for k, v in diff.properties_changed.items()} == {"owner": ("sales", "finance")}
    assert diff.properties_removed == {"old": "yes"}
    assert diff.changed and diff.comment is None and diff.before.current_version_id == diff.after.current_version_id


def test_a_replace_shows_its_new_version_sql_and_column_types(store):
    make(store)
    new_sql = "SELECT day, count(*) AS orders\nFROM orders2\nGROUP BY day"
    store.replace_view("sales.daily", columns=[Column("day", "date"), Column("orders", "int", "orders that day")],
                       representations=[("spark", new_sql)], default_namespace="sales")
    diff = store.diff_view("sales.daily", before=store.history("sales.daily")[0])
    assert (diff.before.current_version_id, diff.after.current_version_id) == (1, 2)
    ((sql,),) = [[(r.before.sql, r.after.sql) for r in diff.representations_changed]]
    assert sql == (SPARK, new_sql)
    ((column,),) = [diff.columns_changed]
    assert (column.before.name, str(column.before.type), str(column.after.type)) == ("orders", "long", "int")
    assert not diff.columns_added and not diff.columns_removed and not diff.representations_added
    back = store.diff_view("sales.daily", before=store.history("sales.daily")[-1],
                           after=store.history("sales.daily")[0])  # the other way round: the reverse
    assert [(r.before.sql, r.after.sql) for r in back.representations_changed] == [(new_sql, SPARK)]


def test_a_representation_added_is_its_dialect_and_sql(store):
    make(store)
    store.alter_view("sales.daily",
                     ViewChange.add_representation(("trino", "SELECT day, count(*) FROM orders GROUP BY 1")))
    diff = store.diff_view("sales.daily", before=store.history("sales.daily")[0])
    assert diff.representations_added == (SQLRepresentation("trino", "SELECT day, count(*) FROM orders GROUP BY 1"),)
    assert not diff.representations_changed and not diff.representations_removed
    assert (diff.before.current_version_id, diff.after.current_version_id) == (1, 2)


def test_a_rollback_to_the_first_version_leaves_no_change_since_then(store):
    make(store)
    store.replace_view("sales.daily", columns=COLS, representations=[("spark", "SELECT 2")], default_namespace="sales")
    replaced = store.history("sales.daily")[-1]
    store.rollback_view("sales.daily", 1)
    since_first = store.diff_view("sales.daily", before=store.history("sales.daily")[0])
    assert not since_first.changed and since_first.after.stream_version == 3  # a state compared, not events
    since_replace = store.diff_view("sales.daily", before=replaced)
    assert (since_replace.before.current_version_id, since_replace.after.current_version_id) == (2, 1)
    assert [(r.before.sql, r.after.sql) for r in since_replace.representations_changed] == [("SELECT 2", SPARK)]


def test_a_rename_between_the_two_moments_shows_each_sides_name(store):
    make(store)
    _next_millisecond()
    created = store.load_view("sales.daily").audit.create_time_ms
    store.rename_view("sales.daily", "finance.daily")
    for before in (store.history("finance.daily")[0], created):  # an event, or a time it had the old name
        diff = store.diff_view("finance.daily", before=before)
        assert (diff.before.identifier, diff.after.identifier) == (("sales", "daily"), ("finance", "daily"))
        assert diff.changed and diff.before.uuid == diff.after.uuid
        assert not diff.columns_changed and not diff.representations_changed
    with pytest.raises(NoSuchViewError):  # by its old name there is no view now
        store.diff_view("sales.daily", before=created)


def test_a_side_where_the_view_did_not_exist_is_no_such_view(store):
    before_it = int(time.time() * 1000) - 60_000
    make(store)
    with pytest.raises(NoSuchViewError, match="^before: no view sales.daily existed at"):
        store.diff_view("sales.daily", before=before_it)
    with pytest.raises(NoSuchViewError, match="^after: no view sales.daily existed at"):
        store.diff_view("sales.daily", before=store.history("sales.daily")[0], after=before_it)
    store.drop_view("sales.daily")
    created, dropped = store.history("sales.daily")
    when = dropped.occurred_at_datetime.strftime("%Y-%m-%d %H:%M:%S")
    with pytest.raises(NoSuchViewError) as raised:
        store.diff_view("sales.daily", before=created)  # the side that is missing is named: now, when it is gone
    assert str(raised.value) == (f"after (now): no such view: sales.daily (dropped at {when} UTC by "
                                 f"{dropped.actor}; its history remains)")
    with pytest.raises(NoSuchViewError, match="^after: view sales.daily was dropped by that event$"):
        store.diff_view("sales.daily", before=created, after=dropped)
    with pytest.raises(NoSuchViewError, match="^before: view sales.daily was dropped by that event$"):
        store.diff_view("sales.daily", before=dropped, after=created)


def test_a_side_renamed_away_since_says_where_the_view_went(store):
    make(store)
    created = store.history("sales.daily")[0]
    store.rename_view("sales.daily", "sales.weekly")
    renamed = store.history("sales.weekly")[-1]
    when = renamed.occurred_at_datetime.strftime("%Y-%m-%d %H:%M:%S")
    with pytest.raises(NoSuchViewError) as raised:
        store.diff_view("sales.daily", before=created)
    assert str(raised.value) == (f"after (now): no such view: sales.daily (renamed to sales.weekly (live) at {when} "
                                 f"UTC by {renamed.actor}; its history remains)")
    moved = store.diff_view("sales.weekly", before=created)  # where it went: the same view, under its new name
    assert (moved.before.identifier, moved.after.identifier) == (("sales", "daily"), ("sales", "weekly"))
    assert moved.before.uuid == moved.after.uuid
    with pytest.raises(NoSuchViewError, match="^before: no view sales.daily existed at"):  # a time stays a time
        store.diff_view("sales.daily", before=created.occurred_at - 60_000)


def test_a_name_taken_again_compares_the_two_views_that_held_it(store):
    make(store)
    _next_millisecond()
    first = store.load_view("sales.daily")
    store.drop_view("sales.daily")
    _next_millisecond()
    second = make(store, representations=[("spark", "SELECT 2")])
    diff = store.diff_view("sales.daily", before=first.audit.create_time_ms)
    assert (diff.before.uuid, diff.after.uuid) == (first.uuid, second.uuid) and diff.changed
    assert [(r.before.sql, r.after.sql) for r in diff.representations_changed] == [(SPARK, "SELECT 2")]


def test_moments_may_be_times_in_any_form_as_of_takes(store):
    make(store, comment="one")
    _next_millisecond()
    at_one = store.load_view("sales.daily").audit.last_modified_time_ms
    store.alter_view("sales.daily", ViewChange.update_comment("two"))
    _next_millisecond()
    at_two = store.load_view("sales.daily").audit.last_modified_time_ms
    store.alter_view("sales.daily", ViewChange.update_comment("three"))
    as_datetime = dt.datetime.fromtimestamp(at_one / 1000, dt.timezone.utc)
    for before, after in ((at_one, at_two), (as_datetime, at_two), (as_datetime.isoformat(), str(at_two))):
        diff = store.diff_view("sales.daily", before=before, after=after)
        assert (diff.comment.before, diff.comment.after) == ("one", "two"), (before, after)
    assert store.diff_view("sales.daily", before=at_two).comment.after == "three"


def test_the_diff_is_that_of_the_two_views_load_view_gives(store):
    make(store, comment="c", properties={"k": "v"})
    store.alter_view("sales.daily", ViewChange.add_representation(("trino", "SELECT 1")),
                     ViewChange.set_property("k", "w"), ViewChange.update_comment(None))
    store.replace_view("sales.daily", columns=COLS[:1], representations=[("spark", "SELECT 3"), ("trino", "SELECT 3")],
                       default_namespace="sales", security_mode="INVOKER")
    history = store.history("sales.daily")
    for before in history:
        for after in [*history, None]:
            assert store.diff_view("sales.daily", before=before, after=after) == diff_views(
                store.load_view("sales.daily", as_of=before), store.load_view("sales.daily", as_of=after))


@pytest.mark.parametrize("kwargs, message", [
    (dict(before=None), "before must be a time or an event"),
    (dict(before="soon"), r"^bad before 'soon': use ISO 8601"),
    (dict(before="first", after=[1]), r"^bad after \[1\]: give a datetime"),
    (dict(before=True), r"^bad before True$"),
    (dict(before=0, after="later"), r"^bad after 'later'"),  # a bad moment, though no view existed at the other
    (dict(before=float("nan")), r"^bad before nan"),
])
def test_bad_moments_are_validation_errors_and_write_nothing(store, kwargs, message):
    make(store)
    count = store.event_count()
    if kwargs["before"] == "first":
        kwargs["before"] = store.history("sales.daily")[0]
    with pytest.raises(ValidationError, match=message):
        store.diff_view("sales.daily", **kwargs)
    with pytest.raises(ValidationError,
                       match="^bad identifier 'daily': it needs a namespace and a name, as 'ns.view'$"):
        store.diff_view("daily", before=0)  # no namespace
    assert store.event_count() == count


def test_an_event_of_another_view_is_refused_as_load_view_refuses_it(store):
    make(store)
    make(store, "sales.other")
    (other,) = store.history("sales.other")
    for kwargs in (dict(before=other), dict(before=store.history("sales.daily")[0], after=other)):
        with pytest.raises(ValidationError, match="is not of the history of sales.daily$"):
            store.diff_view("sales.daily", **kwargs)


@pytest.mark.parametrize("cached", [False, True])
def test_both_sides_are_read_from_one_state_while_another_store_commits(tmp_path, monkeypatch, cached):
    """Another process committing between the loads of the two sides must not make a diff of two
    states of the file: the second side (now) is the view as it was when the first was read."""
    path = tmp_path / "s.db"
    with ViewStore(path, actor="them") as theirs:
        make(theirs, comment="one")
        with ViewStore(path, actor="me") as mine:
            if cached:
                mine.load_view("sales.daily")  # now's side from the cache, known current before their commit
            (created,) = mine.history("sales.daily")
            load = mine.load_view

            def load_then_they_commit(*args, **kwargs):
                monkeypatch.setattr(mine, "load_view", load)
                view = load(*args, **kwargs)
                theirs.alter_view("sales.daily", ViewChange.update_comment("theirs"))
                return view

            monkeypatch.setattr(mine, "load_view", load_then_they_commit)
            diff = mine.diff_view("sales.daily", before=created)
            assert not diff.changed and diff.after.stream_version == 1  # not their comment, committed in between
            assert mine.diff_view("sales.daily", before=created).comment.after == "theirs"  # the next call sees it
            assert mine.load_view("sales.daily").comment == "theirs"
