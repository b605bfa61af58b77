"""Is an issue worth re-running? Closed, duplicate, not a bug, or hardware we lack stop early."""

from __future__ import annotations

import re2

from issuetriage.models import Issue
from issuetriage.scrub.model import Stop

# (label a human would add, label names that already mean it, title/body pattern)
_NOT_A_BUG: tuple[tuple[str, frozenset[str], re2._Regexp], ...] = (
    ("tracker", frozenset({"tracker", "module: tracker"}),
     re2.compile(r"(?im)^\s*\[?(tracker|tracking issue|umbrella)\b|\btracking issue\b")),
    ("feature", frozenset({"feature", "enhancement", "function request"}),
     re2.compile(r"(?im)^\s*\[?(feature( request)?|rfc|proposal)\]?\b|^#+\s*🚀 the feature")),
    ("question", frozenset({"question", "triaged: question"}),
     re2.compile(r"(?im)^\s*\[?(question|help)\]?[:\]]")),
)
_DUPLICATE = re2.compile(r"(?i)\bduplicate (of|to) #\d+")
_GPU = re2.compile(
    r"\b(A100|H100|H200|B200|V100|A10G?|L4|L40S?|T4|RTX ?\d{4}|GTX ?\d{3,4}|MI\d{3}X?|"
    r"TPU|Gaudi|HPU|Jetson)\b")
_MULTI_NODE = re2.compile(r"(?i)\bmulti[- ]?node\b|--nnodes[ =]([2-9]|\d\d)|\bnnodes\s*=\s*([2-9]|\d\d)")
_NEEDS_GPU = re2.compile(r"\.cuda\(|device\s*=\s*['\"]cuda|['\"]cuda(:\d)?['\"]|\.to\(['\"](cuda|mps|xpu)")


def screen(issue: Issue, script: str | None = None, have_gpu: bool = False) -> Stop | None:
    """Why scrub should not run this issue (with the label a human would add), or None."""
    if issue.is_pull_request:
        return Stop("this is a pull request, not an issue")
    if issue.state != "open":
        return Stop(f"the issue is {issue.state}")
    labels = {name.lower() for name in issue.labels}
    if "duplicate" in labels or _DUPLICATE.search(issue.body):
        return Stop("the issue is marked as a duplicate", "duplicate")
    for label, names, pattern in _NOT_A_BUG:
        if labels & names or pattern.search(issue.title):
            return Stop(f"not a bug report: reads as a {label}", label)
    return _hardware(issue, script, have_gpu)


def _hardware(issue: Issue, script: str | None, have_gpu: bool) -> Stop | None:
    """Stop when the bug needs a multi-node cluster, or a named GPU that the script really uses."""
    text = f"{issue.title}\n{issue.body}"
    if _MULTI_NODE.search(text) or (script and _MULTI_NODE.search(script)):
        return Stop("needs a multi-node cluster we do not have", "oncall: distributed")
    gpu = _GPU.search(text)
    if gpu and not have_gpu and (script is None or _NEEDS_GPU.search(script)):
        return Stop(f"needs hardware we do not have ({gpu.group(0)})", "module: cuda")
    return None
