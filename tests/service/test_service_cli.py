"""The service commands' bad input: one line `error: ...`, exit 2, nothing started."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from issuetriage.cli.app import main


def run(capsys, *argv: str) -> tuple[int, str]:
    try:
        main(list(argv))
        code = 0
    except SystemExit as done:
        code = int(done.code or 0)
    err = capsys.readouterr().err
    return code, err


@pytest.mark.parametrize("argv, message", [
    (["worker", "--repo", "pytorch/pytorch", "--queue", "amqp://x"], "expected redis://"),
    (["worker", "--repo", "not a repo"], "expected OWNER/REPO"),
    (["queue", "list", "--store", "missing.db"], "no such store"),
    (["queue", "retry", "pytorch/pytorch#1"], "not in the dead-letter list"),
])
def test_bad_service_input_is_one_line_exit_2(tmp_path, monkeypatch, capsys, argv, message):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GITHUB_TOKEN", "t")
    if argv[:2] == ["queue", "retry"]:
        from issuetriage.store.sqlite import Store
        Store(tmp_path / "issuetriage.db").close()
    code, err = run(capsys, *argv)
    assert code == 2 and message in err
    assert len(err.strip().splitlines()) == 1 and err.startswith("error: ")


def test_serve_with_an_unreachable_redis_queue_is_one_line_exit_2(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("GITHUB_WEBHOOK_SECRET", "s")
    monkeypatch.setenv("GITHUB_TOKEN", "t")
    code, err = run(capsys, "serve", "--store", str(tmp_path / "t.db"), "--queue", "redis://127.0.0.1:1/0",
                    "--port", "0", "--repo", "pytorch/pytorch")
    assert code == 2 and "cannot reach Redis" in err and len(err.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []  # nothing written


@pytest.mark.parametrize("argv, message", [
    (["serve", "--repo", "pytorch/pytorch", "--port", "0"], "--repo is for token mode"),
    (["serve", "--port", "0"], "GITHUB_APP_PRIVATE_KEY"),
    (["worker"], "GITHUB_APP_PRIVATE_KEY"),
])
def test_app_mode_settings_we_cannot_use_are_one_line_exit_2_and_nothing_written(tmp_path, monkeypatch, capsys,
                                                                                    argv, message):
    monkeypatch.setenv("GITHUB_WEBHOOK_SECRET", "s")
    monkeypatch.setenv("GITHUB_APP_ID", "24680")
    for key in ("GITHUB_APP_PRIVATE_KEY", "GITHUB_APP_PRIVATE_KEY_PATH"):
        monkeypatch.delenv(key, raising=False)
    code, err = run(capsys, *argv, "--store", str(tmp_path / "t.db"))
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1 and err.startswith("error: ")
    assert list(tmp_path.iterdir()) == []


NO_CREDENTIALS = ("GITHUB_TOKEN", "GH_TOKEN", "GITHUB_APP_ID", "GITHUB_APP_PRIVATE_KEY", "GITHUB_APP_PRIVATE_KEY_PATH")


@pytest.mark.parametrize("argv", [["serve", "--port", "0"], ["serve", "--port", "0", "--workers", "0"], ["worker"]])
def test_processes_that_run_jobs_refuse_to_start_without_credentials(tmp_path, monkeypatch, capsys, argv):
    monkeypatch.setenv("GITHUB_WEBHOOK_SECRET", "s")
    monkeypatch.setenv("PATH", str(tmp_path))  # no `gh` to ask for a token
    for key in NO_CREDENTIALS:
        monkeypatch.delenv(key, raising=False)
    code, err = run(capsys, *argv, "--store", str(tmp_path / "t.db"), "--repo", "pytorch/pytorch")
    assert code == 2 and err.startswith("error: no GitHub credentials") and len(err.strip().splitlines()) == 1
    assert "GITHUB_TOKEN" in err and "GITHUB_APP_ID" in err
    assert list(tmp_path.iterdir()) == []


def test_the_review_app_alone_needs_no_credentials(tmp_path, monkeypatch, capsys):
    """`serve --no-webhook` gets past every check to its port (taken here, so it stops there)."""
    import socket

    from issuetriage.store.sqlite import Store

    monkeypatch.setenv("PATH", str(tmp_path))
    for key in NO_CREDENTIALS:
        monkeypatch.delenv(key, raising=False)
    Store(tmp_path / "t.db").close()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        code, err = run(capsys, "serve", "--no-webhook", "--store", str(tmp_path / "t.db"),
                        "--port", str(taken.getsockname()[1]), "--profile", "pytorch")
    assert code == 2 and "is in use" in err


@pytest.mark.parametrize("extra", [[], ["--no-webhook"]])
def test_a_busy_port_is_one_line_exit_2_and_leaves_no_files(tmp_path, monkeypatch, capsys, extra):
    import socket

    monkeypatch.setenv("GITHUB_WEBHOOK_SECRET", "s")
    monkeypatch.setenv("GITHUB_TOKEN", "t")
    store = tmp_path / "t.db"
    if extra:  # the review app alone reads an existing store
        from issuetriage.store.sqlite import Store
        Store(store).close()
    before = sorted(tmp_path.iterdir())
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, err = run(capsys, "serve", "--store", str(store), "--port", str(port), "--repo", "pytorch/pytorch",
                        *extra)
    assert code == 2 and err == f"error: port {port} on 127.0.0.1 is in use (another serve?): stop it or pick another --port\n"
    assert sorted(tmp_path.iterdir()) == before


PYPROJECT = Path(__file__).parents[2] / "pyproject.toml"
FENCED = Path(__file__).parent / "fenced.py"


def fenced(extra: str, *argv: str, env: dict[str, str], cwd: Path) -> subprocess.Popen[str]:
    """`issuetriage ARGV` where only what `pip install 'issuetriage[EXTRA]'` installs can be imported
    (tests/security/test_webhook.py runs its server on the service extra alone)."""
    src = str(Path(__file__).parents[2] / "src")
    return subprocess.Popen([sys.executable, str(FENCED), str(PYPROJECT), extra, *argv], cwd=cwd, text=True,
                            env={**os.environ, "PYTHONPATH": src, **env}, stderr=subprocess.PIPE)


def test_the_web_extra_alone_is_one_line_naming_the_service_extra(tmp_path):
    for command in ("serve", "worker"):
        done = fenced("web", command, "--store", "t.db", env={"GITHUB_WEBHOOK_SECRET": "s"}, cwd=tmp_path)
        _, err = done.communicate(timeout=60)
        assert done.returncode == 2 and err == f"error: {command} needs huey: pip install 'issuetriage[service]'\n"
    assert list(tmp_path.iterdir()) == []
