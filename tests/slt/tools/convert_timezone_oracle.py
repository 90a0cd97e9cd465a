#!/usr/bin/env python3
"""Writes tests/slt/regress/convert_timezone.test: CONVERT_TIMEZONE(src, dst, ts) over many zones
(daylight-saving edges, southern hemisphere, half- and quarter-hour offsets, zones whose rules
changed, skipped days) and random timestamps 1900-2100, plus fixed offsets.

Two independent oracles: PostgreSQL 15 ((ts AT TIME ZONE src) AT TIME ZONE dst; a fixed offset
'+05:30' as AT TIME ZONE INTERVAL '+05:30') and python3's zoneinfo; the script stops when they
disagree. Feldera's rule: a local time that the source zone skips or repeats (a daylight-saving
transition) has no single instant, so the answer is NULL (PostgreSQL picks one; zoneinfo's
fold=0 and fold=1 readings differ exactly there).

    python3 tests/slt/tools/convert_timezone_oracle.py "psql -U postgres" > tests/slt/regress/convert_timezone.test
"""
import datetime as dt
import random
import subprocess
import sys
from zoneinfo import ZoneInfo

PSQL = sys.argv[1].split() + ["-X", "-At", "-F", "|", "-v", "ON_ERROR_STOP=1"]

ZONES = [
    "America/New_York", "America/Los_Angeles", "America/Chicago", "America/Phoenix", "America/Sao_Paulo",
    "America/Santiago", "America/Havana", "America/St_Johns", "America/Caracas", "America/Nuuk",
    "America/Argentina/Buenos_Aires", "America/Mexico_City", "America/Adak", "Europe/London", "Europe/Paris",
    "Europe/Berlin", "Europe/Moscow", "Europe/Dublin", "Europe/Lisbon", "Europe/Istanbul", "Africa/Casablanca",
    "Africa/Cairo", "Africa/Johannesburg", "Asia/Kolkata", "Asia/Kathmandu", "Asia/Tehran", "Asia/Jerusalem",
    "Asia/Shanghai", "Asia/Tokyo", "Asia/Singapore", "Asia/Pyongyang", "Australia/Sydney", "Australia/Adelaide",
    "Australia/Lord_Howe", "Australia/Perth", "Pacific/Auckland", "Pacific/Chatham", "Pacific/Apia",
    "Pacific/Kiritimati", "Pacific/Honolulu", "Antarctica/Troll", "UTC", "Etc/GMT+5", "EST5EDT", "US/Eastern",
]
FIXED = ["+05:30", "-08:00", "+00", "-03:30:15", "+14", "-11:45"]


def zone(name):
    if name[0] in "+-":
        parts = [int(x) for x in name[1:].split(":")] + [0, 0]
        secs = parts[0] * 3600 + parts[1] * 60 + parts[2]
        return dt.timezone(dt.timedelta(seconds=-secs if name[0] == "-" else secs))
    return ZoneInfo(name)


def pg_zone(name):
    if name[0] in "+-":
        return "INTERVAL '%s'" % (name + (":00" if len(name) == 3 else ""))
    return "'%s'" % name


def fmt(t):
    s = t.strftime("%Y-%m-%d %H:%M:%S")
    if t.microsecond:
        s += (".%06d" % t.microsecond).rstrip("0")
    return s


def python_answer(src, dst, ts):
    z = zone(src)
    a, b = ts.replace(tzinfo=z, fold=0), ts.replace(tzinfo=z, fold=1)
    if a.utcoffset() != b.utcoffset():
        return None  # skipped or repeated
    return a.astimezone(zone(dst)).replace(tzinfo=None)


def transitions(name, year):
    """The instants (UTC) in `year` at which the zone's offset changes, to the second."""
    z = ZoneInfo(name)
    out = []
    t = dt.datetime(year, 1, 1, tzinfo=dt.timezone.utc)
    end = dt.datetime(year + 1, 1, 1, tzinfo=dt.timezone.utc)
    step = dt.timedelta(hours=3)
    while t < end:
        u = t + step
        if t.astimezone(z).utcoffset() != u.astimezone(z).utcoffset():
            lo, hi = t, u
            while hi - lo > dt.timedelta(seconds=1):
                mid = lo + (hi - lo) / 2
                mid = mid.replace(microsecond=0)
                if mid == lo:
                    break
                if mid.astimezone(z).utcoffset() == lo.astimezone(z).utcoffset():
                    lo = mid
                else:
                    hi = mid
            out.append(hi)
        t = u
    return out


rng = random.Random(20261203)
cases = []  # (src, dst, naive timestamp)
names = ZONES + FIXED
# Random instants 1900-2100 between random zones.
lo, hi = dt.datetime(1900, 1, 1), dt.datetime(2100, 12, 31)
for _ in range(700):
    ts = lo + dt.timedelta(seconds=rng.randrange(int((hi - lo).total_seconds())))
    if rng.random() < 0.3:
        ts = ts.replace(microsecond=rng.randrange(1000000))
    cases.append((rng.choice(names), rng.choice(names), ts))
# Local times around the transitions of each zone in a few years (both sides' wall clocks).
for name in ZONES:
    z = ZoneInfo(name)
    for year in rng.sample([1916, 1942, 1970, 1983, 1996, 2011, 2014, 2022, 2024, 2037, 2038, 2050, 2099], 3):
        for t in transitions(name, year)[:2]:
            before = (t - dt.timedelta(seconds=1)).astimezone(z).replace(tzinfo=None)
            after = t.astimezone(z).replace(tzinfo=None)
            for base in (before, after):
                for delta in (-1800, -1, 0, 1, 1800):
                    cases.append((name, rng.choice(names), base + dt.timedelta(seconds=delta)))
                for delta in (-1, 0):
                    cases.append((rng.choice(names), name, base + dt.timedelta(seconds=delta)))
# Feldera's documented example and its fixed-offset twin.
cases.append(("America/New_York", "America/Los_Angeles", dt.datetime(2008, 3, 5, 12, 25, 29)))
cases.append(("-05:00", "-08:00", dt.datetime(2008, 3, 5, 12, 25, 29)))

values = ",\n".join("(%d, '%s', '%s', TIMESTAMP '%s')" % (i, s, d, fmt(t)) for i, (s, d, t) in enumerate(cases))
pg_sql = "SELECT id, (ts AT TIME ZONE %s) AT TIME ZONE %s FROM (VALUES %s) AS t(id, src, dst, ts) WHERE id = %d;"
script = "\n".join(pg_sql % (pg_zone(s), pg_zone(d), "(%d, '%s', '%s', TIMESTAMP '%s')" % (i, s, d, fmt(t)), i)
                   for i, (s, d, t) in enumerate(cases))
res = subprocess.run(PSQL, input=script, capture_output=True, text=True, check=True).stdout.split("\n")
pg = {}
for line in res:
    if line:
        i, v = line.split("|")
        pg[int(i)] = v

answers = []
nulls = 0
for i, (s, d, t) in enumerate(cases):
    p = python_answer(s, d, t)
    if p is None:
        nulls += 1
        answers.append((i, "NULL"))
        continue
    if fmt(p) != pg[i]:
        sys.exit("oracles disagree on CONVERT_TIMEZONE('%s', '%s', '%s'): python %s, PostgreSQL %s" %
                 (s, d, fmt(t), fmt(p), pg[i]))
    answers.append((i, pg[i]))

print("# CONVERT_TIMEZONE over %d cases (%d with a skipped or repeated source time, NULL): written by" %
      (len(cases), nulls))
print("# tests/slt/tools/convert_timezone_oracle.py from PostgreSQL 15 and python3's zoneinfo, which agree.")
print()
print("statement ok\nCREATE TABLE tz(id INTEGER, src VARCHAR, dst VARCHAR, ts TIMESTAMP)\n")
for k in range(0, len(cases), 200):
    chunk = cases[k:k + 200]
    print("statement ok\nINSERT INTO tz VALUES %s\n" % ", ".join(
        "(%d, '%s', '%s', '%s')" % (k + j, s, d, fmt(t)) for j, (s, d, t) in enumerate(chunk)))
print("query IT rowsort\nSELECT id, CONVERT_TIMEZONE(src, dst, ts) FROM tz\n----")
for i, v in sorted(answers, key=lambda a: (str(a[0]), a[1])):
    print(i)
    print(v)
print()
# Literal zones, constant folding, NULLs and unknown zones (NULL, as Feldera documents).
print("""query T nosort
SELECT CONVERT_TIMEZONE('America/New_York', 'America/Los_Angeles', TIMESTAMP '2008-03-05 12:25:29')
----
2008-03-05 09:25:29

query T nosort
SELECT CONVERT_TIMEZONE('-05:00', '-08:00', TIMESTAMP '2008-03-05 12:25:29')
----
2008-03-05 09:25:29

query TTTT nosort
SELECT CONVERT_TIMEZONE('Invalid', 'America/Los_Angeles', TIMESTAMP '2008-03-05 12:25:29'), CONVERT_TIMEZONE('America/New_York', 'America/Los_Angeles', NULL), CONVERT_TIMEZONE(NULL, 'UTC', TIMESTAMP '2020-10-10 00:00:00'), CONVERT_TIMEZONE('UTC', 'europe/paris', TIMESTAMP '2020-10-10 00:00:00')
----
NULL
NULL
NULL
NULL

query T nosort
SELECT CONVERT_TIMEZONE('UTC', 'Asia/Kathmandu', DATE '2020-10-10')
----
2020-10-10 05:45:00

statement error
SELECT CONVERT_TIMEZONE('UTC', 'UTC', TIME '10:00:00')

statement error
SELECT CONVERT_TIMEZONE('UTC', 'UTC')
""")
