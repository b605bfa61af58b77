"""Evaluation: scoring rules, the leakage guard, and train/eval round trips through the CLI."""

from __future__ import annotations

import json
import random

import pytest

from builders import make_issue, run_cli
from issuetriage.evaluate.replay import cross_validate, replay
from issuetriage.evaluate.report import build_report
from issuetriage.evaluate.scoring import score_issue, set_prf
from issuetriage.judges.heuristic import HeuristicJudge
from issuetriage.judges.learned.corpus import Example, load_corpus
from issuetriage.judges.learned.judge import LearnedJudge
from issuetriage.judges.learned.train import train
from issuetriage.models import Decision, Plan

from .conftest import SMALL, corpus_records, write_jsonl


def example(labels, state="open", number=1):
    from issuetriage.judges.learned.corpus import gold_labels
    from issuetriage.policy import load_profile

    return Example(make_issue(number=number), tuple(labels),
                   gold_labels(labels, load_profile("pytorch")), number, final_state=state)


def plan(labels, decision=Decision.LABEL, close=False):
    return Plan(repo="pytorch/pytorch", number=1, decision=decision, labels_added=tuple(labels),
                close=close)


def test_process_labels_are_neither_gold_nor_predictions(policy):
    result = score_issue(example(["module: cuda", "triaged", "high priority"]),
                         plan(["module: cuda", "bot-triaged", "triaged"]), {}, policy)
    assert result.gold == result.predicted == {"module: cuda"}


def test_redirect_gold_compares_only_oncall_labels(policy):
    result = score_issue(example(["oncall: distributed", "module: fsdp"]),
                         plan(["oncall: distributed", "module: nn"]), {}, policy)
    assert result.gold == result.predicted == {"oncall: distributed"}


def test_pt2_gold_compares_all_labels(policy):
    result = score_issue(example(["oncall: pt2", "module: dynamo"]),
                         plan(["oncall: pt2", "module: inductor"]), {}, policy)
    assert set_prf([(result.gold, result.predicted)]).to_json()["precision"] == 0.5


@pytest.mark.parametrize("labels, state, correct", [
    ([], "closed", True), (["module: cuda"], "closed", False), ([], "open", False),
    (["better-on-discuss-forum"], "open", True),
])
def test_question_close_is_right_only_for_closed_unlabelled_or_marked_issues(
        policy, labels, state, correct):
    result = score_issue(example(labels, state=state),
                         plan(["bot-triaged"], Decision.CLOSE_QUESTION, close=True), {}, policy)
    assert result.closed_question and result.gold_question is correct


def test_report_counts_abstentions_routing_and_unlabelled(policy):
    results = [
        score_issue(example(["oncall: pt2"], number=1), plan(["oncall: pt2", "module: dynamo"]),
                    {"oncall: pt2": 0.9}, policy),
        score_issue(example(["module: cuda"], number=2),
                    plan(["triage review", "bot-triaged"], Decision.TRIAGE_REVIEW), {}, policy),
        score_issue(example([], number=3), plan(["module: nn"]), {"module: nn": 0.6}, policy),
    ]
    report = build_report(results, "test", "c.jsonl", 1)
    assert report["labelled_issues"] == 2 and report["labels"]["added_to_unlabelled_issues"] == 1
    assert report["labels"]["micro"] == {"tp": 1, "fp": 1, "fn": 1, "precision": 0.5,
                                         "recall": 0.5, "f1": 0.5}
    assert report["routing"]["accuracy"] == 1.0 and report["routing"]["routed_issues"] == 1
    assert report["routing"]["accuracy_all_labelled"] == 0.5
    assert report["abstain"] == {"issues": 1, "rate": round(1 / 3, 4)}
    assert report["labels"]["by_source"]["tree"] == {"tp": 0, "fp": 1, "precision": 0.0}
    high = next(p for p in report["curve"] if p["threshold"] == 0.95)
    assert high["labels"] == 1  # the judge's 0.9 label drops out, the tree's label stays


class SpyJudge:
    """Records what the judge was shown."""

    name = "spy"

    def __init__(self):
        self.seen = []
        self.inner = HeuristicJudge()

    def judge(self, issue, signals, policy):
        self.seen.append((issue.labels, issue.state, signals.text))
        return self.inner.judge(issue, signals, policy)


def test_judge_never_sees_gold_labels(corpus, policy):
    spy = SpyJudge()
    replay(corpus.examples, policy, spy)
    assert len(spy.seen) == len(corpus.examples)
    assert all(labels == () and state == "open" and "oncall:" not in text
               for labels, state, text in spy.seen)
    assert {e.final_state for e in corpus.examples} == {"open", "closed"}


def test_scrambled_gold_labels_give_identical_plans(tmp_path, corpus_path, policy):
    judge = LearnedJudge(train(load_corpus(corpus_path, policy), policy, HeuristicJudge(), SMALL),
                         HeuristicJudge())
    records = corpus_records()
    shuffled = [r["labels"] for r in records]
    random.Random(9).shuffle(shuffled)
    scrambled = write_jsonl(tmp_path / "scrambled.jsonl",
                            [{**r, "labels": labels} for r, labels in zip(records, shuffled)])
    original = replay(load_corpus(corpus_path, policy).examples, policy, judge)
    mixed = replay(load_corpus(scrambled, policy).examples, policy, judge)
    assert [(r.number, r.decision, r.plan_labels) for r in original] == \
        [(r.number, r.decision, r.plan_labels) for r in mixed]
    assert [r.gold for r in original] != [r.gold for r in mixed]  # the scramble did change gold


def test_cross_validation_replays_every_issue_once_held_out(corpus, policy):
    trained_on: list[set[int]] = []

    def make(train_corpus):
        trained_on.append({e.issue.number for e in train_corpus.examples})
        return HeuristicJudge()

    results = cross_validate(corpus, policy, make, folds=3)
    assert sorted(r.number for r in results) == sorted(e.issue.number for e in corpus.examples)
    for fold, numbers in enumerate(trained_on):
        held = {r.number for r in results if r.fold == fold}
        assert held and not held & numbers


def test_train_then_eval_round_trip_through_the_cli(tmp_path, corpus_path, capsys):
    model = tmp_path / "model"
    code, out, _ = run_cli(capsys, "train", "--corpus", str(corpus_path), "--out", str(model))
    assert code == 0 and json.loads(out)["labels"] >= 4
    code, out, err = run_cli(capsys, "eval", "--corpus", str(corpus_path), "--model", str(model),
                             "--format", "json")
    report = json.loads(out)
    assert code == 0 and report["judge"] == "learned" and report["issues"] == 56
    assert report["routing"]["per_queue"]["oncall: distributed"]["recall"] > 0.5
    assert "trained on this corpus" in err


@pytest.mark.parametrize("veto", ["0.1", "1.01"])
def test_train_records_the_prior_veto_it_was_given(tmp_path, corpus_path, capsys, veto):
    model = tmp_path / "model"
    code, _, _ = run_cli(capsys, "train", "--corpus", str(corpus_path), "--out", str(model),
                         "--prior-veto", veto)
    manifest = json.loads((model / "manifest.json").read_text())
    assert code == 0 and manifest["prior_veto"] == float(veto)


def test_eval_folds_takes_the_prior_veto(corpus_path, capsys):
    code, out, _ = run_cli(capsys, "eval", "--corpus", str(corpus_path), "--judge", "learned",
                           "--folds", "2", "--prior-veto", "1.01", "--format", "json")
    assert code == 0 and json.loads(out)["folds"] == 2


def test_eval_folds_trains_per_fold_and_plots(tmp_path, corpus_path, capsys):
    png = tmp_path / "curve.png"
    code, out, _ = run_cli(capsys, "eval", "--corpus", str(corpus_path), "--judge", "learned",
                           "--folds", "2", "--plot", str(png))
    assert code == 0 and "folds 2" in out and "precision/coverage" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_eval_reports_bad_lines_and_strict_rejects(tmp_path, capsys):
    path = write_jsonl(tmp_path / "c.jsonl", corpus_records(per_topic=3), extra_lines=("{bad",))
    code, out, err = run_cli(capsys, "eval", "--corpus", str(path), "--format", "json")
    assert code == 0 and "skipped line 13: not valid JSON" in err
    assert json.loads(out)["issues"] == 12
    code, _, err = run_cli(capsys, "eval", "--corpus", str(path), "--strict")
    assert code == 2 and err.startswith("error:") and "line 13" in err


@pytest.mark.parametrize("args, message", [
    (("--folds", "2", "--model", "m"), "leave out --model"),
    (("--judge", "learned"), "needs --model"),
    (("--model", "absent-model"), "no model folder"),
])
def test_eval_argument_mistakes_are_one_line_errors(corpus_path, capsys, args, message):
    code, _, err = run_cli(capsys, "eval", "--corpus", str(corpus_path), *args)
    assert code == 2 and message in err


def test_plan_takes_a_model(tmp_path, corpus_path, capsys):
    model = tmp_path / "model"
    run_cli(capsys, "train", "--corpus", str(corpus_path), "--out", str(model))
    issue = tmp_path / "i.json"
    issue.write_text(json.dumps({"repo": "pytorch/pytorch", "number": 5,
                                 "title": "init_process_group times out on cumsum",
                                 "body": "torch.distributed.init_process_group(backend='nccl') "
                                         "blocks forever; dist.all_reduce never returns."}))
    code, out, _ = run_cli(capsys, "plan", "--issue", str(issue), "--model", str(model))
    assert code == 0 and "oncall: distributed" in json.loads(out)["labels_added"]


@pytest.mark.parametrize("name, message", [("curve.json", "--plot"), ("folder.png", "--plot")])
def test_eval_plot_to_a_bad_path_is_one_line_exit_2(tmp_path, corpus_path, capsys, name, message):
    target = tmp_path / name
    if name == "folder.png":
        target.mkdir()
    code, out, err = run_cli(capsys, "eval", "--corpus", str(corpus_path), "--plot", str(target))
    assert code == 2 and err.startswith("error: ") and message in err
    assert len(err.strip().splitlines()) == 1


def test_train_out_on_an_existing_file_is_one_line_exit_2_and_keeps_the_file(tmp_path, corpus_path, capsys):
    target = tmp_path / "notes.txt"
    target.write_text("keep me")
    code, out, err = run_cli(capsys, "train", "--corpus", str(corpus_path), "--out", str(target))
    assert code == 2 and out == "" and err.startswith("error: ") and "not a model folder" in err
    assert target.read_text() == "keep me"


def test_train_out_under_a_file_is_one_line_exit_2(tmp_path, corpus_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code, out, err = run_cli(capsys, "train", "--corpus", str(corpus_path), "--out", str(blocker / "model"))
    assert code == 2 and out == "" and err.startswith("error: ") and len(err.strip().splitlines()) == 1
