// One question's run as the page knows it: built from the stream's events alone (live or replayed),
// so every view (rank flow, inspector, answer) reads the same facts. Nothing here knows stage names:
// a stage's role comes from its detail ("retriever" for a first-stage search, "input"/"inputs" for a
// stage built on others, "shortlist"/"top_k"/"budget_tokens" for cut-offs, "reranked" for the
// candidates a reranker re-scored, above the tail it kept).

import { fmt } from "./dom.js";

export class Run {
  /** generate: false for Retrieve only, true for a question asked, null where not known (a replay). */
  constructor({ generate = null } = {}) {
    this.generate = generate;
    this.query = null;
    this.stages = []; // in arrival order
    this.context = null;
    this.answer = "";
    this.citations = null;
    this.answerer = null;
    this.support = null; // the support event: each answer sentence's evidence and verdict, the answer's line
    this.done = null;
    this.error = null;
    this.found = null;
    this.listeners = new Set();
    this.batching = false;
    // when each event arrived (performance.now()): a stage still running shows how long it has run
    this.began = performance.now();
    this.arrived = new Map(); // stage name (and "query") -> time
  }

  /** Apply one event; returns true when it was one this model knows. */
  apply(kind, data) {
    switch (kind) {
      case "query":
        this.query = data;
        this.arrived.set("query", performance.now());
        // a replayed trace says it stopped after the context (the planner records it in its steps)
        if (this.generate === null && data.steps && data.steps["retrieve only"]) this.generate = false;
        break;
      case "stage":
        this.stages.push(data);
        this.arrived.set(data.name, performance.now());
        this.found = null; // a new first-stage search changes who found what
        break;
      case "context":
        this.context = data;
        break;
      case "token":
        this.answer += data.text || "";
        break;
      case "citations":
        this.citations = data.citations || [];
        // which answerer wrote the answer: "extractive" (the sources' own sentences) or "generative"
        this.answerer = data.answerer ? { name: data.answerer, kind: data.answerer_kind || "generative" } : null;
        break;
      case "support":
        this.support = data;
        break;
      case "done":
        this.done = data;
        break;
      case "error":
        this.error = data.message || "the question failed";
        break;
      default:
        return false;
    }
    for (const listener of this.listeners) listener(kind, data, this);
    return true;
  }

  /**
   * Apply a stored trace's events at once (a replay): listeners hear each event with `batching` set,
   * then one "batch" event, so a view that redraws whole draws once rather than once per event.
   */
  applyAll(events) {
    this.batching = true;
    try {
      for (const { event, data } of events) this.apply(event, data);
    } finally {
      this.batching = false;
    }
    for (const listener of this.listeners) listener("batch", null, this);
  }

  subscribe(listener) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  stage(name) {
    return this.stages.find((s) => s.name === name);
  }

  /** Stages that started a ranking: a search with no input of its own. */
  firstStages() {
    return this.stages.filter((s) => {
      const d = s.detail || {};
      return !("input" in d) && !("inputs" in d);
    });
  }

  /**
   * The stages of this question as a graph, [{name, inputs, retriever}]: the query event's plan (every
   * stage the pipeline will report, sent before the first) with any stage it did not name added from
   * the stage's own detail; a replayed trace, which has no plan, is the graph of its stages. The same
   * question draws the same graph live and replayed, whatever order its stages arrived in.
   */
  plan() {
    const nodes = new Map();
    const planned = this.query && Array.isArray(this.query.plan) ? this.query.plan : [];
    for (const p of planned) {
      if (p && typeof p.name === "string") nodes.set(p.name, { name: p.name, inputs: (p.inputs || []).map(String), retriever: p.retriever ? String(p.retriever) : null });
    }
    for (const stage of this.stages) {
      if (nodes.has(stage.name)) continue;
      const inputs = this.inputsOf(stage);
      const retriever = (stage.detail || {}).retriever;
      nodes.set(stage.name, { name: stage.name, inputs, retriever: retriever ? String(retriever) : inputs.length ? null : stage.name.split("·")[0] });
    }
    return [...nodes.values()];
  }

  /** The retrievers of this question's first-stage searches, sorted: "keyword", "vector". */
  families() {
    return [...new Set(this.plan().filter((n) => n.retriever && n.inputs.length === 0).map((n) => n.retriever))].sort();
  }

  /** The names a stage was built from ("input" or the comma-joined "inputs"). */
  inputsOf(stage) {
    const d = stage.detail || {};
    if (typeof d.input === "string" && d.input) return [d.input];
    if (typeof d.inputs === "string" && d.inputs) return d.inputs.split(",");
    if (Array.isArray(d.inputs)) return d.inputs.map(String);
    return [];
  }

  /** Where a chunk is: its doc id and span, from any stage that holds it. */
  locate(chunkId) {
    for (const stage of this.stages) {
      const found = stage.candidates.find((c) => c.chunk_id === chunkId);
      if (found) return found;
    }
    return null;
  }

  /** The chunk at every stage: [{stage, candidate|null}] in arrival order. */
  journey(chunkId) {
    return this.stages.map((stage) => ({
      stage,
      candidate: stage.candidates.find((c) => c.chunk_id === chunkId) || null,
    }));
  }

  /**
   * Which retrievers found a chunk, for colouring: the retriever of every first-stage search that
   * returned it (detail.retriever; a search without one stands for itself, less any "·phrasing").
   */
  foundBy(chunkId) {
    if (!this.found) {
      // chunk id -> set of retrievers, built once per stage event: the rank flow asks for every box
      this.found = new Map();
      for (const stage of this.firstStages()) {
        const family = String((stage.detail || {}).retriever || stage.name.split("·")[0]);
        for (const c of stage.candidates) {
          if (!this.found.has(c.chunk_id)) this.found.set(c.chunk_id, new Set());
          this.found.get(c.chunk_id).add(family);
        }
      }
    }
    return [...(this.found.get(chunkId) || [])].sort();
  }

  /**
   * Whether a stage's own scorer scored a candidate: false for the tail a rerank stage keeps, in its
   * input's order, below the candidates it re-scored (detail.reranked: its first that many; the
   * context built on a rerank says the same of its own candidates), true at every other stage.
   */
  rescored(stage, cand) {
    const n = (stage.detail || {}).reranked;
    return !Number.isInteger(n) || cand.rank <= n;
  }

  /**
   * Where a candidate the reranker did not score was kept from: {stage, candidate} of the same chunk
   * in the stage's input, followed back past any stage that did not score it either (the context
   * built on a rerank); null when it cannot be found.
   */
  keptFrom(stage, cand, depth = 0) {
    const input = this.stage(this.inputsOf(stage)[0]);
    const there = input && input.candidates.find((c) => c.chunk_id === cand.chunk_id);
    if (!there || depth > 8) return null;
    return this.rescored(input, there) ? { stage: input, candidate: there } : this.keptFrom(input, there, depth + 1);
  }

  /**
   * The score to show for a candidate: its display score where its stage says how to show scores
   * (detail.display, e.g. a reranker's logits through a sigmoid); a stage that only passes scores on
   * (top-k, the context) shows a score as its input showed that same score. null for the tail a
   * reranker kept below the ones it re-scored, where the stage shows logits: it has no logit, and a
   * sigmoid of its placeholder would be a made-up number.
   */
  shownScore(stage, cand, depth = 0) {
    if ((stage.detail || {}).display && !this.rescored(stage, cand)) return null;
    const shown = cand.display_score ?? cand.score;
    if ((stage.detail || {}).display || depth > 8) return shown;
    const input = this.stage(this.inputsOf(stage)[0]);
    const same = input && input.candidates.find((c) => c.chunk_id === cand.chunk_id && c.score === cand.score);
    return same ? this.shownScore(input, same, depth + 1) : shown;
  }

  /** Chunk ids packed into the context: the ones that made it past the token budget. */
  packed() {
    const ids = new Set((this.context && this.context.chunk_ids) || []);
    for (const passage of (this.context && this.context.passages) || []) {
      for (const id of passage.chunk_ids || []) ids.add(id);
    }
    return ids;
  }

  /**
   * The passage number (1-based, as "[n]" in the answer) of a citation: its own "number" where the
   * server sends one, else the passage with the same span.
   */
  citationNumber(citation) {
    // 0 marks a trace stored before citations recorded their number.
    if (Number.isInteger(citation.number) && citation.number > 0) return citation.number;
    const passages = (this.context && this.context.passages) || [];
    const index = passages.findIndex(
      (p) => p.doc_id === citation.doc_id && p.start === citation.start && p.end === citation.end,
    );
    return index >= 0 ? index + 1 : null;
  }

  citation(number) {
    return (this.citations || []).find((c) => this.citationNumber(c) === number) || null;
  }

  /** The packed passage numbered `number` (its "[n]" in the prompt), or null. */
  passage(number) {
    return ((this.context && this.context.passages) || []).find((p) => p.number === number) || null;
  }

  /**
   * chunk id -> the passage numbers the answer cited it under: every chunk of each cited passage
   * (a passage may join several adjacent chunks), or the citation's own chunk where the context
   * event carried no passages (a trace stored before they were kept).
   */
  citedChunks() {
    const cited = new Map();
    const add = (chunkId, number) => {
      if (!cited.has(chunkId)) cited.set(chunkId, []);
      if (number && !cited.get(chunkId).includes(number)) cited.get(chunkId).push(number);
    };
    for (const citation of this.citations || []) {
      const number = this.citationNumber(citation);
      const passage = number ? this.passage(number) : null;
      const ids = passage && passage.chunk_ids && passage.chunk_ids.length ? passage.chunk_ids : [citation.chunk_id];
      for (const id of ids) add(id, number);
    }
    return cited;
  }
}

/** "not re-scored: kept at fusion rank 12, score 0.0312": where a reranker's kept tail was ranked. */
export function keptNote(run, stage, candidate) {
  const from = run.keptFrom(stage, candidate);
  const where = from ? `: kept at ${from.stage.name} rank ${from.candidate.rank}, score ${fmt(from.candidate.score, 4)}` : "";
  return `not re-scored${where}`;
}

/** "keyword", "vector", "both" (found by several retrievers) or "none": the colour class of a chunk. */
export function foundClass(families) {
  if (families.length === 0) return "none";
  if (families.length > 1) return "both";
  return families[0];
}
