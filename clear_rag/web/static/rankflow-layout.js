// Where the rank flow's lanes stand: a pure function of the plan (the stages a question runs and what
// each is built from), kept apart from the drawing so it can be read, and reasoned about, on its own.

/**
 * Where each stage of `plan` ([{name, inputs, retriever}]) stands: {lanes: [{name, col, slot}],
 * columns, slots, edges: [[input, stage]], folds: [{name, count}]}. A tree laid out from its last stage
 * leftwards: a lane's column is its depth, its inputs stack from its own slot down in the order it
 * names them, so parallel searches stand one above the other and nothing is joined but a stage and its
 * input. The searches of a retriever's phrasings (inputs of a ranking named after their retriever)
 * are folded unless that ranking is in `expanded`. `pair` [input, stage] draws those two alone.
 */
export function layoutFlow(plan, { expanded = new Set(), pair = null, height = () => 1, gap = 0 } = {}) {
  const byName = new Map(plan.map((n) => [n.name, n]));
  const consumer = new Map();
  for (const node of plan) for (const input of node.inputs) if (byName.has(input) && !consumer.has(input)) consumer.set(input, node.name);
  const isFold = (node) =>
    node.inputs.length > 1 &&
    node.inputs.every((i) => {
      const n = byName.get(i);
      return n && n.inputs.length === 0 && n.retriever === node.name;
    });
  const folds = plan.filter(isFold).map((n) => ({ name: n.name, count: n.inputs.length }));
  if (pair && byName.has(pair[0]) && byName.has(pair[1])) {
    const lanes = pair.map((name, col) => ({ name, col, slot: 0, top: 0 }));
    return { lanes, columns: 2, height: Math.max(...pair.map(height)), edges: [pair], folds };
  }
  const hidden = new Set();
  for (const fold of folds) if (!expanded.has(fold.name)) for (const i of byName.get(fold.name).inputs) hidden.add(i);
  const inputs = (name) => byName.get(name).inputs.filter((i) => byName.has(i) && !hidden.has(i) && consumer.get(i) === name);
  const band = new Map(); // a lane's own height, or its inputs' stacked, whichever is taller
  const size = (name, path) => {
    let sum = 0;
    for (const child of inputs(name)) {
      if (path.has(child)) continue;
      size(child, new Set([...path, child]));
      sum += band.get(child) + (sum ? gap : 0);
    }
    band.set(name, Math.max(height(name), sum));
  };
  const lanes = [];
  const edges = [];
  let slots = 0;
  const place = (name, depth, top, path) => {
    lanes.push({ name, depth, top, slot: slots++ });
    let next = top;
    for (const child of inputs(name)) {
      if (path.has(child)) continue;
      edges.push([child, name]);
      place(child, depth + 1, next, new Set([...path, child]));
      next += band.get(child) + gap;
    }
  };
  const roots = plan.filter((n) => !hidden.has(n.name) && !consumer.has(n.name)).map((n) => n.name).sort();
  let top = 0;
  for (const root of roots) {
    size(root, new Set([root]));
    place(root, 0, top, new Set([root]));
    top += band.get(root) + gap;
  }
  const deepest = Math.max(0, ...lanes.map((l) => l.depth));
  return {
    lanes: lanes.map(({ name, depth, top: t, slot }) => ({ name, col: deepest - depth, top: t, slot })),
    columns: deepest + 1,
    height: Math.max(0, top - gap),
    edges,
    folds,
  };
}
