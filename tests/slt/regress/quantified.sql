# Quantified comparisons (x op ANY / SOME / ALL (subquery)), correlated or not, with NULLs on
# both sides and empty subqueries, and ILIKE. Expected answers: PostgreSQL 15
# (tools/mk_pg.py quantified.sql > quantified.test).
S: CREATE TABLE t(a INTEGER, b INTEGER, c VARCHAR(10))
S: CREATE TABLE u(x INTEGER, y INTEGER)
S: CREATE TABLE e(z INTEGER)
S: INSERT INTO t VALUES (1, 10, 'p'), (2, 20, 'Q'), (3, NULL, 'r'), (NULL, 40, 'S'), (2, 25, NULL), (5, 10, 'pq')
S: INSERT INTO u VALUES (1, 100), (2, 200), (2, 201), (NULL, 300), (7, NULL), (3, 10)
Q II: SELECT a, a > ALL (SELECT x FROM u) FROM t
Q II: SELECT a, a > ALL (SELECT x FROM u WHERE x IS NOT NULL) FROM t
Q II: SELECT a, a < ANY (SELECT x FROM u) FROM t
Q II: SELECT a, a >= SOME (SELECT x FROM u WHERE x < 3) FROM t
Q II: SELECT a, a <= ALL (SELECT x FROM u WHERE x > 1) FROM t
Q II: SELECT a, a = ANY (SELECT x FROM u) FROM t
Q II: SELECT a, a <> ALL (SELECT x FROM u) FROM t
Q II: SELECT a, a = ALL (SELECT x FROM u WHERE x = 2) FROM t
Q II: SELECT a, a <> ANY (SELECT x FROM u WHERE x = 2) FROM t
Q II: SELECT a, a > ALL (SELECT z FROM e) FROM t
Q II: SELECT a, a > ANY (SELECT z FROM e) FROM t
Q II: SELECT a, b FROM t WHERE b > ALL (SELECT y FROM u WHERE u.x = t.a)
Q II: SELECT a, b FROM t WHERE b < ANY (SELECT y FROM u WHERE u.x = t.a)
Q II: SELECT a, b FROM t WHERE NOT (a = ALL (SELECT x FROM u WHERE u.y > t.b))
Q II: SELECT a, a > ALL (SELECT MAX(x) FROM u GROUP BY y) FROM t
Q II: SELECT a, a < ANY (SELECT x FROM u UNION SELECT z FROM e) FROM t
Q IT: SELECT a, c FROM t WHERE c ILIKE 'p%'
Q IT: SELECT a, c FROM t WHERE c NOT ILIKE '%Q'
Q IT: SELECT a, c FROM t WHERE 'P_' ILIKE c || '_'
