"""The evaluation runner: every row of a suite over the same questions, through the one question path.

A suite over a corpus folder and a BEIR dataset run the same way. Per chunking the rows use, the
corpus is ingested into its own store and the indexes those rows search are brought up to date
(``prepare``: the ingest step, with progress). Each row then asks every question through
``Planner.run`` without generating an answer, exactly as ``clear-rag ask --no-generate`` does;
each trace is stored, scored (span metrics where a question has span labels, document metrics
where it has qrels) and can be scored again later from the store with no model (``replay``).
Rows are compared with the baseline row and the row before them (``results.document``).
"""

from __future__ import annotations

import functools
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from clear_rag.config import ChunkingConfig
from clear_rag.errors import ConfigError, ModelMissing
from clear_rag.eval import metrics as m
from clear_rag.eval.answers import ANSWER_METRICS, grade_trace
from clear_rag.eval.golden import Question
from clear_rag.eval.labels import Labels
from clear_rag.eval.loss import where_lost
from clear_rag.eval.stores import Progress, chunks_by_doc, corpus_sha256, prepare, store_dir, suite_labels
from clear_rag.eval.suite import Row, Suite
from clear_rag.generate.planner import Planner
from clear_rag.progress import Progress as ProgressReport
from clear_rag.providers.base import ChatModel, Embedder
from clear_rag.providers.select import support_checker
from clear_rag.results.document import aggregate, result_document, with_subset
from clear_rag.retrieve.pipeline import final_ranking
from clear_rag.retrieve.stages import ChunkRef
from clear_rag.session import open_pipeline
from clear_rag.store.sqlite import Store
from clear_rag.types import Candidate, Trace

# each support model loaded once for every row (of every suite) this process runs
checker = functools.cache(support_checker)


def metric_names(suite: Suite, labels: Labels) -> list[str]:
    """What the suite reports: its ``metrics:`` (checked when the suite loads), or the answer grades
    where its rows generate, span metrics where there are span labels and document nDCG@10 where
    there are qrels."""
    if suite.metrics:
        return list(suite.metrics)
    return [
        *(ANSWER_METRICS if suite.generate else ()),
        *(m.SPAN_METRICS if labels.spans else ()),
        *(m.DOC_METRICS[:1] if labels.qrels else ()),
    ]


def score(
    ranking: Sequence[Candidate],
    question: Question,
    qrels: Mapping[str, float] | None,
    chunks: Mapping[str, Sequence[ChunkRef]],
    names: Sequence[str],
) -> dict[str, Any]:
    """One question's metrics (those of ``names`` its labels allow) and what decided them."""
    labels = question.labels
    values: dict[str, float] = {}
    detail: dict[str, Any] = {"id": question.id, "category": question.category}
    if labels:
        spans = [c for doc in {label.doc_id for label in labels} for c in chunks.get(doc, ())]
        span_values = {
            "recall@5": m.span_recall_at_k(ranking, labels, 5),
            "recall@10": m.span_recall_at_k(ranking, labels, 10),
            "mrr@10": m.span_mrr_at_k(ranking, labels, 10),
            "ndcg@10": m.span_ndcg_at_k(ranking, labels, 10, chunks=spans),
        }
        values.update({k: v for k, v in span_values.items() if k in names})
        detail["first_rank"] = m.first_covering_rank(ranking, labels)
        detail["covered"] = sorted(set().union(*m.covered_at(ranking[:10], labels)))
        detail["labels"] = len(labels)
        unresolved = [label.quote for label in labels if not label.resolved]
        if unresolved:  # quotes this row's parsed text does not hold once: misses, not errors
            detail["unresolved"] = unresolved
        detail["relevant_chunks"] = len(m.relevant_chunks(spans, labels))
    if qrels:
        docs = m.first_occurrences([c.doc_id for c in ranking])
        doc_values = {
            "doc ndcg@10": m.ndcg_at_k(docs, qrels, 10),
            "doc recall@100": m.recall_at_k(docs, qrels, 100),
            "doc mrr@10": m.mrr_at_k(docs, qrels, 10),
            "doc recall@10": m.recall_at_k(docs, qrels, 10),
        }
        values.update({k: v for k, v in doc_values.items() if k in names})
    detail["retrieved"] = [c.chunk_id for c in ranking[:10]]
    detail["metrics"] = {name: round(values[name], 6) for name in names if name in values}
    return detail


def judged(
    trace: Trace,
    question: Question,
    labels: Labels,
    chunks: Mapping[str, Sequence[ChunkRef]],
    names: Sequence[str],
) -> dict[str, Any]:
    """What a trace says of one question: its metrics and what decided them (``score``), with span
    labels where its answer was lost, and where the suite grades answers, the grades and what decided
    each (``answers.grade_trace``). ``run_row`` records it; ``replay`` recomputes it."""
    detail = score(final_ranking(trace.stages), question, labels.qrels.get(question.id), chunks, names)
    if question.labels:
        detail["lost"] = where_lost(trace, question.labels).to_dict()
    if any(name in ANSWER_METRICS for name in names):
        graded = grade_trace(question, trace)
        values = {**detail["metrics"], **graded.metrics}
        detail["metrics"] = {name: round(values[name], 6) for name in names if name in values}
        detail["answer"] = trace.answer
        detail["graded"] = graded.decided
    return detail


REPLAYED = ("metrics", "lost", "graded")  # what a replay recomputes of a question and compares with the file


def replayable(question: Mapping[str, Any]) -> dict[str, Any]:
    """The part of a recorded question that a replay from its trace must give again."""
    return {key: question[key] for key in REPLAYED if key in question}


def run_row(
    row: Row,
    store: Store,
    labels: Labels,
    names: Sequence[str],
    *,
    embedder: Embedder | None,
    chat: ChatModel | None = None,
    corpus: str = "",
    progress: Progress | None = None,
    generate: bool = False,
) -> dict[str, Any]:
    """One row over every question: per-question metrics and detail, aggregates, timings.

    With ``generate`` every question is answered by ``chat`` too (an answer-grading suite), and the
    answers graded with the metrics of ``names``, and read by the support check of the row's
    ``support_model`` (``clear_rag.generate.support``), which the grades measure. A row that needs a
    model this machine does not have (a reranker not pulled) comes back as
    ``{"name": ..., "skipped": reason}``; every other problem is raised.
    """
    if (row.config.needs_chat() or generate) and chat is None:
        what = "answers every question" if generate else "expands the query or uses HyDE"
        raise ConfigError(
            f"{what}, which needs a chat model",
            field=f"row {row.name!r}",
            fix="Pass --chat (e.g. --chat smollm2, or --chat echo for the fake)",
        )
    vector = "vector" in row.config.retrievers
    try:
        pipeline = open_pipeline(store, row.config, embedder=embedder if vector else None)
    except ModelMissing as err:
        # said without this machine's paths: the reason goes into committed result files and tables
        reason = f"the reranker {row.config.reranker!r} {err.what}. {err.fix}"
        return {
            "name": row.name,
            "config": row.config.to_dict(),
            "config_hash": row.config.hash(),
            "skipped": reason,
        }
    support = checker(row.config.support_model) if generate else None
    planner = Planner(pipeline, chat if row.config.needs_chat() or generate else None, support=support)
    chunks = chunks_by_doc(store)
    questions: list[dict[str, Any]] = []
    seconds: list[float] = []
    models: dict[str, str] = dict(pipeline.models)
    if progress is not None:
        progress(0, len(labels.questions))
    reranked = reused = 0
    for n, question in enumerate(labels.questions):
        started = time.perf_counter()
        trace = planner.run(question.question, generate=generate)
        seconds.append(time.perf_counter() - started)
        for stage in trace.stages:
            if stage.name == "rerank" and "reused" in stage.detail:
                # the logits computed, not the candidates kept: the stage keeps its tail unscored
                reranked += int(stage.detail.get("reranked", len(stage.candidates)))
                reused += int(stage.detail["reused"])
        models.update(trace.models)
        store.save_trace(trace, config_hash=row.config.hash())
        record = {**judged(trace, question, labels, chunks, names), "trace": trace.id}
        if labels.training is not None:  # seen or unseen by the training split the suite names
            record = with_subset(record, labels.training.by_question[question.id])
        questions.append(record)
        if progress is not None:
            progress(n + 1, len(labels.questions))
    return {
        "name": row.name,
        "config": row.config.to_dict(),
        "config_hash": row.config.hash(),
        **({"chat": row.chat} if row.chat else {}),  # the row's own chat model, as its suite names it
        "models": models,
        "store": str(store.directory),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "corpus_sha256": corpus,
        "golden_sha256": labels.sha256,
        "metrics": aggregate(questions, names),
        "by_category": {
            cat: aggregate([q for q in questions if q["category"] == cat], names)
            for cat in labels.categories()
        },
        "seconds_per_question": round(statistics.median(seconds), 4) if seconds else 0.0,
        # logits an earlier row of the same process had already computed (identical either way: a
        # logit is a function of its pair), which makes this row's seconds less than a row run alone
        **({"rerank_reused": {"logits": reranked, "reused": reused}} if reused else {}),
        "questions": questions,
    }


def run_suite(
    suite: Suite,
    *,
    embedder: Embedder | None,
    chat: ChatModel | None = None,
    root: Path,
    show_progress: bool = False,
    chats: Callable[[str], ChatModel] | None = None,
) -> dict[str, Any]:
    """Every row of ``suite``: the result document ``results/<suite>.json`` holds.

    ``chat`` answers in every row but those that name a chat model of their own (``chat: echo``),
    which ``chats`` builds by name. ``show_progress`` shows the embedding of each store and each
    row's questions on stderr.
    """
    suite.check_data()  # a missing corpus or golden file: one line, and no store made for it
    rows: list[dict[str, Any]] = []
    opened: dict[ChunkingConfig, tuple[Store, Labels, str]] = {}
    try:
        for row in suite.rows:
            chunking = row.config.chunking
            if chunking not in opened:
                with ProgressReport("embed", "chunk", enabled=show_progress) as bar:
                    store, _ = prepare(suite, chunking, root, embedder, progress=bar.update)
                opened[chunking] = (store, suite_labels(suite, store), corpus_sha256(suite, store))
            store, labels, corpus = opened[chunking]
            names = metric_names(suite, labels)
            with ProgressReport(row.name[:40], "question", enabled=show_progress) as bar:
                rows.append(
                    run_row(
                        row,
                        store,
                        labels,
                        names,
                        embedder=embedder,
                        chat=row_chat(row, chat, chats),
                        corpus=corpus,
                        progress=bar.update,
                        generate=suite.generate,
                    )
                )
        _, first_labels, first_corpus = next(iter(opened.values()))
        return result_document(suite, rows, first_labels, first_corpus, embedder)
    finally:
        for store, _, _ in opened.values():
            store.close()


def replay(document: Mapping[str, Any], suite: Suite, root: Path) -> dict[str, dict[str, dict[str, Any]]]:
    """Every row's per-question results recomputed from its stored traces, with no model at all: the
    metrics, and where the answer was lost for a question with span labels, as ``run_row`` records
    them (``{"metrics": {...}, "lost": {...}}``)."""
    names = document["metric_names"]
    chunkings = {r.name: r.config.chunking for r in suite.rows}
    replayed: dict[str, dict[str, dict[str, Any]]] = {}
    # each store opened, and its labels resolved, once for all the rows of its chunking
    for chunking in dict.fromkeys(chunkings[row["name"]] for row in document["rows"]):
        with Store(store_dir(suite, chunking, root)) as store:
            labels = suite_labels(suite, store)
            questions = {q.id: q for q in labels.questions}
            chunks = chunks_by_doc(store)
            for row in document["rows"]:
                if chunkings[row["name"]] != chunking:
                    continue
                replayed[row["name"]] = {
                    q["id"]: replayable(
                        judged(store.load_trace(q["trace"]), questions[q["id"]], labels, chunks, names)
                    )
                    for q in row["questions"]
                }
    return replayed


def row_chat(row: Row, chat: ChatModel | None, chats: Callable[[str], ChatModel] | None) -> ChatModel | None:
    """The chat model that answers in ``row``: its own where it names one, else the suite's."""
    if row.chat is None:
        return chat
    if chats is None:
        raise ConfigError(
            f"answers with {row.chat!r}, and no chat model was given by name",
            field=f"row {row.name!r}",
            fix="Run it through `clear-rag ablate`, which builds each row's chat model",
        )
    return chats(row.chat)
