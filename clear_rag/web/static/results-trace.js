// The trace diff: one question under two rows, each trace drawn by the chat page's own rank flow
// (replayed through a Run from the events the API rebuilds), with the chunk covering the question's
// labels marked at every stage, and a table of that chunk's rank per stage, so the stage where the
// two configurations part is plain.

import { clear, el } from "./dom.js";
import { RankFlow } from "./rankflow.js";
import { Run } from "./run.js";

/**
 * The rank flow with the covering chunk marked: `covering` is {stage: chunk id} from the trace
 * endpoint. Marked after every redraw, since the flow redraws whole (on a click, a change of rows).
 */
class CoveringFlow extends RankFlow {
  constructor(root, covering, options) {
    super(root, options);
    this.covering = covering || {};
  }

  redraw() {
    super.redraw();
    for (const node of this.canvas.querySelectorAll("g.node")) {
      if (this.covering[node.dataset.stage] === node.dataset.chunkId) {
        node.classList.add("covering");
        node.setAttribute("data-covering", "true");
      }
    }
  }
}

/**
 * RankFlow finds its controls by the chat page's ids (#rankflow-pair, ...). Two flows side by side
 * cannot both own those ids, so each is handed its own elements through this stand-in for its root.
 */
function flowRoot(pair, rows, canvas) {
  const parts = { "#rankflow-pair": pair, "#rankflow-rows": rows, "#rankflow-canvas": canvas };
  return { querySelector: (selector) => parts[selector] || null };
}

function rowsSelect() {
  return el(
    "select",
    {},
    el("option", { value: "15" }, "top 15"),
    el("option", { value: "30", selected: true }, "top 30"),
    el("option", { value: "all" }, "all"),
  );
}

const rankText = (rank) => (rank === null || rank === undefined ? "—" : `#${rank}`);

/**
 * The first stage, in the order of `stages`, that both traces ran and where the covering chunk's rank
 * differs; null when they agree wherever both ran.
 */
export function partingStage(stages, left, right) {
  return stages.find((s) => s in left && s in right && left[s] !== right[s]) || null;
}

export class TraceDiff {
  /** root: the trace-diff section; source: the view's data source (results-data.js). */
  constructor(root, source) {
    this.root = root;
    this.source = source;
    this.title = root.querySelector("#trace-title");
    this.body = root.querySelector("#trace-body");
    this.opened = 0; // a later click wins over a slower earlier answer
    root.querySelector("#trace-close").addEventListener("click", () => this.close());
  }

  close() {
    this.opened += 1;
    this.root.hidden = true;
    clear(this.body);
  }

  /**
   * Question `question` (an entry of the moves list: id, category, and per side `trace`, `first_rank`
   * and `verdict`) under `pinned` and `row` of `file`.
   */
  async open(file, pinned, row, question) {
    const token = (this.opened += 1);
    this.root.hidden = false;
    this.root.dataset.question = question.id;
    this.title.textContent = `Question ${question.id}: ${pinned} against ${row}`;
    clear(this.body).append(el("p", { class: "muted" }, "Loading both traces…"));
    const sides = [
      { side: "pinned", row: pinned, facts: question.pinned },
      { side: "row", row, facts: question.row },
    ];
    const answers = await Promise.allSettled(
      sides.map((s) =>
        s.facts.trace
          ? this.source.trace(file, s.row, s.facts.trace)
          : Promise.reject(new Error(`row ${s.row} stored no trace id for this question`)),
      ),
    );
    if (token !== this.opened) return;
    clear(this.body);
    const reasons = answers.map((a) => (a.status === "rejected" ? a.reason.message : null));
    if (reasons[0] && reasons.every((r) => r === reasons[0])) {
      // One reason for both sides (a static site has no stores): said once, in place of the diff.
      this.body.append(el("p", { class: "error trace-missing", "data-side": "both" }, reasons[0]));
      this.root.scrollIntoView({ block: "start" });
      return;
    }
    const loaded = answers.map((a) => (a.status === "fulfilled" ? a.value : null));
    this.body.append(this.parting(sides, loaded));
    const flows = [];
    const select = (chunkId) => flows.forEach((f) => f.select(chunkId));
    const columns = el("div", { class: "trace-sides" });
    sides.forEach((s, i) => columns.append(this.side(s, loaded[i], reasons[i], flows, select)));
    this.body.append(columns);
    this.root.scrollIntoView({ block: "start" });
  }

  /** The covering chunk's rank at each stage under both rows, the stage where they part marked. */
  parting(sides, loaded) {
    const ranks = loaded.map((t) => (t && t.question.lost && t.question.lost.ranks) || {});
    const stages = [];
    for (const t of loaded) for (const s of (t && t.trace.stages) || []) if (!stages.includes(s.name)) stages.push(s.name);
    if (!stages.length) return el("p", { class: "muted" }, "Neither trace is here to compare stage by stage.");
    const ran = loaded.map((t) => new Set(((t && t.trace.stages) || []).map((s) => s.name)));
    const known = ranks.map((r, i) => Object.fromEntries(stages.filter((s) => ran[i].has(s)).map((s) => [s, r[s] ?? null])));
    const parts = partingStage(stages, known[0], known[1]);
    const rows = stages.map((stage) =>
      el(
        "tr",
        { "data-stage": stage, class: stage === parts && "parts" },
        el("th", { scope: "row" }, stage),
        known.map((k) => el("td", {}, stage in k ? rankText(k[stage]) : "not run")),
      ),
    );
    const said = parts
      ? `The two part at ${parts}: the covering chunk is ${rankText(known[0][parts])} under ${sides[0].row} and ${rankText(known[1][parts])} under ${sides[1].row}.`
      : "Wherever both ran a stage, the covering chunk holds the same rank.";
    return el(
      "div",
      { class: "parting", "data-parts": parts || "" },
      el("p", {}, said),
      el(
        "table",
        {},
        el("thead", {}, el("tr", {}, el("th", {}, "covering chunk at"), sides.map((s) => el("th", {}, s.row)))),
        el("tbody", {}, rows),
      ),
    );
  }

  /** One row's side: its facts, and its trace as a rank flow, or the API's word on why it is missing. */
  side({ side, row, facts }, shown, failed, flows, select) {
    const node = el(
      "section",
      { class: "trace-side", "data-side": side, "data-row": row },
      el("h3", {}, row),
      el("p", { class: "muted" }, `first covering rank ${rankText(facts.first_rank)} · ${facts.verdict || "no verdict"}`),
    );
    if (!shown) {
      node.append(el("p", { class: "error trace-missing" }, failed));
      return node;
    }
    const pair = el("select", {});
    const rows = rowsSelect();
    const canvas = el("div", { class: "trace-canvas" });
    node.append(
      el("div", { class: "controls" }, el("label", {}, "Stages ", pair), el("label", {}, "Rows ", rows)),
      canvas,
    );
    const run = new Run();
    for (const { event, data } of shown.events) run.apply(event, data);
    const flow = new CoveringFlow(flowRoot(pair, rows, canvas), shown.covering, { onSelect: select });
    flows.push(flow);
    flow.show(run);
    return node;
  }
}
