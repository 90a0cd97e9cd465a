"""NOW(), temporal filters and emit_final through the real binary, with the clock fixed by
FLD_CLOCK (step n reads NOW() = START + n * STEP). A temporal filter's final contents, and its
output file summed, equal a recomputation in Python at the last step's time; a run killed with
kill -9 and resumed ends with the same views and byte-identical output as an uninterrupted one
(the journal holds each step's time); a pipeline whose input is idle keeps stepping, so rows
enter the view as time passes; emit_final emits only finished days, never retracting one."""

import datetime
import json
import os
import random
import subprocess

from fldtest import FLD, Bg, assert_eq, check, finish, integrate_csv, query, run, spec, status, tmpdir, write

HOUR = 3_600_000_000
T0 = int(datetime.datetime(2024, 3, 1, tzinfo=datetime.timezone.utc).timestamp()) * 1_000_000


def ts_text(us):
    return datetime.datetime.fromtimestamp(us / 1e6, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


def env_clock(start, step):
    return {**os.environ, "FLD_CLOCK": f"{start}:{step}"}


def run_env(args, env, expect=0):
    p = subprocess.run([FLD] + args, capture_output=True, text=True, timeout=600, env=env)
    if p.returncode != expect:
        raise AssertionError(f"fld {' '.join(args)}: exit {p.returncode}\n{p.stdout}\n{p.stderr}")
    return p


SQL = """
CREATE TABLE purchase (id BIGINT NOT NULL, ts TIMESTAMP NOT NULL, amount BIGINT);
CREATE MATERIALIZED VIEW recent AS SELECT id, ts, amount FROM purchase WHERE ts >= NOW() - INTERVAL 5 HOURS;
CREATE MATERIALIZED VIEW due AS SELECT id FROM purchase WHERE ts <= NOW() AND amount > 10;
"""


@check("a temporal filter's final contents equal a Python recomputation at the last step's time")
def _():
    d = tmpdir()
    rnd = random.Random(3)
    rows = [(i, T0 + rnd.randrange(0, 40 * HOUR), rnd.randrange(0, 30)) for i in range(300)]
    write(os.path.join(d, "p.csv"), "".join(f"{i},{ts_text(t)},{a}\n" for i, t, a in rows))
    p = spec(d, "tf", SQL, """connectors:
  purchase:
    - transport: {name: file_input, config: {path: p.csv}}
      format: {name: csv}
      max_batch_size: 10
  recent:
    - transport: {name: file_output, config: {path: recent.csv}}
      format: {name: csv}
""")
    run_env(["run", p], env_clock(T0, HOUR))
    steps = status(p)["step"]
    assert steps == 30, steps
    now = T0 + steps * HOUR
    # second precision: the CSV holds whole seconds
    want = sorted(((i, ts_text(t), a) for i, t, a in rows if t - t % 1_000_000 >= now - 5 * HOUR), key=repr)
    got = query(p, "SELECT id, ts, amount FROM recent")
    assert_eq(got, want, "recent")
    assert_eq(sorted(integrate_csv(os.path.join(d, "recent.csv"), [int, str, int]), key=repr), want,
              "recent.csv summed")
    with open(os.path.join(d, "recent.csv")) as f:
        assert any(line.rstrip().endswith(",-1") for line in f), "no row ever left the window"
    assert_eq(query(p, "SELECT id FROM due"),
              sorted(((i,) for i, t, a in rows if t - t % 1_000_000 <= now and a > 10), key=repr), "due")


def ft_spec(d):
    datagen = json.dumps([{"transport": {"name": "datagen", "config": {"seed": 5, "plan": [{
        "limit": 30000, "rate": 10000,
        "fields": {"id": {"strategy": "increment"}, "ts": {"strategy": "uniform", "range": [T0 // 1000, T0 // 1000 + 24 * 3600 * 1000]},
                   "amount": {"range": [0, 30]}}}]}},
        "max_batch_size": 500}])
    sql = SQL.replace("CREATE TABLE purchase (id BIGINT NOT NULL, ts TIMESTAMP NOT NULL, amount BIGINT);",
                      f"CREATE TABLE purchase (id BIGINT NOT NULL, ts TIMESTAMP NOT NULL, amount BIGINT) "
                      f"WITH ('connectors' = '{datagen}');")
    return spec(d, "ft", sql, """connectors:
  recent:
    - transport: {name: file_output, config: {path: recent.csv}}
      format: {name: csv}
fault_tolerance: {model: exactly_once, checkpoint_interval_secs: 1}
clock_resolution_usecs: 3600000000
""")


@check("kill -9 and resume: the same views and byte-identical output as an uninterrupted run")
def _():
    env = env_clock(T0, HOUR // 4)
    ref = tmpdir()
    p = ft_spec(ref)
    run_env(["run", "--quiet", p], env)
    ref_views = {v: query(p, f"SELECT * FROM {v}") for v in ("recent", "due")}
    with open(os.path.join(ref, "recent.csv"), "rb") as f:
        ref_out = f.read()
    assert len(ref_views["recent"]) > 0 and len(ref_views["due"]) > 0
    d = tmpdir()
    p = ft_spec(d)
    old = os.environ.get("FLD_CLOCK")
    os.environ["FLD_CLOCK"] = env["FLD_CLOCK"]
    try:
        b = Bg(p)
        b.kill_after_checkpoint(0.5)
        assert status(p)["state"] == "UNAVAILABLE"
        run_env(["run", "--quiet", p], env)
    finally:
        if old is None:
            del os.environ["FLD_CLOCK"]
        else:
            os.environ["FLD_CLOCK"] = old
    for v in ("recent", "due"):
        assert_eq(query(p, f"SELECT * FROM {v}"), ref_views[v], f"view {v} after kill -9 and resume")
    with open(os.path.join(d, "recent.csv"), "rb") as f:
        assert f.read() == ref_out, "recent.csv differs from the uninterrupted run's"


@check("an idle pipeline keeps stepping: rows enter a temporal filter as time passes")
def _():
    d = tmpdir()
    write(os.path.join(d, "p.csv"), f"1,{ts_text(T0 + 3 * HOUR)},50\n2,{ts_text(T0 + 1000 * HOUR)},50\n")
    p = spec(d, "idle", SQL, """connectors:
  purchase:
    - transport: {name: file_input, config: {path: p.csv, follow: true}}
      format: {name: csv}
clock_resolution_usecs: 20000
""")
    old = os.environ.get("FLD_CLOCK")
    os.environ["FLD_CLOCK"] = f"{T0}:{HOUR}"
    try:
        b = Bg(p)
        b.wait_live(lambda s: s["step"] >= 10)
        run(["stop", p])
        assert b.wait() == 0
    finally:
        if old is None:
            del os.environ["FLD_CLOCK"]
        else:
            os.environ["FLD_CLOCK"] = old
    assert_eq(query(p, "SELECT id FROM due"), [(1,)], "due after idle steps")


@check("emit_final emits each day's total once the day is past the waterline, never retracted")
def _():
    d = tmpdir()
    rnd = random.Random(9)
    rows, t = [], T0
    for i in range(400):
        t += rnd.randrange(0, 1800) * 1_000_000  # in order: nothing is late
        rows.append((t, rnd.randrange(1, 100)))
    write(os.path.join(d, "p.csv"), "".join(f"{ts_text(x)},{a}\n" for x, a in rows))
    sql = """
CREATE TABLE purchase (ts TIMESTAMP NOT NULL LATENESS INTERVAL 1 HOUR, amount BIGINT);
CREATE MATERIALIZED VIEW daily_final WITH ('emit_final' = 'd') AS
  SELECT TIMESTAMP_TRUNC(ts, DAY) AS d, SUM(amount) AS total FROM purchase GROUP BY TIMESTAMP_TRUNC(ts, DAY);
"""
    p = spec(d, "ef", sql, """connectors:
  purchase:
    - transport: {name: file_input, config: {path: p.csv}}
      format: {name: csv}
      max_batch_size: 7
  daily_final:
    - transport: {name: file_output, config: {path: final.csv}}
      format: {name: csv}
""")
    run(["run", p])
    waterline = rows[-1][0] - HOUR
    day = 86_400_000_000
    wd = waterline - waterline % day
    totals = {}
    for x, a in rows:
        totals[x - x % day] = totals.get(x - x % day, 0) + a
    want = sorted((ts_text(k), v) for k, v in totals.items() if k < wd)
    assert len(want) >= 2, want
    assert_eq(query(p, "SELECT d, total FROM daily_final"), want, "daily_final")
    with open(os.path.join(d, "final.csv")) as f:
        lines = [line for line in f if line.strip()]
    assert all(line.rstrip().endswith(",1") for line in lines), "emit_final retracted a row"
    assert_eq(sorted(integrate_csv(os.path.join(d, "final.csv"), [str, int])), want, "final.csv summed")


finish()
