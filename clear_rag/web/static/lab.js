// The Lab: every knob of the pipeline from /api/config, each a control. What a person changes is sent
// as `config` overrides with the next question; nothing else is. A knob whose machinery is missing
// here (no chat model, no reranker at all) is disabled with the server's one-line reason beside it,
// so a setting is never silently ignored. A knob whose choices are models (the reranker, the
// embedder) lists each one, and one that is not here is disabled with its own reason: the predecessor
// greyed the whole reranker knob when the config's reranker was missing, so a shipped one that was
// here could not be chosen.

import { clear, el, getJSON } from "./dom.js";

const SELF_CORRECTION = {
  key: "self_correction",
  value: false,
  kind: "bool",
  available: false,
  reason: "clear-rag has no self-correction step: an answer is generated once from the context",
};

/** What `clear-rag check` found of reranking on this store (probe questions cut from its own text),
 * and how far such checks agreed with real questions: shown beside the rerank knob, never hidden. */
function checkNote(check) {
  const rows = check.rows.filter((r) => r.name.startsWith("rerank") && r.verdict);
  const agree = check.agreement || [];
  const verdicts = agree.reduce((n, a) => n + a.verdicts, 0);
  const agreed = agree.reduce((n, a) => n + a.verdicts_agree, 0);
  return el(
    "div",
    { class: "check", "data-check": "rerank" },
    el(
      "p",
      {},
      `Checked on this store with ${check.probes} probe questions`
        + `${check.reranker ? `, reranker ${check.reranker}` : ""} (${(check.date || "").slice(0, 10)}):`,
    ),
    el(
      "ul",
      {},
      ...rows.map((r) =>
        el(
          "li",
          { "data-verdict": r.verdict },
          `${r.name}: ${r.verdict} (nDCG@10 ${r.difference >= 0 ? "+" : ""}${r.difference.toFixed(3)}, `
            + `interval ${r.ci[0].toFixed(3)} to ${r.ci[1].toFixed(3)})`,
        ),
      ),
    ),
    el(
      "p",
      { class: "trust" },
      agree.length
        ? `Probes are not real questions: on ${agree.length} labelled suites their verdicts agreed with the real `
            + `questions' ${agreed} times of ${verdicts}.`
        : "How far probe verdicts agree with real questions is not measured here.",
    ),
  );
}

/** A reason as the server writes it, a command in `backticks` shown as code. */
function said(reason) {
  return reason.split("`").map((part, i) => (i % 2 ? el("code", {}, part) : part));
}

export class Lab {
  constructor(root) {
    this.root = root; // #lab
    this.form = root.querySelector("#lab-knobs");
    this.summary = root.querySelector("#lab-overrides");
    this.knobs = [];
    this.initial = new Map(); // key -> value as the server sent it
    this.current = new Map();
    root.querySelector("#lab-reset").addEventListener("click", () => this.render());
  }

  /** The knobs of /api/config; `config`, where given, is that request already made (the page asks once). */
  async load(config = null) {
    try {
      const { knobs, check } = await (config || getJSON("/api/config"));
      this.knobs = knobs.some((k) => k.key === SELF_CORRECTION.key) ? knobs : [...knobs, SELF_CORRECTION];
      this.check = check || null;
    } catch (error) {
      clear(this.form).append(el("p", { class: "error" }, `Could not load the settings: ${error.message}`));
      return;
    }
    this.render();
  }

  render() {
    clear(this.form);
    this.initial.clear();
    this.current.clear();
    this.saidBy = new Map(); // reason -> the knob that says it
    for (const knob of this.knobs) {
      this.initial.set(knob.key, structuredClone(knob.value));
      this.current.set(knob.key, structuredClone(knob.value));
      this.form.append(this.knobRow(knob));
    }
    this.showSummary();
  }

  knobRow(knob) {
    const disabled = !knob.available;
    const id = `knob-${knob.key}`;
    const set = (value) => {
      this.current.set(knob.key, value);
      if (knob.key === "rerank" && value) this.pickPresentReranker();
      this.showSummary();
    };
    const attrs = {
      class: ["knob", disabled && "disabled"],
      "data-knob": knob.key,
      "data-available": String(Boolean(knob.available)),
      "aria-describedby": disabled && knob.options ? `${id}-reason` : null,
    };
    const title = knob.key.replaceAll("_", " ");
    // Models are radio buttons in a fieldset: one tab stop, arrow keys between the ones that are here.
    const row = knob.options
      ? el("fieldset", attrs, el("legend", {}, title), this.optionsControl(knob, id, disabled, set))
      : el("div", attrs, el("label", { for: id }, title), this.control(knob, id, disabled, set));
    if (knob.key === "rerank" && this.check) row.append(checkNote(this.check));
    if (disabled) {
      // a reason two knobs share (expand and hyde both need a chat model that writes) is said once
      const reason = knob.reason || "not available here";
      const first = this.saidBy.get(reason);
      if (!first) this.saidBy.set(reason, title);
      row.append(el("p", { class: "reason", id: `${id}-reason` }, first ? `as for ${first}` : said(reason)));
    }
    return row;
  }

  /** One radio button per model; one that is not here is disabled, its reason beside its name. */
  optionsControl(knob, id, disabled, set) {
    const box = el("span", { id, class: "options" });
    knob.options.forEach((option, i) => {
      const reasonId = option.reason ? `${id}-${i}-reason` : null;
      box.append(
        el(
          "label",
          { class: ["option", !option.available && "absent"], "data-choice": option.name },
          el("input", {
            type: "radio",
            name: id,
            value: option.name,
            disabled: disabled || !option.available,
            checked: option.name === knob.value,
            "aria-describedby": reasonId,
            onchange: (e) => e.target.checked && set(option.name),
          }),
          el("span", { class: "name" }, option.name),
          option.about && el("span", { class: "about" }, option.about),
          option.reason && el("span", { class: "reason", id: reasonId }, said(option.reason)),
        ),
      );
    });
    return box;
  }

  /** Rerank turned on with a reranker that is not here would be refused: the first one that is
   * here is chosen instead, in sight, and sent with the question like any other change. */
  pickPresentReranker() {
    const knob = this.knobs.find((k) => k.key === "reranker");
    if (!knob || !knob.available) return;
    const chosen = knob.options.find((o) => o.name === this.current.get("reranker"));
    if (chosen && chosen.available) return;
    const present = knob.options.find((o) => o.available);
    this.current.set("reranker", present.name);
    const radio = [...this.form.querySelectorAll("[data-knob='reranker'] input")].find((i) => i.value === present.name);
    if (radio) radio.checked = true;
  }

  control(knob, id, disabled, set) {
    const value = knob.value;
    const common = { id, disabled, "aria-describedby": disabled ? `${id}-reason` : null };
    switch (knob.kind) {
      case "bool":
        return el("input", { ...common, type: "checkbox", checked: Boolean(value), onchange: (e) => set(e.target.checked) });
      case "int":
      case "float":
        return el("input", {
          ...common,
          type: "number",
          step: knob.kind === "int" ? 1 : "any",
          max: knob.max ?? null, // the server's own value bounds a question's work: lower it, never raise it
          value: value ?? "",
          onchange: (e) => set(e.target.value === "" ? null : Number(e.target.value)),
        });
      case "choice":
        return el(
          "select",
          { ...common, onchange: (e) => set(e.target.value) },
          (knob.choices || []).map((c) => el("option", { value: c, selected: c === value }, c)),
        );
      case "list":
        return this.listControl(knob, common, set);
      case "table":
        return this.tableControl(knob, common, set);
      default:
        return el("input", { ...common, type: "text", value: value ?? "", onchange: (e) => set(e.target.value) });
    }
  }

  /** A list of choices (the retrievers): one checkbox each, in the order the choices come. */
  listControl(knob, common, set) {
    const chosen = new Set(knob.value || []);
    const choices = [...new Set([...(knob.choices || []), ...chosen])];
    const box = el("span", { id: common.id, class: "choices" });
    for (const choice of choices) {
      box.append(
        el(
          "label",
          {},
          el("input", {
            type: "checkbox",
            value: choice,
            disabled: common.disabled,
            checked: chosen.has(choice),
            onchange: () => set([...box.querySelectorAll("input:checked")].map((i) => i.value)),
          }),
          choice,
        ),
      );
    }
    return box;
  }

  /** A table of settings (chunking, min-max weights): a number or text field per entry. Weights
   * start empty (every retriever weighs 1), so their entries are the retrievers. */
  tableControl(knob, common, set) {
    const entries = { ...(knob.value || {}) };
    if (knob.key === "weights") {
      const retrievers = this.knobs.find((k) => k.key === "retrievers");
      for (const name of (retrievers && (retrievers.choices || retrievers.value)) || []) entries[name] ??= 1;
    }
    const box = el("span", { id: common.id, class: "table" });
    const values = { ...(knob.value || {}) };
    for (const [name, v] of Object.entries(entries)) {
      const numeric = typeof v === "number" || v === null;
      const shown = v !== null && typeof v === "object" ? JSON.stringify(v) : v; // chunking's parsers
      box.append(
        el(
          "label",
          {},
          `${name} `,
          el("input", {
            type: numeric ? "number" : "text",
            step: "any",
            disabled: common.disabled,
            value: shown ?? "",
            "data-entry": name,
            onchange: (e) => {
              values[name] = numeric ? Number(e.target.value) : e.target.value;
              set({ ...values });
            },
          }),
        ),
      );
    }
    return box;
  }

  /** The settings changed from the server's: what the next question sends as `config`. A table
   * sends only its changed entries, since the server merges tables key by key. */
  overrides() {
    const out = {};
    for (const [key, value] of this.current) {
      const knob = this.knobs.find((k) => k.key === key);
      if (!knob || !knob.available) continue;
      const before = this.initial.get(key);
      if (knob.kind === "table") {
        const changed = Object.fromEntries(Object.entries(value || {}).filter(([k, v]) => (before || {})[k] !== v));
        if (Object.keys(changed).length) out[key] = changed;
      } else if (JSON.stringify(value) !== JSON.stringify(before)) {
        out[key] = value;
      }
    }
    return out;
  }

  showSummary() {
    const changed = this.overrides();
    const keys = Object.keys(changed);
    this.summary.textContent = keys.length
      ? `Next question sends: ${JSON.stringify(changed)}`
      : "Server settings (change a knob to try another config on the next question).";
  }
}
