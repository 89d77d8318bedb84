"""The tables viewstore finds in Spark SQL, against the relations Spark's own analyzer reads.

viewstore finds the tables a SQL text reads with sqlglot (viewstore.formats.references): for
register_views' ordering (table_references), the catalog plugin's cycle check, and for rewriting
the SQL of a Hive or Flink metastore record (viewstore.formats.qualify). Here each query of a
corpus of tricky Spark SQL is read by both: viewstore must find exactly the relations Spark
reads, or refuse the text; and a qualified text must read, in Spark, the same relations with the
namespace before each unqualified one, and nothing else of it may change.

The oracle: Spark parses the query and its analyzer runs (without its checks) in a session of
its own whose current catalog is an empty store's (viewstore's Spark catalog), so that nothing a
query names exists; every relation the query reads is then left as an ``UnresolvedRelation`` with
its name as written, CTE references aside (the analyzer has replaced those), in the plan or in a
subquery's plan. Only names given the session catalog (``spark_catalog.db.t``) reach the suite's
metastore: the corpus gives those databases no other test has, and the oracle fails on a relation
that exists.
"""

from __future__ import annotations

import functools
import re

import pytest
from pyspark.errors import AnalysisException
from pyspark.sql import SparkSession

from viewstore import ViewStore
from viewstore.errors import ValidationError
from viewstore.formats.qualify import qualify_tables
from viewstore.spark import attach, detach
from viewstore.spark.register import table_references

pytestmark = pytest.mark.spark

#: the namespace the qualify checks insert
NS = "viewstore_oracle_ns"

#: the corpus: (id, a Spark SQL view query); lake is the oracle's catalog, the current one
CORPUS = [
    # -- plain names -----------------------------------------------------------------------------
    ("one-table", "SELECT * FROM orders"),
    ("qualified", "SELECT o.id FROM shop.orders o JOIN spark_catalog.oracle_crm.customers c ON o.cid = c.id"),
    ("other-catalog", "SELECT * FROM lake.shop.orders JOIN lake.a.b.c ON true JOIN lake.items ON true"),
    ("upper-case", "SELECT * FROM Shop.ORDERS JOIN OrderItems ON true"),
    ("back-quoted", "SELECT * FROM `line items` JOIN `shop`.`order lines` ON true JOIN `we``ird` ON true"),
    ("quoted-dot", "SELECT * FROM `shop.orders`"),
    ("digits", "SELECT * FROM 1tab JOIN shop.2024_orders ON true"),
    ("keyword-names", "SELECT * FROM date JOIN view ON date.d = view.d JOIN user ON true"),
    ("quoted-table", "SELECT * FROM `table` JOIN shop.table ON true"),
    ("global-temp", "SELECT * FROM global_temp.recent_orders"),
    ("comma-join", "SELECT * FROM orders, customers WHERE orders.cid = customers.id"),
    ("parenthesised", "SELECT * FROM (orders) JOIN ((customers)) ON true"),
    ("parenthesised-join", "SELECT * FROM a JOIN (b JOIN c ON b.k = c.k) ON a.k = b.k"),
    ("semicolon", "SELECT * FROM orders;"),
    ("stream-named-table", "SELECT * FROM stream, t JOIN `stream` s ON true"),
    ("stream-named-table-lateral-view", "SELECT * FROM stream LATERAL VIEW explode(x) e AS y"),
    ("keyword-table-select", "SELECT * FROM select JOIN t ON true"),
    ("keyword-alias-limit", "SELECT * FROM t limit, u"),
    ("keyword-alias-join", "SELECT * FROM t AS join JOIN u ON true"),  # the table JOIN aliased u, to Spark
    ("limits", "SELECT * FROM (SELECT * FROM t LIMIT ALL) JOIN (SELECT * FROM u LIMIT 1 + 2 OFFSET 1) ON true"),
    # -- aliases ---------------------------------------------------------------------------------
    ("alias-like-table", "SELECT customers.id FROM shop.orders AS customers JOIN items ON true"),
    ("alias-of-other", "SELECT * FROM a AS b JOIN b AS a ON a.x = b.x"),
    ("subquery-alias", "SELECT * FROM (SELECT 1 AS x) AS customers JOIN customers c ON true"),
    ("column-alias-list", "SELECT * FROM orders AS o(id, amount)"),
    # -- comments and literals ---------------------------------------------------------------------
    ("block-comment", "SELECT * FROM /* c */ orders /* JOIN fake */"),
    ("line-comment", "SELECT * FROM -- c FROM fake\n orders -- JOIN fake"),
    ("nested-comment", "SELECT * FROM /* a /* b */ FROM fake */ orders"),
    ("hint", "SELECT /*+ BROADCAST(customers) */ * FROM orders JOIN customers ON true"),
    ("hint-alias", "SELECT /*+ BROADCAST(c), MERGE(shop.items) */ * FROM orders JOIN customers c ON true "
                   "JOIN shop.items ON true"),
    ("string-literals", "SELECT 'FROM fake' AS a, \"JOIN fake\" AS b FROM orders WHERE note LIKE '%FROM x%'"),
    ("backslash-escape", "SELECT 'a\\' FROM fake' AS s FROM orders"),
    ("doubled-quote", "SELECT 'it''s' AS s FROM orders"),
    ("raw-string", "SELECT r'\\d+ FROM fake' AS p FROM orders"),
    ("typed-literals", "SELECT DATE '2024-01-01' AS d, INTERVAL 1 DAY AS i, X'1F' AS b FROM orders"),
    ("comment-quotes", "SELECT * FROM t -- it's\n JOIN u ON true /* it's */ JOIN v ON true"),
    ("comment-marks-in-literals", "SELECT '--' AS a, '/*' AS b FROM t"),
    ("comment-marks-in-names", "SELECT * FROM `a--b` JOIN `c/*d` ON true"),
    ("escaped-backslash", "SELECT 'a\\\\' AS x FROM t"),
    ("escaped-double-quote", "SELECT \"a\\\"b FROM fake\" AS x FROM t"),
    ("unicode-escape", "SELECT * FROM t WHERE x = '\\u0027 FROM fake' AND y = 1"),
    ("adjacent-literals", "SELECT 'a' 'b' AS s FROM t"),
    ("collate", "SELECT 'a' COLLATE UTF8_LCASE AS c FROM t"),
    ("keyword-functions", "SELECT EXTRACT(YEAR FROM d) AS y, SUBSTRING(s FROM 1 FOR 2) AS s2, "
                          "TRIM(BOTH 'x' FROM s) AS s3, POSITION('a' IN s) AS p, OVERLAY(s PLACING 'x' FROM 2) AS o "
                          "FROM t"),
    ("casts", "SELECT CAST(x AS STRUCT<a: INT, b: STRING>) AS s, x::int AS i, try_cast(y AS DATE) AS d FROM t"),
    ("named-arguments", "SELECT mask(x, upperChar => 'X') AS m FROM t"),
    ("non-ascii", "SELECT 'é€😀' AS x FROM t JOIN `naïve` ON true JOIN `ünïcödé tablé` ON true"),
    ("crlf-tabs", "SELECT *\r\nFROM\tt\r\n-- c\r\nJOIN\tu ON true"),
    ("leading-comments", "/* leading */ -- and a line\nSELECT /* FROM fake */ * FROM t"),
    ("comment-after-literal", "SELECT * FROM t WHERE s = 'FROM fake' -- 'x\n AND u IN (SELECT u FROM v)"),
    ("keywords-in-fields", "SELECT a['FROM x'] AS f, s.`FROM` AS g, named_struct('table', 1) AS h, x AS `table` "
                           "FROM t WHERE x = 'TABLE u'"),
    # -- CTEs ------------------------------------------------------------------------------------
    ("cte", "WITH c AS (SELECT * FROM orders) SELECT * FROM c"),
    ("cte-case", "WITH Recent AS (SELECT * FROM orders) SELECT * FROM RECENT"),
    ("cte-column-list", "WITH c(a, b) AS (SELECT 1, 2) SELECT * FROM c JOIN d ON true"),
    ("cte-without-as", "WITH c (SELECT * FROM t) SELECT * FROM c"),
    ("cte-against-alias", "WITH c AS (SELECT 1 AS x) SELECT * FROM t AS c WHERE EXISTS (SELECT * FROM c)"),
    ("cte-shadows-table", "WITH orders AS (SELECT * FROM orders) SELECT * FROM orders"),
    ("cte-forward", "WITH a AS (SELECT * FROM b), b AS (SELECT 1 AS x) SELECT * FROM a"),
    ("cte-chain", "WITH a AS (SELECT * FROM t), b AS (SELECT * FROM a), c AS (SELECT * FROM b) SELECT * FROM c"),
    ("cte-in-subqueries", "WITH c AS (SELECT max(x) AS m FROM t) "
                          "SELECT (SELECT m FROM c) AS m, y FROM u WHERE EXISTS (SELECT 1 FROM c)"),
    ("cte-qualified-name", "WITH orders AS (SELECT 1 AS x) SELECT * FROM shop.orders JOIN orders ON true"),
    ("cte-nested-shadow", "WITH c AS (SELECT 1 AS x) SELECT * FROM (WITH c AS (SELECT * FROM c) SELECT * FROM c) s"),
    ("cte-inner-out-of-scope", "WITH a AS (WITH b AS (SELECT * FROM t) SELECT * FROM b) SELECT * FROM a, b"),
    ("cte-in-in-subquery", "SELECT * FROM c WHERE x IN (WITH c AS (SELECT y FROM u) SELECT y FROM c)"),
    ("cte-self-join", "WITH c AS (SELECT * FROM t) SELECT * FROM c c1 JOIN c c2 ON c1.x = c2.x"),
    ("cte-union", "WITH a AS (SELECT 1 AS x) SELECT * FROM a UNION ALL SELECT * FROM a UNION ALL SELECT * FROM b"),
    ("cte-parenthesised-union", "WITH c AS (SELECT 1 AS x) (SELECT * FROM c) UNION ALL (SELECT * FROM d)"),
    ("cte-named-like-tvf", "WITH range AS (SELECT * FROM t) SELECT * FROM range"),
    ("cte-in-lateral", "WITH c AS (SELECT 1 AS k) SELECT * FROM t, LATERAL (SELECT * FROM c WHERE c.k = t.k) s"),
    ("cte-self-in-subquery", "WITH a AS (SELECT * FROM x WHERE y IN (SELECT y FROM a)) SELECT * FROM a"),
    ("cte-forward-from-nested", "WITH a AS (SELECT * FROM (WITH b AS (SELECT 1) SELECT * FROM c) s), c AS (SELECT 2) "
                                "SELECT * FROM a"),
    ("cte-nested-same-name", "WITH a AS (WITH a AS (SELECT * FROM a) SELECT * FROM a) SELECT * FROM a"),
    ("cte-nested-reads-outer", "WITH t AS (SELECT 1 AS x), u AS (WITH t AS (SELECT * FROM t) SELECT * FROM t) "
                               "SELECT * FROM u"),
    ("cte-beside-subquery", "SELECT * FROM (WITH c AS (SELECT 1 AS x) SELECT * FROM c) s1, (SELECT * FROM c) s2"),
    ("cte-in-scalar-subquery", "SELECT (WITH c AS (SELECT 1 AS x) SELECT max(x) FROM c) AS m FROM c"),
    ("cte-in-union-branch", "WITH c AS (SELECT 1 AS x) SELECT * FROM c "
                            "UNION ALL (WITH d AS (SELECT * FROM c) SELECT * FROM d)"),
    ("cte-union-branch-only", "(WITH c AS (SELECT 1 AS x) SELECT * FROM c) UNION ALL SELECT * FROM c"),
    ("cte-quoted-names", "WITH `My Cte` AS (SELECT 1 AS x), C1 AS (SELECT 2 AS x) SELECT * FROM `my cte`, `c1`"),
    ("cte-in-exists", "WITH a AS (SELECT 1 AS x) SELECT * FROM t WHERE EXISTS (WITH b AS (SELECT * FROM a) "
                      "SELECT * FROM b, c)"),
    ("cte-in-join-lateral", "WITH a AS (SELECT 1 AS k) SELECT * FROM t "
                            "JOIN LATERAL (WITH a AS (SELECT * FROM a) SELECT * FROM a) s ON true"),
    ("cte-from-first-union", "WITH a AS (SELECT 1 AS x) FROM a SELECT * UNION ALL FROM b SELECT *"),
    ("cte-against-qualified", "WITH a AS (SELECT 1 AS x) SELECT * FROM spark_catalog.oracle_db.a "
                              "JOIN default.a ON true JOIN a ON true"),
    ("cte-pivot-sample", "WITH a AS (SELECT 1 AS x) SELECT * FROM a PIVOT (count(*) FOR x IN (1)) "
                         "JOIN a TABLESAMPLE (50 PERCENT) ON true"),
    ("recursive", "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5) SELECT * FROM r"),
    ("recursive-tree", "WITH RECURSIVE r AS (SELECT id, parent FROM nodes WHERE parent IS NULL UNION ALL "
                       "SELECT n.id, n.parent FROM nodes n JOIN r ON n.parent = r.id) SELECT * FROM r"),
    ("recursive-forward", "WITH RECURSIVE a AS (SELECT * FROM b), b AS (SELECT 1 AS x) SELECT * FROM a"),
    ("recursive-then-cte", "WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM r WHERE n < 3), "
                           "s AS (SELECT * FROM r) SELECT * FROM s"),
    ("recursive-subquery", "WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL "
                           "SELECT n + 1 FROM r WHERE n < (SELECT max(k) FROM lim)) SELECT * FROM r"),
    # -- subqueries ------------------------------------------------------------------------------
    ("scalar-subquery", "SELECT id, (SELECT count(*) FROM items i WHERE i.oid = o.id) AS n FROM orders o"),
    ("exists", "SELECT * FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.id = a.id) "
               "AND NOT EXISTS (SELECT 1 FROM c WHERE c.id = a.id)"),
    ("in-subquery", "SELECT * FROM a WHERE (x, y) IN (SELECT x, y FROM b) AND z NOT IN (SELECT z FROM c)"),
    ("having", "SELECT cid, sum(x) AS s FROM orders GROUP BY cid HAVING sum(x) > (SELECT avg(x) FROM archive)"),
    ("nested-subqueries", "SELECT * FROM t WHERE x > (SELECT max(x) FROM (SELECT x FROM u UNION ALL SELECT x FROM v))"),
    ("subquery-in-order-by", "SELECT * FROM t ORDER BY (SELECT max(y) FROM u)"),
    ("case-subquery", "SELECT CASE WHEN x IN (SELECT x FROM u) THEN 1 ELSE 0 END AS f FROM t"),
    ("correlated", "SELECT * FROM t JOIN u ON t.a = u.a WHERE t.b IN (SELECT b FROM v WHERE v.c = t.c)"),
    # -- joins -----------------------------------------------------------------------------------
    ("join-using", "SELECT * FROM a JOIN b USING (id) LEFT JOIN c USING (id)"),
    ("natural", "SELECT * FROM a NATURAL JOIN b NATURAL LEFT OUTER JOIN c"),
    ("semi-anti", "SELECT * FROM a LEFT SEMI JOIN b ON a.id = b.id LEFT ANTI JOIN c ON a.id = c.id"),
    ("cross-full", "SELECT * FROM a CROSS JOIN b FULL OUTER JOIN c ON b.k = c.k"),
    ("lateral-subquery", "SELECT * FROM a, LATERAL (SELECT * FROM b WHERE b.id = a.id) s"),
    ("join-lateral", "SELECT * FROM a JOIN LATERAL (SELECT max(x) AS m FROM b WHERE b.k = a.k) s ON true"),
    ("left-lateral", "SELECT * FROM a LEFT OUTER JOIN LATERAL (SELECT * FROM b WHERE b.k = a.k) s ON true"),
    ("self-join", "SELECT * FROM t1 JOIN t2 ON t1.a = t2.a JOIN t1 t3 ON t3.a = t2.a"),
    ("full-right-using", "SELECT * FROM a FULL JOIN b USING (k) RIGHT JOIN c USING (k)"),
    ("parenthesised-join-alias", "SELECT * FROM (t1 JOIN t2 USING (k)) AS j NATURAL FULL OUTER JOIN t3"),
    ("subquery-in-join-condition", "SELECT * FROM t JOIN u ON t.x = u.x AND t.y IN (SELECT y FROM v)"),
    ("lateral-without-from", "SELECT * FROM t CROSS JOIN u CROSS JOIN LATERAL (SELECT t.x + u.y AS z)"),
    # -- generators and table-valued functions ---------------------------------------------------
    ("lateral-view-explode", "SELECT o.id, item FROM orders o LATERAL VIEW explode(o.items) t AS item"),
    ("lateral-view-posexplode", "SELECT id, pos, v FROM orders LATERAL VIEW OUTER posexplode(vals) exploded AS pos, v"),
    ("lateral-view-inline", "SELECT id, a, b FROM orders LATERAL VIEW inline(structs) s AS a, b"),
    ("lateral-view-json-tuple", "SELECT id, k1, k2 FROM events "
                                "LATERAL VIEW json_tuple(payload, 'k1', 'k2') j AS k1, k2"),
    ("lateral-view-stack", "SELECT id, k, v FROM wide LATERAL VIEW stack(2, 'a', a, 'b', b) customers AS k, v"),
    ("lateral-views", "SELECT * FROM t LATERAL VIEW explode(xs) a AS x LATERAL VIEW explode(ys) b AS y"),
    ("select-generators", "SELECT explode(arr) AS x FROM t UNION ALL SELECT posexplode(arr) AS (p, v) FROM u"),
    ("tvf-range", "SELECT * FROM range(5) JOIN range(1, 10, 2) r ON true JOIN t ON r.id = t.id"),
    ("tvf-generators", "SELECT * FROM explode(array(1, 2)) JOIN inline(array(struct(1, 'a'))) ON true"),
    ("lateral-tvf", "SELECT * FROM t, LATERAL explode(t.arr) AS e(x)"),
    ("tvf-cross-lateral", "SELECT * FROM t CROSS JOIN LATERAL posexplode(t.arr) AS e(p, x)"),
    ("table-named-range", "SELECT * FROM range JOIN range(3) ON true"),
    ("tvf-subquery-arguments", "SELECT * FROM explode(array((SELECT max(x) FROM u))) "
                               "JOIN range((SELECT 3 FROM v)) ON true"),
    ("tvf-generators-more", "SELECT * FROM json_tuple('{}', 'a') JOIN stack(2, 1, 2) ON true"),
    ("tvf-table-argument-query", "SELECT * FROM my_udtf(TABLE(SELECT * FROM events WHERE x > 0))"),
    ("tvf-table-argument-partitioned", "SELECT * FROM my_udtf(TABLE(events) PARTITION BY user_id ORDER BY ts)"),
    ("tvf-table-argument", "SELECT * FROM my_udtf(TABLE(events))"),
    ("tvf-table-argument-nested", "SELECT * FROM t WHERE EXISTS (SELECT * FROM my_udtf(TABLE(shop.events), 3))"),
    ("tvf-table-argument-identifier", "SELECT * FROM my_udtf(TABLE(IDENTIFIER('events')))"),
    ("lateral-view-alias-against-table", "SELECT * FROM t LATERAL VIEW explode(x) c AS y "
                                         "WHERE EXISTS (SELECT * FROM c)"),
    ("lateral-view-quoted-alias", "SELECT * FROM t LATERAL VIEW explode(x) `table` AS y"),
    # -- other clauses ---------------------------------------------------------------------------
    ("pivot-subquery", "SELECT * FROM (SELECT year, quarter, amount FROM facts) "
                       "PIVOT (sum(amount) FOR quarter IN (1 AS q1, 2 AS q2))"),
    ("pivot-table", "SELECT * FROM facts PIVOT (sum(amount) AS s FOR quarter IN (1, 2, 3, 4))"),
    ("unpivot", "SELECT * FROM quarterly UNPIVOT (amount FOR quarter IN (q1, q2, q3, q4))"),
    ("unpivot-multi", "SELECT * FROM quarterly UNPIVOT INCLUDE NULLS ((a, b) FOR q IN ((a1, b1) AS one, (a2, b2)))"),
    ("tablesample", "SELECT * FROM orders TABLESAMPLE (10 PERCENT) JOIN items TABLESAMPLE (5 ROWS) ON true"),
    ("tablesample-bucket", "SELECT * FROM orders TABLESAMPLE (BUCKET 1 OUT OF 4) o"),
    ("tablesample-derived", "SELECT * FROM (SELECT * FROM t) TABLESAMPLE (1 ROWS) "
                            "JOIN u TABLESAMPLE (10 PERCENT) s ON true"),
    ("values", "SELECT * FROM VALUES (1, 'a'), (2, 'b') AS v(id, name) JOIN t ON v.id = t.id"),
    ("values-parenthesised", "SELECT * FROM (VALUES (1), (2)) AS v(x) WHERE x IN (VALUES 1, 2)"),
    ("values-query", "VALUES (1, 2), (3, 4)"),
    ("no-table", "SELECT 1 AS x UNION ALL SELECT * FROM (SELECT 2 AS x)"),
    ("values-subquery", "SELECT * FROM VALUES ('a', (SELECT max(x) FROM u)) AS v(k, m) JOIN w ON true"),
    ("from-first", "FROM orders o SELECT o.id, o.amount WHERE o.amount > 0"),
    ("from-first-nested", "FROM (FROM t SELECT *) s SELECT *"),
    ("from-first-cte", "WITH c AS (FROM t SELECT *) FROM c SELECT *"),
    ("set-operations", "SELECT x FROM a UNION SELECT x FROM b INTERSECT SELECT x FROM c EXCEPT ALL SELECT x FROM d "
                       "MINUS SELECT x FROM e"),
    ("set-parenthesised", "(SELECT * FROM a) UNION (SELECT * FROM b ORDER BY 1 LIMIT 3) ORDER BY 1"),
    ("set-nested", "SELECT * FROM ((SELECT 1 AS x) UNION (SELECT x FROM u)) EXCEPT DISTINCT SELECT * FROM v"),
    ("exists-function", "SELECT * FROM t WHERE exists(arr, x -> x > 1) AND NOT exists(arr, x -> x IS NULL)"),
    ("lambdas", "SELECT transform(arr, x -> x + 1) AS a, filter(arr, orders -> orders > 0) AS f, "
                "aggregate(arr, 0, (acc, x) -> acc + x) AS s FROM arrays"),
    ("window-clause", "SELECT id, sum(x) OVER w AS s, avg(x) OVER v AS a FROM t "
                      "WINDOW w AS (PARTITION BY g ORDER BY ts), "
                      "v AS (PARTITION BY g ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)"),
    ("qualify", "SELECT x FROM t QUALIFY row_number() OVER (PARTITION BY y ORDER BY x) = 1"),
    ("grouping", "SELECT a, b, count(*) FILTER (WHERE c > 0) AS n FROM t GROUP BY GROUPING SETS ((a, b), (a), ())"),
    ("distribute-sort", "SELECT * FROM t DISTRIBUTE BY x SORT BY y LIMIT 10 OFFSET 5"),
    ("group-by-with-rollup", "SELECT x, count(*) AS n FROM t GROUP BY x WITH ROLLUP"),
    ("cube-order-by-all", "SELECT a, b, count(*) AS n FROM t GROUP BY CUBE(a, b) ORDER BY ALL"),
    ("like-any", "SELECT * FROM t WHERE x LIKE ANY ('a%', 'b%')"),
    ("identifier-column", "SELECT IDENTIFIER('col') FROM t"),
    ("identifier", "SELECT * FROM IDENTIFIER('orders') JOIN IDENTIFIER('shop.items') i ON true"),
    ("identifier-expression", "SELECT * FROM IDENTIFIER('shop' || '.orders') AS o"),
    ("identifier-in-subquery", "SELECT * FROM t WHERE x IN (SELECT y FROM IDENTIFIER('`u v`'))"),
    ("time-travel", "SELECT * FROM orders VERSION AS OF 3 JOIN items TIMESTAMP AS OF '2024-01-01' ON true"),
    ("time-travel-for", "SELECT * FROM orders FOR SYSTEM_VERSION AS OF 3 AS o"),
    ("time-travel-system", "SELECT * FROM t SYSTEM_VERSION AS OF 1 JOIN u SYSTEM_TIME AS OF '2024-01-01' ON true"),
    ("watermark", "SELECT * FROM orders WATERMARK ts DELAY OF INTERVAL 1 MINUTE AS o"),
    ("time-travel-expressions", "SELECT * FROM t TIMESTAMP AS OF current_timestamp() - INTERVAL 1 DAY "
                                "JOIN u VERSION AS OF 'v1' AS old ON true"),
    ("table-query", "TABLE orders"),
    ("table-query-parenthesised", "SELECT * FROM (TABLE orders)"),
    ("table-query-in", "SELECT * FROM t WHERE x IN (TABLE u)"),
    ("table-options", "SELECT * FROM orders WITH ('k' = 'v')"),
    ("table-query-exists", "SELECT * FROM t WHERE EXISTS (TABLE u)"),
    ("table-query-union", "SELECT * FROM t UNION TABLE u"),
    ("table-queries", "TABLE a UNION ALL TABLE b"),
    ("table-query-joined", "SELECT * FROM t JOIN (TABLE u) AS x ON true JOIN LATERAL (TABLE v) ON true"),
    ("table-query-in-union", "SELECT x FROM t WHERE x IN (TABLE u UNION TABLE v)"),
    ("table-query-alone-parenthesised", "(TABLE orders)"),
    ("table-query-in-cte", "WITH c AS (TABLE orders) SELECT * FROM c"),
    ("table-query-in-ctes", "WITH c AS (TABLE orders), d AS (SELECT * FROM c JOIN items ON true) SELECT * FROM d"),
    ("pipe", "FROM orders |> WHERE amount > 0 |> JOIN customers USING (cid) "
             "|> AGGREGATE sum(amount) AS s GROUP BY cid"),
    ("pipe-cte", "WITH c AS (SELECT 1 AS x) FROM c |> SELECT x |> WHERE x IN (SELECT y FROM u)"),
    ("pipe-join-union", "FROM t |> AS s |> JOIN u ON s.k = u.k |> UNION ALL (SELECT * FROM v)"),
    ("pipe-extend", "FROM t |> EXTEND x + 1 AS y |> DROP x |> LIMIT 3"),
    ("stream-qualified", "SELECT * FROM STREAM shop.orders"),
    ("stream", "SELECT * FROM STREAM orders"),
    ("stream-call", "SELECT * FROM STREAM(orders) JOIN STREAM(shop.items) i ON true"),
    ("stream-aliased", "SELECT * FROM stream AS s"),  # STREAM of the table `as` to Spark
    ("script-transform", "SELECT TRANSFORM(a, b) USING 'cat' AS (x, y) FROM t"),
]

#: the queries viewstore refuses (sqlglot cannot read them, or would misread them)
UNREADABLE = {"time-travel-for", "time-travel-system", "watermark", "table-query", "table-query-parenthesised",
              "table-query-in", "table-options",
              "table-query-exists", "table-query-union", "table-queries", "table-query-joined", "table-query-in-union",
              "tvf-table-argument-partitioned", "pipe-extend", "stream-qualified", "table-query-alone-parenthesised",
              "table-query-in-cte", "table-query-in-ctes", "stream", "stream-call", "stream-aliased",
              "identifier", "identifier-expression", "identifier-in-subquery", "tvf-table-argument",
              "tvf-table-argument-nested", "tvf-table-argument-identifier", "keyword-table-select",
              "keyword-alias-limit", "keyword-alias-join"}
#: the queries qualify_tables refuses besides those, by engine (not one query, a quoted name with a
#: dot, or text the engine's sqlglot dialect cannot parse)
UNQUALIFIABLE = {
    "hive": UNREADABLE | {"quoted-dot", "raw-string", "typed-literals", "values-query"},
    "flink": UNREADABLE | {"quoted-dot", "values-query"},
}
#: the names each query's CTEs take in Hive but not in Spark: Hive sees every CTE of a WITH in all
#: of them, so the Hive qualification leaves these as written
HIVE_CTES = {
    "cte-shadows-table": {("orders",)},
    "cte-forward": {("b",)},
    "recursive-forward": {("b",)},
    "cte-self-in-subquery": {("a",)},
    "cte-forward-from-nested": {("c",)},
    "cte-nested-same-name": {("a",)},
}


class Oracle:
    """The relations Spark reads for a query (see the module), as tuples of lower-case name parts."""

    #: the plan leaves that read no relation by name
    NO_RELATION = {"OneRowRelation", "Range", "LocalRelation", "UnresolvedInlineTable", "UnresolvedTableValuedFunction",
                   "CTERelationRef", "UnionLoopRef"}

    def __init__(self, spark, session: SparkSession) -> None:
        self.convert = spark._jvm.scala.jdk.javaapi.CollectionConverters.asJava
        self.state = session._jsparkSession.sessionState()

    @functools.cache
    def reads(self, sql: str) -> frozenset[tuple[str, ...]]:
        plan = self.state.analyzer().execute(self.state.sqlParser().parsePlan(sql))
        found: set[tuple[str, ...]] = set()
        self._plan(plan, found)
        return frozenset(found)

    @functools.cache
    def parsed(self, sql: str) -> str:
        """The parsed plan as Spark prints it (literals included, comments gone), expression ids and
        object hashes left out."""
        return re.sub(r"#\d+|@[0-9a-f]+\b", "#", self.state.sqlParser().parsePlan(sql).toString())

    def _plan(self, plan, found: set[tuple[str, ...]]) -> None:
        kind = plan.nodeName()
        if kind == "UnresolvedRelation":
            found.add(tuple(part.lower() for part in self._list(plan.multipartIdentifier())))
        elif kind == "RelationTimeTravel":
            self._plan(plan.relation(), found)
        elif kind == "View" or plan.children().isEmpty() and kind not in self.NO_RELATION:  # one that exists, say
            raise AssertionError(f"the oracle cannot read a {kind}: {plan}")
        for child in self._list(plan.subqueries()) + self._list(plan.children()):
            self._plan(child, found)

    def _list(self, seq) -> list:
        items = self.convert(seq)  # by index: py4j's iterator ends with an error, which is costly to convert
        return [items.get(i) for i in range(items.size())]


@pytest.fixture(scope="module")
def session(spark, tmp_path_factory):
    """A session of the oracle's own whose current catalog, lake, is an empty store."""
    session = SparkSession(spark.sparkContext, jsparkSession=spark._jsparkSession.newSession())
    store = ViewStore(tmp_path_factory.mktemp("oracle") / "lake.db", catalog="lake", actor="oracle")
    attach(session, store, name="lake")
    session.sql("USE lake")
    yield session
    detach(session, name="lake")
    store.close()


@pytest.fixture(scope="module")
def oracle(spark, session) -> Oracle:
    return Oracle(spark, session)


# -- the oracle ----------------------------------------------------------------------------------


@pytest.mark.parametrize("sql, reads", [
    ("SELECT * FROM a JOIN shop.b ON true JOIN lake.x.y.z ON true", {("a",), ("shop", "b"), ("lake", "x", "y", "z")}),
    ("WITH c AS (SELECT * FROM a) SELECT * FROM c WHERE EXISTS (SELECT * FROM B)", {("a",), ("b",)}),
    ("WITH a AS (SELECT * FROM a) SELECT * FROM a", {("a",)}),  # not recursive: the table a
    ("SELECT * FROM range(3) JOIN VALUES (1) AS v(x) ON true", set()),
    ("SELECT * FROM a VERSION AS OF 1", {("a",)}),
])
def test_the_oracle_reads_the_relations_spark_looks_up(oracle, session, sql, reads):
    """What the oracle reads is what Spark looks up: each missing relation fails the analysis with
    TABLE_OR_VIEW_NOT_FOUND until all are there (as temporary views, for one-part names)."""
    assert oracle.reads(sql) == reads
    made = []
    try:
        for _ in reads:
            with pytest.raises(AnalysisException) as missing:
                session.sql(sql)
            assert missing.value.getCondition() == "TABLE_OR_VIEW_NOT_FOUND"
            name = missing.value.getMessageParameters()["relationName"]
            parts = tuple(part.strip("`").lower() for part in name.split("."))
            assert parts in reads, name
            if len(parts) > 1:
                break  # no temporary view of such a name: the first missing one is checked
            session.sql(f"CREATE TEMPORARY VIEW {parts[0]} AS SELECT 1 AS x")
            made.append(parts[0])
        else:  # all there: no relation is missing (time travel on a view is another matter)
            try:
                session.sql(sql)
            except AnalysisException as e:
                assert e.getCondition() == "UNSUPPORTED_FEATURE.TIME_TRAVEL", e
    finally:
        for name in made:
            session.catalog.dropTempView(name)


def test_the_oracle_reads_no_relation_that_exists(oracle, session):
    session.sql("CREATE TEMPORARY VIEW here AS SELECT 1 AS x")
    try:
        with pytest.raises(AssertionError, match="the oracle cannot read a View"):
            oracle.reads("SELECT * FROM here")
    finally:
        session.catalog.dropTempView("here")


# -- viewstore against it ------------------------------------------------------------------------


@pytest.mark.parametrize("name, sql", CORPUS, ids=[name for name, _ in CORPUS])
def test_viewstore_finds_the_relations_spark_reads(oracle, name, sql):
    reads = oracle.reads(sql)
    if name in UNREADABLE:
        assert table_references(sql) is None
    else:
        assert table_references(sql) == reads


@pytest.mark.parametrize("engine", ["hive", "flink"])
@pytest.mark.parametrize("name, sql", CORPUS, ids=[name for name, _ in CORPUS])
def test_a_qualified_text_reads_each_unqualified_relation_in_the_namespace(oracle, name, sql, engine):
    """Spark reads the qualified text's relations in the namespace, wherever the session is; and
    parses it as the original but for those names (no literal changed)."""
    reads = oracle.reads(sql)
    if name in UNQUALIFIABLE[engine]:
        with pytest.raises(ValidationError) as refused:
            qualify_tables(sql, engine, (NS,), "viewExpandedText")
        assert str(refused.value).startswith(f"viewExpandedText: the view's unqualified table names resolve in '{NS}', "
                                             "not in the record's database, so they must be written qualified, but ")
        assert str(refused.value).endswith("; write each table name in the view's SQL with its database "
                                           "(database.table) and give the view its own database as default "
                                           "namespace, so that the SQL is written as it is")
        return
    qualified = qualify_tables(sql, engine, (NS,), "viewExpandedText")
    kept = HIVE_CTES.get(name, set()) if engine == "hive" else set()
    assert oracle.reads(qualified) == {(NS, *parts) if len(parts) == 1 and parts not in kept else parts
                                       for parts in reads}
    assert oracle.parsed(qualified).replace(f"UnresolvedRelation [{NS}, ", "UnresolvedRelation [") == \
        oracle.parsed(sql)
