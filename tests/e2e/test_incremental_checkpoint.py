"""Incremental checkpoints: with a large aggregate and join state, a checkpoint after a small
change writes a small fraction of what the first one wrote; checkpoints go on while input keeps
arriving; kill -9 after several of them resumes to the answer a recomputation in Python gives.
"""

import collections
import os
import random
import signal
import subprocess
import time

from fldtest import FLD, Bg, check, finish, integrate_csv, spec, status, tmpdir

SQL = """CREATE TABLE t (a INT NOT NULL, b INT NOT NULL, v INT NOT NULL) WITH ('connectors' = '[{"transport":
  {"name": "file_input", "config": {"path": "in.csv", "follow": true}}, "format": {"name": "csv"}}]');
CREATE VIEW by_a AS SELECT a, SUM(v) AS s, COUNT(*) AS n FROM t GROUP BY a;
CREATE VIEW by_b AS SELECT b, SUM(v) AS s FROM t GROUP BY b;
CREATE VIEW ab AS SELECT by_a.a, by_a.s - by_b.s AS d, by_a.n FROM by_a JOIN by_b ON by_a.a = by_b.b;
"""
KEYS = 40000
rnd = random.Random(5)
ROWS = []


def rows(n):
    out = [(rnd.randint(1, KEYS), rnd.randint(1, KEYS), rnd.randint(-50, 100)) for _ in range(n)]
    ROWS.extend(out)
    return "".join(f"{a},{b},{v}\n" for a, b, v in out)


def expected():
    by_a, n_a, by_b = collections.Counter(), collections.Counter(), collections.Counter()
    for a, b, v in ROWS:
        by_a[a] += v
        n_a[a] += 1
        by_b[b] += v
    return sorted((a, by_a[a] - by_b[a], n_a[a]) for a in by_a if a in by_b)


def checkpoint_and_wait(sp, bg, before):
    subprocess.run([FLD, "checkpoint", sp], capture_output=True, check=True)
    s = bg.wait_live(lambda s: s["live"]["checkpoints"] > before and not s["live"]["checkpoint_in_progress"], 60)
    return s["live"]


D = tmpdir()
SP = spec(D, "inc", SQL, """fault_tolerance: {model: exactly_once, checkpoint_interval_secs: 100000}
connectors:
  ab:
    - transport: {name: file_output, config: {path: ab.csv}}
      format: {name: csv}
""")
IN = os.path.join(D, "in.csv")


@check("a checkpoint after a small change writes a small fraction of a full one, and none is blocked")
def _():
    with open(IN, "w") as f:
        f.write(rows(200000))
    bg = Bg(SP)
    bg.wait_live(lambda s: s["live"]["total_processed_records"] >= 200000, 120)
    base = bg.wait_live()["live"]["checkpoints"]
    full = checkpoint_and_wait(SP, bg, base)
    assert full["last_checkpoint_bytes"] > 40000 * 20, full  # 3 operators, ~80K keyed entries
    with open(IN, "a") as f:
        f.write(rows(10))
    bg.wait_live(lambda s: s["live"]["total_processed_records"] >= 200010, 60)
    small = checkpoint_and_wait(SP, bg, full["checkpoints"])
    # 10 rows touch at most 10 keys of each of the 2 aggregates and 2 join sides.
    assert 0 < small["last_checkpoint_bytes"] < full["last_checkpoint_bytes"] / 200, (small, full)
    # Input keeps arriving while checkpoints are requested back to back.
    n = small["checkpoints"]
    for i in range(5):
        with open(IN, "a") as f:
            f.write(rows(2000))
        subprocess.run([FLD, "checkpoint", SP], capture_output=True, check=True)
        time.sleep(0.05)
    bg.wait_live(lambda s: s["live"]["total_processed_records"] >= 210010 and s["live"]["checkpoints"] > n, 60)
    bg.p.send_signal(signal.SIGKILL)
    assert bg.wait() == -signal.SIGKILL


@check("kill -9 after incremental checkpoints resumes to the recomputed answer")
def _():
    with open(IN, "a") as f:
        f.write(rows(3000))
    bg = Bg(SP)
    bg.wait_live(lambda s: s["live"]["total_processed_records"] >= len(ROWS), 120)
    subprocess.run([FLD, "stop", SP], capture_output=True, check=True)
    assert bg.wait(60) == 0, bg.stderr()
    got = sorted(tuple(r) for r in integrate_csv(os.path.join(D, "ab.csv"), [int, int, int]))
    assert got == expected(), (len(got), len(expected()))
    assert status(SP)["state"] == "SUSPENDED"


finish()
