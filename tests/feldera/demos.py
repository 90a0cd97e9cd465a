#!/usr/bin/env python3
"""Feldera's demo programs (crates/pipeline-manager/demos/sql of the Feldera corpus) in `fld check`.

Each demo's SQL goes verbatim into a spec, except for its connectors: a `'connectors' = '...'`
property whose transports fld does not have (Kafka, Delta Lake, HTTP, S3...) is removed, and a
connector fld has (datagen) is kept, so `fld check` also validates its configuration. A `WITH ()`
left empty is removed. Prints one line per demo: ACCEPTED, or REFUSED with fld's error.

Exit status 1 when fewer than --min-accepted demos are accepted, or when a demo named with
--require is refused; 77 (ctest: skipped) without the corpus.
Usage: demos.py --fld build/fld CORPORA_DIR [--min-accepted N] [--require 00,03] [--keep DIR]"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

DEMOS = os.path.join("feldera", "crates", "pipeline-manager", "demos", "sql")
SKIP = 77
SUPPORTED_TRANSPORTS = {"datagen"}


def read_string(sql, i):
    """The SQL string literal starting at sql[i] == "'": (its value, index after it)."""
    assert sql[i] == "'"
    out = []
    j = i + 1
    while j < len(sql):
        if sql[j] == "'":
            if j + 1 < len(sql) and sql[j + 1] == "'":
                out.append("'")
                j += 2
                continue
            return "".join(out), j + 1
        out.append(sql[j])
        j += 1
    raise ValueError(f"unterminated string at offset {i}")


def skip_space(sql, i):
    while i < len(sql):
        if sql[i].isspace():
            i += 1
        elif sql.startswith("--", i):
            nl = sql.find("\n", i)
            i = len(sql) if nl < 0 else nl + 1
        else:
            break
    return i


def kept_connectors(value):
    """The connectors list with only the transports fld has, or None when nothing is left."""
    try:
        conns = json.loads(value)
    except json.JSONDecodeError:
        return None
    kept = [c for c in conns if c.get("transport", {}).get("name") in SUPPORTED_TRANSPORTS]
    return json.dumps(kept) if kept else None


def strip_connectors(sql):
    """sql with unsupported connectors removed (see the module comment). Comments and other
    strings are copied as they are."""
    out = []
    i = 0
    while i < len(sql):
        c = sql[i]
        if sql.startswith("--", i):
            nl = sql.find("\n", i)
            end = len(sql) if nl < 0 else nl + 1
            out.append(sql[i:end])
            i = end
        elif c == "'":
            value, end = read_string(sql, i)
            if value.lower() != "connectors":
                out.append(sql[i:end])
                i = end
                continue
            j = skip_space(sql, end)
            if j >= len(sql) or sql[j] != "=":
                out.append(sql[i:end])
                i = end
                continue
            j = skip_space(sql, j + 1)
            conns, after = read_string(sql, j)
            kept = kept_connectors(conns)
            if kept is not None:
                out.append("'connectors' = '" + kept.replace("'", "''") + "'")
                i = after
                continue
            # Drop the property and one comma next to it (the following one, else the previous).
            k = skip_space(sql, after)
            if k < len(sql) and sql[k] == ",":
                i = k + 1
            else:
                i = after
                text = "".join(out).rstrip()
                if text.endswith(","):
                    out = [text[:-1]]
        else:
            out.append(c)
            i += 1
    return drop_empty_with("".join(out))


def drop_empty_with(sql):
    """Removes `WITH ( )` (only spaces inside) left after the connectors were removed."""
    upper = sql.upper()
    out = []
    i = 0
    while True:
        k = upper.find("WITH", i)
        if k < 0:
            out.append(sql[i:])
            return "".join(out)
        j = skip_space(sql, k + 4)
        if j < len(sql) and sql[j] == "(":
            m = skip_space(sql, j + 1)
            if m < len(sql) and sql[m] == ")":
                out.append(sql[i:k])
                i = m + 1
                continue
        out.append(sql[i:k + 4])
        i = k + 4


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("corpora", nargs="?", default="")
    ap.add_argument("--fld", required=True)
    ap.add_argument("--min-accepted", type=int, default=0)
    ap.add_argument("--require", default="", help="comma-separated demo number prefixes that must be accepted")
    ap.add_argument("--keep", help="write the specs here and keep them")
    args = ap.parse_args()
    folder = os.path.join(args.corpora, DEMOS) if args.corpora else ""
    if not folder or not os.path.isdir(folder):
        print(f"skipped: no Feldera demos under {folder or '(no corpora given)'}")
        return SKIP
    work = args.keep or tempfile.mkdtemp(prefix="fld-demos-")
    os.makedirs(work, exist_ok=True)
    accepted, refused = [], []
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".sql"):
            continue
        sql = strip_connectors(open(os.path.join(folder, name)).read())
        spec = os.path.join(work, name[:-4] + ".yaml")
        with open(spec, "w") as f:
            f.write(f"name: {name[:2]}\nsql: |\n")
            for line in sql.splitlines():
                f.write("  " + line + "\n")
        r = subprocess.run([args.fld, "check", spec], capture_output=True, text=True, timeout=120)
        if r.returncode == 0:
            accepted.append(name)
            print(f"ACCEPTED {name}")
        else:
            refused.append(name)
            err = (r.stderr.strip() or r.stdout.strip()).splitlines()
            print(f"REFUSED  {name} (exit {r.returncode}): {err[0] if err else ''}")
    total = len(accepted) + len(refused)
    print(f"{len(accepted)} of {total} demos accepted (floor {args.min_accepted})")
    missing = [p for p in args.require.split(",") if p and not any(a.startswith(p) for a in accepted)]
    if missing:
        print(f"required demos refused: {', '.join(missing)}")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if len(accepted) < args.min_accepted or missing else 0


if __name__ == "__main__":
    sys.exit(main())
