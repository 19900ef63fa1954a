"""The records every part of clear-rag passes around.

Two invariants rest on these types:

* every chunk knows the span ``[start, end)`` it occupies in its document's canonical text, and
  ``document.text[chunk.start:chunk.end] == chunk.text`` always holds;
* every retrieval stage consumes and produces ``list[Candidate]``.

All records are frozen: a stage returns new objects (``dataclasses.replace``), it never edits one.
This module imports nothing of the project.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, ClassVar, Literal, TypeVar, cast

# ``furniture`` is what repeats on every page rather than belonging to the text (running headers and
# footers, page numbers): a parser places furniture blocks after all body blocks, and chunkers leave
# everything from the first of them on out of the chunks.
BlockKind = Literal["heading", "paragraph", "list", "table", "code", "furniture"]
BLOCK_KINDS: tuple[BlockKind, ...] = ("heading", "paragraph", "list", "table", "code", "furniture")


R = TypeVar("R")
_NOTHING: Any = object()  # an argument not given, for a field whose default is a factory


def quick_init(cls: type[R]) -> type[R]:
    """``cls`` (a frozen, slotted dataclass) with an ``__init__`` that stores each field through its
    slot's own descriptor: the one ``dataclass`` writes calls ``object.__setattr__`` once per field
    (plain assignment being what ``frozen`` forbids), which made building a stage's hundred
    ``Candidate``s and their ``Contribution``s take several times as long as the BM25 search that
    found them (timed by hand; the stage times of ``bench.serve`` hold both). Same parameters, defaults, fresh
    default factories and ``__post_init__`` check; written from ``dataclasses.fields``, as
    ``dataclass`` writes its own, so it follows the class. The instances are frozen as before.

    ``cls.make`` takes the same arguments and builds the same instance without the call of the class
    itself (``type.__call__``, then ``__init__`` looked up and called), which costs as much again:
    the loops that build a stage's hundred candidates call it."""
    params, body = [], []
    namespace: dict[str, Any] = {"_NOTHING": _NOTHING}
    for spec in fields(cast(Any, cls)):
        name = spec.name
        if not spec.init or spec.kw_only:
            raise TypeError(f"quick_init does not handle {cls.__name__}.{name} (init=False or kw_only)")
        namespace[f"_set_{name}"] = getattr(cls, name).__set__  # the slot's descriptor
        if spec.default is not MISSING:
            namespace[f"_default_{name}"] = spec.default
            params.append(f"{name}=_default_{name}")
        elif spec.default_factory is not MISSING:
            namespace[f"_factory_{name}"] = spec.default_factory
            params.append(f"{name}=_NOTHING")
            body.append(f"    if {name} is _NOTHING:\n        {name} = _factory_{name}()")
        else:
            params.append(name)
        body.append(f"    _set_{name}(self, {name})")
    if hasattr(cls, "__post_init__"):
        body.append("    self.__post_init__()")
    namespace.update(_new=object.__new__, _cls=cls)
    source = "\n".join(body)
    exec(
        f"def __init__(self, {', '.join(params)}):\n{source}\n"
        f"def make({', '.join(params)}):\n    self = _new(_cls)\n{source}\n    return self\n",
        namespace,
    )
    for name in ("__init__", "make"):
        namespace[name].__qualname__ = f"{cls.__qualname__}.{name}"
    setattr(cls, "__init__", namespace["__init__"])  # noqa: B010 - mypy forbids assigning a method
    setattr(cls, "make", staticmethod(namespace["make"]))  # noqa: B010 - declared by each class
    return cls


def _check_span(owner: str, start: int, end: int) -> None:
    if start < 0 or end < start:
        raise ValueError(f"{owner}: span [{start}, {end}) is invalid; expected 0 <= start <= end")


@dataclass(frozen=True, slots=True)
class Block:
    """A typed piece of a document's canonical text, as its parser saw it.

    ``level`` is the heading level (1 to 6) for headings, the nesting depth for lists, 0 otherwise.
    ``meta`` holds parser-specific facts such as a code block's language.
    """

    kind: BlockKind
    start: int
    end: int
    level: int = 0
    meta: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in BLOCK_KINDS:
            raise ValueError(f"Block.kind={self.kind!r} is unknown; expected one of {BLOCK_KINDS}")
        _check_span("Block", self.start, self.end)


@dataclass(frozen=True, slots=True)
class Document:
    """One source file, parsed.

    ``text`` is the canonical text every span points into; ``content_hash`` is the SHA-256 of the
    file's bytes, so an unchanged file is recognised without parsing it.
    """

    id: str
    source: str
    content_hash: str
    text: str
    blocks: tuple[Block, ...]
    media_type: str = "text/plain"

    def __post_init__(self) -> None:
        for block in self.blocks:
            if block.end > len(self.text):
                raise ValueError(
                    f"Document {self.id!r}: block [{block.start}, {block.end}) ends past the text "
                    f"({len(self.text)} characters)"
                )


@dataclass(frozen=True, slots=True)
class Chunk:
    """A retrievable unit: an exact slice of one document's canonical text.

    ``id`` is derived from the document id and ``position`` (never random), so the same input
    gives the same ids and therefore the same tie-breaks in every ranking.

    ``token_count`` is the window's size as the chunker cut it: the tokens of the whole document's
    tokenisation that start inside the span. ``text_tokens`` is the tokenizer's count of ``text`` read
    on its own, which is what a context pays for a passage of this chunk alone; the two can differ
    where a window is cut inside a word (its first piece read alone is not a continuation piece).
    It is counted once, at ingest, so that no question tokenises a chunk again; None where it was
    not counted (a chunk read from a store written before it was kept).
    """

    id: str
    doc_id: str
    start: int
    end: int
    text: str
    position: int
    token_count: int
    text_tokens: int | None = None

    def __post_init__(self) -> None:
        _check_span(f"Chunk {self.id!r}", self.start, self.end)
        if len(self.text) != self.end - self.start:
            raise ValueError(
                f"Chunk {self.id!r}: text has {len(self.text)} characters but span "
                f"[{self.start}, {self.end}) has {self.end - self.start}"
            )


@quick_init
@dataclass(frozen=True, slots=True)
class Contribution:
    """What one source (a retriever, or a retriever under one phrasing) said about a candidate.

    ``rank`` is 1-based in that source's own list, ``score`` is the source's own score, and
    ``contribution`` is what it added to the stage's score (``1 / (k + rank)`` under RRF; 0.0 where
    the stage's score does not build on it, as a reranker's logit does not on the fused score).
    ``parts`` holds the source's own sources when it was itself a fusion: under two-level fusion,
    the ``keyword`` contribution holds one part per phrasing searched (``keyword·q0``, ...), each
    with its rank, BM25 score and RRF term, so the first-level terms stay visible.
    """

    rank: int
    score: float
    contribution: float
    parts: Mapping[str, Contribution] = field(default_factory=dict)

    make: ClassVar[Callable[..., Contribution]]  # the class called positionally, cheaper (quick_init)


@quick_init
@dataclass(frozen=True, slots=True)
class Candidate:
    """A chunk as one retrieval stage ranks it."""

    chunk_id: str
    doc_id: str
    start: int
    end: int
    score: float
    sources: Mapping[str, Contribution] = field(default_factory=dict)

    make: ClassVar[Callable[..., Candidate]]  # the class called positionally, cheaper (quick_init)

    def __post_init__(self) -> None:
        _check_span(f"Candidate {self.chunk_id!r}", self.start, self.end)


@dataclass(frozen=True, slots=True)
class StageResult:
    """One stage's output, in rank order, with how long it took and stage-specific detail."""

    name: str
    candidates: tuple[Candidate, ...]
    elapsed_ms: float
    detail: Mapping[str, Any] = field(default_factory=dict)

    def rescored(self, rank: int) -> bool:
        """Whether the candidate at 1-based ``rank`` carries a score this stage's reranker gave it:
        a stage whose detail holds ``reranked`` re-scored its first that many and kept the rest (the
        tail) below them unscored; any other stage's scores are all its own."""
        reranked = self.detail.get("reranked")
        return not isinstance(reranked, int) or rank <= reranked


Role = Literal["system", "user", "assistant"]
ROLES: tuple[Role, ...] = ("system", "user", "assistant")


@dataclass(frozen=True, slots=True)
class Message:
    """One turn of a conversation as a chat model receives it."""

    role: Role
    content: str

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"Message.role={self.role!r} is unknown; use one of {ROLES}")


@dataclass(frozen=True, slots=True)
class Citation:
    """A span of a source document that the answer cites; ``number`` is the ``[n]`` that cites it
    (its passage's number in the context; 0 in traces stored before it was recorded)."""

    chunk_id: str
    doc_id: str
    start: int
    end: int
    number: int = 0


@dataclass(frozen=True, slots=True)
class ContextPassage:
    """One passage of the context as the model saw it: ``number`` is its ``[n]``, the span is the
    document's, and ``chunk_ids`` are the packed chunks it joins (the text is ``document.text[start:end]``,
    and the trace's ``context`` holds it under its number)."""

    number: int
    doc_id: str
    start: int
    end: int
    chunk_ids: tuple[str, ...]
    token_count: int

    def __post_init__(self) -> None:
        _check_span(f"ContextPassage [{self.number}]", self.start, self.end)


@dataclass(frozen=True, slots=True)
class Evidence:
    """The best window (one sentence, or two adjacent ones) of one passage for one text: an answer
    sentence, or the question. ``number`` is the passage's ``[n]`` in the context, 0 for a candidate a
    stage ranked that was not packed (``found`` then says which stage ranked it where, as
    ``"keyword #12"``). The span is the window's, in the document's canonical text. ``logit`` is the
    support model's, ``coverage`` the lexical measure, ``missing`` the numbers of the text the window
    does not hold, ``probability`` the calibrated chance that the window supports the text, and
    ``supports`` the decision (``clear_rag.generate.support`` says how each is computed)."""

    number: int
    chunk_id: str
    doc_id: str
    start: int
    end: int
    logit: float
    coverage: float
    probability: float
    supports: bool
    missing: tuple[str, ...] = ()
    found: str = ""

    def __post_init__(self) -> None:
        _check_span(f"Evidence [{self.number}]", self.start, self.end)


@dataclass(frozen=True, slots=True)
class SentenceSupport:
    """One sentence of the answer: its span in the answer, the passage numbers it cites, the best
    window of each passage that was scored against it, and its verdict (``kind`` one of
    ``SUPPORT_KINDS``; ``verdict`` the same in words, such as ``cited [1] but supported by [2]``)."""

    start: int
    end: int
    text: str
    cited: tuple[int, ...]
    evidence: tuple[Evidence, ...]
    kind: str
    verdict: str


# The kinds of sentence verdict, in words: supported by a passage it cites (or, citing nothing, by
# some passage), cited one passage but supported by another, cited a passage that does not support
# it, supported by no passage; and a sentence with no claim to check (no content word).
SUPPORT_KINDS = ("supported", "miscited", "cited, unsupported", "unsupported", "no claim")
# The answer's one line, in the mission's words; "" for a question asked without an answer.
ANSWER_LINES = ("supported", "the model ignored it", "retrieval missed it", "refused")


@dataclass(frozen=True, slots=True)
class Support:
    """What supports the answer, checked against the context the model was given.

    ``answers`` holds, per packed passage, its best window for the question; ``outside`` the same for
    the top candidates of every stage that were not packed. ``weak`` says whether retrieval looks weak
    (no packed passage looks like it answers the question) and ``weak_reason`` why. ``sentences`` are
    the answer's, ``line`` one of ``ANSWER_LINES`` and ``reason`` the sentence behind it. ``model`` and
    ``calibration`` name the support model and where its decision boundary comes from.
    """

    answers: tuple[Evidence, ...] = ()
    outside: tuple[Evidence, ...] = ()
    weak: bool = False
    weak_reason: str = ""
    sentences: tuple[SentenceSupport, ...] = ()
    line: str = ""
    reason: str = ""
    model: str = ""
    calibration: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Trace:
    """Everything one question went through: a returned value, stored and replayable offline."""

    id: str
    query: str
    phrasings: tuple[str, ...]
    stages: tuple[StageResult, ...]
    context: str = ""
    answer: str = ""
    citations: tuple[Citation, ...] = ()
    config: Mapping[str, Any] = field(default_factory=dict)
    models: Mapping[str, str] = field(default_factory=dict)
    created_at: str = ""
    # what happened to the question before retrieval: the standalone rewrite and whether it was
    # accepted, the phrasings the model proposed and those dropped, a HyDE passage
    steps: Mapping[str, Any] = field(default_factory=dict)
    # the exact messages the answer prompt holds, built from ``context`` (sent only when generating)
    messages: tuple[Message, ...] = ()
    # the context's passages under the numbers the model saw them by
    passages: tuple[ContextPassage, ...] = ()
    # what supports each sentence of the answer, and the answer's one line (None: not checked)
    support: Support | None = None
