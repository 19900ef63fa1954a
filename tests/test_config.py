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
        ({"rrf_k": "60"}, r"rrf_k='60': has the wrong type\. Expected an integer of at least 1"),
        ({"weights": {"keyword": "high"}}, r"weights\.keyword='high': has the wrong type\. Expected a table"),
        ({"retrievers": "keyword"}, r"retrievers='keyword': has the wrong type\. Expected a non-empty list"),
        ({"retrievers": []}, r"retrievers=\[\]: is out of range"),
        ({"retrievers": ["keyword", "keyword"]}, r"names a retriever twice"),
        ({"chunking": "big"}, r"chunking='big': has the wrong type\. Expected a table of chunker, size"),
        ({"chunking": {"chunker": "semantic"}}, r"chunking\.chunker='semantic': is not an accepted value"),
        ({"reranker": 3}, r"reranker=3: has the wrong type\. Expected a reranker name"),
        ({"bm25_k1": True}, r"bm25_k1=True: has the wrong type"),
        ({"rerank": 1}, r"rerank=1: has the wrong type"),
        ({"depth": True}, r"depth=True: has the wrong type"),
        ({"rrf_k": 0}, r"rrf_k=0: is out of range"),
        ({"bm25_b": 1.5}, r"bm25_b=1.5: is out of range\. Expected a number from 0 to 1"),
        ({"retrievers": ["keyword", "sparse"]}, r"retrievers=.*sparse"),
        ({"fusion": "borda"}, r"fusion='borda'"),
        ({"weights": {"colbert": 1.0}}, r"weights\.colbert=1\.0: weighs a retriever that is not in use"),
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


def test_every_wrong_value_is_a_config_error_never_a_traceback() -> None:
    """Every key, given a value of every wrong kind, fails (where it fails) with a ConfigError naming it."""
    wrong: list[object] = ["high", 3, -1, 2.5, True, None, [], {}, ["x"], {"x": 1}]
    defaults = PipelineConfig().to_dict()
    errors: list[ConfigError] = []
    for key in defaults:
        for value in wrong:
            try:
                PipelineConfig.from_mapping({key: value}, source="c.toml")
            except ConfigError as err:
                errors.append(err)
                problems = (err.field or "").split(".")[0] != key or not str(err).startswith(f"c.toml: {key}")
                if problems or not ("Expected" in str(err) or "Known keys" in str(err)):
                    pytest.fail(f"{key}={value!r}: {err}")
    assert len(errors) > 100


def test_the_hash_depends_only_on_settings_that_differ_from_their_defaults() -> None:
    """A setting added later with a default that keeps the old behaviour leaves every hash as it was:
    the hash is taken over the non-default settings only."""
    import hashlib
    import json

    config = PipelineConfig(fusion="minmax", chunking=ChunkingConfig(size=96))
    assert config.changed() == {"fusion": "minmax", "chunking": {"size": 96}}
    canonical = json.dumps(config.changed(), sort_keys=True, separators=(",", ":"))
    assert config.hash() == hashlib.sha256(canonical.encode()).hexdigest()[:12]
    assert PipelineConfig(rerank=False).hash() == PipelineConfig().hash()  # a default spelled out
    assert PipelineConfig().changed() == {}


def test_direct_construction_and_replace_are_checked_too() -> None:
    with pytest.raises(ConfigError, match=r"PipelineConfig: top_k=0: is out of range"):
        PipelineConfig(top_k=0)
    with pytest.raises(ConfigError, match=r"fusion='x'"):
        PipelineConfig().replace(fusion="x")
    with pytest.raises(ConfigError, match=r"chunking\.size=0"):
        ChunkingConfig(size=0)
    assert PipelineConfig().replace(rerank=True, reranker="lexical").reranker == "lexical"
