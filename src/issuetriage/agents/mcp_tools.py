"""MCP tool calls (`mcp__SERVER__TOOL`): the issue writes the guard checks, the reads that pass.

Claude Code names a plugin's server `plugin_PLUGIN_SERVER`, and a project may run GitHub's server
under any name, so a tool is judged by its own name whatever the server: `update_issue`,
`issue_write` and `add_issue_comment` from any server are read as the issue writes they are and
checked; the read-only tools of GitHub's server (`plugin_*_github` included) and of ours pass;
every other tool, of any server, is refused, as the hook cannot tell what it does.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from issuetriage.agents.gh_commands import Mutation, Refused

UPDATE_TOOLS = frozenset({"update_issue", "issue_write"})
COMMENT_TOOLS = frozenset({"add_issue_comment"})
UPDATE_FIELDS = {"owner", "repo", "issue_number", "method", "labels", "state", "state_reason", "body"}
# github/github-mcp-server: every tool its snapshots have marked readOnlyHint (any version so far)
GITHUB_READS = frozenset("""
actions_get actions_list download_workflow_run_artifact get_code_quality_finding get_code_scanning_alert
get_commit get_dependabot_alert get_discussion get_discussion_comments get_file_blame get_file_contents
get_gist get_global_security_advisory get_issue get_issue_comments get_job_logs get_label
get_latest_release get_me get_notification_details get_project get_project_field get_project_item
get_pull_request get_pull_request_comments get_pull_request_diff get_pull_request_files
get_pull_request_review_comments get_pull_request_reviews get_pull_request_status get_release_by_tag
get_repository_tree get_secret_scanning_alert get_tag get_team_members get_teams get_workflow_run
get_workflow_run_logs get_workflow_run_usage issue_dependency_read issue_read list_branches
list_code_scanning_alerts list_commits list_dependabot_alerts list_discussion_categories
list_discussions list_gists list_global_security_advisories list_issue_fields list_issue_types
list_issues list_label list_notifications list_org_repository_security_advisories list_project_fields
list_project_items list_projects list_pull_requests list_releases list_repository_collaborators
list_repository_security_advisories list_secret_scanning_alerts list_starred_repositories
list_sub_issues list_tags list_workflow_jobs list_workflow_run_artifacts list_workflow_runs
list_workflows projects_get projects_list pull_request_read search_code search_commits search_issues
search_orgs search_pull_requests search_repositories search_users ui_get""".split())
# `issuetriage mcp`: reads, and submit_plan, which runs the one guard itself (agents/session.py)
OUR_TOOLS = frozenset({"get_issue", "get_comments", "search_similar", "read_policy", "submit_plan"})
KNOWN_SERVERS = {"github": GITHUB_READS, "issuetriage": OUR_TOOLS}


def split(tool_name: str) -> tuple[str, str] | None:
    """(server, tool) of an MCP tool name, None for Claude Code's own tools (Bash, Read...)."""
    if not tool_name.startswith("mcp__"):
        return None
    server, sep, tool = tool_name[len("mcp__"):].rpartition("__")
    if not sep or not server or not tool:
        raise Refused(f"{tool_name}: not an MCP tool name the hook can read")
    return server, tool


def _known(server: str) -> frozenset[str]:
    """The tools that pass for a server: `github`, `issuetriage`, or a plugin's copy of either."""
    base = server.rpartition("_")[2] if server.startswith("plugin_") else server
    return KNOWN_SERVERS.get(base, frozenset())


def is_comment(tool_name: str) -> bool:
    named = split(tool_name)
    return named is not None and named[1] in COMMENT_TOOLS


def parse(tool_name: str, data: Any) -> Mutation | None:
    """The issue write an MCP call makes; None for a known read; Refused for anything else."""
    named = split(tool_name)
    assert named is not None
    server, tool = named
    if tool not in UPDATE_TOOLS | COMMENT_TOOLS:
        if tool in _known(server):
            return None
        raise Refused(f"{tool_name}: not a tool the hook can check (only known reads and the issue "
                      f"writes update_issue, issue_write and add_issue_comment pass)")
    if not isinstance(data, dict):
        raise Refused("tool_input must be a JSON object")
    if tool == "issue_write" and data.get("method") != "update":
        raise Refused("issue_write may only update the triage target")
    owner, repo, number = data.get("owner"), data.get("repo"), data.get("issue_number")
    digits = str(number)
    if not isinstance(owner, str) or not isinstance(repo, str) or not (digits.isascii() and digits.isdigit()):
        raise Refused("tool_input needs owner, repo and a numeric issue_number")
    labels = data.get("labels") or []
    if not isinstance(labels, list) or not all(isinstance(label, str) for label in labels):
        raise Refused("labels must be a list of label names")
    base = Mutation(f"{owner}/{repo}", int(digits))
    if tool in COMMENT_TOOLS:
        return replace(base, comment=str(data.get("body", "")))
    if "title" in data or data.get("state") == "open":
        raise Refused("the bot never changes titles or reopens issues")
    unchecked = sorted(set(data) - UPDATE_FIELDS)
    if unchecked:  # assignees, milestone, type...: passed through unguarded otherwise
        raise Refused(f"the bot only adds labels, comments, closes and transfers (not {', '.join(unchecked)})")
    return replace(base, labels=tuple(labels), labels_set="labels" in data,
                   close=data.get("state") == "closed", state_reason=data.get("state_reason"),
                   body=data.get("body"))


def rewrite(tool_name: str, tool_input: dict[str, Any], m: Mutation, existing: tuple[str, ...]) -> dict[str, Any]:
    """The MCP input that makes exactly the guarded mutation `m` (a label set keeps `existing`)."""
    out = {k: v for k, v in tool_input.items() if k not in {"labels", "state", "state_reason", "body"}}
    if is_comment(tool_name):
        out["body"] = m.comment
        return out
    if tool_input.get("labels") is not None or m.labels:  # the tool replaces the set
        out["labels"] = sorted(set(existing) | set(m.labels))
    if m.close:
        out["state"], out["state_reason"] = "closed", m.state_reason
    if m.body is not None:
        out["body"] = m.body
    return out
