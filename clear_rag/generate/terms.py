"""The terms the support check reads a text by: its content terms and its facts (numbers and names),
and how much of them a window holds (``coverage``)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from collections.abc import Set as AbstractSet

from clear_rag.index.analyze import Analyzer

# Function words of English, written here: what a sentence says is in the other words.
_FUNCTION_WORDS = """
    a about above after again against all also am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further had has
    have having he her here hers herself him himself his how i if in into is it its itself just me more
    most my myself no nor not now of off on once only or other our ours ourselves out over own same she
    should so some such than that the their theirs them themselves then there these they this those
    through to too under until up very was we were what when where which while who whom why will with
    would you your yours yourself yourselves answer source sources according"""
STOPWORDS = frozenset(_FUNCTION_WORDS.split())
ANALYZER = Analyzer(stem=True)  # the keyword index's terms, Porter-stemmed


def content_terms(text: str) -> list[str]:
    """The terms a text claims something with: the index's terms, stemmed, less stopwords and the
    numbers of its ``[n]`` citation markers."""
    bare = without_markers(text)
    return [t for t in ANALYZER.terms(bare) if t not in STOPWORDS]


def facts(text: str) -> list[str]:
    """The terms of a text that a supporting window must hold every one of: its numbers (years,
    amounts, counts) and its names (words written with a capital after the text's first word), the
    two things a model most often gets wrong while the rest of the sentence reads right."""
    bare = without_markers(text)
    named = [m.group(0) for m in _NAME.finditer(bare) if m.start() > _first_word_end(bare)]
    name_terms = {t for word in named for t in ANALYZER.terms(word)}
    return list(
        dict.fromkeys(
            t
            for t in ANALYZER.terms(bare)
            if t not in STOPWORDS and (any(ch.isdigit() for ch in t) or t in name_terms)
        )
    )


_NAME = re.compile(r"(?<![\w'’-])[A-Z][\w'’-]*")


def _first_word_end(text: str) -> int:
    found = re.search(r"\w+", text)
    return found.end() if found else 0


def coverage(text_terms: Sequence[str], window_terms: AbstractSet[str]) -> float:
    """The share of the distinct content terms of a text that a window holds; 0 for a text with none."""
    distinct = set(text_terms)
    return len(distinct & window_terms) / len(distinct) if distinct else 0.0


def without_markers(text: str) -> str:
    return re.sub(r"\[\d{1,3}\]", " ", text)
