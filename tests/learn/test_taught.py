"""Learning from a model's recorded answers and humans' corrections (judges/taught.py): kept apart
from maintainers' labels with provenance and weight, never teaching the judge that scores the
issue they are about, taken in by `history build` and kept through `--update`; bad files refused
in one line."""

from __future__ import annotations

import json

import pytest

from builders import run_cli
from history_helpers import made_up_records, write_corpus
from issuetriage.evidence.history import Precedent
from issuetriage.judges.base import Judgment, Kind
from issuetriage.judges.llm.prompt import PROMPT_VERSION
from issuetriage.judges.neighbours import candidate_rows
from issuetriage.judges.taught import Taught, read_answers


def answer_line(number: int, labels: list[tuple[str, float]], **extra: object) -> dict:
    form = {"kind": "bug", "kind_confidence": 0.9, "templates": [], "transfer_repo": None,
            "missing_repro": None, "release_risk": False, "high_priority": False,
            "reasoning": "A made-up answer for a made-up issue.",
            "labels": [{"name": n, "confidence": c, "reason": ""} for n, c in labels]}
    return {"repo": "pytorch/pytorch", "number": number, "answer": form, "model": "m",
            "prompt_version": PROMPT_VERSION, "prompt_digest": "d", **extra}


def write_answers(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_an_answer_teaches_its_confident_catalog_labels_and_drops_an_unknown_one_with_a_warning(tmp_path, policy):
    path = write_answers(tmp_path / "a.jsonl", [answer_line(
        12, [("module: docs", 0.9), ("module: made-up", 0.95), ("module: cuda", 0.3), ("triaged", 0.9)])])
    warnings: list[str] = []
    taught = read_answers(path, policy, warn=warnings.append)
    assert taught == {12: Taught(("module: docs",), f"model:m@{PROMPT_VERSION}", 0.5)}
    assert len(warnings) == 1 and "'module: made-up'" in warnings[0] and "not learned" in warnings[0]


@pytest.mark.parametrize("change, says", [
    ({"repo": "acme/widgets"}, "not the profile's repository"),
    ({"profile": "acme"}, "recorded for profile 'acme'"),
    ({"prompt_version": "2020-01-01.1"}, "prompt version '2020-01-01.1'"),
])
def test_answers_of_another_repository_profile_or_prompt_version_are_refused_in_one_line(
        tmp_path, capsys, change, says):
    corpus = write_corpus(tmp_path / "c.jsonl", made_up_records(n_each=4))
    answers = write_answers(tmp_path / "a.jsonl", [answer_line(10, [("module: nccl", 0.9)]) | change])
    code, out, err = run_cli(capsys, "history", "build", "--corpus", str(corpus), "--out", str(tmp_path / "h"),
                             "--answers", str(answers))
    assert code == 2 and err.count("\n") == 1 and err.startswith("error:") and says in err
    assert not (tmp_path / "h").exists()


def test_eval_never_teaches_a_split_the_answer_of_an_issue_it_scores(tmp_path, monkeypatch):
    from issuetriage.evaluate import run

    records = made_up_records(n_each=10)
    corpus = write_corpus(tmp_path / "c.jsonl", records)
    answers = write_answers(tmp_path / "a.jsonl", [answer_line(r["number"], [("module: docs", 0.9)]) for r in records])
    seen = []

    def spy(base, history, past, policy, k, taught=None):
        seen.append(({f.number for f, _ in past}, set(taught or {})))
        return base

    monkeypatch.setattr(run, "stacked", spy)
    run.evaluate(corpus, folds=5, options=run.EvalOptions(neighbours=5, learn_answers=answers))
    everyone = {r["number"] for r in records}
    assert len(seen) == 5 and set().union(*(everyone - train for train, _ in seen)) == everyone
    for train, taught in seen:  # every issue answered: each split learns exactly its training side's answers
        assert taught == train and not taught & (everyone - train)


def test_a_neighbours_taught_label_is_a_candidate_with_its_weighted_share_and_the_issue_own_answer_is_not(policy):
    class Near:
        def similar(self, issue, k):
            return (Precedent(10, "t", "e", ("module: nccl",), 0.8), Precedent(11, "t", "e", ("module: nccl",), 0.2))

    from history_helpers import new_issue

    judgment = Judgment(judge="h", kind=Kind.BUG, kind_confidence=0.9)
    taught = {10: Taught(("module: docs",), "model:m", 0.5), 500: Taught(("module: cuda",), "model:m", 0.5)}
    names, rows = candidate_rows(Near(), 5, new_issue(500), judgment, policy, {}, {}, taught)  # type: ignore[arg-type]
    assert "module: docs" in names and "module: cuda" not in names
    docs = rows[names.index("module: docs")]
    assert docs[-2:] == [pytest.approx(0.8 * 0.5 / 1.0), pytest.approx(0.5 / 2)]
    assert rows[names.index("module: nccl")][-2:] == [0.0, 0.0]


def test_history_build_takes_answers_and_corrections_and_update_keeps_what_it_was_taught(tmp_path, capsys):
    records = made_up_records(n_each=16)
    corpus = write_corpus(tmp_path / "c.jsonl", records)
    answers = write_answers(tmp_path / "a.jsonl", [answer_line(r["number"], [("module: crash", 0.8)])
                                                   for r in records[:10]])
    folder = tmp_path / "h"
    code, out, err = run_cli(capsys, "history", "build", "--corpus", str(corpus), "--out", str(folder),
                             "--answers", str(answers), "--format", "json")
    assert code == 0, err
    assert json.loads(out)["taught"] == {f"model:m@{PROMPT_VERSION}": 10}
    fixed = write_corpus(tmp_path / "fix.jsonl", [{**records[0], "labels": ["module: docs"]}])
    code, out, err = run_cli(capsys, "history", "build", "--corpus", str(corpus), "--out", str(folder),
                             "--update", "--corrections", str(fixed), "--format", "json")
    assert code == 0, err
    assert json.loads(out)["taught"] == {"correction": 1, f"model:m@{PROMPT_VERSION}": 9}
    from issuetriage.judges.history_folder import load_folder
    from issuetriage.policy import load_profile

    stack = load_folder(folder, load_profile("pytorch")).stack
    assert stack is not None and stack.taught[records[0]["number"]] == Taught(("module: docs",), "correction", 1.0)
    assert stack.taught[records[1]["number"]].labels == ("module: crash",)


def test_the_stack_learns_a_label_only_taught_as_a_soft_target_of_its_weight_and_gold_as_one():
    import numpy as np

    from issuetriage.judges.neighbours import best_cut
    from issuetriage.judges.stacking import _weighted, targets

    assert targets(("module: nccl",), Taught(("module: nccl", "module: crash"), "model:m", 0.5)) == {
        "module: nccl": 1.0, "module: crash": 0.5}
    assert targets(("module: nccl",), None) == {"module: nccl": 1.0}
    x = np.array([[1.0], [2.0], [3.0]])
    xw, yw, weight = _weighted(x, np.array([1.0, 0.5, 0.0]))
    assert xw.tolist() == [[1.0], [2.0], [2.0], [3.0]] and yw.tolist() == [1, 1, 0, 0]
    assert weight.tolist() == [1.0, 0.5, 0.5, 1.0]
    # a soft target counts its weight as a hit: keeping the taught candidate is worth it at 0.5
    assert best_cut(np.array([0.9, 0.45, 0.05]), np.array([1.0, 0.5, 0.0]), 0.0) <= 0.44
