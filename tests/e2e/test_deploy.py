"""Deployment files and documentation: the systemd unit passes `systemd-analyze verify`, the
Kubernetes manifest has what rescheduling needs and its embedded spec compiles, the man pages
render, and every subcommand's --help agrees with its man page's synopsis."""

import os
import re
import subprocess

import yaml

from fldtest import FLD, check, finish, run, tmpdir

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEPLOY = os.path.join(ROOT, "pipelines", "deploy")


@check("systemd unit verifies, restarts on failure and stops gracefully")
def _():
    with open(os.path.join(DEPLOY, "fld@.service")) as f:
        unit = f.read()
    assert "Restart=on-failure" in unit and "TimeoutStopSec=" in unit and "KillSignal=SIGTERM" in unit
    d = tmpdir()
    path = os.path.join(d, "fld@.service")
    with open(path, "w") as f:
        f.write(unit.replace("/usr/local/bin/fld", FLD))
    # Template units are verified through an instance name.
    inst = os.path.join(d, "fld@bank.service")
    os.symlink(path, inst)
    p = subprocess.run(["systemd-analyze", "verify", "--man=no", inst], capture_output=True, text=True)
    problems = [l for l in (p.stdout + p.stderr).splitlines() if "fld@" in l]
    assert p.returncode == 0 and not problems, p.stdout + p.stderr


@check("kubernetes manifest: one replica, ReadWriteOnce volume, grace period above checkpoint time")
def _():
    with open(os.path.join(DEPLOY, "kubernetes.yaml")) as f:
        docs = list(yaml.safe_load_all(f))
    kinds = {d["kind"]: d for d in docs}
    sts = kinds["StatefulSet"]
    assert sts["spec"]["replicas"] == 1
    assert sts["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] >= 30
    assert kinds["PersistentVolumeClaim"]["spec"]["accessModes"] == ["ReadWriteOnce"]
    spec_text = kinds["ConfigMap"]["data"]["bank.yaml"]
    d = tmpdir()
    path = os.path.join(d, "bank.yaml")
    with open(path, "w") as f:
        f.write(spec_text.replace("/data/bank", os.path.join(d, "bank.fld")))
    out, _ = run(["check", path])
    assert "view balance" in out, out


MAN = os.path.join(ROOT, "man")


@check("man pages render without warnings")
def _():
    for name in sorted(os.listdir(MAN)):
        p = subprocess.run(["man", "--warnings", "-l", "-Tutf8", os.path.join(MAN, name)], capture_output=True,
                           text=True)
        assert p.returncode == 0 and p.stdout.strip(), (name, p.stderr)
        assert "warning" not in p.stderr, (name, p.stderr)


@check("every subcommand's options appear in its man page")
def _():
    pages = {"run": "fld-run.1", "query": "fld-query.1", "status": "fld-status.1"}
    for cmd, page in pages.items():
        out, _ = run([cmd, "--help"])
        with open(os.path.join(MAN, page)) as f:
            text = f.read().replace("\\-", "-")
        for opt in re.findall(r"(--[a-z][a-z-]+)", out):
            if opt == "--help":
                continue
            assert opt in text, f"{opt} of `fld {cmd}` is not in {page}"
    out, _ = run(["--help"])
    with open(os.path.join(MAN, "fld.1")) as f:
        text = f.read()
    cmds = re.findall(r"^  (\w+)\s", out.split("Subcommands:")[-1], re.M)
    assert {"run", "query", "status", "check", "clear"} <= set(cmds), cmds
    for cmd in cmds:
        assert re.search(r'\.B[I]? "?' + cmd + r'\b', text), f"subcommand {cmd} missing from fld.1"


@check("bash completion offers every subcommand and every long option of each")
def _():
    comp = os.path.join(ROOT, "cmd", "fld.bash-completion")

    def complete(*words):
        script = (f"source {comp}; COMP_WORDS=({' '.join(words)}); COMP_CWORD={len(words) - 1}; _fld; "
                  'printf "%s\\n" "${COMPREPLY[@]}"')
        return subprocess.run(["bash", "-c", script], capture_output=True, text=True).stdout.split()

    out, _ = run(["--help"])
    cmds = re.findall(r"^  (\w+)\s", out.split("Subcommands:")[-1], re.M)
    offered = complete("fld", "''")
    for cmd in cmds:
        assert cmd in offered, (cmd, offered)
        help_out, _ = run([cmd, "--help"])
        opts = set(re.findall(r"(--[a-z][a-z-]+)", help_out))
        got = set(complete("fld", cmd, "--"))
        assert opts <= got, (cmd, opts - got)


finish()
