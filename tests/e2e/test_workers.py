"""Workers: a pipeline whose aggregates and joins shard their state across 1, 2 or 3 workers,
and whose filters and projections evaluate 10,000-row batches in slices on them,
writes byte-identical output files, query answers and checkpoints' results; a checkpoint taken
with 2 workers resumes after kill -9 with 1 (and one taken with 1 with 3) to the answer a
recomputation in Python gives.
"""

import collections
import filecmp
import os
import random
import shutil
import signal
import subprocess

from fldtest import FLD, Bg, check, finish, integrate_csv, query, run, spec, tmpdir

TABLE = """CREATE TABLE t (a INT NOT NULL, b INT NOT NULL, v INT NOT NULL, note VARCHAR) WITH ('connectors' = '[{
  "transport": {"name": "file_input", "config": {"path": "in.csv"FOLLOW}}, "format": {"name": "csv"}}]');
"""
VIEWS = """CREATE VIEW by_a AS SELECT a, SUM(v) AS s, COUNT(*) AS n, MAX(note) AS top FROM t GROUP BY a;
CREATE VIEW by_b AS SELECT b, SUM(v) AS s FROM t GROUP BY b;
CREATE MATERIALIZED VIEW ab AS SELECT by_a.a, by_a.s - by_b.s AS d, by_a.n FROM by_a JOIN by_b ON by_a.a = by_b.b;
CREATE VIEW pairs AS SELECT t.a, u.v FROM t LEFT JOIN t AS u ON t.a = u.b AND u.v > 95;
CREATE VIEW shaped AS SELECT a * 3 + b AS x, UPPER(note) AS u, v FROM t WHERE v % 4 <> 0;
"""
OUTPUTS = """connectors:
  ab:
    - transport: {name: file_output, config: {path: ab.csv}}
      format: {name: csv}
  by_a:
    - transport: {name: file_output, config: {path: by_a.json}}
      format: {name: json}
  pairs:
    - transport: {name: file_output, config: {path: pairs.csv}}
      format: {name: csv}
  shaped:
    - transport: {name: file_output, config: {path: shaped.csv}}
      format: {name: csv}
"""
KEYS = 5000
rnd = random.Random(9)
ROWS = []


def rows(n):
    out = [(rnd.randint(1, KEYS), rnd.randint(1, KEYS), rnd.randint(-5, 100)) for _ in range(n)]
    ROWS.extend(out)
    # A quoted note with the delimiter, and now and then one spanning two lines.
    return "".join(f'{a},{b},{v},"n {v}, {a}{chr(10) if v == 42 else ""}"\n' for a, b, v in out)


def expected_ab():
    by_a, n_a, by_b = collections.Counter(), collections.Counter(), collections.Counter()
    for a, b, v in ROWS:
        by_a[a] += v
        n_a[a] += 1
        by_b[b] += v
    return sorted((a, by_a[a] - by_b[a], n_a[a]) for a in by_a if a in by_b)


def pipeline(d, workers, follow):
    sql = TABLE.replace("FOLLOW", ', "follow": true' if follow else "") + VIEWS
    return spec(d, "w", sql, f"workers: {workers}\nfault_tolerance: {{model: exactly_once}}\n" + OUTPUTS)


BASE = tmpdir()
with open(os.path.join(BASE, "in.csv"), "w") as f:
    f.write(rows(60000))  # several 10,000-record batches: the parallel CSV path and sharded steps


@check("1, 2 and 3 workers write the same output files and answer queries the same")
def _():
    runs = {}
    for workers in (1, 2, 3):
        d = os.path.join(BASE, f"run{workers}")
        os.makedirs(d)
        shutil.copy(os.path.join(BASE, "in.csv"), d)
        sp = pipeline(d, workers, False)
        run(["run", "--quiet", sp])
        runs[workers] = (d, sp)
    d1, sp1 = runs[1]
    for workers in (2, 3):
        d, sp = runs[workers]
        for out in ("ab.csv", "by_a.json", "pairs.csv", "shaped.csv"):
            assert filecmp.cmp(os.path.join(d1, out), os.path.join(d, out), shallow=False), (workers, out)
        assert query(sp, "SELECT * FROM ab") == query(sp1, "SELECT * FROM ab")
    got = sorted(tuple(r) for r in integrate_csv(os.path.join(d1, "ab.csv"), [int, int, int]))
    assert got == expected_ab()
    notes = [f'n {v}, {a}{chr(10) if v == 42 else ""}'.upper() for a, b, v in ROWS]
    want = sorted(((a * 3 + b, n, v) for (a, b, v), n in zip(ROWS, notes) if v % 4 != 0), key=repr)
    assert integrate_csv(os.path.join(d1, "shaped.csv"), [int, str, int]) == want


@check("kill -9 with 2 workers, resume with 1; kill -9 with 1, resume with 3: the recomputed answer")
def _():
    d = os.path.join(BASE, "resume")
    os.makedirs(d)
    shutil.copy(os.path.join(BASE, "in.csv"), d)
    inp = os.path.join(d, "in.csv")
    for workers, resumed_with in ((2, 1), (1, 3)):
        sp = pipeline(d, workers, True)
        bg = Bg(sp)
        bg.wait_live(lambda s: s["live"]["total_processed_records"] >= len(ROWS), 120)
        before = bg.wait_live()["live"]["checkpoints"]
        subprocess.run([FLD, "checkpoint", sp], capture_output=True, check=True)
        bg.wait_live(lambda s: s["live"]["checkpoints"] > before and not s["live"]["checkpoint_in_progress"], 60)
        with open(inp, "a") as f:
            f.write(rows(15000))  # journaled after the checkpoint, replayed at resume
        bg.wait_live(lambda s: s["live"]["total_processed_records"] >= len(ROWS), 120)
        bg.p.send_signal(signal.SIGKILL)
        assert bg.wait() == -signal.SIGKILL
        with open(inp, "a") as f:
            f.write(rows(5000))
        sp = pipeline(d, resumed_with, True)
        bg = Bg(sp)
        bg.wait_live(lambda s: s["live"]["total_processed_records"] >= len(ROWS), 120)
        subprocess.run([FLD, "stop", sp], capture_output=True, check=True)
        assert bg.wait(60) == 0, bg.stderr()
        got = sorted(tuple(r) for r in integrate_csv(os.path.join(d, "ab.csv"), [int, int, int]))
        assert got == expected_ab(), (workers, resumed_with, len(got), len(expected_ab()))
        assert sorted(query(sp, "SELECT a, d, n FROM ab")) == expected_ab()


finish()
