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
                         "transfer_repo", "trace", "judge"}
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
    code, out, _ = run_cli(capsys, "run", "--store", str(db), "--apply")
    assert code == 0 and "applied 1 issue(s)" in out
    from issuetriage.store.sqlite import Store
    with Store(db) as store:
        assert store.get_issue("someone/else", 12).labels == ()
        assert [row["repo"] for row in store.audit()] == ["pytorch/pytorch"]
    code, out, _ = run_cli(capsys, "run", "--store", str(db), "--repo", "someone/else")
    assert code == 0 and "planned (dry run) 1 issue(s)" in out  # asked for by name: triaged


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
