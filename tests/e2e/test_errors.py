"""Bad input gets a clear error that says where and what, with a distinct exit code, and loses
nothing already accepted. Also the command line's own conventions (--help, --version)."""

import os
import re

from fldtest import assert_eq, check, finish, query, run, spec, tmpdir, write

d = tmpdir()


@check("unknown spec key: exit 2, names the key and its line")
def _():
    p = write(os.path.join(d, "a.yaml"), 'name: e\nwrokers: 2\nsql: "CREATE TABLE t (a INT)"\n')
    _, err = run(["run", p], expect=2)
    assert "a.yaml:2" in err and "'wrokers'" in err, err


@check("invalid YAML: exit 2 with line and column")
def _():
    p = write(os.path.join(d, "y.yaml"), "name: e\nsql: [unclosed\n")
    _, err = run(["run", p], expect=2)
    assert re.search(r"y\.yaml:\d+:\d+:", err), err


@check("SQL syntax error: exit 2, spec line and column, caret under the spot, what was expected")
def _():
    p = spec(d, "b", "CREATE TABLE t (a INT);\nCREATE VIEW v AS SELECT a, FROM t;")
    _, err = run(["run", p], expect=2)
    assert "b.yaml:4:30: error: expected an expression but found 'FROM'" in err, err
    lines = err.rstrip("\n").split("\n")
    caret = lines[-1]
    src = lines[-2]
    assert caret.endswith("^") and src[len(caret) - 1] == "F", (src, caret)


@check("unknown column: exit 2 with position and the available columns")
def _():
    p = spec(d, "c", "CREATE TABLE t (a INT);\nCREATE VIEW v AS SELECT b FROM t;")
    _, err = run(["check", p], expect=2)
    assert "c.yaml:4:27: error: unknown column 'b'" in err and "t.a" in err, err


@check("misspelled datagen field: exit 2, names the field")
def _():
    p = spec(d, "dg", "CREATE TABLE t (a INT) WITH ('connectors' = '[{\"transport\": {\"name\": \"datagen\", "
                      "\"config\": {\"plan\": [{\"limit\": 5, \"fields\": {\"aa\": {}}}]}}}]');")
    _, err = run(["run", p], expect=2)
    assert "'aa'" in err and "dg.yaml:3" in err, err


@check("unknown connector key and transport: exit 2")
def _():
    p = spec(d, "ck", "CREATE TABLE t (a INT);",
             "connectors:\n  t:\n    - transport: {name: file_input, config: {path: x.csv, pth: 1}}\n"
             "      format: {name: csv}\n")
    _, err = run(["run", p], expect=2)
    assert "pth" in err, err
    p = spec(d, "ct", "CREATE TABLE t (a INT);",
             "connectors:\n  t:\n    - transport: {name: kafka_input}\n")
    _, err = run(["run", p], expect=2)
    assert "kafka_input" in err, err


@check("connectors for a relation that does not exist: exit 2")
def _():
    p = spec(d, "cr", "CREATE TABLE t (a INT);",
             "connectors:\n  nosuch:\n    - transport: {name: file_input, config: {path: x.csv}}\n"
             "      format: {name: csv}\n")
    _, err = run(["run", p], expect=2)
    assert "nosuch" in err, err


@check("malformed CSV record: exit 1 naming file:line:col; records before it are kept")
def _():
    write(os.path.join(d, "in.csv"), "a,b\n1,2\n3,4\n5,x\n7,8\n")
    p = spec(d, "e", "CREATE TABLE t (a INT, b INT);\nCREATE MATERIALIZED VIEW v AS SELECT * FROM t;",
             "connectors:\n  t:\n    - transport: {name: file_input, config: {path: in.csv}}\n"
             "      format: {name: csv, config: {headers: true}}\n      max_batch_size: 1\n"
             "  v:\n    - transport: {name: file_output, config: {path: v.csv}}\n      format: {name: csv}\n")
    _, err = run(["run", p], expect=1)
    assert "in.csv:4:3" in err, err
    assert_eq(query(p, "SELECT a, b FROM v"), [(1, 2), (3, 4)], "stored rows")
    with open(os.path.join(d, "v.csv")) as f:
        assert f.read() == "1,2,1\n3,4,1\n"


@check("malformed JSON record: exit 1 naming file:line")
def _():
    write(os.path.join(d, "in.json"), '{"insert": {"a": 1}}\n{"insert": {"a": }\n')
    p = spec(d, "j", "CREATE TABLE t (a INT);",
             "connectors:\n  t:\n    - transport: {name: file_input, config: {path: in.json}}\n"
             "      format: {name: json}\n")
    _, err = run(["run", p], expect=1)
    assert "in.json:2" in err, err


@check("delete record for an append_only table: exit 1 naming file:line; inserts before it are kept")
def _():
    write(os.path.join(d, "ao.json"),
          '{"insert": {"k": 1, "a": 5}}\n{"insert": {"k": 1, "a": 2}}\n{"delete": {"k": 1, "a": 2}}\n'
          '{"insert": {"k": 1, "a": 1}}\n')
    p = spec(d, "ao", "CREATE TABLE t (k INT, a INT) WITH ('append_only' = 'true');\n"
                      "CREATE MATERIALIZED VIEW v AS SELECT k, MIN(a) AS lo, MAX(a) AS hi FROM t GROUP BY k;",
             "connectors:\n  t:\n    - transport: {name: file_input, config: {path: ao.json}}\n"
             "      format: {name: json}\n      max_batch_size: 1\n")
    _, err = run(["run", p], expect=1)
    assert "ao.json:3" in err and "append_only" in err, err
    assert_eq(query(p, "SELECT k, lo, hi FROM v"), [(1, 2, 5)], "the two inserts before the delete")
    p = spec(d, "ao2", "CREATE TABLE t (k INT) WITH ('append_only' = 'yes');")
    _, err = run(["check", p], expect=2)
    assert "'append_only' must be 'true' or 'false'" in err, err


@check("querying a view that is not materialized says how to materialize it")
def _():
    p = spec(d, "nm", "CREATE TABLE t (a INT) WITH ('materialized' = 'true');\nCREATE VIEW v AS SELECT * FROM t;")
    run(["run", p])
    _, err = run(["query", p, "SELECT * FROM v"], expect=2)
    assert "CREATE MATERIALIZED VIEW v" in err, err
    _, err = run(["query", p, "SELECT nope FROM t"], expect=2)
    assert "unknown column 'nope'" in err and "^" in err, err


@check("query before any run: exit 2 telling to run first")
def _():
    p = spec(d, "fresh", "CREATE TABLE t (a INT) WITH ('materialized' = 'true');")
    _, err = run(["query", p, "SELECT * FROM t"], expect=2)
    assert "fld run" in err, err


@check("command line: --version, --help, no subcommand, unknown subcommand, missing spec file")
def _():
    out, _ = run(["--version"])
    assert out.startswith("fld "), out
    out, _ = run(["--help"])
    assert "run" in out and "query" in out and "status" in out, out
    out, _ = run(["run", "--help"])
    assert "spec" in out.lower(), out
    run([], expect=2)
    run(["bogus"], expect=2)
    _, err = run(["run", os.path.join(d, "missing.yaml")], expect=2)
    assert "missing.yaml" in err, err


finish()
