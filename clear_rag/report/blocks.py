"""The marked blocks of pages, refilled from result files, and the check that they still match.

A page (the README, or any page under ``site/``) marks where generated content goes:

    <!-- results: tech -->
    (generated, never edited by hand)
    <!-- /results -->

The marker names a result file (``tech`` is ``results/tech.json``, ``bench/retrieval`` is
``results/bench/retrieval.json``, ``*`` is all of them) and optionally a kind:

- (none): the suite table, every row against the baseline (``tables.suite_table``);
- ``lost``: where each row's answers were lost (``tables.query_table``);
- ``answers``: how each row's answers were graded, per outcome (``tables.query_table``);
- ``check``: how the support check's verdicts agree with the grades, per row (``tables.query_table``);
- ``previous``: each row against the row before it (``tables.previous_table``);
- ``categories``: the headline metric per question category (``tables.categories_table``);
- ``caveats``: what the numbers do and do not support, written from them (``caveats.caveats``);
- ``bench``: a benchmark's figures and its ratios against the peers (``bench.bench_table``);
- ``agreement``: the technique check against real questions (``agreement.agreement_table``);
- ``rerankers``: the rerank rows of every agreement file in the block's folder side by side, one per
  reranker (``agreement.reranker_table``; name ``check/*``);
- ``parse``: the PDF parsers' word, order, table-cell and furniture scores (``tables.parse_table``);
- ``cases``: the same per drawn case of the parse suite, backends side by side (``cases.cases_table``);
- ``reproduce``: the command behind every result file (``commands.reproduce_table``, name ``*``);
- ``plot WHICH``: an SVG plot (``plots``) written to ``site/plots/`` and linked from the page.

``render_page`` refills every block; ``check_page`` says, by file and line, which block differs from
what its result file renders to (a hand edit, or a newer result file), which plot file no longer
matches it, and which number in the prose matches no result (or not the result files its paragraph
names, ``unmatched_numbers``).
"""

from __future__ import annotations

import bisect
import json
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clear_rag.errors import InputError
from clear_rag.report.figures import check_kind, render_plot
from clear_rag.report.sources import Results, plot_path

BLOCK = re.compile(
    r"(<!-- results: (?P<name>[\w./*-]+)(?: (?P<kind>[a-z]+)(?: (?P<arg>[a-z]+))?)? -->\n)"
    r"(?P<body>.*?)(<!-- /results -->)",
    re.S,
)
NUMBER = re.compile(r"(?<![\w.])\d+\.\d{3,}(?!\w|\.\d)")
RATIO = re.compile(r"(?<![\w.])\d+\.\d{2}(?=[x×](?!\w))")  # 2.13x, 2.13×
RESULT_PATH = re.compile(r"(?<![\w./-])results/(?P<name>[\w./-]+?)\.json(?![\w-])")
PARAGRAPH = re.compile(r"\n\s*\n|\n *(?:[-*+]|\d+\.) ")  # a blank line, or a list item's start


@dataclass(frozen=True)
class Block:
    name: str
    kind: str | None
    arg: str | None
    line: int  # of the opening marker, counted from 1
    body: str

    @property
    def label(self) -> str:
        return " ".join(part for part in (self.name, self.kind, self.arg) if part)


def blocks(text: str) -> Iterator[Block]:
    for _, block in _matched(text):
        yield block


def _matched(text: str) -> Iterator[tuple[re.Match[str], Block]]:
    """Each block of ``text`` with the match that found it (where its body starts and ends)."""
    for m in BLOCK.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        yield m, Block(m.group("name"), m.group("kind"), m.group("arg"), line, m.group("body"))


PLOT_TITLES = {
    "suite": "Each row against the baseline, with its 95% interval",
    "categories": "The headline metric per question category",
    "lost": "Where each row's answers were lost",
    "answers": "How each row's answers were graded",
    "ratios": "clear-rag against each peer (above 1: clear-rag ahead)",
}


def _plot_link(block: Block, page: Path, results: Results) -> str:
    target = plot_path(block.name, block.arg or "")
    check_kind(block.name, block.arg or "", results)  # an unknown plot is named here, not in the browser
    link = Path(os.path.relpath(target, page.parent)).as_posix()
    return f"![{PLOT_TITLES.get(block.arg or '', block.arg)}, {block.name}]({link})\n"


def _suite(function: str) -> Callable[[Block, Path, Results], str]:
    """A renderer calling ``tables.<function>`` or ``caveats.caveats`` on the file and its path."""

    def render(block: Block, page: Path, results: Results) -> str:
        from clear_rag.report import caveats, tables

        call = caveats.caveats if function == "caveats" else getattr(tables, function)
        return str(call(results.load(block.name), results.path(block.name).as_posix()))

    return render


def _query(query: str) -> Callable[[Block, Path, Results], str]:
    """A block of a per-row named query's counts (``lost``, ``answers``, ``check``)."""

    def render(block: Block, page: Path, results: Results) -> str:
        from clear_rag.report.tables import query_table

        return query_table(query, results.load(block.name), results.folder(block.name), block.name)

    return render


def _bench(block: Block, page: Path, results: Results) -> str:
    from clear_rag.report.bench import bench_table

    return bench_table(results.load(block.name), block.name.removeprefix("bench/"))


def _agreement(block: Block, page: Path, results: Results) -> str:
    from clear_rag.report.agreement import agreement_table

    return agreement_table(results.load(block.name), results.path(block.name).as_posix())


def _rerankers(block: Block, page: Path, results: Results) -> str:
    from clear_rag.report.agreement import reranker_table

    named = results.matching(block.name)  # the shipped reranker's file (agreement) first
    return reranker_table([(results.path(n).as_posix(), results.load(n)) for n in named])


def _cases(block: Block, page: Path, results: Results) -> str:
    from clear_rag.report.cases import cases_table

    return cases_table(results.load(block.name), results.path(block.name).as_posix())


def _reproduce(block: Block, page: Path, results: Results) -> str:
    from clear_rag.report.commands import reproduce_table

    return reproduce_table(results.folders[0])


RENDERERS: dict[str | None, Callable[[Block, Path, Results], str]] = {
    None: _suite("suite_table"),
    "previous": _suite("previous_table"),
    "categories": _suite("categories_table"),
    "caveats": _suite("caveats"),
    "parse": _suite("parse_table"),
    "cases": _cases,
    "lost": _query("lost"),
    "answers": _query("answers"),
    "check": _query("check"),
    "bench": _bench,
    "agreement": _agreement,
    "rerankers": _rerankers,
    "reproduce": _reproduce,
    "plot": _plot_link,
}


def render_block(block: Block, page: Path, results: Results) -> str:
    if block.kind not in RENDERERS:
        raise InputError(
            f"names an unknown kind of block {block.kind!r}",
            path=f"{page}:{block.line}",
            fix=f"Use one of: {', '.join(sorted(k for k in RENDERERS if k))}, or none for the suite table",
        )
    return RENDERERS[block.kind](block, page, results)


def render_page(text: str, page: Path, results: Results) -> str:
    """``text`` (the page at ``page``, relative to the project root) with every block refilled."""
    out, last = [], 0
    for m, block in _matched(text):
        out += [text[last : m.start("body")], render_block(block, page, results)]
        last = m.end("body")
    return "".join([*out, text[last:]])


def plots_named(text: str) -> list[tuple[str, str]]:
    """The (result file, plot) pairs the page's plot blocks link to."""
    return [(b.name, b.arg or "") for b in blocks(text) if b.kind == "plot"]


def _source(block: Block, results: Results) -> str:
    """What a block is rendered from: its file, or the results folder (or subfolder) for ``*``."""
    if block.name.endswith("*"):
        return f"{results.folders[0].as_posix()}/{block.name.removesuffix('*')}"
    return results.path(block.name).as_posix()


@dataclass(frozen=True)
class Problem:
    page: Path
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.page}:{self.line}: {self.message}"


def check_page(
    text: str, page: Path, results: Results, known: ResultNumbers | None = None, root: Path = Path(".")
) -> list[Problem]:
    """Every way ``page`` has drifted from its results: a block that renders differently, a plot file
    whose bytes are not what its result file renders to, and a number in prose that no result holds."""
    problems = []
    for block in blocks(text):
        if block.body != render_block(block, page, results):
            problems.append(
                Problem(
                    page,
                    block.line,
                    f"block {block.label!r} differs from {_source(block, results)} "
                    "(edited by hand, or stale): run `clear-rag report`",
                )
            )
        if block.kind == "plot":
            target = plot_path(block.name, block.arg or "")
            fresh = render_plot(block.name, block.arg or "", results)
            on_disk = (root / target).read_bytes() if (root / target).is_file() else None
            if on_disk != fresh:
                state = "is missing" if on_disk is None else "no longer matches"
                problems.append(
                    Problem(
                        page,
                        block.line,
                        f"plot {target.as_posix()} {state} what {results.path(block.name).as_posix()} "
                        "renders to: run `clear-rag report`",
                    )
                )
    known = known if known is not None else result_numbers(results)
    for line, number, named in unmatched_numbers(text, known):
        if not named:
            message = f"the number {number} matches no value in the result files: quote results"
        else:
            files = ", ".join(f"results/{name}.json" for name in named)
            missing = [name for name in named if name not in known.by_file]
            held = f" ({', '.join(f'results/{n}.json' for n in missing)} does not exist)" if missing else ""
            message = (
                f"the number {number} is not in {files}, which its paragraph names{held}: quote that "
                "file, or name the file the number comes from"
            )
        problems.append(Problem(page, line, message))
    return problems


@dataclass(frozen=True)
class ResultNumbers:
    """Every number of every result file, by the file's name (``bench/pdf`` is ``results/bench/pdf.json``),
    each written at every precision prose may quote it at (2 to 6 decimals)."""

    by_file: dict[str, frozenset[str]]
    anywhere: frozenset[str]  # the union of them all, what a paragraph that names no file is held to


def result_numbers(results: Results) -> ResultNumbers:
    """The numbers of every result file in ``results``' folders (the first folder holding a name wins)."""

    def walk(value: Any, found: set[str]) -> None:
        if isinstance(value, dict):
            for item in value.values():
                walk(item, found)
        elif isinstance(value, list):
            for item in value:
                walk(item, found)
        elif isinstance(value, float | int) and not isinstance(value, bool):
            found.update(f"{abs(value):.{digits}f}" for digits in range(2, 7))

    by_file: dict[str, frozenset[str]] = {}
    for folder in results.folders:
        for path in sorted(folder.rglob("*.json")):
            name = path.relative_to(folder).with_suffix("").as_posix()
            if name not in by_file:
                found: set[str] = set()
                walk(json.loads(path.read_text(encoding="utf-8")), found)
                by_file[name] = frozenset(found)
    return ResultNumbers(by_file, frozenset().union(*by_file.values()))


def unmatched_numbers(text: str, known: ResultNumbers) -> list[tuple[int, str, tuple[str, ...]]]:
    """(line, number, the result files its paragraph names) of each number in prose (outside blocks and
    fenced code) that its sources do not hold: a number with three or more decimals, or a ratio with
    two (``2.13x``).

    A paragraph (or list item) that names result files (``results/bench/pdf.json``) is held to them:
    its numbers must be in one of them, so that a figure cannot pass by equalling a value in some
    unrelated file. A paragraph that names none is held to all of them.
    """
    hidden = re.compile(r"```.*?```", re.S)
    spans = [(m.start(), m.end()) for pattern in (BLOCK, hidden) for m in pattern.finditer(text)]
    starts = [0, *(m.start() for m in PARAGRAPH.finditer(text)), len(text)]
    found = []
    for m in sorted([*NUMBER.finditer(text), *RATIO.finditer(text)], key=lambda m: m.start()):
        if any(start <= m.start() < end for start, end in spans):
            continue
        after = bisect.bisect_right(starts, m.start())
        paragraph = text[starts[after - 1] : starts[after]]
        named = tuple(dict.fromkeys(p.group("name") for p in RESULT_PATH.finditer(paragraph)))
        sources = [known.by_file.get(name, frozenset()) for name in named] if named else [known.anywhere]
        if not any(m.group() in numbers for numbers in sources):
            found.append((text.count("\n", 0, m.start()) + 1, m.group(), named))
    return found
