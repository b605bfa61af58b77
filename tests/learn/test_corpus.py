"""Corpus loading: labels never reach the issue, bad lines are reported by line number."""

from __future__ import annotations

import json

import pytest

from issuetriage.errors import UserError
from issuetriage.judges.learned.corpus import gold_labels, load_corpus

from .conftest import corpus_records, write_jsonl


def test_issues_are_as_filed_and_gold_travels_separately(corpus):
    assert all(e.issue.labels == () and e.issue.state == "open" for e in corpus.examples)
    assert "closed" in {e.final_state for e in corpus.examples}
    compile_example = next(e for e in corpus.examples if "oncall: pt2" in e.raw_labels)
    assert compile_example.gold == {"oncall: pt2", "module: inductor"}


def test_gold_drops_process_and_unknown_labels(policy):
    gold = gold_labels(["module: cuda", "triaged", "high priority", "bot-triaged",
                        "needs reproduction", "not-a-catalog-label"], policy)
    assert gold == {"module: cuda"}


@pytest.mark.parametrize("bad_line, reason", [
    ("{not json", "not valid JSON"),
    ("[1, 2]", "expected a JSON object"),
    (json.dumps({"title": "no number", "body": "", "labels": []}), "missing field 'number'"),
    (json.dumps({"number": 5, "title": "t", "body": "", "labels": "module: cuda"}),
     "'labels' must be a list"),
    (json.dumps({"number": 5, "title": "t", "body": "", "labels": [3]}), "must hold label names"),
    (json.dumps({"number": -1, "title": "t", "body": "", "labels": []}), "number"),
    (json.dumps({"number": 6, "title": "t", "body": "", "labels": [], "repo": "nope"}), "repo"),
])
def test_bad_line_is_skipped_and_reported_with_its_line_number(tmp_path, policy, bad_line, reason):
    records = corpus_records(per_topic=2)
    path = write_jsonl(tmp_path / "c.jsonl", records, extra_lines=(bad_line,))
    corpus = load_corpus(path, policy)
    assert len(corpus.examples) == len(records)
    [problem] = corpus.problems
    assert problem.line == len(records) + 1 and reason in problem.reason


def test_strict_mode_rejects_the_corpus_naming_the_line(tmp_path, policy):
    path = write_jsonl(tmp_path / "c.jsonl", corpus_records(per_topic=2), extra_lines=("{oops",))
    with pytest.raises(UserError, match=r"c\.jsonl: line 9: not valid JSON"):
        load_corpus(path, policy, strict=True)


def test_duplicate_issue_is_skipped_not_scored_twice(tmp_path, policy):
    records = corpus_records(per_topic=2)
    path = write_jsonl(tmp_path / "c.jsonl", records + [records[0]])
    corpus = load_corpus(path, policy)
    assert len(corpus.examples) == len(records)
    assert "duplicate of line 1" in corpus.problems[0].reason


def test_blank_lines_are_ignored_and_line_numbers_stay_true(tmp_path, policy):
    records = corpus_records(per_topic=1)
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps(records[0]) + "\n\n" + json.dumps(records[1]) + "\n")
    assert [e.line for e in load_corpus(path, policy).examples] == [1, 3]


def test_corpus_without_usable_lines_is_an_error(tmp_path, policy):
    path = tmp_path / "c.jsonl"
    path.write_text("{bad\n[]\n")
    with pytest.raises(UserError, match="no usable issues"):
        load_corpus(path, policy)


def test_missing_corpus_is_a_user_error(tmp_path, policy):
    with pytest.raises(UserError, match="cannot read corpus"):
        load_corpus(tmp_path / "absent.jsonl", policy)


def test_corpus_hash_changes_with_content(tmp_path, policy):
    a = write_jsonl(tmp_path / "a.jsonl", corpus_records(per_topic=2, seed=1))
    b = write_jsonl(tmp_path / "b.jsonl", corpus_records(per_topic=2, seed=2))
    assert load_corpus(a, policy).sha256 != load_corpus(b, policy).sha256
