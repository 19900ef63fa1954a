from __future__ import annotations

import hashlib

import numpy as np
import pytest

from clear_rag.errors import ModelError
from clear_rag.generate.prompt import REFUSAL, answer_messages, citations, is_refusal, sources_block
from clear_rag.generate.queries import expand, hypothetical_passage, rewrite
from clear_rag.providers import Message
from clear_rag.providers.base import describe, token_pieces
from clear_rag.providers.fake import (
    ECHO_REFUSAL,
    ChatCall,
    EchoChatModel,
    HashEmbedder,
    LexicalReranker,
    ScriptedChatModel,
    hash_bucket,
)
from clear_rag.providers.select import make_chat
from clear_rag.retrieve.assemble import Assembled, Passage

BRAKES = "Disc brakes need new pads when the pads wear thin."
BRAKES_TOO = "Worn brake pads: fit new pads to disc brakes."
TYRES = "Gravel tyre pressure runs lower than on road bikes."


def test_hash_bucket_is_the_sha256_formula() -> None:
    digest = hashlib.sha256(b"brakes").digest()
    expected_bucket = int.from_bytes(digest[:8], "little") % 256
    expected_sign = 1.0 if digest[8] & 1 else -1.0
    assert hash_bucket("brakes", 256) == (expected_bucket, expected_sign)


def test_one_word_embeds_to_a_signed_unit_vector_at_its_bucket() -> None:
    vectors = HashEmbedder(dim=64).embed(["Brakes brakes BRAKES"], kind="document")
    bucket, sign = hash_bucket("brakes", 64)
    expected = np.zeros((1, 64), dtype=np.float32)
    expected[0, bucket] = sign  # count 3, normalised: 3 / sqrt(3^2)
    np.testing.assert_array_equal(vectors, expected)


def test_embeddings_are_unit_float32_rows_and_word_free_text_stays_zero() -> None:
    vectors = HashEmbedder(dim=32).embed([BRAKES, "", "?!", TYRES], kind="document")
    assert vectors.dtype == np.float32
    assert vectors.shape == (4, 32)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), [1.0, 0.0, 0.0, 1.0], atol=1e-6)


def test_empty_input_gives_an_empty_matrix() -> None:
    assert HashEmbedder(dim=8).embed([], kind="query").shape == (0, 8)


def test_texts_sharing_words_are_closer_than_unrelated_texts() -> None:
    brakes, brakes_too, tyres = HashEmbedder().embed([BRAKES, BRAKES_TOO, TYRES], kind="document")
    assert float(brakes @ brakes_too) > float(brakes @ tyres) + 0.3


def test_embedding_is_deterministic_across_instances_and_kinds() -> None:
    first = HashEmbedder().embed([BRAKES, TYRES], kind="document")
    again = HashEmbedder().embed([BRAKES, TYRES], kind="query")
    np.testing.assert_array_equal(first, again)


def test_an_unknown_kind_is_named_in_the_error() -> None:
    with pytest.raises(ValueError, match=r"kind='passage'.*'document', 'query'"):
        HashEmbedder().embed([BRAKES], kind="passage")  # type: ignore[arg-type]


def test_a_bare_string_is_refused() -> None:
    with pytest.raises(TypeError, match="wrap a single text in a list"):
        HashEmbedder().embed(BRAKES, kind="query")


@pytest.mark.parametrize("dim", [0, -3, True, 2.5])
def test_dim_must_be_a_positive_integer(dim: object) -> None:
    with pytest.raises(ValueError, match=rf"dim={dim!r}"):
        HashEmbedder(dim=dim)  # type: ignore[arg-type]


def test_lexical_reranker_logit_is_scaled_query_word_overlap() -> None:
    logits = LexicalReranker().score("disc brake pads", [BRAKES_TOO, BRAKES, TYRES])
    assert logits.dtype == np.float32
    # BRAKES_TOO has all 3 query words; BRAKES has "disc" and "pads" but "brakes", not "brake".
    np.testing.assert_allclose(logits, [8 * 3 / 3 - 4, 8 * 2 / 3 - 4, 8 * 0 / 3 - 4], rtol=1e-6)


def test_lexical_reranker_on_empty_input_and_a_word_free_query() -> None:
    assert LexicalReranker().score("disc brakes", []).shape == (0,)
    np.testing.assert_array_equal(LexicalReranker().score("?", [BRAKES]), [-4.0])


@pytest.mark.parametrize("text", ["", "one", "  two  words ", "new\nline\ttab  ", "   "])
def test_token_pieces_join_back_to_the_text(text: str) -> None:
    assert "".join(token_pieces(text)) == text


def test_scripted_chat_streams_queued_answers_in_order_and_records_calls() -> None:
    chat = ScriptedChatModel()
    chat.enqueue("Fit new pads [1].")
    chat.enqueue(["Run ", "80 psi", "."])
    question = [Message("system", "Answer from the context."), Message("user", "Pads?")]

    assert list(chat.stream(question, temperature=0.0)) == ["Fit", " new", " pads", " [1]."]
    assert list(chat.stream(question[1:])) == ["Run ", "80 psi", "."]
    assert chat.history == [
        ChatCall(messages=tuple(question), options={"temperature": 0.0}),
        ChatCall(messages=(question[1],), options={}),
    ]
    assert chat.pending == 0


def test_scripted_chat_with_nothing_queued_fails_at_the_call() -> None:
    chat = ScriptedChatModel()
    with pytest.raises(ModelError, match=r"no response queued.*enqueue"):
        chat.stream([Message("user", "Anyone there?")])
    assert chat.history == []


def test_echo_chat_drops_a_word_per_phrasing_and_passes_the_guards() -> None:
    chat = make_chat("echo")
    assert describe(chat) == "echo-chat@1"
    kept, dropped = expand(chat, "how long are webhook signatures valid", 3)
    assert kept == [
        "long are webhook signatures valid",
        "how are webhook signatures valid",
        "how long webhook signatures valid",
    ]
    assert dropped == []
    # The same question always gets the same reply: runs on it are reproducible.
    assert hypothetical_passage(chat, "retry budget") == "budget\nretry"
    assert "".join(chat.stream([Message("user", "single")])) == "single"


def test_echo_chat_treats_a_rewrite_prompt_as_before_not_as_an_answer_prompt() -> None:
    history = [Message("user", "What does Growth cost?"), Message("assistant", "290 dollars [1].")]
    result = rewrite(EchoChatModel(), "and Scale?", history)
    prompt = "Conversation: user: What does Growth cost? assistant: 290 dollars [1]. Last message: and Scale?"
    words = prompt.split()
    assert result.proposed == "\n".join(" ".join(words[:i] + words[i + 1 :]) for i in range(3))


def packed(*texts: str) -> Assembled:
    passages = tuple(
        Passage(f"d{n}", 0, len(text), (f"d{n}#0000",), text, rank=n, token_count=len(text.split()))
        for n, text in enumerate(texts, start=1)
    )
    return Assembled(passages, sum(p.token_count for p in passages), 1500, ())


def ask_echo(question: str, context: Assembled, **options: object) -> str:
    """The echo model's reply to the real answer prompt over ``context``."""
    messages = answer_messages(question, sources_block(context.passages))
    return "".join(EchoChatModel().stream(messages, **options))


def test_echo_chat_answers_with_the_first_sentence_of_source_one_and_cites_it() -> None:
    context = packed(
        "## Signatures\n\nA webhook signature is valid for five minutes.  After that, retry.",
        "Unrelated: tyres run at 30 psi. More text.",
    )
    answer = ask_echo("how long are webhook signatures valid?", context, temperature=0.0, max_tokens=256)
    assert answer == "## Signatures A webhook signature is valid for five minutes. [1]"
    assert citations(answer, context) == citations("[1]", context)
    # Deterministic, and short however long the sources are: never the prompt echoed back.
    assert ask_echo("how long are webhook signatures valid?", context) == answer


def test_a_citation_in_source_one_does_not_end_its_first_sentence_early() -> None:
    context = packed("Keys rotate daily (see [2] in the runbook) and expire. Then more.", "Runbook.")
    assert ask_echo("when do keys rotate?", context) == (
        "Keys rotate daily (see [2] in the runbook) and expire. [1]"
    )


def test_echo_chat_answer_is_bounded_when_source_one_has_no_sentence_end() -> None:
    words = [f"w{n}" for n in range(100)]
    answer = ask_echo("q?", packed(" ".join(words)))
    assert answer == " ".join(words[:40]) + " [1]"


def test_echo_chat_refuses_an_answer_prompt_without_sources() -> None:
    answer = ask_echo("anything?", packed())
    assert answer == ECHO_REFUSAL == REFUSAL and is_refusal(answer)


def test_the_chat_fakes_fingerprint_as_name_at_version() -> None:
    scripted = ScriptedChatModel()
    assert scripted.fingerprint == describe(scripted) == "scripted-chat@1"
    assert EchoChatModel().fingerprint == "echo-chat@1"
