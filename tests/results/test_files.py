"""The one writer of result files: whole or not at all, readable, and errors that name the file."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from clear_rag.atomic import write_atomic
from clear_rag.errors import InputError, StoreError
from clear_rag.results.files import read_result, write_result


def test_a_result_is_written_whole_and_readable_by_others(tmp_path: Path) -> None:
    target = tmp_path / "results" / "toy.json"
    write_result(target, {"file": "toy", "rows": []})
    assert read_result(target) == {"file": "toy", "rows": []}
    assert target.stat().st_mode & 0o777 == 0o644  # not mkstemp's private 0600
    target.chmod(0o640)
    write_result(target, {"file": "toy", "rows": [{"name": "a"}]})
    assert target.stat().st_mode & 0o777 == 0o640  # a file replaced keeps its mode
    assert [p.name for p in target.parent.iterdir()] == ["toy.json"]  # no temporary file left


def test_a_failed_write_keeps_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "toy.json"
    write_atomic(target, "old\n")

    def broken(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(StoreError, match=r"toy\.json: cannot be written .*the old file is unchanged"):
        write_atomic(target, "new\n")
    assert target.read_text() == "old\n" and [p.name for p in tmp_path.iterdir()] == ["toy.json"]


def test_reading_names_the_file_and_the_command_that_writes_it(tmp_path: Path) -> None:
    with pytest.raises(
        InputError, match=r"nope\.json: does not exist.*clear-rag ablate SUITE --save-results"
    ):
        read_result(tmp_path / "nope.json")
    (tmp_path / "bad.json").write_text("{", encoding="utf-8")
    with pytest.raises(InputError, match=r"bad\.json: cannot be read as JSON"):
        read_result(tmp_path / "bad.json")
    (tmp_path / "other.json").write_text(json.dumps({"suite": "x"}), encoding="utf-8")
    with pytest.raises(InputError, match=r"other\.json: is not a result file"):
        read_result(tmp_path / "other.json")
