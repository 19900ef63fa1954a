"""The committed file of generations that feed a result (``clear_rag.generate.cache``), keyed by (model
fingerprint, messages, options): read, merged with what another process saved, and written.

The file, written with sorted keys and two-space indents so that the same entries always give the
same bytes::

    {
      "format": 1,
      "generations": {
        "<sha256 of the key material>": {
          "fingerprint": "sha256:...",
          "messages": [{"content": "...", "role": "system"}, ...],
          "model": "SmolLM2-135M-Instruct-Q4_1@0.1.2",
          "options": {"max_tokens": 120, "temperature": 0.0},
          "text": "..."
        }
      }
    }
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from clear_rag.atomic import write_atomic
from clear_rag.errors import StoreError
from clear_rag.providers.base import Message

try:
    import fcntl
except ImportError:  # Windows: no flock; one writer at a time is then up to the caller
    fcntl = None  # type: ignore[assignment]

FORMAT = 1


def _canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def plain_options(options: Mapping[str, object]) -> dict[str, Any]:
    """``options`` as JSON gives them back (tuples become lists), so a loaded entry equals a new one."""
    for name, value in options.items():
        try:
            _canonical(value)
        except (TypeError, ValueError) as err:
            raise TypeError(
                f"option {name}={value!r} cannot be cached ({err}); pass numbers, strings, "
                "booleans, None, or lists of them"
            ) from None
    plain: dict[str, Any] = json.loads(_canonical(dict(options)))
    return plain


def generation_key(fingerprint: str, messages: Sequence[Message], options: Mapping[str, object]) -> str:
    """The hex SHA-256 of ``[fingerprint, [[role, content], ...], options]`` as canonical JSON.

    Every option given is part of the key, whether or not the model uses it: a model told
    ``max_tokens=64`` and one told ``max_tokens=120`` may write different text. Canonical means sorted
    keys, no spaces and UTF-8, so the key does not depend on the order the options were passed in.
    Note that ``temperature=0`` and ``temperature=0.0`` are different keys.
    """
    material = [fingerprint, [[m.role, m.content] for m in messages], plain_options(options)]
    return hashlib.sha256(_canonical(material).encode("utf-8")).hexdigest()


@dataclasses.dataclass(frozen=True, slots=True)
class Generation:
    """One cached generation: which model wrote ``text``, asked what, with which options."""

    model: str  # describe(chat): what a person reads
    fingerprint: str  # what the key is made of
    messages: tuple[Message, ...]
    options: Mapping[str, Any]
    text: str

    @property
    def key(self) -> str:
        return generation_key(self.fingerprint, self.messages, self.options)

    def record(self) -> dict[str, Any]:
        """The entry as the file holds it."""
        return {
            "model": self.model,
            "fingerprint": self.fingerprint,
            "messages": [{"role": m.role, "content": m.content} for m in self.messages],
            "options": plain_options(self.options),
            "text": self.text,
        }


def _from_record(record: Any, key: str, path: Path) -> Generation:
    where = {"path": str(path), "field": f"generations.{key}"}
    try:
        turns = tuple(Message(m["role"], m["content"]) for m in record["messages"])
        fields = (record["model"], record["fingerprint"], record["text"], *(m.content for m in turns))
        if not all(isinstance(f, str) for f in fields) or not isinstance(record["options"], dict):
            raise TypeError("a field is not a string, or options not an object")
        generation = Generation(
            record["model"], record["fingerprint"], turns, record["options"], record["text"]
        )
    except (KeyError, TypeError, ValueError) as err:
        raise StoreError(
            "is not an entry of model, fingerprint, messages (a list of role and content), options "
            f"and text ({type(err).__name__}: {err})",
            **where,
            fix="Restore the file from git, or delete it and run with --regenerate",
        ) from None
    if generation.key != key:
        raise StoreError(
            "the key does not match the entry's fingerprint, messages and options (edited by hand?)",
            **where,
            fix="Restore the file from git, or delete the entry and run again to generate it",
        )
    return generation


def read_generations(path: Path) -> dict[str, Generation]:
    """The entries of one cache file by key; a missing file holds none."""
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as err:
        raise StoreError(f"cannot be read ({err})", path=str(path), fix="Check its permissions") from err
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as err:
        raise StoreError(
            f"is not valid JSON ({err})",
            path=str(path),
            fix="Restore the file from git, or delete it and run with --regenerate",
        ) from err
    if (
        not isinstance(data, dict)
        or data.get("format") != FORMAT
        or not isinstance(data.get("generations"), dict)
    ):
        raise StoreError(
            f"is not a generation cache of format {FORMAT}",
            path=str(path),
            fix="Check the path; a cache written by another version of clear-rag must be regenerated",
        )
    return {key: _from_record(record, key, path) for key, record in data["generations"].items()}


class GenerationCache:
    """The generations of one file, looked up by key; optionally backed by read-only fallback files.

    ``get`` looks in the file first, then in each fallback in order (for instance the committed copy
    of a file a run writes elsewhere). ``put`` adds to or replaces in the file only. ``save`` writes
    the file if anything was added or changed since it was read or last saved, atomically (a
    temporary file beside it, then ``os.replace``), so a crash never leaves half a file. Every method
    may be called from several threads, and ``save`` from several processes at once: it merges what
    another process saved since this one read the file (``_merged``).
    """

    def __init__(self, path: str | Path, *, fallbacks: Sequence[str | Path] = ()) -> None:
        self.path = Path(path)
        self._entries = read_generations(self.path)
        self._fallbacks = [read_generations(Path(p)) for p in fallbacks]
        self._dirty = False
        self._put: set[str] = set()  # keys added or changed here since the last save
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    @property
    def dirty(self) -> bool:
        """Whether the file on disk lacks something ``put`` was given."""
        with self._lock:
            return self._dirty

    def get(self, key: str) -> Generation | None:
        with self._lock:
            for entries in (self._entries, *self._fallbacks):
                if key in entries:
                    return entries[key]
            return None

    def put(self, generation: Generation) -> None:
        """Hold ``generation`` in the file; storing what the file already holds changes nothing."""
        key = generation.key
        with self._lock:
            held = self._entries.get(key)
            if held is None or held.record() != generation.record():
                self._entries[key] = generation
                self._put.add(key)
                self._dirty = True

    def save(self) -> bool:
        """Write the file if something was added or changed; whether it was written."""
        with self._lock:
            if not self._dirty:
                return False
            with _folder_locked(self.path.parent):
                self._entries = self._merged()
                document = {
                    "format": FORMAT,
                    "generations": {key: entry.record() for key, entry in self._entries.items()},
                }
                text = json.dumps(document, sort_keys=True, ensure_ascii=False, indent=2, allow_nan=False)
                write_atomic(self.path, text + "\n")
            self._dirty = False
            self._put.clear()
            return True

    def _merged(self) -> dict[str, Generation]:
        """The file as it is now, with what was put here since the last save over it.

        Evaluation partitions run side by side (``python -m assets.run --executor multiprocess``) each
        read the file, add their own generations and save; writing only what one process held would
        drop what another saved in between (a lost update).
        """
        return {**read_generations(self.path), **{key: self._entries[key] for key in self._put}}


@contextlib.contextmanager
def _folder_locked(folder: Path) -> Iterator[None]:
    """An exclusive ``flock`` on ``folder`` itself for the block: the cache file is replaced by a
    rename, so a lock on the file would be a lock on an inode that no longer has the name."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(folder, os.O_RDONLY) if fcntl is not None else None
    except OSError:
        fd = None  # the write that follows fails with a message that names the folder
    if fd is None or fcntl is None:
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock
