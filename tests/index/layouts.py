"""Index manifests as earlier clear-rag versions wrote them, made from one written now: stores from
before format 3 must still open (and stores from before checksums, format 1)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def older(body: dict[str, Any], layout: int) -> dict[str, Any]:
    """``body`` (a format 3 manifest) in layout 2 (an object per document) or 1 (that, and no format,
    checksums or identities), written out here from the columns rather than by the code under test."""
    columns = body["columns"]
    documents: dict[str, dict[str, Any]] = {}
    at = 0
    for doc, version, count in zip(columns["ids"], columns["versions"], columns["counts"], strict=True):
        entry: dict[str, Any] = {"version": version, "chunks": columns["chunks"][at : at + count]}
        if doc in columns["missing"]:
            entry["missing"] = columns["missing"][doc]
        documents[doc], at = entry, at + count
    old = {key: value for key, value in body.items() if key != "columns"} | {"documents": documents}
    if layout == 2:
        return old | {"format": 2}
    return {key: value for key, value in old.items() if key not in ("format", "files", "stat")}


def rewrite_older(folder: Path, layout: int) -> dict[str, Any]:
    """The manifest in ``folder`` rewritten in an older layout; its new body."""
    path = folder / "manifest.json"
    body = older(json.loads(path.read_text(encoding="utf-8")), layout)
    path.write_text(json.dumps(body), encoding="utf-8")
    return body
