"""The README's onboarding path, end to end, for made-up repositories on the GitHub stand-in:
`issuetriage init OWNER/REPO` in the checkout, then shadow mode: a signed webhook, the plan held
for review on the review page, the report; and bad input, one line each with nothing written."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from service_helpers import deliver, drain, payload
from standin import StandIn
from starlette.testclient import TestClient

# Two label schemes: words each label's description never uses, so only the history can route.
SCHEMES = {
    "acme/widgets": {
        "labels": [("area/parser", "Parsing of configuration files"), ("area/cli", "Flags and subcommands"),
                   ("area/network", "HTTP clients and proxies"), ("team/packaging", "Wheels and installers"),
                   ("kind/bug", "Something is not working"), ("needs triage", "Nobody has looked yet"),
                   ("good first issue", "Good for newcomers")],
        "words": {"area/parser": ["anchor", "indentation", "scalar", "multiline", "quoting", "frontmatter"],
                  "area/cli": ["flag", "subcommand", "argv", "verbose", "alias", "pager"],
                  "area/network": ["socket", "handshake", "retries", "keepalive", "dns", "redirects"],
                  "team/packaging": ["manylinux", "conda", "arm64", "homebrew", "msi", "notarization"]},
        "also": "kind/bug", "issues": 220},
    "octo/confparse": {
        "labels": [("type/bug", "A defect"), ("type/feature", "A new capability"),
                   ("comp/parser", "The parser"), ("comp/lexer", "The lexer"), ("comp/emitter", "The emitter")],
        "words": {"comp/parser": ["grammar", "precedence", "ambiguity", "production"],
                  "comp/lexer": ["token", "whitespace", "escape", "unicode"],
                  "comp/emitter": ["serialize", "pretty", "indent", "roundtrip"]},
        "also": "type/bug", "issues": 90},
}


def seed(standin: StandIn, repo: str) -> None:
    """The made-up repository: its labels, and closed issues each carrying one of them."""
    scheme = SCHEMES[repo]
    for name, description in scheme["labels"]:
        standin.state.label(repo, name, description=description)
    rng = random.Random(repo)
    for number in range(1, scheme["issues"] + 1):
        label = rng.choice(sorted(scheme["words"]))
        a, b, c = rng.sample(scheme["words"][label], 3)
        standin.state.add_issue(repo, number, f"{a} {b} misbehaves",
                                f"With {a} and {c} the result is odd.\n\n```\nRuntimeError: {b}\n```",
                                labels=(label, scheme["also"]), state="closed")


def checkout(tmp_path: Path, name: str) -> Path:
    root = tmp_path / name
    (root / ".git").mkdir(parents=True)  # a checkout's root, as discovery looks for it
    return root


def cli(*args: str) -> tuple[int, str, str]:
    """Run the CLI in-process (module fixtures have no capsys): (exit code, stdout, stderr)."""
    import contextlib
    import io

    from issuetriage.cli.app import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(list(args))
            code = 0
        except SystemExit as done:
            code = int(done.code or 0)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def on_standin(monkeypatch, tmp_path):
    """Run commands from a new checkout against a stand-in seeded with `repo`: (stand-in, root)."""
    with StandIn() as standin:
        def start(repo: str | None) -> tuple[StandIn, Path]:
            if repo:
                seed(standin, repo)
            root = checkout(tmp_path, (repo or "acme/new").split("/")[1])
            monkeypatch.chdir(root)
            for key, value in standin.env().items():
                monkeypatch.setenv(key, value)
            return standin, root
        yield start


def test_the_onboarding_path_init_then_shadow_mode_webhook_review_page_and_report(on_standin):
    """README's path on a made-up repository with its own labels and 220 labelled issues."""
    from service_helpers import SECRET

    from issuetriage.policy import load_profile
    from issuetriage.service.app import open_jobs, receiver_app
    from issuetriage.service.receiver import Receiver
    from issuetriage.service.resolver import TokenResolver
    from issuetriage.web.app import create_app

    standin, root = on_standin("acme/widgets")
    code, out, err = cli("init", "acme/widgets", "--folds", "2", "--format", "json")
    assert code == 0, err
    done = json.loads(out)
    profile, store = root / ".github" / "issuetriage", root / "issuetriage.db"
    assert done["profile_written"] and (profile / "profile.toml").is_file() and load_profile(profile).meta.live.shadow
    assert done["synced_issues"] == 220 and done["labelled"] == 220
    assert (root / ".issuetriage" / "history" / "manifest.json").is_file()
    rows = {r["label"]: r for r in done["per_label"]}
    for label in ("area/parser", "area/cli", "area/network"):  # only the history can tell these
        assert rows[label]["recall"] >= 0.8 and rows[label]["precision"] >= 0.8, rows[label]
    assert set(done["suggest_only"]) == {r["label"] for r in done["per_label"] if r["suggest_only"]}
    assert done["next"].endswith("serve --store issuetriage.db --repo acme/widgets")
    assert not standin.writes  # onboarding reads GitHub, never writes to it

    # shadow mode, as `serve` wires it: a signed delivery, its job, the plan held for review
    standin.state.add_issue("acme/widgets", 500, "handshake keepalive misbehaves",
                            "With handshake and dns the result is odd.\n\n```\nRuntimeError: keepalive\n```")
    jobs = open_jobs(store, None, TokenResolver("acme/widgets", str(profile), standin.env()), "auto")
    answer = deliver(TestClient(receiver_app(Receiver((SECRET,), jobs))), "issues",
                     payload("issues", "opened", 500, repo="acme/widgets"))
    assert answer.status_code == 202 and drain(jobs) == 1
    assert not standin.writes  # recorded for review, nothing written to GitHub
    page = TestClient(create_app(store, load_profile(profile)), base_url="http://127.0.0.1").get("/")
    assert page.status_code == 200 and "500" in page.text and "area/network" in page.text
    code, _, err = cli("report", "--store", str(store), "--out", str(root / "report"))
    assert code == 0, err
    assert (root / "report" / "index.html").is_file() and (root / "report" / "report.json").is_file()

    code, out, err = cli("init", "acme/widgets", "--folds", "2", "--format", "json")  # again: resumes
    assert code == 0, err
    assert not json.loads(out)["profile_written"] and json.loads(out)["labelled"] == 220


def test_a_second_label_scheme_onboards_with_no_code_change(on_standin):
    on_standin("octo/confparse")
    code, out, err = cli("init", "octo/confparse", "--folds", "2")
    assert code == 0, err
    assert "out of fold (2 folds, judge heuristic+history (5 neighbours))" in out
    assert all(f"  {label} " in out for label in ("comp/parser", "comp/lexer", "comp/emitter"))
    assert "area/" not in out and "torch" not in out.lower()


def _no_issue_scope(standin: StandIn) -> None:
    from standin import Fault
    standin.faults.append(Fault("GET", r"/repos/acme/widgets/issues", 403, times=5,
                                body={"message": "Resource not accessible by personal access token"}))


@pytest.mark.parametrize("case, says", [
    ("no labels", "acme/widgets has no labels"),
    ("no labelled history", "none of its 1 synced issue(s) carries one of its"),
    ("token without issue scope", "Resource not accessible"),
])
def test_bad_input_is_one_line_exit_2_and_no_profile_is_written(on_standin, case, says):
    standin, root = on_standin(None)
    if case != "no labels":
        standin.state.label("acme/widgets", "area/parser", description="The parser")
        standin.state.add_issue("acme/widgets", 1, "anything", "no label here")
    if case == "token without issue scope":
        _no_issue_scope(standin)
    code, out, err = cli("init", "acme/widgets")
    assert code == 2 and out == "" and err.startswith("error: ") and err.count("\n") == 1 and says in err, err
    assert not (root / ".github").exists() and not (root / ".issuetriage").exists()
    assert (root / "issuetriage.db").exists() == (case == "no labelled history")  # what sync fetched, kept
