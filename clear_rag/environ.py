"""Every environment variable clear-rag reads, in one place, each read one way.

A variable stands in for an option a person would otherwise type on every command (``CLEAR_RAG_STORE``
for ``--store``) or names where a model server listens. The CLI's options name theirs here
(``envvar=STORE.name``), and every other reader calls ``text``, ``whole_number`` or ``seconds``: an
empty value is no value, and a value that does not parse is a ``ConfigError`` naming the variable
rather than a default silently used. ``VARIABLES`` lists them all; the tests clear every one before
each test (``tests/conftest.py``), so a developer's own settings never reach a test.

Two switches belong to the test suite alone and are read there: ``CLEAR_RAG_SCREENSHOTS`` (where the
browser tests save their screenshots) and ``CLEAR_RAG_PARSE_DIFFERENTIAL`` (the PDF differential's
full run). ``NUMBA_CACHE_DIR`` is numba's own; ``clear_rag.index.warm`` reads it only to say where the
compiled kernels go.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

from clear_rag.errors import ConfigError


@dataclass(frozen=True, slots=True)
class Variable:
    name: str
    meaning: str


STORE = Variable("CLEAR_RAG_STORE", "the store directory, as --store")
EMBEDDER = Variable("CLEAR_RAG_EMBEDDER", "the embedder, as --embedder (the asset graph's too)")
CHAT = Variable("CLEAR_RAG_CHAT", "the chat model, as --chat")
RERANKER = Variable("CLEAR_RAG_RERANKER", "the reranker, as --reranker")
SUPPORT = Variable("CLEAR_RAG_SUPPORT", "the support check's model, as --support")
TIMEOUT = Variable("CLEAR_RAG_TIMEOUT", "seconds a model server may take, as --timeout")
THREADS = Variable("CLEAR_RAG_THREADS", "threads one vector search uses (default: the cores)")
OPENAI_URL = Variable("CLEAR_RAG_OPENAI_URL", "where an OpenAI-compatible server listens")
OPENAI_KEY = Variable("CLEAR_RAG_OPENAI_KEY", "the key such a server asks for, if any")
HUB_URL = Variable("CLEAR_RAG_HUB_URL", "where `clear-rag models pull` downloads from")
EXECUTOR = Variable("CLEAR_RAG_EXECUTOR", "the asset graph's executor (site/scale.md)")
MAX_CONCURRENT = Variable("CLEAR_RAG_MAX_CONCURRENT", "steps the multiprocess executor runs at once")
DASK_SCHEDULER = Variable("CLEAR_RAG_DASK_SCHEDULER", "the Dask scheduler the dask executor sends steps to")
OLLAMA_HOST = Variable("OLLAMA_HOST", "where Ollama listens (Ollama's own variable)")
XDG_CACHE_HOME = Variable("XDG_CACHE_HOME", "the cache folder pulled models go under")

VARIABLES = (
    STORE,
    EMBEDDER,
    CHAT,
    RERANKER,
    SUPPORT,
    TIMEOUT,
    THREADS,
    OPENAI_URL,
    OPENAI_KEY,
    HUB_URL,
    EXECUTOR,
    MAX_CONCURRENT,
    DASK_SCHEDULER,
    OLLAMA_HOST,
    XDG_CACHE_HOME,
)


def for_child(**overrides: str) -> dict[str, str]:
    """The environment a child process (tesseract) is started with: this process's, passed on whole
    (the child reads its own variables, such as ``TESSDATA_PREFIX``), with ``overrides`` set."""
    return {**os.environ, **overrides}


def text(variable: Variable) -> str | None:
    """The variable's value without surrounding spaces; ``None`` when it is unset or empty."""
    value = os.environ.get(variable.name, "").strip()
    return value or None


def whole_number(variable: Variable) -> int | None:
    """The variable as a whole number of at least 1; ``None`` when unset, a ``ConfigError`` when it
    is anything else."""
    value = text(variable)
    if value is None:
        return None
    if not value.isdigit() or int(value) < 1:
        raise ConfigError(
            "is not a whole number of at least 1",
            field=variable.name,
            value=value,
            fix=f"Set {variable.name} to a number such as 2, or unset it for the default",
        )
    return int(value)


def seconds(variable: Variable) -> float | None:
    """The variable as a finite number of seconds above 0; ``None`` when unset, a ``ConfigError`` when
    it is anything else."""
    value = text(variable)
    if value is None:
        return None
    try:
        number = float(value)
    except ValueError:
        number = math.nan
    if not (math.isfinite(number) and number > 0):
        raise ConfigError(
            "is not a number of seconds above 0",
            field=variable.name,
            value=value,
            fix=f"Set {variable.name} to a number of seconds such as 60, or unset it for the default",
        )
    return number
