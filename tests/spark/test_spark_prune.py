"""register_views(prune=True) against the real Hive-enabled test session (an embedded Derby metastore).

Each test makes its own stores (SQLite files, each with its own id) and its own databases; the
metastore is shared with the rest of the run, so pruning every database also meets other tests'
copies, made by other stores, which must survive.
"""

from __future__ import annotations

import json
import re
import uuid

import pytest
from click.testing import CliRunner

from viewstore import Column, SQLRepresentation, ValidationError, ViewChange, ViewStore
from viewstore.spark import register_views
from viewstore.spark.session import STORE

from spark_views import _alter_record, _meanwhile

pytestmark = pytest.mark.spark


@pytest.fixture
def databases(spark):
    """Makes fresh database names (not the databases: register_views creates them); drops them afterwards."""
    made = []

    def make() -> str:
        made.append("t" + uuid.uuid4().hex[:10])
        return made[-1]

    yield make
    spark.catalog.setCurrentDatabase("default")
    for db in made:
        spark.sql(f"DROP DATABASE IF EXISTS {db} CASCADE")


@pytest.fixture
def stores(tmp_path):
    """Makes stores, each on a SQLite file of its own; closes them afterwards."""
    made = []

    def make(name: str) -> ViewStore:
        made.append(ViewStore(tmp_path / f"{name}.db", catalog="prod", actor=name))
        return made[-1]

    yield make
    for store in made:
        store.close()


def _view(store, ident, sql="SELECT 1 AS x", columns=(Column("x", "int"),)):
    return store.create_view(ident, columns=list(columns), representations=[SQLRepresentation("spark", sql)],
                             default_namespace=ident.split(".")[0])


def _objects(spark, db):
    """What the session catalog (the metastore) holds in the database: name -> (table type, store id or None)."""
    external = spark._jsparkSession.sharedState().externalCatalog()
    found = {}
    for row in spark.sql(f"SHOW TABLES IN {db}").collect():
        if row.isTemporary:
            continue
        table = external.getTable(db, row.tableName)
        store = table.properties().get(STORE)
        found[row.tableName] = (str(table.tableType().name()).lower(), str(store.get()) if store.isDefined() else None)
    return found


def test_prune_drops_only_this_stores_copies_of_views_it_no_longer_holds(spark, stores, databases):
    db = databases()
    mine, other = stores("mine"), stores("other")
    assert mine.store_id != other.store_id
    for name in ("keep", "gone", "old", "taken", "legacy"):
        _view(mine, f"{db}.{name}")
    assert register_views(spark, mine, db).registered == [f"{db}.{n}" for n in ("gone", "keep", "legacy", "old",
                                                                                 "taken")]
    _view(other, f"{db}.taken", "SELECT 2 AS x")  # the other store takes the name over in the metastore
    _view(other, f"{db}.theirs")
    assert register_views(spark, other, db).registered == [f"{db}.taken", f"{db}.theirs"]
    spark.sql(f"CREATE VIEW {db}.by_hand AS SELECT 3 AS x")  # made by a person
    spark.sql(f"CREATE TABLE {db}.facts (x INT) USING parquet")
    spark.sql(f"ALTER VIEW {db}.legacy UNSET TBLPROPERTIES ('{STORE}')")  # as a release before store ids left it
    for name in ("gone", "taken", "legacy"):
        mine.drop_view(f"{db}.{name}")
    mine.rename_view(f"{db}.old", f"{db}.new")

    report = register_views(spark, mine, db)  # without prune nothing is dropped
    assert report.ok and report.pruned == [] and report.registered == [f"{db}.keep", f"{db}.new"]
    assert {"gone", "old", "legacy", "taken"} <= set(_objects(spark, db))

    report = register_views(spark, mine, db, prune=True)
    assert report.ok, report.failed
    assert report.pruned == [f"{db}.gone", f"{db}.old"]
    assert report.registered == [f"{db}.keep", f"{db}.new"] and report.unchanged == report.registered
    assert _objects(spark, db) == {
        "keep": ("view", mine.store_id), "new": ("view", mine.store_id),
        "taken": ("view", other.store_id), "theirs": ("view", other.store_id),  # another store's copies
        "legacy": ("view", None), "by_hand": ("view", None), "facts": ("managed", None)}
    assert spark.sql(f"SELECT x FROM {db}.taken").first().x == 2
    assert re.fullmatch(r"registered 0, already registered 2, skipped 0, failed 0, pruned 2 \(\d+\.\d\d s\)",
                        str(report))
    assert report.to_dict()["pruned"] == [f"{db}.gone", f"{db}.old"]
    # nothing left to prune: a second run drops nothing
    again = register_views(spark, mine, db, prune=True)
    assert again.pruned == [] and again.unchanged == [f"{db}.keep", f"{db}.new"]


def test_prune_never_drops_a_copy_whose_record_names_a_folder(spark, stores, databases, tmp_path):
    """A copy another engine's catalog took over keeping its properties (as Iceberg's Hive catalog
    takes over a view record without its metadata file, giving it the view's folder) is left alone:
    the metastore would delete the folder with it."""
    db = databases()
    mine = stores("mine")
    for name in ("taken", "gone"):
        _view(mine, f"{db}.{name}")
    assert register_views(spark, mine, db).registered == [f"{db}.gone", f"{db}.taken"]
    folder = tmp_path / "taken"
    folder.mkdir()
    (folder / "00001-v.metadata.json").write_text("{}")
    _alter_record(spark, db, "taken", location=str(folder))
    for name in ("taken", "gone"):
        mine.drop_view(f"{db}.{name}")
    report = register_views(spark, mine, db, prune=True)
    assert report.ok and report.pruned == [f"{db}.gone"]
    assert _objects(spark, db) == {"taken": ("view", mine.store_id)}
    assert (folder / "00001-v.metadata.json").read_text() == "{}"


def test_prune_searches_the_namespace_given_or_every_database(spark, stores, databases):
    first, second = databases(), databases()
    mine, other = stores("mine"), stores("other")
    for db in (first, second):
        _view(mine, f"{db}.v")
        _view(mine, f"{db}.w")
    _view(other, f"{first}.o")
    assert register_views(spark, mine).ok and register_views(spark, other).ok
    for db in (first, second):
        mine.drop_view(f"{db}.v")
    assert register_views(spark, mine, first, prune=True).pruned == [f"{first}.v"]
    assert _objects(spark, second) == {"v": ("view", mine.store_id), "w": ("view", mine.store_id)}  # outside it
    mine.drop_view(f"{first}.w")
    mine.drop_view(f"{second}.w")
    # a namespace of two parts is no database of the session: not even its first part is searched
    assert register_views(spark, mine, f"{first}.inner", prune=True).pruned == []
    assert _objects(spark, first) == {"w": ("view", mine.store_id), "o": ("view", other.store_id)}
    # the store holds no view now: every database of the session catalog is searched all the same
    report = register_views(spark, mine, prune=True)
    assert report.registered == [] and report.pruned == sorted([f"{first}.w", f"{second}.v", f"{second}.w"])
    assert _objects(spark, first) == {"o": ("view", other.store_id)} and _objects(spark, second) == {}
    assert register_views(spark, mine, "no_such_database", prune=True).pruned == []
    assert register_views(spark, mine, "two.parts", prune=True).pruned == []  # no database of the session


def test_prune_drops_the_copy_of_a_view_left_without_sql_in_the_dialect(spark, stores, databases):
    db = databases()
    mine = stores("mine")
    _view(mine, f"{db}.v")
    _view(mine, f"{db}.w")
    assert register_views(spark, mine, db).ok
    mine.alter_view(f"{db}.v", ViewChange.add_representation(SQLRepresentation("trino", "SELECT 1 AS x")))
    mine.alter_view(f"{db}.v", ViewChange.remove_representation("spark"))
    report = register_views(spark, mine, db, prune=True)
    assert [(s.identifier, s.reason) for s in report.skipped] == [(f"{db}.v", "no-representation")]
    assert report.pruned == [f"{db}.v"] and set(_objects(spark, db)) == {"w"}
    # registering another dialect prunes the copies of views without it, as it says
    assert register_views(spark, mine, db, dialect="trino", prune=True).pruned == [f"{db}.w"]


def test_a_view_that_fails_to_register_keeps_its_copy(spark, stores, databases):
    db = databases()
    mine = stores("mine")
    spark.sql(f"CREATE DATABASE {db}")
    spark.sql(f"CREATE TABLE {db}.src (x INT) USING parquet")
    _view(mine, f"{db}.v", f"SELECT x FROM {db}.src")
    assert register_views(spark, mine, db).ok
    mine.alter_view(f"{db}.v", ViewChange.update_representation("spark", f"SELECT x FROM {db}.missing"))
    report = register_views(spark, mine, db, prune=True)
    assert [(f.identifier, f.condition, f.action) for f in report.failed] == [
        (f"{db}.v", "TABLE_OR_VIEW_NOT_FOUND", "register")]
    assert report.pruned == [] and _objects(spark, db)["v"] == ("view", mine.store_id)  # the store still holds it


def test_a_copy_spark_will_not_drop_is_reported_not_raised(spark, stores, databases):
    """Another client puts a table under the stale copy's name just after pruning read the copy
    again (the moment that read returns, which a profile hook watches: nothing but the read comes
    between it and the DROP): Spark refuses DROP VIEW of a table, and the refusal is reported."""
    import sys

    import viewstore.spark.register as register

    db = databases()
    mine = stores("mine")
    _view(mine, f"{db}.gone")
    _view(mine, f"{db}.kept")
    assert register_views(spark, mine, db).ok
    mine.drop_view(f"{db}.gone")
    replaced = []

    def read_again_then_replaced(frame, event, arg):
        if event == "return" and frame.f_code is register._session_views.__code__ and not replaced and \
                frame.f_locals.get("names") == ["gone"]:
            spark.sql(f"DROP VIEW {db}.gone")
            spark.sql(f"CREATE TABLE {db}.gone (x INT) USING parquet")
            replaced.append(True)

    sys.setprofile(read_again_then_replaced)
    try:
        report = register_views(spark, mine, db, prune=True)
    finally:
        sys.setprofile(None)
    assert replaced == [True]
    assert not report.ok and report.pruned == [] and report.registered == [f"{db}.kept"]
    (failure,) = report.failed
    refused = (f"[WRONG_COMMAND_FOR_OBJECT_TYPE] The operation DROP VIEW requires a VIEW or METRIC_VIEW. But "
               f"spark_catalog.{db}.gone is a MANAGED. Use DROP TABLE instead. SQLSTATE: 42809")
    assert (failure.identifier, failure.action, failure.condition, failure.message) == (
        f"{db}.gone", "prune", "WRONG_COMMAND_FOR_OBJECT_TYPE", refused)
    with pytest.raises(ValidationError) as raised:
        report.raise_for_failures()
    # Spark's condition once: its message starts with it
    assert str(raised.value) == f"1 stale copy(ies) could not be pruned:\n{db}.gone: (prune) {refused}"
    assert _objects(spark, db) == {"gone": ("managed", None), "kept": ("view", mine.store_id)}
    report = register_views(spark, mine, db, prune=True)  # the table is not the store's copy: left alone
    assert report.ok and report.pruned == [] and _objects(spark, db)["gone"] == ("managed", None)


def test_a_copy_another_store_takes_over_after_the_listing_survives(spark, stores, databases):
    """Each copy is read again right before its DROP: another driver may have registered its own
    since. Here it does so while the first stale copy of the listing is being dropped."""
    db = databases()
    mine, other = stores("mine"), stores("other")
    _view(mine, f"{db}.a")
    _view(mine, f"{db}.v")
    assert register_views(spark, mine, db).ok
    mine.drop_view(f"{db}.a")
    mine.drop_view(f"{db}.v")
    _view(other, f"{db}.v", "SELECT 2 AS x")
    takes_over = (f"CREATE OR REPLACE VIEW spark_catalog.{db}.v TBLPROPERTIES ('{STORE}' = '{other.store_id}') "
                  "AS SELECT 2 AS x")  # as the other driver's register_views makes it, between listing and DROP
    with _meanwhile(spark, "DropTablePreEvent", db, "a", takes_over) as seen:
        report = register_views(spark, mine, db, prune=True)
    assert seen == ["DropTablePreEvent", "DropTableEvent"]
    assert report.ok and report.pruned == [f"{db}.a"]
    assert _objects(spark, db) == {"v": ("view", other.store_id)}
    assert spark.sql(f"SELECT x FROM {db}.v").first().x == 2


def test_a_current_copy_of_an_earlier_release_is_left_alone_and_claimed_by_pruning(spark, stores, databases):
    db = databases()
    mine, twin = stores("mine"), stores("twin")
    spark.sql(f"CREATE DATABASE {db}")
    spark.sql(f"CREATE TABLE {db}.src (x INT) USING parquet")
    _view(mine, f"{db}.v", f"SELECT x FROM {db}.src")
    assert register_views(spark, mine, db).ok
    spark.sql(f"ALTER VIEW {db}.v UNSET TBLPROPERTIES ('{STORE}')")  # as a release before store ids left it
    legacy = _view_properties(spark, db, "v")
    spark.sql(f"DROP TABLE {db}.src")  # making the copy again would fail now: its table is gone
    report = register_views(spark, mine, db)  # without prune: exactly as before store ids
    assert report.ok and report.unchanged == [f"{db}.v"], report.failed
    assert _view_properties(spark, db, "v") == legacy
    report = register_views(spark, mine, db, prune=True)  # the copy becomes this store's, not made again
    assert report.ok and report.unchanged == [f"{db}.v"] and report.pruned == [], report.failed
    claimed = _view_properties(spark, db, "v")
    assert claimed.pop(STORE) == mine.store_id and claimed.pop("transient_lastDdlTime")
    assert claimed == {k: v for k, v in legacy.items() if k != "transient_lastDdlTime"}  # the fingerprint too
    # another store with the very same definition: left alone, or claimed the same way when pruning
    _view(twin, f"{db}.v", f"SELECT x FROM {db}.src")
    assert register_views(spark, twin, db).unchanged == [f"{db}.v"]
    assert _objects(spark, db)["v"] == ("view", mine.store_id)
    assert register_views(spark, twin, db, prune=True).unchanged == [f"{db}.v"]
    assert _objects(spark, db)["v"] == ("view", twin.store_id)
    mine.drop_view(f"{db}.v")
    assert register_views(spark, mine, db, prune=True).pruned == []  # no longer this store's copy


def test_a_copy_spark_will_not_give_the_store_id_is_made_again(spark, stores, databases):
    """It is not counted unchanged while it lacks the id: it is made again, with it. Here Spark
    refuses the ALTER that gives the id, as another client drops the copy meanwhile."""
    db = databases()
    mine = stores("mine")
    _view(mine, f"{db}.v")
    assert register_views(spark, mine, db).ok
    spark.sql(f"ALTER VIEW {db}.v UNSET TBLPROPERTIES ('{STORE}')")  # as a release before store ids left it
    with _meanwhile(spark, "AlterTablePreEvent", db, "v", f"DROP VIEW spark_catalog.{db}.v") as seen:
        report = register_views(spark, mine, db, prune=True)
    # the ALTER never happened (no AlterTableEvent); the copy was made again
    assert seen == ["AlterTablePreEvent", "DropTablePreEvent", "DropTableEvent", "CreateTablePreEvent",
                    "CreateTableEvent"]
    assert report.ok and report.registered == [f"{db}.v"] and report.unchanged == [], report.failed
    assert _objects(spark, db) == {"v": ("view", mine.store_id)}


def _view_properties(spark, db, name):
    table = spark._jsparkSession.sharedState().externalCatalog().getTable(db, name)
    props = spark._jvm.scala.jdk.javaapi.CollectionConverters.asJava(table.properties())
    return {str(k): str(props.get(k)) for k in props.keySet()}


def test_registering_a_file_made_before_ids_writes_nothing_without_prune(spark, stores, databases, tmp_path):
    """A store that cannot be written (here: another process holds the write lock) still registers;
    its copies carry no id until a pruning run, which needs the id, claims them."""
    import sqlite3

    db = databases()
    old = stores("old")
    _view(old, f"{db}.v")
    old.close()
    conn = sqlite3.connect(tmp_path / "old.db")
    conn.execute("DELETE FROM meta WHERE key = 'store_id'")
    conn.commit()
    holder = sqlite3.connect(tmp_path / "old.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        store = stores("old")
        assert store.existing_store_id() is None
        report = register_views(spark, store, db)
        assert report.registered == [f"{db}.v"] and _objects(spark, db) == {"v": ("view", None)}
        assert conn.execute("SELECT count(*) FROM meta WHERE key = 'store_id'").fetchone() == (0,)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    register_views(spark, store, db, prune=True)
    assert store.existing_store_id() is not None
    assert _objects(spark, db) == {"v": ("view", store.store_id)}  # claimed
    conn.close()


def test_sql_gives_its_copies_the_store_id(spark, stores, databases):
    from viewstore.spark import sql

    db = databases()
    mine = stores("mine")
    sql(spark, mine, f"CREATE VIEW {db}.v AS SELECT 1 AS x")
    sql(spark, mine, f"ALTER VIEW {db}.v WITH SCHEMA BINDING")
    sql(spark, mine, f"ALTER VIEW {db}.v RENAME TO w")
    assert _objects(spark, db) == {"w": ("view", mine.store_id)}
    sql(spark, mine, f"ALTER VIEW {db}.w SET TBLPROPERTIES ('{STORE}' = 'forged')")
    assert _objects(spark, db) == {"w": ("view", mine.store_id)}  # not a key a session copy takes from the store
    spark.sql(f"DROP VIEW {db}.w")  # gone from the session only
    mine.rename_view(f"{db}.w", f"{db}.z")
    assert register_views(spark, mine, db, prune=True).registered == [f"{db}.z"]
    assert _objects(spark, db) == {"z": ("view", mine.store_id)}  # the stored 'forged' key does not reach it


def test_prune_must_be_a_flag(spark, stores):
    mine = stores("mine")
    for value in ("yes", 1, None):
        with pytest.raises(ValidationError, match="prune must be True or False"):
            register_views(spark, mine, prune=value)


def test_spark_register_command_prunes_and_says_so(spark, stores, databases):
    from viewstore.cli import main

    db = databases()
    mine = stores("mine")
    _view(mine, f"{db}.v")
    _view(mine, f"{db}.w")
    runner = CliRunner()
    result = runner.invoke(main, ["--db", str(mine.path), "spark", "register", db, "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["registered"] == [f"{db}.v", f"{db}.w"]
    mine.drop_view(f"{db}.v")
    result = runner.invoke(main, ["--db", str(mine.path), "spark", "register", db, "--json"])
    assert result.exit_code == 0 and json.loads(result.output)["pruned"] == []
    result = runner.invoke(main, ["--db", str(mine.path), "spark", "register", db, "--prune", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["pruned"] == [f"{db}.v"] and report["unchanged"] == [f"{db}.w"] and report["ok"] is True
    assert set(_objects(spark, db)) == {"w"}
    mine.drop_view(f"{db}.w")
    text = runner.invoke(main, ["--db", str(mine.path), "spark", "register", db, "--prune"],
                         env={"COLUMNS": "200"})
    assert text.exit_code == 0 and "pruned 1" in text.output and f"{db}.w" in text.output, text.output


def test_sql_makes_a_store_id_only_for_view_ddl_the_store_takes(spark, stores, databases, tmp_path):
    """A file made before store ids gets its id from sql() only when a session copy is made for the
    store: DDL that goes to Spark (a temporary view, a view the store does not hold), a statement
    Spark refuses and a property or rename change the store refuses write nothing, so they work on
    a file that cannot be written."""
    import sqlite3

    from viewstore.spark import sql

    db = databases()
    stores("old").close()
    conn = sqlite3.connect(tmp_path / "old.db")
    conn.execute("DELETE FROM meta WHERE key = 'store_id'")
    conn.commit()
    conn.close()
    old = stores("old")
    spark.sql(f"CREATE DATABASE {db}")
    spark.sql(f"CREATE VIEW {db}.hand_made AS SELECT 1 AS x")
    spark.sql(f"CREATE TEMPORARY VIEW {db}_temp AS SELECT 1 AS x")
    sql(spark, old, f"ALTER VIEW {db}.hand_made SET TBLPROPERTIES ('k' = 'v')")
    sql(spark, old, f"ALTER VIEW {db}_temp AS SELECT 2 AS x")
    sql(spark, old, f"DROP VIEW {db}_temp")
    sql(spark, old, f"DROP VIEW IF EXISTS {db}.nothing")
    with pytest.raises(ValidationError, match="TABLE_OR_VIEW_NOT_FOUND"):
        sql(spark, old, f"CREATE VIEW {db}.v AS SELECT * FROM {db}.missing")
    assert old.existing_store_id() is None and old.event_count() == 0
    assert _view_properties(spark, db, "hand_made")["k"] == "v"
    _view(old, f"{db}.s")  # a stored view: changes the store refuses make no id either
    with pytest.raises(ValidationError, match="version.history.num-entries"):
        sql(spark, old, f"ALTER VIEW {db}.s SET TBLPROPERTIES ('version.history.num-entries' = 'many')")
    with pytest.raises(ValidationError, match="RENAME_TABLE_SOURCE_DESTINATION_DATABASE_MISMATCH"):
        sql(spark, old, f"ALTER VIEW {db}.s RENAME TO other_{db}.s")
    assert old.existing_store_id() is None and old.event_count() == 1
    sql(spark, old, f"CREATE VIEW {db}.v AS SELECT 1 AS x")
    assert old.existing_store_id() is not None
    assert _objects(spark, db)["v"] == ("view", old.store_id)
