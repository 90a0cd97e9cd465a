"""The nexmark connector end to end: Feldera's table declarations verbatim, the same output for
any number of generator threads, and a kill -9 in the middle followed by a resume gives outputs
byte-identical to an uninterrupted run (the journal records event positions; replay regenerates
the same rows in the same steps). `fld check` names a missing table connector."""

import json
import os
import signal
import subprocess
import time

from fldtest import FLD, check, finish, run, tmpdir

EVENTS = 400000


def table(name, columns, config):
    return f"""CREATE TABLE {name} ({columns}) WITH ('connectors' = '[{{
  "format": {{"name": "csv", "config": {{}}}},
  "transport": {{"name": "nexmark", "config": {config}}}}}]');
"""


def spec(d, threads, events=EVENTS, tables=("person", "auction", "bid")):
    options = f'{{"table": "person", "options": {{"events": {events}, "threads": {threads}, ' \
              f'"batch_size_per_thread": 1000}}}}'
    sql = ""
    if "person" in tables:
        sql += table("person", "id BIGINT, name VARCHAR, emailAddress VARCHAR, creditCard VARCHAR, city VARCHAR, "
                     "state VARCHAR, date_time TIMESTAMP(3) NOT NULL, extra VARCHAR", options)
    if "auction" in tables:
        sql += table("auction", "id BIGINT, itemName VARCHAR, description VARCHAR, initialBid BIGINT, "
                     "reserve BIGINT, date_time TIMESTAMP(3) NOT NULL, expires TIMESTAMP(3), seller BIGINT, "
                     "category BIGINT, extra VARCHAR", '{"table": "auction"}')
    sql += table("bid", "auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR, "
                 "date_time TIMESTAMP(3) NOT NULL, extra VARCHAR", '{"table": "bid"}')
    sql += """CREATE VIEW per_category AS SELECT A.category, COUNT(*) AS bids, MAX(B.price) AS top
  FROM auction A JOIN bid B ON A.id = B.auction GROUP BY A.category;
CREATE VIEW per_state AS SELECT state, COUNT(*) AS people FROM person GROUP BY state;
"""
    path = os.path.join(d, "nexmark.yaml")
    with open(path, "w") as f:
        f.write("name: nexmark\nworkers: 2\n")
        f.write("fault_tolerance: {model: exactly_once, checkpoint_interval_secs: 2}\n")
        f.write("sql: |\n" + "".join("  " + l + "\n" for l in sql.splitlines()))
        f.write("connectors:\n")
        for v in ("per_category", "per_state"):
            f.write(f"  {v}:\n    - transport: {{name: file_output, config: {{path: {v}.csv}}}}\n"
                    "      format: {name: csv}\n")
    return path


def outputs(d):
    return {v: open(os.path.join(d, v + ".csv"), "rb").read() for v in ("per_category", "per_state")}


REFERENCE = {}


@check("an uninterrupted run with 1 generator thread and one with 2 write identical outputs")
def same_for_threads():
    d1, d2 = tmpdir(), tmpdir()
    run(["run", "--quiet", spec(d1, 1)])
    run(["run", "--quiet", spec(d2, 2)])
    a, b = outputs(d1), outputs(d2)
    assert a == b, "outputs differ between threads 1 and 2"
    assert len(a["per_state"]) > 0 and len(a["per_category"]) > 0
    REFERENCE.update(a)


@check("kill -9 in the middle, then resume: outputs byte-identical to the uninterrupted run")
def kill_and_resume():
    d = tmpdir()
    path = spec(d, 2)
    p = subprocess.Popen([FLD, "run", "--quiet", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while p.poll() is None and time.monotonic() < deadline:  # kill once a few steps are journaled
        st = subprocess.run([FLD, "status", "--json", path], capture_output=True, text=True)
        try:
            if json.loads(st.stdout).get("step", 0) >= 4:
                break
        except ValueError:
            pass
        time.sleep(0.05)
    killed = p.poll() is None
    if killed:
        p.send_signal(signal.SIGKILL)
    p.wait()
    _, err = run(["run", path])
    if killed:
        assert "resuming nexmark from checkpoint" in err, err
    assert outputs(d) == REFERENCE, "the resumed run's outputs differ from the uninterrupted run's"


@check("fld check names the table whose nexmark connector is missing")
def missing_table():
    d = tmpdir()
    path = spec(d, 2, tables=("person", "bid"))
    with open(path) as f:
        text = f.read().replace("CREATE VIEW per_category AS SELECT A.category, COUNT(*) AS bids, MAX(B.price) AS top\n"
                                "    FROM auction A JOIN bid B ON A.id = B.auction GROUP BY A.category;\n", "")
    with open(path, "w") as f:
        f.write(text.replace("  per_category:\n    - transport: {name: file_output, config: {path: per_category.csv}}\n"
                             "      format: {name: csv}\n", ""))
    _, err = run(["check", path], expect=2)
    assert "no connector for table auction" in err, err


finish()
