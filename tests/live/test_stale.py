"""Stale follow-up: reminder after N quiet days, close after M more, a reporter reply stops the
clock, reruns change nothing, and it only runs when the profile enables it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from livetest import tuned

from builders import make_issue
from issuetriage.act.stale import follow_up as follow_up_with
from issuetriage.engine.guard import guard
from issuetriage.errors import UserError
from issuetriage.models import Decision, Plan
from issuetriage.store.applier import StoreApplier
from issuetriage.store.sqlite import BOT_AUTHOR, Store

ASKED = datetime(2026, 3, 1, tzinfo=UTC)
REPO = "pytorch/pytorch"


@pytest.fixture
def stale_policy(policy):
    return tuned(policy, stale={"enabled": True, "remind_after_days": 10, "close_after_days": 5})


def waiting_issue(policy, *replies):
    asked = {"author": BOT_AUTHOR, "body": policy.render_template("request_more_info"), "created_at": ASKED,
             "by_bot": True}
    return make_issue(number=9, author="reporter", comments=[asked, *replies])


@pytest.fixture
def store(stale_policy):
    with Store(":memory:") as db:
        db.put_issue(waiting_issue(stale_policy))
        yield db


def days(n):
    return ASKED + timedelta(days=n)


def follow_up(store, policy, now, apply=False):
    """The follow-ups on the local store, as `issuetriage stale --store` runs them."""
    return follow_up_with(StoreApplier(store, at=now), store, policy, now, apply)


def test_reminder_then_close_on_the_profile_schedule(store, stale_policy):
    assert follow_up(store, stale_policy, days(9), apply=True) == []
    [reminder] = follow_up(store, stale_policy, days(10), apply=True)
    assert reminder.plan.templates == ("stale_reminder",) and not reminder.plan.close
    assert follow_up(store, stale_policy, days(10), apply=True) == []  # idempotent
    assert follow_up(store, stale_policy, days(14), apply=True) == []
    [close] = follow_up(store, stale_policy, days(15), apply=True)
    assert close.plan.decision is Decision.CLOSE_STALE and close.plan.close
    assert close.plan.templates == ("stale_close",)
    issue = store.get_issue(REPO, 9)
    assert issue.state == "closed"
    assert follow_up(store, stale_policy, days(60), apply=True) == []


def test_reporter_reply_stops_the_clock(stale_policy):
    with Store(":memory:") as db:
        db.put_issue(waiting_issue(stale_policy, {"author": "reporter", "body": "here it is", "created_at": days(3)}))
        assert follow_up(db, stale_policy, days(100), apply=True) == []


def test_someone_else_replying_does_not_stop_it(stale_policy):
    with Store(":memory:") as db:
        db.put_issue(waiting_issue(stale_policy, {"author": "bystander", "body": "+1", "created_at": days(3)}))
        assert len(follow_up(db, stale_policy, days(10))) == 1


def test_dry_run_records_but_posts_nothing(store, stale_policy):
    follow_up(store, stale_policy, days(10))
    assert len(store.get_issue(REPO, 9).comments) == 1 and store.count("audit") == 1


def test_off_unless_the_profile_enables_it(store, policy):
    with pytest.raises(UserError, match="stale follow-up is off"):
        follow_up(store, policy, days(30))


def test_guard_refuses_a_stale_close_without_the_reminder(stale_policy):
    issue = waiting_issue(stale_policy)
    plan = Plan(repo=REPO, number=9, decision=Decision.CLOSE_STALE, close=True, templates=("stale_close",))
    result = guard(plan, issue, stale_policy)
    assert not result.plan.close
    assert any("stale close" in r.reason for r in result.rejections)
