"""File inputs with inserts and deletes, many small steps: every view must equal sqlite3's
answer over the final table contents (recomputed in Python from the input records), and every
integrated output file must equal its view."""

import json
import os
import random
import sqlite3

from fldtest import (assert_eq, check, finish, integrate_csv, integrate_json, query, run, spec, sqlite_rows,
                     tmpdir, write)

rng = random.Random(7)
d = tmpdir()

# t: a bag (no key) fed by JSON insert/delete lines; deletes remove rows that are present.
live, lines = [], []
for i in range(3000):
    if live and rng.random() < 0.3:
        row = live.pop(rng.randrange(len(live)))
        lines.append(json.dumps({"delete": row}))
    else:
        row = {"k": rng.randrange(20), "g": rng.randrange(6), "v": None if rng.random() < 0.1 else rng.randrange(-50, 50),
               "s": rng.choice(["a", "b", "c,d", 'q"x', ""])}
        live.append(row)
        lines.append(json.dumps({"insert": row}))
write(os.path.join(d, "t.json"), "\n".join(lines) + "\n")

# u: keyed by k, fed by CSV rows (a later row for the same key replaces the earlier one).
ukeys = {}
csv_lines = ["k,w,name"]
for i in range(400):
    k, w = rng.randrange(25), rng.randrange(100)
    ukeys[k] = (w, f"n{k}")
    csv_lines.append(f"{k},{w},n{k}")
write(os.path.join(d, "u.csv"), "\n".join(csv_lines) + "\n")

SQL = """
CREATE TABLE t (k INT NOT NULL, g INT NOT NULL, v INT, s VARCHAR) WITH ('materialized' = 'true');
CREATE TABLE u (k INT NOT NULL PRIMARY KEY, w INT, name VARCHAR(10));
CREATE MATERIALIZED VIEW agg AS
  SELECT g, COUNT(*) AS n, COUNT(v) AS nv, SUM(v) AS sv, MIN(v) AS mn, MAX(v) AS mx, AVG(v) AS av,
         COUNT(DISTINCT k) AS dk
  FROM t GROUP BY g;
CREATE MATERIALIZED VIEW tot AS SELECT COUNT(*) AS n, SUM(v) AS sv, MAX(s) AS ms FROM t WHERE v > 40;
CREATE MATERIALIZED VIEW j AS SELECT t.k, t.v, u.w FROM t JOIN u ON t.k = u.k WHERE u.w > 20;
CREATE MATERIALIZED VIEW lj AS SELECT t.k, t.g, u.name FROM t LEFT JOIN u ON t.k = u.k;
CREATE MATERIALIZED VIEW dist AS SELECT DISTINCT g, k FROM t WHERE v IS NOT NULL;
CREATE MATERIALIZED VIEW hav AS SELECT k, SUM(v) AS sv FROM t GROUP BY k HAVING COUNT(*) > 40;
CREATE MATERIALIZED VIEW expr AS
  SELECT k, CASE WHEN v < 0 THEN 'neg' WHEN v = 0 THEN 'zero' ELSE 'pos' END AS sign,
         COALESCE(v, -1000) AS cv, v / 7 AS q, v % 7 AS r, s LIKE 'c%' AS l, k BETWEEN 3 AND 9 AS b,
         g IN (1, 3) AS i, NULLIF(g, 2) AS ng, abs(v) AS a
  FROM t;
CREATE MATERIALIZED VIEW uall AS SELECT k FROM t WHERE g = 1 UNION ALL SELECT k FROM u;
CREATE VIEW per_k AS SELECT k, COUNT(*) AS n FROM t GROUP BY k;
CREATE MATERIALIZED VIEW over_view AS SELECT per_k.k, n, w FROM per_k, u WHERE per_k.k = u.k;
"""
CONN = """connectors:
  t:
    - transport: {name: file_input, config: {path: t.json}}
      format: {name: json, config: {update_format: insert_delete}}
      max_batch_size: 37
  u:
    - transport: {name: file_input, config: {path: u.csv}}
      format: {name: csv, config: {headers: true}}
      max_batch_size: 11
  agg:
    - transport: {name: file_output, config: {path: agg.json}}
      format: {name: json}
  j:
    - transport: {name: file_output, config: {path: j.csv}}
      format: {name: csv}
"""
path = spec(d, "files", SQL, CONN + "workers: 2\n")
out, _ = run(["run", path])

conn = sqlite3.connect(":memory:")
conn.execute("CREATE TABLE t (k INT, g INT, v INT, s TEXT)")
conn.execute("CREATE TABLE u (k INT PRIMARY KEY, w INT, name TEXT)")
conn.executemany("INSERT INTO t VALUES (?, ?, ?, ?)", [(r["k"], r["g"], r["v"], r["s"]) for r in live])
conn.executemany("INSERT INTO u VALUES (?, ?, ?)", [(k, w, n) for k, (w, n) in ukeys.items()])

CASES = {
    "agg": ("SELECT g, n, nv, sv, mn, mx, av, dk FROM agg",
            # AVG of an INT column is an INT that truncates (Feldera's rule); SQLite's CAST truncates too.
            "SELECT g, COUNT(*), COUNT(v), SUM(v), MIN(v), MAX(v), CAST(AVG(v) AS INTEGER), COUNT(DISTINCT k) "
            "FROM t GROUP BY g"),
    "tot": ("SELECT n, sv, ms FROM tot", "SELECT COUNT(*), SUM(v), MAX(s) FROM t WHERE v > 40"),
    "j": ("SELECT k, v, w FROM j", "SELECT t.k, t.v, u.w FROM t JOIN u ON t.k = u.k WHERE u.w > 20"),
    "lj": ("SELECT k, g, name FROM lj", "SELECT t.k, t.g, u.name FROM t LEFT JOIN u ON t.k = u.k"),
    "dist": ("SELECT g, k FROM dist", "SELECT DISTINCT g, k FROM t WHERE v IS NOT NULL"),
    "hav": ("SELECT k, sv FROM hav", "SELECT k, SUM(v) FROM t GROUP BY k HAVING COUNT(*) > 40"),
    "expr": ("SELECT * FROM expr",
             "SELECT k, CASE WHEN v < 0 THEN 'neg' WHEN v = 0 THEN 'zero' ELSE 'pos' END, COALESCE(v, -1000), "
             "CASE WHEN v < 0 THEN -((-v) / 7) ELSE v / 7 END, "
             "CASE WHEN v < 0 THEN -((-v) % 7) ELSE v % 7 END, s LIKE 'c%', k BETWEEN 3 AND 9, g IN (1, 3), "
             "NULLIF(g, 2), abs(v) FROM t"),
    "uall": ("SELECT k FROM uall", "SELECT k FROM t WHERE g = 1 UNION ALL SELECT k FROM u"),
    "over_view": ("SELECT k, n, w FROM over_view",
                  "SELECT p.k, p.n, u.w FROM (SELECT k, COUNT(*) AS n FROM t GROUP BY k) p, u WHERE p.k = u.k"),
    "table t": ("SELECT k, g, v, s FROM t", "SELECT k, g, v, s FROM t"),
    "table u": ("SELECT k, w, name FROM u", "SELECT k, w, name FROM u"),
}

for name, (fq, sq) in CASES.items():
    @check(f"view {name} equals sqlite3 over the final inputs")
    def _(fq=fq, sq=sq, name=name):
        assert_eq(query(path, fq), sqlite_rows(conn, sq), name)


@check("the run took many steps (max_batch_size bounds each step)")
def _():
    steps = int(out.split(" steps")[0].split()[-1])
    assert steps >= 3000 // 37, out


@check("integrated agg.json equals the agg view")
def _():
    assert_eq(integrate_json(os.path.join(d, "agg.json")), query(path, "SELECT * FROM agg"), "agg.json")


@check("integrated j.csv equals the j view")
def _():
    assert_eq(integrate_csv(os.path.join(d, "j.csv"), [int, int, int]), query(path, "SELECT * FROM j"), "j.csv")


@check("raw JSON and CSV from standard input")
def _():
    d2 = tmpdir()
    p2 = spec(d2, "stdin", "CREATE TABLE x (a INT, b VARCHAR);\n"
                           "CREATE MATERIALIZED VIEW c AS SELECT b, SUM(a) AS s FROM x GROUP BY b;",
              "connectors:\n  x:\n    - transport: {name: file_input, config: {path: '-'}}\n"
              "      format: {name: json, config: {update_format: raw}}\n")
    run(["run", p2], stdin='{"a": 1, "b": "p"}\n{"a": 2, "b": "p"}\n{"a": 5, "b": null}\n')
    assert_eq(query(p2, "SELECT b, s FROM c"), sorted([("p", 3), (None, 5)], key=repr), "stdin view")


finish()
