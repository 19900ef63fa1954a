"""The main job's cost: `make run` in a fresh clone, then again with nothing changed.

    python -m bench.make_run [--keep]

Clones the committed HEAD into a temporary folder beside this checkout (so that ``../shared`` is
where the suites look for it), runs ``make run`` there twice and records each run's wall time, how
many asset partitions it materialized, whether every suite row reproduced the committed ``results/``
files, and what the sample question got: its answerer, how many spans the answer cites and the
support check's line. The first run includes creating the environment; pip's cache is used as it is
(``--no-pip-cache`` turns it off, so every package is fetched from the registry as on a machine that
never installed one). Nothing is compiled: llama-cpp-python is opt-in (``make llama``), and the record
says whether the clone's environment has it. Written to results/bench/make-run.json.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import ROOT, write_result

MATERIALIZED = re.compile(r"observed (\d+) sources; materialized (\d+) asset partitions")
ANSWERER = re.compile(r"^answered by: (.+)$", re.MULTILINE)
CITED = re.compile(r"^cited:\n((?:  \[\d+\] .*\n)*)", re.MULTILINE)
LINE = re.compile(r"^answer: ([A-Z][A-Z ]+?):", re.MULTILINE)
REPRODUCED = re.compile(r"^(\S+): (\d+) of (\d+) rows reproduce (\S+)", re.MULTILINE)
GRAPH_SECONDS = re.compile(r"^done in ([\d.]+) s$", re.MULTILINE)


def one_run(clone: Path, log: Path, env: dict[str, str]) -> dict[str, Any]:
    started = time.perf_counter()
    with log.open("w", encoding="utf-8") as out:
        done = subprocess.run(
            ["make", "run"], cwd=clone, stdout=out, stderr=subprocess.STDOUT, check=False, env=env
        )
    wall = time.perf_counter() - started
    text = log.read_text(encoding="utf-8", errors="replace")
    if done.returncode != 0:
        raise SystemExit(f"make run failed with exit code {done.returncode}; its output is in {log}")
    counts = MATERIALIZED.search(text)
    graph = GRAPH_SECONDS.search(text)
    cited, line, answerer = CITED.search(text), LINE.search(text), ANSWERER.search(text)
    return {
        "sample": {
            "answerer": answerer.group(1) if answerer else None,
            "spans_cited": len(cited.group(1).splitlines()) if cited else 0,
            "support": line.group(1).strip().lower() if line else None,
        },
        "llama_cpp_installed": _has_llama_cpp(clone),
        "wall_s": round(wall, 1),
        "graph_s": float(graph.group(1)) if graph else None,
        "sources_observed": int(counts.group(1)) if counts else None,
        "partitions_materialized": int(counts.group(2)) if counts else None,
        "reproduced": [
            {"suite": m.group(1), "rows": int(m.group(3)), "reproduced": int(m.group(2)), "of": m.group(4)}
            for m in REPRODUCED.finditer(text)
        ],
    }


def _has_llama_cpp(clone: Path) -> bool:
    """Whether the clone's environment can import llama_cpp (``make run`` must not need it)."""
    python = clone / ".venv" / "bin" / "python"
    probe = "import importlib.util, sys; sys.exit(importlib.util.find_spec('llama_cpp') is None)"
    return python.exists() and subprocess.run([str(python), "-c", probe], check=False).returncode == 0


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--keep", action="store_true", help="keep the clone and its logs")
    parser.add_argument(
        "--no-pip-cache", action="store_true", help="install with pip's cache off (PIP_NO_CACHE_DIR=1)"
    )
    args = parser.parse_args()
    clone = Path(tempfile.mkdtemp(prefix="make-run-", dir=ROOT.parent))
    try:
        subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
        load = os.getloadavg()
        env = {**os.environ, **({"PIP_NO_CACHE_DIR": "1"} if args.no_pip_cache else {})}
        first = one_run(clone, clone / "first.log", env)
        print(
            f"first make run: {first['wall_s']} s, {first['partitions_materialized']} partitions", flush=True
        )
        second = one_run(clone, clone / "second.log", env)
        print(f"second make run: {second['wall_s']} s, {second['partitions_materialized']} partitions")
    finally:
        if not args.keep:
            shutil.rmtree(clone, ignore_errors=True)
    path = write_result(
        "make-run",
        {
            "benchmark": "make run in a fresh clone, then again with nothing changed",
            "pip_cache": "off" if args.no_pip_cache else "as it is (packages installed before come from it)",
            "load_average_at_start": load,
            "first": first,
            "second": second,
        },
    )
    print(f"written to {path.relative_to(ROOT)}" + (f"; clone kept in {clone}" if args.keep else ""))


if __name__ == "__main__":
    main()
