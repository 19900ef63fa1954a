"""The Results view on a static site: the JSON the Results API would answer, written to files, and the
view's page switched to read them.

``export`` calls the functions the API calls (``clear_rag.results.answers``) and encodes them the way it
does, so each file is, byte for byte, the body of one API response. Its layout under the data folder,
F being the file NAME's place in index.json and R the row ROW's place in that file's rows:

    files.json         GET /api/results
    index.json         {"files": [{"file": NAME, "rows": [ROW, ...]}, ...]}
    F/document.json    GET /api/results/NAME
    F/questions.json   GET /api/results/NAME/questions
    F/pinned/R.json    GET /api/results/NAME/pinned/ROW
    F/moves/R.json     {"rows": {OTHER: {METRIC: answer}}}, each answer that of
                       GET /api/results/NAME/moves?pinned=ROW&row=OTHER&metric=METRIC

Result files and rows are named by their place, never by their names: a row is called ``hybrid +
rerank (k=60, 50%)`` or worse, which no file name should have to carry. The moves of one pinned row
are one file holding every other row and metric (what a click on any cell of its table needs), not
a file per cell. Traces are not exported: they live in the stores, which a static site does not have.

Nothing here reads a clock or the machine, so two exports of the same results are the same bytes.
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path
from typing import Any

from clear_rag.errors import ClearRagError
from clear_rag.results import answers
from clear_rag.results.files import read_result

# results.html names where its data comes from in one attribute; the exported copy differs from the
# served page in that attribute alone (the page's links are relative, so it works from any folder).
LIVE_MODE = '<meta name="clear-rag-results" content="api">'
STATIC_MODE = '<meta name="clear-rag-results" content="static:data/">'
DATA = "data"  # the folder STATIC_MODE names, beside results.html
PAGE = "results.html"
_PAGE_REFERENCE = re.compile(r'(?:href|src)="(static/[\w.-]+)"')
_MODULE_IMPORT = re.compile(r"""["']\./([\w.-]+\.js)["']""")


def export(results_dir: Path) -> dict[str, bytes]:
    """Every document the Results view can ask for about ``results_dir``, as ``{path: JSON bytes}``
    with paths relative to the data folder; a damaged file raises the error the API answers for it."""
    listed = answers.files(results_dir)
    for left_out in listed.get("unreadable", []):
        # The live list leaves such a file out and says so beside it; a published copy must not.
        raise ClearRagError(
            left_out["error"],
            path=str(results_dir),
            fix="Export once every file of the folder can be read: the page would lack this one",
        )
    out = {"files.json": answers.encode(listed)}
    index: list[dict[str, Any]] = []
    for place, summary in enumerate(listed["files"]):
        file = summary["file"]
        document = read_result(results_dir / f"{file}.json")
        with answers.in_shape(file):
            rows = answers.measured_rows(document)
            metrics: list[str] = list(document.get("metric_names", []))
        folder = str(place)
        out[f"{folder}/document.json"] = answers.encode(document)
        # the labels' paths are relative to the folder the suite ran in, as the API reads them
        words = answers.questions(file, document, results_dir.parent)
        out[f"{folder}/questions.json"] = answers.encode(words)
        for n, pinned in enumerate(rows):
            out[f"{folder}/pinned/{n}.json"] = answers.encode(answers.pinned(file, document, pinned))
            behind = {
                other: {metric: answers.moves(file, document, pinned, other, metric) for metric in metrics}
                for other in rows
                if other != pinned
            }
            out[f"{folder}/moves/{n}.json"] = answers.encode({"rows": behind})
        index.append({"file": file, "rows": rows})
    out["index.json"] = answers.encode({"files": index})
    return dict(sorted(out.items()))


def page_files() -> dict[str, bytes]:
    """The Results view's page and every file it loads, read from the installed package, as
    ``{path: bytes}`` relative to the folder the page goes in; results.html reads ``data/`` beside it.

    What to copy is read off the page (its ``static/`` links) and the scripts (their ``./`` imports),
    so a module added to the view is exported without a list to keep up to date."""
    static = resources.files("clear_rag.web") / "static"
    html = (static / PAGE).read_text(encoding="utf-8")
    if html.count(LIVE_MODE) != 1:
        raise ClearRagError(
            f"does not say where its data comes from in the one line {LIVE_MODE}",
            path=f"clear_rag/web/static/{PAGE}",
            fix="Put that line back in its <head>, or reinstall clear-rag",
        )
    out = {PAGE: html.replace(LIVE_MODE, STATIC_MODE).encode()}
    wanted = _PAGE_REFERENCE.findall(html)
    while wanted:
        path = wanted.pop()
        if path in out:
            continue
        content = (static / path.removeprefix("static/")).read_bytes()
        out[path] = content
        if path.endswith(".js"):
            wanted += [f"static/{name}" for name in _MODULE_IMPORT.findall(content.decode())]
    return dict(sorted(out.items()))
