"""What every benchmark records beside its numbers: when, where, on what."""

from __future__ import annotations

import json
import os
import platform
import shlex
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SCIFACT = ROOT.parent / "shared" / "data" / "beir-scifact"


def environment() -> dict[str, Any]:
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=False
    ).stdout.strip()
    return {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "commit": commit or None,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
    }


def command_line() -> str:
    """The command this benchmark was started with: ``python -m bench.NAME ARGS`` for a module of
    bench/, otherwise the process's own command line (a test, or another script, that called it)."""
    script = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if script is not None and script.parent.name == "bench" and script.suffix == ".py":
        return shlex.join(["python", "-m", f"bench.{script.stem}", *sys.argv[1:]])
    started = list(sys.orig_argv) or ["python"]
    return shlex.join([Path(started[0]).name, *started[1:]])


def write_result(name: str, payload: dict[str, Any]) -> Path:
    """``results/bench/<name>.json``: the payload beside where and when it ran, the command that ran it
    and the library versions that computed it (a benchmark's own ``command`` and ``versions`` kept
    where it records them), through the one writer of result files."""
    from clear_rag.packaged import library_versions
    from clear_rag.results import files

    path = ROOT / "results" / "bench" / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    recorded = {**environment(), "command": command_line(), "versions": library_versions()}
    files.write_result(path, {**recorded, **payload})
    return path


def publish(name: str, result: dict[str, Any], render: Callable[[dict[str, Any]], str]) -> Path:
    """``result`` written to ``results/bench/<name>.json``, printed as its table (``render`` reads the
    file as written, the machine and date included), and where it went: the last step of a benchmark
    that times the whole run (``elapsed_s``)."""
    path = write_result(name, result)
    print()
    print(render(json.loads(path.read_text(encoding="utf-8"))), end="")
    print(f"written to {path.relative_to(ROOT)} in {result['elapsed_s']} s")
    return path


class Clock:
    """Wall and CPU seconds of one stretch. On a shared machine other processes stretch the wall
    time of whichever engine they happen to overlap; this process's CPU time they leave alone."""

    def __enter__(self) -> Clock:
        self.wall, self.cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall, self.cpu = time.perf_counter() - self.wall, time.process_time() - self.cpu


class ZipfText:
    """Seeded synthetic text: words drawn from one Zipf (s = 1) distribution over a vocabulary of
    random letter strings, so common words repeat as they do in prose and rare ones are rare."""

    def __init__(self, seed: int, vocabulary: int) -> None:
        import numpy as np

        self._np = np
        self.rng = np.random.default_rng(seed)
        letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
        vocab: dict[str, None] = {}
        while len(vocab) < vocabulary:
            size = int(self.rng.integers(3, 11))
            vocab.setdefault("".join(letters[self.rng.integers(0, 26, size=size)]))
        self.words = list(vocab)
        weights = 1.0 / np.arange(1, len(self.words) + 1)
        self._p = weights / weights.sum()

    def draw(self, count: int, lo: int, hi: int) -> list[str]:
        """``count`` texts of ``lo`` to ``hi`` words."""
        np = self._np
        lengths = self.rng.integers(lo, hi + 1, size=count)
        tokens = self.rng.choice(len(self.words), size=int(lengths.sum()), p=self._p).tolist()
        ends = np.cumsum(lengths).tolist()
        return [
            " ".join(map(self.words.__getitem__, tokens[e - n : e]))
            for e, n in zip(ends, lengths.tolist(), strict=True)
        ]


def status_kb(field: str) -> int:
    """A field of /proc/self/status in kB (VmRSS, VmHWM)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise OSError(f"{field} not in /proc/self/status")


def reset_peak() -> int:
    """Reset this process's resident high-water mark and return its resident size in kB.

    ``ru_maxrss`` (getrusage) survives ``exec``: a benchmark child started by a parent holding a
    gigabyte starts with that gigabyte as its peak. Writing 5 to clear_refs (Linux >= 4.0) resets
    VmHWM to the current RSS, so a later ``status_kb("VmHWM")`` is this process's own peak.
    """
    Path("/proc/self/clear_refs").write_text("5")
    return status_kb("VmRSS")


def run_script(source: Path, script: str, args: list[str], cwd: Path) -> Any:
    """Run ``script`` (``python -c``) in a fresh interpreter that imports the code at ``source`` first,
    and return the JSON its last line of output prints: how the benchmarks run a ``--before`` commit's
    code (a ``git archive`` copy) or the current tree's side by side."""
    ran = subprocess.run(
        [sys.executable, "-c", script, *args],
        env={**os.environ, "PYTHONPATH": str(source)},
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(ran.stdout.strip().splitlines()[-1])


def counts(text: str) -> list[int]:
    """A comma-separated list of positive counts (``100000,1000000``), in the order given, for an
    argparse ``type=``: anything else is an ``argparse.ArgumentTypeError``, which argparse prints
    after the flag's name (``argument --docs: ...``) and exits 2."""
    import argparse

    parts = [part.strip() for part in text.split(",")]
    if not all(part.isdigit() and int(part) > 0 for part in parts):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a comma-separated list of positive whole numbers; pass e.g. 100000,1000000"
        )
    values = [int(part) for part in parts]
    if len(set(values)) != len(values):
        raise argparse.ArgumentTypeError(f"{text!r} names a size twice; name each size once")
    return values
