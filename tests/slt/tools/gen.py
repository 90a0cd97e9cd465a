#!/usr/bin/env python3
"""Differential sqllogictest generator: random typed queries, expected answers from sqlite3.

Usage: gen.py SEED NQUERIES [all|deep|big|comma] > FILE.test

Only generates SQL whose standard semantics agree with SQLite's (typed expressions, lower-case
strings for LIKE, small values, no mixed-type comparisons), so a mismatch is a bug candidate.
"""
import random
import sqlite3
import sys

R = random.Random(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
NQ = int(sys.argv[2]) if len(sys.argv) > 2 else 500
MODE = sys.argv[3] if len(sys.argv) > 3 else "all"

TABLES = {
    "t1": [("a", "I"), ("b", "I"), ("c", "T"), ("d", "R")],
    "t2": [("k", "I"), ("x", "I"), ("y", "T")],  # k is the primary key
    "t3": [("a", "I"), ("e", "I"), ("s", "T")],
}
DDL = {
    "t1": "CREATE TABLE t1(a INTEGER, b INTEGER, c VARCHAR(10), d DOUBLE)",
    "t2": "CREATE TABLE t2(k INTEGER PRIMARY KEY, x INTEGER, y VARCHAR(10))",
    "t3": "CREATE TABLE t3(a INTEGER NOT NULL, e INTEGER, s VARCHAR(10))",
}
STRS = ["a", "b", "ab", "abc", "", "x", "ba", "b_c", "zz", "a%"]
REALS = [1.5, -2.25, 0.0, 3.0, 0.5, -0.75, 10.25]


def ival(null=0.2):
    return None if R.random() < null else R.randint(-4, 9)


def sval(null=0.2):
    return None if R.random() < null else R.choice(STRS)


def rval(null=0.2):
    return None if R.random() < null else R.choice(REALS)


def lit(v):
    if v is None:
        return "NULL"
    if isinstance(v, str):
        return "'" + v.replace("'", "''") + "'"
    return repr(v)


BIG = MODE == "big"


def big_int():
    r = R.random()
    if r < 0.1:
        return None
    if r < 0.5:
        return R.randint(-4, 9)
    if r < 0.8:
        return R.randint(-100000, 100000)
    return R.choice([70000, -70000, 65535, 65536, 0, 99999])


def make_rows():
    rows = {"t1": [], "t2": [], "t3": []}
    if BIG:
        for _ in range(R.randint(50, 400)):
            rows["t1"].append((big_int(), big_int(), sval(), rval()))
        for k in R.sample(range(-100000, 100000), R.randint(20, 200)):
            rows["t2"].append((k, R.choice([None, R.randint(-4, 9), R.randint(-100000, 100000)]), sval()))
        for _ in range(R.randint(20, 300)):
            rows["t3"].append((R.randint(-2, 6) if R.random() < 0.7 else R.randint(-100000, 100000), big_int(), sval()))
        return rows
    for _ in range(R.randint(0, 9)):
        rows["t1"].append((ival(), ival(), sval(), rval()))
    keys = R.sample(range(-3, 12), R.randint(0, 8))
    for k in keys:
        rows["t2"].append((k, ival(), sval()))
    for _ in range(R.randint(0, 8)):
        rows["t3"].append((R.randint(-2, 6), ival(), sval()))
    # duplicates on purpose
    for t in ("t1", "t3"):
        if rows[t] and R.random() < 0.5:
            rows[t].append(R.choice(rows[t]))
    return rows


class Gen:
    def __init__(self, scope, agg=None):
        # scope: list of (sql_name, type) usable columns
        self.scope = scope
        self.agg = agg  # None, or list of (sql_name, type) of columns usable inside aggregates

    def cols(self, t):
        return [n for n, ty in self.scope if ty == t]

    def expr(self, t, d=0):
        if t == "I":
            return self.iexpr(d)
        if t == "T":
            return self.sexpr(d)
        if t == "R":
            return self.rexpr(d)
        return self.bexpr(d)

    def leaf(self, t):
        cs = self.cols(t)
        if cs and R.random() < 0.75:
            return R.choice(cs)
        if t == "I":
            return str(R.randint(-3, 12)) if R.random() < 0.9 else "CAST(NULL AS INTEGER)"
        if t == "T":
            return lit(R.choice(STRS))
        if t == "R":
            return lit(R.choice(REALS))
        return R.choice(["TRUE", "FALSE"])

    def aggcall(self, t):
        g = Gen(self.agg)
        if t == "I":
            k = R.choice(["COUNT(*)", "COUNT", "SUM", "MIN", "MAX", "COUNTD", "SUMD", "MIND"])
            if k == "COUNT(*)":
                return "COUNT(*)"
            if k == "COUNT":
                return "COUNT(%s)" % g.expr(R.choice("IT"), 1)
            if k == "COUNTD":
                return "COUNT(DISTINCT %s)" % g.expr(R.choice("IT"), 1)
            if k == "SUMD":
                return "SUM(DISTINCT %s)" % g.iexpr(1)
            if k == "MIND":
                return "%s(DISTINCT %s)" % (R.choice(["MIN", "MAX"]), g.iexpr(1))
            return "%s(%s)" % (k, g.iexpr(1))
        if t == "T":
            return "%s(%s)" % (R.choice(["MIN", "MAX"]), g.sexpr(1))
        if t == "R":
            k = R.choice(["AVG", "AVGD", "SUM", "MIN"])
            if k == "AVG":
                return "AVG(%s)" % g.iexpr(1)
            if k == "AVGD":
                return "AVG(DISTINCT %s)" % g.iexpr(1)
            return "%s(%s)" % (k, g.rexpr(1))
        raise ValueError

    def iexpr(self, d):
        if self.agg is not None and R.random() < 0.35:
            return self.aggcall("I")
        if d >= 3 or R.random() < 0.3:
            return self.leaf("I")
        k = R.randint(0, 11)
        if k <= 3:
            op = R.choice(["+", "-", "*", "+", "-", "/", "%"])
            return "(%s %s %s)" % (self.iexpr(d + 1), op, self.iexpr(d + 1))
        if k == 4:
            return "- %s" % self.iexpr(d + 1)
        if k == 5:
            n = R.randint(1, 2)
            s = "CASE"
            for _ in range(n):
                s += " WHEN %s THEN %s" % (self.bexpr(d + 1), self.iexpr(d + 1))
            if R.random() < 0.7:
                s += " ELSE %s" % self.iexpr(d + 1)
            return s + " END"
        if k == 6:
            s = "CASE %s" % self.iexpr(d + 1)
            for _ in range(R.randint(1, 2)):
                s += " WHEN %s THEN %s" % (self.iexpr(d + 1), self.iexpr(d + 1))
            if R.random() < 0.5:
                s += " ELSE %s" % self.iexpr(d + 1)
            return s + " END"
        if k == 7:
            return "COALESCE(%s)" % ", ".join(self.iexpr(d + 1) for _ in range(R.randint(1, 3)))
        if k == 8:
            return "NULLIF(%s, %s)" % (self.iexpr(d + 1), self.iexpr(d + 1))
        if k == 9:
            return "ABS(%s)" % self.iexpr(d + 1)
        if k == 10:
            return "CAST(%s AS BIGINT)" % self.rexpr(d + 1)
        return self.leaf("I")

    def sexpr(self, d):
        if self.agg is not None and R.random() < 0.25:
            return self.aggcall("T")
        if d >= 3 or R.random() < 0.4:
            return self.leaf("T")
        k = R.randint(0, 5)
        if k == 0:
            return "(%s || %s)" % (self.sexpr(d + 1), self.sexpr(d + 1))
        if k == 1:
            return "CASE WHEN %s THEN %s ELSE %s END" % (self.bexpr(d + 1), self.sexpr(d + 1), self.sexpr(d + 1))
        if k == 2:
            return "COALESCE(%s, %s)" % (self.sexpr(d + 1), self.sexpr(d + 1))
        if k == 3:
            return "NULLIF(%s, %s)" % (self.sexpr(d + 1), self.sexpr(d + 1))
        if k == 4:
            return "CAST(%s AS VARCHAR)" % self.iexpr(d + 1)
        return self.leaf("T")

    def rexpr(self, d):
        if self.agg is not None and R.random() < 0.35:
            return self.aggcall("R")
        if d >= 3 or R.random() < 0.4:
            return self.leaf("R")
        k = R.randint(0, 4)
        if k <= 1:
            op = R.choice(["+", "-", "*"])
            a, b = self.rexpr(d + 1), (self.rexpr(d + 1) if R.random() < 0.5 else self.iexpr(d + 1))
            if R.random() < 0.5:
                a, b = b, a
            return "(%s %s %s)" % (a, op, b)
        if k == 2:
            return "COALESCE(%s, %s)" % (self.rexpr(d + 1), self.rexpr(d + 1))
        if k == 3:
            return "ABS(%s)" % self.rexpr(d + 1)
        return "CAST(%s AS DOUBLE)" % self.iexpr(d + 1) if R.random() < 0.5 else self.leaf("R")

    def bexpr(self, d=0):
        if d >= 3:
            t = R.choice("IT")
            return "%s %s %s" % (self.leaf(t), R.choice(["=", "<>", "<", ">", "<=", ">="]), self.leaf(t))
        k = R.randint(0, 12)
        if k <= 2:
            t = R.choice("IITR")
            a = self.expr(t, d + 1)
            b = self.expr(t if t != "R" else R.choice("IR"), d + 1)
            return "%s %s %s" % (a, R.choice(["=", "<>", "<", ">", "<=", ">="]), b)
        if k == 3:
            return "(%s AND %s)" % (self.bexpr(d + 1), self.bexpr(d + 1))
        if k == 4:
            return "(%s OR %s)" % (self.bexpr(d + 1), self.bexpr(d + 1))
        if k == 5:
            return "NOT (%s)" % self.bexpr(d + 1)
        if k == 6:
            return "%s IS %sNULL" % (self.expr(R.choice("ITR"), d + 1), R.choice(["", "NOT "]))
        if k == 7:
            t = R.choice("IT")
            return "%s %sBETWEEN %s AND %s" % (self.expr(t, d + 1), R.choice(["", "NOT "]), self.expr(t, d + 1),
                                               self.expr(t, d + 1))
        if k == 8:
            t = R.choice("IT")
            items = [self.expr(t, 2) if R.random() < 0.8 else "NULL" for _ in range(R.randint(1, 4))]
            return "%s %sIN (%s)" % (self.expr(t, d + 1), R.choice(["", "NOT "]), ", ".join(items))
        if k == 9:
            pat = R.choice(["a%", "%b", "_", "%", "a_c", "b\\_c", "%a%", "", "ab"])
            if "\\" in pat:
                return "%s LIKE '%s' ESCAPE '\\'" % (self.sexpr(d + 1), pat)
            return "%s %sLIKE %s" % (self.sexpr(d + 1), R.choice(["", "NOT "]), lit(pat))
        if k == 10:
            t = R.choice("IT")
            return "%s IS %sDISTINCT FROM %s" % (self.expr(t, d + 1), R.choice(["", "NOT "]), self.expr(t, d + 1))
        if k == 11:
            return "(%s) IS %s%s" % (self.bexpr(d + 1), R.choice(["", "NOT "]), R.choice(["TRUE", "FALSE"]))
        return self.leaf("B") if self.cols("B") else "%s = %s" % (self.leaf("I"), self.leaf("I"))


def scope_of(table, alias=None):
    q = alias or table
    return [("%s.%s" % (q, c), t) for c, t in TABLES[table]]


def rand_from():
    """Returns (from_sql, scope, where_extra)."""
    k = R.randint(0, 9)
    ts = ["t1", "t2", "t3"]
    if k <= 2:
        t = R.choice(ts)
        alias = R.choice([None, "q"])
        return (t + (" AS q" if alias else ""), scope_of(t, alias))
    a, b = R.sample(ts, 2) if R.random() < 0.8 else (R.choice(ts),) * 2
    sa, sb = scope_of(a, "l"), scope_of(b, "r")
    ia = [n for n, t in sa if t == "I"]
    ib = [n for n, t in sb if t == "I"]
    on = "%s = %s" % (R.choice(ia), R.choice(ib))
    if R.random() < 0.3:
        sta = [n for n, t in sa if t == "T"]
        stb = [n for n, t in sb if t == "T"]
        on += " AND %s = %s" % (R.choice(sta), R.choice(stb))
    j = R.choice(["JOIN", "JOIN", "LEFT JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN", "CROSS", "COMMA"])
    if j == "CROSS":
        return ("%s AS l CROSS JOIN %s AS r" % (a, b), sa + sb)
    if j == "COMMA":
        return ("%s AS l, %s AS r" % (a, b), sa + sb, on)
    if R.random() < 0.2 and j == "JOIN":
        on += " AND " + Gen(sa + sb).bexpr(2)
    return ("%s AS l %s %s AS r ON %s" % (a, j, b, on), sa + sb)


def rand_from3():
    ts = ["t1", "t2", "t3"]
    names = [R.choice(ts) for _ in range(3)]
    scopes = [scope_of(t, "j%d" % i) for i, t in enumerate(names)]
    sql = "%s AS j0" % names[0]
    scope = list(scopes[0])
    for i in (1, 2):
        prev = [n for n, t in scope if t == "I"]
        mine = [n for n, t in scopes[i] if t == "I"]
        j = R.choice(["JOIN", "LEFT JOIN", "JOIN", "RIGHT JOIN", "FULL JOIN"])
        sql += " %s %s AS j%d ON %s = %s" % (j, names[i], i, R.choice(prev), R.choice(mine))
        scope += scopes[i]
    return (sql, scope)


def comma_from():
    """3-4 comma-joined tables with random equality links (maybe disconnected, maybe cyclic)."""
    n = R.randint(3, 4)
    names = [R.choice(["t1", "t2", "t3"]) for _ in range(n)]
    scopes = [scope_of(t, "c%d" % i) for i, t in enumerate(names)]
    scope = [c for sc in scopes for c in sc]
    conds = []
    for _ in range(R.randint(0, n + 1)):
        i, j = R.sample(range(n), 2)
        a = R.choice([c for c, t in scopes[i] if t == "I"])
        b = R.choice([c for c, t in scopes[j] if t == "I"])
        conds.append("%s = %s" % (a, b) if R.random() < 0.85 else "%s + 1 = %s" % (a, b))
    if R.random() < 0.5:
        conds.append(Gen(scopes[R.randrange(n)]).bexpr(2))
    sql = ", ".join("%s AS c%d" % (t, i) for i, t in enumerate(names))
    if conds:
        return (sql, scope, " AND ".join(conds))
    return (sql, scope)


def derived_from():
    """A derived table with GROUP BY (or a view)."""
    t = R.choice(["t1", "t2", "t3"])
    cols = TABLES[t]
    icols = [c for c, ty in cols if ty == "I"]
    scols = [c for c, ty in cols if ty == "T"]
    g = R.choice(icols + scols)
    gty = dict(cols)[g]
    ag = R.choice(icols)
    inner = "SELECT %s AS g, COUNT(*) AS n, SUM(%s) AS s, MAX(%s) AS m FROM %s GROUP BY %s" % (g, ag, ag, t, g)
    if R.random() < 0.3:
        inner += " HAVING COUNT(*) > 1"
    return ("(%s) AS dt" % inner, [("dt.g", gty), ("dt.n", "I"), ("dt.s", "I"), ("dt.m", "I")])


def select_query():
    """Returns (sql, types) or None."""
    r = R.random()
    if MODE == "comma" and r < 0.6:
        f = comma_from()
    elif r < 0.2:
        f = rand_from3()
    elif r < 0.3:
        f = derived_from()
    elif r < 0.4 and VIEWS:
        v = R.choice(VIEWS)
        f = (v[0], [("%s.%s" % (v[0], c), t) for c, t in v[1]])
    else:
        f = rand_from()
    from_sql, scope = f[0], f[1]
    where = []
    if len(f) > 2:
        where.append(f[2])
    if R.random() < 0.5:
        where.append(Gen(scope).bexpr())
    where_sql = (" WHERE " + " AND ".join(where)) if where else ""
    kind = R.random()
    if kind < 0.45:
        # plain projection
        n = R.randint(1, 4)
        types = [R.choice("IIITTRB") for _ in range(n)]
        g = Gen(scope)
        items = [g.expr(t) for t in types]
        distinct = "DISTINCT " if R.random() < 0.2 else ""
        sql = "SELECT %s%s FROM %s%s" % (distinct, ", ".join(items), from_sql, where_sql)
    else:
        # aggregate
        ng = R.randint(0, 2)
        gcols = R.sample(scope, min(ng, len(scope)))
        if gcols and R.random() < 0.3:
            # group by an expression instead of a column
            c, t = gcols[0]
            if t == "I":
                gcols[0] = ("(%s %s %d)" % (c, R.choice(["+", "*", "/", "%"]), R.randint(1, 4)), "I")
            elif t == "T":
                gcols[0] = ("COALESCE(%s, 'nil')" % c, "T")
        gexprs = [c for c, t in gcols]
        g = Gen(gcols, agg=scope)
        n = R.randint(1, 4)
        types = [R.choice("IIITR") for _ in range(n)]
        items = []
        for t in types:
            if t == "T" and not any(ty == "T" for _, ty in gcols) and R.random() < 0.5:
                items.append(g.aggcall("T"))
            else:
                items.append(g.expr(t))
        # group columns themselves sometimes
        for c, t in gcols:
            if R.random() < 0.6:
                items.append(c)
                types.append(t)
        sql = "SELECT %s FROM %s%s" % (", ".join(items), from_sql, where_sql)
        if gexprs:
            sql += " GROUP BY " + ", ".join(gexprs)
        if R.random() < 0.3:
            sql += " HAVING " + Gen(gcols, agg=scope).bexpr(1)
    return sql, types


def query():
    r = R.random()
    if r < 0.1:
        # set operation
        a = select_query()
        for _ in range(20):
            b = select_query()
            if b[1] == a[1]:
                return "%s %s %s" % (a[0], R.choice(["UNION", "UNION ALL", "EXCEPT", "INTERSECT"]), b[0]), a[1]
        return a
    if r < 0.2:
        inner, types = select_query()
        return "SELECT * FROM (%s) AS sq" % inner, types
    return select_query()


def fmt_value(v, t):
    if v is None:
        return "NULL"
    if t == "I":
        if isinstance(v, float):
            return str(int(v))
        if isinstance(v, str):
            import re
            m = re.match(r"\s*[-+]?\d+", v)
            return str(int(m.group(0))) if m else "0"
        return str(v)
    if t == "R":
        if isinstance(v, str):
            try:
                v = float(v)
            except ValueError:
                v = 0.0
        return "%.3f" % float(v)
    if isinstance(v, float):
        s = "%.15g" % v
        if "." not in s and "e" not in s:
            s += ".0"
        return s
    s = str(v)
    if s == "":
        return "(empty)"
    return "".join("@" if (ord(ch) < 0x20 or ord(ch) >= 0x7f) else ch for ch in s)


VIEWS = []


def make_views(db, out):
    specs = [
        ("v1", "SELECT a, b, c FROM t1 WHERE b IS NOT NULL", [("a", "I"), ("b", "I"), ("c", "T")]),
        ("v2", "SELECT v1.a AS a, COUNT(*) AS n, MIN(v1.c) AS c FROM v1 GROUP BY v1.a",
         [("a", "I"), ("n", "I"), ("c", "T")]),
        ("v3", "SELECT t2.k AS k, t3.e AS e, t2.y AS y FROM t2 LEFT JOIN t3 ON t2.x = t3.a",
         [("k", "I"), ("e", "I"), ("y", "T")]),
        ("v4", "SELECT DISTINCT a, e FROM t3", [("a", "I"), ("e", "I")]),
        ("v5", "SELECT v2.a AS a, v2.n AS n, v4.e AS e FROM v2 JOIN v4 ON v2.a = v4.a",
         [("a", "I"), ("n", "I"), ("e", "I")]),
    ]
    for name, q, cols in specs:
        stmt = "CREATE VIEW %s AS %s" % (name, q)
        db.execute(stmt)
        out.append("statement ok\n%s\n" % stmt)
        TABLES[name] = cols
        VIEWS.append((name, cols))


def mutate(db, out):
    t = R.choice(["t1", "t3"])
    g = Gen(scope_of(t))
    if R.random() < 0.5:
        stmt = "DELETE FROM %s WHERE %s" % (t, g.bexpr(1))
    else:
        col, ty = R.choice([(c, ty) for c, ty in TABLES[t] if ty in "IT" and not (t == "t3" and c == "a")])
        val = g.iexpr(2) if ty == "I" else g.sexpr(2)
        stmt = "UPDATE %s SET %s = %s WHERE %s" % (t, col, val.replace(t + ".", ""), g.bexpr(2).replace(t + ".", ""))
    try:
        db.execute(stmt)
    except sqlite3.Error:
        return
    out.append("statement ok\n%s\n" % stmt)


def main():
    out = []
    db = sqlite3.connect(":memory:")
    rows = make_rows()
    out.append("hash-threshold 1000000\n")
    for t in ["t1", "t2", "t3"]:
        db.execute(DDL[t])
        out.append("statement ok\n%s\n" % DDL[t])
        for r in rows[t]:
            stmt = "INSERT INTO %s VALUES(%s)" % (t, ", ".join(lit(v) for v in r))
            db.execute(stmt)
            out.append("statement ok\n%s\n" % stmt)
    if MODE in ("deep", "all", "comma"):
        make_views(db, out)
    n = 0
    tries = 0
    while n < NQ and tries < NQ * 20:
        tries += 1
        sql, types = query()
        types = ["I" if t == "B" else t for t in types]
        order = ""
        mode = "rowsort"
        if R.random() < 0.15:
            order = " ORDER BY " + ", ".join("%d%s" % (i + 1, R.choice(["", " DESC"])) for i in range(len(types)))
            if R.random() < 0.5:
                order += " LIMIT %d" % R.randint(0, 5)
                if R.random() < 0.5:
                    order += " OFFSET %d" % R.randint(0, 3)
            mode = "nosort"
        try:
            res = db.execute(sql + order).fetchall()
        except sqlite3.Error:
            continue
        except OverflowError:
            continue
        frows = [[fmt_value(v, t) for v, t in zip(row, types)] for row in res]
        if any(v == "-0.000" for row in frows for v in row):
            continue  # -0.0 from SQLite REAL arithmetic on exact (DECIMAL) literals
        if mode == "rowsort":
            frows.sort()
        vals = [v for row in frows for v in row]
        if any(isinstance(v, float) for row in res for v, t in zip(row, types) if t == "I"):
            continue  # a REAL in an INTEGER column: the generator's typing is off
        out.append("query %s %s\n%s\n----\n%s" % ("".join(types), mode, sql + order,
                                                 "".join(v + "\n" for v in vals)))
        n += 1
        if MODE in ("deep", "all") and R.random() < 0.03:
            mutate(db, out)
    sys.stdout.write("\n".join(out))


main()
