"""`fld status` exit codes, reached for real: 3 NEW before any run, 0 RUNNING while an endless
datagen pipeline runs, 7 SUSPENDED after `fld stop`, 6 UNAVAILABLE after kill -9, 0 COMPLETED,
1 FAILED after a malformed CSV line, 4 for a damaged checkpoint, 5 when the storage cannot be read,
2 for a bad spec; --json prints the same state with the same code. A start that is refused
(storage locked, a changed program, a corrupt checkpoint) leaves the last published figures as
they were, and no uptime is ever negative."""

import json
import os
import re
import shutil
import signal
import subprocess
import time

from fldtest import FLD, Bg, check, finish, run, spec, status, tmpdir, write


ENDLESS = """
CREATE TABLE t (id BIGINT NOT NULL, v INT NOT NULL) WITH ('connectors' = '[{"transport": {"name": "datagen",
  "config": {"seed": 7, "plan": [{"rate": 5000, "fields": {"v": {"strategy": "uniform", "range": [1, 100]}}}]}}}]');
CREATE MATERIALIZED VIEW totals AS SELECT COUNT(*) AS n, SUM(v) AS s FROM t;
"""
FT = "fault_tolerance: {model: exactly_once, checkpoint_interval_secs: 1}\n"


def text_status(spec_path, expect):
    """`fld status SPEC` (text): asserts the exit code; returns stdout."""
    out, _ = run(["status", spec_path], expect=expect)
    assert not re.search(r"up -|-\d+(\.\d+)? s ago", out), f"a negative duration:\n{out}"
    return out


def uptime_ok(s):
    for key in ("live", "last_seen"):
        if key in s:
            assert s[key]["uptime_msecs"] >= 0, s
            assert s[key]["updated_unix_ms"] >= 0, s




d = tmpdir()
sp = spec(d, "endless", ENDLESS, FT)


@check("NEW before any run: exit 3 (json and text)")
def _():
    s = status(sp)
    assert s["state"] == "NEW" and s["step"] == 0 and s["last_checkpoint"] is None, s
    assert "live" not in s and "last_seen" not in s, s
    assert "NEW" in text_status(sp, 3)


SEEN = {}


@check("RUNNING while an endless datagen pipeline runs: exit 0, live figures moving, uptime >= 0")
def _():
    b = Bg(sp)
    SEEN["run"] = b
    s = b.wait_live(lambda s: s["live"]["total_processed_records"] > 0 and s["last_checkpoint"]["step"] > 0)
    uptime_ok(s)
    out = text_status(sp, 0)
    assert "RUNNING" in out and f"pid {b.p.pid}" in out, out
    time.sleep(0.6)
    later = status(sp)
    assert later["state"] == "RUNNING", later
    assert later["live"]["total_processed_records"] > s["live"]["total_processed_records"], "figures must move"


@check("a second run while it runs is refused (exit 3); the running process's figures are its own")
def _():
    b = SEEN["run"]
    _, err = run(["run", sp], expect=3)
    assert f"pid {b.p.pid}" in err, err
    s = status(sp)
    assert s["state"] == "RUNNING" and s["live"]["pid"] == b.p.pid, s
    uptime_ok(s)


@check("SUSPENDED after `fld stop`: exit 7 (json and text); last_seen is the stopped process's")
def _():
    b = SEEN["run"]
    run(["stop", sp])
    assert b.wait() == 0, b.stderr()
    s = status(sp)
    assert s["state"] == "SUSPENDED" and s["last_checkpoint"]["step"] == s["step"] > 0, s
    assert s["last_seen"]["pid"] == b.p.pid and s["last_seen"]["state"] == "SUSPENDED", s
    assert s["last_seen"]["total_processed_records"] == s["total_processed_records"] > 0, s
    uptime_ok(s)
    assert "SUSPENDED" in text_status(sp, 7)
    SEEN["suspended"] = s


def figures(s):
    """Everything status reports but who last took the lock (a refused start takes it briefly)."""
    return {k: v for k, v in s.items() if k != "last_holder"}


@check("a start refused for a changed program (exit 2) leaves status and its figures as they were")
def _():
    before = status(sp)
    with open(sp) as f:
        original = f.read()
    write(sp, original.replace("SUM(v) AS s", "SUM(v) + 1 AS s"))
    try:
        _, err = run(["run", sp], expect=2)
        assert "totals changed" in err, err
        after = status(sp)
        assert figures(after) == figures(before), (before, after)
        assert after["state"] == "SUSPENDED" and after["last_seen"]["pid"] == SEEN["run"].p.pid, after
        assert "SUSPENDED" in text_status(sp, 7)
    finally:
        write(sp, original)


@check("UNAVAILABLE after kill -9: exit 6 (json and text), with what the process last published")
def _():
    b = Bg(sp)
    s = b.wait_live(lambda s: s["live"]["step"] > SEEN["suspended"]["step"])
    b.p.send_signal(signal.SIGKILL)
    assert b.wait() == -signal.SIGKILL
    s = status(sp)
    assert s["state"] == "UNAVAILABLE", s
    assert s["last_seen"]["pid"] == b.p.pid and s["last_seen"]["state"] == "RUNNING", s
    assert s["last_seen"]["step"] > SEEN["suspended"]["step"], s
    uptime_ok(s)
    out = text_status(sp, 6)
    assert "UNAVAILABLE" in out and "last seen" in out, out
    SEEN["killed"] = b.p.pid


@check("a changed program refused after kill -9 leaves UNAVAILABLE and the killed process's figures")
def _():
    before = status(sp)
    with open(sp) as f:
        original = f.read()
    write(sp, original.replace("COUNT(*) AS n", "COUNT(*) + 0 AS n"))
    try:
        run(["run", sp], expect=2)
    finally:
        write(sp, original)
    after = status(sp)
    assert figures(after) == figures(before), (before, after)
    assert after["last_seen"]["pid"] == SEEN["killed"], after


@check("a start refused because the storage is locked leaves the running process's figures unchanged")
def _():
    # 50 rows at once, then a plan so slow (one row in ~3 hours) that the pipeline sits idle and
    # its figures stay put while second runs are refused.
    d2 = tmpdir()
    sp2 = spec(d2, "idle", """
CREATE TABLE t (a INT NOT NULL) WITH ('materialized' = 'true', 'connectors' = '[{"transport": {"name": "datagen",
  "config": {"seed": 1, "plan": [{"limit": 50}, {"rate": 0.0001}]}}}]');
""", "fault_tolerance: {model: exactly_once, checkpoint_interval_secs: 3600}\n")
    b = Bg(sp2)
    b.wait_live(lambda s: s["live"]["total_processed_records"] == 50)
    time.sleep(0.5)
    before = status(sp2)
    keys = ("pid", "state", "step", "total_input_records", "total_processed_records", "checkpoints", "connectors")
    for _ in range(3):
        _, err = run(["run", sp2], expect=3)
        assert f"pid {b.p.pid}" in err, err
    after = status(sp2)
    assert after["state"] == "RUNNING" and after["holder"] == before["holder"], after
    assert {k: after["live"][k] for k in keys} == {k: before["live"][k] for k in keys}, (before, after)
    assert after["live"]["uptime_msecs"] >= before["live"]["uptime_msecs"] >= 0, (before, after)
    run(["stop", sp2])
    assert b.wait() == 0, b.stderr()
    assert status(sp2)["state"] == "SUSPENDED"


@check("COMPLETED: exit 0 (json and text)")
def _():
    d3 = tmpdir()
    write(os.path.join(d3, "in.csv"), "1,2\n3,4\n")
    sp3 = spec(d3, "done", "CREATE TABLE t (a INT, b INT);",
               "connectors:\n  t:\n    - transport: {name: file_input, config: {path: in.csv}}\n"
               "      format: {name: csv}\n")
    run(["run", sp3])
    s = status(sp3)
    assert s["state"] == "COMPLETED" and s["pipeline_complete"] is True and s["total_processed_records"] == 2, s
    assert s["last_seen"]["state"] == "COMPLETED", s
    uptime_ok(s)
    assert "COMPLETED" in text_status(sp3, 0)


@check("FAILED after a malformed CSV line: exit 1 (json and text)")
def _():
    d4 = tmpdir()
    write(os.path.join(d4, "in.csv"), "1,2\n3,4\n5,x\n7,8\n")
    sp4 = spec(d4, "bad", "CREATE TABLE t (a INT, b INT);",
               "connectors:\n  t:\n    - transport: {name: file_input, config: {path: in.csv}}\n"
               "      format: {name: csv}\n      max_batch_size: 1\n")
    _, err = run(["run", sp4], expect=1)
    assert "in.csv:3:3" in err, err
    s = status(sp4)
    assert s["state"] == "FAILED" and s["total_processed_records"] == 2 and s["pipeline_complete"] is False, s
    assert s["last_seen"]["state"] == "FAILED", s
    uptime_ok(s)
    assert "FAILED" in text_status(sp4, 1)


def copy_storage():
    """A copy of the endless pipeline (killed above) in a fresh folder; returns the spec's path."""
    dc = tmpdir()
    shutil.copy(sp, dc)
    subprocess.run(["cp", "-a", os.path.join(d, "endless.fld"), dc], check=True)
    return os.path.join(dc, "endless.yaml")


@check("a damaged checkpoint: exit 4, --json says CORRUPTED with the message; a refused run changes no figure")
def _():
    spc = copy_storage()
    good = status(spc)
    assert good["state"] == "UNAVAILABLE", good
    mdb = os.path.join(os.path.dirname(spc), "endless.fld", "state", "data.mdb")
    with open(mdb, "rb") as f:
        data = bytearray(f.read())
    n = 0
    for m in re.finditer(rb'"row":(\d+)', bytes(data)):  # every copy of the datagen position
        i = m.start(1)
        data[i] = ord("0") + (data[i] - ord("0") + 1) % 10
        n += 1
    assert n > 0, "no datagen position found in data.mdb"
    with open(mdb, "wb") as f:
        f.write(data)
    p = subprocess.run([FLD, "status", spc, "--json"], capture_output=True, text=True)
    assert p.returncode == 4, (p.returncode, p.stdout, p.stderr)
    s = json.loads(p.stdout)
    assert s["state"] == "CORRUPTED" and "checkpoint is corrupted" in s["error"], s
    assert "checkpoint is corrupted" in p.stderr, p.stderr
    _, err = run(["status", spc], expect=4)
    assert "checkpoint is corrupted" in err, err
    with open(os.path.join(os.path.dirname(spc), "endless.fld", "status"), "rb") as f:
        live_before = f.read()
    run(["run", spc], expect=4)
    with open(os.path.join(os.path.dirname(spc), "endless.fld", "status"), "rb") as f:
        assert f.read() == live_before, "a refused start rewrote the published figures"


@check("a state store that cannot be read: exit 5, --json says IO_ERROR")
def _():
    spc = copy_storage()
    state = os.path.join(os.path.dirname(spc), "endless.fld", "state")
    os.remove(os.path.join(state, "lock.mdb"))
    os.mkdir(os.path.join(state, "lock.mdb"))  # LMDB cannot open its lock file
    p = subprocess.run([FLD, "status", spc, "--json"], capture_output=True, text=True)
    assert p.returncode == 5, (p.returncode, p.stdout, p.stderr)
    s = json.loads(p.stdout)
    assert s["state"] == "IO_ERROR" and state in s["error"], s
    _, err = run(["status", spc], expect=5)
    assert state in err, err


@check("bad command line or spec: exit 2")
def _():
    _, err = run(["status", os.path.join(d, "missing.yaml")], expect=2)
    assert "missing.yaml" in err, err
    run(["status", sp, "--bogus"], expect=2)
    run(["status"], expect=2)
    bad = write(os.path.join(d, "bad.yaml"), "name: e\nwrokers: 2\nsql: 'CREATE TABLE t (a INT)'\n")
    _, err = run(["status", bad, "--json"], expect=2)
    assert "'wrokers'" in err, err


finish()
