"""`issuetriage history build|show`: the repository's labelled history, built once into a folder."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from issuetriage.cli.corpora import corpus_repo
from issuetriage.cli.options import Format, FormatOpt, ModelOpt, OptionalStoreOpt, ProfileOpt, emit
from issuetriage.cli.progress import steps
from issuetriage.errors import UserError
from issuetriage.policy import load_profile
from issuetriage.policy.discover import profile_for
from issuetriage.store.corpus import store_repo


def build_command(corpus: Path | None, store: str | None, out: Path, profile: str | None, model: Path | None,
                  update: bool, answers: Path | None = None, corrections: Path | None = None) -> dict[str, Any]:
    """Read the source, build the folder, remember it in the store when one is given."""
    from issuetriage.history.build import build  # lazy: CLI start-up
    from issuetriage.history.sources import from_corpus, from_store  # lazy: CLI start-up
    from issuetriage.judges.factory import NEIGHBOURS, get_judge  # lazy: CLI start-up
    from issuetriage.judges.history_folder import check_out  # lazy: CLI start-up

    if corpus is None and store is None:
        raise UserError("say what to build from: --corpus FILE (JSONL, or a `gh issue list --json` array) "
                        "or --store DB")
    db = _open_store(store) if store else None
    try:
        repo = corpus_repo(corpus) if corpus is not None else store_repo(db) if db is not None else None
        policy = load_profile(profile_for(profile, repo))
        check_out(out)  # before reading, which can take a while
        taught = _taught(policy, answers, corrections)
        base = get_judge("learned" if model else "heuristic", model, profile=policy, env={})
        source = from_corpus(corpus, policy) if corpus is not None else from_store(db, policy)
        for problem in source.skipped:
            typer.echo(f"warning: {corpus}: skipped {problem}", err=True)
        with steps() as progress:
            manifest = build(source, policy, out, base, NEIGHBOURS, update=update, progress=progress,
                             taught=taught)
        if db is not None:
            from issuetriage.store.fts import remember_folder  # lazy: CLI start-up

            remember_folder(db, policy.meta.repo, out, manifest)
    finally:
        if db is not None:
            db.close()
    return {"folder": str(out), **{k: manifest[k] for k in ("profile", "repo", "built_at", "seconds")},
            **manifest["counts"], "source": manifest["source"]["name"]}


def _taught(policy: Any, answers: Path | None, corrections: Path | None) -> Any:
    """Recorded answers and corrections to learn from (corrections win); checked before building."""
    from issuetriage.judges.taught import evidence  # lazy: CLI start-up

    return evidence(policy, answers, corrections)


def _open_store(store: str) -> Any:
    from issuetriage.store.sqlite import Store  # lazy: CLI start-up

    return Store(store, create=False)


def register(app: typer.Typer) -> None:
    """Attach `history build` and `history show`."""
    history_app = typer.Typer(help="The repository's labelled history, built once into a folder.",
                              no_args_is_help=True)

    @history_app.command("build")
    def build_cmd(
        out: Annotated[Path, typer.Option("--out", help="The history folder to write (replaced whole).")],
        corpus: Annotated[Optional[Path], typer.Option(
            "--corpus", help="Labelled issues: JSONL, or a `gh issue list --json number,title,body,labels,state` "
                             "array.")] = None,
        store: OptionalStoreOpt = None,
        profile: ProfileOpt = None,
        model: ModelOpt = None,
        update: Annotated[bool, typer.Option(
            "--update", help="Refresh an existing folder: index only what changed, refit the learned parts.")] = False,
        answers: Annotated[Optional[Path], typer.Option(
            "--answers", help="Recorded LLM answers (ISSUETRIAGE_LLM_RECORD JSONL) to learn from, "
                              "kept apart from maintainers' labels.")] = None,
        corrections: Annotated[Optional[Path], typer.Option(
            "--corrections", help="Corrections to learn from (`issuetriage corrections --out`).")] = None,
        fmt: FormatOpt = Format.text,
    ) -> None:
        """Build the history folder every judge loads. Example: issuetriage history build --store t.db --out history/"""
        summary = build_command(corpus, store, out, profile, model, update, answers, corrections)
        emit(fmt, summary, "\n".join(f"{key}: {value}" for key, value in summary.items()))

    @history_app.command("show")
    def show_cmd(folder: Annotated[Path, typer.Argument(help="A history folder.")],
                 fmt: FormatOpt = Format.text) -> None:
        """Print a history folder's manifest. Example: issuetriage history show history/"""
        from issuetriage.judges.history_folder import read_manifest  # lazy: CLI start-up

        manifest = read_manifest(folder)
        emit(fmt, manifest, "\n".join(f"{key}: {value}" for key, value in manifest.items() if key != "files"))

    app.add_typer(history_app, name="history")
