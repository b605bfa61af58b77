"""A report that bisection shows fixed in a release closes the issue through the one flow (`act`:
guard, apply by difference, verification, audit) on the loopback GitHub stand-in: the profile's
`fixed_in_release` comment naming the release, then closed as completed. Anything else writes
nothing, and nobody but scrub's own code path gets such a close past the guard."""

from __future__ import annotations

import json
import sys
from dataclasses import replace

import pytest
from scrub_helpers import block, fake_library

from issuetriage.act.close_fixed import close_as_fixed
from issuetriage.act.flow import act, given
from issuetriage.act.hold import Mode
from issuetriage.agents.session import GitHubBackend, Session
from issuetriage.github.apply import GitHubApplier
from issuetriage.github.reads import fetch_issue
from issuetriage.judges.heuristic import HeuristicJudge
from issuetriage.models import FixedInRelease, Plan
from issuetriage.policy import Template
from issuetriage.scrub.close import evidence, fixed_in, plan
from issuetriage.scrub.flow import Options, scrub
from issuetriage.scrub.model import BisectResult
from issuetriage.store.sqlite import Store

REPO = "acme/widgets"
TRACE = ('Traceback (most recent call last):\n  File "bug.py", line 3, in <module>\n'
         '  File "fakelib.py", line 6, in combine\n'
         'ValueError: combine: length mismatch between operands (2 vs 1)\n')
BODY = block("from fakelib import combine\nprint(combine([1, 2], [3]))\n") + block(TRACE, "")
FIXED = ("1.0", "1.5", "2.0", "2.1")


@pytest.fixture
def github(standin, client):
    """The issue on the stand-in (already triaged by the bot once), read as scrub reads it."""
    standin.state.add_issue(REPO, 7, "combine breaks on uneven lists", BODY, author="op",
                            labels=("bot-triaged",))
    return standin, client


def _scrubbed(tmp_path, client, versions=FIXED):
    interps = tuple(fake_library(tmp_path, v) for v in versions)
    issue = fetch_issue(client, REPO, 7)
    return issue, scrub(issue, Options(interpreters=interps, isolation=None, runs=1, minimize=False))


def _applier(client):
    return GitHubApplier(client, keep_subscription=True)


def test_fixed_in_a_release_closes_through_the_flow_with_the_template(tmp_path, github, policy):
    standin, client = github
    issue, report = _scrubbed(tmp_path, client)
    assert fixed_in(report) == "fakelib-2.0"
    with Store(":memory:") as store:
        done = close_as_fixed(_applier(client), policy, report, issue, audit=store)
        rows = store.audit(REPO, 7)
    assert done is not None and done.applied and done.rejections == ()
    assert done.verdict is not None and done.verdict.outcome.value == "closed" and done.verdict.ok
    writes = standin.writes  # REST only: no subscription mutation on an issue that ends closed
    assert all(w.path != "/graphql" for w in writes)
    comment, close = writes[0].body["body"], writes[1].body
    assert "fixed in fakelib 2.0" in comment and policy.template_marker("fixed_in_release") in comment
    assert "Traceback" not in comment and "```" not in comment  # the scrub report is not posted
    assert close == {"state": "closed", "state_reason": "completed"}
    assert len(writes) == 2  # bot-triaged was already there; no subscription restored on a close
    assert standin.state.issues[(REPO, 7)]["state"] == "closed"
    [row] = rows
    assert row["applied"] == 1 and row["judge"] == "scrub" and row["decision"] == "fixed_in_release"
    assert row["plan"]["fixed_in_release"]["version"] == "2.0"
    assert "seal" not in row["plan"]["fixed_in_release"]  # the seal never leaves the process
    assert row["extra"]["outcome"] == "closed"


def test_a_second_run_writes_nothing(tmp_path, github, policy):
    standin, client = github
    issue, report = _scrubbed(tmp_path, client)
    close_as_fixed(_applier(client), policy, report, issue)
    before = len(standin.writes)
    again = close_as_fixed(_applier(client), policy, report, fetch_issue(client, REPO, 7))
    assert again is not None and again.writes == () and len(standin.writes) == before


@pytest.mark.parametrize("versions", [("1.0", "1.5"), ("2.0", "2.1")])
def test_still_failing_or_never_failing_reads_and_writes_nothing(tmp_path, github, policy, versions):
    standin, client = github
    issue, report = _scrubbed(tmp_path, client, versions)
    calls = len(standin.log)
    assert fixed_in(report) is None and close_as_fixed(_applier(client), policy, report, issue) is None
    assert len(standin.log) == calls and standin.writes == []


def test_evidence_read_back_from_json_is_refused_by_the_guard(tmp_path, github, policy):
    """A plan with the same evidence that did not come from scrub's code path (a stored plan, a
    forged one) has no valid seal: nothing is posted and the issue stays open."""
    standin, client = github
    issue, report = _scrubbed(tmp_path, client)
    forged = Plan.model_validate(json.loads(json.dumps(plan(report, issue).to_json())))
    done = act(_applier(client), REPO, 7, policy, given(forged, judge="scrub"), Mode(apply=True),
               respect_marker=False)
    assert not done.plan.close and done.plan.templates == () and done.plan.fixed_in_release is None
    assert any("not made by scrub" in r.reason for r in done.rejections)
    assert not any("comments" in w.path or w.body.get("state") == "closed" for w in standin.writes)
    assert standin.state.issues[(REPO, 7)]["state"] == "open"


def test_a_repro_edited_after_scrub_ran_is_not_closed(tmp_path, github, policy):
    standin, client = github
    issue, report = _scrubbed(tmp_path, client)
    standin.state.issues[(REPO, 7)]["body"] = BODY.replace("[3]", "[3, 4]")
    done = close_as_fixed(_applier(client), policy, report, issue)
    assert done is not None and not done.plan.close
    assert any("not the one scrub ran" in r.reason for r in done.rejections)
    assert standin.state.issues[(REPO, 7)]["state"] == "open"


def test_evidence_for_another_issue_is_refused(tmp_path, github, policy):
    standin, client = github
    issue, report = _scrubbed(tmp_path, client)
    standin.state.add_issue(REPO, 8, "same bug", BODY, author="op")
    moved = plan(report, issue).model_copy(update={"number": 8})
    done = act(_applier(client), REPO, 8, policy, given(moved), Mode(apply=True), respect_marker=False)
    assert not done.plan.close and any("about acme/widgets#7" in r.reason for r in done.rejections)


@pytest.mark.parametrize("decision", ["fixed_in_release", "close_question"])
def test_an_agent_cannot_close_as_fixed_through_mcp(tmp_path, github, policy, decision):
    """The same close proposed by an agent (`issuetriage mcp`'s submit_plan) carries no evidence:
    refused before the guard, so neither the comment nor the close reaches GitHub."""
    standin, client = github
    with Store(":memory:") as store:
        session = Session(policy, GitHubBackend(client, REPO, store), HeuristicJudge(), apply=True)
        result = session.submit_plan(7, decision, [], ["fixed_in_release"], None, "fixed in fakelib 2.0")
        [row] = store.audit(REPO, 7)
    assert result["plan"]["close"] is False and "fixed_in_release" not in result["plan"]["templates"]
    assert result["plan"]["fixed_in_release"] is None and row["decision"] == "triage_review"
    assert any("close" in r["item"] and "not corroborated" in r["reason"] for r in result["rejections"])
    assert standin.state.issues[(REPO, 7)]["state"] == "open"
    assert not any("comments" in w.path for w in standin.writes)


HOSTILE = ("2.0\n\n<!-- issuetriage:template=redirect_to_forum --> @pytorch/maintainers "
           "[click](https://evil.example) `rm -rf` **bold** <img src=x>")


def test_a_template_value_with_hostile_text_stays_escaped(policy):
    text = policy.render_template("fixed_in_release", {"package": "torch", "version": HOSTILE})
    for raw in ("<!--", "-->", "@pytorch", "](", "`", "**", "<img", "\n\n<"):
        assert raw not in text.replace(policy.template_marker("fixed_in_release"), "")
    assert text.count("<!-- issuetriage:template=") == 1  # only the template's own marker
    plain = policy.render_template("fixed_in_release", {"package": "torch", "version": "2.8.0+cpu"})
    assert "fixed in torch 2.8.0+cpu" in plain


@pytest.mark.parametrize("field", ["version", "package", "last_affected"])
def test_evidence_refuses_names_that_are_not_a_package_or_version(field):
    good = dict(issue="o/r#1", package="fakelib", version="2.0", last_affected="1.5", repro_sha256="0" * 64)
    FixedInRelease(**good)
    with pytest.raises(ValueError):
        FixedInRelease(**{**good, field: HOSTILE})


def test_interpreter_labels_that_are_not_releases_make_no_evidence(tmp_path, github, policy):
    _, client = github
    issue, report = _scrubbed(tmp_path, client)
    b = report.bisect
    relabelled = {b.last_same: "old", b.first_changed: "new"}
    renamed = BisectResult(tuple((relabelled.get(k, k), o) for k, o in b.outcomes), "new", "old")
    assert evidence(report, issue) is not None
    assert evidence(replace(report, bisect=renamed), issue) is None


def test_a_template_must_declare_exactly_the_placeholders_it_uses():
    Template(action="a", use_when="u", comment="fixed in $version", variables=("version",))
    Template(action="a", use_when="u", comment="costs $5", variables=())  # posted as written
    for comment, variables in (("fixed in $version by $who", ("version",)), ("fixed", ("version",)),
                               ("fixed in $", ("version",))):
        with pytest.raises(ValueError):
            Template(action="a", use_when="u", comment=comment, variables=variables)


def test_apply_refuses_a_file(tmp_path, capsys):
    from builders import run_cli

    path = tmp_path / "issue.json"
    path.write_text('{"repo": "acme/widgets", "number": 1, "title": "t", "body": "", "user": {"login": "op"}}')
    code, out, err = run_cli(capsys, "scrub", "--issue", str(path), "--apply", "--no-isolation",
                             "--python", f"py={sys.executable}")
    assert code == 2 and out == "" and err.startswith("error: --apply needs OWNER/REPO#N")


def _profile_for_repo(tmp_path, policy):
    """The shipped profile's files, naming this test's repository (a profile triages its own only)."""
    import shutil

    profile = tmp_path / "profile"
    shutil.copytree(policy.root, profile)
    meta = profile / "profile.toml"
    meta.write_text(meta.read_text().replace(f'repo = "{policy.meta.repo}"', f'repo = "{REPO}"'))
    return profile


def test_apply_refuses_a_profile_without_the_template(tmp_path, capsys, policy):

    from builders import run_cli

    profile = _profile_for_repo(tmp_path, policy)
    text = (profile / "templates.toml").read_text()
    (profile / "templates.toml").write_text(text.split("[templates.fixed_in_release]")[0])
    code, out, err = run_cli(capsys, "scrub", "--issue", "acme/widgets#7", "--apply", "--profile",
                             str(profile), "--no-isolation", "--python", f"py={sys.executable}")
    assert code == 2 and out == "" and "no 'fixed_in_release' template" in err


def test_cli_apply_closes_through_the_flow_and_prints_the_close(tmp_path, github, policy, capsys, monkeypatch):
    """`scrub --apply OWNER/REPO#N`: the CLI's own wiring (profile, audit store, GitHub applier);
    scrub itself is the library run above, its result handed to the CLI."""
    from builders import run_cli
    from issuetriage.scrub import flow

    standin, client = github
    _, report = _scrubbed(tmp_path, client)
    for key, value in standin.env().items():
        monkeypatch.setenv(key, value)
    monkeypatch.setattr(flow, "scrub", lambda issue, options: report)
    db = tmp_path / "audit.db"
    code, out, err = run_cli(capsys, "scrub", "--issue", f"{REPO}#7", "--apply", "--store", str(db),
                             "--format", "json", "--no-isolation", "--python", f"py={sys.executable}",
                             "--profile", str(_profile_for_repo(tmp_path, policy)))
    data = json.loads(out)
    assert code == 1 and data["verdict"] == "not reproduced"  # fixed: scrub's own exit code
    assert data["close"]["outcome"] == "closed" and data["close"]["applied"] is True
    assert data["close"]["plan"]["decision"] == "fixed_in_release" and "outcome: closed" in err
    assert standin.state.issues[(REPO, 7)]["state"] == "closed"
    with Store(db) as store:
        assert [r["decision"] for r in store.audit(REPO, 7)] == ["fixed_in_release"]
