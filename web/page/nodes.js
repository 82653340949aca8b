// Nodes: the ledger of every cluster's nodes, with their standing, counted failures and why.
import * as api from "./api.js";
import { ago, badge, dataTable, el } from "./dom.js";

export function mount(root) {
  const table = dataTable([
    { key: "cluster", label: "Cluster", value: (n) => n.cluster },
    { key: "name", label: "Node", value: (n) => n.name },
    { key: "state", label: "Standing", value: (n) => n.state, cell: (n) => badge(n.state) },
    { key: "healthy", label: "Site says", value: (n) => (n.healthy ? "healthy" : "unhealthy"),
      cell: (n) => el("span", { title: n.reason || "" }, badge(n.healthy ? "healthy" : "unhealthy")) },
    { key: "failures", label: "Failures counted", num: true, value: (n) => n.failures,
      cell: (n) => `${n.failures} / ${n.failures_to_quarantine}` },
    { key: "quarantines", label: "Quarantines", num: true, value: (n) => n.quarantines },
    { key: "why", label: "Why / what next", value: (n) => n.state_reason || n.next_failure,
      cell: (n) => el("span", {}, n.state_reason ? el("div", {}, n.state_reason) : null,
                      el("div", { class: "hint" }, n.next_failure)) },
    { key: "seen", label: "Last listed", num: true, value: (n) => n.seen_ms, cell: (n) => ago(n.seen_ms) },
  ], { filterPlaceholder: "filter nodes (cluster, name, standing)", empty: "no nodes", id: "nodes" });
  root.append(el("h1", {}, "Nodes"), table.node);
  return {
    async refresh() {
      table.update((await api.get("/api/v1/nodes")).nodes);
    },
  };
}
