"""The memory a server reaches, for ``python -m bench.serve --memory``: at each size of ``--docs``
(``--docs 100000,1000000``: one point per size in the file, measured one after the other), a store
of that many synthetic passages (bench.serve.synthetic, one chunk each) built once per side,
untimed, in a process of its own, as ``clear-rag ingest`` leaves it (bench.serve.build: the SQLite
store, BM25 and the hash embedder's vectors); then, per round, ``clear-rag serve --embedder hash
--chat echo`` started fresh on that store, one question posted to ``/api/chat`` (the hybrid default
config, so the store, the BM25 index and the vector index are opened as the first question opens
them) and read to its ``done`` event, and the server's ``/proc/<pid>/status`` read from outside it:
resident size once it listens (before any index is open), its resident peak (VmHWM) and its
resident size after the answer.
Beside each server, in the same turn, a fresh process opens the store's two indexes as a question
does (``open_index``: the manifest read, the files checked against it, the index loaded, its ids
checked) and times each: the cold-open cost, which the first answer includes, on its own (issue 32:
checking every file by hashing it whole cost about as much as loading BM25).

With ``--before REV`` the same for the code of an earlier commit (its files from ``git archive``, as
bench.index_size runs one): each side builds its own store, since the index files' formats differ.
``--before-docs`` names the sizes at which the earlier commit is measured (default: every size); a
point without it records why in ``before_not_measured``. A point's stores are deleted once measured.
Sides alternate in rotating order round by round, after one untimed round per side (the page cache
and numba's on-disk cache filled alike); medians of the rounds.
"""

from __future__ import annotations

import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from bench.common import ROOT, publish, run_script

# Run with one side's code first on PYTHONPATH: the store built as bench.serve builds it.
BUILD = """
import json, sys
from pathlib import Path
from bench.serve import build, synthetic
docs, _, what = synthetic(int(sys.argv[2]), 1)
store, timings = build(Path(sys.argv[1]), docs)
with store:
    print(json.dumps({"corpus": what, "chunks": store.stats().chunks, **timings}))
"""

# Run with one side's code first on PYTHONPATH, a fresh process per turn: the indexes opened as the
# first question opens them, each timed (seconds). Only what both sides' code has is used.
OPEN = """
import json, sys, time
from pathlib import Path
from clear_rag.index.places import keyword_place, open_index, vector_place
from clear_rag.providers.fake import HashEmbedder
from clear_rag.store import Store
with Store(Path(sys.argv[1])) as store:
    places = {"keyword": keyword_place(store, False), "vectors": vector_place(store, HashEmbedder(dim=256))}
    times = {}
    for name, place in places.items():
        started = time.perf_counter()
        if open_index(place) is None:
            raise SystemExit(f"no {name} index in {sys.argv[1]}")
        times[f"open_{name}_s"] = time.perf_counter() - started
print(json.dumps({**times, "open_indexes_s": sum(times.values())}))
"""

SERVE = "from clear_rag.cli import main; main()"
QUESTION = "what do the passages say"  # any words; the answer's content is not measured


def build_store(source: Path, folder: Path, docs: int) -> dict[str, Any]:
    """The store of ``docs`` passages at ``folder``, built by the code at ``source``."""
    built: dict[str, Any] = run_script(source, BUILD, [str(folder), str(docs)], folder.parent)
    return built


def _status_mb(pid: int, field: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"/proc/{pid}/status has no {field} line; this benchmark needs Linux")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def serve_once(
    source: Path, store: Path, ready_within_s: float = 120.0, answer_within_s: float = 900.0
) -> dict[str, float]:
    """One fresh ``clear-rag serve`` on ``store``: its resident MB once listening, at its peak and after
    one question's answer; seconds from spawn to listening and from the question to ``done`` (at a
    million passages the first question opens indexes for tens of seconds before its first event)."""
    port = _free_port()
    command = [sys.executable, "-c", SERVE, "serve", "--store", str(store), "--embedder", "hash"]
    command += ["--chat", "echo", "--port", str(port)]
    env = {**os.environ, "PYTHONPATH": str(source)}
    started = time.perf_counter()
    server = subprocess.Popen(
        command, env=env, cwd=store.parent, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    url = f"http://127.0.0.1:{port}"
    try:
        with httpx.Client(timeout=ready_within_s) as client:
            while True:
                if server.poll() is not None:
                    raise SystemExit(f"clear-rag serve ({source}) exited: {server.stderr.read()!r}")  # type: ignore[union-attr]
                try:
                    client.get(f"{url}/")
                    break
                except httpx.TransportError:
                    if time.perf_counter() - started > ready_within_s:
                        raise SystemExit(
                            f"clear-rag serve ({source}) did not listen within {ready_within_s} s"
                        ) from None
                    time.sleep(0.05)
            listening = time.perf_counter()
            ready_mb = _status_mb(server.pid, "VmRSS")
            body = {"question": QUESTION, "config": {}}
            with client.stream("POST", f"{url}/api/chat", json=body, timeout=answer_within_s) as response:
                if response.status_code != 200:
                    raise SystemExit(f"POST /api/chat answered {response.status_code}: {response.read()!r}")
                text = "".join(response.iter_text())
            if "event: done" not in text:
                raise SystemExit(f"the first question's stream had no done event: {text[-500:]!r}")
            answered = time.perf_counter()
            return {
                "listening_s": listening - started,
                "first_answer_s": answered - listening,
                "rss_listening_mb": ready_mb,
                "peak_rss_mb": _status_mb(server.pid, "VmHWM"),
                "rss_after_answer_mb": _status_mb(server.pid, "VmRSS"),
            }
    finally:
        server.terminate()
        server.wait(timeout=30)
        server.stderr.close()  # type: ignore[union-attr]  # (left open, one file per server until exit)


def open_once(source: Path, store: Path) -> dict[str, float]:
    """A fresh process with the code at ``source`` opening ``store``'s BM25 and vector indexes: the
    seconds each took and their sum."""
    opened: dict[str, float] = run_script(source, OPEN, [str(store)], store.parent)
    return opened


def warm(sides: dict[str, Path]) -> None:
    """Each side's numba kernels compiled into its cache before any server is timed."""
    for source in sides.values():
        env = {**os.environ, "PYTHONPATH": str(source)}
        subprocess.run([sys.executable, "-m", "clear_rag.index.warm"], env=env, cwd=source, check=True)


def memory(docs: int, rounds: int, sides: dict[str, Path], scratch: Path) -> dict[str, Any]:
    """Per side (name: the folder its ``clear_rag`` is imported from): its store of ``docs`` passages'
    build and the median of ``rounds`` fresh servers' figures, sides in rotating order each round. The
    stores are deleted afterwards (at a million passages each takes a few GB)."""
    out: dict[str, Any] = {}
    stores: dict[str, Path] = {}
    for name, source in sides.items():
        stores[name] = scratch / f"store-{docs}-{len(stores)}"
        out[name] = {"build": build_store(source, stores[name], docs)}
        print(f"{docs} {name}: built {out[name]['build']}", flush=True)
    names = list(sides)
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in names}
    for round_ in range(rounds + 1):
        for name in names[round_ % len(names) :] + names[: round_ % len(names)]:
            figures = serve_once(sides[name], stores[name]) | open_once(sides[name], stores[name])
            print(f"{docs} round {round_} {name}: {figures}", flush=True)
            if round_:  # the first round fills the page cache; untimed
                runs[name].append(figures)
    for folder in stores.values():
        shutil.rmtree(folder)
    for name, each in runs.items():
        out[name] |= {key: round(statistics.median(r[key] for r in each), 3) for key in each[0]}
        out[name]["rounds"] = [{k: round(v, 3) for k, v in r.items()} for r in each]
    return out


def measure_memory(
    sizes: list[int], rounds: int, before: str | None, before_sizes: list[int] | None, scratch: Path
) -> dict[str, Any]:
    """One point per size in ``sizes``: the current code's server, and the code of ``before`` beside
    it at each size of ``before_sizes`` (every size when None); a point without it says so."""
    from bench.package_size import checkout

    ours = {"clear-rag": ROOT}
    sides = ours | ({"clear-rag before": checkout(before, scratch)} if before is not None else {})
    warm(sides)
    points = []
    for docs in sizes:
        if before is None or before_sizes is None or docs in before_sizes:
            points.append({"docs": docs, "sides": memory(docs, rounds, sides, scratch)})
            continue
        named = ", ".join(f"{n:,}" for n in before_sizes)
        points.append(
            {
                "docs": docs,
                "before_not_measured": f"{before} not measured at this size (--before-docs {named}): "
                "the current code alone",
                "sides": memory(docs, rounds, ours, scratch),
            }
        )
    return {
        "benchmark": "serve-memory",
        "server": "clear-rag serve --embedder hash --chat echo (fake providers; the hybrid default config), "
        "a fresh process per round; one question posted to /api/chat and read to done",
        "question": QUESTION,
        "rounds": rounds,
        **({"before": before} if before else {}),
        "points": points,
    }


def render(result: dict[str, Any]) -> str:
    lines = [f"{'side':<18} {'chunks':>8} {'listening MB':>13} {'peak MB':>8} {'after answer MB':>16}"]
    lines[0] += f" {'first answer s':>15} {'open indexes s':>15}"
    for point in result["points"]:
        for name, side in point["sides"].items():
            lines.append(
                f"{name:<18} {side['build']['chunks']:>8} {side['rss_listening_mb']:>13.0f} "
                f"{side['peak_rss_mb']:>8.0f} {side['rss_after_answer_mb']:>16.0f} "
                f"{side['first_answer_s']:>15.3f} {side['open_indexes_s']:>15.3f}"
            )
        if "before_not_measured" in point:
            lines.append(f"  {point['docs']}: {point['before_not_measured']}")
    return "\n".join(lines) + "\n"


def main(sizes: list[int], rounds: int, before: str | None, before_sizes: list[int] | None) -> None:
    """Measure, record the load average at the start and end, write results/bench/serve-memory.json."""
    started, load_at_start = time.perf_counter(), [round(x, 2) for x in os.getloadavg()]
    with tempfile.TemporaryDirectory() as tmp:
        result = measure_memory(sizes, rounds, before, before_sizes, Path(tmp))
    result |= {
        "load_average_at_start": load_at_start,
        "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
        "elapsed_s": round(time.perf_counter() - started, 1),
    }
    publish("serve-memory", result, render)
