"""The citation constraint, checked on the answer: what the planner reads when ``constrained`` is on.

A constrained answer (``clear_rag.providers.cite``) is the refusal (``prompt.REFUSAL``, exactly) or
sentences each ending with markers of sources it was given, ``[1]`` to ``[N]``. llama.cpp's grammar
and Ollama's schema make a model write that, but not every model can be held to it (the extractive
answerer, a fake, a server that ignores the schema) and even a held one can be cut off by
``max_tokens`` mid-sentence, so the answer itself is read against the rule, whoever wrote it.

The sentences are the ones ``sentences.sentence_spans`` finds, which the support check and the page
read too. So the check accepts every answer the grammar allows, and more: a line break between
sentences, an abbreviation or a decimal point inside one, and markers before the end mark
(``Pads wear [2].``), none of which leaves a sentence uncited.
"""

from __future__ import annotations

import re

from clear_rag.generate.prompt import REFUSAL
from clear_rag.generate.sentences import sentence_spans

_MARKER = re.compile(r"\[(\d+)\]")
# markers at the very end of a sentence, with at most an end mark after them
_CITED_END = re.compile(r"\[\d+\](?:\s*\[\d+\])*\s*[.!?]?$")


def problems(answer: str, sources: int) -> list[str]:
    """How ``answer`` breaks the constraint for ``sources`` numbered sources; ``[]`` when it keeps it.

    Each problem reads after "the answer broke the citation constraint: ": ``it is empty``, ``it cites
    [7] of 4 sources`` (every number outside ``1..sources``, once, in order), ``sentence 2 cites
    nothing``, ``sentence 3 does not end with its citation``. The refusal, exactly, keeps it.
    """
    text = answer.strip()
    if text == REFUSAL:
        return []
    if not text:
        return ["it is empty"]
    found: list[str] = []
    outside = list(dict.fromkeys(n for n in map(int, _MARKER.findall(text)) if not 1 <= n <= sources))
    if outside:
        numbers = " and ".join(", ".join(f"[{n}]" for n in outside).rsplit(", ", 1))
        found.append(f"it cites {numbers} of {sources} source{'s' if sources != 1 else ''}")
    # one span per sentence however long: the splitter's length cut would leave a piece uncited
    for number, (start, end) in enumerate(sentence_spans(text, max_chars=max(len(text), 20)), start=1):
        sentence = text[start:end]
        if not _MARKER.search(sentence):
            found.append(f"sentence {number} cites nothing")
        elif not _CITED_END.search(sentence):
            found.append(f"sentence {number} does not end with its citation")
    return found


def broken(answer: str, sources: int) -> str | None:
    """The line the trace's ``steps["constraint"]`` records when ``answer`` breaks the constraint."""
    found = problems(answer, sources)
    return f"the answer broke the citation constraint: {'; '.join(found)}" if found else None
