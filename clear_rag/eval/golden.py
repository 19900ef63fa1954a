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
from typing import Any

from clear_rag import yamlfile
from clear_rag.errors import InputError

# table: answered only by a table cell (a parser that loses the table loses the answer); refusal: the
# corpus does not say, so the honest answer is a refusal (an answer-grading question, no quotes)
CATEGORIES = ("factual", "identifier", "paraphrase", "distractor", "multi-passage", "table", "refusal")


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


GOLDEN_KEYS = ("name", "unresolved", "questions")
# What a quote that matches nothing (or more than once) in the parsed text does: stop with an error
# naming it (a golden set over text written here), or count as a miss (a set written against ground
# truth and resolved against each parser's output, where mangling a quote is that parser's failure).
UNRESOLVED = ("error", "miss")
QUESTION_KEYS = (
    "id",
    "question",
    "category",
    "note",
    "answers",
    "must_mention",
    "must_not_mention",
    "refusal",
)
ANSWER_KEYS = ("doc", "quote")


def load_golden(path: str | Path, texts: Mapping[str, str]) -> GoldenSet:
    """Read a golden YAML file and resolve every quote against ``texts`` (doc id -> canonical text)."""
    name, rows, raw = read_golden(path)
    normalised = {doc: NormalisedText(text) for doc, text in texts.items()}
    miss = _unresolved_mode(raw, str(path)) == "miss"
    questions = tuple(_resolved(row, normalised, str(path), miss=miss) for row in rows)
    return GoldenSet(name, questions, hashlib.sha256(raw).hexdigest())


def _unresolved_mode(raw: bytes, source: str) -> str:
    data: Any = yamlfile.parse(raw, source)
    mode = data.get("unresolved", "error") if isinstance(data, dict) else "error"
    if mode not in UNRESOLVED:
        raise InputError(
            "has an unknown unresolved: mode",
            path=source,
            field="unresolved",
            value=mode,
            fix=f"Use one of: {', '.join(UNRESOLVED)}",
        )
    return str(mode)


def read_golden(path: str | Path) -> tuple[str, list[dict[str, Any]], bytes]:
    """The golden set's name, its questions checked for shape but with quotes not yet resolved, and
    the file's bytes.

    The file is read strictly: an unknown key at any level is an error with the closest known key,
    since a misspelt ``answers:`` or ``doc:`` accepted quietly would change what a question is judged
    by (or whether it is judged at all) with no sign in any metric. It needs no corpus, so a suite
    checks its golden file with it before ingesting anything (``Suite.check_data``).
    """
    path = Path(path)
    source = str(path)
    raw = yamlfile.read_bytes(path)
    data: Any = yamlfile.parse(raw, source)
    if isinstance(data, dict):
        yamlfile.check_keys(data, GOLDEN_KEYS, kind="golden set", path=source, error=InputError)
    listed = data.get("questions") if isinstance(data, dict) else data
    if not isinstance(listed, list):
        raise InputError("holds no list of questions", path=source, fix="Put them under questions:")
    rows = [_checked(row, n, source) for n, row in enumerate(listed, start=1)]
    ids = [str(row["id"]) for row in rows]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        raise InputError("repeats question ids", path=source, value=repeated, fix="Make each id unique")
    name = data.get("name", path.stem) if isinstance(data, dict) else path.stem
    return str(name), rows, raw


def _checked(row: Any, number: int, source: str) -> dict[str, Any]:
    """One question as written, every key known, every required key there, answers a list of tables."""
    where = f"question {number}"
    if not isinstance(row, dict):
        raise InputError(
            "is not a mapping", path=source, field=where, fix="Give id, question, category, answers"
        )
    yamlfile.check_keys(
        row, QUESTION_KEYS, kind="question", path=source, where=str(row.get("id", where)), error=InputError
    )
    _check_grading(row, str(row.get("id", where)), source)
    for key in ("id", "question", "category", "answers"):
        if key not in row and not (key == "answers" and row.get("refusal") is True):
            raise InputError(f"lacks {key}", path=source, field=str(row.get("id", where)), fix=f"Add {key}:")
    qid = str(row["id"])
    if row["category"] not in CATEGORIES:
        raise InputError(
            "has an unknown category",
            path=source,
            field=f"{qid}.category",
            value=row["category"],
            fix=f"Use one of: {', '.join(CATEGORIES)}",
        )
    answers: Any = row.get("answers") or []
    if row.get("refusal") is True:
        if answers:
            raise InputError(
                "is a refusal question (the corpus does not say) but quotes an answer",
                path=source,
                field=f"{qid}.answers",
                fix="Remove the quotes (answers: []), or drop refusal: true",
            )
    elif not isinstance(answers, list) or not answers:
        raise InputError(
            "must be a list of at least one answer",
            path=source,
            field=f"{qid}.answers",
            fix="Add at least one quote under answers:",
        )
    for n, answer in enumerate(answers, start=1):
        # an answer that is not a table used to be skipped, so a question could lose a label silently
        if not isinstance(answer, dict):
            raise InputError(
                "is not a table of doc and quote",
                path=source,
                field=f"{qid}.answers[{n}]",
                value=answer,
                fix="Write {doc: FILE, quote: TEXT} (doc is optional)",
            )
        yamlfile.check_keys(
            answer, ANSWER_KEYS, kind="answer", path=source, where=f"{qid}.answers[{n}]", error=InputError
        )
    return row


def _check_grading(row: dict[str, Any], qid: str, source: str) -> None:
    """``must_mention`` a list of terms or lists of variants, ``must_not_mention`` a list of terms,
    ``refusal`` true or false, and a refusal question with nothing it must mention."""
    refusal = row.get("refusal", False)
    if not isinstance(refusal, bool):
        raise InputError(
            "must be true or false",
            path=source,
            field=f"{qid}.refusal",
            value=refusal,
            fix="Write refusal: true",
        )
    for key, nested in (("must_mention", True), ("must_not_mention", False)):
        terms = row.get(key, [])
        items = (
            [t if nested and isinstance(t, list) else [t] for t in terms] if isinstance(terms, list) else []
        )
        if not isinstance(terms, list) or not all(
            group and all(isinstance(t, str) and t.strip() for t in group) for group in items
        ):
            shape = "[term, [variant, variant], ...]" if nested else "[term, term, ...]"
            raise InputError(
                "must be a list of non-empty terms" + (" (or lists of allowed variants)" if nested else ""),
                path=source,
                field=f"{qid}.{key}",
                value=terms,
                fix=f"Write {key}: {shape}",
            )
    if refusal and row.get("must_mention"):
        raise InputError(
            "is a refusal question, so an answer has nothing it must mention",
            path=source,
            field=f"{qid}.must_mention",
            fix="Remove must_mention, or drop refusal: true",
        )


def _resolved(
    row: dict[str, Any], texts: Mapping[str, NormalisedText], source: str, *, miss: bool = False
) -> Question:
    """A checked question with its quotes resolved to spans (under ``miss``, a quote matching nothing
    or more than once becomes an unresolved label instead of an error)."""
    qid = str(row["id"])
    labels = []
    for answer in row.get("answers") or []:
        quote, doc = str(answer.get("quote", "")), None if answer.get("doc") is None else str(answer["doc"])
        try:
            labels.append(resolve(qid, quote, doc, texts, source))
        except (QuoteNotFound, QuoteAmbiguous) as err:
            if not miss:
                raise
            labels.append(Label(doc or "", 0, 0, quote, problem=err.what))
    return Question(
        qid,
        str(row["question"]),
        str(row["category"]),
        str(row.get("note", "")),
        tuple(labels),
        must_mention=tuple(tuple(t) if isinstance(t, list) else (t,) for t in row.get("must_mention") or []),
        must_not_mention=tuple(row.get("must_not_mention") or []),
        refusal=bool(row.get("refusal", False)),
    )
