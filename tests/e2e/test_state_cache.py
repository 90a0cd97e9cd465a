"""State beyond memory (storage.cache_mib, man/fld-storage.5): an aggregate over many more
groups than a 1 MiB cache holds, a join whose traces are as large, a DISTINCT as large, a join of two aggregates
(which reads their groups rather than keeping traces), a table with a PRIMARY KEY over as many keys, a top-2 per key (ROW_NUMBER), a LAG window
per key and a LEFT ASOF JOIN per key (whose partitions are stored one by one), evict their checkpointed
entries and read them back from the store on demand. Its output file is byte-identical to the same pipeline's with the whole state in
memory and to a recomputation in Python; under kill -9 it resumes (lazily: no group is loaded at
the resume, each is read when a step needs it) with another worker count to the same answer;
under fault_tolerance none the state is saved only to make room; a completed pipeline whose
input grew resumes lazily and updates the groups; a materialized view's changes waiting for a
checkpoint are held in memory only up to a sixteenth of the cache (as much again being written) and spilled to sorted runs on disk
past that, which the checkpoint merges (killed while it spills, a resume recomputes them, and a
resume checks the stored rows without loading them); an aggregate and a DISTINCT under a LATENESS
waterline, over a 1 MiB cache and killed, end with the same stored entries as in memory (the groups
the waterline passed while only in the store are erased there; mdb_dump reads them); a bad cache_mib is a usage error naming its
line.
"""

import collections
import filecmp
import os
import random
import re
import signal
import subprocess
import time

from fldtest import FLD, Bg, check, finish, integrate_csv, query, run, spec, status, tmpdir, write

KEYS = 100000
rnd = random.Random(11)
ROWS = [(rnd.randint(0, KEYS), rnd.randint(-50, 100)) for _ in range(600000)]


def csv_text(rows):
    return "".join(f"{k},{v}\n" for k, v in rows)


def expected(rows):
    s, n = collections.Counter(), collections.Counter()
    for k, v in rows:
        s[k] += v
        n[k] += 1
    return sorted((k, s[k], n[k]) for k in n)


def expected_join(rows):
    by_name = collections.Counter()
    for k, v in rows:
        if k % 3 != 0:  # the dimension table has the keys not divisible by 3
            by_name[f"n{k % 97}"] += v
    return sorted(by_name.items())


DIM = "".join(f"{k},n{k % 97}\n" for k in range(KEYS + 1) if k % 3 != 0)


TABLE_T = """CREATE TABLE t (k BIGINT NOT NULL, v INT NOT NULL) WITH ('connectors' = '[{
  "transport": {"name": "file_input", "config": {"path": "in.csv"}}, "format": {"name": "csv"}}]');
"""
# Top-K, window and as-of join, each over a quarter of the keys.
PART_VIEWS = """CREATE VIEW tk AS SELECT k, v FROM (SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC) AS rn
  FROM t WHERE k % 4 = 2) WHERE rn <= 2;
CREATE VIEW lg AS SELECT k, v, LAG(v) OVER (PARTITION BY k ORDER BY v) AS p FROM t WHERE k % 4 = 0;
CREATE VIEW r AS SELECT DISTINCT k, v AS ts FROM t WHERE v % 7 = 0;
CREATE VIEW a AS SELECT l.k, l.v, r.ts FROM (SELECT * FROM t WHERE k % 4 = 1) AS l
  LEFT ASOF JOIN r MATCH_CONDITION l.v >= r.ts ON l.k = r.k;
"""
SQL = TABLE_T + """CREATE TABLE d (k BIGINT NOT NULL, name VARCHAR NOT NULL) WITH ('connectors' = '[{
  "transport": {"name": "file_input", "config": {"path": "d.csv"}}, "format": {"name": "csv"}}]');
CREATE VIEW g AS SELECT k, SUM(v) AS s, COUNT(*) AS n FROM t GROUP BY k;
CREATE VIEW j AS SELECT d.name, SUM(t.v) AS s FROM t JOIN d ON t.k = d.k GROUP BY d.name;
CREATE VIEW u AS SELECT DISTINCT k % 50000 AS b, v FROM t;
CREATE VIEW h AS SELECT k, MAX(v) AS m FROM t GROUP BY k;
CREATE VIEW bal AS SELECT g.k, g.s - h.m AS x FROM g JOIN h ON g.k = h.k;
CREATE TABLE pk (k BIGINT NOT NULL PRIMARY KEY, v INT NOT NULL) WITH ('connectors' = '[{
  "transport": {"name": "file_input", "config": {"path": "in.csv"}}, "format": {"name": "csv"}}]');
CREATE VIEW lastv AS SELECT k % 1000 AS b, SUM(v) AS s, COUNT(*) AS n FROM pk GROUP BY k % 1000;
""" + PART_VIEWS
PARTITIONED = ("tk.csv", "lg.csv", "a.csv")
FILES = ("g.csv", "j.csv", "u.csv", "bal.csv", "lastv.csv") + PARTITIONED


def cached_spec(d, name, sql, files, model="exactly_once", cache=None, workers=None):
    """A spec checkpointing every second, steps of 20000 rows, the state cache at `cache` MiB
    (default: none), each view named by files (`g.csv` for view g) written as CSV."""
    lines = [f"workers: {workers}\n" if workers else "",
             f"fault_tolerance: {{model: {model}, checkpoint_interval_secs: 1}}\nmin_batch_size_records: 20000\n",
             f"storage: {{cache_mib: {cache}}}\n" if cache else "", "connectors:\n"]
    lines += [f"""  {f[:-4]}:
    - transport: {{name: file_output, config: {{path: {f}}}}}
      format: {{name: csv}}
""" for f in files]
    return spec(d, name, sql, "".join(lines))


def pipeline(d, model="exactly_once", cache=None, workers=1):
    return cached_spec(d, "c", SQL, FILES, model, cache, workers)


def answer(d):
    return sorted(integrate_csv(os.path.join(d, "g.csv"), [int, int, int]))


def answer_join(d):
    return sorted(integrate_csv(os.path.join(d, "j.csv"), [str, int]))


def expected_distinct(rows):
    return sorted(set((k % 50000, v) for k, v in rows))


def answer_distinct(d):
    return sorted(integrate_csv(os.path.join(d, "u.csv"), [int, int]))


def expected_bal(rows):
    s, m = collections.Counter(), {}
    for k, v in rows:
        s[k] += v
        m[k] = max(m.get(k, v), v)
    return sorted((k, s[k] - m[k]) for k in m)


def answer_bal(d):
    return sorted(integrate_csv(os.path.join(d, "bal.csv"), [int, int]))


def expected_last(rows):
    """lastv recomputed: the primary key table holds each key's last value."""
    last = {}
    for k, v in rows:
        last[k] = v
    s, n = collections.Counter(), collections.Counter()
    for k, v in last.items():
        s[k % 1000] += v
        n[k % 1000] += 1
    return sorted((b, s[b], n[b]) for b in n)


def answer_last(d):
    return sorted(integrate_csv(os.path.join(d, "lastv.csv"), [int, int, int]))


def expected_partitioned(rows):
    """tk, lg and a recomputed: per key (k % 4 = 2) the two largest values; per key (k % 4 = 0) each value with
    the one before it in order; per left row (k % 4 = 1) the largest right time (a value divisible
    by 7 of the same key) at or below its value, or NULL."""
    by_key = collections.defaultdict(list)
    for k, v in rows:
        by_key[k].append(v)
    tk, lg, a = [], [], []
    for k, vs in by_key.items():
        vs = sorted(vs)
        if k % 4 == 2:
            tk.extend((k, v) for v in vs[::-1][:2])
        if k % 4 == 0:
            lg.extend((k, v, vs[i - 1] if i else None) for i, v in enumerate(vs))
        if k % 4 == 1:
            times = sorted(set(v for v in vs if v % 7 == 0))
            for v in vs:
                below = [ts for ts in times if ts <= v]
                a.append((k, v, below[-1] if below else None))
    return [sorted(x, key=repr) for x in (tk, lg, a)]


def answer_partitioned(d):
    return [integrate_csv(os.path.join(d, "tk.csv"), [int, int]),
            integrate_csv(os.path.join(d, "lg.csv"), [int, int, int]),
            integrate_csv(os.path.join(d, "a.csv"), [int, int, int])]


def check_answers(d, rows):
    assert answer(d) == expected(rows)
    assert answer_join(d) == expected_join(rows)
    assert answer_distinct(d) == expected_distinct(rows)
    assert answer_bal(d) == expected_bal(rows)
    assert answer_last(d) == expected_last(rows)
    for name, got, want in zip(PARTITIONED, answer_partitioned(d), expected_partitioned(rows)):
        assert got == want, (name, len(got), len(want), [x for x in got if x not in want][:5])


def same_files(d):
    for name in FILES:
        assert filecmp.cmp(os.path.join(full_dir, name), os.path.join(d, name), shallow=False), name


def prepare(d):
    write(os.path.join(d, "in.csv"), csv_text(ROWS))
    write(os.path.join(d, "d.csv"), DIM)


full_dir, small_dir = tmpdir(), tmpdir()
for d in (full_dir, small_dir):
    prepare(d)


@check("a 1 MiB cache: evicts, reads back, and writes the same bytes as the whole state in memory")
def _():
    run(["run", "--quiet", pipeline(full_dir)])
    _, err = run(["run", pipeline(small_dir, cache=1, workers=2)])
    assert "over storage.cache_mib (1 MiB)" in err, err
    same_files(small_dir)
    check_answers(small_dir, ROWS)
    # bal's join reads the groups of g and h (held once) rather than traces of its own.
    out, _ = run(["check", pipeline(small_dir)])
    assert "(left side: the aggregate's groups) (right side: the aggregate's groups)" in out, out


@check("kill -9 with a 1 MiB cache, resumed lazily with another worker count: the recomputed answer")
def _():
    d = tmpdir()
    prepare(d)
    p = pipeline(d, cache=1, workers=2)
    bg = Bg(p)
    bg.wait_checkpoint(min_step=3)
    bg.p.send_signal(signal.SIGKILL)
    assert bg.wait() == -signal.SIGKILL, "the run ended before it was killed"
    p = pipeline(d, cache=1, workers=1)
    _, err = run(["run", p])
    assert "resuming c from checkpoint" in err, err
    check_answers(d, ROWS)
    same_files(d)


@check("fault_tolerance none: the state is saved only to make room, the answer is the same")
def _():
    d = tmpdir()
    prepare(d)
    _, err = run(["run", pipeline(d, model="none", cache=1)])
    assert "over storage.cache_mib" in err, err
    same_files(d)


@check("a completed pipeline's input grows: resumed lazily, the groups read back are updated")
def _():
    more = [(rnd.randint(0, KEYS), rnd.randint(-50, 100)) for _ in range(30000)]
    with open(os.path.join(small_dir, "in.csv"), "a") as f:
        f.write(csv_text(more))
    run(["run", "--quiet", pipeline(small_dir, cache=1, workers=2)])
    check_answers(small_dir, ROWS + more)


def part_pipeline(d, cache):
    return cached_spec(d, "pt", TABLE_T + PART_VIEWS, PARTITIONED, cache=cache)


def run_peak_anon(args, d):
    """Runs fld to its end; returns its peak anonymous resident memory in MiB (sampled every 20 ms:
    the store's pages mapped from the page cache are not counted) and its stderr."""
    err_path = os.path.join(d, "..", os.path.basename(d) + ".err")
    with open(err_path, "w") as err:
        p = subprocess.Popen([FLD] + args, stdout=subprocess.DEVNULL, stderr=err)
        peak = 0
        while p.poll() is None:
            try:
                with open(f"/proc/{p.pid}/status") as f:
                    for line in f:
                        if line.startswith("RssAnon:"):
                            peak = max(peak, int(line.split()[1]) / 1024)
            except OSError:
                pass
            time.sleep(0.02)
    with open(err_path) as f:
        text = f.read()
    os.remove(err_path)
    assert p.returncode == 0, text
    return peak, text


@check("top-K, window and as-of partitions alone outgrow a 2 MiB cache: evicted, read back, same bytes, less memory")
def _():
    full, small = tmpdir(), tmpdir()
    peak = {}
    for d, cache in ((full, None), (small, 2)):
        write(os.path.join(d, "in.csv"), csv_text(ROWS))
        peak[cache], err = run_peak_anon(["run", part_pipeline(d, cache)], d)
    # These operators' memory is counted and their unchanged partitions leave it.
    assert "over storage.cache_mib (2 MiB)" in err, err
    for name in PARTITIONED:
        assert filecmp.cmp(os.path.join(full, name), os.path.join(small, name), shallow=False), name
    for name, got, want in zip(PARTITIONED, answer_partitioned(small), expected_partitioned(ROWS)):
        assert got == want, name
    print(f"     peak anonymous RSS: {peak[None]:.0f} MiB with the state in memory, {peak[2]:.0f} MiB with a 2 MiB cache")
    assert peak[2] < 0.7 * peak[None], peak


# A time column with a LATENESS: the aggregate's and the DISTINCT's groups stay live until the
# waterline passes them (20,000 behind the largest ts seen), many more than a 1 MiB cache holds,
# so live groups are evicted and read back, and groups the waterline passes while only in the
# store are erased there.
LATE_ROWS = [(i // 4 + rnd.randint(0, 50), rnd.randint(0, 20000), rnd.randint(-50, 100)) for i in range(400000)]
LATE_SQL = """CREATE TABLE e (ts BIGINT NOT NULL LATENESS 20000, k BIGINT NOT NULL, v INT NOT NULL) WITH ('connectors' = '[{
  "transport": {"name": "file_input", "config": {"path": "late.csv"}}, "format": {"name": "csv"}}]');
CREATE VIEW w AS SELECT ts / 1000 AS b, k, SUM(v) AS s, COUNT(*) AS n, MAX(v) AS m FROM e GROUP BY ts / 1000, k;
CREATE VIEW dl AS SELECT DISTINCT ts / 10 AS t10, k % 100 AS r FROM e;
"""


def late_pipeline(d, cache=None, workers=1):
    return cached_spec(d, "late", LATE_SQL, ("w.csv", "dl.csv"), cache=cache, workers=workers)


def check_late(d, full):
    """The views integrated against a recomputation (no row is late: each is at most 50 behind the
    largest ts before it), and byte for byte against the run with the state in memory."""
    s, n, m = collections.Counter(), collections.Counter(), {}
    for ts, k, v in LATE_ROWS:
        g = (ts // 1000, k)
        s[g] += v
        n[g] += 1
        m[g] = max(m.get(g, v), v)
    assert sorted(integrate_csv(os.path.join(d, "w.csv"), [int, int, int, int, int])) == \
        sorted((b, k, s[(b, k)], n[(b, k)], m[(b, k)]) for b, k in n)
    assert sorted(integrate_csv(os.path.join(d, "dl.csv"), [int, int])) == \
        sorted(set((ts // 10, k % 100) for ts, k, _ in LATE_ROWS))
    for name in ("w.csv", "dl.csv"):
        assert filecmp.cmp(os.path.join(full, name), os.path.join(d, name), shallow=False), name


def stored_state(d):
    """The lines of mdb_dump of the database holding the operator entries of a pipeline's store:
    "state", or "state1" while "state_slot" says so (fld-storage(5))."""
    store = os.path.join(d, "late.fld", "state")
    slot = subprocess.run(["mdb_dump", "-p", "-s", "state_slot", store], capture_output=True, text=True)
    lines = slot.stdout.split("\n")
    active = "state1" if slot.returncode == 0 and " active" in lines and \
        lines[lines.index(" active") + 1] == " 1" else "state"
    r = subprocess.run(["mdb_dump", "-s", active, store], capture_output=True, text=True, check=True)
    return [line for line in r.stdout.split("\n") if not line.startswith("database=")]


@check("LATENESS aggregate and DISTINCT over a 1 MiB cache, kill -9, resumed lazily with another worker count")
def _():
    full, d = tmpdir(), tmpdir()
    for x in (full, d):
        write(os.path.join(x, "late.csv"), "".join(f"{ts},{k},{v}\n" for ts, k, v in LATE_ROWS))
    run(["run", "--quiet", late_pipeline(full)])
    bg = Bg(late_pipeline(d, cache=1, workers=2))
    bg.wait_checkpoint(min_step=4)
    bg.p.send_signal(signal.SIGKILL)
    assert bg.wait() == -signal.SIGKILL, "the run ended before it was killed"
    _, err = run(["run", late_pipeline(d, cache=1, workers=1)])
    assert "resuming late from checkpoint" in err, err
    assert "over storage.cache_mib (1 MiB)" in err, err
    check_late(d, full)
    # The stores end equal: the groups the waterline passed while only in the small cache's store
    # (and, after the lazy resume, those that were stored when it resumed) were erased there, as
    # the in-memory run erased them from memory and its store.
    dumps = [stored_state(x) for x in (full, d)]
    assert len(dumps[0]) > 1000 and dumps[0] == dumps[1], [len(x) for x in dumps]



MAT_SQL = """CREATE TABLE t (k BIGINT NOT NULL, v INT NOT NULL) WITH ('connectors' = '[{
  "transport": {"name": "file_input", "config": {"path": "in.csv"}}, "format": {"name": "csv"}}]');
CREATE MATERIALIZED VIEW m AS SELECT k, v FROM t;
"""


def materialized(d, model, cache):
    return spec(d, "m", MAT_SQL, f"""fault_tolerance: {{model: {model}, checkpoint_interval_secs: 3600}}
min_batch_size_records: 20000
storage: {{path: st.fld, cache_mib: {cache}}}
""")


def spill_files(p):
    folder = os.path.join(os.path.dirname(p), "st.fld", "spill")
    return sorted(os.listdir(folder)) if os.path.isdir(folder) else []


def stored_answer(p):
    return query(p, "SELECT k, SUM(v), COUNT(*) FROM m GROUP BY k")


def expected_mat(rows):
    return sorted(expected(rows), key=repr)


@check("a materialized view's changes past an eighth of the cache are spilled to runs and merged: same rows")
def _():
    d = tmpdir()
    prepare(d)
    p = materialized(d, "none", 1)
    _, err = run(["--log-level", "debug", "run", "--quiet", p])
    # 600K rows of changes (about 24 MB in memory) against a 128 KiB bound: many runs, merged by
    # the final checkpoint (no checkpoint is due by time), and deleted once it has committed.
    spilled = re.findall(r"spilled (\d+) changes of m ", err)
    assert len(spilled) >= 20 and sum(map(int, spilled)) <= len(ROWS), spilled
    # The spill that would be the 16th run merges the changes with the 15 runs into one (a file
    # each is open while a checkpoint merges them).
    merged = re.findall(r"spilled \d+ changes of m merged with (\d+) runs", err)
    assert merged and all(n == "15" for n in merged), merged
    staged = re.findall(r"stages relation m: (\d+) changes \((\d+) runs\)", err)
    assert staged and 2 <= int(staged[-1][1]) <= 16, staged
    seen = status(p)["last_seen"]
    assert seen["checkpoints"] == 2, seen
    # fld status counts every run written (merging or not) and, after the last checkpoint, none
    # left on disk.
    assert (seen["spills"], seen["spill_files"], seen["spill_bytes"]) == (len(spilled), 0, 0), seen
    out, _ = run(["status", p])
    assert f"spilled     {len(spilled)} runs written; 0 on disk now" in out, out
    assert spill_files(p) == [], spill_files(p)
    assert stored_answer(p) == expected_mat(ROWS)


@check("kill -9 of a materialized view under exactly_once while it spills: resumed, the stored rows are right")
def _():
    d = tmpdir()
    prepare(d)
    p = materialized(d, "exactly_once", 1)
    bg = Bg(p)
    deadline = time.monotonic() + 60
    while not spill_files(p) and bg.p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    # While it runs, fld status shows the runs on disk (it publishes every 250 ms).
    live = {}
    while bg.p.poll() is None and time.monotonic() < deadline and not live.get("spill_files"):
        live = status(p).get("live", {})
    assert live.get("spill_files", 0) >= 1 and live["spill_bytes"] > 0 and live["spills"] >= live["spill_files"], live
    bg.p.send_signal(signal.SIGKILL)
    assert bg.wait() == -signal.SIGKILL, "the run ended before it was killed"
    assert spill_files(p), "killed before any run was spilled"
    _, err = run(["run", p])
    assert "resuming m from checkpoint" in err, err
    assert spill_files(p) == [], spill_files(p)  # the dead process's runs are gone
    assert stored_answer(p) == expected_mat(ROWS)


@check("ENOSPC writing the spill that merges 15 runs: exit 5 naming the run, a rerun resumes, the stored rows are right")
def _():
    d = tmpdir()
    prepare(d)
    p = materialized(d, "exactly_once", 1)
    # Spills are numbered from 0 (each run's file is its number): the 16th, 15.run, merges the
    # changes with the 15 runs before it, on the spill's thread. Its first write fails.
    run_file = os.path.join(d, "st.fld", "spill", "15.run")
    r = subprocess.run(["strace", "-f", "-qq", "-o", "/dev/null", "-P", run_file, "-e", "trace=write",
                        "-e", "inject=write:error=ENOSPC:when=1", FLD, "--log-level", "debug", "run", "--quiet", p],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 5, (r.returncode, r.stderr[-2000:])
    assert "merged with 15 runs" not in r.stderr, r.stderr[-2000:]
    last = r.stderr.strip().split("\n")[-1]
    assert last.startswith("fld: ") and "15.run" in last and "No space left on device" in last, last
    _, err = run(["run", p])
    assert "resuming m from checkpoint" in err, err
    assert spill_files(p) == [], spill_files(p)
    assert stored_answer(p) == expected_mat(ROWS)


@check("a bad storage.cache_mib is a usage error naming its line")
def _():
    d = tmpdir()
    for bad in ("0", "-3", "lots", "[1]"):
        p = write(os.path.join(d, "bad.yaml"), f"name: bad\nsql: CREATE TABLE t (x INT);\nstorage:\n  cache_mib: {bad}\n")
        _, err = run(["run", p], expect=2)
        assert "bad.yaml:4" in err and "cache_mib" in err, err


finish()
