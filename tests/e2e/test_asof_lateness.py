"""ASOF JOIN and LATENESS through the real binary. The as-of join's answer is compared with sqlite3
computing the same thing as a correlated subquery (the LATERAL ... ORDER BY ts DESC LIMIT 1
equivalent) over the same inserts and deletes, read in small batches so that both sides change
across many steps. LATENESS: out-of-order rows beyond the lateness are dropped, counted in
`fld status --json` (late_records) and logged once; the waterline survives a restart."""

import json
import os
import random
import sqlite3

from fldtest import assert_eq, check, finish, query, run, spec, sqlite_rows, status, tmpdir, write

d = tmpdir()


@check("LEFT ASOF JOIN over inserts and deletes equals sqlite3's correlated-subquery answer")
def _():
    rnd = random.Random(42)
    left, right = [], {}
    llines, rlines = [], []
    for i in range(1500):
        if rnd.random() < 0.3:  # a right change: insert, or delete a live row
            if right and rnd.random() < 0.3:
                key = rnd.choice(sorted(right))
                del right[key]
                ts, k, name = key
                rlines.append(json.dumps({"delete": {"ts": ts, "k": k, "name": name}}))
            else:
                row = (rnd.randrange(0, 500), rnd.randrange(0, 8), rnd.choice(["a", "b", "c", "dd"]))
                if row not in right:
                    right[row] = True
                    rlines.append(json.dumps({"insert": {"ts": row[0], "k": row[1], "name": row[2]}}))
        else:
            row = (rnd.randrange(0, 520), rnd.randrange(0, 9) if rnd.random() > 0.05 else None, i)
            left.append(row)
            llines.append(json.dumps({"insert": {"ts": row[0], "k": row[1], "v": row[2]}}))
    write(os.path.join(d, "l.json"), "\n".join(llines) + "\n")
    write(os.path.join(d, "r.json"), "\n".join(rlines) + "\n")
    sql = """
CREATE TABLE l (ts BIGINT, k INT, v INT);
CREATE TABLE r (ts BIGINT, k INT, name VARCHAR);
CREATE MATERIALIZED VIEW j AS
  SELECT l.ts, l.k, l.v, r.ts AS rts, r.name FROM l LEFT ASOF JOIN r MATCH_CONDITION l.ts >= r.ts ON l.k = r.k;
CREATE MATERIALIZED VIEW s AS
  SELECT l.v, r.name FROM l ASOF JOIN r MATCH_CONDITION (r.ts < l.ts) ON r.k = l.k;
"""
    conn = """connectors:
  l:
    - transport: {name: file_input, config: {path: l.json}}
      format: {name: json, config: {update_format: insert_delete}}
      max_batch_size: 23
  r:
    - transport: {name: file_input, config: {path: r.json}}
      format: {name: json, config: {update_format: insert_delete}}
      max_batch_size: 7
"""
    p = spec(d, "asof", sql, conn)
    run(["run", p])
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE l (ts INT, k INT, v INT)")
    db.execute("CREATE TABLE r (ts INT, k INT, name TEXT)")
    db.executemany("INSERT INTO l VALUES (?, ?, ?)", left)
    db.executemany("INSERT INTO r VALUES (?, ?, ?)", list(right))
    # Ties on the time go to the right row that sorts last, column by column.
    expect = sqlite_rows(db, """
      SELECT l.ts, l.k, l.v, r.ts, r.name FROM l LEFT JOIN r ON r.rowid = (
        SELECT r2.rowid FROM r r2 WHERE r2.k = l.k AND r2.ts <= l.ts
        ORDER BY r2.ts DESC, r2.k DESC, r2.name DESC LIMIT 1)""")
    assert_eq(query(p, "SELECT * FROM j"), expect, "LEFT ASOF JOIN")
    expect = sqlite_rows(db, """
      SELECT l.v, r.name FROM l JOIN r ON r.rowid = (
        SELECT r2.rowid FROM r r2 WHERE r2.k = l.k AND r2.ts < l.ts
        ORDER BY r2.ts DESC, r2.k DESC, r2.name DESC LIMIT 1)""")
    assert_eq(query(p, "SELECT * FROM s"), expect, "inner ASOF JOIN, strict")


LATE_SQL = """
CREATE TABLE t (ts BIGINT NOT NULL LATENESS 100, v INT);
CREATE MATERIALIZED VIEW per_bucket AS SELECT ts / 1000 AS b, COUNT(*) AS n, SUM(v) AS s FROM t GROUP BY ts / 1000;
"""
LATE_CONN = """connectors:
  t:
    - transport: {name: file_input, config: {path: t.csv}}
      format: {name: csv}
      max_batch_size: 1
"""


def late_status(p):
    s = status(p)
    for key in ("live", "last_seen"):
        if key in s:
            return s[key]["late_records"]
    raise AssertionError(f"no live figures in {s}")


@check("LATENESS: rows behind the waterline of earlier steps are dropped, counted and logged once")
def _():
    times = [0, 500, 450, 1000, 850, 2000, 1950, 1899, 1901, 3000, 100]  # 850, 1899 and 100 are too late
    write(os.path.join(d, "t.csv"), "".join(f"{t},{i}\n" for i, t in enumerate(times)))
    p = spec(d, "late", LATE_SQL, LATE_CONN)
    _, err = run(["run", p])
    assert err.count("LATENESS waterline") == 1, err
    kept = [(t, i) for i, t in enumerate(times) if t not in (850, 1899, 100)]
    buckets = {}
    for t, v in kept:
        n, s = buckets.get(t // 1000, (0, 0))
        buckets[t // 1000] = (n + 1, s + v)
    assert_eq(query(p, "SELECT * FROM per_bucket"), sorted((b, n, s) for b, (n, s) in buckets.items()), "buckets")
    assert late_status(p) == 3, status(p)
    out, _ = run(["status", p])
    assert "late        3 dropped" in out, out
    # A later run continues from the checkpoint's waterline (2900): 2899 is late, 2950 is not.
    with open(os.path.join(d, "t.csv"), "a") as f:
        f.write("2899,100\n2950,101\n")
    run(["run", p])
    assert late_status(p) == 4, status(p)
    buckets[2] = (buckets[2][0] + 1, buckets[2][1] + 101)
    assert_eq(query(p, "SELECT * FROM per_bucket"), sorted((b, n, s) for b, (n, s) in buckets.items()), "buckets")


@check("fld check shows where state is discarded")
def _():
    p = spec(d, "plan", LATE_SQL, LATE_CONN)
    out, _ = run(["check", p])
    assert "discards groups below the waterline of $0" in out, out


finish()
