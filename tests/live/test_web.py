"""The review app: CSRF on every write, writes only through the guard, hostile text stays text,
loopback only unless asked, and a bad store is refused before serving."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient
from webtest import HOSTILE, REPO, TOKEN, queue_store

from issuetriage.errors import UserError
from issuetriage.store.sqlite import Store
from issuetriage.web.app import check_bind, create_app


@pytest.fixture
def served(tmp_path, policy):
    path = tmp_path / "t.db"
    ids = queue_store(path)
    client = TestClient(create_app(path, policy, reviewer="tester", token=TOKEN), base_url="http://127.0.0.1")
    return client, path, ids


def labels(path, number):
    with Store(path) as db:
        return db.get_issue(REPO, number).labels


def test_queue_lists_shadow_plans_with_issue_text_escaped(served):
    client, _, ids = served
    page = client.get("/")
    assert page.status_code == 200
    assert HOSTILE not in page.text and "&lt;script&gt;" in page.text
    assert all(f'id="plan-{i}"' in page.text for i in ids.values())
    detail = client.get(f"/plan/{ids['approve']}")
    assert HOSTILE not in detail.text and "module: nn" in detail.text


def test_approve_applies_the_plan_and_leaves_the_queue(served):
    client, path, ids = served
    answer = client.post(f"/plan/{ids['approve']}/approve", data={"csrf": TOKEN})
    assert answer.status_code == 200 and "applied" in answer.text
    assert set(labels(path, 1)) == {"module: nn", "bot-triaged"}
    assert f'id="plan-{ids["approve"]}"' not in client.get("/").text
    again = client.post(f"/plan/{ids['approve']}/approve", data={"csrf": TOKEN})
    assert again.status_code == 400 and "not waiting for review" in again.text


def test_reject_writes_nothing_and_is_a_correction(served):
    client, path, ids = served
    client.post(f"/plan/{ids['reject']}/reject", data={"csrf": TOKEN, "note": "wrong module"})
    assert labels(path, 2) == ()
    with Store(path) as db:
        [row] = db.db.execute("SELECT verdict, reviewer, note FROM reviews").fetchall()
    assert tuple(row) == ("rejected", "tester", "wrong module")


def test_an_edit_the_guard_refuses_writes_nothing_and_stays_in_the_queue_with_the_reason(served):
    client, path, ids = served
    before = labels(path, 3)
    edited = "module: cuda, high priority, oncall: jit, not-a-catalog-label, ci: sev"
    answer = client.post(f"/plan/{ids['edit']}/approve", data={"csrf": TOKEN, "labels": edited})
    assert answer.status_code == 200 and "guard refused" in answer.text and "not-a-catalog-label" in answer.text
    assert labels(path, 3) == before
    assert f'id="plan-{ids["edit"]}"' in answer.text  # still waiting, to be edited again
    with Store(path) as db:
        assert db.db.execute("SELECT COUNT(*) FROM reviews").fetchone()[0] == 0
    fixed = client.post(f"/plan/{ids['edit']}/approve", data={"csrf": TOKEN, "labels": "module: cuda"})
    assert "applied" in fixed.text and "module: cuda" in labels(path, 3)


@pytest.mark.parametrize("form", [{}, {"csrf": "wrong"}])
def test_a_post_without_the_csrf_token_is_refused_and_writes_nothing(served, form):
    client, path, ids = served
    answer = client.post(f"/plan/{ids['approve']}/approve", data=form)
    assert answer.status_code == 403
    assert labels(path, 1) == ()
    with Store(path) as db:
        assert db.db.execute("SELECT COUNT(*) FROM reviews").fetchone()[0] == 0


def test_a_foreign_host_header_is_refused(served):
    client, _, _ = served
    assert client.get("/", headers={"host": "evil.example"}).status_code == 400


@pytest.mark.parametrize("host, allowed", [("127.0.0.1", True), ("localhost", True), ("::1", True),
                                           ("0.0.0.0", False), ("192.168.1.5", False), ("example.com", False)])
def test_non_loopback_binds_need_allow_remote(host, allowed):
    if allowed:
        check_bind(host, allow_remote=False)
    else:
        with pytest.raises(UserError, match="not a loopback address"):
            check_bind(host, allow_remote=False)
        check_bind(host, allow_remote=True)


def test_report_page_renders(served):
    client, _, _ = served
    page = client.get("/report")
    assert page.status_code == 200 and "Per-label precision" in page.text


def test_store_of_another_profile_is_refused_at_start(tmp_path, policy):
    from builders import make_issue
    path = tmp_path / "other.db"
    with Store(path) as db:
        db.put_issue(make_issue(repo="someone/else"))
    with pytest.raises(UserError, match="not of pytorch/pytorch"):
        create_app(path, policy)
