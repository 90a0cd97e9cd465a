"""Shared helpers for fld's end-to-end tests: run the real binary on real files and compare its
answers with an independent oracle (sqlite3 over the same data, or a recomputation in Python).

Each test file is a script: `python3 test_x.py PATH/TO/fld`. It prints one line per check and a
closing line `N passed, N failed`, and exits non-zero when a check failed."""

import csv
import io
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import traceback

FLD = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else "fld"

_results = {"passed": 0, "failed": 0}


def check(name):
    """Decorator: runs the function as one named check, recording pass/fail."""

    def wrap(fn):
        try:
            fn()
            _results["passed"] += 1
            print(f"ok   {name}", flush=True)
        except Exception:  # noqa: BLE001 - report every failure, keep going
            _results["failed"] += 1
            print(f"FAIL {name}", flush=True)
            traceback.print_exc()
        return fn

    return wrap


_made = []  # folders tmpdir() made


def finish():
    """Prints the totals and exits: 1 when a check failed. The folders tmpdir() made are removed
    when every check passed (a run of the e2e tests leaves gigabytes of state stores, and repeated
    runs filled a disk), and kept, with their paths printed, for a look otherwise."""
    if _results["failed"]:
        for d in _made:
            print(f"kept {d}")
    else:
        for d in _made:
            shutil.rmtree(d, ignore_errors=True)
    print(f"{_results['passed']} passed, {_results['failed']} failed")
    sys.exit(1 if _results["failed"] else 0)


def tmpdir():
    d = tempfile.mkdtemp(prefix="fld-e2e-")
    _made.append(d)
    return d


def run(args, expect=0, timeout=600, stdin=None):
    """Runs fld; asserts the exit code; returns (stdout, stderr)."""
    p = subprocess.run([FLD] + args, capture_output=True, text=True, timeout=timeout, input=stdin)
    if expect is not None and p.returncode != expect:
        raise AssertionError(
            f"fld {' '.join(args)}: exit {p.returncode}, expected {expect}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}")
    return p.stdout, p.stderr


_bg_logs = None


class Bg:
    """A `fld run --quiet` in the background; its stderr goes to a file kept out of the pipeline
    folders (tests snapshot those)."""

    def __init__(self, spec_path, *args, stdin=None):
        global _bg_logs
        if _bg_logs is None:
            _bg_logs = tmpdir()
        self.err_path = os.path.join(_bg_logs, f"run-{time.monotonic_ns()}.err")
        self.errf = open(self.err_path, "w")
        self.p = subprocess.Popen([FLD, "run", "--quiet", *args, spec_path], stdout=subprocess.DEVNULL,
                                  stderr=self.errf, stdin=stdin)
        self.spec = spec_path

    def stderr(self):
        with open(self.err_path) as f:
            return f.read()

    def wait(self, timeout=60):
        rc = self.p.wait(timeout)
        self.errf.close()
        return rc

    def _wait_status(self, pred, timeout, what):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.p.poll() is None, f"run ended early with {self.p.returncode}:\n{self.stderr()}"
            s = status(self.spec)
            if s["state"] == "RUNNING" and pred(s):
                return s
            time.sleep(0.05)
        raise AssertionError(f"{what} in time: {status(self.spec)}")

    def wait_live(self, pred=lambda s: True, timeout=30):
        """Waits until status is RUNNING with this process's live figures satisfying pred."""
        return self._wait_status(lambda s: "live" in s and s["live"]["pid"] == self.p.pid and pred(s), timeout,
                                 "not RUNNING with live figures")

    def wait_checkpoint(self, min_step=1, timeout=30):
        """Waits until a checkpoint at step >= min_step is stored while the run goes on."""
        return self._wait_status(lambda s: s["last_checkpoint"] and s["last_checkpoint"]["step"] >= min_step,
                                 timeout, "no checkpoint")

    def kill_after_checkpoint(self, extra=0.4):
        """Kills the run with SIGKILL a little after its first checkpoint; returns that status."""
        s = self.wait_checkpoint()
        time.sleep(extra)
        self.p.kill()
        assert self.wait() == -signal.SIGKILL, "the run ended before it was killed"
        return s


# `fld status` exits with its state's code (man/fld-status.1).
STATUS_CODES = {"RUNNING": 0, "COMPLETED": 0, "FAILED": 1, "NEW": 3, "CORRUPTED": 4, "IO_ERROR": 5,
                "UNAVAILABLE": 6, "SUSPENDED": 7}


def status(spec_path):
    """Runs `fld status SPEC --json`; asserts that the exit code is the printed state's; returns the
    object."""
    p = subprocess.run([FLD, "status", spec_path, "--json"], capture_output=True, text=True, timeout=60)
    try:
        s = json.loads(p.stdout)
    except ValueError:
        raise AssertionError(f"fld status --json: exit {p.returncode}, no JSON\nstdout:\n{p.stdout}\n"
                             f"stderr:\n{p.stderr}") from None
    if p.returncode != STATUS_CODES.get(s.get("state")):
        raise AssertionError(f"fld status --json: state {s.get('state')} but exit {p.returncode}\n{p.stdout}\n"
                             f"{p.stderr}")
    return s


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


def spec(dirname, name, sql, extra=""):
    """Writes a spec file with the SQL as a block scalar; returns its path."""
    body = "\n".join("  " + line for line in sql.strip("\n").split("\n"))
    return write(os.path.join(dirname, name + ".yaml"), f"name: {name}\nsql: |\n{body}\n{extra}")


def query(spec_path, sql):
    """Runs `fld query --format json`; returns the rows as a sorted list of tuples."""
    out, _ = run(["query", spec_path, sql, "--format", "json"])
    rows = [json.loads(line) for line in out.splitlines() if line.strip()]
    return sorted((tuple(norm(v) for v in r.values()) for r in rows), key=repr)


def norm(v):
    """Normalizes a value for comparison: floats rounded, bools as ints."""
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, float):
        return round(v, 6)
    return v


def sqlite_rows(conn, sql):
    return sorted((tuple(norm(v) for v in r) for r in conn.execute(sql).fetchall()), key=repr)


def integrate_json(path):
    """Sums the weights of an output file of {"insert": row} / {"delete": row} lines."""
    acc = {}
    with open(path) as f:
        for line in f:
            if not line.strip():
                continue
            rec = json.loads(line)
            if "insert" in rec:
                key, w = tuple(norm(v) for v in rec["insert"].values()), 1
            else:
                key, w = tuple(norm(v) for v in rec["delete"].values()), -1
            acc[key] = acc.get(key, 0) + w
    return expand(acc)


def integrate_csv(path, types):
    """Sums the weights (last field) of a CSV output file; `types` converts each column."""
    acc = {}
    with open(path, newline="") as f:
        for rec in csv.reader(f):
            if not rec:
                continue
            *vals, w = rec
            key = tuple(None if v == "" else t(v) for v, t in zip(vals, types))
            acc[key] = acc.get(key, 0) + int(w)
    return expand(acc)


def expand(acc):
    rows = []
    for k, w in acc.items():
        if w < 0:
            raise AssertionError(f"row {k} has negative total weight {w}")
        rows.extend([k] * w)
    return sorted(rows, key=repr)


def assert_eq(actual, expected, what=""):
    if actual != expected:
        a, e = list(actual), list(expected)
        raise AssertionError(f"{what} differs:\n actual   ({len(a)}): {a[:20]}\n expected ({len(e)}): {e[:20]}")
