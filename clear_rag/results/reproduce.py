"""Whether a result file just written measured what the committed one says, row by row, metric by metric.

``reproduced`` compares and returns a ``Reproduction``: the rows within ``TOLERANCE`` on every metric,
and for each row that is not, every metric that moved (here, there, and by how much). ``format`` turns it
into the lines ``python -m assets.run`` prints. Plain JSON in, dataclasses out: no duckdb, no dagster.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clear_rag.results.files import read_result

TOLERANCE = 1e-4  # metrics are written rounded to four places


@dataclass(frozen=True)
class Moved:
    """One metric of one row beyond the tolerance; ``there`` is None where the committed row lacks it."""

    metric: str
    here: float
    there: float | None

    @property
    def delta(self) -> float | None:
        """``here - there``: positive where this run measured more; None where there is nothing there."""
        return None if self.there is None else self.here - self.there


@dataclass(frozen=True)
class RowDiff:
    """A row that did not reproduce: absent from the committed file, or with metrics that moved."""

    row: str
    moved: tuple[Moved, ...] = ()
    missing: bool = False

    @property
    def largest(self) -> Moved | None:
        """The metric that moved furthest (a metric missing there counts as moving from 0.0); the first
        such metric on a tie."""
        return max(self.moved, key=lambda m: abs(m.here - (m.there or 0.0)), default=None)


@dataclass(frozen=True)
class Reproduction:
    """How a result file compares with the committed file of the same suite.

    ``other_embedder`` is set, and nothing compared, where the committed file was measured by another
    embedder: its numbers are not expected to match.
    """

    suite: str
    committed: Path
    same: tuple[str, ...] = ()
    differ: tuple[RowDiff, ...] = ()
    other_embedder: str | None = None

    @property
    def rows(self) -> int:
        return len(self.same) + len(self.differ)


def _load(path: Path) -> dict[str, Any]:
    return read_result(path)  # checked against the suite result's shape (clear_rag.results.schema)


def _compare_row(row: dict[str, Any], other: dict[str, Any] | None) -> RowDiff | None:
    """None where every metric of ``row`` is within the tolerance of ``other``'s (metrics only the
    committed row has are not looked at)."""
    if other is None:
        return RowDiff(row["name"], missing=True)
    theirs: dict[str, float] = other["metrics"]
    moved = tuple(
        Moved(name, value, theirs.get(name))
        for name, value in row["metrics"].items()
        if theirs.get(name) is None or abs(value - theirs[name]) > TOLERANCE
    )
    return RowDiff(row["name"], moved) if moved else None


def reproduced(path: Path, committed: Path) -> Reproduction | None:
    """Compare the rows of ``path`` with the same-named rows of ``committed``.

    None where there is nothing to compare with: no committed file, no file at ``path``, the committed
    file itself, or a file of another suite.
    """
    if not committed.is_file() or not path.is_file() or committed.resolve() == path.resolve():
        return None
    return compare(_load(path), _load(committed), committed)


def compare(ours: dict[str, Any], theirs: dict[str, Any], committed: Path) -> Reproduction | None:
    """Compare the rows of the result document ``ours`` with those of ``theirs`` (read from
    ``committed``, or held from before a run replaced it, as ``clear-rag ablate --regenerate`` does).
    None for documents of two suites."""
    if ours.get("suite") != theirs.get("suite"):
        return None
    suite: str = ours["suite"]
    if ours.get("embedder") != theirs.get("embedder"):
        return Reproduction(suite, committed, other_embedder=str(theirs.get("embedder")))
    committed_rows = {row["name"]: row for row in theirs.get("rows", [])}
    same: list[str] = []
    differ: list[RowDiff] = []
    for row in ours["rows"]:
        diff = _compare_row(row, committed_rows.get(row["name"]))
        if diff is None:
            same.append(row["name"])
        else:
            differ.append(diff)
    return Reproduction(suite, committed, tuple(same), tuple(differ))


def _row_line(diff: RowDiff) -> str:
    largest = diff.largest
    if diff.missing or largest is None:
        return f"{diff.row!r} is not in it"
    return f"{diff.row!r} {largest.metric} {largest.here} here, {largest.there} there"


def _metric_line(moved: Moved) -> str:
    delta = "not there" if moved.delta is None else f"{moved.delta:+.4f}"
    return f"{moved.metric} {moved.here} here, {moved.there} there ({delta})"


def format(reproduction: Reproduction, *, every_metric: bool = False) -> str:
    """The summary line, then one ``differs:`` line per row that did not reproduce.

    Each such line names the metric that moved furthest; ``every_metric`` lists every metric that moved
    instead, each with its signed difference, one per line beneath its row.
    """
    if reproduction.other_embedder is not None:
        return (
            f"{reproduction.suite}: not compared with {reproduction.committed}, "
            f"which {reproduction.other_embedder} measured"
        )
    lines = [
        f"{reproduction.suite}: {len(reproduction.same)} of {reproduction.rows} rows reproduce "
        f"{reproduction.committed} (every metric within {TOLERANCE})"
    ]
    for diff in reproduction.differ:
        if every_metric and diff.moved:
            lines.append(f"  differs: {diff.row!r}")
            lines += [f"    {_metric_line(m)}" for m in diff.moved]
        else:
            lines.append(f"  differs: {_row_line(diff)}")
    return "\n".join(lines)
