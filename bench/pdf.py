"""PDF parsing speed: the ``layout`` backend against pdfplumber's own ``extract_text`` (``flat``).

    python -m bench.pdf [--repeat 3] [--max-files N]

Parses every PDF under corpora/10k/pdf/, subfolders included (the 10-K corpus, built by
scripts/build_10k.py: one folder per layout, one file per filing), with both
backends, whole files, the rounds alternating between the backends; reports each file's median
time and the pages per second of each backend over all files, and their ratio. Both backends read
the same glyphs through pdfplumber, so the ratio is the cost of the layout inference on top of
pdfplumber's own text extraction. Written to results/bench/pdf.json. Without the corpus it says so
and writes nothing.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path
from typing import Any

from bench.common import ROOT, write_result
from clear_rag.parse.base import Parser
from clear_rag.parse.registry import get_parser

CORPUS = ROOT / "corpora" / "10k" / "pdf"
BACKENDS = ("flat", "layout")


def _pages(path: Path) -> int:
    import pdfplumber

    with pdfplumber.open(path) as pdf:
        return len(pdf.pages)


def _time(parser: Parser, data: bytes, source: str) -> tuple[float, int]:
    started = time.perf_counter()
    parsed = parser.parse(data, source=source)
    return time.perf_counter() - started, len(parsed.blocks)


def _file(path: Path, parsers: dict[str, Parser], repeat: int) -> dict[str, Any]:
    """One file's row: its pages, and each backend's median and runs in seconds and block count."""
    data = path.read_bytes()
    times: dict[str, list[float]] = {name: [] for name in BACKENDS}
    blocks: dict[str, int] = {}
    for _ in range(repeat):
        for name in BACKENDS:  # alternating, so a slow spell of the machine hits both
            elapsed, blocks[name] = _time(parsers[name], data, path.relative_to(CORPUS).as_posix())
            times[name].append(elapsed)
    row: dict[str, Any] = {
        "file": path.relative_to(CORPUS).as_posix(),
        "pages": _pages(path),
        "bytes": len(data),
    }
    for name in BACKENDS:
        row[name] = {
            "median_s": round(statistics.median(times[name]), 3),
            "runs_s": [round(t, 3) for t in times[name]],
            "blocks": blocks[name],
        }
    return row


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=3, help="timed parses per file and backend (median)")
    parser.add_argument("--max-files", type=int, default=None, help="only the first N PDFs, by name")
    args = parser.parse_args()
    files = sorted(CORPUS.rglob("*.pdf"))[: args.max_files]
    if not files:
        print(f"skipped: no PDFs under {CORPUS.relative_to(ROOT)}/ (scripts/build_10k.py builds them)")
        return
    parsers = {name: get_parser("pdf", name) for name in BACKENDS}
    rows = []
    for path in files:
        row = _file(path, parsers, args.repeat)
        rows.append(row)
        speeds = "  ".join(f"{name} {row['pages'] / row[name]['median_s']:6.2f} pages/s" for name in BACKENDS)
        print(f"{path.relative_to(CORPUS).as_posix():<28} {row['pages']:>4} pages  {speeds}")
    pages = sum(row["pages"] for row in rows)
    speed = {name: pages / sum(row[name]["median_s"] for row in rows) for name in BACKENDS}
    result = {
        "benchmark": "pdf",
        "corpus": str(CORPUS.relative_to(ROOT)),
        "files": rows,
        "total_pages": pages,
        "repeat": args.repeat,
        "pages_per_s": {name: round(value, 3) for name, value in speed.items()},
        "layout_to_flat_speed": round(speed["layout"] / speed["flat"], 3),
        "note": "whole files, median of --repeat parses each, rounds alternating between backends; "
        "both read glyphs through pdfplumber, flat is its extract_text",
    }
    path = write_result("pdf", result)
    print(
        f"{pages} pages: flat {speed['flat']:.2f} pages/s, layout {speed['layout']:.2f} pages/s "
        f"(layout at {speed['layout'] / speed['flat']:.2f}x flat's speed)"
    )
    print(f"written to {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
