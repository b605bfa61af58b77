"""The CLI end to end: plan, store import, run, demo, and bad input."""

import json

import pytest

from builders import run_cli

ISSUE = {"repo": "pytorch/pytorch", "number": 12, "title": "DataLoader with num_workers hangs",
         "body": "Iterating a torch.utils.data.DataLoader with num_workers=2 hangs forever.\n\n```python\nfrom torch.utils.data import DataLoader\n```"}


def test_plan_json_prints_one_plan_object(tmp_path, capsys):
    path = tmp_path / "i.json"
    path.write_text(json.dumps(ISSUE))
    code, out, _ = run_cli(capsys, "plan", "--issue", str(path))
    plan = json.loads(out)
    assert code == 0 and plan["number"] == 12 and "bot-triaged" in plan["labels_added"]
    assert set(plan) == {"repo", "number", "decision", "labels_added", "templates", "close", "body_edit",
                         "transfer_repo", "fixed_in_release", "trace", "judge"}
    assert plan["judge"] == "heuristic"


def test_plan_jsonl_prints_one_plan_per_line(tmp_path, capsys):
    path = tmp_path / "i.jsonl"
    path.write_text("\n".join(json.dumps({**ISSUE, "number": n}) for n in (1, 2, 3)) + "\n")
    code, out, _ = run_cli(capsys, "plan", "--issue", str(path))
    assert code == 0 and [json.loads(l)["number"] for l in out.splitlines()] == [1, 2, 3]


def test_plan_text_format_shows_the_trace(tmp_path, capsys):
    path = tmp_path / "i.json"
    path.write_text(json.dumps(ISSUE))
    code, out, _ = run_cli(capsys, "plan", "--issue", str(path), "--format", "text")
    assert code == 0 and out.startswith("pytorch/pytorch#12:") and "[6 mark_bot_triaged]" in out


@pytest.mark.parametrize("content,suffix,message", [
    ("{oops", ".json", "malformed JSON"),
    (json.dumps({"repo": "pytorch/pytorch", "number": 1, "body": "x"}), ".json", "title: missing"),
    (json.dumps(ISSUE) + "\n{bad\n", ".jsonl", "i.jsonl:2: malformed JSON"),
    (json.dumps({**ISSUE, "number": -3}), ".json", "number"),
])
def test_bad_input_is_one_line_exit_2_and_no_output(tmp_path, capsys, content, suffix, message):
    path = tmp_path / f"i{suffix}"
    path.write_text(content)
    code, out, err = run_cli(capsys, "plan", "--issue", str(path))
    assert code == 2 and out == "" and message in err
    assert len(err.strip().splitlines()) == 1 and err.startswith("error: ")


def test_unknown_profile_is_a_clean_error(tmp_path, capsys):
    path = tmp_path / "i.json"
    path.write_text(json.dumps(ISSUE))
    code, out, err = run_cli(capsys, "plan", "--issue", str(path), "--profile", "nope")
    assert code == 2 and "unknown profile 'nope'" in err and out == ""


def test_missing_issue_file(tmp_path, capsys):
    code, _, err = run_cli(capsys, "plan", "--issue", str(tmp_path / "absent.json"))
    assert code == 2 and "no such file" in err


def test_store_import_and_run_twice_changes_nothing_the_second_time(tmp_path, capsys):
    data = tmp_path / "i.jsonl"
    data.write_text("\n".join(json.dumps({**ISSUE, "number": n}) for n in range(1, 6)) + "\n")
    db = tmp_path / "t.db"
    assert run_cli(capsys, "store", "import", str(data), "--store", str(db))[0] == 0
    code, out, _ = run_cli(capsys, "run", "--store", str(db), "--apply")
    assert code == 0 and "applied 5 issue(s)" in out
    code, out, _ = run_cli(capsys, "run", "--store", str(db), "--apply")
    assert code == 0 and "applied 0 issue(s): nothing to do" in out
    from issuetriage.store.sqlite import Store
    with Store(db) as store:
        assert store.count("audit") == 5
        assert all(row["plan"]["trace"] for row in store.audit())


def test_run_leaves_issues_of_another_repo_in_the_store_alone(tmp_path, capsys):
    data = tmp_path / "i.jsonl"
    data.write_text(json.dumps(ISSUE) + "\n" + json.dumps({**ISSUE, "repo": "someone/else"}) + "\n")
    db = tmp_path / "t.db"
    assert run_cli(capsys, "store", "import", str(data), "--store", str(db))[0] == 0
    code, _, err = run_cli(capsys, "run", "--store", str(db), "--apply")  # two repositories: which one?
    assert code == 2 and err.startswith("error: no profile") and err.count("\n") == 1
    code, out, _ = run_cli(capsys, "run", "--store", str(db), "--apply", "--profile", "pytorch")
    assert code == 0 and "applied 1 issue(s)" in out
    from issuetriage.store.sqlite import Store
    with Store(db) as store:
        assert store.get_issue("someone/else", 12).labels == ()
        assert [row["repo"] for row in store.audit()] == ["pytorch/pytorch"]
    for extra in ([], ["--profile", "pytorch"]):  # PyTorch's profile is for pytorch/pytorch only
        code, out, err = run_cli(capsys, "run", "--store", str(db), "--repo", "someone/else", *extra)
        assert code == 2 and "someone/else: " in err and err.count("\n") == 1 and not out


def test_bad_import_writes_nothing_not_even_a_store_file(tmp_path, capsys):
    data = tmp_path / "i.jsonl"
    data.write_text(json.dumps(ISSUE) + "\nnot json\n")
    db = tmp_path / "new.db"
    code, _, err = run_cli(capsys, "store", "import", str(data), "--store", str(db))
    assert code == 2 and "i.jsonl:2" in err
    assert not db.exists()


def test_run_on_a_missing_or_corrupt_store(tmp_path, capsys):
    code, _, err = run_cli(capsys, "run", "--store", str(tmp_path / "none.db"))
    assert code == 2 and "no such store" in err
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"garbage" * 500)
    code, _, err = run_cli(capsys, "run", "--store", str(bad))
    assert code == 2 and "not a usable store" in err


def test_demo_exercises_every_decision(capsys):
    from rich.console import Console

    from issuetriage.cli.engine import demo
    rows = demo(Console(file=open("/dev/null", "w")))
    decisions = {plan.decision.value for _, plan in rows}
    assert decisions == {"skip_already_routed", "close_question", "close_expected_behavior", "request_info",
                         "request_reproduction", "transfer", "redirect_oncall", "label", "triage_review"}
    code, out, _ = run_cli(capsys, "demo")
    assert code == 0 and "issues left untriaged after applying: 0" in out


@pytest.mark.parametrize("suffix", [".json", ".jsonl"])
def test_plan_of_a_non_utf8_file_is_one_line_exit_2_and_no_output(tmp_path, capsys, suffix):
    path = tmp_path / f"i{suffix}"
    path.write_bytes(json.dumps(ISSUE).encode() + b"\n" + b'{"title": "caf\xe9"}\n')
    code, out, err = run_cli(capsys, "plan", "--issue", str(path))
    assert code == 2 and out == "" and "cannot read" in err
    assert len(err.strip().splitlines()) == 1 and err.startswith("error: ")


def test_store_import_of_an_issue_number_too_large_is_one_line_exit_2_and_writes_nothing(tmp_path, capsys):
    data = tmp_path / "i.jsonl"
    data.write_text(json.dumps(ISSUE) + "\n" + json.dumps({**ISSUE, "number": 10**23}) + "\n")
    db = tmp_path / "t.db"
    code, out, err = run_cli(capsys, "store", "import", str(data), "--store", str(db))
    assert code == 2 and out == "" and err.startswith("error: ") and "i.jsonl:2" in err and "number" in err
    assert len(err.strip().splitlines()) == 1
    from issuetriage.store.sqlite import Store
    with Store(db) as store:
        assert store.count("issues") == 0


# -- gh conventions -------------------------------------------------------------------------------

import io  # noqa: E402
import re  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()
SAMPLE_REST = Path(__file__).resolve().parent / "github" / "samples" / "issue.json"
PROTOCOL_COMMANDS = {"hook", "mcp", "serve", "worker"}  # hook protocol, MCP, HTTP, and a queue consumer


def _commands() -> dict[str, object]:
    """Every leaf command by its path (`profile init`), from the app itself."""
    import typer

    from issuetriage.cli.app import _register, app
    _register()
    found: dict[str, object] = {}

    def walk(group: object, prefix: str) -> None:
        for name, cmd in group.commands.items():  # type: ignore[attr-defined]
            path = f"{prefix} {name}".strip()
            if hasattr(cmd, "commands"):
                walk(cmd, path)
            else:
                found[path] = cmd
    walk(typer.main.get_command(app), "")
    return found


def test_every_command_is_in_the_readme_table_and_has_help(capsys):
    commands = _commands()
    assert len(commands) >= 20
    for path, cmd in commands.items():
        assert f"| `issuetriage {path}" in README, f"{path} is not in the README command table"
        assert (cmd.help or "").strip(), f"{path} has no help text"  # type: ignore[attr-defined]
        code, out, _ = run_cli(capsys, *path.split(), "-h")
        assert code == 0 and "Usage:" in out and "Example" in out, path


def test_every_command_that_prints_results_takes_format_and_the_env_options():
    for path, cmd in _commands().items():
        options = {opt: param for param in cmd.params for opt in param.opts}  # type: ignore[attr-defined]
        if path not in PROTOCOL_COMMANDS:
            assert "--format" in options, f"{path} has no --format"
        for flag, env in (("--profile", "ISSUETRIAGE_PROFILE"), ("--store", "ISSUETRIAGE_STORE")):
            if flag in options:
                assert options[flag].envvar == env, f"{path} {flag} ignores {env}"


def test_version_and_short_help(capsys):
    from importlib.metadata import version
    code, out, _ = run_cli(capsys, "--version")
    assert code == 0 and out.strip() == f"issuetriage {version('issuetriage')}"
    code, out, _ = run_cli(capsys, "-h")
    assert code == 0 and "profile" in out and "--install-completion" in out


def test_completion_script_comes_from_typer(capsys):
    code, out, _ = run_cli(capsys, "--show-completion", "bash")
    assert code == 0 and "_ISSUETRIAGE_COMPLETE" in out


def test_json_is_an_alias_of_format_json(tmp_path, capsys):
    path = tmp_path / "i.json"
    path.write_text(json.dumps(ISSUE))
    a = run_cli(capsys, "profile", "check", "pytorch", "--json")
    b = run_cli(capsys, "profile", "check", "pytorch", "--format", "json")
    assert a == b and json.loads(a[1])["ok"] is True


def _stdin(monkeypatch, text: str) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))


GH_VIEW = {  # gh issue view 12 --json number,title,body,author,labels,comments,state,url
    "author": {"id": "MDQ6", "is_bot": False, "login": "octo", "name": "Octo"},
    "body": ISSUE["body"], "number": 12, "state": "OPEN", "title": ISSUE["title"],
    "url": "https://github.com/pytorch/pytorch/issues/12",
    "labels": [{"id": "LA_1", "name": "module: dataloader", "description": "", "color": "ededed"}],
    "comments": [{"id": "IC_1", "author": {"login": "helper"}, "authorAssociation": "MEMBER",
                  "body": "Can you share the full script?", "createdAt": "2025-01-02T03:04:05Z",
                  "includesCreatedEdit": False, "isMinimized": False, "minimizedReason": "",
                  "reactionGroups": [], "url": "https://github.com/pytorch/pytorch/issues/12#c1",
                  "viewerDidAuthor": False}],
}


def test_plan_reads_gh_issue_view_json_from_stdin(monkeypatch, capsys):
    from issuetriage.records import read_issues
    _stdin(monkeypatch, json.dumps(GH_VIEW))
    code, out, err = run_cli(capsys, "plan", "--issue", "-")
    assert code == 0, err
    plan = json.loads(out)
    assert plan["repo"] == "pytorch/pytorch" and plan["number"] == 12
    _stdin(monkeypatch, json.dumps(GH_VIEW))
    issue = read_issues("-")[0]
    assert issue.author == "octo" and issue.state == "open" and issue.labels == ("module: dataloader",)
    assert issue.comments[0].author == "helper" and issue.comments[0].author_association == "MEMBER"


def test_plan_reads_a_gh_issue_list_array_and_jsonl_from_stdin(monkeypatch, capsys):
    many = [GH_VIEW, {**GH_VIEW, "number": 13, "url": "https://github.com/pytorch/pytorch/issues/13"}]
    _stdin(monkeypatch, json.dumps(many))
    code, out, _ = run_cli(capsys, "plan", "--issue", "-")
    assert code == 0 and [json.loads(line)["number"] for line in out.splitlines()] == [12, 13]
    _stdin(monkeypatch, "\n".join(json.dumps(x) for x in many))
    code, out, _ = run_cli(capsys, "plan", "--issue", "-")
    assert code == 0 and [json.loads(line)["number"] for line in out.splitlines()] == [12, 13]


def test_plan_reads_the_rest_api_issue_json(capsys, tmp_path):
    rest = json.loads(SAMPLE_REST.read_text())  # an issue of acme/widgets, which has a profile of its own
    assert run_cli(capsys, "profile", "init", str(tmp_path / "p"), "--repo", "acme/widgets")[0] == 0
    code, out, err = run_cli(capsys, "plan", "--issue", str(SAMPLE_REST), "--profile", str(tmp_path / "p"))
    assert code == 0, err
    assert json.loads(out)["number"] == rest["number"]


def test_bad_stdin_is_one_line_exit_2(monkeypatch, capsys):
    _stdin(monkeypatch, "{not json\n")
    code, out, err = run_cli(capsys, "plan", "--issue", "-")
    assert code == 2 and out == "" and err.startswith("error: stdin:1: malformed JSON")


def test_profile_and_store_come_from_the_environment(tmp_path, monkeypatch, capsys):
    data = tmp_path / "i.jsonl"
    data.write_text(json.dumps(ISSUE) + "\n")
    db = tmp_path / "env.db"
    monkeypatch.setenv("ISSUETRIAGE_STORE", str(db))
    assert run_cli(capsys, "store", "import", str(data))[0] == 0 and db.exists()
    code, out, _ = run_cli(capsys, "run")
    assert code == 0 and "planned (dry run) 1 issue(s)" in out
    monkeypatch.setenv("ISSUETRIAGE_PROFILE", "no-such-profile")
    for argv in (["run"], ["plan", "--issue", str(data)], ["demo"], ["llm", "config"]):
        code, _, err = run_cli(capsys, *argv)
        assert code == 2 and "unknown profile 'no-such-profile'" in err, argv


def test_the_token_falls_back_to_gh_auth_token(tmp_path):
    from issuetriage.errors import ConfigError
    from issuetriage.github.auth import credentials_from_env
    fake = tmp_path / "gh"
    fake.write_text('#!/bin/sh\n[ "$1 $2 $3 $4" = "auth token --hostname github.com" ] && echo gho_fromgh && exit 0\nexit 1\n')
    fake.chmod(0o755)
    assert credentials_from_env({"PATH": str(tmp_path)}).token == "gho_fromgh"
    assert credentials_from_env({"PATH": str(tmp_path), "GITHUB_TOKEN": "ghp_env"}).token == "ghp_env"
    fake.write_text("#!/bin/sh\nexit 1\n")  # gh without a login
    with pytest.raises(ConfigError, match="gh auth login"):
        credentials_from_env({"PATH": str(tmp_path)})


def test_exit_codes_are_documented():
    section = README.split("### Exit codes", 1)[1].split("\n## ", 1)[0]
    assert all(re.search(rf"^\| {code} \|", section, re.M) for code in (0, 1, 2, 130))


# -- see what happened: run's listing and the audit log -------------------------------------------

def _store_with(tmp_path, capsys, records) -> Path:
    data = tmp_path / "i.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    db = tmp_path / "t.db"
    assert run_cli(capsys, "store", "import", str(data), "--store", str(db))[0] == 0
    return db


def test_run_lists_each_decision_and_why_issues_were_skipped(tmp_path, capsys):
    db = _store_with(tmp_path, capsys, [
        ISSUE, {**ISSUE, "number": 13, "state": "closed"}, {**ISSUE, "number": 14, "labels": ["triaged"]},
        {**ISSUE, "number": 15, "labels": ["oncall: jit"]}])
    code, out, _ = run_cli(capsys, "run", "--store", str(db), "--apply", "--json")
    report = json.loads(out)
    assert code == 0 and report["applied"] and report["writes_to"] == "local store only"
    assert [d["issue"] for d in report["decided"]] == ["pytorch/pytorch#12"] and report["decided"][0]["why"]
    assert {s["issue"]: s["why"] for s in report["skipped"]} == {
        "pytorch/pytorch#13": "closed", "pytorch/pytorch#14": "already triaged (triaged)",
        "pytorch/pytorch#15": "already routed (oncall: jit)"}
    code, out, _ = run_cli(capsys, "run", "--store", str(db), "--apply")
    assert "pytorch/pytorch#12\tskipped\talready triaged" in out
    assert "wrote to the local store only, not to GitHub" in out


def test_audit_answers_why_the_bot_did_that(tmp_path, capsys):
    db = _store_with(tmp_path, capsys, [ISSUE, {**ISSUE, "number": 13}])
    assert run_cli(capsys, "run", "--store", str(db), "--apply")[0] == 0
    code, out, _ = run_cli(capsys, "audit", "--store", str(db), "--issue", "12", "--json")
    rows = json.loads(out)
    assert code == 0 and [r["issue"] for r in rows] == ["pytorch/pytorch#12"]
    assert rows[0]["applied"] and rows[0]["trace"] and rows[0]["decision"]
    code, out, _ = run_cli(capsys, "audit", "--store", str(db))
    assert code == 0 and "pytorch/pytorch#13" in out and f"[{rows[0]['trace'][0]['step']}]" in out
    code, _, err = run_cli(capsys, "audit", "--store", str(tmp_path / "none.db"))
    assert code == 2 and "no such store" in err


def test_the_cli_prior_veto_default_is_the_trainers():
    """`cli/learn.py` names TrainConfig's default itself so `--help` need not import scikit-learn."""
    from issuetriage.cli.learn import PRIOR_VETO
    from issuetriage.judges.learned.train import TrainConfig

    assert PRIOR_VETO == TrainConfig().prior_veto


def test_commands_are_registered_once_however_often_main_runs(capsys):
    from issuetriage.cli.app import app

    for _ in range(3):
        run_cli(capsys, "--version")
    names = [c.name for c in app.registered_commands]
    assert len(names) == len(set(names))
