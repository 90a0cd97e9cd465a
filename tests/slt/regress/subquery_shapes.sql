# Subqueries in aggregate arguments (and FILTER), in GROUP BY keys and in join ON conditions
# (inner, LEFT, RIGHT, FULL, LATERAL; in correlated subqueries too). Random-ish data with NULLs
# and duplicates. Expected answers: PostgreSQL 15 (tools/mk_pg.py subquery_shapes.sql >
# subquery_shapes.test).
S: CREATE TABLE t(a INTEGER, b INTEGER, c VARCHAR(10))
S: CREATE TABLE u(x INTEGER, y INTEGER)
S: CREATE TABLE w(k INTEGER, v INTEGER)
S: CREATE TABLE e(z INTEGER)
S: INSERT INTO t VALUES (3, 1, 'p'), (6, 6, 's'), (3, 12, 's'), (6, 15, 'q'), (5, 13, 's'), (3, 8, 'p'), (0, 12, 'p'), (2, 2, 's'), (4, 18, 'q'), (4, 15, 'q'), (6, 18, 's'), (2, 13, 'q'), (4, NULL, 'r'), (5, 16, 'q'), (2, 16, 'p'), (6, 17, 'q'), (0, 7, 'r'), (NULL, 9, 's'), (3, NULL, 'p'), (6, 3, 'p'), (3, 5, 's'), (1, 14, 's'), (4, NULL, 'p'), (NULL, 16, 'r')
S: INSERT INTO u VALUES (7, 19), (NULL, NULL), (6, 3), (5, 11), (NULL, 6), (NULL, 18), (5, 14), (3, 15), (2, 3), (7, 14), (1, 15), (5, 1), (7, NULL), (0, 19), (5, 16), (NULL, 19), (3, 10), (3, NULL), (1, 12), (4, NULL), (5, 10), (5, 9), (1, 11), (4, 12), (5, 19), (6, 16), (1, 2), (4, 3), (4, 8), (4, 20)
S: INSERT INTO w VALUES (3, 7), (6, 7), (5, 6), (7, NULL), (NULL, NULL), (5, 1), (2, NULL), (3, NULL), (7, 9), (1, 11), (6, NULL), (7, 4), (3, 2), (6, NULL)
# Aggregate arguments and FILTER conditions.
Q II: SELECT a, SUM((SELECT MAX(y) FROM u WHERE u.x = t.a)) FROM t GROUP BY a
Q I: SELECT COUNT(*) FILTER (WHERE a IN (SELECT x FROM u WHERE y > 12)) FROM t
Q TII: SELECT c, COUNT(*) FILTER (WHERE EXISTS (SELECT 1 FROM u WHERE u.x = t.a AND u.y > t.b)), SUM(b) FILTER (WHERE b > (SELECT MIN(y) FROM u WHERE u.x = t.a)) FROM t GROUP BY c
Q II: SELECT a, MAX((SELECT COUNT(*) FROM u WHERE u.y > t.b)) FROM t GROUP BY a
Q I: SELECT SUM(b + (SELECT COUNT(*) FROM w WHERE w.k = t.a)) FROM t
Q II: SELECT a, SUM((SELECT MAX(y) FROM u WHERE u.x = t.a)) FROM t GROUP BY a HAVING SUM((SELECT COUNT(*) FROM w WHERE w.k = t.a)) > 1
Q II: SELECT a, (SELECT SUM((SELECT COUNT(*) FROM w WHERE w.k = u.x)) FROM u WHERE u.x = t.a) FROM t
Q TI: SELECT c, COUNT(DISTINCT (SELECT MAX(v) FROM w WHERE w.k = t.a)) FROM t GROUP BY c
Q TII: SELECT c, COUNT(*), SUM(CASE WHEN a NOT IN (SELECT k FROM w) THEN 1 ELSE 0 END) FROM t GROUP BY c
Q II: SELECT a, COUNT(*) FILTER (WHERE b > ALL (SELECT y FROM u WHERE u.x = t.a)) FROM t GROUP BY a
Q II: SELECT a, SUM((SELECT COUNT(*) FROM u WHERE u.x = t.a)) + (SELECT COUNT(*) FROM w WHERE w.k = t.a) FROM t GROUP BY a
# GROUP BY keys (by position or alias; in a correlated subquery).
Q II: SELECT (SELECT COUNT(*) FROM u WHERE u.x = t.a) AS n, COUNT(*) FROM t GROUP BY 1
Q II: SELECT (SELECT MAX(v) FROM w WHERE w.k = t.a) AS m, SUM(b) FROM t GROUP BY m
Q I: SELECT COUNT(*) FROM t GROUP BY (SELECT MIN(y) FROM u WHERE u.x = t.a)
Q TII: SELECT c, (SELECT COUNT(*) FROM w WHERE w.k = t.a) AS n, SUM(b) FROM t GROUP BY c, n
Q II: SELECT a IN (SELECT x FROM u WHERE y > 14) AS f, COUNT(*) FROM t GROUP BY 1
Q III: SELECT EXISTS (SELECT 1 FROM w WHERE w.k = t.a) AS f, (SELECT MAX(y) FROM u WHERE u.x = t.a) AS m, COUNT(*) FROM t GROUP BY 1, 2 HAVING COUNT(*) > 1
Q II: SELECT a, (SELECT COUNT(*) FROM (SELECT (SELECT MAX(v) FROM w WHERE w.k = u.x) AS m FROM u WHERE u.x <= t.a GROUP BY 1) s) FROM t
# Join ON conditions.
Q II: SELECT t.a, u.y FROM t JOIN u ON u.x = t.a AND u.y IN (SELECT b FROM t AS t2 WHERE t2.c = 'q')
Q III: SELECT t.a, t.b, u.y FROM t JOIN u ON u.x = t.a AND EXISTS (SELECT 1 FROM w WHERE w.k = t.a AND w.v < u.y)
Q III: SELECT t.a, t.b, u.y FROM t LEFT JOIN u ON u.x = t.a AND u.y > (SELECT MIN(v) FROM w WHERE w.k = t.a)
Q III: SELECT t.a, t.b, u.y FROM t RIGHT JOIN u ON u.x = t.a AND t.b NOT IN (SELECT v FROM w WHERE w.k = u.x)
Q III: SELECT t.a, t.b, u.y FROM t FULL JOIN u ON u.x = t.a AND u.y < ALL (SELECT b FROM t AS t2 WHERE t2.a = t.a)
Q II: SELECT t.a, u.y FROM t JOIN u ON u.x = t.a AND u.y NOT IN (SELECT v FROM w WHERE w.k = u.x)
Q II: SELECT t.a, u.y FROM t JOIN u ON u.y = (SELECT MAX(y) FROM u AS u2 WHERE u2.x = t.a)
Q III: SELECT t.a, u.y, w.v FROM t JOIN u ON u.x = t.a JOIN w ON w.k = u.x AND w.v IN (SELECT b FROM t AS t3)
Q II: SELECT a, (SELECT COUNT(*) FROM u JOIN w ON w.k = u.x AND w.v < (SELECT MIN(b) FROM t AS t2 WHERE t2.a = t.a)) FROM t
Q II: SELECT a, (SELECT COUNT(*) FROM u LEFT JOIN w ON w.k = u.x AND w.v IN (SELECT y FROM u AS u2 WHERE u2.x = t.a) WHERE u.x >= t.a) FROM t
Q II: SELECT a, (SELECT COUNT(w.v) FROM u JOIN w ON w.k = u.x AND EXISTS (SELECT 1 FROM e WHERE e.z = w.v) WHERE u.x = t.a) FROM t
Q II: SELECT t.a, s.y FROM t LEFT JOIN LATERAL (SELECT y FROM u WHERE u.x = t.a) s ON s.y IN (SELECT b FROM t AS t2 WHERE t2.c = 'p')
Q II: SELECT t.a, s.y FROM t JOIN LATERAL (SELECT y FROM u WHERE u.x = t.a) s ON s.y > (SELECT MIN(v) FROM w WHERE w.k = t.a)
Q II: SELECT t.a, u.y FROM t JOIN u ON u.x = t.a AND u.y IN (SELECT z FROM e)
Q II: SELECT t.a, u.y FROM t LEFT JOIN u ON u.x = t.a AND NOT EXISTS (SELECT 1 FROM e)
# Rows of several columns IN / NOT IN (SELECT ...), = ANY, <> ALL (PostgreSQL's row comparison).
Q III: SELECT a, b, (a, b) IN (SELECT x, y FROM u) FROM t
Q III: SELECT a, b, (a, b) NOT IN (SELECT x, y FROM u) FROM t
Q II: SELECT a, b FROM t WHERE (a, b) IN (SELECT x, y FROM u)
Q II: SELECT a, b FROM t WHERE (a, b) NOT IN (SELECT k, v FROM w)
Q III: SELECT a, b, (b, c) IN (SELECT y, 'p' FROM u WHERE u.x = t.a) FROM t
Q II: SELECT a, (a, 7) IN (SELECT k, v FROM w WHERE w.v IS NOT NULL) FROM t
Q III: SELECT a, b, (a, b, c) NOT IN (SELECT x, y, 's' FROM u WHERE u.y < t.b) FROM t
Q II: SELECT a, (a, b) IN (SELECT x, y FROM u WHERE x > 100) FROM t
Q II: SELECT a, (NULL, a) IN (SELECT x, y FROM u) FROM t
Q II: SELECT a, (a, NULL) NOT IN (SELECT k, v FROM w WHERE v IS NOT NULL) FROM t
Q II: SELECT a, COUNT(*) FROM t GROUP BY a HAVING (a, COUNT(*)) IN (SELECT x, COUNT(*) FROM u GROUP BY x)
Q III: SELECT a, b, (a, b) = ANY (SELECT x, y FROM u) FROM t
Q III: SELECT a, b, (a, b) <> ALL (SELECT k, v FROM w) FROM t
Q II: SELECT a, (a + 1, b) IN (SELECT DISTINCT x, y FROM u WHERE u.y > t.b - 5) FROM t
# Quantified comparisons over correlated subqueries that group or aggregate.
Q III: SELECT a, b, b > ALL (SELECT MAX(y) FROM u WHERE u.x = t.a GROUP BY y % 3) FROM t
Q III: SELECT a, b, b < ANY (SELECT COUNT(*) FROM u WHERE u.x <= t.a GROUP BY x) FROM t
Q II: SELECT a, b FROM t WHERE b >= ALL (SELECT SUM(y) FROM u WHERE u.x = t.a GROUP BY y > 10)
Q III: SELECT a, b, b > ALL (SELECT SUM(y) FROM u WHERE u.x = t.a) FROM t
Q II: SELECT a, b <> ANY (SELECT MIN(v) FROM w WHERE w.k >= t.a GROUP BY k) FROM t
Q III: SELECT a, b, b > ANY (SELECT MAX(y) FROM u WHERE u.x = t.a GROUP BY y % 2 HAVING COUNT(*) > 1) FROM t
Q II: SELECT a, b = ALL (SELECT COUNT(*) FROM u WHERE u.x = t.a GROUP BY y IS NULL) FROM t
# Window functions in correlated subqueries: each outer row's window is over its own rows.
Q II: SELECT a, (SELECT MAX(r) FROM (SELECT ROW_NUMBER() OVER (ORDER BY y NULLS LAST) AS r FROM u WHERE u.x = t.a) s) FROM t
Q III: SELECT t.a, s.y, s.r FROM t, LATERAL (SELECT y, RANK() OVER (ORDER BY y DESC NULLS LAST) AS r FROM u WHERE u.x = t.a) s
Q IIII: SELECT t.a, t.b, s.y, s.c FROM t, LATERAL (SELECT y, COUNT(*) OVER (PARTITION BY y % 2) AS c FROM u WHERE u.x <= t.a AND u.y < t.b) s
Q II: SELECT a, (SELECT SUM(r) FROM (SELECT y, SUM(y) OVER (ORDER BY y NULLS LAST ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS r FROM u WHERE u.x = t.a) s) FROM t
Q III: SELECT t.a, s.g, s.rk FROM t, LATERAL (SELECT y % 3 AS g, RANK() OVER (ORDER BY COUNT(*) DESC, y % 3 NULLS LAST) AS rk FROM u WHERE u.x = t.a GROUP BY y % 3) s
Q IIII: SELECT t.a, t.b, s.y, s.r FROM t, LATERAL (SELECT y, ROW_NUMBER() OVER (ORDER BY ABS(y - t.b) NULLS LAST, y NULLS LAST) AS r FROM u WHERE u.x = t.a) s
Q III: SELECT a, b, (SELECT COUNT(*) FROM (SELECT y, LAG(y) OVER (ORDER BY y NULLS LAST) AS p FROM u WHERE u.x = t.a) s WHERE s.p IS NOT NULL AND s.y - s.p < t.b) FROM t
Q III: SELECT t.a, s.y, s.r FROM t LEFT JOIN LATERAL (SELECT y, ROW_NUMBER() OVER (ORDER BY y NULLS FIRST) AS r FROM u WHERE u.x = t.a) s ON s.r <= 2
# GROUPING SETS, ROLLUP and CUBE in correlated subqueries: the domain is in every set; an empty set has its row for every outer row.
Q IIII: SELECT t.a, s.g, s.n, s.m FROM t, LATERAL (SELECT y % 2 AS g, COUNT(*) AS n, MAX(y) AS m FROM u WHERE u.x = t.a GROUP BY GROUPING SETS ((y % 2), ())) s
Q II: SELECT a, (SELECT SUM(n) FROM (SELECT COUNT(*) AS n FROM u WHERE u.x = t.a GROUP BY ROLLUP(y % 2)) s) FROM t
Q IIIII: SELECT t.a, s.g, s.h, s.n, s.gr FROM t, LATERAL (SELECT y % 2 AS g, y % 3 AS h, COUNT(*) AS n, GROUPING(y % 2, y % 3) AS gr FROM u WHERE u.x = t.a - 1 GROUP BY CUBE(y % 2, y % 3)) s
Q III: SELECT t.a, s.n, s.gid FROM t, LATERAL (SELECT COUNT(y) AS n, GROUP_ID() AS gid FROM u WHERE u.x = t.a GROUP BY GROUPING SETS ((), ())) s --pg: SELECT t.a, s.n, s.gid FROM t, LATERAL (SELECT COUNT(y) AS n, 0 AS gid FROM u WHERE u.x = t.a UNION ALL SELECT COUNT(y), 1 FROM u WHERE u.x = t.a) s
Q II: SELECT a, (SELECT COUNT(*) FROM (SELECT x FROM u WHERE u.y > t.b GROUP BY ROLLUP(x)) s) FROM t
# RIGHT and FULL joins whose ON condition reads an enclosing query's columns; RIGHT / FULL JOIN with a LATERAL subquery that reads no column of the left side.
Q II: SELECT a, (SELECT COUNT(*) FROM u RIGHT JOIN w ON w.k = u.x AND u.y > t.b) FROM t
Q II: SELECT a, (SELECT COUNT(u.y) + 100 * COUNT(w.v) FROM u FULL JOIN w ON w.k = u.x AND w.v < t.b) FROM t
Q III: SELECT t.a, s.y, s.v FROM t, LATERAL (SELECT u.y, w.v FROM u RIGHT JOIN w ON w.k = u.x AND u.x = t.a) s
Q II: SELECT a, (SELECT SUM(COALESCE(u.y, 0) + COALESCE(w.v, 0)) FROM u FULL JOIN w ON w.k = u.x AND u.y > t.b WHERE w.k IS NULL OR w.k <> t.a) FROM t
Q IIII: SELECT t.a, t.b, s.x, s.k FROM t, LATERAL (SELECT u.x, w.k FROM u FULL JOIN w ON w.k = u.x AND w.v IN (SELECT b FROM t AS t2 WHERE t2.a = t.a) WHERE COALESCE(u.x, w.k) = t.a) s
Q II: SELECT t.a, s.m FROM t RIGHT JOIN LATERAL (SELECT MAX(y) AS m, x FROM u GROUP BY x) s ON s.x = t.a
Q II: SELECT t.a, s.k FROM t FULL JOIN LATERAL (SELECT k FROM w WHERE v > 5) s ON s.k = t.a
# Combinations: nested in aggregate arguments, rows IN in ON and HAVING, windows and ROLLUP with HAVING.
Q II: SELECT a, (SELECT SUM((SELECT COUNT(*) FROM w WHERE w.k = t.a AND w.v < u.y)) FROM u WHERE u.x = t.a) FROM t
Q II: SELECT a, (SELECT COUNT(*) FILTER (WHERE u.y IN (SELECT b FROM t AS t2 WHERE t2.a = t.a)) FROM u) FROM t
Q II: SELECT (SELECT MAX(y) FROM u), COUNT(*) FROM t GROUP BY (SELECT MAX(y) FROM u)
Q III: SELECT a, b, (a, b) IN (SELECT x, y FROM u WHERE u.y > t.b) FROM t
Q TI: SELECT c, COUNT(*) FROM t GROUP BY c HAVING (c, COUNT(*)) NOT IN (SELECT 'p', COUNT(*) FROM u GROUP BY x)
Q II: SELECT a, (SELECT COUNT(*) FROM (SELECT y, ROW_NUMBER() OVER (PARTITION BY y % 2 ORDER BY y NULLS LAST) AS r FROM u WHERE u.x = t.a) s WHERE r = 1) FROM t
Q II: SELECT a, (SELECT COUNT(*) FROM u JOIN w ON w.k = u.x AND (w.v, u.y) IN (SELECT b, b FROM t AS t2 WHERE t2.a = t.a)) FROM t
Q II: SELECT a, SUM(b) FROM t GROUP BY a HAVING SUM((SELECT COUNT(*) FROM u WHERE u.x = t.a)) > 2
Q II: SELECT a, (SELECT COUNT(*) FROM u RIGHT JOIN w ON w.k = u.x AND u.y IN (SELECT b FROM t AS t2 WHERE t2.a = t.a)) FROM t
Q III: SELECT t.a, s.g, s.n FROM t, LATERAL (SELECT y % 2 AS g, COUNT(*) AS n FROM u WHERE u.x = t.a GROUP BY ROLLUP(y % 2) HAVING COUNT(*) > 1) s
Q II: SELECT a, (SELECT MAX(n) FROM (SELECT COUNT(*) OVER (PARTITION BY x) AS n FROM u WHERE u.y > t.b) s) FROM t
Q II: SELECT a, (SELECT COUNT(*) FROM u WHERE (u.x, u.y) NOT IN (SELECT k, v FROM w WHERE w.k <> t.a)) FROM t
# USING / NATURAL with LATERAL subqueries; JOIN LATERAL in a correlated subquery reading the enclosing query.
Q IITI: SELECT * FROM t JOIN LATERAL (SELECT x AS a, y FROM u WHERE u.y > t.b) s USING (a)
Q IITI: SELECT * FROM t LEFT JOIN LATERAL (SELECT x AS a, MAX(y) AS m FROM u WHERE u.y < t.b GROUP BY x) s USING (a)
Q IIT: SELECT * FROM t NATURAL JOIN LATERAL (SELECT x AS a, y AS b FROM u WHERE u.x >= t.a) s
Q IIII: SELECT t.a, s.a, a, s.v FROM t LEFT JOIN LATERAL (SELECT k AS a, v FROM w WHERE w.v > t.b) s USING (a)
Q IITI: SELECT a, b, c, v FROM t NATURAL LEFT JOIN LATERAL (SELECT k AS a, v FROM w WHERE w.v <= t.b) s
Q II: SELECT a, (SELECT COUNT(*) FROM u JOIN LATERAL (SELECT k FROM w WHERE w.k <> t.a AND w.v < u.y) s ON TRUE) FROM t
Q II: SELECT a, (SELECT COUNT(s.m) FROM u LEFT JOIN LATERAL (SELECT MAX(v) AS m FROM w WHERE w.k = u.x AND w.v < t.b) s ON s.m > 2) FROM t
Q II: SELECT a, (SELECT SUM(s.n) FROM u CROSS JOIN LATERAL (SELECT COUNT(*) AS n FROM w WHERE w.k = t.a AND w.v <= u.y) s WHERE u.x = t.a) FROM t
