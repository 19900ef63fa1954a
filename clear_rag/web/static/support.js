// The support check as the page words it: which evidence a sentence is shown with, the answer's
// line as a heading, and the caveat that goes with it. Every number in the caveat comes from
// /api/config's `support.measured` (how the check agreed with graded answers); none is written here.

import { fmt } from "./dom.js";

const LINE_TITLES = {
  supported: "Supported",
  "the model ignored it": "The model ignored it",
  "retrieval missed it": "Retrieval missed it",
  refused: "Refused",
};

/** "Supported", "The model ignored it", ... for the support event's `line`. */
export function lineTitle(line) {
  return LINE_TITLES[line] || (line ? line[0].toUpperCase() + line.slice(1) : "");
}

const better = (a, b) => (b.probability > a.probability || (b.probability === a.probability && b.coverage > a.coverage) ? b : a);
const best = (list) => (list.length ? list.reduce(better) : null);

/**
 * The window to show for an answer sentence: a supporting window of a passage it cites; else the
 * best supporting window (a miscited sentence's real support); else the closest window of a passage
 * it cites, else the closest of any (what "not supported" was judged on). null for no claim.
 */
export function shownEvidence(sentence) {
  if (sentence.kind === "no claim") return null;
  const evidence = (sentence.evidence || []).filter((e) => e.number > 0);
  const cited = new Set(sentence.cited || []);
  const supporting = evidence.filter((e) => e.supports);
  return (
    best(supporting.filter((e) => cited.has(e.number))) ||
    best(supporting) ||
    best(evidence.filter((e) => cited.has(e.number))) ||
    best(evidence)
  );
}

/** One evidence row in words: "[2] supports it: p 0.98, holds 100% of its words". */
export function evidenceSummary(e) {
  const share = `${Math.round((e.coverage || 0) * 100)}% of its words`;
  const missing = (e.missing || []).length ? `; lacks ${e.missing.join(", ")}` : "";
  const verdict = e.supports ? "supports it" : "does not support it";
  const where = e.number > 0 ? `[${e.number}]` : `${e.chunk_id}${e.found ? ` (${e.found})` : ""}`;
  return `${where} ${verdict}: p ${fmt(e.probability, 2)}, holds ${share}${missing}`;
}

/**
 * The caveat beside an answer's line: that the check is a heuristic, and how it agreed with graded
 * answers where it was measured (results/answers.json, through /api/config), or that it was not.
 */
export function caveat(info) {
  if (!info || !info.available) return "";
  const m = info.measured;
  const checker = info.model ? ` (${info.model})` : "";
  if (!m) return `A heuristic check${checker}, not measured${info.reason ? `: ${info.reason}` : " against graded answers"}.`;
  const number = (key) => (typeof m[key] === "number" ? fmt(m[key], 2) : null);
  const said = [];
  const precision = number("check precision");
  const share = number("wrong share");
  if (precision !== null) said.push(`its flags were right ${precision} of the time` + (share !== null ? `, where ${share} were wrong anyway` : ""));
  const recall = number("check recall");
  if (recall !== null) said.push(`it caught ${recall} of the wrong ones`);
  const answers = typeof m.answered === "number" ? `the ${m.answered} graded answers` : "the graded answers";
  const where = `${answers} of ${m.file}${m.chat ? ` (${m.chat})` : ""}`;
  return `A heuristic check${checker}. On ${where}: ${said.join("; ") || "no agreement was recorded"}.`;
}

/** Why answers are not checked, for a run that had no support check. */
export function uncheckedReason(info, { replay }) {
  if (info && !info.available) return info.reason || "this server checks no answers";
  if (replay) return "this trace was stored without a support check";
  return "the server did not check this question";
}

/** How far the weak-retrieval warning was right on graded questions (from `support.measured`). */
export function weakCaveat(info) {
  const m = info && info.available ? info.measured : null;
  if (!m || typeof m["weak precision"] !== "number") return "";
  const share = typeof m["no span share"] === "number" ? ` (against ${fmt(m["no span share"], 2)} of all questions)` : "";
  return `Measured on ${m.file}: where this warning fired, the context held no answer ${fmt(m["weak precision"], 2)} of the time${share}.`;
}
