"""What an index covers, document by document, as its manifest stores it: in columns.

Per document an index records the version it indexed, the chunk ids it holds and, for a document it
left out, why (``clear_rag.index.files``). Manifests up to format 2 stored that as one JSON object
per document, ``{"doc": {"version": ..., "chunks": [...]}}``; at 100,000 documents that is a 7 MB
file whose parse and per-document shape check took about 0.3 s per index, paid by every cold
``ask`` and a server's first question, twice (keyword and vectors). Format 3 stores the same as
flat columns, which ``json`` parses about seven times as fast and which are checked and compared
without a Python step per document:

    {"ids": [doc, ...], "versions": [version, ...], "counts": [chunks of each document, ...],
     "chunks": [every chunk id, document after document], "missing": {doc: reason, ...}}

Ids are in sorted order; ``counts`` splits ``chunks`` into the documents'. The object-per-document
form is still read (``from_documents``), and rewritten in columns by the next ``clear-rag ingest``.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import accumulate
from typing import Any

KEYS = ("ids", "versions", "counts", "chunks", "missing")


@dataclass(frozen=True, slots=True)
class Coverage:
    """The documents of an index in columns (see the module docstring)."""

    ids: list[str]
    versions: list[str]
    counts: list[int]
    chunks: list[str]
    missing: dict[str, str]

    def __len__(self) -> int:
        return len(self.ids)

    def version_of(self) -> dict[str, str]:
        """Each document's version as the index holds it (left-out documents too)."""
        return dict(zip(self.ids, self.versions, strict=True))

    def documents(self) -> dict[str, dict[str, Any]]:
        """The object-per-document form, as ``write_manifest`` and ``clear_rag.index.sync`` use it."""
        ends = list(accumulate(self.counts))
        found: dict[str, dict[str, Any]] = {}
        for doc, version, end, count in zip(self.ids, self.versions, ends, self.counts, strict=True):
            entry: dict[str, Any] = {"version": version, "chunks": self.chunks[end - count : end]}
            if doc in self.missing:
                entry["missing"] = self.missing[doc]
            found[doc] = entry
        return found

    def to_json(self) -> dict[str, Any]:
        return {"ids": self.ids, "versions": self.versions, "counts": self.counts,
                "chunks": self.chunks, "missing": self.missing}  # fmt: skip


def from_documents(documents: dict[str, dict[str, Any]]) -> Coverage:
    """Columns from the object-per-document form (checked by ``documents_well_formed``)."""
    ids = sorted(documents)
    entries = [documents[doc] for doc in ids]
    return Coverage(
        ids,
        [entry["version"] for entry in entries],
        [len(entry["chunks"]) for entry in entries],
        [chunk for entry in entries for chunk in entry["chunks"]],
        {doc: entry["missing"] for doc, entry in zip(ids, entries, strict=True) if "missing" in entry},
    )


def from_json(data: object) -> Coverage | None:
    """The columns of a format 3 manifest, or ``None`` if ``data`` does not have their shape: every
    column a list of the right type and length, ids unique, counts adding up to the chunks, and every
    left-out document one of the ids."""
    if not isinstance(data, dict) or set(data) != set(KEYS):
        return None
    ids, versions, counts, chunks, missing = (data[key] for key in KEYS)
    if not all(isinstance(column, list) for column in (ids, versions, counts, chunks)):
        return None
    if not isinstance(missing, dict) or not len(ids) == len(versions) == len(counts):
        return None
    if not _all_str(ids) or not _all_str(versions) or not _all_str(chunks) or not _all_str(missing.values()):
        return None
    # by type, not isinstance: a JSON true is an int to isinstance, and would pass for a count of 1
    if not _all_of(int, counts) or (counts and min(counts) < 0) or sum(counts) != len(chunks):
        return None
    if len(set(ids)) != len(ids) or not missing.keys() <= set(ids):
        return None
    return Coverage(ids, versions, counts, chunks, missing)


def documents_well_formed(documents: object) -> bool:
    """Whether ``documents`` has the object-per-document shape, down to each document's entry."""
    if not isinstance(documents, dict):
        return False
    for entry in documents.values():
        chunks = entry.get("chunks") if isinstance(entry, dict) else None
        if not isinstance(entry, dict) or not isinstance(entry.get("version"), str):
            return False
        if not isinstance(chunks, list) or not _all_str(chunks):
            return False
        if not isinstance(entry.get("missing", ""), str):
            return False
    return True


def _all_str(values: Any) -> bool:
    return _all_of(str, values)


def _all_of(kind: type, values: Any) -> bool:
    """Whether every one of ``values`` is exactly of type ``kind`` (as JSON gives them: no
    subclasses), with no Python step per value: a column holds one per document or chunk."""
    return set(map(type, values)) <= {kind}
