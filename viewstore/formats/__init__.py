"""Engine-native view formats in the Hive metastore: tell them apart, read them, write them.

Trino, Spark, Flink, Hive and Iceberg each store a view in the metastore their own way. This package
is a pure codec (no I/O) between such HMS table records and :class:`ViewDefinition`::

    from viewstore import formats

    engine = formats.detect(table)               # "trino", "spark", "flink", "hive" or "iceberg"
    definition = formats.decode(table)           # dialect, sql, columns, comment, owner, ...
    record = formats.encode(definition, "spark") # the record Spark itself would write

One module per engine, each with the same functions (``claims``, ``owns_parameter``, ``decode``,
``encode``; ``owns_parameter(key, parameters)`` judges a key with the parameters beside it);
:mod:`~viewstore.formats.qualify` is Hive's and Flink's (a view's unqualified table names qualified
with its default namespace), :mod:`~viewstore.formats.base` every codec's.
Detection asks them in a fixed order, the first to claim a record wins:

1. ``iceberg`` - ``table_type=ICEBERG-VIEW`` (the metadata file is the source of truth);
2. ``trino`` - ``presto_view`` present: it must be exactly ``true`` with the comment ``Presto View``,
   anything else (a materialized view, ``TRUE``...) is rejected, as Trino rejects it;
3. ``spark`` - any parameter only Spark writes (``spark.sql.create.version``, ``view.query.out.*``...);
4. ``flink`` - ``is_generic=true`` (or ``flink.connector`` without the flag);
5. ``hive`` - every other ``VIRTUAL_VIEW``.

Hive materialized views (``MATERIALIZED_VIEW``), Trino materialized views and tables are not logical
views: :func:`detect` rejects them, and :func:`not_a_view` names them so a bulk import can skip them.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from types import ModuleType
from typing import Any

from ..model import View
from . import flink, hive, iceberg, spark, trino
from .base import VIRTUAL_VIEW, ViewDefinition, as_record, definition_from_view, for_dialect, invalid, \
    parameters_of, text_of

__all__ = [
    "ENGINES",
    "DETECTION_ORDER",
    "ViewDefinition",
    "get_format",
    "detect",
    "not_a_view",
    "decode",
    "encode",
    "definition_from_table",
]

#: Every engine format by name. Each module has ``NAME``, ``claims``, ``owns_parameter``,
#: ``decode`` and ``encode``.
ENGINES: dict[str, ModuleType] = {
    "trino": trino,
    "spark": spark,
    "flink": flink,
    "hive": hive,
    "iceberg": iceberg,
}

#: The order in which engines are asked whether a record is theirs (``hive`` takes the rest).
DETECTION_ORDER = ("iceberg", "trino", "spark", "flink", "hive")

MATERIALIZED_VIEW = "MATERIALIZED_VIEW"


def get_format(name: str) -> ModuleType:
    """The codec module of an engine.

    Args:
        name: ``trino``, ``spark``, ``flink``, ``hive`` or ``iceberg`` (case-insensitive).

    Raises:
        ValidationError: no such engine; the message suggests the closest name.
    """
    if not isinstance(name, str):
        raise invalid("engine", f"must be a string, not {type(name).__name__}")
    module = ENGINES.get(name.strip().lower())
    if module is not None:
        return module
    close = difflib.get_close_matches(name.strip().lower(), list(ENGINES), n=1)
    hint = f"; did you mean {close[0]!r}?" if close else "."
    raise invalid("engine", f"unknown engine format {name!r}{hint} Known: {', '.join(ENGINES)}")


def detect(table: Mapping[str, Any] | Any) -> str:
    """Which engine wrote an HMS view record.

    Args:
        table: an HMS table record (a dict shaped like the Thrift ``Table``, or that object).

    Returns:
        ``"trino"``, ``"spark"``, ``"flink"``, ``"hive"`` or ``"iceberg"``. A Hive view that Spark
        altered later is ``"spark"``; its decoded definition is flagged (see
        :func:`viewstore.formats.spark.is_altered_hive_view`).

    Raises:
        ValidationError: the record is not a logical view (a table, a Hive or Trino materialized
            view) or carries a marker its engine would reject (``presto_view=TRUE``), or is malformed.
    """
    record = as_record(table)
    table_type = text_of(record, "tableType")
    parameters = parameters_of(record)
    if table_type is None:
        raise invalid("tableType", f"is missing; a view record has table type {VIRTUAL_VIEW}")
    if table_type == MATERIALIZED_VIEW:
        raise invalid("tableType", "MATERIALIZED_VIEW is a Hive materialized view, not a logical view")
    if table_type != VIRTUAL_VIEW:
        raise invalid("tableType", f"{table_type!r} is not a view (views have {VIRTUAL_VIEW})")
    for name in DETECTION_ORDER:
        if ENGINES[name].claims(table_type, parameters):
            return name
    raise invalid("tableType", "no engine format recognizes this view record")  # hive claims every view


def not_a_view(table: Mapping[str, Any] | Any) -> str | None:
    """What an HMS record is when it is another kind of object than a logical view.

    Args:
        table: an HMS table record.

    Returns:
        ``"a MANAGED_TABLE"`` (any table type other than ``VIRTUAL_VIEW``, including a Hive
        ``MATERIALIZED_VIEW``), ``"a Trino materialized view"``, or None for a view record and for
        a record too malformed to tell (:func:`detect` says what is wrong with it).

    Raises:
        ValidationError: ``table`` is not a record, or its ``tableType`` or ``parameters`` has the
            wrong type.
    """
    record = as_record(table)
    table_type = text_of(record, "tableType")
    if table_type is None:
        return None
    if table_type != VIRTUAL_VIEW:
        return f"a {table_type}"
    if trino.is_materialized_view(parameters_of(record)):
        return "a Trino materialized view"
    return None


def definition_from_table(table: Mapping[str, Any] | Any, *,
                          metadata: str | bytes | Mapping[str, Any] | None = None) -> tuple[str, ViewDefinition]:
    """Detect and decode an HMS view record: what the store needs to import it.

    Args:
        table: an HMS table record.
        metadata: for an Iceberg view only, the JSON of the metadata file its ``metadata_location``
            names (this package does no I/O).

    Returns:
        The detected engine and the decoded definition (with ``database``/``name`` from the record).

    Raises:
        ValidationError: see :func:`detect`, and the engine's ``decode``; also when ``metadata`` is
            given for a record that is not an Iceberg view, or missing for one that is.
        IcebergMetadataError: the Iceberg metadata is malformed or belongs to another view.
    """
    record = as_record(table)
    engine = detect(record)
    if engine == iceberg.NAME:
        return engine, iceberg.decode(record, metadata)
    if metadata is not None:
        raise invalid("metadata", f"only Iceberg views take a metadata document; this is a {engine} view")
    return engine, ENGINES[engine].decode(record)


def decode(table: Mapping[str, Any] | Any, *,
           metadata: str | bytes | Mapping[str, Any] | None = None) -> ViewDefinition:
    """Decode an HMS view record into a definition (see :func:`definition_from_table`).

    Raises:
        ValidationError: see :func:`definition_from_table`.
        IcebergMetadataError: see :func:`definition_from_table`.
    """
    return definition_from_table(table, metadata=metadata)[1]


def encode(view: View | ViewDefinition, engine: str, *, metadata_location: str | None = None) -> dict[str, Any]:
    """The HMS record ``engine`` itself writes for a view.

    Args:
        view: a decoded definition, or the store's view (its identifier must be ``(database, name)``;
            its first representation is the primary one).
        engine: the target format (see :data:`ENGINES`). The view needs SQL in that dialect, except
            for ``iceberg``, which records all representations in its metadata file.
        metadata_location: for ``iceberg`` only, the metadata file the record points at.

    Properties that another engine owns (``presto_view``, ``view.*``, ``flink.*``, ``table_type``...)
    are not carried over into a different engine's record; ``is_generic=false`` and ``flink.*``
    beside it are a Hive record's own (Flink reads such a record as a Hive view) and stay.

    Raises:
        ValidationError: unknown engine, no SQL in the engine's dialect, or anything the engine
            cannot express (see each module's ``encode``).
    """
    module = get_format(engine)
    if isinstance(view, View):
        definition = definition_from_view(view)
        if module is spark:
            definition = spark.with_import_digest(definition, view)
    elif isinstance(view, ViewDefinition):
        definition = view
    else:
        raise invalid("view", f"must be a View or a ViewDefinition, not {type(view).__name__}")
    definition = definition.model_copy(update={"properties": _portable_properties(definition.properties, module)})
    if module is iceberg:
        return iceberg.encode(definition, metadata_location)
    if metadata_location is not None:
        raise invalid("metadata_location", f"only Iceberg view records point at a metadata file, not {engine} ones")
    record: dict[str, Any] = module.encode(for_dialect(definition, module.NAME))  # every codec's encode returns one
    return record


def _portable_properties(properties: Mapping[str, str], target: ModuleType) -> dict[str, str]:
    """Drop the parameters another engine owns, so a Spark record never looks like a Trino one.

    Ownership is judged on all the properties: ``is_generic=false`` marks a Hive record (one Flink
    wrote for a Hive view), whose ``is_generic`` and ``flink.*`` parameters are its own, not Flink's.
    """
    return {key: value for key, value in properties.items()
            if target.owns_parameter(key, properties)
            or not any(module.owns_parameter(key, properties)
                       for module in ENGINES.values() if module is not target)}
