"""The BM25 index's files (clear_rag.index.stored): a load answers as the index that was saved, bit for
bit; its mapped arrays are read-only and updates never write through to them; damaged, truncated and
old-format files are a StoreError naming the rebuild command."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clear_rag.errors import StoreError
from clear_rag.index import stored
from clear_rag.index.bm25 import BM25Index
from clear_rag.index.files import REBUILD, digest
from clear_rag.index.ranking import Weighted

WORDS = [f"w{rank}" for rank in range(30)]
# Skewed, as text is: a few words in most texts (dense rows, pruning), many in few; empty texts too.
text = st.lists(st.sampled_from(WORDS[:4]) | st.sampled_from(WORDS), max_size=12).map(" ".join)
corpus = st.dictionaries(st.text("abcdef", min_size=1, max_size=4), text, max_size=25)
queries = ["w0", "w1 w2", "w0 w0 w5", "w29 w3 w1", "nothing", "w7 w11 w2 w0"]


def indexed(docs: dict[str, str], **params: object) -> BM25Index:
    index = BM25Index(**params)  # type: ignore[arg-type]
    index.add(list(docs), list(docs.values()))
    return index


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def weighed(index: BM25Index) -> Weighted:
    """The index's arrays with every term weighed (a query weighs only the terms it names)."""
    index._state.weights.fill(np.arange(len(index.vocabulary)))
    return index._state.weighted


@settings(max_examples=60, deadline=None)
@given(docs=corpus, idf=st.sampled_from(["lucene", "fts5"]), k1=st.sampled_from([0.0, 1.2, 2.0]))
def test_a_loaded_index_answers_as_the_saved_one_bit_for_bit(
    tmp_path_factory: pytest.TempPathFactory, docs: dict[str, str], idf: str, k1: float
) -> None:
    index = indexed(docs, idf=idf, k1=k1)
    folder = tmp_path_factory.mktemp("bm25")
    index.save(folder)
    loaded = BM25Index.load(folder)
    assert (loaded.ids, loaded.vocabulary) == (index.ids, index.vocabulary)
    for k in (1, 3, 50):
        assert loaded.search_many(queries, k) == index.search_many(queries, k)
    ours, theirs = weighed(index), weighed(loaded)
    for name in ("indptr", "docs", "weights", "bounds", "dense_row", "dense", "id_rank"):
        assert same_bits(getattr(ours, name), getattr(theirs, name)), name


@settings(max_examples=40, deadline=None)
@given(
    docs=corpus,
    added=st.dictionaries(st.text("aceg", min_size=1, max_size=3), text, max_size=6),
    gone=st.lists(st.text("abcdef", min_size=1, max_size=4), max_size=6),
)
def test_updates_after_a_load_give_the_index_built_from_scratch(
    tmp_path_factory: pytest.TempPathFactory, docs: dict[str, str], added: dict[str, str], gone: list[str]
) -> None:
    folder = tmp_path_factory.mktemp("bm25")
    indexed(docs).save(folder)
    loaded = BM25Index.load(folder)
    loaded.add(list(added), list(added.values()))
    loaded.remove(gone)
    final = {**docs, **added}
    for doc_id in gone:
        final.pop(doc_id, None)
    scratch = indexed(final)
    assert sorted(loaded.ids) == sorted(scratch.ids)
    assert all(doc_id in loaded for doc_id in final)
    for k in (1, 4, 50):
        assert loaded.search_many(queries, k) == scratch.search_many(queries, k)


def test_mapped_arrays_are_read_only_and_updates_leave_the_files_as_written(tmp_path: Path) -> None:
    indexed({f"d{n}": f"w{n % 3} w{n % 7} w{n}" for n in range(40)}).save(tmp_path)
    written = {name: digest(tmp_path / name) for name in stored.FILES}
    loaded = BM25Index.load(tmp_path)
    raw = loaded._state.raw
    for array in (raw.tfs, raw.doc_len):
        assert not array.flags.writeable
        with pytest.raises(ValueError, match="read-only"):
            array[0] = 9
    kept = loaded._state
    loaded.add(["d3", "new"], ["w1 w1 w1", "w2 w5"])  # a replacement and a new text
    loaded.remove(["d0", "d7"])
    assert {name: digest(tmp_path / name) for name in stored.FILES} == written
    # the state the load opened is unchanged too: an update builds new arrays, copy on write
    again = BM25Index.load(tmp_path)
    assert same_bits(np.asarray(kept.raw.tfs), np.asarray(again._state.raw.tfs))
    kept.weights.fill(np.arange(len(kept.raw.vocab)))
    assert same_bits(kept.weighted.weights, weighed(again).weights)
    assert "new" in loaded and "d0" not in loaded and "d0" in BM25Index.load(tmp_path)


def test_an_empty_index_saves_and_loads(tmp_path: Path) -> None:
    BM25Index().save(tmp_path)
    loaded = BM25Index.load(tmp_path)
    assert len(loaded) == 0 and loaded.search("w0", 3) == []
    loaded.add(["a"], ["w0"])
    assert [i for i, _ in loaded.search("w0", 3)] == ["a"]


def test_with_params_unchanged_shares_the_weights_and_changed_recomputes_them() -> None:
    index = indexed({"a": "w0 w1", "b": "w0", "c": "w2 w2 w0"})
    assert index.with_params()._state.weights is index._state.weights
    other = index.with_params(k1=0.5, idf="fts5")
    fresh = indexed({"a": "w0 w1", "b": "w0", "c": "w2 w2 w0"}, k1=0.5, idf="fts5")
    assert same_bits(weighed(other).weights, weighed(fresh).weights)
    assert other.search_many(queries, 3) == fresh.search_many(queries, 3)


def _saved(tmp_path: Path) -> Path:
    indexed({f"d{n}": f"w{n % 4} w{n}" for n in range(12)}).save(tmp_path)
    return tmp_path


def _truncate(folder: Path) -> None:
    path = folder / "bm25_docs.npy"
    path.write_bytes(path.read_bytes()[:-3])


def _swap_ranks(folder: Path) -> None:
    rank = np.load(folder / "bm25_id_rank.npy")
    rank[[0, 1]] = rank[[1, 0]]
    np.save(folder / "bm25_id_rank.npy", rank)


def _repeat_an_id(folder: Path) -> None:
    meta = json.loads((folder / "bm25.json").read_text(encoding="utf-8"))
    meta["ids"][1] = meta["ids"][0]
    (folder / "bm25.json").write_text(json.dumps(meta), encoding="utf-8")


def _old_format(folder: Path) -> None:
    meta = json.loads((folder / "bm25.json").read_text(encoding="utf-8"))
    (folder / "bm25.json").write_text(json.dumps({**meta, "format": 1}), encoding="utf-8")
    (folder / "bm25_id_rank.npy").unlink()


def _garble_docs(folder: Path) -> None:
    docs = np.load(folder / "bm25_docs.npy")
    np.save(folder / "bm25_docs.npy", np.full_like(docs, 200))


def _negative_row(folder: Path) -> None:
    docs = np.load(folder / "bm25_docs.npy").astype(np.int64)  # a signed type: a row may be negative
    docs[0] = -1
    np.save(folder / "bm25_docs.npy", docs)


def _floats(folder: Path) -> None:
    np.save(folder / "bm25_tfs.npy", np.load(folder / "bm25_tfs.npy").astype(np.float64))


@pytest.mark.parametrize(
    ("damage", "said"),
    [
        (_truncate, "mmap length is greater than file size"),
        (_swap_ranks, "id_rank does not sort them"),
        (_repeat_an_id, "ids are repeated"),
        (_old_format, "format 1, written by an earlier clear-rag; this one reads format 2"),
        (_garble_docs, "postings out of range"),
        (_negative_row, "postings out of range"),
        (_floats, "not a row of integers"),
        (lambda folder: (folder / "bm25_tfs.npy").unlink(), "bm25_tfs.npy"),
        (lambda folder: (folder / "bm25.json").write_text("[1, 2]"), "holds no settings"),
    ],
)
def test_damaged_truncated_and_old_files_are_a_store_error_naming_the_rebuild(
    tmp_path: Path, damage: object, said: str
) -> None:
    folder = _saved(tmp_path)
    damage(folder)  # type: ignore[operator]
    with pytest.raises(StoreError) as raised:
        BM25Index.load(folder)
    assert said in str(raised.value)
    assert raised.value.fix == REBUILD and raised.value.path == str(folder)
