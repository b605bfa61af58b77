"""The `issuetriage` command: a thin shell that parses arguments and calls one library function.

Each feature registers its commands from its own module, listed in COMMAND_MODULES.
"""

from __future__ import annotations

import importlib
import sys

import click
import typer

from issuetriage.errors import TriageError

app = typer.Typer(
    name="issuetriage",
    help="Triage GitHub issues with a fixed decision tree, policy as data and one guard.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

COMMAND_MODULES = (
    "issuetriage.commands.engine",
    "issuetriage.commands.scrub",
)


def _register() -> None:
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(app)


def fail(message: str, code: int = 2) -> None:
    """Print a one-line error and exit: the only way commands report failures."""
    first = " ".join(str(message).split())
    typer.echo(f"error: {first}", err=True)
    raise SystemExit(code)


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the app, turning our errors into one line and exit code 2."""
    _register()
    try:
        app(args=argv, standalone_mode=False)
    except TriageError as exc:
        fail(str(exc), exc.exit_code)
    except click.exceptions.Abort:
        fail("aborted", 130)
    except click.ClickException as exc:
        fail(exc.format_message(), exc.exit_code)
    except click.exceptions.Exit as exc:
        raise SystemExit(exc.exit_code) from None
    except KeyboardInterrupt:
        fail("interrupted", 130)
    except BrokenPipeError:
        sys.stderr.close()
        raise SystemExit(1) from None


if __name__ == "__main__":
    main()
