# Subqueries (scalar, IN, EXISTS; correlated and not), WITH queries and outer joins with any ON
# condition. Expected answers: sqlite3. Only queries whose standard-SQL answer agrees with
# SQLite's (no scalar subquery returning several rows, no text/number comparisons; the runner
# inserts duplicate rows for a step, so a non-aggregate scalar subquery uses DISTINCT).
S: CREATE TABLE t(a INTEGER, b INTEGER, c VARCHAR(10))
S: CREATE TABLE u(x INTEGER, y INTEGER)
S: CREATE TABLE e(z INTEGER)
S: INSERT INTO t VALUES (1, 10, 'p'), (2, 20, 'q'), (3, NULL, 'r'), (NULL, 40, 's'), (2, 25, NULL), (5, 10, 'p')
S: INSERT INTO u VALUES (1, 100), (2, 200), (2, 201), (NULL, 300), (7, NULL), (3, 10)
Q II: SELECT a, (SELECT max(y) FROM u WHERE u.x = t.a) FROM t
Q II: SELECT a, (SELECT count(*) FROM u WHERE u.x = t.a) FROM t
Q II: SELECT a, (SELECT count(y) FROM u WHERE u.x < t.a) FROM t
Q II: SELECT a, (SELECT sum(y) FROM u WHERE u.x <> t.a AND u.y > t.b) FROM t
Q II: SELECT a, (SELECT DISTINCT y FROM u WHERE u.x = t.a AND u.y < 150) FROM t
Q I: SELECT (SELECT avg(b) FROM t) > 15
Q II: SELECT a, b FROM t WHERE b > (SELECT avg(b) FROM t)
Q II: SELECT a, b FROM t WHERE b > (SELECT avg(b) FROM t AS t2 WHERE t2.c = t.c)
Q II: SELECT a, b FROM t WHERE a IN (SELECT x FROM u)
Q II: SELECT a, b FROM t WHERE a NOT IN (SELECT x FROM u)
Q II: SELECT a, b FROM t WHERE a NOT IN (SELECT x FROM u WHERE x IS NOT NULL)
Q II: SELECT a, b FROM t WHERE a NOT IN (SELECT z FROM e)
Q II: SELECT a, a IN (SELECT x FROM u) FROM t
Q II: SELECT a, a NOT IN (SELECT x FROM u WHERE x IS NOT NULL) FROM t
Q II: SELECT a, a IN (SELECT z FROM e) FROM t
Q II: SELECT a, b IN (SELECT y FROM u WHERE u.x = t.a) FROM t
Q II: SELECT a, b NOT IN (SELECT y FROM u WHERE u.x <> t.a) FROM t
Q II: SELECT a, NULL IN (SELECT y FROM u WHERE u.x = t.a) FROM t
Q II: SELECT a, b FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.x = t.a)
Q II: SELECT a, b FROM t WHERE NOT EXISTS (SELECT * FROM u WHERE u.x = t.a)
Q II: SELECT a, b FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.y > t.b)
Q II: SELECT a, EXISTS (SELECT 1 FROM e) FROM t
Q II: SELECT a, NOT EXISTS (SELECT 1 FROM u WHERE u.x > 5) FROM t
Q II: SELECT a, CASE WHEN EXISTS (SELECT 1 FROM u WHERE u.x = t.a) THEN (SELECT min(y) FROM u WHERE u.x = t.a) ELSE -1 END FROM t
Q II: SELECT a, (SELECT count(*) FROM u WHERE u.x = t.a AND u.y > (SELECT min(b) FROM t AS t2 WHERE t2.a = t.a)) FROM t
Q II: SELECT a, (SELECT count(*) FROM u WHERE EXISTS (SELECT 1 FROM t AS t2 WHERE t2.a = u.x AND t2.b > t.b)) FROM t
Q II: SELECT a, count(*) FROM t GROUP BY a HAVING count(*) >= (SELECT count(*) FROM u WHERE u.x = t.a)
Q II: SELECT a, (SELECT sum(y) FROM u WHERE u.x = t.a) FROM t GROUP BY a
Q II: SELECT a, sum(b) FROM t GROUP BY a HAVING sum(b) > (SELECT avg(y) FROM u WHERE y < 150)
Q II: SELECT a, (SELECT count(*) FROM u) + count(*) FROM t GROUP BY a
Q II: SELECT DISTINCT a, (SELECT count(*) FROM u WHERE u.x >= t.a) FROM t
Q II: SELECT x, y FROM u WHERE y = (SELECT max(y) FROM u AS u2 WHERE u2.x = u.x)
Q II: SELECT x, (SELECT count(*) FROM u AS u2 WHERE u2.x IS NOT DISTINCT FROM u.x) FROM u
Q II: SELECT a, (SELECT count(*) FROM (SELECT x FROM u WHERE y > 100) AS s WHERE s.x = t.a) FROM t
Q I: SELECT count(*) FROM t WHERE a IN (SELECT x FROM u UNION SELECT z FROM e)
Q II: SELECT a, b FROM t WHERE a IN (SELECT x FROM u WHERE y > 150) AND b NOT IN (SELECT y FROM u WHERE y IS NOT NULL)
Q II: WITH big AS (SELECT x, y FROM u WHERE y > 150) SELECT a, b FROM t JOIN big ON big.x = t.a
Q II: WITH s1 AS (SELECT a, b FROM t WHERE a IS NOT NULL), s2 AS (SELECT a, sum(b) AS sb FROM s1 GROUP BY a) SELECT * FROM s2
Q II: WITH s1(k, v) AS (SELECT x, y FROM u) SELECT k, count(*) FROM s1 GROUP BY k
Q II: WITH s AS (SELECT x FROM u) SELECT a, b FROM t WHERE a IN (SELECT x FROM s)
Q II: WITH s AS (SELECT x, y FROM u) SELECT s.x, s2.y FROM s, s AS s2 WHERE s.x = s2.x AND s.y < s2.y
Q I: SELECT (WITH s AS (SELECT max(y) AS m FROM u) SELECT m FROM s)
Q IIII: SELECT a, b, x, y FROM t LEFT JOIN u ON t.a = u.x AND u.y > t.b
Q IIII: SELECT a, b, x, y FROM t LEFT JOIN u ON t.a = u.x AND t.b > 15
Q IIII: SELECT a, b, x, y FROM t LEFT JOIN u ON t.a < u.x
Q IIII: SELECT a, b, x, y FROM t LEFT JOIN u ON t.a = u.x OR t.b = u.y
Q IIII: SELECT a, b, x, y FROM t LEFT JOIN u ON 1 = 0
Q IIII: SELECT a, b, x, y FROM t RIGHT JOIN u ON t.a = u.x AND u.y >= 200
Q IIII: SELECT a, b, x, y FROM t RIGHT JOIN u ON t.a + 1 = u.x OR u.x IS NULL
Q IIII: SELECT a, b, x, y FROM t FULL JOIN u ON t.a = u.x AND t.b < u.y
Q IIII: SELECT a, b, x, y FROM t FULL JOIN u ON t.b > u.y
Q III: SELECT a, x, z FROM t LEFT JOIN u ON t.a = u.x AND u.y <> 201 LEFT JOIN e ON e.z = u.y
Q II: SELECT a, count(x) FROM t LEFT JOIN u ON u.x >= t.a GROUP BY a
S: DELETE FROM u WHERE x = 2
Q II: SELECT a, (SELECT count(*) FROM u WHERE u.x = t.a) FROM t
Q II: SELECT a, b FROM t WHERE a NOT IN (SELECT x FROM u WHERE x IS NOT NULL)
Q IIII: SELECT a, b, x, y FROM t FULL JOIN u ON t.a = u.x AND t.b < u.y
S: INSERT INTO e VALUES (2), (NULL)
Q II: SELECT a, a IN (SELECT z FROM e) FROM t
Q II: SELECT a, a NOT IN (SELECT z FROM e) FROM t
Q II: SELECT a, b FROM t WHERE EXISTS (SELECT 1 FROM e WHERE e.z = t.a)
Q II: SELECT a, count(*) FROM t GROUP BY a HAVING count(*) IN (SELECT x FROM u)
Q II: SELECT a, count(*) NOT IN (SELECT x FROM u WHERE x IS NOT NULL) FROM t GROUP BY a
Q II: SELECT a, a IN (SELECT count(*) FROM u WHERE u.x = t.a) FROM t
Q II: SELECT a, b FROM t WHERE b IN (SELECT max(y) FROM u WHERE u.x = t.a)
Q II: SELECT a, (SELECT count(*) FROM u WHERE u.x = t.a HAVING count(*) > 0) FROM t
Q II: SELECT a, EXISTS (SELECT count(*) FROM u WHERE u.x = t.a) FROM t
Q II nosort: SELECT a, b FROM t ORDER BY (SELECT count(*) FROM u WHERE u.x = t.a), a, b
