"""The ``clear-rag`` command line. Errors of the project become one line and an exit code."""

from __future__ import annotations

from clear_rag.cli import ablate, ask, ingest, models, parse, report, results, serve, text, train  # noqa: F401  (each module registers its commands)
from clear_rag.cli.app import app

__all__ = ["app", "main"]


def main() -> None:
    app()
