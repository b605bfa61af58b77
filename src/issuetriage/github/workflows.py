"""`issuetriage init-workflows DIR`: the two-stage GitHub Actions deployment, plus a backlog sweep.

Stage 1 runs on `issues: opened` (or by hand with an issue number) with read-only permissions,
validates the number and saves it as an artifact; it never sees a write token. Stage 2 runs on
`workflow_run` of stage 1 in a protected environment with `issues: write`, re-validates the
number and runs `issuetriage triage --apply`, whose outcome check exits non-zero on `no_action`.
Untrusted text (titles, bodies) never reaches a shell: only the validated number does.

The jobs that triage check out the repository (so a repo-local `--profile ./myprofile` is there)
and install issuetriage from a pinned source that exists: a wheel committed to the repository
(`--wheel`), or a git URL at a revision (`--source git+https://...@REV`, by default the git
checkout this issuetriage runs from). issuetriage is not on the package index.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from issuetriage.errors import UserError
from issuetriage.policy import PROFILES_DIR, load_profile_dir

SELECT = """\
# Stage 1 of issuetriage: pick the issue, with no write access. Written by `issuetriage init-workflows`.
name: issuetriage-select

on:
  issues:
    types: [opened]
  workflow_dispatch:
    inputs:
      issue_number:
        description: Number of the issue to triage
        required: true
        type: number

permissions:
  contents: read

jobs:
  select:
    runs-on: ubuntu-latest
    steps:
      - name: Validate the issue number
        env:
          EVENT_ISSUE: ${{ github.event.issue.number }}
          INPUT_ISSUE: ${{ inputs.issue_number }}
        run: |
          number="${EVENT_ISSUE:-$INPUT_ISSUE}"
          case "$number" in
            ''|*[!0-9]*) echo "not an issue number: '$number'" >&2; exit 1 ;;
          esac
          mkdir -p triage-target
          printf '%s\\n' "$number" > triage-target/issue-number
      - name: Save the issue number for stage 2
        uses: actions/upload-artifact@v6
        with:
          name: triage-target
          path: triage-target/issue-number
          retention-days: 1
"""

APPLY = """\
# Stage 2 of issuetriage: triage the issue stage 1 picked, with issues: write, in a protected
# environment. Written by `issuetriage init-workflows`.
name: issuetriage-apply

on:
  workflow_run:
    workflows: [issuetriage-select]
    types: [completed]

permissions:
  contents: read

concurrency:
  group: issuetriage-${{ github.event.workflow_run.id }}

jobs:
  triage:
    if: github.event.workflow_run.conclusion == 'success'
    runs-on: ubuntu-latest
    environment: @ENVIRONMENT@
    permissions:
      actions: read
      contents: read
      issues: write
    steps:
      - name: Fetch the issue number from stage 1
        uses: actions/download-artifact@v7
        with:
          name: triage-target
          path: triage-target
          run-id: ${{ github.event.workflow_run.id }}
          github-token: ${{ github.token }}
      - name: Validate the issue number
        id: target
        run: |
          number="$(head -c 20 triage-target/issue-number | tr -d '[:space:]')"
          case "$number" in
            ''|*[!0-9]*) echo "stage 1 saved no valid issue number" >&2; exit 1 ;;
          esac
          echo "number=$number" >> "$GITHUB_OUTPUT"
@SETUP@
      - name: Triage, apply and check the outcome
        env:
          GITHUB_TOKEN: ${{ github.token }}
          TRIAGE_ISSUE_NUMBER: ${{ steps.target.outputs.number }}
          ISSUETRIAGE_JUDGE: ${{ vars.ISSUETRIAGE_JUDGE || 'heuristic' }}
          ANTHROPIC_API_KEY: ${{ secrets.ANTHROPIC_API_KEY }}
        run: |
          issuetriage triage "$GITHUB_REPOSITORY#$TRIAGE_ISSUE_NUMBER" --apply \\
            --profile @PROFILE@ --judge "$ISSUETRIAGE_JUDGE"
"""

BACKLOG = """\
# Scheduled sweep of open, untriaged issues within a rate-limit budget. Written by
# `issuetriage init-workflows`.
name: issuetriage-backlog

on:
  schedule:
    - cron: "@CRON@"
  workflow_dispatch:

permissions:
  contents: read

concurrency:
  group: issuetriage-backlog

jobs:
  sweep:
    runs-on: ubuntu-latest
    environment: @ENVIRONMENT@
    permissions:
      contents: read
      issues: write
    steps:
@SETUP@
      - name: Triage the backlog
        env:
          GITHUB_TOKEN: ${{ github.token }}
          ISSUETRIAGE_JUDGE: ${{ vars.ISSUETRIAGE_JUDGE || 'heuristic' }}
          ANTHROPIC_API_KEY: ${{ secrets.ANTHROPIC_API_KEY }}
        run: |
          issuetriage backlog "$GITHUB_REPOSITORY" --older-than 1d --limit @LIMIT@ --apply \\
            --profile @PROFILE@ --judge "$ISSUETRIAGE_JUDGE"
"""

FILES = {"issuetriage-select.yml": SELECT, "issuetriage-apply.yml": APPLY, "issuetriage-backlog.yml": BACKLOG}


# The steps both jobs start with: the repository (for a repo-local profile), Python, issuetriage.
SETUP = """\
      - name: Check out the repository (its profile, and a committed wheel if one is used)
        uses: actions/checkout@v5
        with:
          persist-credentials: false
      - uses: actions/setup-python@v6
        with:
          python-version: "3.12"
      - name: Install issuetriage from its pinned source
        run: python -m pip install "@INSTALL@"
"""

_UNSAFE = "\n\"'`$;&|<> \\"


def render(install: str, profile: str = "pytorch", environment: str = "issue-triage",
           cron: str = "17 6 * * *", limit: int = 50) -> dict[str, str]:
    """The workflow files by name, filled in; `install` is a pip requirement (see `install_source`)."""
    for name, value in (("install", install), ("profile", profile), ("environment", environment)):
        if not value or any(c in value for c in _UNSAFE):
            raise UserError(f"--{name} {value!r}: must be non-empty without spaces, quotes or shell characters")
    values = {"@SETUP@\n": SETUP, "@INSTALL@": install, "@PROFILE@": profile, "@ENVIRONMENT@": environment,
              "@CRON@": cron, "@LIMIT@": str(limit)}
    out = {}
    for name, text in FILES.items():
        for key, value in values.items():
            text = text.replace(key, value)
        out[name] = text
    return out


_PINNED_GIT = re.compile(r"git\+(https|ssh)://[^@\s]+(@[^@\s]+)?@[\w.\-/]+(#[\w=&.-]+)?")


def install_source(source: str | None, wheel: str | None, root: Path) -> str:
    """What the jobs pip-install: a wheel in the repository at `root`, a git URL pinned to a
    revision, or (neither given) this issuetriage's own git checkout at its current commit."""
    if source and wheel:
        raise UserError("give --source or --wheel, not both")
    if wheel:
        path = Path(wheel)
        if path.is_absolute() or ".." in path.parts:
            raise UserError(f"--wheel {wheel}: give a path inside the repository, relative to its root")
        if not (root / path).is_file() or path.suffix != ".whl":
            raise UserError(f"--wheel {wheel}: no such wheel in {root} (commit it there first)")
        return f"./{path.as_posix()}"
    if source:
        if not _PINNED_GIT.fullmatch(source):
            raise UserError(f"--source {source!r}: expected git+https://HOST/OWNER/NAME@REVISION "
                            "(pinned to a commit or tag)")
        return source
    found = own_checkout()
    if found is None:
        raise UserError("say where the jobs install issuetriage from: --source "
                        "git+https://HOST/OWNER/NAME@REVISION or --wheel PATH (it is not on the package "
                        "index, and this copy is not a git checkout with a remote)")
    return found


def own_checkout(here: Path | None = None) -> str | None:
    """`git+URL@COMMIT` of the git checkout this issuetriage runs from (or `here`), when it has an
    https or ssh remote."""
    here = here or Path(__file__).resolve().parent
    try:
        url = subprocess.run(["git", "-C", str(here), "remote", "get-url", "origin"], capture_output=True,
                             text=True, timeout=10).stdout.strip()
        rev = subprocess.run(["git", "-C", str(here), "rev-parse", "HEAD"], capture_output=True,
                             text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    ssh = re.fullmatch(r"git@([\w.-]+):(.+)", url)
    if ssh:
        url = f"https://{ssh.group(1)}/{ssh.group(2)}"
    if not url.startswith("https://") or not re.fullmatch(r"[0-9a-f]{40}", rev):
        return None
    return f"git+{url}@{rev}"


def check_profile(profile: str, root: Path) -> str:
    """A shipped profile name, or a folder in the repository that loads; refused otherwise."""

    if (PROFILES_DIR / profile).is_dir() and "/" not in profile:
        return profile
    path = Path(profile)
    if path.is_absolute() or ".." in path.parts:
        raise UserError(f"--profile {profile}: give a shipped name or a folder inside the repository")
    if not (root / path).is_dir():
        raise UserError(f"--profile {profile}: no such profile folder in {root} (and no shipped profile of that name)")
    load_profile_dir(root / path)  # a profile that does not load would fail every run
    return f"./{path.as_posix()}" if not profile.startswith("./") else profile


def write(directory: Path, force: bool = False, **options: object) -> list[Path]:
    """Write the workflows into `directory`; refuses to overwrite unless `force`."""
    files = render(**options)  # type: ignore[arg-type]
    if directory.exists() and not directory.is_dir():
        raise UserError(f"{directory}: not a folder")
    targets = [directory / name for name in files]
    existing = [p for p in targets if p.exists()]
    if existing and not force:
        raise UserError(f"{existing[0]} exists (use --force to overwrite)")
    folders = [p for p in existing if p.is_dir()]
    if folders:
        raise UserError(f"{folders[0]}: a folder is in the way of the workflow file")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for path in targets:
            path.write_text(files[path.name], encoding="utf-8")
    except OSError as exc:
        raise UserError(f"{directory}: cannot write the workflows ({exc.strerror or exc})") from None
    return targets
