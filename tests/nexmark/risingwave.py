#!/usr/bin/env python3
"""RisingWave's Nexmark end-to-end tests as a second oracle for fld's Nexmark support.

The corpus folder holds RisingWave's sqllogictest files (risingwave/e2e_test):
  nexmark/create_tables.slt.part, insert_{person,auction,bid}.slt.part   the tables and their rows
  streaming/nexmark/views/qN.slt.part    RisingWave's view definitions (CREATE MATERIALIZED VIEW)
  streaming/nexmark/qN.slt.part          `select * from nexmark_qN` and the rows RisingWave expects

1. The slt parts are parsed (`statement ok`, `query TYPES [rowsort|valuesort|nosort]`, `----`,
   expected rows, `include`, `#` comments).
2. RisingWave's dialect is translated to Feldera's by the rewrites in TRANSLATIONS below, each
   mechanical (a syntax for the same thing), never a change of the query's logic. A query that
   needs something fld lacks is run anyway and reported REFUSED with fld's own error.
3. The INSERTed rows become JSON input files of a spec holding the three tables (their
   CREATE TABLE statements as RisingWave wrote them) and the translated view, written by
   file_output as JSON; each query runs in a fresh pipeline. The rows arrive a few per step
   (--batch), then the first half of each table is deleted and inserted again (--churn), so the
   views are maintained incrementally, retractions included, and must end at RisingWave's rows.
4. fld's rows are compared with the expected rows as multisets, both normalised as
   sqllogictest-rs (RisingWave's runner) compares them: a row is its values joined by spaces with
   runs of whitespace collapsed; on top of that each whitespace-separated token that is a number
   is compared as an integer or, when fractional, rounded to 3 decimals, and a time of day's
   fraction loses its trailing zeros. Every sort mode (rowsort here) is compared as a multiset of
   rows: a view has no order.

Each query prints MATCH, DIFFER (with sample rows), KNOWN (rows differ exactly as a documented
dialect difference in KNOWN_DIFFERENCES says: the expected rows, adjusted by that difference's
rule, match fld's) or REFUSED (fld's error), then a total. Exit status 1 when a query DIFFERs
or fails to run, or fewer than --min-match queries MATCH; 77 (ctest: skipped) without the corpus.
Usage: risingwave.py --fld build/fld CORPORA_DIR [--min-match N] [--batch N] [--no-churn] [--keep DIR]
                     [--only q0,q5] [--explain: print the translations and known differences first]"""

import argparse
import decimal
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from oracle import first_error  # fld's first error line, as the DuckDB oracle reports it

SKIP = 77
E2E = os.path.join("risingwave", "e2e_test")

# The rewrites from RisingWave's dialect to Feldera's, in the order they apply (see translate()).
TRANSLATIONS = [
    ("HOP(t, ts, slide, size) in FROM",
     "TABLE(HOP(TABLE t, DESCRIPTOR(ts), slide, size)) AS t: RisingWave's time-window table function "
     "takes the table and column by name, Feldera's by TABLE and DESCRIPTOR; the same arguments in the "
     "same order; both add window_start and window_end columns. RisingWave names the result after "
     "the table (q5 writes bid.auction), so it gets that alias when it has none"),
    ("TUMBLE(t, ts, size) in FROM", "TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), size)) AS t, likewise"),
    ("TO_CHAR(ts, 'pattern')",
     "FORMAT_TIMESTAMP('strftime pattern', ts): PostgreSQL's template patterns (RisingWave's, case-"
     "insensitive as in PostgreSQL) mapped to chrono's: YYYY %Y, MM %m (so 'mm' is the month, as "
     "RisingWave's expected 'HH:mm' = '12:07' shows), DD %d, HH and HH12 %I (12-hour), HH24 %H, MI %M, SS %S"),
    ("CREATE FUNCTION f(...) RETURNS T LANGUAGE SQL AS $$SELECT expr$$",
     "CREATE FUNCTION f(...) RETURNS T AS expr: RisingWave's SQL function body is a SELECT of one "
     "expression; Feldera's is the expression"),
    ("CREATE MATERIALIZED VIEW", "unchanged: Feldera has it too"),
]
# Not translated, so refused by fld with its error: REGEXP_MATCH(s, p)[i] (q21). Feldera has no
# function returning a regular expression's capture groups; its own Nexmark q21
# (benchmark/feldera-sql/benchmarks/nexmark/queries/q21.sql) declares a user-defined function
# re_extract for it, which would be a rewrite of the query rather than a spelling of it.

def truncate_token(index):
    """The rule 'token `index` of the row truncated toward zero'."""
    def rule(tokens):
        d = decimal.Decimal(tokens[index])
        return " ".join(tokens[:index] + [str(int(d.to_integral_value(rounding=decimal.ROUND_DOWN)))] +
                        tokens[index + 1:])
    return rule


AVG_OF_BIGINT = (
    "AVG of BIGINT truncates",
    "AVG of a BIGINT column is a BIGINT in Feldera (the average truncated toward zero), a NUMERIC in "
    "RisingWave (as in PostgreSQL: its expected rows hold q17's 263196.66666666666666666666667). Evidence: Feldera's aggregate tests (runtime_aggtest/aggregate_tests/"
    "test_avg.py, aggtst_int_avg: AVG over INT columns gives integers) and fld's README; the rule truncates "
    "RisingWave's average")
# Rows that differ because the dialects define something differently. Each entry: the query, a
# label, what differs and the evidence, and a rule that turns RisingWave's expected rows into what
# Feldera's semantics give for the same data (a function of one expected row's tokens); the query is KNOWN
# when the adjusted rows match fld's exactly, DIFFER otherwise.
KNOWN_DIFFERENCES = {
    "q4": (*AVG_OF_BIGINT, truncate_token(1)),  # avg = AVG(Q.final), final a MAX of BIGINT prices
    "q6_group_top1": (*AVG_OF_BIGINT, truncate_token(1)),  # AVG(Q.final) OVER a ROWS frame
    "q17": (*AVG_OF_BIGINT, truncate_token(8)),  # avg_price = avg(price); `day` is one token
}


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("corpora", nargs="?", default="")
    ap.add_argument("--fld", required=True)
    ap.add_argument("--min-match", type=int, default=0)
    ap.add_argument("--batch", type=int, default=7,
                    help="records per input per step: the rows arrive over many steps, so the views are "
                         "maintained incrementally, deletions (a MAX or top-K moving) included")
    ap.add_argument("--churn", action=argparse.BooleanOptionalAction, default=True,
                    help="after all rows, delete the first half of each table's rows and insert them again")
    ap.add_argument("--keep", help="keep the work folder here (inputs, specs, outputs)")
    ap.add_argument("--explain", action="store_true", help="print the translations and known differences first")
    ap.add_argument("--only", help="comma-separated query names (q0,q5,...)")
    return ap.parse_args()


# ---------------------------------------------------------------------------------------------
# 1. sqllogictest parts


def parse_slt(path):
    """The records of an slt file, `include`s followed: dicts with kind 'statement' (sql) or
    'query' (sql, types, sort, rows: the expected lines)."""
    records = []
    lines = open(path).read().splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        if not line or line.startswith("#"):
            i += 1
            continue
        words = line.split()
        if words[0] == "include":
            records += parse_slt(os.path.join(os.path.dirname(path), words[1]))
            i += 1
            continue
        if words[0] in ("statement", "query"):
            i += 1
            sql = []
            while i < len(lines) and lines[i].strip() and lines[i].strip() != "----":
                if not lines[i].lstrip().startswith("--") or sql:
                    sql.append(lines[i])
                i += 1
            rec = {"kind": words[0], "sql": "\n".join(sql).strip()}
            if words[0] == "query":
                rec["types"] = words[1] if len(words) > 1 else ""
                rec["sort"] = words[2] if len(words) > 2 else "nosort"
                rec["rows"] = []
                if i < len(lines) and lines[i].strip() == "----":
                    i += 1
                    while i < len(lines) and lines[i].strip():
                        rec["rows"].append(lines[i])
                        i += 1
            records.append(rec)
            continue
        raise SystemExit(f"{path}:{i + 1}: cannot parse {line!r}")
    return records


# ---------------------------------------------------------------------------------------------
# 2. RisingWave's dialect -> Feldera's


def split_args(s):
    """Splits an argument list on commas outside parentheses and quotes."""
    parts, depth, cur, quote = [], 0, "", False
    for ch in s:
        if ch == "'":
            quote = not quote
        elif not quote and ch == "(":
            depth += 1
        elif not quote and ch == ")":
            depth -= 1
        elif not quote and ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
            continue
        cur += ch
    parts.append(cur.strip())
    return parts


def closing_paren(s, open_at):
    depth, quote = 0, False
    for j in range(open_at, len(s)):
        ch = s[j]
        if ch == "'":
            quote = not quote
        elif not quote and ch == "(":
            depth += 1
        elif not quote and ch == ")":
            depth -= 1
            if depth == 0:
                return j
    raise ValueError("unbalanced parentheses")


def rewrite_calls(sql, name, fn):
    """Replaces each call name(...) (a whole word, any case) with fn(args, rest-of-text) ->
    (replacement, characters of the rest consumed)."""
    out, pos = "", 0
    pat = re.compile(r"(?<![\w.])" + name + r"\s*\(", re.I)
    while True:
        m = pat.search(sql, pos)
        if not m:
            return out + sql[pos:]
        end = closing_paren(sql, m.end() - 1)
        rep, used = fn(split_args(sql[m.end():end]), sql[end + 1:])
        out += sql[pos:m.start()] + rep
        pos = end + 1 + used


NOT_ALIAS = {"where", "group", "join", "inner", "left", "right", "full", "cross", "on", "order",
             "having", "limit", "union", "except", "intersect", "window", "natural"}


def window_call(kind):
    def fn(args, rest):
        table, ts = args[0], args[1]
        rep = f"TABLE({kind}(TABLE {table}, DESCRIPTOR({ts}), {', '.join(args[2:])}))"
        m = re.match(r"\s*(?:AS\s+)?(\w+)", rest, re.I)
        if not m or m.group(1).lower() in NOT_ALIAS:
            rep += f" AS {table}"
        return rep, 0
    return fn


TO_CHAR_PATTERNS = [("HH24", "%H"), ("HH12", "%I"), ("YYYY", "%Y"), ("HH", "%I"), ("MI", "%M"),
                    ("SS", "%S"), ("MM", "%m"), ("DD", "%d")]


def to_char_pattern(p):
    out, i = "", 0
    while i < len(p):
        for pg, chrono in TO_CHAR_PATTERNS:
            if p[i:i + len(pg)].upper() == pg:
                out += chrono
                i += len(pg)
                break
        else:
            out += "%%" if p[i] == "%" else p[i]
            i += 1
    return out


def to_char(args, rest):
    m = re.fullmatch(r"'([^']*)'", args[1]) if len(args) == 2 else None
    if not m:
        return f"TO_CHAR({', '.join(args)})", 0  # left for fld to refuse
    return f"FORMAT_TIMESTAMP('{to_char_pattern(m.group(1))}', {args[0]})", 0


def translate(sql):
    sql = re.sub(r"LANGUAGE\s+SQL\s+AS\s+\$\$\s*SELECT\s+(.*?)\$\$", r"AS \1", sql, flags=re.I | re.S)
    sql = rewrite_calls(sql, "HOP", window_call("HOP"))
    sql = rewrite_calls(sql, "TUMBLE", window_call("TUMBLE"))
    sql = rewrite_calls(sql, "TO_CHAR", to_char)
    return sql


# ---------------------------------------------------------------------------------------------
# 3. The data


def sql_values(text):
    """The tuples of an INSERT ... VALUES (...), (...) statement, as Python values."""
    tok = re.compile(r"\s*(?:'((?:[^']|'')*)'|(NULL)\b|(-?\d+(?:\.\d+)?)|([(),]))", re.I)
    rows, row, pos = [], None, text.upper().index("VALUES") + 6
    while True:
        m = tok.match(text, pos)
        if not m:
            break
        pos = m.end()
        s, null, num, punct = m.groups()
        if punct == "(":
            row = []
        elif punct == ")":
            rows.append(row)
            row = None
        elif punct == ",":
            continue
        elif row is not None:
            row.append(s.replace("''", "'") if s is not None else None if null else
                       (float(num) if "." in num else int(num)))
    return rows


def insert_rows(sql):
    m = re.match(r"INSERT\s+INTO\s+(\w+)\s*\(([^)]*)\)\s*VALUES", sql, re.I | re.S)
    cols = [c.strip().strip('"') for c in m.group(2).split(",")]
    return m.group(1).lower(), [dict(zip(cols, r)) for r in sql_values(sql)]


# ---------------------------------------------------------------------------------------------
# 4. Comparing


TIME_FRACTION = re.compile(r"^(\d\d:\d\d:\d\d)\.(\d+)$")


def norm_token(t):
    if t == "NULL":
        return t
    m = TIME_FRACTION.match(t)
    if m:
        frac = m.group(2).rstrip("0")
        return m.group(1) + ("." + frac if frac else "")
    if re.fullmatch(r"-?\d+(\.\d+)?([eE][-+]?\d+)?", t):
        d = decimal.Decimal(t)
        if d == d.to_integral_value():
            return str(int(d))
        return str(d.quantize(decimal.Decimal("0.001"), rounding=decimal.ROUND_HALF_UP))
    return t


def norm_row(text):
    return " ".join(norm_token(t) for t in text.split())


def fld_value(v):
    if v is None:
        return "NULL"
    if v == "":
        return "(empty)"  # as sqllogictest-rs prints an empty string
    if isinstance(v, bool):
        return "t" if v else "f"
    if isinstance(v, float):
        return repr(v)
    return str(v)


def fld_rows(path, columns):
    """The view's rows from fld's JSON output (insert/delete lines), as text rows."""
    counts = {}
    if os.path.exists(path):
        for line in open(path):
            if not line.strip():
                continue
            rec = json.loads(line)
            for kind, sign in (("insert", 1), ("delete", -1)):
                if kind in rec:
                    row = rec[kind]
                    key = " ".join(fld_value(row.get(c, row.get(c.upper()))) for c in columns)
                    counts[key] = counts.get(key, 0) + sign
    out = []
    for k, n in counts.items():
        if n < 0:
            raise ValueError(f"row with a negative weight in fld's output: {k}")
        out += [k] * n
    return out


def multiset_diff(expected, got):
    from collections import Counter
    e, g = Counter(expected), Counter(got)
    return list((e - g).elements()), list((g - e).elements())


# ---------------------------------------------------------------------------------------------


def fld(*args):
    return subprocess.run([ARGS.fld, *args], capture_output=True, text=True)


def view_columns(check_output, view):
    for line in check_output.splitlines():
        m = re.match(r"^view (\w+)(?: \[[^\]]*\])? \((.*)\)\s*$", line)
        if m and m.group(1).lower() == view:
            cols = []
            depth, cur = 0, ""
            for ch in m.group(2) + ",":
                if ch == "," and depth == 0:
                    cols.append(cur.strip().split(" ")[0])
                    cur = ""
                    continue
                depth += (ch == "(") - (ch == ")")
                cur += ch
            return cols
    return None


def main():
    e2e = os.path.join(ARGS.corpora, E2E) if ARGS.corpora else ""
    tables_file = os.path.join(e2e, "nexmark", "create_tables.slt.part")
    if not e2e or not os.path.isfile(tables_file):
        print(f"nexmark risingwave: skipped: {e2e or 'no corpus folder given'} has no nexmark/create_tables.slt.part")
        return SKIP
    if ARGS.explain:
        print("Translations (RisingWave -> Feldera):")
        for what, how in TRANSLATIONS:
            print(f"  {what}\n      -> {how}")
        print("Known differences:")
        for q, (label, why, _) in KNOWN_DIFFERENCES.items():
            print(f"  {q}: {label}: {why}")
    work = ARGS.keep or tempfile.mkdtemp(prefix="fld-rw-nexmark-")
    os.makedirs(work, exist_ok=True)
    try:
        return run(work, e2e)
    finally:
        if not ARGS.keep:
            shutil.rmtree(work, ignore_errors=True)


def run(work, e2e):
    tables_sql = "\n\n".join(r["sql"] for r in parse_slt(tables_file_path(e2e)) if r["kind"] == "statement")
    inputs = {}
    for t in ("person", "auction", "bid"):
        for r in parse_slt(os.path.join(e2e, "nexmark", f"insert_{t}.slt.part")):
            if r["kind"] == "statement" and r["sql"].upper().startswith("INSERT"):
                name, rows = insert_rows(r["sql"])
                path = os.path.join(work, f"{name}.json")
                # Every row inserted; then, with --churn, the first half deleted and inserted
                # again, so the views also retract rows (a MAX or top-K falling back, a join
                # losing a match) and must end where RisingWave's did.
                changes = [("insert", row) for row in rows]
                if ARGS.churn:
                    half = rows[:len(rows) // 2]
                    changes += [("delete", row) for row in half] + [("insert", row) for row in half]
                with open(path, "a") as f:
                    for kind, row in changes:
                        f.write(json.dumps({kind: row}) + "\n")
                inputs[name] = path
    streaming = os.path.join(e2e, "streaming", "nexmark")
    view_recs = parse_slt(os.path.join(streaming, "create_views.slt.part"))
    query_recs = parse_slt(os.path.join(streaming, "test_mv_result.slt.part"))
    queries = []
    for q in query_recs:
        if q["kind"] != "query":
            continue
        m = re.search(r"from\s+(nexmark_\w+)", q["sql"], re.I)
        queries.append((m.group(1).lower(), q))
    only = ARGS.only.split(",") if ARGS.only else None
    matched, known, refused, differ = [], [], [], []
    for view, q in queries:
        name = view[len("nexmark_"):]
        if only and name not in only:
            continue
        # The statements of the view's file: functions it declares, then the view.
        stmts = [r["sql"] for r in view_recs if r["kind"] == "statement" and
                 (re.search(r"\b" + view + r"\b", r["sql"], re.I) or
                  (re.match(r"CREATE\s+FUNCTION", r["sql"], re.I) and uses_function(r["sql"], view_recs, view)))]
        sql = tables_sql + "\n\n" + "\n\n".join(translate(s).rstrip().rstrip(";") + ";" for s in stmts)
        out = os.path.join(work, f"{name}.out.json")
        if os.path.exists(out):
            os.remove(out)
        spec = {
            "name": f"rw_{name}",
            "sql": sql,
            "workers": 2,
            "fault_tolerance": {"model": "none"},
            "storage": {"path": os.path.join(work, f"{name}.fld")},
            "connectors": {
                t: [{"transport": {"name": "file_input", "config": {"path": p}}, "max_batch_size": ARGS.batch,
                     "format": {"name": "json", "config": {"update_format": "insert_delete"}}}]
                for t, p in inputs.items()
            },
        }
        spec["connectors"][view] = [{"transport": {"name": "file_output", "config": {"path": out}},
                                     "format": {"name": "json"}}]
        shutil.rmtree(spec["storage"]["path"], ignore_errors=True)
        spec_path = os.path.join(work, f"{name}.yaml")
        with open(spec_path, "w") as f:
            json.dump(spec, f, indent=1)
        r = fld("check", spec_path)
        if r.returncode != 0 and not re.search(r"\.yaml:\d+:\d+: error:", r.stderr + r.stdout):
            differ.append(name)  # not the SQL: the spec this script wrote
            print(f"  {name:14} FAILED: {first_error(r)}")
            continue
        if r.returncode != 0:
            refused.append(name)
            print(f"  {name:14} REFUSED: {first_error(r)}")
            continue
        cols = view_columns(r.stdout, view)
        r = fld("run", "--quiet", spec_path)
        if r.returncode != 0:
            differ.append(name)
            print(f"  {name:14} FAILED: {first_error(r)}")
            continue
        got = sorted(norm_row(x) for x in fld_rows(out, cols))
        expected = sorted(norm_row(x) for x in q["rows"])
        missing, extra = multiset_diff(expected, got)
        if not missing and not extra:
            matched.append(name)
            print(f"  {name:14} MATCH   {len(expected)} rows")
            continue
        if name in KNOWN_DIFFERENCES:
            why, _, rule = KNOWN_DIFFERENCES[name]
            adjusted = sorted(norm_row(rule(x.split())) for x in q["rows"])
            m2, e2 = multiset_diff(adjusted, got)
            if not m2 and not e2:
                known.append(name)
                print(f"  {name:14} KNOWN   {len(expected)} rows; {len(missing)} differ as documented: {why}")
                continue
            missing, extra = m2, e2
        differ.append(name)
        print(f"  {name:14} DIFFER: RisingWave {len(expected)} rows, fld {len(got)}; "
              f"{len(missing)} missing in fld, {len(extra)} extra")
        for s in missing[:4]:
            print(f"         - {s[:200]}")
        for s in extra[:4]:
            print(f"         + {s[:200]}")
    total = len(matched) + len(known) + len(refused) + len(differ)
    print(f"nexmark risingwave: {len(matched)} of {total} queries match RisingWave's expected rows "
          f"({', '.join(matched) or 'none'}); {len(known)} differ only as documented dialect differences "
          f"({', '.join(known) or 'none'}); {len(refused)} refused by fld ({', '.join(refused) or 'none'}); "
          f"{len(differ)} differ or fail (floor {ARGS.min_match})")
    if differ:
        print(f"nexmark risingwave: FAILED: {', '.join(differ)} ran in fld but did not give RisingWave's rows")
        return 1
    if len(matched) < ARGS.min_match:
        print(f"nexmark risingwave: FAILED: {len(matched)} queries match, below the floor of {ARGS.min_match}")
        return 1
    return 0


def tables_file_path(e2e):
    return os.path.join(e2e, "nexmark", "create_tables.slt.part")


def uses_function(fn_sql, records, view):
    """Whether the view's statement calls the function fn_sql declares."""
    fname = re.match(r"CREATE\s+FUNCTION\s+(\w+)", fn_sql, re.I).group(1)
    return any(r["kind"] == "statement" and re.search(r"\b" + view + r"\b", r["sql"], re.I) and
               re.search(r"\b" + fname + r"\s*\(", r["sql"], re.I) for r in records)


if __name__ == "__main__":
    ARGS = parse_args()
    sys.exit(main())
