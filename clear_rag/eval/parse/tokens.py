"""The one tokenisation every parse metric compares through, and the ratio each of them reports."""

from __future__ import annotations

import re
import unicodedata

# Typographic variants PDF text extraction and source text choose between freely; the same word either
# way. NFKC already folds ligatures (U+FB01 "ﬁ") and non-breaking spaces.
_EQUIVALENT = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u2010": "-",
        "\u2011": "-",
        "\u2013": "-",
        "\u2014": "-",
        "\u2212": "-",
        "\u00ad": None,  # soft hyphen: invisible on the page
        "\u200b": None,
    }
)
_SENTENCE = ".,;:!?'\""
_NUMBER = re.compile(
    r"\$?(?P<open>\()?\$?(?P<minus>-)?\$?(?P<int>\d{1,3}(?:,\d{3})+|\d+)(?P<frac>\.\d+)?%?(?P<close>\))?%?"
)
_EDGE = re.compile(r"^[\W_]+|[\W_]+$")


def normalise_token(raw: str) -> str:
    """One whitespace-separated piece of (already folded) text as the token compared, or ``""``.

    A number keeps one form whatever its dress: thousands separators, ``$`` and ``%`` are dropped, so
    ``391,035``, ``$391,035`` and ``391,035.`` are one token ``391035``, and the accounting negative
    ``(1,234)`` (or ``(1,234`` cut from its parenthesis) and ``-1,234`` are ``-1234``. Anything else
    loses the punctuation around it and keeps what is inside (``"revenue,"`` is ``revenue``, ``10-K``
    stays ``10-k``); punctuation alone (``$``, ``|``, ``—``) is no token. A list marker ``(1)`` reads
    as ``-1``: both sides of a comparison read it the same way.
    """
    token = raw.strip(_SENTENCE)
    number = _NUMBER.fullmatch(token)
    if number is not None:
        # An opening parenthesis alone still means negative: a parser that splits "(1,234)" into the
        # cells "(1,234" and ")" keeps the number (the truth file closes such a cell itself).
        sign = "-" if number["open"] or number["minus"] else ""
        return sign + number["int"].replace(",", "") + (number["frac"] or "")
    return _EDGE.sub("", token)


def tokens(text: str) -> list[str]:
    """The tokens of ``text`` in order: NFKC-folded, typographic quotes and dashes made ASCII,
    case-folded, split on whitespace, each piece through ``normalise_token``, empty ones dropped.

    Case is folded because the keyword index folds it too: a parse that changed only case would find
    the same chunks, so it is not counted as a lost word.
    """
    folded = unicodedata.normalize("NFKC", text).translate(_EQUIVALENT).casefold()
    return [token for token in map(normalise_token, folded.split()) if token]


def ratio(part: int, whole: int, *, empty: float) -> float:
    """``part / whole``, or ``empty`` where ``whole`` is 0 (each score's docstring says which value)."""
    return part / whole if whole else empty
