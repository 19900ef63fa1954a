"""A document's ground truth, and the JSON file it is written in (``site/parse.md``, "Ground truth
files"): what anyone who wants their own PDFs scored by ``clear-rag parse-eval`` writes.

    {
      "text": "Everything visible, in reading order; blocks separated by a blank line ...",
      "pages": ["... or the same, one string per page, instead of text"],
      "tables": [{"rows": [["", "2024", "2023"], ["Net sales", "391,035", "383,285"]]}],
      "furniture": ["ACME Corp | Annual Report 2024", "Page 1 of 12"],
      "headings": ["Item 1. Business"]
    }

Exactly one of ``text`` and ``pages`` (pages are joined with a blank line); the rest are optional. A
table is its rows, each the row's cells in order (an empty cell as ``""``); a table's words belong in
``text`` too, where the convention is a row per line with its non-empty cells separated by ``" | "``.
``furniture`` lists each distinct running header, footer and page number as printed. ``source``,
``sha256`` and ``sections`` say where the truth came from (the 10-K truth records them) and are not
scored. The file is read strictly: an unknown key or a value of the wrong type is a ``ConfigError``
naming the file, the field, the value and the fix (``clear_rag.validation``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from pydantic import model_validator

from clear_rag.errors import ConfigError, InputError
from clear_rag.validation import Record, Rule, Text, keys_of, parsed

FORMAT = "The truth file format is in site/parse.md (Ground truth files)"
STRINGS = "must be a list of strings"


@dataclass(frozen=True, slots=True)
class Truth:
    """What a document's pages hold: ``text`` in reading order (blocks separated by a blank line, table
    rows one per line with their non-empty cells separated by ``" | "``), ``tables`` as rows of cells,
    the ``furniture`` strings (running headers, footers, page numbers) that must not reach the body,
    and the ``headings`` a parse should mark as headings."""

    text: str
    tables: tuple[tuple[tuple[str, ...], ...], ...] = ()
    furniture: tuple[str, ...] = ()
    headings: tuple[str, ...] = ()


class TruthTable(Record):
    """One table of a truth file: its rows of cells."""

    unknown = keys_of("table")
    rules: ClassVar[Mapping[str, Rule]] = {
        "": Rule('Write a table as {"rows": [["cell", ...], ...]}', "is not a table of rows"),
        "rows": Rule(
            'Write rows as lists of cell strings: "rows": [["Region", "2024"], ["Europe", "1,234"]]',
            "must be a list of rows, each a list of cell strings",
        ),
    }
    rows: tuple[tuple[Text, ...], ...]


class TruthFile(Record):
    """A ground truth file as written (the module's format)."""

    unknown = keys_of("truth file")
    rules: ClassVar[Mapping[str, Rule]] = {
        "": Rule(
            'Write a JSON object: {"text": "...", "tables": [...], "furniture": [...]}', "is not an object"
        ),
        "text": Rule('Write the document\'s text as one string: "text": "..."', "must be a string"),
        "pages": Rule('Write one string per page: "pages": ["page 1 text", "page 2 text"]', STRINGS),
        "tables": Rule(
            'Write tables as a list: "tables": [{"rows": [["cell", ...], ...]}]', "must be a list"
        ),
        "furniture": Rule(
            'Write each header, footer or page number as printed: "furniture": ["..."]', STRINGS
        ),
        "headings": Rule('Write each heading as printed: "headings": ["..."]', STRINGS),
        "source": Rule('Name the source as a string: "source": "report.docx"', "must be a string"),
        "sha256": Rule('Write the source\'s SHA-256 as hex: "sha256": "..."', "must be a string"),
        "sections": Rule('Write the sections as a list: "sections": ["..."]', STRINGS),
    }
    text: Text | None = None
    pages: tuple[Text, ...] | None = None
    tables: tuple[TruthTable, ...] = ()
    furniture: tuple[Text, ...] = ()
    headings: tuple[Text, ...] = ()
    source: Text | None = None
    sha256: Text | None = None
    sections: tuple[Text, ...] = ()

    @model_validator(mode="after")
    def _one_text(self) -> TruthFile:
        if (self.text is None) == (self.pages is None):
            said = "has both text and pages" if self.text is not None else "has neither text nor pages"
            raise ConfigError(
                said, field="text", fix='Write the text once: "text": "..." or "pages": ["...", ...]'
            )
        return self

    def truth(self) -> Truth:
        text = self.text if self.text is not None else "\n\n".join(self.pages or ())
        return Truth(text, tuple(t.rows for t in self.tables), self.furniture, self.headings)


def load_truth(path: Path, *, fix: str = FORMAT) -> Truth:
    """The truth in the JSON file at ``path``; an ``InputError`` when it cannot be read (``fix`` says
    how to get it), a ``ConfigError`` naming the field when it has another shape."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("does not exist (the ground truth of a PDF)", path=str(path), fix=fix) from None
    except (OSError, ValueError) as err:
        raise InputError(f"cannot be read as JSON ({err})", path=str(path), fix=FORMAT) from None
    return parsed(TruthFile, data, str(path)).truth()
