"""Options several commands share, defined once."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

ProfileOpt = Annotated[str, typer.Option("--profile", help="Profile name or folder.")]
ModelOpt = Annotated[Optional[Path], typer.Option("--model", help="A model made by `issuetriage train`.")]
JudgeOpt = Annotated[str, typer.Option(
    "--judge", help="auto (learned with --model, hybrid when an LLM is configured, else heuristic), "
                    "heuristic, learned, llm or hybrid.")]
StoreOpt = Annotated[Path, typer.Option("--store", help="The local SQLite store.")]
