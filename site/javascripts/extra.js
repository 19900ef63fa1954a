// Two things Material's own markup leaves for screen-reader and keyboard users (both found by axe-core,
// tests/web/test_site_pages.py). Run on every page Material loads (document$), after it has wrapped
// each table in its horizontal scroller.

// The search box is a role="dialog" with no name (axe's aria-dialog-name); the theme has no setting for it.
function nameTheSearchDialog() {
  const dialog = document.querySelector(".md-search[role='dialog']");
  if (dialog && !dialog.hasAttribute("aria-label")) dialog.setAttribute("aria-label", "Search");
}

// A result table wider than the column scrolls sideways inside Material's wrapper, which a keyboard
// cannot reach (axe's scrollable-region-focusable). A wrapper that overflows becomes one tab stop
// (arrow keys then scroll it), named after the section it is in; one that fits stays out of the tab order.
function headingBefore(element) {
  for (let node = element; node && node.tagName !== "ARTICLE"; node = node.previousElementSibling || node.parentElement) {
    if (/^H[1-6]$/.test(node.tagName)) return node.textContent.replace(/¶$/, "").trim();
  }
  return "";
}

function reachTheWideTables() {
  for (const wrap of document.querySelectorAll(".md-typeset__scrollwrap")) {
    if (!wrap.hasAttribute("role")) {
      const section = headingBefore(wrap);
      wrap.setAttribute("role", "region");
      wrap.setAttribute("aria-label", section ? `Table: ${section}` : "Table");
    }
    if (wrap.scrollWidth > wrap.clientWidth) wrap.setAttribute("tabindex", "0");
    else wrap.removeAttribute("tabindex");
  }
}

document$.subscribe(() => {
  nameTheSearchDialog();
  reachTheWideTables();
});
window.addEventListener("resize", reachTheWideTables);
