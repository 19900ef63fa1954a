"""The one translator of pydantic's errors (``clear_rag.validation``): on a planted record, every kind
of fault is one ``ConfigError`` naming the file, the field as written, the value and the fix; and the
records that cross a boundary (config, suite, golden set, chat request) all go through it."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import pytest
from pydantic import Field, model_validator

from clear_rag.config import ChunkingConfig, PipelineConfig
from clear_rag.errors import ConfigError
from clear_rag.eval.golden import GoldenAnswer, GoldenFile, GoldenQuestion
from clear_rag.eval.suite import RowFile, SuiteFile
from clear_rag.validation import Int, Record, Rule, Text, keys_of, parsed
from clear_rag.web.request import ChatRequest

PACKAGE = Path(__file__).resolve().parents[1] / "clear_rag"


class Leaf(Record):
    unknown = keys_of("leaf")
    rules: ClassVar[Mapping[str, Rule]] = {
        "": Rule("Write leaf: {size: N}", "is not a leaf"),
        "size": Rule("Write size: N, at least 1"),
    }
    size: Int = Field(1, ge=1)


class Item(Record):
    unknown = keys_of("item")
    named_by = "id"
    rules: ClassVar[Mapping[str, Rule]] = {"id": Rule("Write id: NAME"), "tags": Rule("Write tags: [a, b]")}
    id: Text
    tags: tuple[Text, ...] = ()
    leaf: Leaf = Field(default_factory=Leaf)

    @model_validator(mode="after")
    def _no_x(self) -> Item:
        if "x" in self.tags:
            raise ConfigError("tags x, which no item may", field=f"{self.id}.tags", value=["x"], fix="Drop x")
        return self


class Planted(Record):
    unknown = keys_of("planted file")
    rules: ClassVar[Mapping[str, Rule]] = {
        "items": Rule("Write items: and under it - id: ...", "must be a list of items"),
        "table": Rule("Write table: {key: N}"),
    }
    items: tuple[Item, ...] = ()
    table: dict[str, Int] = Field(default_factory=dict)


PLANTED = "A planted file has items, table"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"itemz": []}, f"itemz: is not a planted file key. Did you mean 'items'? {PLANTED}"),
        ({1: "x"}, f"1: is not a planted file key. {PLANTED}"),
        ([], f"is not a table. {PLANTED}"),
        ({"items": "a"}, "items='a': must be a list of items. Write items: and under it - id: ..."),
        ({"items": ["a"]}, "items[1]='a': is not a table. An item has id, tags, leaf"),
        (
            {"items": [{"id": "a"}, {"id": "b", "sise": 2}]},
            "b.sise: is not an item key. An item has id, tags, leaf",
        ),
        # an unknown key is said before the key it misspells is said to be missing
        (
            {"items": [{"idd": "a"}]},
            "items[1].idd: is not an item key. Did you mean 'id'? An item has id, tags, leaf",
        ),
        ({"items": [{"id": "a"}, {"tags": []}]}, "items[2].id: is missing. Write id: NAME"),
        (
            {"items": [{"id": "a", "tags": ["t", 3]}]},
            "a.tags=['t', 3]: has the wrong type. Write tags: [a, b]",
        ),
        (
            {"items": [{"id": "a", "leaf": {"size": 0}}]},
            "a.leaf.size=0: is out of range. Write size: N, at least 1",
        ),
        ({"items": [{"id": "a", "leaf": 3}]}, "a.leaf=3: is not a leaf. Write leaf: {size: N}"),
        ({"table": {"k": "v"}}, "table.k='v': has the wrong type. Write table: {key: N}"),
        ({"items": [{"id": "a", "tags": ["x"]}]}, "a.tags=['x']: tags x, which no item may. Drop x"),
    ],
)
def test_each_planted_fault_is_one_message_naming_file_field_value_and_fix(data: Any, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parsed(Planted, data, "p.yaml")
    assert str(caught.value) == f"p.yaml: {message}"
    assert caught.value.path == "p.yaml"


def test_a_well_formed_record_reads() -> None:
    planted = parsed(Planted, {"items": [{"id": "a", "tags": ["t"], "leaf": {"size": 2}}]}, "p.yaml")
    assert planted.items[0].leaf.size == 2 and planted.items[0].tags == ("t",)


@pytest.mark.parametrize(
    "kind",
    [
        PipelineConfig,
        ChunkingConfig,
        SuiteFile,
        RowFile,
        GoldenFile,
        GoldenQuestion,
        GoldenAnswer,
        ChatRequest,
    ],
)
def test_every_field_of_a_record_read_from_outside_says_its_fix(kind: type[Record]) -> None:
    """A field without a rule would be told only the keys of its record."""
    assert set(kind.model_fields) - set(kind.rules) == set()
    assert kind.model_config.get("extra") == "forbid"


def test_there_is_one_translator_of_pydantic_errors() -> None:
    """Only the translator and the config's constructor (which hands its errors to it) catch pydantic's
    ``ValidationError`` for what people write; ``results/schema.py`` checks the result files clear-rag
    writes itself. The hand-written key checks the translator replaced are gone."""
    catching = sorted(
        str(p.relative_to(PACKAGE))
        for p in PACKAGE.rglob("*.py")
        if "except ValidationError" in p.read_text()
    )
    assert catching == ["config.py", "results/schema.py", "validation.py"]
    assert not [p for p in PACKAGE.rglob("*.py") if "check_keys(" in p.read_text()]
