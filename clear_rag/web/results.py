"""The Results API: the result files, a row pinned against the others, the questions behind a move, the
words of a file's questions, and a question's stored trace; what the Results view draws from.

Files are named by their name alone (``tech`` or ``tech.json``), never by a path, so a request can name
nothing but ``results_dir/*.json``; beyond them, only what a result file itself names is read (a row's
store for a trace, the labels it was measured on for its questions' words). What each endpoint answers
is computed by the plain functions of ``clear_rag.results.answers`` (the list of files through the
named DuckDB queries, a pinned row through ``clear_rag.results.pinned``), which the static export of
the site calls too; here are only the routes, the file names and the stored traces. Every error is
JSON ``{"error": one line}`` saying what to do, and the server goes on serving: a result file that is
missing, damaged or not in the one shape is a 4xx naming it, not a traceback.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from clear_rag.errors import ClearRagError, InputError, StoreError
from clear_rag.results import answers
from clear_rag.results.files import read_result
from clear_rag.results.pinned import find_row
from clear_rag.store.sqlite import Store
from clear_rag.trace import to_dict
from clear_rag.web.replay import replay_events

Handler = Callable[[Request], Awaitable[Response]]
MOVES_PARAMS = ("pinned", "row", "metric")
# bytes of a file's name, ".json" aside: a file system holds 255 at most, and a longer name asked for
# was an OSError ("File name too long") and a bare 500
MAX_NAME_BYTES = 200


class _Problem(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


class _Answer(JSONResponse):
    """A response whose body is ``answers.encode``'s: the bytes the static export writes."""

    def render(self, content: Any) -> bytes:
        return answers.encode(content)


def _guarded(handler: Callable[[Request], Awaitable[Any]]) -> Handler:
    """``handler``'s value as JSON, or its failure as ``{"error": ...}`` on one line."""

    async def run(request: Request) -> Response:
        try:
            return _Answer(await handler(request))
        except _Problem as err:
            status, message = err.status, err.message
        except InputError as err:
            status, message = (404 if err.field in ("row", "metric") else 422), str(err)
        except ClearRagError as err:
            status, message = 422, str(err)
        except (KeyError, TypeError, ValueError) as err:
            # A hand-edited or older file can lack a field the view needs; say so rather than a 500.
            file = str(request.path_params.get("file", request.url.path)).removesuffix(".json")
            status, message = 422, str(answers.shape_error(file, err))
        except OSError as err:  # a store or labels file a row names that cannot be opened as it is
            status, message = 422, f"{request.url.path}: cannot be read ({err.strerror or err})"
        return _Answer({"error": " ".join(message.split())}, status_code=status)

    return run


class ResultsApi:
    """The handlers over one results folder (resolved at each request, as the CLI resolves it)."""

    def __init__(self, results_dir: Path) -> None:
        self.results_dir = results_dir

    def routes(self) -> list[Route]:
        base = "/api/results"
        return [
            Route(base, _guarded(self.files)),
            Route(base + "/{file}", _guarded(self.document)),
            Route(base + "/{file}/pinned/{row:path}", _guarded(self.pinned)),
            Route(base + "/{file}/moves", _guarded(self.moves)),
            Route(base + "/{file}/questions", _guarded(self.questions)),
            Route(base + "/{file}/trace/{row}/{trace_id}", _guarded(self.trace)),
        ]

    # -- handlers -----------------------------------------------------------------------------

    async def files(self, request: Request) -> dict[str, Any]:
        return await run_in_threadpool(answers.files, self.results_dir)

    async def document(self, request: Request) -> dict[str, Any]:
        return await self._load(request)

    async def pinned(self, request: Request) -> dict[str, Any]:
        file, document = self._name(request), await self._load(request)
        return await run_in_threadpool(answers.pinned, file, document, request.path_params["row"])

    async def moves(self, request: Request) -> dict[str, Any]:
        file = self._name(request)
        wanted = {p: request.query_params.get(p, "") for p in MOVES_PARAMS}
        missing = [p for p, v in wanted.items() if not v]
        if missing:
            example = f"/api/results/{file}/moves?pinned=ROW&row=ROW&metric=ndcg@10"
            raise _Problem(400, f"moves: the query parameter {missing[0]!r} is missing. Ask e.g. {example}")
        document = await self._load(request)
        return answers.moves(file, document, wanted["pinned"], wanted["row"], wanted["metric"])

    async def questions(self, request: Request) -> dict[str, Any]:
        # the labels' paths are relative to the folder the suite ran in: the one holding results/
        file, document = self._name(request), await self._load(request)
        return await run_in_threadpool(answers.questions, file, document, self.results_dir.parent)

    async def trace(self, request: Request) -> dict[str, Any]:
        file, document = self._name(request), await self._load(request)
        row = find_row(document, request.path_params["row"], source=f"{file}.json")
        trace_id = request.path_params["trace_id"]
        return await run_in_threadpool(stored_trace, document, row, trace_id, f"{file}.json")

    # -- files --------------------------------------------------------------------------------

    def _name(self, request: Request) -> str:
        """The file's name without ``.json``; anything that could reach outside the folder is refused."""
        given = str(request.path_params["file"])
        name = given.removesuffix(".json")
        if len(name.encode("utf-8", "replace")) > MAX_NAME_BYTES:
            raise _Problem(
                400,
                f"{given[:40]!r}...: not a result file name ({len(given):,} characters, longer than any "
                "file's name may be). Name a file of results/ alone, e.g. tech",
            )
        if not name or any(bad in name for bad in ("/", "\\", "..", "\0")) or name.startswith("."):
            raise _Problem(
                400, f"{given!r}: not a result file name. Name a file of results/ alone, e.g. tech"
            )
        return name

    async def _load(self, request: Request) -> dict[str, Any]:
        name = self._name(request)
        path = self.results_dir / f"{name}.json"
        if not path.is_file():
            known = ", ".join(sorted(p.stem for p in self.results_dir.glob("*.json"))) or "none"
            raise _Problem(
                404, f"{name!r}: no such result file in {self.results_dir}. The files are: {known}"
            )
        return await run_in_threadpool(read_result, path)


def stored_trace(
    document: Mapping[str, Any], row: Mapping[str, Any], trace_id: str, source: str
) -> dict[str, Any]:
    """One question's trace from the store the row ran against (opened read-only), with the events a
    live answer sends and, per stage, the best-placed chunk covering its labels (from its loss ranks).

    Only the traces of the row's own questions are served: a trace id from elsewhere is refused."""
    question = next((q for q in row["questions"] if q.get("trace") == trace_id), None)
    if question is None:
        raise _Problem(
            404,
            f"{source}: row {row['name']!r} has no question whose trace is {trace_id!r}. "
            "The trace ids are in the row's questions (GET /api/results/FILE)",
        )
    suite = document.get("suite", "SUITE")
    regenerate = (
        f"Regenerate them with `clear-rag ablate {suite} --save-results`; "
        f"`clear-rag ablate {suite} --replay` then re-scores from the stored traces without models"
    )
    if not row.get("store"):
        raise _Problem(
            404, f"{source}: row {row['name']!r} names no store, so its traces are not here. {regenerate}"
        )
    try:
        with Store(Path(row["store"]), mode="read") as store:
            trace = store.load_trace(trace_id)
    except StoreError as err:
        raise _Problem(
            404,
            f"{source}: row {row['name']!r}: trace {trace_id!r} is not here "
            f"({err.path or row['store']}: {err.what}). {regenerate}",
        ) from None
    ranks: Mapping[str, int | None] = (question.get("lost") or {}).get("ranks", {})
    covering = {}
    for stage in trace.stages:
        rank = ranks.get(stage.name)
        if rank is not None and 0 < rank <= len(stage.candidates):
            covering[stage.name] = stage.candidates[rank - 1].chunk_id
    shown = {k: question.get(k) for k in ("id", "category", "first_rank", "metrics", "lost")}
    return {
        "file": source.removesuffix(".json"),
        "row": row["name"],
        "question": shown,
        "trace": to_dict(trace),
        "events": replay_events(trace),
        "covering": covering,
    }
