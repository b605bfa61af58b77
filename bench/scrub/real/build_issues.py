"""Write issues/<id>.json for every bug in bugs.py: our prose, our repro, and what the reporter
pasted (the real traceback of the affected release, captured here, or expected vs actual output).

    PYTHONPATH=src python bench/scrub/real/build_issues.py   # needs PyPI (uv) for the tracebacks
"""

from __future__ import annotations

import json
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


def body(bug: dict, provisioner: Provisioner) -> str:
    code = (HERE / "repros" / f"{bug['id']}.py").read_text()
    parts = [bug["prose"], f"{FENCE}python\n{code.rstrip()}\n{FENCE}"]
    if bug["form"] in ("traceback", "tail"):
        trace = traceback_of(bug, provisioner)
        if bug["form"] == "tail":
            trace = "\n".join(trace.rstrip().splitlines()[-4:])
        parts.append(f"{FENCE}\n{trace.rstrip()}\n{FENCE}")
    if bug["form"] == "output":
        parts += ["Expected output:", f"{FENCE}\n{bug['expected_output']}\n{FENCE}",
                  "Actual output:", f"{FENCE}\n{bug['actual_output']}\n{FENCE}"]
    parts.append(f"{bug['package']} {bug['affected']}, Python 3.11, Linux.")
    return "\n\n".join(parts) + "\n"


def main() -> int:
    provisioner = Provisioner()
    out = HERE / "issues"
    out.mkdir(exist_ok=True)
    for number, bug in enumerate(BUGS, start=1):
        issue = {"repo": f"bench/{bug['package']}", "number": number, "title": bug["title"],
                 "body": body(bug, provisioner), "user": {"login": "reporter"}, "state": "open"}
        (out / f"{bug['id']}.json").write_text(json.dumps(issue, indent=1) + "\n")
        print(bug["id"], "written", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
