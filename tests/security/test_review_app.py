"""Red team, review app surface (`serve`'s pages over the store): no page or answer may be framed
by another site (clickjacking Approve/Reject), and what held before keeps holding: hostile issue
text stays text, every POST needs the CSRF token, a foreign Host is refused.

The webhook receiver's own answers and the review app mounted beside it are checked against the
running command in test_webhook.py."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from builders import make_issue
from issuetriage.models import Decision, Plan
from issuetriage.store.sqlite import Store
from issuetriage.web.app import create_app

REPO = "pytorch/pytorch"
HOSTILE = '<script>document.title="owned"</script><img src=x onerror=alert(1)>'
TOKEN = "red-team-csrf-token"
FRAMING = {"x-frame-options": "DENY", "content-security-policy": "frame-ancestors 'none'"}


@pytest.fixture
def app(tmp_path, policy):
    """The review app over a store holding one shadow plan on hostile text; (client, audit id, store)."""
    path = tmp_path / "t.db"
    with Store(path) as db:
        db.put_issue(make_issue(number=1, title=f"crash {HOSTILE}", body=HOSTILE))
        plan = Plan(repo=REPO, number=1, decision=Decision.LABEL, labels_added=("module: nn", "bot-triaged"))
        audit_id = db.record(plan, judge="heuristic", extra={"shadow": True})
    client = TestClient(create_app(path, policy, reviewer="red team", token=TOKEN), base_url="http://127.0.0.1",
                        raise_server_exceptions=False, follow_redirects=False)
    return client, audit_id, path


def framed_ok(answer) -> bool:
    return all(answer.headers.get(name) == value for name, value in FRAMING.items())


# --- clickjacking: the framing headers on every answer ------------------------------------------

ROUTES = {
    "queue": ("GET", "/", None, 200),
    "plan page": ("GET", "/plan/{id}", None, 200),
    "report": ("GET", "/report", None, 200),
    "approve without the token": ("POST", "/plan/{id}/approve", {}, 403),
    "reject with a wrong token": ("POST", "/plan/{id}/reject", {"csrf": "wrong"}, 403),
    "a plan that does not exist": ("GET", "/plan/999999", None, 400),
    "no such page": ("GET", "/no/such/page", None, 404),
    "a method the route does not take": ("DELETE", "/plan/{id}", None, 405),
}


@pytest.mark.parametrize("method, path, form, status", ROUTES.values(), ids=ROUTES.keys())
def test_every_answer_forbids_framing(app, method, path, form, status):
    client, audit_id, _ = app
    answer = client.request(method, path.format(id=audit_id), data=form)
    assert answer.status_code == status
    assert framed_ok(answer), dict(answer.headers)


def test_a_refused_host_forbids_framing(app):
    client, _, _ = app
    answer = client.get("/", headers={"host": "evil.example"})
    assert answer.status_code == 400 and framed_ok(answer)


def test_a_server_error_forbids_framing(app, monkeypatch):
    from issuetriage.live import review

    client, _, _ = app
    monkeypatch.setattr(review, "queue", lambda *a, **k: 1 / 0)
    answer = client.get("/")
    assert answer.status_code == 500 and framed_ok(answer)


# --- what held before ---------------------------------------------------------------------------

@pytest.mark.parametrize("page", ["/", "/plan/{id}", "/report"])
def test_hostile_issue_text_stays_text(app, page):
    client, audit_id, _ = app
    text = client.get(page.format(id=audit_id)).text
    assert HOSTILE not in text and "<script>document.title" not in text


@pytest.mark.parametrize("action, form", [
    ("approve", {}), ("approve", {"csrf": "wrong"}), ("approve", {"csrf": ""}),
    ("reject", {}), ("reject", {"csrf": TOKEN.upper()}),
])
def test_a_post_without_the_right_csrf_token_writes_nothing(app, action, form):
    client, audit_id, path = app
    assert client.post(f"/plan/{audit_id}/{action}", data=form).status_code == 403
    with Store(path) as db:
        assert db.get_issue(REPO, 1).labels == ()
        assert db.db.execute("SELECT COUNT(*) FROM reviews").fetchone()[0] == 0


def test_a_token_in_the_query_string_is_not_a_token(app):
    client, audit_id, _ = app
    assert client.post(f"/plan/{audit_id}/approve?csrf={TOKEN}").status_code == 403


@pytest.mark.parametrize("host", ["evil.example", "127.0.0.1.evil.example", "localhost.evil.example", "10.0.0.1"])
def test_a_foreign_host_is_refused(app, host):
    client, _, _ = app
    assert client.get("/", headers={"host": host}).status_code == 400


@pytest.mark.parametrize("host", ["127.0.0.1:8000", "localhost:8000", "[::1]:8000"])
def test_loopback_hosts_are_served(app, host):
    client, _, _ = app
    assert client.get("/", headers={"host": host}).status_code == 200
