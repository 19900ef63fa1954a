"""An index manifest lists its documents in columns (format 3), reads back what was written, rejects
columns that do not fit together, and stores written before it (formats 1 and 2) still open, the same."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clear_rag.chunk.base import Chunker
from clear_rag.index import bm25
from clear_rag.index.bm25 import BM25Index
from clear_rag.index.files import (
    FORMAT,
    MANIFEST,
    DamagedIndexError,
    Manifest,
    read_manifest,
    write_array,
    write_manifest,
)
from clear_rag.index.places import (
    StoreDocuments,
    _digest,
    document_versions,
    health,
    keyword_place,
    vector_place,
)
from clear_rag.index.sync import keyword_index
from clear_rag.ingest import ingest
from clear_rag.providers.fake import HashEmbedder
from clear_rag.store import Store
from tests.conftest import toy_pipeline
from tests.index.layouts import rewrite_older

DATA = ("a.npy",)

names = st.text(st.characters(codec="utf-8"), min_size=1, max_size=8)
entries = st.fixed_dictionaries(
    {"version": names, "chunks": st.lists(names, max_size=4)}, optional={"missing": st.text(max_size=10)}
)


def _written(directory: Path, documents: dict[str, dict[str, Any]]) -> dict[str, Any]:
    directory.mkdir(parents=True, exist_ok=True)
    write_array(directory / "a.npy", np.zeros(3, dtype=np.float32))
    write_manifest(directory, {"dim": 4}, documents, DATA)
    body: dict[str, Any] = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
    return body


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(documents=st.dictionaries(names, entries, max_size=6), layout=st.sampled_from([1, 2, FORMAT]))
def test_a_manifest_reads_back_what_was_written_in_every_layout(
    tmp_path_factory: pytest.TempPathFactory, documents: dict[str, dict[str, Any]], layout: int
) -> None:
    directory = tmp_path_factory.mktemp("index")
    body = _written(directory, documents)
    assert body["format"] == FORMAT and "documents" not in body
    if layout != FORMAT:
        rewrite_older(directory, layout)
    manifest = read_manifest(directory, "test", DATA)
    assert manifest is not None and manifest.format == layout
    assert manifest.documents == documents
    assert manifest.versions() == {doc: entry["version"] for doc, entry in documents.items()}
    assert manifest.chunk_ids() == {chunk for entry in documents.values() for chunk in entry["chunks"]}
    assert manifest.missing() == {doc: e["missing"] for doc, e in sorted(documents.items()) if "missing" in e}
    assert (manifest.files is None) == (layout == 1)


DOCUMENTS = {
    "a": {"version": "v1", "chunks": ["a#0", "a#1"]},
    "b": {"version": "v2", "chunks": [], "missing": "no text"},
}


@pytest.mark.parametrize(
    "damage",
    [
        lambda c: c.update(counts=[2, 1]),  # counts add up to more chunks than there are
        lambda c: c.update(ids=["a", "a"]),  # one document twice
        lambda c: c.update(missing={"z": "gone"}),  # left out, but not one of its documents
        lambda c: c.update(counts=[True, 0], chunks=["a#0"]),  # a JSON true is not a count
        lambda c: c.update(versions=["v1"]),  # a column shorter than the ids
        lambda c: c.update(chunks=["a#0", 1]),  # a chunk id that is not a string
        lambda c: c.pop("missing"),  # a column gone
        lambda c: c.update(extra=[]),  # a column unknown
    ],
    ids=[
        "counts-sum",
        "duplicate-id",
        "missing-stranger",
        "bool-count",
        "short-column",
        "int-chunk",
        "no-missing",
        "extra-column",
    ],
)
def test_columns_that_do_not_fit_together_are_not_a_manifest(tmp_path: Path, damage: Any) -> None:
    body = _written(tmp_path, DOCUMENTS)
    damage(body["columns"])
    (tmp_path / MANIFEST).write_text(json.dumps(body), encoding="utf-8")
    with pytest.raises(DamagedIndexError, match="not an index manifest"):
        read_manifest(tmp_path, "test", DATA)


def test_columns_under_an_older_format_number_are_not_a_manifest(tmp_path: Path) -> None:
    body = _written(tmp_path, DOCUMENTS) | {"format": 2}
    (tmp_path / MANIFEST).write_text(json.dumps(body), encoding="utf-8")
    with pytest.raises(DamagedIndexError, match="not an index manifest"):
        read_manifest(tmp_path, "test", DATA)


def test_a_document_version_is_the_hash_of_its_content_parser_and_chunker(toy_store: Store) -> None:
    """Manifests written by every clear-rag version hold this hash: changing it would make every
    existing index "behind" its store."""
    expected = {
        r.id: hashlib.sha256(f"{r.content_hash}\n{r.parser}\n{r.chunker}".encode()).hexdigest()[:16]
        for r in toy_store.records()
    }
    assert document_versions(toy_store) == expected and len(expected) == 3


@pytest.mark.parametrize("layout", [1, 2])
def test_a_store_indexed_before_columns_answers_the_same_and_ingest_rewrites_it(
    toy_store: Store, layout: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    questions = ["chain stretch", "brakes", "tyre pressure"]
    before = [_ranking(toy_store, q) for q in questions]
    assert any(before)
    keyword = keyword_place(toy_store, False).directory
    covered = _read(keyword).documents
    for folder in (keyword, vector_place(toy_store, HashEmbedder(dim=64)).directory):
        rewrite_older(folder, layout)
    assert [_ranking(toy_store, q) for q in questions] == before
    assert health(keyword_place(toy_store, False), toy_store).state == "ok"

    def refuse(*args: object) -> None:
        raise AssertionError("re-tokenised an index whose manifest was only in an older layout")

    monkeypatch.setattr(BM25Index, "add", refuse)
    _, report = keyword_index(toy_store)
    assert (report.documents_updated, report.rebuilt) == (0, False)
    assert _read(keyword).format == FORMAT and _read(keyword).documents == covered
    assert [_ranking(toy_store, q) for q in questions] == before


def _read(folder: Path) -> Manifest:
    manifest = read_manifest(folder, "keyword", bm25.FILES)
    assert manifest is not None
    return manifest


def _ranking(store: Store, question: str) -> list[tuple[str, list[tuple[str, float]]]]:
    """Every stage's candidates (ids and scores) for ``question``: keyword, vector, fusion, context."""
    stages = toy_pipeline(store).retrieve(question).stages
    return [(stage.name, [(c.chunk_id, c.score) for c in stage.candidates]) for stage in stages]


# -- the digest of the store's documents: a cold open's quick check, never the only one ------------


def _body(folder: Path) -> dict[str, Any]:
    body: dict[str, Any] = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    return body


def _set_digest(folder: Path, digest: str | None) -> None:
    body = _body(folder)
    body.pop("store", None)
    (folder / MANIFEST).write_text(json.dumps(body | ({} if digest is None else {"store": digest})), "utf-8")


def test_an_ingest_records_the_digest_of_the_documents_its_indexes_cover(toy_store: Store) -> None:
    for folder in (
        keyword_place(toy_store, False).directory,
        vector_place(toy_store, HashEmbedder(dim=64)).directory,
    ):
        assert _body(folder)["store"] == StoreDocuments(toy_store).digest


@pytest.mark.parametrize("recorded", [None, "0" * 64], ids=["absent", "another"])
def test_without_the_stores_digest_an_index_is_checked_document_by_document(
    toy_store: Store, recorded: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A manifest from before digests, or whose digest is not the store's, is current or behind as
    its versions say: the digest spares the per-document check, never decides against it."""
    folder = keyword_place(toy_store, False).directory
    _set_digest(folder, recorded)
    assert health(keyword_place(toy_store, False), toy_store).state == "ok"
    questions = ["chain stretch", "brakes"]
    assert [_ranking(toy_store, q) for q in questions]

    def refuse(*args: object) -> None:
        raise AssertionError("re-tokenised an index that only lacked the store's digest")

    monkeypatch.setattr(BM25Index, "add", refuse)
    _, report = keyword_index(toy_store)
    assert report.documents_updated == 0 and _body(folder)["store"] == StoreDocuments(toy_store).digest


def test_a_document_changed_after_the_digest_makes_the_index_behind_with_or_without_it(
    toy_store: Store, chunker: Chunker
) -> None:
    (toy_store.root / "docs" / "new.txt").write_text("Saddles need a level top.", encoding="utf-8")
    ingest(toy_store, [toy_store.root / "docs"], chunker)  # stored, not indexed
    place = keyword_place(toy_store, False)
    with_digest = health(place, toy_store)
    _set_digest(place.directory, None)
    without = health(place, toy_store)
    assert with_digest.state == without.state == "behind"
    assert str(with_digest.problem) == str(without.problem) and "1 documents new or changed" in str(
        without.problem
    )


def test_a_nul_inside_an_id_or_source_leaves_no_digest_to_confuse_two_stores() -> None:
    """Fields are joined by NUL: ("a\\0b", "c") and ("a", "b\\0c") would join alike, so neither gets one."""
    assert _digest([("a\0b", "c")]) is None and _digest([("a", "b\0c")]) is None
    assert _digest([("a", "b"), ("c", "d")]) not in (None, _digest([("a", "b"), ("c", "e")]))
