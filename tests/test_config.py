from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from clear_rag import yamlfile
from clear_rag.config import ChunkingConfig, PipelineConfig
from clear_rag.errors import ConfigError, did_you_mean


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
        ({"chunking": {"chunker": "sentences"}}, r"chunking\.chunker='sentences': is not an accepted value"),
        ({"reranker": 3}, r"reranker=3: has the wrong type\. Expected a reranker name"),
        ({"bm25_k1": True}, r"bm25_k1=True: has the wrong type"),
        ({"rerank": 1}, r"rerank=1: has the wrong type"),
        ({"constrained": "yes"}, r"constrained='yes': has the wrong type\. Expected true or false \("),
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
    with pytest.raises(ConfigError, match=r"c\.toml:1:10: is not valid TOML: invalid value\. Fix it at that"):
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


def test_yaml_that_does_not_parse_is_one_line_with_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("retrievers: [keyword\nrerank: true\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        PipelineConfig.from_file(path)
    assert str(caught.value) == (
        f"{path}:2:7: is not valid YAML: expected ',' or ']' (while parsing a flow sequence "
        "at line 1, column 13). Fix it at that line and column (a value holding ': ' or ' #' needs quotes)"
    )


@pytest.mark.parametrize(
    "text",
    [
        "a: 1\nb: [1, 2\n",  # a list not closed at the end
        "name: s\nrows: [a\nx: 1\n",  # nor before the next key
        "a: {b: 1\nc: 2\n",  # a table not closed
        "a: b: c\n",  # ': ' inside a value
        "- a\nb: 1\n",  # a key after a list
        "a: 'x\n",  # a quote not closed
        "a: 1\n---\nb: 2\n",  # two documents
        "a:\n\t- b\n",  # a tab
        "key: @x\n",  # a reserved character
    ],
)
def test_a_yaml_fault_is_said_the_same_whichever_parser_pyyaml_has(text: str) -> None:
    """libyaml and PyYAML's own parser word their faults apart ("did not find expected ','" against
    "expected ',', but got ':'"); the message clear-rag prints, and the tests that pin it, are one."""
    said = set()
    for parser in yamlfile.LOADERS:
        with pytest.raises(ConfigError) as caught:
            yamlfile.parse(text.encode(), "c.yaml", parser=parser)
        said.add(str(caught.value))
    assert len(said) == 1, said


@pytest.mark.parametrize(
    ("name", "text", "key", "shown"),
    [
        ("c.toml", "bm25_k1 = nan\n", "bm25_k1", "nan"),
        ("c.toml", "bm25_b = -inf\n", "bm25_b", "-inf"),
        ("c.toml", "[chunking]\nsize = 64\n[weights]\nkeyword = inf\n", "weights.keyword", "inf"),
        ("c.yaml", "bm25_k1: .inf\n", "bm25_k1", "inf"),
        ("c.yaml", "bm25_b: .NaN\n", "bm25_b", "nan"),
    ],
)
def test_non_finite_numbers_are_refused_by_key(
    tmp_path: Path, name: str, text: str, key: str, shown: str
) -> None:
    """``nan`` passed no check before (it was called out of range) and ``inf`` passed every lower bound."""
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(
        ConfigError, match=rf"{name}: {key}={shown}: is not a finite number\. Expected .*; nan and inf"
    ):
        PipelineConfig.from_file(path)


def test_non_finite_numbers_are_refused_however_the_config_is_made() -> None:
    with pytest.raises(ConfigError, match=r"PipelineConfig: bm25_k1=inf: is not a finite number"):
        PipelineConfig(bm25_k1=float("inf"))
    with pytest.raises(ConfigError, match=r"PipelineConfig: bm25_b=nan: is not a finite number"):
        PipelineConfig().replace(bm25_b=float("nan"))
    with pytest.raises(ConfigError, match=r"lab\.toml: weights\.vector=inf"):
        PipelineConfig.from_mapping({"weights": {"vector": float("inf")}}, source="lab.toml")


def test_an_alias_bomb_is_refused_before_it_is_built(tmp_path: Path) -> None:
    """Twenty levels, each the level above twice: 40 aliases, 2**21 values once expanded."""
    lines = ["l0: &l0 [x, x]"] + [f"l{n}: &l{n} [*l{n - 1}, *l{n - 1}]" for n in range(1, 21)]
    path = tmp_path / "c.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tracemalloc.start()
    try:
        with pytest.raises(ConfigError) as caught:
            PipelineConfig.from_file(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert str(caught.value) == (
        f"{path}: would expand to more than {yamlfile.MAX_NODES:,} values through its aliases. "
        f"{yamlfile.NO_ALIASES}"
    )
    assert peak < 5 * 2**20


def test_many_aliases_are_refused_at_the_one_over_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("rrf_k: &k 60\nx: [" + ", ".join(["*k"] * 60) + "]\n", encoding="utf-8")
    column = len("x: [") + 4 * yamlfile.MAX_ALIASES + 1
    with pytest.raises(ConfigError, match=rf"c\.yaml:2:{column}: uses more than 50 YAML aliases"):
        PipelineConfig.from_file(path)


def test_an_alias_inside_its_own_value_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("retrievers: &r [keyword, *r]\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"c\.yaml:1:13: has an alias inside the value it names"):
        PipelineConfig.from_file(path)


def test_a_file_over_the_size_limit_is_not_read(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_bytes(b"# " + b"x" * yamlfile.MAX_BYTES + b"\n")
    with pytest.raises(
        ConfigError, match=r"c\.toml: is larger than the 4 MiB a config, suite or golden file"
    ):
        PipelineConfig.from_file(path)


def test_a_config_that_is_not_utf8_names_the_byte(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_bytes(b"reranker: caf\xe9\n")
    with pytest.raises(
        ConfigError, match=r"c\.yaml: is not UTF-8 text \(byte 0xe9 at offset 13\)\. Save it as UTF-8"
    ):
        PipelineConfig.from_file(path)


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        ("when: 2024-13-45\n", r"x\.yaml: holds a value YAML cannot read \(month must be in 1\.\.12\)"),
        (
            "a: !!python/object:os.system {}\n",
            r"x\.yaml:1:4: is not valid YAML: could not determine a constructor",
        ),
        ("a: 1\n---\nb: 2\n", r"x\.yaml:2:1: is not valid YAML: expected a single document in the stream"),
        ("a: \x07\n", r"x\.yaml: holds a character YAML does not allow \(U\+0007 at offset 3"),
        ("a: *nowhere\n", r"x\.yaml:1:4: is not valid YAML: found undefined alias 'nowhere'"),
        ("[" * 2000 + "]" * 2000, r"x\.yaml:1:\d+: is not valid YAML: exceeded maximum nesting depth"),
    ],
)
def test_every_yaml_failure_is_one_config_error(text: str, pattern: str) -> None:
    with pytest.raises(ConfigError, match=pattern) as caught:
        yamlfile.parse(text.encode(), "x.yaml")
    assert "\n" not in str(caught.value)


def test_yaml_loads_what_safe_load_does(tmp_path: Path) -> None:
    """The bounded loader is PyYAML's safe loader with counting added: the same data for real files."""
    import yaml

    for path in [*Path("golden").glob("*.yaml"), *Path("golden/suites").glob("*.yaml")]:
        assert yamlfile.load(path) == yaml.safe_load(path.read_text(encoding="utf-8")), path
    assert yamlfile.parse(b"", "empty.yaml") is None
    assert yamlfile.parse(b"a: &x 1\nb: *x\n", "one-alias.yaml") == {"a": 1, "b": 1}


def test_the_closest_known_key() -> None:
    assert did_you_mean("sett", ("name", "set")) == "Did you mean 'set'? "
    assert did_you_mean("zzz", ("name", "set")) == ""


def test_a_document_of_too_many_values_is_refused_while_it_is_composed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(yamlfile, "MAX_NODES", 100)
    with pytest.raises(ConfigError, match=r"^x\.yaml:1:200: holds more than 100 values\. Check that it is"):
        yamlfile.parse(("[" + ",".join(["0"] * 150) + "]").encode(), "x.yaml")
    # the list and 99 items are 100 values, within the limit; its 100th item is the 101st value
    assert yamlfile.parse(("[" + ",".join(["0"] * 99) + "]").encode(), "x.yaml") == [0] * 99
