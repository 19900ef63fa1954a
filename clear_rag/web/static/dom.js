// Small DOM helpers. Every string that reaches the page goes in as a text node: document text and
// model output are data, never markup, so nothing here ever assigns innerHTML.

const SVG_NS = "http://www.w3.org/2000/svg";

function append(node, children) {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function setAttributes(node, attrs) {
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.setAttribute("class", Array.isArray(value) ? value.filter(Boolean).join(" ") : value);
    else if (key.startsWith("on") && typeof value === "function") node.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(node.dataset, value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  return node;
}

/** An HTML element: el("td", {class: "rank"}, 3) */
export function el(tag, attrs, ...children) {
  return append(setAttributes(document.createElement(tag), attrs), children);
}

/** An SVG element, built in the SVG namespace so the browser draws it. */
export function svg(tag, attrs, ...children) {
  return append(setAttributes(document.createElementNS(SVG_NS, tag), attrs), children);
}

export function clear(node) {
  node.replaceChildren();
  return node;
}

export function fmt(value, digits = 3) {
  if (typeof value !== "number" || !Number.isFinite(value)) return value === undefined ? "" : String(value);
  if (Number.isInteger(value)) return String(value);
  return value.toFixed(digits);
}

// Spans on the wire count Unicode code points (Python's str indices); a JavaScript string counts
// UTF-16 units. They differ after any character outside the Basic Multilingual Plane (an emoji, a
// rare CJK ideograph), so slicing with the server's numbers directly would shift every highlight
// after one. This converts a code-point offset to a UTF-16 index.
const SURROGATE = /[\uD800-\uDFFF]/;

export function utf16Index(text, codePoint) {
  if (!SURROGATE.test(text)) return Math.min(codePoint, text.length);
  let units = 0;
  let points = 0;
  while (points < codePoint && units < text.length) {
    const code = text.charCodeAt(units);
    units += code >= 0xd800 && code <= 0xdbff && units + 1 < text.length ? 2 : 1;
    points += 1;
  }
  return units;
}

/** text[start:end] as Python means it (code points). */
export function sliceSpan(text, start, end) {
  return text.slice(utf16Index(text, start), utf16Index(text, end));
}

/** GET a JSON document; a non-2xx answer throws an Error carrying the server's one-line message. */
export async function getJSON(url) {
  const response = await fetch(url, { headers: { Accept: "application/json" } });
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  if (!response.ok) {
    const message = body && typeof body.error === "string" ? body.error : `${response.status} ${response.statusText}`;
    throw new Error(message);
  }
  return body;
}
