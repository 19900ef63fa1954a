"""``clear-rag scan-pdfs [FOLDER] [OUT]``: scanned renders of PDFs, pages as images without a text layer.

What ``parse-eval`` scores as its ``scanned`` part, written to a folder to look at, to parse with
``clear-rag text --backend`` or to hand to other tools. Deterministic: the same PDFs and resolution
make the same bytes (``clear_rag.eval.scanned``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from clear_rag.cli.app import app, fail
from clear_rag.cli.parse import DEFAULT_FOLDER, DEFAULT_SCANS
from clear_rag.errors import ClearRagError
from clear_rag.eval.parse.corpus import find_pdfs
from clear_rag.eval.scanned import SCAN_DPI, write_scans


@app.command("scan-pdfs")
def scan_pdfs_command(
    folder: Annotated[Path, typer.Argument(help="Folder of PDFs (searched below too).")] = DEFAULT_FOLDER,
    out: Annotated[Path, typer.Argument(help="Where the renders go, at the same paths.")] = DEFAULT_SCANS,
    dpi: Annotated[int, typer.Option("--dpi", min=36, max=1200, help="Pixels per inch.")] = SCAN_DPI,
) -> None:
    """Render every page of each PDF with a text layer as a greyscale JPEG in an image-only PDF."""
    try:
        for original, scan in write_scans(find_pdfs(folder), folder, out, dpi=dpi):
            typer.echo(f"{original} -> {scan} ({scan.stat().st_size / 1e6:.1f} MB)")
    except ClearRagError as err:
        raise fail(err) from None
