"""The answer grader on scripted answers: each grade as the module documents it, and what decided it."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clear_rag.errors import ConfigError
from clear_rag.eval.answers import ANSWER_METRICS, found_variant, grade
from clear_rag.eval.golden import Label, Question, load_golden
from clear_rag.generate.prompt import REFUSAL
from clear_rag.retrieve.stages import ChunkRef

DOC = "profile.md"
TEXT = (
    "Roles. Since 2019 she has chaired the Faculty Ethics Committee.\n\n"
    "Clubs. She chaired the Harbour Rowing Club from 2012 to 2016.\n\n"
    "Education. She completed her doctorate in 2011 at Lindqvist University."
)


def _span(quote: str) -> tuple[int, int]:
    start = TEXT.index(quote)
    return start, start + len(quote)


ROLE, CLUB, PHD = (ChunkRef(DOC, *_span(TEXT.split("\n\n")[n])) for n in range(3))  # one chunk per paragraph


def _question(quote: str, **grading: object) -> Question:
    label = Label(DOC, *_span(quote), quote)
    return Question("q", "?", "distractor", "", (label,), **grading)  # type: ignore[arg-type]


COMMITTEE = _question(
    "Since 2019 she has chaired the Faculty Ethics Committee",
    must_mention=(("Ethics Committee",), ("2019",)),
    must_not_mention=("Rowing",),
)
DOCTORATE = _question(
    "She completed her doctorate in 2011", must_mention=(("PhD", "doctorate", "Ph.D."), ("2011",))
)
SALARY = Question("salary", "What is her salary?", "refusal", "", (), refusal=True)


def test_a_right_answer_citing_the_right_chunk() -> None:
    graded = grade(COMMITTEE, "She has chaired the Ethics Committee since 2019 [1].", [ROLE], [ROLE, CLUB])
    assert graded.metrics == {
        "correct": 1.0,
        "mentions": 1.0,
        "cited right": 1.0,
        "attributed right": 1.0,
        "miscited when correct": 0.0,
        "false refusal": 0.0,
        "bleed": 0.0,
        "in context": 1.0,
    }
    assert graded.decided["verdict"] == "correct, cited right"
    assert graded.decided["mentioned"] == {"Ethics Committee": "Ethics Committee", "2019": "2019"}


def test_a_right_answer_citing_the_wrong_chunk() -> None:
    graded = grade(COMMITTEE, "She has chaired the Ethics Committee since 2019 [2].", [CLUB], [ROLE, CLUB])
    assert graded.metrics["correct"] == 1.0
    assert graded.metrics["cited right"] == 0.0
    assert graded.metrics["miscited when correct"] == 1.0
    assert graded.decided["outcome"] == "correct, not cited right"
    assert graded.decided["verdict"] == "correct, but the citations miss the answer's span"
    assert graded.decided["cited"] == [[DOC, CLUB.start, CLUB.end]]


def test_a_false_refusal_is_a_refusal_with_the_answer_in_the_context() -> None:
    graded = grade(COMMITTEE, REFUSAL, [], [CLUB, ROLE])
    assert graded.metrics["false refusal"] == 1.0
    assert graded.metrics["correct"] == 0.0 and graded.metrics["mentions"] == 0.0
    assert graded.decided["verdict"] == "false refusal: the context held the answer"
    # without the answering chunk in the context the refusal is retrieval's failure, not the model's
    missed = grade(COMMITTEE, REFUSAL, [], [CLUB])
    assert missed.metrics["false refusal"] == 0.0 and missed.metrics["in context"] == 0.0
    assert missed.decided["verdict"] == "refused: not in the context"


def test_a_bleed_names_the_neighbouring_section_term_it_said() -> None:
    answer = "She chaired the Ethics Committee of the Harbour Rowing Club in 2019 [1]."
    graded = grade(COMMITTEE, answer, [ROLE], [ROLE, CLUB])
    assert graded.metrics["bleed"] == 1.0
    assert graded.metrics["correct"] == 0.0  # every required term, but the wrong section's too
    assert graded.metrics["mentions"] == 1.0
    assert graded.decided["bleed"] == ["Rowing"]
    assert graded.decided["verdict"] == "bleed: said Rowing"
    assert "miscited when correct" not in graded.metrics


def test_a_correct_refusal_and_an_answer_where_the_corpus_says_nothing() -> None:
    refused = grade(SALARY, f"Sorry. {REFUSAL}", [], [ROLE])
    assert refused.metrics == {"correct refusal": 1.0}
    assert refused.decided["verdict"] == "correct refusal"
    invented = grade(SALARY, "She earns 80,000 a year [1].", [ROLE], [ROLE])
    assert invented.metrics == {"correct refusal": 0.0}
    assert invented.decided["verdict"] == "answered what the corpus does not say"


def test_a_required_mention_spelled_as_an_allowed_variant() -> None:
    graded = grade(DOCTORATE, "She received her Ph.D. in 2011 [1].", [PHD], [PHD])
    assert graded.metrics["mentions"] == 1.0 and graded.metrics["correct"] == 1.0
    assert graded.decided["mentioned"] == {"PhD": "Ph.D.", "2011": "2011"}
    # a number inside a longer number is not the number
    wrong = grade(DOCTORATE, "She received her PhD in 20110 [1].", [PHD], [PHD])
    assert wrong.metrics["mentions"] == 0.5
    assert wrong.decided["verdict"] == "missing 2011"


def test_inferred_citations_are_not_the_models_and_are_not_graded() -> None:
    graded = grade(COMMITTEE, "She chairs the Ethics Committee since 2019.", [ROLE], [ROLE], inferred=True)
    assert graded.metrics["correct"] == 1.0
    assert graded.metrics["cited right"] == 0.0
    assert graded.metrics["attributed right"] == 1.0  # what the page highlights does cover the answer
    assert graded.decided["citations inferred"] is True and graded.decided["cited"] == []
    assert graded.decided["verdict"] == "correct, but the model cited nothing"


def test_every_grade_is_a_documented_metric_and_a_share() -> None:
    for question, answer in ((COMMITTEE, "Ethics Committee 2019 [1]"), (DOCTORATE, REFUSAL), (SALARY, "x")):
        graded = grade(question, answer, [ROLE], [ROLE, PHD])
        assert set(graded.metrics) <= set(ANSWER_METRICS)
        assert all(0.0 <= value <= 1.0 for value in graded.metrics.values())


@given(st.text(max_size=30), st.sampled_from(["2011", "Ethics Committee", "Ph.D."]))
def test_a_term_is_found_wherever_it_stands_as_whole_words(prefix: str, term: str) -> None:
    said = f"{prefix} {term.upper()}."
    assert found_variant(said, [term]) == term
    assert found_variant(f"x{term}x", [term]) is None or not term[0].isalnum()


def test_golden_grading_keys_are_read_and_checked(tmp_path: Path) -> None:
    golden = tmp_path / "g.yaml"
    golden.write_text(
        "questions:\n"
        "  - {id: phd, question: doctorate?, category: factual, must_mention: [[PhD, doctorate], '2011'],\n"
        "     must_not_mention: ['2012'], answers: [{quote: completed her doctorate in 2011}]}\n"
        "  - {id: salary, question: salary?, category: refusal, refusal: true}\n",
        encoding="utf-8",
    )
    loaded = load_golden(golden, {DOC: TEXT})
    phd, salary = loaded.questions
    assert phd.must_mention == (("PhD", "doctorate"), ("2011",)) and phd.must_not_mention == ("2012",)
    assert salary.refusal and salary.labels == ()
    bad = {
        "refusal: 1": "must be true or false",
        "refusal: true, must_mention: [x]": "nothing it must mention",
        "must_mention: [[]]": "non-empty terms",
        "must_not_mention: [[a]]": "non-empty terms",
    }
    for extra, message in bad.items():
        golden.write_text(
            f"questions:\n  - {{id: q, question: q?, category: refusal, {extra}}}\n", encoding="utf-8"
        )
        with pytest.raises(ConfigError, match=message):
            load_golden(golden, {DOC: TEXT})
    golden.write_text(
        "questions:\n  - {id: q, question: q?, category: refusal, refusal: true, answers: [{quote: x}]}\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError, match="quotes an answer"):
        load_golden(golden, {DOC: TEXT})
