"""Opening an index trusts a file whose stat identity is as its manifest recorded it, and hashes any other.

The damage cases of ``test_files.py`` run here as a property over where and how a file is changed
after its manifest was written: whatever the change, the quick check on open finds it, unless it
left size, times and inode as recorded, which only the full check (``full=True``) sees through.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clear_rag.chunk.base import Chunker
from clear_rag.index import bm25, files
from clear_rag.index.files import (
    MANIFEST,
    DamagedIndexError,
    Manifest,
    check_files,
    clock_past,
    read_manifest,
    restamp,
    stat_identity,
    unstamped,
    write_array,
    write_manifest,
)
from clear_rag.index.places import keyword_place, load_keyword
from clear_rag.index.sync import keyword_index
from clear_rag.ingest import ingest
from clear_rag.store import Store

DATA = ("a.npy", "b.json")
DOCUMENTS = {"d": {"version": "v1", "chunks": ["x", "y", "z"]}}


def make_index(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    write_array(directory / "a.npy", np.arange(48, dtype=np.float32).reshape(12, 4))
    (directory / "b.json").write_text('["x", "y", "z"]', encoding="utf-8")
    write_manifest(directory, {"dim": 4}, DOCUMENTS, DATA)
    return directory


@pytest.fixture
def index_dir(tmp_path: Path) -> Path:
    return make_index(tmp_path / "index")


def manifest_of(directory: Path) -> Manifest:
    manifest = read_manifest(directory, "test", DATA)
    assert manifest is not None
    return manifest


@pytest.fixture
def hashed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the files ``check_files`` hashes, in order."""
    seen: list[str] = []
    real = files.digest

    def counting(path: Path) -> dict[str, Any]:
        seen.append(path.name)
        return real(path)

    monkeypatch.setattr(files, "digest", counting)
    return seen


def test_a_file_whose_identity_matches_is_not_hashed_on_open(index_dir: Path, hashed: list[str]) -> None:
    manifest = manifest_of(index_dir)
    assert manifest.stats is not None and set(manifest.stats) == set(DATA)
    check_files(index_dir, manifest, DATA, "test")
    assert hashed == []
    check_files(index_dir, manifest, DATA, "test", full=True)
    assert hashed == list(DATA)


def test_the_recorded_identity_is_the_files_and_older_than_the_manifest(index_dir: Path) -> None:
    """Every recorded time is before the manifest's own: the filesystem's clock had moved past the
    files before the manifest committed, so no later write can give a file the recorded times back."""
    manifest = manifest_of(index_dir)
    assert manifest.stats is not None
    committed = (index_dir / MANIFEST).stat().st_mtime_ns
    for name in DATA:
        assert manifest.stats[name] == stat_identity((index_dir / name).stat())
        assert max(manifest.stats[name]["mtime_ns"], manifest.stats[name]["ctime_ns"]) < committed


def test_files_the_clock_could_not_get_past_are_recorded_without_identity(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hashed: list[str]
) -> None:
    monkeypatch.setattr(files, "clock_past", lambda directory, newest: False)
    directory = make_index(tmp_path / "index")
    assert manifest_of(directory).stats == {}
    check_files(directory, manifest_of(directory), DATA, "test")
    assert sorted(hashed) == sorted(DATA)  # a same-tick rewrite of them would keep their identity


def _overwrite_in_place(path: Path, offset: int, value: int) -> None:
    """Bytes changed where they lie (same file, same inode, same size), as an editor or a disk tool."""
    with path.open("r+b") as fh:
        fh.seek(offset % path.stat().st_size)
        old = fh.read(1)
        fh.seek(offset % path.stat().st_size)
        fh.write(bytes([old[0] ^ value]))


def _restore_times(path: Path, before: os.stat_result) -> None:
    """Put the file's old access and modification times back, as ``touch -r`` or ``rsync -a`` would."""
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


DAMAGE = ("in place", "in place, mtime restored", "truncated", "appended", "replaced", "swapped", "deleted")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    damage=st.sampled_from(DAMAGE),
    name=st.sampled_from(DATA),
    offset=st.integers(min_value=0, max_value=10_000),
    value=st.integers(min_value=1, max_value=255),
)
def test_any_change_through_the_filesystem_is_caught_on_open(
    tmp_path_factory: pytest.TempPathFactory, damage: str, name: str, offset: int, value: int
) -> None:
    directory = make_index(tmp_path_factory.mktemp("index"))
    path, other = directory / name, directory / next(n for n in DATA if n != name)
    before = path.stat()
    if damage.startswith("in place"):
        _overwrite_in_place(path, offset, value)
        if damage.endswith("restored"):
            _restore_times(path, before)
            assert path.stat().st_mtime_ns == before.st_mtime_ns and path.stat().st_size == before.st_size
    elif damage == "truncated":
        os.truncate(path, offset % before.st_size)
    elif damage == "appended":
        with path.open("ab") as fh:
            fh.write(bytes([value]))
    elif damage == "replaced":  # a copy of the file with one byte changed, renamed over it, times restored
        changed = bytearray(path.read_bytes())
        changed[offset % len(changed)] ^= value
        copy = directory / "copy"
        copy.write_bytes(bytes(changed))
        _restore_times(copy, before)
        os.replace(copy, path)
    elif damage == "swapped":
        data = path.read_bytes()
        path.write_bytes(other.read_bytes())
        other.write_bytes(data)
    else:
        path.unlink()
    with pytest.raises(DamagedIndexError) as caught:
        check_files(directory, manifest_of(directory), DATA, "test")
    assert caught.value.file in DATA
    expected = {
        "truncated": f"shorter than written: {offset % before.st_size} of {before.st_size} bytes",
        "deleted": "file missing",
    }.get(damage, "checksum mismatch")
    if damage != "swapped":  # a swap of two files is named by the first one checked
        assert caught.value.file == name and caught.value.problem == expected


def test_a_file_rewritten_with_the_same_bytes_is_hashed_and_passes(
    index_dir: Path, hashed: list[str]
) -> None:
    path = index_dir / "b.json"
    path.write_bytes(path.read_bytes())
    check_files(index_dir, manifest_of(index_dir), DATA, "test")
    assert hashed == ["b.json"]


def test_damage_that_keeps_the_identity_fools_the_quick_check_but_not_the_full_one(index_dir: Path) -> None:
    """Bit rot changes the bytes and nothing in ``stat``; here the bytes are changed and the manifest
    given the changed file's identity, which is what the quick check then sees. Documented in files.py."""
    path = index_dir / "a.npy"
    _overwrite_in_place(path, 100, 0xFF)
    body = json.loads((index_dir / MANIFEST).read_text(encoding="utf-8"))
    body["stat"]["a.npy"] = stat_identity(path.stat())
    (index_dir / MANIFEST).write_text(json.dumps(body), encoding="utf-8")
    check_files(index_dir, manifest_of(index_dir), DATA, "test")  # fooled, as the docstring says
    with pytest.raises(DamagedIndexError) as caught:
        check_files(index_dir, manifest_of(index_dir), DATA, "test", full=True)
    assert caught.value.reason == "a.npy: checksum mismatch"


def _without_identities(directory: Path) -> None:
    """The manifest as written before stat identities were recorded (format 2, no "stat")."""
    body = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
    del body["stat"]
    (directory / MANIFEST).write_text(json.dumps(body, sort_keys=True), encoding="utf-8")


def test_a_manifest_without_identities_opens_hashing_every_file_and_is_not_rewritten(
    index_dir: Path, hashed: list[str]
) -> None:
    _without_identities(index_dir)
    written = (index_dir / MANIFEST).read_bytes(), (index_dir / MANIFEST).stat()
    manifest = manifest_of(index_dir)
    assert manifest.stats is None
    check_files(index_dir, manifest, DATA, "test")
    assert sorted(hashed) == sorted(DATA)
    assert (index_dir / MANIFEST).read_bytes() == written[0]
    assert stat_identity((index_dir / MANIFEST).stat()) == stat_identity(written[1])
    (index_dir / "b.json").write_text('["z", "y", "x"]', encoding="utf-8")
    with pytest.raises(DamagedIndexError, match=r"checksum mismatch"):
        check_files(index_dir, manifest_of(index_dir), DATA, "test")


def test_restamp_gives_an_old_manifest_identities_and_never_blesses_a_changed_file(
    index_dir: Path, hashed: list[str]
) -> None:
    _without_identities(index_dir)
    (index_dir / "b.json").write_text('["z", "y", "x"]', encoding="utf-8")
    old = (index_dir / MANIFEST).read_bytes()
    assert restamp(index_dir, manifest_of(index_dir), DATA) is False
    assert (index_dir / MANIFEST).read_bytes() == old
    (index_dir / "b.json").write_text('["x", "y", "z"]', encoding="utf-8")
    assert restamp(index_dir, manifest_of(index_dir), DATA) is True
    manifest = manifest_of(index_dir)
    assert manifest.stats is not None and set(manifest.stats) == set(DATA)
    assert manifest.documents == DOCUMENTS and manifest.settings == {"dim": 4}
    hashed.clear()
    check_files(index_dir, manifest, DATA, "test")
    assert hashed == []


@pytest.mark.parametrize(
    "stat",
    [[], {"a.npy": []}, {"a.npy": {"bytes": 1, "mtime_ns": 2, "ctime_ns": 3}}, {"a.npy": {"bytes": "1"}}],
    ids=["list", "entry-list", "field-missing", "field-text"],
)
def test_a_malformed_identity_is_a_malformed_manifest(index_dir: Path, stat: object) -> None:
    body = json.loads((index_dir / MANIFEST).read_text(encoding="utf-8"))
    body["stat"] = stat
    (index_dir / MANIFEST).write_text(json.dumps(body), encoding="utf-8")
    with pytest.raises(DamagedIndexError) as caught:
        read_manifest(index_dir, "test", DATA)
    assert caught.value.reason == f"{MANIFEST}: not an index manifest"


def test_the_clock_is_read_from_the_filesystem_and_leaves_no_probe(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"x")
    written = (tmp_path / "f").stat()
    assert clock_past(tmp_path, max(written.st_mtime_ns, written.st_ctime_ns))
    assert not clock_past(tmp_path, written.st_mtime_ns + 10**18, wait_s=0)  # thirty years on
    assert [p.name for p in tmp_path.iterdir()] == ["f"]


def test_an_ingest_records_the_identities_an_old_manifest_lacks_without_rewriting_the_index(
    tmp_path: Path, corpus: Path, chunker: Chunker, hashed: list[str]
) -> None:
    with Store(tmp_path / "s", root=tmp_path) as store:
        ingest(store, [corpus], chunker)
        keyword_index(store)
        directory = keyword_place(store, False).directory
        _without_identities(directory)
        data = {name: stat_identity((directory / name).stat()) for name in bm25.FILES}
        keyword_index(store)  # nothing to index: the manifest alone is written again
        manifest = read_manifest(directory, "keyword", bm25.FILES)
        assert manifest is not None and manifest.stats == data
        assert {name: stat_identity((directory / name).stat()) for name in bm25.FILES} == data
        hashed.clear()
        load_keyword(store)
        assert hashed == []


def test_a_copied_store_is_hashed_on_open_until_an_ingest_records_its_files(
    tmp_path: Path, corpus: Path, chunker: Chunker, hashed: list[str]
) -> None:
    """A copy keeps the bytes and the mtimes (copytree copies with copy2) but not inodes or ctimes:
    opening it hashes every file, and a sync with nothing to index records the copy's identities."""
    with Store(tmp_path / "s", root=tmp_path) as store:
        ingest(store, [corpus], chunker)
        keyword_index(store)
    shutil.copytree(tmp_path / "s", tmp_path / "copy")
    with Store(tmp_path / "copy", root=tmp_path) as copy:
        directory = keyword_place(copy, False).directory
        manifest = read_manifest(directory, "keyword", bm25.FILES)
        assert manifest is not None and unstamped(directory, manifest, bm25.FILES)
        load_keyword(copy)
        assert sorted(hashed) == sorted(bm25.FILES)
        _, report = keyword_index(copy)
        assert (report.documents_updated, report.chunks_added, report.rebuilt) == (0, 0, False)
        hashed.clear()
        load_keyword(copy)
        assert hashed == []


def test_identities_left_out_for_a_slow_clock_are_not_retried_by_every_sync(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(files, "clock_past", lambda directory, newest: False)
    directory = make_index(tmp_path / "index")
    assert manifest_of(directory).stats == {}
    assert not unstamped(directory, manifest_of(directory), DATA)
    _without_identities(directory)
    assert unstamped(directory, manifest_of(directory), DATA)
