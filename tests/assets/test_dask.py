"""The Dask executor: the flags and errors of ``--executor dask``, the definitions it builds, and (slow) a
real cluster, a scheduler and two workers each a process of its own on 127.0.0.1, running the toy
suite's graph into the result file and data versions an in-process update writes."""

from __future__ import annotations

import json
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dagster import AssetKey, DagsterEventType, ExecutorDefinition

from assets.cluster import _written_address, connect, local_cluster
from assets.definitions import EXECUTOR_ENV, SCHEDULER_ENV, build_definitions
from assets.evaluation import measured
from assets.executor import Execution, Run, execute_out_of_process, latest
from assets.resources import PathsResource
from assets.run import QUIET, instance_at, main
from clear_rag.errors import ClearRagError, ConfigError
from tests.assets.conftest import DAGSTER_WARNINGS, ROWS, SOURCE_ASSET_DEPRECATION

TOY = {"suites": ["toy"], "embedder": "hash", "chat": "echo", "reranker": "lexical"}
COMMON = ["--embedder", "hash", "--suite", "toy", "--no-sample", "--no-site"]
EVALUATION = AssetKey(["toy", "evaluation"])


@pytest.fixture
def closed_port() -> Iterator[str]:
    """The address of a port that is bound and not listening: a connection to it is refused at once."""
    with socket.socket() as bound:
        bound.bind(("127.0.0.1", 0))
        yield f"tcp://127.0.0.1:{bound.getsockname()[1]}"


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--scheduler", "tcp://127.0.0.1:8786"], "--scheduler and --workers go with --executor dask"),
        (["--workers", "2"], "--scheduler and --workers go with --executor dask"),
        (
            ["--executor", "dask", "--workers", "2", "--scheduler", "tcp://h:1"],
            "leave it out with --scheduler",
        ),
        (["--executor", "dask", "--workers", "0"], "--workers 0: give a whole number of at least 1"),
        (["--executor", "dask", "--max-concurrent", "0"], "--max-concurrent 0"),
    ],
)
def test_the_dask_flags_are_refused_where_they_mean_nothing(
    flags: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main([*COMMON, *flags])
    assert exited.value.code == 2
    assert said in capsys.readouterr().err


@pytest.mark.parametrize(
    "address", ["127.0.0.1:8786", "http://127.0.0.1:8786", "tcp://127.0.0.1", "tcp://:8786"]
)
def test_an_address_that_is_not_a_scheduler_s_is_named_with_the_form_it_takes(address: str) -> None:
    with pytest.raises(ClearRagError, match="tcp://HOST:PORT") as raised:
        connect(address)
    assert repr(address) in str(raised.value)


def test_the_scheduler_file_is_read_only_once_it_is_whole(tmp_path: Path) -> None:
    """Readiness: the scheduler writes its address to a file as it starts listening; missing or half
    written, the wait goes on."""
    path = tmp_path / "scheduler.json"
    assert _written_address(path) is None
    path.write_text('{"type": "Scheduler", "addr', encoding="utf-8")
    assert _written_address(path) is None
    path.write_text('{"type": "Scheduler", "address": "tcp://127.0.0.1:40001"}', encoding="utf-8")
    assert _written_address(path) == "tcp://127.0.0.1:40001"


@pytest.mark.filterwarnings(*DAGSTER_WARNINGS)
def test_a_scheduler_that_does_not_answer_is_named_with_the_fix_before_any_run(
    project: Path, closed_port: str
) -> None:
    home = project / "home"
    with pytest.raises(ClearRagError, match="no Dask scheduler answers there") as raised:
        main([*COMMON, "--home", str(home), "--executor", "dask", "--scheduler", closed_port])
    assert repr(closed_port) in str(raised.value)
    assert "leave --scheduler out to start a local cluster" in str(raised.value)
    assert not home.exists()  # refused before the instance was made, let alone a run started


def _executor(**settings: Any) -> ExecutorDefinition:
    return (
        build_definitions(["toy"], embedder="hash", **settings)
        .resolve_implicit_global_asset_job_def()
        .executor_def
    )


@pytest.mark.filterwarnings(*DAGSTER_WARNINGS)
def test_the_definitions_send_every_step_to_the_named_scheduler(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    executor = _executor(executor="dask", scheduler="tcp://10.0.0.5:8786")
    assert executor.name == "dask"
    # A configured executor's schema resolves to the config it was given.
    config = executor.config_schema.resolve_config({}).value["config"]  # type: ignore[attr-defined]
    assert config == {"cluster": {"existing": {"address": "tcp://10.0.0.5:8786"}}}

    monkeypatch.setenv(EXECUTOR_ENV, "dask")
    with pytest.raises(ConfigError, match=SCHEDULER_ENV):  # dask with no address: which variable to set
        _executor()
    monkeypatch.setenv(SCHEDULER_ENV, "tcp://10.0.0.6:8786")
    config = _executor().config_schema.resolve_config({}).value["config"]  # type: ignore[attr-defined]
    assert config["cluster"]["existing"]["address"] == "tcp://10.0.0.6:8786"

    monkeypatch.setitem(sys.modules, "dagster_dask", None)  # not installed
    with pytest.raises(ConfigError, match="dagster-dask"):
        _executor()


@pytest.mark.filterwarnings(*DAGSTER_WARNINGS)
def test_each_dask_task_rebuilds_the_job_on_the_same_scheduler(project: Path) -> None:
    paths = PathsResource(results_dir="out", store_root="stores").model_dump()
    execution = Execution.dask({**TOY, **paths}, 2, "tcp://10.0.0.5:8786")
    json.dumps(execution.settings)  # the pointer carries them as JSON
    rebuilt = execution.job([EVALUATION]).get_definition()
    assert rebuilt.executor_def.name == "dask"
    with pytest.raises(ClearRagError, match="at least 1"):
        Execution.dask({}, 0, "tcp://10.0.0.5:8786")


def _rows(path: Path) -> dict[str, str]:
    document = json.loads(path.read_text(encoding="utf-8"))
    return {row["name"]: measured(row) for row in document["rows"]}


@pytest.mark.slow  # a real cluster: three processes, and the suite's evaluation runs on it
@pytest.mark.filterwarnings(SOURCE_ASSET_DEPRECATION)
def test_a_dask_cluster_measures_what_an_in_process_update_measures(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The graph brought up to date in process, then every evaluation partition and the result run
    again on a real cluster, as ``--executor dask`` sends them (``update`` hands both paths the same
    runs): the same data version for every partition, and the same result file, row for row."""
    home = project / "home"
    assert main([*COMMON, "--home", str(home), "--results-dir", "in-process"]) == 0
    assert "FAILED" not in capsys.readouterr().out
    runs: list[Run] = [(row, [EVALUATION]) for row in ROWS] + [(None, [AssetKey(["toy", "result"])])]
    with instance_at(home) as instance:
        expected = {row: m.data_version for row, m in latest(instance, EVALUATION, ROWS).items()}
        assert all(expected.values())  # every partition recorded a version to compare
        started = {record.dagster_run.run_id for record in instance.get_run_records()}
        # The workers run in the project's folder, as a worker on another machine runs in its checkout.
        with local_cluster(2, cwd=project) as cluster:
            assert len(cluster.pids) == 2
            paths = PathsResource(results_dir="dask").model_dump()
            execution = Execution.dask({**TOY, **paths}, 2, connect(cluster.address).address)
            with execution.workers() as pool:
                assert pool is not None
                failed = execute_out_of_process(runs, execution, instance, pool, QUIET)
        assert failed == [[] for _ in runs]  # every run succeeded, and every check passed
        found = latest(instance, EVALUATION, ROWS)
        assert {row: m.data_version for row, m in found.items()} == expected
        # Every run executed its own step (two runs of one job at once once shared one Dask task, and
        # the second succeeded having executed nothing), and on a worker of the cluster, not in this
        # process or a run's; and the latest materialization of every partition is the cluster's.
        step_pids = []
        dask_runs = [r.dagster_run for r in instance.get_run_records() if r.dagster_run.run_id not in started]
        assert len(dask_runs) == len(runs)
        for run in dask_runs:
            steps = instance.all_logs(run.run_id, of_type=DagsterEventType.STEP_START)
            assert len(steps) == 1, run.tags
            assert steps[0].dagster_event is not None
            step_pids.append(steps[0].dagster_event.pid)
        assert set(step_pids) <= set(cluster.pids)
        assert {m.run_id for m in found.values()} <= {run.run_id for run in dask_runs}
    # The same rows measured the same way, per question (dates, timings and trace ids aside).
    assert _rows(project / "dask" / "toy.json") == _rows(project / "in-process" / "toy.json")
    assert set(_rows(project / "dask" / "toy.json")) == set(ROWS)
