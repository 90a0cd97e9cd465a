"""Fault tolerance end to end: one writer per storage folder, kill -9 and resume, graceful stops
(SIGTERM, SIGINT), `fld status`, refusing a changed program, `fld clear`, a torn log tail, damage
in the middle of the log or in the checkpoint, the at_least_once and none models, and a storage
folder moved to another path. Every interrupted run must end with the same views (via `fld query`)
and byte-identical output files as one uninterrupted reference run, whose balance is itself checked
against a recomputation in Python from its own output of the generated transactions.

The pipeline: a rate-limited datagen (ROWS rows at RATE rows/s in steps of BATCH rows, so a run
lasts ~2.5 s and its step boundaries do not depend on timing) and a small CSV file input; views with
aggregates and joins; a CSV output on the table and a JSON output on a view; a checkpoint every
second."""

import collections
import concurrent.futures
import datetime
import json
import os
import re
import signal
import struct
import subprocess
import time

from fldtest import FLD, Bg, assert_eq, check, finish, query, run, status, tmpdir, write

ROWS = 300_000
RATE = 120_000
BATCH = 1_000
OUTPUTS = ["tx.csv", "balance.json"]
VIEWS = {
    "balance": "SELECT account, balance FROM balance",
    "owners": "SELECT owner, balance FROM owners",
    "stats": "SELECT n, total, last_ts FROM stats",
}
NAMES = ["Ada", "Bruno", "Clara", "Dmitri", "Elena", "Farid", "Greta", "Hiro", "Ines"]


def sql(balance="credits - debits", seed=3):
    datagen = json.dumps([{
        "transport": {"name": "datagen", "config": {**({"seed": seed} if seed is not None else {}), "plan": [{
            "limit": ROWS, "rate": RATE,
            "fields": {"from_account": {"strategy": "uniform", "range": [1, 10]},
                       "to_account": {"strategy": "uniform", "range": [1, 10]},
                       "amount": {"strategy": "zipf", "range": [1, 1000]},
                       "ts": {"scale": 1000}}}]}},
        "max_batch_size": BATCH}])
    return f"""
CREATE TABLE tx (
    from_account INT NOT NULL,
    to_account INT NOT NULL,
    amount INT NOT NULL,
    ts TIMESTAMP NOT NULL
) WITH ('connectors' = '{datagen}');
CREATE TABLE accounts (account INT NOT NULL PRIMARY KEY, owner VARCHAR NOT NULL);
CREATE VIEW credits AS SELECT to_account AS account, SUM(amount) AS credits FROM tx GROUP BY to_account;
CREATE VIEW debits AS SELECT from_account AS account, SUM(amount) AS debits FROM tx GROUP BY from_account;
CREATE MATERIALIZED VIEW balance AS SELECT credits.account AS account, {balance} AS balance
  FROM credits, debits WHERE credits.account = debits.account;
CREATE MATERIALIZED VIEW owners AS
  SELECT accounts.owner, balance.balance FROM balance JOIN accounts ON balance.account = accounts.account;
CREATE MATERIALIZED VIEW stats AS SELECT COUNT(*) AS n, SUM(amount) AS total, MAX(ts) AS last_ts FROM tx;
"""


def make(d, model="exactly_once", balance="credits - debits", balance_path="balance.json", storage="st.fld",
         seed=3):
    """Writes the pipeline (spec, accounts.csv) into folder d; returns the spec's path."""
    os.makedirs(d, exist_ok=True)
    if not os.path.exists(os.path.join(d, "accounts.csv")):
        write(os.path.join(d, "accounts.csv"), "".join(f"{i + 1},{n}\n" for i, n in enumerate(NAMES)))
    body = "\n".join("  " + line for line in sql(balance, seed).strip("\n").split("\n"))
    return write(os.path.join(d, "ft.yaml"), f"""name: ft
sql: |
{body}
connectors:
  accounts:
    - transport: {{name: file_input, config: {{path: accounts.csv}}}}
      format: {{name: csv}}
      max_batch_size: 3
  tx:
    - transport: {{name: file_output, config: {{path: tx.csv}}}}
      format: {{name: csv}}
  balance:
    - transport: {{name: file_output, config: {{path: {balance_path}}}}}
      format: {{name: json}}
storage: {{path: {storage}}}
fault_tolerance: {{model: {model}, checkpoint_interval_secs: 1}}
""")


def read(path):
    with open(path, "rb") as f:
        return f.read()


def results(spec_path):
    d = os.path.dirname(spec_path)
    views = {v: query(spec_path, q) for v, q in VIEWS.items()}
    files = {o: read(os.path.join(d, o)) for o in OUTPUTS}
    return views, files


def assert_identical(spec_path, what):
    views, files = results(spec_path)
    for v in VIEWS:
        assert_eq(views[v], REF_VIEWS[v], f"{what}: view {v}")
    for o in OUTPUTS:
        if files[o] != REF_FILES[o]:
            raise AssertionError(f"{what}: {o} differs from the uninterrupted run ({len(files[o])} bytes vs "
                                 f"{len(REF_FILES[o])}; common prefix {common_prefix(files[o], REF_FILES[o])})")


def common_prefix(a, b):
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n




def snapshot(d):
    """Every file under d (but the spec, which tests rewrite, and the lock files and the live status
    file, which a refused run may rewrite) -> its bytes."""
    out = {}
    for root, _, files in os.walk(d):
        for f in files:
            p = os.path.join(root, f)
            rel = os.path.relpath(p, d)
            if rel in ("ft.yaml", "st.fld/lock", "st.fld/status", os.path.join("st.fld", "state", "lock.mdb")):
                continue
            out[rel] = read(p)
    return out


def assert_unchanged(before, d, what):
    after = snapshot(d)
    assert sorted(after) == sorted(before), f"{what}: files {sorted(before)} became {sorted(after)}"
    for k in before:
        assert after[k] == before[k], f"{what}: {k} changed"


def copy(src, dst):
    subprocess.run(["cp", "-a", src, dst], check=True)
    return os.path.join(dst, "ft.yaml")


def segments(d):
    w = os.path.join(d, "st.fld", "wal")
    return sorted(os.path.join(w, f) for f in os.listdir(w) if f.endswith(".log")) if os.path.isdir(w) else []


def header_written(path):
    """False for a segment being created (no header yet) or one deleted after a checkpoint."""
    try:
        return os.path.getsize(path) >= 16
    except FileNotFoundError:
        return False


def kill_when_logged(b, d, n, after_seq=0, timeout=30):
    """Kills run b as soon as its log holds n whole records numbered above after_seq."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert b.p.poll() is None, f"run ended early with {b.p.returncode}:\n{b.stderr()}"
        segs = [s for s in segments(d) if header_written(s)]
        if segs and sum(1 for _, _, seq in records(segs[-1]) if seq > after_seq) >= n:
            b.p.kill()
            assert b.wait() == -signal.SIGKILL
            return
        time.sleep(0.01)
    raise AssertionError("the run logged nothing in time")


def records(path):
    """(start, end, seq) of every whole record of a log segment (format: wal/log_format.h)."""
    data = read(path)
    assert data[:8] == b"FLDWAL01", path
    out, pos = [], 16
    while pos + 17 <= len(data):
        length, _crc, seq = struct.unpack_from("<IIQ", data, pos)
        end = pos + 17 + length
        if end > len(data):
            break
        out.append((pos, end, seq))
        pos = end
    return out


# ---- the uninterrupted reference run, checked against an independent recomputation ----

t0 = time.monotonic()
ref_dir = tmpdir()
ref_spec = make(ref_dir)


@check("status before any run is NEW")
def _():
    s = status(ref_spec)
    assert s["state"] == "NEW" and s["step"] == 0 and s["last_checkpoint"] is None, s


ref_out, ref_err = run(["run", ref_spec])
REF_VIEWS, REF_FILES = results(ref_spec)
REF_SECS = time.monotonic() - t0
print(f"reference run: {REF_SECS:.2f} s", flush=True)


@check("reference run: balance, owners and stats equal a recomputation from tx.csv")
def _():
    bal, n, total, last = collections.Counter(), 0, 0, ""
    for line in REF_FILES["tx.csv"].decode().splitlines():
        f, t, a, ts, w = line.split(",")
        assert w == "1", line
        bal[int(t)] += int(a)
        bal[int(f)] -= int(a)
        n, total, last = n + 1, total + int(a), max(last, ts)
    assert n == ROWS, n
    assert_eq(REF_VIEWS["balance"], sorted(bal.items()), "balance")
    assert_eq(REF_VIEWS["owners"], sorted(((NAMES[a - 1], b) for a, b in bal.items()), key=repr), "owners")
    assert_eq(REF_VIEWS["stats"], [(ROWS, total, last)], "stats")
    # The view's output, integrated, is the view.
    acc = collections.Counter()
    for line in REF_FILES["balance.json"].decode().splitlines():
        rec = json.loads(line)
        k = "insert" if "insert" in rec else "delete"
        acc[(rec[k]["account"], rec[k]["balance"])] += 1 if k == "insert" else -1
    assert_eq(sorted(k for k, w in acc.items() for _ in range(w)), REF_VIEWS["balance"], "integrated balance.json")


@check("status after completion is COMPLETED; a rerun with no new input exits 0 at once, says so and changes nothing")
def _():
    s = status(ref_spec)
    assert s["state"] == "COMPLETED" and s["pipeline_complete"] is True, s
    assert s["total_processed_records"] == ROWS + len(NAMES), s
    assert s["last_checkpoint"]["step"] == s["step"] > 0, s
    before = snapshot(ref_dir)
    t = time.monotonic()
    _, err = run(["run", ref_spec])
    assert time.monotonic() - t < 1.5, "rerun of a completed pipeline took too long"
    assert "no new input since step" in err, err
    assert_unchanged(before, ref_dir, "rerun of a completed pipeline")
    assert status(ref_spec)["state"] == "COMPLETED"


# ---- one writer: a second run is refused; kill -9 frees the lock ----

@check("a second run on the same storage is refused at once (exit 3, names the pid); after kill -9 a new "
       "run takes over and completes identical")
def _():
    d = tmpdir()
    sp = make(d)
    first = Bg(sp)
    s = first.wait_checkpoint(min_step=0)
    for key in ("state", "step", "total_processed_records", "pipeline_complete", "last_checkpoint"):
        assert key in s, (key, s)
    assert s["state"] == "RUNNING" and s["pipeline_complete"] is False, s
    assert s["holder"]["pid"] == first.p.pid, s
    t = time.monotonic()
    _, err = run(["run", sp], expect=3)
    assert time.monotonic() - t < 1.5, "the second run was not refused at once"
    assert f"pid {first.p.pid}" in err, err
    # fld clear is refused too while the pipeline runs, and deletes nothing.
    run(["clear", "--yes", sp], expect=3)
    first.kill_after_checkpoint(0.2)
    s = status(sp)
    assert s["state"] == "UNAVAILABLE", s
    assert s["last_holder"]["pid"] == first.p.pid, s
    for o in OUTPUTS:
        assert REF_FILES[o].startswith(read(os.path.join(d, o))), f"{o} after kill -9 is no prefix of the reference"
    _, err = run(["run", sp])
    assert re.search(r"resuming ft from checkpoint at step [1-9]\d*, replaying \d+ steps", err), err
    assert_identical(sp, "taken over after kill -9")
    assert status(sp)["state"] == "COMPLETED"


# ---- graceful stops ----

def graceful(sig):
    d = tmpdir()
    sp = make(d)
    b = Bg(sp)
    b.wait_checkpoint()
    time.sleep(0.2)
    t = time.monotonic()
    b.p.send_signal(sig)
    rc = b.wait(timeout=30)
    secs = time.monotonic() - t
    assert rc == 0, f"exit {rc} after {sig.name}:\n{b.stderr()}"
    assert secs < 5, f"{sig.name}: took {secs:.1f} s to stop"
    s = status(sp)
    assert s["state"] == "SUSPENDED" and 0 < s["step"] == s["last_checkpoint"]["step"], s
    assert s["total_processed_records"] < ROWS, s
    _, err = run(["run", sp])
    assert re.search(r"resuming ft from checkpoint at step \d+, replaying 0 steps", err), err
    assert_identical(sp, f"resumed after {sig.name}")
    return d, sp


@check("SIGTERM: exits 0 within seconds, SUSPENDED, resumes replaying 0 steps, identical")
def _():
    graceful(signal.SIGTERM)


SUSPENDED = {}


@check("SIGINT: exits 0 within seconds, SUSPENDED, resumes replaying 0 steps, identical")
def _():
    SUSPENDED["d"], SUSPENDED["spec"] = graceful(signal.SIGINT)


# ---- a changed program or connector configuration ----

@check("changed SQL or connector config: refused (exit 2) naming what changed and --reset; --reset runs the new "
       "program")
def _():
    d, sp = SUSPENDED["d"], SUSPENDED["spec"]
    before = snapshot(d)
    make(d, balance="debits - credits")
    _, err = run(["run", sp], expect=2)
    assert "balance changed" in err and "--reset" in err, err
    make(d, balance_path="balance2.json")
    _, err = run(["run", sp], expect=2)
    assert "connector" in err and "balance" in err and "--reset" in err, err
    assert_unchanged(before, d, "refused runs")
    make(d, balance="debits - credits")
    run(["run", "--reset", sp])
    assert_eq(query(sp, VIEWS["balance"]), sorted((a, -b) for a, b in REF_VIEWS["balance"]), "balance after --reset")
    assert_eq(query(sp, VIEWS["stats"]), REF_VIEWS["stats"], "stats after --reset")
    assert status(sp)["state"] == "COMPLETED"


@check("fld clear: without --yes and 'n' deletes nothing; with --yes deletes the state (status NEW)")
def _():
    d, sp = SUSPENDED["d"], SUSPENDED["spec"]
    before = snapshot(d)
    _, err = run(["clear", sp], expect=None, stdin="n\n")
    assert "not deleted" in err, err
    assert_unchanged(before, d, "clear answered n")
    assert status(sp)["state"] == "COMPLETED"
    run(["clear", "--yes", sp])
    s = status(sp)
    assert s["state"] == "NEW" and s["last_checkpoint"] is None and s["log_segments"] == 0, s
    assert not os.path.exists(os.path.join(d, "st.fld", "state")) and not os.path.exists(os.path.join(d, "st.fld", "wal"))
    # Outputs are not part of the storage.
    assert os.path.exists(os.path.join(d, "tx.csv"))


# ---- a killed run's storage: torn tail, corruption, a moved folder ----

killed_dir = tmpdir()
killed_spec = make(killed_dir)
kb = Bg(killed_spec)
kb.kill_after_checkpoint(0.4)
KILLED_CKPT = status(killed_spec)["last_checkpoint"]["step"]  # the last one before the kill
KILLED_SNAPSHOT = snapshot(killed_dir)
last_seg = segments(killed_dir)[-1]
LAST_RECS = records(last_seg)
print(f"killed run: checkpoint at step {KILLED_CKPT}, last segment {os.path.basename(last_seg)} with "
      f"{len(LAST_RECS)} records", flush=True)


@check("status after kill -9 is UNAVAILABLE")
def _():
    assert status(killed_spec)["state"] == "UNAVAILABLE"


@check("torn log tail: cut inside the last record at several offsets (and zeros appended): resume cuts it, warns, "
       "replays the whole records and ends identical")
def _():
    assert len(LAST_RECS) >= 2, f"the last segment holds {len(LAST_RECS)} records"
    start, end, seq = LAST_RECS[-1]
    assert seq == LAST_RECS[0][2] + len(LAST_RECS) - 1
    cases = [("cut", start + 1), ("cut", start + 9), ("cut", start + 17), ("cut", (start + end) // 2),
             ("cut", end - 1), ("zeros", 64)]
    for kind, arg in cases:
        d = tmpdir()
        sp = copy(killed_dir + "/.", d)
        seg = os.path.join(d, os.path.relpath(last_seg, killed_dir))
        if kind == "cut":
            os.truncate(seg, arg)
            whole = seq - 1
        else:
            with open(seg, "ab") as f:
                f.write(b"\0" * arg)
            whole = seq
        _, err = run(["run", sp])
        what = f"{kind} {arg}"
        assert "cutting the torn end of the log" in err, (what, err)
        assert os.path.basename(seg) in err, (what, err)
        assert f"replaying {whole - KILLED_CKPT} steps" in err, (what, whole, KILLED_CKPT, err)
        assert_identical(sp, f"torn tail ({what})")


@check("bit flip in a middle log record: exit 4 naming file and offset; nothing changed")
def _():
    assert len(LAST_RECS) >= 3
    start, end, seq = LAST_RECS[len(LAST_RECS) // 2]
    d = tmpdir()
    sp = copy(killed_dir + "/.", d)
    seg = os.path.join(d, os.path.relpath(last_seg, killed_dir))
    data = bytearray(read(seg))
    data[(start + end) // 2] ^= 0x10
    with open(seg, "wb") as f:
        f.write(data)
    before = snapshot(d)
    _, err = run(["run", sp], expect=4)
    assert seg in err and f"offset {start}" in err, err
    assert_unchanged(before, d, "refused corrupted log")


@check("bit flip in the checkpoint (every copy of the input position in data.mdb): exit 4; nothing changed")
def _():
    d = tmpdir()
    sp = copy(killed_dir + "/.", d)
    mdb = os.path.join(d, "st.fld", "state", "data.mdb")
    data = bytearray(read(mdb))
    n = 0
    for m in re.finditer(rb'"row":(\d+)', bytes(data)):
        i = m.start(1)
        data[i] = ord("0") + (data[i] - ord("0") + 1) % 10
        n += 1
    assert n > 0, "no input position found in data.mdb"
    with open(mdb, "wb") as f:
        f.write(data)
    before = snapshot(d)
    _, err = run(["run", sp], expect=4)
    assert "checkpoint" in err and "corrupt" in err and os.path.join(d, "st.fld", "state") in err, err
    s = status(sp)  # exit 4 too
    assert s["state"] == "CORRUPTED" and "checkpoint is corrupted" in s["error"], s
    assert_unchanged(before, d, "refused corrupted checkpoint")


@check("a flip in any byte of a stored row (every copy in data.mdb): exit 4 naming the state folder, or for a copy "
       "LMDB no longer uses exit 0 identical; never a crash")
def _():
    key = b"\x01" + struct.pack("<q", 3) + b"\x03" + struct.pack("<I", 5) + b"Clara"  # accounts row (3, 'Clara')
    mdb_rel = os.path.join("st.fld", "state", "data.mdb")
    data = read(os.path.join(killed_dir, mdb_rel))
    where = [m.start() for m in re.finditer(re.escape(key), data)]
    assert where, "the row encoding was not found in data.mdb"

    def trial(off):
        d = tmpdir()
        sp = copy(killed_dir + "/.", d)
        b = bytearray(data)
        b[off] ^= 0x04
        with open(os.path.join(d, mdb_rel), "wb") as f:
            f.write(b)
        before = snapshot(d)
        p = subprocess.run([FLD, "run", "--quiet", sp], capture_output=True, text=True, timeout=120)
        if p.returncode == 4:
            assert os.path.join(d, "st.fld", "state") in p.stderr, p.stderr
            assert_unchanged(before, d, f"flip at {off}")
        else:
            assert p.returncode == 0, f"flip at {off}: exit {p.returncode}: {p.stderr[-300:]}"
            assert_identical(sp, f"flip at {off} (unused copy)")
        subprocess.run(["rm", "-rf", d])
        return p.returncode

    with concurrent.futures.ThreadPoolExecutor(4) as ex:
        codes = {w: list(ex.map(trial, range(w, w + len(key)))) for w in where}
    assert any(all(c == 4 for c in cs) for cs in codes.values()), f"no copy had every flip detected: {codes}"
    print(f"     copies at {where}: refused {sum(c == 4 for cs in codes.values() for c in cs)} of "
          f"{sum(len(cs) for cs in codes.values())} flips", flush=True)


@check("data.mdb cut short (a partial copy): exit 4 with a clear message from run and status, nothing changed")
def _():
    d = tmpdir()
    sp = copy(killed_dir + "/.", d)
    mdb = os.path.join(d, "st.fld", "state", "data.mdb")
    os.truncate(mdb, os.path.getsize(mdb) // 2 // 4096 * 4096)
    before = snapshot(d)
    for args in (["run", sp], ["status", sp]):
        _, err = run(args, expect=4)
        assert "data.mdb: the state store is cut short" in err and "nothing was deleted" in err, err
    assert_unchanged(before, d, "refused truncated state store")


@check("storage copied (cp -a) to another path after kill -9, resumed there: identical")
def _():
    d = tmpdir()
    copy(killed_dir + "/.", d)
    os.rename(os.path.join(d, "st.fld"), os.path.join(d, "moved.fld"))
    elsewhere = os.path.join(tmpdir(), "elsewhere.fld")
    subprocess.run(["cp", "-a", os.path.join(d, "moved.fld"), elsewhere], check=True)
    subprocess.run(["rm", "-rf", os.path.join(d, "moved.fld")], check=True)
    sp = make(d, storage=elsewhere)
    assert status(sp)["state"] == "UNAVAILABLE"
    _, err = run(["run", sp])
    assert f"resuming ft from checkpoint at step {KILLED_CKPT}" in err, err
    assert_identical(sp, "moved storage")
    assert_unchanged(KILLED_SNAPSHOT, killed_dir, "the original folder")


@check("kill -9, resume (exactly_once): identical; the original killed folder resumes too")
def _():
    _, err = run(["run", killed_spec])
    assert "resuming" in err, err
    assert_identical(killed_spec, "resumed after kill -9")


@check("an input changed under a killed run: replay refuses (exit 4) naming the step and input, log and state "
       "untouched; with the input restored the resume is identical")
def _():
    d = tmpdir()
    sp = make(d)
    # Killed before the first periodic checkpoint: the log holds the steps that read accounts.csv.
    kill_when_logged(Bg(sp), d, 5)
    assert status(sp)["last_checkpoint"]["step"] == 0
    acc = os.path.join(d, "accounts.csv")
    original = read(acc)
    write(acc, original.decode().replace("Bruno", "Brian"))
    before = {k: v for k, v in snapshot(d).items() if k.startswith("st.fld")}
    _, err = run(["run", sp], expect=4)
    assert re.search(r"replaying step [123]: input \d+ \(file_input\(accounts.csv, csv\)\)", err), err
    assert "the input changed" in err and "--reset" in err, err
    after = {k: v for k, v in snapshot(d).items() if k.startswith("st.fld")}
    assert after == before, "the refused resume changed the log or the state"
    write(acc, original.decode())
    run(["run", sp])
    assert_identical(sp, "resumed with the input restored")


@check("datagen without a seed: the random seed is kept, so kill -9 and resume continue the same rows exactly once")
def _():
    d = tmpdir()
    sp = make(d, seed=None)
    Bg(sp).kill_after_checkpoint(0.3)
    _, err = run(["run", sp])
    assert re.search(r"replaying [1-9]\d* steps", err), err
    views, files = results(sp)
    rows = [line.split(",") for line in files["tx.csv"].decode().splitlines()]
    # ts is row i's own number (epoch + i s): every row exactly once
    secs = sorted(int(datetime.datetime.strptime(r[3], "%Y-%m-%d %H:%M:%S").replace(
        tzinfo=datetime.timezone.utc).timestamp()) for r in rows)
    assert secs == list(range(ROWS)), "rows lost or repeated"
    bal = collections.Counter()
    for f, t, a, _, _ in rows:
        bal[int(t)] += int(a)
        bal[int(f)] -= int(a)
    assert_eq(views["balance"], sorted(bal.items()), "balance")
    assert files["tx.csv"] != REF_FILES["tx.csv"], "a random seed gave the seeded rows"


# ---- other fault-tolerance models ----

@check("at_least_once: after kill -9 and resume nothing is lost from tx.csv and the views are identical")
def _():
    d = tmpdir()
    sp = make(d, model="at_least_once")
    Bg(sp).kill_after_checkpoint(0.4)
    assert not os.path.exists(os.path.join(d, "st.fld", "wal")) or not os.listdir(os.path.join(d, "st.fld", "wal"))
    _, err = run(["run", sp])
    assert re.search(r"resuming ft from checkpoint at step [1-9]\d*, replaying 0 steps", err), err
    views, files = results(sp)
    for v in VIEWS:
        assert_eq(views[v], REF_VIEWS[v], f"view {v}")
    got = collections.Counter(files["tx.csv"].splitlines())
    ref = collections.Counter(REF_FILES["tx.csv"].splitlines())
    lost = ref - got
    assert not lost, f"{sum(lost.values())} rows of tx.csv lost, e.g. {list(lost)[:3]}"
    print(f"     at_least_once: {sum((got - ref).values())} rows of tx.csv written twice", flush=True)


@check("model switched exactly_once -> at_least_once -> exactly_once across kills: no stale log, identical")
def _():
    d = tmpdir()
    sp = make(d)
    kill_when_logged(Bg(sp), d, 20)
    make(d, model="at_least_once")
    ckpt = Bg(sp).kill_after_checkpoint(0.1)["last_checkpoint"]["step"]  # supersedes the exactly_once log
    make(d)
    # Killed before its first checkpoint: its log starts after the at_least_once checkpoint.
    kill_when_logged(Bg(sp), d, 5, after_seq=ckpt)
    assert status(sp)["last_checkpoint"]["step"] == ckpt
    _, err = run(["run", sp])
    assert "resuming" in err, err
    # The at_least_once run repeated output after the exactly_once run's kill (its right); the views
    # are exact and nothing is lost.
    views, files = results(sp)
    for v in VIEWS:
        assert_eq(views[v], REF_VIEWS[v], f"view {v}")
    lost = collections.Counter(REF_FILES["tx.csv"].splitlines()) - collections.Counter(files["tx.csv"].splitlines())
    assert not lost, f"{sum(lost.values())} rows of tx.csv lost"


@check("none: a rerun after kill -9 starts over (no resuming) and completes identical")
def _():
    d = tmpdir()
    sp = make(d, model="none")
    b = Bg(sp)
    time.sleep(1.2)
    b.p.kill()
    assert b.wait() == -signal.SIGKILL
    _, err = run(["run", sp])
    assert "resuming" not in err, err
    assert_identical(sp, "model none after kill -9")


@check("append_only table, extremes kept per group (MIN(varchar), MAX(double), ARG_MAX): kill -9 twice and "
       "resume, the view equals a recomputation from the table's rows")
def _():
    d = tmpdir()
    datagen = json.dumps([{
        "transport": {"name": "datagen", "config": {"seed": 11, "plan": [{
            "limit": 200_000, "rate": 50_000,
            "fields": {"k": {"strategy": "uniform", "range": [1, 5000]},
                       "x": {"strategy": "uniform", "range": [1, 1_000_000]}}}]}},
        "max_batch_size": 1000}])
    body = f"""CREATE TABLE t (k INT NOT NULL, x BIGINT NOT NULL) WITH ('append_only' = 'true', 'connectors' = '{datagen}');
CREATE MATERIALIZED VIEW ext AS SELECT k, MIN(CAST(x AS VARCHAR) || '-a-string-longer-than-23-bytes') AS lo,
  MAX(CAST(x AS DOUBLE) / 2) AS hi, ARG_MAX(CAST(x AS VARCHAR), x % 1000) AS am, COUNT(*) AS n FROM t GROUP BY k;"""
    sp = write(os.path.join(d, "ao.yaml"), "name: ao\nsql: |\n" + "\n".join("  " + l for l in body.split("\n")) +
               "\nconnectors:\n  t:\n    - transport: {name: file_output, config: {path: t.csv}}\n"
               "      format: {name: csv}\nstorage: {path: st.fld}\n"
               "fault_tolerance: {model: exactly_once, checkpoint_interval_secs: 1}\n")
    # The first kill comes once a checkpoint holds extremes: the resume restores them from it, then
    # replays the log. The second comes during the resumed run.
    b = Bg(sp)
    deadline = time.monotonic() + 60
    while (status(sp).get("last_checkpoint") or {}).get("step", 0) == 0:
        assert b.p.poll() is None and time.monotonic() < deadline, "no checkpoint before the run ended"
        time.sleep(0.05)
    b.p.kill()
    assert b.wait() == -signal.SIGKILL
    last = max(seq for s in segments(d) if header_written(s) for _, _, seq in records(s))
    kill_when_logged(Bg(sp), d, 20, after_seq=last)
    _, err = run(["run", sp])
    assert "resuming" in err, err
    rows = collections.defaultdict(list)
    with open(os.path.join(d, "t.csv")) as f:
        for line in f:
            k, x, w = line.rstrip("\n").split(",")
            assert w == "1", line
            rows[int(k)].append(int(x))
    assert sum(len(v) for v in rows.values()) == 200_000
    expect = []
    for k, xs in rows.items():
        best = max(xs, key=lambda x: (x % 1000, str(x)))
        expect.append((k, min(str(x) for x in xs) + "-a-string-longer-than-23-bytes", max(xs) / 2, str(best), len(xs)))
    assert_eq(query(sp, "SELECT k, lo, hi, am, n FROM ext"), sorted(expect, key=repr), "extremes after two kills")


print(f"total {time.monotonic() - t0:.1f} s", flush=True)
finish()
