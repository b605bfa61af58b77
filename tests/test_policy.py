import shutil
from pathlib import Path

import pytest

from issuetriage.errors import ConfigError
from issuetriage.policy import PROFILES_DIR, load_profile, load_profile_dir


@pytest.fixture
def profile_copy(tmp_path: Path) -> Path:
    dest = tmp_path / "p"
    shutil.copytree(PROFILES_DIR / "pytorch", dest)
    return dest


def test_shipped_profile_loads_with_the_whole_catalog(policy):
    assert len(policy.labels) >= 280
    groups = {policy.group_of(name) for name in policy.labels}
    assert groups == {"area", "queue", "topic", "other"}
    assert {"oncall: jit", "oncall: distributed", "oncall: export", "oncall: quantization",
            "oncall: mobile", "oncall: profiler", "oncall: visualization"} == set(policy.redirect_labels)
    assert policy.queues.pt2.label == "oncall: pt2" and policy.queues.pt2.cpu_label == "oncall: cpu inductor"
    assert {"pytorch/vision", "pytorch/text", "pytorch/audio", "pytorch/rl", "pytorch/executorch"} == set(policy.transfer_repos)


@pytest.mark.parametrize("label", ["ciflow/trunk", "test-config/default", "release notes: nn", "ci-no-td",
                                   "ci: sev", "sev0", "module: deprecated stuff", "merge blocking",
                                   "oncall: releng", "actionable", "needs design", "needs reproduction",
                                   "needs research", "high priority"])
def test_forbidden_labels(policy, label):
    assert policy.forbidden_reason(label)


@pytest.mark.parametrize("label", ["module: nn", "triaged", "oncall: jit", "feature"])
def test_allowed_labels_are_not_forbidden(policy, label):
    assert policy.forbidden_reason(label) is None


@pytest.mark.parametrize("file,text,expected", [
    ("profile.toml", 'name = "x"\nrepo = "o/r"\nbogus = 1\n', "profile.toml: bogus: unknown key"),
    ("profile.toml", 'name = "x"\nrepo = "o/r"\n[release]\nlatest_minor = "two"\n', "profile.toml: release.latest_minor"),
    ("forbidden.toml", 'prefixes = "ci"\n', "forbidden.toml: prefixes"),
    ("labels.toml", '[[label]]\nname = "a"\nwhn = "typo"\n', "labels.toml: label.0.whn: unknown key"),
    ("labels.toml", '[[label]]\nname = "a"\npatterns = ["("]\n', "labels.toml: label.0.patterns"),
    ("redundancy.toml", '[[pair]]\nspecific = "module: nope"\ngeneric = "module: nn"\n', "redundancy.toml: pair.0.specific"),
    ("labels.toml", '[[label]]\nname = "a"\nimplies = ["module: nope"]\n', "labels.toml: a.implies.0: 'module: nope' is not in labels.toml"),
    ("templates.toml", "[templates.x]\naction='a'\nuse_when='b'\ncomment='c'\n", "templates.toml: templates.redirect_to_forum: missing"),
    ("queues.toml", "not toml = = =", "queues.toml: not valid TOML"),
])
def test_bad_profile_errors_name_file_and_key(profile_copy, file, text, expected):
    (profile_copy / file).write_text(text)
    with pytest.raises(ConfigError) as exc:
        load_profile_dir(profile_copy)
    assert expected in str(exc.value)


def test_missing_profile_file_is_named(profile_copy):
    (profile_copy / "rules.toml").unlink()
    with pytest.raises(ConfigError, match="rules.toml: missing profile file"):
        load_profile_dir(profile_copy)


def test_unknown_profile_lists_shipped_ones():
    with pytest.raises(ConfigError, match="unknown profile 'nope'.*pytorch"):
        load_profile("nope")


def test_templates_render_with_marker(policy):
    text = policy.render_template("redirect_to_forum")
    assert text.endswith(policy.template_marker("redirect_to_forum"))


def test_implied_labels_follow_the_catalog_transitively(policy):
    assert policy.implied(["module: flex attention"]) == [
        "oncall: pt2", "module: higher order operators", "module: pt2-dispatcher"]
    assert policy.implied(["module: higher order operators"]) == ["module: pt2-dispatcher"]
    assert policy.implied(["module: higher order operators", "module: pt2-dispatcher"]) == []
    assert policy.implied(["module: nn", "no such label"]) == []


@pytest.mark.parametrize("implied,why", [
    ('["module: vmap"]', "is the label itself"),
    ('["triaged"]', "is the bot's or a type label"),
    ('["feature"]', "is the bot's or a type label"),
    ('["needs reproduction"]', "is forbidden"),
])
def test_a_label_may_not_imply_what_the_bot_never_adds(profile_copy, implied, why):
    labels = profile_copy / "labels.toml"
    text = labels.read_text()
    assert 'implies = ["module: functorch"]' in text
    labels.write_text(text.replace('implies = ["module: functorch"]', f"implies = {implied}"))
    with pytest.raises(ConfigError, match=f"module: vmap.implies.0: .* {why}"):
        load_profile_dir(profile_copy)


def test_implication_cycles_end(profile_copy):
    labels = profile_copy / "labels.toml"
    text = labels.read_text().replace('name = "module: functorch"\n',
                                      'name = "module: functorch"\nimplies = ["module: vmap"]\n')
    labels.write_text(text)
    policy = load_profile_dir(profile_copy)
    assert policy.implied(["module: vmap"]) == ["module: functorch"]
    assert policy.implied(["module: functorch"]) == ["module: vmap"]


def test_the_general_queue_never_adds_an_implied_oncall_label(profile_copy):
    from builders import make_issue, make_judgment
    from issuetriage.engine.tree import propose
    from issuetriage.evidence.signals import extract_signals

    labels = profile_copy / "labels.toml"
    labels.write_text(labels.read_text().replace(
        'implies = ["module: functorch"]', 'implies = ["module: functorch", "oncall: cpu inductor"]'))
    policy = load_profile_dir(profile_copy)
    issue = make_issue()
    plan = propose(issue, extract_signals(issue), make_judgment(labels={"module: vmap": 0.8}), policy)
    assert {"module: vmap", "module: functorch"} <= set(plan.labels_added)
    assert not [label for label in plan.labels_added if label.startswith("oncall:")]


def test_a_profile_file_that_cannot_be_read_is_a_config_error(profile_copy):
    (profile_copy / "rules.toml").unlink()
    (profile_copy / "rules.toml").mkdir()
    with pytest.raises(ConfigError, match="rules.toml: cannot read"):
        load_profile_dir(profile_copy)


def test_a_judge_may_choose_only_templates_for_a_new_issue(policy):
    """The stale follow-up's reminder and close, and templates that evidence fills, are never a
    judge's choice (they would be posted on an issue that is not waiting for anyone)."""
    chosen = set(policy.judge_templates)
    stale = policy.meta.stale
    assert {stale.remind_template, stale.close_template} <= set(policy.templates)
    assert not chosen & {stale.remind_template, stale.close_template}
    assert not any(policy.templates[name].variables for name in chosen)
    assert "request_more_info" in chosen and "redirect_to_forum" in chosen


def _set_type_kind(profile: Path, value: str) -> None:
    """Write `thresholds.type_kind = value` (TOML text) into a copy of the shipped profile."""
    import re

    meta = profile / "profile.toml"
    text, found = re.subn(r"(?m)^type_kind = .*$", f"type_kind = {value}", meta.read_text())
    assert found == 1, "the shipped profile names its type label gate"
    meta.write_text(text)


def test_the_profile_sets_how_sure_of_a_feature_request_a_type_label_needs(policy, profile_copy):
    """`thresholds.type_kind` is data: 0.8 ships (a feature request judged at 0.7 gets no type
    label), and a profile that lowers it gets one on the same judgment."""
    from builders import make_issue, make_judgment
    from issuetriage.engine.tree import propose
    from issuetriage.evidence.signals import extract_signals
    from issuetriage.judges.base import Kind

    issue = make_issue(title="Add an option to frobnicate", body="It would be nice to have this.")
    judgment = make_judgment(Kind.FEATURE, 0.7, {"module: nn": 0.9, "feature": 0.7})
    assert policy.meta.thresholds.type_kind == 0.8
    assert "feature" not in propose(issue, extract_signals(issue), judgment, policy).labels_added
    _set_type_kind(profile_copy, "0.6")
    lower = load_profile_dir(profile_copy)
    assert lower.meta.thresholds.type_kind == 0.6
    assert "feature" in propose(issue, extract_signals(issue), judgment, lower).labels_added


@pytest.mark.parametrize("value,expected", [
    ("1.5", "less than or equal to 1"), ("-0.1", "greater than or equal to 0"),
    ('"0.8"', "valid number"), ("true", "valid number"), ("nan", "less than or equal to 1"),
])
def test_a_bad_type_label_gate_is_a_one_line_profile_error(profile_copy, value, expected):
    _set_type_kind(profile_copy, value)
    with pytest.raises(ConfigError) as exc:
        load_profile_dir(profile_copy)
    message = str(exc.value)
    assert "profile.toml: thresholds.type_kind" in message and expected in message
    assert "\n" not in message
