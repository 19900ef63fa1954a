// A question's words beside its id: the text asked and the quotes that label it, from the file's
// questions document (GET /api/results/FILE/questions, clear_rag/results/questions.py). An id is
// all a result file records; without the words, "api-page-size-max" is a name to look up.

import { el } from "./dom.js";

/** The questions document's entries by id, in a Map (an id may be "constructor" or "__proto__"). */
export function questionIndex(answer) {
  return new Map(((answer && answer.questions) || []).map((q) => [q.id, q]));
}

/** An entry's words: its question, then each labelled quote with its document; null for no entry. */
export function questionWords(entry) {
  if (!entry) return null;
  const quotes = entry.quotes || [];
  const judged = entry.judged || [];
  return el(
    "div",
    { class: "question-words", "data-question": entry.id },
    el("div", { class: "question-text", "data-field": "question" }, entry.question || ""),
    quotes.length
      ? el(
          "ul",
          { class: "quotes", "aria-label": "labelled quotes" },
          quotes.map((q) =>
            el("li", { "data-field": "quote" }, el("q", {}, q.quote), q.doc ? el("span", { class: "doc" }, ` ${q.doc}`) : null),
          ),
        )
      : judged.length
        ? el("div", { class: "judged", "data-field": "judged" }, `judged documents: ${judged.join(", ")}`)
        : null,
  );
}

/** Why a file's questions show by id alone, or that their labels changed since it was written. */
export function questionsNote(answer) {
  if (!answer) return "";
  return [answer.changed, answer.unavailable].filter(Boolean).join(" ");
}
