// The trace diff: one question under two rows, each trace drawn by the chat page's own rank flow
// (replayed through a Run from the events the API rebuilds), with the chunk covering the question's
// labels marked at every stage, and a table of that chunk's rank per stage, so the stage where the
// two configurations part is plain. The ranks are the result file's own record (each question's
// lost.ranks), so a side whose trace is gone (its store deleted, a static site) still shows what the
// file says of it, and is said to be missing: the predecessor showed such a side as "not run" at
// every stage and then found "the same rank wherever both ran", of a question the file had at #18.

import { clear, el } from "./dom.js";
import { RankFlow } from "./rankflow.js";
import { questionWords } from "./results-questions.js";
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
    this.question = root.querySelector("#trace-question");
    this.body = root.querySelector("#trace-body");
    this.opened = 0; // a later click wins over a slower earlier answer
    root.querySelector("#trace-close").addEventListener("click", () => this.close());
  }

  close() {
    this.opened += 1;
    this.root.hidden = true;
    clear(this.question);
    clear(this.body);
  }

  /**
   * Question `question` (an entry of the moves list: id, category, and per side `trace`, `first_rank`
   * and `verdict`) under `pinned` and `row` of `file`. `context`: the question's `words` (its entry
   * of the questions document), the `suite`, and `recorded`, the file's own record of the question
   * under each row ([pinned, row]: id, first_rank, lost: {verdict, ranks}), or null.
   */
  async open(file, pinned, row, question, context = {}) {
    const token = (this.opened += 1);
    const recorded = context.recorded || [null, null];
    this.root.hidden = false;
    this.root.dataset.question = question.id;
    this.title.textContent = `Question ${question.id}: ${pinned} against ${row}`;
    clear(this.question).append(questionWords(context.words) || "");
    clear(this.body).append(el("p", { class: "muted" }, "Loading both traces…"));
    const sides = [
      { side: "pinned", row: pinned, facts: question.pinned, recorded: recorded[0] },
      { side: "row", row, facts: question.row, recorded: recorded[1] },
    ];
    const rerun = `rerun the suite with \`clear-rag ablate ${context.suite || "SUITE"} --save-results\` to store its traces`;
    const answers = await Promise.allSettled(
      sides.map((s) =>
        s.facts.trace
          ? this.source.trace(file, s.row, s.facts.trace)
          : Promise.reject(new Error(`${file}.json: row ${s.row} stored no trace id for this question; ${rerun}`)),
      ),
    );
    if (token !== this.opened) return;
    clear(this.body);
    const reasons = answers.map((a) => (a.status === "rejected" ? a.reason.message : null));
    const loaded = answers.map((a) => (a.status === "fulfilled" ? a.value : null));
    if (reasons[0] && reasons.every((r) => r === reasons[0])) {
      // One reason for both sides (a static site has no stores): said once, in place of the flows,
      // with the ranks the file records beneath it.
      this.body.append(el("p", { class: "error trace-missing", "data-side": "both" }, reasons[0]), this.parting(file, sides, loaded));
      this.root.scrollIntoView({ block: "start" });
      return;
    }
    this.body.append(this.parting(file, sides, loaded));
    const flows = [];
    const select = (chunkId) => flows.forEach((f) => f.select(chunkId));
    const columns = el("div", { class: "trace-sides" });
    sides.forEach((s, i) => columns.append(this.side(file, s, loaded[i], reasons[i], flows, select)));
    this.body.append(columns);
    this.root.scrollIntoView({ block: "start" });
  }

  /**
   * The covering chunk's rank at each stage under both rows, as the file records it, the stage
   * where they part marked. A stage a side's trace did not run is "not run"; without its trace, a
   * stage the file does not record is "not recorded" (whether it ran is not known).
   */
  parting(file, sides, loaded) {
    const source = `${file}.json`;
    const ranks = sides.map((s, i) => s.recorded?.lost?.ranks || loaded[i]?.question?.lost?.ranks || null);
    if (!ranks.some(Boolean)) {
      const none = `${source} records no covering rank per stage for this question under either row, so where the two part cannot be said.`;
      return el("div", { class: "parting", "data-parts": "" }, el("p", { "data-field": "said" }, none));
    }
    const ran = loaded.map((t) => (t ? t.trace.stages.map((s) => s.name) : null));
    const stages = [];
    for (const names of [...ran, ...ranks.map((r) => Object.keys(r || {}))]) {
      for (const name of names || []) if (!stages.includes(name)) stages.push(name);
    }
    // what is known of each side: the stages its trace ran, or without it the stages the file records
    const known = ranks.map((r, i) => (r ? Object.fromEntries((ran[i] || Object.keys(r)).map((s) => [s, r[s] ?? null])) : {}));
    const cell = (i, stage) =>
      stage in known[i] ? rankText(known[i][stage]) : ran[i] && !ran[i].includes(stage) ? "not run" : "not recorded";
    const parts = partingStage(stages, known[0], known[1]);
    const compared = stages.some((s) => s in known[0] && s in known[1]);
    const missing = sides.filter((s, i) => !loaded[i]).map((s) => s.row);
    let said;
    if (parts) {
      said = `The two part at ${parts}: the covering chunk is ${rankText(known[0][parts])} under ${sides[0].row} and ${rankText(known[1][parts])} under ${sides[1].row}.`;
    } else if (compared) {
      said = missing.length
        ? `At every stage ${source} records under both rows, the covering chunk holds the same rank.`
        : "Wherever both ran a stage, the covering chunk holds the same rank.";
    } else {
      said = `No stage has a rank recorded under both rows, so where the two part cannot be said.`;
    }
    const note = missing.length
      ? el(
          "p",
          { class: "missing-note", "data-missing": missing.join("\n") },
          `The trace under ${missing.join(" and ")} is missing: the ranks shown for it are the ones ${source} records, not a replay of its trace.`,
        )
      : null;
    const rows = stages.map((stage) =>
      el("tr", { "data-stage": stage, class: stage === parts && "parts" }, el("th", { scope: "row" }, stage), sides.map((s, i) => el("td", { "data-side": s.side }, cell(i, stage)))),
    );
    return el(
      "div",
      { class: "parting", "data-parts": parts || "" },
      el("p", { "data-field": "said" }, said),
      note,
      el(
        "table",
        {},
        el(
          "thead",
          {},
          el(
            "tr",
            {},
            el("th", {}, "covering chunk at"),
            sides.map((s, i) => el("th", { "data-side": s.side }, s.row, loaded[i] ? null : el("span", { class: "muted" }, " (trace missing)"))),
          ),
        ),
        el("tbody", {}, rows),
      ),
    );
  }

  /** One row's side: what the file records of it, and its trace as a rank flow or why it is missing. */
  side(file, { side, row, facts, recorded }, shown, failed, flows, select) {
    const node = el(
      "section",
      { class: "trace-side", "data-side": side, "data-row": row },
      el("h3", {}, row),
      el(
        "p",
        { class: "muted", "data-field": "recorded" },
        `${file}.json records: first covering rank ${rankText(facts.first_rank)} · ${facts.verdict || "no verdict"}`,
      ),
    );
    if (!shown) {
      const ranks = recorded?.lost?.ranks || {};
      const stages = Object.keys(ranks);
      node.append(
        el("p", { class: "error trace-missing" }, `The trace is missing, so there is no rank flow to draw. ${failed}`),
        stages.length
          ? el("p", { class: "muted", "data-field": "recorded-ranks" }, `Per stage, as the file records it: ${stages.map((s) => `${s} ${rankText(ranks[s])}`).join(" · ")}`)
          : null,
      );
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
    run.applyAll(shown.events);
    const flow = new CoveringFlow(flowRoot(pair, rows, canvas), shown.covering, { onSelect: select });
    flows.push(flow);
    flow.show(run);
    return node;
  }
}
