"""Qualifying a view's unqualified table names for Hive and Flink records (viewstore.formats.qualify)."""

from __future__ import annotations

import pytest

from viewstore.errors import ValidationError
from viewstore.formats.qualify import implied_namespace, needs_qualifying, qualify_tables

ENGINES = ["hive", "flink"]


@pytest.mark.parametrize("namespace, database, needed", [
    ((), "reports", False), (("reports",), "reports", False), (("Reports",), "reports", False),
    (("sales",), "reports", True), (("sales",), None, True), (("a", "reports"), "reports", True),
    (("reports",), "Reports", False),
])
def test_only_another_namespace_needs_qualifying(namespace, database, needed):
    assert needs_qualifying(namespace, database) is needed


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("sql, qualified", [
    ("SELECT * FROM orders", "SELECT * FROM `sales`.orders"),
    # everything but the names stays as written: case, spacing, comments, other quoting
    ("select o.id  -- the id\nFROM orders o\n  JOIN `Line Items` AS li ON li.id = o.id",
     "select o.id  -- the id\nFROM `sales`.orders o\n  JOIN `sales`.`Line Items` AS li ON li.id = o.id"),
    # CTE names, table-valued functions, subquery aliases and qualified names are left alone
    ("WITH recent AS (SELECT * FROM orders) SELECT * FROM recent JOIN crm.customers c ON true "
     "JOIN (SELECT 1 AS x) s ON true JOIN range(3) r ON true",
     "WITH recent AS (SELECT * FROM `sales`.orders) SELECT * FROM recent JOIN crm.customers c ON true "
     "JOIN (SELECT 1 AS x) s ON true JOIN range(3) r ON true"),
    # a CTE name only where its WITH is in scope: the outer `recent` is a table
    ("SELECT * FROM (WITH recent AS (SELECT 1 AS x) SELECT * FROM recent) s JOIN recent ON true",
     "SELECT * FROM (WITH recent AS (SELECT 1 AS x) SELECT * FROM recent) s JOIN `sales`.recent ON true"),
    ("SELECT id FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.id = a.id) UNION ALL SELECT id FROM c",
     "SELECT id FROM `sales`.a WHERE EXISTS (SELECT 1 FROM `sales`.b WHERE b.id = a.id) UNION ALL "
     "SELECT id FROM `sales`.c"),
    ("SELECT 1 AS one", "SELECT 1 AS one"),
    # a join hint's name is the relation's name or alias in the query, no table of its own
    ("SELECT /*+ BROADCAST(c) */ * FROM orders JOIN customers c ON true",
     "SELECT /*+ BROADCAST(c) */ * FROM `sales`.orders JOIN `sales`.customers c ON true"),
])
def test_unqualified_table_names_get_the_namespace(engine, sql, qualified):
    assert qualify_tables(sql, engine, ("sales",), "viewExpandedText") == qualified


@pytest.mark.parametrize("engine, qualified", [
    # Flink (Calcite, as Spark) resolves a CTE in the CTEs after it only: in itself and before it the name is a table
    ("flink", "WITH a AS (SELECT * FROM `sales`.a), c AS (SELECT * FROM `sales`.b), b AS (SELECT 1 AS x) "
              "SELECT * FROM a JOIN c ON true JOIN b ON true"),
    # Hive resolves every CTE of a WITH in all of them
    ("hive", "WITH a AS (SELECT * FROM a), c AS (SELECT * FROM b), b AS (SELECT 1 AS x) "
             "SELECT * FROM a JOIN c ON true JOIN b ON true"),
])
def test_a_cte_name_is_in_scope_where_the_engine_resolves_it(engine, qualified):
    sql = "WITH a AS (SELECT * FROM a), c AS (SELECT * FROM b), b AS (SELECT 1 AS x) SELECT * FROM a JOIN c ON true " \
          "JOIN b ON true"
    assert qualify_tables(sql, engine, ("sales",), "viewExpandedText") == qualified


def test_the_namespace_is_back_quoted():
    assert qualify_tables("SELECT * FROM t", "hive", ("odd`db",), "f") == "SELECT * FROM `odd``db`.t"


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("sql, why", [
    ("SELEC * FROM orders", "sqlglot cannot parse"),
    ("SELEC orders", "not read as one query"),
    ("SELECT * FROM a; SELECT * FROM b", "not read as one query"),
    # sqlglot misreads a TABLE query: `(TABLE orders)` became (`sales`.TABLE orders), a table named TABLE
    ("TABLE orders", "sqlglot misreads a TABLE query"),
    ("SELECT * FROM (TABLE orders)", "sqlglot misreads a TABLE query"),
    # ... as a CTE's query too: the text came back unchanged, orders left to the record's database
    ("WITH c AS (TABLE orders) SELECT * FROM c JOIN items ON true", "sqlglot misreads a TABLE query"),
    ("SELECT * FROM `sales.orders`", "holds a dot"),
    ("SELECT * FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), INTERVAL '1' MINUTES))", "sqlglot cannot parse"),
    ("SELECT * FROM " + "(SELECT * FROM " * 3000 + "t" + ")" * 3000, "nests too deeply"),
    ("-- no query", "not read as one query"),
])
def test_sql_that_cannot_be_read_safely_is_refused_with_advice(engine, sql, why):
    with pytest.raises(ValidationError) as caught:
        qualify_tables(sql, engine, ("sales",), "viewExpandedText")
    message = str(caught.value)
    assert message.startswith("viewExpandedText: the view's unqualified table names resolve in 'sales'")
    assert why in message
    assert "write each table name in the view's SQL with its database (database.table)" in message


def test_a_namespace_of_two_levels_cannot_be_a_database():
    with pytest.raises(ValidationError, match="'a.b', not in the record's database, and a hive view can qualify "
                                              "them with a database \\(one level\\), not 2 levels"):
        qualify_tables("SELECT * FROM t", "hive", ("a", "b"), "viewExpandedText")
    with pytest.raises(ValidationError, match="not 0 levels"):
        qualify_tables("SELECT * FROM t", "hive", (), "viewExpandedText")


@pytest.mark.parametrize("engine", ENGINES)
def test_the_implied_namespace_is_read_back_from_a_qualified_text(engine):
    original = "WITH r AS (SELECT 1 AS x) SELECT * FROM r JOIN orders ON true JOIN `x``y` ON true JOIN crm.c ON true"
    for database in ("sales", "odd`db"):
        assert implied_namespace(original, qualify_tables(original, engine, (database,), "f"), engine) == database


# Flink's own expanded query (the validated query unparsed): every table `catalog`.`database`.`name`,
# an alias for each, qualified columns, keywords in upper case, a line per clause. Older Flink writes
# the original query unparsed too (back-quoted, upper case), newer Flink as the user wrote it.
@pytest.mark.parametrize("original, expanded, database", [
    ("select x,cast(ts as timestamp_ltz(3)) from v1",  # the conformance record
     "SELECT `v1`.`x`, CAST(`v1`.`ts` AS TIMESTAMP_LTZ(3))\nFROM `test-catalog`.`db1`.`v1`", "db1"),
    ("SELECT `id`, `amount`\nFROM `orders`",  # an older Flink's original
     "SELECT `orders`.`id`, `orders`.`amount`\nFROM `hive`.`sales`.`orders` AS `orders`", "sales"),
    # a table function: Flink qualifies the function too; it is no table to either text
    ("SELECT id, tag FROM orders, LATERAL TABLE(split_tags(tags)) AS T(tag)",
     "SELECT `orders`.`id`, `T`.`tag`\nFROM `hive`.`sales`.`orders` AS `orders`,\n"
     "LATERAL TABLE(`hive`.`sales`.`split_tags`(`tags`)) AS `T` (`tag`)", "sales"),
    # a subquery in FROM and one in WHERE, a UNION
    ("SELECT day, SUM(n) AS n FROM (SELECT CAST(ts AS DATE) AS day, 1 AS n FROM clicks) AS d GROUP BY day",
     "SELECT `d`.`day`, SUM(`d`.`n`) AS `n`\nFROM (SELECT CAST(`clicks`.`ts` AS DATE) AS `day`, 1 AS `n`\n"
     "FROM `hive`.`web`.`clicks` AS `clicks`) AS `d`\nGROUP BY `d`.`day`", "web"),
    ("SELECT id FROM orders WHERE id IN (SELECT order_id FROM refunds) UNION ALL SELECT id FROM archive.orders",
     "SELECT `orders`.`id`\nFROM `hive`.`sales`.`orders` AS `orders`\nWHERE `orders`.`id` IN (SELECT "
     "`refunds`.`order_id`\nFROM `hive`.`sales`.`refunds` AS `refunds`)\nUNION ALL\nSELECT `orders`.`id`\n"
     "FROM `hive`.`archive`.`orders` AS `orders`", "sales"),
    # a CTE: its name stays unqualified in both texts
    ("WITH big AS (SELECT * FROM orders WHERE amount > 100) SELECT id FROM big",
     "WITH `big` AS (SELECT `orders`.`id`, `orders`.`amount`\nFROM `hive`.`sales`.`orders` AS `orders`\n"
     "WHERE `orders`.`amount` > 100) SELECT `big`.`id`\nFROM `big` AS `big`", "sales"),
    # a temporal join, a fully qualified name of another catalog, names in another case
    ("SELECT o.id, r.rate FROM orders o JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r ON o.cur = r.cur "
     "JOIN paimon.fx.codes c ON c.cur = o.cur",
     "SELECT `o`.`id`, `r`.`rate`\nFROM `hive`.`sales`.`orders` AS `o`\nINNER JOIN `hive`.`sales`.`rates` "
     "FOR SYSTEM_TIME AS OF `o`.`ts` AS `r` ON `o`.`cur` = `r`.`cur`\nINNER JOIN `paimon`.`fx`.`codes` AS `c` "
     "ON `c`.`cur` = `o`.`cur`", "sales"),
    ("SELECT * FROM Orders", "SELECT `orders`.`id`\nFROM `hive`.`sales`.`orders` AS `orders`", "sales"),
    ("SELECT * FROM orders", "SELECT `Orders`.`id`\nFROM `hive`.`sales`.`Orders` AS `Orders`", "sales"),
    ("SELECT * FROM orders", "SELECT *\nFROM `hive`.`Sales`.`orders` AS `orders`", "Sales"),  # as written
])
def test_flinks_expanded_query_names_the_database_of_the_unqualified_names(original, expanded, database):
    assert implied_namespace(original, expanded, "flink") == database


@pytest.mark.parametrize("creator, unqualified_first", [("sales", True), ("sales", False), ("archive", True)])
def test_a_name_in_two_databases_is_paired_by_its_place(creator, unqualified_first):
    """`orders` in the creator's database beside archive.orders: each name pairs with the expanded one in its place."""
    names = [("orders", creator), ("archive.orders", "archive")][::1 if unqualified_first else -1]
    original = "SELECT x.id FROM {} x JOIN {} y ON x.id = y.id".format(*(name for name, _ in names))
    expanded = ("SELECT `x`.`id`\nFROM `hive`.`{}`.`orders` AS `x`\nINNER JOIN `hive`.`{}`.`orders` AS `y` "
                "ON `x`.`id` = `y`.`id`").format(*(database for _, database in names))
    assert implied_namespace(original, expanded, "flink") == creator


@pytest.mark.parametrize("engine", ENGINES)
def test_names_pair_by_their_place_in_the_text_when_the_trees_differ(engine):
    """The original names a table in parentheses and the expanded text does not, so sqlglot's walk
    meets its tables in another order in each: the pairs are made by where the names are written."""
    original = "SELECT * FROM (orders) JOIN refunds ON true"
    expanded = ("SELECT *\nFROM `hive`.`sales`.`orders` AS `orders`\n"
                "INNER JOIN `hive`.`sales`.`refunds` AS `refunds` ON TRUE")
    assert implied_namespace(original, expanded, engine) == "sales"


@pytest.mark.parametrize("original, expanded", [
    # the unqualified names are expanded with different databases, catalogs, or with and without one
    ("SELECT * FROM a JOIN b ON true", "SELECT * FROM `s`.a JOIN `t`.b ON true"),
    ("SELECT * FROM a JOIN b ON true", "SELECT *\nFROM `c`.`s`.`a` AS `a`\nINNER JOIN `d`.`s`.`b` AS `b` ON TRUE"),
    ("SELECT * FROM a JOIN b ON true", "SELECT *\nFROM `c`.`s`.`a` AS `a`\nINNER JOIN `s`.`b` AS `b` ON TRUE"),
    # a database.table name expanded with another catalog than the unqualified ones, or another database
    ("SELECT * FROM a JOIN x.b ON true", "SELECT *\nFROM `c`.`s`.`a` AS `a`\nINNER JOIN `d`.`x`.`b` AS `b` ON TRUE"),
    ("SELECT * FROM a JOIN x.b ON true", "SELECT *\nFROM `c`.`s`.`a` AS `a`\nINNER JOIN `c`.`y`.`b` AS `b` ON TRUE"),
    # the texts do not pair: another table, one more or one less, a name left unqualified
    ("SELECT * FROM a", "SELECT *\nFROM `c`.`s`.`b` AS `b`"),
    ("SELECT * FROM a", "SELECT *\nFROM `c`.`s`.`a` AS `a`, `c`.`s`.`b` AS `b`"),
    ("SELECT * FROM a JOIN b ON true", "SELECT *\nFROM `c`.`s`.`a` AS `a`"),
    ("SELECT * FROM a", "SELECT `a`.`x`\nFROM `a` AS `a`"),
    ("SELECT * FROM a", "SELECT *\nFROM `x`.`c`.`s`.`a` AS `a`"),  # more levels than catalog.database
    # nothing unqualified, no table names
    ("SELECT * FROM s.a", "SELECT *\nFROM `c`.`s`.`a` AS `a`"),
    ("SELECT 1", "SELECT 2"),
    # a text sqlglot cannot read (Flink's window functions), a quoted name holding a dot, an empty database
    ("SELECT * FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' MINUTES))",
     "SELECT *\nFROM TABLE(TUMBLE(TABLE `c`.`s`.`t`, DESCRIPTOR(`ts`), INTERVAL '1' MINUTE))"),
    ("SELECT * FROM a", "SELECT *\nFROM TABLE(TUMBLE(TABLE `c`.`s`.`a`, DESCRIPTOR(`ts`), INTERVAL '1' MINUTE))"),
    ("SELEC * FROM a", "SELEC * FROM `s`.a"),
    ("SELECT * FROM `s.a`", "SELECT *\nFROM `c`.`d`.`s.a` AS `s.a`"),
    ("SELECT * FROM a", "SELECT * FROM ``.a"),
])
def test_other_texts_imply_no_default(original, expanded):
    assert implied_namespace(original, expanded, "flink") is None
