# A subquery's columns never become names of the query that reads it: `x IN (SELECT x FROM b)`
# leaves `x` meaning a.x. Answers from PostgreSQL 15 (tools/mk_pg.py).
S: CREATE TABLE a (x INT, name VARCHAR(10))
S: CREATE TABLE b (x INT, y INT)
S: INSERT INTO a VALUES (1, 'one'), (2, 'two'), (3, 'three'), (NULL, 'none'), (5, 'five')
S: INSERT INTO b VALUES (1, 10), (3, 30), (3, 31), (NULL, 0), (7, 70)
Q IT: SELECT x, name FROM a WHERE x IN (SELECT x FROM b)
Q IT: SELECT x, name FROM a WHERE x NOT IN (SELECT x FROM b WHERE x IS NOT NULL)
Q IT: SELECT x, name FROM a WHERE EXISTS (SELECT x FROM b WHERE b.x = a.x AND y > 20)
Q II: SELECT x, (SELECT MAX(y) FROM b WHERE b.x = a.x) FROM a
Q II: SELECT x, y FROM b WHERE (x, y) IN (SELECT x, x * 10 FROM b)
Q IT: SELECT x, name FROM a WHERE x = ANY (SELECT x FROM b) AND name IN (SELECT name FROM a WHERE x > 1)
