"""Red team, hostile issue text (#26): bodies up to GitHub's limit shaped to make matching slow.

Each attack is a body that the old matching read in quadratic (or worse) time, planned through
every place issue text is matched: signals, the shipped profile's patterns, the hook, the LLM
excerpt, the learned features, `profile init` on a repository's label descriptions. Nothing here
is timed: a plan must simply finish, and `hang_catcher` stops one that runs past a few CPU-seconds
(a generous bound: each plans in well under a tenth of that). The counts before and after are in
tests/security/README.md.
"""

from __future__ import annotations

import json
import re
import signal
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from issuetriage.agents.hooks import run
from issuetriage.engine.pipeline import triage
from issuetriage.evidence.signals import extract_signals
from issuetriage.models import Issue

SIZE = 65_536  # GitHub's limit for a body or a comment
GUARD = 5.0  # CPU-seconds


class Hang(BaseException):
    """Raised by the hang catcher; a BaseException, so no `except Exception` turns it into an answer."""


@contextmanager
def hang_catcher(seconds: float = GUARD) -> Iterator[None]:
    """Stop the block after `seconds` of CPU time (SIGPROF: the hook's own deadline uses SIGALRM)."""
    def stop(signum: int, frame: object) -> None:
        raise Hang(f"still running after {seconds} CPU-seconds")

    previous = signal.signal(signal.SIGPROF, stop)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


def run_then(piece: str, tail: str) -> str:
    """`piece` repeated to SIZE characters, ending with `tail`."""
    return (piece * SIZE)[:SIZE - len(tail)] + tail


# What each body attacks: the old pattern that read it in quadratic time.
BODIES = {
    "blank lines (signals' exception lines)": run_then("\n", "x"),
    "unclosed fences (signals' code blocks)": run_then("```a\n", ""),
    "torch then blanks (signals' versions)": "torch" + run_then(" ", "x"),
    "torch: then blanks (signals' versions)": "torch:" + run_then(" ", "x"),
    "blank lines, then a question tag (rules question)": run_then("\n", "x [question] help:"),
    "blank lines, then question words (rules question)": run_then("\n", "x how what why"),
    "blank lines, then feature words (rules feature)": run_then("\n", "x feature rfc request"),
    "blank lines, then add (labels: new operator)": run_then("\n", "x add torch."),
    "a run, then Error glued (rules bug)": run_then("a", "Errora"),
    "a run, then Exception glued (rules bug)": run_then("a", "Exceptiona"),
    "fbgemm on one line (queues quantization)": run_then("fbgemm ", ""),
    "finfo( repeated (rules edge case)": run_then("finfo(", ""),
    "a huggingface link of its own name (rules hub)": "https://huggingface.co/" + run_then("huggingface.co/", ""),
}


@pytest.mark.parametrize("name", BODIES)
def test_a_hostile_body_plans(name, policy):
    issue = Issue(repo="pytorch/pytorch", number=7, title="Something fails", body=BODIES[name])
    with hang_catcher():
        plan = triage(issue, policy)
    assert plan.number == 7


def test_the_hook_answers_on_a_hostile_body(policy):
    """A close the plan does not call for is refused, on the issue as the hook reads it."""
    issue = Issue(repo="pytorch/pytorch", number=7, title="Something fails", body=run_then("\n", "x how what"))
    payload = json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Bash",
                          "tool_input": {"command": "gh issue close 7"}})
    env = {"GITHUB_REPOSITORY": "pytorch/pytorch", "TRIAGE_ISSUE_NUMBER": "7"}
    with hang_catcher():
        reply = run("pre-tool-use", payload, env, policy, read_issue=lambda repo, number: issue)
    assert "Hang" not in reply.stderr  # the hook turns any failure into a refusal: this one is no answer
    allowed = json.loads(reply.stdout)["hookSpecificOutput"].get("updatedInput") if reply.exit_code == 0 else None
    assert reply.exit_code == 2 or (allowed and "close" not in json.dumps(allowed)), reply


def test_the_llm_excerpt_reads_unclosed_fences():
    from issuetriage.judges.llm.excerpt import compact

    with hang_catcher():
        assert compact(BODIES["unclosed fences (signals' code blocks)"]).startswith("```a")


def test_the_learned_features_read_a_hostile_body():
    from issuetriage.judges.learned.features import FeatureConfig, issue_tokens

    issue = Issue(repo="pytorch/pytorch", number=7, title="t", body=run_then("a.", "A_a"))
    with hang_catcher():
        assert issue_tokens(extract_signals(issue), FeatureConfig())


def test_profile_init_reads_a_hostile_label_description():
    from issuetriage.policy.importer import LabelIn
    from issuetriage.policy.init import keywords_for

    with hang_catcher():
        words = keywords_for([LabelIn(name="area/x", description=run_then("a", " b-c"))])
    assert "b c" in words["area/x"]


def test_a_body_over_githubs_limit_is_read_to_the_limit_only(policy):
    """A store or a stand-in could hand over more than GitHub allows: the rest is never read."""
    issue = Issue(repo="pytorch/pytorch", number=7, title="t", body="x " * (2 * SIZE) + "windows cuda")
    with hang_catcher():
        signals = extract_signals(issue)
    assert "windows" not in signals.platforms and "cuda" not in signals.backends


def test_picking_a_reproduction_reads_image_link_openers():
    """Scrub and the guard's close-as-fixed check read every post for its code and screenshots."""
    try:
        from issuetriage.evidence.repro import pick_repro
    except ImportError:  # before #25 it lived in scrub
        from issuetriage.scrub.pick import pick_repro  # type: ignore[no-redef]
    from issuetriage.models import Comment

    body = run_then("![", "")
    issue = Issue(repo="pytorch/pytorch", number=7, title="t", body=body, author="a",
                  comments=tuple(Comment(author="a", body=body) for _ in range(4)))
    with hang_catcher():
        assert "no runnable Python" in pick_repro(issue).reason


# Every module whose own `re` patterns read untrusted text: issue text, comments, history, label
# descriptions. A pattern added to one of them is run here on the shapes that made the old ones slow.
READERS = ["issuetriage.text", "issuetriage.evidence.signals", "issuetriage.judges.llm.excerpt",
           "issuetriage.judges.learned.features", "issuetriage.github.reads", "issuetriage.policy.init"]
SHAPES = [run_then(piece, tail) for piece, tail in [
    ("\n", "x"), (" ", "x"), ("a", "Errora"), ("a.", "!"), ("```a\n", ""), ("#", "\n"), ("torch ", " "),
    ("![", ""), ("A", "a"), ("\n-", "x"), ("1", "."), ("https://a", " "), ("a-", "-")]]


def _own_patterns() -> list[tuple[str, re.Pattern[str]]]:
    import importlib

    found = []
    for name in READERS:
        module = importlib.import_module(name)
        found += [(f"{name}.{attr}", value) for attr, value in vars(module).items() if isinstance(value, re.Pattern)]
    return found


def test_our_own_patterns_over_issue_text_read_hostile_text():
    patterns = _own_patterns()
    assert len(patterns) >= 10
    for name, pattern in patterns:
        for text in SHAPES:
            try:
                with hang_catcher(GUARD / 2):
                    pattern.findall(text)
            except Hang:
                pytest.fail(f"{name} still runs after {GUARD / 2} CPU-seconds on {text[-20:]!r}")
