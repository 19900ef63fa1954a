"""What a request must be before the app reads it, so that a web page cannot use the local server.

The server has no login: whoever can send it a request can ask questions and read every stored trace.
Bound to 127.0.0.1 that is only this machine, but a browser on this machine runs other sites' pages,
and the predecessor answered them. A page on another origin submitted a form that the server ran and
stored; after DNS rebinding (the attacker's name made to resolve to 127.0.0.1, so the page counts as
same-origin) it read the traces. So every request is checked, in this order, before any handler:

- its ``Host`` is a name the server was started for (``allowed_hosts``): a rebound name is refused;
- an API request (``/api/...``) that names another origin in ``Origin`` or ``Sec-Fetch-Site`` is
  refused: the page's own fetches are same-origin, and programs (curl, httpx) send neither header;
- a body is ``application/json``, which a form on another site cannot send, and which a script there
  can send only after a CORS preflight that this server never grants (it sends no CORS headers);
- a body is at most ``MAX_BODY_BYTES``, counted while it is read, and whole within ``BODY_TIMEOUT_S``:
  the predecessor read a 300 MB body whole before refusing it, and held a body trickled one byte at
  a time for as long as the client liked. The headers' own deadline is the protocol's
  (``clear_rag.web.serving``), since the app never sees a request whose headers did not arrive.

Every refusal, and every failure of a handler, is JSON ``{"error": one line}`` (``error``); a refusal
made before the body was read closes the connection, so the rest of the body is never read.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from clear_rag.errors import ClearRagError

LOOPBACK_NAMES = ("127.0.0.1", "localhost")
MAX_BODY_BYTES = 1 << 20  # a chat request is a question of 4,000 characters and a few settings
BODY_TIMEOUT_S = 10.0  # a body of MAX_BODY_BYTES crosses loopback in milliseconds
SAME_SITE = ("same-origin", "none")  # Sec-Fetch-Site of the page's own fetches, and of a typed URL
JSON = "application/json"


def allowed_hosts(host: str) -> tuple[str, ...]:
    """The names a server listening on ``host`` answers to: 127.0.0.1, localhost and ``host``."""
    bare = host.strip("[]").lower()
    return tuple(dict.fromkeys([*LOOPBACK_NAMES, bare]))


def error(status: int, message: str, *, close: bool = False) -> JSONResponse:
    """The one shape of an error answer: ``{"error": message}`` on one line; ``close`` ends the
    connection after it (a body left unread is then never read)."""
    headers = {"connection": "close"} if close else None
    return JSONResponse({"error": " ".join(message.split())}, status_code=status, headers=headers)


async def http_error(request: Request, exc: Exception) -> JSONResponse:
    """Starlette's own refusals (a static file that is not there, say) as JSON, not plain text."""
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    detail = exc.detail if isinstance(exc, HTTPException) else str(exc)
    return error(status, f"{request.method} {request.url.path}: {detail}")


async def unexpected(request: Request, exc: Exception) -> JSONResponse:
    """A handler that failed on something no check foresaw: a 500 that says so in one JSON line (the
    predecessor answered a bare "Internal Server Error"); the traceback still goes to the server's log."""
    what = f"{type(exc).__name__}: {exc}"[:300]
    return error(
        500,
        f"{request.method} {request.url.path}: failed unexpectedly ({what}). The server goes on "
        "serving; please report it with the request that caused it",
    )


class Guard:
    """ASGI middleware that refuses, before the app reads it, a request this server must not answer."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        hosts: Sequence[str],
        max_body_bytes: int = MAX_BODY_BYTES,
        body_timeout_s: float = BODY_TIMEOUT_S,
    ) -> None:
        if not hosts:
            raise ValueError("Guard needs at least one host name to answer to, such as 127.0.0.1")
        if max_body_bytes < 1 or body_timeout_s <= 0:
            raise ValueError(
                f"max_body_bytes={max_body_bytes}, body_timeout_s={body_timeout_s}: both above 0"
            )
        self.app = app
        self.hosts = tuple(h.lower() for h in hosts)
        self.max_body_bytes = max_body_bytes
        self.body_timeout_s = body_timeout_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        refusal = self._refusal(scope, headers)
        if refusal is None and _has_body(headers):
            read = await self._read_body(receive)
            if read is None:
                return  # the client went away while sending: there is no one to answer
            if isinstance(read, bytes):
                receive = _replayed(read, receive)
            else:
                refusal = read
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _refusal(self, scope: Scope, headers: Headers) -> JSONResponse | None:
        """The answer to a request refused on its headers alone, or None."""
        return (
            self._foreign_host(scope, headers)
            or _other_site(scope, headers)
            or _not_json(headers)
            or self._declared_too_large(headers)
        )

    def _foreign_host(self, scope: Scope, headers: Headers) -> JSONResponse | None:
        given = headers.get("host", "")
        if _host_name(given) in self.hosts:
            return None
        port = (scope.get("server") or (None, None))[1]
        page = f"http://{self.hosts[0]}" + (f":{port}" if port else "")
        why = ClearRagError(
            f"is not a name this server answers to ({', '.join(self.hosts)}); it refuses others so "
            "that a web page cannot reach it by DNS rebinding",
            field="Host",
            value=given,
            fix=f"Open {page}/, or start the server with --host NAME to answer to NAME",
        )
        return error(400, str(why), close=True)

    def _declared_too_large(self, headers: Headers) -> JSONResponse | None:
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_body_bytes:
            return self._too_large(f"Content-Length: {int(declared):,}")
        return None

    async def _read_body(self, receive: Receive) -> bytes | JSONResponse | None:
        """The whole body, counted as it arrives: a refusal as soon as it passes the size or the time
        allowed; None when the client left."""
        chunks: list[bytes] = []
        size = 0
        try:
            async with asyncio.timeout(self.body_timeout_s):
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        return None
                    chunk = message.get("body", b"")
                    size += len(chunk)
                    if size > self.max_body_bytes:
                        return self._too_large("sent in chunks")
                    chunks.append(chunk)
                    if not message.get("more_body", False):
                        return b"".join(chunks)
        except TimeoutError:
            why = ClearRagError(
                f"did not arrive within {self.body_timeout_s:g} s ({size:,} bytes came); the connection "
                "is closed",
                field="the request body",
                fix="Send the whole body at once, as a browser or an HTTP library does",
            )
            return error(408, str(why), close=True)

    def _too_large(self, how: str) -> JSONResponse:
        why = ClearRagError(
            f"holds more than the {self.max_body_bytes:,} bytes a request may ({how}); refused before "
            "it was read",
            field="the request body",
            fix="A chat request is a question and a few settings: send less. To search a document, "
            "ingest it (clear-rag ingest PATH)",
        )
        return error(413, str(why), close=True)


def _other_site(scope: Scope, headers: Headers) -> JSONResponse | None:
    """A refusal of an API request that says it comes from another site: by ``Origin`` (which names
    it), else by ``Sec-Fetch-Site`` (which a request without ``Origin``, an image's say, still has)."""
    if not scope["path"].startswith("/api/"):
        return None  # the page and its files: another site may link to them, and cannot read them
    own = f"{scope.get('scheme', 'http')}://{headers.get('host', '')}".lower()
    for name, fine in (("origin", (own,)), ("sec-fetch-site", SAME_SITE)):
        value = headers.get(name)
        if value is None or value.lower() in fine:
            continue
        why = ClearRagError(
            f"is another site, and this server answers its API only to its own page ({own}), so that "
            "a page you visit cannot ask it questions or read your traces",
            field=_spelt(name),
            value=value,
            fix=f"Use the page at {own}/, or call the API from a program, which sends no {_spelt(name)}",
        )
        return error(403, str(why), close=True)
    return None


def _not_json(headers: Headers) -> JSONResponse | None:
    kind = headers.get("content-type")
    if not _has_body(headers) or (kind or "").split(";")[0].strip().lower() == JSON:
        return None
    why = ClearRagError(
        "is not JSON; this server reads only application/json bodies, which no form of another site can send",
        field="Content-Type",
        value=kind or "",
        fix="Send the body as JSON with Content-Type: application/json",
    )
    return error(415, str(why), close=True)


def _has_body(headers: Headers) -> bool:
    return "transfer-encoding" in headers or headers.get("content-length", "0") not in ("", "0")


def _host_name(header: str) -> str:
    """The host of a ``Host`` header without its port, lower case (``[::1]:8000`` is ``::1``); empty
    when there is none or it does not parse."""
    try:
        return (urlsplit(f"//{header}").hostname or "") if header else ""
    except ValueError:
        return ""


def _spelt(header: str) -> str:
    """A header's name as people write it: ``sec-fetch-site`` is ``Sec-Fetch-Site``."""
    return "-".join(part.capitalize() for part in header.split("-"))


def _replayed(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives the app the body already read, then listens on (for a disconnect)."""
    given = False

    async def replay() -> Message:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
