// Jobs: the newest 1,000 with state, cluster, step, ETTR, MFU and attempts; filter and sort.
import * as api from "./api.js";
import { ago, badge, dataTable, el, pct } from "./dom.js";

export function mount(root) {
  const more = el("p", { class: "hint" });
  const table = dataTable([
    { key: "id", label: "Id", num: true, value: (j) => j.id,
      cell: (j) => el("a", { href: "#/job/" + j.id }, String(j.id)) },
    { key: "name", label: "Name", value: (j) => j.name,
      cell: (j) => el("a", { href: "#/job/" + j.id }, j.name) },
    { key: "owner", label: "Owner", value: (j) => j.owner },
    { key: "state", label: "State", value: (j) => j.state,
      cell: (j) => el("span", { title: j.reason || "" }, badge(j.state)) },
    { key: "cluster", label: "Cluster", value: (j) => j.cluster },
    { key: "step", label: "Step", num: true, value: (j) => j.step },
    { key: "ettr", label: "ETTR", num: true, value: (j) => j.ettr, cell: (j) => pct(j.ettr) },
    { key: "mfu", label: "MFU", num: true, value: (j) => j.mfu, cell: (j) => pct(j.mfu) },
    { key: "attempts", label: "Attempts", num: true, value: (j) => j.attempts },
    { key: "updated", label: "Updated", num: true, value: (j) => j.updated_ms,
      cell: (j) => ago(j.updated_ms) },
  ], { filterPlaceholder: "filter jobs (name, state, cluster, owner)", empty: "no jobs yet",
       id: "jobs" });
  root.append(el("h1", {}, "Jobs"), table.node, more);
  return {
    async refresh() {
      const page = await api.get("/api/v1/jobs?limit=1000");
      table.update(page.jobs);
      more.textContent = page.next ? "Showing the newest 1,000 jobs; `orchestrate job list` pages through the rest." : "";
    },
  };
}
