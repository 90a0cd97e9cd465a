"""Inputs that keep arriving: a failed step loses nothing, followed files (appends, rotation),
folders receiving files while running and between runs, cron-style re-runs equal to one run over
all the data (checked with sqlite3), standard input in bursts with kill -9 between them, steps
triggered by size or delay, and stops that never wait for input. Real processes, files and
signals."""

import json
import os
import random
import signal
import sqlite3
import subprocess
import time

from fldtest import FLD, assert_eq, check, finish, integrate_json, query, run, spec, sqlite_rows, status, tmpdir, write

rng = random.Random(11)


def append(path, text):
    with open(path, "a") as f:
        f.write(text)


def conn_of(path, fmt="csv", follow=False, extra=""):
    cfg = {"path": path}
    if follow:
        cfg["follow"] = True
    c = {"transport": {"name": "file_input", "config": cfg}, "format": {"name": fmt}}
    return json.dumps([c]) + extra


def table(name, cols, path, **kw):
    return f"CREATE TABLE {name} ({cols}) WITH ('materialized' = 'true', 'connectors' = '{conn_of(path, **kw)}');"


def wait_for(cond, what, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def output_rows(path):
    """The integrated rows of a JSON output file, leaving out a last line still being written."""
    if not os.path.exists(path):
        return []
    with open(path) as f:
        text = f.read()
    complete = text[:text.rfind("\n") + 1]
    tmp = path + ".complete"
    write(tmp, complete)
    return integrate_json(tmp)


def oracle(tables, sql):
    """sqlite3 over the given {table: (columns DDL, rows)}."""
    db = sqlite3.connect(":memory:")
    for name, (ddl, rows) in tables.items():
        db.execute(f"CREATE TABLE {name} ({ddl})")
        if rows:
            db.executemany(f"INSERT INTO {name} VALUES ({','.join('?' * len(rows[0]))})", rows)
    return sqlite_rows(db, sql)


def csv_lines(rows):
    return "".join(",".join(str(v) for v in r) + "\n" for r in rows)


def start(spec_path, stdin=None):
    return subprocess.Popen([FLD, "run", "--quiet", spec_path], stdin=stdin, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)


# ---- the failed step: records other inputs read in it are applied, not lost ----

@check("a bad record fails the run after applying everything read before it on every input; fixing it resumes")
def _():
    d = tmpdir()
    write(os.path.join(d, "a.csv"), "1\n2\n")
    write(os.path.join(d, "b.csv"), "10\nx\n")
    sp = spec(d, "fail", table("a", "x INT", "a.csv") + "\n" + table("b", "x INT", "b.csv"))
    _, err = run(["run", sp], expect=1)
    assert "b.csv:2:1:" in err, err
    assert status(sp)["state"] == "FAILED"
    assert_eq(query(sp, "SELECT x FROM a"), [(1,), (2,)], "a after the failed run")
    assert_eq(query(sp, "SELECT x FROM b"), [(10,)], "b after the failed run (the good line before the bad)")
    write(os.path.join(d, "b.csv"), "10\n11\n")
    out, _ = run(["run", sp])
    assert "completed: 1 records" in out, out
    assert_eq(query(sp, "SELECT x FROM a"), [(1,), (2,)], "a after the fix")
    assert_eq(query(sp, "SELECT x FROM b"), [(10,), (11,)], "b after the fix")
    run(["run", "--reset", sp])
    assert_eq(query(sp, "SELECT COUNT(*) FROM a"), [(2,)], "a after --reset")


# ---- cron: three runs, each over what is new, equal one run over everything ----

SQL_CRON = """
{t}
{f}
{s}
CREATE MATERIALIZED VIEW per_k AS SELECT k, COUNT(*) AS n, SUM(v) AS sv FROM (
  SELECT k, v FROM t UNION ALL SELECT k, v FROM f UNION ALL SELECT k, v FROM s) AS u GROUP BY k;
CREATE MATERIALIZED VIEW joined AS SELECT t.k, t.v, f.v AS fv FROM t JOIN f ON t.k = f.k WHERE t.v > f.v;
"""
OUT = """connectors:
  per_k:
    - transport: {name: file_output, config: {path: out/per_k.json}}
      format: {name: json}
"""


def cron_spec(d):
    sql = SQL_CRON.format(t=table("t", "k INT, v INT", "t.csv"), f=table("f", "k INT, v INT", "drop/*.csv"),
                          s=table("s", "k INT, v INT", "-"))
    return spec(d, "cron", sql, OUT)


def rows_of(n):
    return [(rng.randrange(8), rng.randrange(-50, 100)) for _ in range(n)]


@check("three cron-style runs (appended lines, new files, new stdin) equal one run over all the data and sqlite3")
def _():
    d, whole = tmpdir(), tmpdir()
    for x in (d, whole):
        os.makedirs(os.path.join(x, "drop"))
        os.makedirs(os.path.join(x, "out"))
        write(os.path.join(x, "t.csv"), "")
    sp, whole_sp = cron_spec(d), cron_spec(whole)
    T, F, S = [], [], []
    for day in range(3):
        t, s = rows_of(50 + day), rows_of(20)
        files = [rows_of(30) for _ in range(day + 1)]
        append(os.path.join(d, "t.csv"), csv_lines(t))
        for i, rows in enumerate(files):
            write(os.path.join(d, "drop", f"day{day}-{i}.csv"), csv_lines(rows))
        out, err = run(["run", sp], stdin=csv_lines(s))
        assert "completed:" in out, out + err
        T += t
        S += s
        F += [r for rows in files for r in rows]
        # After every run the views equal sqlite3 over everything so far.
        tables = {"t": ("k INT, v INT", T), "f": ("k INT, v INT", F), "s": ("k INT, v INT", S)}
        want = oracle(tables, "SELECT k, COUNT(*), SUM(v) FROM (SELECT k, v FROM t UNION ALL SELECT k, v FROM f "
                              "UNION ALL SELECT k, v FROM s) GROUP BY k")
        assert_eq(query(sp, "SELECT * FROM per_k"), want, f"per_k after run {day + 1}")
        assert_eq(output_rows(os.path.join(d, "out", "per_k.json")), want, f"integrated per_k.json after run {day + 1}")
        assert_eq(query(sp, "SELECT * FROM joined"),
                  oracle(tables, "SELECT t.k, t.v, f.v FROM t JOIN f ON t.k = f.k WHERE t.v > f.v"),
                  f"joined after run {day + 1}")
    # A run with nothing new says so and changes nothing.
    before, st = open(os.path.join(d, "out", "per_k.json")).read(), status(sp)
    _, err = run(["run", sp], stdin="")
    assert "no new input since step" in err, err
    assert open(os.path.join(d, "out", "per_k.json")).read() == before
    after = status(sp)
    assert (after["state"], after["step"], after["total_processed_records"]) == \
        (st["state"], st["step"], st["total_processed_records"]), (st, after)
    assert after["last_seen"]["step"] == st["last_seen"]["step"], (st, after)
    # One run over all the data gives the same views.
    write(os.path.join(whole, "t.csv"), csv_lines(T))
    write(os.path.join(whole, "drop", "all.csv"), csv_lines(F))
    run(["run", whole_sp], stdin=csv_lines(S))
    for v in ("per_k", "joined"):
        assert_eq(query(sp, f"SELECT * FROM {v}"), query(whole_sp, f"SELECT * FROM {v}"), f"{v}: cron vs one run")
    assert_eq(output_rows(os.path.join(d, "out", "per_k.json")), output_rows(os.path.join(whole, "out", "per_k.json")),
              "per_k.json: cron vs one run")


@check("a folder input: files taken in name order once; a file changed after it was read is an error naming it")
def _():
    d = tmpdir()
    os.makedirs(os.path.join(d, "in"))
    write(os.path.join(d, "in", "b.csv"), "2\n")
    write(os.path.join(d, "in", "a.csv"), "1\n")
    sp = spec(d, "dir", table("t", "x INT", "in"))
    run(["run", sp])
    assert_eq(query(sp, "SELECT x FROM t"), [(1,), (2,)], "first run")
    write(os.path.join(d, "in", "c.csv"), "3\n")
    run(["run", sp])
    assert_eq(query(sp, "SELECT x FROM t"), [(1,), (2,), (3,)], "second run: only the new file")
    append(os.path.join(d, "in", "a.csv"), "9\n")
    _, err = run(["run", sp], expect=4)
    assert "in/a.csv: the file changed after it was read" in err, err
    assert_eq(query(sp, "SELECT x FROM t"), [(1,), (2,), (3,)], "nothing taken from the changed file")


# ---- while running: a followed file and a followed folder ----

def followed_inputs(d, stdin=False):
    """A followed file live.csv holding (1, 1), a followed folder in/ and maybe standard input,
    all summed per k into the materialized view tot; returns (live.csv's path, the SQL)."""
    os.makedirs(os.path.join(d, "in"))
    live = os.path.join(d, "live.csv")
    write(live, "1,1\n")
    tables = [table("l", "k INT, v INT", "live.csv", follow=True), table("f", "k INT, v INT", "in", follow=True)]
    if stdin:
        tables.append(table("s", "k INT, v INT", "-"))
    union = " UNION ALL ".join(f"SELECT k, v FROM {t}" for t in ("l", "f", "s")[:len(tables)])
    return live, "\n".join(tables) + (f"\nCREATE MATERIALIZED VIEW tot AS SELECT k, SUM(v) AS sv, COUNT(*) AS n "
                                      f"FROM ({union}) AS u GROUP BY k;")


@check("follow: appended lines, a rotation by rename and files dropped into a folder all arrive while running")
def _():
    d = tmpdir()
    live, sql = followed_inputs(d)
    sp = spec(d, "follow", sql, """connectors:
  tot:
    - transport: {name: file_output, config: {path: tot.json}}
      format: {name: json}
""")
    p = start(sp)
    rows = [(1, 1)]
    out = os.path.join(d, "tot.json")

    def seen(n):
        return lambda: sum(r[2] for r in output_rows(out)) == n

    wait_for(seen(1), "the first line")
    for i in range(5):
        batch = rows_of(7)
        append(live, csv_lines(batch))
        rows += batch
        wait_for(seen(len(rows)), f"appended batch {i}")
    # Rotation: rename away, the writer finishes the old file, a new file starts.
    os.rename(live, live + ".1")
    late, new = rows_of(3), rows_of(4)
    append(live + ".1", csv_lines(late))
    write(live, csv_lines(new))
    rows += late + new
    wait_for(seen(len(rows)), "the rotated file's last lines and the new file")
    for i in range(3):
        batch = rows_of(10)
        write(os.path.join(d, "in", f".tmp{i}"), csv_lines(batch))
        os.rename(os.path.join(d, "in", f".tmp{i}"), os.path.join(d, "in", f"f{i}.csv"))
        rows += batch
        wait_for(seen(len(rows)), f"dropped file {i}")
    assert status(sp)["state"] == "RUNNING"
    run(["stop", sp, "--timeout", "5"])
    assert p.wait(10) == 0, p.stderr.read()
    want = oracle({"u": ("k INT, v INT", rows)}, "SELECT k, SUM(v), COUNT(*) FROM u GROUP BY k")
    assert_eq(query(sp, "SELECT * FROM tot"), want, "tot after stop")
    assert_eq(output_rows(out), want, "integrated tot.json")
    # The next run continues where the stop left off: lines appended meanwhile arrive.
    extra = rows_of(5)
    append(live, csv_lines(extra))
    rows += extra
    p = start(sp)
    wait_for(seen(len(rows)), "lines appended while stopped")
    run(["stop", sp, "--timeout", "5"])
    assert p.wait(10) == 0
    want = oracle({"u": ("k INT, v INT", rows)}, "SELECT k, SUM(v), COUNT(*) FROM u GROUP BY k")
    assert_eq(query(sp, "SELECT * FROM tot"), want, "tot after the second run")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wakeups(pid):
    """Context switches a process asked for (sleeps it woke from), over all its threads."""
    n = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                n += sum(int(line.split()[1]) for line in f if line.startswith("voluntary_ctxt_switches"))
        except FileNotFoundError:
            pass  # a thread that ended
    return n


@check("idle inputs (a followed file, a followed folder, an open stdin) are waited on, not polled: "
       "under 300 wake-ups a second, and each still brings its records")
def _():
    d = tmpdir()
    live, sql = followed_inputs(d, stdin=True)
    sp = spec(d, "idle", sql)
    p = start(sp, stdin=subprocess.PIPE)
    try:
        wait_for(lambda: status(sp).get("total_processed_records") == 1, "the first line")
        time.sleep(0.5)
        before, cpu, t0 = wakeups(p.pid), cpu_seconds(p.pid), time.monotonic()
        time.sleep(2)
        secs = time.monotonic() - t0
        rate, busy = (wakeups(p.pid) - before) / secs, (cpu_seconds(p.pid) - cpu) / secs
        # Polling every half millisecond (as fld did) is ~2000 a second; waiting on the inputs with a
        # 10 ms cap (stops, requests, rotations) is ~100. A loop that never sleeps has no wake-ups
        # but a whole core.
        assert rate < 300, f"{rate:.0f} wake-ups a second while idle"
        assert busy < 0.2, f"{busy:.0%} of a core while idle"
        append(live, "2,2\n")
        wait_for(lambda: status(sp).get("total_processed_records") == 2, "the appended line")
        write(os.path.join(d, "in", ".t"), "3,3\n")
        os.rename(os.path.join(d, "in", ".t"), os.path.join(d, "in", "a.csv"))
        wait_for(lambda: status(sp).get("total_processed_records") == 3, "the dropped file")
        p.stdin.write("4,4\n")
        p.stdin.flush()
        wait_for(lambda: status(sp).get("total_processed_records") == 4, "the stdin line")
        run(["stop", sp, "--timeout", "5"])
        assert p.wait(10) == 0, p.stderr.read()
    finally:
        if p.poll() is None:  # a failed check leaves no process behind
            p.kill()
    assert_eq(query(sp, "SELECT k, sv, n FROM tot"), [(1, 1, 1), (2, 2, 1), (3, 3, 1), (4, 4, 1)], "tot")


@check("follow without inotify (the user's instances used up): the file is polled, appended lines still arrive")
def _():
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    d = tmpdir()
    live = os.path.join(d, "live.csv")
    write(live, "1\n")
    sp = spec(d, "noinotify", table("t", "x INT", "live.csv", follow=True))
    held, p = [], None
    try:
        for _ in range(100000):  # fs.inotify.max_user_instances, 128 by default
            fd = libc.inotify_init1(os.O_CLOEXEC)
            if fd < 0:
                break
            held.append(fd)
        assert held and ctypes.get_errno() == 24, f"inotify_init1 after {len(held)}: errno {ctypes.get_errno()}"
        p = subprocess.Popen([FLD, "--log-level", "debug", "run", sp], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
        wait_for(lambda: status(sp).get("total_processed_records") == 1, "the first line")
        while held:  # the instances go back at once: other processes may need them
            os.close(held.pop())
        append(live, "2\n3\n")
        wait_for(lambda: status(sp).get("total_processed_records") == 3, "the appended lines")
        run(["stop", sp, "--timeout", "5"])
        assert p.wait(10) == 0
        assert "no inotify watch" in p.stderr.read()
    finally:
        for fd in held:
            os.close(fd)
        if p is not None and p.poll() is None:  # a failed check leaves no process behind
            p.kill()
    assert_eq(query(sp, "SELECT x FROM t"), [(1,), (2,), (3,)], "t")


@check("follow: a truncated file fails the run with exit 4 naming it, keeping what was read")
def _():
    d = tmpdir()
    live = os.path.join(d, "live.csv")
    write(live, "1\n2\n3\n")
    sp = spec(d, "trunc", table("t", "x INT", "live.csv", follow=True))
    p = start(sp)
    wait_for(lambda: status(sp).get("total_processed_records") == 3, "three records")
    write(live, "9\n")
    assert p.wait(10) == 4
    assert "live.csv: the file was truncated" in p.stderr.read()
    assert_eq(query(sp, "SELECT x FROM t"), [(1,), (2,), (3,)], "kept")


# ---- standard input ----

def stdin_spec(d, extra=""):
    return spec(d, "pipe", table("t", "k INT, v VARCHAR", "-") +
                "\nCREATE MATERIALIZED VIEW c AS SELECT k, v FROM t;", """connectors:
  c:
    - transport: {name: file_output, config: {path: c.json}}
      format: {name: json}
""" + extra)


@check("stdin in bursts with kill -9 between them: nothing lost, nothing duplicated")
def _():
    d = tmpdir()
    sp = stdin_spec(d)
    out = os.path.join(d, "c.json")
    sent = []
    for burst in range(6):
        p = start(sp, stdin=subprocess.PIPE)
        rows = [(burst * 1000 + i, f"b{burst}") for i in range(rng.randrange(50, 400))]
        p.stdin.write(csv_lines(rows))
        p.stdin.flush()
        sent += rows
        # Output is released only after its steps are durable in the log.
        wait_for(lambda: len(output_rows(out)) == len(sent), f"burst {burst} in the output")
        p.kill()
        assert p.wait(10) == -signal.SIGKILL
    p = start(sp, stdin=subprocess.PIPE)
    p.stdin.close()
    assert p.wait(30) == 0, p.stderr.read()
    want = sorted(sent, key=repr)
    assert_eq(query(sp, "SELECT k, v FROM c"), want, "view after the bursts")
    assert_eq(output_rows(out), want, "integrated c.json")


@check("stdin left open: fld checkpoint and fld stop are done at once, every line read is kept, an unfinished "
       "line continues")
def _():
    d = tmpdir()
    sp = stdin_spec(d)
    p = start(sp, stdin=subprocess.PIPE)
    rows = [(i, "x") for i in range(10205)]
    p.stdin.write(csv_lines(rows) + "77777,unfin")
    p.stdin.flush()
    wait_for(lambda: status(sp).get("total_processed_records") == 10205, "the complete lines processed")
    # A checkpoint is not held up by the open pipe either.
    run(["checkpoint", sp])
    wait_for(lambda: (status(sp).get("last_checkpoint") or {}).get("step") == status(sp)["step"], "the checkpoint")
    t = time.monotonic()
    run(["stop", sp, "--timeout", "5"])
    assert time.monotonic() - t < 5
    assert p.wait(10) == 0
    p.stdin.close()
    assert_eq(query(sp, "SELECT COUNT(*) FROM t"), [(10205,)], "every complete line")
    # The next stream continues the unfinished line.
    run(["run", sp], stdin="ished\n")
    assert_eq(query(sp, "SELECT k, v FROM t WHERE k = 77777"), [(77777, "unfinished")], "continued line")


@check("min_batch_size_records with max_buffering_delay_usecs: a step waits for either; a stop takes what waits")
def _():
    d = tmpdir()
    sp = stdin_spec(d, "min_batch_size_records: 100\nmax_buffering_delay_usecs: 60000000\n")
    out = os.path.join(d, "c.json")
    p = start(sp, stdin=subprocess.PIPE)
    p.stdin.write(csv_lines([(i, "a") for i in range(10)]))
    p.stdin.flush()
    wait_for(lambda: status(sp).get("live", {}).get("buffered_input_records") == 10, "10 records held")
    time.sleep(0.5)
    assert output_rows(out) == [], "a step ran before 100 records or 60 s"
    assert status(sp)["total_processed_records"] == 0
    p.stdin.write(csv_lines([(i, "b") for i in range(10, 100)]))
    p.stdin.flush()
    wait_for(lambda: len(output_rows(out)) == 100, "the step at 100 records")
    p.stdin.write(csv_lines([(i, "c") for i in range(100, 105)]))
    p.stdin.flush()
    time.sleep(0.3)
    run(["stop", sp, "--timeout", "5"])
    assert p.wait(10) == 0
    assert_eq(query(sp, "SELECT COUNT(*) FROM t"), [(105,)], "records held at the stop")
    d2 = tmpdir()
    sp2 = stdin_spec(d2, "min_batch_size_records: 100\nmax_buffering_delay_usecs: 200000\n")
    p = start(sp2, stdin=subprocess.PIPE)
    p.stdin.write("1,a\n")
    p.stdin.flush()
    wait_for(lambda: len(output_rows(os.path.join(d2, "c.json"))) == 1, "the step after the delay", timeout=10)
    p.kill()
    p.wait()


@check("spec: min_batch_size_records and max_buffering_delay_usecs must be non-negative integers")
def _():
    d = tmpdir()
    sp = stdin_spec(d, "min_batch_size_records: -1\n")
    _, err = run(["check", sp], expect=2)
    assert "'min_batch_size_records' must be an integer" in err, err


finish()
