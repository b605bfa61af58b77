"""History as evidence: retrieval reaches only earlier issues of the same repository, `eval`
draws it only from the training side, and the request export carries no gold."""

from __future__ import annotations

import json

import pytest

from builders import make_issue, run_cli
from issuetriage.evaluate.replay import cross_validate
from issuetriage.evidence.history import History, history_from_examples
from issuetriage.judges.heuristic import HeuristicJudge
from issuetriage.judges.neighbours import NeighbourVote

from .conftest import corpus_records, write_jsonl


def labelled(number, title, labels, repo="pytorch/pytorch"):
    return make_issue(number=number, title=title, body=title, repo=repo), labels


def test_similar_issues_are_earlier_never_the_issue_itself_or_newer():
    history = History("pytorch/pytorch", [labelled(n, "svd crashes on cuda tensors", ["module: linalg"])
                                          for n in (5, 10, 20, 30)])
    near = history.similar(make_issue(number=20, title="svd crashes on cuda tensors"), k=10)
    assert [p.number for p in near] == [10, 5]


def test_other_repositories_and_unlabelled_issues_are_not_history():
    history = History("pytorch/pytorch", [labelled(1, "svd crash", ["module: linalg"]),
                                          labelled(2, "svd crash", []),
                                          labelled(3, "svd crash", ["x"], repo="other/repo")])
    assert [p.number for p in history.similar(make_issue(number=9, title="svd crash"), 5)] == [1]
    assert history.similar(make_issue(number=9, title="svd crash", repo="other/repo"), 5) == ()


def test_vote_is_the_similarity_weighted_share_of_neighbours_with_the_label():
    history = History("pytorch/pytorch", [labelled(1, "svd crash on cuda", ["module: cuda"]),
                                          labelled(2, "svd crash on cuda", ["module: cuda", "module: linalg"])])
    votes = history.vote(make_issue(number=3, title="svd crash on cuda"), k=2)
    assert votes["module: cuda"] == pytest.approx(1.0) and votes["module: linalg"] == pytest.approx(0.5)


class Spy:
    """A judge wrapper that records which precedents each judged issue was shown."""

    name = "spy"

    def __init__(self, history):
        self.history, self.seen = history, {}

    def judge(self, issue, signals, policy):
        self.seen[issue.number] = [p.number for p in self.history.similar(issue, 50)]
        return HeuristicJudge().judge(issue, signals, policy)


def test_eval_folds_draw_history_only_from_the_training_folds(corpus, policy):
    spies = []

    def make(train_corpus):
        spies.append((Spy(history_from_examples(train_corpus.examples, policy)),
                      {e.issue.number for e in train_corpus.examples}))
        return spies[-1][0]

    cross_validate(corpus, policy, make, folds=3)
    assert sum(len(spy.seen) for spy, _ in spies) == len(corpus.examples)
    for spy, train_numbers in spies:
        for number, shown in spy.seen.items():
            assert number not in train_numbers
            assert all(n < number and n in train_numbers for n in shown)


def test_neighbour_vote_adds_what_the_nearest_earlier_issues_carry(policy):
    history = History("pytorch/pytorch", [labelled(n, "allreduce hangs in nccl watchdog", ["module: nccl"])
                                          for n in (1, 2, 3)])
    issue = make_issue(number=4, title="allreduce hangs in nccl watchdog")
    judgment = NeighbourVote(HeuristicJudge(), history).judge(issue, _signals(issue), policy)
    assert judgment.score("module: nccl") >= 0.5 and judgment.judge == "heuristic+history"
    alone = NeighbourVote(HeuristicJudge(), history).judge(make_issue(number=1, title=issue.title),
                                                           _signals(issue), policy)
    assert alone.judge == "heuristic"  # issue 1 has no earlier issues: nothing to vote


def _signals(issue):
    from issuetriage.evidence.signals import extract_signals

    return extract_signals(issue)


def test_request_export_holds_no_gold_and_only_earlier_other_issues(tmp_path, capsys, policy):
    records = corpus_records()
    path = write_jsonl(tmp_path / "c.jsonl", records)
    out = tmp_path / "req"
    code, _, err = run_cli(capsys, "llm", "requests", "--corpus", str(path), "--out", str(out),
                           "--sample", "10", "--seed", "0")
    assert code == 0, err
    manifest = json.loads((out / "manifest.json").read_text())
    sampled = {r["number"] for r in manifest["requests"]}
    assert len(sampled) == 10 and len(list(out.glob("*.txt"))) == 10
    assert "label" not in json.dumps(manifest).replace("labelled", "")
    shown_any = False
    for row in manifest["requests"]:
        assert all(n < row["number"] and n not in sampled for n in row["examples"])
        shown_any = shown_any or bool(row["examples"])
        assert "SIMILAR PAST ISSUES" in (out / row["file"]).read_text() or not row["examples"]
    assert shown_any


def test_request_export_refuses_a_used_folder_and_writes_nothing(tmp_path, capsys):
    path = write_jsonl(tmp_path / "c.jsonl", corpus_records())
    out = tmp_path / "req"
    out.mkdir()
    (out / "keep.txt").write_text("x")
    code, _, err = run_cli(capsys, "llm", "requests", "--corpus", str(path), "--out", str(out))
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1
    assert [p.name for p in out.iterdir()] == ["keep.txt"]
