#!/usr/bin/env python3
"""mk_pg.py FILE.sql > FILE.test: like mk.py ('S: <sql>' statements, 'Q <types> [mode]: <sql>'
queries), but the expected answers come from PostgreSQL through psql (the server named by the
usual PGHOST/PGPORT/PGUSER/PGDATABASE variables). Each run starts from a fresh schema. A query
may end with ' --pg: <sql>': PostgreSQL answers that form of it (for syntax it lacks, such as
GROUP BY HOP(...)), the .test keeps the first."""
import subprocess, sys

SCHEMA = "slt_mk_pg"


def psql(sql):
    script = "SET client_min_messages = warning;\nSET search_path = %s;\n%s;\n" % (SCHEMA, sql)
    r = subprocess.run(["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-F", "\x1f", "-P", "null=\x1e"],
                       input=script, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("%s: %s" % (sql, r.stderr.strip()))
    return [line.split("\x1f") for line in r.stdout.split("\n") if line != ""]


def fmt_value(v, t):
    if v == "\x1e": return "NULL"
    if t == "I": return ("1" if v == "t" else "0") if v in ("t", "f") else str(int(float(v)))
    if t == "R": return "%.3f" % float(v)
    return "(empty)" if v == "" else v


subprocess.run(["psql", "-X", "-q", "-c", "DROP SCHEMA IF EXISTS %s CASCADE; CREATE SCHEMA %s" % (SCHEMA, SCHEMA)],
               check=True, capture_output=True)
out = []
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    if not line.strip() or line.startswith("#"): continue
    head, sql = line.split(":", 1)
    sql = sql.strip()
    if head == "S":
        psql(sql); out.append("statement ok\n%s\n" % sql); continue
    if head == "E":
        out.append("statement error\n%s\n" % sql); continue
    pg_sql = sql
    if " --pg: " in sql: sql, pg_sql = [x.strip() for x in sql.split(" --pg: ", 1)]
    parts = head.split()
    types = parts[1]; mode = parts[2] if len(parts) > 2 else "rowsort"
    rows = [[fmt_value(v, t) for v, t in zip(r, types)] for r in psql(pg_sql)]
    if mode == "rowsort": rows.sort()
    vals = [v for r in rows for v in r]
    out.append("query %s %s\n%s\n----\n%s" % (types, mode, sql, "".join(v + "\n" for v in vals)))
print("\n".join(out))
