"""What every benchmark records beside its numbers: when, where, on what."""

from __future__ import annotations

import json
import os
import platform
import subprocess
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


def write_result(name: str, payload: dict[str, Any]) -> Path:
    from clear_rag.atomic import write_atomic  # the one atomic writer

    path = ROOT / "results" / "bench" / f"{name}.json"
    write_atomic(path, json.dumps({**environment(), **payload}, indent=2) + "\n")
    return path
