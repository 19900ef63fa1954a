// Where the Results view gets its JSON: the one place that knows the URL scheme. The view asks a
// source for five documents (the files, one file, a row pinned, the questions behind a cell, one
// question's trace) and never builds a URL itself, so the same view can later read JSON files
// exported next to each other on a static site by handing it a source with other addresses.

import { getJSON } from "./dom.js";

const part = encodeURIComponent;

/** The addresses of the app's Results API (clear_rag/web/results.py), under `base`. */
export function apiUrls(base = "/api/results") {
  return {
    files: () => base,
    document: (file) => `${base}/${part(file)}`,
    pinned: (file, row) => `${base}/${part(file)}/pinned/${part(row)}`,
    moves: (file, pinned, row, metric) =>
      `${base}/${part(file)}/moves?${new URLSearchParams({ pinned, row, metric })}`,
    trace: (file, row, traceId) => `${base}/${part(file)}/trace/${part(row)}/${part(traceId)}`,
  };
}

/**
 * A source of the view's documents: each method resolves to the JSON the API answers, or rejects
 * with an Error carrying the API's one-line message (a missing trace says how to replay it).
 */
export function resultsSource(urls = apiUrls(), fetchJSON = getJSON) {
  return {
    files: async () => (await fetchJSON(urls.files())).files,
    document: (file) => fetchJSON(urls.document(file)),
    pinned: (file, row) => fetchJSON(urls.pinned(file, row)),
    moves: (file, pinned, row, metric) => fetchJSON(urls.moves(file, pinned, row, metric)),
    trace: (file, row, traceId) => fetchJSON(urls.trace(file, row, traceId)),
  };
}
