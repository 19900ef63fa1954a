"""OnnxCrossEncoder on a tiny real ONNX graph and tokenizer (tiny_models.py): no model download."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from clear_rag.errors import ModelError
from clear_rag.providers.base import Reranker, describe
from clear_rag.providers.cross_encoder import MODEL_FILES, OnnxCrossEncoder, find_model_files
from tests.providers.tiny_models import build_cross_encoder, build_model_dir, build_tokenizer, expected_logit

QUERY = "disc brake pads"
PASSAGES = [
    "tyre pressure for road bikes",  # shares nothing with the query
    "replace the pads when the disc is new",  # two query words in eight
    "check the brake pads and the disc rotor yearly",  # three in nine
    "chain stretch",
]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_model_dir(tmp_path_factory.mktemp("tiny"))


def _encoder(model: Path | tuple[Path, Path], **settings: int) -> OnnxCrossEncoder:
    return OnnxCrossEncoder(model, name="tiny-cross-encoder", version="1", **settings)


def test_the_passage_sharing_the_query_words_ranks_first(model_dir: Path) -> None:
    reranker: Reranker = _encoder(model_dir)
    logits = reranker.score(QUERY, PASSAGES)
    assert logits.dtype == np.float32 and logits.shape == (4,)
    np.testing.assert_allclose(logits, [0.0, 10 * 2 / 8, 10 * 3 / 9, 0.0], rtol=1e-6)
    assert int(np.argmax(logits)) == 2
    assert describe(reranker) == "tiny-cross-encoder@1"


def test_logits_come_back_in_input_order_after_the_length_sort(model_dir: Path) -> None:
    passages = ["the disc " * n + "pads" for n in (7, 1, 4, 9, 2)]  # deliberately not sorted by length
    logits = _encoder(model_dir, batch_size=2).score(QUERY, passages)
    np.testing.assert_allclose(logits, [expected_logit(QUERY, p) for p in passages], rtol=1e-6)
    alone = [_encoder(model_dir).score(QUERY, [p])[0] for p in passages]
    np.testing.assert_allclose(logits, alone, rtol=1e-6)


def test_batch_size_does_not_change_a_logit(model_dir: Path) -> None:
    passages = [f"{'the ' * (i % 7)}brake {'pads ' * (i % 3)}tyre" for i in range(37)]
    one = _encoder(model_dir, batch_size=1).score(QUERY, passages)
    sixteen = _encoder(model_dir, batch_size=16).score(QUERY, passages)
    np.testing.assert_array_equal(one, sixteen)


def test_truncation_cuts_the_passage_and_keeps_the_query(model_dir: Path) -> None:
    passage = "disc brake pads " + "the " * 20
    # 12 tokens = [CLS] + 3 query words + [SEP] + 6 passage words + [SEP]: "disc brake pads the the the"
    short = _encoder(model_dir, max_tokens=12).score(QUERY, [passage, "the " * 20 + QUERY])
    np.testing.assert_allclose(short, [10 * 3 / 6, 0.0], rtol=1e-6)
    full = _encoder(model_dir).score(QUERY, [passage])
    np.testing.assert_allclose(full, [10 * 3 / 23], rtol=1e-6)


def test_a_query_longer_than_the_budget_still_scores(model_dir: Path) -> None:
    """Only-second truncation raises on this; longest-first cuts both texts to fit."""
    logits = _encoder(model_dir, max_tokens=16).score("disc brake " * 40, ["disc brake pads"])
    assert logits.shape == (1,) and np.isfinite(logits).all()


def test_empty_passages_give_an_empty_array(model_dir: Path) -> None:
    logits = _encoder(model_dir).score(QUERY, [])
    assert logits.shape == (0,) and logits.dtype == np.float32


def test_explicit_paths_and_graphs_without_token_types_or_with_flat_output(tmp_path: Path) -> None:
    tokenizer = build_tokenizer(tmp_path / "tok.json")
    flat = build_cross_encoder(tmp_path / "flat.onnx", flat_output=True)
    np.testing.assert_allclose(
        _encoder((flat, tokenizer)).score(QUERY, PASSAGES[1:3]), [10 * 2 / 8, 10 * 3 / 9], rtol=1e-6
    )
    untyped = build_cross_encoder(tmp_path / "untyped.onnx", token_types=False)
    # Without token types the graph sees the whole pair: word tokens over all tokens, [CLS]/[SEP] included.
    np.testing.assert_allclose(
        _encoder((untyped, tokenizer)).score(QUERY, ["chain stretch"]), [10 * 5 / 8], rtol=1e-6
    )


@pytest.mark.parametrize("first", range(len(MODEL_FILES)))
def test_the_first_model_file_in_the_documented_order_wins(tmp_path: Path, first: int) -> None:
    build_tokenizer(tmp_path / "tokenizer.json")
    for rank, name in enumerate(MODEL_FILES[first:]):
        build_cross_encoder(tmp_path / name, bias=100.0 * (rank + 1))
    encoder = _encoder(tmp_path)
    assert encoder.model_path.name == MODEL_FILES[first]
    np.testing.assert_allclose(encoder.score(QUERY, ["chain"]), [100.0], rtol=1e-6)


def test_quantised_file_is_preferred_to_fp32_and_onnx_subfolder_is_searched(tmp_path: Path) -> None:
    """The layout of a cloned Hugging Face repository: tokenizer.json at the root, graphs in onnx/."""
    build_tokenizer(tmp_path / "tokenizer.json")
    build_cross_encoder(tmp_path / "onnx" / "model.onnx")
    build_cross_encoder(tmp_path / "onnx" / "model_quint8_avx2.onnx")
    assert find_model_files(tmp_path) == (
        tmp_path / "onnx" / "model_quint8_avx2.onnx",
        tmp_path / "tokenizer.json",
    )


def test_a_folder_without_a_model_names_itself_the_files_and_the_pull_command(tmp_path: Path) -> None:
    build_tokenizer(tmp_path / "tokenizer.json")
    with pytest.raises(ModelError) as caught:
        _encoder(tmp_path)
    message = str(caught.value)
    assert str(tmp_path) in message
    assert all(name in message for name in MODEL_FILES)
    assert "clear-rag models pull ms-marco-minilm-l6" in message


def test_a_folder_without_a_tokenizer_says_so(tmp_path: Path) -> None:
    build_cross_encoder(tmp_path / "model.onnx")
    with pytest.raises(ModelError, match=r"model\.onnx but no tokenizer\.json.*clear-rag models pull"):
        _encoder(tmp_path)


def test_a_missing_folder_or_file_is_a_model_error(tmp_path: Path, model_dir: Path) -> None:
    with pytest.raises(ModelError, match="is not a folder"):
        _encoder(tmp_path / "nowhere")
    with pytest.raises(ModelError, match=r"missing\.onnx: does not exist"):
        _encoder((tmp_path / "missing.onnx", model_dir / "tokenizer.json"))


def test_unreadable_files_are_model_errors(tmp_path: Path, model_dir: Path) -> None:
    (tmp_path / "model.onnx").write_bytes(b"not a graph")
    (tmp_path / "tokenizer.json").write_text("{}", encoding="utf-8")
    with pytest.raises(ModelError, match="cannot be read as a tokenizer"):
        _encoder(tmp_path)
    with pytest.raises(ModelError, match="cannot be loaded"):
        _encoder((tmp_path / "model.onnx", model_dir / "tokenizer.json"))


def test_graphs_that_are_not_one_logit_cross_encoders_are_refused(tmp_path: Path, model_dir: Path) -> None:
    tokenizer = model_dir / "tokenizer.json"
    renamed = build_cross_encoder(tmp_path / "renamed.onnx", ids_name="ids")
    with pytest.raises(ModelError, match="has inputs"):
        _encoder((renamed, tokenizer))
    two = build_cross_encoder(tmp_path / "two.onnx", outputs=2)
    with pytest.raises(ModelError, match="one logit per pair"):
        _encoder((two, tokenizer))


def test_settings_and_inputs_are_checked(model_dir: Path) -> None:
    for bad in ({"batch_size": 0}, {"max_tokens": 4}, {"threads": -1}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            _encoder(model_dir, **bad)
    with pytest.raises(ValueError, match="name"):
        OnnxCrossEncoder(model_dir, name="", version="1")
    with pytest.raises(TypeError, match="single string"):
        _encoder(model_dir).score(QUERY, "one passage")


def test_a_pair_scored_again_comes_from_the_memo_with_the_same_logit(model_dir: Path) -> None:
    encoder = _encoder(model_dir)
    first, reused = encoder.score_reusing(QUERY, PASSAGES)
    assert reused == 0
    again, reused = encoder.score_reusing(QUERY, [PASSAGES[2], "a new passage on disc pads", PASSAGES[0]])
    assert reused == 2
    np.testing.assert_array_equal(again[[0, 2]], first[[2, 0]])
    assert again[1] == _encoder(model_dir, memo=0).score(QUERY, ["a new passage on disc pads"])[0]
    # the query is part of the key: the same passage under another query is run
    assert encoder.score_reusing("chain stretch", PASSAGES[:1])[1] == 0


@pytest.mark.parametrize("settings", [{"batch_size": 4}, {"memo": 0}])
def test_no_memo_where_a_logit_may_depend_on_its_batch_or_none_is_wanted(
    model_dir: Path, settings: dict[str, int]
) -> None:
    encoder = _encoder(model_dir, **settings)
    encoder.score(QUERY, PASSAGES)
    logits, reused = encoder.score_reusing(QUERY, PASSAGES)
    assert reused == 0
    np.testing.assert_allclose(logits, encoder.score(QUERY, PASSAGES), rtol=1e-6)


def test_the_memo_keeps_only_the_most_recent_pairs(model_dir: Path) -> None:
    encoder = _encoder(model_dir, memo=3)
    encoder.score(QUERY, PASSAGES)  # four pairs into a memo of three: the first is dropped
    assert encoder.score_reusing(QUERY, PASSAGES[1:])[1] == 3
    assert encoder.score_reusing(QUERY, PASSAGES[:1])[1] == 0
    with pytest.raises(ValueError, match="memo"):
        _encoder(model_dir, memo=-1)
