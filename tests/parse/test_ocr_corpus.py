"""The low-confidence rule measured on a scanned render of a real filing (``clear_rag.parse.ocr``).

A word is worth keeping while it is more often right than wrong. On the scanned render of Apple's
10-K (corpora/10k, 47 pages at 300 dpi), the words with a letter or digit that tesseract scores under
``MIN_CONFIDENCE`` must be words of the filing (in its truth's vocabulary) more often than not, which
is why they are kept; and the marks it scores there that are punctuation alone carry no token, so
leaving them out costs the text no word. Slow: every fourth page is OCR'd (12 of the 47, half a minute;
the whole document takes several times as long), spread over the filing's prose, tables and notes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from clear_rag.eval.parse.corpus import truth_path
from clear_rag.eval.parse.tokens import tokens
from clear_rag.eval.parse.truth import load_truth
from clear_rag.eval.scanned import scan_pdf
from clear_rag.parse.ocr import MIN_CONFIDENCE, OcrPage, recognise
from clear_rag.parse.pdfium import opened
from clear_rag.parse.tesseract import Tesseract
from tests.parse.scans import needs_tesseract

ROOT = Path(__file__).resolve().parents[2]
PDF = ROOT / "corpora" / "10k" / "pdf" / "one-column" / "aapl.pdf"


@pytest.mark.slow
@needs_tesseract
def test_unsure_words_are_mostly_right_and_unsure_marks_carry_no_word() -> None:
    if not PDF.is_file():
        pytest.skip(f"no {PDF}: `make corpus-10k` builds it")
    vocabulary = set(tokens(load_truth(truth_path(PDF, PDF.parents[2] / "truth")).text))
    with opened(scan_pdf(PDF.read_bytes(), source=str(PDF)), "scan.pdf") as document:
        pages = [
            page
            for _, page in recognise(document, range(1, len(document) + 1, 4), Tesseract(), min_confidence=0)
        ]
    words = [word for page in pages if isinstance(page, OcrPage) for word in page.words]
    unsure = [word for word in words if word.confidence < MIN_CONFIDENCE]
    worded = [word for word in unsure if any(char.isalnum() for char in word.text)]
    marks = [word for word in unsure if word not in worded]
    assert worded and marks  # both kinds occur, or the rule is untested here
    right = sum(all(token in vocabulary for token in tokens(word.text)) for word in worded)
    assert right > len(worded) / 2, f"{right} of {len(worded)} unsure words are the filing's"
    assert all(tokens(mark.text) == [] for mark in marks), [m.text for m in marks if tokens(m.text)]
