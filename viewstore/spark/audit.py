"""The event log in Spark: :func:`events_dataframe`, a typed DataFrame moved from SQLite to Spark
through Arrow, and :func:`events_arrow`, the ``pyarrow.Table`` it is made from (of the schema
:data:`EVENTS_SCHEMA`). The log is read as :meth:`ViewStore.event_rows` reads it, with the filters
of :meth:`ViewStore.events`, a batch of rows at a time (all from one read snapshot): only Arrow's
columns and one batch of rows are held, not every row as a tuple.
"""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession

from ..catalog import EventTypes, TimeLike, ViewStore
from ..errors import CorruptLogError, EngineError, ValidationError, ViewStoreError, _held
from ..log import EVENT_COLUMNS
from ..model import IdentifierLike
from .failures import engine_calls, require_live
from .session import _check_args

__all__ = [
    "events_dataframe",
]


# -- events_dataframe ------------------------------------------------------------------------------

#: the DataFrame's columns: (name, Arrow type, column of the log's ``events`` table)
_EVENT_FIELDS = (
    ("position", pa.int64(), "position"),
    ("view", pa.string(), "identifier"),
    ("view_id", pa.string(), "view_id"),
    ("stream_version", pa.int64(), "stream_version"),
    ("type", pa.string(), "type"),
    ("actor", pa.string(), "actor"),
    ("occurred_at", pa.timestamp("ms", tz="UTC"), "occurred_at"),
    ("commit_id", pa.string(), "commit_id"),
    ("payload", pa.string(), "payload"),
)

EVENTS_SCHEMA = pa.schema([pa.field(name, kind, nullable=False) for name, kind, _ in _EVENT_FIELDS])


def events_arrow(store: ViewStore, *, view: IdentifierLike | None = None, actor: str | None = None,
                 since: TimeLike | None = None, until: TimeLike | None = None, types: EventTypes | None = None,
                 limit: int | None = None, newest_first: bool = False, since_position: int | None = None,
                 until_position: int | None = None) -> pa.Table:
    """The event log (filtered and ordered as :meth:`ViewStore.events` does) as a ``pyarrow.Table``.

    Raises:
        NoSuchViewError: ``view`` names no view that ever had that identifier.
        ValidationError: not a ViewStore; a bad identifier, time, type, limit or position.
        CorruptLogError: an event's row holds what the library never writes there (a time or stream
            version that is no integer, a text column that is no text), named by its position, as
            :meth:`ViewStore.events` names it.
    """
    if not isinstance(store, ViewStore):
        raise ValidationError(f"store must be a ViewStore, not {type(store).__name__}")
    batches = store._converted_event_rows(
        _batch, _BATCH_ROWS, view=view, actor=actor, since=since, until=until, types=types, limit=limit,
        newest_first=newest_first, since_position=since_position, until_position=until_position)
    return pa.Table.from_batches(batches, schema=EVENTS_SCHEMA)


def _batch(rows: list[tuple[object, ...]]) -> pa.RecordBatch:
    """A batch of the log's rows as Arrow columns (a short transpose is a fast one)."""
    columns = list(zip(*rows))
    return pa.RecordBatch.from_arrays([_array(columns, rows, kind, column) for _, kind, column in _EVENT_FIELDS],
                                      schema=EVENTS_SCHEMA)


#: rows moved to Arrow at a time
_BATCH_ROWS = 8192


def _array(columns: list[tuple[object, ...]], rows: list[tuple[object, ...]], kind: pa.DataType,
           column: str) -> pa.Array:
    """One column of a batch as an Arrow array of ``kind``; a value of another type is a CorruptLogError.

    Arrow infers the array's type from the values: one of another type than the library writes
    there (a real, bytes, NULL, text in an integer column) gives another type, nulls or a refusal,
    where a typed conversion would truncate a real to an integer and carry bytes as text.
    """
    index = EVENT_COLUMNS.index(column)
    held = int if pa.types.is_integer(kind) or pa.types.is_timestamp(kind) else str
    try:
        array = pa.array(columns[index])
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        array = None
    if array is None or array.type != (pa.int64() if held is int else pa.string()) or array.null_count:
        row = next(row for row in rows if type(row[index]) is not held)
        raise CorruptLogError(f"the {column} of the event at position {row[0]} is not "
                              f"{'an integer' if held is int else 'text'}: {_held(row[index], held)}")
    return array.cast(kind) if pa.types.is_timestamp(kind) else array  # epoch milliseconds in the log


@engine_calls("move the event log into Spark")
def events_dataframe(spark: SparkSession, store: ViewStore, *, view: IdentifierLike | None = None,
                     actor: str | None = None, since: TimeLike | None = None, until: TimeLike | None = None,
                     types: EventTypes | None = None, limit: int | None = None, newest_first: bool = False,
                     since_position: int | None = None, until_position: int | None = None) -> DataFrame:
    """The event log as a typed DataFrame, moved from SQLite to Spark through Arrow.

    Columns: ``position`` (long), ``view`` (the identifier after the event), ``view_id``,
    ``stream_version`` (long), ``type``, ``actor``, ``occurred_at`` (timestamp, UTC),
    ``commit_id`` and ``payload`` (the event's fields as a JSON string; use ``from_json`` or
    ``get_json_object``). The filters (``since_position`` and ``until_position`` too: a job that
    loaded the log up to a position loads what came after it), ``limit`` and ``newest_first`` are
    those of :meth:`ViewStore.events`.

    Example::

        events_dataframe(spark, store).createOrReplaceTempView("view_events")
        spark.sql("SELECT actor, count(*) AS changes FROM view_events GROUP BY actor")

    Raises:
        NoSuchViewError: ``view`` names no view that ever had that identifier.
        ValidationError: not a classic SparkSession or not a ViewStore; a bad identifier, time,
            type, limit or position; a session whose ``spark.sql.execution.arrow.maxRecordsPerBatch``
            is 0 or less (PySpark makes no DataFrame from Arrow with it).
        CorruptLogError: an event's row holds what the library never writes there (see
            :func:`events_arrow`).
        EngineError: the engine failed: the session is stopped, before the call or while it moved
            the rows (its DataFrame could never be read), or its JVM is gone.
    """
    _check_args(spark, store)
    require_live(spark, "move the event log into Spark")
    table = events_arrow(store, view=view, actor=actor, since=since, until=until, types=types, limit=limit,
                         newest_first=newest_first, since_position=since_position, until_position=until_position)
    try:
        frame = spark.createDataFrame(table)
    except ValueError as e:  # pyarrow's, from PySpark cutting the table into batches (no engine error)
        raise _arrow_refused(spark, e) from e
    # a session stopped while the rows were moved (by another thread) still makes the DataFrame,
    # one that can never be read: asked again, once, after the work
    require_live(spark, "move the event log into Spark")
    return frame


#: the rows of each Arrow batch PySpark makes of a table; Spark reads 0 or less as no limit
_ARROW_BATCH_ROWS = "spark.sql.execution.arrow.maxRecordsPerBatch"


def _arrow_refused(spark: SparkSession, error: ValueError) -> ViewStoreError:
    """What PySpark's refusal to make a DataFrame of the log's table is: a session whose batch
    size is 0 or less (Spark's "no limit", a size pyarrow refuses) is a ValidationError naming the
    setting; any other refusal the engine's."""
    rows = spark.conf.get(_ARROW_BATCH_ROWS) or ""
    try:
        unlimited = int(rows) <= 0
    except ValueError:  # no number: PySpark's own reading of it failed
        unlimited = False
    if unlimited:
        return ValidationError(f"cannot move the event log into Spark: PySpark makes a DataFrame from Arrow only "
                               f"in batches of a positive number of rows, and the session's {_ARROW_BATCH_ROWS} "
                               f"is {rows}")
    return EngineError(f"cannot move the event log into Spark: PySpark could not make the DataFrame: {error}")
