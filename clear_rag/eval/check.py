"""Which techniques help on a corpus that has no labels: probe questions cut from the store itself.

``clear-rag check STORE`` draws probe questions with the construction the reranker trains on
(``clear_rag.train.pairs``, seeded), from the documents that construction holds apart, so no model
adapted to the store was trained on a probe's text. A probe is a sentence of a chunk (or a few of its
words) with the words only a few documents share taken out (``mask``: its rarest content words by the
store's document frequency), so it is not found by one unique string alone; its label is the
sentence's span in its document. Every technique row is then run over the probes through the one
evaluation runner (``runner.run_row``) and read against the baseline by the one comparison
(``results.document``): the difference in nDCG@10 with its paired bootstrap interval, and a verdict,
``helps`` or ``hurts`` when the interval leaves zero, ``no clear effect`` when it holds it.

Probes are not questions a person asks. How far their verdicts can be trusted is measured, not
assumed: ``agreement`` runs the same rows on a suite's real questions and on probes from the same
store, and reports the Kendall tau between the two row orders and how many verdicts agree
(``clear-rag check --agreement``, ``results/check.json``); the check prints that beside its own.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clear_rag.config import PipelineConfig
from clear_rag.errors import ClearRagError
from clear_rag.eval.golden import Label, Question
from clear_rag.eval.labels import Labels
from clear_rag.eval.metrics import kendall_tau
from clear_rag.eval.suite import Row, Suite, merge
from clear_rag.providers.base import Embedder
from clear_rag.store.sqlite import Store
from clear_rag.train.pairs import PairSettings, Passage, Probe, draw_probes
from clear_rag.types import Chunk

BASELINE = "hybrid rrf"
# Each technique one change from hybrid rrf over the store's own chunking, as the suites' rows are.
HYBRID = {"retrievers": ["keyword", "vector"], "fusion": "rrf", "stem": False, "rerank": False}
TECHNIQUES: tuple[tuple[str, dict[str, Any]], ...] = (
    (BASELINE, {}),
    ("bm25 only", {"retrievers": ["keyword"]}),
    ("dense only", {"retrievers": ["vector"]}),
    ("hybrid min-max", {"fusion": "minmax"}),
    ("porter stemming", {"stem": True}),
    ("rerank, fused (shortlist 10)", {"rerank": True, "rerank_fusion": "rrf", "shortlist": 10}),
    ("rerank (shortlist 10)", {"rerank": True, "shortlist": 10}),
)
HEADLINE = "ndcg@10"
CHECK_FILE = "check.json"  # the last check of a store, kept in it: the page's Lab reads it
AGREEMENT = Path("check") / "agreement.json"  # under results/: the check against real questions
RERANKER = "scifact-minilm-l6"  # the rerank rows' reranker unless one is named: the one trained here
_WORD = re.compile(r"\w+")


@dataclass(frozen=True, slots=True)
class CheckSettings:
    probes: int = 100
    mask: int = 2  # the rarest content words taken out of each probe
    seed: int = 17
    cut: bool = False  # probes asked of a copy of the store with their sentences taken out (eval.cut)

    def pairs(self) -> PairSettings:
        """The construction's settings: the reranker's, so probes come from the documents it held apart."""
        return PairSettings(queries=self.probes, seed=self.seed)


def settings_record(settings: CheckSettings) -> dict[str, Any]:
    """What a check's file records of its settings (``cut`` only where set: older files lack it)."""
    found: dict[str, Any] = {"probes": settings.probes, "mask": settings.mask, "seed": settings.seed}
    return {**found, "cut": True} if settings.cut else found


def _content(word: str) -> bool:
    return word.isalpha() and len(word) >= 4


def masked(query: str, frequency: Mapping[str, int], drop: int) -> str:
    """``query`` without its ``drop`` content words of lowest document frequency (ties: the later word
    first); the query itself when fewer than ``drop + 2`` content words would be left."""
    words = list(_WORD.finditer(query))
    content = [w for w in words if _content(w.group())]
    if drop <= 0 or len(content) < drop + 2:
        return query
    rarest = sorted(content, key=lambda w: (frequency.get(w.group().lower(), 0), -w.start()))[:drop]
    out, at = [], 0
    for w in sorted(rarest, key=lambda w: w.start()):
        out.append(query[at : w.start()])
        at = w.end()
    out.append(query[at:])
    return re.sub(r"\s+", " ", "".join(out)).strip()


def _probes(store: Store, settings: CheckSettings) -> list[tuple[Probe, Chunk, str]]:
    """Each probe drawn from the store's held-out documents, its chunk, and its masked text."""
    chunks = {c.id: c for c in store.chunks()}
    passages = [Passage(c.id, c.doc_id, c.text) for c in chunks.values()]
    words_of: dict[str, set[str]] = {}
    for passage in passages:
        words_of.setdefault(passage.doc_id, set()).update(w.lower() for w in _WORD.findall(passage.text))
    frequency = Counter(word for words in words_of.values() for word in words)
    return [
        (probe, chunks[probe.chunk_id], masked(probe.query, frequency, settings.mask))
        for probe in draw_probes(passages, settings.pairs(), want_held_out=True, every_sentence=True)
    ]


def _labels(store: Store, settings: CheckSettings, questions: list[Question]) -> Labels:
    return Labels("probes", (str(store.directory),), f"probes:{settings}", tuple(questions), {})


def probe_labels(store: Store, settings: CheckSettings) -> Labels:
    """Up to ``settings.probes`` probe questions from the store's held-out documents, each labelled with
    the span of the sentence it was cut from."""
    questions = []
    for probe, chunk, text in _probes(store, settings):
        start, end = (chunk.start + probe.sentence[0], chunk.start + probe.sentence[1])
        label = Label(chunk.doc_id, start, end, chunk.text[probe.sentence[0] : probe.sentence[1]])
        questions.append(Question(probe.id, text, probe.kind, "", (label,)))
    return _labels(store, settings, questions)


@contextmanager
def probing(store: Store, settings: CheckSettings) -> Iterator[tuple[Store, Labels]]:
    """The store the probes are asked of and their labels: ``store`` itself, or with ``settings.cut`` a
    copy beside it with every probe's sentence taken out (``eval.cut``), removed afterwards."""
    if not settings.cut:
        yield store, probe_labels(store, settings)
        return
    from clear_rag.eval.cut import Cut, cut_copy

    drawn = _probes(store, settings)
    cuts = [
        Cut(
            probe.id,
            chunk.doc_id,
            (chunk.start + probe.sentence[0], chunk.start + probe.sentence[1]),
            (chunk.start, chunk.end),
        )
        for probe, chunk, _ in drawn
    ]
    with tempfile.TemporaryDirectory(
        prefix=f"{store.directory.name}-cut-", dir=store.directory.parent
    ) as tmp:
        copy, spans = cut_copy(store, cuts, Path(tmp) / "store")
        try:
            questions = []
            for probe, chunk, text in drawn:
                if probe.id in spans:
                    start, end = spans[probe.id]
                    label = Label(chunk.doc_id, start, end, copy.document_text(chunk.doc_id)[start:end])
                    questions.append(Question(probe.id, text, probe.kind, "", (label,)))
            yield copy, _labels(copy, settings, questions)
        finally:
            copy.close()


def technique_suite(store: Store, config: PipelineConfig, reranker: str) -> Suite:
    """The technique rows as a suite over ``store``: each row ``config`` with one change, the rerank
    rows on ``reranker``."""
    rows = []
    for name, changes in TECHNIQUES:
        extra = {"reranker": reranker} if changes.get("rerank") else {}
        merged = merge(config.to_dict(), {**HYBRID, **changes, **extra})
        rows.append(Row(name, PipelineConfig.from_mapping(merged, source=f"check row {name!r}")))
    return Suite("check", store.directory, tuple(rows), BASELINE, corpus=store.directory)


def verdict(comparison: Mapping[str, Any]) -> str:
    """``helps`` when the interval of the difference lies above zero, ``hurts`` below, else unclear."""
    if comparison["ci_low"] > 0:
        return "helps"
    if comparison["ci_high"] < 0:
        return "hurts"
    return "no clear effect"


def run_rows(
    suite: Suite, store: Store, labels: Labels, names: Sequence[str], embedder: Embedder | None
) -> dict[str, Any]:
    """Every row of ``suite`` over ``labels`` on ``store``, as a result document (comparisons attached)."""
    from clear_rag.eval import runner, stores
    from clear_rag.results.document import result_document

    rows = [runner.run_row(row, store, labels, names, embedder=embedder) for row in suite.rows]
    return result_document(suite, rows, labels, stores.corpus_sha256(suite, store), embedder)


def _against(part: Mapping[str, Any], metric: str) -> dict[str, Any]:
    """One row's (or one subset's) metric and, against the baseline, its difference, interval, p and
    verdict."""
    entry: dict[str, Any] = {metric: part["metrics"].get(metric)}
    against = part.get("comparisons", {}).get("baseline", {}).get(metric)
    if against is not None:
        entry.update(
            difference=against["difference"],
            ci=[against["ci_low"], against["ci_high"]],
            p=against["p_sign"],
            verdict=verdict(against),
        )
    return entry


def summary(document: Mapping[str, Any], metric: str) -> list[dict[str, Any]]:
    """Each row's metric and, against the baseline, its difference, interval, p and verdict; on a
    suite split by what training saw, the same for each subset (``by_subset``)."""
    out = []
    for row in document["rows"]:
        entry: dict[str, Any] = {"name": row["name"], **_against(row, metric)}
        if "by_subset" in row:
            entry["by_subset"] = {name: _against(part, metric) for name, part in row["by_subset"].items()}
        out.append(entry)
    for entry in document.get("skipped", []):
        out.append({"name": entry["name"], "skipped": entry["reason"]})
    return out


def agreement(
    real: Sequence[Mapping[str, Any]], probe: Sequence[Mapping[str, Any]], metric: tuple[str, str]
) -> dict[str, Any]:
    """How far the probes' rows agree with the real questions' (``summary`` outputs over the same rows):
    Kendall's tau between the two orders of the rows both measured, and how many verdicts agree."""
    theirs = {e["name"]: e for e in probe if metric[1] in e and e[metric[1]] is not None}
    both = [(e, theirs[e["name"]]) for e in real if e.get(metric[0]) is not None and e["name"] in theirs]
    judged = [(r, p) for r, p in both if "verdict" in r and "verdict" in p]
    return {
        "rows": len(both),
        "kendall_tau": round(
            kendall_tau([r[metric[0]] for r, _ in both], [p[metric[1]] for _, p in both]), 4
        ),
        "verdicts": len(judged),
        "verdicts_agree": sum(r["verdict"] == p["verdict"] for r, p in judged),
        "helps_or_hurts_agree": sum(r["verdict"] == p["verdict"] != "no clear effect" for r, p in judged),
    }


def check_store(
    store: Store,
    *,
    embedder: Embedder | None,
    reranker: str,
    settings: CheckSettings = CheckSettings(),
    config: PipelineConfig | None = None,
) -> dict[str, Any]:
    """The check of one store: its probe questions run through every technique row."""
    from clear_rag.session import store_chunking, sync_indexes

    base = config or PipelineConfig().replace(chunking=store_chunking(store))
    with probing(store, settings) as (probed, labels):
        suite = technique_suite(probed, base, reranker)
        sync_indexes(probed, [row.config for row in suite.rows], embedder)  # the Porter index, say
        document = run_rows(suite, probed, labels, [HEADLINE], embedder)
    return {
        "store": str(store.directory),
        "reranker": reranker,
        "probes": len(labels.questions),
        "settings": settings_record(settings),
        "models": sorted({m for r in document["rows"] for m in r.get("models", {}).values()}),
        "rows": summary(document, HEADLINE),
    }


def suite_agreement(
    name: str, *, embedder: Embedder | None, reranker: str, settings: CheckSettings, root: Path
) -> dict[str, Any]:
    """The technique rows on a suite's real questions and on probes from the same store (its
    baseline's chunking), and how far the two agree (``agreement``)."""
    import dataclasses

    from clear_rag.eval import runner, stores
    from clear_rag.eval.suite import load_suite
    from clear_rag.session import sync_indexes

    suite = load_suite(name)
    if suite.generate:  # the answers suite: its retrieval, without answering
        suite = dataclasses.replace(suite, generate=False, metrics=())
    base = next(r for r in suite.rows if r.name == suite.baseline).config
    store, _ = stores.prepare(suite, base.chunking, root, embedder)
    try:
        techniques = technique_suite(store, base, reranker)
        sync_indexes(store, [row.config for row in techniques.rows], embedder)
        labels = stores.suite_labels(suite, store)
        names = runner.metric_names(suite, labels)
        metric = HEADLINE if HEADLINE in names else names[0]
        real = summary(run_rows(techniques, store, labels, [metric], embedder), metric)
        with probing(store, settings) as (probed, probes):
            asked = technique_suite(probed, base, reranker)
            sync_indexes(probed, [row.config for row in asked.rows], embedder)
            probe = summary(run_rows(asked, probed, probes, [HEADLINE], embedder), HEADLINE)
    finally:
        store.close()
    return {
        "suite": suite.name,
        "metric": metric,
        "questions": len(labels.questions),
        "probes": len(probes.questions),
        "real": real,
        "probe": probe,
        "agreement": agreement(real, probe, (metric, HEADLINE)),
    }


def agreement_document(
    measured: Sequence[Mapping[str, Any]],
    *,
    settings: CheckSettings,
    embedder: str,
    reranker: str,
    command: str,
) -> dict[str, Any]:
    """The agreement file's document (``results/check/*.json``): ``suite_agreement`` of each suite, with
    how, when and with which models and libraries it was measured."""
    from datetime import UTC, datetime

    from clear_rag.packaged import library_versions

    return {
        "kind": "check-agreement",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": command,
        "settings": settings_record(settings),
        "embedder": embedder,
        "reranker": reranker,
        "versions": library_versions(),
        "suites": list(measured),
    }


def save_agreement(path: Path, document: Mapping[str, Any]) -> Path:
    """Write an agreement document with the one writer of result files (its folder made where missing)."""
    from clear_rag.results.files import write_result

    path.parent.mkdir(parents=True, exist_ok=True)
    write_result(path, dict(document))
    return path


def save_check(directory: Path, found: Mapping[str, Any]) -> Path:
    """The check of a store, kept in the store's folder (``check.json``), written atomically."""
    from clear_rag.atomic import write_atomic

    path = directory / CHECK_FILE
    write_atomic(path, json.dumps(dict(found), indent=1, sort_keys=True) + "\n")
    return path


def read_check(directory: Path) -> dict[str, Any] | None:
    """A store's last check, or None when it has none (or an unreadable one)."""
    try:
        found = json.loads((directory / CHECK_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) and isinstance(found.get("rows"), list) else None


def agreement_summary(path: Path) -> list[dict[str, Any]]:
    """Per suite of an agreement file (``results/check/agreement.json``), how far the check agreed with
    real questions, flat; empty when the file is missing or unreadable."""
    from clear_rag.results.files import read_document

    try:
        document = read_document(path)
        return [
            {"suite": e["suite"], "questions": e["questions"], "probes": e["probes"], **e["agreement"]}
            for e in document["suites"]
        ]
    except (ClearRagError, KeyError, TypeError):
        return []
