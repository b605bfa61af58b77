import pytest
from scrub_helpers import make_issue

from issuetriage.scrub.actionable import screen


@pytest.mark.parametrize(("kw", "label"), [
    ({"state": "closed"}, None),
    ({"labels": ("duplicate",)}, "duplicate"),
    ({"body": "Duplicate of #123"}, "duplicate"),
    ({"title": "[Feature request] add a flag"}, "feature"),
    ({"labels": ("enhancement",)}, "feature"),
    ({"title": "[Tracker] dynamic shapes issues"}, "tracker"),
    ({"title": "Question: how to freeze layers"}, "question"),
    ({"body": "Only fails with --nnodes=4 multi-node training"}, "oncall: distributed"),
])
def test_not_actionable(kw, label):
    stop = screen(make_issue(**kw))
    assert stop is not None and stop.label == label


def test_named_gpu_stops_only_when_the_script_needs_a_gpu():
    issue = make_issue(body="Crash on H100 with bf16")
    assert screen(issue, "x = torch.ones(2).cuda()").label == "module: cuda"
    assert screen(issue, "x = torch.ones(2)") is None
    assert screen(issue, "x = torch.ones(2).cuda()", have_gpu=True) is None


def test_plain_bug_report_is_actionable():
    assert screen(make_issue(body="Calling f() raises ValueError", title="f() fails")) is None
