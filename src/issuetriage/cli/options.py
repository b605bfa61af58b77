"""Options several commands share, defined once, and the one way commands print results."""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

PROFILE_ENV = "ISSUETRIAGE_PROFILE"
STORE_ENV = "ISSUETRIAGE_STORE"


class Format(StrEnum):
    text = "text"
    json = "json"


ProfileOpt = Annotated[Optional[str], typer.Option(
    "--profile", envvar=PROFILE_ENV, help="Profile name or folder (default: the checkout's .github/issuetriage/, "
                                          "else the shipped profile that names the repository).")]
ModelOpt = Annotated[Optional[Path], typer.Option("--model", help="A model made by `issuetriage train`.")]
JudgeOpt = Annotated[str, typer.Option(
    "--judge", help="auto (learned with --model, hybrid when an LLM is configured, else heuristic), "
                    "heuristic, learned, llm or hybrid.")]
# a str, not a Path: a Path would fold the `//` of a postgresql:// URL
StoreOpt = Annotated[str, typer.Option("--store", envvar=STORE_ENV,
                                       help="The store: a SQLite file, or a postgresql:// URL.")]
OptionalStoreOpt = Annotated[Optional[str], typer.Option(
    "--store", envvar=STORE_ENV, help="Also record in this store (a SQLite file or a postgresql:// URL).")]
FormatOpt = Annotated[Format, typer.Option("--format", help="text or json (`--json` is the same as "
                                                            "`--format json`).")]
IssueFileOpt = Annotated[str, typer.Option(
    "--issue", help="Issue file: our JSON or JSONL records, REST JSON, or `gh issue view --json` "
                    "output; `-` reads stdin.")]


def emit(fmt: Format, data: Any, text: str) -> None:
    """Print a command's result: `data` as JSON, or `text` for people."""
    sys.stdout.write((json.dumps(data, indent=2) if fmt is Format.json else text).rstrip("\n") + "\n")


def json_alias(argv: list[str]) -> list[str]:
    """`--json` is `--format json` (before a `--`, where options end)."""
    end = argv.index("--") if "--" in argv else len(argv)
    head = [word for arg in argv[:end] for word in (("--format", "json") if arg == "--json" else (arg,))]
    return head + argv[end:]
