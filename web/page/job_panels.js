// Two panels of the job page (issue 42): the job as its user wrote it (the stored spec: command,
// workdir, container, resources, env, secret names, priority, team, time limit, datasets, sweep
// point) and why it waits (GET /api/v1/jobs/{id}/explain: per cluster the reason, the filters that
// refused it and the preemptions considered, each with why). Text only: a spec is user input.
import { badge, bytes, dash, duration, el, when } from "./dom.js";

// A job's name and, for a point of a sweep, its values: "lr-sweep-1 · LR=1e-4 --seed 1".
export function jobTitle(job) {
  return job.sweep_point ? `${job.name} \u00b7 ${job.sweep_point}` : job.name;
}

// "2 nodes x 4 GPUs (8), 1 task per node, 8 CPUs per task, 64Gi per node, 1 spare".
function resourcesText(res, job) {
  if (!res || typeof res !== "object") return dash;
  const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
  const parts = [`${plural(res.nodes ?? job.nodes, "node")} x ${plural(res.gpus_per_node ?? job.gpus_per_node, "GPU")}` +
                 ` (${job.gpus ?? (res.nodes * res.gpus_per_node)} in all)`];
  if (res.accelerator) parts.push(String(res.accelerator));
  if (res.tasks_per_node) parts.push(plural(res.tasks_per_node, "task") + " per node");
  if (res.cpus_per_task) parts.push(plural(res.cpus_per_task, "CPU") + " per task");
  if (res.memory) parts.push(`${res.memory} memory per node`);
  if (res.spares) parts.push(plural(res.spares, "hot spare"));
  return parts.join(", ");
}

// KEY=value lines of the spec's env; secrets are never in it (secret_env holds names only).
function envList(env) {
  const keys = Object.keys(env || {}).sort();
  if (keys.length === 0) return dash;
  return el("ul", { class: "plain" }, ...keys.map((k) => el("li", { "data-env": k }, el("code", {}, `${k}=${env[k]}`))));
}

// VAR ← secret NAME: which registered secret each variable gets, never its value.
function secretList(refs) {
  const vars = Object.keys(refs || {}).sort();
  if (vars.length === 0) return dash;
  return el("ul", { class: "plain" }, ...vars.map((v) => {
    const ref = refs[v] || {};
    const what = ref.secret ? `secret ${ref.secret}` : "a retired reference (never launched with it)";
    return el("li", { "data-secret-env": v }, el("code", {}, v), ` \u2190 ${what}`);
  }));
}

function containerText(c) {
  if (!c || !c.image) return dash;
  const parts = [c.image];
  if (c.workdir) parts.push(`workdir ${c.workdir}`);
  if (Array.isArray(c.mounts) && c.mounts.length) parts.push(`${c.mounts.length} mount(s)`);
  if (Array.isArray(c.env) && c.env.length) parts.push(`passes ${c.env.join(", ")}`);
  return parts.join(", ");
}

function workdirText(w) {
  if (!w || !w.sha256) return dash;
  return `${w.source || "(uploaded)"} (${bytes(w.bytes)}, sha256 ${w.sha256.slice(0, 12)})`;
}

function priorityText(job) {
  if (typeof job.priority !== "number") return dash;
  return job.priority_class ? `${job.priority} (${job.priority_class})` : String(job.priority);
}

function placementText(p) {
  if (!p) return dash;
  const parts = [];
  if (Array.isArray(p.allowed) && p.allowed.length) parts.push("only " + p.allowed.join(", "));
  if (Array.isArray(p.preferred) && p.preferred.length) parts.push("prefers " + p.preferred.join(", "));
  return parts.length ? parts.join("; ") : "any cluster";
}

// [key, label, value]: the rows of the Spec panel, in the order a user thinks of a job.
function specRows(job) {
  const spec = job.spec || {};
  const limit = typeof spec.time_limit === "number" ? duration(spec.time_limit * 1000) : "none";
  return [
    ["command", "Command", el("pre", { class: "command" }, spec.command ?? dash)],
    ["sweep_point", "Sweep point", job.sweep_point || dash],
    ["workdir", "Workdir", workdirText(spec.workdir)],
    ["setup", "Setup", spec.setup ? el("pre", { class: "command" }, spec.setup) : dash],
    ["container", "Container", containerText(spec.container)],
    ["shell", "Shell", spec.shell || "bash (sh where the node has no bash)"],
    ["resources", "Resources", resourcesText(spec.resources, job)],
    ["env", "Env", envList(spec.env)],
    ["secret_env", "Secret env", secretList(spec.secret_env)],
    ["priority", "Priority", priorityText(job)],
    ["team", "Team", job.team || dash],
    ["group", "Group", job.group || dash],
    ["time_limit", "Time limit", limit],
    ["datasets", "Datasets", Array.isArray(spec.datasets) && spec.datasets.length ? spec.datasets.join(", ") : "none"],
    ["placement", "Placement", placementText(spec.placement)],
    ["created", "Submitted", when(job.created_ms)],
  ];
}

// The Spec panel's content: a definition list, a row per key (data-key for the tests).
export function specPanel(job) {
  return el("dl", { class: "spec", id: "spec" }, ...specRows(job).map(([key, label, value]) =>
    el("div", { class: "spec-row", "data-key": key }, el("dt", {}, label), el("dd", {}, value))));
}

const WAITING = new Set(["pending", "resuming", "staging"]);

// Whether the job waits for a place (the panel then comes first, as "Why it waits").
export function waits(job) {
  return WAITING.has(job.state);
}

// The heading: "Why it waits" while the job waits, else what the last decision was.
export function whyTitle(job) {
  return waits(job) ? "Why it waits" : "Placement (the last decision)";
}

function preemptionLine(p) {
  const who = [p.job_name, p.team ? `team ${p.team}` : "", `${p.gpus} GPU(s)`].filter(Boolean).join(", ");
  return el("li", { class: "preemption" + (p.taken ? " taken" : ""), "data-job": p.job_id },
            `job ${p.job_id} (${who}): ${p.taken ? "taken" : "not taken"}`, p.why ? ` \u2014 ${p.why}` : "");
}

function clusterRow(c, chosen) {
  const refused = Array.isArray(c.refused_by) ? c.refused_by : [];
  const preemptions = Array.isArray(c.preemptions) ? c.preemptions : [];
  const verdict = c.cluster === chosen ? "chosen" : c.feasible ? "fits" : "refused";
  const more = c.preemptions_more > 0 ? el("li", { class: "more" }, `and ${c.preemptions_more} more considered`) : null;
  return el("tr", { "data-cluster": c.cluster },
            el("td", {}, c.cluster), el("td", {}, badge(verdict)),
            el("td", { class: "reason" }, c.reason || dash),
            el("td", {}, refused.length
              ? el("ul", { class: "plain refused-by" }, ...refused.map((r) =>
                  el("li", { "data-filter": r.filter }, r.filter ? `${r.filter}: ${r.reason}` : r.reason)))
              : dash),
            el("td", {}, preemptions.length || more
              ? el("ul", { class: "plain preemptions" }, ...preemptions.map(preemptionLine), more)
              : dash));
}

// The panel's content from the explain answer: the job's reason, a row per cluster, and the
// preemption events about the job (made for it or of it, GPUs held for it).
export function whyPanel(explain) {
  const clusters = Array.isArray(explain.clusters) ? explain.clusters : [];
  const events = Array.isArray(explain.preemption) ? explain.preemption.slice(-5) : [];
  const decided = explain.evaluated_at_ms ? `decided ${when(explain.evaluated_at_ms)}` : "not evaluated yet";
  return el("div", { id: "why" },
            el("p", { class: "reason", id: "why-reason" },
               explain.reason || (explain.chosen ? `placed on ${explain.chosen}` : dash)),
            el("p", { class: "hint" }, decided),
            clusters.length === 0 ? el("p", { class: "empty" }, "no placement decision recorded yet")
              : el("div", { class: "table-wrap" }, el("table", { class: "data", id: "why-clusters" },
                  el("thead", {}, el("tr", {}, ...["Cluster", "Verdict", "Reason", "Refused by", "Preemptions considered"]
                    .map((h) => el("th", { scope: "col" }, h)))),
                  el("tbody", {}, ...clusters.map((c) => clusterRow(c, explain.chosen))))),
            events.length ? el("ul", { class: "plain preemption-events" },
              ...events.map((e) => el("li", {}, `${when(e.at_ms)} ${e.kind}: ${e.message}`))) : null);
}
