// The inspector: everything the run knows about one candidate. Its text (a slice of its document),
// its rank and score at every stage, and "which search found this": each source's rank and score,
// each phrasing's rank under it, and the term each added to the fused score (an RRF 1/(k + rank)
// or a min-max weighted score), read from the candidates' `sources` and their `parts`.

import { clear, el, fmt, sliceSpan } from "./dom.js";
import { fetchDocument } from "./documents.js";
import { keptNote } from "./run.js";

export class Inspector {
  constructor(root, { openDocument }) {
    this.root = root; // #inspector
    this.openDocument = openDocument;
    this.shown = 0;
  }

  /** Nothing inspected (a new question): a text still loading for the candidate before is dropped. */
  reset() {
    this.shown += 1;
    delete this.root.dataset.chunkId;
    clear(this.root).append(el("p", { class: "empty" }, "Choose a candidate in the rank flow (click it, or Enter on it) to inspect it."));
  }

  async show(run, chunkId) {
    const ticket = ++this.shown;
    const where = run.locate(chunkId);
    clear(this.root);
    if (!where) return;
    this.root.dataset.chunkId = chunkId;
    const text = el("pre", { class: "chunk-text", id: "inspector-text" }, "loading…");
    this.root.append(
      el("h3", {}, chunkId),
      el(
        "p",
        { class: "where" },
        `${where.doc_id} [${where.start}, ${where.end}) `,
        el("button", { type: "button", class: "link", onclick: () => this.openDocument(where.doc_id, where.start, where.end, chunkId) }, "open in document"),
      ),
      text,
      el("h4", {}, "Rank and score at every stage"),
      this.stageTable(run, chunkId),
      el("h4", {}, "Which search found this"),
      this.sourcesView(run, chunkId),
    );
    try {
      const doc = await fetchDocument(where.doc_id);
      if (ticket === this.shown) text.textContent = sliceSpan(doc.text, where.start, where.end);
    } catch (error) {
      if (ticket === this.shown) text.textContent = `(could not load the text: ${error.message})`;
    }
  }

  stageTable(run, chunkId) {
    const rows = run.journey(chunkId).map(({ stage, candidate }) => {
      const kept = candidate && !run.rescored(stage, candidate);
      // a kept tail's score under "replace" is its place below the logits, not a score: not shown
      const placeOnly = kept && (stage.detail || {}).display;
      return el(
        "tr",
        { "data-stage": stage.name, class: candidate ? (kept ? "kept" : "") : "absent" },
        el("th", { scope: "row" }, stage.name),
        el("td", { "data-field": "rank" }, candidate ? `#${candidate.rank}` : "—"),
        el("td", { "data-field": "score" }, candidate ? (placeOnly ? "—" : fmt(candidate.score, 4)) : ""),
        el("td", { "data-field": "display" }, shown(run, stage, candidate)),
        el("td", { "data-field": "note" }, candidate ? (kept ? keptNote(run, stage, candidate) : "") : `not in ${stage.name} (${stage.candidates.length} there)`),
      );
    });
    return el(
      "table",
      { class: "stages" },
      el("thead", {}, el("tr", {}, el("th", {}, "stage"), el("th", {}, "rank"), el("th", {}, "score"), el("th", {}, "shown"), el("th", {}, "note"))),
      el("tbody", {}, rows),
    );
  }

  /** One block per stage that combined sources for this chunk; first-stage searches are listed too,
   * so a chunk that one retriever missed says so. */
  sourcesView(run, chunkId) {
    const view = el("div", { class: "sources" });
    // by name, so a retriever's phrasings sit together whatever order they finished in
    const firsts = [...run.firstStages()].sort((a, b) => a.name.localeCompare(b.name));
    const searches = el("ul", { class: "found-by" });
    for (const stage of firsts) {
      const cand = stage.candidates.find((c) => c.chunk_id === chunkId);
      searches.append(
        el(
          "li",
          { "data-source": stage.name, class: cand ? "found" : "missed" },
          el("b", {}, stage.name),
          ": ",
          cand
            ? [el("span", { "data-field": "rank" }, `rank ${cand.rank}`), `, score ${fmt(cand.score, 4)}`]
            : `not found (it returned ${stage.candidates.length})`,
          queryOf(stage),
        ),
      );
    }
    view.append(el("p", { class: "sub" }, "Searches:"), searches);
    for (const { stage, candidate } of run.journey(chunkId)) {
      if (!candidate) continue;
      const sources = Object.entries(candidate.sources || {}).filter(([name]) => name !== stage.name);
      if (!sources.length) continue;
      const detail = stage.detail || {};
      const total = sources.reduce((sum, [, c]) => sum + (c.contribution || 0), 0);
      const list = el("ul", { class: "terms", "data-stage": stage.name });
      for (const [name, c] of sources) list.append(contributionItem(name, c, detail));
      const head = run.rescored(stage, candidate) ? combined(detail, total, candidate.score) : keptHead(detail, total, candidate.score);
      view.append(el("p", { class: "sub" }, el("b", {}, stage.name), head ? ` — ${head}` : ""), list);
    }
    return view;
  }
}

/** The shown score where it differs from the stage's own (a logit through a sigmoid). */
function shown(run, stage, candidate) {
  if (!candidate) return "";
  const value = run.shownScore(stage, candidate);
  if (value === null) return "—"; // no logit to show: the note says where it was kept from
  return value !== candidate.score ? fmt(value, 3) : "";
}

function queryOf(stage) {
  const d = stage.detail || {};
  if (typeof d.query === "string" && d.phrasing !== undefined) return el("span", { class: "query" }, ` for “${d.query}”`);
  if (typeof d.hypothetical === "string") return el("span", { class: "query" }, " for the hypothetical answer");
  return null;
}

/** "rank 3, score 4.1, adds 1/(60 + 3) = 0.0159", nested for the phrasings under a retriever. */
function contributionItem(name, c, detail) {
  const parts = Object.entries(c.parts || {});
  return el(
    "li",
    { "data-source": name },
    el("b", {}, name),
    ": ",
    el("span", { "data-field": "rank" }, `rank ${c.rank}`),
    `, score ${fmt(c.score, 4)}`,
    c.contribution ? [", adds ", el("span", { "data-field": "term" }, term(c, detail))] : "",
    parts.length ? el("ul", {}, parts.map(([part, p]) => contributionItem(part, p, { method: "rrf", k: detail.k }))) : null,
  );
}

function term(c, detail) {
  if (detail.method === "rrf" && detail.k !== undefined) return `1/(${detail.k} + ${c.rank}) = ${fmt(c.contribution, 5)}`;
  if (detail.method === "minmax" && detail.weights) return `weight × min-max score = ${fmt(c.contribution, 4)}`;
  return fmt(c.contribution, 5);
}

/** A candidate past the reranker's shortlist: kept in its input's order, with its input's term under rrf. */
function keptHead(detail, total, score) {
  const kept = `not re-scored: kept below the ${detail.reranked} the reranker scored, in its input's order`;
  return detail.method ? `${kept}; ${combined(detail, total, score)}` : kept;
}

function combined(detail, total, score) {
  if (detail.method === "rrf") return `RRF, k=${detail.k}: sum of terms ${fmt(total, 5)} = score ${fmt(score, 5)}`;
  if (detail.method) return `${detail.method}: sum of terms ${fmt(total, 4)} = score ${fmt(score, 4)}`;
  if (detail.display === "sigmoid") return `re-scored: logit ${fmt(score, 3)}, shown as sigmoid ${fmt(1 / (1 + Math.exp(-score)), 3)}`;
  return "";
}
