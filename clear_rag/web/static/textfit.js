// Text measured on a canvas and cut to fit a width in pixels: how the rank flow fits a label, a score
// and its badges in a box without laying out the SVG.

let measurer = null;
const widths = new Map();

export function textWidth(text, font) {
  const key = `${font}|${text}`;
  let w = widths.get(key);
  if (w === undefined) {
    if (!measurer) measurer = document.createElement("canvas").getContext("2d");
    measurer.font = font;
    w = measurer.measureText(text).width;
    if (widths.size > 50_000) widths.clear();
    widths.set(key, w);
  }
  return w;
}

/** `text` cut at its end to fit `room` pixels. */
export function fit(text, room, font) {
  if (textWidth(text, font) <= room) return text;
  if (textWidth("…", font) > room) return "";
  let lo = 0;
  let hi = text.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (textWidth(`${text.slice(0, mid)}…`, font) <= room) lo = mid;
    else hi = mid - 1;
  }
  return `${text.slice(0, lo)}…`;
}

/** `text` cut in its middle (the title's start and the chunk's position kept) to fit `room` pixels. */
export function fitMiddle(text, room, font) {
  if (textWidth(text, font) <= room) return text;
  let lo = 0;
  let hi = text.length - 1;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (textWidth(cut(text, mid), font) <= room) lo = mid;
    else hi = mid - 1;
  }
  return lo > 0 ? cut(text, lo) : "";
}

/** ``text`` in ``keep`` characters, an ellipsis in the middle: the file's start and the chunk's end. */
function cut(text, keep) {
  if (keep >= text.length) return text;
  const tail = Math.min(Math.ceil((keep - 1) / 2), Math.max(4, Math.floor((keep - 1) / 3)));
  return `${text.slice(0, keep - 1 - tail)}…${text.slice(text.length - tail)}`;
}
