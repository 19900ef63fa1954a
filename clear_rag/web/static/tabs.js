// A tab list as the ARIA pattern has it: one tab stop for the whole list (the selected tab), the
// arrow keys, Home and End moving between tabs and selecting as they go, each tab showing its panel
// (aria-controls) and hiding the others.

export class Tabs {
  /** list: the [role=tablist] element; its tabs are buttons with role=tab and aria-controls. */
  constructor(list) {
    this.tabs = [...list.querySelectorAll('[role="tab"]')];
    for (const tab of this.tabs) {
      tab.addEventListener("click", () => this.select(tab.id));
      tab.addEventListener("keydown", (event) => this.key(event, tab));
    }
  }

  key(event, tab) {
    const i = this.tabs.indexOf(tab);
    const n = this.tabs.length;
    const to = { ArrowRight: (i + 1) % n, ArrowLeft: (i - 1 + n) % n, Home: 0, End: n - 1 }[event.key];
    if (to === undefined) return;
    event.preventDefault();
    this.select(this.tabs[to].id, { focus: true });
  }

  /** Show the tab `id`'s panel; focus the tab too where a key moved to it. */
  select(id, { focus = false } = {}) {
    for (const tab of this.tabs) {
      const chosen = tab.id === id;
      tab.setAttribute("aria-selected", String(chosen));
      tab.tabIndex = chosen ? 0 : -1;
      document.getElementById(tab.getAttribute("aria-controls")).hidden = !chosen;
      if (chosen && focus) tab.focus();
    }
  }
}
