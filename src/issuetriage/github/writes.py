"""Writes, one API call each (transfer: two); only apply.py and labels.py call these.

Each returns what GitHub answered, so the caller can verify the outcome without reading again.

Labels go through the append endpoint, never the replace one, so a human's concurrent label
survives.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from issuetriage.github.client import GitHubClient, split_repo, to_comment
from issuetriage.models import Comment

TRANSFER_IDS = """
query($owner: String!, $name: String!, $number: Int!, $toOwner: String!, $toName: String!) {
  repository(owner: $owner, name: $name) { issue(number: $number) { id } }
  target: repository(owner: $toOwner, name: $toName) { id }
}"""

TRANSFER = """
mutation($issueId: ID!, $repositoryId: ID!) {
  transferIssue(input: {issueId: $issueId, repositoryId: $repositoryId}) {
    issue { number url state labels(first: 100) { nodes { name } } repository { nameWithOwner } }
  }
}"""

SUBSCRIPTION = """
query($owner: String!, $name: String!, $number: Int!) {
  repository(owner: $owner, name: $name) { issue(number: $number) { id viewerSubscription } }
}"""

UPDATE_SUBSCRIPTION = """
mutation($id: ID!, $state: SubscriptionState!) {
  updateSubscription(input: {subscribableId: $id, state: $state}) { subscribable { viewerSubscription } }
}"""


def add_labels(client: GitHubClient, repo: str, number: int, labels: tuple[str, ...]) -> tuple[str, ...]:
    """Append labels; returns the issue's labels after. https://docs.github.com/en/rest/issues/labels#add-labels-to-an-issue"""
    owner, name = split_repo(repo)
    resp = client.call("POST", f"/repos/{repo}/issues/{number}/labels",
                        lambda: client.gh.rest.issues.add_labels(owner, name, number, data={"labels": list(labels)}))
    return tuple(label["name"] for label in resp.json())


def comment(client: GitHubClient, repo: str, number: int, body: str) -> Comment:
    """Post one comment; returns it as GitHub stored it (ours: `by_bot`).
    https://docs.github.com/en/rest/issues/comments#create-an-issue-comment"""
    owner, name = split_repo(repo)
    resp = client.call("POST", f"/repos/{repo}/issues/{number}/comments",
                       lambda: client.gh.rest.issues.create_comment(owner, name, number, body=body))
    return to_comment(resp.json()).model_copy(update={"by_bot": True})


def edit_issue(client: GitHubClient, repo: str, number: int, **fields: Any) -> dict[str, Any]:
    """Edit body or state (`state_reason`: completed, not_planned, duplicate); returns the issue
    JSON after the edit. https://docs.github.com/en/rest/issues/issues#update-an-issue
    """
    owner, name = split_repo(repo)
    resp = client.call("PATCH", f"/repos/{repo}/issues/{number}",
                       lambda: client.gh.rest.issues.update(owner, name, number, data=cast(Any, fields)))
    data: dict[str, Any] = resp.json()
    return data


@dataclass(frozen=True)
class Moved:
    """Where a transferred issue lives now, with its state and labels as the mutation answered."""

    repo: str
    number: int
    state: str
    labels: tuple[str, ...]


def transfer(client: GitHubClient, repo: str, number: int, target: str) -> Moved:
    """Move the issue to `target` (two GraphQL calls); returns where it lives now.

    https://docs.github.com/en/graphql/reference/mutations#transferissue
    """
    owner, name = split_repo(repo)
    to_owner, to_name = split_repo(target)
    ids = client.graphql(TRANSFER_IDS, {"owner": owner, "name": name, "number": number,
                                        "toOwner": to_owner, "toName": to_name})
    moved = client.graphql(TRANSFER, {"issueId": ids["repository"]["issue"]["id"],
                                      "repositoryId": ids["target"]["id"]})
    issue = moved["transferIssue"]["issue"]
    return Moved(issue["repository"]["nameWithOwner"], int(issue["number"]), str(issue["state"]).lower(),
                 tuple(label["name"] for label in (issue.get("labels") or {}).get("nodes", [])))


def subscription(client: GitHubClient, repo: str, number: int) -> tuple[str, str]:
    """The viewer's (node id, SUBSCRIBED | UNSUBSCRIBED | IGNORED) on the issue.

    https://docs.github.com/en/graphql/reference/enums#subscriptionstate
    """
    owner, name = split_repo(repo)
    data = client.graphql(SUBSCRIPTION, {"owner": owner, "name": name, "number": number})
    issue = data["repository"]["issue"]
    return issue["id"], issue["viewerSubscription"]


def set_subscription(client: GitHubClient, node_id: str, state: str) -> None:
    """https://docs.github.com/en/graphql/reference/mutations#updatesubscription"""
    client.graphql(UPDATE_SUBSCRIPTION, {"id": node_id, "state": state})


def create_label(client: GitHubClient, repo: str, label: str, color: str, description: str) -> None:
    """https://docs.github.com/en/rest/issues/labels#create-a-label"""
    owner, name = split_repo(repo)
    client.call("POST", f"/repos/{repo}/labels",
                 lambda: client.gh.rest.issues.create_label(owner, name, name=label, color=color,
                                                           description=description))


def update_label(client: GitHubClient, repo: str, label: str, **fields: str) -> None:
    """https://docs.github.com/en/rest/issues/labels#update-a-label"""
    owner, name = split_repo(repo)
    client.call("PATCH", f"/repos/{repo}/labels/{label}",
                 lambda: client.gh.rest.issues.update_label(owner, name, label, data=cast(Any, fields)))
