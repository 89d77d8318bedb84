"""The tables a SQL text reads, and sqlglot kept quiet while viewstore parses (viewstore.formats.references)."""

from __future__ import annotations

import logging
import threading

import pytest
import sqlglot

from viewstore.formats.references import parse, tables_read

#: a JSON path sqlglot cannot read: it logs a warning (Spark, Hive and Flink return NULL for it)
BAD_PATH = "SELECT get_json_object(j, '$.a[') AS x FROM orders"
WARNING = "Invalid JSON path syntax. Cannot have empty segment at index 4: $.a["


def read(sql: str, dialect: str = "spark") -> list[str]:
    [tree] = parse(sql, dialect)
    return [".".join(part.name for part in table.parts) for table in tables_read(tree, dialect)]


@pytest.mark.parametrize("sql, tables", [
    ("SELECT * FROM a JOIN db.b ON true JOIN cat.db.c ON true JOIN cat.n1.n2.d ON true",
     ["a", "db.b", "cat.db.c", "cat.n1.n2.d"]),
    # table-valued functions and parameters name no table; subquery aliases are no tables
    ("SELECT * FROM range(10) JOIN db.fn(1) ON true JOIN ${t} ON true JOIN (SELECT 1 AS x) s ON true", []),
    # a CTE name in its WITH's query and its subqueries, in any case
    ("WITH c AS (SELECT * FROM t) SELECT * FROM C WHERE x IN (SELECT x FROM c)", ["t"]),
    ("WITH C AS (SELECT * FROM t) SELECT * FROM c", ["t"]),
    # ... but not outside that query
    ("SELECT * FROM c UNION ALL SELECT * FROM (WITH c AS (SELECT 1 AS x) SELECT x FROM c) s", ["c"]),
    ("SELECT * FROM (WITH c AS (SELECT 1 AS x) SELECT x FROM c) s JOIN c ON true", ["c"]),
    # a CTE in the CTEs after it, not in itself nor before it, but in itself when recursive
    ("WITH a AS (SELECT * FROM a), b AS (SELECT * FROM a JOIN c ON true), c AS (SELECT 1 AS x) SELECT * FROM b",
     ["a", "c"]),
    ("WITH RECURSIVE a AS (SELECT 1 AS x UNION ALL SELECT x + 1 FROM a WHERE x < 3) SELECT * FROM a", []),
    # an outer WITH reaches into a nested one's CTEs
    ("WITH o AS (SELECT 1 AS x) SELECT * FROM (WITH i AS (SELECT * FROM o JOIN i ON true) SELECT * FROM i) s",
     ["i"]),
    # a qualified name is never a CTE, nor is its first part one
    ("WITH c AS (SELECT 1 AS x) SELECT * FROM db.c", ["db.c"]),
    ("WITH db AS (SELECT 1 AS x) SELECT * FROM db.c", ["db.c"]),
    # a join hint names a relation of the query, by its name or alias: it reads none
    ("SELECT /*+ BROADCAST(c), MERGE(db.t) */ * FROM orders JOIN customers c ON true JOIN db.t ON true",
     ["orders", "customers", "db.t"]),
])
def test_the_tables_a_query_reads(sql, tables):
    assert sorted(read(sql)) == sorted(tables)


def test_hive_sees_every_cte_of_a_with_in_all_of_them():
    sql = "WITH a AS (SELECT * FROM a), b AS (SELECT * FROM c), c AS (SELECT 1 AS x) SELECT * FROM b JOIN t ON true"
    assert read(sql, "hive") == ["t"]
    assert sorted(read(sql, "spark")) == ["a", "c", "t"]


def test_the_nodes_keep_their_positions_in_the_text():
    sql = "SELECT * FROM orders JOIN `Line Items` ON true"
    [tree] = parse(sql, "spark")
    assert sorted(table.this.meta["start"] for table in tables_read(tree, "spark")) == [14, 26]


def test_parse_leaves_out_empty_statements_and_raises_sqlglots_errors():
    assert [tree.sql() for tree in parse("SELECT 1;; SELECT 2;", "spark")] == ["SELECT 1", "SELECT 2"]
    assert parse("", "spark") == []
    with pytest.raises(sqlglot.errors.ParseError):
        parse("SELECT FROM WHERE (", "spark")


def test_our_parses_log_nothing_and_the_callers_own_log_as_before(caplog):
    with caplog.at_level(logging.DEBUG, logger="sqlglot"):
        assert read(BAD_PATH) == ["orders"]
        assert read("SHOW TABLES") == []  # sqlglot keeps it as a Command, and warns that it does
        assert caplog.records == []
        sqlglot.parse_one(BAD_PATH, read="spark")
        assert [r.getMessage() for r in caplog.records] == [WARNING]


def test_another_threads_sqlglot_calls_log_while_we_parse(caplog):
    """Only what is logged inside our parse is dropped: here another thread parses meanwhile, started
    by a filter ahead of ours when our parse's own warning reaches the logger."""
    logger = logging.getLogger("sqlglot")
    theirs = []

    def their_parse() -> None:
        theirs.append(sqlglot.parse_one(BAD_PATH, read="spark"))

    class TheirParseMeanwhile(logging.Filter):
        started = False

        def filter(self, record: logging.LogRecord) -> bool:
            if not self.started:  # on our parse's record (theirs passes here too)
                self.started = True
                thread = threading.Thread(target=their_parse)
                thread.start()
                thread.join()
            return True

    read("SELECT 1 AS x")  # our filter is in place
    meanwhile = TheirParseMeanwhile()
    logger.filters.insert(0, meanwhile)
    try:
        with caplog.at_level(logging.DEBUG, logger="sqlglot"):
            assert read(BAD_PATH) == ["orders"]
    finally:
        logger.removeFilter(meanwhile)
    assert len(theirs) == 1
    assert [r.getMessage() for r in caplog.records] == [WARNING]  # theirs, not ours
    assert caplog.records[0].thread != threading.get_ident()


@pytest.mark.parametrize("left", [[], [logging.Filter("sqlglot")]], ids=["cleared", "removed beside another"])
def test_the_filter_comes_back_if_it_is_taken_off_the_logger(caplog, left):
    """Cleared from the logger's filters, or removed while another filter (one that lets every record
    through) stays, the filter is put back by the next parse."""
    logger = logging.getLogger("sqlglot")
    read("SELECT 1 AS x")
    saved = list(logger.filters)
    logger.filters[:] = left
    try:
        with caplog.at_level(logging.DEBUG, logger="sqlglot"):
            read(BAD_PATH)
        assert caplog.records == []
    finally:
        logger.filters[:] = saved


@pytest.mark.parametrize("dialect", ["spark", "spark2", "hive", "databricks"])
@pytest.mark.parametrize("sql", ["TABLE a", "table a", "SELECT * FROM (TABLE a)", "SELECT * FROM Table t",
                                 "SELECT x FROM a UNION ALL SELECT x FROM (TABLE b)",
                                 "(TABLE a)", "WITH c AS (TABLE a) SELECT * FROM c",
                                 "SELECT table AS x FROM t"])  # a column named table, aliased: the same to sqlglot
def test_a_table_query_sqlglot_would_misread_is_not_parsed(sql, dialect):
    """sqlglot reads `TABLE a` as the column TABLE aliased a (alone, in parentheses, as a CTE's query),
    and `(TABLE a)` in FROM as a table named TABLE: no table read would be found, or one named `table`."""
    with pytest.raises(sqlglot.errors.ParseError, match="misreads a TABLE query"):
        parse(sql, dialect)


@pytest.mark.parametrize("sql, tables", [
    ("SELECT * FROM `table` t", ["table"]),  # quoted: a table of that name
    ("SELECT * FROM db.table t JOIN a table ON true", ["db.table", "a"]),  # qualified; an alias
    ("SELECT table FROM t", ["t"]),  # a column
    ("SELECT t.table AS x FROM t", ["t"]),  # a column of t, aliased
])
def test_table_as_a_name_that_sqlglot_reads_right_is_parsed(sql, tables):
    assert read(sql) == tables


@pytest.mark.parametrize("dialect", ["spark", "hive"])
@pytest.mark.parametrize("sql", ["SELECT * FROM STREAM orders", "SELECT * FROM stream AS s",
                                 "SELECT * FROM STREAM(orders)", "SELECT * FROM t JOIN stream(db.orders) o ON true"])
def test_a_streaming_read_sqlglot_would_misread_is_not_parsed(sql, dialect):
    """sqlglot reads `STREAM orders` as a table named STREAM aliased orders (Spark reads `stream AS s`
    as STREAM of a table named `as`), and `STREAM(orders)` as a table function: it read no table."""
    with pytest.raises(sqlglot.errors.ParseError, match="misreads a streaming read"):
        parse(sql, dialect)


@pytest.mark.parametrize("sql", ["SELECT * FROM IDENTIFIER('orders')", "SELECT * FROM t WHERE x IN (SELECT x FROM "
                                 "identifier('db' || '.u') AS u)"])
def test_a_table_named_with_identifier_is_not_parsed(sql):
    """sqlglot reads Spark's IDENTIFIER('orders') in FROM as a table function: it read no table."""
    with pytest.raises(sqlglot.errors.ParseError, match="misreads a table named with IDENTIFIER"):
        parse(sql, "spark")
    assert read("SELECT IDENTIFIER('x') FROM t") == ["t"]  # a column so named: no table


@pytest.mark.parametrize("sql", ["SELECT * FROM f(TABLE(events))", "SELECT * FROM f(TABLE(db.events), 3)",
                                 "SELECT * FROM f(TABLE(IDENTIFIER('events')))", "SELECT * FROM f(TABLE(c.n1.n2.t))"])
def test_a_table_argument_naming_its_table_is_not_parsed(sql):
    """sqlglot reads Spark's table argument TABLE(events) as a call with the column events: it read no table."""
    with pytest.raises(sqlglot.errors.ParseError, match="misreads a table argument naming its table"):
        parse(sql, "spark")


def test_a_table_argument_sqlglot_reads_right_is_parsed():
    assert read("SELECT * FROM f(TABLE(SELECT * FROM events))") == ["events"]  # a query
    for call in ("split_tags(tags)", "`cat`.`db`.`split_tags`(tags)"):  # Flink's calls
        assert read(f"SELECT * FROM orders, LATERAL TABLE({call}) AS t(tag)") == ["orders"]


@pytest.mark.parametrize("sql", ["SELECT * FROM select", "SELECT * FROM select s JOIN t ON true",
                                 "SELECT * FROM t JOIN select ON true", "SELECT * FROM t JOIN select s ON true",
                                 "SELECT * FROM t limit, u",
                                 "SELECT * FROM t AS join JOIN u ON true",
                                 "SELECT all FROM t", "SELECT distinct FROM t"])
def test_a_keyword_spark_reads_as_a_name_is_not_parsed(sql):
    """Spark reads `FROM select` as the table select (sqlglot: a query of nothing), `t limit, u` as t
    aliased limit joined with u (sqlglot: LIMIT u), `t AS join JOIN u` as t and the table JOIN, and
    `SELECT all FROM t` as the column FROM aliased t."""
    with pytest.raises(sqlglot.errors.ParseError, match="misreads a keyword used as a name"):
        parse(sql, "spark")
    assert read("SELECT * FROM t AS `limit`, `select` JOIN u AS `join` ON true JOIN v offset ON true LIMIT 1") == \
        ["t", "select", "u", "v"]
    assert read("SELECT * FROM t LIMIT ALL") == read("SELECT * FROM t LIMIT ALL", "hive") == ["t"]  # no limit


def test_a_table_named_stream_that_sqlglot_reads_right_is_parsed():
    assert read("SELECT * FROM stream, `stream` s JOIN db.stream x ON true JOIN t AS stream ON true") == \
        ["stream", "stream", "db.stream", "t"]


def test_a_table_query_is_read_in_the_dialects_sqlglot_reads_it_right():
    assert read("TABLE db.a", "trino") == ["db.a"]
