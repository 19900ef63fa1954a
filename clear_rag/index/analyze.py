"""Text to index terms, the way SQLite FTS5's ``unicode61 remove_diacritics 2`` tokenizer does it.

The rules, checked character by character against SQLite in ``tests/index/test_analyze.py``:

* A token is a run of token characters: Unicode letters (L*), numbers (N*), private use (Co), and
  unassigned code points (Cn), which FTS5 also treats as token characters. Everything else
  separates. U+FFFE and U+FFFF separate because SQLite reads them as U+FFFD, a symbol.
* The combining marks that occur in the canonical decomposition of some Latin letter (U+0300 to
  U+0331, 25 of them) continue a token without starting one, and are dropped.
* Each character is case-folded with *simple* Unicode case folding ("ſ" -> "s", "ς" -> "σ",
  "µ" -> "μ"), not full folding, so "ß" stays "ß" where ``str.casefold`` would give "ss".
  As in FTS5, folding covers the Basic Multilingual Plane and Deseret only.
* A letter whose canonical decomposition is an ASCII letter plus combining marks becomes that
  ASCII letter ("é" -> "e", "ǘ" -> "u", "İ" -> "i"). Other letters keep their marks: "ø", "æ",
  "ł", "ß", "ﬁ" and Greek or Cyrillic accented letters ("ά", "й") are unchanged, as in FTS5.
* With ``stem=True`` every token then goes through :func:`clear_rag.index.porter.stem`, as
  FTS5's ``porter unicode61`` applies the Porter stemmer to what unicode61 produced.

Known divergences, all from SQLite's Unicode 6.1 tables against Python's newer ``unicodedata``:
characters assigned since Unicode 6.1 that are not letters or numbers (many emoji, some marks
and punctuation) are token characters to FTS5 (unassigned, to its tables) but separators here;
case pairs added since 6.1 (Cherokee lowercase, Georgian Mtavruli, some Latin Extended-D) are
folded here and not by FTS5; and "ǡ"/"Ǡ" (a with dot above and macron) keep their marks in FTS5.
"""

from __future__ import annotations

import functools
import itertools
import operator
import re
import sys
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from clear_rag.index.porter import stem as porter_stem
from clear_rag.index.scoring import IntArray

_TOKEN_CATEGORIES = frozenset({"Lu", "Ll", "Lt", "Lm", "Lo", "Nd", "Nl", "No", "Co", "Cn"})
# SQLite decodes these two noncharacters as U+FFFD REPLACEMENT CHARACTER, a symbol.
_READ_AS_SYMBOL = frozenset({0xFFFE, 0xFFFF})
_DESERET = range(0x10400, 0x10450)


def _is_token_char(cp: int) -> bool:
    return cp not in _READ_AS_SYMBOL and unicodedata.category(chr(cp)) in _TOKEN_CATEGORIES


def _single(text: str) -> str | None:
    return text if len(text) == 1 else None


def _fold_char(char: str) -> str:
    """Simple case folding, then the ASCII base of a Latin letter with diacritics."""
    cp = ord(char)
    if cp > 0xFFFF and cp not in _DESERET:
        return char
    # str.casefold is full folding; where it gives several characters the simple folding is
    # the lowercase mapping when that is one character, else the character itself.
    folded = _single(char.casefold()) or _single(char.lower()) or char
    parts = unicodedata.normalize("NFD", folded)
    marks = parts[1:]
    if marks and parts[0].isascii() and parts[0].isalpha() and all(map(unicodedata.combining, marks)):
        return parts[0].lower()
    return folded


@functools.cache
def _latin_marks() -> frozenset[int]:
    """Combining marks found in the decomposition of a letter whose base is ASCII."""
    marks: set[int] = set()
    for cp in range(0x10000):
        parts = unicodedata.normalize("NFD", chr(cp))
        if len(parts) > 1 and parts[0].isascii() and parts[0].isalpha():
            marks.update(ord(mark) for mark in parts[1:] if unicodedata.combining(mark))
    return frozenset(marks)


def _ranges(codepoints: list[int]) -> list[tuple[int, int]]:
    runs: list[tuple[int, int]] = []
    for cp in codepoints:
        if runs and runs[-1][1] == cp - 1:
            runs[-1] = (runs[-1][0], cp)
        else:
            runs.append((cp, cp))
    return runs


def _char_class(runs: list[tuple[int, int]]) -> str:
    return "".join(
        re.escape(chr(lo)) if lo == hi else f"{re.escape(chr(lo))}-{re.escape(chr(hi))}" for lo, hi in runs
    )


# Plain ASCII text, the common case, needs no table: its tokens are the runs of [0-9A-Za-z],
# lower-cased. One bytes.translate maps A-Z to a-z and every other ASCII byte to a space, and
# split() then yields exactly those runs: two C passes, about twice as fast as lower() and a regex
# findall. Bytes from 0x80 up are kept: in UTF-8 text a run holding some is a stretch between
# ASCII separators, which no token crosses, so ``term_ids`` analyses just that stretch in full.
_ASCII_FOLD = bytes(
    byte + 32
    if 0x41 <= byte <= 0x5A
    else byte
    if 0x30 <= byte <= 0x39 or 0x61 <= byte <= 0x7A or byte >= 0x80
    else 0x20
    for byte in range(256)
)
# Ends each text in a chunk of a batch: a run of its own, as translation leaves no NUL.
_END = b"\x00"
_ENDED = b" " + _END + b" "
# Texts split at once: bytes enough to amortise the calls per chunk, few enough that the run
# objects of one chunk (about 40 bytes each) reuse memory already touched: 1 MiB chunks took
# three times the page faults of 256 KiB ones on SciFact.
_CHUNK_BYTES = 1 << 18


@functools.cache
def _tables() -> tuple[re.Pattern[str], re.Pattern[str], dict[int, str]]:
    """Token patterns for BMP-only and for any text, and the fold table; built once per process.

    ``re`` matches a class of BMP characters with one table lookup but tries the ranges above
    U+FFFF one by one, which made every separator cost hundreds of comparisons, so text without
    such characters gets a pattern without them.
    """
    token_chars = [cp for cp in range(sys.maxunicode + 1) if _is_token_char(cp)]
    bmp_chars = [cp for cp in token_chars if cp <= 0xFFFF]
    marks = _char_class(_ranges(sorted(_latin_marks())))
    bmp, full = _char_class(_ranges(bmp_chars)), _char_class(_ranges(token_chars))
    fold: dict[int, str] = {cp: "" for cp in _latin_marks()}
    for cp in bmp_chars + list(_DESERET):
        char = chr(cp)
        folded = _fold_char(char)
        if folded != char:
            fold[cp] = folded
    return (
        re.compile(f"[{bmp}][{bmp}{marks}]*"),
        re.compile(f"[{full}][{full}{marks}]*"),
        fold,
    )


def _bmp_only(text: str) -> bool:
    """True when no character of ``text`` lies above U+FFFF, so that UTF-16 takes 2 bytes for each.

    It replaced ``max(text) <= "\\uffff"``, which walked the text one character object at a time
    and took a quarter of the time spent analysing non-ASCII text.
    """
    return len(text.encode("utf-16-le", "surrogatepass")) == 2 * len(text)


class _Memo(dict[str, str]):
    """``memo[key]`` is ``function(key)``, computed once; cleared when it grows too large."""

    def __init__(self, function: Callable[[str], str], limit: int = 1_000_000) -> None:
        super().__init__()
        self._function, self._limit = function, limit

    def __missing__(self, key: str) -> str:
        if len(self) >= self._limit:
            self.clear()
        value = self[key] = self._function(key)
        return value


class _RunNumbers:
    """Term numbers of the runs of translated texts, each distinct run analysed once.

    An ASCII run is a term already (stemmed if asked). A run holding other characters gets the
    full analysis, and should that give no term or several (``"2–3"``: U+2013 separates), its
    number is ``-2 - i`` for the term numbers at ``spans[i]``. The text end marker is -1.
    """

    def __init__(
        self, stem: Callable[[str], str], analyse: Callable[[str], list[str]], number: Callable[[str], int]
    ) -> None:
        # Numbers are kept as the 8 bytes of an int64, so that itemgetter looks every run up in
        # one C loop and a join copies them out: a sixth fewer instructions than np.fromiter over
        # a map, which calls a method and converts a Python int per run. A defaultdict keeps hits
        # in C (a Python subclass with __missing__ would not) and marks new runs with _NEW.
        self._numbers = defaultdict(itertools.repeat(_NEW).__next__, {_END: _int64(-1)})
        self._stem, self._analyse, self._number = stem, analyse, number
        self.spans: list[IntArray] = []

    def of(self, runs: list[bytes]) -> IntArray:
        ids = self._lookup(runs)
        new = np.flatnonzero(ids == _NEW_ID)
        if new.size:
            new_runs = _items(runs, new.tolist())
            for run in dict.fromkeys(new_runs):  # in order, so terms are numbered as they first occur
                self._numbers[run] = _int64(self._number_of(run))
            ids = ids.copy()  # a view of immutable bytes
            ids[new] = self._lookup(new_runs)
        return ids

    def _lookup(self, runs: Sequence[bytes]) -> IntArray:
        return np.frombuffer(b"".join(_items(self._numbers, runs)), dtype=np.int64)

    def _number_of(self, run: bytes) -> int:
        if run.isascii():
            return self._number(self._stem(run.decode("ascii")))
        terms = self._analyse(run.decode("utf-8", "surrogatepass"))
        if len(terms) == 1:
            return self._number(terms[0])
        self.spans.append(np.array([self._number(term) for term in terms], dtype=np.int64))
        return -1 - len(self.spans)


def _int64(number: int) -> bytes:
    return number.to_bytes(8, sys.byteorder, signed=True)


_NEW_ID = -(2**63)  # marks a run not numbered yet
_NEW = _int64(_NEW_ID)


def _items(container: Any, keys: Sequence[Any]) -> tuple[Any, ...]:
    """``container[key]`` for every key, in one C loop."""
    found = operator.itemgetter(*keys)(container)
    return found if len(keys) > 1 else (found,)  # itemgetter gives a lone item bare


class Analyzer:
    """Splits text into index terms: FTS5 ``unicode61 remove_diacritics 2``, optionally stemmed.

    ``terms`` returns every token in text order, repeats included, since term frequency and
    document length both count them. Folds and stems of tokens seen before come from memos.
    """

    def __init__(self, stem: bool = False) -> None:
        if not isinstance(stem, bool):
            raise ValueError(f"Analyzer stem={stem!r} is invalid; pass True or False")
        self.stem = stem
        # The Unicode tables are built at the first non-ASCII text, not here: building them walks
        # every code point (about a second of a cold process), and opening an index, or analysing
        # ASCII text, never reads them.
        self._folded = _Memo(lambda token: token.translate(_tables()[2]))
        self._stemmed = _Memo(porter_stem)

    def __repr__(self) -> str:
        return f"Analyzer(stem={self.stem})"

    def terms(self, text: str) -> list[str]:
        """The terms of ``text``, in order: tokens, case-folded, without diacritics, maybe stemmed."""
        _check_text(text)
        if text.isascii():
            terms = text.encode("ascii").translate(_ASCII_FOLD).decode("ascii").split()
        else:
            # map over the memo's own lookup stays in C for every token seen before.
            terms = list(map(self._folded.__getitem__, self._tokens(text)))
        if self.stem:
            return list(map(self._stemmed.__getitem__, terms))
        return terms

    def term_ids(self, texts: Sequence[str], number: Callable[[str], int]) -> tuple[IntArray, IntArray]:
        """``number(term)`` for every term of ``texts`` in text order, and each text's term count.

        The terms are those of :meth:`terms`, text by text; this is its batch form, for indexing.
        A chunk of texts at a time is translated as UTF-8 bytes and split into runs, with a NUL
        run after each text, and each distinct run is analysed, stemmed and numbered once. It
        replaced splitting and numbering text by text, which took a fifth more instructions at
        100k passages, and a regex over every non-ASCII text, which cost more than analysing
        only the rare runs that hold non-ASCII characters.
        """
        # str of a str is that str: the identity, as a C call.
        numbers = _RunNumbers(self._stemmed.__getitem__ if self.stem else str, self.terms, number)
        parts: list[IntArray] = []
        counts: list[int] = []
        for chunk in _chunks(texts):
            ids = numbers.of(chunk.split())
            if (ids < -1).any():
                ids = _expand(ids, numbers.spans)
            ends = np.flatnonzero(ids < 0)
            parts.append(ids[ids >= 0])
            counts.extend((np.diff(ends, prepend=-1) - 1).tolist())
        ids = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
        return ids, np.array(counts, dtype=np.int64)

    def _tokens(self, text: str) -> list[str]:
        """The tokens of a non-ASCII text, before folding."""
        bmp_pattern, pattern, _ = _tables()
        if _bmp_only(text):
            pattern = bmp_pattern
        tokens: list[str] = pattern.findall(text)
        return tokens


def _chunks(texts: Sequence[str]) -> Iterator[bytes]:
    """``texts`` translated, in order and each followed by the end marker, in chunks of about
    ``_CHUNK_BYTES``. Lone surrogates pass through UTF-8 and back (``surrogatepass``)."""
    chunk: list[bytes] = []
    size = 0
    for text in texts:
        _check_text(text)
        chunk += (text.encode("utf-8", "surrogatepass").translate(_ASCII_FOLD), _ENDED)
        size += len(chunk[-2])
        if size >= _CHUNK_BYTES:
            yield b"".join(chunk)
            chunk, size = [], 0
    if chunk:
        yield b"".join(chunk)


def _expand(ids: IntArray, spans: list[IntArray]) -> IntArray:
    """``ids`` with each ``-2 - i`` replaced by the term numbers at ``spans[i]``, zero or more."""
    pieces, start = [], 0
    for at in np.flatnonzero(ids < -1).tolist():  # rare: runs with non-ASCII characters only
        pieces += [ids[start:at], spans[-2 - int(ids[at])]]
        start = at + 1
    pieces.append(ids[start:])
    return np.concatenate(pieces)


def _check_text(text: object) -> None:
    if not isinstance(text, str):
        raise ValueError(f"text of type {type(text).__name__} cannot be analysed; pass a str")
