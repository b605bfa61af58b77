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
