"""The ``clear-rag`` command line. Errors of the project become one line and an exit code."""

from __future__ import annotations

import time

# When this process began loading the commands, which takes a second or more (every command module
# and what it imports): `clear-rag ask` counts the wait from here when run from the console script.
LOADING = time.perf_counter()

from clear_rag.cli import (  # noqa: E402, F401  (each module registers its commands)
    ablate,
    ask,
    beir,
    check,
    ingest,
    models,
    parse,
    report,
    results,
    scanned,
    serve,
    text,
    train,
)
from clear_rag.cli.app import app  # noqa: E402

__all__ = ["app", "main"]


def main() -> None:
    ask.process_began = LOADING  # a command run in process (tests' CliRunner) counts from its own start
    app()
