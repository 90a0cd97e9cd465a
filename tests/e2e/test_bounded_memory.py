"""Bounded memory over an endless stream: datagen feeds a table whose time column has a LATENESS
into a windowed aggregate (GROUP BY ts / 1000, k with COUNT, SUM, MAX) and a DISTINCT, then (a
second case) into OVER windows with bounded frames ordered by it; the
resident memory is sampled every second and must stay flat once warm, while the same pipeline
without LATENESS keeps growing. Prints the figures.

FLD_SOAK_SECONDS (default 12) sets how long the pipeline with LATENESS runs, FLD_SOAK_RATE (default
200000; 0 = unlimited) the datagen rate: `ci/soak` runs it for 10 minutes. The comparison without
LATENESS runs at most 60 s: its state only grows, and stopping it writes that state out."""

import json
import os
import subprocess
import time

from fldtest import FLD, check, finish, run, spec, tmpdir

SECONDS = int(os.environ.get("FLD_SOAK_SECONDS", "12"))
RATE = int(os.environ.get("FLD_SOAK_RATE", "200000"))
d = tmpdir()


def program(lateness, window=False):
    plan = {"fields": {"k": {"strategy": "uniform", "range": [0, 50]},
                       "v": {"strategy": "uniform", "range": [0, 1000]}}}
    if RATE > 0:
        plan["rate"] = RATE
    conn = json.dumps([{"transport": {"name": "datagen", "config": {"seed": 1, "plan": [plan]}}}])
    table = f"CREATE TABLE t (ts BIGINT NOT NULL {lateness}, k INT NOT NULL, v INT NOT NULL) WITH ('connectors' = '{conn}');"
    if window:
        # OVER with bounded frames (and a ranking function) on the LATENESS column: the rows behind
        # the waterline that no future frame reaches are discarded.
        return f"""
{table}
CREATE VIEW o AS SELECT ts, k, SUM(v) OVER (PARTITION BY k ORDER BY ts RANGE BETWEEN 1000 PRECEDING AND CURRENT ROW) AS s,
  MAX(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 5 PRECEDING AND 2 FOLLOWING) AS m,
  ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts) AS rn FROM t;
"""
    return f"""
{table}
CREATE VIEW w AS SELECT ts / 1000 AS bucket, k, COUNT(*) AS n, SUM(v) AS s, MAX(v) AS m FROM t GROUP BY ts / 1000, k;
CREATE VIEW d AS SELECT DISTINCT ts / 10 AS t10, k FROM t;
"""


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def soak(name, lateness, seconds, window=False):
    p = spec(d, name, program(lateness, window), "fault_tolerance: {model: none}\n")
    proc = subprocess.Popen([FLD, "run", "--quiet", p], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    samples = []
    try:
        for _ in range(seconds):
            time.sleep(1)
            assert proc.poll() is None, proc.stderr.read()
            samples.append(rss_mib(proc.pid))
    finally:
        run(["stop", p], expect=None)
        proc.wait(timeout=600)
    out, _ = run(["status", p, "--json"], expect=None)
    print(f"     {name}: RSS MiB per second: {' '.join(f'{s:.0f}' for s in samples)}", flush=True)
    print(f"     {name}: {out.strip()[:200]}", flush=True)
    return samples


@check(f"RSS stays flat with LATENESS over an endless stream ({SECONDS} s, rate {RATE or 'unlimited'})")
def _():
    with_lateness = soak("bounded", "LATENESS 5000", SECONDS)
    without = soak("unbounded", "", min(SECONDS, 60))
    warm = len(with_lateness) // 3  # the first third warms up (allocator pools, first checkpoint)
    growth = max(with_lateness[warm:]) - with_lateness[warm]
    warm_without = len(without) // 3
    growth_without = without[-1] - without[warm_without]
    print(f"     growth after warm-up: {growth:.1f} MiB with LATENESS over {len(with_lateness) - warm} s, "
          f"{growth_without:.1f} MiB without over {len(without) - warm_without} s", flush=True)
    assert growth < max(8.0, 0.1 * with_lateness[warm]), with_lateness
    assert growth_without > growth + 5, (with_lateness, without)



@check(f"RSS stays flat with LATENESS under OVER windows over an endless stream ({SECONDS} s, rate {RATE or 'unlimited'})")
def _():
    with_lateness = soak("window-bounded", "LATENESS 5000", SECONDS, window=True)
    without = soak("window-unbounded", "", min(SECONDS, 60), window=True)
    warm = len(with_lateness) // 3
    growth = max(with_lateness[warm:]) - with_lateness[warm]
    warm_without = len(without) // 3
    growth_without = without[-1] - without[warm_without]
    print(f"     growth after warm-up: {growth:.1f} MiB with LATENESS over {len(with_lateness) - warm} s, "
          f"{growth_without:.1f} MiB without over {len(without) - warm_without} s", flush=True)
    assert growth < max(8.0, 0.1 * with_lateness[warm]), with_lateness
    assert growth_without > growth + 5, (with_lateness, without)


finish()
