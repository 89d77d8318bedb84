"""The tables a SQL text reads, found with sqlglot's parser, which is kept quiet meanwhile.

:func:`tables_read` is the one place that decides which ``Table`` nodes of a parsed query are
tables it reads: those named by identifiers (a table-valued function such as ``range(10)`` is not
one), and neither the name of a CTE in scope there nor a name in a hint (``/*+ BROADCAST(c) */``
names a relation of the query by its name or its alias, and reads none). A CTE is in scope in the
query of its ``WITH`` (subqueries included) and in the CTEs of that ``WITH`` as the engine resolves
them: Spark, Flink (Calcite) and standard SQL see a CTE only in the CTEs after it, and in itself
in a ``WITH RECURSIVE``, so ``WITH a AS (SELECT * FROM a)`` reads the table ``a``; Hive sees every
CTE of the ``WITH`` in all of them. Names compare case-insensitively.

:func:`parse` is ``sqlglot.parse`` without sqlglot's log records: sqlglot logs a warning for
text it reads only in part (a statement it keeps as a ``Command``, a JSON path it cannot read), and
with logging not set up Python prints such a record on stderr. The records are dropped by a filter
on the ``sqlglot`` logger that takes only those logged by a thread while it is inside :func:`parse`:
the caller's own sqlglot calls log as before. The filter, added at the first parse, stays: adding
and removing it around each parse would change the logger's filters while other threads log.
"""

from __future__ import annotations

import logging
import threading

import sqlglot
from sqlglot import exp

__all__ = ["parse", "tables_read"]

#: the sqlglot dialect whose WITH makes every CTE visible in all of its CTEs
_HIVE = "hive"

#: the sqlglot dialects that misread Spark's syntax of :func:`parse` (Hive's too: Spark reads the
#: views of a Hive metastore)
_MISREAD_SPARK = frozenset({"spark", "spark2", "databricks", "hive"})
#: the query ``TABLE t`` (all of ``t``): sqlglot reads the column ``TABLE`` aliased ``t`` (alone, as
#: a CTE's query), or in parentheses in FROM a table named ``TABLE`` aliased ``t``
_TABLE_QUERY = "a TABLE query (TABLE name): write SELECT * FROM name"
#: Spark's streaming read ``STREAM t`` or ``STREAM(t)``: sqlglot reads a table named ``STREAM``
#: aliased ``t``, or a table-valued function ``STREAM``; Spark reads ``FROM stream AS s`` as
#: ``STREAM`` of a table named ``as``
_STREAM = "a streaming read (STREAM name, STREAM(name)); Spark reads a table named stream, unquoted and aliased, " \
          "as one: write `stream`"
#: Spark's ``IDENTIFIER('t')`` in FROM, a table named by a constant string: sqlglot reads a table function
_IDENTIFIER = "a table named with IDENTIFIER(...): write the name"
#: a table argument of a table function, ``f(TABLE(t))``: sqlglot reads the column ``t`` (a query,
#: ``TABLE(SELECT * FROM t)``, it reads right; so it does Flink's ``TABLE(f(x))``, a call)
_TABLE_ARGUMENT = "a table argument naming its table (TABLE(name)): write TABLE(SELECT * FROM name)"
#: a keyword Spark reads as a name where sqlglot reads the keyword: ``FROM select`` (a table, to
#: sqlglot a query selecting nothing), ``FROM t limit, u`` (an alias, to sqlglot the limit u),
#: ``FROM t AS join JOIN u`` (to Spark a table named JOIN aliased u), ``SELECT all FROM t``
_KEYWORD_NAME = "a keyword used as a name (a table named select, an alias named limit or join): quote it"

_LOGGER = logging.getLogger("sqlglot")
_inside = threading.local()  # parsing: whether the thread is inside parse()


class _OurParses(logging.Filter):
    """Drops the records sqlglot logs while the thread logging them is inside :func:`parse`."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not getattr(_inside, "parsing", False)


_FILTER = _OurParses()


def parse(sql: str, dialect: str) -> list[exp.Expr]:
    """The statements of ``sql`` as sqlglot parses them in ``dialect``, empty ones left out, quietly.

    Raises:
        sqlglot.errors.SqlglotError: sqlglot cannot parse ``sql``, or would misread it: in Spark's and
            Hive's dialects, a ``TABLE t`` query (anywhere: ``WITH c AS (TABLE t)`` too), or a table
            named ``table`` unquoted or a column of that name aliased, which sqlglot cannot tell from
            one (Spark reads ``FROM (table t)`` as the query ``TABLE t``); Spark's streaming read
            ``STREAM t`` or ``STREAM(t)``, or a table named ``stream`` unquoted with an alias, which
            Spark reads as one; a table named with ``IDENTIFIER('t')``; a table argument of a table
            function that names its table, ``f(TABLE(t))``; a keyword Spark reads as a name there
            (``FROM select``, ``FROM t limit, u``, ``FROM t AS join JOIN u``, ``SELECT all FROM t``).
        RecursionError: ``sql`` nests too deeply for sqlglot.
    """
    if _FILTER not in _LOGGER.filters:  # added once, and again should someone have cleared the filters
        _LOGGER.addFilter(_FILTER)
    _inside.parsing = True
    try:
        trees = [tree for tree in sqlglot.parse(sql, read=dialect) if tree is not None]
    finally:
        _inside.parsing = False
    if dialect in _MISREAD_SPARK:
        for tree in trees:
            misread = _misread(tree)
            if misread:
                raise sqlglot.errors.ParseError(f"sqlglot misreads {misread}")
    return trees


def _misread(tree: exp.Expr) -> str | None:
    """What of Spark's syntax in ``tree`` sqlglot has misread (see :func:`parse`), if anything.

    The column ``TABLE`` aliased stands wherever Spark has a query (the whole text, a CTE's, one
    in parentheses): ``SELECT table AS x`` (a column named table) looks the same to sqlglot.
    """
    for node in tree.walk():
        if isinstance(node, exp.Alias) and isinstance(node.this, exp.Column) and not node.this.table \
                and _is_bare(node.this.this, "table"):
            return _TABLE_QUERY
        if isinstance(node, exp.Table):
            if len(node.parts) == 1 and _is_bare(node.this, "table"):
                return _TABLE_QUERY
            if len(node.parts) == 1 and _is_bare(node.this, "stream") and node.alias or _is_call(node.this, "STREAM"):
                return _STREAM
            if _is_call(node.this, "IDENTIFIER"):
                return _IDENTIFIER
        if _is_call(node, "TABLE") and any(_names_a_table(arg) for arg in node.expressions):
            return _TABLE_ARGUMENT
        if isinstance(node, exp.Select) and (not node.expressions or isinstance(node.parent, (exp.From, exp.Join))) \
                or isinstance(node, exp.Limit) and any(not _is_bare(column.this, "all")  # Hive's LIMIT ALL
                                                       for column in node.find_all(exp.Column)) \
                or isinstance(node, exp.TableAlias) and _is_bare(node.this, "join"):
            return _KEYWORD_NAME
    return None


def _is_bare(node: exp.Expr | None, name: str) -> bool:
    """Whether ``node`` is the identifier ``name`` unquoted, in any case."""
    return isinstance(node, exp.Identifier) and not node.quoted and node.name.lower() == name


def _names_a_table(argument: exp.Expr) -> bool:
    """Whether ``argument`` of ``TABLE(...)`` is a name (``t``, ``db.t``, ``IDENTIFIER('t')``), not a
    query nor a call (Flink's ``TABLE(db.f(x))``)."""
    if isinstance(argument, exp.Dot):
        return not isinstance(argument.expression, exp.Func)
    return isinstance(argument, exp.Column) or _is_call(argument, "IDENTIFIER")


def _is_call(node: exp.Expr | None, name: str) -> bool:
    """Whether ``node`` is a call of a function sqlglot does not know, named ``name`` (upper case)."""
    return isinstance(node, exp.Anonymous) and node.name.upper() == name


def tables_read(tree: exp.Expr, dialect: str) -> list[exp.Table]:
    """The tables ``tree`` reads: named by identifiers, CTE names where in scope and names in hints left
    out (see the module).

    Each is its ``Table`` node (its parts, and the identifiers' positions in the parsed text), in
    the order sqlglot walks the tree, which is not always the order they are written.
    ``dialect`` is the sqlglot dialect ``tree`` was parsed in: it decides which CTEs are in scope.
    """
    everywhere = dialect == _HIVE
    names: dict[int, list[str]] = {}  # the CTE names of each WITH met, lower case, in order
    found = []
    for table in tree.find_all(exp.Table):
        parts = table.parts
        if not parts or not all(isinstance(part, exp.Identifier) for part in parts):
            continue  # a table-valued function, a parameter: no table's name
        if table.find_ancestor(exp.Hint) is not None:
            continue  # a join hint's name: a relation of the query, by its name or alias
        if len(parts) == 1 and _cte_in_scope(table, parts[0].name.lower(), everywhere, names):
            continue
        found.append(table)
    return found


def _cte_in_scope(table: exp.Table, name: str, everywhere: bool, names: dict[int, list[str]]) -> bool:
    """Whether a ``WITH`` around ``table`` defines the CTE ``name`` where ``table`` stands."""
    child: exp.Expr = table
    through: exp.Expr | None = None  # the last CTE passed on the way up
    node = table.parent
    while node is not None:
        if isinstance(node, exp.CTE):
            through = node
        with_ = node.args.get("with_") or node.args.get("with")
        if isinstance(with_, exp.With):
            defined = names.get(id(with_))
            if defined is None:
                defined = names[id(with_)] = [cte.alias_or_name.lower() for cte in with_.expressions]
            if child is with_ and not everywhere:  # inside one of its CTEs: those before it (and itself if recursive)
                index = next((i for i, cte in enumerate(with_.expressions) if cte is through), len(defined))
                defined = defined[:index + 1] if with_.args.get("recursive") else defined[:index]
            if name in defined:
                return True
        child, node = node, node.parent
    return False
