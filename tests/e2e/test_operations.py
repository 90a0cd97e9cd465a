"""Operating a running pipeline: live `fld status` (counters, throughput samples, connectors),
UNAVAILABLE with the last-seen counters after kill -9, and `fld query` while the pipeline runs:
every snapshot is a whole checkpoint, so the bank's balances always sum to zero."""

import json
import os
import re
import signal
import subprocess
import time

import fldtest
from fldtest import FLD, assert_eq, check, finish, run, tmpdir

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
with open(os.path.join(ROOT, "pipelines", "examples", "bank.yaml")) as f:
    BANK = f.read()

d = tmpdir()
spec = os.path.join(d, "bank.yaml")
with open(spec, "w") as f:
    f.write(re.sub(r'"limit": \d+', '"limit": 30000000, "rate": 4000000', BANK)
            + "fault_tolerance: {model: exactly_once, checkpoint_interval_secs: 1}\n")

proc = subprocess.Popen([FLD, "run", "--quiet", spec], stderr=subprocess.PIPE, text=True)
time.sleep(1.5)


def status():
    return fldtest.status(spec)


@check("status while running: RUNNING with live counters, 60 throughput samples, the datagen connector")
def _():
    s = status()
    assert s["state"] == "RUNNING", s
    live = s["live"]
    assert live["pid"] == proc.pid and live["total_processed_records"] > 0, live
    assert len(live["throughput_samples"]) == 60 and sum(live["throughput_samples"]) > 0, live
    assert live["connectors"][0]["direction"] == "input" and "datagen" in live["connectors"][0]["name"], live
    for key in ("state", "step", "total_processed_records", "pipeline_complete", "last_checkpoint"):
        assert key in s, key
    time.sleep(1.2)
    later = status()["live"]
    assert later["total_processed_records"] > live["total_processed_records"], "counters must move"


snapshots = []


@check("queries during the run see whole checkpoints: SUM(balance) is 0 in every snapshot")
def _():
    deadline = time.time() + 4
    while time.time() < deadline:
        out, _ = run(["query", spec, "SELECT COUNT(*) AS n, SUM(balance) AS s FROM balance", "--format", "json"])
        row = json.loads(out)
        if row["n"] > 0:
            assert row["s"] == 0, row
        out, _ = run(["query", spec, "SELECT account, balance FROM balance ORDER BY account", "--format", "csv"])
        snapshots.append(out)
        time.sleep(0.2)
    assert len(set(snapshots)) >= 2, "the pipeline advanced, so later snapshots must differ"


@check("after kill -9: UNAVAILABLE, with what the process last published")
def _():
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    s = status()
    assert s["state"] == "UNAVAILABLE", s
    assert s["last_seen"]["pid"] == proc.pid and s["last_seen"]["total_processed_records"] > 0, s
    out, _ = run(["status", spec], expect=6)
    assert "UNAVAILABLE" in out and "last seen" in out and "resumes" in out, out


@check("resumed after the kill, it completes; status COMPLETED; balance sums to zero")
def _():
    _, err = run(["run", spec, "--quiet"], timeout=120)
    assert "resuming bank from checkpoint at step" in err, err
    s = status()
    assert s["state"] == "COMPLETED" and s["pipeline_complete"] is True, s
    assert s["total_processed_records"] == 30000000, s
    out, _ = run(["query", spec, "SELECT SUM(balance) AS s FROM balance", "--format", "json"])
    assert json.loads(out)["s"] == 0, out


@check("fld checkpoint and fld stop act on the running process; stopping a stopped pipeline is an error")
def _():
    d2 = tmpdir()
    spec2 = os.path.join(d2, "bank.yaml")
    with open(spec2, "w") as f:
        f.write(re.sub(r'"limit": \d+', '"limit": 50000000, "rate": 4000000', BANK)
                + "fault_tolerance: {model: exactly_once, checkpoint_interval_secs: 3600}\n")
    p = subprocess.Popen([FLD, "run", "--quiet", spec2], stderr=subprocess.PIPE, text=True)
    time.sleep(1.0)
    before = fldtest.status(spec2)["last_checkpoint"]["step"]
    run(["checkpoint", spec2])
    deadline = time.time() + 5
    while fldtest.status(spec2)["last_checkpoint"]["step"] == before:
        assert time.time() < deadline, "no checkpoint after `fld checkpoint`"
        time.sleep(0.1)
    run(["stop", spec2])
    assert p.wait(timeout=10) == 0
    s = fldtest.status(spec2)
    assert s["state"] == "SUSPENDED", s
    _, err = run(["stop", spec2], expect=2)
    assert "not running" in err, err


@check("interactive query prompt on a terminal: multi-line statements, errors with a caret, history kept")
def _():
    import pty
    import select
    home = tmpdir()
    pid, fd = pty.fork()
    if pid == 0:
        os.environ["HOME"] = home
        os.execv(FLD, ["fld", "query", spec])
    out = b""

    def read(t):
        nonlocal out
        end = time.time() + t
        while time.time() < end:
            r, _, _ = select.select([fd], [], [], 0.05)
            if r:
                try:
                    out += os.read(fd, 65536)
                except OSError:
                    return

    for line, wait in ((b"SELECT SUM(balance)\n", 0.3), (b"  AS s FROM balance;\n", 1.5),
                       (b"SELECT nope FROM balance;\n", 1.5), (b"SELECT COUNT(*) AS n FROM balance;\n", 1.5),
                       (b"\\q\n", 1.0)):
        os.write(fd, line)
        read(wait)
    _, status = os.waitpid(pid, 0)
    text = out.decode(errors="replace")
    assert os.WEXITSTATUS(status) == 0, text
    assert "| s |" in text and "| 0 |" in text, text
    assert "unknown column 'nope'" in text and "^" in text, text
    assert "| 9 |" in text, text  # the prompt goes on after an error
    with open(os.path.join(home, ".fld_history")) as f:
        hist = f.read()
    assert "nope" in hist and "COUNT" in hist, hist


def environ(pid):
    with open(f"/proc/{pid}/environ", "rb") as f:
        return dict(kv.split(b"=", 1) for kv in f.read().split(b"\0") if b"=" in kv)


def heap_advised_huge(pid):
    """Whether malloc's heap ([heap] in smaps) is advised as huge pages (VmFlags "hg")."""
    with open(f"/proc/{pid}/smaps") as f:
        in_heap = False
        for line in f:
            if line.rstrip().endswith("[heap]"):
                in_heap = True
            elif in_heap and line.startswith("VmFlags:"):
                return "hg" in line.split()
    return False


def thp_enabled():
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            return "[never]" not in f.read()
    except OSError:
        return False


@check("fld run advises malloc's heap as huge pages (re-executed once, same pid); GLIBC_TUNABLES naming it is kept")
def _():
    d2 = tmpdir()
    spec2 = os.path.join(d2, "bank.yaml")
    with open(spec2, "w") as f:
        f.write(re.sub(r'"limit": \d+', '"limit": 30000000, "rate": 1000', BANK))
    thp = thp_enabled()
    # (given GLIBC_TUNABLES, whether the heap must end up advised)
    for given, huge in ((None, thp), ("glibc.malloc.mxfast=64", thp), ("glibc.malloc.hugetlb=0", False)):
        env = dict(os.environ)
        env.pop("GLIBC_TUNABLES", None)
        if given:
            env["GLIBC_TUNABLES"] = given
        p = subprocess.Popen([FLD, "run", "--quiet", spec2], stderr=subprocess.DEVNULL, env=env)
        try:
            deadline = time.time() + 1.5
            while time.time() < deadline and not (huge and heap_advised_huge(p.pid)):
                time.sleep(0.05)
            assert p.poll() is None, p.returncode  # the same process, still running
            assert heap_advised_huge(p.pid) == huge, (given, huge)
            if given is None and huge:
                assert environ(p.pid).get(b"GLIBC_TUNABLES") == b"glibc.malloc.hugetlb=1"
            if given == "glibc.malloc.hugetlb=0":
                assert environ(p.pid).get(b"GLIBC_TUNABLES") == given.encode()
        finally:
            p.kill()
            p.wait()


finish()
