"""The embedded GGUF chat model, run for real where llama-cpp-python is installed (`make run` installs it)."""

from __future__ import annotations

import importlib.util

import pytest

from clear_rag.errors import ModelError
from clear_rag.providers.base import Message

HAVE_LLAMA = importlib.util.find_spec("llama_cpp") is not None


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_LLAMA, reason="llama-cpp-python is not installed (make run installs it)")
def test_smollm2_streams_a_short_answer() -> None:
    from clear_rag.providers.gguf import smollm2

    chat = smollm2()
    pieces = list(chat.stream([Message("user", "Say the word hello.")], temperature=0.0, max_tokens=8))
    assert pieces and all(isinstance(p, str) for p in pieces)
    assert chat.name == "SmolLM2-135M-Instruct-Q4_1" and chat.version


@pytest.mark.skipif(HAVE_LLAMA, reason="checks the message shown when llama-cpp-python is missing")
def test_missing_runtime_says_how_to_install_it() -> None:
    from clear_rag.providers.gguf import LlamaCppChat

    with pytest.raises(ModelError, match="llama-cpp-python is not installed"):
        LlamaCppChat("model.gguf", name="x", version="1")
