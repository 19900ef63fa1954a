"""The published pages as assets downstream of the result files: a changed row rewrites what shows it.

- ``results/<name>``: each result file the pages name that no suite of this graph writes (SciFact,
  the benchmarks), observed by the SHA-256 of its bytes;
- ``site/plots/<name>``: the SVG plots of one result file (``clear_rag.report.figures``), downstream
  of that file (the suite's ``result`` asset where the graph writes it, its source otherwise);
- ``site/page/<page>``: one page with generated blocks (the README, each suite page, performance,
  reproduce), downstream of exactly the result files its blocks name; its prose is part of its code
  version, so an edited paragraph re-renders it on the next run;
- ``site/build``: ``mkdocs build`` of the whole site, with the asset checks ``builds_strictly``
  (``mkdocs build --strict`` passes: no broken link, no page left out of the nav) and
  ``report_matches`` (every block, plot and number of every page matches its results, as
  ``clear-rag check-report`` says).

Pages are rendered from the run's own result folder, falling back to the committed ``results/`` for
files the run did not write. Where the run publishes to ``results/`` the committed README and pages
are rewritten in place; otherwise the site is rendered into a copy beside the run's results
(``.clear-rag/results-site``), so a run never edits the committed pages with numbers it did not
publish, and a reader still gets the site of their own run.
"""

from __future__ import annotations

import filecmp
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from dagster import (
    AssetCheckResult,
    AssetCheckSpec,
    AssetKey,
    AssetsDefinition,
    DataVersion,
    MaterializeResult,
    ObserveResult,
    SourceAsset,
    asset,
    observable_source_asset,
)

from assets.corpus import file_version
from assets.layout import AUTOMATION, OBSERVE, digest
from clear_rag.report.blocks import BLOCK, blocks, check_page, plots_named, result_numbers
from clear_rag.report.figures import write_plots
from clear_rag.report.publish import pages, publish_page
from clear_rag.report.sources import Results

GROUP = "site"
COMMITTED = Path("results")
STRICT = "builds_strictly"
MATCHES = "report_matches"
CODE_VERSION = "1"  # bump when rendering changes what a page or plot holds


def _part(name: str) -> str:
    return re.sub(r"\W", "_", name)


def result_key(name: str) -> AssetKey:
    return AssetKey(["results", *map(_part, name.split("/"))])


def plots_key(name: str) -> AssetKey:
    return AssetKey(["site", "plots", *map(_part, name.split("/"))])


def page_key(page: Path) -> AssetKey:
    """``site/page/README`` for the README, ``site/page/suites/tech`` for ``site/suites/tech.md``."""
    parts = page.with_suffix("").parts
    return AssetKey(["site", "page", *map(_part, parts[1:] if parts[0] == "site" else parts)])


BUILD = AssetKey(["site", "build"])


def target_for(results_dir: Path) -> Path:
    """Where a run's pages go: in place when it publishes to ``results/``, beside its results otherwise."""
    return Path(".") if results_dir == COMMITTED else results_dir.with_name(results_dir.name + "-site")


@dataclass(frozen=True)
class SiteLayout:
    """The site as the definitions see it when they load: the pages with blocks, what each names."""

    root: Path  # the committed pages (README.md, site/, mkdocs.yml)
    results_dir: Path  # where this run's result files go
    written: dict[str, AssetKey]  # result files this graph writes -> the asset that writes each
    pages: dict[Path, set[str]]  # page -> the result files its blocks name
    plotted: set[str]  # result files some page plots

    @classmethod
    def load(cls, root: Path, results_dir: Path, written: dict[str, AssetKey]) -> SiteLayout:
        named: dict[Path, set[str]] = {}
        plotted: set[str] = set()
        for page in pages(root):
            text = (root / page).read_text(encoding="utf-8")
            every = Results.at(results_dir, root / COMMITTED)
            found = {name for b in blocks(text) for name in every.matching(b.name)}
            if BLOCK.search(text):
                named[page] = found
            plotted |= {name for name, _ in plots_named(text)}
        return cls(root, results_dir, written, named, plotted)

    @property
    def target(self) -> Path:
        return self.root / target_for(self.results_dir)

    @property
    def results(self) -> Results:
        return Results.at(self.results_dir, self.root / COMMITTED)

    def upstream(self, name: str) -> AssetKey:
        return self.written.get(name, result_key(name))

    def prose(self, page: Path) -> str:
        """The page with its generated blocks emptied: what a hand edit changes."""
        text = (self.root / page).read_text(encoding="utf-8")
        return BLOCK.sub(lambda m: m.group(1) + m.group(5), text)


def _sources(site: SiteLayout) -> list[SourceAsset]:
    names = sorted({n for found in site.pages.values() for n in found} - site.written.keys())

    def source(name: str) -> SourceAsset:
        @observable_source_asset(
            key=result_key(name),
            group_name=GROUP,
            automation_condition=OBSERVE,
            description=f"The result file {name}.json, by the SHA-256 of its bytes.",
        )
        def observed() -> ObserveResult:
            path = site.results.path(name)
            return ObserveResult(data_version=DataVersion(file_version(path)), metadata={"path": str(path)})

        return observed

    return [source(name) for name in names]


def _plots(site: SiteLayout, name: str) -> AssetsDefinition:
    @asset(
        key=plots_key(name),
        deps=[site.upstream(name)],
        code_version=digest(CODE_VERSION, str(site.target)),
        automation_condition=AUTOMATION,
        group_name=GROUP,
        description=f"The SVG plots of {name}.json, deterministic: an unchanged file draws the same bytes.",
    )
    def plots() -> MaterializeResult:  # type: ignore[type-arg]
        written = write_plots(name, site.results, site.target)
        files = sorted((site.target / "site" / "plots").glob(f"{name.replace('/', '-')}-*.svg"))
        return MaterializeResult(
            data_version=DataVersion(digest(*(file_version(f) for f in files))),
            metadata={"written": [str(p) for p in written], "plots": [str(p) for p in files]},
        )

    return plots


def _page(site: SiteLayout, page: Path) -> AssetsDefinition:
    @asset(
        key=page_key(page),
        deps=[site.upstream(name) for name in sorted(site.pages[page])],
        code_version=digest(CODE_VERSION, str(site.target), site.prose(page)),
        automation_condition=AUTOMATION,
        group_name=GROUP,
        description=f"{page} with its tables, caveats and plot links rendered from the result files.",
    )
    def rendered() -> MaterializeResult:  # type: ignore[type-arg]
        written = [p for p in publish_page(page, site.results, site.root, site.target) if p.suffix == ".md"]
        text = (site.target / page).read_text(encoding="utf-8")
        return MaterializeResult(
            data_version=DataVersion(digest(text)),
            metadata={"path": str(site.target / page), "rewritten": bool(written)},
        )

    return rendered


def _sync_static(root: Path, target: Path) -> None:
    """Into a copy of the site, the files the assets do not write: mkdocs.yml (with its hooks and the
    results folders made absolute) and every page or image under site/ other than the rendered ones."""
    for source in sorted((root / "site").rglob("*")):
        relative = source.relative_to(root)
        if source.is_dir() or relative.parts[:2] == ("site", "plots"):
            continue
        out = target / relative
        if source.suffix == ".md" and out.is_file():
            continue  # a page with blocks is its asset's; a page without is copied once
        if not out.is_file() or not filecmp.cmp(source, out, shallow=False):
            out.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, out)


def _config(site: SiteLayout) -> Path:
    """The mkdocs.yml to build with: the committed one in place, an adjusted copy for a run's site."""
    if site.target.resolve() == site.root.resolve():
        return site.root / "mkdocs.yml"
    config: dict[str, Any] = yaml.safe_load((site.root / "mkdocs.yml").read_text(encoding="utf-8"))
    config["hooks"] = [str((site.root / hook).resolve()) for hook in config.get("hooks", [])]
    config.setdefault("extra", {})["results_dirs"] = [str(f.resolve()) for f in site.results.folders]
    path, text = site.target / "mkdocs.yml", yaml.safe_dump(config, sort_keys=False)
    if not path.is_file() or path.read_text(encoding="utf-8") != text:  # unchanged: left alone
        path.write_text(text, encoding="utf-8")
    return path


def _build(site: SiteLayout) -> AssetsDefinition:
    @asset(
        key=BUILD,
        deps=[*(page_key(p) for p in sorted(site.pages)), *(plots_key(n) for n in sorted(site.plotted))],
        code_version=digest(CODE_VERSION, str(site.target)),
        automation_condition=AUTOMATION,
        check_specs=[
            AssetCheckSpec(STRICT, asset=BUILD, description="`mkdocs build --strict` passes, offline."),
            AssetCheckSpec(MATCHES, asset=BUILD, description="Every block, plot and number matches results."),
        ],
        group_name=GROUP,
        description="The static site (mkdocs-material), built from the rendered pages and plots.",
    )
    def build() -> MaterializeResult:  # type: ignore[type-arg]
        target = site.target
        if target.resolve() != site.root.resolve():
            _sync_static(site.root, target)
        config = _config(site)
        built = subprocess.run(
            [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-f", str(config)],
            capture_output=True,
            text=True,
            env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
            check=False,
        )
        known = result_numbers(site.results)
        problems = [
            str(problem)
            for page in pages(target)
            for problem in check_page(
                (target / page).read_text(encoding="utf-8"), page, site.results, known, root=target
            )
        ]
        output = target / "site-build"
        return MaterializeResult(
            metadata={"site": str(output / "index.html"), "config": str(config)},
            check_results=[
                AssetCheckResult(
                    check_name=STRICT,
                    passed=built.returncode == 0,
                    metadata={"output": (built.stdout + built.stderr)[-4000:] or "clean"},
                ),
                AssetCheckResult(
                    check_name=MATCHES, passed=not problems, metadata={"problems": problems[:50]}
                ),
            ],
        )

    return build


def site_assets(site: SiteLayout) -> list[SourceAsset | AssetsDefinition]:
    """The site's assets; none in a project without pages with blocks, no build without mkdocs.yml."""
    if not site.pages:
        return []
    built = [_build(site)] if (site.root / "mkdocs.yml").is_file() else []
    return [
        *_sources(site),
        *(_plots(site, name) for name in sorted(site.plotted)),
        *(_page(site, page) for page in sorted(site.pages)),
        *built,
    ]
