"""Pick the reproduction script from an issue: the newest runnable block by the original poster,
or a strictly shorter self-contained one from a commenter.

Below scrub and the guard: scrub runs the script picked here, and the guard checks that a close as
fixed in a release is about the script the issue shows now."""

from __future__ import annotations

import ast
import builtins
import re
from dataclasses import dataclass

from markdown_it import MarkdownIt

from issuetriage.models import Issue

_PY_INFO = {"", "python", "py", "python3", "py3", "pycon", "ipython"}
_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]+\)|<img\b|\.(png|jpe?g|gif)\b", re.IGNORECASE)
_BUILTINS = frozenset(dir(builtins)) | {"__name__", "__file__"}
_md = MarkdownIt("commonmark")


@dataclass(frozen=True)
class ReproSource:
    """Which code block we took, whose it is and why we chose it."""

    code: str
    author: str
    where: str  # "body" or "comment N"
    reason: str


@dataclass(frozen=True)
class Stop:
    """Why scrub stopped before running anything, and the label a human would add."""

    reason: str
    label: str | None = None


def code_blocks(markdown: str) -> list[tuple[str, str]]:
    """Every fenced or indented code block as (info string, code)."""
    return [
        (tok.info.strip().split(" ")[0].lower(), tok.content)
        for tok in _md.parse(markdown or "")
        if tok.type in ("fence", "code_block")
    ]


def blocks_after_prose(markdown: str) -> list[tuple[str, str]]:
    """Code blocks that are not programs, as (the prose just before, text): "Expected:" / "Got:"."""
    found, lead = [], ""
    for tok in _md.parse(markdown or ""):
        if tok.type == "inline":
            lead = tok.content
        elif tok.type in ("fence", "code_block"):
            program = runnable(tok.info.strip().split(" ")[0].lower(), tok.content)
            if program is None or _count(program) < 2:
                found.append((lead, tok.content))
            lead = ""
    return found


def _strip_prompts(code: str) -> str:
    """Turn a `>>>` console session into plain code; leave other code alone."""
    lines = code.splitlines()
    if not any(line.startswith(">>> ") for line in lines):
        return code
    kept = [line[4:] for line in lines if line.startswith((">>> ", "... "))]
    return "\n".join(kept) + "\n"


def runnable(info: str, code: str) -> str | None:
    """The code if it is a Python program worth running, else None (logs, tracebacks, shell)."""
    if info not in _PY_INFO:
        return None
    code = _strip_prompts(code)
    if code.lstrip().startswith("Traceback (most recent call last)"):
        return None
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    has_action = any(not isinstance(s, (ast.Import, ast.ImportFrom, ast.Expr, ast.AnnAssign)) or
                     isinstance(getattr(s, "value", None), ast.Call) for s in tree.body)  # `got: [1]` is output
    return code if tree.body and has_action else None


def free_names(code: str) -> set[str]:
    """Names read by the code but never bound or imported in it (builtins excluded)."""
    tree = ast.parse(code)
    bound: set[str] = set()
    read: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return read - bound - _BUILTINS


def _count(code: str) -> int:
    return sum(1 for line in code.splitlines() if line.strip())


def pick_repro(issue: Issue) -> ReproSource | Stop:
    """Choose the script to run and say why, or stop when there is none."""
    posts = [("body", issue.author, issue.body)]
    posts += [(f"comment {i + 1}", c.author, c.body) for i, c in enumerate(issue.comments)]
    op_blocks: list[tuple[str, str]] = []
    other_blocks: list[tuple[str, str, str]] = []
    for where, author, text in posts:
        for info, raw in code_blocks(text):
            code = runnable(info, raw)
            if code is None:
                continue
            if author == issue.author or where == "body":
                op_blocks.append((where, code))
            else:
                other_blocks.append((where, author, code))
    if not op_blocks and not other_blocks:
        texts = " ".join(text for _, _, text in posts)
        if _IMAGE.search(texts):
            return Stop("the code is only in screenshots; ask for it as text", "needs reproduction")
        return Stop("no runnable Python code block in the issue or its comments", "needs reproduction")
    best = None
    if op_blocks:
        where, code = op_blocks[-1]
        best = ReproSource(code, issue.author, where, "newest runnable Python block by the original poster")
    for where, author, code in reversed(other_blocks):
        if free_names(code):
            continue
        if best is None or (_count(code) < _count(best.code)):
            why = ("strictly shorter self-contained block than the original poster's"
                   if best else "only self-contained runnable block, posted by a commenter")
            best = ReproSource(code, author, where, why)
            break
    if best is None:
        return Stop("only a commenter posted code and it is not self-contained", "needs reproduction")
    return best
