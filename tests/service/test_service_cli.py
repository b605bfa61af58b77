"""The service commands' bad input: one line `error: ...`, exit 2, nothing started."""

from __future__ import annotations

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
    (["worker", "--queue", "amqp://x"], "expected redis://"),
    (["worker", "--repo", "not a repo"], "expected OWNER/REPO"),
    (["queue", "list", "--store", "missing.db"], "no such store"),
    (["queue", "retry", "pytorch/pytorch#1"], "not in the dead-letter list"),
])
def test_bad_service_input_is_one_line_exit_2(tmp_path, monkeypatch, capsys, argv, message):
    monkeypatch.chdir(tmp_path)
    if argv[:2] == ["queue", "retry"]:
        from issuetriage.store.sqlite import Store
        Store(tmp_path / "issuetriage.db").close()
    code, err = run(capsys, *argv)
    assert code == 2 and message in err
    assert len(err.strip().splitlines()) == 1 and err.startswith("error: ")


def test_serve_with_an_unreachable_redis_queue_is_one_line_exit_2(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("GITHUB_WEBHOOK_SECRET", "s")
    code, err = run(capsys, "serve", "--store", str(tmp_path / "t.db"), "--queue", "redis://127.0.0.1:1/0")
    assert code == 2 and "cannot reach Redis" in err and len(err.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []  # nothing written


@pytest.mark.parametrize("argv, message", [
    (["serve", "--repo", "pytorch/pytorch"], "--repo is for token mode"),
    (["serve"], "GITHUB_APP_PRIVATE_KEY"),
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
