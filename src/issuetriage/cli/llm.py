"""LLM commands: `mcp` (agent mode over MCP), `llm prompt` (show what a model would be sent) and
`llm config` (show the model configuration, never a key)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from issuetriage.cli.options import STORE_ENV, Format, FormatOpt, ProfileOpt, emit
from issuetriage.errors import UserError
from issuetriage.policy import load_profile
from issuetriage.policy.discover import profile_for

if TYPE_CHECKING:  # the judges, records and the store load inside the commands
    from issuetriage.models import Issue


def _read_issue(source: str, number: int | None) -> Issue:
    """The one issue in a file (or stdin), or the one numbered `number` among several."""
    from issuetriage.records import read_issues

    issues = read_issues(source)
    found = next((i for i in issues if number is None or i.number == number), None)
    if found is None:
        raise UserError(f"{source}: no issue numbered {number}")
    return found


def build(source: str, number: int | None, profile: str | None, style: str = "catalog"):  # noqa: ANN201
    """The request a model would get for one issue; history examples come from
    $ISSUETRIAGE_HISTORY (which also stacks the offline judge, as in production) or
    $ISSUETRIAGE_LLM_HISTORY when it names a labelled corpus."""
    from issuetriage.evidence.signals import extract_signals
    from issuetriage.judges.factory import get_judge, resolve_history
    from issuetriage.judges.learned.corpus import load_history
    from issuetriage.judges.llm.judge import request
    from issuetriage.judges.llm.prompt import PROMPT_VERSIONS

    if style not in PROMPT_VERSIONS:
        raise UserError(f"--prompt {style!r}: choose from {', '.join(PROMPT_VERSIONS)}")
    issue = _read_issue(source, number)
    policy = load_profile(profile_for(profile, issue.repo))
    signals = extract_signals(issue)
    stacked = resolve_history(None, policy)  # $ISSUETRIAGE_HISTORY, read once: it stacks the judge
    examples = os.environ.get("ISSUETRIAGE_LLM_HISTORY")
    history = stacked.history if stacked else (load_history(examples, policy)[0] if examples else None)
    offline = get_judge("heuristic", profile=policy, history=stacked)
    return request(issue, signals, policy, offline.judge(issue, signals, policy), history, style)


def prompt_text(prompt) -> str:  # noqa: ANN001
    """The full request (system, user, schema) and its size, for people."""
    from issuetriage.evaluate.requests import render_request

    return "\n\n".join([render_request(prompt),
                        f"# SIZE\n{prompt.size} characters (~{prompt.size // 4} tokens, chars/4 "
                        f"estimate), prompt version {prompt.version}, digest {prompt.digest[:12]}"])


def show_config(profile: str | None) -> dict[str, object]:
    from issuetriage.judges.llm.config import DEFAULT_KEY_ENV, default_cache_dir, load_config

    policy = load_profile(profile_for(profile))
    config = load_config(policy.root)
    if config is None:
        return {}
    key_env = config.api_key_env if config.api_key_env is not None else DEFAULT_KEY_ENV[config.provider]
    key = ("AWS credential chain" if not key_env
           else f"${key_env} {'is set' if os.environ.get(key_env) else 'is NOT set'}")
    return {"provider": config.provider, "model": config.model,
            "base_url": config.base_url or "(provider default)", "key": key,
            "hybrid_threshold": config.hybrid_threshold, "cache": str(default_cache_dir(config))}


def config_text(config: dict[str, object]) -> str:
    if not config:
        return "no model configured (set ISSUETRIAGE_LLM_MODEL); judges run offline"
    return "\n".join(f"{key}: {value}" for key, value in config.items())


def serve_mcp(profile: str | None, store_path: str | None, github_repo: str | None,
              repo: str | None, issues: list[int], apply: bool) -> None:
    """Start the MCP server over stdio on the store mirror, or on GitHub with the store (default
    issuetriage.db when applying) as the audit log."""
    from issuetriage.agents.mcp_server import serve
    from issuetriage.agents.session import Backend, GitHubBackend, Session, StoreBackend
    from issuetriage.judges.factory import get_judge
    from issuetriage.store.sqlite import Store

    if store_path is None and github_repo is None:
        raise UserError("give --store PATH (serve the mirror) or --github OWNER/REPO (serve GitHub)")
    served = github_repo or repo
    if served is None and store_path is not None:
        from issuetriage.store.corpus import store_repo

        with Store(store_path, create=False) as db:
            served = store_repo(db)
    policy = load_profile(profile_for(profile, served))
    scope = frozenset(issues) or None
    backend: Backend
    if github_repo:
        from issuetriage.github.client import GitHubClient

        store = Store(store_path or "issuetriage.db") if (store_path or apply) else None
        backend = GitHubBackend(GitHubClient.from_env(repo=github_repo), github_repo, store)
    else:
        assert store_path is not None
        store = Store(store_path, create=False)
        backend = StoreBackend(store, repo or policy.meta.repo)
    serve(Session(policy, backend, get_judge("heuristic", profile=policy, store=store), scope=scope, apply=apply))


def register(app: typer.Typer) -> None:
    """Attach this module's commands to the main app."""

    @app.command("mcp")
    def mcp_cmd(
        store: Annotated[Optional[str], typer.Option(
            "--store", envvar=STORE_ENV,
            help="Serve the local mirror; with --github, the audit log (default issuetriage.db when applying).")] = None,
        github: Annotated[Optional[str], typer.Option("--github", help="Serve OWNER/REPO live.")] = None,
        repo: Annotated[Optional[str], typer.Option("--repo", help="Repo in the store.")] = None,
        issue: Annotated[list[int], typer.Option("--issue", help="Only these may be changed.")] = [],  # noqa: B006
        apply: Annotated[bool, typer.Option("--apply", help="Apply guarded plans (else dry run).")] = False,
        profile: ProfileOpt = None,
    ) -> None:
        """Serve triage tools to an MCP client over stdio. Example: issuetriage mcp --store t.db --issue 42"""
        serve_mcp(profile, store, github, repo, issue, apply)

    llm_app = typer.Typer(help="Inspect the LLM judge's prompt and configuration.", no_args_is_help=True)

    @llm_app.command("prompt")
    def prompt_cmd(
        file: Annotated[str, typer.Argument(help="An issue file (any shape `plan` reads); `-` reads stdin.")],
        number: Annotated[Optional[int], typer.Option("--number", help="Which issue of several.")] = None,
        prompt: Annotated[str, typer.Option("--prompt", help="Prompt style: catalog or shortlist.")] = "catalog",
        profile: ProfileOpt = None,
        fmt: FormatOpt = Format.text,
    ) -> None:
        """Print the request a model would get, without calling it. Example: issuetriage llm prompt 42.json"""
        built = build(file, number, profile, prompt)
        emit(fmt, {"system": built.system, "user": built.user, "schema": built.schema,
                   "size": built.size, "version": built.version, "digest": built.digest},
             prompt_text(built))

    @llm_app.command("requests")
    def requests_cmd(
        corpus: Annotated[Path, typer.Option("--corpus", help="Labelled JSONL issues.")],
        out: Annotated[Path, typer.Option("--out", help="New folder for the request files.")],
        sample: Annotated[int, typer.Option("--sample", min=1, help="How many labelled issues.")] = 60,
        seed: Annotated[int, typer.Option("--seed", help="Sampling seed.")] = 0,
        prompt: Annotated[str, typer.Option("--prompt", help="Prompt style: catalog or shortlist.")] = "catalog",
        neighbours: Annotated[int, typer.Option(
            "--neighbours", min=0, help="Stack the offline judge with the history, as eval "
                                        "--neighbours K does (0: off).")] = 0,
        issues: Annotated[Optional[Path], typer.Option(
            "--issues", help="A file of issue numbers, one per line, instead of --sample.")] = None,
        profile: ProfileOpt = None,
        fmt: FormatOpt = Format.text,
    ) -> None:
        """Write the exact request for a fixed sample of issues, to record answers elsewhere.
        Example: issuetriage llm requests --corpus dev.jsonl --out requests/"""
        from issuetriage.evaluate.requests import export_requests, read_numbers

        numbers = read_numbers(issues) if issues is not None else None
        from issuetriage.cli.corpora import corpus_repo

        manifest = export_requests(corpus, out, sample, seed, prompt, profile_for(profile, corpus_repo(corpus)),
                                   neighbours, numbers)
        emit(fmt, {"out": str(out), "requests": len(manifest["requests"]),
                   "prompt_style": manifest["prompt_style"], "prompt_version": manifest["prompt_version"]},
             f"{len(manifest['requests'])} requests ({manifest['prompt_style']}, prompt "
             f"{manifest['prompt_version']}) in {out}")

    @llm_app.command("config")
    def config_cmd(profile: ProfileOpt = None, fmt: FormatOpt = Format.text) -> None:
        """Show the configured model (never a key). Example: issuetriage llm config"""
        config = show_config(profile)
        emit(fmt, config or None, config_text(config))

    app.add_typer(llm_app, name="llm")
