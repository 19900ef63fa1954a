"""Tesseract, the OCR engine: its binary found and checked, run on one page image, its words read.

The binary is run as a subprocess rather than through pytesseract. pytesseract is itself a wrapper
that writes each image to a temporary file and runs this same binary, so it would add a dependency
and a file per page without adding a capability. Here the page goes in on standard input as a PGM
(no image encoding), the words come back on standard output as TSV (text, confidence and box of each
word, with the block, paragraph and line tesseract put it in), and each way of failing (no binary,
no language data, a crash, a page that takes too long) becomes a typed error saying what to do.

Debian's packages: ``tesseract-ocr`` (the engine, 5.x) and ``tesseract-ocr-eng`` (English);
``make tesseract`` installs them where it can.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
from dataclasses import dataclass

from clear_rag.environ import for_child
from clear_rag.errors import ModelError, ModelMissing
from clear_rag.parse.pdfium import GreyImage

TESSERACT = "tesseract"  # the binary's name, looked up on PATH (or a path to it)
LANGUAGES = "eng"  # tesseract's language codes, joined by "+" ("eng+deu")
PAGE_TIMEOUT = 300.0  # seconds one page may take: a dense page takes a few on a busy core
INSTALL = "sudo apt-get install tesseract-ocr tesseract-ocr-eng"
# One thread per tesseract process. Its OpenMP threads spin while they wait, and on two shared cores
# a page took 18 s with them against 4.4 s without (pages are read in parallel processes instead).
_CHILD = {"OMP_THREAD_LIMIT": "1"}
_COLUMNS = 12  # level page block paragraph line word left top width height confidence text
_WORD_LEVEL = "5"


@dataclass(frozen=True, slots=True)
class OcrWord:
    """One word tesseract read: its text, its confidence (0 to 100) and its box in pixels."""

    text: str
    confidence: float
    left: int
    top: int
    width: int
    height: int
    block: int
    paragraph: int
    line: int

    @property
    def line_key(self) -> tuple[int, int, int]:
        return self.block, self.paragraph, self.line

    @property
    def paragraph_key(self) -> tuple[int, int]:
        return self.block, self.paragraph


def missing(binary: str) -> ModelMissing:
    """The error for a tesseract binary that is not there."""
    where = "at that path" if "/" in binary else "on PATH"
    return ModelMissing(
        f"OCR needs the tesseract binary, which was not found {where}",
        field="tesseract",
        value=binary,
        fix=f"Install it with `{INSTALL}` (Debian or Ubuntu; `make tesseract` does it as root), "
        "or leave scanned PDFs out",
    )


class Tesseract:
    """The tesseract binary with its languages, checked when made: a ``ModelMissing`` names what to
    install if either is absent."""

    def __init__(
        self, binary: str | None = None, *, languages: str = LANGUAGES, timeout: float = PAGE_TIMEOUT
    ) -> None:
        asked = binary if binary is not None else TESSERACT
        found = shutil.which(asked)
        if found is None:
            raise missing(asked)
        if not (timeout > 0):
            raise ValueError(f"timeout={timeout!r} must be a number of seconds above 0, e.g. {PAGE_TIMEOUT}")
        absent = sorted(set(languages.split("+")) - _languages(found))
        if absent:
            packages = " ".join(f"tesseract-ocr-{code}" for code in absent)
            raise ModelMissing(
                f"tesseract has no language data for {', '.join(absent)}",
                field="languages",
                value=languages,
                fix=f"Install it with `sudo apt-get install {packages}`, or choose from "
                f"{', '.join(sorted(_languages(found))) or 'none'}",
            )
        self.binary = found
        self.languages = languages
        self.timeout = timeout
        self.version = _version(found)
        self.name = f"tesseract {self.version}, {languages}"

    def read(self, image: GreyImage) -> list[OcrWord]:
        """The words on one page image, in tesseract's reading order (block, paragraph, line)."""
        args = [self.binary, "stdin", "stdout", "--dpi", str(image.dpi), "-l", self.languages, "tsv"]
        try:
            done = subprocess.run(
                args,
                input=image.pgm(),
                capture_output=True,
                timeout=self.timeout,
                env=for_child(**_CHILD),
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise ModelError(
                f"tesseract took more than {self.timeout:g} s on one page",
                field="timeout",
                value=self.timeout,
                fix="Raise the OCR timeout, or lower the OCR resolution (dpi)",
            ) from None
        except OSError as err:
            raise ModelError(
                f"tesseract could not be run ({err})",
                field="tesseract",
                value=self.binary,
                fix=f"Reinstall it with `{INSTALL}`",
            ) from None
        if done.returncode != 0:
            said = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise ModelError(
                f"tesseract failed on a page (exit {done.returncode}: {said[-1] if said else 'no message'})",
                field="tesseract",
                value=self.binary,
                fix=f"Check the installation with `{self.binary} --version`, or reinstall (`{INSTALL}`)",
            )
        return parse_tsv(done.stdout.decode("utf-8", "replace"))


def available(binary: str | None = None, *, languages: str = LANGUAGES) -> Tesseract | ModelMissing:
    """The engine, or the error saying why there is none (for a parser that then keeps its hint)."""
    try:
        return Tesseract(binary, languages=languages)
    except ModelMissing as err:
        return err


def parse_tsv(tsv: str) -> list[OcrWord]:
    """Tesseract's TSV as words: the rows of level 5 (a word) whose text is not blank, in file order.

    A row that does not have the twelve columns, or numbers where numbers belong, is skipped: the
    format is tesseract's, and one odd row should not cost the page.
    """
    words: list[OcrWord] = []
    for row in tsv.splitlines()[1:]:
        cells = row.split("\t", _COLUMNS - 1)
        if len(cells) != _COLUMNS or cells[0] != _WORD_LEVEL or not cells[11].strip():
            continue
        try:
            block, paragraph, line = int(cells[2]), int(cells[3]), int(cells[4])
            left, top, width, height = (int(cell) for cell in cells[6:10])
            confidence = float(cells[10])
        except ValueError:
            continue
        words.append(OcrWord(cells[11].strip(), confidence, left, top, width, height, block, paragraph, line))
    return words


@functools.lru_cache(maxsize=8)
def _version(binary: str) -> str:
    """``5.3.0`` from ``tesseract --version``'s first line (``tesseract 5.3.0``)."""
    done = subprocess.run([binary, "--version"], capture_output=True, timeout=30, check=False)
    first = (done.stdout or done.stderr).decode("utf-8", "replace").strip().splitlines()
    return first[0].split()[-1] if first and first[0].split() else "unknown"


@functools.lru_cache(maxsize=8)
def _languages(binary: str) -> frozenset[str]:
    """The language codes ``tesseract --list-langs`` names (the lines after its heading)."""
    done = subprocess.run([binary, "--list-langs"], capture_output=True, timeout=30, check=False)
    listed = (done.stdout or done.stderr).decode("utf-8", "replace").strip().splitlines()
    return frozenset(line.strip() for line in listed[1:] if line.strip())
