# GROUPING SETS / ROLLUP / CUBE next to GROUP BY HOP(...) (the window a key of every set), against
# PostgreSQL 15: tools/mk_pg.py group_windows_sets.sql > group_windows_sets.test. PostgreSQL has
# no group windows: each query carries its PostgreSQL form after ' --pg: ' (date_bin and
# generate_series put each row in its hopping windows).
S: CREATE TABLE ev(id INTEGER, k INTEGER, ts TIMESTAMP, v INTEGER)
S: INSERT INTO ev VALUES (1, 1, '2020-01-31 10:15:00', 5), (2, 1, '2020-01-31 10:20:00', 3), (3, 1, '2020-01-31 10:40:00', NULL), (4, 2, '2020-01-31 10:25:00', 7)
S: INSERT INTO ev VALUES (5, 2, '2020-01-31 10:50:00', 1), (6, NULL, '2020-01-31 10:12:00', 2), (7, 2, '1969-12-31 23:30:00', 4), (8, 1, '1969-12-31 23:45:00', 6), (9, 3, NULL, 9)

Q TIIII: SELECT HOP_START(ts, INTERVAL '10' MINUTE, INTERVAL '30' MINUTE), k, GROUPING(k), COUNT(*), SUM(v) FROM ev GROUP BY HOP(ts, INTERVAL '10' MINUTE, INTERVAL '30' MINUTE), ROLLUP(k) --pg: SELECT w, k, GROUPING(k), COUNT(*), SUM(v) FROM ev, generate_series(0, 3) AS g(n), LATERAL (SELECT date_bin('10 minutes', ts, TIMESTAMP '1970-01-01') - n * interval '10 minutes' AS w) x WHERE w > ts - interval '30 minutes' GROUP BY w, ROLLUP(k)
Q TTII: SELECT HOP_END(ts, INTERVAL '15' MINUTE, INTERVAL '30' MINUTE), k, COUNT(*), MAX(v) FROM ev GROUP BY GROUPING SETS ((k, HOP(ts, INTERVAL '15' MINUTE, INTERVAL '30' MINUTE)), (HOP(ts, INTERVAL '15' MINUTE, INTERVAL '30' MINUTE))) --pg: SELECT w + interval '30 minutes', k, COUNT(*), MAX(v) FROM ev, generate_series(0, 2) AS g(n), LATERAL (SELECT date_bin('15 minutes', ts, TIMESTAMP '1970-01-01') - n * interval '15 minutes' AS w) x WHERE w > ts - interval '30 minutes' GROUP BY GROUPING SETS ((k, w), (w))
Q TIIII: SELECT HOP_START(ts, INTERVAL '20' MINUTE, INTERVAL '40' MINUTE), k, v > 4, COUNT(*), SUM(id) FROM ev GROUP BY HOP(ts, INTERVAL '20' MINUTE, INTERVAL '40' MINUTE), CUBE(k, v > 4) --pg: SELECT w, k, v > 4, COUNT(*), SUM(id) FROM ev, generate_series(0, 2) AS g(n), LATERAL (SELECT date_bin('20 minutes', ts, TIMESTAMP '1970-01-01') - n * interval '20 minutes' AS w) x WHERE w > ts - interval '40 minutes' GROUP BY w, CUBE(k, v > 4)
E: CREATE VIEW bad1 AS SELECT k, COUNT(*) FROM ev GROUP BY ROLLUP(k, HOP(ts, INTERVAL '10' MINUTE, INTERVAL '30' MINUTE))
E: CREATE VIEW bad2 AS SELECT k, COUNT(*) FROM ev GROUP BY SESSION(ts, INTERVAL '10' MINUTE), ROLLUP(k)
