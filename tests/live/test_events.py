"""`sync` stores label events from the issue events API, and they replay to the issue's labels."""

from __future__ import annotations

import pytest
from ghtest import REPO, seed

from issuetriage.errors import UserError
from issuetriage.github import writes
from issuetriage.github.sync import sync
from issuetriage.live import events as label_events
from issuetriage.store.sqlite import Store


@pytest.fixture
def store():
    with Store(":memory:") as db:
        yield db


def test_sync_stores_who_added_and_removed_which_label(standin, client, store):
    seed(standin, 102, labels=())
    writes.add_labels(client, REPO, 102, ("module: nn",))  # the bot, through the API
    standin.state.human_labels(REPO, 102, ("module: cuda",), "alice")
    standin.state.add_event(REPO, 102, "unlabeled", "bob", "module: nn")
    issue = standin.state.issues[(REPO, 102)]
    issue["labels"] = [l for l in issue["labels"] if l["name"] != "module: nn"]
    report = sync(client, store, REPO)
    assert report.events == 3
    history = label_events.load(store, REPO)[102]
    assert [(e.event, e.label, e.actor) for e in history] == [
        ("labeled", "module: nn", standin.state.viewer), ("labeled", "module: cuda", "alice"),
        ("unlabeled", "module: nn", "bob")]
    assert label_events.labels_at(history) == {"module: cuda"}
    label_events.check_complete(store.get_issue(REPO, 102), history)


def test_events_we_do_not_track_are_skipped_and_malformed_ones_refused():
    assert label_events.from_github(1, {"event": "assigned", "id": 1}) is None
    with pytest.raises(UserError, match="malformed issue event"):
        label_events.from_github(1, {"event": "labeled", "id": "x", "created_at": "soon"})
