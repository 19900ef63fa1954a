"""Index files are written atomically under names of their own, and checked against the manifest."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from clear_rag.index import files
from clear_rag.index.files import (
    MANIFEST,
    DamagedIndexError,
    check_files,
    digest,
    read_manifest,
    remove_leftovers,
    write_array,
    write_manifest,
)
from clear_rag.locks import locked

DATA = ("a.npy", "b.json")


@pytest.fixture
def index_dir(tmp_path: Path) -> Path:
    write_array(tmp_path / "a.npy", np.arange(12, dtype=np.float32).reshape(3, 4))
    (tmp_path / "b.json").write_text('["x", "y", "z"]', encoding="utf-8")
    documents = {"d": {"version": "v1", "chunks": ["x", "y", "z"]}}
    write_manifest(tmp_path, {"dim": 4}, documents, DATA)
    return tmp_path


def _check(directory: Path) -> None:
    manifest = read_manifest(directory, "test", DATA)
    assert manifest is not None
    check_files(directory, manifest, DATA, "test")


def test_a_written_index_passes_its_check(index_dir: Path) -> None:
    _check(index_dir)
    manifest = read_manifest(index_dir, "test", DATA)
    assert manifest is not None and manifest.files is not None
    assert manifest.files["a.npy"] == digest(index_dir / "a.npy")
    assert manifest.chunk_ids() == {"x", "y", "z"} and manifest.missing() == {}


def test_write_array_leaves_no_temporary_file_and_a_readable_array(tmp_path: Path) -> None:
    write_array(tmp_path / "m.npy", np.eye(3, dtype=np.float32))
    assert [p.name for p in tmp_path.iterdir()] == ["m.npy"]
    assert np.load(tmp_path / "m.npy").tolist() == np.eye(3).tolist()
    assert (tmp_path / "m.npy").stat().st_mode & 0o777 == 0o644


def test_two_writers_of_one_file_never_share_a_temporary_name(tmp_path: Path) -> None:
    """The predecessor wrote every process's array to ``vectors.npy.tmp``: one writer's rename moved
    the other's half-written file, or found its own gone."""
    errors: list[BaseException] = []

    def write(value: float) -> None:
        try:
            for _ in range(30):
                write_array(tmp_path / "m.npy", np.full((64, 64), value, dtype=np.float32))
        except BaseException as err:  # collected here, failed on by the assert below
            errors.append(err)

    threads = [threading.Thread(target=write, args=(float(v),)) for v in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    final = np.load(tmp_path / "m.npy")
    assert len(set(final.ravel().tolist())) == 1  # one writer's whole array, never a mixture
    assert [p.name for p in tmp_path.iterdir()] == ["m.npy"]


@pytest.mark.parametrize(
    ("damage", "file", "problem"),
    [
        (
            lambda d: (d / "a.npy").write_bytes((d / "a.npy").read_bytes()[:100]),
            "a.npy",
            "shorter than written: 100 of 176 bytes",
        ),
        (
            lambda d: (d / "b.json").write_text('["z", "y", "x"]', encoding="utf-8"),
            "b.json",
            "checksum mismatch",
        ),
        (lambda d: (d / "b.json").unlink(), "b.json", "file missing"),
        (lambda d: (d / MANIFEST).write_text("{not json", encoding="utf-8"), MANIFEST, "not valid JSON"),
        (
            lambda d: (d / MANIFEST).write_text('{"documents": []}', encoding="utf-8"),
            MANIFEST,
            "not an index manifest",
        ),
        (lambda d: (d / MANIFEST).unlink(), MANIFEST, "file missing"),
        (lambda d: (d / MANIFEST).write_bytes(b"\xff\xfe"), MANIFEST, None),
    ],
    ids=["truncated", "shuffled", "deleted", "manifest-garbage", "manifest-shape", "manifest-gone", "binary"],
)
def test_each_damage_names_its_file(
    index_dir: Path, damage: Callable[[Path], object], file: str, problem: str | None
) -> None:
    damage(index_dir)
    with pytest.raises(DamagedIndexError) as caught:
        _check(index_dir)
    assert caught.value.file == file
    if problem is not None:
        assert caught.value.problem == problem
        assert caught.value.reason == f"{file}: {problem}"
    assert str(caught.value).startswith(f"{index_dir / file}: the test index is damaged (")
    assert str(caught.value).endswith(files.REBUILD)


def test_no_manifest_and_no_files_is_no_index(tmp_path: Path) -> None:
    assert read_manifest(tmp_path / "nowhere", "test", DATA) is None
    assert read_manifest(tmp_path, "test", DATA) is None


def test_a_manifest_from_before_checksums_is_read_and_not_checksummed(tmp_path: Path) -> None:
    (tmp_path / "a.npy").write_bytes(b"anything")
    old = {"settings": {"dim": 4}, "documents": {"d": {"version": "v1", "chunks": ["x"]}}}
    (tmp_path / MANIFEST).write_text(json.dumps(old), encoding="utf-8")
    manifest = read_manifest(tmp_path, "test", DATA)
    assert manifest is not None and manifest.files is None
    check_files(tmp_path, manifest, DATA, "test")  # nothing to check against: the ids are checked later


def test_leftover_temporary_files_are_removed(index_dir: Path) -> None:
    (index_dir / ".a.npy.x1y2.tmp").write_bytes(b"half")
    remove_leftovers(index_dir)
    assert not list(index_dir.glob(".*.tmp"))
    _check(index_dir)


def test_a_shared_lock_waits_for_an_exclusive_one(tmp_path: Path) -> None:
    order: list[str] = []
    entered = threading.Event()
    release = threading.Event()

    def writer() -> None:
        with locked(tmp_path, "commit"):
            entered.set()
            release.wait(5)
            order.append("writer")

    thread = threading.Thread(target=writer)
    thread.start()
    entered.wait(5)

    def read() -> None:
        with locked(tmp_path, "commit", shared=True):
            order.append("reader")  # the writer appends before it lets go of the lock

    reader = threading.Thread(target=read)
    reader.start()
    release.set()
    thread.join()
    reader.join()
    assert order == ["writer", "reader"]


def test_a_lock_in_a_missing_folder_is_no_lock(tmp_path: Path) -> None:
    with locked(tmp_path / "nowhere", "commit", shared=True):
        pass
