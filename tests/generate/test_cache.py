"""The generation cache: keys, hits without the model, regeneration counts, deterministic atomic files."""

from __future__ import annotations

import hashlib
import io
import json
import os
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from clear_rag.errors import ModelError, StoreError
from clear_rag.generate.cache import CachedChat, fingerprint_of
from clear_rag.generate.generations import Generation, GenerationCache, generation_key
from clear_rag.generate.queries import expand
from clear_rag.providers.base import ChatModel, Message, describe
from clear_rag.providers.fake import EchoChatModel, ScriptedChatModel

ASK = (Message("system", "Rephrase."), Message("user", "how long are webhook signatures valid"))
OTHER = (Message("system", "Rephrase."), Message("user", "what does the growth plan cost"))


def never_built() -> ChatModel:
    raise AssertionError("the factory was called although every generation was cached")


def scripted(*answers: str) -> ScriptedChatModel:
    chat = ScriptedChatModel()
    for answer in answers:
        chat.enqueue(answer)
    return chat


def generate(chat: ChatModel, messages: tuple[Message, ...] = ASK, **options: object) -> str:
    return "".join(chat.stream(messages, **options))


# --- keys ----------------------------------------------------------------------------------------


def test_the_key_is_the_sha256_of_canonical_json() -> None:
    material = '["echo-chat@1",[["system","Rephrase."],["user","é"]],{"max_tokens":8,"temperature":0.0}]'
    expected = hashlib.sha256(material.encode("utf-8")).hexdigest()
    messages = [Message("system", "Rephrase."), Message("user", "é")]
    assert generation_key("echo-chat@1", messages, {"temperature": 0.0, "max_tokens": 8}) == expected
    assert generation_key("echo-chat@1", messages, {"max_tokens": 8, "temperature": 0.0}) == expected


def test_a_different_fingerprint_message_or_option_is_a_different_key() -> None:
    base = generation_key("sha256:aa", ASK, {"temperature": 0.0, "max_tokens": 64})
    assert generation_key("sha256:bb", ASK, {"temperature": 0.0, "max_tokens": 64}) != base
    assert generation_key("sha256:aa", OTHER, {"temperature": 0.0, "max_tokens": 64}) != base
    assert generation_key("sha256:aa", ASK, {"temperature": 0.0, "max_tokens": 120}) != base
    assert generation_key("sha256:aa", ASK, {"temperature": 0.0, "max_tokens": 64, "seed": 1}) != base
    swapped = (Message("user", "Rephrase."), ASK[1])
    assert generation_key("sha256:aa", swapped, {"temperature": 0.0, "max_tokens": 64}) != base


def test_stop_as_a_tuple_or_a_list_is_one_key_and_an_unjsonable_option_is_named() -> None:
    assert generation_key("f", ASK, {"stop": ("\n",)}) == generation_key("f", ASK, {"stop": ["\n"]})
    with pytest.raises(TypeError, match=r"option seed=\{1\}"):
        generation_key("f", ASK, {"seed": {1}})
    with pytest.raises(TypeError, match="option temperature=nan"):
        generation_key("f", ASK, {"temperature": float("nan")})


def test_fingerprint_of_uses_the_attribute_else_name_at_version() -> None:
    class Bare:
        name, version = "bare", "2"

        def stream(self, messages: object, **options: object) -> object:
            return iter(())

    class Hashed(Bare):
        fingerprint = "sha256:0123"

    assert fingerprint_of(Bare()) == "bare@2"  # type: ignore[arg-type]
    assert fingerprint_of(Hashed()) == "sha256:0123"  # type: ignore[arg-type]
    assert fingerprint_of(EchoChatModel()) == "echo-chat@1"


# --- CachedChat ----------------------------------------------------------------------------------


def test_a_miss_generates_and_stores_and_a_second_run_over_the_saved_file_hits(tmp_path: Path) -> None:
    path = tmp_path / "generations" / "tech.json"
    model = scripted("webhook signature validity window")
    first = CachedChat(model, GenerationCache(path))
    assert generate(first, temperature=0.0) == "webhook signature validity window"
    assert (first.hits, first.misses) == (0, 1)
    assert first.cache.save() is True

    again = scripted()  # nothing queued: a call would raise
    second = CachedChat(again, GenerationCache(path))
    pieces = list(second.stream(ASK, temperature=0.0))
    assert pieces == ["webhook", " signature", " validity", " window"]  # word pieces, like a model's
    assert again.history == []
    assert (second.hits, second.misses) == (1, 0)
    assert second.summary() == "1 generations: 1 from the cache, 0 generated"


def test_another_option_message_or_fingerprint_misses(tmp_path: Path) -> None:
    cache = GenerationCache(tmp_path / "g.json")
    model = scripted("a", "b", "c", "d")
    chat = CachedChat(model, cache)
    generate(chat, temperature=0.0)
    generate(chat, temperature=0.0, max_tokens=64)
    generate(chat, OTHER, temperature=0.0)
    assert len(model.history) == 3 and len(cache) == 3

    model.version = "2"  # ScriptedChatModel's fingerprint is name@version
    moved = CachedChat(model, cache)
    assert generate(moved, temperature=0.0) == "d"
    assert (moved.hits, moved.misses) == (0, 1)


def test_a_factory_is_not_called_when_everything_hits(tmp_path: Path) -> None:
    path = tmp_path / "g.json"
    warm = CachedChat(EchoChatModel(), GenerationCache(path))
    expected = generate(warm, temperature=0.0, max_tokens=120)
    warm.cache.save()

    cold = CachedChat(
        never_built, GenerationCache(path), name="echo-chat", version="1", fingerprint="echo-chat@1"
    )
    protocol: ChatModel = cold  # mypy checks CachedChat against the protocol
    assert generate(protocol, temperature=0.0, max_tokens=120) == expected
    assert not cold.built
    assert describe(cold) == "echo-chat@1" and cold.fingerprint == "echo-chat@1"


def test_a_factory_is_called_once_on_the_first_miss_and_its_fingerprint_checked(tmp_path: Path) -> None:
    built: list[EchoChatModel] = []

    def factory() -> ChatModel:
        built.append(EchoChatModel())
        return built[-1]

    chat = CachedChat(factory, GenerationCache(tmp_path / "g.json"), name="echo-chat", version="1",
                      fingerprint="echo-chat@1")  # fmt: skip
    generate(chat)
    generate(chat, OTHER)
    assert len(built) == 1 and chat.misses == 2

    wrong = CachedChat(factory, GenerationCache(tmp_path / "g.json"), name="echo-chat", version="1",
                       fingerprint="sha256:beef")  # fmt: skip
    with pytest.raises(ModelError, match="fingerprint 'echo-chat@1', not the 'sha256:beef'"):
        wrong.stream(ASK)


def test_a_factory_without_a_fingerprint_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"needs name=, version= and fingerprint=.*fingerprint=None"):
        CachedChat(EchoChatModel, GenerationCache(tmp_path / "g.json"), name="echo-chat", version="1")


def test_an_abandoned_stream_stores_nothing(tmp_path: Path) -> None:
    cache = GenerationCache(tmp_path / "g.json")
    chat = CachedChat(scripted("three word answer"), cache)
    pieces = chat.stream(ASK)
    assert next(pieces) == "three"
    pieces.close()  # type: ignore[attr-defined]
    assert len(cache) == 0 and not cache.dirty and chat.misses == 0
    assert cache.save() is False and not cache.path.exists()


def test_a_model_error_mid_stream_stores_nothing(tmp_path: Path) -> None:
    class Failing(ScriptedChatModel):
        def stream(self, messages: Sequence[Message], **options: object) -> Iterator[str]:
            yield "half"
            raise ModelError("the server broke off", fix="Retry")

    cache = GenerationCache(tmp_path / "g.json")
    chat = CachedChat(Failing(), cache)
    with pytest.raises(ModelError, match="broke off"):
        generate(chat)
    assert len(cache) == 0


def test_regenerate_asks_the_model_every_time_and_counts_changed_texts(tmp_path: Path) -> None:
    path = tmp_path / "g.json"
    first = CachedChat(scripted("same", "before"), GenerationCache(path))
    generate(first)
    generate(first, OTHER)
    first.cache.save()

    model = scripted("same", "after", "new")
    again = CachedChat(model, GenerationCache(path), regenerate=True)
    assert [generate(again), generate(again, OTHER)] == ["same", "after"]
    generate(again, ASK, seed=7)  # not in the cache before: generated, not "changed"
    assert len(model.history) == 3
    assert (again.hits, again.misses, again.changed) == (0, 3, 1)
    assert again.summary() == "3 regenerated: 1 changed"
    again.cache.save()
    assert CachedChat(scripted(), GenerationCache(path)).stream(OTHER).__next__() == "after"


def test_a_fallback_is_read_but_never_written_and_its_hits_join_the_file(tmp_path: Path) -> None:
    committed = tmp_path / "committed.json"
    seed = CachedChat(scripted("from the commit"), GenerationCache(committed))
    generate(seed)
    seed.cache.save()
    before = committed.read_bytes()

    local = GenerationCache(tmp_path / "local.json", fallbacks=[committed, tmp_path / "missing.json"])
    chat = CachedChat(scripted("fresh"), local)
    assert generate(chat) == "from the commit"
    assert generate(chat, OTHER) == "fresh"
    assert local.save() is True
    assert committed.read_bytes() == before
    assert len(GenerationCache(tmp_path / "local.json")) == 2


def test_the_primary_file_wins_over_a_fallback(tmp_path: Path) -> None:
    for name, text in [("primary.json", "mine"), ("fallback.json", "theirs")]:
        cache = GenerationCache(tmp_path / name)
        generate(CachedChat(scripted(text), cache))
        cache.save()
    both = GenerationCache(tmp_path / "primary.json", fallbacks=[tmp_path / "fallback.json"])
    assert generate(CachedChat(scripted(), both)) == "mine"


def test_expansion_through_the_cache_gives_the_models_phrasings(tmp_path: Path) -> None:
    cache = GenerationCache(tmp_path / "g.json")
    direct = expand(EchoChatModel(), "how long are webhook signatures valid", 3)
    assert expand(CachedChat(EchoChatModel(), cache), "how long are webhook signatures valid", 3) == direct
    hit = CachedChat(never_built, cache, name="echo-chat", version="1", fingerprint="echo-chat@1")
    assert expand(hit, "how long are webhook signatures valid", 3) == direct
    assert hit.hits == 1


def test_concurrent_misses_and_hits_are_all_counted(tmp_path: Path) -> None:
    cache = GenerationCache(tmp_path / "g.json")
    chat = CachedChat(EchoChatModel(), cache)
    questions = [(Message("user", f"question number {n} here"),) for n in range(20)]

    def ask_all() -> None:
        for question in questions:
            generate(chat, question)

    threads = [threading.Thread(target=ask_all) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert chat.hits + chat.misses == 80 and len(cache) == 20


# --- the file ------------------------------------------------------------------------------------


def entry(text: str, user: str) -> Generation:
    return Generation("echo-chat@1", "echo-chat@1", (Message("user", user),), {"temperature": 0.0}, text)


def test_the_file_format(tmp_path: Path) -> None:
    cache = GenerationCache(tmp_path / "g.json")
    generation = entry("Signatures last «five» minutes.", "how long?")
    cache.put(generation)
    cache.save()
    raw = (tmp_path / "g.json").read_text(encoding="utf-8")
    assert raw.endswith("}\n") and "«five»" in raw  # UTF-8, not \\u escapes
    assert json.loads(raw) == {
        "format": 1,
        "generations": {
            generation.key: {
                "model": "echo-chat@1",
                "fingerprint": "echo-chat@1",
                "messages": [{"role": "user", "content": "how long?"}],
                "options": {"temperature": 0.0},
                "text": "Signatures last «five» minutes.",
            }
        },
    }


def test_save_is_byte_identical_whatever_order_entries_were_added_in(tmp_path: Path) -> None:
    entries = [entry(f"answer {n}", f"question {n}") for n in range(5)]
    forward, backward = GenerationCache(tmp_path / "a.json"), GenerationCache(tmp_path / "b.json")
    for generation in entries:
        forward.put(generation)
    for generation in reversed(entries):
        backward.put(generation)
    forward.save()
    backward.save()
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()

    reloaded = GenerationCache(tmp_path / "a.json")
    reloaded.put(entries[2])  # already held: nothing to write
    assert reloaded.save() is False


def test_save_writes_only_when_something_changed(tmp_path: Path) -> None:
    path = tmp_path / "g.json"
    cache = GenerationCache(path)
    assert cache.save() is False and not path.exists()
    cache.put(entry("one", "q"))
    assert cache.save() is True
    stamp = path.stat().st_mtime_ns
    assert cache.save() is False and path.stat().st_mtime_ns == stamp
    cache.put(entry("two", "q"))  # same key, other text: a change
    assert cache.dirty and cache.save() is True
    assert GenerationCache(path).get(entry("two", "q").key) == entry("two", "q")


class HalfWriter(io.FileIO):
    """A file that writes half of what it is given, then fails as a full disk does."""

    def write(self, data: Any) -> int:
        super().write(bytes(data)[: len(data) // 2])
        raise OSError(28, "No space left on device")


@pytest.mark.parametrize("broken", ["write", "fsync", "replace"])
def test_a_failed_save_leaves_the_old_file_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, broken: str
) -> None:
    path = tmp_path / "g.json"
    cache = GenerationCache(path)
    cache.put(entry("old", "q"))
    cache.save()
    before = path.read_bytes()
    cache.put(entry("new", "q2"))

    def fail(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    def half_writer(handle: int, mode: str, **kwargs: Any) -> HalfWriter:
        return HalfWriter(handle, "wb")

    monkeypatch.setattr(
        os, "fdopen" if broken == "write" else broken, half_writer if broken == "write" else fail
    )
    with pytest.raises(StoreError, match="No space left"):
        cache.save()
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.json"]  # no temporary file left behind
    assert cache.dirty and cache.save() is True  # nothing was lost: the next save writes it


def test_a_corrupt_file_names_itself_and_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "g.json"
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(StoreError, match=r"g\.json: is not valid JSON.*--regenerate"):
        GenerationCache(path)
    path.write_text('{"format": 99, "generations": {}}', encoding="utf-8")
    with pytest.raises(StoreError, match="not a generation cache of format 1"):
        GenerationCache(path)


def test_an_entry_edited_by_hand_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "g.json"
    cache = GenerationCache(path)
    cache.put(entry("answer", "question"))
    cache.save()
    data = json.loads(path.read_text(encoding="utf-8"))
    (record,) = data["generations"].values()
    record["messages"][0]["content"] = "another question"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(StoreError, match="key does not match"):
        GenerationCache(path)
    for broken in [{**record, "messages": "oops"}, {**record, "text": None}, {"text": "no more"}]:
        data["generations"] = {"k": broken}
        path.write_text(json.dumps(data), encoding="utf-8")
        with pytest.raises(
            StoreError, match=r"generations\.k: is not an entry of model, fingerprint, messages"
        ):
            GenerationCache(path)
