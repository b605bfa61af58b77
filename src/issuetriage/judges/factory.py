"""Judge factory: the CLI and evaluation name a judge; this builds it (heavy ones lazily)."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from issuetriage.errors import ConfigError, UserError
from issuetriage.judges.base import Judge
from issuetriage.judges.heuristic import HeuristicJudge
from issuetriage.policy import load_profile

if TYPE_CHECKING:
    from issuetriage.judges.history_folder import Built
    from issuetriage.judges.llm.judge import LivePrecision
    from issuetriage.policy import Policy


class Store(Protocol):
    """What a judge needs of a store (`store.sqlite.Store` has it): the history folder it
    remembers for a repository, and search over its live mirror."""

    def history_folder(self, repo: str) -> Path | None: ...

    def history_index(self) -> Any: ...

    def bot_labels_kept(self, repo: str, bots: Sequence[str]) -> dict[str, tuple[int, int]]: ...

JUDGES = ("auto", "heuristic", "learned", "llm", "hybrid")
# a built history folder (`issuetriage history build`), a labelled corpus (JSONL, fitted at start),
# or a folder of either per repository (OWNER__NAME/ or OWNER__NAME.jsonl)
HISTORY_ENV = "ISSUETRIAGE_HISTORY"
NEIGHBOURS = 5  # as `eval --neighbours` measures it (docs/evaluation.md)


def get_judge(name: str = "auto", model_dir: str | Path | None = None, *, profile: str | Policy | None = None,
              history: Built | str | Path | None = None, env: Mapping[str, str] | None = None,
              store: Store | None = None, **options: Any) -> Judge:
    """Build a judge by name, for `profile` (a profile's name or folder, or a loaded Policy: a
    repository's own profile is built from its object, never looked up by its name).

    `auto`: the hybrid judge when an LLM is configured (environment or the profile's llm.toml),
    over the learned judge when `model_dir` is given, else the offline heuristic. `learned` checks
    the model was made for the profile.

    `history` (see `resolve_history`; default `$ISSUETRIAGE_HISTORY` from `env`, else the folder
    `store` remembers for the repository): the repository's labelled past. The offline judge is
    then stacked with it (`judges/neighbours.py`) and the LLM gets its examples from it; with a
    `store`, similar past issues are read from the store's live mirror, and a hybrid judge
    routes by what humans did with the bot's labels (`live_precision`).
    """

    policy = load_profile(profile) if isinstance(profile, str) else profile
    name = _resolve(name, model_dir, policy)
    if name == "hybrid" and store is not None and "live_precision" not in options:
        options = {**options, "live_precision": live_precision(store, policy or load_profile())}
    past = resolve_history(history, policy, env, store)
    return _plain(name, model_dir, policy, options) if past is None else _judge(
        name, model_dir, policy, past, options)


def live_precision(store: Store, policy: Policy) -> dict[str, LivePrecision]:
    """Per label, what humans did with the bot's own applications of it in `policy`'s repository
    (`LivePrecision`): read once, when a hybrid judge is built, never per issue."""
    from issuetriage.judges.llm.judge import LivePrecision  # lazy: the LLM package only for an LLM judge

    counts = store.bot_labels_kept(policy.meta.repo, policy.meta.live.bot_accounts)
    return {label: LivePrecision(kept, applied) for label, (kept, applied) in counts.items()}


def _resolve(name: str, model_dir: str | Path | None, policy: Policy | None) -> str:
    """`auto` and `heuristic` with a model, as the judge they mean."""
    if name == "auto":
        from issuetriage.judges.llm import load_config  # lazy: the LLM package only for an auto judge

        offline = "learned" if model_dir is not None else "heuristic"
        name = "hybrid" if load_config(policy.root if policy else None) is not None else offline
    return "learned" if name == "heuristic" and model_dir is not None else name


def resolve_history(source: Built | str | Path | None, policy: Policy | None,
                    env: Mapping[str, str] | None = None, store: Store | None = None) -> Built | None:
    """The history a judge of `policy` gets: `source`, else `$ISSUETRIAGE_HISTORY` from `env`,
    else the folder `store` remembers for the repository; None when there is none for its repo.

    A built folder is loaded, never refitted (with a `store`, candidates come from the store's
    live index). A labelled corpus (JSONL) still works: it is fitted at start, with a warning.
    A folder without a manifest holds one per repository: `OWNER__NAME/` or `OWNER__NAME.jsonl`."""

    if source is not None and not isinstance(source, (str, Path)):
        return source  # loaded already
    policy = policy or load_profile()
    path = history_path(source, policy, env, store)
    if path is None:
        return None
    from issuetriage.judges import history_folder  # lazy: numpy and scipy only with a history

    if not path.exists():
        raise history_folder.HistoryError(f"{path}: no history folder or file here (build one with "
                                          "`issuetriage history build`)")
    if path.is_dir():
        return history_folder.load_folder(path, policy, (lambda folder: store.history_index())
                                          if store is not None else None)
    return _fitted_at_start(path, policy)


def history_path(source: str | Path | None, policy: Policy, env: Mapping[str, str] | None = None,
                 store: Store | None = None) -> Path | None:
    """Where `resolve_history` reads the repository's history from (None: nowhere)."""
    source = source or (os.environ if env is None else env).get(HISTORY_ENV) or _remembered(store, policy)
    if not source:
        return None
    from issuetriage.judges.history_folder import is_history_folder  # lazy: numpy and scipy only with a history

    path = Path(source)
    if path.is_dir() and not is_history_folder(path):  # one per repository: a worker serving several
        stem = policy.meta.repo.replace("/", "__")
        return next((p for p in (path / stem, path / f"{stem}.jsonl") if p.exists()), None)
    return path


def history_stamp(policy: Policy, env: Mapping[str, str] | None = None, store: Store | None = None) -> str:
    """What the repository's history is now (its path and when its manifest or file last changed),
    so a long-running worker reloads a folder `history build --update` replaced."""
    path = history_path(None, policy, env, store)
    if path is None:
        return ""
    from issuetriage.judges.history_folder import MANIFEST  # lazy: numpy and scipy only with a history

    try:
        return f"{path}@{(path / MANIFEST if path.is_dir() else path).stat().st_mtime_ns}"
    except OSError:
        return f"{path}@missing"


def _remembered(store: Store | None, policy: Policy) -> str | None:
    if store is None:
        return None
    folder = store.history_folder(policy.meta.repo)
    return str(folder) if folder is not None else None


def _fitted_at_start(path: Path, policy: Policy) -> Built:
    """A labelled corpus file, indexed in memory; its stack is fitted for the judge it stacks."""
    from issuetriage.judges.history_folder import Built  # lazy: numpy and scipy only with a history
    from issuetriage.judges.learned.corpus import load_history  # lazy: numpy and scipy only with a history

    history, past = load_history(path, policy)
    sys.stderr.write(f"warning: {path}: a JSONL history is indexed and fitted at every start; build a "
                     "folder once with `issuetriage history build --corpus FILE --out DIR`\n")
    return Built(history, None, {}, path, past=past)


def _judge(name: str, model_dir: str | Path | None, policy: Policy | None, past: Built,
           options: dict[str, Any]) -> Judge:
    """A judge whose offline half is stacked with the repository's history."""
    offline = _plain("learned" if model_dir else "heuristic", model_dir, policy, {})
    if name in ("llm", "hybrid"):
        return _plain(name, model_dir, policy, {**options, "offline": _stacked(offline, past, policy),
                                                "history": past.history})
    return _stacked(_plain(name, model_dir, policy, options), past, policy)


def _stacked(base: Judge, past: Built, policy: Policy | None) -> Judge:
    from issuetriage.judges.history_folder import HistoryError  # lazy: numpy and scipy only with a history
    from issuetriage.judges.neighbours import NeighbourVote  # lazy: numpy and scipy only with a history
    from issuetriage.judges.stacking import fit_stack  # lazy: numpy and scipy only with a history

    if past.past is not None:
        stack = fit_stack(base, past.history, past.past, policy or load_profile(), NEIGHBOURS)
    elif past.stack is not None and past.manifest.get("base_judge") != base.name:
        raise HistoryError(f"{past.path}: history fitted over the {past.manifest.get('base_judge')} judge, "
                           f"not the {base.name} judge; build it with the same --model")
    else:
        stack = past.stack
    return NeighbourVote(base, past.history, stack, NEIGHBOURS)  # type: ignore[return-value]  # a Judge


def _plain(name: str, model_dir: str | Path | None, policy: Policy | None,
           options: dict[str, Any]) -> Judge:

    if name == "heuristic":
        return HeuristicJudge()
    if name == "learned":
        if model_dir is None:
            raise UserError("the learned judge needs --model MODEL_DIR (make one with `issuetriage train`)")
        from issuetriage.judges.learned import load_judge  # lazy: the learned package loads scipy

        return load_judge(Path(model_dir), profile=(policy or load_profile()).name)
    if name in ("llm", "hybrid"):
        from issuetriage.judges.llm import load_config, make_judge  # lazy: the LLM package only for an LLM judge

        policy = policy or load_profile()
        config = load_config(policy.root)  # the environment, and llm.toml of a shipped or local profile
        if config is None:
            raise ConfigError("no LLM configured: set ISSUETRIAGE_LLM_MODEL (and the provider's key)")
        offline = options.pop("offline", None) or _plain("learned" if model_dir else "heuristic", model_dir, policy, {})
        return make_judge(config, policy, offline, mode=name, **options)  # type: ignore[arg-type]  # llm or hybrid
    raise UserError(f"unknown judge {name!r} (choose from {', '.join(JUDGES)})")
