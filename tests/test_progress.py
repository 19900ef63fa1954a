"""Progress: a bar in a terminal, a few plain lines (never carriage returns) anywhere else."""

from __future__ import annotations

import io

import pytest

from clear_rag import progress
from clear_rag.progress import Progress, tracked


def test_without_a_terminal_a_quick_task_writes_one_line_and_no_carriage_return(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(progress, "LINE_EVERY", 1e9)  # "quick" whatever the machine's load
    out = io.StringIO()
    with Progress("embed", "chunk", stream=out) as bar:
        for done in range(0, 501):
            bar.update(done, 500)
    lines = out.getvalue().splitlines()
    assert len(lines) == 1 and lines[0].startswith("embed: 500 of 500 chunks in ")
    assert "\r" not in out.getvalue()


def test_without_a_terminal_a_long_task_writes_a_line_now_and_then(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "LINE_EVERY", 0.0)
    out = io.StringIO()
    assert list(tracked(range(3), "row", "question", stream=out)) == [0, 1, 2]
    assert out.getvalue().splitlines()[:2] == ["row: 1 of 3 questions", "row: 2 of 3 questions"]


def test_nothing_is_shown_for_trivial_or_disabled_work() -> None:
    out = io.StringIO()
    with Progress("embed", "chunk", stream=out) as bar:
        bar.update(1, 1)  # below min_total
    with Progress("embed", "chunk", stream=out, enabled=False) as bar:
        bar.update(10, 10)
    assert out.getvalue() == ""


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_in_a_terminal_it_is_a_bar_that_goes_away() -> None:
    out = Terminal()
    with Progress("embed", "chunk", stream=out) as bar:
        bar.update(0, 10)
        bar.update(10, 10)
    assert "\r" in out.getvalue() and "embed" in out.getvalue()
