// The rank-flow diagram: the question's stages drawn as the graph they are. Each stage is a lane of
// boxes, one per candidate at its rank; a lane stands in the column of its depth, so searches that ran
// in parallel stand one above the other in the first column and fusion, rerank and the context follow;
// each phrasing of a question is folded under its retriever's fused ranking until asked for. A line
// follows a candidate from its rank in a stage to its rank in the stage built from it, and only there:
// stages that do not feed each other are never joined. The graph comes from the query event's plan (a
// replay has none, and is the graph of its stages), so a stage still running has a lane that says so,
// and the layout is the same live and replayed. Each box carries its rank in every search as a small
// badge, so "who found it, and how high" reads at every rank.
//
// One tab stop: the arrow keys move between boxes (up and down a lane, left and right along the
// candidate's path), Enter inspects, and focus stays on its box across redraws. Redrawn whole on each
// event (a few hundred SVG elements), with text measured on a canvas rather than in the SVG, so a redraw
// never waits on layout; a replay's events redraw once.

import { clear, el, fmt, svg } from "./dom.js";
import { foundClass, keptNote } from "./run.js";
import { layoutFlow } from "./rankflow-layout.js";
import { fit, fitMiddle, textWidth } from "./textfit.js";

const BOX_W = 176;
const LABEL_X = 22; // where a box's label starts, after its rank
const LABEL_GAP = 6; // room kept between the end of a label and what follows it
const BADGE_GAP = 3;
const GAP = 52; // room between columns for the lines, entries and exits
const ROW_H = 19;
const HEAD_H = 50; // a lane's own heading, inside the drawing
const LANE_GAP = 18; // between lanes stacked in one column
const PAD = 12;
const STUB = 16; // length of an entry's or exit's stub line
const PENDING_ROWS = 3;
const TICK_MS = 200; // a running stage's clock
const MAX_TITLES = 1000; // doc ids in one /api/titles request (the server's bound)

// Documents' titles, fetched once each for the whole page: doc id -> title ("" where none is known).
const titles = new Map();
const asking = new Set();

export class RankFlow {
  /**
   * root: the #rankflow section; onSelect(chunkId) when a candidate is chosen; markCited: mark the
   * chunks of the passages the answer cited (the chat page, whose legend says so).
   */
  constructor(root, { onSelect, markCited = false }) {
    this.root = root;
    this.onSelect = onSelect;
    this.markCited = markCited;
    this.run = null;
    this.unsubscribe = null;
    this.selected = null;
    this.active = null; // {stage, chunk, rank}: the box that holds the flow's one tab stop
    this.pair = ""; // "" = the whole graph; else JSON [input, stage]
    this.expanded = new Set(); // fused rankings whose phrasings are shown
    this.fit = false;
    this.ticker = null;
    this.pairSelect = root.querySelector("#rankflow-pair");
    this.rowsSelect = root.querySelector("#rankflow-rows");
    this.canvas = root.querySelector("#rankflow-canvas");
    this.foldsBox = root.querySelector("#rankflow-folds"); // the chat page's; the Results view has none
    this.fitBox = root.querySelector("#rankflow-fit");
    this.pairSelect.addEventListener("change", () => {
      this.pair = this.pairSelect.value;
      this.redraw();
    });
    this.rowsSelect.addEventListener("change", () => this.redraw());
    if (this.fitBox) {
      this.fitBox.addEventListener("change", () => {
        this.fit = this.fitBox.checked;
        this.redraw();
      });
    }
    this.canvas.addEventListener("keydown", (event) => this.onKey(event));
    this.canvas.addEventListener("focusin", (event) => {
      const node = event.target.closest && event.target.closest("g.node");
      if (node) this.remember(node);
    });
  }

  show(run) {
    if (this.unsubscribe) this.unsubscribe();
    this.run = run;
    this.pair = "";
    this.selected = null;
    this.active = null;
    this.unsubscribe = run.subscribe((kind) => {
      if (run.batching) return; // a replay's events: drawn once, at the end
      if (kind === "stage" || kind === "context" || kind === "citations" || kind === "query" || kind === "batch" || kind === "done" || kind === "error") this.redraw();
    });
    this.redraw();
  }

  select(chunkId) {
    this.selected = chunkId;
    this.redraw();
  }

  /** The graph's edges a person may compare as a pair: a stage and each stage it was built from. */
  pairs() {
    const seen = new Map();
    if (!this.run) return seen;
    for (const node of this.run.plan()) {
      if (!this.run.stage(node.name)) continue;
      for (const input of node.inputs) {
        if (this.run.stage(input)) seen.set(JSON.stringify([input, node.name]), `${input} → ${node.name}`);
      }
    }
    return seen;
  }

  renderPairs() {
    const pairs = this.pairs();
    if (this.pair && !pairs.has(this.pair)) this.pair = "";
    const options = [el("option", { value: "" }, "the whole graph")];
    for (const [value, label] of pairs) options.push(el("option", { value }, label));
    this.pairSelect.replaceChildren(...options);
    this.pairSelect.value = this.pair;
  }

  /** A toggle per fused ranking that folds its phrasings: shown only where a question had several. */
  renderFolds(folds) {
    if (!this.foldsBox) return;
    this.foldsBox.replaceChildren(
      ...folds.map(({ name, count }) => {
        const open = this.expanded.has(name);
        return el(
          "button",
          {
            type: "button",
            class: "fold",
            "aria-expanded": String(open),
            "data-fold": name,
            onclick: () => {
              if (open) this.expanded.delete(name);
              else this.expanded.add(name);
              this.redraw();
            },
          },
          `${open ? "▾ hide" : "▸ show"} ${name}'s ${count} searches`,
        );
      }),
    );
  }

  redraw() {
    this.renderPairs();
    const hadFocus = this.canvas.contains(document.activeElement) && document.activeElement !== this.canvas;
    clear(this.canvas);
    const run = this.run;
    if (!run || (run.stages.length === 0 && run.plan().length === 0)) {
      this.renderFolds([]);
      this.canvas.append(el("p", { class: "empty" }, run ? "Waiting for the first stage…" : "Ask a question to watch its retrieval."));
      this.tick(false);
      return;
    }
    const plan = run.plan();
    const longest = Math.max(1, ...run.stages.map((s) => s.candidates.length));
    const limit = this.rowsSelect.value === "all" ? longest : Math.min(longest, Number(this.rowsSelect.value));
    // a lane is as tall as the rows it shows (a stage still to come: a few rows' placeholder)
    const laneHeight = (name) => {
      const stage = run.stage(name);
      if (!stage) return HEAD_H + PENDING_ROWS * ROW_H + 10;
      const n = stage.candidates.length;
      return HEAD_H + (Math.max(1, Math.min(n, limit)) + (n > limit ? 1.6 : 0)) * ROW_H;
    };
    const layout = layoutFlow(plan, { expanded: this.expanded, pair: this.pair ? JSON.parse(this.pair) : null, height: laneHeight, gap: LANE_GAP });
    this.renderFolds(layout.folds);
    this.layout = layout;
    const arrived = layout.lanes.map((lane) => run.stage(lane.name)).filter(Boolean);
    const width = PAD * 2 + layout.columns * BOX_W + (layout.columns - 1) * GAP;
    const height = PAD * 2 + layout.height;
    const x = (col) => PAD + col * (BOX_W + GAP);
    const where = new Map(layout.lanes.map((lane) => [lane.name, lane]));
    const top = (name) => PAD + where.get(name).top;
    // y of rank `rank` in lane `name`: rows below the limit share one "more" row
    const y = (name, rank) => top(name) + HEAD_H + (Math.min(rank, limit + 1) - 1) * ROW_H + (rank > limit ? ROW_H * 0.6 : 0) + ROW_H / 2;
    const families = run.families();
    const ranks = new Map(families.map((f) => [f, rankMap(run.stage(f))]));
    const family = new Map(plan.map((n) => [n.name, n.retriever || (layout.folds.some((f) => f.name === n.name) ? n.name : null)]));
    const font = fonts(this.canvas);
    const ctx = { run, limit, x, y, top, where, families, ranks, family, font, packed: run.packed(), cited: this.markCited ? run.citedChunks() : new Map() };
    const scale = this.fit ? Math.min(1, Math.max(0.2, (this.canvas.clientWidth - 2) / width)) : 1;
    const root = svg("svg", {
      width: Math.ceil(width * scale),
      height: Math.ceil(height * scale),
      viewBox: `0 0 ${width} ${height}`,
      class: this.selected ? "has-selection" : "",
      role: "group",
      "aria-label": `rank flow of ${layout.lanes.length} stages; arrow keys move between candidates, Enter inspects one`,
    });
    const lines = svg("g", { class: "lines", "aria-hidden": "true" });
    root.append(lines);
    for (const [input, stage] of layout.edges) {
      if (run.stage(input) && run.stage(stage)) this.drawLinks(lines, run.stage(input), run.stage(stage), ctx);
    }
    const running = [];
    for (const lane of layout.lanes) {
      const stage = run.stage(lane.name);
      if (stage) root.append(this.drawLane(stage, lane, ctx));
      else root.append(this.drawPending(lane, plan, ctx, running));
    }
    this.drawCutoffs(root, ctx);
    this.canvas.append(this.heads(layout, x, scale, width, ctx), root);
    this.tick(running.length > 0);
    this.restoreFocus(hadFocus);
    const wanted = arrived.flatMap((s) => s.candidates.slice(0, limit).map((c) => c.doc_id));
    wantTitles(wanted, () => this.run === run && this.redraw());
  }

  /** The column headings, kept in view while the flow scrolls down (they name what each column holds). */
  heads(layout, x, scale, width, { run }) {
    const strip = el("div", { class: "flow-heads", "aria-hidden": "true" });
    strip.style.width = `${Math.ceil(width * scale)}px`; // through the CSSOM: the page's CSP refuses style attributes
    for (let col = 0; col < layout.columns; col += 1) {
      const names = layout.lanes.filter((l) => l.col === col).sort((a, b) => a.slot - b.slot).map((l) => l.name);
      const what = names.length > 2 ? `${names.length} searches, in parallel` : names.length === 2 ? `${names.join(" ‖ ")}, in parallel` : names[0];
      const pending = names.some((n) => !run.stage(n));
      const head = el("span", { class: ["head", pending && "pending"], title: names.join(", ") }, what);
      head.style.left = `${x(col) * scale}px`;
      head.style.width = `${(col === layout.columns - 1 ? BOX_W : BOX_W + GAP - 8) * scale}px`;
      strip.append(head);
    }
    return strip;
  }

  drawLane(stage, lane, ctx) {
    const { run, limit, x, y, top, font, packed, cited } = ctx;
    const detail = stage.detail || {};
    const left = x(lane.col);
    const head = top(lane.name);
    const fold = this.layout.folds.find((f) => f.name === stage.name);
    const group = svg("g", { class: "column", "data-stage": stage.name, "data-col": lane.col, "data-slot": lane.slot, role: "group", "aria-label": stage.name });
    // the candidates are a list of their own: a list may hold list items only, not the lane's header
    const items = svg("g", { class: "candidates", role: "list", "aria-label": `${stage.name}: ${stage.candidates.length} candidates` });
    const room = lane.col === this.layout.columns - 1 ? BOX_W : BOX_W + GAP - 8; // the last column has no gap after it
    group.append(
      svg("text", { x: left, y: head + 14, class: "stage-name" }, stage.name + (fold ? " (fused)" : "")),
      svg("text", { x: left, y: head + 28, class: "stage-meta" }, fit(`${stage.candidates.length} in ${fmt(stage.elapsed_ms, 1)} ms${fold ? ` · RRF of ${fold.count} searches` : ""}`, room, font.meta)),
      svg("text", { x: left, y: head + 41, class: "stage-meta" }, fit(summarise(detail, run), room, font.meta)),
    );
    const shown = stage.candidates.slice(0, limit).map((cand) => run.shownScore(stage, cand));
    const digits = distinguishingDigits(shown);
    const own = ctx.family.get(stage.name);
    for (const [n, cand] of stage.candidates.slice(0, limit).entries()) {
      const numbers = cited.get(cand.chunk_id);
      const yy = y(stage.name, cand.rank);
      const boxTop = yy - ROW_H / 2 + 1;
      // the tail a reranker kept below the ones it re-scored: no logit, so no number in the score's place
      const kept = !run.rescored(stage, cand);
      const score = shown[n] === null ? "—" : fmt(shown[n], digits);
      const keptSaid = kept ? keptNote(run, stage, cand) : "";
      const scoreStart = left + BOX_W - 4 - textWidth(score, font.score);
      // badges, right to left from the score: the candidate's rank in each search but the lane's own
      const badges = [];
      let end = scoreStart - BADGE_GAP - 2;
      const said = [];
      for (const f of [...ctx.families].reverse()) {
        const rank = ctx.ranks.get(f).get(cand.chunk_id);
        said.unshift(`${f} ${rank ? `#${rank}` : "did not find it"}`);
        if (f === own || ctx.families.length < 2 || !ctx.ranks.get(f).size) continue;
        const text = `${f[0]}${rank ?? "–"}`;
        const w = textWidth(text, font.badge);
        badges.unshift(svg("text", { x: end, y: yy + 4, class: ["badge", !rank && "absent"], "data-family": f, "data-rank": rank ?? "" }, text));
        end -= w + BADGE_GAP;
      }
      const [name, position, isTitle] = labelOf(cand);
      const full = `${name}${position}`;
      const room = end - LABEL_GAP + BADGE_GAP - (left + LABEL_X);
      const label = fitLabel(name, position, room, font.label, isTitle);
      const where = [packed.has(cand.chunk_id) && "in the context", numbers && `cited in the answer${numbers.length ? ` as ${numbers.map((k) => `[${k}]`).join("")}` : ""}`].filter(Boolean);
      const node = svg(
        "g",
        {
          class: ["node", kept && "kept", packed.has(cand.chunk_id) && "packed", numbers && "cited", cand.chunk_id === this.selected && "selected"],
          "data-chunk-id": cand.chunk_id,
          "data-stage": stage.name,
          "data-rank": cand.rank,
          "data-found": foundClass(run.foundBy(cand.chunk_id)),
          "data-cited": numbers ? numbers.join(",") : null,
          tabindex: -1,
          role: "listitem",
          "aria-label": `rank ${cand.rank} at ${stage.name}: ${full}, ${kept ? keptSaid : `score ${score}`}; ${said.join(", ")}${where.length ? `; ${where.join("; ")}` : ""}`,
          onclick: () => {
            this.remember(node);
            this.onSelect(cand.chunk_id);
          },
        },
        svg("title", {}, `${cand.chunk_id}${titles.get(cand.doc_id) ? `\n${titles.get(cand.doc_id)}` : ""}\nrank ${cand.rank} at ${stage.name}, ${kept ? keptSaid : `score ${fmt(cand.score, 4)}`}\n${said.join(", ")}${where.length ? `\n${where.join("\n")}` : ""}`),
        svg("rect", { x: left, y: boxTop, width: BOX_W, height: ROW_H - 2, rx: 3 }),
        numbers ? svg("rect", { class: "cited-bar", x: left, y: boxTop, width: 3, height: ROW_H - 2 }) : null,
        svg("text", { x: left + 4 + (numbers ? 1 : 0), y: yy + 4, class: "rank" }, String(cand.rank)),
        svg("text", { x: left + LABEL_X, y: yy + 4, class: "label", "data-full": full }, label),
        ...badges,
        svg("text", { x: left + BOX_W - 4, y: yy + 4, class: "score" }, score),
      );
      items.append(node);
    }
    group.append(items);
    if (stage.candidates.length > limit) {
      group.append(svg("text", { x: left + 4, y: y(stage.name, limit + 1) + 4, class: "more" }, `+${stage.candidates.length - limit} more`));
    }
    return group;
  }

  /** A stage the plan names that has not arrived: running (with its clock), waiting, or not run. */
  drawPending(lane, plan, { run, x, top }, running) {
    const node = plan.find((n) => n.name === lane.name);
    const left = x(lane.col);
    const head = top(lane.name);
    const over = Boolean(run.done || run.error);
    const missing = node.inputs.filter((i) => !run.stage(i));
    let status;
    let since = null;
    if (over) status = "not run";
    else if (missing.length) status = `waiting for ${missing.join(", ")}`;
    else {
      since = Math.max(run.arrived.get("query") ?? run.began, ...node.inputs.map((i) => run.arrived.get(i) ?? run.began));
      status = runningFor(since);
      running.push(since);
    }
    return svg(
      "g",
      { class: ["pending-lane", since !== null && "running"], "data-stage": lane.name, "data-col": lane.col, role: "status", "aria-label": `${lane.name}: ${status}` },
      svg("text", { x: left, y: head + 14, class: "stage-name" }, lane.name),
      svg("text", { x: left, y: head + 28, class: "stage-meta pending-status", "data-since": since ?? "" }, status),
      svg("rect", { class: "pending-box", x: left, y: head + HEAD_H - ROW_H / 2 + 10, width: BOX_W, height: PENDING_ROWS * ROW_H, rx: 4 }),
    );
  }

  /** The running stages' clocks, every TICK_MS while any runs: their text alone changes, not the drawing. */
  tick(on) {
    if (!on) {
      if (this.ticker) clearInterval(this.ticker);
      this.ticker = null;
      return;
    }
    if (this.ticker) return;
    this.ticker = setInterval(() => {
      const clocks = this.canvas.querySelectorAll("text.pending-status[data-since]:not([data-since=''])");
      if (!clocks.length) return this.tick(false);
      for (const clock of clocks) clock.textContent = runningFor(Number(clock.dataset.since));
    }, TICK_MS);
  }

  /** Lines from `left` to `right`: kept (both), exits (left only), entries (right only). */
  drawLinks(layer, left, right, { run, x, y, where, family }) {
    const rightRank = new Map(right.candidates.map((c) => [c.chunk_id, c.rank]));
    const leftRank = new Map(left.candidates.map((c) => [c.chunk_id, c.rank]));
    const x0 = x(where.get(left.name).col) + BOX_W;
    const x1 = x(where.get(right.name).col);
    const mid = (x0 + x1) / 2;
    const from = family.get(left.name) || "";
    const attrs = (chunkId, kind) => ({
      class: ["flow", kind, chunkId === this.selected && "selected"],
      "data-chunk-id": chunkId,
      "data-from": from,
      "data-edge": `${left.name}>${right.name}`,
      "data-found": foundClass(run.foundBy(chunkId)),
    });
    for (const cand of left.candidates) {
      const to = rightRank.get(cand.chunk_id);
      const y0 = y(left.name, cand.rank);
      if (to !== undefined) {
        const y1 = y(right.name, to);
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
      const y1 = y(right.name, cand.rank);
      layer.append(
        svg("circle", { ...attrs(cand.chunk_id, "entry-mark"), cx: x1 - STUB, cy: y1, r: 3 }),
        svg("path", { ...attrs(cand.chunk_id, "entry"), d: `M${x1 - STUB},${y1} L${x1},${y1}` }),
      );
    }
  }

  /**
   * Cut-offs, marked on the lane a stage cut from (its input): the reranker's shortlist, the top-k
   * kept for the context, and the token budget (chunks within top-k left out of the context).
   */
  drawCutoffs(root, { run, packed, limit, x, y, where }) {
    for (const stage of run.stages) {
      const detail = stage.detail || {};
      const input = run.inputsOf(stage)[0];
      const source = input && run.stage(input);
      if (!source || !where.has(input) || !where.has(stage.name)) continue;
      const left = x(where.get(input).col);
      const cuts = [
        ["shortlist", detail.shortlist],
        ["top-k", detail.top_k],
      ];
      for (const [label, n] of cuts) {
        if (!Number.isInteger(n) || n >= source.candidates.length || n > limit) continue;
        const at = y(input, n) + ROW_H / 2;
        root.append(
          svg("line", { class: "cutoff", "data-cutoff": label, x1: left - 6, x2: left + BOX_W + 6, y1: at, y2: at }),
          svg("text", { class: "cutoff-label", x: left + BOX_W + 8, y: at + 4 }, `${label} ${n}`),
        );
      }
      if ("budget_tokens" in detail && run.context) {
        const topK = Number.isInteger(detail.top_k) ? detail.top_k : source.candidates.length;
        for (const cand of source.candidates.slice(0, Math.min(topK, limit))) {
          if (packed.has(cand.chunk_id)) continue;
          const at = y(input, cand.rank);
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

  // ---- the keyboard: one tab stop, arrow keys between boxes ---------------------------------------

  remember(node) {
    this.active = { stage: node.dataset.stage, chunk: node.dataset.chunkId, rank: Number(node.dataset.rank) };
    for (const other of this.canvas.querySelectorAll("g.node[tabindex='0']")) if (other !== node) other.setAttribute("tabindex", "-1");
    node.setAttribute("tabindex", "0");
  }

  /** After a redraw: the tab stop on the box that had it (or the nearest rank of its stage), focused again if it was. */
  restoreFocus(hadFocus) {
    const nodes = [...this.canvas.querySelectorAll("g.node")];
    if (!nodes.length) return;
    let target = null;
    if (this.active) {
      const { stage, chunk, rank } = this.active;
      target = nodes.find((n) => n.dataset.stage === stage && n.dataset.chunkId === chunk) || null;
      if (!target) {
        const lane = nodes.filter((n) => n.dataset.stage === stage);
        target = lane[Math.min(lane.length, Math.max(1, rank)) - 1] || null;
      }
    }
    if (!target) target = this.firstNode(nodes);
    target.setAttribute("tabindex", "0");
    if (hadFocus) target.focus({ preventScroll: false });
  }

  /** The first box of the first column's top lane: where the tab stop starts. */
  firstNode(nodes) {
    const lanes = [...this.canvas.querySelectorAll("g.column")].sort((a, b) => a.dataset.col - b.dataset.col || a.dataset.slot - b.dataset.slot);
    for (const lane of lanes) {
      const first = lane.querySelector("g.node");
      if (first) return first;
    }
    return nodes[0];
  }

  onKey(event) {
    const node = event.target.closest && event.target.closest("g.node");
    if (!node) return;
    if (event.key === "Enter" || event.key === " ") {
      event.preventDefault();
      this.remember(node);
      this.onSelect(node.dataset.chunkId);
      return;
    }
    const next = this.neighbour(node, event.key);
    if (next === undefined) return; // not a key of ours
    event.preventDefault();
    if (!next) return;
    this.remember(next);
    next.focus();
  }

  /** The box a key moves to from `node`: null at an edge, undefined for a key that is not a move. */
  neighbour(node, key) {
    const lane = node.closest("g.column");
    const boxes = [...lane.querySelectorAll("g.node")];
    const at = boxes.indexOf(node);
    const laneOf = (name) => this.canvas.querySelector(`g.column[data-stage="${CSS.escape(name)}"]`);
    const column = [...this.canvas.querySelectorAll(`g.column[data-col="${lane.dataset.col}"]`)].sort((a, b) => a.dataset.slot - b.dataset.slot);
    const stacked = (step) => {
      const other = column[column.indexOf(lane) + step];
      if (!other) return null;
      const list = other.querySelectorAll("g.node");
      return list.length ? list[step > 0 ? 0 : list.length - 1] : null;
    };
    // along the candidate's path: the same chunk in the next lane that way, else the same rank there
    const across = (names) => {
      const lanes = names.map(laneOf).filter(Boolean);
      for (const other of lanes) {
        const same = other.querySelector(`g.node[data-chunk-id="${CSS.escape(node.dataset.chunkId)}"]`);
        if (same) return same;
      }
      if (!lanes.length) return null;
      const list = [...lanes[0].querySelectorAll("g.node")];
      return list[Math.min(at, list.length - 1)] || null;
    };
    const edges = (this.layout && this.layout.edges) || [];
    const stage = node.dataset.stage;
    switch (key) {
      case "ArrowUp":
        return at > 0 ? boxes[at - 1] : stacked(-1);
      case "ArrowDown":
        return at < boxes.length - 1 ? boxes[at + 1] : stacked(1);
      case "Home":
        return boxes[0];
      case "End":
        return boxes[boxes.length - 1];
      case "ArrowLeft":
        return across(edges.filter(([, to]) => to === stage).map(([from]) => from));
      case "ArrowRight":
        return across(edges.filter(([from]) => from === stage).map(([, to]) => to));
      default:
        return undefined;
    }
  }
}

/** chunk id -> rank in a stage (an empty map for a stage not here yet). */
function rankMap(stage) {
  return new Map(stage ? stage.candidates.map((c) => [c.chunk_id, c.rank]) : []);
}

function runningFor(since) {
  return `running… ${((performance.now() - since) / 1000).toFixed(1)} s`;
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
  if (typeof detail.hypothetical === "string") parts.push("the hypothetical answer");
  else if (typeof detail.query === "string" && detail.phrasing !== undefined) parts.push(`phrasing ${detail.phrasing}: “${detail.query}”`);
  if (detail.retriever && !parts.length) parts.push(String(detail.retriever) + " search");
  return parts.join(" · ");
}

/** A box's label as [name, position]: its document's title (else the file's name, folders left
 * out) and the chunk's position, " #3". */
function labelOf(cand) {
  const id = cand.chunk_id;
  const hash = id.lastIndexOf("#");
  const position = hash >= 0 ? ` #${id.slice(hash + 1).replace(/^0+(?=\d)/, "")}` : "";
  const title = titles.get(cand.doc_id);
  if (title) return [title, position, true];
  return [(hash >= 0 ? id.slice(0, hash) : id).split("/").pop(), position, false];
}

/** A label in `room` pixels: the position always whole; a title too long cut at its end (its first
 * words read best), a file's name in its middle (its start and its extension); nothing if all fails. */
function fitLabel(name, position, room, font, isTitle) {
  if (textWidth(name + position, font) <= room) return name + position;
  const left = room - textWidth(position, font);
  const short = left <= 0 ? "" : isTitle ? fit(name, left, font) : fitMiddle(name, left, font);
  return short ? short + position : textWidth(position.trim(), font) <= room ? position.trim() : "";
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

/** The CSS fonts of the drawing's texts (kept in step with style.css's #rankflow rules). */
function fonts(node) {
  const family = getComputedStyle(node).fontFamily || "sans-serif";
  return { label: `11px ${family}`, score: `11px ${family}`, badge: `bold 10px ${family}`, meta: `11px ${family}` };
}

/** Ask the server for the titles of `docIds` not known yet (once each); `then()` when some arrived. */
function wantTitles(docIds, then) {
  const missing = [...new Set(docIds)].filter((id) => !titles.has(id) && !asking.has(id)).slice(0, MAX_TITLES);
  if (!missing.length) return;
  for (const id of missing) asking.add(id);
  const query = missing.map((id) => `doc_id=${encodeURIComponent(id)}`).join("&");
  fetch(`/api/titles?${query}`, { headers: { Accept: "application/json" } })
    .then((response) => (response.ok ? response.json() : { titles: {} }))
    .catch(() => ({ titles: {} })) // a static copy of the Results view has no server: file names stay
    .then((body) => {
      const found = (body && body.titles) || {};
      let any = false;
      for (const id of missing) {
        asking.delete(id);
        titles.set(id, typeof found[id] === "string" ? found[id] : "");
        any = any || Boolean(found[id]);
      }
      if (any) then();
    });
}
