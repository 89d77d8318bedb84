"""check_views: whether each stored view with Spark SQL still analyzes, and still has the columns
stored with it.

Here: :func:`check_views` and its report (:class:`DriftReport`, :class:`ViewDrift`), and the
comparison of a view's stored columns with those of its query as Spark analyzes it today
(:func:`_compare`: names, Iceberg and Spark types, nullability one way, :func:`_loosened`). A
view's query is analyzed as :mod:`viewstore.spark.ddl` analyzes a new one (its :func:`_analyze`),
in a session of its own under the view's namespace and configs (see the module notes, in
:mod:`viewstore.spark.session`).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

from pyspark.sql import SparkSession
from pyspark.sql import types as T

from ..catalog import ViewStore, check_progress
from ..errors import NoSuchViewError, ValidationError
from ..formats.spark import recorded_query_columns
from ..model import Column, NamespaceLike, View, identifier_str, to_namespace
from ..types import IcebergType, ListType, MapType, StructType
from .ddl import _analyze
from .failures import SPARK_ERRORS as _SPARK_ERRORS
from .failures import condition as _condition
from .failures import Progress, engine_calls, raise_engine_failure, tagged
from .failures import explanation as _explanation
from .session import _check_args, _Configs, _CurrentNamespace, _default_target, _sql_configs, _work_session
from .types import parse_schema, recorded_schema, schema_to_columns

__all__ = [
    "check_views",
    "DriftReport",
    "ViewDrift",
]


# -- check_views -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ViewDrift:
    """How one view's stored columns compare with what Spark analyzes today."""

    identifier: str
    status: str
    """``ok``, ``drifted`` (analyzes, but the columns differ) or ``broken`` (does not analyze)."""
    problems: tuple[str, ...] = ()
    condition: str | None = None
    """Spark's error condition when broken."""
    stored: tuple[str, ...] = ()
    """The stored columns as ``name type``, with ``not null`` after a required one."""
    analyzed: tuple[str, ...] = ()
    """The analyzed columns as ``name type [not null]`` (empty when broken)."""


@dataclass
class DriftReport:
    """The result of :func:`check_views`: one entry per view with a spark representation."""

    views: list[ViewDrift] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    """Views without a spark representation."""
    seconds: float = 0.0

    @property
    def drifted(self) -> list[ViewDrift]:
        return [v for v in self.views if v.status == "drifted"]

    @property
    def broken(self) -> list[ViewDrift]:
        return [v for v in self.views if v.status == "broken"]

    @property
    def ok(self) -> bool:
        """True when every checked view analyzes and matches its stored columns."""
        return all(v.status == "ok" for v in self.views)

    def raise_for_drift(self) -> "DriftReport":
        """Return self, or raise ValidationError naming the drifted and broken views (for pipelines).

        Raises:
            ValidationError: a view drifted or no longer analyzes.
        """
        bad = [v for v in self.views if v.status != "ok"]
        if bad:
            lines = [f"{v.identifier} ({v.status}): {'; '.join(v.problems)}" for v in bad]
            raise ValidationError(f"{len(bad)} view(s) drifted from their stored columns:\n" + "\n".join(lines))
        return self

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "views": [asdict(v) for v in self.views], "skipped": list(self.skipped),
                "seconds": self.seconds}

    def __str__(self) -> str:
        return (f"{len(self.views)} checked: {len(self.views) - len(self.drifted) - len(self.broken)} ok, "
                f"{len(self.drifted)} drifted, {len(self.broken)} broken")


def _bare(t: IcebergType) -> str:
    """A type's spelling without comments and nullability (:func:`_loosened` compares nullability)."""
    if isinstance(t, StructType):
        return "struct<" + ", ".join(f"{f.name}: {_bare(f.type)}" for f in t.fields) + ">"
    if isinstance(t, ListType):
        return f"list<{_bare(t.element)}>"
    if isinstance(t, MapType):
        return f"map<{_bare(t.key)}, {_bare(t.value)}>"
    return str(t)


def _query_names(view: View) -> list[str] | None:
    """The query's own output column names as recorded with the view, or None.

    As the store records them (:func:`viewstore.formats.spark.recorded_query_columns`), else from
    Spark's metastore properties ``view.query.out.numCols`` / ``view.query.out.col.N`` (views
    imported from a metastore).
    """
    recorded = recorded_query_columns(view.summary, view.properties)
    if recorded:
        return list(recorded)
    props = view.properties
    count = props.get("view.query.out.numCols", "")
    if count.isdigit():
        names = [props.get(f"view.query.out.col.{i}") for i in range(int(count))]
        if all(n is not None for n in names):
            return names  # type: ignore[return-value]
    return None


def _loosened(stored: IcebergType, analyzed: IcebergType, path: str) -> list[str]:
    """The nested fields, list elements and map values (as paths: ``s.a``, ``l.element``, ``m.value``)
    that ``stored`` requires and ``analyzed``, a type of the same shape, lets be null."""
    if isinstance(stored, StructType) and isinstance(analyzed, StructType):
        found = []
        for want, got in zip(stored.fields, analyzed.fields):
            inner = f"{path}.{want.name}"
            found += [inner] if want.required and not got.required else []
            found += _loosened(want.type, got.type, inner)
        return found
    if isinstance(stored, ListType) and isinstance(analyzed, ListType):
        inner = f"{path}.element"
        return ([inner] if stored.element_required and not analyzed.element_required else []) + _loosened(
            stored.element, analyzed.element, inner)
    if isinstance(stored, MapType) and isinstance(analyzed, MapType):
        inner = f"{path}.value"
        return (_loosened(stored.key, analyzed.key, f"{path}.key")
                + ([inner] if stored.value_required and not analyzed.value_required else [])
                + _loosened(stored.value, analyzed.value, inner))
    return []


def _spelled(column: Column) -> str:
    """``name type``, and ``not null`` for a required column (as the drift report shows columns)."""
    return f"{column.name} {column.type}" + ("" if column.nullable else " not null")


def _spark_types(schema: dict[str, Any] | T.StructType | None) -> list[str] | None:
    """Each field's Spark type as Spark spells it without nullability (``tinyint``, ``string collate
    UTF8_LCASE``, ``struct<a:smallint>``), or None for no schema. ``CHAR(n)`` and ``VARCHAR(n)``
    are ``string``: a query's analysis gives them as strings (their length in field metadata, as in a
    view Spark reads), while the schema Spark hands a catalog for a view may name them."""
    if schema is None:
        return None
    fields = (parse_schema(schema) if isinstance(schema, dict) else schema).fields
    return [_unsized(f.dataType).simpleString() for f in fields]


def _unsized(data_type: T.DataType) -> T.DataType:
    """``data_type`` with ``STRING`` for each ``CHAR(n)`` and ``VARCHAR(n)`` in it."""
    if isinstance(data_type, (T.CharType, T.VarcharType)):
        return T.StringType()
    if isinstance(data_type, T.ArrayType):
        return T.ArrayType(_unsized(data_type.elementType), data_type.containsNull)
    if isinstance(data_type, T.MapType):
        return T.MapType(_unsized(data_type.keyType), _unsized(data_type.valueType), data_type.valueContainsNull)
    if isinstance(data_type, T.StructType):
        return T.StructType([T.StructField(f.name, _unsized(f.dataType), f.nullable) for f in data_type.fields])
    return data_type


def _compare(view: View, analyzed: list[Column], schema: T.StructType | None = None) -> list[str]:
    """What differs between the view's stored columns and ``analyzed``, the columns of its query's
    Spark ``schema`` as analyzed now. Where the view records Spark's own schema (a TINYINT or a
    collation its Iceberg types cannot hold, which Spark reads the view as), a column's Spark type
    is compared too."""
    stored = list(view.columns)
    problems = []
    wanted, found = _spark_types(recorded_schema(view.summary, stored)), _spark_types(schema)
    if len(stored) != len(analyzed):
        problems.append(f"{len(stored)} stored columns, {len(analyzed)} analyzed")
    expected_names = [c.name for c in stored]
    recorded = _query_names(view)
    if recorded is not None and len(recorded) == len(stored):
        expected_names = recorded  # the query's own names, when a column list renamed them
    for i, (want, col, got) in enumerate(zip(expected_names, stored, analyzed)):
        if want.lower() != got.name.lower():
            problems.append(f"column {i + 1}: name {want!r} is now {got.name!r}")
        if _bare(col.type) != _bare(got.type):
            problems.append(f"column {col.name!r}: type {col.type} is now {got.type}")
            continue
        if wanted is not None and found is not None and wanted[i] != found[i]:
            problems.append(f"column {col.name!r}: Spark type {wanted[i]} is now {found[i]}")
        # a required column that may now be null breaks what readers rely on; the other way round does not
        if not col.nullable and got.nullable:
            problems.append(f"column {col.name!r}: not null is now nullable")
        problems += [f"column {col.name!r}: {inner} not null is now nullable"
                     for inner in _loosened(col.type, got.type, col.name)]
    return problems


def _check(work: SparkSession, view: View, query: str, current: _CurrentNamespace, settings: _Configs) -> ViewDrift:
    """How one view with Spark SQL compares, analyzed in ``work`` under its namespace and configs."""
    name = identifier_str(view.identifier)
    stored = tuple(_spelled(c) for c in view.columns)
    try:
        current.use(*_default_target(work, view))
        settings.use(_sql_configs(view))
        schema = _analyze(work, query, name, name)
    except ValidationError as e:  # Spark refuses the query: its reason, without the view's name the report gives
        cause = e.__cause__
        reason = tagged(_condition(cause), _explanation(cause)) if isinstance(cause, _SPARK_ERRORS) else str(e)
        return ViewDrift(name, "broken", (reason,), _condition(cause) if cause else None, stored)
    except _SPARK_ERRORS as e:  # no default catalog or namespace to use, or a recorded config Spark refuses
        raise_engine_failure(work, e, f"check view {name}")
        return ViewDrift(name, "broken", (tagged(_condition(e), _explanation(e)),), _condition(e), stored)
    try:
        analyzed = schema_to_columns(schema)
    except ValidationError as e:
        return ViewDrift(name, "broken", (str(e),), None, stored)
    problems = _compare(view, analyzed, schema)
    return ViewDrift(name, "drifted" if problems else "ok", tuple(problems), None, stored,
                     tuple(_spelled(c) for c in analyzed))


@engine_calls("check views")
def check_views(spark: SparkSession, store: ViewStore, namespace: NamespaceLike | None = None, *,
                progress: Callable[[int, int], None] | None = None) -> DriftReport:
    """Check that every view with a spark representation still analyzes and still has its columns.

    Each view's Spark SQL is analyzed (not run) under its default catalog and namespace and the SQL
    configs recorded with it; the result's column count, names and Iceberg types are compared with
    the stored columns, and so is each column's Spark type where the view records Spark's own
    schema (the summary's ``spark.schema``: a ``TINYINT`` or a collation its Iceberg type cannot
    hold, and which Spark reads the view as; ``column 'n': Spark type tinyint is now int``).
    ``CHAR(n)`` and ``VARCHAR(n)`` count as strings, as in a query's output. When a column list
    renamed the query's columns, the names are compared with the query's own names as recorded
    with the view (the summary's
    ``spark.query-column-names``, or Spark's ``view.query.out.*`` properties of a view imported
    from a metastore).

    Nullability is compared one way. A column stored as required (not null), or a required field,
    list element or map value inside one, that the query may now return null for has drifted:
    readers of the view rely on it never being null (``column 'id': not null is now nullable``,
    ``column 's': s.a not null is now nullable``). A nullable column whose query now never returns
    null has not drifted: every reader still copes. Comments are not compared: a view's column
    comments are its own documentation (from its column list, or inherited from a table when it
    was defined), Spark derives a comment from the query only where a table's column passes
    through unchanged, and a changed table comment changes neither the rows nor what readers may
    rely on. Nothing is created or changed, in the session or the store: the views are analyzed in
    a session cloned from ``spark`` (see the module notes), under their own configs and namespaces
    there, so other threads may keep using ``spark`` meanwhile.

    Args:
        spark: the session whose tables the views read.
        store: the store.
        namespace: only the views directly in this namespace (default: every view).
        progress: called as ``progress(done, total)`` as the views are checked: ``total`` is the
            number of views listed (every view, or ``namespace``'s), ``done`` how many of them are
            checked, skipped (no spark representation) or passed over (dropped meanwhile); it grows
            with each call, and the last call has ``done == total`` (no call when there is no
            view). It runs in the calling thread, in the middle of the call; an exception it
            raises stops the check there and reaches the caller unchanged.

    Returns:
        A :class:`DriftReport`; ``report.ok`` is false when a view drifted or is broken, and
        ``report.raise_for_drift()`` turns that into an error for pipelines.

    Raises:
        ValidationError: not a classic SparkSession or not a ViewStore, a bad namespace, or a
            ``progress`` that is not callable.
        EngineError: the engine failed (a stopped session, a lost JVM, a metastore that does not
            answer): a view that does not analyze because of that is not reported as broken.
    """
    _check_args(spark, store)
    check_progress(progress)
    started = time.perf_counter()
    report = DriftReport()
    identifiers = store.list_views(to_namespace(namespace) if namespace is not None else None)
    done = Progress(progress, len(identifiers))
    # each view is analyzed under its own namespace and configs in a session of its own, not the caller's
    with _work_session(spark) as work, _CurrentNamespace(work) as current, _Configs(work) as settings:
        for ident in identifiers:
            try:
                view = store.load_view(ident)
            except NoSuchViewError:  # dropped or renamed by another process since the listing
                done.advance()
                continue
            query = view.sql_for("spark")
            if query is None:
                report.skipped.append(identifier_str(ident))
            else:
                report.views.append(_check(work, view, query, current, settings))
            done.advance()
    report.seconds = time.perf_counter() - started
    return report
