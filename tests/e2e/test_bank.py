"""The seed's bank pipeline, scaled down: its balance must equal an independent computation
(sqlite3 over every generated transaction, which the pipeline also writes to a file), must not
depend on the number of workers, and the integrated output file must equal the view."""

import datetime
import os
import sqlite3

from fldtest import (assert_eq, check, finish, integrate_csv, integrate_json, query, run, spec, sqlite_rows,
                     tmpdir)

ROWS = 300_000
SQL = f"""
CREATE TABLE transactions (
    from_account INT NOT NULL,
    to_account INT NOT NULL,
    amount INT NOT NULL,
    ts TIMESTAMP NOT NULL
) WITH ('connectors' = '[{{
    "transport": {{
      "name": "datagen", "config": {{
        "seed": 0,
        "plan": [{{
            "limit": {ROWS},
            "fields": {{
                "from_account": {{ "strategy": "uniform", "range": [1,10] }},
                "to_account": {{ "strategy": "uniform", "range": [1,10] }},
                "amount": {{ "strategy": "zipf", "range": [1,1000] }},
                "ts": {{ "scale": 1000 }}
            }}
        }}]
        }}
    }}
}}]');
CREATE VIEW credits AS SELECT to_account AS account, sum(amount) AS credits FROM transactions GROUP BY to_account;
CREATE VIEW debits AS SELECT from_account AS account, sum(amount) AS debits FROM transactions GROUP BY from_account;
CREATE MATERIALIZED VIEW balance AS
SELECT credits.account AS account, credits - debits AS balance
FROM credits, debits WHERE credits.account = debits.account;
"""

CONNECTORS = """connectors:
  transactions:
    - transport: {name: file_output, config: {path: transactions.csv}}
      format: {name: csv}
  balance:
    - transport: {name: file_output, config: {path: balance.json}}
      format: {name: json}
"""

runs = {}
for workers in (1, 2):
    d = tmpdir()
    path = spec(d, "bank", SQL, CONNECTORS + f"workers: {workers}\n")
    out, _ = run(["run", path])
    runs[workers] = (d, path, out)


def ts_parse(s):
    return datetime.datetime.strptime(s, "%Y-%m-%d %H:%M:%S")


d1, spec1, out1 = runs[1]
rows = integrate_csv(os.path.join(d1, "transactions.csv"), [int, int, int, ts_parse])


@check("run prints a summary with the record count")
def _():
    assert f"{ROWS} records" in out1, out1


@check("datagen produced exactly `limit` rows with values inside the half-open ranges")
def _():
    assert len(rows) == ROWS, len(rows)
    assert all(1 <= r[0] < 10 and 1 <= r[1] < 10 and 1 <= r[2] < 1000 for r in rows)
    epoch = datetime.datetime(1970, 1, 1)
    secs = sorted(int((r[3] - epoch).total_seconds()) for r in rows)
    assert secs == list(range(ROWS)), "ts must be epoch + i seconds for row i"


@check("zipf amounts: 1 is the most frequent value, frequencies fall like 1/k")
def _():
    counts = {}
    for r in rows:
        counts[r[2]] = counts.get(r[2], 0) + 1
    assert max(counts, key=counts.get) == 1
    ratio = counts[1] / counts[2]
    assert 1.8 < ratio < 2.2, ratio


conn = sqlite3.connect(":memory:")
conn.execute("CREATE TABLE t (f INT, t INT, a INT)")
conn.executemany("INSERT INTO t VALUES (?, ?, ?)", [(r[0], r[1], r[2]) for r in rows])
expected = sqlite_rows(conn, """
  SELECT c.account, c.credits - d.debits FROM
    (SELECT t AS account, SUM(a) AS credits FROM t GROUP BY t) c,
    (SELECT f AS account, SUM(a) AS debits FROM t GROUP BY f) d
  WHERE c.account = d.account""")


@check("balance equals sqlite3's computation over the generated transactions")
def _():
    assert_eq(query(spec1, "SELECT account, balance FROM balance"), expected, "balance")


@check("balances sum to zero")
def _():
    assert_eq(query(spec1, "SELECT SUM(balance) AS s FROM balance"), [(0,)], "sum")


@check("workers: 2 gives the same balance and the same generated rows as workers: 1")
def _():
    d2, spec2, _ = runs[2]
    assert_eq(query(spec2, "SELECT account, balance FROM balance"), expected, "balance with 2 workers")
    rows2 = integrate_csv(os.path.join(d2, "transactions.csv"), [int, int, int, ts_parse])
    assert rows2 == rows, "generated rows differ between worker counts"


@check("integrating balance.json gives the view's contents")
def _():
    assert_eq(integrate_json(os.path.join(d1, "balance.json")), expected, "integrated output")


@check("query output formats: csv has a header, table is aligned, ORDER BY/LIMIT apply")
def _():
    out, _ = run(["query", spec1, "SELECT account, balance FROM balance ORDER BY account DESC LIMIT 3",
                  "--format", "csv"])
    lines = out.strip().split("\n")
    assert lines[0] == "account,balance", lines
    exp = sorted(expected, reverse=True)[:3]
    assert [tuple(int(x) for x in l.split(",")) for l in lines[1:]] == exp, lines
    out, _ = run(["query", spec1, "SELECT account FROM balance ORDER BY account LIMIT 2"])
    assert "| account |" in out and "(2 rows)" in out, out


finish()
