"""The local app: the page, and the API it draws from (design.md, "Events on the wire").

``POST /api/chat`` answers ``text/event-stream``: ``query``, one ``stage`` per stage as it finishes,
``context``, ``token`` (many), ``citations``, then ``done`` or ``error``, with a heartbeat comment
while nothing happens. The rest is JSON: a document's canonical text and blocks (by id, never by
path), the stored traces (each with the very events a live question sends, rebuilt from the trace,
so the page replays history with the code that draws a live answer), and every knob of the config
with whether its machinery is here.

Bad input is a 4xx with a message a person can act on, and the server goes on serving: the request
is checked (``clear_rag.web.guard`` on its host, origin and body, ``clear_rag.web.request`` on its
fields), and the config and its indexes opened, before the stream starts, so only what happens during
an answer (a model that fails or runs out its deadline) arrives as an ``error`` event. Whatever fails
unforeseen is a 500 in the same one JSON line, never a bare one.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, get_args

from sse_starlette import EventSourceResponse
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from clear_rag.config import PipelineConfig
from clear_rag.errors import ClearRagError, ConfigError, StoreError
from clear_rag.providers.select import Presence, embedders_here, rerankers_here
from clear_rag.results.answers import support_check
from clear_rag.store.sqlite import Store
from clear_rag.trace import to_dict as trace_dict
from clear_rag.web.guard import BODY_TIMEOUT_S, LOOPBACK_NAMES, Guard, error, http_error, unexpected
from clear_rag.web.replay import replay_events
from clear_rag.web.request import BadRequest, chat_request
from clear_rag.web.results import ResultsApi
from clear_rag.web.runner import CEILINGS, Models, Runner

STATIC = Path(__file__).parent / "static"
MAX_TITLES = 1000  # doc ids in one /api/titles request (a 14-stage trace names a few hundred)
HEARTBEAT_S = 15  # a comment line this often keeps proxies and the browser from closing a quiet stream


def create_app(
    store: Store,
    base: PipelineConfig,
    models: Models,
    *,
    heartbeat_s: float = HEARTBEAT_S,
    results_dir: Path = Path("results"),
    hosts: Sequence[str] = LOOPBACK_NAMES,
    body_timeout_s: float = BODY_TIMEOUT_S,
) -> Starlette:
    """The app over an open ``store``, answering with ``models`` under the settings ``base``, which
    are also the ceilings of what a request may ask (``Runner.config_for``); a stream with nothing to
    say sends a heartbeat comment every ``heartbeat_s`` seconds. The Results API reads the result files
    in ``results_dir``. It answers only requests addressed to one of ``hosts`` and sent by its own page
    or by a program, with bodies whole within ``body_timeout_s`` (``clear_rag.web.guard``)."""
    runner = Runner(store, base, models)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        runner.close()

    async def chat(request: Request) -> Response:
        arrived = time.perf_counter()  # the done event's timings count the whole wait from here
        try:
            asked = chat_request(await request.body())
            config = runner.config_for(asked.config)
            await run_in_threadpool(runner.pipeline, config)  # indexes loaded, or a 4xx saying why
            await run_in_threadpool(runner.support, config)  # the support model too
        except BadRequest as err:
            return error(err.status, err.message)
        except ConfigError as err:
            return error(422, str(err))
        except StoreError as err:
            return error(409, str(err))
        except ClearRagError as err:
            return error(422, str(err))

        async def events() -> AsyncIterator[dict[str, str]]:
            async for event in runner.stream(asked, arrived=arrived):
                yield {"event": event.kind, "data": json.dumps(event.data, ensure_ascii=False)}

        return EventSourceResponse(events(), ping=heartbeat_s)

    async def document(request: Request) -> Response:
        doc_id = request.path_params["doc_id"]
        try:
            doc = await run_in_threadpool(store.document, doc_id)
        except KeyError:
            hint = "Document ids are in stage events and traces: a path relative to the store's root"
            return error(404, f"{doc_id!r}: no document has this id. {hint}, such as docs/a.md")
        blocks = [dataclasses.asdict(block) for block in doc.blocks]
        return JSONResponse({"id": doc.id, "text": doc.text, "media_type": doc.media_type, "blocks": blocks})

    async def titles(request: Request) -> Response:
        doc_ids = request.query_params.getlist("doc_id")
        if len(doc_ids) > MAX_TITLES:
            return error(400, f"{len(doc_ids)} doc_id values: ask for at most {MAX_TITLES} titles at a time")
        found = await run_in_threadpool(store.titles, doc_ids)
        return JSONResponse({"titles": found})

    async def traces(request: Request) -> Response:
        rows = await run_in_threadpool(store.traces, 200)
        return JSONResponse({"traces": [{"id": i, "created_at": c, "query": q} for i, c, q in rows]})

    async def trace(request: Request) -> Response:
        try:
            found = await run_in_threadpool(store.load_trace, request.path_params["trace_id"])
        except StoreError as err:
            return error(404, str(err))
        return JSONResponse({"trace": trace_dict(found), "events": replay_events(found)})

    async def config(request: Request) -> Response:
        return JSONResponse(
            {
                "config": base.to_dict(),
                "knobs": knobs(base, models),
                "support": await run_in_threadpool(support_info, base, runner, results_dir),
                "check": await run_in_threadpool(check_info, store.directory, results_dir),
            }
        )

    async def page(request: Request) -> Response:
        index = STATIC / "index.html"
        if not index.is_file():
            return error(404, f"{index}: the page is missing from this installation. Reinstall clear-rag")
        return FileResponse(index)

    async def results_page(request: Request) -> Response:
        view = STATIC / "results.html"
        if not view.is_file():
            return error(404, f"{view}: the Results view is missing from this installation. Reinstall")
        return FileResponse(view)

    routes = [
        Route("/", page),
        Route("/results", results_page),
        Route("/api/chat", chat, methods=["POST"]),
        Route("/api/documents/{doc_id:path}", document),
        Route("/api/titles", titles),
        Route("/api/traces", traces),
        Route("/api/traces/{trace_id}", trace),
        Route("/api/config", config),
        *ResultsApi(results_dir).routes(),
        Mount("/static", StaticFiles(directory=STATIC, check_dir=False), name="static"),
    ]

    async def no_route(request: Request, exc: Exception) -> Response:
        status = getattr(exc, "status_code", 404)
        endpoints = (
            "GET /, /results, POST /api/chat, GET /api/documents/ID, /api/traces[/ID], /api/config, "
            "/api/results[/FILE[/pinned/ROW | /moves | /questions | /trace/ROW/ID]]"
        )
        return error(
            status, f"{request.method} {request.url.path}: no such endpoint here. The API is {endpoints}"
        )

    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        middleware=[Middleware(Guard, hosts=hosts, body_timeout_s=body_timeout_s)],
        exception_handlers={404: no_route, 405: no_route, HTTPException: http_error, Exception: unexpected},
    )
    app.state.runner = runner
    return app


def support_info(base: PipelineConfig, runner: Runner, results_dir: Path) -> dict[str, Any]:
    """What the page says of the support check: its model and calibration, how it was measured against
    graded answers (``results/answers.json``), or why the server has none."""
    missing = runner.models.missing.get("support")
    checker = runner.support(base) if missing is None else None
    if checker is None:
        return {"available": False, "reason": missing or "this server checks no answers"}
    try:
        measured = support_check(results_dir, checker.name)
    except ClearRagError as err:
        measured, missing = None, str(err)
    return {
        "available": True,
        "model": checker.name,
        "calibration": checker.calibration.to_dict(),
        "measured": measured,
        **({"reason": missing} if missing else {}),
    }


def check_info(directory: Path, results_dir: Path) -> dict[str, Any] | None:
    """The store's last technique check (``clear-rag check``) and how far such checks agreed with real
    questions, for the Lab's rerank knob; None when the store was never checked."""
    from clear_rag.eval.agreement import AGREEMENT, agreement_summary
    from clear_rag.eval.check import read_check

    found = read_check(directory)
    if found is None:
        return None
    return {**found, "agreement": agreement_summary(results_dir / AGREEMENT)}


def knobs(base: PipelineConfig, models: Models) -> list[dict[str, Any]]:
    """Every setting the Lab shows: its kind, current value, choices, the ceiling of one that bounds a
    question's work (``max``), and whether its machinery is here (with the one-line reason when it is
    not), so no knob is silently ignored. The reranker's choices
    are every reranker a config may name, each with whether it is here (``options``), so any one that
    is here can be chosen whichever the server started with; the embedder is shown the same way,
    though only a restart changes it."""
    found: list[dict[str, Any]] = []
    needs = {
        # a chat model that writes text: "writer" says why this one does not, "chat" why there is none
        "expand": ("writer", "chat"),
        "hyde": ("writer", "chat"),
        "support_model": ("support",),
    }
    rerankers = _options(rerankers_here(base.reranker), base.reranker, models.missing.get("reranker"))
    some_reranker = any(option["available"] for option in rerankers)
    for name, info in PipelineConfig.model_fields.items():
        if name in ("answer_deadline_s", "max_answer_chars"):
            continue  # bounds on a reply, not knobs of retrieval
        value = base.to_dict()[name]
        knob: dict[str, Any] = {"key": name, "value": value, "kind": _kind(info.annotation, value)}
        choices = _choices(info.annotation)
        if choices:
            knob["choices"] = choices
        reason = next((models.missing[k] for k in needs.get(name, ()) if k in models.missing), None)
        if name in CEILINGS:
            knob["max"] = value  # a question may lower it, never raise it (Runner.config_for)
            if value == 0 and reason is None:
                reason = (
                    f"this server was started with {name} 0, a ceiling a question may not raise: "
                    f"`clear-rag serve --config FILE` with {name} set higher allows it"
                )
        if name == "retrievers" and models.embedder is None:
            reason = "no embedder is loaded, so vector search is off"
            knob["choices"] = ["keyword"]
        if name == "rerank" and not some_reranker:
            reason = "needs a reranker, and none is here (the reranker setting says how to get one)"
        if name == "reranker":
            knob.update(kind="choice", choices=[o["name"] for o in rerankers], options=rerankers)
            reason = None if some_reranker else "none of these is here"
        if name == "chunking":
            reason = (
                "the store was chunked this way; another chunking needs a store ingested with it: "
                "`clear-rag ingest PATH --chunker ... --size ...`"
            )
        knob["available"] = reason is None
        if reason is not None:
            knob["reason"] = reason
        found.append(knob)
        if name == "retrievers":
            found.append(_embedder_knob(models))
    found.append(
        {
            "key": "self_correction",
            "value": False,
            "kind": "bool",
            "available": False,
            "reason": "clear-rag has no self-correction step: an answer is generated once from the context",
        }
    )
    return found


def _options(here: Sequence[Presence], current: str | None, failed: str | None) -> list[dict[str, Any]]:
    """Models as a knob's choices: each with a few words on it and, when it is not here, why; the
    current one's reason is ``failed`` where the server tried it and it would not load."""
    options = []
    for model in here:
        reason = failed if model.name == current and failed else model.missing
        option = {"name": model.name, "about": model.about, "available": reason is None}
        options.append(option if reason is None else {**option, "reason": reason})
    return options


def _embedder_knob(models: Models) -> dict[str, Any]:
    """The server's embedder among those that ship: shown, never sent, since the store's vectors are
    made with one embedder and the server loads it at start-up."""
    failed = models.missing.get("embedder")
    current = models.names.get("embedder") or (models.embedder.name if models.embedder else None)
    if models.embedder is None:  # none failed: this config searches no vectors, so none was loaded
        current = (current or "the server's embedder") if failed else None
    options = _options(embedders_here(), current, failed)
    if current is not None and current not in {o["name"] for o in options}:
        options.insert(0, {"name": current, "about": "in use", "available": failed is None})
        if failed:
            options[0]["reason"] = failed
    return {
        "key": "embedder",
        "value": current,
        "kind": "choice",
        "choices": [o["name"] for o in options],
        "options": options,
        "available": False,
        "reason": "set when the server starts, since the store's vectors are made with it: "
        "`clear-rag ingest PATH --embedder NAME`, then `clear-rag serve --embedder NAME`",
    }


def _kind(annotation: Any, value: object) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "table"
    return "choice" if _choices(annotation) else "text"


def _choices(annotation: Any) -> list[str]:
    """The values a Literal setting (or a tuple of one) may take."""
    for arg in (annotation, *get_args(annotation)):
        values = [v for v in get_args(arg) if isinstance(v, str)]
        if values and all(isinstance(v, str) for v in get_args(arg)):
            return values
    return []
