"""UUID columns end to end: CSV and JSON input in any of the text forms Feldera reads, CSV and
JSON output, fld query, GROUP BY / JOIN / MIN / MAX over them, and a checkpoint, kill -9 and
resume; MAP and ARRAY values in CSV input (their JSON text in the field). Expected values come
from Python's uuid module and plain Python recomputation."""

import json
import os
import random
import subprocess
import uuid

from fldtest import Bg, check, finish, query, run, spec, tmpdir, write

d = tmpdir()
rng = random.Random(8)
IDS = [uuid.UUID(int=rng.getrandbits(128)) for _ in range(6)] + [uuid.UUID(int=0), uuid.UUID(int=(1 << 128) - 1),
                                                                 uuid.UUID(int=1 << 127)]


def forms(u, i):
    """One of the text forms Feldera's parser accepts, chosen by i."""
    return [str(u), str(u).upper(), u.hex, "{" + str(u) + "}", u.urn][i % 5]


def conn(path, fmt):
    f = {"name": fmt, "config": {"update_format": "raw"}} if fmt == "json" else {"name": fmt}
    return json.dumps([{"transport": {"name": "file_input", "config": {"path": path}}, "format": f}])


SQL = """CREATE TABLE tc (id INT, u UUID) WITH ('materialized' = 'true', 'connectors' = '{csv}');
CREATE TABLE tj (id INT, u UUID) WITH ('materialized' = 'true', 'connectors' = '{json}');
CREATE MATERIALIZED VIEW v AS SELECT id, u, CAST(u AS VARCHAR) AS t FROM tc;
CREATE MATERIALIZED VIEW g AS SELECT u, COUNT(*) AS n, MIN(id) AS lo FROM
  (SELECT id, u FROM tc UNION ALL SELECT id, u FROM tj) AS b GROUP BY u;
CREATE MATERIALIZED VIEW j AS SELECT tc.id AS a, tj.id AS b, tc.u FROM tc JOIN tj ON tc.u = tj.u;
CREATE MATERIALIZED VIEW m AS SELECT MIN(u) AS lo, MAX(u) AS hi, COUNT(DISTINCT u) AS k FROM tc;"""

OUT = ("connectors:\n  v:\n    - transport: {name: file_output, config: {path: v.csv}}\n      format: {name: csv}\n"
       "    - transport: {name: file_output, config: {path: v.json}}\n      format: {name: json}\n")


def expected(csv_rows, json_rows):
    g = {}
    for i, u in csv_rows + json_rows:
        n, lo = g.get(u, (0, None))
        g[u] = (n + 1, i if lo is None else min(lo, i))
    want_g = sorted(((None if u is None else str(u), n, lo) for u, (n, lo) in g.items()), key=repr)
    want_j = sorted(((a, b, str(u)) for a, u in csv_rows for b, w in json_rows if u is not None and u == w), key=repr)
    us = [u for _, u in csv_rows if u is not None]
    want_m = [(str(min(us)), str(max(us)), len(set(us)))]
    return want_g, want_j, want_m


def check_views(sp, csv_rows, json_rows, what):
    want_g, want_j, want_m = expected(csv_rows, json_rows)
    assert query(sp, "SELECT * FROM g") == want_g, (what, query(sp, "SELECT * FROM g"), want_g)
    assert query(sp, "SELECT * FROM j") == want_j, (what, query(sp, "SELECT * FROM j"), want_j)
    assert query(sp, "SELECT * FROM m") == want_m, (what, query(sp, "SELECT * FROM m"), want_m)


CSV_ROWS = [(i, IDS[i % len(IDS)]) for i in range(14)]
JSON_ROWS = [(100 + i, IDS[(3 * i) % len(IDS)]) for i in range(7)]


@check("UUID columns through CSV and JSON input (every text form) and CSV/JSON output")
def _():
    write(os.path.join(d, "in.csv"), "".join(f"{i},{forms(u, i)}\n" for i, u in CSV_ROWS) + "99,\n")
    write(os.path.join(d, "in.json"),
          "".join(json.dumps({"id": i, "u": forms(u, i) if i % 3 else list(u.bytes)}) + "\n" for i, u in JSON_ROWS))
    sp = spec(d, "io", SQL.format(csv=conn("in.csv", "csv"), json=conn("in.json", "json")), OUT)
    run(["run", sp])
    check_views(sp, CSV_ROWS + [(99, None)], JSON_ROWS, "io")
    got = query(sp, "SELECT id, u, t FROM v")
    assert got == sorted([(i, str(u), str(u)) for i, u in CSV_ROWS] + [(99, None, None)], key=repr), got
    with open(os.path.join(d, "v.csv")) as f:
        lines = sorted(f.read().splitlines())
    assert lines == sorted([f"{i},{u},{u},1" for i, u in CSV_ROWS] + ["99,,,1"]), lines
    with open(os.path.join(d, "v.json")) as f:
        recs = sorted((json.loads(line)["insert"] for line in f), key=lambda r: r["id"])
    assert recs == [{"id": i, "u": str(u), "t": str(u)} for i, u in CSV_ROWS] + [{"id": 99, "u": None, "t": None}], recs
    # The table output of fld query prints the canonical text too.
    out, _ = run(["query", sp, f"SELECT u FROM tc WHERE id = 1"])
    assert str(IDS[1]) in out, out


@check("a malformed UUID in CSV input is a record error naming the column")
def _():
    write(os.path.join(d, "bad.csv"), f"1,{IDS[0]}\n2,{str(IDS[1])[:-1]}x\n")
    write(os.path.join(d, "empty.json"), "")
    sp = spec(d, "bad", SQL.format(csv=conn("bad.csv", "csv"), json=conn("empty.json", "json")))
    _, err = run(["run", sp], expect=1)
    assert "expected UUID but found" in err and "(u)" in err, err


@check("UUID group and join state survive a checkpoint, kill -9 and resume")
def _():
    stdin_conn = json.dumps([{"transport": {"name": "file_input", "config": {"path": "-"}}, "format": {"name": "csv"}}])
    write(os.path.join(d, "ft.json"), "".join(json.dumps({"id": i, "u": str(u)}) + "\n" for i, u in JSON_ROWS))
    sp = spec(d, "ft", SQL.format(csv=stdin_conn, json=conn("ft.json", "json")),
              "storage: {path: ft.fld}\nfault_tolerance: {model: exactly_once, checkpoint_interval_secs: 1}\n")
    first = CSV_ROWS * 2
    b = Bg(sp, stdin=subprocess.PIPE)
    b.p.stdin.write("".join(f"{i},{forms(u, i)}\n" for i, u in first).encode())
    b.p.stdin.flush()
    b.kill_after_checkpoint()
    more = [(200, IDS[0]), (201, uuid.UUID(int=12345)), (-1, IDS[7])]
    run(["run", sp], stdin="".join(f"{i},{forms(u, i)}\n" for i, u in more))
    check_views(sp, first + more, JSON_ROWS, "resumed")


@check("MAP and ARRAY values in CSV input: JSON text in the field")
def _():
    write(os.path.join(d, "maps.csv"), '1,"{""a"": 1, ""b"": null}","[1, 2, 3]"\n2,{},[]\n3,,\n'
          '4,"{""c"": 7, ""a"": -2}","[null]"\n')
    sql = ("CREATE TABLE t (id INT, m MAP<VARCHAR, INT>, a INT ARRAY) WITH ('materialized' = 'true', "
           f"'connectors' = '{conn('maps.csv', 'csv')}');\n"
           "CREATE MATERIALIZED VIEW mv AS SELECT id, m, a, m['a'] AS ma, CARDINALITY(m) AS n, "
           "CARDINALITY(a) AS na FROM t;")
    sp = spec(d, "maps", sql)
    run(["run", sp])
    out, _ = run(["query", sp, "SELECT * FROM mv ORDER BY id", "--format", "json"])
    rows = [json.loads(line) for line in out.splitlines() if line.strip()]
    want = [{"id": 1, "m": {"a": 1, "b": None}, "a": [1, 2, 3], "ma": 1, "n": 2, "na": 3},
            {"id": 2, "m": {}, "a": [], "ma": None, "n": 0, "na": 0},
            {"id": 3, "m": None, "a": None, "ma": None, "n": None, "na": None},
            {"id": 4, "m": {"a": -2, "c": 7}, "a": [None], "ma": -2, "n": 2, "na": 1}]
    assert rows == want, rows


finish()
