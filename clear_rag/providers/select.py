"""The one place that turns a provider name into a provider. Embedded models are the default."""

from __future__ import annotations

from clear_rag.errors import ConfigError
from clear_rag.providers.base import Embedder

EMBEDDERS = ("minilm", "hash")
DEFAULT_EMBEDDER = "minilm"


def make_embedder(name: str = DEFAULT_EMBEDDER) -> Embedder:
    """``minilm``: all-MiniLM-L6-v2 int8 ONNX shipped in a PyPI package (the default);
    ``hash``: the deterministic bag-of-words fake, for tests and for trying the tool without models."""
    if name == "minilm":
        from clear_rag.providers.onnx import minilm_int8

        return minilm_int8()
    if name == "hash":
        from clear_rag.providers.fake import HashEmbedder

        return HashEmbedder()
    raise ConfigError(
        "is not a known embedder", field="embedder", value=name, fix=f"Choose one of: {', '.join(EMBEDDERS)}"
    )
