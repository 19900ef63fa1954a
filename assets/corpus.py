"""Source assets: what the pipeline reads and does not make, observed by content hash.

- ``<suite>/suite_rows``: one partition per row, data version = the row's config hash, so editing what
  one row sets changes exactly that partition's version;
- ``<suite>/suite``: the suite file as a whole (its baseline and row order shape the result document);
- ``<suite>/golden``: the golden set file;
- ``<suite>/corpus``: one partition per corpus file, data version = the SHA-256 of its bytes (the hash
  ingestion skips unchanged files by).

``observable_source_asset`` and ``DataVersionsByPartition`` are beta in Dagster 1.13 (they warn). They
are used anyway because they are what lets a content hash per row and per file reach the automation
conditions; anything built on materializations alone would have to re-run to find out.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from dagster import (
    AssetsDefinition,
    DataVersion,
    DataVersionsByPartition,
    ObserveResult,
    SourceAsset,
    observable_source_asset,
)

from assets.layout import OBSERVE, Layout, digest

GROUP = "sources"


def file_version(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def source_assets(layout: Layout) -> list[SourceAsset | AssetsDefinition]:
    keys = set(layout.files)
    names = {r.name for r in layout.suite.rows}

    @observable_source_asset(
        key=layout.key("suite_rows"),
        partitions_def=layout.rows,
        group_name=GROUP,
        automation_condition=OBSERVE,
        description=f"Rows of {layout.suite.path}; data version per row = its config hash (and chat model).",
    )
    def suite_rows() -> DataVersionsByPartition:
        # Rows added since the definitions loaded have no partition yet; they appear on reload.
        return DataVersionsByPartition(
            {r.name: r.version() for r in layout.current().rows if r.name in names}
        )

    @observable_source_asset(
        key=layout.key("suite"),
        group_name=GROUP,
        automation_condition=OBSERVE,
        description=f"{layout.suite.path} as a whole: baseline and row order shape the result.",
    )
    def suite() -> ObserveResult:
        suite = layout.current()
        order = [f"{r.name}={r.version()}" for r in suite.rows]
        return ObserveResult(
            data_version=DataVersion(digest(suite.baseline, *order)),
            metadata={"rows": len(order), "baseline": suite.baseline},
        )

    labels = layout.label_files

    @observable_source_asset(
        key=layout.key("golden"),
        group_name=GROUP,
        automation_condition=OBSERVE,
        description=f"The golden set ({', '.join(map(str, labels))}), by the SHA-256 of its bytes.",
    )
    def golden() -> ObserveResult:
        versions = [file_version(path) for path in labels]
        return ObserveResult(
            data_version=DataVersion(versions[0] if len(versions) == 1 else digest(*versions)),
            metadata={"path": ", ".join(map(str, labels))},
        )

    @observable_source_asset(
        key=layout.key("corpus"),
        partitions_def=layout.corpus,
        group_name=GROUP,
        automation_condition=OBSERVE,
        description=f"Files under {layout.suite.beir or layout.suite.corpus}; data version per file = "
        "SHA-256 of its bytes.",
    )
    def corpus() -> DataVersionsByPartition:
        versions = {}
        for key in keys:
            path = layout.corpus_path(key)
            if path.is_file():  # a deleted file's partition goes with the next reload
                versions[key] = file_version(path)
        return DataVersionsByPartition(versions)

    return [suite_rows, suite, golden, corpus]
