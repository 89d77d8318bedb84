"""Raw Hive-metastore records through a Hive-enabled SparkSession, and importing a database's views.

A SparkSession built with ``enableHiveSupport()`` talks to a real Hive metastore (an embedded Derby
one by default). Spark's own catalog API shows views as Spark understands them; the codecs of
:mod:`viewstore.formats` need the record as the metastore keeps it, whichever engine wrote it.
:func:`read_metastore_table` reads that raw record (the Thrift ``Table`` behind Spark's Hive
client) and returns it as the dict the codecs take::

    record = read_metastore_table(spark, "sales", "daily_orders")
    engine, definition = viewstore.formats.definition_from_table(record)

    report = import_metastore_views(spark, store, "sales")   # every view of the database
    print(report)  # imported 12, skipped 3, failed 1 (0.40 s)

The record is serialized to JSON inside the JVM and parsed once in Python, so reading it costs
one py4j round trip, not one per field. Only classic PySpark (py4j) sessions can do this; Spark
Connect clients have no JVM to ask.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping
from typing import Any, Callable, cast

from pyspark.sql import SparkSession

from .. import formats
from ..catalog import ViewStore, check_progress
from ..errors import EngineError, NoSuchViewError, ValidationError, ViewAlreadyExistsError
from ..formats.base import VIRTUAL_VIEW, hive_columns, parameters_of, string_map, text_of
from ..hms import FailedRecord, HmsImportReport
from ..model import normalize_name
from .failures import ENGINE_ERRORS, SPARK_ERRORS, Progress, condition, embedded_derby, engine_calls, engine_error, \
    environment_failure, raise_engine_failure, require_live, summary

__all__ = ["read_metastore_table", "write_metastore_table", "import_metastore_views", "record_from_thrift_json",
           "METASTORE_SET"]

_HIVE_CATALOG = "org.apache.spark.sql.hive.HiveExternalCatalog"


def _hive_client(spark: SparkSession, *, writes: bool = False) -> Any:
    """The Hive client of the session's metastore (Spark's ``HiveClientImpl``, through py4j).

    Args:
        writes: the caller writes to the metastore (its errors say so), rather than reads it.

    Raises:
        ValidationError: not a classic PySpark session, or Hive support is not enabled.
        EngineError: the engine failed (a stopped session, a lost JVM, a metastore that does not answer).
    """
    jsession = getattr(spark, "_jsparkSession", None)
    if jsession is None:
        raise ValidationError(f"{'writing to' if writes else 'reading'} the Hive metastore needs a classic "
                              "PySpark session (py4j); Spark Connect clients have no JVM to ask")
    try:
        catalog = jsession.sharedState().externalCatalog().unwrapped()
        hive = catalog.getClass().getName() == _HIVE_CATALOG
        client = catalog.client() if hive else None
    except ENGINE_ERRORS as error:
        raise engine_error(spark, error, "write to the metastore" if writes else "read the metastore") from error
    if client is None:
        raise ValidationError("the SparkSession has no Hive metastore: build it with "
                              "SparkSession.builder.enableHiveSupport()")
    return client


def _no_database(client: Any, database: str, *, writes: bool = False) -> NoSuchViewError:
    """The error for a database the metastore lacks. It names the metastore that was asked and its
    warehouse (:func:`metastore_named`), since a database that seems missing is often one of another
    metastore (a session built without the intended settings starts an empty embedded one), and says
    what to do: for a read, how to list what it holds; for a write, how to create the database.

    Raises:
        What py4j raises (the caller turns it into an EngineError).
    """
    where = metastore_named(*(str(client.getConf(key, "") or "") for key in (
        "hive.metastore.uris", "javax.jdo.option.ConnectionURL", "hive.metastore.warehouse.dir")))
    if writes:
        return NoSuchViewError(f"no database {database} in {where}: create it first (CREATE DATABASE {database} "
                               "in a Spark session with Hive support and the same settings)")
    return NoSuchViewError(f"no database {database} in {where}; SHOW DATABASES in a Spark session with Hive "
                           "support and the same settings lists those it holds")


def metastore_named(uris: str, url: str, warehouse: str) -> str:
    """A metastore as a message names it, from its Hive settings: a remote one by its URIs, else by
    its own database (an embedded Derby one by its folder, or as one in memory or read-only, see
    :class:`~viewstore.spark.failures.DerbyDatabase`; another by its JDBC address, without the
    user, password or options its URL may carry), then its warehouse, if set."""
    derby = embedded_derby(uris, url)
    if uris.strip():
        where = f"the metastore at {uris}"
    else:
        where = f"the embedded Derby metastore {derby}" if derby is not None else f"the metastore in {_address(url)}"
    return f"{where} (warehouse {warehouse})" if warehouse else where


#: a JDBC address up to its options: a quoted password (quoted text before an @) whole, else up to
#: the first ? or ; (a quote elsewhere quotes no ? or ;, lest options with a password be shown)
_BEFORE_OPTIONS = re.compile(r'(?:"[^"]*"(?=@)|[^?;])*')


def _address(url: str) -> str:
    """A JDBC address as a message shows it: without its options (after ``?`` or ``;``) and without a
    user and password before the last ``@``, written ``//user:password@host`` (kept as the driver's
    prefix, ``//`` and the host) or, in Oracle's form, ``user/password@host`` (kept as the driver's
    prefix, then ``@host``). A quoted password (``user/"p;ss"@host``) may hold a ``?`` or a ``;``:
    only one outside quotes begins the options. An ``@`` with neither ``//`` nor Oracle's form
    before it (``jdbc:h2:/data/a@b/db``) is part of a path: the address is shown whole."""
    before = _BEFORE_OPTIONS.match(url)
    assert before is not None  # (a pattern that can match nothing matches every text)
    address = before.group(0)
    head, at, host = address.rpartition("@")  # the last @: a password given unencoded may hold one
    # only an authority (after //) or Oracle's form carries a user and password before an @
    if at and ("//" in head or re.match(r"jdbc:oracle:", head)):
        prefix = re.match(r"(?:jdbc:(?:[A-Za-z0-9]+:)*)?(//)?", head)
        assert prefix is not None  # (a pattern that can match nothing matches every text)
        # after //, the host alone (a / in the password is no end of the host)
        address = prefix.group(0) + (host if prefix.group(1) else f"@{host}")
    return address


def _column(col: Any) -> dict[str, Any]:
    return {"name": col.get("name"), "type": col.get("type"), "comment": col.get("comment")}


def record_from_thrift_json(raw: dict[str, Any]) -> dict[str, Any]:
    """The codecs' record shape from a Thrift ``Table`` serialized as simple JSON.

    Thrift leaves out unset fields (a column without comment, a view without location); here
    they are present as None, as in the records :func:`viewstore.formats.encode` writes.
    """
    sd = raw.get("sd") or {}
    serde = sd.get("serdeInfo") or {}
    return {
        "dbName": raw.get("dbName"),
        "tableName": raw.get("tableName"),
        "owner": raw.get("owner"),
        "createTime": raw.get("createTime"),
        "lastAccessTime": raw.get("lastAccessTime"),
        "tableType": raw.get("tableType"),
        "parameters": dict(raw.get("parameters") or {}),
        "sd": {
            "cols": [_column(c) for c in sd.get("cols") or []],
            "location": sd.get("location"),
            "inputFormat": sd.get("inputFormat"),
            "outputFormat": sd.get("outputFormat"),
            "serdeInfo": {"serializationLib": serde.get("serializationLib"),
                          "parameters": dict(serde.get("parameters") or {})},
        },
        "partitionKeys": [_column(c) for c in raw.get("partitionKeys") or []],
        "viewOriginalText": raw.get("viewOriginalText"),
        "viewExpandedText": raw.get("viewExpandedText"),
    }


def _read(spark: SparkSession, client: Any, database: str, name: str) -> dict[str, Any]:
    """The record; raises NoSuchViewError, or what Spark and py4j raise (see :mod:`viewstore.spark.failures`)."""
    found = client.getRawHiveTableOption(database, name)
    if not found.isDefined():
        raise NoSuchViewError(f"no table or view {database}.{name} in the metastore")
    # pyspark types _jvm Optional (a Spark Connect session has none); this one is a classic session
    jvm = cast(Any, spark._jvm)  # noqa: SLF001 - the classic (py4j) session is the only way to the metastore
    serializer = jvm.org.apache.thrift.TSerializer(jvm.org.apache.thrift.protocol.TSimpleJSONProtocol.Factory())
    return record_from_thrift_json(json.loads(serializer.toString(found.get().rawTable().getTTable())))


def read_metastore_table(spark: SparkSession, database: str, name: str) -> dict[str, Any]:
    """The raw metastore record of a table or view, as the dict :mod:`viewstore.formats` decodes.

    Args:
        spark: a classic PySpark session with Hive support.
        database: the metastore database.
        name: the table or view name (the metastore compares names case-insensitively).

    Returns:
        ``dbName``, ``tableName``, ``owner``, ``createTime``, ``lastAccessTime`` (seconds),
        ``tableType``, ``parameters``, ``sd`` (``cols`` as name/type/comment, ``location``,
        ``inputFormat``, ``outputFormat``, ``serdeInfo``), ``partitionKeys``, ``viewOriginalText``
        and ``viewExpandedText``, exactly as the metastore keeps them.

    Raises:
        ValidationError: not a classic session with Hive support, or a bad database or name.
        NoSuchViewError: the metastore has no such database (``no database ...``), or no such
            table or view in it (``no table or view ...``).
        EngineError: the engine failed (a stopped session, a lost JVM, a metastore that does not
            answer or cannot serve the record); the message has the explanation.
    """
    database = normalize_name(database, "database")
    name = normalize_name(name, "table name")
    require_live(spark, f"read {database}.{name} from the metastore")  # a stopped session's client still answers
    client = _hive_client(spark)
    try:
        if not client.databaseExists(database):  # said as import_metastore_views says it
            raise _no_database(client, database)
        return _read(spark, client, database, name)
    except ENGINE_ERRORS as error:
        raise engine_error(spark, error, f"read {database}.{name} from the metastore") from error


def _import_table(spark: SparkSession, client: Any, store: ViewStore | Callable[[], ViewStore],
                  report: HmsImportReport, database: str, name: str) -> None:
    """Import one table of the database's listing into ``report`` (see :func:`import_metastore_views`).

    Raises:
        EngineError: the engine failed (not this record's failure: the others would fail the same way).
    """
    qualified = f"{database}.{name}"
    try:
        record = _read(spark, client, database, name)
    except NoSuchViewError as error:  # dropped meanwhile
        report.failed.append(FailedRecord(qualified, type(error).__name__, str(error), qualified))
        return
    except ENGINE_ERRORS as error:
        what = f"read {qualified} from the metastore"
        reason = environment_failure(spark, error)
        if reason is not None:  # not this record's: the others would fail the same way
            done = f" (before that: {len(report.imported)} view(s) imported; importing again picks up the rest)"
            raise EngineError(f"cannot {what}: {reason}{done if report.imported else ''}") from error
        report.failed.append(FailedRecord(qualified, EngineError.__name__, str(engine_error(spark, error, what)),
                                          qualified))
        return
    report.import_one(store, qualified, record)  # skips tables and materialized views


@engine_calls("import the metastore's views")
def import_metastore_views(spark: SparkSession, store: ViewStore | Callable[[], ViewStore], database: str, *,
                           progress: Callable[[int, int], None] | None = None) -> HmsImportReport:
    """Import every view of a metastore database into the store, as ``database.view``.

    Each view is read raw (:func:`read_metastore_table`) and recorded with
    :meth:`~viewstore.catalog.ViewStore.import_hms`, whichever engine wrote it (Spark, Hive,
    Trino, Flink; an Iceberg view's metadata file is read from its local location). Each view is
    its own transaction: a view that cannot be read or decoded is reported in ``failed`` with the
    reason and the others are still imported, so a failure never leaves half a database behind
    unreported. Tables (and Hive materialized views) are ``skipped`` as ``not-a-view``; a view
    already in the store is ``skipped`` as ``exists``, so running the import again picks up only
    new views. If the engine itself fails partway (the metastore stops answering), the import
    stops with EngineError; the views imported before stay, and running it again picks up the rest.

    Args:
        spark: a classic PySpark session with Hive support.
        store: where to record the views, or a function that returns it (the same store each
            time), called only when a view is about to be recorded: a missing database, or one
            with no view to import, then starts no store file (the command line's ``viewstore
            spark import`` passes one).
        database: the metastore database.
        progress: called as ``progress(done, total)`` as the database's tables are read: ``total``
            is the number of tables and views the metastore lists in it, ``done`` how many of them
            are imported, skipped or failed; it grows with each call, and the last call has ``done
            == total`` (no call for an empty database). It runs in the calling thread, between two
            tables; an exception it raises stops the import there and reaches the caller unchanged
            (the views imported before stay, each its own transaction).

    Returns:
        The report: ``imported``, ``skipped``, ``failed`` (see :class:`~viewstore.hms.HmsImportReport`;
        ``raise_for_failures()`` turns failures into an error for pipelines).

    Raises:
        ValidationError: not a classic session with Hive support, a bad database name,
            ``store`` is neither a ViewStore nor callable, or ``progress`` is not callable.
        NoSuchViewError: the metastore has no such database (the message names the metastore
            asked and how to list its databases).
        EngineError: the engine failed (a stopped session, a lost JVM, a metastore that does not
            answer), before or while the views are read.
    """
    started = time.perf_counter()
    database = normalize_name(database, "database")
    if not isinstance(store, ViewStore) and not callable(store):
        raise ValidationError(f"store must be a ViewStore or a function returning one, not {type(store).__name__}")
    check_progress(progress)
    require_live(spark, f"import the views of {database}")  # a stopped session's Hive client still answers
    client = _hive_client(spark)
    try:
        if not client.databaseExists(database):
            raise _no_database(client, database)
        converters = cast(Any, spark._jvm).scala.jdk.javaapi.CollectionConverters  # noqa: SLF001 - as in _read
        names = sorted(str(n) for n in converters.asJava(client.listTables(database)))
    except ENGINE_ERRORS as error:
        raise engine_error(spark, error, f"list the database {database} in the metastore") from error
    report = HmsImportReport()
    done = Progress(progress, len(names))
    for name in names:
        _import_table(spark, client, store, report, database, name)
        done.advance()
    report.seconds = time.perf_counter() - started
    return report



#: what the metastore sets itself on a table it creates (read back beside the written record)
METASTORE_SET = ("createTime", "lastAccessTime", "parameters.transient_lastDdlTime")


def _checked_record(record: Any) -> dict[str, Any]:
    """The record's fields checked for the metastore (see :func:`write_metastore_table`), names normalized.

    Raises:
        ValidationError: a field has the wrong type, or :mod:`viewstore.formats` rejects the record.
    """
    if not isinstance(record, Mapping):
        raise ValidationError(f"record: an HMS table record must be a dict, not {type(record).__name__}")
    sd = record.get("sd") or {}
    if not isinstance(sd, Mapping):
        raise ValidationError(f"sd: must be a dict, not {type(sd).__name__}")
    serde = sd.get("serdeInfo") or {}
    if not isinstance(serde, Mapping):
        raise ValidationError(f"sd.serdeInfo: must be a dict, not {type(serde).__name__}")
    checked: dict[str, Any] = {
        "dbName": normalize_name(record.get("dbName"), "database (dbName)"),
        "tableName": normalize_name(record.get("tableName"), "table name (tableName)"),
        "parameters": parameters_of(record),
        "cols": hive_columns(sd.get("cols"), "sd.cols"),
        "partitionKeys": hive_columns(record.get("partitionKeys"), "partitionKeys"),
        "serializationLib": text_of(serde, "serializationLib", "sd.serdeInfo.serializationLib"),
        "serdeParameters": string_map(serde.get("parameters"), "sd.serdeInfo.parameters"),
    }
    for key in ("owner", "tableType", "viewOriginalText", "viewExpandedText"):
        checked[key] = text_of(record, key)
    for key in ("location", "inputFormat", "outputFormat"):
        checked[key] = text_of(sd, key, f"sd.{key}")
    if checked["location"]:  # Trino's "" names no folder
        raise ValidationError(f"sd.location: a view's record must name no folder, not {checked['location']!r}: "
                              "the metastore deletes the folder at a view's location when the view is dropped "
                              "(Spark, Hive and Flink write no location, Trino an empty one)")
    engine = formats.detect(record)  # a view record, of an engine that would accept it
    if engine == "iceberg":  # its definition is in the metadata file, which the codec cannot read
        if not checked["parameters"].get("metadata_location"):
            raise ValidationError("parameters.metadata_location: an Iceberg view in HMS must name its metadata file")
    else:
        formats.decode(record)
    return checked


def _thrift_table(spark: SparkSession, checked: dict[str, Any]) -> Any:
    """The metastore's Thrift ``Table`` for a checked record (py4j objects, nothing written)."""
    jvm = cast(Any, spark._jvm)  # noqa: SLF001 - as in _read
    api = jvm.org.apache.hadoop.hive.metastore.api

    def jmap(values: dict[str, str]) -> Any:
        result = jvm.java.util.HashMap()
        for key, value in values.items():
            result.put(key, value)
        return result

    def jcolumns(columns: list[tuple[str, str, str | None]]) -> Any:
        result = jvm.java.util.ArrayList()
        for name, type_, comment in columns:
            result.add(api.FieldSchema(name, type_, comment))
        return result

    serde = api.SerDeInfo()
    if checked["serializationLib"] is not None:
        serde.setSerializationLib(checked["serializationLib"])
    serde.setParameters(jmap(checked["serdeParameters"]))
    sd = api.StorageDescriptor()
    sd.setCols(jcolumns(checked["cols"]))
    sd.setSerdeInfo(serde)
    # no location: a record's is none or "" (Trino's), which stays unset, as Hive 2.3's metastore cannot
    # drop a table whose location is ""
    for key, setter in (("inputFormat", sd.setInputFormat), ("outputFormat", sd.setOutputFormat)):
        if checked[key] is not None:
            setter(checked[key])
    table = api.Table()
    table.setDbName(checked["dbName"])
    table.setTableName(checked["tableName"])
    if checked["owner"] is not None:
        table.setOwner(checked["owner"])
    table.setTableType(checked["tableType"])
    table.setParameters(jmap(checked["parameters"]))
    table.setSd(sd)
    table.setPartitionKeys(jcolumns(checked["partitionKeys"]))
    for key, setter in (("viewOriginalText", table.setViewOriginalText),
                        ("viewExpandedText", table.setViewExpandedText)):
        if checked[key] is not None:
            setter(checked[key])
    return table


def write_metastore_table(spark: SparkSession, record: Mapping[str, Any], *, replace: bool = False) -> None:
    """Write a view record into the session's Hive metastore exactly as given.

    ``record`` is the dict :func:`read_metastore_table` returns and :func:`viewstore.formats.encode`
    (or :meth:`~viewstore.catalog.ViewStore.export_hms`) makes: its ``tableType``, ``parameters``,
    ``owner``, ``viewOriginalText``, ``viewExpandedText``, ``sd`` (``cols`` as name/type/comment,
    ``inputFormat``, ``outputFormat``, ``serdeInfo``) and ``partitionKeys`` reach the metastore as
    they are, through the session's own Hive client (not Spark's catalog, which would add its own
    parameters), so each engine finds the view as it writes it. The metastore sets ``createTime``,
    ``lastAccessTime`` and the parameter ``transient_lastDdlTime`` itself (:data:`METASTORE_SET`).
    A view's record names no folder: when a view is dropped with its data, as Spark's ``DROP VIEW``
    and ``DROP DATABASE ... CASCADE`` drop it, the metastore deletes the folder at its
    ``sd.location``, so a record whose location is not empty is refused. An empty one (Trino's) is
    left unset, as Hive 2.3's metastore cannot drop a table whose location is empty; Spark, Hive
    and Flink write none.

    Args:
        spark: a classic PySpark session with Hive support.
        record: the view's record; ``dbName`` and ``tableName`` name it (case-insensitively).
        replace: replace a view of that name (one metastore call: the old record or the new one,
            never neither). A table is never replaced.

    Raises:
        ValidationError: not a classic session with Hive support; a record that is malformed,
            names a folder as its ``sd.location``, or that :func:`viewstore.formats.detect` and
            :func:`~viewstore.formats.decode` reject (an Iceberg view's must name its metadata
            file); a table of that name (even with
            ``replace``); or the metastore refuses the record.
        NoSuchViewError: the metastore has no such database.
        ViewAlreadyExistsError: a view of that name exists and ``replace`` is false.
        EngineError: the engine failed (a stopped session, a lost JVM, a metastore that does not answer).

    Nothing is written unless the call succeeds.
    """
    checked = _checked_record(record)
    if not isinstance(replace, bool):
        raise ValidationError(f"replace must be True or False, not {type(replace).__name__}")
    database, name = checked["dbName"], checked["tableName"]
    what = f"write {database}.{name} to the metastore"
    taken = f"a view {database}.{name} exists in the metastore (replace=True replaces it)"
    require_live(spark, what)  # a stopped session's Hive client still answers: write nothing through it
    client = _hive_client(spark, writes=True)
    try:
        if not client.databaseExists(database):
            raise _no_database(client, database, writes=True)
        found = client.getRawHiveTableOption(database, name)
        existing = str(found.get().rawTable().getTableType()) if found.isDefined() else None
        if existing is not None and existing != VIRTUAL_VIEW:
            raise ValidationError(f"{database}.{name} is of type {existing} in the metastore, not a view: "
                                  "it is never replaced")
        if existing is not None and not replace:
            raise ViewAlreadyExistsError(taken)
        table = _thrift_table(spark, checked)
        metastore = client.client().getMSC()
        if existing is None:
            metastore.createTable(table)
        else:
            metastore.alter_table(database, name, table)
    except SPARK_ERRORS as error:
        raise_engine_failure(spark, error, what)
        refused = condition(error)
        if refused == "AlreadyExistsException":  # created meanwhile
            raise ViewAlreadyExistsError(taken) from error
        raise ValidationError(f"the metastore refused {database}.{name}: {summary(error)}") from error
    except ENGINE_ERRORS as error:
        raise engine_error(spark, error, what) from error
