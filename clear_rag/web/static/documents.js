// Documents: fetched once each and cached (a promise per id, so two clicks in flight share one
// request), and shown in the #document panel with one span highlighted. The highlighted span is
// exactly [start, end) as the server gave it: never found by searching the text, which would pick
// the wrong occurrence of a repeated sentence.

import { clear, el, getJSON, utf16Index } from "./dom.js";

const cache = new Map();

export function fetchDocument(docId) {
  if (!cache.has(docId)) {
    const request = getJSON(`/api/documents/${encodeURIComponent(docId)}`);
    // A failed fetch is not cached: the next click tries again.
    request.catch(() => cache.delete(docId));
    cache.set(docId, request);
  }
  return cache.get(docId);
}

export class DocumentViewer {
  constructor(root) {
    this.root = root; // #document
    this.title = root.querySelector("#document-title");
    this.body = root.querySelector("#document-text");
    this.shown = 0; // guards against an older, slower fetch overwriting a newer one
  }

  /**
   * Show `docId` with [start, end) (code points) highlighted as a <mark class="...">.
   * kind: "cited" for a citation, "chunk" for a candidate opened from the inspector.
   */
  async open(docId, start, end, { kind = "cited", label = "" } = {}) {
    const ticket = ++this.shown;
    this.root.hidden = false;
    this.title.textContent = `${docId} — loading…`;
    clear(this.body);
    let doc;
    try {
      doc = await fetchDocument(docId);
    } catch (error) {
      if (ticket !== this.shown) return;
      this.title.textContent = docId;
      this.body.append(el("p", { class: "error" }, error.message));
      return;
    }
    if (ticket !== this.shown) return;
    const text = doc.text;
    const a = utf16Index(text, start);
    const b = utf16Index(text, end);
    this.title.textContent = `${doc.id}${label ? ` — ${label}` : ""} [${start}, ${end})`;
    const mark = el("mark", { class: kind, "data-start": start, "data-end": end }, text.slice(a, b));
    this.body.append(document.createTextNode(text.slice(0, a)), mark, document.createTextNode(text.slice(b)));
    this.root.dataset.docId = doc.id;
    this.root.dataset.mediaType = doc.media_type || "";
    mark.scrollIntoView({ block: "center", behavior: "instant" });
  }
}
