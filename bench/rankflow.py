"""What a person waits for when the page draws a question's rank flow: a replay from the history, and a
redraw when they ask for every row or unfold the phrasings.

    python -m bench.rankflow [--rounds 7] [--base 9057e2e]

One store: the tech corpus (``corpora/tech``) chunked structurally at 256 tokens, indexed with the
256-dimension hash embedder. Two questions are asked once over HTTP and stored as traces: one with
rerank (keyword, vector, fusion, rerank, context: 5 stages) and one with three other phrasings and
HyDE as well (14 stages: four phrasings under each search, the HyDE search, each retriever's fusion,
fusion, rerank, context). Fake providers throughout (the echo chat model writes the phrasings, the
lexical reranker re-scores), so the figures are the page's own work, not a model's.

The contenders are two builds of the page served by the same server over the same store: this tree's
``clear_rag/web/static`` and the one at ``--base`` (the commit before the rank flow was rewritten,
checked out of git into a temporary folder). Each round, in headless Chromium at 1440x900, each
contender (the order alternating round by round) opens the page, clicks the question in the history
and is timed in the page (``performance.now``): from the click to the frame painted after the page's
last change (the history fetch, the replay and, in this tree, the titles fetched after it included);
the longest main-thread task meanwhile (``PerformanceObserver`` long tasks, over 50 ms; 0 where none
was that long); then the synchronous redraw when the rows select goes to "all" and back, and (this
tree only, where phrasings fold) when the phrasings are unfolded. Medians over the rounds, the ratio
of the medians beside them, and the load average before and after, since the machine is shared.
Written to results/bench/rankflow.json.
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from bench.common import ROOT, publish
from clear_rag.chunk.factory import make_chunker
from clear_rag.config import PipelineConfig
from clear_rag.ingest import ingest
from clear_rag.providers.fake import EchoChatModel, HashEmbedder, LexicalReranker
from clear_rag.session import store_chunking, sync_indexes
from clear_rag.store import Store
from clear_rag.web import app as web_app
from clear_rag.web.runner import Models
from clear_rag.web.serving import READY_WITHIN_S, read_events, serving

CHROMIUM = Path("/usr/bin/chromium")
BASE = "9057e2e"  # the last commit with the rank flow drawn in arrival order, one column per stage
SIZE = {"width": 1440, "height": 900}
WAIT_MS = 60_000  # a bound on any wait in the page; each ends as soon as what it waits for is there
TECH = ROOT / "corpora" / "tech"
QUESTIONS: dict[str, tuple[str, dict[str, Any]]] = {  # golden/tech.yaml's first two
    "rerank": (
        "What is the largest page size a list request in the REST API can ask for?",
        {"rerank": True},
    ),
    "expand 3 + hyde + rerank": (
        "What is the maximum size of a single event payload accepted by the publish endpoint?",
        {"rerank": True, "expand": 3, "hyde": True},
    ),
}

# Installed before the page's scripts run: long tasks, and when the page last changed and was next
# painted (two frames after a change: the frame that lays it out, then the one after it is shown).
WATCH = """
window.__long = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) window.__long.push({start: e.startTime, ms: e.duration});
}).observe({type: 'longtask', buffered: true});
window.__last = 0; window.__painted = 0;
new MutationObserver(() => {
  const at = performance.now();
  window.__last = at;
  requestAnimationFrame(() => requestAnimationFrame(() => {
    if (window.__last === at) window.__painted = performance.now();
  }));
}).observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
"""

CLICK = """(id) => {
  window.__t0 = performance.now();
  document.querySelector(`#history li[data-trace-id="${id}"] button`).click();
}"""

SETTLED = """() => window.__painted > window.__last && window.__last > window.__t0
  && document.querySelector('#rankflow-canvas g.node') !== null"""

REPLAYED = """() => ({
  painted_ms: window.__painted - window.__t0,
  longest_task_ms: Math.max(0, ...window.__long.filter(t => t.start >= window.__t0).map(t => t.ms)),
  boxes: document.querySelectorAll('#rankflow-canvas g.node').length,
})"""

# A synchronous redraw: the time the change handler holds the main thread.
REDRAW = """(rows) => {
  const select = document.querySelector('#rankflow-rows');
  const t = performance.now();
  select.value = rows;
  select.dispatchEvent(new Event('change'));
  return performance.now() - t;
}"""

UNFOLD = """() => {
  const names = [...document.querySelectorAll('#rankflow-folds button[data-fold]')].map(b => b.dataset.fold);
  if (!names.length) return null;
  const t = performance.now();
  for (const name of names) document.querySelector(`#rankflow-folds button[data-fold="${name}"]`).click();
  return performance.now() - t;
}"""


# -- the store, its traces and the two builds of the page -------------------------------------------


def build(folder: Path) -> tuple[Store, PipelineConfig]:
    store = Store(folder / "store", root=ROOT)
    ingest(store, [TECH], make_chunker("structural", size=256))
    config = PipelineConfig(chunking=store_chunking(store))
    sync_indexes(store, [config], HashEmbedder(dim=256))
    return store, config


def ask(url: str, question: str, overrides: dict[str, Any]) -> tuple[str, int]:
    """The question asked once over HTTP: its stored trace's id and how many stages it streamed."""
    stages, trace_id = 0, None
    with httpx.stream(
        "POST", f"{url}/api/chat", json={"question": question, "config": overrides}, timeout=READY_WITHIN_S
    ) as response:
        response.raise_for_status()
        for event in read_events(response.iter_lines()):
            if event.kind == "error":
                raise SystemExit(f"{question!r} failed: {event.data['message']}")
            stages += event.kind == "stage"
            if event.kind == "done":
                trace_id = event.data["trace_id"]
    if trace_id is None:
        raise SystemExit(f"{question!r}: the stream ended without a done event")
    return trace_id, stages


def checkout_static(commit: str, folder: Path) -> Path:
    """``clear_rag/web/static`` as it was at ``commit``, written into ``folder`` (made here)."""
    folder.mkdir()
    listed = subprocess.run(
        ["git", "ls-tree", "--name-only", commit, "clear_rag/web/static/"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    if not listed:
        raise SystemExit(f"{commit} has no clear_rag/web/static/: pass --base a commit of this repository")
    for path in listed:
        blob = subprocess.run(["git", "show", f"{commit}:{path}"], cwd=ROOT, capture_output=True, check=True)
        (folder / Path(path).name).write_bytes(blob.stdout)
    return folder


@contextmanager
def page_of(static: Path, store: Store, config: PipelineConfig, models: Models) -> Iterator[str]:
    """The server with its page and scripts read from ``static``: the index is looked up when asked
    for, so the module's STATIC stays pointed there while this is open."""
    before = web_app.STATIC
    web_app.STATIC = static
    try:
        with serving(web_app.create_app(store, config, models)) as url:
            yield url
    finally:
        web_app.STATIC = before


# -- one round in the browser -----------------------------------------------------------------------


def replay(browser: Any, url: str, trace_id: str) -> dict[str, float | None]:
    context = browser.new_context(viewport=SIZE)  # a fresh cache: both builds load their scripts cold
    try:
        page = context.new_page()
        page.set_default_timeout(WAIT_MS)
        page.add_init_script(WATCH)
        page.goto(url)
        page.wait_for_selector(f'#history li[data-trace-id="{trace_id}"] button', state="attached")
        page.evaluate(CLICK, trace_id)
        page.wait_for_load_state("networkidle")  # the titles a replay asks for, where it asks
        page.wait_for_function(SETTLED)
        out: dict[str, float | None] = page.evaluate(REPLAYED)
        out["rows_all_ms"] = page.evaluate(REDRAW, "all")
        out["rows_back_ms"] = page.evaluate(REDRAW, "30")
        out["unfold_ms"] = page.evaluate(UNFOLD)
        return out
    finally:
        context.close()


FIGURES = ("painted_ms", "longest_task_ms", "rows_all_ms", "rows_back_ms", "unfold_ms")


def _ratio(pairs: Sequence[tuple[float | None, float | None]]) -> float | None:
    """The median of a / b over the rounds where both were measured and b is not 0."""
    got = [a / b for a, b in pairs if a is not None and b]
    return round(statistics.median(got), 3) if got else None


def chromium_version() -> str:
    said = subprocess.run([str(CHROMIUM), "--version"], capture_output=True, text=True, check=False).stdout
    return said.strip().removeprefix("Chromium ").split(" ")[0] or "unknown"


def median(values: list[float | None]) -> float | None:
    have = [v for v in values if v is not None]
    return round(statistics.median(have), 1) if have else None


def measure(rounds: int, base: str) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    if not CHROMIUM.exists():
        raise SystemExit(f"{CHROMIUM} is missing: `make chromium` installs Debian's chromium")
    with tempfile.TemporaryDirectory(prefix="bench-rankflow-") as tmp:
        folder = Path(tmp)
        store, config = build(folder)
        models = Models(HashEmbedder(dim=256), EchoChatModel(), lambda name: LexicalReranker())
        static = {
            "this tree": ROOT / "clear_rag" / "web" / "static",
            f"before ({base})": checkout_static(base, folder / "base-static"),
        }
        traces: dict[str, tuple[str, int]] = {}
        with page_of(static["this tree"], store, config, models) as url:
            for name, (question, overrides) in QUESTIONS.items():
                traces[name] = ask(url, question, overrides)
        runs: dict[str, dict[str, list[dict[str, float | None]]]] = {
            name: {who: [] for who in static} for name in QUESTIONS
        }
        load_before = os.getloadavg()
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=str(CHROMIUM), args=["--headless", "--no-sandbox", "--disable-gpu"]
            )
            try:
                for r in range(rounds):
                    order = list(static) if r % 2 == 0 else list(reversed(static))
                    for who in order:
                        with page_of(static[who], store, config, models) as url:
                            for name, (trace_id, _) in traces.items():
                                runs[name][who].append(replay(browser, url, trace_id))
            finally:
                browser.close()
        load_after = os.getloadavg()
        store.close()
    ours, peer = static  # this tree first
    rows = {}
    for name, by in runs.items():
        contenders: dict[str, Any] = {
            who: {
                "boxes": int(statistics.median(r["boxes"] or 0 for r in got)),
                **{key: median([r[key] for r in got]) for key in FIGURES},
            }
            for who, got in by.items()
        }
        # paired by round: this tree's figure over the peer's in the same round, the median of those
        contenders[ours]["ratio_to_peer"] = {
            key: _ratio([(a[key], b[key]) for a, b in zip(by[ours], by[peer], strict=True)])
            for key in ("painted_ms", "longest_task_ms", "rows_all_ms")
        }
        rows[name] = {"stages": traces[name][1], "contenders": contenders}
    return {
        "traces": rows,
        "rounds": rounds,
        "load_average_at_start": [round(v, 2) for v in load_before],
        "load_average_at_end": [round(v, 2) for v in load_after],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7, help="rounds per contender (default 7)")
    parser.add_argument("--base", default=BASE, help=f"the commit whose page is the peer (default {BASE})")
    args = parser.parse_args()
    started = time.perf_counter()
    from importlib.metadata import version

    result = {
        "benchmark": "rankflow",
        "command": shlex.join(
            ["python", "-m", "bench.rankflow", "--rounds", str(args.rounds), "--base", args.base]
        ),
        "corpus": "corpora/tech, structural chunks of 256 tokens",
        "providers": "hash embedder (256 dims), echo chat model (writes the phrasings), lexical reranker",
        "browser": f"{CHROMIUM} headless, {SIZE['width']}x{SIZE['height']}",
        "versions": {"chromium": chromium_version(), "playwright": version("playwright")},
        "peer": f"the page at {args.base} (rank flow in arrival order, one column per stage)",
        **measure(args.rounds, args.base),
    }
    result["elapsed_s"] = round(time.perf_counter() - started, 1)
    from clear_rag.report.bench import bench_table

    publish("rankflow", result, lambda doc: bench_table(doc, "rankflow") + "\n")


if __name__ == "__main__":
    main()
