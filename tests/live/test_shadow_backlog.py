"""`backlog --apply --shadow` against the stand-in: plans recorded for review, nothing written."""

from __future__ import annotations

import pytest
from ghtest import REPO, number_for, seed
from standin import TOKEN

from builders import run_cli
from issuetriage.live.review import queue
from issuetriage.store.sqlite import Store


@pytest.fixture
def env(standin, monkeypatch):
    for key, value in standin.env().items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("GH_TOKEN", raising=False)
    monkeypatch.delenv("GITHUB_APP_ID", raising=False)
    assert standin.token == TOKEN
    return standin


def test_backlog_shadow_records_plans_and_writes_nothing(env, capsys, tmp_path, policy):
    numbers = [number_for("label", comment=False), number_for("close_question")]
    for n in numbers:
        seed(env, n)
    db = tmp_path / "t.db"
    code, out, _ = run_cli(capsys, "backlog", REPO, "--apply", "--shadow", "--store", str(db))
    assert code == 0 and env.writes == []
    with Store(db) as store:
        rows = store.audit()
        assert sorted(r["number"] for r in rows) == sorted(numbers)
        assert all(r["extra"]["shadow"] and not r["applied"] for r in rows)
        assert {i.issue.number for i in queue(store, policy)} == set(numbers)



def test_profile_shadow_mode_wins_over_triage_apply(env, capsys, tmp_path, policy, monkeypatch):
    from livetest import tuned

    import issuetriage.cli.github as cli_github
    monkeypatch.setattr(cli_github, "load_profile", lambda name: tuned(policy, live={"shadow": True}))
    n = number_for("label", comment=False)
    seed(env, n)
    db = tmp_path / "t.db"
    code, out, _ = run_cli(capsys, "triage", f"{REPO}#{n}", "--apply", "--store", str(db))
    assert code == 0 and env.writes == [] and "held for review, not sent" in out
    with Store(db) as store:
        [row] = store.audit()
        assert row["extra"]["shadow"] and not row["applied"]
