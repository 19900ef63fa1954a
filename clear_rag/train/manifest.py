"""What a shipped model was trained from (``training.json``), and the cache key that says whether it
must be trained again.

The key is the SHA-256 of the canonical JSON of every input's version: the training data files'
digests, the base weights' digest, the mining and training settings, and ``CODE_VERSION`` (bumped by
hand when the training code changes what it produces). A model folder whose manifest carries the key
of the current inputs is up to date: the asset and ``clear-rag train`` use it and train nothing.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from clear_rag.atomic import write_atomic
from clear_rag.hashing import file_sha256

MANIFEST = "training.json"
CODE_VERSION = "1"  # the training, export and quantisation code; bump when it changes its output


def cache_key(inputs: Mapping[str, Any]) -> str:
    """``sha256(canonical JSON of inputs)``: equal inputs, equal keys, whatever the key order."""
    canonical = json.dumps(inputs, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def read_manifest(folder: Path) -> dict[str, Any] | None:
    """The folder's manifest, or None when it has none (or an unreadable one: then it is retrained)."""
    path = folder / MANIFEST
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) else None


def is_current(folder: Path, key: str, files: tuple[str, ...]) -> bool:
    """Whether ``folder`` holds a model trained from the inputs whose key is ``key``: its manifest
    names that key and each of ``files`` is there with the digest the manifest recorded."""
    manifest = read_manifest(folder)
    if manifest is None or manifest.get("cache_key") != key:
        return False
    recorded = manifest.get("files", {})
    for name in files:
        path = folder / name
        if not path.is_file() or recorded.get(name) != file_sha256(path):
            return False
    return True


def write_manifest(folder: Path, manifest: Mapping[str, Any]) -> Path:
    """The model folder's ``training.json``, checked against a training run's shape first."""
    from clear_rag.results.schema import check_document

    path = folder / MANIFEST
    check_document(dict(manifest), str(path))
    write_atomic(path, json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return path


def publish(
    manifest: Mapping[str, Any], results_dir: Path, *, kind: str = "training", name: str = ""
) -> Path:
    """A copy of a model's manifest as ``results_dir/<kind>/<name>.json``: the training run's figures
    (steps, pairs, loss, wall time, command), or a calibration's (``kind="calibration"``), as a result
    file the README and site may quote."""
    from clear_rag.results.files import write_result

    path = results_dir / kind / f"{name or manifest['name']}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    write_result(path, dict(manifest))  # the one writer of result files, which checks its shape
    return path
