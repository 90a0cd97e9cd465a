# LATERAL subqueries (comma, CROSS JOIN, JOIN ... ON, LEFT JOIN ... ON), with aggregates, GROUP BY,
# DISTINCT and ORDER BY ... LIMIT / OFFSET (top-K per outer row), chained and nested in
# correlated subqueries; LIMIT / OFFSET in FROM, WITH and expression subqueries; correlated set
# operations; FROM subqueries and inner / LEFT JOIN ON conditions reading an enclosing query.
# Random-ish data with NULLs and duplicates. Expected answers: PostgreSQL 15 (tools/mk_pg.py
# lateral.sql > x.test; tools/hashify.py x.test > lateral.test). ORDER BY keys that may be NULL
# say NULLS FIRST / LAST (the defaults differ).
S: CREATE TABLE t(a INTEGER, b INTEGER, c VARCHAR(10))
S: CREATE TABLE u(x INTEGER, y INTEGER)
S: CREATE TABLE w(k INTEGER, v INTEGER)
S: CREATE TABLE e(z INTEGER)
S: INSERT INTO t VALUES (3, 24, 'p'), (1, 51, 'q'), (6, 29, 's'), (7, 57, 'p'), (7, 1, 's'), (7, 24, 'r'), (1, 4, 's'), (1, 21, 'p'), (7, 33, 'q'), (1, 2, 'q'), (2, 37, 's'), (4, 54, 'q'), (2, 6, 'r'), (5, 53, 'q'), (4, 33, 'p'), (8, 34, 'q'), (0, 14, 's'), (4, 53, 's'), (2, 7, 'p'), (3, 10, 'p'), (6, 10, 'q'), (2, 28, 'p'), (1, NULL, 'p'), (8, 9, 's'), (2, 4, 'q'), (5, 36, 'r'), (5, NULL, 's'), (NULL, NULL, 'q'), (2, 27, 'p'), (3, 31, 'q')
S: INSERT INTO u VALUES (6, 74), (2, 65), (7, 46), (0, 57), (3, 90), (0, 55), (9, 90), (8, 67), (8, 0), (4, 95), (6, NULL), (6, 47), (5, 80), (5, 37), (1, 47), (9, 39), (6, 87), (5, 77), (6, 67), (1, 8), (4, 99), (4, 35), (8, 80), (5, 31), (7, 76), (3, 99), (1, 83), (9, 5), (NULL, 24), (NULL, 58), (4, 11), (5, NULL), (0, 10), (5, 9), (0, 40), (5, 8), (1, 78), (2, 49), (NULL, NULL), (2, 25), (NULL, 94), (2, 41), (3, 61), (1, 95), (5, 22)
S: INSERT INTO w VALUES (7, 7), (7, 74), (4, 53), (6, 74), (5, 88), (7, 46), (8, 23), (4, 34), (7, 16), (4, 63), (8, 68), (8, 37), (3, 72), (8, 50), (2, 62)
Q II: SELECT t.a, s.y FROM t, LATERAL (SELECT y FROM u WHERE u.x = t.a) s
Q III: SELECT t.a, t.b, s.y FROM t CROSS JOIN LATERAL (SELECT y FROM u WHERE u.x = t.a AND u.y > t.b) AS s
Q IITII: SELECT * FROM t, LATERAL (SELECT x, y FROM u WHERE u.x = t.a AND u.y < 30) s
Q III: SELECT t.a, s.total, s.n FROM t, LATERAL (SELECT SUM(y) AS total, COUNT(*) AS n FROM u WHERE u.x = t.a) s
Q III: SELECT t.a, t.b, s.m FROM t, LATERAL (SELECT MAX(y) AS m FROM u WHERE u.y < t.b) s
Q III: SELECT t.a, t.b, s.y FROM t LEFT JOIN LATERAL (SELECT y FROM u WHERE u.x = t.a) s ON TRUE
Q III: SELECT t.a, t.b, s.y FROM t LEFT JOIN LATERAL (SELECT y FROM u WHERE u.x = t.a) s ON s.y > t.b
Q III: SELECT t.a, t.b, s.y FROM t JOIN LATERAL (SELECT y FROM u WHERE u.x = t.a) s ON s.y > t.b + 20
Q II: SELECT t.a, s.d FROM t, LATERAL (SELECT t.a * 2 + t.b AS d) s
Q III: SELECT t.a, s.g, s.n FROM t, LATERAL (SELECT y % 3 AS g, COUNT(*) AS n FROM u WHERE u.x <= t.a GROUP BY y % 3) s
Q III: SELECT t.a, s.g, s.n FROM t, LATERAL (SELECT x AS g, COUNT(y) AS n FROM u WHERE u.y > t.b GROUP BY x HAVING COUNT(*) > 1) s
Q II: SELECT t.b, s.x FROM t, LATERAL (SELECT DISTINCT x FROM u WHERE u.y BETWEEN t.b AND t.b + 10) s
Q II: SELECT t.a, s.y FROM t, LATERAL (SELECT y FROM u WHERE u.x = t.a ORDER BY y DESC NULLS LAST LIMIT 2) s
Q III: SELECT t.a, t.b, s.y FROM t, LATERAL (SELECT y FROM u WHERE u.x = t.a ORDER BY y NULLS FIRST LIMIT 1 OFFSET 1) s
Q III: SELECT t.a, t.b, s.y FROM t LEFT JOIN LATERAL (SELECT y FROM u WHERE u.x = t.a ORDER BY y NULLS FIRST LIMIT 1 OFFSET 1) s ON TRUE
Q III: SELECT t.a, s.x, s.y FROM t, LATERAL (SELECT x, y FROM u WHERE u.y > t.b ORDER BY x NULLS LAST, y NULLS LAST LIMIT 3) s
Q II: SELECT t.a, s.y FROM t, LATERAL (SELECT y FROM u WHERE u.x = t.a AND y IS NOT NULL ORDER BY x + y DESC, y LIMIT 1) s
Q II: SELECT t.a, s.y FROM t, LATERAL (SELECT y FROM u WHERE u.x = t.a AND y IS NOT NULL ORDER BY 1 LIMIT 2) s
Q III: SELECT t.a, w.v, s.y FROM t, w, LATERAL (SELECT y FROM u WHERE u.x = t.a AND u.y > w.v) s WHERE t.a = w.k
Q III: SELECT t.a, s1.y, s2.c FROM t, LATERAL (SELECT y FROM u WHERE u.x = t.a) s1, LATERAL (SELECT COUNT(*) AS c FROM u WHERE u.y < s1.y) s2
Q III: SELECT t.a, s.y, w.v FROM t, LATERAL (SELECT y FROM u WHERE u.x = t.a) s, w WHERE w.k = t.a AND w.v < s.y
Q II: SELECT t.a, s.n FROM t JOIN w ON w.k = t.a CROSS JOIN LATERAL (SELECT COUNT(*) AS n FROM u WHERE u.x = w.k AND u.y > w.v) s
Q II: SELECT t.a, s.n FROM t, LATERAL (SELECT COUNT(*) AS n FROM e WHERE e.z = t.a) s
Q II: SELECT t.a, s.z FROM t LEFT JOIN LATERAL (SELECT z FROM e WHERE e.z = t.a) s ON TRUE
Q II: SELECT a, b FROM t WHERE EXISTS (SELECT 1 FROM u, LATERAL (SELECT v FROM w WHERE w.k = u.x AND w.v > t.b) s WHERE u.x = t.a)
Q II: SELECT a, (SELECT SUM(s.y) FROM LATERAL (SELECT y FROM u WHERE u.x = t.a) s) FROM t
Q II: SELECT a, (SELECT COUNT(*) FROM w, LATERAL (SELECT y FROM u WHERE u.x = w.k AND u.y < t.b) s) FROM t
Q II: SELECT s.x, s.y FROM (SELECT x, y FROM u ORDER BY y DESC NULLS LAST, x NULLS LAST LIMIT 5) s
Q II: SELECT s.x, s.y FROM (SELECT x, y FROM u ORDER BY y NULLS FIRST, x NULLS FIRST LIMIT 4 OFFSET 3) s
Q II: WITH top AS (SELECT a, b FROM t ORDER BY b DESC NULLS LAST, a NULLS LAST LIMIT 4) SELECT top.a, top.b FROM top
Q II: WITH top AS (SELECT x, COUNT(*) AS n FROM u GROUP BY x ORDER BY COUNT(*) DESC, x NULLS LAST LIMIT 3) SELECT t.a, top.n FROM t, top WHERE t.a = top.x
Q II: SELECT a, (SELECT y FROM u WHERE u.x = t.a ORDER BY y DESC NULLS LAST LIMIT 1) FROM t
Q II: SELECT a, (SELECT y FROM u WHERE u.x = t.a AND y IS NOT NULL ORDER BY y LIMIT 1 OFFSET 1) FROM t
Q II: SELECT a, (SELECT y FROM u ORDER BY y NULLS LAST LIMIT 1) FROM t
Q II: SELECT a, b FROM t WHERE a IN (SELECT x FROM u ORDER BY y DESC NULLS LAST, x LIMIT 6)
Q II: SELECT a, b FROM t WHERE b IN (SELECT y FROM u WHERE u.x <= t.a ORDER BY y NULLS LAST LIMIT 3)
Q II: SELECT a, b FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.x = t.a LIMIT 1 OFFSET 2)
Q II: SELECT a, b FROM t WHERE EXISTS (SELECT 1 FROM u JOIN w ON w.k = u.x AND w.v > t.b WHERE u.x = t.a)
Q II: SELECT a, (SELECT COUNT(*) FROM u JOIN w ON w.k = u.x AND u.y < t.b) FROM t
Q II: SELECT a, (SELECT COUNT(*) FROM u INNER JOIN w ON w.k = u.x CROSS JOIN e WHERE e.z < t.a) FROM t
Q II: SELECT a, (SELECT MAX(s.y) FROM (SELECT y FROM u WHERE u.x = t.a) s) FROM t
Q II: SELECT a, b FROM t WHERE EXISTS (SELECT 1 FROM w, (SELECT x FROM u WHERE u.y > t.b) s WHERE s.x = w.k)
Q II: SELECT a, (SELECT COUNT(*) FROM (SELECT * FROM (SELECT x FROM u WHERE x = t.a) s1) s2) FROM t
Q II: SELECT a, b FROM t WHERE b IN (SELECT s.y FROM w, (SELECT y FROM u WHERE u.x = t.a) s WHERE s.y > w.v)
Q II: SELECT t.a, s.one FROM LATERAL (SELECT 1 AS one) s, t
Q II: SELECT t.a, s.n FROM t, LATERAL (SELECT COUNT(*) AS n FROM w) s
Q III: SELECT t.a, t.b, s.y FROM t, LATERAL (SELECT y FROM u WHERE u.x = t.a) s WHERE s.y > t.b AND t.c <> 'q'
Q IITI: SELECT t.*, s.* FROM t, LATERAL (SELECT MIN(y) AS lo FROM u WHERE u.x = t.a AND u.y > t.b) s
Q II: SELECT t.a, s.y FROM t, LATERAL (SELECT y FROM u WHERE u.x = t.a UNION ALL SELECT v FROM w WHERE w.k = 3) s
Q II: SELECT s.k, s.total FROM (SELECT DISTINCT a FROM t) d, LATERAL (SELECT d.a AS k, SUM(v) AS total FROM w WHERE w.k >= d.a) s
Q III: SELECT t.a, s.x, s.n FROM t, LATERAL (SELECT x, (SELECT COUNT(*) FROM w WHERE w.k = u.x) AS n FROM u WHERE u.y = t.b) s
Q II: SELECT t.a, s.y FROM t, LATERAL (SELECT y FROM u WHERE u.x = t.a AND EXISTS (SELECT 1 FROM w WHERE w.k = t.a AND w.v < u.y)) s
Q II: SELECT a, b FROM t WHERE EXISTS (SELECT x FROM u WHERE u.x = t.a UNION SELECT k FROM w WHERE w.v < t.b)
Q II: SELECT a, (SELECT COUNT(*) FROM (SELECT y FROM u WHERE u.x = t.a EXCEPT SELECT v FROM w) s) FROM t
Q II: SELECT a, (SELECT COUNT(*) FROM (SELECT y FROM u WHERE u.x < t.a INTERSECT SELECT v FROM w WHERE w.k <> t.a) s) FROM t
Q II: SELECT a, b IN (SELECT y FROM u WHERE u.x = t.a UNION ALL SELECT v FROM w WHERE w.k = t.a) FROM t
Q II: SELECT a, (SELECT COUNT(w.v) FROM u LEFT JOIN w ON w.k = u.x AND w.v > t.b WHERE u.x = t.a) FROM t
Q II: SELECT a, (SELECT COUNT(*) FROM u LEFT JOIN w ON w.k = u.x AND w.v > t.b WHERE w.k IS NULL AND u.y < t.b) FROM t
Q II: SELECT a, b FROM t WHERE EXISTS (SELECT 1 FROM e, u LEFT OUTER JOIN w ON w.k = u.x AND w.v < t.b WHERE u.x = t.a AND w.k IS NULL)
