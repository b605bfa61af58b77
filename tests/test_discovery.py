"""Which profile a command uses with no --profile: ISSUETRIAGE_PROFILE, else the checkout's own
.github/issuetriage/, else the shipped profile naming the repository; an unknown repository is
one line, exit 2 and nothing written, on every command; PyTorch's profile is for pytorch/pytorch."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from builders import run_cli

ISSUE = {"repo": "acme/widgets", "number": 1, "title": "YAML parser crashes on anchors",
         "body": "Loading a config fails\n\n```\nValueError: bad anchor\n```"}


@pytest.fixture
def widgets(tmp_path, capsys, monkeypatch) -> Path:
    """A checkout of acme/widgets with its own profile; the working folder is a subfolder of it."""
    root = tmp_path / "widgets"
    (root / ".git").mkdir(parents=True)
    labels = tmp_path / "labels.json"
    labels.write_text(json.dumps([{"name": "area/parser", "description": "Parsing of YAML configuration"},
                                  {"name": "needs triage", "description": "Nobody has looked yet"}]))
    assert run_cli(capsys, "profile", "init", str(root / ".github" / "issuetriage"), "--repo", "acme/widgets",
                   "--labels", str(labels))[0] == 0
    (root / "src").mkdir()
    monkeypatch.chdir(root / "src")
    monkeypatch.delenv("ISSUETRIAGE_PROFILE", raising=False)
    (tmp_path / "issue.json").write_text(json.dumps(ISSUE))
    return root


def test_plan_in_a_checkout_uses_its_own_profile_not_pytorchs(widgets, capsys):
    code, out, err = run_cli(capsys, "plan", "--issue", str(widgets.parent / "issue.json"))
    assert code == 0, err
    plan = json.loads(out)
    assert "area/parser" in plan["labels_added"]
    assert not {"triage review", "bot-triaged"} & set(plan["labels_added"])


def test_the_environment_comes_before_the_checkout(widgets, capsys, monkeypatch):
    monkeypatch.setenv("ISSUETRIAGE_PROFILE", "pytorch")  # names a profile for another repository
    code, out, err = run_cli(capsys, "plan", "--issue", str(widgets.parent / "issue.json"))
    assert code == 2 and not out and "profile 'pytorch' is for pytorch/pytorch" in err


def test_pytorch_issues_get_pytorchs_profile_even_in_another_checkout(widgets, capsys):
    issue = widgets.parent / "torch.json"
    issue.write_text(json.dumps({**ISSUE, "repo": "pytorch/pytorch"}))
    code, out, err = run_cli(capsys, "plan", "--issue", str(issue))
    assert code == 0 and json.loads(out)["repo"] == "pytorch/pytorch", err


@pytest.mark.parametrize("argv", [
    ["plan", "--issue", "{issue}"],
    ["triage", "acme/confparse#1"],
    ["run", "--store", "{store}"],
    ["backlog", "acme/confparse", "--store", "{new}"],
    ["serve", "--store", "{new}", "--repo", "acme/confparse", "--port", "0"],
    ["worker", "--store", "{new}", "--repo", "acme/confparse"],
    ["mcp", "--github", "acme/confparse", "--store", "{new}"],
])
def test_an_issue_of_a_repository_no_profile_names_is_one_line_exit_2_on_every_command(
        widgets, tmp_path, capsys, monkeypatch, argv):
    from issuetriage.models import Issue
    from issuetriage.store.sqlite import Store

    monkeypatch.setenv("GITHUB_TOKEN", "t")
    monkeypatch.setenv("GITHUB_WEBHOOK_SECRET", "s")
    monkeypatch.setenv("GITHUB_API_URL", "http://127.0.0.1:9")  # never reached
    issue = tmp_path / "confparse.json"
    issue.write_text(json.dumps({**ISSUE, "repo": "acme/confparse"}))
    with Store(tmp_path / "t.db") as db:
        db.put_issue(Issue(**{**ISSUE, "repo": "acme/confparse"}))
    before = sorted(tmp_path.rglob("*"))
    args = [a.format(issue=issue, store=tmp_path / "t.db", new=tmp_path / "new.db") for a in argv]
    code, out, err = run_cli(capsys, *args)
    assert code == 2 and not out and err.count("\n") == 1, err
    assert err.startswith("error: acme/confparse: no profile names this repository")
    assert sorted(tmp_path.rglob("*")) == before  # nothing written
