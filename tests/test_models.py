import pytest
from pydantic import ValidationError

from builders import make_issue
from issuetriage.models import Decision, Issue, Plan


def test_issue_needs_only_repo_number_title_body():
    issue = Issue(repo="o/r", number=1, title="t", body="b")
    assert issue.state == "open" and issue.labels == () and issue.comments == ()
    assert not issue.is_pull_request and not issue.locked and issue.ref == "o/r#1"


def test_issue_ignores_unknown_keys_and_reads_github_shapes():
    issue = Issue.model_validate({
        "repository_url": "https://api.github.com/repos/pytorch/pytorch", "number": 5,
        "title": "t", "body": None, "user": {"login": "alice"}, "labels": [{"name": "module: nn"}],
        "pull_request": None, "reactions": {"+1": 3}, "comments": 4,
    })
    assert issue.repo == "pytorch/pytorch" and issue.author == "alice"
    assert issue.labels == ("module: nn",) and issue.body == "" and issue.comments == ()


@pytest.mark.parametrize("missing", ["repo", "number", "title", "body"])
def test_issue_requires_core_fields(missing):
    data = {"repo": "o/r", "number": 1, "title": "t", "body": "b"}
    del data[missing]
    with pytest.raises(ValidationError):
        Issue.model_validate(data)


def test_issue_is_immutable():
    issue = make_issue()
    with pytest.raises(ValidationError):
        issue.title = "x"  # type: ignore[misc]


def test_plan_json_has_exactly_the_documented_keys():
    plan = Plan(repo="o/r", number=1, decision=Decision.LABEL, labels_added=("x",))
    assert set(plan.to_json()) == {"repo", "number", "decision", "labels_added", "templates",
                                   "close", "body_edit", "transfer_repo", "fixed_in_release", "trace",
                                   "judge"}
    with pytest.raises(ValidationError):
        Plan(repo="o/r", number=1, decision=Decision.LABEL, labels_removed=("x",))  # type: ignore[call-arg]
