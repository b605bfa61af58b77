"""Red team, repo-local profiles (#26): patterns written to backtrack, and TOML written to recurse.

A repository's own `.github/issuetriage/` is loaded as hostile data (`repo_profile.load_texts`).
Each attack is a pattern, with text made for it, in a profile that otherwise passes: it is either
refused with a one-line reason, or accepted and the issue plans; `hang_catcher` stops a plan that
runs past a few CPU-seconds (each plans in milliseconds now). Nothing is timed. The old vetting
looked for dangerous shapes; the ones marked `passed the old vetting` got through it and hung.
"""

from __future__ import annotations

import json

import pytest
from test_hostile_text import hang_catcher, run_then

from issuetriage.engine.pipeline import triage
from issuetriage.errors import ConfigError
from issuetriage.github.repo_profile import load_texts
from issuetriage.models import Issue

REPO = "attacker/repo"
TEMPLATES = "".join(f'[templates.{name}]\naction = "comment"\nuse_when = "x"\ncomment = "x"\n'
                    for name in ("redirect_to_forum", "request_more_info", "request_self_contained_reproduction"))


def profile(*patterns: str, rules: str = "") -> dict[str, str]:
    """The smallest profile that loads, with `patterns` as a route the offline judge reads."""
    listed = ", ".join(json.dumps(p) for p in patterns)
    return {"profile.toml": f'name = "attack"\nrepo = "{REPO}"\n',
            "labels.toml": '[[label]]\nname = "area: x"\nkeywords = ["x"]\n',
            "forbidden.toml": "", "redundancy.toml": "", "queues.toml": "", "templates.toml": TEMPLATES,
            "rules.toml": f"{rules}[escalate.attack]\npatterns = [{listed}]\n"}


# (pattern, text made for it); each hung the old matcher.
ATTACKS = {
    "ligature pair under a repetition (passed the old vetting)": ("(?:\ufb05a|\ufb06a)+$", "\ufb06a" * 30 + "!"),
    "Greek pair that folds alike (passed the old vetting)": ("(?:\u0390a|\u1fd3a)+$", "\u0390a" * 30 + "!"),
    "Greek upsilon pair that folds alike (passed the old vetting)": ("(?:\u03b0a|\u1fe3a)+$", "\u03b0a" * 30 + "!"),
    "bounded repetition nested in bounded repetition (passed the old vetting)": ("(?:a{1,30}){1,30}b",
                                                                                   "a" * 600 + "!"),
    "optional parts counted out (passed the old vetting)": ("(?:a?){30}a{30}", "a" * 30),
    "three windows in a row (passed the old vetting)": (".{0,100}.{0,100}.{0,100}x", run_then("a", "")),
    "nested repetition": ("(a+)+$", "a" * 40 + "!"),
    "alternatives that fold alike (Kelvin sign)": ("(?:\u212aa|ka)+$", "ka" * 30 + "!"),
    "alternatives that overlap": ("(?:a|b|ab)+$", "ab" * 30 + "!"),
    "an optional separator under a repetition": (r"(?:[a-z]+\s?)+$", "aaaa " * 12 + "!"),
    "a pattern too large to run cheaply": ("(?:x{100}){100}y", run_then("x", "")),
}


def plan_under(texts: dict[str, str], body: str):
    """Load the profile as a repository's own and plan one issue with `body` under it; None when
    the profile is refused (with a one-line reason that names the repository)."""
    try:
        policy = load_texts(REPO, texts)
    except ConfigError as exc:
        assert "\n" not in str(exc) and str(exc).startswith(REPO)
        return None
    with hang_catcher():
        return triage(Issue(repo=REPO, number=7, title="Something fails", body=body), policy)


@pytest.mark.parametrize("name", ATTACKS)
def test_a_catastrophic_pattern_is_refused_or_runs_in_linear_time(name):
    pattern, text = ATTACKS[name]
    plan_under(profile(pattern), text)


def test_window_patterns_past_the_profiles_budget_are_refused():
    """Each compiles; together they would cost too much on every issue."""
    assert plan_under(profile(*[f"(?s)w{i}.{{0,900}}x" for i in range(4)]), run_then("w0 ", "")) is None


@pytest.mark.parametrize("depth", [1_000, 100_000])
def test_a_deeply_nested_toml_file_is_a_one_line_error(depth):
    texts = profile("x", rules="x = " + "[" * depth + "]" * depth + "\n")
    with pytest.raises(ConfigError, match="nested too deeply|not valid TOML") as info:
        load_texts(REPO, texts)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("pattern", [r"(x)\1", r"(?=x)x", r"(?!x)y", r"(?<=x)y", r"(?<!x)y"])
def test_back_references_and_look_arounds_are_refused_with_a_reason(pattern):
    with pytest.raises(ConfigError, match="does not compile on RE2") as info:
        load_texts(REPO, profile(pattern))
    assert "\n" not in str(info.value)


def test_every_pattern_a_profile_runs_is_compiled_by_re2(policy):
    from issuetriage.evidence.matcher import matchers

    compiled = matchers(policy).catalog._patterns.compiled + matchers(policy).hub
    assert compiled and {type(rx).__module__ for rx in compiled} == {"re2"}
