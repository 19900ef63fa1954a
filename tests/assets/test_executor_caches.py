"""What evaluation partitions side by side (``--executor multiprocess``) write to the same files: the
generation cache of their suite. Each process reads it, adds its own generations and saves; none may
drop what another saved (a lost update), and a file is never half written."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

from clear_rag.generate.generations import Generation, GenerationCache, read_generations
from clear_rag.providers.base import Message


def _generation(name: str) -> Generation:
    return Generation("echo", "sha256:echo", (Message("user", name),), {"max_tokens": 8}, f"text of {name}")


def test_a_save_keeps_what_another_writer_saved_since_this_one_read(tmp_path: Path) -> None:
    path = tmp_path / "generations" / "suite.json"
    first, second = GenerationCache(path), GenerationCache(path)  # both read the file before either saves
    first.put(_generation("a"))
    second.put(_generation("b"))
    assert first.save() and second.save()
    assert {g.text for g in read_generations(path).values()} == {"text of a", "text of b"}
    # What one process changed wins over the older copy on disk; nothing else it held is written back.
    changed = _generation("a")
    again = GenerationCache(path)
    again.put(Generation(changed.model, changed.fingerprint, changed.messages, changed.options, "new"))
    assert again.save()
    assert {g.text for g in read_generations(path).values()} == {"new", "text of b"}
    assert not again.save()  # nothing put since


def _add(path: str, worker: int, count: int) -> None:
    cache = GenerationCache(path)
    for n in range(count):
        cache.put(_generation(f"{worker}-{n}"))
        cache.save()


def test_processes_saving_at_once_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "generations" / "suite.json"
    spawn = multiprocessing.get_context("spawn")
    workers = [spawn.Process(target=_add, args=(str(path), w, 15)) for w in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
        assert worker.exitcode == 0
    held = {g.text for g in read_generations(path).values()}
    assert held == {f"text of {w}-{n}" for w in range(3) for n in range(15)}
    assert [p.name for p in path.parent.iterdir()] == ["suite.json"]  # no temporary or lock file left
