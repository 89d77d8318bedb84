"""Qualify a view's unqualified table names with its default namespace, for Hive and Flink records.

Hive and Flink resolve the unqualified table names of a stored view in the view's own database
(Flink also tries its own catalog), and their HMS records have no field for another default
namespace. So a view whose default namespace is not the record's database keeps its meaning there
only when every unqualified table name is written qualified: :func:`qualify_tables` inserts the
back-quoted namespace before each such name and leaves every other character as written.

The names are found with sqlglot's parser (Hive's dialect for Hive; Spark's, whose lexical rules
Flink shares, for Flink, which sqlglot lacks). A name the parser does not see as a table would keep
its unqualified meaning silently, so whatever the parser cannot read whole, or reads as something
other than one query, is refused: the user then qualifies the names in the view's SQL.

:func:`implied_namespace` reads the other way: the database an expanded text gives the unqualified
names of the original text, whether the text is :func:`qualify_tables`' or Flink's own (which names
every table with the catalog and database current when the view was created; the catalog is that
session's name for the metastore, so it is not returned).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlglot
from sqlglot import exp

from ..errors import ValidationError
from .base import invalid
from .references import parse, tables_read

__all__ = ["qualify_tables", "implied_namespace", "needs_qualifying"]

#: The sqlglot dialect that reads each engine's SQL.
_DIALECTS = {"hive": "hive", "flink": "spark"}

_ADVICE = ("write each table name in the view's SQL with its database (database.table) and give the view "
           "its own database as default namespace, so that the SQL is written as it is")


def needs_qualifying(default_namespace: Sequence[str], database: str | None) -> bool:
    """Whether unqualified names mean something else in the record's database than in the view.

    An empty default namespace means the view's own namespace, the record's database; HMS
    database names are case-insensitive.
    """
    if not default_namespace:
        return False
    return database is None or tuple(level.lower() for level in default_namespace) != (database.lower(),)


def qualify_tables(sql: str, engine: str, default_namespace: Sequence[str], field: str) -> str:
    """``sql`` with each unqualified table name prefixed by the back-quoted default namespace.

    CTE names (where the engine reads the name as the CTE: see :mod:`viewstore.formats.references`),
    table-valued functions, subquery aliases and names that already have a database are left alone;
    so is every other character of ``sql``.

    Args:
        sql: the view's SQL in ``engine``'s dialect.
        engine: ``hive`` or ``flink``.
        default_namespace: the view's default namespace: one level, an HMS database.
        field: the record field the result is written to, named in errors.

    Raises:
        ValidationError: the namespace has more than one level, or the SQL cannot be read safely
            (not one query sqlglot parses, or a one-part name holding a dot); nothing is changed.
    """
    namespace = ".".join(default_namespace)
    if len(default_namespace) != 1:
        raise invalid(field, f"the view's unqualified table names resolve in {namespace!r}, not in the record's "
                             f"database, and a {engine} view can qualify them with a database (one level), not "
                             f"{len(default_namespace)} levels; {_ADVICE}")
    spots = _unqualified_tables(sql, engine, field, namespace)
    prefix = "`" + default_namespace[0].replace("`", "``") + "`."
    qualified = sql
    for start in sorted(spots, reverse=True):
        qualified = qualified[:start] + prefix + qualified[start:]
    if _unqualified_tables(qualified, engine, field, namespace):  # a guard: every name got its database
        raise invalid(field, f"could not qualify every table name of the {engine} view's SQL; {_ADVICE}")
    return qualified


def implied_namespace(original: str, expanded: str, engine: str) -> str | None:
    """The database ``expanded`` gives the unqualified table names of ``original``.

    ``expanded`` is the text the engine runs for ``original``: Flink's own expansion (every table
    written ``cat``.``db``.``t``, aliases and column qualifiers added, its own layout) or a
    :func:`qualify_tables` text (``db``.t). Both are read with sqlglot and their table references
    (CTE names in scope aside) paired in the order they are written: each pair must name the same
    table, a qualified name of ``original`` must end its counterpart, every unqualified name must be
    expanded with the same database (and catalog), and a ``database.table`` name with that catalog.
    The catalog only checks the pairing: it is the creating session's name for it, which no other
    engine shares, so it is not returned.

    None, never a guess, when nothing in ``original`` is unqualified, the texts cannot be read or
    paired so (an expanded name of more parts than catalog.database.table included), or the
    unqualified names are expanded with different databases or catalogs.
    """
    try:
        named = _table_references(original, engine, "viewOriginalText", "")
        expansions = _table_references(expanded, engine, "viewExpandedText", "")
    except ValidationError:  # a text sqlglot cannot read implies nothing
        return None
    if len(named) != len(expansions):
        return None
    defaults: set[tuple[str | None, str]] = set()
    catalogs: set[str | None] = set()
    for parts, full in zip(named, expansions):
        if not all(full) or len(parts) > len(full) or len(full) > 3 or \
                [part.lower() for part in full[-len(parts):]] != [part.lower() for part in parts]:
            return None
        if len(parts) == 1:
            if len(full) == 1 or "." in parts[0]:  # unqualified still, or a name the engine may split
                return None
            defaults.add((full[0] if len(full) == 3 else None, full[-2]))
        elif len(parts) == 2:
            catalogs.add(full[0] if len(full) == 3 else None)
    if len(defaults) != 1:
        return None
    catalog, database = defaults.pop()
    return database if catalogs <= {catalog} else None


def _unqualified_tables(sql: str, engine: str, field: str, namespace: str) -> list[int]:
    """Where each unqualified table name of ``sql`` starts (CTE names in scope excluded).

    Raises:
        ValidationError: see :func:`qualify_tables`.
    """
    spots = []
    for table in _tables(sql, engine, field, namespace):
        name = table.this
        if table.args.get("db") or table.args.get("catalog"):
            continue  # a name that has its database
        if "." in name.name:
            raise _refusal(field, namespace, f"the quoted name {name.name!r} holds a dot, which {engine} may "
                                             "read as a database")
        start = name.meta.get("start")
        if not isinstance(start, int) or not sql.startswith(name.name if not name.quoted else "`", start):
            raise _refusal(field, namespace, f"the position of the table name {name.name!r} is not known")
        spots.append(start)
    return spots


def _table_references(sql: str, engine: str, field: str, namespace: str) -> list[tuple[str, ...]]:
    """The table names of ``sql`` (CTE names in scope excluded), each as its parts, in written order.

    Raises:
        ValidationError: see :func:`qualify_tables`, or a name's position is not known.
    """
    placed = []
    for table in _tables(sql, engine, field, namespace):
        name = table.parts[-1]
        start = name.meta.get("start")
        if not isinstance(start, int):
            raise _refusal(field, namespace, f"the position of the table name {name.name!r} is not known")
        placed.append((start, tuple(part.name for part in table.parts)))
    return [parts for _, parts in sorted(placed)]


def _tables(sql: str, engine: str, field: str, namespace: str) -> list[exp.Table]:
    """The tables of ``sql`` named by identifiers: table-valued functions and CTE names in scope excluded
    (:func:`~viewstore.formats.references.tables_read`).

    Raises:
        ValidationError: ``sql`` is not one query sqlglot parses (see :func:`qualify_tables`).
    """
    dialect = _DIALECTS[engine]
    try:
        trees = parse(sql, dialect)
    except sqlglot.errors.SqlglotError as e:
        raise _refusal(field, namespace, "sqlglot cannot parse the SQL "
                                         f"({(str(e).splitlines() or [type(e).__name__])[0]})") from e
    except RecursionError as e:
        raise _refusal(field, namespace, "the SQL nests too deeply for sqlglot to parse it") from e
    if len(trees) != 1 or not isinstance(trees[0], exp.Query):
        raise _refusal(field, namespace, "the SQL is not read as one query")
    return tables_read(trees[0], dialect)


def _refusal(field: str, namespace: str, why: str) -> ValidationError:
    return invalid(field, f"the view's unqualified table names resolve in {namespace!r}, not in the record's "
                          f"database, so they must be written qualified, but {why}; {_ADVICE}")
