"""The multiprocess executor: the definitions load with it, and the evaluation partitions run through it
(real processes: a fork server, a process per step, two runs at once) into the result file that an
in-process update writes, row for row."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from dagster import AssetKey, in_process_executor

from assets.definitions import EXECUTOR_ENV, MAX_CONCURRENT_ENV, build_definitions
from assets.evaluation import measured
from assets.executor import Execution, Run, by_suite, execute_out_of_process
from assets.resources import PathsResource
from assets.run import CURSOR, QUIET, instance_at, main
from clear_rag.errors import ClearRagError, ConfigError
from tests.assets.conftest import DAGSTER_WARNINGS, ROWS, SOURCE_ASSET_DEPRECATION

TOY = {"suites": ["toy"], "embedder": "hash", "chat": "echo", "reranker": "lexical"}


def _executor(**settings: Any) -> tuple[str, dict[str, Any]]:
    """The name and the resolved config of the executor the toy definitions' runs use."""
    executor = (
        build_definitions(["toy"], embedder="hash", **settings)
        .resolve_implicit_global_asset_job_def()
        .executor_def
    )
    schema = executor.config_schema
    # A configured executor's schema resolves to the config it was given.
    config = schema.resolve_config({}).value.get("config", {}) if hasattr(schema, "resolve_config") else {}
    return executor.name, config


@pytest.mark.filterwarnings(*DAGSTER_WARNINGS)
def test_the_definitions_load_with_the_multiprocess_executor(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _executor()[0] == "in_process"  # the default is unchanged
    name, config = _executor(executor="multiprocess", max_concurrent=2)
    assert name == "multiprocess"
    assert config["max_concurrent"] == 2
    # forked from a server that imported the code location once
    assert config["start_method"] == {"forkserver": {"preload_modules": ["dagster", "assets.definitions"]}}

    monkeypatch.setenv(EXECUTOR_ENV, "multiprocess")
    monkeypatch.setenv(MAX_CONCURRENT_ENV, "3")
    assert _executor() == ("multiprocess", {**config, "max_concurrent": 3})

    monkeypatch.setenv(MAX_CONCURRENT_ENV, "two")
    with pytest.raises(ConfigError, match="two"):
        _executor()
    monkeypatch.setenv(EXECUTOR_ENV, "spark")
    with pytest.raises(ConfigError, match="spark"):
        _executor()
    with pytest.raises(ClearRagError, match="at least 1"):
        Execution.multiprocess({}, 0)


@pytest.mark.filterwarnings(*DAGSTER_WARNINGS)
def test_each_process_rebuilds_the_job_from_json_settings(project: Path) -> None:
    """What each step's process does: rebuild the job from the reconstructable pointer's settings."""
    paths = PathsResource(results_dir="out", store_root="stores").model_dump()
    json.dumps({**TOY, **paths})  # the pointer carries them as JSON
    job = Execution.multiprocess({**TOY, **paths}, 2).job([AssetKey(["toy", "evaluation"])])
    rebuilt = job.get_definition()
    assert rebuilt.executor_def.name == "multiprocess"
    keys = {key.to_user_string() for key in rebuilt.asset_layer.executable_asset_keys}
    assert "toy/evaluation" in keys
    resources = rebuilt.resource_defs
    assert {"paths", "embedder", "chat"} <= set(resources)


def test_runs_out_of_process_are_split_by_suite() -> None:
    """Suites over one corpus share a chunking's store: out of process, never two steps of one run."""
    runs: list[Run] = [("c", [AssetKey(["tech", "store"]), AssetKey(["tech-expansion", "store"])])]
    assert by_suite(runs) == [
        ("c", [AssetKey(["tech", "store"])]),
        ("c", [AssetKey(["tech-expansion", "store"])]),
    ]


@pytest.mark.filterwarnings(*DAGSTER_WARNINGS)
@pytest.mark.parametrize(
    ("name", "module", "attribute"),
    [("k8s", "dagster_k8s", "k8s_job_executor"), ("celery", "dagster_celery", "celery_executor")],
)
def test_the_cluster_executors_come_from_their_packages_where_installed(
    project: Path, monkeypatch: pytest.MonkeyPatch, name: str, module: str, attribute: str
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # not installed (as here): a message naming the package
    with pytest.raises(ConfigError, match=module.replace("_", "-")):
        _executor(executor=name)
    # Installed: its executor definition, as it is (its run config says where the steps go).
    stand_in = types.ModuleType(module)
    setattr(stand_in, attribute, in_process_executor.configured({}, name=f"stand-in {name}"))
    monkeypatch.setitem(sys.modules, module, stand_in)
    chosen = build_definitions(
        ["toy"], embedder="hash", executor=name
    ).resolve_implicit_global_asset_job_def()
    assert chosen.executor_def.name == f"stand-in {name}"


def _rows(path: Path) -> dict[str, str]:
    document = json.loads(path.read_text(encoding="utf-8"))
    return {row["name"]: measured(row) for row in document["rows"]}


@pytest.mark.slow  # real processes: a few minutes on two loaded cores
@pytest.mark.filterwarnings(SOURCE_ASSET_DEPRECATION)
def test_multiprocess_update_writes_the_result_an_in_process_one_writes(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    common = ["--embedder", "hash", "--suite", "toy", "--no-sample", "--no-site"]
    home, other = project / "home-in-process", project / "home-multiprocess"
    assert main([*common, "--home", str(home), "--results-dir", "in-process"]) == 0
    capsys.readouterr()

    multiprocess = ["--executor", "multiprocess", "--max-concurrent", "2"]
    assert main([*common, "--home", str(other), "--results-dir", "multiprocess", *multiprocess]) == 0
    out = capsys.readouterr().out
    assert "FAILED" not in out
    for row in ROWS:
        assert f"materializing toy/evaluation [{row}]" in out
    # The same rows measured the same way, per question (dates, timings and trace ids aside).
    assert _rows(project / "multiprocess" / "toy.json") == _rows(project / "in-process" / "toy.json")
    assert set(_rows(project / "multiprocess" / "toy.json")) == set(ROWS)

    # Each evaluation step ran in a process of its own, not in this one.
    with instance_at(other) as instance:
        runs = [
            record.dagster_run
            for record in instance.get_run_records()
            if AssetKey(["toy", "evaluation"]) in (record.dagster_run.asset_selection or set())
        ]
        assert len(runs) == len(ROWS)
        for run in runs:
            logs = instance.all_logs(run.run_id)
            assert any("multiprocess executor" in (entry.message or "") for entry in logs)
    assert (other / CURSOR).is_file()


@pytest.mark.slow  # real processes
@pytest.mark.filterwarnings(SOURCE_ASSET_DEPRECATION)
def test_a_failing_step_out_of_process_is_reported_by_run_and_partition(project: Path) -> None:
    """A store run before its parsed files exist: the step fails to load its input, in its process."""
    execution = Execution.multiprocess({**TOY, "results_dir": "out"}, 1)
    assert execution.settings is not None
    runs: list[Run] = [("fixed-8-overlap1", [AssetKey(["toy", "store"])])]
    with instance_at(project / "home") as instance, execution.workers() as pool:
        assert pool is not None
        with pytest.raises(ClearRagError, match=r"failed \[fixed-8-overlap1\]: toy__store"):
            execute_out_of_process(runs, execution, instance, pool, QUIET)
