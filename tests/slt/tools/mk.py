#!/usr/bin/env python3
"""mk.py FILE.sql > FILE.test: lines 'S: <sql>' are statements, 'Q <types> [mode]: <sql>' queries.
Expected answers come from sqlite3."""
import sqlite3, sys, re
def fmt_value(v, t):
    if v is None: return "NULL"
    if t == "I":
        if isinstance(v, float): return str(int(v))
        if isinstance(v, str):
            m = re.match(r"\s*[-+]?\d+", v); return str(int(m.group(0))) if m else "0"
        return str(v)
    if t == "R": return "%.3f" % float(v)
    if isinstance(v, float):
        s = "%.15g" % v
        return s + ".0" if "." not in s and "e" not in s else s
    s = str(v)
    return "(empty)" if s == "" else "".join("@" if ord(c) < 0x20 or ord(c) >= 0x7f else c for c in s)
db = sqlite3.connect(":memory:")
out = []
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    if not line.strip() or line.startswith("#"): continue
    head, sql = line.split(":", 1)
    sql = sql.strip()
    if head == "S":
        db.execute(sql); out.append("statement ok\n%s\n" % sql); continue
    if head == "E":
        out.append("statement error\n%s\n" % sql); continue
    parts = head.split()
    types = parts[1]; mode = parts[2] if len(parts) > 2 else "rowsort"
    try:
        res = db.execute(sql).fetchall()
    except sqlite3.Error as e:
        sys.stderr.write("sqlite error %s: %s\n" % (e, sql)); continue
    rows = [[fmt_value(v, t) for v, t in zip(r, types)] for r in res]
    if mode == "rowsort": rows.sort()
    vals = [v for r in rows for v in r]
    out.append("query %s %s\n%s\n----\n%s" % (types, mode, sql, "".join(v + "\n" for v in vals)))
print("\n".join(out))
