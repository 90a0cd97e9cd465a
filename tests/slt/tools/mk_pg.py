#!/usr/bin/env python3
"""mk_pg.py FILE.sql > FILE.test: like mk.py ('S: <sql>' statements, 'Q <types> [mode]: <sql>'
queries, 'E: <sql>' statements fld must refuse), with expected answers from PostgreSQL 15 for
what SQLite lacks (GROUPING SETS, ROLLUP, CUBE, EXCEPT ALL, INTERSECT ALL). Connects with psql's
usual environment (PGHOST, PGPORT, PGUSER); every run starts from an empty schema."""
import subprocess, sys

def psql(sql):
    r = subprocess.run(["psql", "-X", "-q", "-A", "-t", "-F", "\t", "-P", "null=NULL", "-v", "ON_ERROR_STOP=1",
                        "-c", sql], capture_output=True, text=True)
    if r.returncode: sys.exit("psql error: %s\n%s" % (r.stderr, sql))
    return [line.split("\t") for line in r.stdout.splitlines() if line != ""]

def fmt(v, t):
    if v == "NULL": return v
    if t == "R": return "%.3f" % float(v)
    if t == "I": return str(int(float(v))) if v not in ("t", "f") else ("1" if v == "t" else "0")
    return "(empty)" if v == "" else v

psql("DROP SCHEMA IF EXISTS mkpg CASCADE; CREATE SCHEMA mkpg")
setup = "SET search_path = mkpg; "
out = []
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    if not line.strip() or line.startswith("#"): continue
    head, sql = line.split(":", 1)
    sql = sql.strip()
    if head == "S":
        psql(setup + sql); out.append("statement ok\n%s\n" % sql); continue
    if head == "E":
        out.append("statement error\n%s\n" % sql); continue
    parts = head.split()
    types = parts[1]; mode = parts[2] if len(parts) > 2 else "rowsort"
    rows = [[fmt(v, t) for v, t in zip(r, types)] for r in psql(setup + sql)]
    if mode == "rowsort": rows.sort()
    vals = [v for r in rows for v in r]
    out.append("query %s %s\n%s\n----\n%s" % (types, mode, sql, "".join(v + "\n" for v in vals)))
print("# Expected answers from PostgreSQL 15 (tests/slt/tools/mk_pg.py).\n")
print("\n".join(out))
