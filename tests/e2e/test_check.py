"""`fld check` validates connectors as well as the SQL: unknown keys, unsupported transports and
formats, bad values, a missing input file (standard input "-" is fine) and an output folder that
cannot be created each give exit 2 and a message naming the key or file and the spec line; every
error of a spec is reported; nothing is created, truncated or read. `fld run` creates a
file_output's missing folders and writes the output there."""

import os
import re

from fldtest import check, finish, integrate_csv, run, spec, tmpdir, write

d = tmpdir()
write(os.path.join(d, "in.csv"), "1,10\n2,20\n3,30\n")
SQL = "CREATE TABLE t (a INT, b INT);\nCREATE MATERIALIZED VIEW v AS SELECT a, b * 2 AS c FROM t;"


def connectors(input_obj, output_obj="{name: file_output, config: {path: out/v.csv}}", fmt_in="{name: csv}",
               fmt_out="{name: csv}", extra_in=""):
    """The spec's `connectors:` (spec() puts the 2 SQL lines at 3-4): t's connector is on line 7, v's on line 10
    (11 with extra_in)."""
    return (f"connectors:\n  t:\n    - transport: {input_obj}\n      format: {fmt_in}\n{extra_in}"
            f"  v:\n    - transport: {output_obj}\n      format: {fmt_out}\n")


def check_fails(name, extra, *needles, line=None):
    """fld check on a spec: exit 2, stderr names every needle and the spec line."""
    p = spec(d, name, SQL, extra)
    out, err = run(["check", p], expect=2)
    for n in needles:
        assert n in err, (n, err)
    if line is not None:
        assert f"{name}.yaml:{line}" in err, (line, err)
    assert ": ok" not in out, out
    return err


@check("a valid spec: exit 0; the missing output folder is not created and an existing output not truncated")
def _():
    p = spec(d, "good", SQL, connectors("{name: file_input, config: {path: in.csv}}"))
    out, _ = run(["check", p])
    assert out.rstrip().endswith("good.yaml: ok"), out
    assert not os.path.exists(os.path.join(d, "out")), "fld check created the output folder"
    write(os.path.join(d, "kept.csv"), "keep me\n")
    p = spec(d, "keep", SQL, connectors("{name: file_input, config: {path: in.csv}}",
                                        "{name: file_output, config: {path: kept.csv}}"))
    run(["check", p])
    with open(os.path.join(d, "kept.csv")) as f:
        assert f.read() == "keep me\n", "fld check truncated an output file"


@check("standard input '-' needs no file")
def _():
    p = spec(d, "stdin", SQL, connectors("{name: file_input, config: {path: '-'}}"))
    out, _ = run(["check", p], stdin="9,9\n")
    assert "stdin.yaml: ok" in out, out


@check("unknown key in a transport config: exit 2 naming the key and the line")
def _():
    check_fails("key", connectors("{name: file_input, config: {path: in.csv, pth: x}}"), "unknown key 'pth'",
                line=7)


@check("unknown key in the connector object: exit 2 naming the key and the line")
def _():
    check_fails("objkey", connectors("{name: file_input, config: {path: in.csv}}", extra_in="      batch: 5\n"),
                "unknown key 'batch'", line=7)


@check("unsupported transport: exit 2 naming it and the line")
def _():
    check_fails("transport", connectors("{name: kafka_input, config: {topic: x}}"), "kafka_input", line=7)
    check_fails("otransport", connectors("{name: file_input, config: {path: in.csv}}", "{name: s3_output}"),
                "s3_output", line=10)


@check("unsupported format: exit 2 naming it and the line")
def _():
    check_fails("format", connectors("{name: file_input, config: {path: in.csv}}", fmt_in="{name: avro}"),
                "unknown format 'avro'", line=7)
    check_fails("oformat", connectors("{name: file_input, config: {path: in.csv}}", fmt_out="{name: parquet}"),
                "unknown format 'parquet'", line=10)


@check("bad values: exit 2 naming the key and the line")
def _():
    check_fails("value", connectors("{name: file_input, config: {path: in.csv}}",
                                    fmt_in="{name: csv, config: {headers: maybe}}"), "'headers'", line=7)
    check_fails("batch", connectors("{name: file_input, config: {path: in.csv}}", extra_in="      max_batch_size: 0\n"),
                "'max_batch_size' must be a positive integer", line=7)
    check_fails("jsonfmt", connectors("{name: file_input, config: {path: in.csv}}",
                                      fmt_out="{name: json, config: {update_format: raw}}"),
                "update_format", line=10)


@check("a datagen error in the SQL's WITH connectors: exit 2 naming the field and the line")
def _():
    p = spec(d, "dg", "CREATE TABLE t (a INT) WITH ('connectors' = '[{\"transport\": {\"name\": \"datagen\", "
                      "\"config\": {\"plan\": [{\"rate\": -1}]}}}]');")
    _, err = run(["check", p], expect=2)
    assert "'rate'" in err and "dg.yaml:3" in err, err


@check("a missing input file: exit 2 naming the file and the line")
def _():
    check_fails("missing", connectors("{name: file_input, config: {path: nope.csv}}"),
                f"cannot open '{os.path.join(d, 'nope.csv')}'", "No such file", line=7)


@check("an output folder that cannot be created (a path component is a file): exit 2 saying so")
def _():
    write(os.path.join(d, "afile"), "x")
    check_fails("folder", connectors("{name: file_input, config: {path: in.csv}}",
                                     "{name: file_output, config: {path: afile/sub/v.csv}}"),
                f"cannot create the folder '{os.path.join(d, 'afile', 'sub')}'",
                f"'{os.path.join(d, 'afile')}' is a file, not a folder", line=10)
    with open(os.path.join(d, "afile")) as f:
        assert f.read() == "x"


@check("an output path that is a folder: exit 2 saying so")
def _():
    os.makedirs(os.path.join(d, "adir"), exist_ok=True)
    check_fails("isdir", connectors("{name: file_input, config: {path: in.csv}}",
                                    "{name: file_output, config: {path: adir}}"), "is a folder, not a file", line=10)


@check("every connector error of a spec is reported, each with its line")
def _():
    extra = ("connectors:\n  t:\n    - transport: {name: file_input, config: {path: nope.csv}}\n"
             "      format: {name: csv}\n"
             "    - transport: {name: file_input, config: {path: in.csv, pth: 1}}\n"
             "      format: {name: csv}\n"
             "  v:\n    - transport: {name: file_output, config: {path: afile/v.csv}}\n      format: {name: csv}\n"
             "    - transport: {name: file_output, config: {path: ok/v.json}}\n      format: {name: xml}\n")
    err = check_fails("many", extra, "nope.csv", "'pth'", "afile", "xml", "4 connector errors")
    for line in (7, 9, 12, 14):
        assert re.search(rf"many\.yaml:{line}: ", err), (line, err)
    assert not os.path.exists(os.path.join(d, "ok")), "fld check created a folder"


@check("fld run creates a file_output's missing folders and writes the output there")
def _():
    d2 = tmpdir()
    write(os.path.join(d2, "in.csv"), "1,10\n2,20\n3,30\n")
    p = spec(d2, "mk", SQL, connectors("{name: file_input, config: {path: in.csv}}",
                                       "{name: file_output, config: {path: new/deeper/v.csv}}"))
    run(["check", p])
    assert not os.path.exists(os.path.join(d2, "new"))
    run(["run", p])
    out = os.path.join(d2, "new", "deeper", "v.csv")
    assert integrate_csv(out, [int, int]) == [(1, 20), (2, 40), (3, 60)], open(out).read()


@check("fld run with an output folder that cannot be created: fails naming the folder, writes nothing")
def _():
    d3 = tmpdir()
    write(os.path.join(d3, "in.csv"), "1,10\n")
    write(os.path.join(d3, "blocker"), "x")
    p = spec(d3, "blk", SQL, connectors("{name: file_input, config: {path: in.csv}}",
                                        "{name: file_output, config: {path: blocker/v.csv}}"))
    _, err = run(["run", p], expect=5)
    assert f"'{os.path.join(d3, 'blocker')}' is a file, not a folder" in err and "blk.yaml:10" in err, err


finish()
