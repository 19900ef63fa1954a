"""Contextual prefixes: a chunk is indexed under its document's name and the headings in force, while
its id, span and text stay those of the chunk."""

from __future__ import annotations

from pathlib import Path

from clear_rag.index.context import is_contextual, prefixed, sections, title
from clear_rag.types import Block, Chunk, Document

TEXT = (
    "Item 7. MD&A\n\nNet sales rose.\n\nSegment Operating Performance\n\nAmericas grew.\n\n"
    "Item 8. Statements\n\nTotals follow.\n\nApple Inc. | 2024 Form 10-K\n\n12"
)


def block(kind: str, text: str, level: int = 0) -> Block:
    start = TEXT.index(text)
    return Block(kind, start, start + len(text), level)  # type: ignore[arg-type]


DOC = Document(
    "aapl.pdf",
    "corpora/10k/aapl.pdf",
    "h",
    TEXT,
    (
        block("heading", "Item 7. MD&A", 1),
        block("paragraph", "Net sales rose."),
        block("heading", "Segment Operating Performance", 2),
        block("paragraph", "Americas grew."),
        block("heading", "Item 8. Statements", 1),
        block("paragraph", "Totals follow."),
        block("furniture", "Apple Inc. | 2024 Form 10-K"),
        block("furniture", "12"),
    ),
)


def chunk(text: str, position: int) -> Chunk:
    start = TEXT.index(text)
    return Chunk(f"aapl.pdf#{position:04d}", "aapl.pdf", start, start + len(text), text, position, 3)


def test_the_title_is_the_running_header_not_a_page_number() -> None:
    assert title(DOC) == "Apple Inc. | 2024 Form 10-K"
    no_furniture = Document("x", "docs/x.md", "h", TEXT, DOC.blocks[:6])
    assert title(no_furniture) == "Item 7. MD&A"
    assert title(Document("x", "docs/notes.txt", "h", "plain", ())) == "notes"


def test_sections_nest_by_level_and_close_at_a_sibling() -> None:
    starts = [TEXT.index(t) for t in ("Net sales rose.", "Americas grew.", "Totals follow.")]
    assert sections(DOC, starts) == [
        "Item 7. MD&A",
        "Item 7. MD&A > Segment Operating Performance",
        "Item 8. Statements",
    ]


def test_a_prefixed_unit_keeps_the_chunks_id_and_only_adds_text_before_it() -> None:
    chunks = [chunk("Net sales rose.", 0), chunk("Americas grew.", 1)]
    units = list(prefixed(DOC, chunks))
    assert [u.id for u in units] == [c.id for c in chunks]
    assert [u.doc_id for u in units] == ["aapl.pdf", "aapl.pdf"]
    for unit, original in zip(units, chunks, strict=True):
        assert unit.text.endswith("\n" + original.text)
        assert unit.text.startswith("Apple Inc. | 2024 Form 10-K. Item 7. MD&A")
    assert "Segment Operating Performance" in units[1].text


def test_the_flag_is_read_from_the_stored_chunker_settings() -> None:
    assert is_contextual('{"chunker": "structural", "contextual": true}')
    assert not is_contextual('{"chunker": "structural"}')
    assert not is_contextual("structural/256")  # an older store's plain text


def test_a_contextual_store_finds_a_chunk_by_its_documents_name_and_keeps_its_span(tmp_path: Path) -> None:
    """The company named only in the running header: found through the prefix, cited by the chunk."""
    from clear_rag.chunk.factory import Contextual, make_chunker
    from clear_rag.index.sync import keyword_index
    from clear_rag.ingest import ingest_documents
    from clear_rag.store import Store
    from clear_rag.tokens import RegexTokenizer

    plain = make_chunker("semantic", size=64, tokenizer=RegexTokenizer())
    found = {}
    for name, chunker in (("plain", plain), ("contextual", Contextual(plain))):
        with Store(tmp_path / name) as store:
            ingest_documents(store, [DOC], chunker, parser="test@1")
            index, _ = keyword_index(store)
            found[name] = [chunk_id for chunk_id, _ in index.search("apple americas", 10)]
            chunks = {c.id: c for c in store.chunks()}
        assert all(TEXT[c.start : c.end] == c.text for c in chunks.values())  # spans as they were
        assert not any("Apple" in c.text for c in chunks.values())  # the prefix is never in a chunk
    # "americas" alone ranks its chunk first either way; "apple" adds every contextual chunk behind it
    assert found["plain"] == ["aapl.pdf#0001"]
    assert found["contextual"][0] == "aapl.pdf#0001" and len(found["contextual"]) == 3
