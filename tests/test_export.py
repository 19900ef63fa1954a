"""The static export of the Results view: each file is, byte for byte, what the Results API answers over
HTTP for the same results folder (a toy suite run for real, a hand-made file, and one whose rows are
named with every character a URL or a file name trips on); two exports are the same bytes; a damaged
file fails the export with the API's own message for it."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote, urlencode

import httpx
import pytest
from starlette.applications import Starlette

from clear_rag.errors import ClearRagError
from clear_rag.results.answers import encode
from clear_rag.results.export import LIVE_MODE, STATIC_MODE, export, page_files
from clear_rag.results.files import write_result
from clear_rag.web.results import ResultsApi
from clear_rag.web.serving import serving
from tests.toy import suite_yaml
from tests.web.projects import ODD_ROWS, mini_result, odd_result, results_project

SUITE = suite_yaml("toy", "{name: bm25, set: {retrievers: [keyword]}}", "{name: hybrid}")
ODD_FILE = "odd names, 100% (v2) + x"
STATIC = Path(__file__).resolve().parents[1] / "clear_rag" / "web" / "static"


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """results/ of a toy project (toy.json run for real, mini.json) with an oddly named file beside."""
    folder = results_project(tmp_path_factory.mktemp("export"), SUITE) / "results"
    write_result(folder / f"{ODD_FILE}.json", odd_result())
    return folder


@contextmanager
def api(results_dir: Path) -> Iterator[str]:
    """The Results API over ``results_dir`` on a real server; its base URL."""
    with serving(Starlette(routes=ResultsApi(results_dir).routes())) as url:
        yield f"{url}/api/results"


def answered(url: str, status: int = 200) -> bytes:
    response = httpx.get(url, timeout=60)
    assert response.status_code == status, response.text
    return response.content


@pytest.fixture(scope="module")
def exported(results: Path) -> dict[str, bytes]:
    return export(results)


def test_every_exported_file_is_the_api_answer_byte_for_byte(
    results: Path, exported: dict[str, bytes]
) -> None:
    index = json.loads(exported["index.json"])["files"]
    assert [f["file"] for f in index] == sorted(["toy", "mini", ODD_FILE])
    expected = {"files.json", "index.json"}
    with api(results) as base:
        assert exported["files.json"] == answered(base)
        for place, entry in enumerate(index):
            file, rows = entry["file"], entry["rows"]
            document = json.loads((results / f"{file}.json").read_text(encoding="utf-8"))
            assert rows == [r["name"] for r in document["rows"]]
            at = f"{base}/{quote(file, safe='')}"
            assert exported[f"{place}/document.json"] == answered(at)
            assert exported[f"{place}/questions.json"] == answered(f"{at}/questions")
            for n, pinned in enumerate(rows):
                pinned_at = f"{at}/pinned/{quote(pinned, safe='')}"
                assert exported[f"{place}/pinned/{n}.json"] == answered(pinned_at)
                behind = json.loads(exported[f"{place}/moves/{n}.json"])["rows"]
                assert list(behind) == [r for r in rows if r != pinned]
                for row, by_metric in behind.items():
                    assert list(by_metric) == document["metric_names"]
                    for metric, found in by_metric.items():
                        query = urlencode({"pinned": pinned, "row": row, "metric": metric})
                        # the slice, encoded again, is the answer's bytes: key order and floats survive
                        assert encode(found) == answered(f"{at}/moves?{query}")
                expected |= {f"{place}/pinned/{n}.json", f"{place}/moves/{n}.json"}
            expected |= {f"{place}/document.json", f"{place}/questions.json"}
    assert set(exported) == expected


def test_odd_row_names_never_reach_a_file_name(exported: dict[str, bytes]) -> None:
    index = json.loads(exported["index.json"])["files"]
    odd = next(place for place, f in enumerate(index) if f["file"] == ODD_FILE)
    assert index[odd]["rows"] == [*ODD_ROWS.values(), "__proto__"]
    assert sorted(p for p in exported if p.startswith(f"{odd}/")) == [
        f"{odd}/document.json",
        *(f"{odd}/moves/{n}.json" for n in range(3)),
        *(f"{odd}/pinned/{n}.json" for n in range(3)),
        f"{odd}/questions.json",
    ]
    pinned = json.loads(exported[f"{odd}/pinned/0.json"])
    assert pinned["pinned"] == ODD_ROWS["hybrid"]
    assert [r["name"] for r in pinned["rows"]] == [ODD_ROWS["bm25"], "__proto__", "dense (50%)"]


def test_two_exports_of_the_same_results_are_the_same_bytes(
    results: Path, exported: dict[str, bytes], tmp_path: Path
) -> None:
    assert export(results) == exported
    # the folder's own place is in none of it (the project moved whole: the labels beside results/ too)
    moved = tmp_path / "elsewhere" / "results"
    shutil.copytree(results, moved)
    shutil.copy(results.parent / "golden.yaml", moved.parent / "golden.yaml")
    assert export(moved) == exported
    assert list(exported) == sorted(exported)


def test_no_result_files_is_an_empty_list(tmp_path: Path) -> None:
    assert export(tmp_path) == {"files.json": b'{"files":[]}', "index.json": b'{"files":[]}'}


def api_error(results_dir: Path, path: str, status: int) -> str:
    with api(results_dir) as base:
        message = json.loads(answered(f"{base}{path}", status))["error"]
    assert isinstance(message, str)
    return message


def test_a_damaged_file_fails_with_the_api_message_naming_it(tmp_path: Path) -> None:
    write_result(tmp_path / "mini.json", mini_result())
    (tmp_path / "broken.json").write_text("{", encoding="utf-8")
    with pytest.raises(ClearRagError) as raised:
        export(tmp_path)
    message = " ".join(str(raised.value).split())
    with api(tmp_path) as base:  # the live list answers, with the file left out and said beside it
        listed = json.loads(answered(f"{base}", 200))
    assert [u["file"] for u in listed["unreadable"]] == ["broken"]
    assert listed["unreadable"][0]["error"] in message
    assert "broken.json" in message


def test_a_file_not_in_the_shape_fails_with_the_api_message_naming_it(tmp_path: Path) -> None:
    write_result(tmp_path / "mini.json", mini_result())
    shapeless = mini_result()
    del shapeless["rows"][0]["config"]
    (tmp_path / "shapeless.json").write_text(json.dumps(shapeless), encoding="utf-8")  # by hand
    with pytest.raises(ClearRagError) as raised:
        export(tmp_path)
    message = " ".join(str(raised.value).split())
    assert message == api_error(tmp_path, "/shapeless/pinned/hybrid", 422)
    assert (
        "shapeless.json: is not in the shape of a suite's result file: rows[0].config: Field required"
        in message
    )


def test_the_page_files_are_the_packaged_view_switched_to_the_exported_data() -> None:
    files = page_files()
    served = (STATIC / "results.html").read_text(encoding="utf-8")
    assert files["results.html"].decode() == served.replace(LIVE_MODE, STATIC_MODE)
    assert files["results.html"] != served.encode() and '="/static/' not in served
    # every module the view loads, and nothing of the chat page
    scripts = {p for p in files if p.endswith(".js")}
    assert {"static/results.js", "static/results-data.js", "static/rankflow.js", "static/dom.js"} <= scripts
    assert "static/app.js" not in files and "static/index.html" not in files
    for path in scripts | {"static/style.css"}:
        assert files[path] == (STATIC / path.removeprefix("static/")).read_bytes()
    for path in scripts:
        for imported in re.findall(r'^import .* from "\./(.+)";$', files[path].decode(), re.M):
            assert f"static/{imported}" in files, (path, imported)
