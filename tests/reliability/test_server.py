"""`clear-rag serve` against a hostile client, on a real server on 127.0.0.1 over the toy store: a web
page on another origin or behind DNS rebinding, requests that try to lift the server's bounds, bodies
nested, huge, not text or trickled, names too long, a result file that cannot be read, a bad port.

Each case asserts the exact one-line JSON error (or the CLI's line and exit code), that it came within a
bounded time, and that nothing ran: no trace is stored for a refused question. The browser and the
slow-connection cases are the probe's harness, kept as the slow tier (``-m slow``): a bounded number of
connections and pages, each wait ending as soon as what it waits for is there, loopback only.
"""

from __future__ import annotations

import select
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from clear_rag.cli import app as cli
from clear_rag.providers.fake import EchoChatModel, HashEmbedder, LexicalReranker
from clear_rag.results.files import write_result
from clear_rag.store import Store
from clear_rag.web.app import create_app
from clear_rag.web.guard import MAX_BODY_BYTES
from clear_rag.web.runner import Models
from clear_rag.web.serving import serving
from tests.conftest import toy_config
from tests.reliability.catalogue import Case, case, expect
from tests.web.projects import mini_result

BOUND_S = 20.0  # every refusal here comes within this, however loaded the machine; most in milliseconds
QUESTION = "when do disc brake pads need replacing"
REBINDING = (
    "it refuses others so that a web page cannot reach it by DNS rebinding. Open http://127.0.0.1:{port}/, "
    "or start the server with --host NAME to answer to NAME"
)
OTHER_SITE = (
    "is another site, and this server answers its API only to its own page (http://127.0.0.1:{port}), so "
    "that a page you visit cannot ask it questions or read your traces. Use the page at "
    "http://127.0.0.1:{port}/, or call the API from a program, which sends no"
)
RESULT_NAME = (
    "not a result file name ({length} characters, longer than any file's name may be). "
    "Name a file of results/ alone, e.g. tech"
)
NOT_TEXT = (
    "which is not text. Send text only: a character beyond U+FFFF is escaped in JSON as a pair of "
    "surrogates, never one alone"
)


def served(id: str, status: int, *, fault: str, message: str) -> Case:
    """A case of the server: the message is its JSON answer's ``error``, the status ends the fault."""
    return case(id, area="server", fault=f"{fault}; answered {status}", message=message)


HOST_FOREIGN = served(
    "server-host-foreign",
    400,
    fault="`GET /api/traces` with `Host: evil.example`, as a page does after DNS rebinding (it read every "
    "stored trace)",
    message=f"Host='evil.example': is not a name this server answers to (127.0.0.1, localhost); {REBINDING}",
)
ORIGIN_OTHER = served(
    "server-origin-other-site",
    403,
    fault="`POST /api/chat` with `Origin: http://127.0.0.1:9`, another origin on the same machine",
    message=f"Origin='http://127.0.0.1:9': {OTHER_SITE} Origin",
)
FETCH_SITE_CROSS = served(
    "server-fetch-site-cross-site",
    403,
    fault="`GET /api/traces` with `Sec-Fetch-Site: cross-site` and no Origin (an `<img>` or `<script>` "
    "of another site)",
    message=f"Sec-Fetch-Site='cross-site': {OTHER_SITE} Sec-Fetch-Site",
)
FORM_BODY = served(
    "server-body-form",
    415,
    fault="`POST /api/chat` with a form's body (`application/x-www-form-urlencoded`), which any site's "
    "form can send (it was run and stored)",
    message="Content-Type='application/x-www-form-urlencoded': is not JSON; this server reads only "
    "application/json bodies, which no form of another site can send. Send the body as JSON with "
    "Content-Type: application/json",
)
NESTED = {
    depth: served(
        f"server-json-nested-{depth}",
        400,
        fault=f"a chat request whose config nests {depth:,} objects deep (a bare 500, from a RecursionError)",
        message="the request body nests arrays or objects more than 8 deep; refused before parsing. "
        "A chat request needs four levels at most: the body, config, chunking, parsers",
    )
    for depth in (1000, 100_000)
}
LONG_NAME = {
    length: served(
        f"server-result-name-{length}",
        400,
        fault=f"`GET /api/results/NAME{suffix}` with a name of {length:,} characters (a bare 500, from "
        "an OSError: File name too long)",
        message=f"'{'x' * 40}'...: {RESULT_NAME.replace('{length}', f'{length:,}')}",
    )
    for length, suffix in ((300, ""), (5000, "/pinned/ROW"))
}
WRONG_TYPE = served(
    "server-chat-field-wrong-type",
    422,
    fault='a chat request with `"generate": "no"` (text where true or false goes)',
    message="request: generate='no': must be true or false. Send true to answer, false to retrieve only",
)
SURROGATE = served(
    "server-question-lone-surrogate",
    422,
    fault='a question holding a lone surrogate, `"pads \\ud800"` (accepted, then an empty 200)',
    message=f"request: question: holds a lone surrogate (\\ud800) at character 6, {NOT_TEXT}",
)
NUL = served(
    "server-question-nul",
    422,
    fault='a question holding a NUL character, `"pads\\u0000"`',
    message=f"request: question: holds a NUL character at character 5, {NOT_TEXT}",
)
NOT_UTF8 = served(
    "server-body-not-utf8",
    400,
    fault="a chat request body with a byte that is not UTF-8 (`0xff` inside the question)",
    message="the request body is not UTF-8 (byte 0xff at offset 14). Send JSON encoded as UTF-8",
)
HUGE_DECLARED = served(
    "server-body-300mb",
    413,
    fault="`POST /api/chat` with `Content-Length: 300000000` (a 300 MB body was read whole, peaking at "
    "1.17 GB, before it was refused); answered before one byte of it is sent",
    message="the request body: holds more than the 1,048,576 bytes a request may (Content-Length: "
    "300,000,000); refused before it was read. A chat request is a question and a few settings: send "
    "less. To search a document, ingest it (clear-rag ingest PATH)",
)
HUGE_CHUNKED = served(
    "server-body-chunked-over-cap",
    413,
    fault="a chunked body of 1 MiB and one byte, with no Content-Length: refused as the byte past the cap "
    "arrives",
    message="the request body: holds more than the 1,048,576 bytes a request may (sent in chunks); "
    "refused before it was read. A chat request is a question and a few settings: send less. To search "
    "a document, ingest it (clear-rag ingest PATH)",
)
HANDLER_FAILS = served(
    "server-handler-fails",
    500,
    fault="a handler that raises what no check foresaw (the store's trace list fails); it was a bare "
    "`Internal Server Error`",
    message="GET /api/traces: failed unexpectedly (RuntimeError: the disk went away). The server goes "
    "on serving; please report it with the request that caused it",
)
RESULTS_UNREADABLE = served(
    "server-results-file-unreadable",
    200,
    fault="`GET /api/results` with one file of results/ that is not JSON (the whole list was a 422); the "
    "others are listed",
    message="broken.json: is left out of the list: DuckDB cannot read it (Invalid Input Error: Malformed "
    'JSON in file "{path}", at byte 2 in record/value 2: unexpected end of data). Regenerate it, or move '
    "it out of the results folder",
)
PORT = case(
    "server-port-out-of-range",
    area="server",
    fault="`clear-rag serve --port 99999` (it kept running, listening nowhere)",
    message="error: --port=99999: is not a port number. Use a number from 1 to 65535, or 0 for any free port",
    exit_code=2,
)


def _ceiling(name: str, asked: float, ceiling: float) -> Case:
    return served(
        f"server-ceiling-{name.replace('_', '-')}",
        422,
        fault=f"a chat request with `config: {{{name}: {asked!r}}}` on a server whose {name} is "
        f"{ceiling!r} (it was accepted)",
        message=f"config: {name}={asked!r}: is above this server's ceiling of {ceiling:,}. A request may "
        f"lower {name}, never raise it: send at most {ceiling:,}, or start the server with a config that "
        f"sets {name} higher (clear-rag serve --config FILE)",
    )


LIFTED = {
    "answer_deadline_s": (1e12, 300.0),
    "max_answer_chars": (10**12, 20_000),
    "depth": (10**9, 100),
    "top_k": (10**9, 10),
    "shortlist": (10**9, 50),
    "budget_tokens": (10**9, 1500),
    "expand": (8, 0),
}
CEILINGS = {name: _ceiling(name, *values) for name, values in LIFTED.items()}


def _models() -> Models:
    return Models(HashEmbedder(dim=64), EchoChatModel(), lambda name: LexicalReranker(), {})


@pytest.fixture
def base(toy_store: Store) -> Iterator[str]:
    with serving(create_app(toy_store, toy_config(), _models())) as url:
        yield url


def _port(url: str) -> str:
    return url.rsplit(":", 1)[1]


def _refused(response: httpx.Response, status: int) -> str:
    """The one-line error of a JSON refusal."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json", response.headers
    message: str = response.json()["error"]
    assert "\n" not in message
    return message


def _timed(call: Callable[[], httpx.Response]) -> httpx.Response:
    began = time.monotonic()
    response = call()
    assert time.monotonic() - began < BOUND_S
    return response


def _chat(url: str, body: bytes, **headers: str) -> httpx.Response:
    sent = {"content-type": "application/json", **headers}
    return _timed(lambda: httpx.post(f"{url}/api/chat", content=body, headers=sent, timeout=BOUND_S))


def _nothing_ran(store: Store) -> None:
    assert store.traces(10) == []


# -- who may ask -----------------------------------------------------------------------------------


def test_a_foreign_host_is_refused(base: str, toy_store: Store) -> None:
    response = httpx.get(f"{base}/api/traces", headers={"host": "evil.example"}, timeout=BOUND_S)
    expect(_refused(response, 400), HOST_FOREIGN, port=_port(base))
    chat = _chat(base, b'{"question": "pads"}', host="evil.example")
    expect(_refused(chat, 400), HOST_FOREIGN, port=_port(base))
    _nothing_ran(toy_store)


def test_another_origin_and_another_site_are_refused(base: str, toy_store: Store) -> None:
    posted = _chat(base, b'{"question": "pads"}', origin="http://127.0.0.1:9")
    expect(_refused(posted, 403), ORIGIN_OTHER, port=_port(base))
    read = httpx.get(f"{base}/api/traces", headers={"sec-fetch-site": "cross-site"}, timeout=BOUND_S)
    expect(_refused(read, 403), FETCH_SITE_CROSS, port=_port(base))
    _nothing_ran(toy_store)


def test_the_pages_own_requests_and_programs_pass(base: str) -> None:
    """What the page sends (same origin) and what a program sends (no Origin) are answered."""
    own = {"origin": base, "sec-fetch-site": "same-origin"}
    assert httpx.get(f"{base}/api/traces", headers=own, timeout=BOUND_S).status_code == 200
    for headers in (own, {}):
        with httpx.stream(
            "POST", f"{base}/api/chat", json={"question": QUESTION}, headers=headers, timeout=BOUND_S
        ) as response:
            assert response.status_code == 200
            assert "event: done" in response.read().decode()
    assert httpx.get(f"{base}/", headers={"sec-fetch-site": "cross-site"}, timeout=BOUND_S).status_code == 200
    assert httpx.get(f"{base}/api/config", headers={"host": "localhost"}, timeout=BOUND_S).status_code == 200


def test_a_form_body_is_refused(base: str, toy_store: Store) -> None:
    response = _chat(base, b"question=pads", **{"content-type": "application/x-www-form-urlencoded"})
    expect(_refused(response, 415), FORM_BODY)
    _nothing_ran(toy_store)


# -- bounds a request cannot lift ------------------------------------------------------------------


@pytest.mark.parametrize("name", list(LIFTED))
def test_a_request_cannot_lift_a_bound(base: str, toy_store: Store, name: str) -> None:
    asked = LIFTED[name][0]
    body = f'{{"question": "pads", "config": {{"{name}": {asked!r}}}}}'.encode()
    expect(_refused(_chat(base, body), 422), CEILINGS[name])
    _nothing_ran(toy_store)


def test_a_request_may_lower_a_bound(base: str) -> None:
    body = b'{"question": "pads", "generate": false, "config": {"top_k": 2, "depth": 5, "shortlist": 3}}'
    with httpx.stream(
        "POST", f"{base}/api/chat", content=body, headers={"content-type": "application/json"}
    ) as response:
        assert response.status_code == 200 and "event: done" in response.read().decode()


# -- input that is not what it should be -----------------------------------------------------------


@pytest.mark.parametrize("depth", list(NESTED))
def test_a_config_nested_deep_is_refused_before_parsing(base: str, toy_store: Store, depth: int) -> None:
    body = b'{"question": "pads", "config": ' + b'{"a": ' * depth + b"1" + b"}" * depth + b"}"
    expect(_refused(_chat(base, body), 400), NESTED[depth])
    _nothing_ran(toy_store)


@pytest.mark.parametrize("length", list(LONG_NAME))
def test_a_long_result_file_name_is_refused(base: str, length: int) -> None:
    path = f"/api/results/{'x' * length}" + ("/pinned/a" if length == 5000 else "")
    response = _timed(lambda: httpx.get(base + path, timeout=BOUND_S))
    expect(_refused(response, 400), LONG_NAME[length])


@pytest.mark.parametrize(
    ("body", "status", "entry"),
    [
        (b'{"question": "pads \\ud800"}', 422, SURROGATE),
        (b'{"question": "pads\\u0000"}', 422, NUL),
        (b'{"question": "\xff pads"}', 400, NOT_UTF8),
    ],
    ids=["lone-surrogate", "nul", "not-utf8"],
)
def test_text_that_is_not_text_is_refused(
    base: str, toy_store: Store, body: bytes, status: int, entry: Case
) -> None:
    expect(_refused(_chat(base, body), status), entry)
    _nothing_ran(toy_store)


def test_a_field_of_the_wrong_type_is_refused(base: str, toy_store: Store) -> None:
    expect(_refused(_chat(base, b'{"question": "pads", "generate": "no"}'), 422), WRONG_TYPE)
    _nothing_ran(toy_store)


def test_a_surrogate_pair_is_text(base: str) -> None:
    body = b'{"question": "brake pads \\ud83d\\udeb2", "generate": false}'
    with httpx.stream(
        "POST", f"{base}/api/chat", content=body, headers={"content-type": "application/json"}
    ) as response:
        assert response.status_code == 200 and "event: done" in response.read().decode()


def _raw(url: str) -> socket.socket:
    host, port = url.removeprefix("http://").rsplit(":", 1)
    return socket.create_connection((host, int(port)), timeout=BOUND_S)


def _answer(sock: socket.socket) -> tuple[int, str]:
    """The status and the error of a response the server ends by closing the connection."""
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    assert b"content-type: application/json" in head.lower() and b"connection: close" in head.lower(), head
    return status, httpx.Response(status, content=body).json()["error"]


def test_a_huge_declared_body_is_refused_before_it_is_sent(base: str, toy_store: Store) -> None:
    began = time.monotonic()
    with _raw(base) as sock:
        sock.sendall(
            b"POST /api/chat HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: 300000000\r\n\r\n"
        )
        status, message = _answer(sock)
    assert status == 413 and time.monotonic() - began < BOUND_S
    expect(message, HUGE_DECLARED)
    _nothing_ran(toy_store)


def test_a_chunked_body_past_the_cap_is_refused_as_it_is_read(base: str, toy_store: Store) -> None:
    # one chunk of one byte past the cap, and no more: the server reads every byte it is sent before
    # it refuses, so it closes with nothing unread (unread bytes would make the close a reset)
    size = MAX_BODY_BYTES + 1
    began = time.monotonic()
    with _raw(base) as sock:
        sock.sendall(
            b"POST /api/chat HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n" + f"{size:x}\r\n".encode() + b" " * size
        )
        status, message = _answer(sock)
    assert status == 413 and time.monotonic() - began < BOUND_S
    expect(message, HUGE_CHUNKED)
    _nothing_ran(toy_store)


def test_a_failing_handler_answers_one_json_line_and_the_server_goes_on(
    base: str, toy_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fails(limit: int) -> list[Any]:
        raise RuntimeError("the disk went away")

    monkeypatch.setattr(toy_store, "traces", fails)
    expect(_refused(httpx.get(f"{base}/api/traces", timeout=BOUND_S), 500), HANDLER_FAILS)
    monkeypatch.undo()
    assert httpx.get(f"{base}/api/traces", timeout=BOUND_S).json() == {"traces": []}


def test_the_results_list_skips_and_names_an_unreadable_file(toy_store: Store, tmp_path: Path) -> None:
    results = tmp_path / "results"
    write_result(results / "mini.json", mini_result())
    (results / "broken.json").write_text("{", encoding="utf-8")
    with serving(create_app(toy_store, toy_config(), _models(), results_dir=results)) as url:
        listed = httpx.get(f"{url}/api/results", timeout=BOUND_S).json()
    assert [f["file"] for f in listed["files"]] == ["mini"]
    assert [u["file"] for u in listed["unreadable"]] == ["broken"]
    expect(
        listed["unreadable"][0]["error"], RESULTS_UNREADABLE, path=str((results / "broken.json").resolve())
    )


def test_a_port_out_of_range_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import uvicorn

    started: list[int] = []
    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets=None: started.append(self.config.port))
    result = CliRunner().invoke(cli, ["serve", "--store", str(tmp_path / "s"), "--port", "99999"])
    assert result.exit_code == PORT.exit_code, result.output
    expect(result.output, PORT)
    assert started == []


# -- the slow tier: the probe's harness ------------------------------------------------------------

PAGE_OTHER_CHAT = served(
    "server-page-other-origin-chat",
    403,
    fault="a page on another loopback port (headless Chromium) posts a question as a `text/plain` form and "
    "as a no-cors fetch (the form's was run and stored)",
    message=f"Origin='http://127.0.0.1:{{evil}}': {OTHER_SITE} Origin",
)
PAGE_OTHER_TRACES = served(
    "server-page-other-origin-traces",
    403,
    fault="a page on another loopback port fetches `/api/traces` (answered, though the browser hid it)",
    message=f"Origin='http://127.0.0.1:{{evil}}': {OTHER_SITE} Origin",
)
PAGE_REBOUND = served(
    "server-page-dns-rebinding",
    400,
    fault="a page at `http://rebound.test:PORT/` whose name then resolves to 127.0.0.1 reads `/api/traces` "
    "and posts a question (it read every trace and ran a chat); the page reads this answer",
    message="Host='rebound.test:{port}': is not a name this server answers to (127.0.0.1, localhost); "
    f"{REBINDING}",
)
TRICKLED_HEADERS = served(
    "server-headers-trickled",
    408,
    fault="five connections trickling a header one byte every 0.1 s, then holding it unfinished (held for "
    "the full 60 s); the test server's deadline is 1 s, `clear-rag serve`'s 10 s",
    message="the request's headers: did not arrive within 1 s; the connection is closed. Send the request "
    "line and headers at once, as a browser or an HTTP library does",
)
TRICKLED_BODY = served(
    "server-body-trickled",
    408,
    fault="five connections trickling a chat body one byte every 0.1 s, then holding it unfinished (held "
    "for the full 60 s); the test server's deadline is 1 s, `clear-rag serve`'s 10 s",
    message="the request body: did not arrive within 1 s ({bytes} bytes came); the connection is closed. "
    "Send the whole body at once, as a browser or an HTTP library does",
)

CONNECTIONS = 5
TRICKLE_S = 0.1
DEADLINE_S = 1.0  # the test server's header and body deadlines
HOSTILE = """<!doctype html><html><body><iframe name="sink"></iframe>
<form id="form" method="POST" action="TARGET/api/chat" enctype="text/plain" target="sink">
<input name='{"question": "what is stored here", "pad": "' value='"}'></form>
<script>
window.attempts = (async () => {
  const out = {};
  try { out.traces = await (await fetch("TARGET/api/traces")).text(); }
  catch (e) { out.traces = `blocked: ${e}`; }
  const body = JSON.stringify({ question: "what is stored here" });
  const sent = { method: "POST", mode: "no-cors", headers: { "Content-Type": "text/plain" }, body };
  try { out.chat = await (await fetch("TARGET/api/chat", sent)).text(); }
  catch (e) { out.chat = `blocked: ${e}`; }
  return out;
})();
</script></body></html>"""


class Recorder:
    """The app, noting each answer it sends (path and body) as the server saw it: what a test reads
    where the browser hides a cross-origin answer from the page."""

    def __init__(self, app: Callable[..., Awaitable[None]]) -> None:
        self.app = app
        self.answers: list[tuple[str, str, int, bytes]] = []
        self._noted = threading.Condition()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status, body = [0], []

        async def noting(message: Any) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            elif message["type"] == "http.response.body":
                body.append(message.get("body", b""))
            await send(message)

        await self.app(scope, receive, noting)
        with self._noted:
            self.answers.append((scope["method"], scope["path"], status[0], b"".join(body)))
            self._noted.notify_all()

    def api(self, count: int) -> list[tuple[str, str, int, bytes]]:
        """The first ``count`` answers to ``/api/`` requests, once they are all sent."""
        with self._noted:
            assert self._noted.wait_for(lambda: len(self._api()) >= count, BOUND_S), self.answers
            return self._api()[:count]

    def _api(self) -> list[tuple[str, str, int, bytes]]:
        return [a for a in self.answers if a[1].startswith("/api/")]


@pytest.fixture(scope="module")
def hostile_browser() -> Iterator[Any]:
    """Headless Chromium that resolves rebound.test to 127.0.0.1 and lacks Private Network Access: a
    browser without that protection (older ones, or others) is what the server must hold against, so
    the test sees the server's own refusal, not the browser's."""
    from tests.web.browser import CHROMIUM, require_browser

    sync_api = require_browser()
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=str(CHROMIUM),
            args=[
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--host-resolver-rules=MAP rebound.test 127.0.0.1",
                "--disable-features=BlockInsecurePrivateNetworkRequests,PrivateNetworkAccessSendPreflights,"
                "PrivateNetworkAccessRespectPreflightResults,LocalNetworkAccessChecks",
            ],
        )
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def recorded(toy_store: Store) -> Iterator[tuple[str, Recorder]]:
    recorder = Recorder(create_app(toy_store, toy_config(), _models()))
    with serving(recorder) as url:
        yield url, recorder


@pytest.mark.slow
def test_a_page_on_another_origin_can_neither_chat_nor_read_traces(
    hostile_browser: Any, recorded: tuple[str, Recorder], toy_store: Store, tmp_path: Path
) -> None:
    from tests.web.browser import WAIT_MS, serve_folder

    url, recorder = recorded
    (tmp_path / "index.html").write_text(HOSTILE.replace("TARGET", url), encoding="utf-8")
    with serve_folder(tmp_path) as evil:
        page = hostile_browser.new_page()
        page.set_default_timeout(WAIT_MS)
        try:
            page.goto(f"{evil}/")
            read = page.evaluate("window.attempts")
            with page.expect_response(lambda r: r.request.method == "POST" and r.frame.name == "sink"):
                page.evaluate("document.getElementById('form').submit()")
        finally:
            page.close()
    assert read["traces"].startswith("blocked"), read  # and the server refused it besides
    answers = recorder.api(3)
    assert sorted((method, status) for method, _, status, _ in answers) == [
        ("GET", 403),
        ("POST", 403),
        ("POST", 403),
    ]
    for method, _, _, body in answers:
        entry = PAGE_OTHER_TRACES if method == "GET" else PAGE_OTHER_CHAT
        expect(httpx.Response(403, content=body).json()["error"], entry, port=_port(url), evil=_port(evil))
    _nothing_ran(toy_store)


@pytest.mark.slow
def test_a_page_after_dns_rebinding_reads_only_the_refusal(
    hostile_browser: Any, recorded: tuple[str, Recorder], toy_store: Store
) -> None:
    from tests.web.browser import WAIT_MS

    url, recorder = recorded
    rebound = f"http://rebound.test:{_port(url)}"
    page = hostile_browser.new_page()
    page.set_default_timeout(WAIT_MS)
    try:
        # the attacker's server answers the page itself; then the name resolves to 127.0.0.1
        page.route(
            f"{rebound}/",
            lambda route: route.fulfill(content_type="text/html", body=HOSTILE.replace("TARGET", "")),
        )
        page.goto(f"{rebound}/")
        read = page.evaluate("window.attempts")
    finally:
        page.close()
    # same-origin now, so the page reads what the server answered: the refusal, not the traces
    expect(httpx.Response(400, content=read["traces"]).json()["error"], PAGE_REBOUND, port=_port(url))
    assert [(m, s) for m, _, s, _ in recorder.api(2)] == [("GET", 400), ("POST", 400)]
    _nothing_ran(toy_store)


def _trickled(url: str, head: bytes) -> list[tuple[int, str]]:
    """``CONNECTIONS`` connections that send ``head``, then one byte every ``TRICKLE_S`` for half the
    server's deadline, then nothing, holding the connection open: each answer, every one within
    ``BOUND_S``. The bytes stop short of the deadline because one that reached the server after it
    closed would be answered with a reset, and TCP drops the answer unread on a reset."""
    socks = [_raw(url) for _ in range(CONNECTIONS)]
    answers: dict[socket.socket, bytes] = dict.fromkeys(socks, b"")
    waiting = set(socks)
    began = time.monotonic()
    try:
        for sock in socks:
            sock.sendall(head)
        while waiting and time.monotonic() < began + BOUND_S:
            readable, _, _ = select.select(list(waiting), [], [], TRICKLE_S)
            for sock in readable:
                chunk = sock.recv(65536)
                answers[sock] += chunk
                if not chunk:
                    waiting.discard(sock)
            if time.monotonic() < began + DEADLINE_S / 2:
                for sock in waiting.difference(readable):
                    sock.send(b"x")
        assert not waiting, f"{len(waiting)} connections were still held after {BOUND_S:g} s"
    finally:
        for sock in socks:
            sock.close()
    found = []
    for data in answers.values():
        head_, _, body = data.partition(b"\r\n\r\n")
        found.append((int(head_.split(b" ", 2)[1]), httpx.Response(200, content=body).json()["error"]))
    return found


@pytest.fixture
def deadlines(toy_store: Store) -> Iterator[str]:
    app = create_app(toy_store, toy_config(), _models(), body_timeout_s=DEADLINE_S)
    with serving(app, header_timeout_s=DEADLINE_S) as url:
        yield url


@pytest.mark.slow
def test_connections_trickling_headers_are_closed_at_the_deadline(deadlines: str) -> None:
    head = b"GET /api/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: "
    for status, message in _trickled(deadlines, head):
        assert status == 408
        expect(message, TRICKLED_HEADERS)


@pytest.mark.slow
def test_connections_trickling_a_body_are_closed_at_the_deadline(deadlines: str, toy_store: Store) -> None:
    head = (
        b"POST /api/chat HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Content-Length: 1000\r\n\r\n"
    )
    for status, message in _trickled(deadlines, head):
        assert status == 408
        came = message.split("(", 1)[1].split(" ", 1)[0]
        assert int(came) < 1000
        expect(message, TRICKLED_BODY, bytes=came)
    _nothing_ran(toy_store)
