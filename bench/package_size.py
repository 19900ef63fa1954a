"""What a user downloads and a clone holds: the wheels of the code package and of the weights package
(``models/``), built here with ``pip wheel``, and the bytes of the files a checkout holds; with
``--before REV``, the same for an earlier commit, built from ``git archive`` of it.

    python -m bench.package_size --before 4bc7522   # the last commit whose code package held the weights

Writes ``results/bench/package-size.json``. Sizes are in MB (10^6 bytes); nothing is timed.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import ROOT, publish

MB = 1_000_000


def wheel_mb(source: Path, scratch: Path) -> tuple[str, float]:
    """The wheel ``pip wheel --no-deps`` builds from ``source``: its file name and size."""
    out = scratch / f"wheels-{len(list(scratch.iterdir()))}"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(out), str(source)],
        check=True,
        capture_output=True,
    )
    (built,) = out.glob("*.whl")
    return built.name, round(built.stat().st_size / MB, 3)


def tree_mb(rev: str) -> float:
    """The bytes of every file a checkout of ``rev`` holds (git's own blobs, before compression)."""
    listed = subprocess.run(
        ["git", "ls-tree", "-r", "-l", rev], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout
    return round(
        sum(int(line.split()[3]) for line in listed.splitlines() if line.split()[3].isdigit()) / MB, 3
    )


def checkout(rev: str, scratch: Path) -> Path:
    """The files of ``rev``, written out under ``scratch``."""
    folder = scratch / f"at-{rev}"
    archive = subprocess.run(
        ["git", "archive", "--format=tar", rev], cwd=ROOT, check=True, capture_output=True
    )
    tar = scratch / f"{rev}.tar"
    tar.write_bytes(archive.stdout)
    with tarfile.open(tar) as opened:
        opened.extractall(folder, filter="data")
    return folder


def measure(before: str | None) -> dict[str, Any]:
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as scratch_name:
        scratch = Path(scratch_name)
        code_name, code = wheel_mb(ROOT, scratch)
        weights_name, weights = wheel_mb(ROOT / "models", scratch)
        result: dict[str, Any] = {
            "benchmark": "package-size",
            "command": "python -m bench.package_size" + (f" --before {before}" if before else ""),
            "code_wheel": code_name,
            "code_wheel_mb": code,
            "weights_wheel": weights_name,
            "weights_wheel_mb": weights,
            "checkout_mb": tree_mb("HEAD"),
        }
        if before:
            then = checkout(before, scratch)
            name, size = wheel_mb(then, scratch)
            result |= {
                "before": before,
                "code_wheel_before": name,
                "code_wheel_mb_before": size,
                "weights_wheel_mb_before": None,  # the weights were inside the code package then
                "checkout_mb_before": tree_mb(before),
            }
    result["elapsed_s"] = round(time.perf_counter() - started, 1)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", help="an earlier commit to build the code package of, for comparison")
    args = parser.parse_args()
    from clear_rag.report.bench import bench_table

    publish("package-size", measure(args.before), lambda doc: bench_table(doc, "package-size") + "\n")


if __name__ == "__main__":
    main()
