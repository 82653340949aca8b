// Jobs: the newest 1,000 with state, why it is in it (the reason, as text), cluster, GPUs,
// priority, team, group (a sweep point named with its values), step, ETTR, MFU and attempts;
// filter and sort.
import * as api from "./api.js";
import { ago, badge, dataTable, el, pct } from "./dom.js";

export function mount(root) {
  const more = el("p", { class: "hint" });
  const table = dataTable([
    { key: "id", label: "Id", num: true, value: (j) => j.id,
      cell: (j) => el("a", { href: "#/job/" + j.id }, String(j.id)) },
    { key: "name", label: "Name", value: (j) => (j.sweep_point ? `${j.name} ${j.sweep_point}` : j.name),
      cell: (j) => el("span", {}, el("a", { href: "#/job/" + j.id }, j.name),
                      j.sweep_point ? el("span", { class: "sweep-point" }, ` \u00b7 ${j.sweep_point}`) : null) },
    { key: "owner", label: "Owner", value: (j) => j.owner },
    { key: "state", label: "State", value: (j) => j.state, cell: (j) => badge(j.state) },
    { key: "reason", label: "Reason", value: (j) => j.reason || "",
      cell: (j) => (j.reason ? el("span", { class: "reason-cell" }, j.reason) : null) },
    { key: "cluster", label: "Cluster", value: (j) => j.cluster },
    { key: "gpus", label: "GPUs", num: true, value: (j) => j.gpus },
    { key: "priority", label: "Priority", num: true, value: (j) => j.priority,
      cell: (j) => (j.priority_class ? `${j.priority} (${j.priority_class})` : j.priority) },
    { key: "team", label: "Team", value: (j) => j.team || null },
    { key: "group", label: "Group", value: (j) => j.group || null },
    { key: "step", label: "Step", num: true, value: (j) => j.step },
    { key: "ettr", label: "ETTR", num: true, value: (j) => j.ettr, cell: (j) => pct(j.ettr) },
    { key: "mfu", label: "MFU", num: true, value: (j) => j.mfu, cell: (j) => pct(j.mfu) },
    { key: "attempts", label: "Attempts", num: true, value: (j) => j.attempts },
    { key: "updated", label: "Updated", num: true, value: (j) => j.updated_ms,
      cell: (j) => ago(j.updated_ms) },
  ], { filterPlaceholder: "filter jobs (name, state, reason, cluster, owner, team, group)", empty: "no jobs yet",
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
