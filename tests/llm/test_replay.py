"""Recorded answers replayed through the product (prompt → schema → tree → guard), no key, no
network: scoring, fallbacks, and bad recordings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from llm_helpers import answer

from builders import run_cli

ISSUES = [
    {"number": 10, "title": "torch.linalg.svd crashes on CUDA tensors", "labels": ["module: linear algebra"],
     "body": "torch.linalg.svd raises a cusolver error on a CUDA tensor."},
    {"number": 11, "title": "torch.linalg.eigh wrong result on CUDA", "labels": ["module: linear algebra"],
     "body": "torch.linalg.eigh returns wrong eigenvalues for a CUDA tensor."},
    {"number": 12, "title": "DataLoader hangs with num_workers=2", "labels": ["module: dataloader"],
     "body": "Iterating torch.utils.data.DataLoader with num_workers=2 hangs forever."},
]


def write(path: Path, rows: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def recorded(number: int, repo: str = "pytorch/pytorch", **overrides) -> dict:
    return {"repo": repo, "number": number, "answer": answer(**overrides)}


@pytest.fixture()
def corpus(tmp_path: Path) -> Path:
    return write(tmp_path / "corpus.jsonl", [{**r, "repo": "pytorch/pytorch"} for r in ISSUES])


def eval_json(capsys, corpus: Path, answers: Path, *extra: str) -> tuple[int, dict, str]:
    code, out, err = run_cli(capsys, "eval", "--corpus", str(corpus), "--judge", "llm",
                             "--answers", str(answers), "--format", "json", *extra)
    return code, (json.loads(out) if code == 0 else {}), err


def test_recorded_answers_are_scored_through_the_tree_and_guard(tmp_path, capsys, corpus):
    answers = write(tmp_path / "a.jsonl", [recorded(n) for n in (10, 11)] + [recorded(
        12, labels=[{"name": "module: dataloader", "confidence": 0.9, "reason": "workers hang"}])])
    code, report, err = eval_json(capsys, corpus, answers)
    assert code == 0, err
    assert report["judged_by"] == {"llm:replay": 3} and "warning" not in err
    assert report["labels"]["micro"]["tp"] == 3 and report["labels"]["micro"]["fp"] == 0


def test_a_missing_answer_falls_back_to_the_offline_judge_with_a_warning(tmp_path, capsys, corpus):
    answers = write(tmp_path / "a.jsonl", [recorded(10), recorded(11)])
    code, report, err = eval_json(capsys, corpus, answers)
    assert code == 0
    assert report["judged_by"] == {"heuristic:llm-outage": 1, "llm:replay": 2}
    assert "warning: pytorch/pytorch#12: LLM unavailable (no recorded answer" in err


def test_an_answer_naming_unknown_labels_is_rejected_by_the_guard_and_reported(tmp_path, capsys, corpus):
    bogus = [{"name": "module: linear algebra", "confidence": 0.9, "reason": "svd"},
             {"name": "sev0: drop everything", "confidence": 0.99, "reason": "asked to"}]
    answers = write(tmp_path / "a.jsonl", [recorded(n, labels=bogus) for n in (10, 11, 12)])
    code, report, _ = eval_json(capsys, corpus, answers)
    assert code == 0 and report["guard_rejected_unknown_labels"] == {"sev0: drop everything": 3}
    assert "sev0: drop everything" not in report["labels"]["per_label"]


@pytest.mark.parametrize("lines, message", [
    (["not json at all"], "must be JSONL"),
    (["[1, 2]"], "expected a JSON object"),
    ([json.dumps({"repo": "pytorch/pytorch", "answer": {}})], "needs \"repo\""),
    ([json.dumps(recorded(10, repo="someone/else"))], "not the profile's repository pytorch/pytorch"),
    ([json.dumps(recorded(10)), json.dumps(recorded(10))], "a second answer"),
])
def test_a_bad_recording_is_one_error_line_exit_2_and_nothing_written(tmp_path, capsys, corpus,
                                                                     lines, message):
    answers = write(tmp_path / "a.jsonl", lines)
    plot = tmp_path / "curve.png"
    code, _, err = eval_json(capsys, corpus, answers, "--plot", str(plot))
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1 and message in err
    assert not plot.exists()


def test_plan_with_replay_names_its_judge_and_warns_on_fallback(tmp_path, capsys, corpus, monkeypatch):
    answers = write(tmp_path / "a.jsonl", [recorded(10)])
    monkeypatch.setenv("ISSUETRIAGE_LLM_PROVIDER", "replay")
    monkeypatch.setenv("ISSUETRIAGE_LLM_ANSWERS", str(answers))
    code, out, err = run_cli(capsys, "plan", "--issue", str(corpus), "--judge", "llm")
    plans = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and [p["judge"] for p in plans] == ["llm:replay", "heuristic:llm-outage",
                                                        "heuristic:llm-outage"]
    assert err.count("warning: ") == 2


def test_history_from_another_repository_is_refused(tmp_path, capsys, corpus, monkeypatch):
    other = write(tmp_path / "h.jsonl", [{**ISSUES[0], "repo": "someone/else"}])
    monkeypatch.setenv("ISSUETRIAGE_LLM_PROVIDER", "replay")
    monkeypatch.setenv("ISSUETRIAGE_LLM_ANSWERS", str(write(tmp_path / "a.jsonl", [recorded(10)])))
    monkeypatch.setenv("ISSUETRIAGE_LLM_HISTORY", str(other))
    code, out, err = run_cli(capsys, "plan", "--issue", str(corpus), "--judge", "llm")
    assert code == 2 and out == "" and err.startswith("error: ") and err.count("\n") == 1
    assert "not from the profile's repository" in err


def test_an_answer_recorded_for_another_request_is_not_used(tmp_path, capsys, corpus):
    stale = [{**recorded(n), "prompt_digest": "0" * 64} for n in (10, 11)]
    stale.append({**recorded(12), "prompt_version": "1999-01-01.1"})
    code, report, err = eval_json(capsys, corpus, write(tmp_path / "a.jsonl", stale))
    assert code == 0 and report["judged_by"] == {"heuristic:llm-outage": 3}
    assert "recorded for another request" in err and "recorded for prompt 1999-01-01.1" in err


def test_answers_bought_once_are_recorded_and_replay_to_the_same_plans(tmp_path, capsys, corpus, monkeypatch,
                                                                       standin):
    """Record once with a key (here the loopback model), re-score later without one: every
    validated answer, bought or from the cache, is written as replayable JSONL with its digest."""
    standin.push(answer(), answer(), answer(labels=[{"name": "module: dataloader", "confidence": 0.9,
                                                     "reason": "workers hang"}]))
    record = tmp_path / "recorded.jsonl"
    for name, value in {"PROVIDER": "openai", "MODEL": "local-model", "BASE_URL": f"{standin.url}/v1",
                        "CACHE_DIR": str(tmp_path / "cache"), "MAX_RETRIES": "0", "RECORD": str(record)}.items():
        monkeypatch.setenv(f"ISSUETRIAGE_LLM_{name}", value)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-dummy-not-a-key")
    code, out, err = run_cli(capsys, "eval", "--corpus", str(corpus), "--judge", "llm", "--format", "json")
    assert code == 0, err
    bought = json.loads(out)
    rows = [json.loads(line) for line in record.read_text().splitlines()]
    assert [(r["number"], r["model"]) for r in rows] == [(10, "local-model"), (11, "local-model"),
                                                         (12, "local-model")]
    assert all(len(r["prompt_digest"]) == 64 for r in rows)
    # the second run is served from the cache, and still recorded (one line per issue)
    code, _, err = run_cli(capsys, "eval", "--corpus", str(corpus), "--judge", "llm", "--format", "json")
    assert code == 0 and len(standin.requests) == 3 and len(record.read_text().splitlines()) == 3
    for name in ("PROVIDER", "MODEL", "BASE_URL", "RECORD"):
        monkeypatch.delenv(f"ISSUETRIAGE_LLM_{name}")
    code, replayed, err = eval_json(capsys, corpus, record)
    assert code == 0 and "warning" not in err, err
    assert replayed["judged_by"] == {"llm:replay:local-model": 3}
    assert replayed["labels"] == bought["labels"]


def test_judges_of_one_process_share_a_recorder_and_a_failed_write_is_only_a_warning(tmp_path, capsys):
    from issuetriage.judges.llm.cache import Recorder

    path = tmp_path / "rec.jsonl"
    first, second = Recorder.shared(path, "m"), Recorder.shared(path, "m")
    assert first is second  # one per file: worker threads never overwrite each other's rows
    first.put("pytorch/pytorch", 1, answer(), "v", "d1")
    second.put("pytorch/pytorch", 2, answer(), "v", "d2")
    assert [json.loads(x)["number"] for x in path.read_text().splitlines()] == [1, 2]
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    Recorder(blocker / "rec.jsonl", "m").put("pytorch/pytorch", 3, answer(), "v", "d3")
    assert "not recorded" in capsys.readouterr().err and blocker.read_text() == "x"
