from __future__ import annotations

from pathlib import Path

import pytest

from clear_rag.config import ChunkingConfig, PipelineConfig
from clear_rag.errors import ConfigError


def test_hash_is_stable_and_changes_with_any_setting() -> None:
    base = PipelineConfig()
    assert base.hash() == PipelineConfig().hash()
    assert len(base.hash()) == 12
    variants = [
        base.replace(fusion="minmax"),
        base.replace(rrf_k=61),
        base.replace(rerank=True),
        base.replace(chunking=ChunkingConfig(size=128)),
        base.replace(retrievers=("keyword",)),
    ]
    assert len({v.hash() for v in variants} | {base.hash()}) == len(variants) + 1


def test_weights_order_does_not_change_the_hash() -> None:
    one = PipelineConfig(fusion="minmax", weights={"keyword": 0.3, "vector": 0.7})
    two = PipelineConfig(fusion="minmax", weights={"vector": 0.7, "keyword": 0.3})
    assert one.hash() == two.hash()


def test_loads_toml_and_yaml_alike(tmp_path: Path) -> None:
    toml = tmp_path / "c.toml"
    toml.write_text('fusion = "minmax"\nrerank = true\n[chunking]\nsize = 128\n', encoding="utf-8")
    yaml = tmp_path / "c.yaml"
    yaml.write_text("fusion: minmax\nrerank: true\nchunking:\n  size: 128\n", encoding="utf-8")
    assert PipelineConfig.from_file(toml) == PipelineConfig.from_file(yaml)
    assert PipelineConfig.from_file(toml).chunking.size == 128


def test_unknown_key_names_file_key_and_a_suggestion(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text("rerankk = true\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"c\.toml: rerankk: is not a setting\. Did you mean 'rerank'\?"):
        PipelineConfig.from_file(path)


def test_unknown_nested_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"chunking\.sise"):
        PipelineConfig.from_mapping({"chunking": {"sise": 3}})


@pytest.mark.parametrize(
    ("data", "pattern"),
    [
        ({"rrf_k": "60"}, r"rrf_k='60': has the wrong type\. Expected int"),
        ({"rerank": 1}, r"rerank=1: has the wrong type"),
        ({"depth": True}, r"depth=True: has the wrong type"),
        ({"rrf_k": 0}, r"rrf_k=0: is out of range"),
        ({"bm25_b": 1.5}, r"bm25_b=1.5: is out of range\. Expected a number from 0 to 1"),
        ({"retrievers": ["keyword", "sparse"]}, r"retrievers=.*sparse"),
        ({"fusion": "borda"}, r"fusion='borda'"),
        ({"weights": {"colbert": 1.0}}, r"weights\.colbert"),
        ({"chunking": {"size": 100, "overlap": 100}}, r"chunking\.overlap=100"),
    ],
)
def test_bad_values_are_named(data: dict[str, object], pattern: str) -> None:
    with pytest.raises(ConfigError, match=pattern):
        PipelineConfig.from_mapping(data, source="lab.toml")


def test_syntax_error_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text("fusion = \n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"c\.toml: is not valid"):
        PipelineConfig.from_file(path)
