"""Page furniture (running headers, footers, page numbers) that leaked into a parse's body."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from clear_rag.eval.parse.tokens import ratio, tokens


@dataclass(frozen=True, slots=True)
class LeakScore:
    """``leakage = leaked / on_pages``: of the furniture occurrences printed on the pages, the share
    still in the body. 0.0 is perfect, and is also the value when there is no furniture to leak."""

    leaked: int
    on_pages: int

    @property
    def leakage(self) -> float:
        return ratio(self.leaked, self.on_pages, empty=0.0)


def furniture_occurrences(text: str, furniture: Iterable[str]) -> int:
    """How many times the furniture strings occur in ``text``, each counted where its ``tokens`` fill a
    line of ``text`` (a header, footer or page number stands on a line of its own on the page, and as
    a line or block of its own in a parse). Matching whole lines keeps a page number ``12`` from being
    found in every ``$12 million`` of the prose."""
    wanted = {tuple(tokens(f)) for f in furniture} - {()}
    return sum(1 for line in text.splitlines() if tuple(tokens(line)) in wanted)


def furniture_leakage(body: str, furniture: Iterable[str], *, on_pages: int) -> LeakScore:
    """``LeakScore`` of the furniture left in ``body``; ``on_pages`` is how many occurrences the pages
    carry, counted the same way (``furniture_occurrences``) in a full extraction of the PDF. Leaked
    occurrences past ``on_pages`` (a parse that repeats a header) count as ``on_pages``."""
    return LeakScore(min(furniture_occurrences(body, furniture), on_pages), on_pages)
