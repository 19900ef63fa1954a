"""How soon the page sees something: time to the first stage event and to the first token over HTTP.

    python -m bench.serve [--questions 50] [--docs 100000] [--no-keyword-only]
    python -m bench.serve --memory [--docs 100000,1000000] [--rounds 3] [--before REV [--before-docs 100000]]

Two stores, each chunked whole (one chunk per document) and indexed as ``clear-rag ingest`` leaves
a store (``sync_indexes``: BM25 and the 256-dimension hash embedder's vectors): the SciFact
abstracts (5,183 chunks; skipped with a message where ../shared/data is absent) and 100,000
synthetic passages of 20-60 words (Zipf s = 1 over 20,000 seeded random words). The app
(``create_app``, fake providers: the hash embedder and the echo chat model, no reranker) runs on
uvicorn on 127.0.0.1 in a thread of this process, as the HTTP tests run it; an httpx client on one
kept-alive connection posts each question to ``/api/chat`` and stamps each SSE event as it arrives.

Per store and config (hybrid keyword + vector, the default; then keyword only), the first question
is timed apart (it loads the indexes), a few more are asked untimed, then ``--questions`` questions
(SciFact test claims; seeded synthetic queries of 2-6 words) are timed one after another: client
time to the first ``stage`` event, to the first ``token`` and to ``done``, as median and p90, beside
the server's own figures from the ``done`` event (measured from the request's arrival, so reading
it and opening the config's indexes are in them) and each stage's ``elapsed_ms``, with the context
stage's time against the retrieval stages' (keyword, vector and fusion summed) per question. The
issue's target is the median time to the first stage event under 50 ms at SciFact size, hybrid config.
Written to results/bench/serve.json.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from bench.common import SCIFACT, ZipfText, counts, publish
from clear_rag.chunk.factory import make_chunker
from clear_rag.config import PipelineConfig
from clear_rag.eval import beir
from clear_rag.ingest import ingest_documents
from clear_rag.providers.fake import EchoChatModel, HashEmbedder
from clear_rag.session import store_chunking, sync_indexes
from clear_rag.store import Store
from clear_rag.types import Block, Document
from clear_rag.web.app import create_app
from clear_rag.web.runner import Models
from clear_rag.web.serving import READY_WITHIN_S, read_events, serving

SEED = 20240612
TARGET_MS = 50.0  # issue 12: first stage event under 50 ms at SciFact size
WARM_UP = 3  # untimed questions after the cold one, per config
CONFIGS: dict[str, dict[str, Any]] = {"hybrid": {}, "keyword": {"retrievers": ["keyword"]}}

Corpus = tuple[list[Document], list[str], str]


# -- data ---------------------------------------------------------------------------------------


def scifact(questions: int) -> Corpus | None:
    """The SciFact abstracts as ``beir.documents`` makes them (title, blank line, text) and its test
    claims; None where the data is absent."""
    if not (SCIFACT / "corpus.jsonl").exists() or not (SCIFACT / "queries.jsonl").exists():
        return None
    dataset = beir.load(SCIFACT)
    docs = list(beir.documents(dataset))
    claims = list(dataset.queries.values())
    return docs, claims[: questions + WARM_UP + 1], f"beir-scifact: {len(docs)} abstracts, test claims"


def synthetic(n_docs: int, questions: int) -> Corpus:
    """Passages of 20-60 words and queries of 2-6 words from one Zipf (s = 1) over 20,000 words."""
    draw = ZipfText(SEED, 20_000).draw

    docs = []
    for i, text in enumerate(draw(n_docs, 20, 60)):
        digest = hashlib.sha256(text.encode()).hexdigest()
        docs.append(
            Document(f"p{i:06d}", f"synthetic#{i}", digest, text, (Block("paragraph", 0, len(text)),))
        )
    queries = draw(questions + WARM_UP + 1, 2, 6)
    what = f"synthetic: {n_docs} passages of 20-60 words, Zipf s=1 over 20,000 words, seed {SEED}"
    return docs, queries, what


def build(folder: Path, docs: list[Document]) -> tuple[Store, dict[str, float]]:
    """A store with ``docs`` chunked whole and its indexes synced: what ``clear-rag ingest`` leaves."""
    store = Store(folder, root=folder.parent)
    started = time.perf_counter()
    ingest_documents(store, docs, make_chunker("whole", size=256), parser="bench/serve@1")
    ingested = time.perf_counter()
    config = PipelineConfig(chunking=store_chunking(store))
    sync_indexes(store, [config], HashEmbedder(dim=256))
    synced = time.perf_counter()
    return store, {"ingest_s": round(ingested - started, 2), "index_s": round(synced - ingested, 2)}


# -- the server and its stream ------------------------------------------------------------------


def ask(client: httpx.Client, url: str, question: str, overrides: dict[str, Any]) -> dict[str, Any]:
    """One question: client ms to the first stage, first token and done; the done event's timings;
    each stage's server-side ``elapsed_ms``. Events are stamped when their blank line arrives."""
    body = {"question": question, "config": overrides}
    seen: dict[str, float] = {}
    stages: dict[str, float] = {}
    done: dict[str, Any] = {}
    started = time.perf_counter()
    with client.stream("POST", f"{url}/api/chat", json=body) as response:
        if response.status_code != 200:
            raise SystemExit(f"POST /api/chat answered {response.status_code}: {response.read()!r}")
        for event in read_events(response.iter_lines()):
            seen.setdefault(event.kind, (time.perf_counter() - started) * 1000)
            if event.kind == "error":
                raise SystemExit(f"the question {question!r} failed: {event.data['message']}")
            if event.kind == "stage":
                stages[event.data["name"]] = event.data["elapsed_ms"]
            elif event.kind == "done":
                done = event.data
    missing = {"stage", "token", "done"} - set(seen)
    if missing:
        raise SystemExit(f"the stream for {question!r} lacked {sorted(missing)} events")
    return {
        "first_stage_ms": seen["stage"],
        "first_token_ms": seen["token"],
        "done_ms": seen["done"],
        "server": done["timings"],
        "stages": stages,
    }


def _summary(values: list[float], digits: int = 2) -> dict[str, float]:
    p90 = statistics.quantiles(values, n=10, method="inclusive")[8] if len(values) > 1 else values[0]
    return {"median": round(statistics.median(values), digits), "p90": round(p90, digits)}


def measure(store: Store, questions: list[str], configs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Per config: the cold question, then the timed ones (after the untimed warm-ups)."""
    base = PipelineConfig(chunking=store_chunking(store))
    app = create_app(store, base, Models(HashEmbedder(dim=256), EchoChatModel(), None, {}))
    out: dict[str, Any] = {}
    with serving(app) as url, httpx.Client(timeout=READY_WITHIN_S) as client:
        for name, overrides in configs.items():
            cold = ask(client, url, questions[0], overrides)
            for question in questions[1 : WARM_UP + 1]:
                ask(client, url, question, overrides)
            runs = [ask(client, url, q, overrides) for q in questions[WARM_UP + 1 :]]
            stage_names = list(runs[0]["stages"])
            out[name] = {
                "overrides": overrides,
                "questions": len(runs),
                "cold_first_stage_ms": round(cold["first_stage_ms"], 2),
                "cold_done_ms": round(cold["done_ms"], 2),
                "client_ms": {
                    key: _summary([r[key] for r in runs])
                    for key in ("first_stage_ms", "first_token_ms", "done_ms")
                },
                "server_ms": {
                    key: _summary([r["server"][key] for r in runs])
                    for key in ("first_stage_ms", "first_token_ms", "total_ms")
                },
                "stage_elapsed_ms": {
                    stage: _summary([r["stages"][stage] for r in runs if stage in r["stages"]])
                    for stage in stage_names
                },
                "context_vs_retrieval": _against_retrieval(runs),
            }
    return out


def _against_retrieval(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Per question, the retrieval stages' own times summed (every stage before the context: keyword,
    vector, fusion) and the context stage's time over that sum; median and p90 of each (issue 32)."""
    sums = [sum(ms for stage, ms in r["stages"].items() if stage != "context") for r in runs]
    ratios = [r["stages"]["context"] / total for r, total in zip(runs, sums, strict=True)]
    return {
        "retrieval_ms": _summary(sums),
        "context_ms": _summary([r["stages"]["context"] for r in runs]),
        "ratio": _summary(ratios, digits=4),
    }


# -- report -------------------------------------------------------------------------------------


def render(result: dict[str, Any]) -> str:
    head = f"{'store':<10} {'config':<8} {'chunks':>7} {'cold 1st stage':>14} {'1st stage':>15} "
    head += f"{'1st token':>15} {'done':>15} {'server 1st stage':>16}"
    lines = [head, "-" * len(head)]
    for label, point in result["stores"].items():
        for name, row in point["configs"].items():
            c, s = row["client_ms"], row["server_ms"]

            def pair(x: dict[str, float]) -> str:
                return f"{x['median']:>6.1f} / {x['p90']:>6.1f}"

            lines.append(
                f"{label:<10} {name:<8} {point['chunks']:>7} {row['cold_first_stage_ms']:>12.0f} ms "
                f"{pair(c['first_stage_ms'])} {pair(c['first_token_ms'])} {pair(c['done_ms'])} "
                f"{s['first_stage_ms']['median']:>13.1f} ms"
            )
    lines.append("ms, median / p90 of the timed questions, client side; server: the done event's timings")
    for label, point in result["stores"].items():
        for name, row in point["configs"].items():
            stages = ", ".join(f"{k} {v['median']:.1f}" for k, v in row["stage_elapsed_ms"].items())
            lines.append(f"  {label} {name} stage medians (ms): {stages}")
            against = row.get("context_vs_retrieval")
            if against:
                lines.append(
                    f"  {label} {name} context / retrieval stages, per question: median "
                    f"{against['ratio']['median']:.3f} (p90 {against['ratio']['p90']:.3f})"
                )
    lines.append(f"Target: {result['target']}")
    return "\n".join(lines) + "\n"


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line, checked: ``--docs`` one size, or with ``--memory`` a list of sizes;
    ``--before-docs`` only sizes of ``--docs``, with ``--memory --before``."""
    parser = argparse.ArgumentParser(
        "python -m bench.serve", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--questions", type=int, default=50, help="timed questions per store and config")
    parser.add_argument(
        "--docs",
        type=counts,
        default=[100_000],
        help="synthetic passages (one chunk each); with --memory a list of sizes, e.g. 100000,1000000",
    )
    parser.add_argument("--no-keyword-only", action="store_true", help="time the hybrid config only")
    parser.add_argument(
        "--memory", action="store_true", help="a fresh server's memory instead (bench.serve_memory)"
    )
    parser.add_argument("--rounds", type=int, default=3, help="--memory: fresh servers per side (median)")
    parser.add_argument("--before", help="--memory: an earlier commit whose server to measure beside")
    parser.add_argument(
        "--before-docs",
        type=counts,
        help="--memory --before: the sizes of --docs at which to measure the earlier commit (default all)",
    )
    args = parser.parse_args(argv)
    shown = ",".join(map(str, args.docs))
    if not args.memory and len(args.docs) != 1:
        parser.error(f"argument --docs: {shown!r} names several sizes; without --memory pass one")
    if args.before_docs is not None:
        if not (args.memory and args.before):
            parser.error("argument --before-docs: only with --memory and --before")
        if extra := [n for n in args.before_docs if n not in args.docs]:
            parser.error(
                f"argument --before-docs: {','.join(map(str, extra))!r} is not among --docs {shown!r}; "
                "name sizes that --docs measures"
            )
    return args


def main() -> None:
    args = arguments()
    if args.memory:
        from bench import serve_memory

        serve_memory.main(args.docs, args.rounds, args.before, args.before_docs)
        return
    configs = {"hybrid": CONFIGS["hybrid"]} if args.no_keyword_only else CONFIGS
    started = time.perf_counter()
    result: dict[str, Any] = {
        "benchmark": "serve",
        "providers": "hash embedder (dim 256), echo chat model, no reranker",
        "server": "uvicorn on 127.0.0.1 in a thread of the benchmark's process; httpx client, one "
        "kept-alive connection, questions asked one at a time",
        "configs": configs,
        "warm_up_questions": WARM_UP,
        "load_average_at_start": os.getloadavg(),
        "stores": {},
    }
    corpora: list[tuple[str, Corpus]] = []
    found = scifact(args.questions)
    if found is None:
        print(f"SciFact skipped: {SCIFACT} is absent")
    else:
        corpora.append(("scifact", found))
    with tempfile.TemporaryDirectory() as tmp:
        corpora.append(("synthetic", synthetic(args.docs[0], args.questions)))
        for label, (docs, questions, what) in corpora:
            store, timings = build(Path(tmp) / label, docs)
            print(f"{label}: {what}; ingest {timings['ingest_s']} s, index {timings['index_s']} s")
            with store:
                result["stores"][label] = {
                    "corpus": what,
                    "chunks": store.stats().chunks,
                    "build": timings,
                    "configs": measure(store, questions, configs),
                }
    result["load_average_at_end"] = os.getloadavg()
    scifact_point = result["stores"].get("scifact")
    if scifact_point is None:
        result["target"] = (
            f"first stage event < {TARGET_MS:.0f} ms at SciFact size: not measured (SciFact absent)"
        )
    else:
        first = scifact_point["configs"]["hybrid"]["client_ms"]["first_stage_ms"]
        verdict = "MET" if first["median"] < TARGET_MS else "MISSED"
        result["target"] = (
            f"first stage event < {TARGET_MS:.0f} ms at SciFact size (hybrid, client median): "
            f"{first['median']:.1f} ms (p90 {first['p90']:.1f} ms) -> {verdict}"
        )
    result["elapsed_s"] = round(time.perf_counter() - started, 1)
    publish("serve", result, render)


if __name__ == "__main__":
    main()
