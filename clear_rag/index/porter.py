"""Martin Porter's suffix-stripping algorithm, as SQLite FTS5's ``porter`` tokenizer applies it.

Written from M. F. Porter, "An algorithm for suffix stripping", *Program* 14(3), 1980, pp. 130-137.
A word is read as ``[C](VC)^m[V]``; ``m`` is its *measure*. A vowel is a, e, i, o, u, or a y that
follows a consonant. Each step is a set of rules ``(condition) S1 -> S2``; within a step only the
rule with the longest matching suffix ``S1`` is tried, and it applies if the condition holds on
the stem left once ``S1`` is removed.

FTS5 departs from the 1980 paper in a few places, and stems here match FTS5 (the tests compare
thousands of words against SQLite):

1. Step 2 has ``bli -> ble`` instead of ``abli -> able``, and the extra rule ``logi -> log``
   (both from Porter's later reference implementation).
2. A suffix never matches a whole word, so ``sses`` gives ``sse`` and ``ies`` gives ``ie``.
3. Words shorter than 3 or longer than 64 UTF-8 bytes are returned unchanged.
4. The rules run over UTF-8 bytes, every byte of a non-ASCII character counting as a consonant.
   A step can therefore cut a multi-byte character in two; such a stem keeps the stray bytes as
   lone surrogates (``surrogateescape``), so it stays distinct from every other stem, as in FTS5.
5. In ``*d`` (double consonant, step 1b) a y counts as a consonant, so "yy" is a double
   consonant, where the paper's definition would call the second y a vowel.
"""

from __future__ import annotations

_VOWELS = frozenset("aeiou")
_MIN_BYTES, _MAX_BYTES = 3, 64


def _is_consonant(word: str, i: int) -> bool:
    char = word[i]
    if char in _VOWELS:
        return False
    if char == "y":
        return i == 0 or not _is_consonant(word, i - 1)
    return True


def measure(stem: str) -> int:
    """``m`` in ``[C](VC)^m[V]``: how many vowel-to-consonant changes ``stem`` has (Porter 1980)."""
    m = 0
    previous_vowel = False
    for i in range(len(stem)):
        consonant = _is_consonant(stem, i)
        if consonant and previous_vowel:
            m += 1
        previous_vowel = not consonant
    return m


def _has_vowel(stem: str) -> bool:
    """``*v*``: the stem contains a vowel."""
    return any(not _is_consonant(stem, i) for i in range(len(stem)))


def _ends_double_consonant(word: str) -> bool:
    """``*d`` as FTS5 tests it: the last two letters are equal and not a, e, i, o or u."""
    return len(word) >= 2 and word[-1] == word[-2] and word[-1] not in _VOWELS


def _ends_cvc(stem: str) -> bool:
    """``*o``: the stem ends consonant-vowel-consonant, the last consonant not w, x or y."""
    n = len(stem)
    return (
        n >= 3
        and stem[-1] not in "wxy"
        and _is_consonant(stem, n - 1)
        and not _is_consonant(stem, n - 2)
        and _is_consonant(stem, n - 3)
    )


def _longest(word: str, suffixes: tuple[str, ...]) -> str | None:
    """The longest of ``suffixes`` (ordered longest first) that ends ``word`` and leaves a stem."""
    for suffix in suffixes:
        if len(word) > len(suffix) and word.endswith(suffix):
            return suffix
    return None


def _by_length(rules: dict[str, str]) -> tuple[str, ...]:
    return tuple(sorted(rules, key=len, reverse=True))


_STEP1A = {"sses": "ss", "ies": "i", "ss": "ss", "s": ""}
_STEP2 = {
    "ational": "ate", "tional": "tion", "enci": "ence", "anci": "ance", "izer": "ize",
    "bli": "ble", "alli": "al", "entli": "ent", "eli": "e", "ousli": "ous",
    "ization": "ize", "ation": "ate", "ator": "ate", "alism": "al", "iveness": "ive",
    "fulness": "ful", "ousness": "ous", "aliti": "al", "iviti": "ive", "biliti": "ble",
    "logi": "log",
}  # fmt: skip
_STEP3 = {
    "icate": "ic", "ative": "", "alize": "al", "iciti": "ic", "ical": "ic", "ful": "", "ness": "",
}  # fmt: skip
_STEP4 = (
    "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ion",
    "ou", "ism", "ate", "iti", "ous", "ive", "ize",
)  # fmt: skip
_ORDER1A, _ORDER2, _ORDER3 = _by_length(_STEP1A), _by_length(_STEP2), _by_length(_STEP3)
_ORDER4 = tuple(sorted(_STEP4, key=len, reverse=True))


def _step1a(word: str) -> str:
    suffix = _longest(word, _ORDER1A)
    return word if suffix is None else word[: -len(suffix)] + _STEP1A[suffix]


def _step1b(word: str) -> str:
    suffix = _longest(word, ("eed", "ing", "ed"))
    if suffix is None:
        return word
    stem = word[: -len(suffix)]
    if suffix == "eed":
        return stem + "ee" if measure(stem) > 0 else word
    if not _has_vowel(stem):
        return word
    if stem.endswith(("at", "bl", "iz")) and len(stem) > 2:
        return stem + "e"
    if _ends_double_consonant(stem) and stem[-1] not in "lsz":
        return stem[:-1]
    if measure(stem) == 1 and _ends_cvc(stem):
        return stem + "e"
    return stem


def _step1c(word: str) -> str:
    if word.endswith("y") and _has_vowel(word[:-1]):
        return word[:-1] + "i"
    return word


def _replace(word: str, order: tuple[str, ...], rules: dict[str, str]) -> str:
    """Steps 2 and 3: ``(m > 0) S1 -> S2`` for the longest matching ``S1``."""
    suffix = _longest(word, order)
    if suffix is None:
        return word
    stem = word[: -len(suffix)]
    return stem + rules[suffix] if measure(stem) > 0 else word


def _step4(word: str) -> str:
    """``(m > 1) S1 ->``, where ``ion`` also needs the stem to end in s or t."""
    suffix = _longest(word, _ORDER4)
    if suffix is None:
        return word
    stem = word[: -len(suffix)]
    if suffix == "ion" and not stem.endswith(("s", "t")):
        return word
    return stem if measure(stem) > 1 else word


def _step5(word: str) -> str:
    if word.endswith("e"):
        stem = word[:-1]
        m = measure(stem)
        if m > 1 or (m == 1 and not _ends_cvc(stem)):
            word = stem
    if word.endswith("ll") and measure(word) > 1:
        word = word[:-1]
    return word


def _stem_bytes(word: str) -> str:
    word = _step1c(_step1b(_step1a(word)))
    word = _replace(word, _ORDER2, _STEP2)
    word = _replace(word, _ORDER3, _STEP3)
    return _step5(_step4(word))


def stem(word: str) -> str:
    """The Porter stem of a lower-case ``word``, exactly as FTS5's ``porter`` tokenizer gives it."""
    if word.isascii():
        return _stem_bytes(word) if _MIN_BYTES <= len(word) <= _MAX_BYTES else word
    # Decoding UTF-8 bytes as Latin-1 gives one character per byte, so the string rules above
    # run over bytes as FTS5's do.
    raw = word.encode("utf-8", errors="surrogateescape")
    if not _MIN_BYTES <= len(raw) <= _MAX_BYTES:
        return word
    stemmed = _stem_bytes(raw.decode("latin-1"))
    return stemmed.encode("latin-1").decode("utf-8", errors="surrogateescape")
