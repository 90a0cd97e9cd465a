"""Large materialized views: a checkpoint whose change is large against a view's stored rows
merges them into the view's other slot over several LMDB write transactions and switches to it
in the checkpoint's own transaction (man/fld-storage.5). Killed at sampled writes of the state
store while that happens (strace, real SIGKILL), the resume must end with views and output equal
to a recomputation in Python: nothing lost, nothing counted twice.

The pipeline: 400K datagen rows at 200K rows/s with a checkpoint every second, so the first
checkpoint stages both views into empty slots and the second merges into slots holding rows.
It runs three times: with the default memory budget, where the changes wait in memory; with
storage.cache_mib 8, where changes past 1 MiB are spilled to sorted runs on disk (wal/spill.h)
that the checkpoint merges, kills then also landing while runs are written (write); and with
storage.cache_mib 64, where the table with a PRIMARY KEY (u: each key written four times) is
written whole from its upsert operator's rows instead of from its changes, replacing the stored
rows from the second checkpoint on."""

import collections
import concurrent.futures
import json
import os
import re
import random
import shutil
import signal
import subprocess

from fldtest import FLD, assert_eq, check, finish, integrate_csv, query, tmpdir, write

ROWS, KEYS, VS = 400_000, 100_000, 97
DATAGEN = json.dumps([{"transport": {"name": "datagen", "config": {"plan": [{
    "limit": ROWS, "rate": ROWS // 2,
    "fields": {"k": {"range": [0, KEYS]}, "v": {"range": [0, VS]}}}]}}}])
SQL = f"""CREATE TABLE t (id BIGINT NOT NULL, k INT NOT NULL, v INT NOT NULL) WITH ('connectors' = '{DATAGEN}');
CREATE MATERIALIZED VIEW all_t AS SELECT * FROM t;
CREATE MATERIALIZED VIEW by_k AS SELECT k, SUM(v) AS s, COUNT(*) AS n FROM t GROUP BY k;"""
# The third configuration adds a table with a PRIMARY KEY, fed the same rows.
SQL_U = f"""\nCREATE TABLE u (id BIGINT NOT NULL, k INT NOT NULL PRIMARY KEY, v INT NOT NULL) WITH ('connectors' = '{DATAGEN}');"""
JOBS = int(os.environ.get("FLD_SYSCALL_JOBS", "2"))

# The oracle: datagen's increment strategy gives row i the values (i, i mod KEYS, i mod VS).
SUMS = collections.Counter()
COUNTS = collections.Counter()
for i in range(ROWS):
    SUMS[i % KEYS] += i % VS
    COUNTS[i % KEYS] += 1
BY_K = sorted(((k, SUMS[k], COUNTS[k]) for k in SUMS), key=repr)  # as query() sorts
ALL_T = [(ROWS, ROWS * (ROWS - 1) // 2, sum(i % KEYS for i in range(ROWS)), sum(SUMS.values()))]
# u keeps each key's last row: the largest i with i mod KEYS = k.
LAST = {}
for i in range(ROWS):
    LAST[i % KEYS] = i
U = sorted(((k, i, i % VS) for k, i in LAST.items()), key=repr)


CONFIGS = {"staged": "", "spilled": ", cache_mib: 8", "whole": ", cache_mib: 64"}


def make(config):
    d = tmpdir()
    body = "\n".join("  " + line for line in (SQL + (SQL_U if config == "whole" else "")).split("\n"))
    return write(os.path.join(d, "s.yaml"), f"""name: lv
sql: |
{body}
connectors:
  by_k:
    - transport: {{name: file_output, config: {{path: by_k.csv}}}}
      format: {{name: csv}}
storage: {{path: st.fld{CONFIGS[config]}}}
fault_tolerance: {{model: exactly_once, checkpoint_interval_secs: 1}}
""")


def problems(sp, config):
    """What differs from the oracle (empty when nothing)."""
    out = []
    if query(sp, "SELECT k, s, n FROM by_k") != BY_K:
        out.append("view by_k")
    if query(sp, "SELECT COUNT(*), SUM(id), SUM(k), SUM(v) FROM all_t") != ALL_T:
        out.append("view all_t")
    if config == "whole" and query(sp, "SELECT k, id, v FROM u") != U:
        out.append("table u")
    if integrate_csv(os.path.join(os.path.dirname(sp), "by_k.csv"), [int, int, int]) != BY_K:
        out.append("by_k.csv")
    spill = os.path.join(os.path.dirname(sp), "st.fld", "spill")
    if os.path.isdir(spill) and os.listdir(spill):
        out.append(f"spill files left: {os.listdir(spill)}")
    return out


def run(sp, *pre):
    return subprocess.run([*pre, FLD, "--log-level", "debug", "run", "--quiet", sp], capture_output=True, text=True,
                          timeout=300)


TRACE = {}  # (config, syscall) -> calls of the busiest thread
SYSCALLS = "writev,pwrite64,fdatasync,write"


@check("uninterrupted runs stage both views, into empty slots and onto stored rows, and are right")
def _():
    for config in CONFIGS:
        sp = make(config)
        trace = os.path.join(os.path.dirname(sp), "trace")
        p = run(sp, "strace", "-f", "-qq", "-y", "-o", trace, "-e", f"trace={SYSCALLS}")
        assert p.returncode == 0, p.stderr
        staged = re.findall(r"stages relation (\w+): \d+ changes \((\d+) runs\) on (\d+) stored rows", p.stderr)
        whole = re.findall(r"stages relation (\w+) whole: (\d+) rows from its operator, replacing (\d+) stored", p.stderr)
        if config == "whole":
            # Written from the operator's rows, into an empty slot and over stored rows; never
            # from changes.
            assert {v for v, _, _ in whole} == {"u"}, whole
            stored_before = [stored for _, _, stored in whole]
            assert "0" in stored_before and any(n != "0" for n in stored_before), whole
            assert "u" not in [v for v, _, _ in staged], staged
        else:
            assert not whole, whole
        assert ("all_t", "0") in [(v, stored) for v, _, stored in staged], staged
        assert ("by_k", "0") in [(v, stored) for v, _, stored in staged], staged
        assert any(stored != "0" for _, _, stored in staged), staged
        spilled = re.findall(r"spilled \d+ changes of (\w+)", p.stderr)
        if config == "spilled":
            assert spilled.count("all_t") >= 4 and any(runs != "0" for _, runs, _ in staged), (spilled, staged)
        else:
            assert config == "whole" or not spilled, spilled
        assert_eq(problems(sp, config), [], f"{config}: differences from the oracle")
        with open(trace) as f:
            calls = re.findall(r"^(\d+)\s+(\w+)\(\d+<([^>]*)>", f.read(), re.M)
        assert sum(1 for _, sc, path in calls if sc == "writev" and path.endswith("data.mdb")) > 50, calls[:20]
        if config == "spilled":
            assert any(sc == "write" and path.endswith(".run") for _, sc, path in calls), "no spill file written"
        shutil.rmtree(os.path.dirname(sp), ignore_errors=True)
        # strace counts an injection's calls per thread: k is reachable up to the busiest thread's
        # count (calls on every file: -P does not follow files created later).
        per_thread = collections.Counter((sc, tid) for tid, sc, _ in calls)
        for (sc, _), n in per_thread.items():
            TRACE[config, sc] = max(TRACE.get((config, sc), 0), n)


def kill_at(config, sc, k):
    """Kills a run at the k-th call of sc (strace), or at k seconds (sc "time"); resumes it."""
    sp = make(config)
    d = os.path.dirname(sp)
    if sc == "time":
        bg = subprocess.Popen([FLD, "run", "--quiet", sp], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True)
        try:
            bg.wait(k)
        except subprocess.TimeoutExpired:
            bg.send_signal(signal.SIGKILL)
        err = bg.communicate()[1]
        rc = bg.returncode
    else:
        p = run(sp, "strace", "-f", "-qq", "-e", f"trace={sc}", "-e", f"inject={sc}:signal=KILL:when={k}")
        rc, err = p.returncode, p.stderr
    out = [] if rc in (-9, 128 + 9, 0) else [f"exit {rc}: {err[-300:]}"]
    r = run(sp)
    if r.returncode != 0:
        out.append(f"resume exit {r.returncode}: {r.stderr[-400:]}")
    else:
        out += problems(sp, config)
    if out:
        out.append(f"(kept in {d})")
    else:
        shutil.rmtree(d, ignore_errors=True)
    return rc in (-9, 128 + 9), out


@check("killed at sampled writes and syncs of the state store, resumed: views and output are right")
def _():
    assert TRACE, "the uninterrupted run found no calls"
    points = []
    rnd = random.Random(3)
    for config in CONFIGS:
        quotas = (("writev", 7), ("fdatasync", 5), ("pwrite64", 3)) + ((("write", 6),) if config != "staged" else ())
        if config == "whole":  # (its store writes are the others' but for u's: fewer points)
            quotas = tuple((sc, (q + 1) // 2) for sc, q in quotas)
        for sc, quota in quotas:
            n = TRACE.get((config, sc), 0)
            ks = sorted({1 + round(i * (n - 1) / max(1, quota - 1)) for i in range(min(n, quota))})
            points += [(config, sc, k) for k in ks]
        # Each background checkpoint may run on a thread of its own: kills at times reach those too.
        points += [(config, "time", round(rnd.uniform(0.8, 2.4), 2)) for _ in range(2 if config == "whole" else 4)]
    fails, kills, missed = [], 0, []
    with concurrent.futures.ThreadPoolExecutor(JOBS) as ex:
        for (config, sc, k), f in zip(points, [ex.submit(kill_at, *p) for p in points]):
            killed, out = f.result()
            kills += killed
            missed += [] if killed else [f"{config} {sc}#{k}"]
            fails += [f"{config} {sc}#{k}: {'; '.join(out)}"] if out else []
    print(f"     {len(points)} kill points, {kills} killed; calls {dict(TRACE)}; not reached {missed}", flush=True)
    assert not fails, "\n".join(fails)
    assert kills >= len(points) * 3 // 4, kills  # a traced count can differ a little from run to run


finish()
