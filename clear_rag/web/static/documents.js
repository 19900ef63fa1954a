// Documents: fetched once each and cached (a promise per id, so two clicks in flight share one
// request), and shown in the #document panel with one span highlighted. The highlighted span is
// exactly [start, end) as the server gave it: never found by searching the text, which would pick
// the wrong occurrence of a repeated sentence.
//
// The panel sits under the rank flow, below the fold of a laptop's screen, so opening it brings it into
// view; the mark is centred inside the panel alone, since centring it in the page as well (as
// scrollIntoView does) could push the panel's top off the screen. Closing it (Escape, its close button)
// gives focus back to what opened it.

import { clear, el, getJSON, utf16Index } from "./dom.js";

const cache = new Map();
const UNTITLED = "Source document";

export function fetchDocument(docId) {
  if (!cache.has(docId)) {
    const request = getJSON(`/api/documents/${encodeURIComponent(docId)}`);
    // A failed fetch is not cached: the next click tries again.
    request.catch(() => cache.delete(docId));
    cache.set(docId, request);
  }
  return cache.get(docId);
}

/**
 * Scroll the page, or the pane around `node`, just enough to show `node` whole (its top first where
 * it is taller than the view); a panel already in view does not move.
 */
export function bringIntoView(node) {
  node.scrollIntoView({ block: "nearest", inline: "nearest", behavior: "instant" });
}

/** Scroll `box` alone, not the page around it, so that `target` sits in its middle below `cover`. */
function centreIn(box, target, cover) {
  const view = box.getBoundingClientRect();
  const top = cover ? cover.getBoundingClientRect().bottom : view.top;
  const at = target.getBoundingClientRect();
  box.scrollTop += at.top - top - Math.max(0, (view.bottom - top - at.height) / 2);
}

export class DocumentViewer {
  constructor(root) {
    this.root = root; // #document
    this.title = root.querySelector("#document-title");
    this.head = root.querySelector("header");
    this.body = root.querySelector("#document-text");
    this.shown = 0; // guards against an older, slower fetch overwriting a newer one
    this.opener = null; // what had focus when the panel was opened: focus goes back there on close
  }

  get isOpen() {
    return !this.root.hidden;
  }

  /**
   * Show `docId` with [start, end) (code points) highlighted as a <mark class="...">.
   * kind: "cited" for a citation, "chunk" for a candidate opened from the inspector.
   */
  async open(docId, start, end, { kind = "cited", label = "" } = {}) {
    const ticket = ++this.shown;
    const focused = document.activeElement;
    if (focused && focused !== document.body && !this.root.contains(focused)) this.opener = focused;
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
      bringIntoView(this.root);
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
    bringIntoView(this.root);
    centreIn(this.root, mark, this.head);
  }

  /**
   * Hide the panel and forget its document (a fetch still in flight is dropped when it lands). With
   * `restoreFocus`, focus goes back to what opened it, where that is still on the page.
   */
  close({ restoreFocus = false } = {}) {
    this.shown += 1;
    const hadFocus = this.root.contains(document.activeElement);
    this.root.hidden = true;
    this.title.textContent = UNTITLED;
    clear(this.body);
    delete this.root.dataset.docId;
    delete this.root.dataset.mediaType;
    const opener = this.opener;
    this.opener = null;
    if ((restoreFocus || hadFocus) && opener && opener.isConnected) opener.focus();
  }
}
