"""BM25Index(idf="fts5") against SQLite FTS5's own ``bm25()``, ranking for ranking.

What FTS5's ``bm25()`` computes (ext/fts5/fts5_aux.c, ``fts5Bm25GetData`` and ``fts5Bm25Function``):

* once per query: N = rows in the table (``xRowCount``); avgdl = tokens in all rows (``xColumnTotalSize``
  over all columns) / N, so rows with no tokens count in both; for each phrase i of the query,
  n_i = rows matching it (``xQueryPhrase``) and idf_i = ln((N - n_i + 0.5) / (n_i + 0.5)), replaced
  by 1e-6 when it is <= 0;
* per matching row: f_i = occurrences of phrase i in the row (``xInst``, times a column weight that
  defaults to 1), D = tokens in the row (``xColumnSize``), and
  ``score = sum_i idf_i * (f_i * (k1 + 1)) / (f_i + k1 * (1 - b + b * D / avgdl))``, k1 = 1.2,
  b = 0.75, summed in phrase order; it returns ``-score``, so ``ORDER BY bm25(t)`` is best first.

Every phrase is scored on its own, so a query naming a term twice counts it twice. A one-term
quoted phrase is a term, so ``"a" OR "b"`` is the OR query BM25Index runs for ``a b``. FTS5 is
ordered by ``bm25`` and then by id (BINARY collation), which is BM25Index's documented tie rule.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clear_rag.index.bm25 import BM25Index

# External data only through ../shared beside the repository root, as tests/eval/test_beir.py finds it.
SCIFACT = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "beir-scifact" / "corpus.jsonl"
UNKNOWN = ["zzqx", "xylophonist", "Qwertyuiop"]
ACCENTS = {"a": "áàâä", "e": "éèêë", "i": "íìîï", "o": "óòôö", "u": "úùûü", "c": "ç", "n": "ñ"}
STEMMABLE = "connect relat hope generaliz adjust condition nation ration sens electr form"
# Texts with no token for FTS5's unicode61 nor for BM25Index: blank, ASCII and Unicode punctuation.
WITHOUT_TOKENS = ["", " ", "...", "?! -- ;", "\u2014 \u2013", "\u00ab\u00bb \u00bf\u00a1", "\u00a0\t\n\u3000"]


def generated_corpus() -> list[str]:
    """A few hundred documents over a Zipf-like vocabulary, with case and accent variants."""
    rng = random.Random(61)
    syllables = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pha", "tri", "ond", "el"]
    words = ["".join(rng.choice(syllables) for _ in range(rng.randint(1, 3))) for _ in range(300)]
    words += [
        root + suffix for root in STEMMABLE.split() for suffix in ("", "s", "ed", "ing", "ation", "ness")
    ]
    words = list(dict.fromkeys(words))
    weights = [1 / (rank + 1) ** 1.1 for rank in range(len(words))]

    def surface(word: str) -> str:
        roll = rng.random()
        if roll < 0.1:
            return word.capitalize()
        if roll < 0.15:
            return word.upper()
        if roll < 0.3:
            return "".join(rng.choice(ACCENTS[c]) if c in ACCENTS and rng.random() < 0.5 else c for c in word)
        return word

    docs = []
    for _ in range(380):
        length = rng.choice([0, 1, 2, 3, *range(5, 90)])
        tokens = [surface(w) for w in rng.choices(words, weights, k=length)]
        docs.append(" ".join(t + rng.choice(["", "", "", ",", ".", " -", ";"]) for t in tokens))
    docs += ["", "... ---", "Straße straße ﬁnancing ØRESUND øresund"]
    docs += [rng.choice(docs) for _ in range(20)]  # duplicates: exact ties that only ids can break
    return docs


def scifact_corpus() -> list[str]:
    if not SCIFACT.exists():
        pytest.skip(f"{SCIFACT} is not there; the real-prose comparison needs BEIR SciFact")
    with SCIFACT.open(encoding="utf-8") as fh:
        rows = [json.loads(line) for _, line in zip(range(1500), fh, strict=False)]
    return [row["title"] + " " + row["text"] for row in rows]


@dataclass(frozen=True)
class Pair:
    index: BM25Index
    db: sqlite3.Connection
    pool: list[str]  # single-token query words as they appear in the texts


@pytest.fixture(
    scope="module",
    params=[("generated", False), ("generated", True), ("scifact", False), ("scifact", True)],
    ids=["generated", "generated-porter", "scifact", "scifact-porter"],
)
def pair(request: pytest.FixtureRequest) -> Iterator[Pair]:
    corpus, stem = request.param
    texts = generated_corpus() if corpus == "generated" else scifact_corpus()
    pair = make_pair(corpus, texts, stem)
    yield pair
    pair.db.close()


def make_pair(corpus: str, texts: list[str], stem: bool) -> Pair:
    """``texts`` in a BM25Index and in an FTS5 table ``t`` (rowid n for text n, its id in ``m``)."""
    # Hashed ids, so id order is not insertion (rowid) order and the tie rule is really tested.
    ids = hashed_ids(corpus, range(len(texts)))
    index = BM25Index(idf="fts5", stem=stem)
    index.add(ids, texts)
    db = sqlite3.connect(":memory:")
    tokenize = ("porter " if stem else "") + "unicode61 remove_diacritics 2"
    db.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize='{tokenize}')")
    db.execute("CREATE TABLE m(rowid INTEGER PRIMARY KEY, id TEXT NOT NULL)")
    db.executemany("INSERT INTO t(rowid, x) VALUES (?, ?)", enumerate(texts))
    db.executemany("INSERT INTO m(rowid, id) VALUES (?, ?)", enumerate(ids))
    words = {w for text in texts[:400] for w in re.findall(r"\w+", text)}
    pool = sorted(w for w in words if len(index.analyzer.terms(w)) == 1)
    return Pair(index, db, pool)


def hashed_ids(corpus: str, rows: Iterable[int]) -> list[str]:
    return [hashlib.sha256(f"{corpus}{n}".encode()).hexdigest()[:12] for n in rows]


def fts5_search(db: sqlite3.Connection, words: list[str], k: int | None = None) -> list[tuple[str, float]]:
    query = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
    sql = (
        "SELECT m.id, -r.s FROM (SELECT rowid, bm25(t) AS s FROM t WHERE t MATCH ?) AS r "
        "JOIN m ON m.rowid = r.rowid ORDER BY r.s, m.id"
    )
    rows = db.execute(sql + ("" if k is None else f" LIMIT {k}"), (query,)).fetchall()
    return [(doc_id, score) for doc_id, score in rows]


def assert_same_ranking(mine: list[tuple[str, float]], theirs: list[tuple[str, float]]) -> None:
    """Same ids in the same order, scores equal within 1e-6 relative.

    Two ids may swap only where FTS5's own scores differ by rounding (1e-12 relative), a
    one-ulp difference between numpy's and libm's ``log`` deciding the order.
    """
    assert len(mine) == len(theirs)
    their_score = dict(theirs)
    for (my_id, my_score), (their_id, score) in zip(mine, theirs, strict=True):
        assert my_id in their_score
        assert my_score == pytest.approx(their_score[my_id], rel=1e-6)
        if my_id != their_id:
            assert math.isclose(their_score[my_id], score, rel_tol=1e-12), (my_id, their_id)


def fixed_queries(pool: list[str]) -> list[list[str]]:
    rng = random.Random(len(pool))
    queries = [[w] for w in rng.sample(pool, 120)]
    queries += [rng.sample(pool, rng.randint(2, 6)) for _ in range(120)]
    queries += [[w, w] for w in rng.sample(pool, 10)] + [[UNKNOWN[0], rng.choice(pool)], [UNKNOWN[1]]]
    return queries


def test_fixed_queries_rank_and_score_as_fts5(pair: Pair) -> None:
    queries = fixed_queries(pair.pool)
    assert len(queries) == 252
    for words in queries:
        mine = pair.index.search(" ".join(words), k=len(pair.index))
        assert_same_ranking(mine, fts5_search(pair.db, words))
    for words in queries[::10]:
        for k in (1, 3, 10):  # the cut at k, ties included, is FTS5's LIMIT
            assert_same_ranking(pair.index.search(" ".join(words), k=k), fts5_search(pair.db, words, k))


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_generated_queries_rank_and_score_as_fts5(pair: Pair, data: st.DataObject) -> None:
    word = st.one_of(st.sampled_from(pair.pool), st.sampled_from(UNKNOWN))
    words = data.draw(st.lists(word, min_size=1, max_size=6), label="words")
    k = data.draw(st.sampled_from([1, 5, 20, len(pair.index)]), label="k")
    assert_same_ranking(pair.index.search(" ".join(words), k=k), fts5_search(pair.db, words, k))


def test_an_implicit_and_of_a_repeated_term_is_the_same_double_count(pair: Pair) -> None:
    word = pair.pool[len(pair.pool) // 2]
    phrase_and = pair.db.execute("SELECT rowid, bm25(t) FROM t WHERE t MATCH ?", (f'"{word}" "{word}"',))
    phrase_or = pair.db.execute("SELECT rowid, bm25(t) FROM t WHERE t MATCH ?", (f'"{word}" OR "{word}"',))
    assert sorted(phrase_and.fetchall()) == sorted(phrase_or.fetchall())
    assert_same_ranking(
        pair.index.search(f"{word} {word}", k=len(pair.index)), fts5_search(pair.db, [word] * 2)
    )


def test_lucene_idf_differs_from_fts5_as_the_formula_says_for_a_very_common_term(pair: Pair) -> None:
    db = pair.db
    db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.rows USING fts5vocab(main, t, 'row')")
    n_docs = len(pair.index)
    term, df = db.execute("SELECT term, doc FROM temp.rows ORDER BY doc DESC, term LIMIT 1").fetchone()
    assert df > n_docs / 2  # so FTS5's idf is its floor, and Lucene's is small but real
    theirs = fts5_search(db, [term])
    lucene = pair.index.with_params(idf="lucene").search(term, k=n_docs)
    idf_lucene = math.log(1 + (n_docs - df + 0.5) / (df + 0.5))
    assert [i for i, _ in lucene] == [i for i, _ in theirs]  # one term: the same order...
    for (_, score), (_, fts5_score) in zip(lucene, theirs, strict=True):  # ...scaled by idf / 1e-6
        assert score == pytest.approx(fts5_score * idf_lucene / 1e-6, rel=1e-9)


def test_rows_without_tokens_count_in_n_and_avgdl_as_in_fts5_through_deletes_and_inserts() -> None:
    rng = random.Random(7)
    worded = [text for text in generated_corpus()[:150] if text.strip(" .,;-")]
    texts = worded + [WITHOUT_TOKENS[n % len(WITHOUT_TOKENS)] for n in range(75)]  # a third of the rows
    rng.shuffle(texts)
    pair = make_pair("blank-rows", texts, stem=False)
    index, db = pair.index, pair.db
    # Neither tokenizer finds a token in those rows: they add to N and nothing to the total length.
    db.execute("CREATE VIRTUAL TABLE temp.tokens USING fts5vocab(main, t, 'instance')")
    blank_rows = [n for n, text in enumerate(texts) if text in WITHOUT_TOKENS]
    holding = {doc for (doc,) in db.execute("SELECT DISTINCT doc FROM temp.tokens")}
    assert holding.isdisjoint(blank_rows) and all(index.analyzer.terms(t) == [] for t in WITHOUT_TOKENS)
    queries = [[w] for w in pair.pool[::3]] + [rng.sample(pair.pool, 3) for _ in range(40)]

    def assert_as_fts5() -> None:
        assert len(index) == db.execute("SELECT count(*) FROM t").fetchone()[0]
        for words in queries:
            assert_same_ranking(index.search(" ".join(words), k=len(index)), fts5_search(db, words))

    assert_as_fts5()
    # Without the blank rows N and avgdl, and with them every score, would be other numbers.
    alone = BM25Index(idf="fts5")
    alone.add([f"w{n}" for n in range(len(worded))], worded)
    word = queries[0][0]
    assert alone.search(word, k=1)[0][1] != pytest.approx(index.search(word, k=1)[0][1], rel=1e-3)

    gone = rng.sample(range(len(texts)), 60)  # worded and blank rows alike
    assert not set(gone).isdisjoint(blank_rows)
    index.remove(hashed_ids("blank-rows", gone))
    db.executemany("DELETE FROM t WHERE rowid = ?", [(n,) for n in gone])
    assert_as_fts5()

    added = list(range(len(texts), len(texts) + 30))
    more = [WITHOUT_TOKENS[n % len(WITHOUT_TOKENS)] if n % 3 else rng.choice(worded) for n in added]
    more_ids = hashed_ids("blank-rows", added)
    index.add(more_ids, more)
    db.executemany("INSERT INTO t(rowid, x) VALUES (?, ?)", zip(added, more, strict=True))
    db.executemany("INSERT INTO m(rowid, id) VALUES (?, ?)", zip(added, more_ids, strict=True))
    assert_as_fts5()
    db.close()


def test_a_store_with_empty_documents_counts_them_in_n_as_fts5_counts_its_rows(tmp_path: Path) -> None:
    """Chunkers cut nothing from an empty document, so before its empty unit the keyword index of a
    store never saw it: Cranfield's 1,400 documents (two empty) gave N = 1,398 against FTS5's 1,400."""
    from clear_rag.chunk.factory import make_chunker
    from clear_rag.index.sync import keyword_index
    from clear_rag.ingest import ingest_documents
    from clear_rag.store import Store
    from clear_rag.tokens import RegexTokenizer
    from clear_rag.types import Document

    texts = [*generated_corpus()[:60], "", "   ", "", "....", "\u3000"]
    docs = [
        Document(f"d{n:03}", f"d{n:03}", hashlib.sha256(t.encode()).hexdigest(), t, ())
        for n, t in enumerate(texts)
    ]
    with Store(tmp_path / "s") as store:
        ingest_documents(
            store, docs, make_chunker("whole", size=1, tokenizer=RegexTokenizer()), parser="test@1"
        )
        assert store.stats().chunks < len(texts)  # the blank documents have no chunk
        index, _ = keyword_index(store, idf="fts5")
    fts = sqlite3.connect(":memory:")
    fts.execute(
        "CREATE VIRTUAL TABLE t USING fts5(id UNINDEXED, body, tokenize='unicode61 remove_diacritics 2')"
    )
    fts.executemany("INSERT INTO t VALUES (?, ?)", [(d.id, d.text) for d in docs])
    for query in ("ka lo", "mi", "tri ond el", "vo ze pha"):
        terms = " OR ".join(f'"{w}"' for w in query.split())
        expected = fts.execute(
            "SELECT id, -bm25(t, 0, 1.0) FROM t WHERE t MATCH ? ORDER BY bm25(t, 0, 1.0), id", (terms,)
        ).fetchall()
        got = [(cid.split("#")[0], score) for cid, score in index.search(query, 100)]
        assert [d for d, _ in got] == [d for d, _ in expected]
        assert [s for _, s in got] == pytest.approx([s for _, s in expected], rel=1e-9)
