"""``clear-rag serve``: the local page and its API over the store."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from clear_rag.cli.app import (
    DEFAULT_STORE,
    ChatOption,
    ConfigOption,
    EmbedderOption,
    RerankerOption,
    StoreOption,
    SupportOption,
    TimeoutOption,
    app,
    fail,
    open_existing,
)
from clear_rag.errors import ClearRagError, ConfigError
from clear_rag.providers.select import DEFAULT_CHAT, DEFAULT_EMBEDDER

LOOPBACK = "127.0.0.1"
MAX_PORT = 65535


@app.command("serve")
def serve_command(
    store: StoreOption = Path(DEFAULT_STORE),
    config: ConfigOption = None,
    embedder: EmbedderOption = DEFAULT_EMBEDDER,
    chat: ChatOption = DEFAULT_CHAT,
    reranker: RerankerOption = None,
    support: SupportOption = None,
    timeout: TimeoutOption = None,
    host: Annotated[
        str, typer.Option(help="Address to listen on. Only this machine can reach 127.0.0.1.")
    ] = LOOPBACK,
    port: Annotated[int, typer.Option(help="Port to listen on (0: any free port).")] = 8000,
    open_page: Annotated[bool, typer.Option("--open", help="Open the page in a browser.")] = False,
) -> None:
    """Serve the chat page: retrieval streamed stage by stage, then the answer, with its trace.

    Bound to 127.0.0.1 unless --host says otherwise: the page answers from your documents to whoever
    can reach it, with no login. It answers only requests addressed to 127.0.0.1, localhost or
    --host, and API requests only from its own page or from programs, never from another site's page.
    """
    from clear_rag.cli.ask import run_config
    from clear_rag.index import compiled
    from clear_rag.web.app import create_app
    from clear_rag.web.guard import allowed_hosts
    from clear_rag.web.runner import Models
    from clear_rag.web.serving import make_server

    try:
        _check_port(port)
        opened = open_existing(store)
        settings = run_config(opened, config, reranker, support)
        models = Models.load(settings, embedder=embedder, chat=chat, timeout=timeout)
        application = create_app(opened, settings, models, hosts=allowed_hosts(host))
    except ClearRagError as err:
        raise fail(err) from None
    # The search kernels compile (or load from numba's cache) in the background while the server
    # starts; until they are ready, questions are searched with numpy (clear_rag.index.compiled).
    compiled.start()
    if host != LOOPBACK:
        typer.echo(
            f"warning: listening on {host}: anyone who can reach this address can read your documents "
            "through the page; there is no login. Use --host 127.0.0.1 to keep it on this machine. "
            f"It answers requests addressed to {', '.join(allowed_hosts(host))} only",
            err=True,
        )
    for role, reason in sorted(models.missing.items()):
        typer.echo(f"note: no {role} here ({reason}); the page shows what needs it as unavailable")
    server = make_server(application, host=host, port=port)
    if open_page:
        import threading
        import webbrowser

        def opener() -> None:
            # wait on readiness, not a fixed delay: the browser opens once the socket listens
            while not server.started and not server.should_exit:
                threading.Event().wait(0.05)
            if server.started:
                webbrowser.open(f"http://{host}:{_bound_port(server, port)}/")

        threading.Thread(target=opener, daemon=True).start()
    typer.echo(f"clear-rag: serving {store} on http://{host}:{port}/ (Ctrl-C stops it)")
    try:
        server.run()
    finally:
        opened.close()


def _check_port(port: int) -> None:
    """A port uvicorn can listen on; the predecessor took --port 99999 and kept running, serving nothing."""
    if not 0 <= port <= MAX_PORT:
        raise ConfigError(
            "is not a port number",
            field="--port",
            value=port,
            fix=f"Use a number from 1 to {MAX_PORT}, or 0 for any free port",
        )


def _bound_port(server: object, asked: int) -> int:
    servers = getattr(server, "servers", [])
    for listening in servers:
        for sock in listening.sockets:
            return int(sock.getsockname()[1])
    return asked
