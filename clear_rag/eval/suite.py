"""Ablation suites: named rows, each a config diff from the suite's base.

```yaml
name: tech
corpus: corpora/tech          # or  beir: ../shared/data/beir-scifact
golden: golden/tech.yaml
baseline: hybrid rrf          # the row every other row is compared against
base: {retrievers: [keyword, vector]}
rows:
  - name: dense only, 50% overlap (the 2024 predecessor)
    set: {retrievers: [vector], chunking: {chunker: fixed, size: 256, overlap: 128}}
```
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clear_rag.config import PipelineConfig
from clear_rag.errors import ConfigError

SUITES_DIR = Path("golden") / "suites"


@dataclass(frozen=True, slots=True)
class Row:
    name: str
    config: PipelineConfig


@dataclass(frozen=True, slots=True)
class Suite:
    name: str
    path: Path
    rows: tuple[Row, ...]
    baseline: str
    corpus: Path | None = None
    golden: Path | None = None
    beir: Path | None = None


def merge(base: Mapping[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` with ``changes`` applied; nested tables (``chunking``) merge key by key."""
    merged = dict(base)
    for key, value in changes.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping) and key != "weights":
            merged[key] = merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def suite_path(name_or_path: str) -> Path:
    """``tech`` means ``golden/suites/tech.yaml``; anything with a suffix is a path."""
    path = Path(name_or_path)
    return path if path.suffix else SUITES_DIR / f"{name_or_path}.yaml"


def load_suite(name_or_path: str) -> Suite:
    import yaml

    path = suite_path(name_or_path)
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in SUITES_DIR.glob("*.yaml"))) or "none"
        raise ConfigError("is not a suite file", path=str(path), fix=f"Known suites: {known}")
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    source = str(path)
    unknown = sorted(set(data) - {"name", "corpus", "golden", "beir", "baseline", "base", "rows"})
    if unknown:
        raise ConfigError(
            "is not a suite key", path=source, field=unknown[0], fix="See clear_rag/eval/suite.py"
        )
    base = PipelineConfig().to_dict()
    base = merge(base, data.get("base") or {})
    rows = []
    for n, row in enumerate(data.get("rows") or [], start=1):
        if not isinstance(row, Mapping) or "name" not in row:
            raise ConfigError("has no name", path=source, field=f"rows[{n}]", fix="Give every row a name:")
        settings = merge(base, row.get("set") or {})
        config = PipelineConfig.from_mapping(settings, source=f"{source} row {row['name']!r}")
        rows.append(Row(str(row["name"]), config))
    names = [r.name for r in rows]
    if not rows or len(set(names)) != len(names):
        raise ConfigError(
            "needs rows with distinct names", path=source, field="rows", value=names, fix="Fix rows:"
        )
    baseline = str(data.get("baseline", names[0]))
    if baseline not in names:
        raise ConfigError(
            "names no row", path=source, field="baseline", value=baseline, fix=f"Use one of {names}"
        )
    where = {k: Path(data[k]) for k in ("corpus", "golden", "beir") if data.get(k)}
    if "beir" not in where and not {"corpus", "golden"} <= set(where):
        raise ConfigError(
            "needs corpus: and golden:, or beir:", path=source, fix="Name the data the suite runs on"
        )
    return Suite(str(data.get("name", path.stem)), path, tuple(rows), baseline, **where)
