"""DECIMAL(38, 10), MAP and VARIANT columns end to end: CSV and JSON in and out keep every digit,
and a checkpoint, kill -9 and resume keeps the 128-bit sums. Expected values come from Python's
decimal module."""

import json
import os
import subprocess
from decimal import Decimal, getcontext

from fldtest import Bg, check, finish, query, run, spec, tmpdir, write

getcontext().prec = 80
d = tmpdir()
VALUES = ["1234567890123456789012345678.0123456789", "-99999999999999999999999999.9999999999", "0.0000000001",
          "42", "-0.5"]
SQL = """CREATE TABLE t (k INT, x DECIMAL(38, 10)) WITH ('materialized' = 'true', 'connectors' = '{conn}');
CREATE MATERIALIZED VIEW v AS SELECT k, x FROM t;
CREATE MATERIALIZED VIEW s AS SELECT k, SUM(x) AS total, MIN(x) AS lo, MAX(x) AS hi FROM t GROUP BY k;"""


def conn(path, fmt):
    f = {"name": fmt, "config": {"update_format": "raw"}} if fmt == "json" else {"name": fmt}
    return json.dumps([{"transport": {"name": "file_input", "config": {"path": path}}, "format": f}])


def dec(x):
    return format(Decimal(x).quantize(Decimal("1e-10")), "f")


def outputs(fmt):
    return (f"connectors:\n  v:\n    - transport: {{name: file_output, config: {{path: v.{fmt}}}}}\n"
            f"      format: {{name: {fmt}}}\n")


def expected_sums(rows):
    sums = {}
    for k, x in rows:
        sums.setdefault(k, []).append(Decimal(x))
    return {k: (sum(xs), min(xs), max(xs)) for k, xs in sums.items()}


def check_views(sp, rows, what):
    got = query(sp, "SELECT k, CAST(x AS VARCHAR) FROM v")
    want = sorted(((k, dec(x)) for k, x in rows), key=repr)
    assert got == want, (what, got, want)
    got = query(sp, "SELECT k, CAST(total AS VARCHAR), CAST(lo AS VARCHAR), CAST(hi AS VARCHAR) FROM s")
    want = sorted(((k, *(dec(v) for v in t)) for k, t in expected_sums(rows).items()),
                  key=repr)
    assert got == want, (what, got, want)


ROWS = [(i % 2, v) for i, v in enumerate(VALUES)]


@check("DECIMAL(38, 10) through CSV in and out keeps every digit")
def _():
    write(os.path.join(d, "in.csv"), "".join(f"{k},{x}\n" for k, x in ROWS))
    sp = spec(d, "csv", SQL.format(conn=conn("in.csv", "csv")), outputs("csv"))
    run(["run", sp])
    check_views(sp, ROWS, "csv")
    with open(os.path.join(d, "v.csv")) as f:
        lines = sorted(line.rsplit(",", 1)[0] for line in f.read().splitlines())
    assert lines == sorted(f"{k},{dec(x)}" for k, x in ROWS), lines


@check("DECIMAL(38, 10) through JSON in (numbers and strings) and out keeps every digit")
def _():
    lines = [f'{{"k": {k}, "x": {x}}}' if i % 2 else f'{{"k": {k}, "x": "{x}"}}' for i, (k, x) in enumerate(ROWS)]
    write(os.path.join(d, "in.json"), "\n".join(lines) + "\n")
    sp = spec(d, "json", SQL.format(conn=conn("in.json", "json")), outputs("json"))
    run(["run", sp])
    check_views(sp, ROWS, "json")
    got = []
    with open(os.path.join(d, "v.json")) as f:
        for line in f:
            rec = json.loads(line, parse_float=Decimal, parse_int=Decimal)["insert"]
            got.append((int(rec["k"]), rec["x"]))
    assert sorted(got) == sorted((k, Decimal(x)) for k, x in ROWS), got


@check("MAP and VARIANT columns through JSON in and out")
def _():
    write(os.path.join(d, "m.json"), '{"id": 1, "m": {"a": 1, "b": null}, "v": {"x": [1, "s", null], "y": 2.5}}\n'
          '{"id": 2, "m": {}, "v": "text"}\n')
    sql = ("CREATE TABLE j (id INT, m MAP<VARCHAR, INT>, v VARIANT) WITH ('materialized' = 'true', "
           f"'connectors' = '{conn('m.json', 'json')}');\n"
           "CREATE MATERIALIZED VIEW jv AS SELECT id, m, v, CARDINALITY(m) AS n, m['a'] AS a, "
           "CAST(v['x'][1] AS INT) AS x1, TYPEOF(v['y']) AS ty, TO_JSON(v) AS js FROM j;")
    sp = spec(d, "maps", sql)
    run(["run", sp])
    out, _ = run(["query", sp, "SELECT * FROM jv ORDER BY id", "--format", "json"])
    rows = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert rows[0]["m"] == {"a": 1, "b": None} and rows[0]["n"] == 2 and rows[0]["a"] == 1, rows
    assert rows[0]["v"] == {"x": [1, "s", None], "y": 2.5} and rows[0]["x1"] == 1, rows
    assert rows[0]["ty"] == "DECIMAL(2, 1)" and json.loads(rows[0]["js"]) == rows[0]["v"], rows
    assert rows[1]["m"] == {} and rows[1]["v"] == "text" and rows[1]["a"] is None, rows


@check("DECIMAL(38, 10) sums survive a checkpoint, kill -9 and resume")
def _():
    sql = SQL.format(conn=json.dumps([{"transport": {"name": "file_input", "config": {"path": "-"}},
                                       "format": {"name": "csv"}}]))
    sp = spec(d, "ft", sql, "storage: {path: ft.fld}\nfault_tolerance: {model: exactly_once, "
              "checkpoint_interval_secs: 1}\n")
    first = ROWS * 3
    b = Bg(sp, stdin=subprocess.PIPE)
    b.p.stdin.write("".join(f"{k},{x}\n" for k, x in first).encode())
    b.p.stdin.flush()
    b.kill_after_checkpoint()
    more = [(1, "0.0000000009"), (0, "99999999999999999999.9999999999")]
    run(["run", sp], stdin="".join(f"{k},{x}\n" for k, x in more))
    check_views(sp, first + more, "resumed")


finish()
