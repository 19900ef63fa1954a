"""BM25Index on a hand-built three-document fixture, expected scores written as the formula."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clear_rag.errors import StoreError
from clear_rag.index.analyze import Analyzer
from clear_rag.index.bm25 import BM25Index

K1, B = 1.2, 0.75
DOCS = {
    "d1": "The cat sat on the mat",  # 6 terms
    "d2": "The dog chased the cat",  # 5 terms
    "d3": "Dogs and cats",  # 3 terms
}
N = 3
AVGDL = (6 + 5 + 3) / 3


def weight(tf: int, dl: int, avgdl: float = AVGDL) -> float:
    return tf * (K1 + 1) / (tf + K1 * (1 - B + B * dl / avgdl))


def build(**params: object) -> BM25Index:
    index = BM25Index(**params)  # type: ignore[arg-type]
    index.add(list(DOCS), list(DOCS.values()))
    return index


def test_lucene_idf_scores_are_the_formula() -> None:
    idf_cat = math.log(1 + (3 - 2 + 0.5) / (2 + 0.5))  # cat: d1, d2
    idf_mat = math.log(1 + (3 - 1 + 0.5) / (1 + 0.5))  # mat: d1
    results = dict(build().search("cat mat", k=10))
    assert results == pytest.approx(
        {"d1": idf_cat * weight(1, 6) + idf_mat * weight(1, 6), "d2": idf_cat * weight(1, 5)}, rel=1e-12
    )


def test_fts5_idf_scores_are_the_formula_with_its_floor() -> None:
    idf_dog = math.log((3 - 1 + 0.5) / (1 + 0.5))  # "dog" is in d2 only; d3 has "dogs"
    idf_the = 1e-6  # ln((3 - 2 + 0.5) / (2 + 0.5)) < 0, so FTS5's floor
    results = build(idf="fts5").search("the dog", k=10)
    assert [doc_id for doc_id, _ in results] == ["d2", "d1"]
    assert [score for _, score in results] == pytest.approx(
        [idf_the * weight(2, 5) + idf_dog * weight(1, 5), idf_the * weight(2, 6)], rel=1e-12
    )


def test_results_are_sorted_by_score_and_k_cuts_them() -> None:
    index = build()
    assert [i for i, _ in index.search("the cat", k=10)] == ["d2", "d1"]  # d2 is shorter
    assert [i for i, _ in index.search("the cat", k=1)] == ["d2"]


def test_stemming_matches_inflections() -> None:
    idf_cat = math.log(1 + (3 - 3 + 0.5) / (3 + 0.5))  # cat, cat, cats -> cat
    results = dict(build(stem=True).search("CATS", k=10))
    assert results == pytest.approx(
        {"d1": idf_cat * weight(1, 6), "d2": idf_cat * weight(1, 5), "d3": idf_cat * weight(1, 3)}
    )


def test_a_repeated_query_term_counts_once_per_occurrence_as_in_fts5() -> None:
    index = build()
    once = dict(index.search("mat", k=10))
    assert dict(index.search("mat mat", k=10)) == {"d1": 2 * once["d1"]}


def test_unknown_terms_are_ignored_and_no_match_gives_nothing() -> None:
    index = build()
    assert index.search("cat zebra", k=10) == index.search("cat", k=10)
    assert index.search("zebra", k=10) == []
    assert index.search("", k=10) == []
    assert index.search("?!", k=10) == []


def test_case_and_diacritics_do_not_matter() -> None:
    index = BM25Index()
    index.add(["x"], ["Café au lait"])
    assert [i for i, _ in index.search("CAFE", k=1)] == ["x"]


def test_empty_index_gives_nothing() -> None:
    index = BM25Index()
    assert len(index) == 0
    assert index.search("cat", k=5) == []
    assert index.search_many(["cat", ""], k=5) == [[], []]


def test_documents_without_terms_count_in_n_and_avgdl_as_in_fts5() -> None:
    index = build(idf="fts5")
    index.add(["empty"], ["..."])
    idf_mat = math.log((4 - 1 + 0.5) / (1 + 0.5))
    [(doc_id, score)] = index.search("mat", k=5)
    assert doc_id == "d1"
    assert score == pytest.approx(idf_mat * weight(1, 6, avgdl=14 / 4), rel=1e-12)


def test_empty_texts_count_in_n_and_avgdl_through_remove_replace_and_load(tmp_path: Path) -> None:
    def idf(n: int, df: int) -> float:  # Lucene's, the default
        return math.log(1 + (n - df + 0.5) / (df + 0.5))

    def only_hit(index: BM25Index, query: str, doc_id: str, score: float) -> None:
        [(found, found_score)] = index.search(query, k=10)
        assert found == doc_id
        assert found_score == pytest.approx(score, rel=1e-12)

    index = build()
    index.add(["blank", "dots"], ["", "?! ... --"])  # no terms: dl 0, yet each is one of N
    only_hit(index, "mat", "d1", idf(5, 1) * weight(1, 6, avgdl=14 / 5))
    index.save(tmp_path)
    loaded = BM25Index.load(tmp_path)
    assert len(loaded) == 5
    assert loaded.search("mat cat", k=10) == index.search("mat cat", k=10)
    loaded.remove(["d3"])  # 3 terms go, the two empty texts stay
    only_hit(loaded, "mat", "d1", idf(4, 1) * weight(1, 6, avgdl=11 / 4))
    loaded.add(["d2"], [""])  # replaced by an empty text: still a document, now of length 0
    only_hit(loaded, "cat", "d1", idf(4, 1) * weight(1, 6, avgdl=6 / 4))
    loaded.remove(["blank", "dots"])
    only_hit(loaded, "cat", "d1", idf(2, 1) * weight(1, 6, avgdl=6 / 2))


def test_an_index_of_texts_without_terms_matches_nothing_and_round_trips(tmp_path: Path) -> None:
    index = BM25Index()
    index.add(["a", "b"], ["", "..."])
    assert len(index) == 2 and index.vocabulary == ()
    assert index.search("cat", k=5) == [] and index.search("", k=5) == []
    index.save(tmp_path)
    loaded = BM25Index.load(tmp_path)
    assert loaded.ids == ("a", "b") and loaded.search("cat", k=5) == []
    loaded.add(["c"], ["cat"])  # N = 3, avgdl = 1 / 3
    idf_cat = math.log(1 + (3 - 1 + 0.5) / (1 + 0.5))
    assert dict(loaded.search("cat", k=5)) == pytest.approx({"c": idf_cat * weight(1, 1, avgdl=1 / 3)})


def test_ties_are_broken_by_id_also_at_the_k_boundary() -> None:
    index = BM25Index()
    index.add(["c", "a", "d", "b"], ["same words", "same words", "other", "same words"])
    assert [i for i, _ in index.search("same", k=10)] == ["a", "b", "c"]
    assert [i for i, _ in index.search("same", k=2)] == ["a", "b"]
    assert [i for i, _ in index.search("same", k=1)] == ["a"]


def test_search_many_is_search_per_query() -> None:
    index = build()
    queries = ["cat", "the dog", "", "zebra mat"]
    assert index.search_many(queries, k=2) == [index.search(q, k=2) for q in queries]


def test_with_params_rescores_like_a_fresh_index() -> None:
    index = build()
    for params in ({"k1": 2.0}, {"b": 0.0}, {"idf": "fts5"}):
        rescored = index.with_params(**params)
        assert rescored.search("the cat", k=5) == build(**params).search("the cat", k=5)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"k1": -0.1}, "k1=-0.1"),
        ({"k1": math.inf}, "k1=inf"),
        ({"k1": "1.2"}, "k1='1.2'"),
        ({"b": 1.5}, "b=1.5"),
        ({"b": -0.1}, "b=-0.1"),
        ({"b": True}, "b=True"),
        ({"idf": "bm25+"}, "idf='bm25\\+'"),
        ({"stem": 1}, "stem=1"),
    ],
)
def test_invalid_settings_are_rejected(params: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        BM25Index(**params)  # type: ignore[arg-type]


@pytest.mark.parametrize("k", [0, -1, 1.5, True])
def test_invalid_k_is_rejected(k: object) -> None:
    with pytest.raises(ValueError, match="k="):
        build().search("cat", k=k)  # type: ignore[arg-type]


def test_invalid_adds_are_rejected_and_change_nothing() -> None:
    index = build()
    with pytest.raises(ValueError, match="2 ids and 1 texts"):
        index.add(["a", "b"], ["x"])
    with pytest.raises(ValueError, match=r"\['a'\] appear more than once"):
        index.add(["a", "a"], ["x", "y"])
    with pytest.raises(ValueError, match="must all be str"):
        index.add([1], ["x"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="cannot be analysed"):
        index.add(["d1"], [None])  # type: ignore[list-item]
    assert index.search("cat", k=5) == build().search("cat", k=5)


def test_remove_drops_documents_and_ignores_unknown_ids() -> None:
    index = build()
    assert index.remove(["d1", "nope"]) == 1
    assert "d1" not in index and len(index) == 2
    assert index.search("mat", k=5) == []
    assert "mat" not in index.vocabulary
    fresh = BM25Index()
    fresh.add(["d2", "d3"], [DOCS["d2"], DOCS["d3"]])
    assert index.search("the cat dogs", k=5) == fresh.search("the cat dogs", k=5)


WORDS = ["apple", "berry", "cherry", "date", "elder", "fig", "grape"]
texts = st.lists(st.sampled_from(WORDS), max_size=8).map(" ".join)
operations = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.dictionaries(st.sampled_from("abcdefgh"), texts, max_size=4)),
        st.tuples(st.just("remove"), st.lists(st.sampled_from("abcdefghz"), max_size=3)),
    ),
    max_size=8,
)


@settings(max_examples=150, deadline=None)
@given(operations, st.sampled_from(["lucene", "fts5"]))
def test_updates_give_the_same_results_as_building_from_scratch(
    ops: list[tuple[str, object]], idf: str
) -> None:
    index = BM25Index(idf=idf)  # type: ignore[arg-type]
    final: dict[str, str] = {}
    for op, arg in ops:
        if op == "add":
            assert isinstance(arg, dict)
            index.add(list(arg), list(arg.values()))
            final.update(arg)
        else:
            assert isinstance(arg, list)
            index.remove(arg)
            for doc_id in arg:
                final.pop(doc_id, None)
    scratch = BM25Index(idf=idf)  # type: ignore[arg-type]
    scratch.add(list(final), list(final.values()))
    assert sorted(index.ids) == sorted(scratch.ids)
    assert sorted(index.vocabulary) == sorted(scratch.vocabulary)
    queries = [*WORDS, "apple fig", "grape grape cherry", "elder date berry apple"]
    assert index.search_many(queries, k=5) == scratch.search_many(queries, k=5)


def test_save_and_load_round_trip_without_tokenising(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    index = build(k1=1.5, b=0.5, idf="fts5", stem=True)
    index.save(tmp_path / "bm25")

    def refuse(self: Analyzer, *args: object) -> list[str]:
        raise AssertionError("load must not tokenise")

    with monkeypatch.context() as patch:
        patch.setattr(Analyzer, "terms", refuse)
        patch.setattr(Analyzer, "term_ids", refuse)
        loaded = BM25Index.load(tmp_path / "bm25")
    assert (loaded.k1, loaded.b, loaded.idf, loaded.stem) == (1.5, 0.5, "fts5", True)
    assert loaded.ids == index.ids and loaded.vocabulary == index.vocabulary
    queries = ["cats", "the dog", "chasing mats"]
    assert loaded.search_many(queries, k=5) == index.search_many(queries, k=5)
    loaded.add(["d4"], ["a cat"])  # a loaded index keeps updating
    assert "d4" in loaded


def test_saved_index_holds_raw_postings(tmp_path: Path) -> None:
    build().save(tmp_path)
    meta = json.loads((tmp_path / "bm25.json").read_text(encoding="utf-8"))
    tfs = np.load(tmp_path / "bm25_tfs.npy")
    assert meta["ids"] == ["d1", "d2", "d3"]
    assert sorted(np.load(tmp_path / "bm25_doc_len.npy").tolist()) == [3, 5, 6]
    assert tfs.sum() == 6 + 5 + 3


@pytest.mark.parametrize(
    ("repeat", "tf_type"), [(1, np.uint8), (255, np.uint8), (256, np.uint16), (70_000, np.uint32)]
)
def test_saved_arrays_take_the_narrowest_type_that_holds_them_and_load_as_they_were(
    tmp_path: Path, repeat: int, tf_type: type
) -> None:
    """On disk a posting's frequency takes the fewest bytes its largest value needs (a word said 256
    times needs two), and its document row four; loaded, every array and every score is as before:
    the term pointers widened to int64 and the document rows to int32 (as the kernels read them), the
    frequencies and lengths mapped as stored."""
    index = BM25Index()
    index.add(["long", "short", "other"], [" ".join(["word"] * repeat) + " tail", "word tail", "else"])
    index.save(tmp_path)
    assert np.load(tmp_path / "bm25_tfs.npy").dtype == tf_type
    assert np.load(tmp_path / "bm25_docs.npy").dtype == np.uint8  # three documents: rows 0 to 2
    loaded = BM25Index.load(tmp_path)
    before, after = index._state.raw, loaded._state.raw
    for name in ("indptr", "docs", "tfs", "doc_len"):
        assert np.array_equal(getattr(before, name), getattr(after, name))
    assert after.indptr.dtype == np.int64 and after.docs.dtype == np.int32
    assert after.tfs.dtype == tf_type and not after.tfs.flags.writeable
    assert loaded.search_many(["word", "tail", "else"], 3) == index.search_many(["word", "tail", "else"], 3)


def test_the_narrowest_type_refuses_a_negative_count() -> None:
    from clear_rag.index.files import narrowest

    assert narrowest(np.array([], dtype=np.int64)).dtype == np.uint8
    assert narrowest(np.array([0, 2**32], dtype=np.int64)).dtype == np.int64
    with pytest.raises(ValueError, match="-1 is negative"):
        narrowest(np.array([3, -1]))


def test_load_of_a_missing_or_damaged_index_is_a_store_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="cannot be read"):
        BM25Index.load(tmp_path / "missing")
    build().save(tmp_path)
    np.save(tmp_path / "bm25_doc_len.npy", np.array([1, 2, 3]))
    with pytest.raises(StoreError, match="document lengths disagree"):
        BM25Index.load(tmp_path)
