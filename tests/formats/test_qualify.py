"""Qualifying a view's unqualified table names for Hive and Flink records (viewstore.formats.qualify)."""

from __future__ import annotations

import pytest

from viewstore.errors import ValidationError
from viewstore.formats.qualify import implied_namespace, needs_qualifying, qualify_tables

ENGINES = ["hive", "flink"]


@pytest.mark.parametrize("namespace, database, needed", [
    ((), "reports", False), (("reports",), "reports", False), (("Reports",), "reports", False),
    (("sales",), "reports", True), (("sales",), None, True), (("a", "reports"), "reports", True),
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
])
def test_unqualified_table_names_get_the_namespace(engine, sql, qualified):
    assert qualify_tables(sql, engine, ("sales",), "viewExpandedText") == qualified


def test_the_namespace_is_back_quoted():
    assert qualify_tables("SELECT * FROM t", "hive", ("odd`db",), "f") == "SELECT * FROM `odd``db`.t"


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("sql, why", [
    ("SELEC * FROM orders", "sqlglot cannot parse"),
    ("SELEC orders", "not read as one query"),
    ("SELECT * FROM a; SELECT * FROM b", "not read as one query"),
    ("TABLE orders", "not read as one query"),
    ("SELECT * FROM `sales.orders`", "holds a dot"),
    ("SELECT * FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), INTERVAL '1' MINUTES))", "sqlglot cannot parse"),
    ("SELECT * FROM " + "(SELECT * FROM " * 3000 + "t" + ")" * 3000, "nests too deeply"),
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


@pytest.mark.parametrize("engine", ENGINES)
def test_the_implied_namespace_is_read_back_from_a_qualified_text(engine):
    original = "WITH r AS (SELECT 1 AS x) SELECT * FROM r JOIN orders ON true JOIN `x``y` ON true"
    for database in ("sales", "odd`db"):
        assert implied_namespace(original, qualify_tables(original, engine, (database,), "f"), engine) == database


@pytest.mark.parametrize("original, expanded", [
    # an engine's own expansion, formatted its own way
    ("select x,cast(ts as timestamp_ltz(3)) from v1",
     "SELECT `v1`.`x`, CAST(`v1`.`ts` AS TIMESTAMP_LTZ(3))\nFROM `test-catalog`.`db1`.`v1`"),
    ("SELECT * FROM a JOIN b ON true", "SELECT * FROM `s`.a JOIN `t`.b ON true"),  # not one namespace
    ("SELECT * FROM a", "SELECT * FROM `s`.a WHERE 1 = 1"),
    ("SELECT 1", "SELECT 2"),  # no table names
    ("SELEC * FROM a", "SELEC * FROM `s`.a"),  # cannot be read
    ("SELECT * FROM a", "SELECT * FROM ``.a"),
])
def test_other_texts_imply_no_namespace(original, expanded):
    assert implied_namespace(original, expanded, "flink") is None
