"""The documented table of faults and messages is the one the catalogue renders."""

from __future__ import annotations

from tests.reliability import table
from tests.reliability.catalogue import load_all


def test_table_is_current() -> None:
    page = table.PAGE.read_text(encoding="utf-8")
    assert table.updated(page) == page, (
        "site/reliability.md is stale: python -m tests.reliability.table --write"
    )


def test_the_catalogue_covers_at_least_forty_faults() -> None:
    assert len(load_all()) >= 40
