// Building blocks of the views: elements from plain values (text only, never HTML strings),
// number formats, and a table that sorts by a column and filters by text.

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "style") Object.assign(node.style, value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export const dash = "\u2014";

export function pct(ratio, digits = 1) {
  return typeof ratio === "number" ? (ratio * 100).toFixed(digits) + "%" : dash;
}

export function num(value, digits = 0) {
  return typeof value === "number" ? value.toFixed(digits) : dash;
}

// Money to the cent with its currency ("1234.50 USD"); a dash for a missing value (issue 45).
export function money(value, currency) {
  if (typeof value !== "number") return dash;
  return currency ? `${value.toFixed(2)} ${currency}` : value.toFixed(2);
}

export function bytes(n) {
  if (typeof n !== "number") return dash;
  const units = ["B", "kB", "MB", "GB", "TB", "PB"];
  let i = 0;
  while (n >= 1000 && i < units.length - 1) {
    n /= 1000;
    i++;
  }
  return (i === 0 ? n.toFixed(0) : n.toFixed(1)) + " " + units[i];
}

export function duration(ms) {
  if (typeof ms !== "number" || ms < 0) return dash;
  const s = Math.round(ms / 1000);
  if (s < 120) return s + " s";
  const m = Math.round(s / 60);
  if (m < 120) return m + " min";
  const h = m / 60;
  return h < 48 ? h.toFixed(1) + " h" : (h / 24).toFixed(1) + " d";
}

const pad2 = (n) => String(n).padStart(2, "0");

// The local clock as the CLI prints it: "14:03:05".
export function clockTime(ms) {
  if (typeof ms !== "number") return dash;
  const d = new Date(ms);
  return `${pad2(d.getHours())}:${pad2(d.getMinutes())}:${pad2(d.getSeconds())}`;
}

// A local date and time in ISO order, as the CLI prints it: "2026-12-07 14:03:05". Every date
// on the page goes through here (never the browser's locale format).
export function when(ms) {
  if (typeof ms !== "number") return dash;
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad2(d.getMonth() + 1)}-${pad2(d.getDate())} ${clockTime(ms)}`;
}

export function ago(ms) {
  return typeof ms === "number" ? duration(Date.now() - ms) + " ago" : dash;
}

// A coloured word for a state, health or cause: its class is "badge <word>".
export function badge(word) {
  return el("span", { class: "badge " + String(word || "none").replace(/[^a-z0-9_-]/gi, "-") },
            word || dash);
}

// columns: [{key, label, value(row) -> sortable value, cell(row) -> Node|string, num}].
// Returns {node, update(rows)}; the sort column and the filter survive updates.
// tall: the table scrolls inside a box of its own height (events, checkpoints).
export function dataTable(columns, { filterPlaceholder = "filter", empty = "nothing yet",
                                     id, tall = false } = {}) {
  let rows = [];
  let sortKey = null;
  let ascending = true;
  const input = el("input", { type: "search", placeholder: filterPlaceholder,
                              "aria-label": filterPlaceholder });
  const count = el("span", { class: "count" });
  const head = el("tr");
  const body = el("tbody");
  for (const column of columns) {
    const th = el("th", { class: column.num ? "num" : "", scope: "col",
                          title: "sort by " + column.label }, column.label);
    th.addEventListener("click", () => {
      ascending = sortKey === column.key ? !ascending : true;
      sortKey = column.key;
      draw();
    });
    head.append(th);
  }
  const table = el("table", { class: "data", id }, el("thead", {}, head), body);
  input.addEventListener("input", draw);

  function text(row) {
    return columns.map((c) => String(c.value(row) ?? "")).join(" ").toLowerCase();
  }

  function draw() {
    const needle = input.value.trim().toLowerCase();
    let shown = needle ? rows.filter((r) => text(r).includes(needle)) : rows.slice();
    const column = columns.find((c) => c.key === sortKey);
    if (column) {
      shown.sort((a, b) => {
        const x = column.value(a), y = column.value(b);
        if (x === y) return 0;
        if (x === null || x === undefined) return 1;
        if (y === null || y === undefined) return -1;
        return (x < y ? -1 : 1) * (ascending ? 1 : -1);
      });
    }
    for (const th of head.children) th.removeAttribute("aria-sort");
    if (column) {
      head.children[columns.indexOf(column)].setAttribute("aria-sort",
                                                          ascending ? "ascending" : "descending");
    }
    const fragment = document.createDocumentFragment();
    for (const row of shown) {
      const tr = document.createElement("tr");
      for (const c of columns) {
        const td = document.createElement("td");
        if (c.num) td.className = "num";
        const content = c.cell ? c.cell(row) : c.value(row);
        if (content instanceof Node) td.append(content);
        else td.textContent = content === null || content === undefined ? dash : String(content);
        tr.append(td);
      }
      fragment.append(tr);
    }
    if (shown.length === 0) {
      const why = needle && rows.length ? `nothing matches “${input.value.trim()}”` : empty;
      fragment.append(el("tr", {}, el("td", { class: "empty", colspan: columns.length }, why)));
    }
    body.replaceChildren(fragment);
    count.textContent = needle ? `${shown.length} of ${rows.length}` : `${rows.length}`;
  }

  const node = el("div", {}, el("div", { class: "tools" }, input, count),
                  el("div", { class: tall ? "table-wrap tall" : "table-wrap" }, table));
  return {
    node,
    update(next) {
      rows = next;
      draw();
    },
  };
}

export function section(title, ...children) {
  return el("section", { class: "card" }, el("h2", {}, title), ...children);
}
