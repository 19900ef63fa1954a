"""Golden sets: questions labelled with quotes, resolved to character spans at load time.

Labels are quotes, never chunk ids, so one golden set judges every chunking of the corpus. A quote is
matched whitespace-normalised and exactly, within its named document or across the corpus; a quote
that matches nothing, or more than once, is an error naming the question, the quote and what was
found, because a label that silently points at the wrong span corrupts every metric built on it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, ClassVar, Literal, get_args

from pydantic import Field, StringConstraints, model_validator

from clear_rag import yamlfile
from clear_rag.errors import ConfigError, InputError
from clear_rag.validation import Bool, Record, Rule, Text, keys_of, parsed, text_rule

# table: answered only by a table cell (a parser that loses the table loses the answer); refusal: the
# corpus does not say, so the honest answer is a refusal (an answer-grading question, no quotes)
Category = Literal["factual", "identifier", "paraphrase", "distractor", "multi-passage", "table", "refusal"]


class LabelError(InputError):
    """A quote that resolves to no span or to more than one."""


class QuoteNotFound(LabelError):
    """A quote that matches nothing in the text it is resolved against."""


class QuoteAmbiguous(LabelError):
    """A quote that matches more than once."""


@dataclass(frozen=True, slots=True)
class Label:
    """A labelled span of one document's canonical text, and the quote it came from.

    Under ``unresolved: miss`` a quote the parsed text does not hold once becomes a label with an
    empty span (``resolved`` false, ``problem`` saying why): no chunk covers it, so it counts as a
    miss for the parser that mangled it rather than stopping the suite.
    """

    doc_id: str
    start: int
    end: int
    quote: str
    problem: str = ""

    @property
    def resolved(self) -> bool:
        return self.end > self.start


@dataclass(frozen=True, slots=True)
class Question:
    """A question, its labelled spans, and what an answer to it is graded by (``clear_rag.eval.answers``):
    terms it must mention (each a tuple of allowed variants), terms from neighbouring sections it must
    not, and whether its honest answer is a refusal."""

    id: str
    question: str
    category: str
    note: str
    labels: tuple[Label, ...]
    must_mention: tuple[tuple[str, ...], ...] = ()
    must_not_mention: tuple[str, ...] = ()
    refusal: bool = False


@dataclass(frozen=True, slots=True)
class GoldenSet:
    name: str
    questions: tuple[Question, ...]
    sha256: str  # of the golden file's bytes: results record which labels they were measured on

    def categories(self) -> list[str]:
        return sorted({q.category for q in self.questions})


class NormalisedText:
    """A text with whitespace runs collapsed to one space, and a map back to the original offsets."""

    def __init__(self, text: str) -> None:
        pieces: list[str] = []
        origin: list[int] = []
        for match in re.finditer(r"\s+|\S+", text):
            if match.group().isspace():
                if pieces:  # leading whitespace is dropped; inner runs become one space
                    pieces.append(" ")
                    origin.append(match.start())
            else:
                pieces.append(match.group())
                origin.extend(range(match.start(), match.end()))
        self.text = "".join(pieces)
        self._origin = origin
        self._length = len(text)

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The original ``[start, end)`` of normalised ``[start, end)`` (``end`` exclusive, ``> start``)."""
        return self._origin[start], self._origin[end - 1] + 1

    def find_all(self, needle: str) -> list[int]:
        found, at = [], self.text.find(needle)
        while at >= 0:
            found.append(at)
            at = self.text.find(needle, at + 1)
        return found


def normalise(text: str) -> str:
    return " ".join(text.split())


def resolve(
    question_id: str, quote: str, doc_id: str | None, texts: Mapping[str, NormalisedText], source: str
) -> Label:
    """The one span ``quote`` occupies, in ``doc_id`` or (when ``None``) anywhere in the corpus."""
    needle = normalise(quote)
    if not needle:
        raise LabelError(
            "has an empty quote", path=source, field=f"{question_id}.quote", fix="Quote the answer's text"
        )
    if doc_id is not None and doc_id not in texts:
        raise LabelError(
            "names a document that is not in the corpus",
            path=source,
            field=f"{question_id}.doc",
            value=doc_id,
            fix=f"Use one of: {', '.join(sorted(texts)[:12])}",
        )
    scope = [doc_id] if doc_id is not None else sorted(texts)
    hits = [(doc, at) for doc in scope for at in texts[doc].find_all(needle)]
    if len(hits) == 1:
        doc, at = hits[0]
        start, end = texts[doc].span(at, at + len(needle))
        return Label(doc, start, end, quote)
    where = f"in {doc_id}" if doc_id is not None else "in the corpus"
    if hits:
        found = "; ".join(f"{doc} at {texts[doc].span(at, at + len(needle))[0]}" for doc, at in hits[:5])
        raise QuoteAmbiguous(
            f"quote {needle!r} matches {len(hits)} times {where} ({found})",
            path=source,
            field=question_id,
            fix="Lengthen the quote until it is unique, or name its document with doc:",
        )
    raise QuoteNotFound(
        f"quote {needle!r} matches nothing {where}; {_nearest(needle, [texts[d] for d in scope], scope)}",
        path=source,
        field=question_id,
        fix="Copy the quote from the document's parsed text (markup such as ** or ` is not part of it)",
    )


def _nearest(needle: str, texts: list[NormalisedText], names: list[str]) -> str:
    """The longest run of the quote's words found in ``texts``: where, and where the two part ways.

    The run may start anywhere in the quote (its predecessor only tried runs from the first word, so
    a typo in word one hid a quote that was otherwise right). A window slides over the quote's words
    and grows by one whenever its next, longer form occurs, so a quote of ``m`` words costs at most
    ``m`` substring searches of the texts: any part of a run that occurs occurs too, which is why a
    window never has to shrink.
    """
    words = needle.split(" ")
    if len(words) < 2:
        return "it is a single word, so no part of it can be shown instead"
    best = 0
    found: tuple[int, str, int, int] | None = None  # first word, run, text index, offset
    for last in range(len(words)):
        first = last - best
        run = " ".join(words[first : last + 1])
        hit = next(((i, at) for i, text in enumerate(texts) if (at := text.text.find(run)) >= 0), None)
        if hit is not None:
            best, found = best + 1, (first, run, *hit)
    if found is None or best < 2:
        return "no two consecutive words of it occur there"
    first, run, index, at = found
    text, stop = texts[index].text, first + best
    if first == 0:
        which = f"its first {best} words"
    elif stop == len(words):
        which = f"its last {best} words"
    else:
        which = f"its words {first + 1} to {stop}"
    which += f" ({run!r})" if len(run) <= 60 else f" ({run[:28]!r} ... {run[-28:]!r})"
    parts = [f"{which} occur in {names[index]} at character {texts[index].span(at, at + len(run))[0]}"]
    if first > 0:
        said = " ".join(words[:first])[-40:] + " "
        parts.append(f"preceded there by {text[max(0, at - 40) : at]!r} where the quote has {said!r}")
    if stop < len(words):
        said = " " + " ".join(words[stop:])
        after = text[at + len(run) : at + len(run) + 40]
        parts.append(f"followed there by {after!r} where the quote goes on {said[:40]!r}")
    return ", ".join(parts)


Term = Annotated[Text, StringConstraints(pattern=r"\S")]  # a term of at least one character not a space
# What a quote that matches nothing (or more than once) in the parsed text does: stop with an error
# naming it (a golden set over text written here), or count as a miss (a set written against ground
# truth and resolved against each parser's output, where mangling a quote is that parser's failure).
Unresolved = Literal["error", "miss"]


class GoldenAnswer(Record):
    """One labelled answer as written: a quote, and the document it is in where the writer named it."""

    unknown = keys_of("answer")
    rules: ClassVar[Mapping[str, Rule]] = {
        "": Rule("Write {doc: FILE, quote: TEXT} (doc is optional)", "is not a table of doc and quote"),
        "doc": text_rule("doc"),
        "quote": Rule("Quote the answer's text: quote: ...", "must be text"),
    }
    doc: Text | None = None
    quote: Text


class GoldenQuestion(Record):
    """A question as written, before its quotes are resolved to spans (``Question``)."""

    unknown = keys_of("question")
    named_by = "id"
    rules: ClassVar[Mapping[str, Rule]] = {
        "id": text_rule("id"),
        "question": text_rule("question"),
        "category": Rule(f"Use one of: {', '.join(get_args(Category))}", "has an unknown category"),
        "note": text_rule("note"),
        "answers": Rule("Add at least one quote under answers:", "must be a list of at least one answer"),
        "must_mention": Rule(
            "Write must_mention: [term, [variant, variant], ...]",
            "must be a list of non-empty terms (or lists of allowed variants)",
        ),
        "must_not_mention": Rule("Write must_not_mention: [term, ...]", "must be a list of non-empty terms"),
        "refusal": Rule("Write refusal: true", "must be true or false"),
    }
    id: Text
    question: Text
    category: Category
    note: Text = ""
    answers: tuple[GoldenAnswer, ...] | None = None
    must_mention: tuple[Term | Annotated[tuple[Term, ...], Field(min_length=1)], ...] = ()
    must_not_mention: tuple[Term, ...] = ()
    refusal: Bool = False

    @model_validator(mode="after")
    def _graded_as_written(self) -> GoldenQuestion:
        """A question quotes an answer unless the corpus does not say (``refusal``); then it has none,
        and nothing an answer must mention."""
        if self.refusal and self.answers:
            raise ConfigError(
                "is a refusal question (the corpus does not say) but quotes an answer",
                field=f"{self.id}.answers",
                fix="Remove the quotes (answers: []), or drop refusal: true",
            )
        if not self.refusal and not self.answers:
            raise ConfigError(
                "must be a list of at least one answer",
                field=f"{self.id}.answers",
                fix="Add at least one quote under answers:",
            )
        if self.refusal and self.must_mention:
            raise ConfigError(
                "is a refusal question, so an answer has nothing it must mention",
                field=f"{self.id}.must_mention",
                fix="Remove must_mention, or drop refusal: true",
            )
        return self


class GoldenFile(Record):
    """A golden set as written: its name, what an unresolved quote does, its questions."""

    unknown = keys_of("golden set")
    rules: ClassVar[Mapping[str, Rule]] = {
        "name": text_rule("name"),
        "unresolved": Rule(
            f"Use one of: {', '.join(get_args(Unresolved))}", "has an unknown unresolved: mode"
        ),
        "questions": Rule("Put them under questions:", "must be a list of questions"),
    }
    name: Text | None = None
    unresolved: Unresolved = "error"
    questions: tuple[GoldenQuestion, ...]

    @model_validator(mode="after")
    def _ids_unique(self) -> GoldenFile:
        ids = [q.id for q in self.questions]
        repeated = sorted({i for i in ids if ids.count(i) > 1})
        if repeated:
            raise ConfigError(
                "repeats question ids", field="questions", value=repeated, fix="Make each id unique"
            )
        return self


def load_golden(path: str | Path, texts: Mapping[str, str]) -> GoldenSet:
    """Read a golden YAML file and resolve every quote against ``texts`` (doc id -> canonical text)."""
    written, raw = read_golden(path)
    normalised = {doc: NormalisedText(text) for doc, text in texts.items()}
    miss = written.unresolved == "miss"
    questions = tuple(_resolved(q, normalised, str(path), miss=miss) for q in written.questions)
    return GoldenSet(written.name or Path(path).stem, questions, hashlib.sha256(raw).hexdigest())


def read_golden(path: str | Path) -> tuple[GoldenFile, bytes]:
    """The golden set as written, its quotes not yet resolved, and the file's bytes; ``name`` is the
    file's stem where the set names none.

    The file is read strictly: an unknown key at any level is an error with the closest known key,
    since a misspelt ``answers:`` or ``doc:`` accepted quietly would change what a question is judged
    by (or whether it is judged at all) with no sign in any metric. It needs no corpus, so a suite
    checks its golden file with it before ingesting anything (``Suite.check_data``). A file may also
    be the bare list of questions.
    """
    raw = yamlfile.read_bytes(path)
    data = yamlfile.parse(raw, str(path))
    data = {"questions": data} if isinstance(data, list) else {} if data is None else data
    written = parsed(GoldenFile, data, str(path))
    return written.model_copy(update={"name": written.name or Path(path).stem}), raw


def _resolved(
    written: GoldenQuestion, texts: Mapping[str, NormalisedText], source: str, *, miss: bool = False
) -> Question:
    """A question with its quotes resolved to spans (under ``miss``, a quote matching nothing or more
    than once becomes an unresolved label instead of an error)."""
    labels = []
    for answer in written.answers or ():
        try:
            labels.append(resolve(written.id, answer.quote, answer.doc, texts, source))
        except (QuoteNotFound, QuoteAmbiguous) as err:
            if not miss:
                raise
            labels.append(Label(answer.doc or "", 0, 0, answer.quote, problem=err.what))
    fields = written.model_dump(exclude={"answers"})
    fields["must_mention"] = tuple((t,) if isinstance(t, str) else t for t in written.must_mention)
    return Question(**fields, labels=tuple(labels))
