"""The files of an index beside the store: atomic writes, checksums and the manifest.

Every data file of an index (``vectors.npy``, ``ids.json``, the BM25 arrays) is written to a
temporary file of its own in the same folder and renamed over the old one, and the manifest is
written last, recording the size and SHA-256 of each data file. The predecessor used fixed
``name.tmp`` names, so two processes writing at once renamed each other's half-written files (one of
nine concurrent ``ask``s crashed on a rename), and it recorded nothing to check a file against, so a
truncated matrix or a shuffled id file was either a traceback or, worse, wrong answers.

The manifest lists the documents in columns (``clear_rag.index.coverage``), which a cold open parses
and compares without a Python step per document. Opening an index checks each file against the
manifest before reading it; anything that does not
match raises :class:`DamagedIndexError`, which names the file and says how to rebuild it.

Hashing every file on every open made a cold ``ask`` or a server's first question pay for reading
the whole index twice (a 100k-chunk store's vectors alone are 100 to 150 MB). So the manifest also
records each file's stat identity as written (size, ``st_mtime_ns``, ``st_ctime_ns``, ``st_ino``),
and a file whose identity on open is the one recorded is trusted without hashing: the bargain git's
index makes. A file whose identity differs is hashed and checked as before, with the same errors.
Any write through the filesystem changes the identity: a rewrite or truncation in place sets
mtime and ctime, a file replaced or copied in has another inode and ctime, and a tool that puts an
old mtime back (``touch -d``, ``cp -p``, ``rsync -a``, a restore from backup) still sets ctime to
now, which no tool can set back. Timestamps are as fine as the filesystem keeps them (1 s on some,
2 s on FAT): a file changed within the same tick it was recorded in would keep its identity, so
``write_manifest`` waits, before it commits, until the filesystem's clock has moved past every
recorded time (the "racily clean" case git handles); a file it could not wait out is recorded
without an identity and hashed on every open.

What the identity cannot see is damage that goes around the filesystem: bit rot on the disk, a
block device written directly, a clock set back before a same-size rewrite, or another program
rewriting a file within the moment between clear-rag's own write and its manifest. Those are found
only by the full check, which hashes every file whatever its identity says: ``clear-rag index
--full``. Manifests written before identities were recorded (no ``"stat"`` key) open as they always
did, every file hashed; reading never rewrites them, and the next ``clear-rag ingest`` records the
identities, as it does for a store copied or restored (``unstamped``, ``restamp``).

Two lock files (``clear_rag.locks``) serialise the writers without making readers wait for them: a
writer holds ``.sync.lock`` for its whole update (a second ``ingest`` waits instead of embedding the
same chunks again) and ``.commit.lock`` only while it replaces the files; a reader holds
``.commit.lock`` shared while it checks and opens them, so it sees one writer's files or the next
one's, never a mixture.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from clear_rag.atomic import replace_file, write_atomic
from clear_rag.errors import StoreError
from clear_rag.index import coverage
from clear_rag.index.coverage import Coverage

MANIFEST = "manifest.json"
# 1 (no "format" key): written before checksums; still read, checked by row counts only. 2: an object
# per document; still read. 3: the documents in columns (``clear_rag.index.coverage``).
FORMAT = 3
STAT_FIELDS = ("bytes", "mtime_ns", "ctime_ns", "inode")  # a file's identity, as "stat" records it
TICK_WAIT_S = 2.5  # the longest wait for the filesystem's clock to move past a recorded time (FAT: 2 s)
REBUILD = "Run `clear-rag ingest PATH` or `clear-rag index --rebuild` to rebuild it from the store"


class DamagedIndexError(StoreError):
    """An index file that does not match its manifest: truncated, garbled, shuffled or missing."""

    def __init__(self, label: str, directory: Path, file: str, problem: str) -> None:
        super().__init__(f"the {label} index is damaged ({problem})", path=str(directory / file), fix=REBUILD)
        self.label, self.directory, self.file, self.problem = label, directory, file, problem

    @property
    def reason(self) -> str:
        """The damage in a few words, naming the file: ``bm25.json: checksum mismatch``."""
        return f"{self.file}: {self.problem}"


@dataclass(frozen=True, slots=True)
class Manifest:
    """What an index covers: per document the version it indexed and the chunk ids it holds (or,
    for a document left out, why), in columns (``clear_rag.index.coverage``), and the size and
    SHA-256 of each data file as written."""

    settings: dict[str, Any]
    coverage: Coverage
    files: dict[str, dict[str, Any]] | None  # None in a manifest written before checksums
    stats: dict[str, dict[str, int]] | None = None  # None in one written before identities were recorded
    format: int = FORMAT  # as read: 1 and 2 held an object per document, which ``sync`` rewrites
    store_digest: str | None = None  # of the store's documents it was written for (``StoreDocuments``)

    @property
    def documents(self) -> dict[str, dict[str, Any]]:
        """Per document, ``{"version": ..., "chunks": [...]}`` and ``"missing"`` for one left out
        (built on each call: a question's checks use ``versions`` and ``chunk_ids``)."""
        return self.coverage.documents()

    def versions(self) -> dict[str, str]:
        """Each document's version as the index holds it (left-out documents too)."""
        return self.coverage.version_of()

    def chunk_ids(self) -> set[str]:
        return set(self.coverage.chunks)

    def missing(self) -> dict[str, str]:
        """The documents left out of the index, each with the reason."""
        return dict(sorted(self.coverage.missing.items()))


def read_manifest(directory: Path, label: str, data_files: tuple[str, ...]) -> Manifest | None:
    """The manifest of the index in ``directory``; ``None`` when there is no index there at all.

    Data files without a manifest are damage (a manifest deleted or never committed), not an
    absent index: saying "no index" would hide the files a rebuild is about to replace.
    """
    path = directory / MANIFEST
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        if any((directory / name).exists() for name in data_files):
            raise DamagedIndexError(label, directory, MANIFEST, "file missing") from None
        return None
    except (OSError, UnicodeDecodeError) as err:
        raise DamagedIndexError(label, directory, MANIFEST, f"unreadable ({err})") from err
    try:
        data = json.loads(text)
    except ValueError:
        raise DamagedIndexError(label, directory, MANIFEST, "not valid JSON") from None
    covered = _coverage(data)
    if covered is None or not _well_formed(data):
        raise DamagedIndexError(label, directory, MANIFEST, "not an index manifest") from None
    settings, layout = data.get("settings", {}), data.get("format", 1)
    return Manifest(settings, covered, data.get("files"), data.get("stat"), layout, data.get("store"))


def _coverage(data: object) -> Coverage | None:
    """The documents of a manifest in columns, from either layout; ``None`` if they are malformed."""
    if not isinstance(data, dict):
        return None
    if data.get("format") == FORMAT:
        return coverage.from_json(data.get("columns"))
    if "columns" in data or not coverage.documents_well_formed(data.get("documents")):
        return None
    return coverage.from_documents(data["documents"])


def _well_formed(data: dict[str, Any]) -> bool:
    """Whether the rest of ``data`` (its files and their identities) has the shape it is written in."""
    files, stats = data.get("files"), data.get("stat")
    if not isinstance(data.get("store", ""), str):
        return False
    if stats is not None and not (
        isinstance(stats, dict)
        and all(
            isinstance(v, dict) and all(isinstance(v.get(k), int) for k in STAT_FIELDS)
            for v in stats.values()
        )
    ):
        return False
    if data.get("format") in (2, FORMAT):
        return isinstance(files, dict) and all(
            isinstance(v, dict) and isinstance(v.get("bytes"), int) and isinstance(v.get("sha256"), str)
            for v in files.values()
        )
    return "format" not in data and files is None


def check_files(
    directory: Path, manifest: Manifest, data_files: tuple[str, ...], label: str, *, full: bool = False
) -> None:
    """Each data file as the manifest recorded it: present, the same size, the same SHA-256. A file
    whose stat identity is the one recorded is taken as written without hashing it, unless ``full``."""
    if manifest.files is None:
        return  # an index from before checksums: its row counts are still checked on open
    for name in data_files:
        recorded = manifest.files.get(name)
        if recorded is None:
            raise DamagedIndexError(label, directory, MANIFEST, f"it records no checksum of {name}")
        identity = (manifest.stats or {}).get(name)
        if not full and identity is not None and identity["bytes"] == recorded["bytes"]:
            try:
                if stat_identity(os.stat(directory / name)) == identity:
                    continue
            except OSError:
                pass  # hashed below, which names what is wrong with it
        try:
            found = digest(directory / name)
        except FileNotFoundError:
            raise DamagedIndexError(label, directory, name, "file missing") from None
        except OSError as err:
            raise DamagedIndexError(label, directory, name, f"unreadable ({err})") from err
        if found["bytes"] < recorded["bytes"]:
            problem = f"shorter than written: {found['bytes']} of {recorded['bytes']} bytes"
            raise DamagedIndexError(label, directory, name, problem)
        if found != recorded:
            raise DamagedIndexError(label, directory, name, "checksum mismatch")


def digest(path: Path) -> dict[str, Any]:
    """A file's size and SHA-256, as the manifest records them."""
    with path.open("rb") as fh:
        sha = hashlib.file_digest(fh, "sha256").hexdigest()
        return {"bytes": fh.tell(), "sha256": sha}


def stat_identity(found: os.stat_result) -> dict[str, int]:
    """What of a file's ``stat`` any write through the filesystem changes, as the manifest records it."""
    return {
        "bytes": found.st_size,
        "mtime_ns": found.st_mtime_ns,
        "ctime_ns": found.st_ctime_ns,
        "inode": found.st_ino,
    }


def _recorded(path: Path) -> tuple[dict[str, Any], dict[str, int] | None]:
    """``path``'s digest and its stat identity as it was while hashed (``None`` if it changed meanwhile:
    something else is writing it, so only its hash may vouch for it)."""
    with path.open("rb") as fh:
        before = os.fstat(fh.fileno())
        sha = hashlib.file_digest(fh, "sha256").hexdigest()
        size, after = fh.tell(), os.fstat(fh.fileno())
    identity = stat_identity(before)
    return {"bytes": size, "sha256": sha}, identity if identity == stat_identity(after) else None


def clock_past(directory: Path, newest_ns: int, wait_s: float = TICK_WAIT_S) -> bool:
    """Whether the filesystem's clock in ``directory`` has moved past ``newest_ns``, waiting for it up
    to ``wait_s``. The clock is read as a file's times are set: a probe file touched and stat'ed
    (a temporary file, removed after, or by ``remove_leftovers`` if this process is killed)."""
    handle, name = tempfile.mkstemp(prefix=".clock.", suffix=".tmp", dir=directory)
    os.close(handle)
    probe, deadline = Path(name), time.monotonic() + wait_s
    try:
        while True:
            os.utime(probe)  # both times to the filesystem's now, at its granularity
            now = os.stat(probe)
            if min(now.st_mtime_ns, now.st_ctime_ns) > newest_ns:
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.001)
    finally:
        with contextlib.suppress(OSError):
            probe.unlink()


def write_manifest(
    directory: Path,
    settings: dict[str, Any],
    documents: dict[str, dict[str, Any]],
    data_files: tuple[str, ...],
    *,
    store_digest: str | None = None,
) -> None:
    """Record the data files as they are now on disk, then commit the manifest (atomically, last:
    a crash before this rename leaves files the old manifest does not match, which the next
    ``ingest`` finds and rebuilds). ``store_digest``: that of the store's documents whose versions
    ``documents`` records, every one of them (``clear_rag.index.places.StoreDocuments``)."""
    recorded = {name: _recorded(directory / name) for name in data_files}
    _commit(directory, settings, documents, recorded, store_digest)


def unstamped(directory: Path, manifest: Manifest, data_files: tuple[str, ...]) -> bool:
    """Whether opening this index hashes files ``restamp`` could spare it: its manifest was written
    before identities were recorded, or a file's identity is not the one recorded (a store copied or
    restored from a backup, whose files may still be as written; the hash decides)."""
    if manifest.stats is None:
        return True
    for name, identity in manifest.stats.items():
        try:
            if name in data_files and stat_identity(os.stat(directory / name)) != identity:
                return True
        except OSError:
            return True
    return False


def restamp(
    directory: Path, manifest: Manifest, data_files: tuple[str, ...], store_digest: str | None = None
) -> bool:
    """Record the identities the data files have now (``unstamped``), if each still has the size and
    SHA-256 recorded; ``False``, and nothing written, if one does not (the next open finds and names
    the damage): a restamp never blesses a file the manifest did not."""
    try:
        recorded = {name: _recorded(directory / name) for name in data_files}
    except OSError:
        return False
    if manifest.files is None or any(
        found != manifest.files.get(name) for name, (found, _) in recorded.items()
    ):
        return False
    _commit(directory, manifest.settings, manifest.documents, recorded, store_digest)
    return True


def _commit(
    directory: Path,
    settings: dict[str, Any],
    documents: dict[str, dict[str, Any]],
    recorded: dict[str, tuple[dict[str, Any], dict[str, int] | None]],
    store_digest: str | None,
) -> None:
    files = {name: found for name, (found, _) in recorded.items()}
    stats = {name: identity for name, (_, identity) in recorded.items() if identity is not None}
    newest = max((max(i["mtime_ns"], i["ctime_ns"]) for i in stats.values()), default=None)
    if newest is not None and not clock_past(directory, newest):
        # a same-tick rewrite of these would keep their identity: let only their hashes vouch for them
        stats = {}
    columns = coverage.from_documents(documents).to_json()
    body = {"format": FORMAT, "settings": settings, "columns": columns, "files": files, "stat": stats}
    if store_digest is not None:
        body["store"] = store_digest
    write_atomic(directory / MANIFEST, json.dumps(body, sort_keys=True))


def write_array(path: Path, array: npt.NDArray[Any]) -> None:
    """``array`` to ``path`` as ``.npy``, replaced atomically like every index file."""
    replace_file(path, lambda out: np.save(out, array, allow_pickle=False))


NARROW = (np.uint8, np.uint16, np.uint32, np.int64)  # the integer types counts are stored in, narrowest first


def narrowest(counts: npt.NDArray[np.integer[Any]]) -> npt.NDArray[np.integer[Any]]:
    """``counts`` (integers >= 0) in the narrowest of ``NARROW`` that holds their largest, as index
    files store them: a posting's document row fits 4 bytes below 4.3 billion documents and its term
    frequency usually 1 or 2, where the arrays in memory use 8 each. Reading widens them back
    (``astype``), value for value."""
    largest = int(counts.max()) if counts.size else 0
    if counts.size and int(counts.min()) < 0:
        raise ValueError(f"narrowest() stores counts, and {int(counts.min())} is negative")
    kind = next(t for t in NARROW if largest <= np.iinfo(t).max)
    return counts.astype(kind, copy=False)


def remove_leftovers(directory: Path) -> None:
    """Delete temporary files a killed writer left behind; call it holding the sync lock, when no
    other writer can be halfway through one."""
    for leftover in directory.glob(".*.tmp"):
        with contextlib.suppress(OSError):
            leftover.unlink()
