// The Results view opened from a file on disk (file://). A browser runs no ES module there (it
// refuses them across origins, and a file has none), so results.js never starts and the page said
// "Loading the result files…" forever. This classic script does run there, and says instead what
// serves the page: `clear-rag serve` for the app's copy, an HTTP server for the site's.
(function () {
  if (location.protocol !== "file:") return;
  const mode = document.querySelector("meta[name='clear-rag-results']")?.getAttribute("content") || "api";
  const message = mode.startsWith("static:")
    ? "This copy of the Results view was opened from a file, and a browser runs its scripts only when " +
      "the page is served over HTTP. Serve the site (`mkdocs serve` in the project, or `python -m " +
      "http.server --directory site-build` once it is built) and open " +
      "http://127.0.0.1:8000/view/results.html; for the trace diffs too, run `clear-rag serve` where " +
      "the suites ran and open http://127.0.0.1:8000/results"
    : "The Results view was opened from a file, and a browser runs its scripts only when the page is " +
      "served. Run `clear-rag serve` in the folder the suites ran in (the one holding results/; " +
      "`--store PATH` for a store other than .clear-rag there, `--port N` for a port other than 8000, " +
      "`--open` to open the page), then open http://127.0.0.1:8000/results";
  document.getElementById("results-unserved")?.remove(); // this says it better
  const status = document.getElementById("results-status");
  status.textContent = message;
  status.className = "error";
  status.dataset.state = "not-served";
})();
