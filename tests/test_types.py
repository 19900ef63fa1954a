"""clear_rag.types.quick_init: the records it speeds up are built exactly as dataclass builds them."""

from __future__ import annotations

import dataclasses
import pickle
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clear_rag.types import Candidate, Contribution, quick_init

finite = st.floats(allow_nan=False)
spans = st.tuples(st.integers(0, 10**6), st.integers(0, 10**6)).map(sorted)


def twin(cls: type[Any]) -> type[Any]:
    """A plain frozen dataclass with ``cls``'s fields, built by ``dataclass``'s own ``__init__``."""
    specs = [
        (f.name, f.type)
        if f.default_factory is dataclasses.MISSING
        else (f.name, f.type, dataclasses.field(default_factory=f.default_factory))
        for f in dataclasses.fields(cls)
    ]
    return dataclasses.make_dataclass(f"Plain{cls.__name__}", specs, frozen=True, slots=True)


PLAIN = {cls: twin(cls) for cls in (Candidate, Contribution)}


def values(record: Any) -> tuple[Any, ...]:
    return tuple(getattr(record, f.name) for f in dataclasses.fields(record))


@given(st.integers(1, 10**6), finite, finite, st.booleans())
def test_a_contribution_is_built_as_dataclass_builds_it(
    rank: int, score: float, added: float, parts: bool
) -> None:
    given_parts: dict[str, Contribution] = {"q0": Contribution(1, 0.5, 0.25)} if parts else {}
    args: tuple[Any, ...] = (rank, score, added, given_parts) if parts else (rank, score, added)
    expected = values(PLAIN[Contribution](*args))
    keywords = dict(zip(("rank", "score", "contribution", "parts"), args, strict=False))
    for built in (Contribution(*args), Contribution(**keywords), Contribution.make(*args)):
        assert type(built) is Contribution
        assert values(built) == expected
        assert built == Contribution(*args)


@given(st.text(max_size=8), st.text(max_size=8), spans, finite)
def test_a_candidate_is_built_as_dataclass_builds_it(
    chunk: str, doc: str, span: list[int], score: float
) -> None:
    sources: Mapping[str, Contribution] = {"keyword": Contribution(2, score, score)}
    args = (chunk, doc, span[0], span[1], score, sources)
    expected = values(PLAIN[Candidate](*args))
    for built in (Candidate(*args), Candidate(*args[:5], sources=sources), Candidate.make(*args)):
        assert values(built) == expected
        assert built == Candidate(*args)


@given(st.integers(0, 100), st.integers(1, 100))
def test_a_candidate_span_is_still_checked(start: int, shorter: int) -> None:
    for build in (Candidate, Candidate.make):
        with pytest.raises(ValueError, match="span"):
            build("c", "d", start, start - shorter, 1.0)


def test_defaults_are_fresh_and_the_records_stay_frozen() -> None:
    for first, second in (
        (Contribution(1, 1.0, 1.0), Contribution.make(1, 1.0, 1.0)),
        (Candidate("c", "d", 0, 1, 1.0), Candidate.make("c", "d", 0, 1, 1.0)),
    ):
        defaults = [getattr(r, dataclasses.fields(r)[-1].name) for r in (first, second)]
        assert defaults == [{}, {}] and defaults[0] is not defaults[1]
        with pytest.raises(dataclasses.FrozenInstanceError):
            first.score = 2.0  # type: ignore[misc]
        assert pickle.loads(pickle.dumps(second)) == second
        assert dataclasses.replace(second, score=3.0).score == 3.0


def test_wrong_arguments_fail_as_they_did() -> None:
    with pytest.raises(TypeError):
        Contribution(1, 1.0)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Contribution(1, 1.0, 1.0, rnak=2)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Candidate.make("c", "d", 0, 1)


def test_fields_it_cannot_build_are_refused() -> None:
    @dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
    class Keywords:
        x: int

    with pytest.raises(TypeError, match="kw_only"):
        quick_init(Keywords)
