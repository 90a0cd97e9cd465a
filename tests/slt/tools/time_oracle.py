#!/usr/bin/env python3
"""Writes tests/slt/regress/time.test: date/time/interval functions and TUMBLE/HOP windows.

Expected answers come from PostgreSQL 15 (each query has a PostgreSQL twin that computes the
same thing with its own functions: date_trunc, extract, age, to_char, date_bin) and, for HOP
windows and the strftime-style formats, from a Python recomputation.

    python3 tests/slt/tools/time_oracle.py "psql -h HOST -p PORT -U USER" > tests/slt/regress/time.test
"""
import datetime as dt
import subprocess
import sys

PSQL = sys.argv[1].split() + ["-At", "-F", "|", "-v", "ON_ERROR_STOP=1"]

ROWS = [
    (1, "2020-01-31 10:15:30", "2020-01-31", "10:15:30"),
    (2, "2020-02-29 23:59:59.5", "2020-02-29", "23:59:59.5"),
    (3, "2021-01-03 00:00:00", "2021-01-03", "00:00:00"),
    (4, "1969-12-31 23:00:00", "1969-12-31", "23:00:00"),
    (5, "2000-03-01 12:00:00.123456", "2000-03-01", "12:00:00.123456"),
    (6, "2024-12-30 06:07:08", "2024-12-30", "06:07:08"),
    (7, None, None, None),
    (8, "1900-06-15 18:30:00", "1900-06-15", "18:30:00"),
    (9, "2020-01-31 10:45:00", "2020-01-31", "10:45:00"),
]


def lit(v):
    return "NULL" if v is None else "'%s'" % v


VALUES = ", ".join("(%d, %s, %s, %s)" % (i, lit(ts), lit(d), lit(t)) for i, ts, d, t in ROWS)


def pg(query):
    sql = ("CREATE TEMP TABLE ev(id INT, ts TIMESTAMP, d DATE, t TIME); INSERT INTO ev VALUES %s; %s" % (VALUES, query))
    out = subprocess.run(PSQL + ["-c", sql], check=True, capture_output=True, text=True).stdout
    lines = [l for l in out.splitlines() if l and not l.startswith("INSERT") and not l.startswith("CREATE")]
    return [l.split("|") for l in lines]


def cell(v):
    return "NULL" if v == "" else v


out = []
out.append("# fld regression cases for dates, times, intervals and windows; expected answers from")
out.append("# PostgreSQL 15 and Python (written by tests/slt/tools/time_oracle.py, see there).")
out.append("")
out.append("statement ok")
out.append("CREATE TABLE ev(id INT, ts TIMESTAMP, d DATE, t TIME)")
out.append("")
out.append("statement ok")
out.append("INSERT INTO ev VALUES " + VALUES)
out.append("")


def emit(types, fld_sql, rows):
    out.append("query %s rowsort" % types)
    out.append(fld_sql)
    out.append("----")
    # sqllogictest: one value per line, rows sorted as strings of their values
    for r in sorted(rows, key=lambda r: [cell(c) for c in r]):
        for c in r:
            out.append(cell(c))
    out.append("")


def both(types, fld_sql, pg_sql):
    emit(types, fld_sql, pg(pg_sql))


# EXTRACT and the date-part functions (DOW is Sunday 1 .. Saturday 7 in Feldera; SECOND and
# MILLISECOND are whole numbers).
parts = [("YEAR", "year"), ("MONTH", "month"), ("DAY", "day"), ("HOUR", "hour"), ("MINUTE", "minute"),
         ("QUARTER", "quarter"), ("WEEK", "week"), ("DOY", "doy"), ("ISODOW", "isodow"), ("DECADE", "decade"),
         ("CENTURY", "century"), ("MILLENNIUM", "millennium")]
for f, p in parts:
    both("II", "SELECT id, EXTRACT(%s FROM ts) FROM ev" % f, "SELECT id, extract(%s from ts)::bigint FROM ev" % p)
both("II", "SELECT id, EXTRACT(SECOND FROM ts) FROM ev", "SELECT id, floor(extract(second from ts))::bigint FROM ev")
both("II", "SELECT id, EXTRACT(MILLISECOND FROM ts) FROM ev",
     "SELECT id, floor(extract(milliseconds from ts))::bigint FROM ev")
both("II", "SELECT id, EXTRACT(EPOCH FROM ts) FROM ev", "SELECT id, floor(extract(epoch from ts))::bigint FROM ev")
both("II", "SELECT id, DAYOFWEEK(ts) FROM ev", "SELECT id, extract(dow from ts)::bigint + 1 FROM ev")
both("IIIII", "SELECT id, YEAR(d), MONTH(d), DAYOFMONTH(d), DAYOFYEAR(d) FROM ev",
     "SELECT id, extract(year from d)::bigint, extract(month from d)::bigint, extract(day from d)::bigint, "
     "extract(doy from d)::bigint FROM ev")
both("IIII", "SELECT id, HOUR(t), MINUTE(t), SECOND(t) FROM ev",
     "SELECT id, extract(hour from t)::bigint, extract(minute from t)::bigint, floor(extract(second from t))::bigint "
     "FROM ev")
both("II", "SELECT id, DATE_PART(DOW FROM d) FROM ev", "SELECT id, extract(dow from d)::bigint + 1 FROM ev")

# Truncation and rounding up
for u in ["YEAR", "QUARTER", "MONTH", "WEEK", "DAY", "HOUR", "MINUTE", "SECOND", "DECADE", "CENTURY", "MILLENNIUM"]:
    both("IT", "SELECT id, TIMESTAMP_TRUNC(ts, %s) FROM ev" % u, "SELECT id, date_trunc('%s', ts) FROM ev" % u.lower())
both("IT", "SELECT id, FLOOR(ts TO HOUR) FROM ev", "SELECT id, date_trunc('hour', ts) FROM ev")
both("IT", "SELECT id, DATE_TRUNC(d, MONTH) FROM ev", "SELECT id, date_trunc('month', d)::date FROM ev")
both("IT", "SELECT id, DATE_TRUNC(ts, MONTH) FROM ev", "SELECT id, date_trunc('month', ts)::date FROM ev")
both("IT", "SELECT id, DATE_TRUNC(ts, DAY) - INTERVAL '1' DAY FROM ev", "SELECT id, (ts::date - 1) FROM ev")
both("IT", "SELECT id, TIME_TRUNC(t, MINUTE) FROM ev", "SELECT id, date_trunc('minute', t::interval)::time FROM ev")
both("IT", "SELECT id, CEIL(ts TO DAY) FROM ev",
     "SELECT id, CASE WHEN date_trunc('day', ts) = ts THEN ts ELSE date_trunc('day', ts) + interval '1 day' END FROM ev")
both("IT", "SELECT id, CEIL(d TO MONTH) FROM ev",
     "SELECT id, CASE WHEN date_trunc('month', d) = d THEN d "
     "ELSE (date_trunc('month', d) + interval '1 month')::date END FROM ev")

# Interval literals and arithmetic
both("IT", "SELECT id, ts + INTERVAL '1 10:30' DAY TO MINUTE FROM ev",
     "SELECT id, ts + interval '1 day 10 hours 30 minutes' FROM ev")
both("IT", "SELECT id, ts - INTERVAL '90' DAY FROM ev", "SELECT id, ts - interval '90 days' FROM ev")
both("IT", "SELECT id, ts + INTERVAL 2 SECOND FROM ev", "SELECT id, ts + interval '2 seconds' FROM ev")
both("IT", "SELECT id, ts + INTERVAL '-1 2:03:04.5' DAY TO SECOND FROM ev",
     "SELECT id, ts - interval '1 day 2 hours 3 minutes 4.5 seconds' FROM ev")
both("IT", "SELECT id, d + INTERVAL 3 WEEKS FROM ev", "SELECT id, (d + interval '3 weeks')::date FROM ev")
both("IT", "SELECT id, ts - INTERVAL '2' WEEK FROM ev", "SELECT id, ts - interval '2 weeks' FROM ev")
both("IT", "SELECT id, ts + INTERVAL '3' MONTH FROM ev", "SELECT id, ts + interval '3 months' FROM ev")
both("IT", "SELECT id, ts - INTERVAL '1-2' YEAR TO MONTH FROM ev", "SELECT id, ts - interval '1 year 2 months' FROM ev")
both("IT", "SELECT id, d + INTERVAL '1' MONTH FROM ev", "SELECT id, (d + interval '1 month')::date FROM ev")
both("IT", "SELECT id, d - INTERVAL '10' DAYS FROM ev", "SELECT id, (d - interval '10 days')::date FROM ev")
both("IT", "SELECT id, t + INTERVAL '13' HOUR FROM ev", "SELECT id, t + interval '13 hours' FROM ev")
both("IT", "SELECT id, ts + INTERVAL '1' HOUR * 2.5 FROM ev", "SELECT id, ts + interval '1 hour' * 2.5 FROM ev")
both("IT", "SELECT id, ts + (INTERVAL '10' MINUTE + INTERVAL '30' SECOND) / 3 FROM ev",
     "SELECT id, ts + (interval '10 minutes 30 seconds') / 3 FROM ev")
both("IT", "SELECT id, DATE_ADD(d, INTERVAL '7' DAY) FROM ev", "SELECT id, (d + 7) FROM ev")
both("I", "SELECT id FROM ev WHERE ts - INTERVAL '1' DAY > TIMESTAMP '2020-01-30 10:15:30'",
     "SELECT id FROM ev WHERE ts - interval '1 day' > timestamp '2020-01-30 10:15:30'")
both("I", "SELECT id FROM ev WHERE (ts - TIMESTAMP '2020-01-01 00:00:00') DAY < INTERVAL '60' DAY",
     "SELECT id FROM ev WHERE ts - timestamp '2020-01-01 00:00:00' < interval '60 days'")
both("II", "SELECT id, CAST((ts - TIMESTAMP '2020-01-01 00:00:00') SECOND AS BIGINT) FROM ev",
     "SELECT id, trunc(extract(epoch from ts - timestamp '2020-01-01 00:00:00'))::bigint FROM ev")
both("II", "SELECT id, CAST((TIMESTAMP '2021-06-15 00:00:00' - ts) MONTH AS BIGINT) FROM ev",
     "SELECT id, (extract(year from age(timestamp '2021-06-15 00:00:00', ts)) * 12 + "
     "extract(month from age(timestamp '2021-06-15 00:00:00', ts)))::bigint FROM ev")
both("II", "SELECT id, CAST(ABS((ts - TIMESTAMP '2020-01-01 00:00:00') HOUR) AS BIGINT) FROM ev",
     "SELECT id, abs(trunc(extract(epoch from ts - timestamp '2020-01-01 00:00:00') / 3600))::bigint FROM ev")

# TIMESTAMPADD / TIMESTAMPDIFF
both("IT", "SELECT id, TIMESTAMPADD(HOUR, 30, ts) FROM ev", "SELECT id, ts + interval '30 hours' FROM ev")
both("IT", "SELECT id, TIMESTAMPADD(MONTH, -1, d) FROM ev", "SELECT id, (d - interval '1 month')::date FROM ev")
both("IT", "SELECT id, TIMESTAMPADD(SECOND, 90, d) FROM ev", "SELECT id, d + interval '90 seconds' FROM ev")
both("II", "SELECT id, TIMESTAMPDIFF(MINUTE, TIMESTAMP '2020-01-31 10:00:00', ts) FROM ev",
     "SELECT id, trunc(extract(epoch from ts - timestamp '2020-01-31 10:00:00') / 60)::int FROM ev")
both("II", "SELECT id, TIMESTAMPDIFF(MONTH, ts, TIMESTAMP '2020-03-31 10:15:30') FROM ev",
     "SELECT id, (extract(year from age(timestamp '2020-03-31 10:15:30', ts)) * 12 + "
     "extract(month from age(timestamp '2020-03-31 10:15:30', ts)))::int FROM ev")
both("II", "SELECT id, TIMESTAMPDIFF(DAY, d, DATE '2020-03-01') FROM ev", "SELECT id, DATE '2020-03-01' - d FROM ev")
both("II", "SELECT id, TIMESTAMPDIFF(YEAR, d, DATE '2021-02-28') FROM ev",
     "SELECT id, extract(year from age(DATE '2021-02-28', d))::int FROM ev")

# Formatting (strftime) against PostgreSQL's to_char
both("IT", "SELECT id, FORMAT_TIMESTAMP('%Y-%m-%d %H:%M:%S', ts) FROM ev",
     "SELECT id, to_char(ts, 'YYYY-MM-DD HH24:MI:SS') FROM ev")
both("IT", "SELECT id, FORMAT_DATE('%a %b %d/%j', d) FROM ev", "SELECT id, to_char(d, 'Dy Mon DD/DDD') FROM ev")
both("IT", "SELECT id, FORMAT_TIMESTAMP('%I:%M %p', ts) FROM ev", "SELECT id, to_char(ts, 'HH12:MI AM') FROM ev")


# Formatting and parsing constants (Python's datetime)
def py_fmt(f, v):
    return v.strftime(f)


consts = [
    ("FORMAT_DATE('%Y/%m/%d %A %B', DATE '2020-10-10')", py_fmt("%Y/%m/%d %A %B", dt.date(2020, 10, 10))),
    ("FORMAT_TIMESTAMP('%H:%M', TIMESTAMP '2024-01-05 07:08:09')", "07:08"),
    ("FORMAT_TIME('%H.%M.%S', TIME '23:01:02')", "23.01.02"),
    ("PARSE_DATE(' %Y-%m-%d', '   2020-10-01')", str(dt.datetime.strptime("2020-10-01", "%Y-%m-%d").date())),
    ("PARSE_TIME('%H:%M', '10:10')", "10:10:00"),
    ("PARSE_TIMESTAMP('%Y-%m-%d %H:%M:%S', '2020-10-01 00:00:00')", "2020-10-01 00:00:00"),
    ("PARSE_TIMESTAMP('%d %b %Y %H:%M', '05 Mar 2021 17:45')",
     str(dt.datetime.strptime("05 Mar 2021 17:45", "%d %b %Y %H:%M"))),
    ("PARSE_DATE('%Y-%m-%d', '2021-02-30')", "NULL"),
    ("PARSE_DATE('%Y-%m-%d', 'not a date')", "NULL"),
]
for expr, want in consts:
    emit("T", "SELECT " + expr, [[want]])

# TUMBLE as a GROUP BY window (PostgreSQL's date_bin)
both("TTI",
     "SELECT TUMBLE_START(ts, INTERVAL '1' HOUR), TUMBLE_END(ts, INTERVAL '1' HOUR), COUNT(*) FROM ev "
     "GROUP BY TUMBLE(ts, INTERVAL '1' HOUR)",
     "SELECT date_bin('1 hour', ts, timestamp '1970-01-01'), date_bin('1 hour', ts, timestamp '1970-01-01') + "
     "interval '1 hour', count(*) FROM ev GROUP BY 1")
both("TI",
     "SELECT TUMBLE_START(ts, INTERVAL '1' DAY, INTERVAL '6' HOUR), COUNT(*) FROM ev "
     "GROUP BY TUMBLE(ts, INTERVAL '1' DAY, INTERVAL '6' HOUR)",
     "SELECT date_bin('1 day', ts, timestamp '1970-01-01 06:00'), count(*) FROM ev GROUP BY 1")
both("ITT",
     "SELECT id, window_start, window_end FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '30' MINUTE))",
     "SELECT id, date_bin('30 minutes', ts, timestamp '1970-01-01'), "
     "date_bin('30 minutes', ts, timestamp '1970-01-01') + interval '30 minutes' FROM ev WHERE ts IS NOT NULL "
     "UNION ALL SELECT id, NULL, NULL FROM ev WHERE ts IS NULL")
both("TI",
     "SELECT window_start, COUNT(*) FROM TABLE(TUMBLE(\"DATA\" => TABLE ev, \"TIMECOL\" => DESCRIPTOR(ts), "
     "\"SIZE\" => INTERVAL 1 DAY)) WHERE ts IS NOT NULL GROUP BY window_start",
     "SELECT date_bin('1 day', ts, timestamp '1970-01-01'), count(*) FROM ev WHERE ts IS NOT NULL GROUP BY 1")


# HOP: Python recomputation (each row in every window [s, s + size) with s = k * slide + offset)
def hop(rows, slide, size, offset):
    epoch = dt.datetime(1970, 1, 1)
    counts = {}
    for _, ts, _, _ in rows:
        if ts is None:
            continue
        us = (dt.datetime.fromisoformat(ts) - epoch) // dt.timedelta(microseconds=1)
        s = (us - offset) // slide * slide + offset
        while s > us - size:
            counts[s] = counts.get(s, 0) + 1
            s -= slide
    fmt = lambda us: str(epoch + dt.timedelta(microseconds=us))
    return [[fmt(s), fmt(s + size), str(c)] for s, c in counts.items()]


H = 3600 * 10**6
M = 60 * 10**6
emit("TTI",
     "SELECT window_start, window_end, COUNT(*) FROM TABLE(HOP(TABLE ev, DESCRIPTOR(ts), INTERVAL '6' HOURS, "
     "INTERVAL '1' DAY)) GROUP BY window_start, window_end", hop(ROWS, 6 * H, 24 * H, 0))
emit("TTI",
     "SELECT window_start, window_end, COUNT(*) FROM TABLE(HOP((SELECT * FROM ev WHERE id < 6), DESCRIPTOR(ts), "
     "INTERVAL '1' HOUR, INTERVAL '150' MINUTES, INTERVAL '10' MINUTES)) AS h GROUP BY window_start, window_end",
     hop([r for r in ROWS if r[0] < 6], H, 150 * M, 10 * M))
emit("ITT",
     "SELECT h.id, h.window_start, h.window_end FROM TABLE(HOP(TABLE ev, DESCRIPTOR(ts), INTERVAL '20' MINUTES, "
     "INTERVAL '45' MINUTES)) AS h WHERE h.id IN (1, 9)",
     [[str(i)] + w[:2] for i, ts, _, _ in ROWS if i in (1, 9) for w in hop([(i, ts, None, None)], 20 * M, 45 * M, 0)])

print("\n".join(out))
