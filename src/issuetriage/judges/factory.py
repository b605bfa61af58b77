"""Judge factory: the CLI and evaluation name a judge; this builds it (heavy ones lazily)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from issuetriage.errors import UserError
from issuetriage.judges.base import Judge
from issuetriage.judges.heuristic import HeuristicJudge

if TYPE_CHECKING:
    from issuetriage.evidence.history import History
    from issuetriage.policy import Policy

JUDGES = ("auto", "heuristic", "learned", "llm", "hybrid")
HISTORY_ENV = "ISSUETRIAGE_HISTORY"  # a labelled corpus (JSONL) of the profile's repository
NEIGHBOURS = 5  # as `eval --neighbours` measures it (docs/evaluation.md)


def get_judge(name: str = "auto", model_dir: str | Path | None = None, *, profile: str | Policy | None = None,
              history: History | str | Path | None = None, env: Mapping[str, str] | None = None,
              **options: Any) -> Judge:
    """Build a judge by name, for `profile` (a profile's name or folder, or a loaded Policy: a
    repository's own profile is built from its object, never looked up by its name).

    `auto`: the hybrid judge when an LLM is configured (environment or the profile's llm.toml),
    over the learned judge when `model_dir` is given, else the offline heuristic. `learned` checks
    the model was made for the profile.

    `history` (a History, a labelled corpus file, or a folder of `OWNER__NAME.jsonl` files, one
    per repository; default `$ISSUETRIAGE_HISTORY` from `env`): the repository's labelled past. The offline judge is then stacked with it
    (`judges/neighbours.py`, fitted once, at its first issue) and the LLM gets its examples from it.
    """
    from issuetriage.policy import load_profile

    policy = load_profile(profile) if isinstance(profile, str) else profile
    name = _resolve(name, model_dir, policy)
    past = resolve_history(history, policy, env)
    return _plain(name, model_dir, policy, options) if past is None else _judge(
        name, model_dir, policy, past, options)


def _resolve(name: str, model_dir: str | Path | None, policy: Policy | None) -> str:
    """`auto` and `heuristic` with a model, as the judge they mean."""
    if name == "auto":
        from issuetriage.judges.llm import load_config

        offline = "learned" if model_dir is not None else "heuristic"
        name = "hybrid" if load_config(policy.root if policy else None) is not None else offline
    return "learned" if name == "heuristic" and model_dir is not None else name


def resolve_history(source: History | str | Path | None, policy: Policy | None,
                    env: Mapping[str, str] | None = None) -> History | None:
    """The history a judge of `policy` gets: `source`, else `$ISSUETRIAGE_HISTORY` from `env`
    (a file, or a folder of OWNER__NAME.jsonl files); None when there is none for its repo."""
    from issuetriage.evidence.history import History, load_history
    from issuetriage.policy import load_profile

    if isinstance(source, History):
        return source
    source = source or (os.environ if env is None else env).get(HISTORY_ENV) or None
    if not source:
        return None
    policy = policy or load_profile()
    path = Path(source)
    if path.is_dir():  # one file per repository, OWNER__NAME.jsonl: a worker serving several
        path = path / f"{policy.meta.repo.replace('/', '__')}.jsonl"
        if not path.is_file():
            return None
    return load_history(path, policy)


def _judge(name: str, model_dir: str | Path | None, policy: Policy | None, past: History,
           options: dict[str, Any]) -> Judge:
    """A judge whose offline half is stacked with the repository's history."""
    from issuetriage.judges.neighbours import NeighbourVote

    if name in ("llm", "hybrid"):
        offline = NeighbourVote(_plain("learned" if model_dir else "heuristic", model_dir, policy, {}),
                                past, NEIGHBOURS)
        return _plain(name, model_dir, policy, {**options, "offline": offline, "history": past})
    return NeighbourVote(_plain(name, model_dir, policy, options), past, NEIGHBOURS)  # type: ignore[return-value]  # a Judge


def _plain(name: str, model_dir: str | Path | None, policy: Policy | None,
           options: dict[str, Any]) -> Judge:
    from issuetriage.policy import load_profile

    if name == "heuristic":
        return HeuristicJudge()
    if name == "learned":
        if model_dir is None:
            raise UserError("the learned judge needs --model MODEL_DIR (make one with `issuetriage train`)")
        from issuetriage.judges.learned import load_judge

        return load_judge(Path(model_dir), profile=(policy or load_profile()).name)
    if name in ("llm", "hybrid"):
        from issuetriage.errors import ConfigError
        from issuetriage.judges.llm import load_config, make_judge

        policy = policy or load_profile()
        config = load_config(policy.root)  # the environment, and llm.toml of a shipped or local profile
        if config is None:
            raise ConfigError("no LLM configured: set ISSUETRIAGE_LLM_MODEL (and the provider's key)")
        offline = options.pop("offline", None) or _plain("learned" if model_dir else "heuristic", model_dir, policy, {})
        return make_judge(config, policy, offline, mode=name, **options)  # type: ignore[arg-type]  # llm or hybrid
    raise UserError(f"unknown judge {name!r} (choose from {', '.join(JUDGES)})")
