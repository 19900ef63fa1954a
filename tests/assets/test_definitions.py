"""The code location loads: over the tiny project, and from the repository root as ``dagster dev`` does."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from dagster import AssetKey, Definitions

from assets.definitions import defs
from clear_rag.eval.suite import load_suite
from tests.assets.conftest import CHUNKINGS, DAGSTER_WARNINGS, PARSED, ROWS, toy_definitions

ROOT = Path(__file__).resolve().parents[2]


def _partitions(definitions: Definitions, key: list[str]) -> list[str]:
    partitions = definitions.resolve_asset_graph().get(AssetKey(key)).partitions_def
    assert partitions is not None
    return sorted(partitions.get_partition_keys())


@pytest.mark.filterwarnings(*DAGSTER_WARNINGS)
def test_the_graph_over_a_small_suite(project: Path) -> None:
    definitions = toy_definitions()
    graph = definitions.resolve_asset_graph()
    keys = {k.to_user_string() for k in graph.get_all_asset_keys()}
    assert keys == {
        f"toy/{name}"
        for name in (
            "suite_rows", "suite", "golden", "corpus", "parsed",
            "store", "keyword_index", "vector_index", "evaluation", "result",
        )
    }  # fmt: skip
    assert _partitions(definitions, ["toy", "evaluation"]) == ROWS
    assert _partitions(definitions, ["toy", "suite_rows"]) == ROWS
    assert _partitions(definitions, ["toy", "store"]) == CHUNKINGS
    assert _partitions(definitions, ["toy", "corpus"]) == ["a.md", "b.txt", "sub/c.html"]
    assert _partitions(definitions, ["toy", "parsed"]) == PARSED
    # Each file is parsed once (by its type's one backend); every chunking's store reads all of them.
    store_parents = {k.to_user_string() for k in graph.get(AssetKey(["toy", "store"])).parent_keys}
    assert store_parents == {"toy/parsed", "toy/golden"}
    # Rows reach the store through the indexes they search, never directly (see evaluation.py).
    parents = {k.to_user_string() for k in graph.get(AssetKey(["toy", "evaluation"])).parent_keys}
    assert parents == {"toy/suite_rows", "toy/golden", "toy/keyword_index", "toy/vector_index"}
    checks = {k.name for k in graph.asset_check_keys}
    assert checks == {
        "golden_quotes_resolve_once",
        "chunk_spans_hold",
        "matches_fake_baseline",
        "result_has_expected_keys",
    }


@pytest.mark.filterwarnings(*DAGSTER_WARNINGS)
def test_the_bundled_suite_loads_from_the_repository_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    definitions = defs()
    assert _partitions(definitions, ["tech", "evaluation"]) == sorted(r.name for r in load_suite("tech").rows)
    assert len(_partitions(definitions, ["tech", "store"])) == 7
    assert len(_partitions(definitions, ["tech", "parsed"])) == 10


def test_dagster_finds_the_code_location_from_the_root() -> None:
    """``[tool.dagster]`` names the module, so ``dagster dev`` needs no -m and no installed package."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert config["tool"]["dagster"]["module_name"] == "assets.definitions"
    dagster = Path(sys.executable).with_name("dagster")
    # No DAGSTER_HOME: the command uses a throwaway instance and deletes it afterwards.
    env = {k: v for k, v in os.environ.items() if k != "DAGSTER_HOME"}
    done = subprocess.run(
        [str(dagster), "definitions", "validate"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Validation successful for code location clear-rag" in done.stdout + done.stderr
