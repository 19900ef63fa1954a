"""A scanned page end to end: ingested (its text read by OCR), found by ``ask``, and cited by a span that
points into the OCR'd text, on the fake providers (hash embedder, lexical reranker, echo answerer)."""

from __future__ import annotations

from pathlib import Path

from clear_rag.chunk.base import Chunker
from clear_rag.eval.parse.tokens import tokens
from clear_rag.generate.planner import Planner
from clear_rag.ingest import ingest
from clear_rag.providers.fake import EchoChatModel, HashEmbedder
from clear_rag.session import sync_indexes
from clear_rag.store import Store
from tests.conftest import toy_config, toy_pipeline
from tests.parse.scans import FACT, mixed_report, needs_tesseract

QUESTION = "how many pelicans did the lighthouse keeper count on the breakwater"


@needs_tesseract
def test_a_question_answered_only_by_the_scanned_page_cites_the_ocr_text(
    tmp_path: Path, chunker: Chunker
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "harbour.pdf").write_bytes(mixed_report())  # page 1 a text layer, page 2 pixels only
    with Store(tmp_path / "s", root=tmp_path) as store:
        report = ingest(store, [folder], chunker)
        (outcome,) = report.outcomes
        assert outcome.action == "added", outcome.message
        assert any("page 2 read by OCR" in warning for warning in outcome.warnings)
        sync_indexes(store, [toy_config()], HashEmbedder(dim=64))

        trace = Planner(toy_pipeline(store), EchoChatModel()).run(QUESTION)

        assert "seventeen" in tokens(trace.answer)
        assert trace.citations, trace.answer
        cited = trace.citations[0]
        document = store.document(cited.doc_id)
        span = document.text[cited.start : cited.end]
        assert tokens(" ".join(FACT)) == [t for t in tokens(span) if t in tokens(" ".join(FACT))]
        # the cited span lies in the scanned page's blocks, which say their text was read from pixels
        overlapping = [b for b in document.blocks if b.start < cited.end and cited.start < b.end]
        assert overlapping and {b.meta["page"] for b in overlapping} == {"2"}
        assert all(b.meta["ocr"].startswith("tesseract ") for b in overlapping)
        assert cited.start >= min(b.start for b in document.blocks if b.meta.get("ocr"))
