"""The `issuetriage` command.

`main` is the console entry point. Claude Code runs `issuetriage hook ...` on every matching tool
call, so that one command is dispatched here directly, before the CLI framework and the command
modules are imported; everything else goes to the typer app in `cli.app`.

Start-up (imports, pydantic's model builds, typer's command table) creates tens of thousands of
objects that all stay alive; the cyclic garbage collector would walk them again and again for
nothing. So it is off until a command runs (`cli.app`'s root callback turns it back on) and for
the whole of a hook call, a short process. And a hook process, once its answer is written and
flushed, ends at once: tearing down the interpreter (a last collection, every module's
finalization) would cost about a sixth of the call and change nothing.

For the same start-up, each command imports the use case it runs (`act/`, the adapters) inside
its own body: a command loads only what it runs. That is the rule for every module of `cli/`;
elsewhere an import inside a function is the exception and says why (`# lazy: ...`,
tests/test_layers.py).
"""

from __future__ import annotations

import gc
import os
import sys


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    collecting = gc.isenabled()
    gc.disable()
    try:
        if len(args) == 2 and args[0] == "hook" and args[1] in {"pre-tool-use", "post-tool-use"}:
            code = hook(args[1])
            if argv is None:  # this process is the hook (the console script, `python -m`)
                _exit_now(code)
            raise SystemExit(code)
        from issuetriage.cli.app import main as app_main

        app_main(args)
    finally:
        if collecting:
            gc.enable()


def _exit_now(code: int) -> None:
    """End the process with `code` once stdout and stderr are flushed; an answer that cannot be
    written blocks the call (2), where the interpreter's own exit would say 120 and let it run."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        code = 2
    os._exit(code)


def hook(event: str) -> int:
    """Run one Claude Code hook on stdin; exit 2 (block) on any failure, never 1."""
    try:
        from issuetriage.agents.hooks import run

        reply = run(event, sys.stdin.buffer.read())  # bytes: undecodable input blocks, never crashes
    except Exception as exc:  # noqa: BLE001 - a hook that crashes must block, not let the call run
        sys.stderr.write(f"issuetriage hook failed, blocking: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}\n")
        return 2
    try:
        if reply.stdout:
            sys.stdout.write(reply.stdout + "\n")
            sys.stdout.flush()
        if reply.stderr:
            sys.stderr.write(reply.stderr)
    except OSError:  # nobody gets the answer (a closed pipe): block, as for any failure
        return 2
    return reply.exit_code
