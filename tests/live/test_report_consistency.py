"""The report agrees with itself: one plan per issue in the headline and the decision chart
(a dry run and a shadow run of the same issue are one), a label on an open issue is in use, and
every heading is complete."""

from __future__ import annotations

from datetime import UTC, datetime

from builders import make_issue, run_cli
from issuetriage.report import data
from issuetriage.store.sqlite import Store


def test_plans_are_counted_once_per_issue_and_labels_on_open_issues_are_in_use(tmp_path, capsys, policy):
    path = tmp_path / "t.db"
    old = datetime(2020, 1, 1, tzinfo=UTC)
    with Store(path) as db:
        db.put_issues([make_issue("It crashes.\n\n```\nRuntimeError\n```", "crash in conv", number=n,
                                  created_at=old) for n in (1, 2)]
                      + [make_issue("still open", "queued", number=3, labels=["oncall: pt2"], created_at=old)])
    for extra in ([], ["--shadow"]):  # the same issues, dry run then shadow run
        assert run_cli(capsys, "run", "--store", str(path), "--profile", "pytorch", *extra)[0] == 0
    with Store(path) as db:
        report = data.build(db, policy, now=datetime(2026, 12, 1, tzinfo=UTC))
    charted = sum(sum(day.values()) for day in report.decisions_by_day.values())
    assert report.quality.plans == charted == 2
    assert "oncall: pt2" not in report.unused and report.unused_months == policy.meta.live.unused_months
    code, _, err = run_cli(capsys, "report", "--store", str(path), "--out", str(tmp_path / "r"), "--profile", "pytorch")
    page = (tmp_path / "r" / "index.html").read_text()
    assert code == 0 and f"unused for the last {policy.meta.live.unused_months} months" in page, err
