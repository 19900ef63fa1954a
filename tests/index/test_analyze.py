"""The analyzer against SQLite FTS5's ``unicode61 remove_diacritics 2`` tokenizer, read through fts5vocab."""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Iterator
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clear_rag.index import analyze
from clear_rag.index.analyze import Analyzer

UNICODE61 = "unicode61 remove_diacritics 2"
PORTER = "porter unicode61 remove_diacritics 2"

# Blocks whose characters and case pairs have not changed since Unicode 6.1, the version of
# SQLite's tables, so any difference there would be a bug here rather than a Unicode update.
STABLE_BLOCKS = (
    (0x0000, 0x036F),  # Latin, IPA, spacing modifiers, combining diacritical marks
    (0x0370, 0x04FF),  # Greek and Coptic, Cyrillic
    (0x1E00, 0x1FFF),  # Latin Extended Additional, Greek Extended
    (0x2000, 0x205F),  # General Punctuation
    (0x2070, 0x20B9),  # super- and subscripts, currency symbols up to the rupee
    (0x2100, 0x2189),  # letterlike symbols, number forms
    (0x3000, 0x30FF),  # CJK punctuation, Hiragana, Katakana
    (0x4E00, 0x9FCB),  # CJK Unified Ideographs
    (0xFB00, 0xFB4F),  # Alphabetic Presentation Forms (ligatures)
    (0xFF00, 0xFFEF),  # Halfwidth and Fullwidth Forms
    (0x10400, 0x1044F),  # Deseret, the one script above the BMP that FTS5 case-folds
)
# The documented divergences inside those blocks (see clear_rag/index/analyze.py).
KNOWN_DIVERGENCES = {
    0x01E0: "Ǡ: FTS5 keeps both marks of a with dot above and macron",
    0x01E1: "ǡ: FTS5 keeps both marks of a with dot above and macron",
    0x037F: "Ϳ GREEK CAPITAL LETTER YOT: added in Unicode 7.0, so FTS5 does not fold it",
}


def fts5_terms(texts: list[str], tokenize: str = UNICODE61) -> list[list[str]]:
    """Each text's terms, in order, as FTS5 indexed them (fts5vocab 'instance' table)."""
    db = sqlite3.connect(":memory:")
    db.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize='{tokenize}')")
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
    db.executemany("INSERT INTO t(rowid, x) VALUES (?, ?)", enumerate(texts))
    found: list[list[str]] = [[] for _ in texts]
    for term, doc in db.execute("SELECT term, doc FROM v ORDER BY doc, offset"):
        found[doc].append(term)
    db.close()
    return found


@pytest.fixture(scope="module")
def analyzer() -> Analyzer:
    return Analyzer()


EDGE_CASES = [
    ("Hello, World!", ["hello", "world"]),
    ("straße STRASSE", ["straße", "strasse"]),  # simple folding: ß is not "ss"
    ("ø Ø øresund", ["ø", "ø", "øresund"]),  # no decomposition, so no diacritic to remove
    ("Æther ÆTHER", ["æther", "æther"]),
    ("ﬁnance ﬂow", ["ﬁnance", "ﬂow"]),  # ligatures are letters with no canonical decomposition
    ("café cafe\u0301 CAFÉ", ["cafe", "cafe", "cafe"]),  # composed, decomposed, upper case
    ("naïve Zoë Ångström", ["naive", "zoe", "angstrom"]),
    ("İstanbul ſtar", ["istanbul", "star"]),
    ("ΣΟΦΊΑ σοφίας", ["σοφία", "σοφίασ"]),  # Greek keeps its accents; final sigma folds to σ
    ("µm μm", ["μm", "μm"]),  # MICRO SIGN folds to GREEK SMALL LETTER MU
    ("don't e-mail foo_bar", ["don", "t", "e", "mail", "foo", "bar"]),
    ("3.14 COVID-19 x²", ["3", "14", "covid", "19", "x²"]),
    ("\u0301abc \u0301", ["abc"]),  # a combining mark continues a token but never starts one
    ("日本語のテキスト", ["日本語のテキスト"]),  # no word breaking between CJK characters
    ("emoji😀between", ["emoji", "between"]),
    ("", []),
    ("  ...  ", []),
]


@pytest.mark.parametrize(("text", "expected"), EDGE_CASES)
def test_edge_cases_give_the_expected_terms(analyzer: Analyzer, text: str, expected: list[str]) -> None:
    assert analyzer.terms(text) == expected


def test_edge_cases_agree_with_fts5(analyzer: Analyzer) -> None:
    texts = [text for text, _ in EDGE_CASES]
    assert [analyzer.terms(text) for text in texts] == fts5_terms(texts)


def _stable_codepoints() -> Iterator[int]:
    for low, high in STABLE_BLOCKS:
        yield from range(low, high + 1)


def test_every_character_of_the_stable_blocks_agrees_with_fts5(analyzer: Analyzer) -> None:
    # Alone, a character shows whether it starts a token and how it folds; between two letters,
    # whether it separates, continues a token, or is dropped.
    codepoints = list(_stable_codepoints())
    alone = [chr(cp) for cp in codepoints]
    between = [f"a{chr(cp)}b" for cp in codepoints]
    expected = fts5_terms(alone + between)
    mine = [analyzer.terms(text) for text in alone + between]
    differ = {
        cp
        for i, cp in enumerate(codepoints)
        if mine[i] != expected[i] or mine[len(codepoints) + i] != expected[len(codepoints) + i]
    }
    assert {f"U+{cp:04X}" for cp in differ} == {f"U+{cp:04X}" for cp in KNOWN_DIVERGENCES}


def test_text_above_the_bmp_uses_the_full_pattern(analyzer: Analyzer) -> None:
    texts = ["𐐀𐐨 DESERET", "private\U000f0000use", "a𝐀b 𝔘nicode"]
    assert [analyzer.terms(text) for text in texts] == fts5_terms(texts)


_STABLE_CHARS = [chr(cp) for cp in _stable_codepoints() if cp not in KNOWN_DIVERGENCES]


@settings(max_examples=200, deadline=None)
@given(
    st.text(
        st.one_of(
            st.sampled_from(_STABLE_CHARS),
            st.sampled_from(list("aeiouAEIOU ,.-'éÉüÜøßﬁ\u0301\u0327")),
        ),
        max_size=40,
    )
)
def test_random_text_agrees_with_fts5(text: str) -> None:
    assert Analyzer().terms(text) == fts5_terms([text])[0]


def test_stemming_runs_after_unicode61_as_in_fts5() -> None:
    texts = ["Running CATS généralisations", "hopefulness ÉLECTRICAL troubled", "ﬁnancing Straßen"]
    assert [Analyzer(stem=True).terms(text) for text in texts] == fts5_terms(texts, PORTER)


def test_repeated_calls_use_the_cache_and_agree(analyzer: Analyzer) -> None:
    text = "Dorothée met DOROTHÉE and dorothee"
    assert analyzer.terms(text) == analyzer.terms(text) == ["dorothee", "met", "dorothee", "and", "dorothee"]


def batch_terms(analyzer: Analyzer, texts: list[str]) -> tuple[list[list[str]], list[str]]:
    """``term_ids`` read back as each text's terms, and the terms in the order they were numbered."""
    vocab: dict[str, int] = {}
    ids, counts = analyzer.term_ids(texts, lambda term: vocab.setdefault(term, len(vocab)))
    names = list(vocab)
    flat = [names[i] for i in ids.tolist()]
    ends = list(itertools.accumulate(counts.tolist()))
    assert len(counts) == len(texts) and (ends[-1] if ends else 0) == len(flat)
    return [flat[end - n : end] for end, n in zip(ends, counts.tolist(), strict=True)], names


@pytest.mark.parametrize("stem", [False, True])
def test_term_ids_are_the_terms_of_each_text(stem: bool) -> None:
    # Every stable character alone and between letters: runs with non-ASCII characters that give
    # no term ("–"), one ("é") or several ("a–b"), in one batch with plain ASCII text.
    codepoints = list(_stable_codepoints())
    texts = [text for text, _ in EDGE_CASES] + [chr(cp) for cp in codepoints]
    texts += [f"a{chr(cp)}b Running" for cp in codepoints]
    analyzer = Analyzer(stem=stem)
    per_text, vocabulary = batch_terms(analyzer, texts)
    assert per_text == [analyzer.terms(text) for text in texts]
    assert vocabulary == list(dict.fromkeys(term for terms in per_text for term in terms))


_ANY_CHARS = st.one_of(
    st.sampled_from(list("ab AB\x00\t\n.-é\u0301–µﬁß\xa0\ud800\udfff😀𐐀")),
    st.characters(),
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.text(_ANY_CHARS, max_size=12), max_size=6), st.booleans(), st.sampled_from([1, 8, 1 << 20])
)
def test_term_ids_agree_with_terms_on_any_batch(texts: list[str], stem: bool, chunk_bytes: int) -> None:
    analyzer = Analyzer(stem=stem)
    with mock.patch.object(analyze, "_CHUNK_BYTES", chunk_bytes):  # texts split across chunks too
        per_text, _ = batch_terms(analyzer, texts)
    assert per_text == [analyzer.terms(text) for text in texts]


def test_invalid_arguments_are_rejected(analyzer: Analyzer) -> None:
    with pytest.raises(ValueError, match="stem='yes'"):
        Analyzer(stem="yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="type bytes"):
        analyzer.terms(b"bytes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="type NoneType"):
        analyzer.term_ids(["fine", None], len)  # type: ignore[list-item]
