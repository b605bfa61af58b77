"""The `issuetriage` command: a thin shell that parses arguments and calls one library function.

Each feature registers its commands from its own module, listed in COMMAND_MODULES.
"""

from __future__ import annotations

import gc
import importlib
import sys
from typing import Annotated

import typer

try:  # typer >= 0.29 vendors its own click; older releases use the click package
    from typer._click import exceptions as click_exceptions
except ImportError:  # pragma: no cover - depends on the installed typer
    import click.exceptions as click_exceptions  # type: ignore[no-redef]

from issuetriage.cli.help import load_renderer, wants_help
from issuetriage.cli.options import json_alias
from issuetriage.errors import TriageError

# Exit codes (README "Exit codes"): 0 done; 1 ran, but the outcome is not what was asked (a
# live triage GitHub does not show, a backlog item that failed); 2 bad input, configuration,
# store or GitHub error, nothing half-written; 130 interrupted.
app = typer.Typer(
    name="issuetriage",
    help="Triage GitHub issues with a fixed decision tree, policy as data and one guard.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version  # ~15 ms: only for --version

    try:
        return version("issuetriage")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown"


def _show_version(value: bool) -> None:
    if value:
        typer.echo(f"issuetriage {_version()}")
        raise typer.Exit()


@app.callback()
def _root(version_: Annotated[bool, typer.Option(
        "--version", callback=_show_version, is_eager=True, help="Print the version and exit.")] = False) -> None:
    """Triage GitHub issues with a fixed decision tree, policy as data and one guard."""
    gc.enable()  # a command runs: start-up is over (`issuetriage.cli.main` turned it off)

COMMAND_MODULES = (
    "issuetriage.cli.engine",
    "issuetriage.cli.profile",
    "issuetriage.cli.init",
    "issuetriage.cli.llm",
    "issuetriage.cli.github",
    "issuetriage.cli.learn",
    "issuetriage.cli.history",
    "issuetriage.cli.scrub",
    "issuetriage.cli.report",
    "issuetriage.cli.serve",
    "issuetriage.cli.reconcile",
    "issuetriage.cli.service",
)


_registered: list[str] = []


def _register() -> None:
    """Attach every command module's commands to the app, once per process (a second `main()` in
    the same process, as in tests, must not register them twice)."""
    for name in COMMAND_MODULES:
        if name not in _registered:
            importlib.import_module(name).register(app)
            _registered.append(name)


def fail(message: str, code: int = 2) -> None:
    """Print a one-line error and exit: the only way commands report failures."""
    first = " ".join(str(message).split())
    typer.echo(f"error: {first}", err=True)
    raise SystemExit(code)


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the app, turning our errors into one line and exit code 2."""
    _register()
    argv = json_alias(sys.argv[1:] if argv is None else list(argv))
    if wants_help(argv):
        load_renderer()  # typer's help renderer, without the rich parts it never uses here
    try:
        # standalone_mode=False returns a command's typer.Exit code instead of raising it
        code = app(args=argv, prog_name="issuetriage", standalone_mode=False)
        if isinstance(code, int) and code:
            raise SystemExit(code)
    except TriageError as exc:
        fail(str(exc), exc.exit_code)
    except typer.Abort:
        fail("aborted", 130)
    except click_exceptions.NoArgsIsHelpError as exc:
        typer.echo(exc.ctx.get_help() if exc.ctx else str(exc))
        raise SystemExit(0) from None
    except click_exceptions.ClickException as exc:
        fail(exc.format_message(), exc.exit_code)
    except typer.Exit as exc:
        raise SystemExit(exc.exit_code) from None
    except KeyboardInterrupt:
        fail("interrupted", 130)
    except BrokenPipeError:
        sys.stderr.close()
        raise SystemExit(1) from None


if __name__ == "__main__":
    main()
