// The rank-flow diagram: one column per stage, one box per candidate at its rank, and a line per
// candidate from its rank in one column to its rank in the next. Drawn from stage events alone, so a
// stage added to the pipeline later shows up with no change here. Redrawn whole on each event: a
// few hundred SVG elements cost less than the bookkeeping an incremental update would need.

import { clear, el, fmt, svg } from "./dom.js";
import { foundClass } from "./run.js";

const BOX_W = 150;
const LABEL_X = 22; // where a box's label starts, after its rank
const LABEL_GAP = 6; // room kept between the end of a label and the start of its score
const GAP = 64; // room between columns for the lines, entries and exits
const ROW_H = 19;
const HEAD_H = 58;
const PAD = 12;
const STUB = 22; // length of an entry's or exit's stub line

export class RankFlow {
  /**
   * root: the #rankflow section; onSelect(chunkId) when a candidate is clicked; markCited: mark the
   * chunks of the passages the answer cited (the chat page, whose legend says so).
   */
  constructor(root, { onSelect, markCited = false }) {
    this.root = root;
    this.onSelect = onSelect;
    this.markCited = markCited;
    this.run = null;
    this.unsubscribe = null;
    this.selected = null;
    this.pair = ""; // "" = every stage in arrival order; else JSON [left, right]
    this.pairSelect = root.querySelector("#rankflow-pair");
    this.rowsSelect = root.querySelector("#rankflow-rows");
    this.canvas = root.querySelector("#rankflow-canvas");
    this.pairSelect.addEventListener("change", () => {
      this.pair = this.pairSelect.value;
      this.redraw();
    });
    this.rowsSelect.addEventListener("change", () => this.redraw());
  }

  show(run) {
    if (this.unsubscribe) this.unsubscribe();
    this.run = run;
    this.pair = "";
    this.selected = null;
    this.unsubscribe = run.subscribe((kind) => {
      if (kind === "stage" || kind === "context" || kind === "citations") this.redraw();
    });
    this.redraw();
  }

  select(chunkId) {
    this.selected = chunkId;
    this.redraw();
  }

  /** Pairs of stages a person may compare: each stage and the next to arrive, and each stage and
   * the stages it was built from (detail.input / detail.inputs). */
  pairs() {
    const stages = this.run ? this.run.stages : [];
    const seen = new Map();
    const add = (a, b) => {
      const key = JSON.stringify([a, b]);
      if (a !== b && !seen.has(key)) seen.set(key, `${a} → ${b}`);
    };
    for (let i = 1; i < stages.length; i += 1) add(stages[i - 1].name, stages[i].name);
    for (const stage of stages) for (const input of this.run.inputsOf(stage)) add(input, stage.name);
    return seen;
  }

  columns() {
    const stages = this.run ? this.run.stages : [];
    if (!this.pair) return stages;
    const [left, right] = JSON.parse(this.pair);
    return stages.filter((s) => s.name === left || s.name === right).sort((a, b) => (a.name === left ? -1 : b.name === left ? 1 : 0));
  }

  renderPairs() {
    const pairs = this.pairs();
    if (this.pair && !pairs.has(this.pair)) this.pair = "";
    const options = [el("option", { value: "" }, "every stage, in arrival order")];
    for (const [value, label] of pairs) options.push(el("option", { value }, label));
    this.pairSelect.replaceChildren(...options);
    this.pairSelect.value = this.pair;
  }

  redraw() {
    this.renderPairs();
    clear(this.canvas);
    const run = this.run;
    if (!run || run.stages.length === 0) {
      this.canvas.append(el("p", { class: "empty" }, run ? "Waiting for the first stage…" : "Ask a question to watch its retrieval."));
      return;
    }
    const columns = this.columns();
    const longest = Math.max(1, ...columns.map((s) => s.candidates.length));
    const limit = this.rowsSelect.value === "all" ? longest : Math.min(longest, Number(this.rowsSelect.value));
    const overflow = longest > limit;
    const width = PAD * 2 + columns.length * BOX_W + (columns.length - 1) * GAP;
    const height = HEAD_H + (limit + (overflow ? 1.6 : 0)) * ROW_H + PAD * 2;
    const root = svg("svg", {
      width,
      height,
      viewBox: `0 0 ${width} ${height}`,
      class: this.selected ? "has-selection" : "",
      role: "img",
      "aria-label": `rank flow across ${columns.map((s) => s.name).join(", ")}`,
    });
    const packed = run.packed();
    const cited = this.markCited ? run.citedChunks() : new Map();
    const x = (i) => PAD + i * (BOX_W + GAP);
    const y = (rank) => HEAD_H + (Math.min(rank, limit + 1) - 1) * ROW_H + (rank > limit ? ROW_H * 0.6 : 0);
    const ctx = { run, packed, cited, limit, x, y };
    const lines = svg("g", { class: "lines" });
    root.append(lines);
    columns.forEach((stage, i) => {
      if (i > 0) this.drawLinks(lines, columns[i - 1], stage, i - 1, ctx);
      root.append(this.drawColumn(stage, i, ctx, overflow));
    });
    this.drawCutoffs(root, columns, ctx);
    this.canvas.append(root);
    fitLabels(root);
  }

  drawColumn(stage, i, { run, packed, cited, limit, x, y }, overflow) {
    const detail = stage.detail || {};
    const group = svg("g", { class: "column", "data-stage": stage.name });
    const left = x(i);
    group.append(
      svg("text", { x: left, y: 16, class: "stage-name" }, stage.name),
      svg("text", { x: left, y: 31, class: "stage-meta" }, `${stage.candidates.length} in ${fmt(stage.elapsed_ms, 1)} ms`),
      svg("text", { x: left, y: 45, class: "stage-meta" }, summarise(detail, run)),
    );
    const shown = stage.candidates.slice(0, limit).map((cand) => run.shownScore(stage, cand));
    const digits = distinguishingDigits(shown);
    for (const [n, cand] of stage.candidates.slice(0, limit).entries()) {
      const found = foundClass(run.foundBy(cand.chunk_id));
      // a chunk of a passage the answer cited: a bar along the box's left edge (inside it, clear of
      // the rank) and an outline of its own, in every column it is in
      const numbers = cited.get(cand.chunk_id);
      const citedAs = numbers ? `\ncited in the answer${numbers.length ? ` as ${numbers.map((n) => `[${n}]`).join("")}` : ""}` : "";
      const top = y(cand.rank) - ROW_H / 2 + 1;
      const node = svg(
        "g",
        {
          class: ["node", packed.has(cand.chunk_id) && "packed", numbers && "cited", cand.chunk_id === this.selected && "selected"],
          "data-chunk-id": cand.chunk_id,
          "data-stage": stage.name,
          "data-rank": cand.rank,
          "data-found": found,
          "data-cited": numbers ? numbers.join(",") : null,
          tabindex: 0,
          onclick: () => this.onSelect(cand.chunk_id),
          onkeydown: (event) => event.key === "Enter" && this.onSelect(cand.chunk_id),
        },
        svg("title", {}, `${cand.chunk_id}\nrank ${cand.rank} at ${stage.name}, score ${fmt(cand.score, 4)}${citedAs}`),
        svg("rect", { x: left, y: top, width: BOX_W, height: ROW_H - 2, rx: 3 }),
        numbers ? svg("rect", { class: "cited-bar", x: left, y: top, width: 3, height: ROW_H - 2 }) : null,
        svg("text", { x: left + 4 + (numbers ? 1 : 0), y: y(cand.rank) + 4, class: "rank" }, String(cand.rank)),
        svg("text", { x: left + LABEL_X, y: y(cand.rank) + 4, class: "label", "data-full": shortId(cand.chunk_id) }, shortId(cand.chunk_id)),
        svg("text", { x: left + BOX_W - 4, y: y(cand.rank) + 4, class: "score" }, fmt(shown[n], digits)),
      );
      group.append(node);
    }
    if (overflow && stage.candidates.length > limit) {
      group.append(svg("text", { x: left + 4, y: y(limit + 1) + 4, class: "more" }, `+${stage.candidates.length - limit} more`));
    }
    return group;
  }

  /** Lines from `left` to `right`: kept (both), exits (left only), entries (right only). */
  drawLinks(layer, left, right, i, { run, x, y }) {
    const rightRank = new Map(right.candidates.map((c) => [c.chunk_id, c.rank]));
    const leftRank = new Map(left.candidates.map((c) => [c.chunk_id, c.rank]));
    const x0 = x(i) + BOX_W;
    const x1 = x(i + 1);
    const mid = (x0 + x1) / 2;
    const attrs = (chunkId, kind) => ({
      class: ["flow", kind, chunkId === this.selected && "selected"],
      "data-chunk-id": chunkId,
      "data-found": foundClass(run.foundBy(chunkId)),
    });
    for (const cand of left.candidates) {
      const to = rightRank.get(cand.chunk_id);
      const y0 = y(cand.rank);
      if (to !== undefined) {
        const y1 = y(to);
        const kind = to < cand.rank ? "up" : to > cand.rank ? "down" : "same";
        layer.append(svg("path", { ...attrs(cand.chunk_id, kind), d: `M${x0},${y0} C${mid},${y0} ${mid},${y1} ${x1},${y1}` }));
      } else {
        layer.append(
          svg("path", { ...attrs(cand.chunk_id, "exit"), d: `M${x0},${y0} L${x0 + STUB},${y0}` }),
          svg("text", { ...attrs(cand.chunk_id, "exit-mark"), x: x0 + STUB + 2, y: y0 + 4 }, "×"),
        );
      }
    }
    for (const cand of right.candidates) {
      if (leftRank.has(cand.chunk_id)) continue;
      const y1 = y(cand.rank);
      layer.append(
        svg("circle", { ...attrs(cand.chunk_id, "entry-mark"), cx: x1 - STUB, cy: y1, r: 3 }),
        svg("path", { ...attrs(cand.chunk_id, "entry"), d: `M${x1 - STUB},${y1} L${x1},${y1}` }),
      );
    }
  }

  /**
   * Cut-offs, marked on the column a stage cut from (its input): the reranker's shortlist, the
   * top-k kept for the context, and the token budget (chunks within top-k left out of the context).
   */
  drawCutoffs(root, columns, { run, packed, limit, x, y }) {
    const index = new Map(columns.map((s, i) => [s.name, i]));
    for (const stage of columns) {
      const detail = stage.detail || {};
      const input = run.inputsOf(stage)[0];
      if (!index.has(input)) continue;
      const source = columns[index.get(input)];
      const left = x(index.get(input));
      const cuts = [
        ["shortlist", detail.shortlist],
        ["top-k", detail.top_k],
      ];
      for (const [label, n] of cuts) {
        if (!Number.isInteger(n) || n >= source.candidates.length || n > limit) continue;
        const at = y(n) + ROW_H / 2;
        root.append(
          svg("line", { class: "cutoff", "data-cutoff": label, x1: left - 6, x2: left + BOX_W + 6, y1: at, y2: at }),
          svg("text", { class: "cutoff-label", x: left + BOX_W + 8, y: at + 4 }, `${label} ${n}`),
        );
      }
      if ("budget_tokens" in detail && run.context) {
        const topK = Number.isInteger(detail.top_k) ? detail.top_k : source.candidates.length;
        for (const cand of source.candidates.slice(0, Math.min(topK, limit))) {
          if (packed.has(cand.chunk_id)) continue;
          const at = y(cand.rank);
          root.append(
            svg(
              "line",
              { class: "over-budget", "data-chunk-id": cand.chunk_id, x1: left, x2: left + BOX_W, y1: at, y2: at },
              svg("title", {}, `${cand.chunk_id}: within top-k but over the ${detail.budget_tokens}-token budget`),
            ),
          );
        }
      }
    }
  }
}

/** The facts of a stage worth a glance, from whatever its detail holds. */
function summarise(detail, run) {
  const parts = [];
  if (detail.method) parts.push(detail.method + (detail.k !== undefined ? ` k=${detail.k}` : ""));
  if (detail.shortlist !== undefined) parts.push(`shortlist ${detail.shortlist}` + (detail.reused ? ` (${detail.reused} scores reused)` : ""));
  if (detail.display) parts.push(`shown as ${detail.display}`);
  if (detail.top_k !== undefined) parts.push(`top-k ${detail.top_k}`);
  if (detail.budget_tokens !== undefined) {
    const used = run.context ? run.context.tokens : detail.tokens;
    parts.push(`${used ?? "?"}/${detail.budget_tokens} tokens`);
  }
  if (detail.retriever && !parts.length) parts.push(String(detail.retriever) + (detail.phrasing !== undefined ? ` · phrasing ${detail.phrasing}` : ""));
  return parts.join(" · ");
}

/** A chunk id without its folders: "docs/sub/c.html#0003" as "c.html#3" (the full id is in the box's
 * tooltip and the inspector; fitLabels shortens it further where the box is too narrow). */
function shortId(id) {
  return id.slice(id.lastIndexOf("/") + 1).replace(/#0*(\d)/, "#$1");
}

/**
 * Decimals enough to tell a column's scores apart: the fewest (2 to 6) at which no two neighbours
 * with different scores print the same (RRF sums such as 0.0325 and 0.0323 all read 0.03 at two).
 */
export function distinguishingDigits(values) {
  const numbers = values.filter((v) => typeof v === "number" && Number.isFinite(v) && !Number.isInteger(v));
  for (let digits = 2; digits < 6; digits += 1) {
    const clash = numbers.some((v, i) => i > 0 && v !== numbers[i - 1] && v.toFixed(digits) === numbers[i - 1].toFixed(digits));
    if (!clash) return digits;
  }
  return 6;
}

/** Each box's label cut, in its middle, to end before its score begins (measured as drawn, so any font
 * and any width fits); the whole label stays in the box's tooltip. */
function fitLabels(root) {
  for (const node of root.querySelectorAll("g.node")) {
    const label = node.querySelector("text.label");
    const score = node.querySelector("text.score");
    if (!label || !score || typeof label.getComputedTextLength !== "function") continue;
    const room = score.getBBox().x - LABEL_GAP - Number(label.getAttribute("x"));
    const full = label.dataset.full;
    if (label.getComputedTextLength() <= room) continue;
    let lo = 0; // the longest middle cut known to fit, found by halving
    let hi = full.length - 1;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      label.textContent = cut(full, mid);
      if (label.getComputedTextLength() <= room) lo = mid;
      else hi = mid - 1;
    }
    label.textContent = lo > 0 ? cut(full, lo) : "";
  }
}

/** ``text`` in ``keep`` characters, an ellipsis in the middle: the file's start and the chunk's end. */
function cut(text, keep) {
  if (keep >= text.length) return text;
  const tail = Math.ceil((keep - 1) / 2);
  return `${text.slice(0, keep - 1 - tail)}…${text.slice(text.length - tail)}`;
}
