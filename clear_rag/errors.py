"""One small error hierarchy; the CLI turns it into a one-line message and an exit code.

Every message names where the problem is (file, field, value) and says what to do about it.
This module imports nothing of the project.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

_UNSET = object()


def did_you_mean(name: str, known: Iterable[str], *, cutoff: float = 0.6) -> str:
    """``"Did you mean 'set'? "`` for the known name closest to ``name``, or nothing if none is close:
    the hint every unknown key, row or setting gets."""
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=cutoff)
    return f"Did you mean {close[0]!r}? " if close else ""


class ClearRagError(Exception):
    """Base of every error clear-rag raises on purpose.

    ``what`` says what is wrong, ``fix`` what to do; ``path``, ``field`` and ``value`` say where.
    """

    exit_code = 1

    def __init__(
        self,
        what: str,
        *,
        fix: str,
        path: str | None = None,
        field: str | None = None,
        value: object = _UNSET,
    ) -> None:
        self.what = what
        self.fix = fix
        self.path = path
        self.field = field
        self.value = None if value is _UNSET else value
        self._value = value
        where = []
        if path is not None:
            where.append(path)
        if field is not None:
            where.append(field if value is _UNSET else f"{field}={value!r}")
        elif value is not _UNSET:
            where.append(repr(value))
        prefix = ": ".join(where)
        super().__init__(f"{prefix}: {what}. {fix}" if prefix else f"{what}. {fix}")

    def at(self, path: str) -> ClearRagError:
        """The same error, said of ``path`` (the file or row a setting came from)."""
        return type(self)(self.what, fix=self.fix, path=path, field=self.field, value=self._value)


class InputError(ClearRagError):
    """A file that cannot be ingested; the other files of the same run still are."""

    exit_code = 2


class UnreadableFileError(InputError):
    """The path does not exist or cannot be opened."""


class EmptyFileError(InputError):
    """The file has no bytes, or no text once parsed."""


class BinaryFileError(InputError):
    """The file's bytes are not text although its name says they are."""


class UnsupportedFileError(InputError):
    """No parser is registered for this file type or backend."""


class PdfError(InputError):
    """A PDF that cannot be read as it is: not a PDF, damaged, truncated, without pages, too long."""


class EncryptedPdfError(PdfError):
    """A PDF that needs a password to open."""

    @classmethod
    def at(cls, source: str) -> EncryptedPdfError:
        """The one way either PDF reader (pdfminer, pdfium) says ``source`` needs a password."""
        return cls(
            "is encrypted: it needs a password to open",
            path=source,
            fix="Save a copy without the password (e.g. `qpdf --decrypt --password=PW in.pdf out.pdf`) "
            "and ingest that",
        )


class ScannedPdfError(PdfError):
    """A PDF whose pages carry no text layer at all: images of pages, as a scanner makes them."""


class ConfigError(ClearRagError):
    """A setting with an unknown key, a wrong type or a value out of range."""

    exit_code = 2


class StoreError(ClearRagError):
    """The store cannot be opened or written as it is (wrong schema version, other settings)."""

    exit_code = 3


class ResultsQueryError(ClearRagError):
    """The result files cannot be read, or a query over them failed."""

    exit_code = 2


class ModelError(ClearRagError):
    """A model, or the package that ships it, is missing or failed."""

    exit_code = 4


class ModelMissing(ModelError):
    """A model that is known but not here: not pulled, or its package not installed. A suite row that
    needs one is skipped with this as its reason, rather than failing the whole suite."""


class Cancelled(Exception):
    """The work was stopped on purpose (a client that went away); not an error to report."""
