# Group windows (GROUP BY HOP / SESSION / TUMBLE, also sized in months) and window functions in
# aggregate queries, against PostgreSQL 15: tools/mk_pg.py group_windows.sql > group_windows.test.
# PostgreSQL has no group windows: each such query carries its PostgreSQL form after ' --pg: '
# (date_bin and generate_series for HOP; month arithmetic from 1970-01 for windows sized in
# months, which start on the first of a month; gaps-and-islands with LAG for SESSION).
# Window ORDER BY keys are total where the answer could depend on the order of peers, and NULL
# order keys say NULLS FIRST / LAST (PostgreSQL sorts NULL last by default, fld first).
S: CREATE TABLE ev(id INTEGER, k INTEGER, ts TIMESTAMP, v INTEGER)
S: INSERT INTO ev VALUES (1, 1, '2020-01-31 10:15:00', 5), (2, 1, '2020-01-31 10:20:00', 3), (3, 1, '2020-01-31 10:40:00', NULL), (4, 2, '2020-02-29 23:59:59', 7)
S: INSERT INTO ev VALUES (5, 2, '2020-03-01 00:00:00', 1), (6, NULL, '2021-01-03 00:10:00', 2), (7, 2, '1969-12-31 23:30:00', 4), (8, 1, '1900-06-15 18:30:00', 6)
S: INSERT INTO ev VALUES (9, 3, NULL, 9), (10, 1, '2020-01-31 10:55:00', 8), (11, NULL, '2021-01-03 00:12:00', 1), (12, 2, '2020-12-31 23:59:59', 2), (13, 3, '2019-07-01 00:00:00', 3)

# GROUP BY HOP
Q TTII: SELECT HOP_START(ts, INTERVAL '10' MINUTE, INTERVAL '30' MINUTE), HOP_END(ts, INTERVAL '10' MINUTE, INTERVAL '30' MINUTE), COUNT(*), SUM(v) FROM ev GROUP BY HOP(ts, INTERVAL '10' MINUTE, INTERVAL '30' MINUTE) --pg: SELECT w, w + interval '30 minutes', COUNT(*), SUM(v) FROM ev, generate_series(0, 3) AS g(n), LATERAL (SELECT date_bin('10 minutes', ts, TIMESTAMP '1970-01-01') - n * interval '10 minutes' AS w) x WHERE w > ts - interval '30 minutes' GROUP BY w
Q ITI: SELECT k, HOP_START(ts, INTERVAL '1' HOUR, INTERVAL '2' HOUR, INTERVAL '15' MINUTE) AS s, COUNT(*) FROM ev GROUP BY k, HOP(ts, INTERVAL '1' HOUR, INTERVAL '2' HOUR, INTERVAL '15' MINUTE) --pg: SELECT k, w, COUNT(*) FROM ev, generate_series(0, 2) AS g(n), LATERAL (SELECT date_bin('1 hour', ts, TIMESTAMP '1970-01-01 00:15:00') - n * interval '1 hour' AS w) x WHERE w > ts - interval '2 hours' GROUP BY k, w
Q TI: SELECT HOP_END(ts, INTERVAL '1' DAY, INTERVAL '1' DAY), SUM(v) FROM ev WHERE v > 1 GROUP BY HOP(ts, INTERVAL '1' DAY, INTERVAL '1' DAY) HAVING COUNT(*) > 1 --pg: SELECT date_trunc('day', ts) + interval '1 day', SUM(v) FROM ev WHERE v > 1 AND ts IS NOT NULL GROUP BY date_trunc('day', ts) HAVING COUNT(*) > 1

# GROUP BY SESSION
Q ITTII: SELECT k, SESSION_START(ts, INTERVAL '10' MINUTE), SESSION_END(ts, INTERVAL '10' MINUTE), COUNT(*), SUM(v) FROM ev GROUP BY k, SESSION(ts, INTERVAL '10' MINUTE) --pg: WITH m AS (SELECT *, CASE WHEN ts - LAG(ts) OVER (PARTITION BY k ORDER BY ts) < interval '10 minutes' THEN 0 ELSE 1 END AS nw FROM ev WHERE ts IS NOT NULL), s AS (SELECT *, SUM(nw) OVER (PARTITION BY k ORDER BY ts ROWS UNBOUNDED PRECEDING) AS sid FROM m) SELECT k, MIN(ts), MAX(ts) + interval '10 minutes', COUNT(*), SUM(v) FROM s GROUP BY k, sid
Q TTI: SELECT SESSION_START(ts, INTERVAL '1' DAY), SESSION_END(ts, INTERVAL '1' DAY), COUNT(*) FROM ev GROUP BY SESSION(ts, INTERVAL '1' DAY) --pg: WITH m AS (SELECT *, CASE WHEN ts - LAG(ts) OVER (ORDER BY ts) < interval '1 day' THEN 0 ELSE 1 END AS nw FROM ev WHERE ts IS NOT NULL), s AS (SELECT *, SUM(nw) OVER (ORDER BY ts ROWS UNBOUNDED PRECEDING) AS sid FROM m) SELECT MIN(ts), MAX(ts) + interval '1 day', COUNT(*) FROM s GROUP BY sid
Q ITI: SELECT k % 2 AS p, SESSION_START(ts, INTERVAL '1' HOUR), COUNT(*) FROM ev GROUP BY SESSION(ts, INTERVAL '1' HOUR), k % 2 --pg: WITH m AS (SELECT *, k % 2 AS p, CASE WHEN ts - LAG(ts) OVER (PARTITION BY k % 2 ORDER BY ts) < interval '1 hour' THEN 0 ELSE 1 END AS nw FROM ev WHERE ts IS NOT NULL), s AS (SELECT *, SUM(nw) OVER (PARTITION BY p ORDER BY ts ROWS UNBOUNDED PRECEDING) AS sid FROM m) SELECT p, MIN(ts), COUNT(*) FROM s GROUP BY p, sid

# windows sized in months or years
Q TTII: SELECT TUMBLE_START(ts, INTERVAL '5' MONTH), TUMBLE_END(ts, INTERVAL '5' MONTH), COUNT(*), SUM(v) FROM ev GROUP BY TUMBLE(ts, INTERVAL '5' MONTH) --pg: SELECT s, s + interval '5 months', COUNT(*), SUM(v) FROM (SELECT *, TIMESTAMP '1970-01-01' + (floor(((extract(year FROM ts) - 1970) * 12 + extract(month FROM ts) - 1) / 5) * 5) * interval '1 month' AS s FROM ev) x GROUP BY s
Q TTI: SELECT TUMBLE_START(ts, INTERVAL '1' YEAR, INTERVAL '6' MONTH), TUMBLE_END(ts, INTERVAL '1' YEAR, INTERVAL '6' MONTH), COUNT(*) FROM ev WHERE ts IS NOT NULL GROUP BY TUMBLE(ts, INTERVAL '1' YEAR, INTERVAL '6' MONTH) --pg: SELECT s, s + interval '1 year', COUNT(*) FROM (SELECT *, TIMESTAMP '1970-07-01' + (floor(((extract(year FROM ts) - 1970) * 12 + extract(month FROM ts) - 7) / 12) * 12) * interval '1 month' AS s FROM ev WHERE ts IS NOT NULL) x GROUP BY s
Q ITT: SELECT id, window_start, window_end FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '1' MONTH)) WHERE ts IS NOT NULL --pg: SELECT id, date_trunc('month', ts), date_trunc('month', ts) + interval '1 month' FROM ev WHERE ts IS NOT NULL
Q TTI: SELECT window_start, window_end, COUNT(*) FROM TABLE(HOP(TABLE ev, DESCRIPTOR(ts), INTERVAL '1' MONTH, INTERVAL '2' MONTH)) GROUP BY window_start, window_end --pg: SELECT w, w + interval '2 months', COUNT(*) FROM ev, generate_series(0, 1) AS g(n), LATERAL (SELECT date_trunc('month', ts) - n * interval '1 month' AS w) x WHERE ts IS NOT NULL GROUP BY w
Q ITI: SELECT k, HOP_START(ts, INTERVAL '3' MONTH, INTERVAL '1' YEAR), COUNT(*) FROM ev GROUP BY HOP(ts, INTERVAL '3' MONTH, INTERVAL '1' YEAR), k --pg: SELECT k, w, COUNT(*) FROM ev, generate_series(0, 3) AS g(n), LATERAL (SELECT date_trunc('quarter', ts) - n * interval '3 months' AS w) x WHERE ts IS NOT NULL GROUP BY k, w

# window functions in aggregate queries
Q III: SELECT k, SUM(v), RANK() OVER (ORDER BY SUM(v) DESC NULLS LAST) FROM ev GROUP BY k
Q IIII: SELECT k, COUNT(*), SUM(COUNT(*)) OVER (ORDER BY k NULLS FIRST), ROW_NUMBER() OVER (ORDER BY COUNT(*) DESC, k NULLS FIRST) FROM ev GROUP BY k
Q III: SELECT k, MAX(v) - MIN(v), LAG(MAX(v)) OVER (ORDER BY k NULLS FIRST) FROM ev GROUP BY k HAVING COUNT(*) > 1
Q III: SELECT k, SUM(v), RANK() OVER (ORDER BY SUM(v) DESC NULLS LAST) FROM ev GROUP BY k HAVING COUNT(*) > 2
Q II: SELECT COUNT(*), RANK() OVER (ORDER BY COUNT(*)) FROM ev
Q IIII: SELECT k % 2 AS p, k, SUM(v), SUM(SUM(v)) OVER (PARTITION BY k % 2) FROM ev WHERE k IS NOT NULL GROUP BY k
Q IIR: SELECT k, SUM(v) * 2 + 1, AVG(CAST(SUM(v) AS DOUBLE PRECISION)) OVER (ORDER BY k NULLS FIRST ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) FROM ev GROUP BY k
Q TII: SELECT TUMBLE_START(ts, INTERVAL '1' DAY), COUNT(*), LAG(COUNT(*), 1, 0) OVER (ORDER BY TUMBLE_START(ts, INTERVAL '1' DAY)) FROM ev WHERE ts IS NOT NULL GROUP BY TUMBLE(ts, INTERVAL '1' DAY) --pg: SELECT date_trunc('day', ts), COUNT(*), LAG(COUNT(*), 1, 0::bigint) OVER (ORDER BY date_trunc('day', ts)) FROM ev WHERE ts IS NOT NULL GROUP BY date_trunc('day', ts)
Q TII: SELECT HOP_START(ts, INTERVAL '12' HOUR, INTERVAL '1' DAY) AS s, COUNT(*), DENSE_RANK() OVER (ORDER BY COUNT(*)) FROM ev GROUP BY HOP(ts, INTERVAL '12' HOUR, INTERVAL '1' DAY) --pg: SELECT w, COUNT(*), DENSE_RANK() OVER (ORDER BY COUNT(*)) FROM ev, generate_series(0, 2) AS g(n), LATERAL (SELECT date_bin('12 hours', ts, TIMESTAMP '1970-01-01') - n * interval '12 hours' AS w) x WHERE w > ts - interval '1 day' GROUP BY w
Q II: SELECT DISTINCT COUNT(*), RANK() OVER (ORDER BY COUNT(*)) FROM ev GROUP BY k

# FILTER in window aggregates
Q III: SELECT id, COUNT(*) FILTER (WHERE v > 3) OVER (PARTITION BY k), SUM(v) FILTER (WHERE id % 2 = 0) OVER (ORDER BY id) FROM ev
Q III: SELECT id, MAX(v) FILTER (WHERE k = 1) OVER (), MIN(id) FILTER (WHERE v IS NULL OR v < 3) OVER (ORDER BY id ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) FROM ev
Q III: SELECT k, SUM(v), COUNT(k) FILTER (WHERE k > 1) OVER (ORDER BY k NULLS FIRST) FROM ev GROUP BY k

# windows defined from other windows
Q IIII: SELECT id, SUM(v) OVER w2, RANK() OVER w2, COUNT(*) OVER w1 FROM ev WINDOW w1 AS (PARTITION BY k), w2 AS (w1 ORDER BY id)
Q III: SELECT id, SUM(v) OVER (w2 ROWS BETWEEN 1 PRECEDING AND CURRENT ROW), SUM(v) OVER w3 FROM ev WINDOW w1 AS (PARTITION BY k), w2 AS (w1 ORDER BY id), w3 AS (w2 ROWS BETWEEN CURRENT ROW AND 1 FOLLOWING)

# STDDEV / VARIANCE as window functions. Over integers fld computes Feldera's integer formula,
# (SUM(v*v) - SUM(v)*SUM(v)/COUNT(v)) / (COUNT(v) or COUNT(v) - 1) with truncating divisions (the
# square root truncated for STDDEV), which the --pg forms spell out; over DOUBLE PRECISION
# PostgreSQL's functions answer directly.
Q IRR: SELECT id, STDDEV_SAMP(CAST(v AS DOUBLE PRECISION)) OVER (PARTITION BY k ORDER BY id), VAR_POP(CAST(v AS DOUBLE PRECISION)) OVER (ORDER BY id ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) FROM ev
Q IR: SELECT id, STDDEV_POP(CAST(v AS DOUBLE PRECISION)) FILTER (WHERE id > 3) OVER (ORDER BY id) FROM ev
Q II: SELECT id, STDDEV_POP(v) OVER (PARTITION BY k) FROM ev --pg: SELECT id, trunc(sqrt((SUM(v * v) OVER w - (SUM(v) OVER w * SUM(v) OVER w) / COUNT(v) OVER w) / COUNT(v) OVER w)) FROM ev WINDOW w AS (PARTITION BY k)
Q III: SELECT id, VAR_SAMP(v) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING), VARIANCE(v * 10) OVER (ORDER BY id) FROM ev --pg: SELECT id, (SUM(v * v) OVER w - (SUM(v) OVER w * SUM(v) OVER w) / COUNT(v) OVER w) / NULLIF(COUNT(v) OVER w - 1, 0), (SUM(v * v * 100) OVER x - (SUM(v * 10) OVER x * SUM(v * 10) OVER x) / COUNT(v) OVER x) / NULLIF(COUNT(v) OVER x - 1, 0) FROM ev WINDOW w AS (ORDER BY id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING), x AS (ORDER BY id)
Q IR: SELECT k, STDDEV_SAMP(CAST(SUM(v) AS DOUBLE PRECISION)) OVER () FROM ev GROUP BY k
