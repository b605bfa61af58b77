"""The generated workflows, run as written: stage 1's and stage 2's steps, locally, in a checkout
with a repo-local profile, against the loopback GitHub stand-in.

Each `run:` step runs in bash the way Actions runs it (`bash --noprofile --norc -eo pipefail`),
with its `env:` and every `${{ }}` expression filled in from a table (an expression the table
does not know fails the test). The `uses:` steps are done by hand: checkout is the folder the
steps run in, the artifact is the file stage 1 wrote, setup-python is the running interpreter.
The install step runs too, with `python` a shim that records what pip would install (the test
has no network) and `issuetriage` this source tree.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from issuetriage.github.workflows import install_source, render

ROOT = Path(__file__).resolve().parents[2]
REPO = "acme/widgets"
PINNED = "git+https://example.invalid/acme/issuetriage@0123456789abcdef0123456789abcdef01234567"
LABELS = [{"name": "area/parser", "description": "Parsing of YAML and TOML configuration files"},
          {"name": "area/network", "description": "HTTP client, proxies, TLS certificates and timeouts"},
          {"name": "kind/bug", "description": "Something is not working"}]


def _shims(bin_dir: Path, log: Path, first_on_path: Path | None = None) -> None:
    """`python -m pip install X` records X; `issuetriage` is this source tree's CLI (after
    `first_on_path`, when given)."""
    bin_dir.mkdir()
    (bin_dir / "python").write_text(
        f'#!/bin/sh\nif [ "$1 $2 $3" = "-m pip install" ]; then printf "%s\\n" "$4" >> "{log}"; exit 0; fi\n'
        f'exec "{sys.executable}" "$@"\n')
    path = f"{first_on_path}:{ROOT / 'src'}" if first_on_path else str(ROOT / "src")
    (bin_dir / "issuetriage").write_text(
        f'#!/bin/sh\nPYTHONPATH="{path}" exec "{sys.executable}" -m issuetriage.cli.app "$@"\n')
    for shim in bin_dir.iterdir():
        shim.chmod(0o755)


def _fill(text: str, values: dict[str, str]) -> str:
    def one(match: re.Match[str]) -> str:
        expr = match.group(1).strip()
        assert expr in values, f"the test does not know the expression {expr!r}"
        return values[expr]
    return re.sub(r"\$\{\{(.*?)\}\}", one, text)


def run_job(workflow: str, job: str, cwd: Path, values: dict[str, str], env: dict[str, str]) -> list[str]:
    """Run a job's `run:` steps in order; returns the names of the `uses:` steps it skipped."""
    steps = yaml.safe_load(workflow)["jobs"][job]["steps"]
    skipped = []
    github_env = Path(env["GITHUB_OUTPUT"]).with_name("github-env")
    github_env.touch()
    for step in steps:
        if "uses" in step:
            skipped.append(step["uses"].split("@")[0])
            continue
        step_env = {key: _fill(str(value), values) for key, value in step.get("env", {}).items()}
        exported = dict(line.split("=", 1) for line in github_env.read_text().splitlines() if "=" in line)
        done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c",
                               _fill(step["run"], values)], cwd=cwd,
                              env={**env, **exported, **step_env, "GITHUB_ENV": str(github_env)},
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, f"step {step.get('name')!r} failed:\n{done.stdout}\n{done.stderr}"
        if step.get("id"):
            outputs = dict(line.split("=", 1) for line in
                           Path(env["GITHUB_OUTPUT"]).read_text().splitlines() if "=" in line)
            values.update({f"steps.{step['id']}.outputs.{k}": v for k, v in outputs.items()})
    return skipped


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A repository with a profile made by `profile init` from its labels, in `triage-profile/`."""
    import json

    from issuetriage.policy.init import init_profile

    repo = tmp_path / "checkout"
    repo.mkdir()
    labels = tmp_path / "labels.json"
    labels.write_text(json.dumps(LABELS))
    init_profile(repo / "triage-profile", REPO, labels)
    return repo


def test_stage_two_steps_run_as_written_and_triage_the_issue(standin, checkout, tmp_path):  # noqa: F811
    standin.state.add_issue(REPO, 7, "YAML parser crashes on anchors",
                            "Loading a config with YAML anchors fails:\n\n```\nValueError: bad anchor\n```")
    files = render(install=install_source(PINNED, None, checkout), profile="./triage-profile")
    log = tmp_path / "pip.log"
    _shims(tmp_path / "bin", log)
    env = {"PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}", "HOME": str(tmp_path),
           "GITHUB_REPOSITORY": REPO, "GITHUB_API_URL": standin.url,
           "GITHUB_GRAPHQL_URL": f"{standin.url}/graphql", "GITHUB_OUTPUT": str(tmp_path / "output")}
    values = {"github.event.issue.number": "7", "inputs.issue_number": "",
              "github.event.workflow_run.id": "1", "github.token": standin.token,
              "vars.ISSUETRIAGE_JUDGE || 'heuristic'": "heuristic", "secrets.ANTHROPIC_API_KEY": ""}

    stage1 = tmp_path / "stage1"
    stage1.mkdir()
    assert run_job(files["issuetriage-select.yml"], "select", stage1, values, env) == [
        "actions/upload-artifact"]
    artifact = checkout / "triage-target"  # download-artifact puts stage 1's file here
    artifact.mkdir()
    (artifact / "issue-number").write_bytes((stage1 / "triage-target" / "issue-number").read_bytes())

    skipped = run_job(files["issuetriage-apply.yml"], "triage", checkout, values, env)

    assert skipped == ["actions/download-artifact", "actions/checkout", "actions/setup-python",
                       "actions/cache/restore"]
    assert log.read_text().split() == [PINNED]  # the pinned source, nothing from the package index
    labels = standin.state.label_names(REPO, 7)
    assert "area/parser" in labels and "triaged-by-bot" in labels
    assert not any(label.startswith(("module:", "oncall:")) for label in labels)


def test_stage_two_fails_when_stage_one_saved_no_number(standin, checkout, tmp_path):  # noqa: F811
    files = render(install=PINNED, profile="./triage-profile")
    (checkout / "triage-target").mkdir()
    (checkout / "triage-target" / "issue-number").write_text("7; rm -rf /\n")
    env = {"PATH": os.environ["PATH"], "GITHUB_OUTPUT": str(tmp_path / "output")}
    with pytest.raises(AssertionError, match="Validate the issue number"):
        run_job(files["issuetriage-apply.yml"], "triage", checkout, {"github.event.workflow_run.id": "1",
                                                                      "github.token": "x"}, env)


def _built_history(checkout: Path) -> Path:
    """The folder the sweep saved and the cache restores: this repository's labelled issues,
    where `area/network` reports talk of a made-up `zorblax` the profile's keywords do not know."""
    from builders import make_issue
    from issuetriage.history.build import build
    from issuetriage.history.sources import Source
    from issuetriage.judges.heuristic import HeuristicJudge
    from issuetriage.judges.learned.corpus import past_of
    from issuetriage.policy import load_profile_dir

    policy = load_profile_dir(checkout / "triage-profile")
    rows = []
    for i in range(20):
        rows.append((make_issue(number=100 + 2 * i, repo=REPO, title=f"zorblax {i} handshake stalls",
                                body="the zorblax handshake stalls before the first byte"), ("area/network",)))
        rows.append((make_issue(number=101 + 2 * i, repo=REPO, title=f"anchors {i} break the loader",
                                body="yaml anchors and aliases break the config loader"), ("area/parser",)))
    examples = [type("E", (), {"issue": issue, "gold": frozenset(labels)}) for issue, labels in rows]
    source = Source("corpus", "made up", "0" * 64, len(rows), past_of(examples, REPO))
    out = checkout / ".issuetriage" / "history"
    build(source, policy, out, HeuristicJudge(), 5)
    return out


def test_stage_two_restores_the_swept_history_and_never_refits(standin, checkout, tmp_path):  # noqa: F811
    """The per-issue job only restores the folder the sweep saved and names it; it runs with
    scikit-learn unimportable, so any fitting would fail the job."""
    files = render(install=PINNED, profile="./triage-profile")
    apply_job = yaml.safe_load(files["issuetriage-apply.yml"])["jobs"]["triage"]
    sweep = yaml.safe_load(files["issuetriage-backlog.yml"])["jobs"]["sweep"]
    restore = next(s for s in apply_job["steps"] if s.get("uses", "").startswith("actions/cache/restore"))
    save = next(s for s in sweep["steps"] if s.get("uses", "").startswith("actions/cache/save"))
    assert save["with"]["key"].startswith(restore["with"]["restore-keys"])
    assert save["with"]["path"] == restore["with"]["path"] == ".issuetriage/history"
    assert not any("history build" in s.get("run", "") for s in apply_job["steps"])
    assert any("history build --update" in s.get("run", "") for s in sweep["steps"])

    standin.state.add_issue(REPO, 900, "zorblax handshake stalls again", "The zorblax handshake stalls:\n\n"
                            "```\nTraceback (most recent call last):\nTimeoutError: zorblax handshake\n```")
    _built_history(checkout)
    no_fitting = tmp_path / "no-fitting"
    no_fitting.mkdir()
    (no_fitting / "sitecustomize.py").write_text("import sys\nsys.modules['sklearn'] = None  # fitting fails\n")
    _shims(tmp_path / "bin", tmp_path / "pip.log", first_on_path=no_fitting)
    env = {"PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}", "HOME": str(tmp_path),
           "GITHUB_REPOSITORY": REPO, "GITHUB_API_URL": standin.url,
           "GITHUB_GRAPHQL_URL": f"{standin.url}/graphql", "GITHUB_OUTPUT": str(tmp_path / "output")}
    values = {"github.event.workflow_run.id": "1", "github.run_id": "2", "github.token": standin.token,
              "vars.ISSUETRIAGE_JUDGE || 'heuristic'": "heuristic", "secrets.ANTHROPIC_API_KEY": ""}
    (checkout / "triage-target").mkdir()
    (checkout / "triage-target" / "issue-number").write_text("900\n")
    run_job(files["issuetriage-apply.yml"], "triage", checkout, values, env)
    assert "area/network" in standin.state.label_names(REPO, 900)  # only the history knows zorblax
