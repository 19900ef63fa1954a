"""The README and the site's pages and plots are assets downstream of the result files.

One scenario on the tiny project: the first update renders every page and plot and builds the site
with ``mkdocs build --strict`` (an asset check); a second requests nothing; editing one row of the
toy suite re-renders the toy suite's plots, the toy page and the README (which shows the toy table),
then rebuilds the site, and leaves the other suite's page alone.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dagster import DagsterInstance

from assets.definitions import build_definitions
from assets.resources import PathsResource
from assets.run import CURSOR, update
from assets.site import target_for
from tests.assets.conftest import DAGSTER_WARNINGS, CountingEmbedder, CountingEmbedderResource

ROOT = Path(__file__).resolve().parents[2]
README = "# Toy\n\n<!-- results: toy -->\n<!-- /results -->\n"
TOY_PAGE = """# The toy suite

<!-- results: toy -->
<!-- /results -->

<!-- results: toy plot suite -->
<!-- /results -->

<!-- results: toy caveats -->
<!-- /results -->
"""
OTHER_PAGE = "# Another suite\n\n<!-- results: other -->\n<!-- /results -->\n"
MKDOCS = """site_name: toy
docs_dir: site
site_dir: site-build
theme:
  name: material
  font: false
nav:
  - Home: index.md
  - Toy: toy.md
  - Other: other.md
"""


def _pages(project: Path) -> None:
    (project / "README.md").write_text(README, encoding="utf-8")
    (project / "mkdocs.yml").write_text(MKDOCS, encoding="utf-8")
    site = project / "site"
    site.mkdir()
    (site / "index.md").write_text("# Home\n\nNo generated blocks here.\n", encoding="utf-8")
    (site / "toy.md").write_text(TOY_PAGE, encoding="utf-8")
    (site / "other.md").write_text(OTHER_PAGE, encoding="utf-8")
    # A committed result file of a suite this graph does not run: read by its source asset.
    (project / "results").mkdir()
    other = json.loads((ROOT / "results" / "baseline-fake.json").read_text(encoding="utf-8"))
    (project / "results" / "other.json").write_text(json.dumps({**other, "suite": "other"}), encoding="utf-8")


@pytest.mark.filterwarnings(*DAGSTER_WARNINGS)
def test_a_changed_row_rewrites_its_suites_page_and_plots_and_nothing_else(
    project: Path, counting: CountingEmbedder
) -> None:
    _pages(project)
    results_dir = "dagster-results"
    defs = build_definitions(
        ("toy",),
        embedder="hash",
        paths=PathsResource(results_dir=results_dir),
        embedder_resource=CountingEmbedderResource(name="hash"),
        site=True,
    )
    target = project / target_for(Path(results_dir))
    cursor = project / CURSOR
    with DagsterInstance.ephemeral() as instance:
        first = update(defs, instance, cursor)
        assert first.failed_checks == []
        for key in ("site/plots/toy", "site/page/README", "site/page/toy", "site/page/other", "site/build"):
            assert first.partitions(key) == [None], key
        assert (target / "site" / "plots" / "toy-suite.svg").is_file()
        assert (target / "site-build" / "toy" / "index.html").is_file()
        assert "| hybrid |" in (target / "site" / "toy.md").read_text(encoding="utf-8")
        # The committed pages are the templates: a run that does not publish leaves them as they were.
        assert (project / "site" / "toy.md").read_text(encoding="utf-8") == TOY_PAGE

        assert update(defs, instance, cursor).ticks == []

        suite = project / "golden" / "suites" / "toy.yaml"
        # A change that moves the numbers (one that measures the same leaves the pages as they are).
        dense = "{name: dense, set: {retrievers: [vector]}}"
        suite.write_text(suite.read_text().replace(dense, dense.replace("vector", "keyword")))
        edited = update(defs, instance, cursor)
        touched = sorted({key for tick in edited.ticks for key in tick})
        assert touched == [
            "site/build",
            "site/page/README",
            "site/page/toy",
            "site/plots/toy",
            "toy/evaluation",
            "toy/result",
        ]
        assert edited.partitions("toy/evaluation") == ["dense"]
        assert edited.failed_checks == []


def test_every_result_file_the_repository_pages_name_is_one_the_graph_can_observe() -> None:
    """A block may stand for several files (``*``, ``check/*``): the graph observes each file it stands
    for, never the pattern (a `check/*` block once stopped `make run` in a fresh clone, observing a
    file of that name)."""
    from assets.site import SiteLayout

    site = SiteLayout.load(ROOT, ROOT / "results", {})
    named = {name for found in site.pages.values() for name in found}
    assert {"check/agreement", "check/agreement-cut", "check/adapted-tech"} <= named
    assert not [name for name in named if "*" in name]
    for name in named:
        assert site.results.path(name).is_file()
