"""Build corpora/10k/: two real SEC 10-K filings rendered to PDF, with the ground truth a parser is scored on.

    python scripts/build_10k.py     (from the project root; `make corpus-10k` installs WeasyPrint and runs it)

Inputs are the inline-XBRL filings in ../shared/data/sec-10k (Apple and Alphabet, fiscal 2024; provenance and
sha256 in that folder's README). Sections are cut between the documents' own "Item N." heading elements (not
the table-of-contents links), with the standard library's html.parser (lxml is not in .venv), and copied as
they are, markup and inline styles. Kept (pages as filed; each render has one page per filed page):

- aapl: Item 1 Business (5), 1A Risk Factors (13), 7 MD&A (6), all of Item 8 (23: the index, the five
  statements, the notes, the auditor's reports); 47 pages in each render.
- goog: Item 1 (7), 1A (16), 7 (16), Item 8 up to the notes (9: the index, the two auditor's reports, the
  five statements); 48 pages in each render. Alphabet's notes would add 33 more.

Written, per filing <co> (aapl, goog):

- pdf/one-column/<co>.pdf: the sections as filed, on Letter pages;
- pdf/two-column/<co>.pdf: the same with prose in two columns, tables and centred titles full width
  (one folder per render, each what a suite ingests: golden/suites/10k.yaml, 10k-two-column.yaml);
- truth/<co>.json, truth/<co>.txt: the visible text, the tables and the page furniture (`collect`);
- the two tables of README.md (sections and PDFs); the prose around them is written by hand.

Both renders add an @page running header and a "Page N of M" footer to the filings' own in-body page
footers and headers (kept in the render); all of them are listed as furniture in the truth, the footer
once per page ("Page 1 of 47" to "Page 47 of 47"), since each render has one page per filed page.
Nothing is fetched from the network: the URL fetcher allows data: URLs and the installed font files
@font-face local() resolves to.
No creation date is written, and two runs give byte-identical PDFs (same WeasyPrint, fonts, fontconfig).
The four renders take about two minutes of CPU, 2.5 to 4 minutes on a busy two-core machine (a two-column
render about twice a one-column one); --no-pdf writes only the truth, in about two seconds, without
WeasyPrint.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import io
import json
import re
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

SOURCE_DIR = Path("../shared/data/sec-10k")
OUT_DIR = Path("corpora/10k")
LAYOUTS = ("one-column", "two-column")
VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}
)
BLOCK = frozenset(
    {"address", "article", "blockquote", "body", "center", "dd", "div", "dl", "dt", "figure", "footer"}
    | {"h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li", "main", "nav", "ol", "p", "pre", "section"}
    | {"table", "tbody", "td", "tfoot", "th", "thead", "tr", "ul"}
)
# Cells a parser may or may not split off a number ("$ | 391,035", "(1,234 | )", "12 | %"): dropped.
SYMBOL_CELL = re.compile(r"^[$%)]*$")
NUMBER = re.compile(r"^(\(?-?\d[\d,]*(\.\d+)?\)?|[—–-])$")  # a dash is the filings' zero


@dataclass(frozen=True)
class Section:
    """Item `item` from its heading to the next Item heading, or with `to_notes` to the page break before the
    notes to the financial statements."""

    item: str
    name: str
    to_notes: bool = False


@dataclass(frozen=True)
class Filing:
    key: str
    file: str
    sha256: str
    company: str
    sections: tuple[Section, ...]

    @property
    def running_header(self) -> str:
        return f"{self.company} Form 10-K (fiscal 2024), selected items"


FILINGS = (
    Filing(
        "aapl",
        "aapl-20240928.htm",
        "24a830a0f1256e371d36a1f7f72e5e85a38037d1de2f6f966eb8457db42ff6d6",
        "Apple Inc.",
        (
            Section("1", "Item 1. Business"),
            Section("1A", "Item 1A. Risk Factors"),
            Section("7", "Item 7. Management's Discussion and Analysis"),
            Section("8", "Item 8. Financial Statements and Supplementary Data"),
        ),
    ),
    Filing(
        "goog",
        "goog-20241231.htm",
        "a70a2cc584744e7d678ec6c4fb669fa7c5c871861eb5820fb9de4357319db7d9",
        "Alphabet Inc.",
        (
            Section("1", "Item 1. Business"),
            Section("1A", "Item 1A. Risk Factors"),
            Section("7", "Item 7. Management's Discussion and Analysis"),
            Section("8", "Item 8. Financial Statements and Supplementary Data (to the notes)", to_notes=True),
        ),
    ),
)


class BuildError(Exception):
    """A missing input or tool, reported as one line."""


# ---- a small DOM with source offsets, from html.parser


@dataclass(eq=False)
class Node:
    tag: str
    attrs: dict[str, str]
    start: int
    end: int = -1
    children: list[Node | str] = field(default_factory=list)

    def elements(self) -> list[Node]:
        return [c for c in self.children if isinstance(c, Node)]

    def iter(self) -> Iterator[Node]:
        yield self
        for child in self.elements():
            yield from child.iter()


class _TreeBuilder(HTMLParser):
    def __init__(self, source: str) -> None:
        super().__init__(convert_charrefs=True)
        self._source = source
        self._line_starts = [0] + [m.end() for m in re.finditer("\n", source)]
        self.root = Node("#root", {}, 0, len(source))
        self._stack = [self.root]

    def _offset(self) -> int:
        line, column = self.getpos()
        return self._line_starts[line - 1] + column

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        start = self._offset()
        node = Node(tag, {k: v or "" for k, v in attrs}, start)
        self._stack[-1].children.append(node)
        if tag in VOID:
            node.end = start + len(self.get_starttag_text() or "")
        else:
            self._stack.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        start = self._offset()
        node = Node(tag, {k: v or "" for k, v in attrs}, start, start + len(self.get_starttag_text() or ""))
        self._stack[-1].children.append(node)

    def handle_endtag(self, tag: str) -> None:
        for depth in range(len(self._stack) - 1, 0, -1):
            if self._stack[depth].tag == tag:
                end = self._source.index(">", self._offset()) + 1
                for node in self._stack[depth:]:
                    node.end = end
                del self._stack[depth:]
                return

    def handle_data(self, data: str) -> None:
        self._stack[-1].children.append(data)


def parse_html(source: str) -> Node:
    builder = _TreeBuilder(source)
    builder.feed(source)
    builder.close()
    return builder.root


# ---- visible text


def _style(node: Node) -> str:
    return node.attrs.get("style", "").replace(" ", "").lower()


def _hidden(node: Node) -> bool:
    return node.tag in {"ix:header", "head", "script", "style", "title"} or "display:none" in _style(node)


def _indented(node: Node) -> bool:
    """Alphabet sets "ITEM 1A." and "RISK FACTORS" in adjacent spans, the gap drawn by padding: a space."""
    return re.search(r"(padding|margin)-left:(?!0(pt|px)?(;|$))", _style(node)) is not None


def collapse(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def inline_text(node: Node) -> str:
    """All visible text under `node` on one line (block boundaries become spaces)."""
    parts: list[str] = []

    def walk(n: Node) -> None:
        if _hidden(n):
            return
        if n.tag in BLOCK or n.tag == "br" or _indented(n):
            parts.append(" ")
        for child in n.children:
            if isinstance(child, str):
                parts.append(child)
            else:
                walk(child)
        if n.tag in BLOCK:
            parts.append(" ")

    walk(node)
    return collapse("".join(parts))


def normalise_cell(text: str) -> str:
    """The truth's cell rules: "$391,035" -> "391,035", "12%" -> "12", "(1,234" -> "(1,234)", and a cell of
    only "$", "%" and ")" -> "" (dropped). Idempotent: a scorer can apply it to a parser's cells too."""
    cell = collapse(text)
    if SYMBOL_CELL.match(cell.replace(" ", "")):
        return ""
    bare = re.sub(r"^\$\s*|\s*%$", "", cell)
    if NUMBER.match(bare.replace(" ", "")):
        cell = bare.replace(" ", "")
        if cell.startswith("(") and not cell.endswith(")"):
            cell += ")"
    return cell


def table_rows(table: Node) -> list[list[str]]:
    """The table's rows of non-empty normalised cells (a table nested in a cell is that cell's text)."""
    rows: list[list[str]] = []
    for row in _rows(table):
        cells = [normalise_cell(inline_text(c)) for c in row.elements() if c.tag in {"td", "th"}]
        if kept := [c for c in cells if c]:
            rows.append(kept)
    return rows


def _rows(node: Node) -> Iterator[Node]:
    for child in node.elements():
        if child.tag == "tr":
            yield child
        elif child.tag != "table":
            yield from _rows(child)


@dataclass
class TextCollector:
    """Blocks of visible text in document order; a table is one block, a row a line, cells joined by " | "."""

    blocks: list[str] = field(default_factory=list)
    tables: list[list[list[str]]] = field(default_factory=list)
    _line: list[str] = field(default_factory=list)

    def flush(self) -> None:
        if text := collapse("".join(self._line)):
            self.blocks.append(text)
        self._line.clear()

    def add(self, node: Node) -> None:
        if _hidden(node):
            return
        if node.tag == "table":
            self.flush()
            if rows := table_rows(node):
                self.tables.append(rows)
                self.blocks.append("\n".join(" | ".join(row) for row in rows))
            return
        block = node.tag in BLOCK or node.tag == "br"
        if block:
            self.flush()
        elif _indented(node):
            self._line.append(" ")
        for child in node.children:
            if isinstance(child, str):
                self._line.append(child)
            else:
                self.add(child)
        if block:
            self.flush()


# ---- sections and page furniture


def _is_page_footer(node: Node) -> bool:
    """Workiva's page footer: a relative box whose absolutely placed child holds the footer line."""
    boxed = any("position:absolute" in _style(child) for child in node.elements())
    return boxed and "position:relative" in _style(node)


def _is_page_header(node: Node) -> bool:
    """Workiva's header band after each page break (empty in Apple's, "Table of Contents | Alphabet Inc." in
    Alphabet's)."""
    return re.fullmatch(r"min-height:[\d.]+pt;width:100%;?", _style(node)) is not None


def is_furniture(node: Node) -> bool:
    return _is_page_footer(node) or _is_page_header(node)


def _item_heading(node: Node) -> str | None:
    """The number of a body-level "Item 1A. Risk Factors" heading (the table of contents is a table)."""
    if node.tag != "div" or any(n.tag in {"table", "a"} for n in node.iter()):
        return None
    match = re.match(r"item\s+(\d+[a-c]?)\.\s", inline_text(node) + " ", re.IGNORECASE)
    return match.group(1).upper() if match else None


def body_children(root: Node) -> list[Node]:
    body = next((n for n in root.iter() if n.tag == "body"), None)
    if body is None:
        raise BuildError("no <body> in the filing")
    return body.elements()


def select(children: list[Node], section: Section) -> list[Node]:
    """The body-level elements of one section, from its heading to the next Item heading (or the notes)."""
    headings = {item: i for i, node in enumerate(children) if (item := _item_heading(node))}
    if section.item not in headings:
        raise BuildError(f"no 'Item {section.item}.' heading in the body; found {sorted(headings)}")
    start = headings[section.item]
    stop = min((i for i in headings.values() if i > start), default=len(children))
    if section.to_notes:
        title = "notes to consolidated financial statements"
        notes = [i for i in range(start, stop) if inline_text(children[i]).lower() == title]
        if not notes:
            raise BuildError(f"no {title!r} title in Item {section.item}")
        stop = max(i for i in range(start, notes[0]) if children[i].tag == "hr")
    kept = children[start:stop]
    # A section that ended at a page break kept that break and the next page's header band at its end,
    # which rendered as a page with nothing on it but the running header and footer.
    while kept and (kept[-1].tag == "hr" or _is_page_header(kept[-1]) or _blank(kept[-1])):
        kept.pop()
    return kept


def _blank(node: Node) -> bool:
    return not inline_text(node) and not any(n.tag in {"table", "img"} for n in node.iter())


def filed_pages(part: list[Node]) -> tuple[int, int]:
    """First and last page number of a section as filed, read from its first in-body footer."""
    footers = [inline_text(n) for n in part if _is_page_footer(n)]
    match = re.search(r"(\d+)\.?$", footers[0]) if footers else None
    if match is None:
        raise BuildError(f"no page number in the first page footer of the section at {part[0].start}")
    first = int(match.group(1))
    return first, first + sum(n.tag == "hr" for n in part)


# ---- rendering

# Three departures from the browser defaults, each because filed pages spilled onto a second page:
# - fontconfig resolves Apple's "'Helvetica', sans-serif" to DejaVu Sans, far wider than Helvetica; the
#   @font-face rules map it to Liberation Sans, which has Helvetica's metrics (Arial already resolves to it);
# - every piece of text in the filings sets its own size, so the body's size sets only each line's strut: at
#   the default 12pt Apple's 9pt lines stood 14pt apart instead of the 10.8pt they declare;
# - even so a filed page is up to 795pt tall here, more than a Letter page, so the pages are laid out at
#   680 x 880pt and printed at ZOOM 0.9: Letter paper (612 x 792pt), as a browser's "scale 90%" prints.
ZOOM = 0.9
PAGE_CSS = """
@font-face { font-family: Helvetica; src: local("Liberation Sans"); }
@font-face { font-family: Helvetica; font-weight: bold; src: local("Liberation Sans Bold"); }
@font-face { font-family: Helvetica; font-style: italic; src: local("Liberation Sans Italic"); }
@font-face {
  font-family: Helvetica; font-weight: bold; font-style: italic; src: local("Liberation Sans Bold Italic");
}
@page {
  size: 680pt 880pt;
  margin: 0.5in 0.55in;
  @top-center { content: "%(header)s"; font: 9pt "DejaVu Sans"; color: #555; }
  @bottom-center { content: "Page " counter(page) " of " counter(pages); font: 9pt "DejaVu Sans"; }
}
body { font-size: 8pt; margin: 0; }
.part + .part { break-before: page; }
"""
TWO_COLUMN_CSS = ".columns { column-count: 2; column-gap: 20pt; }"
FONT_FILES = ("file:///usr/share/fonts/", "file:///usr/local/share/fonts/")


def _full_width(node: Node) -> bool:
    """In the two-column render: tables, page breaks, page furniture, Item headings and centred titles."""
    return (
        node.tag == "hr"
        or is_furniture(node)
        or _item_heading(node) is not None
        or "text-align:center" in _style(node)
        or any(n.tag == "table" for n in node.iter())
    )


def compose(header: str, source: str, parts: list[list[Node]], layout: str) -> str:
    """One HTML document: each part's elements copied from `source` as they are, in a <div class="part">.
    Two columns wrap each run of prose in a multi-column div, so tables stay full width (WeasyPrint 70
    honours `column-span: all` on a block but not on a table; this also leaves the filing's elements as
    they are)."""
    if layout not in LAYOUTS:
        raise ValueError(f"layout {layout!r}: expected one of {LAYOUTS}")
    css = PAGE_CSS % {"header": header} + (TWO_COLUMN_CSS if layout == "two-column" else "")
    html = [f"<!DOCTYPE html><html lang='en-US'><head><meta charset='utf-8'><title>{header}</title>"]
    html.append(f"<style>{css}</style></head><body>")
    for part in parts:
        html.append("<div class='part'>")
        in_columns = False
        for node in part:
            if (layout == "one-column" or _full_width(node)) == in_columns:
                html.append("</div>" if in_columns else "<div class='columns'>")
                in_columns = not in_columns
            html.append(source[node.start : node.end])
        html.append("</div></div>" if in_columns else "</div>")
    html.append("</body></html>")
    return "".join(html)


def render_pdf(html: str) -> bytes:
    """The PDF of `html`, with nothing fetched from the network and no creation date."""
    try:
        weasyprint = importlib.import_module("weasyprint")  # untyped, and absent where truth alone is built
    except ImportError as exc:
        raise BuildError("weasyprint is not installed: `make corpus-10k` installs it into .venv") from exc
    except OSError as exc:  # its pango libraries are missing
        raise BuildError(f"weasyprint cannot load pango ({exc}): `make corpus-10k` installs it") from exc

    class Offline(weasyprint.URLFetcher):  # type: ignore[misc, name-defined]
        """data: URLs and the installed font files that @font-face local() resolves to; nothing else."""

        def fetch(self, url: str, headers: Any = None) -> Any:
            if not url.startswith(("data:", *FONT_FILES)):
                raise ValueError(f"offline render: refusing to fetch {url}")
            return super().fetch(url, headers)

    pdf: bytes = weasyprint.HTML(string=html, url_fetcher=Offline()).write_pdf(zoom=ZOOM)
    return pdf


def page_count(pdf: bytes) -> int:
    import pdfplumber

    with pdfplumber.open(io.BytesIO(pdf)) as document:
        return len(document.pages)


# ---- the build


def collect(parts: list[list[Node]]) -> tuple[TextCollector, list[str]]:
    """The text and tables of the parts, and each distinct line of in-body page furniture they hold."""
    collector, furniture = TextCollector(), list[str]()
    for node in (n for part in parts for n in part):
        if is_furniture(node):
            if (line := inline_text(node)) and line not in furniture:
                furniture.append(line)
        elif node.tag != "hr":
            collector.add(node)
    collector.flush()
    return collector, furniture


@dataclass(frozen=True)
class Built:
    filing: Filing
    pages: list[tuple[int, int]]  # each section's first and last page as filed
    pdfs: dict[str, tuple[int, int, str]]  # file name -> pages, bytes, sha256
    seconds: float


def build(filing: Filing, source_dir: Path, out: Path, render: bool) -> Built:
    path = source_dir / filing.file
    raw = path.read_bytes()
    if (digest := hashlib.sha256(raw).hexdigest()) != filing.sha256:
        raise BuildError(f"{path}: sha256 {digest}, expected {filing.sha256} (see {source_dir}/README.md)")
    source = raw.decode("ascii")
    children = body_children(parse_html(source))
    parts = [select(children, section) for section in filing.sections]
    collector, furniture = collect(parts)
    text = "\n\n".join(collector.blocks)
    pages = [filed_pages(part) for part in parts]
    filed = sum(last - first + 1 for first, last in pages)
    truth = {
        "source": filing.file,
        "sha256": digest,
        "sections": [section.name for section in filing.sections],
        "text": text,
        "tables": [{"rows": rows} for rows in collector.tables],
        # the render's own "Page N of M" footer: one page per filed page (checked below when rendering)
        "furniture": [
            filing.running_header,
            *furniture,
            *(f"Page {n} of {filed}" for n in range(1, filed + 1)),
        ],
    }
    (out / "truth").mkdir(parents=True, exist_ok=True)
    (out / "truth" / f"{filing.key}.json").write_text(json.dumps(truth, indent=1, ensure_ascii=False) + "\n")
    (out / "truth" / f"{filing.key}.txt").write_text(text + "\n")
    pdfs: dict[str, tuple[int, int, str]] = {}
    began = time.perf_counter()
    for layout in LAYOUTS if render else ():
        pdf = render_pdf(compose(filing.running_header, source, parts, layout))
        target = out / "pdf" / layout / f"{filing.key}.pdf"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(pdf)
        pdfs[f"{layout}/{target.name}"] = (
            count := page_count(pdf),
            len(pdf),
            hashlib.sha256(pdf).hexdigest(),
        )
        note = "one page per filed page" if count == filed else f"{filed} filed pages: some spill over"
        print(f"{target}: {count} pages ({note}), {time.perf_counter() - began:.0f} s so far")
    return Built(filing, pages, pdfs, time.perf_counter() - began)


BEGIN, END = "<!-- tables written by scripts/build_10k.py -->", "<!-- end of the written tables -->"


def readme_tables(built: list[Built]) -> str:
    """The sections and PDF tables of corpora/10k/README.md (the prose around them is written by hand)."""
    lines = ["| filing | section kept | pages as filed |", "|---|---|---|"]
    for b in built:
        for section, (first, last) in zip(b.filing.sections, b.pages, strict=True):
            lines.append(f"| {b.filing.file} | {section.name} | {first}–{last} ({last - first + 1}) |")
    lines += ["", "| PDF | pages | bytes | sha256 |", "|---|---:|---:|---|"]
    for b in built:
        for name, (pages, size, digest) in b.pdfs.items():
            lines.append(f"| `pdf/{name}` | {pages} | {size:,} | `{digest}` |")
    return "\n".join(lines)


def write_readme(path: Path, built: list[Built]) -> None:
    text = path.read_text(encoding="utf-8")
    if BEGIN not in text or END not in text:
        raise BuildError(f"{path} lacks the lines {BEGIN} and {END} that frame its written tables")
    head, rest = text.split(BEGIN, 1)
    path.write_text(f"{head}{BEGIN}\n{readme_tables(built)}\n{END}{rest.split(END, 1)[1]}", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Build corpora/10k/ from two SEC 10-K filings.")
    parser.add_argument("--source", type=Path, default=SOURCE_DIR, help="folder of the .htm filings")
    parser.add_argument("--out", type=Path, default=OUT_DIR, help="corpus folder to write")
    parser.add_argument("--no-pdf", action="store_true", help="write only the truth (no WeasyPrint needed)")
    args = parser.parse_args(argv)
    if missing := [f.file for f in FILINGS if not (args.source / f.file).is_file()]:
        print(
            f"error: {', '.join(missing)} not found in {args.source}: run this from the project root, "
            f"with the shared data beside it in {SOURCE_DIR} (or name the folder with --source)",
            file=sys.stderr,
        )
        return 2
    try:
        built = [build(filing, args.source, args.out, render=not args.no_pdf) for filing in FILINGS]
        if not args.no_pdf:
            write_readme(args.out / "README.md", built)
    except BuildError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
