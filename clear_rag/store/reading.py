"""Reading a store's documents and chunks: records, texts, titles and spans.

Chunk text is not stored: it is the slice of its document's text over the chunk's span, so a chunk
is read with its document's text (``chunks``), once per document.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from clear_rag.store.database import Database
from clear_rag.store.schema import TEXT_TOKENS
from clear_rag.types import Block, Chunk, Document

TITLE_CHARS = 80  # a title longer than this is cut, with an ellipsis


@dataclass(frozen=True, slots=True)
class DocumentRecord:
    """What the store knows about a document without loading its text."""

    id: str
    source: str
    content_hash: str
    media_type: str
    parser: str
    chunker: str
    size_bytes: int


class Reading(Database):
    """The reads of ``Store`` over documents, blocks and chunks."""

    counts_kept: bool  # whether chunks have their own token counts' column (``Chunk.text_tokens``)

    @property
    def _text_tokens(self) -> str:
        """The column of chunks' own token counts, or NULL in a store made before they were kept."""
        return TEXT_TOKENS if self.counts_kept else "NULL"

    def record(self, doc_id: str) -> DocumentRecord | None:
        row = self._db.execute(
            "SELECT id, source, content_hash, media_type, parser, chunker, size_bytes "
            "FROM documents WHERE id = ?",
            (doc_id,),
        ).fetchone()
        return None if row is None else DocumentRecord(*row)

    def records(self) -> list[DocumentRecord]:
        rows = self._db.execute(
            "SELECT id, source, content_hash, media_type, parser, chunker, size_bytes "
            "FROM documents ORDER BY id"
        ).fetchall()
        return [DocumentRecord(*row) for row in rows]

    def version_sources(self) -> list[tuple[str, str]]:
        """Every document as (id, its content hash, parser and chunker on three lines), in no set
        order: what an index's version of it hashes (``clear_rag.index.places.document_versions``),
        joined in SQL, since a cold open reads it for every document."""
        sql = "SELECT id, content_hash || char(10) || parser || char(10) || chunker FROM documents"
        return self._db.execute(sql).fetchall()

    def chunkers(self) -> list[str]:
        """The distinct chunker settings the documents were chunked with (one per chunking), read
        without loading every document's record: a store of 100,000 documents has one or two."""
        rows = self._db.execute("SELECT DISTINCT chunker FROM documents ORDER BY chunker").fetchall()
        return [str(row[0]) for row in rows]

    def document(self, doc_id: str) -> Document:
        row = self._db.execute(
            "SELECT source, content_hash, text, media_type FROM documents WHERE id = ?", (doc_id,)
        ).fetchone()
        if row is None:
            raise KeyError(doc_id)
        blocks = tuple(
            Block(kind, start, end, level, json.loads(meta))
            for kind, start, end, level, meta in self._db.execute(
                'SELECT kind, start, "end", level, meta FROM blocks WHERE doc_id = ? ORDER BY position',
                (doc_id,),
            )
        )
        source, content_hash, text, media_type = row
        return Document(doc_id, source, content_hash, text, blocks, media_type)

    def titles(self, doc_ids: Iterable[str]) -> dict[str, str]:
        """Each known document's title as a person would name it: its first heading's text, else its
        first line that holds any word, cut to TITLE_CHARS; ids the store does not hold are left out.
        Read in SQL (the heading's span sliced there), so no document's whole text is loaded."""
        wanted = list(dict.fromkeys(doc_ids))
        found: dict[str, str] = {}
        for at in range(0, len(wanted), 500):  # under SQLite's bound on host parameters
            batch = wanted[at : at + 500]
            marks = ",".join("?" * len(batch))
            rows = self._db.execute(
                f"""SELECT d.id,
                        (SELECT substr(d.text, b.start + 1, min(b."end" - b.start, {TITLE_CHARS * 2}))
                           FROM blocks b WHERE b.doc_id = d.id AND b.kind = 'heading'
                          ORDER BY b.position LIMIT 1),
                        substr(d.text, 1, 2000)
                   FROM documents d WHERE d.id IN ({marks})""",
                batch,
            )
            for doc_id, heading, head in rows:
                found[str(doc_id)] = _title(heading, head)
        return found

    def document_text(self, doc_id: str) -> str:
        row = self._db.execute("SELECT text FROM documents WHERE id = ?", (doc_id,)).fetchone()
        if row is None:
            raise KeyError(doc_id)
        return str(row[0])

    def chunks(self, doc_id: str | None = None) -> Iterator[Chunk]:
        """Chunks in (document, position) order, their text sliced from the document's text.

        Each document's text is read once, not once per chunk row: a join would copy a 50 MB text
        into every one of its thousands of rows, which made indexing quadratic in document size.
        """
        ids = (
            [doc_id]
            if doc_id is not None
            else [str(row[0]) for row in self._db.execute("SELECT id FROM documents ORDER BY id")]
        )
        for owner in ids:
            rows = self._db.execute(
                f'SELECT id, position, start, "end", token_count, {self._text_tokens} FROM chunks '
                "WHERE doc_id = ? ORDER BY position",
                (owner,),
            ).fetchall()
            if not rows:
                continue
            text = self.document_text(owner)
            for chunk_id, position, start, end, tokens, own in rows:
                yield Chunk(chunk_id, owner, start, end, text[start:end], position, tokens, own)

    def chunk_spans(self) -> list[tuple[str, str, int, int]]:
        """Every chunk as (chunk id, document id, start, end), without reading any text."""
        rows = self._db.execute('SELECT id, doc_id, start, "end" FROM chunks ORDER BY doc_id, position')
        return [(str(a), str(b), int(c), int(d)) for a, b, c, d in rows]

    def chunk_rows(self) -> list[tuple[str, str, int, int, int | None]]:
        """Every chunk as (chunk id, document id, start, end, its own token count or None where it
        was not counted), in no set order, without reading any text: what a pipeline's chunk table is
        made of. (Sorting them and converting each value cost a cold open at 100k chunks 0.15 s; the
        columns' types are those already.)"""
        return self._db.execute(
            f'SELECT id, doc_id, start, "end", {self._text_tokens} FROM chunks'
        ).fetchall()

    def counted_by(self) -> str | None:
        """The tokenizer that counted the chunks' tokens, as the chunker settings name it, where every
        document was chunked with one; None where there are several (or none)."""
        names = {_tokenizer_of(settings) for settings in self.chunkers()}
        return names.pop() if len(names) == 1 else None


def _tokenizer_of(chunker_settings: str) -> str | None:
    try:
        settings = json.loads(chunker_settings)
    except ValueError:
        return None
    name = settings.get("tokenizer") if isinstance(settings, dict) else None
    return name if isinstance(name, str) else None


def _title(heading: str | None, head: str) -> str:
    """A heading's text, else the first line of ``head`` that holds a letter or digit, on one line."""
    for text in (heading or "", *head.splitlines()):
        line = " ".join(text.split()).strip(" #")
        if any(ch.isalnum() for ch in line):
            return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1].rstrip() + "…"
    return ""
