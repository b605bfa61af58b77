"""The review app in a real headless Chromium: load the queue, approve, reject, screenshot."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from browser import browser_page, serving, unavailable
from webtest import REPO, queue_store

from issuetriage.store.sqlite import Store
from issuetriage.web.app import create_app

pytestmark = pytest.mark.skipif(unavailable() is not None, reason=f"no browser: {unavailable()}")


def test_load_approve_reject_and_screenshot(tmp_path, policy):
    path = tmp_path / "t.db"
    ids = queue_store(path)
    shots = Path(os.environ.get("ISSUETRIAGE_SCREENS", tmp_path))
    with serving(create_app(path, policy, reviewer="browser")) as url, browser_page() as page:
        page.goto(url + "/")
        assert page.locator("#queue tr[id^=plan-]").count() == 3
        assert page.title() != "owned", "a script in an issue title ran"
        page.screenshot(path=str(shots / "review-queue.png"), full_page=True)

        page.click(f"#plan-{ids['approve']} a")
        assert "module: nn" in page.inner_text("body")
        page.click("#approve")
        assert "applied" in page.inner_text("#message")

        page.goto(f"{url}/plan/{ids['reject']}")
        page.fill("input[name=note]", "not cuda")
        page.click("#reject")
        assert "rejected" in page.inner_text("#message")
        assert page.locator("#queue tr[id^=plan-]").count() == 1

        page.goto(url + "/report")
        assert page.locator("#per-label").count() == 1
        page.screenshot(path=str(shots / "report.png"), full_page=True)
    with Store(path) as db:
        assert set(db.get_issue(REPO, 1).labels) == {"module: nn", "bot-triaged"}
        assert db.get_issue(REPO, 2).labels == ()
        verdicts = sorted(tuple(r) for r in db.db.execute("SELECT verdict, reviewer FROM reviews"))
    assert verdicts == [("approved", "browser"), ("rejected", "browser")]
    assert (shots / "review-queue.png").stat().st_size > 0 and (shots / "report.png").stat().st_size > 0
