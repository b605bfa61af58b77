"""The `issuetriage` command.

`main` is the console entry point. Claude Code runs `issuetriage hook ...` on every matching tool
call, so that one command is dispatched here directly, before the CLI framework and the command
modules are imported; everything else goes to the typer app in `cli.app`.

Start-up (imports, pydantic's model builds, typer's command table) creates some 200,000 objects
that all stay alive; the cyclic garbage collector would walk them again and again for nothing,
a fifth of what `--help` or a hook call costs. So it is off until a command runs (`cli.app`'s
root callback turns it back on) and for the whole of a hook call, a short process.
"""

from __future__ import annotations

import gc
import sys


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    collecting = gc.isenabled()
    gc.disable()
    try:
        if len(args) == 2 and args[0] == "hook" and args[1] in {"pre-tool-use", "post-tool-use"}:
            raise SystemExit(hook(args[1]))
        from issuetriage.cli.app import main as app_main

        app_main(args)
    finally:
        if collecting:
            gc.enable()


def hook(event: str) -> int:
    """Run one Claude Code hook on stdin; exit 2 (block) on any failure, never 1."""
    try:
        from issuetriage.agents.hooks import run

        reply = run(event, sys.stdin.buffer.read())  # bytes: undecodable input blocks, never crashes
    except Exception as exc:  # noqa: BLE001 - a hook that crashes must block, not let the call run
        sys.stderr.write(f"issuetriage hook failed, blocking: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}\n")
        return 2
    if reply.stdout:
        sys.stdout.write(reply.stdout + "\n")
    if reply.stderr:
        sys.stderr.write(reply.stderr)
    return reply.exit_code
