"""Output buffering end to end (Feldera's enable_output_buffer, pipelines/connectors/output_buffer.h).

The pipeline: a rate-limited datagen table (ROWS rows over ~2 s in steps of BATCH rows) and a view
counting and summing its rows per account, which changes every account's row at every step. The
table goes unbuffered to tx.csv, the oracle: Python recomputes the view from it. The view goes to
three files: unbuffered (every step's -old/+new rows), buffered without limits (held until a
checkpoint or the end), and buffered with a time limit.

Checked: each file adds up to the recomputed view; the unlimited buffer writes the consolidated
view only (one +1 row per account when no checkpoint intervenes), nothing before; while the run
goes on `fld status` reports the held records and the file stays empty; the time-limited buffer
writes during the run; after kill -9 and a resume under exactly_once every file still adds up to the
view (a checkpoint writes what is held); bad keys and values are refused with the key named."""

import collections
import csv
import json
import os
import time

from fldtest import Bg, assert_eq, check, finish, run, status, tmpdir, write

ROWS = 200_000
RATE = 100_000
BATCH = 1_000
ACCOUNTS = 40  # datagen's range is half-open: accounts 1 to 39


def make(d, model="exactly_once", interval=3600, time_limit=300, extra_view_keys=""):
    os.makedirs(d, exist_ok=True)
    datagen = json.dumps([{
        "transport": {"name": "datagen", "config": {"seed": 7, "plan": [{
            "limit": ROWS, "rate": RATE,
            "fields": {"account": {"strategy": "uniform", "range": [1, ACCOUNTS]},
                       "amount": {"strategy": "uniform", "range": [1, 1000]}}}]}},
        "max_batch_size": BATCH}])
    return write(os.path.join(d, "ob.yaml"), f"""name: ob
sql: |
  CREATE TABLE tx (account INT NOT NULL, amount INT NOT NULL) WITH ('connectors' = '{datagen}');
  CREATE VIEW per AS SELECT account, COUNT(*) AS n, SUM(amount) AS total FROM tx GROUP BY account;
connectors:
  tx:
    - transport: {{name: file_output, config: {{path: tx.csv}}}}
      format: {{name: csv}}
  per:
    - transport: {{name: file_output, config: {{path: all.csv}}}}
      format: {{name: csv}}
    - transport: {{name: file_output, config: {{path: held.csv}}}}
      format: {{name: csv}}
      enable_output_buffer: true{extra_view_keys}
    - transport: {{name: file_output, config: {{path: timed.csv}}}}
      format: {{name: csv}}
      enable_output_buffer: true
      max_output_buffer_time_millis: {time_limit}
storage: {{path: st}}
fault_tolerance: {{model: {model}, checkpoint_interval_secs: {interval}}}
""")


def lines(path):
    with open(path, newline="") as f:
        return [r for r in csv.reader(f) if r]


def totals(path):
    """Weights summed per row of a CSV output (columns as ints, weight last); zero totals dropped."""
    acc = collections.Counter()
    for *vals, w in lines(path):
        acc[tuple(int(v) for v in vals)] += int(w)
    assert all(w >= 0 for w in acc.values()), f"{path}: a row with a negative total: {acc}"
    return {k: w for k, w in acc.items() if w}


def view_from_table(d):
    """The view recomputed in Python from the table's own output."""
    n, s = collections.Counter(), collections.Counter()
    for (account, amount), w in totals(os.path.join(d, "tx.csv")).items():
        n[account] += w
        s[account] += w * amount
    return {(a, n[a], s[a]): 1 for a in n}


def assert_adds_up(d, names=("all.csv", "held.csv", "timed.csv")):
    want = view_from_table(d)
    assert sum(w for w in totals(os.path.join(d, "tx.csv")).values()) == ROWS
    for name in names:
        assert_eq(sorted(totals(os.path.join(d, name)).items()), sorted(want.items()), name)


ref = tmpdir()


@check("a buffered output holds the changes while the run goes on and status counts them")
def _():
    b = Bg(make(ref))
    s = b.wait_live(lambda s: any(c.get("buffered_records", 0) > 0 for c in s["live"]["connectors"]))
    held = [c for c in s["live"]["connectors"] if c["direction"] == "output" and "held.csv" in c["name"]]
    assert len(held) == 1 and held[0]["buffered_records"] > 0 and held[0]["transmitted_records"] == 0, s
    assert os.path.getsize(os.path.join(ref, "held.csv")) == 0, "the unlimited buffer wrote before the end"
    assert os.path.getsize(os.path.join(ref, "all.csv")) > 0
    # The time-limited buffer writes while the run goes on.
    deadline = time.monotonic() + 20
    while os.path.getsize(os.path.join(ref, "timed.csv")) == 0:
        assert time.monotonic() < deadline and b.p.poll() is None, "the 300 ms buffer never wrote during the run"
        time.sleep(0.02)
    assert b.wait() == 0, b.stderr()


@check("every output adds up to the view recomputed from the table")
def _():
    assert_adds_up(ref)


@check("the unlimited buffer wrote the consolidated view once: one +1 row per account")
def _():
    rows = lines(os.path.join(ref, "held.csv"))
    assert len(rows) == len(view_from_table(ref)) and all(r[-1] == "1" for r in rows), rows[:5]
    assert len(lines(os.path.join(ref, "all.csv"))) > 10 * ACCOUNTS  # unbuffered: every step's changes
    timed = len(lines(os.path.join(ref, "timed.csv")))
    assert ACCOUNTS < timed < len(lines(os.path.join(ref, "all.csv"))), timed


@check("killed with SIGKILL after a checkpoint and resumed (exactly_once), every output still adds up")
def _():
    d = tmpdir()
    spec = make(d, interval=0.5)
    b = Bg(spec)
    b.kill_after_checkpoint(0.3)
    assert lines(os.path.join(d, "held.csv")), "the checkpoint did not write the held changes"
    r = Bg(spec)
    assert r.wait() == 0, r.stderr()
    assert_adds_up(d)


@check("bad output buffer settings are refused, naming the key")
def _():
    d = tmpdir()
    cases = [
        ("\n      max_output_buffer_size_records: 0", "'max_output_buffer_size_records' must be a positive integer"),
        ("\n      max_output_buffer_time_millis: -5", "'max_output_buffer_time_millis' must be a non-negative integer"),
    ]
    for keys, msg in cases:
        spec = make(d, extra_view_keys=keys)
        _, err = run(["run", spec], expect=2)
        assert msg in err and "ob.yaml" in err, err
    spec = make(d)
    text = open(spec).read().replace("enable_output_buffer: true\n      max_output_buffer_time_millis",
                                     "enable_output_buffer: \"yes\"\n      max_output_buffer_time_millis")
    write(spec, text)
    _, err = run(["run", spec], expect=2)
    assert "'enable_output_buffer' must be true or false" in err, err
    text = open(make(d)).read().replace("enable_output_buffer: true\n      max_output_buffer_time_millis",
                                        "max_output_buffer_time_millis")
    write(spec, text)
    _, err = run(["run", spec], expect=2)
    assert "need 'enable_output_buffer': true" in err, err
    text = open(make(d)).read().replace('"max_batch_size": 1000', '"max_batch_size": 1000, "enable_output_buffer": true')
    write(spec, text)
    _, err = run(["run", spec], expect=2)
    assert "'enable_output_buffer' applies to output connectors only" in err, err


finish()
