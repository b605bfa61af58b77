"""Start-up: what the commands Claude Code and people run most load, seen through the real
process (`python -m issuetriage.cli`, the console script's path). What they cost in time is
bench/startup.py's business; these tests check what is imported and what comes back."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
LABEL_WRITE = {"hook_event_name": "PreToolUse", "tool_name": "Bash",
               "tool_input": {"command": "gh issue edit 7 --add-label 'module: nn'"}}


def cli(args: list[str], stdin: str = "", env: dict[str, str] | None = None,
        stdout: int = subprocess.PIPE) -> subprocess.CompletedProcess[str]:
    """Run `python -X importtime -m issuetriage.cli ARGS`: stderr lists every module it imported."""
    return subprocess.run([sys.executable, "-X", "importtime", "-m", "issuetriage.cli", *args], input=stdin,
                          stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(SRC), **(env or {})})


def imported(stderr: str) -> set[str]:
    return {line.rsplit("|", 1)[1].strip() for line in stderr.splitlines() if line.startswith("import time:")}


def test_help_builds_the_command_table_and_loads_no_models_engine_or_store():
    code = ("import sys\nfrom issuetriage.cli import main\ntry:\n    main(['--help'])\n"
            "finally:\n    sys.stderr.write(' '.join(sys.modules))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(SRC)})
    assert run.returncode == 0 and "Usage:" in run.stdout and "backlog" in run.stdout
    loaded = set(run.stderr.split())
    assert {"typer", "issuetriage.cli.engine", "issuetriage.cli.serve"} <= loaded  # the listing works
    heavy = {"pydantic", "issuetriage.models", "issuetriage.policy.loader", "issuetriage.engine.pipeline",
             "issuetriage.store.sqlite", "issuetriage.judges.factory", "githubkit", "numpy", "sklearn",
             "importlib.metadata", "markdown_it", "pygments", "rich.markdown", "rich.traceback"}
    assert heavy & loaded == set()


def python(code: str) -> str:
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(SRC), "COLUMNS": "100"})
    assert run.returncode == 0, run.stderr[-800:]
    return run.stdout


HELP = ("import contextlib, io, sys\nfrom issuetriage.cli.app import app, main\nfor args in {args!r}:\n"
        "    out = io.StringIO()\n    with contextlib.redirect_stdout(out):\n        try:\n"
        "            main(args)\n        except SystemExit:\n            pass\n    print(out.getvalue())\n"
        "print('rich.markdown loaded:', 'rich.markdown' in sys.modules)\n")


def test_help_without_the_unused_rich_parts_is_the_same_help():
    every = repr([["--help"], ["-h"], [], ["profile", "init", "-h"], ["triage", "--help"], ["store"]])
    lean = python(HELP.format(args=eval(every)))
    full = python("import rich.markdown, rich.traceback\n" + HELP.format(args=eval(every)))
    assert lean.endswith("rich.markdown loaded: False\n") and full.endswith("rich.markdown loaded: True\n")
    assert lean.rsplit("rich.markdown", 1)[0] == full.rsplit("rich.markdown", 1)[0]
    assert lean.count(" Usage: issuetriage") >= 6


def test_the_placeholders_hand_over_to_the_real_rich_classes():
    out = python("import sys\nfrom issuetriage.cli.help import load_renderer\nload_renderer()\n"
                 "import typer.rich_utils as r\nimport rich.markdown, rich.traceback\n"
                 "print(type(r.Markdown('*x*')) is rich.markdown.Markdown,\n"
                 "      r.Traceback.from_exception == rich.traceback.Traceback.from_exception,\n"
                 "      sys.modules['rich.markdown'].__file__.endswith('markdown.py'))")
    assert out.split() == ["True", "True", "True"]


def target(standin, **extra: str) -> dict[str, str]:
    standin.state.add_issue("pytorch/pytorch", 7, "nn.Linear gives wrong shape", "body")
    return {**standin.env(), "GITHUB_REPOSITORY": "pytorch/pytorch", "TRIAGE_ISSUE_NUMBER": "7", **extra}


def test_a_label_write_hook_loads_the_compiled_profile_not_the_toml(standin, tmp_path):
    env = target(standin, ISSUETRIAGE_POLICY_CACHE_DIR=str(tmp_path / "cache"))
    first, second = (cli(["hook", "pre-tool-use"], json.dumps(LABEL_WRITE), env) for _ in range(2))
    for run in (first, second):
        assert run.returncode == 0, run.stderr[-500:]
        decision = json.loads(run.stdout)["hookSpecificOutput"]
        assert decision["permissionDecision"] == "allow"
        assert decision["updatedInput"] == {"command": "gh issue edit 7 --add-label 'module: nn' --repo pytorch/pytorch"}
    assert "tomllib" in imported(first.stderr) and len(list((tmp_path / "cache").glob("*.json"))) == 1
    loaded = imported(second.stderr)
    assert "tomllib" not in loaded and "issuetriage.policy.compiled" in loaded
    assert {"typer", "numpy", "sklearn", "issuetriage.store.sqlite", "issuetriage.cli.app"} & loaded == set()
    assert standin.writes == []


def test_a_hook_whose_answer_cannot_be_written_blocks(standin):
    """Exit 2 (block), not the interpreter's 120, which Claude Code takes for "let it run"."""
    env = target(standin)
    assert cli(["hook", "pre-tool-use"], json.dumps(LABEL_WRITE), env).returncode == 0
    read, write = os.pipe()
    os.close(read)  # nobody reads the answer: writing it fails (EPIPE)
    try:
        run = cli(["hook", "pre-tool-use"], json.dumps(LABEL_WRITE), env, stdout=write)
    finally:
        os.close(write)
    assert run.returncode == 2
