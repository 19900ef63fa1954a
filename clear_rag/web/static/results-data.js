// Where the Results view gets its JSON: the one place that knows the URL schemes. The view asks a
// source for six documents (the files, one file, its questions' words, a row pinned, the questions
// behind a cell, one question's trace) and never builds a URL itself. Two sources answer the same documents: the app's
// Results API, and the files clear_rag/results/export.py writes for the static site. The page says
// which in <meta name="clear-rag-results">.

import { getJSON } from "./dom.js";

const part = encodeURIComponent;

/** What a static site answers when asked for a trace: the stores the traces are in are not there. */
export const STATIC_TRACE =
  "The trace diff needs `clear-rag serve` with the stores: this static site holds the result files, " +
  "not the stores their traces are in. Run `clear-rag serve` where the suite ran and open /results";

/** What a fetch that reached no server says, per source: what to run so that it answers. */
export const UNREACHABLE = {
  api:
    "The Results API did not answer: start it with `clear-rag serve` in the folder the suites ran in " +
    "(the one holding results/), then reload this page",
  static:
    "The exported result files did not load: serve the built site over HTTP (`mkdocs serve`, or " +
    "`python -m http.server --directory site-build`), then reload this page",
};

/**
 * `fetchJSON` whose failures to reach anything (fetch's TypeError: the server stopped, or the page
 * is not served by one) reject with `unreachable` and the URL, not the browser's "Failed to fetch".
 */
export function reaching(fetchJSON, unreachable) {
  return async (url) => {
    try {
      return await fetchJSON(url);
    } catch (err) {
      if (err instanceof TypeError) throw new Error(`${unreachable} (${url}: ${err.message})`);
      throw err;
    }
  };
}

/** The addresses of the app's Results API (clear_rag/web/results.py), under `base`. */
export function apiUrls(base = "/api/results") {
  return {
    files: () => base,
    document: (file) => `${base}/${part(file)}`,
    questions: (file) => `${base}/${part(file)}/questions`,
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
export function resultsSource(urls = apiUrls(), fetchJSON = reaching(getJSON, UNREACHABLE.api)) {
  return {
    files: async () => (await fetchJSON(urls.files())).files,
    document: (file) => fetchJSON(urls.document(file)),
    questions: (file) => fetchJSON(urls.questions(file)),
    pinned: (file, row) => fetchJSON(urls.pinned(file, row)),
    moves: (file, pinned, row, metric) => fetchJSON(urls.moves(file, pinned, row, metric)),
    trace: (file, row, traceId) => fetchJSON(urls.trace(file, row, traceId)),
  };
}

/** `value[key]` when `value` has it as its own (a row may be called "constructor"), else undefined. */
const own = (value, key) => (value && Object.hasOwn(value, key) ? value[key] : undefined);

/**
 * The same documents read from the files of an export under `base` (a folder URL ending in "/",
 * relative to the page). Files and rows are found by their place in index.json, so no name ever
 * becomes part of a URL; the moves of a pinned row are one file, fetched once and sliced per cell.
 * Traces are not on a static site: asking for one rejects with STATIC_TRACE.
 */
export function staticSource(base, fetchJSON = reaching(getJSON, UNREACHABLE.static)) {
  const fetched = new Map();
  const once = (path) => {
    if (!fetched.has(path)) {
      fetched.set(
        path,
        fetchJSON(base + path).catch((err) => {
          fetched.delete(path); // a failed fetch is asked again next time
          throw err;
        }),
      );
    }
    return fetched.get(path);
  };
  const folder = async (file) => {
    const files = (await once("index.json")).files;
    const place = files.findIndex((f) => f.file === file);
    if (place < 0) throw new Error(`${file}: no such result file on this site. The files are: ${files.map((f) => f.file).join(", ")}`);
    return { path: `${place}/`, rows: files[place].rows };
  };
  const rowPlace = (found, file, row) => {
    const place = found.rows.indexOf(row);
    if (place < 0) throw new Error(`${file}.json: row=${JSON.stringify(row)}: no measured row has this name on this site`);
    return place;
  };
  return {
    static: true,
    files: async () => (await once("files.json")).files,
    document: async (file) => once(`${(await folder(file)).path}document.json`),
    questions: async (file) => once(`${(await folder(file)).path}questions.json`),
    pinned: async (file, row) => {
      const found = await folder(file);
      return once(`${found.path}pinned/${rowPlace(found, file, row)}.json`);
    },
    moves: async (file, pinned, row, metric) => {
      const found = await folder(file);
      const behind = await once(`${found.path}moves/${rowPlace(found, file, pinned)}.json`);
      const answer = own(own(behind.rows, row), metric);
      if (!answer) throw new Error(`${file}.json: no questions exported for ${metric} of ${JSON.stringify(row)} against ${JSON.stringify(pinned)}`);
      return answer;
    },
    trace: async () => {
      throw new Error(STATIC_TRACE);
    },
  };
}

/**
 * The source the page names: <meta name="clear-rag-results" content="static:FOLDER/"> reads an export
 * in FOLDER (relative to the page); anything else, or no such meta, the app's Results API.
 */
export function pageSource(page = document, fetchJSON = getJSON) {
  const mode = page.querySelector("meta[name='clear-rag-results']")?.getAttribute("content") || "api";
  return mode.startsWith("static:")
    ? staticSource(mode.slice("static:".length), reaching(fetchJSON, UNREACHABLE.static))
    : resultsSource(apiUrls(), reaching(fetchJSON, UNREACHABLE.api));
}
