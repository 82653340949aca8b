// Transfers: checkpoint and dataset copies between sites (issue 42), a page at a time, one table
// per group (checkpoint replication of a job, staging for a job, manual copies) under a heading
// that sums it; the active and failed ones unless "show finished ones too" is ticked; a running
// copy's rate now, a copied one's average. Above them, the bytes every transfer copied per minute
// over the last hour (GET /api/v1/data/throughput).
import * as api from "./api.js";
import { lineChart, compact } from "./charts.js";
import { ago, badge, bytes, dash, dataTable, duration, el, num } from "./dom.js";

const PAGE = 100;

function eta(t) {
  if (t.state !== "running" || !t.rate_mb_s || t.bytes_total === null) return null;
  return ((t.bytes_total - t.bytes_done) / (t.rate_mb_s * 1e6)) * 1000;
}

// MB/s for people: "2.5 MB/s", "540 B/s"; a copied transfer's average marked "avg".
function rate(t) {
  if (t.rate_mb_s === null || t.rate_mb_s === undefined) return dash;
  return bytes(t.rate_mb_s * 1e6) + "/s" + (t.state === "running" ? "" : " avg");
}

const perSecond = (v, incr) => (typeof v === "number" ? compact(v, incr) + " B/s" : dash);

function columns() {
  return [
    { key: "id", label: "Id", num: true, value: (t) => t.id },
    { key: "what", label: "What", value: (t) => t.what },
    { key: "route", label: "From \u2192 to", value: (t) => `${t.from.cluster} \u2192 ${t.to.cluster}`,
      cell: (t) => el("span", { title: t.route }, `${t.from.cluster} \u2192 ${t.to.cluster}`) },
    { key: "state", label: "State", value: (t) => t.state,
      cell: (t) => el("span", { title: t.error || t.why }, badge(t.state)) },
    { key: "progress", label: "Progress", num: true, value: (t) => t.percent,
      cell: (t) => el("span", { class: "progress" },
                      el("progress", { max: 100, value: t.percent ?? 0 }),
                      ` ${t.percent === null ? dash : num(t.percent, 1) + "%"} of ${bytes(t.bytes_total)}`) },
    { key: "rate", label: "Rate", num: true, value: (t) => t.rate_mb_s, cell: rate },
    { key: "cap", label: "Cap", num: true, value: (t) => t.cap_mb_s,
      cell: (t) => (t.cap_mb_s === null ? "none" : num(t.cap_mb_s, 1) + " MB/s" +
                    (t.base_cap_mb_s !== null && t.cap_mb_s < t.base_cap_mb_s ? ` (cut from ${num(t.base_cap_mb_s, 1)})` : "")) },
    { key: "eta", label: "ETA", num: true, value: eta, cell: (t) => duration(eta(t)) },
    { key: "tries", label: "Tries", num: true, value: (t) => t.tries },
    { key: "created", label: "Started", num: true, value: (t) => t.created_ms, cell: (t) => ago(t.created_ms) },
  ];
}

// "1 running, 2 failed · 1.2 GB of 4.0 GB · 25 MB/s"
function summary(g) {
  const order = ["queued", "running", "verifying", "failed", "done", "cancelled"];
  const states = order.filter((s) => g.states[s]).map((s) => `${g.states[s]} ${s}`).join(", ");
  return [states, `${bytes(g.bytes_done)} of ${bytes(g.bytes_total)}`,
          g.rate_mb_s === null ? null : bytes(g.rate_mb_s * 1e6) + "/s"].filter(Boolean).join(" \u00b7 ");
}

export function mount(root) {
  const all = el("input", { type: "checkbox", id: "all-transfers" });
  const chart = lineChart("chart-transfer-throughput", "Throughput of all transfers (per minute, last hour)",
                          "throughput", perSecond);
  const holder = el("div", { id: "transfers" });
  const newer = el("button", { type: "button", id: "transfers-newer" }, "\u2190 newer");
  const older = el("button", { type: "button", id: "transfers-older" }, "older \u2192");
  const where = el("span", { class: "count", id: "transfers-page" });
  // One table per group, kept across refreshes (its sort and filter with it).
  const tables = new Map();
  const empty = dataTable(columns(), { filterPlaceholder: "filter transfers",
                                       empty: "no active or failed transfer", id: "transfers-none" });
  // The cursors of the pages before this one: [] on the first page.
  let cursors = [];
  let cursor = "";
  let next = null;
  let refresh;
  const go = (c, back) => { cursor = c; cursors = back; refresh(); };
  all.addEventListener("change", () => go("", []));
  newer.addEventListener("click", () => { if (cursors.length) go(cursors[cursors.length - 1], cursors.slice(0, -1)); });
  older.addEventListener("click", () => { if (next) go(next, [...cursors, cursor]); });
  root.append(el("h1", {}, "Transfers"),
              el("section", { class: "card" }, chart.node),
              el("div", { class: "tools" },
                 el("label", { class: "check" }, all, " show finished ones too"), newer, where, older),
              holder);

  function draw(list) {
    const byId = new Map(list.transfers.map((t) => [t.id, t]));
    const nodes = [];
    const seen = new Set();
    for (const g of list.groups) {
      let entry = tables.get(g.key);
      if (!entry) {
        const heading = el("span", { class: "group-label" });
        const note = el("span", { class: "hint" });
        const table = dataTable(columns(), { filterPlaceholder: "filter " + g.label,
                                             empty: "none", id: "transfers-" + g.key.replace("/", "-") });
        entry = { heading, note, table,
                  node: el("section", { class: "card transfer-group", "data-group": g.key },
                           el("h2", {}, heading, " ", note), table.node) };
        tables.set(g.key, entry);
      }
      entry.heading.textContent = g.label;
      entry.note.textContent = summary(g);
      entry.table.update(g.transfers.map((id) => byId.get(id)).filter(Boolean));
      nodes.push(entry.node);
      seen.add(g.key);
    }
    for (const key of [...tables.keys()]) if (!seen.has(key)) tables.delete(key);
    if (!nodes.length) {
      empty.update([]);
      nodes.push(empty.node);
    }
    holder.replaceChildren(...nodes);
  }

  refresh = async () => {
    const query = `limit=${PAGE}` + (all.checked ? "&all=true" : "") +
                  (cursor ? "&cursor=" + encodeURIComponent(cursor) : "");
    const [list, rate] = await Promise.all([api.get("/api/v1/data/transfers?" + query),
                                            api.get("/api/v1/data/throughput?minutes=60")]);
    next = list.next;
    newer.disabled = cursors.length === 0;
    older.disabled = !next;
    where.textContent = `page ${cursors.length + 1}`;
    draw(list);
    chart.set(rate.points.map((p) => p.at_ms / 1000), rate.points.map((p) => p.bytes_per_s));
  };
  return { refresh, destroy() { chart.destroy(); } };
}
