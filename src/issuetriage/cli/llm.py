"""LLM commands: `mcp` (agent mode over MCP), `llm prompt` (show what a model would be sent) and
`llm config` (show the model configuration, never a key)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Optional

import typer

from issuetriage.errors import UserError
from issuetriage.judges.factory import get_judge
from issuetriage.policy import load_profile
from issuetriage.store.sqlite import Store, issue_from_record, parse_issue_record
from issuetriage.cli.options import ProfileOpt



def _read_issue(path: Path, number: int | None):  # noqa: ANN202
    """One issue from a .json file, or the one numbered `number` in a .jsonl file."""
    if not path.is_file():
        raise UserError(f"{path}: no such file")
    try:
        if path.suffix != ".jsonl":
            try:
                return issue_from_record(json.loads(path.read_text(encoding="utf-8")), str(path))
            except json.JSONDecodeError as exc:
                raise UserError(f"{path}: malformed JSON ({exc.msg} at line {exc.lineno})") from None
        with path.open(encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                if line.strip():
                    issue = parse_issue_record(line, f"{path}:{lineno}")
                    if number is None or issue.number == number:
                        return issue
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot read ({exc})") from None
    raise UserError(f"{path}: no issue numbered {number}")


def show_prompt(path: Path, number: int | None, profile: str, style: str = "catalog") -> str:
    """The full request for one issue (system, user, schema) and its size; history examples come
    from $ISSUETRIAGE_LLM_HISTORY when it names a labelled corpus."""
    from issuetriage.evaluate.requests import render_request
    from issuetriage.evidence.history import load_history
    from issuetriage.evidence.signals import extract_signals
    from issuetriage.judges.llm.judge import request
    from issuetriage.judges.llm.prompt import PROMPT_VERSIONS

    if style not in PROMPT_VERSIONS:
        raise UserError(f"--prompt {style!r}: choose from {', '.join(PROMPT_VERSIONS)}")
    policy = load_profile(profile)
    issue = _read_issue(path, number)
    signals = extract_signals(issue)
    source = os.environ.get("ISSUETRIAGE_LLM_HISTORY")
    history = load_history(source, policy) if source else None
    prompt = request(issue, signals, policy, get_judge("heuristic").judge(issue, signals, policy),
                     history, style)
    return "\n\n".join([render_request(prompt),
                        f"# SIZE\n{prompt.size} characters (~{prompt.size // 4} tokens, chars/4 "
                        f"estimate), prompt version {prompt.version}, digest {prompt.digest[:12]}"])


def show_config(profile: str) -> str:
    from issuetriage.judges.llm.config import DEFAULT_KEY_ENV, default_cache_dir, load_config

    policy = load_profile(profile)
    config = load_config(policy.root)
    if config is None:
        return "no model configured (set ISSUETRIAGE_LLM_MODEL); judges run offline"
    key_env = config.api_key_env if config.api_key_env is not None else DEFAULT_KEY_ENV[config.provider]
    key = ("AWS credential chain" if not key_env
           else f"${key_env} {'is set' if os.environ.get(key_env) else 'is NOT set'}")
    return "\n".join([f"provider: {config.provider}", f"model: {config.model}",
                      f"base_url: {config.base_url or '(provider default)'}", f"key: {key}",
                      f"hybrid_threshold: {config.hybrid_threshold}",
                      f"cache: {default_cache_dir(config)}"])


def serve_mcp(profile: str, store_path: Path | None, github_repo: str | None,
              repo: str | None, issues: list[int], apply: bool) -> None:
    """Start the MCP server over stdio on the store mirror or on GitHub."""
    from issuetriage.agents.session import GitHubBackend, Session, StoreBackend
    from issuetriage.agents.mcp_server import serve

    policy = load_profile(profile)
    if (store_path is None) == (github_repo is None):
        raise UserError("give exactly one of --store PATH or --github OWNER/REPO")
    scope = frozenset(issues) or None
    if github_repo:
        from issuetriage.github.client import GitHubClient

        backend = GitHubBackend(GitHubClient.from_env(repo=github_repo), github_repo)
    else:
        backend = StoreBackend(Store(store_path, create=False), repo or policy.meta.repo)
    serve(Session(policy, backend, get_judge("heuristic"), scope=scope, apply=apply))


def register(app: typer.Typer) -> None:
    """Attach this module's commands to the main app."""

    @app.command("mcp")
    def mcp_cmd(
        store: Annotated[Optional[Path], typer.Option("--store", help="Serve the local mirror.")] = None,
        github: Annotated[Optional[str], typer.Option("--github", help="Serve OWNER/REPO live.")] = None,
        repo: Annotated[Optional[str], typer.Option("--repo", help="Repo in the store.")] = None,
        issue: Annotated[list[int], typer.Option("--issue", help="Only these may be changed.")] = [],  # noqa: B006
        apply: Annotated[bool, typer.Option("--apply", help="Apply guarded plans (else dry run).")] = False,
        profile: ProfileOpt = "pytorch",
    ) -> None:
        """Serve triage tools to an MCP client over stdio. Example: issuetriage mcp --store t.db --issue 42"""
        serve_mcp(profile, store, github, repo, issue, apply)

    llm_app = typer.Typer(help="Inspect the LLM judge's prompt and configuration.", no_args_is_help=True)

    @llm_app.command("prompt")
    def prompt_cmd(
        file: Annotated[Path, typer.Argument(help="An issue (.json) or issues (.jsonl).")],
        number: Annotated[Optional[int], typer.Option("--number", help="Which issue of a .jsonl.")] = None,
        prompt: Annotated[str, typer.Option("--prompt", help="Prompt style: catalog or shortlist.")] = "catalog",
        profile: ProfileOpt = "pytorch",
    ) -> None:
        """Print the request a model would get, without calling it. Example: issuetriage llm prompt 42.json"""
        typer.echo(show_prompt(file, number, profile, prompt))

    @llm_app.command("requests")
    def requests_cmd(
        corpus: Annotated[Path, typer.Option("--corpus", help="Labelled JSONL issues.")],
        out: Annotated[Path, typer.Option("--out", help="New folder for the request files.")],
        sample: Annotated[int, typer.Option("--sample", min=1, help="How many labelled issues.")] = 60,
        seed: Annotated[int, typer.Option("--seed", help="Sampling seed.")] = 0,
        prompt: Annotated[str, typer.Option("--prompt", help="Prompt style: catalog or shortlist.")] = "catalog",
        profile: ProfileOpt = "pytorch",
    ) -> None:
        """Write the exact request for a fixed sample of issues, to record answers elsewhere.
        Example: issuetriage llm requests --corpus dev.jsonl --out requests/"""
        from issuetriage.evaluate.requests import export_requests

        manifest = export_requests(corpus, out, sample, seed, prompt, profile)
        typer.echo(f"{len(manifest['requests'])} requests ({manifest['prompt_style']}, prompt "
                   f"{manifest['prompt_version']}) in {out}")

    @llm_app.command("config")
    def config_cmd(profile: ProfileOpt = "pytorch") -> None:
        """Show the configured model (never a key). Example: issuetriage llm config"""
        typer.echo(show_config(profile))

    app.add_typer(llm_app, name="llm")
