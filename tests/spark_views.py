"""Helpers of the tests of viewstore.spark's calls (tests/spark/test_spark_session.py, register,
ddl, audit, drift): the orders table, fresh database names, views stored with Spark SQL, a
session view's metastore record read and changed behind Spark's back, the DDL turn held by
another thread, a store's write kept waiting for another connection's lock, and another client of
the metastore acting as the session's catalog is about to change."""

from __future__ import annotations

import threading
import uuid
from contextlib import contextmanager
from typing import Iterator

from viewstore import SQLRepresentation

ORDERS = """
CREATE TABLE {db}.orders USING parquet AS
SELECT * FROM VALUES
  (1L, DATE'2026-11-01', 'north', CAST(10.50 AS DECIMAL(10,2)), array(named_struct('sku', 'a', 'qty', 1)),
   map('channel', 'web'), TIMESTAMP'2026-11-01 09:00:00', TIMESTAMP_NTZ'2026-11-01 09:00:00'),
  (2L, DATE'2026-11-01', 'south', CAST(20.00 AS DECIMAL(10,2)), array(named_struct('sku', 'b', 'qty', 2)),
   map('channel', 'shop'), TIMESTAMP'2026-11-01 10:00:00', TIMESTAMP_NTZ'2026-11-01 10:00:00'),
  (3L, DATE'2026-11-02', 'north', CAST(30.25 AS DECIMAL(10,2)), array(named_struct('sku', 'a', 'qty', 3)),
   map('channel', 'web'), TIMESTAMP'2026-11-02 11:00:00', TIMESTAMP_NTZ'2026-11-02 11:00:00')
AS t(order_id, day, region, amount, items, attrs, placed_at, placed_local)
"""


def _name() -> str:
    return "t" + uuid.uuid4().hex[:10]


def _stored(store, ident, sql_text, namespace, columns=(), **kwargs):
    return store.create_view(ident, columns=list(columns), representations=[SQLRepresentation("spark", sql_text)],
                             default_namespace=namespace, **kwargs)


def _alter_record(spark, db, name, *, schema=None, text=None, location=None):
    """Change a view's metastore record behind Spark's back, as another engine (or damage) would."""
    client = spark._jsparkSession.sharedState().externalCatalog().unwrapped().client()
    record = client.getRawHiveTable(db, name).rawTable().getTTable()
    if schema is not None:
        record.getParameters().put("spark.sql.sources.schema", schema)
    if text is not None:
        record.setViewOriginalText(text)
        record.setViewExpandedText(text)
    if location is not None:
        record.getSd().setLocation(location)
    spark._jvm.org.apache.hadoop.hive.ql.metadata.Hive.get(client.conf()).getMSC().alter_table(db, name, record)


def _view_properties(spark, db, name):
    table = spark._jsparkSession.sharedState().externalCatalog().getTable(db, name)
    props = spark._jvm.scala.jdk.javaapi.CollectionConverters.asJava(table.properties())
    return {str(k): str(props.get(k)) for k in props.keySet()}


@contextmanager
def _ddl_turn_held_elsewhere() -> Iterator[None]:
    """Another thread holds viewstore.spark's DDL turn until the block ends."""
    import viewstore.spark.session as session

    holding, release = threading.Event(), threading.Event()

    def hold():
        with session._one_ddl_at_a_time():
            holding.set()
            release.wait(30)

    thread = threading.Thread(target=hold)
    thread.start()
    holding.wait(30)
    try:
        yield
    finally:
        release.set()
        thread.join(30)


@contextmanager
def _while_its_write_waits(store, then) -> Iterator[list[bool]]:
    """Inside the block, the first write of ``store`` waits for the write lock another connection
    holds (a ViewStore of its own on the file, in a thread of its own); once the write has waited
    (the store's lock_wait signal, about a second), the lock is let go and ``then()`` runs in the
    waiting thread, before the write goes on. Yields a list that holds True once ``then`` ran."""
    from viewstore import ViewStore, signals

    held, release, ran = threading.Event(), threading.Event(), []

    def hold():
        with ViewStore(store.path, actor="holder") as other, other.transaction():
            held.set()
            release.wait(60)

    def waited(sender, **kwargs):
        if not ran:
            ran.append(True)
            release.set()
            holding.join(60)
            then()

    holding = threading.Thread(target=hold)
    holding.start()
    assert held.wait(60)
    signals.lock_wait.connect(waited, sender=store)
    try:
        yield ran
    finally:
        signals.lock_wait.disconnect(waited, sender=store)
        release.set()
        holding.join(60)


@contextmanager
def _meanwhile(spark, event, db, name, then) -> Iterator[list[str]]:
    """Inside the block, as the session catalog is about to change the table ``db.name`` (or, with
    ``name`` None, the database ``db``), another client of the metastore does ``then()`` (a SQL
    statement, when it is text), once, at the first ``event`` (Spark's ExternalCatalogEvent class:
    ``DropTablePreEvent``, ``CreateDatabasePreEvent``...): the catalog calls its listeners in the
    thread making the change, before the change. Yields the kinds of the events on it seen."""
    from pyspark.java_gateway import ensure_callback_server_started

    seen: list[str] = []
    failed: list[Exception] = []

    class Listener:
        def onEvent(self, happened):  # noqa: N802 - the Java interface's name
            kind = str(happened.getClass().getSimpleName())
            if str(happened.database()) != db or (
                    "Database" not in kind if name is None else "Table" not in kind or str(happened.name()) != name):
                return
            seen.append(kind)
            if kind == event and seen.count(kind) == 1:
                try:
                    spark.sql(then) if isinstance(then, str) else then()
                except Exception as error:  # noqa: BLE001 - the catalog would only log it: asserted below
                    failed.append(error)

        class Java:
            implements = ["org.apache.spark.sql.catalyst.catalog.ExternalCatalogEventListener"]

    ensure_callback_server_started(spark.sparkContext._gateway)
    external = spark._jsparkSession.sharedState().externalCatalog()
    listener = Listener()
    external.addListener(listener)
    try:
        yield seen
    finally:
        external.removeListener(listener)
    assert failed == []
