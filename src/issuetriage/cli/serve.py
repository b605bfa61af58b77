"""`issuetriage serve`: the local review app."""

from __future__ import annotations

from typing import Annotated

import typer

from issuetriage.cli.options import ProfileOpt, StoreOpt
from issuetriage.policy import load_profile


def register(app: typer.Typer) -> None:
    """Attach this module's commands to the main app."""

    @app.command("serve")
    def serve_cmd(
        store: StoreOpt,
        profile: ProfileOpt = "pytorch",
        host: Annotated[str, typer.Option("--host", help="Address to bind (loopback unless --allow-remote).")] = "127.0.0.1",
        port: Annotated[int, typer.Option("--port", min=0, max=65535)] = 8765,
        allow_remote: Annotated[bool, typer.Option("--allow-remote", help="Allow a non-loopback --host.")] = False,
        reviewer: Annotated[str, typer.Option("--reviewer", help="Name recorded with each review.")] = "local",
    ) -> None:
        """Serve the review queue and report on localhost. Example: issuetriage serve --store t.db"""
        from issuetriage.errors import UserError
        from issuetriage.store.engines import redacted
        from issuetriage.web.app import check_bind, create_app

        try:
            import uvicorn
        except ImportError:
            raise UserError("serve needs uvicorn: pip install 'issuetriage[web]'") from None

        check_bind(host, allow_remote)
        hosts = ["*"] if allow_remote else None
        app_ = create_app(store, load_profile(profile), reviewer, allowed_hosts=hosts)
        typer.echo(f"serving {redacted(store)} on http://{host}:{port}/ (Ctrl-C to stop)", err=True)
        uvicorn.run(app_, host=host, port=port, log_level="warning")
