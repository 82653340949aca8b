// Transfers: checkpoint and dataset copies between sites, with progress, rate, cap and ETA.
import * as api from "./api.js";
import { ago, badge, bytes, dash, dataTable, duration, el, num } from "./dom.js";

function eta(t) {
  if (t.state !== "running" || !t.rate_mb_s || t.bytes_total === null) return null;
  return ((t.bytes_total - t.bytes_done) / (t.rate_mb_s * 1e6)) * 1000;
}

export function mount(root) {
  const all = el("input", { type: "checkbox", id: "all-transfers" });
  const table = dataTable([
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
    { key: "rate", label: "Rate", num: true, value: (t) => t.rate_mb_s,
      cell: (t) => (t.rate_mb_s === null ? dash : num(t.rate_mb_s, 1) + " MB/s") },
    { key: "cap", label: "Cap", num: true, value: (t) => t.cap_mb_s,
      cell: (t) => (t.cap_mb_s === null ? "none" : num(t.cap_mb_s, 1) + " MB/s" +
                    (t.base_cap_mb_s !== null && t.cap_mb_s < t.base_cap_mb_s ? ` (cut from ${num(t.base_cap_mb_s, 1)})` : "")) },
    { key: "eta", label: "ETA", num: true, value: eta, cell: (t) => duration(eta(t)) },
    { key: "tries", label: "Tries", num: true, value: (t) => t.tries },
    { key: "created", label: "Started", num: true, value: (t) => t.created_ms, cell: (t) => ago(t.created_ms) },
  ], { filterPlaceholder: "filter transfers", empty: "no transfer running", id: "transfers" });
  let refresh;
  all.addEventListener("change", () => refresh());
  root.append(el("h1", {}, "Transfers"),
              el("label", { class: "check" }, all, " show finished ones too"), table.node);
  refresh = async () => {
    const list = await api.get("/api/v1/data/transfers?limit=1000" + (all.checked ? "&all=true" : ""));
    table.update(list.transfers);
  };
  return { refresh };
}
