"""The catalogue of bad inputs and faults: each case names the fault and the exact message it gets.

A test module under ``tests/reliability/`` registers its cases with ``case(...)`` at import and
asserts, with ``expect``, that the message a command printed is exactly the catalogued one (paths
written as ``{placeholders}`` filled in by the test). The table in ``site/reliability.md`` is
rendered from this catalogue (``python -m tests.reliability.table --write``) and a test fails when it
is stale, so the documented messages are the ones the tests saw.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass

AREAS = ("ingest", "store", "index", "config", "suite", "generation", "server")


@dataclass(frozen=True, slots=True)
class Case:
    """One fault: what a person did (``fault``), and the message clear-rag answers with."""

    id: str
    area: str
    fault: str
    message: str
    exit_code: int | None = None  # the CLI's exit status, where the case runs a command

    def text(self, **places: str) -> str:
        """The message with its ``{placeholders}`` filled in."""
        return self.message.format(**places)


CASES: dict[str, Case] = {}


def case(id: str, *, area: str, fault: str, message: str, exit_code: int | None = None) -> Case:
    """Register one case; ids are unique across the catalogue."""
    if area not in AREAS:
        raise ValueError(f"case {id!r}: area {area!r} is not one of {AREAS}")
    if id in CASES:
        raise ValueError(f"case {id!r} is registered twice")
    CASES[id] = Case(id, area, fault, message, exit_code)
    return CASES[id]


def expect(found: str, entry: Case, **places: str) -> None:
    """Assert that ``found`` (a command's output) holds the case's message as one whole line."""
    wanted = entry.text(**places)
    lines = [line.strip() for line in found.splitlines()]
    assert wanted in lines, f"case {entry.id}: expected the line\n  {wanted}\nin\n{found}"


def load_all() -> dict[str, Case]:
    """Every case, after importing every test module of this package."""
    import tests.reliability as package

    for module in pkgutil.iter_modules(package.__path__):
        if module.name.startswith("test_"):
            importlib.import_module(f"tests.reliability.{module.name}")
    return CASES
