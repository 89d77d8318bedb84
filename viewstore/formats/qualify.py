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
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlglot
from sqlglot import exp

from ..errors import ValidationError
from .base import invalid

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

    CTE names (where their ``WITH`` is in scope), table-valued functions, subquery aliases and names
    that already have a database are left alone; so is every other character of ``sql``.

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
    """The database that :func:`qualify_tables` qualified ``original`` with to make ``expanded``.

    None when ``expanded`` is not exactly such a qualification of ``original`` (an engine's own
    expanded text, which it formats its own way), or either text cannot be read.
    """
    try:
        spots = _unqualified_tables(original, engine, "viewOriginalText", "")
    except ValidationError:  # a text sqlglot cannot read implies nothing
        return None
    if not spots:
        return None
    first = min(spots)
    if not expanded.startswith(original[:first] + "`"):
        return None
    end = first + 1
    name: list[str] = []
    while end < len(expanded):
        if expanded[end] == "`":
            if expanded[end + 1:end + 2] != "`":
                break
            end += 1
        name.append(expanded[end])
        end += 1
    database = "".join(name)
    if not database:
        return None
    try:
        return database if qualify_tables(original, engine, (database,), "viewExpandedText") == expanded else None
    except ValidationError:
        return None


def _unqualified_tables(sql: str, engine: str, field: str, namespace: str) -> list[int]:
    """Where each unqualified table name of ``sql`` starts (CTE names in scope excluded).

    Raises:
        ValidationError: see :func:`qualify_tables`.
    """
    def refuse(why: str) -> ValidationError:
        return invalid(field, f"the view's unqualified table names resolve in {namespace!r}, not in the record's "
                              f"database, so they must be written qualified, but {why}; {_ADVICE}")

    try:
        trees = [tree for tree in sqlglot.parse(sql, read=_DIALECTS[engine]) if tree is not None]
    except sqlglot.errors.SqlglotError as e:
        raise refuse(f"sqlglot cannot parse the SQL ({(str(e).splitlines() or [type(e).__name__])[0]})") from e
    except RecursionError as e:
        raise refuse("the SQL nests too deeply for sqlglot to parse it") from e
    if len(trees) != 1 or not isinstance(trees[0], exp.Query):
        raise refuse("the SQL is not read as one query")
    spots = []
    for table in trees[0].find_all(exp.Table):
        name = table.this
        if not isinstance(name, exp.Identifier) or table.args.get("db") or table.args.get("catalog"):
            continue  # a table-valued function, or a name that has its database
        if _is_cte(table, name.name):
            continue
        if "." in name.name:
            raise refuse(f"the quoted name {name.name!r} holds a dot, which {engine} may read as a database")
        start = name.meta.get("start")
        if not isinstance(start, int) or not sql.startswith(name.name if not name.quoted else "`", start):
            raise refuse(f"the position of the table name {name.name!r} is not known")
        spots.append(start)
    return spots


def _is_cte(table: exp.Table, name: str) -> bool:
    """Whether a ``WITH`` around ``table`` defines ``name`` (compared case-insensitively)."""
    node = table.parent
    while node is not None:
        with_ = node.args.get("with_") or node.args.get("with")
        if isinstance(with_, exp.With) and any(cte.alias_or_name.lower() == name.lower()
                                               for cte in with_.expressions):
            return True
        node = node.parent
    return False
