"""History as evidence: retrieval reaches only earlier issues of the same repository, `eval`
draws it only from the training side, and the request export carries no gold."""

from __future__ import annotations

import json

import pytest

from builders import make_issue, run_cli
from issuetriage.evaluate.replay import cross_validate
from issuetriage.evidence.history_index import memory_history
from issuetriage.judges.heuristic import HeuristicJudge
from issuetriage.judges.learned.corpus import history_from_examples
from issuetriage.judges.stacking import stacked

from .conftest import corpus_records, write_jsonl


def labelled(number, title, labels, repo="pytorch/pytorch"):
    return make_issue(number=number, title=title, body=title, repo=repo), labels


def test_similar_issues_are_earlier_never_the_issue_itself_or_newer():
    history = memory_history("pytorch/pytorch", [labelled(n, "svd crashes on cuda tensors", ["module: linalg"])
                                          for n in (5, 10, 20, 30)])
    near = history.similar(make_issue(number=20, title="svd crashes on cuda tensors"), k=10)
    assert [p.number for p in near] == [10, 5]


def test_other_repositories_and_unlabelled_issues_are_not_history():
    history = memory_history("pytorch/pytorch", [labelled(1, "svd crash", ["module: linalg"]),
                                          labelled(2, "svd crash", []),
                                          labelled(3, "svd crash", ["x"], repo="other/repo")])
    assert [p.number for p in history.similar(make_issue(number=9, title="svd crash"), 5)] == [1]
    assert history.similar(make_issue(number=9, title="svd crash", repo="other/repo"), 5) == ()


def test_vote_is_the_similarity_weighted_share_of_neighbours_with_the_label():
    history = memory_history("pytorch/pytorch", [labelled(1, "svd crash on cuda", ["module: cuda"]),
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


def _past(n_each=20):
    """Two made-up kinds of report the profile's keywords know nothing of, each with its label."""
    rows = []
    for i in range(n_each):
        rows.append(labelled(10 + 2 * i, f"zorblax frobnicator {i} stalls the quux ring", ("module: nccl",)))
        rows.append(labelled(11 + 2 * i, f"plimsoll wibble {i} paints the docs page", ("module: docs",)))
    return rows


def test_the_stack_learns_from_history_what_the_keywords_miss(policy):
    past = _past()
    issue = make_issue(number=500, title="zorblax frobnicator stalls the quux ring again",
                       body="zorblax frobnicator")
    base = HeuristicJudge().judge(issue, _signals(issue), policy)
    assert base.score("module: nccl") < 0.5  # the keywords alone do not know it
    vote = stacked(HeuristicJudge(), memory_history("pytorch/pytorch", past), past, policy, 5)
    judgment = vote.judge(issue, _signals(issue), policy)
    assert judgment.judge == "heuristic+history"
    assert judgment.score("module: nccl") >= policy.meta.thresholds.label
    assert judgment.score("module: docs") < policy.meta.thresholds.label
    assert "most similar earlier issues carry it" in next(
        s.reason for s in judgment.labels if s.name == "module: nccl")
    # everything but the labels is the base judge's
    assert (judgment.kind, judgment.missing_repro) == (base.kind, base.missing_repro)
    assert vote.judge(issue, _signals(issue), policy) == judgment  # fitted once, stable


def test_too_little_history_leaves_the_base_judge_alone(policy):
    past = [labelled(n, "allreduce hangs in nccl watchdog", ("module: nccl",)) for n in (1, 2, 3)]
    issue = make_issue(number=4, title="allreduce hangs in nccl watchdog")
    judge = stacked(HeuristicJudge(), memory_history("pytorch/pytorch", past), past, policy, 5)
    judgment = judge.judge(issue, _signals(issue), policy)
    assert judgment == HeuristicJudge().judge(issue, _signals(issue), policy)


def test_eval_refuses_a_vote_fitted_on_the_issues_it_scores(tmp_path):
    from issuetriage.errors import UserError
    from issuetriage.evaluate.run import EvalOptions, evaluate

    path = write_jsonl(tmp_path / "c.jsonl", corpus_records())
    with pytest.raises(UserError, match="--folds"):
        evaluate(path, options=EvalOptions(neighbours=5))


def test_stack_cut_lands_on_the_gate_and_keeps_order():
    from issuetriage.judges.neighbours import best_cut, rescale

    probs = [rescale(p, 0.3, 0.5) for p in (0.0, 0.1, 0.3, 0.6, 1.0)]
    assert probs[0] == 0.0 and probs[2] == pytest.approx(0.5) and probs[-1] == pytest.approx(1.0)
    assert probs == sorted(probs)
    import numpy as np

    truth = np.array([True, True, False, False, True, False])
    scores = np.array([0.9, 0.7, 0.65, 0.2, 0.35, 0.1])
    cut = best_cut(scores, truth, uncovered=0)
    assert (scores >= cut).tolist() == [True, True, True, False, True, False]  # F1 6/7


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


def test_requests_exported_with_a_stacked_offline_judge_replay_in_eval_with_it(tmp_path, capsys):
    """`llm requests --neighbours K` builds the requests `eval --judge llm --neighbours K --sample N`
    builds (the same stack, fitted on the same training side): answers recorded for them replay,
    and for the plain export they do not."""
    path = write_jsonl(tmp_path / "c.jsonl", corpus_records())
    form = {"kind": "bug", "kind_confidence": 0.9, "labels": [], "templates": [], "transfer_repo": None,
            "missing_repro": None, "release_risk": False, "high_priority": False,
            "reasoning": "an answer recorded for this exact request"}
    judged = {}
    for neighbours in ("0", "5"):
        out = tmp_path / f"req{neighbours}"
        code, _, err = run_cli(capsys, "llm", "requests", "--corpus", str(path), "--out", str(out),
                               "--sample", "10", "--neighbours", neighbours)
        assert code == 0, err
        manifest = json.loads((out / "manifest.json").read_text())
        assert manifest["offline_judge"] == ("heuristic+history" if neighbours == "5" else "heuristic")
        answers = write_jsonl(tmp_path / f"a{neighbours}.jsonl", [
            {"repo": r["repo"], "number": r["number"], "answer": form, "prompt_digest": r["prompt_digest"]}
            for r in manifest["requests"]])
        code, out_json, err = run_cli(capsys, "eval", "--corpus", str(path), "--judge", "llm", "--sample", "10",
                                      "--neighbours", "5", "--answers", str(answers), "--format", "json")
        assert code == 0, err
        judged[neighbours] = json.loads(out_json)["judged_by"]
    assert judged["5"] == {"llm:replay": 10}
    assert judged["0"] != {"llm:replay": 10}  # the plain export's requests differ


def test_request_export_refuses_a_used_folder_and_writes_nothing(tmp_path, capsys):
    path = write_jsonl(tmp_path / "c.jsonl", corpus_records())
    out = tmp_path / "req"
    out.mkdir()
    (out / "keep.txt").write_text("x")
    code, _, err = run_cli(capsys, "llm", "requests", "--corpus", str(path), "--out", str(out))
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1
    assert [p.name for p in out.iterdir()] == ["keep.txt"]


def _history_file(tmp_path, repo="pytorch/pytorch"):
    rows = [{"repo": repo, "number": i.number, "title": i.title, "body": i.body, "labels": list(labels)}
            for i, labels in _past()]
    return write_jsonl(tmp_path / "history.jsonl", rows)


def _issue_file(tmp_path):
    issue = {"repo": "pytorch/pytorch", "number": 500, "title": "zorblax frobnicator stalls the quux ring again",
             "body": "zorblax frobnicator stalls, it worked before.\n\n```\nTraceback (most recent call last):\n"
                     "RuntimeError: quux ring stalled\n```", "labels": []}
    return write_jsonl(tmp_path / "issue.jsonl", [issue])


def test_plan_stacks_the_offline_judge_with_the_history_in_the_environment(tmp_path, capsys, monkeypatch):
    """Production, not only `eval`: $ISSUETRIAGE_HISTORY gives `plan` (and every entry point that
    builds its judge with get_judge) the stacked judge, named as such in the plan."""
    issue = _issue_file(tmp_path)
    code, out, err = run_cli(capsys, "plan", "--issue", str(issue), "--judge", "heuristic", "--format", "json")
    assert code == 0, err
    assert "module: nccl" not in json.loads(out)["labels_added"]
    monkeypatch.setenv("ISSUETRIAGE_HISTORY", str(_history_file(tmp_path)))
    code, out, err = run_cli(capsys, "plan", "--issue", str(issue), "--judge", "heuristic", "--format", "json")
    assert code == 0, err
    plan = json.loads(out)
    assert plan["judge"] == "heuristic+history" and "module: nccl" in plan["labels_added"]


def test_eval_never_takes_the_history_in_the_environment(tmp_path, capsys, monkeypatch):
    corpus = write_jsonl(tmp_path / "c.jsonl", corpus_records())
    code, plain, err = run_cli(capsys, "eval", "--corpus", str(corpus), "--format", "json")
    assert code == 0, err
    monkeypatch.setenv("ISSUETRIAGE_HISTORY", str(_history_file(tmp_path)))
    code, with_env, err = run_cli(capsys, "eval", "--corpus", str(corpus), "--format", "json")
    assert code == 0, err
    assert json.loads(with_env)["labels"] == json.loads(plain)["labels"]
    assert set(json.loads(with_env)["judged_by"]) == {"heuristic"}


def test_a_history_of_another_repository_is_one_line_exit_2(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("ISSUETRIAGE_HISTORY", str(_history_file(tmp_path, repo="acme/widgets")))
    code, out, err = run_cli(capsys, "plan", "--issue", str(_issue_file(tmp_path)), "--format", "json")
    assert code == 2 and not out
    assert err.startswith("error: ") and "not from the profile's repository" in err and err.count("\n") == 1


def test_a_history_folder_gives_each_repository_its_own_file(tmp_path, capsys, monkeypatch):
    """A worker serving several repositories names a folder: each profile's repository finds
    OWNER__NAME.jsonl there, or judges without history."""
    folder = tmp_path / "histories"
    folder.mkdir()
    monkeypatch.setenv("ISSUETRIAGE_HISTORY", str(folder))
    issue = _issue_file(tmp_path)
    code, out, err = run_cli(capsys, "plan", "--issue", str(issue), "--judge", "heuristic", "--format", "json")
    assert code == 0 and json.loads(out)["judge"] == "heuristic", err
    _history_file(tmp_path).rename(folder / "pytorch__pytorch.jsonl")
    code, out, err = run_cli(capsys, "plan", "--issue", str(issue), "--judge", "heuristic", "--format", "json")
    assert code == 0 and json.loads(out)["judge"] == "heuristic+history", err


def test_llm_prompt_reads_a_history_folder_as_the_judges_do(tmp_path, capsys, monkeypatch):
    folder = tmp_path / "histories"
    folder.mkdir()
    monkeypatch.setenv("ISSUETRIAGE_HISTORY", str(folder))
    code, _, err = run_cli(capsys, "llm", "prompt", str(_issue_file(tmp_path)))
    assert code == 0, err
    _history_file(tmp_path).rename(folder / "pytorch__pytorch.jsonl")
    code, out, err = run_cli(capsys, "llm", "prompt", str(_issue_file(tmp_path)))
    assert code == 0 and "SIMILAR PAST ISSUES" in out, err


def test_the_dual_ridge_is_the_ridge_scikit_learn_fits():
    """The stack's text model solves ridge through the kernel (cost set by the window, not the
    vocabulary); it must be the same model `learned/train.py`'s `fit_linear` reaches."""
    import numpy as np
    from scipy import sparse

    from issuetriage.judges.learned.train import fit_linear
    from issuetriage.judges.stacking import dual_ridge

    rng = np.random.default_rng(0)
    x = sparse.random(60, 200, density=0.05, random_state=1, format="csr", dtype=np.float32)
    y = (rng.random((60, 3)) < 0.3).astype(np.int8)
    coef, intercept, held = dual_ridge(x, y, 0.3)
    want_coef, want_intercept = fit_linear(x, y, 0.3)
    assert np.allclose(x @ coef + intercept, x @ want_coef + want_intercept, atol=1e-3)
    assert held.shape == y.shape and not np.allclose(held, x @ coef + intercept, atol=1e-3)  # held out


def test_request_export_of_named_issues_holds_exactly_them_out_and_refuses_unknown(tmp_path, capsys):
    """`llm requests --issues FILE` exports the listed labelled issues, and none of them is
    another's history; an issue the corpus does not hold labelled is one line, exit 2, no folder."""
    records = corpus_records()
    path = write_jsonl(tmp_path / "c.jsonl", records)
    labelled = [r["number"] for r in records if r.get("labels")]
    chosen = labelled[-4:]
    listing = tmp_path / "n.txt"
    listing.write_text("\n".join(f"#{n}" for n in chosen) + "\n")
    out = tmp_path / "req"
    code, _, err = run_cli(capsys, "llm", "requests", "--corpus", str(path), "--out", str(out),
                           "--issues", str(listing), "--neighbours", "5")
    assert code == 0, err
    manifest = json.loads((out / "manifest.json").read_text())
    assert sorted(r["number"] for r in manifest["requests"]) == sorted(chosen)
    assert manifest["history_issues"] == len(records) - len(chosen) and manifest["seed"] is None
    assert all(n not in chosen and n < r["number"] for r in manifest["requests"] for n in r["examples"])
    listing.write_text(f"{chosen[0]}\n{max(r['number'] for r in records) + 1000}\n")
    code, _, err = run_cli(capsys, "llm", "requests", "--corpus", str(path), "--out", str(tmp_path / "r2"),
                           "--issues", str(listing))
    assert code == 2 and err.startswith("error: --issues") and err.count("\n") == 1
    assert not (tmp_path / "r2").exists()
