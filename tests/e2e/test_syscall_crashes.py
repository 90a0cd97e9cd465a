"""Crash at every system call that changes files, and fail them with ENOSPC and EIO.

strace kills `fld run` at the k-th call of write, writev, pwrite64, fdatasync, fsync, ftruncate,
unlink, mkdir (whatever an uninterrupted traced run actually calls), for every k from 1 to the
number of such calls (FLD_SYSCALL_JOBS runs at a time, default 4); then a resume without strace must end with the same views (`fld query`) and
byte-identical output files as an uninterrupted reference run (itself checked against a
recomputation in Python). After every kill, each output file must be a byte prefix of the
reference's. Two pipelines:
  - "file": 2000 CSV rows in steps of 50 and a small keyed table; every k of every syscall;
  - "rate": a rate-limited datagen (1500 rows at 1000 rows/s in steps of 50, ~1.5 s) so
    checkpoints (and log rotations and deletions) happen in the middle of the run; k is sampled
    evenly when there are more calls than FLD_SYSCALL_CAP (default 200) allows, and this is said.
The traced uninterrupted run's order of calls is checked against the durability rules too
(outputs written only after the log records before them are fsynced, checkpoints committed only
after the outputs they record are fsynced, segments deleted only after a commit, new folders
followed by an fsync of their parent). Crash during recovery: the resume of a killed run is itself killed at each of its calls, then
resumed again. I/O errors: ENOSPC on a write and EIO on fdatasync/fsync (log, state store,
outputs, directory) must stop fld with exit 5 and a message naming the file, without retrying
the failed fsync, and a rerun without injection must end identical.
Prints `syscall kills: N, resumed identical: N` and `N passed, N failed`."""

import collections
import concurrent.futures
import json
import os
import random
import re
import shutil
import subprocess
import sys
import time

from fldtest import FLD, assert_eq, check, finish, query, tmpdir, write

JOBS = int(os.environ.get("FLD_SYSCALL_JOBS", "4"))
CAP = int(os.environ.get("FLD_SYSCALL_CAP", "200"))
SYSCALLS = ["write", "writev", "pwrite64", "pwritev", "fdatasync", "fsync", "sync_file_range", "ftruncate",
            "unlink", "unlinkat", "rename", "renameat", "renameat2", "rmdir", "mkdir", "mkdirat"]
OUTPUTS = ["ev_out.csv", "agg.json"]
VIEWS = {"agg": "SELECT k, name, n, s FROM agg", "tot": "SELECT n, s, m FROM tot"}
TIMEOUT = 120

if shutil.which("strace") is None:
    print("strace is not installed: skipped")
    print("0 passed, 0 failed")
    sys.exit(0)

T0 = time.monotonic()
rng = random.Random(11)
EV = [(i, rng.randrange(20), rng.randrange(-50, 100)) for i in range(2000)]

SQL = """
CREATE TABLE ev (id BIGINT NOT NULL, k INT NOT NULL, v INT NOT NULL){with_ev};
CREATE TABLE names (k INT NOT NULL PRIMARY KEY, name VARCHAR NOT NULL);
CREATE MATERIALIZED VIEW agg AS SELECT ev.k, names.name, COUNT(*) AS n, SUM(ev.v) AS s
  FROM ev JOIN names ON ev.k = names.k GROUP BY ev.k, names.name;
CREATE MATERIALIZED VIEW tot AS SELECT COUNT(*) AS n, SUM(v) AS s, MAX(id) AS m FROM ev;
"""
DATAGEN = json.dumps([{"transport": {"name": "datagen", "config": {"seed": 5, "plan": [{
    "limit": 1500, "rate": 1000,
    "fields": {"k": {"strategy": "uniform", "range": [0, 20]}, "v": {"strategy": "uniform", "range": [-50, 100]}}}]}},
    "max_batch_size": 50}])


def make(d, kind):
    """Writes pipeline `kind` ("file" or "rate") into folder d; returns the spec path."""
    os.makedirs(d, exist_ok=True)
    write(os.path.join(d, "names.csv"), "".join(f"{k},name{k}\n" for k in range(20)))
    ev_in = ""
    with_ev = ""
    # The rate pipeline reads names in one batch: spread over steps, how its batches fall
    # between the datagen's timed quanta would depend on how fast the loop polls (a loaded
    # machine), and so would the steps' output.
    names_batch = 5 if kind == "file" else 20
    if kind == "file":
        write(os.path.join(d, "ev.csv"), "".join(f"{i},{k},{v}\n" for i, k, v in EV))
        ev_in = """    - transport: {name: file_input, config: {path: ev.csv}}
      format: {name: csv}
      max_batch_size: 50
"""
    else:
        with_ev = f" WITH ('connectors' = '{DATAGEN}')"
    body = "\n".join("  " + line for line in SQL.format(with_ev=with_ev).strip("\n").split("\n"))
    return write(os.path.join(d, "s.yaml"), f"""name: sc
sql: |
{body}
connectors:
  ev:
{ev_in}    - transport: {{name: file_output, config: {{path: ev_out.csv}}}}
      format: {{name: csv}}
  names:
    - transport: {{name: file_input, config: {{path: names.csv}}}}
      format: {{name: csv}}
      max_batch_size: {names_batch}
  agg:
    - transport: {{name: file_output, config: {{path: agg.json}}}}
      format: {{name: json}}
storage: {{path: st.fld}}
fault_tolerance: {{model: exactly_once, checkpoint_interval_secs: 1}}
""")


def read(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return b""


def results(sp):
    d = os.path.dirname(sp)
    return {v: query(sp, q) for v, q in VIEWS.items()}, {o: read(os.path.join(d, o)) for o in OUTPUTS}


def differences(sp, ref):
    """What differs from the reference (empty when identical)."""
    views, files = results(sp)
    out = [f"view {v}" for v in VIEWS if views[v] != ref[0][v]]
    out += [f"{o} ({len(files[o])} bytes vs {len(ref[1][o])})" for o in OUTPUTS if files[o] != ref[1][o]]
    return out


def not_prefix(d, ref):
    return [o for o in OUTPUTS if not ref[1][o].startswith(read(os.path.join(d, o)))]


def fld_run(sp):
    p = subprocess.run([FLD, "run", "--quiet", sp], capture_output=True, text=True, timeout=TIMEOUT)
    return p.returncode, p.stderr


def strace_run(sp, strace_args, trace="/dev/null"):
    p = subprocess.run(["strace", "-f", "-qq", "-y", "-o", trace, *strace_args, FLD, "run", "--quiet", sp],
                       capture_output=True, text=True, timeout=TIMEOUT)
    rc = p.returncode
    if rc == 128 + 9:
        rc = -9
    return rc, p.stderr


LINE = re.compile(r"^(\d+)\s+(\w+)\((?:\d+<([^>]*)>|\"([^\"]*)\")?.*\) += (-?\d+)")


UNFINISHED = re.compile(r"^(\d+)\s+(\w+)\((?:\d+<([^>]*)>|\"([^\"]*)\")?.*<unfinished \.\.\.>")
RESUMED = re.compile(r"^(\d+)\s+<\.\.\. (\w+) resumed>.*\) += (-?\d+)")


def parse_trace(path):
    """[(pid, syscall, path, result)] of the calls in an strace -f -y output, in the order they
    started. The controller thread makes most calls; a checkpoint written in the background makes
    the state store's and the log deletions' from a writer thread, so a call may be split into an
    unfinished line and a resumed one."""
    calls, open_calls = [], {}
    with open(path) as f:
        for line in f:
            m = LINE.match(line)
            if m and "resumed>" not in line:
                calls.append((int(m.group(1)), m.group(2), m.group(3) or m.group(4) or "", int(m.group(5))))
                continue
            m = UNFINISHED.match(line)
            if m:
                open_calls[int(m.group(1))] = len(calls)
                calls.append((int(m.group(1)), m.group(2), m.group(3) or m.group(4) or "", None))
                continue
            m = RESUMED.match(line)
            if m and int(m.group(1)) in open_calls:
                i = open_calls.pop(int(m.group(1)))
                pid, sc, p, _ = calls[i]
                calls[i] = (pid, sc, p, int(m.group(3)))
    return [c for c in calls if c[3] is not None]


def what(path, d):
    rel = os.path.relpath(path, d) if path.startswith(d) else path
    if "/wal/" in rel or rel.endswith("/wal"):
        return "log"
    if "/state" in rel:
        return "state"
    if rel.endswith("lock"):
        return "lock"
    if rel in OUTPUTS:
        return "output"
    return rel


def evenly(n, cap):
    """k values 1..n, or cap of them spread evenly (first and last included)."""
    if n <= cap:
        return list(range(1, n + 1))
    return sorted({1 + round(i * (n - 1) / (cap - 1)) for i in range(cap)})


def reference(kind):
    d = tmpdir()
    sp = make(d, kind)
    rc, err = fld_run(sp)
    assert rc == 0, err
    return d, sp, results(sp)


def durability_order(calls, d):
    """Checks the order of the traced calls against the durability rules: a folder that fld creates
    is followed by an fsync of the folder holding it, and the state folder is fsynced; output is written only
    when every log record before it is fsynced (outputs are released after their steps are
    durable); a new segment's directory is fsynced before records go into it; a checkpoint commits
    (LMDB's meta page write) only when the outputs it records are fsynced; a log segment is deleted
    only after a checkpoint committed since the state store was last written."""
    problems = []
    wal_dirty, out_dirty, seen, need_dirsync = set(), set(), set(), set()
    state_committed = True
    main = calls[0][0] if calls else None
    # A checkpoint written in the background records the outputs as they stood when the controller
    # fsynced them and started the writer; later steps write more output while it runs. So a
    # writer's commit needs every output fsynced at some point between the previous commit and
    # the writer's first call; a commit on the controller thread needs them fsynced now.
    clean_since_commit, writer_ok = True, {}
    created = {}  # folder -> a folder created in it since it was last fsynced
    for i, (tid, sc, path, rc) in enumerate(calls):
        kind = what(path, d)
        if sc == "write" and kind == "log":
            if path in need_dirsync:
                problems.append(f"call {i}: record written to {path} before its directory was fsynced")
            if path not in seen:  # the header of a new segment
                seen.add(path)
                need_dirsync.add(path)
            wal_dirty.add(path)
        elif sc == "fdatasync" and kind == "log":
            wal_dirty.discard(path)
        elif sc == "fsync" and kind == "log" and path.endswith("/wal"):
            need_dirsync.clear()
        elif sc == "write" and kind == "output":
            if wal_dirty:
                problems.append(f"call {i}: {os.path.basename(path)} written while log records are not durable")
            out_dirty.add(path)
        elif sc == "fsync" and kind == "output":
            out_dirty.discard(path)
            clean_since_commit |= not out_dirty
        elif kind == "state" and sc in ("writev", "pwritev", "write"):
            state_committed = False
            if tid != main:
                writer_ok.setdefault(tid, clean_since_commit or not out_dirty)
        elif kind == "state" and sc == "pwrite64":  # LMDB's meta page: the commit point
            if tid == main and out_dirty:
                problems.append(f"call {i}: checkpoint committed before {sorted(out_dirty)} was fsynced")
            if tid != main and not writer_ok.pop(tid, clean_since_commit or not out_dirty):
                problems.append(f"call {i}: background checkpoint committed before the outputs were fsynced")
            state_committed = True
            clean_since_commit = not out_dirty
        elif sc in ("unlink", "unlinkat") and kind == "log":
            if not state_committed:
                problems.append(f"call {i}: {path} deleted before the checkpoint committed")
        if sc == "mkdir" and rc == 0:
            created[os.path.dirname(path.rstrip("/"))] = path
        elif sc == "fsync":
            created.pop(path, None)
    problems += [f"{c} was created but {parent} was never fsynced after" for parent, c in created.items()]
    state_dir = os.path.join(d, "st.fld", "state")
    if not any(sc == "fsync" and p == state_dir for _, sc, p, _ in calls):
        problems.append(f"{state_dir} (where LMDB creates its files) was never fsynced")
    return problems


REF = {}
TRACE = {}  # kind -> {syscall: [(pid, path)]} for the main thread
STATS = collections.Counter()
FAILS = []


@check("reference runs equal a recomputation in Python")
def _():
    for kind in ("file", "rate"):
        REF[kind] = reference(kind)
    for kind in ("file", "rate"):
        views, files = REF[kind][2]
        rows = [tuple(int(x) for x in line.split(",")) for line in files["ev_out.csv"].decode().splitlines()]
        assert all(r[3] == 1 for r in rows)
        if kind == "file":
            assert [r[:3] for r in rows] == EV, "ev_out.csv is not the input in order"
        assert len(rows) == (2000 if kind == "file" else 1500), len(rows)
        acc = collections.defaultdict(lambda: [0, 0])
        for _, k, v, _ in rows:
            acc[k][0] += 1
            acc[k][1] += v
        assert_eq(views["agg"], sorted(((k, f"name{k}", n, s) for k, (n, s) in acc.items()), key=repr), "agg")
        assert_eq(views["tot"], [(len(rows), sum(r[2] for r in rows), max(r[0] for r in rows))], "tot")


@check("a traced uninterrupted run is identical; count the calls per system call")
def _():
    for kind in ("file", "rate"):
        d = tmpdir()
        sp = make(d, kind)
        trace = os.path.join(tmpdir(), "trace")
        rc, err = strace_run(sp, ["-e", "trace=" + ",".join(SYSCALLS)], trace)
        assert rc == 0, err
        assert not differences(sp, REF[kind][2]), differences(sp, REF[kind][2])
        calls = parse_trace(trace)
        main = calls[0][0]
        # Only a checkpoint writer may call from another thread, and only on the state store and
        # the log (deleting covered segments). strace counts each thread's calls on its own, so a
        # kill point k hits the k-th call of whichever thread reaches it first.
        others = [c for c in calls if c[0] != main and what(c[2], d) not in ("state", "log")]
        assert not others, f"calls from other threads than the checkpoint writer: {others[:5]}"
        per = collections.defaultdict(list)
        for _, sc, path, _ in calls:
            per[sc].append(path)
        TRACE[kind] = (d, per)
        desc = ", ".join(f"{sc} {len(p)} ({', '.join(f'{w} {n}' for w, n in collections.Counter(what(x, d) for x in p).most_common())})"
                         for sc, p in sorted(per.items()))
        print(f"     {kind}: {desc}", flush=True)
        for sc in ("write", "fdatasync", "fsync", "unlink"):
            assert sc in per, f"{kind}: no {sc} calls"
        problems = durability_order(calls, d)
        assert not problems, f"{kind}: " + "\n".join(problems[:10])



def kill_point(kind, sc, k):
    """Kills a fresh run at the k-th call of sc, resumes it; returns (killed, problems)."""
    d = tmpdir()
    sp = make(d, kind)
    ref = REF[kind][2]
    rc, err = strace_run(sp, ["-e", f"trace={sc}", "-e", f"inject={sc}:signal=KILL:when={k}"])
    problems = []
    if rc not in (-9, 0):
        problems.append(f"exit {rc}: {err.strip()[-300:]}")
    bad = not_prefix(d, ref)
    if bad:
        problems.append(f"after the kill {bad} not a prefix of the reference")
    rc2, err2 = fld_run(sp)
    if rc2 != 0:
        problems.append(f"resume exit {rc2}: {err2.strip()[-500:]}")
    else:
        diff = differences(sp, ref)
        if diff:
            problems.append(f"resumed run differs: {diff}")
    if not problems:
        shutil.rmtree(d, ignore_errors=True)
    else:
        problems.append(f"(kept in {d})")
    return rc == -9, problems


def run_points(points):
    with concurrent.futures.ThreadPoolExecutor(JOBS) as ex:
        futs = {ex.submit(kill_point, *p): p for p in points}
        for f in concurrent.futures.as_completed(futs):
            kind, sc, k = futs[f]
            killed, problems = f.result()
            STATS["kills"] += killed
            STATS["not_killed"] += not killed
            STATS["identical"] += killed and not problems
            if problems:
                FAILS.append(f"{kind} {sc} k={k}: {'; '.join(problems)}")


def kill_all(kind, budget):
    """Kill points for every call of every syscall, or about `budget` of them in all, each
    syscall's share in proportion to its count (at least 3) and spread evenly over its calls."""
    per = TRACE[kind][1]
    total = sum(len(v) for v in per.values())
    points, notes = [], []
    for sc in sorted(per):
        n = len(per[sc])
        quota = n if total <= budget else min(n, max(3, round(budget * n / total)))
        ks = evenly(n, quota)
        points += [(kind, sc, k) for k in ks]
        notes.append(f"{sc} {len(ks)}/{n}" + ("" if len(ks) == n else " (sampled evenly)"))
    before = len(FAILS)
    t = time.monotonic()
    run_points(points)
    print(f"     {kind}: killed at {len(points)} points: {', '.join(notes)}; {time.monotonic() - t:.1f} s", flush=True)
    assert len(FAILS) == before, "\n".join(FAILS[before:])


@check("file pipeline: kill at every call of every syscall, resume: identical")
def _():
    kill_all("file", 10_000)


@check("rate pipeline (checkpoints mid-run): kill at each (or evenly sampled) call, resume: identical")
def _():
    kill_all("rate", CAP)


@check("crash during recovery: kill the resume of a killed run at each of its calls, resume again: identical")
def _():
    kind = "file"
    ref = REF[kind][2]
    nwal = sum(1 for p in TRACE[kind][1]["write"] if "/wal/" in p)
    count = 0
    for first_k in (nwal // 2, nwal - 2):
        base = tmpdir()
        sp = make(base, kind)
        rc, _ = strace_run(sp, ["-e", "trace=write", "-e", f"inject=write:signal=KILL:when={first_k}"])
        assert rc == -9, rc
        # Trace one resume (in a copy) to learn its calls.
        probe = tmpdir()
        subprocess.run(["cp", "-a", base + "/.", probe], check=True)
        trace = os.path.join(tmpdir(), "trace")
        rc, err = strace_run(os.path.join(probe, "s.yaml"), ["-e", "trace=" + ",".join(SYSCALLS)], trace)
        assert rc == 0, err
        per = collections.Counter(sc for _, sc, _, _ in parse_trace(trace))

        def one(sc, k):
            d = tmpdir()
            subprocess.run(["cp", "-a", base + "/.", d], check=True)
            s = os.path.join(d, "s.yaml")
            rc, err = strace_run(s, ["-e", f"trace={sc}", "-e", f"inject={sc}:signal=KILL:when={k}"])
            probs = [] if rc in (-9, 0) else [f"exit {rc}: {err[-300:]}"]
            if not_prefix(d, ref):
                probs.append("outputs not a prefix after the second kill")
            rc2, err2 = fld_run(s)
            if rc2 != 0:
                probs.append(f"second resume exit {rc2}: {err2[-400:]}")
            elif differences(s, ref):
                probs.append(f"differs: {differences(s, ref)}")
            if not probs:
                shutil.rmtree(d, ignore_errors=True)
            return rc == -9, [f"first kill write#{first_k}, then {sc}#{k}: {p} (kept in {d})" for p in probs]

        with concurrent.futures.ThreadPoolExecutor(JOBS) as ex:
            futs = [ex.submit(one, sc, k) for sc, n in per.items() for k in range(1, n + 1)]
            for f in futs:
                killed, probs = f.result()
                count += 1
                STATS["recovery_kills"] += killed
                STATS["recovery_identical"] += killed and not probs
                FAILS.extend(probs)
                assert not probs, probs
    print(f"     recovery kill points: {count}", flush=True)


def fault(kind, label, sc, path_rel, err, k):
    """Fails the k-th `sc` on path_rel with err: exit 5 naming the file, no fsync retried on it,
    outputs a prefix of the reference, a rerun identical. Returns problems."""
    d = tmpdir()
    sp = make(d, kind)
    ref = REF[kind][2]
    path = os.path.join(d, path_rel)
    trace = os.path.join(tmpdir(), "trace")
    t = time.monotonic()
    rc, stderr = strace_run(sp, ["-P", path, "-e", f"trace={sc},fsync,fdatasync", "-e",
                                 f"inject={sc}:error={err}:when={k}"], trace)
    secs = time.monotonic() - t
    probs = []
    text = {"ENOSPC": "No space left on device", "EIO": "Input/output error"}[err]
    if rc != 5:
        probs.append(f"exit {rc}, expected 5: {stderr.strip()[-300:]}")
    last = stderr.strip().split("\n")[-1] if stderr.strip() else ""
    name = os.path.basename(path_rel) if not path_rel.startswith("st.fld") else os.path.dirname(path) \
        if path_rel.endswith("data.mdb") else path
    if not (last.startswith("fld: ") and text in last and name in last):
        probs.append(f"message does not name {name} and '{text}': {last!r}")
    with open(trace) as f:
        lines = f.read().splitlines()
    inj = [i for i, line in enumerate(lines) if "INJECTED" in line]
    if not inj:
        probs.append("nothing was injected")
    elif sc in ("fsync", "fdatasync"):
        retried = [line for line in lines[inj[0] + 1:] if re.match(r"^\d+\s+f(data)?sync\(", line)]
        if retried:
            probs.append(f"a failed fsync was retried: {retried[:2]}")
    bad = not_prefix(d, ref)
    if bad:
        probs.append(f"after the failure {bad} not a prefix of the reference")
    rc2, err2 = fld_run(sp)
    if rc2 != 0:
        probs.append(f"rerun exit {rc2}: {err2[-300:]}")
    elif differences(sp, ref):
        probs.append(f"rerun differs: {differences(sp, ref)}")
    print(f"     {label}: exit {rc} in {secs:.1f} s: {last[:160]}", flush=True)
    if not probs:
        shutil.rmtree(d, ignore_errors=True)
    return [f"{label}: {p} (kept in {d})" for p in probs]


FIRST_SEG = "st.fld/wal/00000000000000000001.log"
FAULTS = [
    # label, pipeline, syscall, file, errno, k (mid-run for the rate pipeline: ~20 steps per second)
    ("ENOSPC on a log write mid-run", "rate", "write", FIRST_SEG, "ENOSPC", 10),
    ("EIO on the log's fdatasync mid-run", "rate", "fdatasync", FIRST_SEG, "EIO", 10),
    ("ENOSPC on an output write", "rate", "write", "ev_out.csv", "ENOSPC", 5),
    ("EIO on an output's fsync (checkpoint)", "rate", "fsync", "agg.json", "EIO", 2),
    ("ENOSPC on the state store's page write (checkpoint)", "rate", "writev", "st.fld/state/data.mdb", "ENOSPC", 2),
    ("ENOSPC on the state store's meta page write", "rate", "pwrite64", "st.fld/state/data.mdb", "ENOSPC", 3),
    ("EIO on the state store's fdatasync", "rate", "fdatasync", "st.fld/state/data.mdb", "EIO", 2),
    ("EIO on the log directory's fsync", "rate", "fsync", "st.fld/wal", "EIO", 2),
    ("EIO on deleting a covered log segment", "rate", "unlink", FIRST_SEG, "EIO", 1),
    ("ENOSPC on a log write (file pipeline)", "file", "write", FIRST_SEG, "ENOSPC", 20),
    ("EIO on the log's fdatasync (file pipeline)", "file", "fdatasync", FIRST_SEG, "EIO", 2),
]


@check("ENOSPC and EIO: exit 5 with the file and the error named, no fsync retried, rerun identical")
def _():
    probs = []
    with concurrent.futures.ThreadPoolExecutor(JOBS) as ex:
        for p in ex.map(lambda f: fault(f[1], f[0], *f[2:]), FAULTS):
            probs += p
    STATS["faults"] = len(FAULTS)
    STATS["faults_ok"] = len(FAULTS) - len({p.split(":")[0] for p in probs})
    FAILS.extend(probs)
    assert not probs, "\n".join(probs)


print(f"syscall kills: {STATS['kills']}, resumed identical: {STATS['identical']} "
      f"(runs that ended before the k-th call: {STATS['not_killed']}); "
      f"recovery kills: {STATS['recovery_kills']}, resumed identical: {STATS['recovery_identical']}; "
      f"I/O errors: {STATS['faults']}, clean exit 5 and identical rerun: {STATS['faults_ok']}; "
      f"{time.monotonic() - T0:.0f} s", flush=True)
finish()
