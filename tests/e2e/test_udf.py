"""User-defined functions: Nexmark q21 with re_extract declared without a body and implemented by
the example C++ library (pipelines/examples/udf, built by CMake), compared with Python's re;
`fld check` accepts the program without a library (it type-checks the calls); `fld run` without
one, or with a library lacking the function, exits 2 naming the function; SQL-bodied functions
(Nexmark q14's COUNT_CHAR, q22's SPLIT_INDEX) are inlined. Feldera's demo 07 (UDF tutorial):
its VARBINARY table fed by its datagen config, encoded by the example library's base64, compared
with Python's base64."""

import base64
import os
import random
import re

from fldtest import assert_eq, check, finish, query, run, spec, tmpdir, write

d = tmpdir()
LIB = os.environ.get("FLD_UDF_EXAMPLE", "")
rng = random.Random(7)
channels = ["Apple", "google", "Facebook", "baidu", "other", "x"]
rows = []
for i in range(300):
    ch = rng.choice(channels)
    url = rng.choice(["https://a.com/x?channel_id=" + str(rng.randrange(100)),
                      "channel_id=abc&y=1", "https://b.com/p/q/r", "https://c.com/?a=1&channel_id=&b=2"])
    rows.append((i % 17, i, rng.randrange(1000), ch, url))
write(os.path.join(d, "bids.csv"), "".join(f"{a},{b},{p},{c},{u}\n" for a, b, p, c, u in rows))

Q21 = open(os.path.join(os.path.dirname(__file__), "../../pipelines/examples/udf/q21.yaml")).read()
SQL = Q21.split("sql: |\n", 1)[1].split("connectors:", 1)[0]
SQL = "\n".join(line[2:] for line in SQL.splitlines())
CONN = "connectors:\n  bid:\n    - transport: {name: file_input, config: {path: bids.csv}}\n      format: {name: csv}\n"


def re_extract(s, p, g):
    m = re.search(p, s)
    return None if m is None or m.group(g) is None else m.group(g)


@check("q21 with the C++ re_extract matches Python's re")
def _():
    assert LIB and os.path.exists(LIB), "FLD_UDF_EXAMPLE names no built library"
    p = spec(d, "q21", SQL, f"udf: {{library: {LIB}}}\n" + CONN)
    run(["run", p])
    want = []
    for a, b, price, ch, url in rows:
        low = ch.lower()
        x = re_extract(url, "(&|^)channel_id=([^&]*)", 2)
        if low in ("apple", "google", "facebook", "baidu") or x is not None:
            cid = {"apple": "0", "google": "1", "facebook": "2", "baidu": "3"}.get(low, x)
            want.append((a, b, price, ch, cid))
    assert_eq(query(p, "SELECT * FROM q21"), sorted(want, key=repr), "q21")


@check("fld check accepts a body-less function without a library; fld run exits 2 naming it")
def _():
    p = spec(d, "nolib", SQL, CONN)
    out, _ = run(["check", p])
    assert "nolib.yaml: ok" in out, out
    _, err = run(["run", p], expect=2)
    assert "re_extract" in err and "udf" in err, err


@check("a library without the function: exit 2 naming it")
def _():
    sql = SQL.replace("re_extract", "re_other")
    p = spec(d, "nosym", sql, f"udf: {{library: {LIB}}}\n" + CONN)
    _, err = run(["run", p], expect=2)
    assert "re_other" in err and "fld_udf_re_other" in err, err


@check("a call with the wrong argument types is refused by fld check")
def _():
    p = spec(d, "badcall", SQL.replace("channel_id=([^&]*)' AS VARCHAR), 2) IS", "channel_id=([^&]*)' AS VARCHAR), "
                                       "DATE '2020-01-01') IS"), CONN)
    _, err = run(["check", p], expect=2)
    assert "cannot combine" in err or "cannot cast" in err, err


@check("SQL-bodied functions (Nexmark q14's COUNT_CHAR, q22's SPLIT_INDEX) are inlined")
def _():
    sql = """CREATE TABLE bid (auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR);
CREATE FUNCTION COUNT_CHAR(S VARCHAR, C CHAR) RETURNS INT AS LENGTH(S) - LENGTH(REPLACE(S, C, ''));
CREATE FUNCTION SPLIT_INDEX(s VARCHAR, sep CHAR, idx INT) RETURNS VARCHAR AS SPLIT(s, CAST(sep AS VARCHAR))[idx + 1];
CREATE MATERIALIZED VIEW v AS SELECT bidder, count_char(url, 'c') AS c, SPLIT_INDEX(url, '/', 3) AS dir1 FROM bid;"""
    p = spec(d, "inline", sql, CONN)
    run(["run", p])
    want = []
    for a, b, price, ch, url in rows:
        parts = url.split("/") if url else []
        want.append((b, url.count("c"), parts[3] if len(parts) > 3 else None))
    assert_eq(query(p, "SELECT * FROM v"), sorted(want, key=repr), "inlined functions")


@check("functions declared before a recursive view are callable inside it (external and SQL-bodied)")
def _():
    # Reachability over edges whose label passes an external and a SQL-bodied function.
    erng = random.Random(11)
    edges = set()
    for _ in range(120):
        edges.add((erng.randrange(40), erng.randrange(40), erng.choice(["ok1", "ok22", "no", "x-ok3"])))
    write(os.path.join(d, "edges.csv"), "".join(f"{a},{b},{lab}\n" for a, b, lab in sorted(edges)))
    sql = """CREATE TABLE e (a INT, b INT, label VARCHAR);
CREATE FUNCTION re_extract(s VARCHAR, p VARCHAR, g INT) RETURNS VARCHAR;
CREATE FUNCTION short_label(s VARCHAR) RETURNS BOOLEAN AS LENGTH(s) <= 4;
DECLARE RECURSIVE VIEW reach (a INT, b INT);
CREATE MATERIALIZED VIEW reach AS
  SELECT a, b FROM e WHERE re_extract(label, '^ok([0-9]+)$', 1) IS NOT NULL
  UNION
  SELECT reach.a, e.b FROM reach JOIN e ON reach.b = e.a
  WHERE re_extract(e.label, '^ok([0-9]+)$', 1) IS NOT NULL AND short_label(e.label);"""
    conn = "connectors:\n  e:\n    - transport: {name: file_input, config: {path: edges.csv}}\n      format: {name: csv}\n"
    p = spec(d, "recursive_udf", sql, f"udf: {{library: {LIB}}}\n" + conn)
    run(["run", p])
    base = {(a, b) for a, b, lab in edges if re.match(r"^ok([0-9]+)$", lab)}
    step = {(a, b) for a, b, lab in edges if re.match(r"^ok([0-9]+)$", lab) and len(lab) <= 4}
    reach = set(base)
    while True:
        more = {(x, b) for x, y in reach for a, b in step if y == a} - reach
        if not more:
            break
        reach |= more
    assert_eq(query(p, "SELECT * FROM reach"), sorted(reach, key=repr), "reachability through UDFs")


# Feldera's demo 07 (07-udf-tutorial.sql): the datagen settings of `entry` verbatim; a small
# limit, a fast rate and a seed so that the run ends and repeats.
DEMO07 = """CREATE TABLE binary_data (
    entry VARBINARY
) WITH (
    'materialized' = 'true',
    'connectors' = '[{"name": "binary_data", "transport": {"name": "datagen", "config": {"seed": 3, "plan": [{"limit": 300, "rate": 100000, "fields": {"entry": {"range": [1, 20], "strategy": "uniform", "value": {"strategy": "uniform", "range": [0, 256]}}}}]}}}]'
);
CREATE FUNCTION base64(s VARBINARY) RETURNS VARCHAR;
CREATE MATERIALIZED VIEW base64_data AS (
    SELECT  base64(b.entry)
    FROM    binary_data AS b
);"""


@check("demo 07: datagen VARBINARY entries encoded by the C++ base64 match Python's base64")
def _():
    p = spec(d, "demo07", DEMO07, f"udf: {{library: {LIB}}}\n")
    run(["run", p])
    entries = [bytes(r[0]) for r in query(p, "SELECT entry FROM binary_data")]
    assert len(entries) == 300, len(entries)
    assert all(1 <= len(e) < 20 for e in entries), sorted({len(e) for e in entries})
    assert len({len(e) for e in entries}) == 19, sorted({len(e) for e in entries})
    want = sorted(((base64.b64encode(e).decode(),) for e in entries), key=repr)
    assert_eq(query(p, "SELECT * FROM base64_data"), want, "base64 of the entries")
    # The same seed generates the same entries again.
    p2 = spec(tmpdir(), "demo07", DEMO07, f"udf: {{library: {LIB}}}\n")
    run(["run", p2])
    assert_eq(sorted(bytes(r[0]) for r in query(p2, "SELECT entry FROM binary_data")), sorted(entries), "rerun")


finish()
