// One job: its figures (with why it failed and a misconfigured MFU, as the server said them),
// the attempts as a timeline across clusters (a bar per attempt, coloured by how it ended), steps
// over time, the run's loss, throughput and MFU over steps across attempts (charts.js),
// checkpoints with their copies per site, events, the live log tail (protocol lines hidden unless
// asked for, a rank filter for a gang's tagged lines: log_view.js), the job as its user wrote it
// and why it waits (job_panels.js), and cancel for a token that may (never a viewer).
import * as api from "./api.js";
import { compact, lineChart, plain, ratioPct, runChart } from "./charts.js";
import { ago, badge, bytes, dash, dataTable, duration, el, money, num, pct, section, when } from "./dom.js";
import { jobTitle, specPanel, waits, whyPanel, whyTitle } from "./job_panels.js";
import { logView } from "./log_view.js";

const FINAL = new Set(["succeeded", "failed", "cancelled"]);
const SERIES_POINTS = 2000;

function mayCancel(whoami, job) {
  if (!whoami || FINAL.has(job.state)) return false;
  if (whoami.role === "operator" || whoami.role === "admin") return true;
  return whoami.role === "user" && job.owner === whoami.user;
}

function figure(label, value) {
  return el("div", { class: "figure" }, el("span", { class: "label" }, label),
            el("span", { class: "value" }, value));
}

// What its GPU-hours cost (issue 45): useful / lost money (without prices, GPU-hours), the
// lost part by kind in its title.
function costFigure(cost) {
  if (!cost) return figure("Cost (useful / lost)", dash);
  const priced = Boolean(cost.currency);
  const part = priced ? cost.money : cost.gpu_hours;
  const show = (v) => (priced ? money(v, cost.currency) : `${num(v, 2)} GPU-h`);
  const kinds = ["redone", "restart", "queued", "failed"].map((k) => `${k} ${show(part[k])}`);
  const node = figure("Cost (useful / lost)", `${show(part.useful)} / ${show(part.lost)}`);
  node.id = "job-cost";
  node.title = `lost: ${kinds.join(", ")}; ${num(cost.gpu_hours.total, 2)} GPU-h in all`;
  return node;
}

// The attempts on a time axis, one row per cluster they ran on.
function timeline(attempts, nowMs) {
  if (attempts.length === 0) return el("p", { class: "empty" }, "no attempt yet");
  const start = Math.min(...attempts.map((a) => a.started_ms));
  const live = attempts.some((a) => a.ended_ms === null);
  const end = Math.max(live ? nowMs : 0, ...attempts.map((a) => a.ended_ms ?? nowMs));
  const span = Math.max(1, end - start);
  const clusters = [...new Set(attempts.map((a) => a.cluster))];
  const rows = clusters.map((cluster) => {
    const lane = el("div", { class: "lane" });
    for (const a of attempts.filter((x) => x.cluster === cluster)) {
      const to = a.ended_ms ?? nowMs;
      const ended = a.state === "exited";
      // Placed and stopped before it launched (issue 42): said so, not as how a run ended.
      const how = a.not_launched ? "not-launched" : ended ? a.cause : "live";
      const bar = el("div", {
        class: "bar " + how,
        title: `attempt ${a.no} on ${a.cluster}: ` +
               (a.not_launched ? `not launched: ${a.not_launched}` : ended ? a.cause : a.state) + ", " +
               `steps ${a.first_step ?? dash} to ${a.last_step ?? dash}, ${duration(to - a.started_ms)}` +
               (a.recovery ? `; recovery ${a.recovery.text}` : ""),
        style: { left: ((a.started_ms - start) / span) * 100 + "%",
                 width: Math.max(0.5, ((to - a.started_ms) / span) * 100) + "%" },
      }, `#${a.no} ${a.not_launched ? "not launched" : how}`);
      bar.dataset.attempt = a.no;
      lane.append(bar);
    }
    return el("div", { class: "timeline-row" }, el("span", { class: "lane-name" }, cluster), lane);
  });
  // Where each recovery's seconds went: from the last sign of life of the attempt before to
  // this one's first progress line (detection, backoff, placing, the site, the job's start).
  const recoveries = attempts.filter((a) => a.recovery).map((a) =>
    el("li", { "data-attempt": a.no }, `attempt ${a.no} after ${a.recovery.after}: ${a.recovery.text}`));
  const unlaunched = attempts.filter((a) => a.not_launched).map((a) =>
    el("li", { "data-attempt": a.no }, `attempt ${a.no} not launched: ${a.not_launched}`));
  return el("div", { class: "timeline", id: "timeline" }, ...rows,
            el("div", { class: "axis" }, el("span", {}, when(start)), el("span", {}, when(end))),
            unlaunched.length ? el("ul", { class: "recoveries", id: "not-launched" }, ...unlaunched) : null,
            recoveries.length ? el("ul", { class: "recoveries", id: "recoveries" }, ...recoveries) : null);
}

// What failed (the newest failed attempt's excerpt: the classifier's evidence and the task's last
// lines), as text only: a job's own output writes it (el() never parses HTML). On a job that went
// on after it, it says which attempt it was.
function excerpt(job, attempts) {
  if (!job.error_excerpt) return null;
  const failed = [...attempts].reverse().find((a) => a.error_excerpt);
  const label = job.state === "failed" || !failed ? "What failed"
    : `What ended attempt ${failed.no} (${failed.cause || failed.state})`;
  return el("div", { class: "excerpt" + (job.state === "failed" ? "" : " earlier") },
            el("span", { class: "label" }, label), el("pre", { id: "error-excerpt" }, job.error_excerpt));
}

export function mount(root, { arg, ctx }) {
  const id = Number(arg);
  const head = el("div", { class: "job-head" });
  const timelineBox = el("div");
  const steps = lineChart("chart-steps", "Steps over time", "step", compact);
  const loss = runChart("chart-loss", "Loss (band: min to max of each point's steps)",
                        "loss", plain, (p) => p.loss, ["loss_min", "loss_max"]);
  const throughput = runChart("chart-throughput", "Throughput (tokens/s)", "throughput", compact,
                              (p) => p.tokens_per_s);
  const mfu = runChart("chart-mfu", "MFU (work over time)", "MFU", ratioPct, (p) => p.mfu, null,
                       (answer) => (answer.attempts.some((a) => a.mfu_flag)
                         ? "MFU not charted: the job's model size or peak FLOPs are misconfigured (above)"
                         : null));
  const checkpoints = dataTable([
    { key: "step", label: "Step", num: true, value: (c) => c.step },
    { key: "cluster", label: "Saved on", value: (c) => c.cluster },
    { key: "bytes", label: "Size", num: true, value: (c) => c.bytes, cell: (c) => bytes(c.bytes) },
    { key: "verified", label: "Verified", value: (c) => (c.verified ? "yes" : "no") },
    { key: "copies", label: "Copies per site", value: (c) => c.replicas.map((r) => r.cluster + " " + r.state).join(", "),
      cell: (c) => el("span", {}, ...c.replicas.map((r) => el("span", { class: "copy", title: r.detail || r.path }, r.cluster + " ", badge(r.state)))) },
    { key: "at", label: "Saved", num: true, value: (c) => c.at_ms, cell: (c) => ago(c.at_ms) },
  ], { filterPlaceholder: "filter checkpoints", empty: "no checkpoint yet", id: "checkpoints",
       tall: true });
  const events = dataTable([
    { key: "at", label: "When", num: true, value: (e) => e.at_ms, cell: (e) => when(e.at_ms) },
    { key: "kind", label: "Event", value: (e) => e.kind, cell: (e) => badge(e.kind) },
    { key: "attempt", label: "Attempt", num: true, value: (e) => e.attempt_no },
    { key: "message", label: "What happened", value: (e) => e.message },
  ], { filterPlaceholder: "filter events", empty: "no events", id: "events", tall: true });
  const charts = el("div", { class: "charts" }, loss.node, throughput.node, mfu.node, steps.node);
  const noProgress = el("p", { class: "empty", hidden: true }, "no progress reported yet");
  const log = logView();
  const specBox = el("div");
  const whyBox = el("div");
  const whySection = section("Why it waits", whyBox);
  whySection.id = "why-it-waits";
  const specSection = section("Spec", specBox);
  specSection.id = "spec-panel";
  let cancelError = el("p", { class: "error", role: "alert" });

  const attemptsSection = section("Attempts", timelineBox);
  root.append(head, whySection, specSection, attemptsSection,
              section("Progress", noProgress, charts),
              section("Checkpoints", checkpoints.node), section("Events", events.node),
              section("Log (latest attempt)", log.node));

  function drawHead(job, attempts) {
    const cancel = mayCancel(ctx.whoami, job)
      ? el("button", { type: "button", id: "cancel", onclick: async () => {
          if (!confirm(`Cancel job ${job.id} (${job.name})?`)) return;
          try {
            await api.post(`/api/v1/jobs/${job.id}/cancel`, {});
            cancelError.textContent = "";
          } catch (e) {
            cancelError.textContent = "cancel refused: " + e.message;
          }
        } }, "Cancel job")
      : null;
    const parts = [
      el("h1", {}, `Job ${job.id}: ${jobTitle(job)} `, badge(job.state)),
      job.reason ? el("p", { class: "reason" }, job.reason) : null,
      excerpt(job, attempts),
      job.mfu_flag ? el("p", { class: "flag", id: "mfu-flag", role: "note" }, job.mfu_flag) : null,
      el("div", { class: "figures" },
         figure("Cluster", job.cluster ?? dash), figure("Step", num(job.step)),
         figure("ETTR", pct(job.ettr)), figure("MFU", pct(job.mfu)),
         figure("Attempts", String(job.attempts)),
         figure("Restarts (infra / user)", `${job.infra_restarts} / ${job.user_restarts}`),
         figure("Steps lost", num(job.steps_lost)), costFigure(job.cost),
         figure("Owner", job.owner || dash),
         figure("Team", job.team || dash), figure("Submitted", when(job.created_ms))),
      cancel, cancelError];
    head.replaceChildren(...parts.filter((p) => p));
  }

  return {
    async refresh() {
      const base = "/api/v1/jobs/" + id;
      const [job, attempts, evs, ckpts, series, explain] = await Promise.all([
        api.get(base), api.get(base + "/attempts"), api.get(base + "/events"),
        api.get(base + "/checkpoints"), api.get(base + "/series?points=" + SERIES_POINTS),
        api.get(base + "/explain")]);
      const now = Date.now();
      drawHead(job, attempts.attempts);
      specBox.replaceChildren(specPanel(job));
      whySection.querySelector("h2").textContent = whyTitle(job);
      // First while the job waits; after its attempts once it has a place.
      if (waits(job)) specSection.before(whySection);
      else attemptsSection.after(whySection);
      whyBox.replaceChildren(whyPanel(explain));
      timelineBox.replaceChildren(timeline(attempts.attempts, now));
      // Steps over time: where each attempt started and ended, and every checkpoint.
      const points = [];
      for (const a of attempts.attempts) {
        if (a.running_ms && a.first_step !== null) points.push([a.running_ms, a.first_step]);
        if (a.last_step !== null) points.push([a.ended_ms ?? now, a.last_step]);
      }
      for (const c of ckpts.checkpoints) points.push([c.at_ms, c.step]);
      points.sort((p, q) => p[0] - q[0]);
      // Shown before drawing: a chart takes the width its panel has.
      const none = points.length === 0 && series.attempts.every((a) => a.points.length === 0);
      charts.hidden = none;
      noProgress.hidden = !none;
      steps.set(points.map((p) => p[0] / 1000), points.map((p) => p[1]));
      for (const c of [loss, throughput, mfu]) c.set(series);
      checkpoints.update(ckpts.checkpoints);
      events.update(evs.events);
      await log.read(id, attempts.attempts.length);
    },
    destroy() {
      for (const c of [steps, loss, throughput, mfu]) c.destroy();
    },
  };
}
