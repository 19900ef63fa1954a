"""Pages and their plots written from the result files: what ``clear-rag report`` and the asset graph do.

A page's prose comes from ``source`` (the committed page), its blocks from ``results``; the rendered
page goes to ``target``, which is the same folder when the committed pages are refreshed in place and
another one when a run renders its own copy of the site from its own results. Files are written only
when their bytes change, through the one atomic writer.
"""

from __future__ import annotations

from pathlib import Path

from clear_rag.atomic import write_atomic
from clear_rag.report.blocks import plots_named, render_page
from clear_rag.report.figures import write_plots
from clear_rag.report.sources import Results


def pages(root: Path = Path(".")) -> list[Path]:
    """The pages that may hold blocks, relative to ``root``: the README and every page under site/."""
    found = [Path("README.md")] if (root / "README.md").is_file() else []
    return found + sorted(p.relative_to(root) for p in (root / "site").rglob("*.md"))


def publish_page(
    page: Path, results: Results, source: Path = Path("."), target: Path = Path(".")
) -> list[Path]:
    """Render ``source/page`` into ``target/page`` and write the plots its blocks link to; returns the
    files that changed."""
    text = (source / page).read_text(encoding="utf-8")
    rendered = render_page(text, page, results)
    changed = []
    for name in sorted({name for name, _ in plots_named(text)}):
        changed += write_plots(name, results, target)
    out = target / page
    if not out.is_file() or out.read_text(encoding="utf-8") != rendered:
        write_atomic(out, rendered)
        changed.append(out)
    return changed
