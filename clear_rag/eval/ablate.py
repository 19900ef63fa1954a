"""The ablation runner: every row of a suite over the same questions, scored on span labels.

Each chunking gets its own store (the corpus is parsed once per store and then skipped by hash), each
row's traces are stored, and the metrics can be recomputed from those traces without any model
(``replay``). Rows are compared with the baseline row and with the row before them.
"""

from __future__ import annotations

import hashlib
import re
import statistics
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from clear_rag.chunk.factory import make_chunker
from clear_rag.config import ChunkingConfig, PipelineConfig
from clear_rag.errors import ConfigError
from clear_rag.eval import beir
from clear_rag.eval import metrics as m
from clear_rag.eval.golden import GoldenSet, Question, load_golden
from clear_rag.eval.significance import compare
from clear_rag.eval.suite import Row, Suite
from clear_rag.generate.queries import expand, hypothetical_passage
from clear_rag.ingest import IngestReport, ParsedFile, ingest, ingest_documents
from clear_rag.providers.base import ChatModel, Embedder, describe
from clear_rag.session import open_pipeline
from clear_rag.store.sqlite import Store
from clear_rag.types import Candidate, Trace

STORE_ROOT = Path(".clear-rag") / "ablate"
METRICS: dict[str, tuple[Callable[[Sequence[m.Span], Sequence[m.Span], int], float], int]] = {
    "recall@5": (m.span_recall_at_k, 5),
    "recall@10": (m.span_recall_at_k, 10),
    "mrr@10": (m.span_mrr_at_k, 10),
    "ndcg@10": (m.span_ndcg_at_k, 10),
}
Progress = Callable[[Iterable[Question], str], Iterable[Question]]


@dataclass(frozen=True, slots=True)
class Prepared:
    """A suite's data in one store: the store for a chunking, and the golden set resolved in it."""

    store: Store
    golden: GoldenSet
    corpus_sha256: str
    qrels: Mapping[str, Mapping[str, float]] | None = None  # document-level judgements (BEIR)


def ranked_stage(trace: Trace) -> tuple[Candidate, ...]:
    """The final ranking a trace produced: its last stage before context assembly."""
    ranked = [s for s in trace.stages if s.name != "context"]
    return ranked[-1].candidates if ranked else ()


def score(ranking: Sequence[Candidate], question: Question) -> dict[str, Any]:
    """Per-question metrics and detail for one ranking."""
    labels = question.labels
    first = m.first_covering_rank(ranking, labels)
    covered = sorted(set().union(*m.covered_at(ranking[:10], labels)))
    return {
        "id": question.id,
        "category": question.category,
        "first_rank": first,
        "covered": covered,
        "labels": len(labels),
        "retrieved": [c.chunk_id for c in ranking[:10]],
        "metrics": {name: round(fn(ranking, labels, k), 6) for name, (fn, k) in METRICS.items()},
    }


def evaluate(
    trace: Trace, question: Question, qrels: Mapping[str, Mapping[str, float]] | None
) -> dict[str, Any]:
    """Score a trace's ranking on span labels and, where judged per document, on the qrels too."""
    detail = score(ranked_stage(trace), question)
    if qrels is not None:
        ranking = m.first_occurrences([c.doc_id for c in ranked_stage(trace)])
        detail["metrics"]["doc ndcg@10"] = round(m.ndcg_at_k(ranking, qrels.get(question.id, {}), 10), 6)
    return detail


def store_dir(suite: Suite, chunking: ChunkingConfig, root: Path) -> Path:
    """The store for one chunking of the suite's corpus.

    Named by the corpus, not the suite, so that suites over the same corpus and chunking (tech and
    tech-expansion, say) share one store and its embeddings are computed once.
    """
    key = PipelineConfig(chunking=chunking).to_dict()["chunking"]
    digest = hashlib.sha256(repr(sorted(key.items())).encode()).hexdigest()[:10]
    source = suite.beir or suite.corpus or Path(suite.name)
    corpus = re.sub(r"[^A-Za-z0-9]+", "-", source.name).strip("-") or suite.name
    return root / f"{corpus}-{chunking.chunker}-{digest}"


def prepare(suite: Suite, chunking: ChunkingConfig, root: Path) -> Prepared:
    """Open (or fill) the store for one chunking of the suite's corpus and resolve its labels."""
    store, _ = fill_store(suite, chunking, root)
    return prepared_in(suite, store)


def fill_store(
    suite: Suite, chunking: ChunkingConfig, root: Path, parsed: Mapping[str, ParsedFile] | None = None
) -> tuple[Store, IngestReport]:
    """The store for one chunking of the suite's corpus, brought up to date with the corpus.

    A corpus suite's files are ingested (unchanged files skipped by hash, vanished ones pruned); a
    BEIR suite's ``corpus.jsonl`` lines are, each document skipped by its content hash. Split out of
    ``prepare`` so that a pipeline step (the Dagster store asset) can fill a store and report what
    changed without resolving the golden set; ``parsed`` holds the corpus files it parsed already.
    """
    chunker = make_chunker(chunking.chunker, size=chunking.size, overlap=chunking.overlap)
    if suite.beir is not None:
        store = Store(store_dir(suite, chunking, root), root=suite.beir)
        report = ingest_documents(store, beir.documents(beir.load(suite.beir)), chunker, parser=beir.PARSER)
    elif suite.corpus is not None and suite.golden is not None:
        store = Store(store_dir(suite, chunking, root), root=Path.cwd())
        report = ingest(store, [suite.corpus], chunker, prune=True, parsed=parsed)
    else:
        raise ValueError(f"suite {suite.name!r} has neither a corpus/golden pair nor a BEIR folder")
    failed = [o.message for o in report.outcomes if o.action == "failed"]
    if failed:
        store.close()
        raise ValueError(f"suite {suite.name!r}: corpus files failed to ingest: {failed}")
    return store, report


def corpus_sha256(store: Store) -> str:
    """One digest of every stored document's id and content hash: which corpus a result measured."""
    records = store.records()
    return hashlib.sha256("".join(f"{r.id}:{r.content_hash}\n" for r in records).encode()).hexdigest()


def prepared_in(suite: Suite, store: Store) -> Prepared:
    """A suite's data in a store already filled (``fill_store``): labels resolved, the corpus digest,
    and for a BEIR suite its judgements (the digest is then of ``corpus.jsonl``, as BEIR rows record)."""
    if suite.beir is not None:
        dataset = beir.load(suite.beir)
        return Prepared(store, golden_in(suite, store), beir.file_sha256(dataset.corpus_path), dataset.qrels)
    return Prepared(store, golden_in(suite, store), corpus_sha256(store))


def golden_in(suite: Suite, store: Store) -> GoldenSet:
    """The suite's labels resolved against the canonical texts in ``store``."""
    texts = {r.id: store.document_text(r.id) for r in store.records()}
    if suite.beir is not None:
        return beir.rationale_golden(beir.load(suite.beir), texts)
    return load_golden(suite.golden or Path(), texts)


def needs_chat(config: PipelineConfig) -> bool:
    return config.expand > 0 or config.hyde


def run_row(
    row: Row,
    prepared: Prepared,
    embedder: Embedder | None,
    progress: Progress | None = None,
    *,
    chat: ChatModel | None = None,
) -> dict[str, Any]:
    """Run one row over every question; per-question detail, aggregates and timings.

    Rows that expand the query or use HyDE ask ``chat`` for phrasings or a passage first; the time
    that takes counts in the row's seconds per question.
    """
    if needs_chat(row.config) and chat is None:
        raise ConfigError(
            "expands the query or uses HyDE, which needs a chat model",
            field=f"row {row.name!r}",
            fix="Pass --chat (e.g. --chat smollm2)",
        )
    vector = "vector" in row.config.retrievers
    pipeline, _ = open_pipeline(prepared.store, row.config, embedder=embedder if vector else None)
    questions: list[dict[str, Any]] = []
    seconds: list[float] = []
    items = prepared.golden.questions
    for question in progress(items, row.name) if progress is not None else items:
        started = time.perf_counter()
        phrasings: list[str] = []
        hypothetical = None
        if chat is not None and row.config.expand:
            phrasings, _ = expand(chat, question.question, row.config.expand)
        if chat is not None and row.config.hyde:
            hypothetical = hypothetical_passage(chat, question.question)
        trace, _ = pipeline.retrieve(question.question, phrasings=phrasings, hypothetical=hypothetical)
        if chat is not None and needs_chat(row.config):
            trace = replace(trace, models={**trace.models, "chat": describe(chat)})
        seconds.append(time.perf_counter() - started)
        prepared.store.save_trace(trace, config_hash=row.config.hash())
        questions.append({**evaluate(trace, question, prepared.qrels), "trace": trace.id})
    return {
        "name": row.name,
        "config": row.config.to_dict(),
        "config_hash": row.config.hash(),
        "models": {
            **pipeline.models,
            **({"chat": describe(chat)} if chat and needs_chat(row.config) else {}),
        },
        "store": str(prepared.store.directory),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "corpus_sha256": prepared.corpus_sha256,
        "golden_sha256": prepared.golden.sha256,
        "metrics": aggregate(questions),
        "by_category": {
            cat: aggregate([q for q in questions if q["category"] == cat])
            for cat in prepared.golden.categories()
        },
        "seconds_per_question": round(statistics.median(seconds), 4) if seconds else 0.0,
        "questions": questions,
    }


def aggregate(questions: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """Mean of each metric over ``questions`` (all of them carry the same metric names)."""
    if not questions:
        return {}
    names = questions[0]["metrics"]
    return {name: round(statistics.fmean(q["metrics"][name] for q in questions), 4) for name in names}


def comparisons(rows: list[dict[str, Any]], baseline: str) -> None:
    """Attach paired comparisons against the baseline row and the previous row to every row."""
    by_name = {r["name"]: r for r in rows}
    for n, row in enumerate(rows):
        against = {"baseline": by_name[baseline]} if row["name"] != baseline else {}
        if n > 0:
            against["previous"] = rows[n - 1]
        row["comparisons"] = {
            role: {
                name: compare(
                    name,
                    other["name"],
                    [q["metrics"][name] for q in other["questions"]],
                    [q["metrics"][name] for q in row["questions"]],
                ).to_dict()
                for name in row["metrics"]
            }
            for role, other in against.items()
        }


def run_suite(
    suite: Suite,
    *,
    embedder: Embedder | None,
    root: Path = STORE_ROOT,
    progress: Progress | None = None,
    chat: ChatModel | None = None,
) -> dict[str, Any]:
    """Every row of ``suite``; the result document ``results/<suite>.json`` holds."""
    prepared: dict[ChunkingConfig, Prepared] = {}
    rows = []
    for row in suite.rows:
        chunking = row.config.chunking
        if chunking not in prepared:
            prepared[chunking] = prepare(suite, chunking, root)
        rows.append(run_row(row, prepared[chunking], embedder, progress, chat=chat))
    result = result_document(suite, rows, next(iter(prepared.values())), embedder)
    for item in prepared.values():
        item.store.close()
    return result


def result_document(
    suite: Suite, rows: list[dict[str, Any]], first: Prepared, embedder: Embedder | None
) -> dict[str, Any]:
    """The result document for ``rows`` (``run_row`` outputs in suite order); attaches comparisons.

    ``first`` is the prepared data of the first row's chunking, whose corpus digest and golden set the
    document records. Shared by ``run_suite`` and the Dagster result asset so both write the same file.
    """
    comparisons(rows, suite.baseline)
    golden = first.golden
    return {
        "suite": suite.name,
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "embedder": describe(embedder) if embedder is not None else None,
        "corpus": {"path": str(suite.beir or suite.corpus), "sha256": first.corpus_sha256},
        "golden": {
            "path": str(suite.golden or (suite.beir or Path()) / beir.RATIONALES),
            "sha256": golden.sha256,
            "questions": len(golden.questions),
            "categories": {c: sum(q.category == c for q in golden.questions) for c in golden.categories()},
        },
        "baseline": suite.baseline,
        "metric_names": list(rows[0]["metrics"]),
        "rows": rows,
    }


def replay(result: Mapping[str, Any], suite: Suite, root: Path = STORE_ROOT) -> dict[str, dict[str, Any]]:
    """Recompute every row's per-question metrics from its stored traces, with no model at all."""
    replayed: dict[str, dict[str, Any]] = {}
    for row_result, row in zip(result["rows"], suite.rows, strict=True):
        recorded = row_result.get("store")
        with Store(Path(recorded) if recorded else store_dir(suite, row.config.chunking, root)) as store:
            golden = {q.id: q for q in golden_in(suite, store).questions}
            qrels = beir.load(suite.beir).qrels if suite.beir is not None else None
            replayed[row.name] = {
                q["id"]: evaluate(store.load_trace(q["trace"]), golden[q["id"]], qrels)["metrics"]
                for q in row_result["questions"]
            }
    return replayed
