# SQLite dialect items fld accepts (README, SQL section): empty IN lists; a string or binary
# constant compared with numbers (the text of a number is that number; other text and every
# binary equal no number and order after them all); COALESCE arguments after one that cannot be
# NULL are never evaluated, so a non-grouped column there is no error. Expected answers: sqlite3.
# Only comparisons of a constant with a column or a subquery's column (where SQLite converts the
# text by the column's affinity), not two constants ('12' = 12 is FALSE in SQLite, TRUE in fld
# as in PostgreSQL), except for text that is no number.
S: CREATE TABLE t(x INTEGER, r DOUBLE, d DECIMAL(10,2), v VARCHAR(10))
S: CREATE TABLE e(z INTEGER)
S: CREATE TABLE n(k INTEGER NOT NULL, m INTEGER NOT NULL)
S: INSERT INTO t VALUES (1, 1.5, 2.25, 'a'), (NULL, NULL, NULL, NULL), (12, 12.0, 3, '12'), (-7, -0.5, -1.5, 'b'), (0, 0, 0, '')
S: INSERT INTO n VALUES (1, 2), (3, 4), (1, 5)
# empty IN lists, whatever the left operand
Q I: SELECT 1 IN ()
Q I: SELECT 1 NOT IN ()
Q I: SELECT NULL IN ()
Q I: SELECT NULL NOT IN ()
Q I: SELECT 'a' IN ()
Q I: SELECT x FROM t WHERE x IN ()
Q I: SELECT x FROM t WHERE x NOT IN ()
Q I: SELECT x FROM t WHERE v NOT IN ()
Q II: SELECT x, x IN () FROM t
Q II: SELECT x, x NOT IN () OR x IS NULL FROM t
Q I: SELECT count(*) FROM t WHERE r IN () OR x = 1
Q II: SELECT x, count(*) FROM t GROUP BY x HAVING x NOT IN ()
# text that is no number against numeric columns
Q IIIIIII: SELECT x, x = 'hello', x <> 'hello', x < 'hello', x <= 'hello', x > 'hello', x >= 'hello' FROM t
Q IIIII: SELECT x, 'hello' = x, 'hello' <> x, 'hello' < x, 'hello' >= x FROM t
Q IIIII: SELECT r, r = 'abc', r <> 'abc', r < 'abc', r > 'abc' FROM t
Q IIIII: SELECT d, d = 'abc', d <> 'abc', d <= 'abc', d >= 'abc' FROM t
Q III: SELECT x, x IS DISTINCT FROM 'hello', x IS NOT DISTINCT FROM 'hello' FROM t
Q I: SELECT x FROM t WHERE x IN ('hello', 1, 12)
Q I: SELECT x FROM t WHERE x NOT IN ('hello', 1)
Q II: SELECT x, x IN ('hello', 12, NULL) FROM t
Q II: SELECT x, x BETWEEN -100 AND 'z' FROM t
Q II: SELECT x, x BETWEEN 'a' AND 'z' FROM t
Q I: SELECT x FROM t WHERE x + 1 = 'two'
Q I: SELECT x FROM t WHERE x * 2 < '0x10'
Q II: SELECT x, CASE x WHEN 'one' THEN 1 WHEN 12 THEN 2 ELSE 3 END FROM t
Q II: SELECT x, NULLIF(x, 'none') FROM t
Q II: SELECT x, x = '' FROM t
# text of a number against numeric columns
Q IIIIII: SELECT x, x = '12', x = ' 12 ', x = '+12', x = '12.0', x = '1.2e1' FROM t
Q IIIII: SELECT x, x < '1.5', x > '-7', x = '1.5', x <> '-7.0' FROM t
Q IIII: SELECT r, r = '1.5', r = '.5', r < '-.5' FROM t
Q IIII: SELECT d, d = '2.25', d = '3', d > '99999999999999999999' FROM t
Q I: SELECT x FROM t WHERE x IN ('12', '1', 'x')
Q I: SELECT x FROM t WHERE x NOT IN ('12.0', '-7')
# the same through a subquery's column
Q I: SELECT 'hello' IN (SELECT x FROM t)
Q I: SELECT 'hello' NOT IN (SELECT x FROM t)
Q I: SELECT 'hello' IN (SELECT x FROM t WHERE x IS NOT NULL)
Q I: SELECT 'hello' NOT IN (SELECT x FROM t WHERE x IS NOT NULL)
Q I: SELECT 'hello' IN (SELECT z FROM e)
Q I: SELECT 'hello' NOT IN (SELECT z FROM e)
Q I: SELECT 'hello' IN (SELECT k FROM n)
Q I: SELECT 'hello' NOT IN (SELECT k FROM n)
Q I: SELECT '12' IN (SELECT x FROM t)
Q I: SELECT ' 3 ' IN (SELECT k FROM n)
Q I: SELECT '3.5' IN (SELECT k FROM n)
Q I: SELECT '1.5' IN (SELECT r FROM t)
Q I: SELECT '-1.50' IN (SELECT d FROM t)
Q II: SELECT x, 'hello' IN (SELECT k FROM n WHERE n.k = t.x) FROM t
Q II: SELECT x, 'hello' NOT IN (SELECT k FROM n WHERE n.m > t.x) FROM t
Q I: SELECT x FROM t WHERE 'a' NOT IN (SELECT k FROM n)
Q II: SELECT k, count(*) FROM n GROUP BY k HAVING 'z' NOT IN (SELECT m FROM n)
# binary constants against numbers: never converted
Q I: SELECT x'303132' IN (SELECT x FROM t)
Q I: SELECT x'303132' NOT IN (SELECT x FROM t WHERE x IS NOT NULL)
Q I: SELECT x'3132' IN (SELECT x FROM t WHERE x IS NOT NULL)
Q IIIII: SELECT x, x = x'3132', x <> x'3132', x < x'3132', x'3132' < x FROM t
Q I: SELECT x FROM t WHERE x IN (x'31', 1)
# two constants, text that is no number
Q IIIII: SELECT 'hello' = 5, 'hello' <> 5, 5 < 'hello', 'hello' < 5, 5.5 >= 'x'
Q III: SELECT x'3132' = 12, 12 < x'3132', x'3132' <= 12
# COALESCE: arguments after one that cannot be NULL are never evaluated
Q I: SELECT DISTINCT COALESCE(59, x * r) FROM t GROUP BY v
Q II: SELECT v, COALESCE(-79, -x) FROM t GROUP BY v
Q II: SELECT x, COALESCE(NULLIF(x, -x) * 43, 52, r + d) FROM t GROUP BY x
Q I: SELECT COALESCE(COALESCE(-86, r), -x, d) FROM t GROUP BY v
Q II: SELECT x, COALESCE(x, 7, r) FROM t GROUP BY x
Q II: SELECT k, COALESCE(k, m) FROM n GROUP BY k
Q II: SELECT k, COALESCE(SUM(m), 0, m) FROM n GROUP BY k
Q II: SELECT v, COALESCE(NULL, 5, x) + count(*) FROM t GROUP BY v
Q R: SELECT COALESCE(3, r) FROM t GROUP BY x
Q II: SELECT x, COALESCE(x, 1, x) FROM t
# CASE: a WHEN whose condition is fixed FALSE or NULL never runs its value, nor does anything
# after one fixed TRUE
Q I: SELECT DISTINCT CASE 8 WHEN 76 THEN -x * 8 WHEN 9 THEN NULL ELSE NULL END FROM t GROUP BY v
Q II: SELECT x, CASE 64 WHEN x THEN NULL WHEN 77 THEN r END * x FROM t GROUP BY x
Q II: SELECT v, CASE WHEN 1 = 1 THEN 3 ELSE x END FROM t GROUP BY v
Q II: SELECT v, CASE WHEN NULL THEN x WHEN 2 > 1 THEN 4 WHEN x > 0 THEN r ELSE d END FROM t GROUP BY v
Q II: SELECT x, CASE WHEN 1 = 2 THEN r WHEN x > 0 THEN x * 2 ELSE -1 END FROM t GROUP BY x
Q II: SELECT x, CASE x WHEN 1 + 1 THEN 'two' WHEN 12 THEN 'twelve' END IS NULL FROM t
Q II: SELECT x, CASE WHEN 1 = 2 THEN 1 WHEN NULL = 1 THEN 2 END FROM t
Q II: SELECT x, CASE WHEN NOT (1 > 2) THEN x ELSE 5 END FROM t
Q II: SELECT k, CASE WHEN 0 = 1 THEN m ELSE SUM(m) END FROM n GROUP BY k
