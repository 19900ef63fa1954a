"""The first question after a fresh install: how long the person waits, and when the kernels take over.

    python -m bench.first_question [--repeat 3] [--corpus corpora/tech] [--embedder minilm]

**Data.** ``corpora/tech`` ingested once by ``clear-rag ingest --embedder minilm`` (the shipped int8
MiniLM on onnxruntime, as ``make run`` uses), its questions the first of golden/tech.yaml.
Retrieval only (``--no-generate``, no chat model), so no model's writing time is in the wait; the
support model (the shipped cross-encoder) still judges whether retrieval looks weak, as it does in
every question.

**A fresh install.** numba reads ``$NUMBA_CACHE_DIR`` in place of the ``__pycache__`` beside the
sources; each round gives it an empty folder, so numba finds nothing cached and must compile, as in
a fresh clone. Every contender is a fresh process.

**Contenders, in each round:**

- ``cli``: ``clear-rag ask Q --no-generate --stages`` on an empty cache: the ``waited`` line it ends
  with (from when the process began loading clear-rag's commands) and each stage's time, and the
  process's wall time from outside.
  The compile it starts in the background outlives it; the round waits for its stamp (how long the
  compile took is ``background_compile_s``), then asks again in a second process, the cache warm.
- ``api``: this module as ``--child``, opening the store, indexes and models as ``clear-rag ask``
  does, then asking the first question (empty cache), a second at once in the same process (the
  kernels not ready yet), then waiting for the kernels (``clear_rag.index.compiled.wait``: when the
  cache was filled and when the kernels were loaded, from the first search) and asking a third on
  them; then again in a second process on the now warm cache.
- ``inline``: the predecessor's behaviour, for comparison: the same child with ``ranking._kernels``
  and ``vectors._prepass`` importing the kernels directly, so the first search compiles inside the
  question, on an empty cache.

Each figure is the median over ``--repeat`` rounds. Written to results/bench/first-question.json.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import ROOT, publish

CLEAR_RAG = Path(sys.executable).with_name("clear-rag")
QUESTIONS = (  # golden/tech.yaml's first three
    "What is the largest page size a list request in the REST API can ask for?",
    "What is the maximum size of a single event payload accepted by the publish endpoint?",
    "Which error code is returned when an idempotency key is reused with a different request body?",
)
WAITED = re.compile(r"^waited (?P<total>[\d.]+) s in all \((?P<parts>.*)\)$", re.MULTILINE)
PART = re.compile(r"([a-z ,-]+?) ([\d.]+) s(?:, |$)")
STAGE = re.compile(r"^\[(\w+)\] \d+ candidates in ([\d.]+) ms", re.MULTILINE)
STAMP_WAIT_S = 1800.0  # a bound on waiting for a background compile; it ends as soon as the stamp is there


# -- the child: one process's questions through the Python API ---------------------------------------


def child(store_dir: Path, embedder: str, inline: bool) -> dict[str, Any]:
    """Open as ``clear-rag ask`` does, then three questions around the kernels' readiness."""
    began = time.perf_counter()
    from clear_rag.cli.app import open_existing
    from clear_rag.cli.ask import run_config
    from clear_rag.generate.planner import Planner
    from clear_rag.index import compiled, ranking, vectors
    from clear_rag.providers.select import make_embedder, support_checker
    from clear_rag.session import open_pipeline

    if inline:  # the predecessor's lookups: the kernels imported, compiled at their first call

        def imported_kernels() -> Any:
            from clear_rag.index import kernels

            return kernels

        def imported_prepass() -> Any:
            from clear_rag.index import prepass

            return prepass

        ranking._kernels = imported_kernels
        vectors._prepass = imported_prepass
    with open_existing(store_dir) as store:
        settings = run_config(store, None, None)
        model = make_embedder(embedder)
        pipeline = open_pipeline(store, settings, embedder=model)
        planner = Planner(pipeline, None, support=support_checker(settings.support_model))
        opened = time.perf_counter()

        def ask(question: str) -> dict[str, Any]:
            state = compiled.status().state
            asked = time.perf_counter()
            trace = planner.run(question, generate=False)
            return {
                "retrieval_ms": round((time.perf_counter() - asked) * 1000, 1),
                "stages_ms": {stage.name: round(stage.elapsed_ms, 1) for stage in trace.stages},
                "kernels_when_asked": "inline" if inline else state,
            }

        first = ask(QUESTIONS[0])
        first["open_ms"] = round((opened - began) * 1000, 1)
        first["waited_ms"] = round(first["open_ms"] + first["retrieval_ms"], 1)
        second = ask(QUESTIONS[1])
        settled = compiled.wait() if not inline else None
        ready = ask(QUESTIONS[2])
    out: dict[str, Any] = {
        "first": first,
        "second": second,
        "after_ready": ready,
        "models": {"embedder": f"{model.name}@{model.version}", "support": settings.support_model},
    }
    if settled is not None:
        out["readiness"] = {
            "state": settled.state,
            "reason": settled.reason,
            "cache_s": round(settled.cache_s, 2) if settled.cache_s is not None else None,
            "ready_s": round(settled.ready_s, 2) if settled.ready_s is not None else None,
        }
    return out


# -- the rounds --------------------------------------------------------------------------------------


def environment_with(cache: Path) -> dict[str, str]:
    return {**os.environ, "NUMBA_CACHE_DIR": str(cache)}


def run_child(store: Path, embedder: str, cache: Path, *, inline: bool = False) -> dict[str, Any]:
    command = [sys.executable, "-m", "bench.first_question", "--child", str(store), "--embedder", embedder]
    started = time.perf_counter()
    done = subprocess.run(
        [*command, *(["--inline"] if inline else [])],
        cwd=ROOT,
        env=environment_with(cache),
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"{shlex.join(command)} failed:\n{done.stderr}")
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    found["wall_ms"] = round((time.perf_counter() - started) * 1000, 1)
    return found


def run_cli(store: Path, embedder: str, cache: Path) -> dict[str, Any]:
    command = [str(CLEAR_RAG), "ask", QUESTIONS[0], "--store", str(store), "--embedder", embedder]
    started = time.perf_counter()
    done = subprocess.run(
        [*command, "--no-generate", "--stages"],
        env=environment_with(cache),
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - started
    waited = WAITED.search(done.stdout)
    if done.returncode != 0 or waited is None:
        raise SystemExit(f"{shlex.join(command)} failed:\n{done.stdout}\n{done.stderr}")
    parts = {name: round(float(s) * 1000, 1) for name, s in PART.findall(waited.group("parts"))}
    return {
        "waited_ms": round(float(waited.group("total")) * 1000, 1),
        "parts_ms": parts,
        "stages_ms": {name: float(ms) for name, ms in STAGE.findall(done.stdout)},
        "wall_ms": round(wall * 1000, 1),
    }


def background_compile(cache: Path) -> float:
    """Wait until the compile a finished command left running has stamped the cache; its seconds."""
    from clear_rag.index import warm

    stamp = cache.resolve() / warm.STAMP
    deadline = time.monotonic() + STAMP_WAIT_S
    while not stamp.exists():
        if time.monotonic() > deadline:
            raise SystemExit(f"no stamp in {cache} after {STAMP_WAIT_S:.0f} s: the background compile failed")
        time.sleep(0.2)  # a benchmark's poll of another process's file, not a test's wait
    with (cache.resolve() / warm.LOCK).open("a") as lock:  # the compile's process lets go of it last
        fcntl.flock(lock, fcntl.LOCK_EX)
    seconds: float = json.loads(stamp.read_text(encoding="utf-8"))["seconds"]
    return seconds


def median(values: list[float], digits: int = 1) -> float:
    return round(statistics.median(values), digits)


def summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Medians of a contender's rounds, and the rounds themselves."""
    row: dict[str, Any] = {}
    for key in ("waited_ms", "open_ms", "retrieval_ms", "wall_ms"):
        if all(key in run for run in runs):
            row[key] = median([run[key] for run in runs])
    for key in ("parts_ms", "stages_ms"):
        if all(key in run for run in runs):
            names = [name for name in runs[0][key] if all(name in run[key] for run in runs)]
            row[key] = {name: median([run[key][name] for run in runs]) for name in names}
    states = sorted({run["kernels_when_asked"] for run in runs if "kernels_when_asked" in run})
    if states:
        row["kernels_when_asked"] = states
    row["rounds"] = runs
    return row


def render(result: dict[str, Any]) -> str:
    lines = [f"{'contender (waited: retrieval alone for a later question)':<66} {'waited':>9}"]
    lines[0] += f" {'keyword':>9} {'vector':>8} {'wall':>9}"
    for row in result["contenders"]:
        name = row["name"]
        waited = row.get("waited_ms", row.get("retrieval_ms"))
        stages = row.get("stages_ms", {})
        wall = f"{row['wall_ms']:>7.0f} ms" if "wall_ms" in row else ""
        lines.append(
            f"{name:<66} {waited:>6.0f} ms {stages.get('keyword', 0):>6.1f} ms "
            f"{stages.get('vector', 0):>5.1f} ms {wall}"
        )
    ready = result["readiness"]
    cold, warm_cache, cli = ready["fresh_install"], ready["warm_cache"], ready["cli_background_compile_s"]
    lines.append(
        f"kernels ready after the first search: {cold['ready_s']} s on an empty cache (cache filled at "
        f"{cold['cache_s']} s), {warm_cache['ready_s']} s on a warm one; the compile a finished "
        f"`clear-rag ask` left running took {cli} s"
    )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=3, help="rounds; each figure is their median")
    parser.add_argument("--corpus", type=Path, default=ROOT / "corpora" / "tech", help="folder to ingest")
    parser.add_argument("--embedder", default="minilm", help="the embedder ingest and every question use")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)  # a store: run one child's questions
    parser.add_argument("--inline", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(child(args.child, args.embedder, args.inline)))
        return
    started = time.perf_counter()
    load = os.getloadavg()
    rounds: dict[str, list[dict[str, Any]]] = {}
    models: dict[str, str] = {}
    ready: dict[str, list[float]] = {"cold_cache_s": [], "cold_ready_s": [], "warm_ready_s": [], "cli_s": []}
    with tempfile.TemporaryDirectory(prefix="first-question-") as tmp:
        folder = Path(tmp)
        store = folder / "store"
        ingest = [
            str(CLEAR_RAG),
            "ingest",
            str(args.corpus),
            "--store",
            str(store),
            "--embedder",
            args.embedder,
        ]
        # ingest with a cache folder of its own, so the rounds' folders start empty
        subprocess.run(ingest, env=environment_with(folder / "ingest-cache"), check=True, capture_output=True)
        from clear_rag.store import Store

        with Store(store) as opened:
            chunks = opened.stats().chunks
        print(f"{args.corpus.name}: {chunks} chunks, ingested with {args.embedder}", flush=True)

        def add(name: str, run: dict[str, Any]) -> None:
            rounds.setdefault(name, []).append(run)

        for n in range(args.repeat):
            cache = folder / f"cli-{n}"
            add("cli: fresh install, first question", run_cli(store, args.embedder, cache))
            ready["cli_s"].append(background_compile(cache))
            add("cli: second process, warm cache, first question", run_cli(store, args.embedder, cache))
            cache = folder / f"api-{n}"
            cold = run_child(store, args.embedder, cache)
            models = cold["models"]
            add("api: fresh install, first question", cold["first"])
            add("api: same process, second question (kernels not ready)", cold["second"])
            add("api: same process, after the kernels are ready", cold["after_ready"])
            ready["cold_cache_s"].append(cold["readiness"]["cache_s"])
            ready["cold_ready_s"].append(cold["readiness"]["ready_s"])
            warm_run = run_child(store, args.embedder, cache)
            add("api: second process, warm cache, first question", warm_run["first"])
            ready["warm_ready_s"].append(warm_run["readiness"]["ready_s"])
            inline = run_child(store, args.embedder, folder / f"inline-{n}", inline=True)
            add("inline compile (before issue 26): fresh install, first question", inline["first"])
            print(f"round {n + 1} of {args.repeat} done", flush=True)
    result: dict[str, Any] = {
        "benchmark": "first-question",
        "command": shlex.join(
            [
                "python",
                "-m",
                "bench.first_question",
                "--repeat",
                str(args.repeat),
                "--embedder",
                args.embedder,
            ]
            + (["--corpus", str(args.corpus)] if args.corpus != ROOT / "corpora" / "tech" else [])
        ),
        "data": {
            "corpus": str(args.corpus.relative_to(ROOT) if args.corpus.is_relative_to(ROOT) else args.corpus),
            "chunks": chunks,
            "chat": "none: --no-generate (retrieval only)",
            "questions": list(QUESTIONS),
        },
        "embedder": models["embedder"],  # --embedder's model, as ingest and every question ran it
        "support_model": models["support"],  # judges in every question whether retrieval looks weak
        "fresh_install": "an empty $NUMBA_CACHE_DIR per round: numba finds nothing cached and compiles",
        "load_average_at_start": load,
        "load_average_at_end": os.getloadavg(),
        "contenders": [{"name": name, **summary(runs)} for name, runs in rounds.items()],
        "readiness": {
            "fresh_install": {
                "cache_s": median(ready["cold_cache_s"], 2),
                "ready_s": median(ready["cold_ready_s"], 2),
            },
            "warm_cache": {"ready_s": median(ready["warm_ready_s"], 2)},
            "cli_background_compile_s": median(ready["cli_s"], 2),
            "note": "seconds from the first search; cache_s when numba's cache held every kernel, ready_s "
            "when they were loaded in the process and searches switched to them",
        },
        "elapsed_s": round(time.perf_counter() - started, 1),
    }
    publish("first-question", result, render)


if __name__ == "__main__":
    main()
