"""A suite's chat generations: cached beside its result file, so a run anywhere reproduces the
committed phrasings and answers and asks the model only for new ones.
"""

from __future__ import annotations

from pathlib import Path

from clear_rag.eval.suite import Suite
from clear_rag.generate.cache import CachedChat
from clear_rag.generate.generations import GenerationCache
from clear_rag.providers.base import ChatModel

COMMITTED = Path("results")  # the result files the README renders, and their generations
GENERATIONS = "generations"


def generations_file(suite: Suite, results_dir: Path) -> Path:
    """Where the generations that feed ``results_dir/<suite>.json`` are kept: beside it, in a folder
    of their own so the ``results/*.json`` glob of the DuckDB views does not read them."""
    return results_dir / GENERATIONS / f"{suite.name}.json"


def cached_chat(
    chat: ChatModel,
    suite: Suite,
    results_dir: Path,
    *,
    regenerate: bool = False,
    cache: GenerationCache | None = None,
) -> CachedChat:
    """``chat`` answering from the suite's generation cache: the file beside the result this run
    writes, falling back to the committed one under ``results/``, so a run anywhere reproduces the
    committed phrasings and asks the model only for new ones (or, with ``regenerate``, for all).
    ``cache`` is that cache already open, for a second model of the same suite (a row's own)."""
    if cache is None:
        own = generations_file(suite, results_dir)
        committed = generations_file(suite, COMMITTED)
        fallbacks = [committed] if committed.resolve() != own.resolve() else []
        cache = GenerationCache(own, fallbacks=fallbacks)
    return CachedChat(chat, cache, regenerate=regenerate)
