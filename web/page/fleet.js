// Fleet: every cluster (provider, admission, site health, GPUs used, held by other tenants and
// free, hot spares and their idle cost, MFU, availability, quarantined nodes, its message:
// why it is silent or misconfigured), what each cluster's GPU-hours cost this month, useful and
// lost (issue 45), and the provider scorecards with their money.
import * as api from "./api.js";
import { badge, dash, dataTable, duration, el, money, num, pct, section } from "./dom.js";

// The recovery's parts, medians: the restart policy's backoff, placing, the site's queue and
// launch, the job's own start to its first progress line (scheduler/health/recovery_breakdown.h).
function recoveryParts(c) {
  const parts = [["backoff", c.backoff_median_s], ["placing", c.placing_median_s],
                 ["site", c.site_median_s], ["startup", c.startup_median_s]];
  if (parts.every(([, s]) => s === null || s === undefined)) return dash;
  return parts.map(([name, s]) => `${name} ${s === null || s === undefined ? dash : duration(s * 1000)}`)
    .join(" · ");
}

// "1 / 2 ready, 16.0 GPU-h idle": what a cluster's hot spares hold and have cost (issue 38).
function spares(s) {
  if (!s || !s.wanted) return dash;
  const idle = Number(s.gpu_hours_idle ?? 0).toFixed(1);
  return el("span", { title: (s.nodes || []).map((n) => `${n.node}: ${n.state}`).join(", ") },
    `${s.ready} / ${s.wanted} ready, ${idle} GPU-h idle`);
}

export function mount(root) {
  let cards = new Map();
  const clusters = dataTable([
    { key: "name", label: "Cluster", value: (c) => c.name },
    { key: "provider", label: "Provider", value: (c) => c.provider },
    { key: "vendor", label: "Vendor", value: (c) => c.vendor },
    { key: "admission", label: "Admission", value: (c) => c.admission, cell: (c) => badge(c.admission) },
    { key: "health", label: "Health", value: (c) => c.health,
      cell: (c) => el("span", { title: c.message || "" }, badge(c.health)) },
    { key: "used", label: "GPUs used", num: true, value: (c) => c.gpus_used },
    { key: "others", label: "GPUs others hold", num: true, value: (c) => c.gpus_foreign ?? 0 },
    { key: "free", label: "GPUs free", num: true,
      value: (c) => Math.max(0, c.gpus_total - c.gpus_used - (c.gpus_foreign ?? 0) - (c.gpus_spare ?? 0)) },
    { key: "spares", label: "Hot spares", num: true, value: (c) => c.spares?.ready ?? 0,
      cell: (c) => spares(c.spares) },
    { key: "mfu", label: "MFU", num: true, value: (c) => card(c)?.median_mfu ?? null,
      cell: (c) => pct(card(c)?.median_mfu) },
    { key: "availability", label: "Availability", num: true,
      value: (c) => card(c)?.availability ?? null, cell: (c) => pct(card(c)?.availability, 2) },
    { key: "quarantined", label: "Quarantined nodes", num: true,
      value: (c) => card(c)?.quarantined_nodes ?? null },
    { key: "nodes", label: "Nodes healthy", num: true, value: (c) => c.nodes_healthy,
      cell: (c) => `${c.nodes_healthy} / ${c.nodes}` },
    // Why the site is not answering, or what its preflight found wrong ("cluster alpha
    // misconfigured: key-file: ...": it takes no jobs until `orchestrate cluster check` passes).
    { key: "message", label: "Message", value: (c) => c.message || "",
      cell: (c) => (c.message ? el("span", { class: "hint" }, c.message) : dash) },
  ], { filterPlaceholder: "filter clusters", empty: "no clusters configured", id: "clusters" });
  const scorecards = dataTable([
    { key: "name", label: "Cluster or vendor", value: (c) => c.name },
    { key: "kind", label: "Kind", value: (c) => c.kind },
    { key: "availability", label: "Availability", num: true, value: (c) => c.availability,
      cell: (c) => pct(c.availability, 2) },
    { key: "gpu_hours", label: "GPU-hours", num: true, value: (c) => c.gpu_hours,
      cell: (c) => num(c.gpu_hours, 1) },
    { key: "interruptions", label: "Interruptions", num: true, value: (c) => c.interruptions },
    { key: "mtbf", label: "Node MTBF", num: true, value: (c) => c.node_mtbf_h,
      cell: (c) => (c.node_mtbf_h === null ? dash : num(c.node_mtbf_h, 1) + " h") },
    { key: "detect", label: "Detection p50", num: true, value: (c) => c.detection_median_s,
      cell: (c) => (c.detection_median_s === null ? dash : duration(c.detection_median_s * 1000)) },
    { key: "recover", label: "Recovery p50", num: true, value: (c) => c.recovery_median_s,
      cell: (c) => (c.recovery_median_s === null ? dash : duration(c.recovery_median_s * 1000)) },
    { key: "parts", label: "Where recovery goes (p50)", value: (c) => c.site_median_s,
      cell: (c) => recoveryParts(c) },
    { key: "mfu", label: "MFU", num: true, value: (c) => c.median_mfu, cell: (c) => pct(c.median_mfu) },
    // Storage health (docs/health.md, "I/O stalls"): saves that ran past their bound.
    { key: "io_stalls", label: "I/O stalls", num: true, value: (c) => c.io_stalls ?? 0 },
    { key: "tickets", label: "Open tickets", num: true, value: (c) => c.open_tickets },
    { key: "delay", label: "Delivery delay", num: true, value: (c) => c.delivery_delay_days,
      cell: (c) => (c.delivery_delay_days === null ? dash : num(c.delivery_delay_days, 1) + " d") },
    { key: "cost", label: "Cost", num: true, value: (c) => c.cost?.money?.total ?? null,
      cell: (c) => money(c.cost?.money?.total, c.cost?.currency) },
    { key: "per_1k", label: "Useful GPU-h per 1,000", num: true,
      value: (c) => c.cost?.useful_gpu_hours_per_1k ?? null,
      cell: (c) => num(c.cost?.useful_gpu_hours_per_1k ?? null, 1) },
  ], { filterPlaceholder: "filter scorecards", empty: "no scorecards yet", id: "scorecards" });

  // Issue 45: GET /api/v1/reports/cost?by=cluster, this month (tally plus live attempts).
  let currency = "";
  const spend = (row, part, kind) => row[part]?.[kind] ?? null;
  const costs = dataTable([
    { key: "name", label: "Cluster", value: (r) => r.key },
    { key: "gpu_hours", label: "GPU-hours", num: true, value: (r) => spend(r, "gpu_hours", "total"),
      cell: (r) => num(spend(r, "gpu_hours", "total"), 2) },
    { key: "money", label: "Cost", num: true, value: (r) => spend(r, "money", "total"),
      cell: (r) => money(spend(r, "money", "total"), currency) },
    { key: "useful", label: "Useful", num: true, value: (r) => spend(r, "money", "useful"),
      cell: (r) => money(spend(r, "money", "useful"), currency) },
    { key: "lost", label: "Lost", num: true, value: (r) => spend(r, "money", "lost"),
      cell: (r) => el("span", { title: ["redone", "restart", "queued", "failed"]
        .map((k) => `${k} ${money(spend(r, "money", k), currency)}`).join(", ") },
      money(spend(r, "money", "lost"), currency)) },
    { key: "committed", label: "Committed / idle", num: true, value: (r) => r.committed,
      cell: (r) => (r.committed === null ? dash
        : `${money(r.committed, currency)} / ${money(r.idle, currency)}`) },
  ], { filterPlaceholder: "filter costs", empty: "no GPU-hours this month", id: "costs" });

  function card(c) {
    return cards.get(c.name);
  }

  const costTitle = el("h2", {}, "Cost this month");
  root.append(el("h1", {}, "Fleet"), section("Clusters", clusters.node),
              el("section", { class: "card" }, costTitle, costs.node),
              section("Provider scorecards (30 days)", scorecards.node));
  return {
    async refresh() {
      const [list, report, cost] = await Promise.all([
        api.get("/api/v1/clusters"), api.get("/api/v1/reports/providers"),
        api.get("/api/v1/reports/cost?by=cluster")]);
      cards = new Map(report.cards.filter((c) => c.kind === "cluster").map((c) => [c.name, c]));
      clusters.update(list.clusters);
      currency = cost.currency;
      costTitle.textContent = currency ? `Cost this month (${currency})` : "Cost this month (GPU-hours; no prices)";
      costs.update(cost.rows);
      scorecards.update(report.cards);
    },
  };
}
