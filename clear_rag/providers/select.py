"""The one place that turns provider names into providers. Embedded models are the default.

Names, as the CLI, the environment and configs spell them:

- embedders: ``minilm`` (all-MiniLM-L6-v2 int8 ONNX shipped in a PyPI package, the default),
  ``hash`` (the deterministic fake), ``ollama:MODEL`` (e.g. ``ollama:nomic-embed-text``);
- chat models: ``smollm2`` (SmolLM2-135M GGUF shipped in a PyPI package, the default),
  ``echo`` (the fake: replies with the question less one word per line), ``ollama:MODEL``,
  ``openai:MODEL`` (an OpenAI-compatible server: llama.cpp, vLLM, LM Studio);
- rerankers: ``ms-marco-minilm-l6`` (a cross-encoder pulled once with ``clear-rag models pull``), a
  folder holding ``model.onnx`` and ``tokenizer.json``, or ``lexical`` (the fake).

Server addresses come from ``OLLAMA_HOST`` and ``CLEAR_RAG_OPENAI_URL`` where set.
"""

from __future__ import annotations

import os
from pathlib import Path

from clear_rag.errors import ConfigError
from clear_rag.providers.base import ChatModel, Embedder, Reranker

EMBEDDERS = ("minilm", "hash", "ollama:MODEL")
CHATS = ("smollm2", "echo", "ollama:MODEL", "openai:MODEL")
RERANKERS = ("ms-marco-minilm-l6", "lexical", "PATH")
DEFAULT_EMBEDDER = "minilm"
DEFAULT_CHAT = "smollm2"


def _ollama_url() -> str:
    host = os.environ.get("OLLAMA_HOST", "127.0.0.1:11434")
    return host if host.startswith("http") else f"http://{host}"


def _unknown(kind: str, name: str, known: tuple[str, ...]) -> ConfigError:
    return ConfigError(
        f"is not a known {kind}", field=kind, value=name, fix=f"Choose one of: {', '.join(known)}"
    )


def make_embedder(name: str = DEFAULT_EMBEDDER) -> Embedder:
    if name == "minilm":
        from clear_rag.providers.onnx import minilm_int8

        return minilm_int8()
    if name == "hash":
        from clear_rag.providers.fake import HashEmbedder

        return HashEmbedder()
    if name.startswith("ollama:") and name[7:]:
        from clear_rag.providers.ollama import OllamaEmbedder

        return OllamaEmbedder(name[7:], base_url=_ollama_url())
    raise _unknown("embedder", name, EMBEDDERS)


def make_chat(name: str = DEFAULT_CHAT) -> ChatModel:
    if name == "smollm2":
        from clear_rag.providers.gguf import smollm2

        return smollm2()
    if name == "echo":
        from clear_rag.providers.fake import EchoChatModel

        return EchoChatModel()
    if name.startswith("ollama:") and name[7:]:
        from clear_rag.providers.ollama import OllamaChat

        return OllamaChat(name[7:], base_url=_ollama_url())
    if name.startswith("openai:") and name[7:]:
        from clear_rag.providers.openai_compat import DEFAULT_URL, OpenAIChat

        url = os.environ.get("CLEAR_RAG_OPENAI_URL", DEFAULT_URL)
        return OpenAIChat(name[7:], base_url=url, api_key=os.environ.get("CLEAR_RAG_OPENAI_KEY"))
    raise _unknown("chat model", name, CHATS)


def make_reranker(name: str) -> Reranker:
    if name == "lexical":
        from clear_rag.providers.fake import LexicalReranker

        return LexicalReranker()
    from clear_rag.providers.cross_encoder import OnnxCrossEncoder

    if Path(name).is_dir():
        return OnnxCrossEncoder(Path(name), name=Path(name).name, version="local")
    from clear_rag.providers.hub import locate, pulled_version

    folder = locate(name)
    return OnnxCrossEncoder(folder, name=name, version=pulled_version(folder))
