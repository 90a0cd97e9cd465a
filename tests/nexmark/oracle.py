#!/usr/bin/env python3
"""The Nexmark oracle test: Feldera's 21 Nexmark queries in fld against DuckDB.

1. Generates --events Nexmark events with fld's `nexmark` connector under Feldera's own table
   declarations (benchmark/feldera-sql/benchmarks/nexmark/table.sql of the Feldera corpus, its
   placeholders filled: {events}, {cores}, {lateness} -> nothing) and exports the three tables to
   CSV (views over them with file_output).
2. Runs each query file of the corpus verbatim on those tables in fld (a fresh pipeline per
   query, fault_tolerance none), its view written with file_output; tables a query declares
   itself (q13's side_input) are exported too.
3. Runs each query's DuckDB translation (duckdb_queries.sql beside this file) over the CSVs and
   compares the multisets of rows (duckdb_compare.js, through Node.js and @duckdb/node-api).

Prints one line per query: MATCH, DIFFER (with sample rows), REFUSED (fld's error: a feature
fld does not have yet) or FAILED (fld accepted the query but the run failed). Exit status 1 when
fewer than --min-match queries match or any query differs (a query in TIE_KEYS, whose other columns
depend on how ties are broken, is compared on its key columns only); 77 (ctest: skipped) without the corpus or without
@duckdb/node-api (ci/install-deps installs it under /opt/fld-node).
Usage: oracle.py --fld build/fld CORPORA_DIR [--events 100000] [--min-match N] [--keep DIR]"""

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
NEXMARK = os.path.join("feldera", "benchmark", "feldera-sql", "benchmarks", "nexmark")
SKIP = 77
# Queries whose rows are not all determined by the data (ROW_NUMBER over ties): compared on the
# columns that are (index list, and what they are), so fld and DuckDB may break ties differently.
TIE_KEYS = {
    "q19": ([0, 2, 7], "auction, price, rank_number: ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC) "
            "numbers equal prices in either order"),
}


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("corpora", nargs="?", default="")
    ap.add_argument("--fld", required=True)
    ap.add_argument("--events", type=int, default=100000)
    ap.add_argument("--min-match", type=int, default=0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--threads", type=int, default=2, help="the nexmark connector's generator threads")
    ap.add_argument("--node-modules", default=os.environ.get("FLD_NODE_MODULES", "/opt/fld-node/node_modules"))
    ap.add_argument("--udf-library", default=os.environ.get("FLD_UDF_EXAMPLE", ""),
                    help="a UDF library (udf: {library: ...}) for queries declaring functions without a body (q21)")
    ap.add_argument("--keep", help="keep the work folder here (CSVs, specs, the manifest)")
    ap.add_argument("--only", help="comma-separated query names (q0,q3,...)")
    return ap.parse_args()


def duckdb_queries():
    """{name: sql} from duckdb_queries.sql (sections `-- query: NAME`)."""
    text = open(os.path.join(HERE, "duckdb_queries.sql")).read()
    out = {}
    for m in re.finditer(r"^-- query: (\w+)\n(.*?)(?=^-- query: |\Z)", text, re.S | re.M):
        sql = "\n".join(l for l in m.group(2).splitlines() if not l.startswith("--")).strip()
        out[m.group(1).lower()] = sql.rstrip(";").strip()
    return out


def duck_type(t):
    t = re.sub(r"\s+NOT NULL$", "", t.strip())
    t = re.sub(r"^(VAR)?CHAR(\(\d+\))?$", "VARCHAR", t)
    t = re.sub(r"^(TIMESTAMP|TIME)\(\d+\)$", r"\1", t)
    return t


def split_top(s):
    """Splits on commas outside parentheses."""
    parts, depth, cur = [], 0, ""
    for ch in s:
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += ch == "("
        depth -= ch == ")"
        cur += ch
    if cur.strip():
        parts.append(cur)
    return [p.strip() for p in parts]


def relations(check_output):
    """{name: (kind, [[column, duckdb type], ...])} from `fld check` output."""
    out = {}
    for line in check_output.splitlines():
        m = re.match(r"^(table|view) (\w+) \((.*)\)\s*$", line)
        if not m:
            continue
        cols = []
        for c in split_top(m.group(3)):
            name, _, typ = c.partition(" ")
            cols.append([name, duck_type(typ)])
        out[m.group(2).lower()] = (m.group(1), cols)
    return out


def write_spec(path, name, sql, outputs):
    """A spec with `outputs` ({view: csv path}) as file_output connectors (JSON is valid YAML)."""
    spec = {
        "name": name,
        "sql": sql,
        "workers": ARGS.workers,
        "fault_tolerance": {"model": "none"},
        "connectors": {
            v: [{"transport": {"name": "file_output", "config": {"path": p}}, "format": {"name": "csv"}}]
            for v, p in outputs.items()
        },
    }
    if ARGS.udf_library and re.search(r"CREATE\s+FUNCTION", sql, re.I):
        spec["udf"] = {"library": os.path.abspath(ARGS.udf_library)}
    with open(path, "w") as f:
        json.dump(spec, f, indent=1)


def fld(*args):
    return subprocess.run([ARGS.fld, *args], capture_output=True, text=True)


def cpu_children():
    """User + system CPU seconds of the finished child processes (the machine may be shared)."""
    u = resource.getrusage(resource.RUSAGE_CHILDREN)
    return u.ru_utime + u.ru_stime


def first_error(r):
    lines = [l for l in (r.stderr + r.stdout).splitlines() if "error" in l.lower()]
    return (lines or (r.stderr + r.stdout).strip().splitlines() or ["exit %d" % r.returncode])[0].strip()


def main():
    nexmark = os.path.join(ARGS.corpora, NEXMARK) if ARGS.corpora else ""
    if not nexmark or not os.path.isfile(os.path.join(nexmark, "table.sql")):
        print(f"nexmark oracle: skipped: {nexmark or 'no corpus folder given'} has no table.sql")
        return SKIP
    if not os.path.isdir(os.path.join(ARGS.node_modules, "@duckdb", "node-api")):
        print(f"nexmark oracle: skipped: @duckdb/node-api not found in {ARGS.node_modules} (ci/install-deps "
              "installs it; --node-modules or FLD_NODE_MODULES point elsewhere)")
        return SKIP
    tables_sql = open(os.path.join(nexmark, "table.sql")).read().format(
        events=ARGS.events, cores=ARGS.threads, lateness="")
    queries = sorted((f[:-4] for f in os.listdir(os.path.join(nexmark, "queries")) if f.endswith(".sql")),
                     key=lambda q: int(q[1:]))
    if ARGS.only:
        queries = [q for q in queries if q in ARGS.only.split(",")]
    duck = duckdb_queries()
    work = ARGS.keep or tempfile.mkdtemp(prefix="fld-nexmark-")
    os.makedirs(work, exist_ok=True)
    try:
        return run(work, tables_sql, queries, nexmark, duck)
    finally:
        if not ARGS.keep:
            shutil.rmtree(work, ignore_errors=True)


def run(work, tables_sql, queries, nexmark, duck):
    manifest = {"tables": [], "queries": [], "out": os.path.join(work, "result.json")}
    # 1. The three tables, exported.
    export_sql = tables_sql + "".join(f"\nCREATE VIEW export_{t} AS SELECT * FROM {t};" for t in
                                      ("person", "auction", "bid"))
    spec = os.path.join(work, "export.yaml")
    outputs = {f"export_{t}": os.path.join(work, f"{t}.csv") for t in ("person", "auction", "bid")}
    write_spec(spec, "nexmark_export", export_sql, outputs)
    r = fld("check", spec)
    if r.returncode != 0:
        print(f"nexmark oracle: fld does not accept Feldera's nexmark tables: {first_error(r)}")
        return 1
    rels = relations(r.stdout)
    t0 = time.monotonic()
    r = fld("run", "--quiet", spec)
    if r.returncode != 0:
        print(f"nexmark oracle: generating the tables failed: {first_error(r)}")
        return 1
    print(f"nexmark oracle: {ARGS.events} events generated and exported in {time.monotonic() - t0:.1f} s")
    for t in ("person", "auction", "bid"):
        manifest["tables"].append({"name": t, "csv": outputs[f"export_{t}"], "columns": rels[t][1]})

    # 2. Each query in fld.
    status = {}
    fld_secs = {}  # query -> wall seconds of its fld run (generating the events included)
    for q in queries:
        text = open(os.path.join(nexmark, "queries", q + ".sql")).read()
        views = re.findall(r"CREATE\s+VIEW\s+(\w+)", text, re.I)
        view = next((v for v in views if v.lower() == q), views[-1] if views else q)
        own_tables = [t for t in re.findall(r"CREATE\s+TABLE\s+(\w+)", text, re.I)]
        sql = tables_sql + "\n" + text + "".join(f"\nCREATE VIEW export_{t} AS SELECT * FROM {t};" for t in own_tables)
        outputs = {view: os.path.join(work, f"{q}.csv")}
        outputs.update({f"export_{t}": os.path.join(work, f"{q}_{t}.csv") for t in own_tables})
        spec = os.path.join(work, f"{q}.yaml")
        write_spec(spec, f"nexmark_{q}", sql, outputs)
        entry = {"name": q, "sql": duck.get(q), "csv": None}
        if q in TIE_KEYS:
            entry["key"] = TIE_KEYS[q][0]
        r = fld("check", spec)
        if r.returncode != 0:
            status[q] = ("REFUSED", first_error(r))
        else:
            t0, cpu0 = time.monotonic(), cpu_children()
            r2 = fld("run", "--quiet", spec)
            if r2.returncode != 0:
                status[q] = ("FAILED", first_error(r2))
            else:
                secs, cpu = time.monotonic() - t0, cpu_children() - cpu0
                fld_secs[q] = secs
                status[q] = ("RAN", f"{secs:.1f} s, {ARGS.events / secs:,.0f} events/s, {cpu:.1f} s of CPU")
                entry["csv"] = outputs[view]
                rels = relations(r.stdout)
                for t in own_tables:
                    manifest["tables"].append({"name": t, "csv": outputs[f"export_{t}"], "columns": rels[t.lower()][1]})
        if entry["sql"] is None:
            status[q] = ("NO TRANSLATION", "duckdb_queries.sql has no section for it")
            entry["csv"] = None
        else:
            manifest["queries"].append(entry)

    print(f"nexmark oracle: fld ran {len(fld_secs)} queries in {sum(fld_secs.values()):.1f} s")
    # 3. DuckDB.
    t0 = time.monotonic()
    with open(os.path.join(work, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    env = dict(os.environ, NODE_PATH=ARGS.node_modules)
    r = subprocess.run(["node", os.path.join(HERE, "duckdb_compare.js"), os.path.join(work, "manifest.json")],
                       capture_output=True, text=True, env=env)
    if r.returncode != 0:
        print(f"nexmark oracle: the DuckDB side failed: {r.stderr.strip()}")
        return 1
    results = json.load(open(manifest["out"]))
    print(f"nexmark oracle: DuckDB computed and compared them in {time.monotonic() - t0:.1f} s")

    matched, differ, refused = [], [], []
    for q in queries:
        st, why = status[q]
        res = results.get(q, {})
        if res.get("error") and st == "RAN":
            st, why = "DUCKDB ERROR", res["error"]
        elif res.get("error"):
            why += f" (and DuckDB: {res['error']})"
        if st == "RAN":
            if res["missing"] == 0 and res["extra"] == 0:
                matched.append(q)
                on = f", on {TIE_KEYS[q][1]}" if q in TIE_KEYS else ""
                print(f"  {q:4} MATCH   {res['expected']} rows ({why}{on})")
            else:
                differ.append(q)
                print(f"  {q:4} DIFFER: DuckDB {res['expected']} rows, fld {res['got']}; "
                      f"{res['missing']} missing in fld, {res['extra']} extra")
                for s in res["samples"]:
                    print(f"         {s[:300]}")
        else:
            if st == "REFUSED":
                refused.append(q)
            else:
                differ.append(q)
            print(f"  {q:4} {st}: {why}")
    print(f"nexmark oracle: {len(matched)} of {len(queries)} queries match DuckDB over {ARGS.events} events "
          f"({', '.join(matched) or 'none'}); {len(refused)} refused by fld; {len(differ)} differ or fail "
          f"(floor {ARGS.min_match})")
    if differ:
        print(f"nexmark oracle: FAILED: {', '.join(differ)} ran in fld but did not give DuckDB's rows")
        return 1
    if len(matched) < ARGS.min_match:
        print(f"nexmark oracle: FAILED: {len(matched)} queries match, below the floor of {ARGS.min_match}")
        return 1
    return 0


if __name__ == "__main__":
    ARGS = parse_args()
    sys.exit(main())
