// "Where the answer was lost": one stacked bar per row, a segment per verdict as wide as its share of
// the row's questions. SVG rather than CSS widths: the page's policy forbids inline style attributes,
// and a rect's width is an attribute like any other.

import { el, svg } from "./dom.js";

/** The verdicts of clear_rag/eval/loss.py, from the best outcome to the worst. */
export const VERDICTS = [
  "found",
  "cut by the token budget",
  "lost in rerank",
  "lost in fusion",
  "retrieved too low",
  "never retrieved",
];

const WIDTH = 220;
const HEIGHT = 14;

/** The verdicts of `lost` in the fixed order, then any this page does not know, by name. */
function ordered(lost) {
  const extra = Object.keys(lost).filter((v) => !VERDICTS.includes(v)).sort();
  return [...VERDICTS, ...extra].filter((v) => Number(lost[v]) > 0);
}

/** A stacked bar of `lost` ({verdict: count}); a row with no verdicts says so. */
export function lostBar(lost) {
  const counts = lost || {};
  const total = Object.values(counts).reduce((sum, n) => sum + (Number(n) || 0), 0);
  if (total === 0) return el("span", { class: "lost-bar empty", "data-total": 0 }, "no verdicts");
  const label = ordered(counts).map((v) => `${v}: ${counts[v]}`).join(", ");
  const bar = svg("svg", {
    class: "lost-bar",
    width: WIDTH,
    height: HEIGHT,
    viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
    role: "img",
    "aria-label": `where the answer was lost, of ${total}: ${label}`,
    "data-total": total,
  });
  let x = 0;
  for (const verdict of ordered(counts)) {
    const width = (counts[verdict] / total) * WIDTH;
    bar.append(
      svg(
        "rect",
        { class: "lost-segment", "data-verdict": verdict, "data-count": counts[verdict], x, y: 0, width, height: HEIGHT },
        svg("title", {}, `${verdict}: ${counts[verdict]} of ${total}`),
      ),
    );
    x += width;
  }
  return bar;
}

/** The key to the bars' colours. */
export function lostLegend() {
  return el(
    "p",
    { class: "lost-legend" },
    VERDICTS.map((v) => el("span", { class: "lost-key" }, svg("svg", { width: 12, height: 12 }, svg("rect", { class: "lost-segment", "data-verdict": v, width: 12, height: 12 })), v)),
  );
}
