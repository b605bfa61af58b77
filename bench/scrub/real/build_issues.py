"""Write issues/<id>.json for every bug in bugs.py: our prose, our repro, and what the reporter
pasted (the real traceback of the affected release, captured here, or expected vs actual output).

    PYTHONPATH=src python bench/scrub/real/build_issues.py [ID ...]   # needs PyPI (uv) for the tracebacks

With ids, only those issues are (re)written: the others stay as they were measured.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bugs import BUGS  # noqa: E402

from issuetriage.scrub.model import Interpreter  # noqa: E402
from issuetriage.scrub.provision import Provisioner  # noqa: E402

FENCE = "```"


def affected_python(bug: dict, provisioner: Provisioner) -> Path:
    label = f"{bug['package']}-{bug['affected']}"
    need = (f"{bug['package']}=={bug['affected']}",)
    return provisioner.ensure(Interpreter(label, provisioner.base_python, requirements=need)).python


def traceback_of(bug: dict, provisioner: Provisioner) -> str:
    """stderr of the repro on the affected release, as a reporter would copy it."""
    code = (HERE / "repros" / f"{bug['id']}.py").read_text()
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder, "app.py")
        script.write_text(code)
        done = subprocess.run([str(affected_python(bug, provisioner)), str(script)], capture_output=True,
                              text=True, timeout=300, cwd=folder)
    if done.returncode == 0 or "Traceback" not in done.stderr:
        raise SystemExit(f"{bug['id']}: no traceback on {bug['affected']}: {done.stderr[-300:]}")
    return done.stderr.replace(folder, "/home/me/project")


def interrupted(bug: dict, provisioner: Provisioner, after_s: float = 3.0) -> str:
    """The KeyboardInterrupt traceback of a run stopped with Ctrl-C (SIGINT) after a few seconds."""
    code = (HERE / "repros" / f"{bug['id']}.py").read_text()
    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "app.py").write_text(code)
        proc = subprocess.Popen([str(affected_python(bug, provisioner)), "app.py"], cwd=folder, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            proc.wait(timeout=after_s)
            raise SystemExit(f"{bug['id']}: finished within {after_s} s on {bug['affected']}: no hang")
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    if "KeyboardInterrupt" not in err:
        raise SystemExit(f"{bug['id']}: no KeyboardInterrupt traceback: {err[-300:]}")
    return "^C" + err.replace(folder, "/home/me/project")


def body(bug: dict, provisioner: Provisioner) -> str:
    code = (HERE / "repros" / f"{bug['id']}.py").read_text()
    parts = [bug["prose"], f"{FENCE}python\n{code.rstrip()}\n{FENCE}"]
    if bug["form"] in ("traceback", "tail"):
        trace = traceback_of(bug, provisioner)
        if bug["form"] == "tail":
            trace = "\n".join(trace.rstrip().splitlines()[-4:])
        parts.append(f"{FENCE}\n{trace.rstrip()}\n{FENCE}")
    if bug["form"] == "interrupt":
        parts.append(f"{FENCE}\n{interrupted(bug, provisioner).rstrip()}\n{FENCE}")
    if bug["form"] == "output":
        parts += ["Expected output:", f"{FENCE}\n{bug['expected_output']}\n{FENCE}",
                  "Actual output:", f"{FENCE}\n{bug['actual_output']}\n{FENCE}"]
    parts.append(f"{bug['package']} {bug['affected']}, Python 3.11, Linux.")
    return "\n\n".join(parts) + "\n"


def main() -> int:
    provisioner = Provisioner()
    out = HERE / "issues"
    out.mkdir(exist_ok=True)
    only = set(sys.argv[1:])
    for number, bug in enumerate(BUGS, start=1):
        if only and bug["id"] not in only:
            continue
        issue = {"repo": f"bench/{bug['package']}", "number": number, "title": bug["title"],
                 "body": body(bug, provisioner), "user": {"login": "reporter"}, "state": "open"}
        (out / f"{bug['id']}.json").write_text(json.dumps(issue, indent=1) + "\n")
        print(bug["id"], "written", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
