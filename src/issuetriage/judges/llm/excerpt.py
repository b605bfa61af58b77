"""Cut issue text to what a reader needs: prose, code and the traceback stay; environment dumps
shrink to the lines that matter; anything still too long loses its middle, never its end."""

from __future__ import annotations

import re

from issuetriage.models import Comment, Issue
from issuetriage.text import fences

# Issue text is hostile: each pattern here is one-way (issuetriage.text), and fenced blocks come
# from a line scan (`fences`), not from a pattern that rescans every unclosed fence.
_ENV_START = re.compile(r"collecting environment information|^pytorch version\s*:", re.I | re.M)
_ENV_HEADING = re.compile(r"^#{1,4}\s*(versions?|environment|system info\w*)\s*$", re.I | re.M)
_NEXT_HEADING = re.compile(r"^#{1,4}\s+\S", re.M)
_ENV_KEEP = re.compile(
    r"^\s*(pytorch version|is debug build|cuda used to build|rocm used to build|os\s*:|"
    r"python version|python platform|is cuda available|cuda runtime version|gpu models?|"
    r"gpu \d|nvidia driver version|cudnn version|hip runtime|\[(pip3?|conda)\]\s*(torch|numpy|triton)\b|"
    r"(torch|numpy|triton)\s*[=:]=?\s*\d)",
    re.I,
)
_TRACEBACK = "Traceback (most recent call last)"


def compact_environment(block: str) -> str:
    """Keep the handful of environment lines triage reads (versions, OS, GPU), drop the rest."""
    lines = block.splitlines()
    kept = [line.rstrip() for line in lines if _ENV_KEEP.match(line)]
    dropped = len([line for line in lines if line.strip()]) - len(kept)
    note = [f"[{dropped} environment lines omitted]"] if dropped > 0 else []
    return "\n".join(kept + note)


def _cut_lines(block: str, head: int, tail: int) -> str:
    lines = block.splitlines()
    if len(lines) <= head + tail + 1:
        return block
    cut = len(lines) - head - tail
    return "\n".join([*lines[:head], f"[... {cut} lines omitted ...]", *lines[-tail:]])


def compact_code(block: str) -> str:
    """Environment dumps shrink; tracebacks keep their start and their end (the exception)."""
    if _ENV_START.search(block):
        return compact_environment(block)
    if _TRACEBACK in block:
        return _cut_lines(block, head=4, tail=16)
    return _cut_lines(block, head=50, tail=10)


def _compact_env_sections(prose: str) -> str:
    """An unfenced `## Versions` section is an environment dump too."""
    out: list[str] = []
    pos = 0
    for heading in _ENV_HEADING.finditer(prose):
        if heading.start() < pos:
            continue
        nxt = _NEXT_HEADING.search(prose, heading.end())
        end = nxt.start() if nxt else len(prose)
        out += [prose[pos:heading.end()], "\n", compact_environment(prose[heading.end():end]), "\n"]
        pos = end
    out.append(prose[pos:])
    return "".join(out)


def compact(text: str) -> str:
    """Shrink environment dumps and very long code blocks; everything else passes unchanged."""
    out: list[str] = []
    pos = 0
    for block in fences(text):
        out.append(_compact_env_sections(text[pos:block.start]))
        out.append(f"{block.marker}{block.info}\n{compact_code(block.content).rstrip()}\n{block.marker}")
        pos = block.end
    out.append(_compact_env_sections(text[pos:]))
    return re.sub(r"\n{3,}", "\n\n", "".join(out)).strip()


def clip(text: str, limit: int) -> str:
    """At most `limit` characters: keep the head and the tail (where the error usually is)."""
    if len(text) <= limit:
        return text
    marker = f"\n[... {len(text) - limit} characters omitted ...]\n"
    keep = max(limit - len(marker), 0)
    head = keep * 2 // 3
    return text[:head] + marker + text[len(text) - (keep - head):]


def fence_safe(text: str) -> str:
    """Keep issue text from opening or closing the request's own `<issue>`, `<voice>` and
    `<history>` fences."""
    return re.sub(r"<(/?)(issue|voice|history)\b", r"<\1\2_", text, flags=re.I)


def by_reporter(issue: Issue, comment: Comment) -> bool:
    """A comment is the reporter's own only when both names are known and equal."""
    return bool(comment.author) and comment.author == issue.author


def bystander_comments(issue: Issue, max_comments: int = 3) -> int:
    """How many of the comments a request shows were written by someone else than the reporter."""
    return sum(not by_reporter(issue, c) for c in issue.comments[:max_comments])


def issue_excerpt(issue: Issue, body_limit: int = 6000, comment_limit: int = 1200,
                  max_comments: int = 3, voices: bool = False) -> str:
    """Title, compacted body and the first comments, each within its budget. With `voices`,
    the reporter's text and each bystander's comment are fenced as such."""
    body = clip(compact(issue.body), body_limit) or "(empty)"
    if voices:
        body = fence_safe(body)
        parts = ['<voice="reporter">', f"Title: {fence_safe(issue.title.strip())}",
                 f"Author association: {issue.author_association}", "Body:", body, "</voice>"]
    else:
        parts = [f"Title: {issue.title.strip()}",
                 f"Author association: {issue.author_association}", "Body:", body]
    for i, comment in enumerate(issue.comments[:max_comments], 1):
        mine = by_reporter(issue, comment)
        text = clip(compact(comment.body), comment_limit)
        if voices:
            text = fence_safe(text)
            parts += [f'<voice="{"reporter" if mine else "bystander"}" comment="{i}">', text,
                      "</voice>"]
        else:
            who = "the author" if mine else "another user"
            parts += [f"Comment {i} (by {who}):", text]
    if len(issue.comments) > max_comments:
        parts.append(f"[{len(issue.comments) - max_comments} more comments omitted]")
    return "\n".join(parts)
