"""Progress for long work (embedding a corpus, running a suite), in one place.

In a terminal it is a tqdm bar on stderr that disappears when done. When stderr is not a terminal
(CI logs, a pipe, Dagster's captured output) a bar would write a carriage return per update, so it
writes a plain line instead, at most one every ``LINE_EVERY`` seconds while the work goes on, and one
when it ends (so a short task writes one line, and a long one shows it is alive).
Every caller goes through ``Progress``: the library reports ``(done, total)``, the CLI decides
how it is shown.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Iterator
from typing import Any, TextIO, TypeVar

T = TypeVar("T")
MIN_TOTAL = 2  # a bar over one item is noise
LINE_EVERY = 10.0  # seconds between progress lines when stderr is not a terminal


class Progress:
    """``update(done, total)`` as work advances; ``close()`` (or a ``with`` block) when it ends.

    Nothing is shown until ``update`` is first called with a total of at least ``min_total``, so a
    caller can hand it to work that may turn out to be trivial (an index with nothing to embed).
    """

    def __init__(
        self,
        desc: str,
        unit: str,
        *,
        stream: TextIO | None = None,
        min_total: int = MIN_TOTAL,
        enabled: bool = True,
    ) -> None:
        self.desc, self.unit, self.min_total, self.enabled = desc, unit, min_total, enabled
        self._stream = stream if stream is not None else sys.stderr
        self._bar: Any = None
        self._lines = False
        self._next_line = 0.0
        self._started = 0.0
        self._last: tuple[int, int] = (0, 0)

    def update(self, done: int, total: int) -> None:
        if total < self.min_total or not self.enabled:
            return
        if self._bar is None and not self._lines:
            self._start(total)
        self._last = (done, total)
        if self._bar is not None:
            self._bar.total = total
            self._bar.update(done - self._bar.n)
        elif done < total and time.perf_counter() >= self._next_line:
            if done:
                self._write(f"{self.desc}: {done:,} of {total:,} {self.unit}s")
            self._next_line = time.perf_counter() + LINE_EVERY

    def _start(self, total: int) -> None:
        self._started = time.perf_counter()
        if self._stream.isatty():
            from tqdm import tqdm

            self._bar = tqdm(total=total, desc=self.desc, unit=self.unit, file=self._stream, leave=False)
        else:
            self._lines = True

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        elif self._lines:
            done, total = self._last
            seconds = time.perf_counter() - self._started
            self._write(f"{self.desc}: {done:,} of {total:,} {self.unit}s in {seconds:.1f} s")
            self._lines = False

    def _write(self, line: str) -> None:
        self._stream.write(line + "\n")
        self._stream.flush()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def tracked(
    items: Iterable[T], desc: str, unit: str, *, stream: TextIO | None = None, min_total: int = MIN_TOTAL
) -> Iterator[T]:
    """``items``, reporting progress through a ``Progress`` as they are consumed."""
    listed = list(items)
    with Progress(desc, unit, stream=stream, min_total=min_total) as progress:
        progress.update(0, len(listed))
        for n, item in enumerate(listed, start=1):
            yield item
            progress.update(n, len(listed))
