// Drives the status page in Debian's chromium (headless, through playwright-core) against a
// running server and checks what each view shows against what the test expects; writes a
// screenshot of each view. Prints one JSON line: {"ok": true, "load_ms": ...} or
// {"ok": false, "error": "..."}; exits 0 only when every check holds.
//
//   node pages.mjs --url http://127.0.0.1:PORT --token T --job ID --attempts 2
//                  --clusters alpha,beta --out DIR [--chromium /usr/bin/chromium]
//                  [--failed-job ID --excerpt TEXT] [--flagged-job ID] [--gang-job ID]
//     (the job's loss, throughput and MFU charts hold points of attempts 1 to --attempts, their
//     y-axis labels are drawn whole inside the chart, its log panel hides protocol lines until
//     "raw output" is ticked; --failed-job's header shows an error excerpt containing TEXT,
//     --flagged-job's says its MFU is misconfigured; --gang-job's log shows one rank's tagged
//     lines when that rank is chosen)
//   ... [--waiting-job ID] [--viewer 1]
//     (issue 42: the jobs list's Reason, GPUs, Priority, Team and Group cells and sweep points
//     say what GET /api/v1/jobs says; the waiting job's Spec panel shows its stored spec and its
//     "Why it waits" panel each cluster of GET .../explain with its reason, refusing filters and
//     preemptions; dates in ISO order; --viewer 1: the token is a viewer's, so no Cancel button,
//     and --attempts 0 skips the ran job's checks)
//   node pages.mjs --url ... --token T --out DIR --expect-refused 1
//     (the token must be refused: the sign-in form comes back saying so)
//   node pages.mjs --url ... --token T --out DIR --measure RUNS --rows N --cluster-rows M
//     (bench/bench_page.cpp: RUNS full loads of #/jobs until N rows are drawn and of #/fleet
//     until M clusters are; the API's own time for the jobs in the page as the baseline)
import { chromium } from "playwright-core";
import { mkdirSync } from "node:fs";

function args() {
  const out = { chromium: "/usr/bin/chromium", attempts: "1", clusters: "", job: "" };
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i += 2) out[argv[i].replace(/^--/, "")] = argv[i + 1];
  for (const required of ["url", "token", "out"]) {
    if (!out[required]) throw new Error(`--${required} is required`);
  }
  return out;
}

const TIMEOUT = 20000;
const RUN_CHARTS = ["chart-loss", "chart-throughput", "chart-mfu"];
const PROTOCOL_LINE = /^(\[[^\]]*\] )?@orchestrate /;

// Where each chart's y-axis labels are drawn: the bounding box of the ink left of the plot area
// (uPlot draws labels on its canvas), in page pixels, beside the canvas's own box. A label wider
// than the axis is cut by the canvas's left edge, so its ink starts at the canvas's first column.
function yLabelBoxes(ids) {
  return ids.map((id) => {
    const canvas = document.querySelector(`#${id} .uplot canvas`);
    const over = document.querySelector(`#${id} .uplot .u-over`);
    const c = canvas.getBoundingClientRect();
    const o = over.getBoundingClientRect();
    const ratio = canvas.width / c.width;
    const width = Math.floor((o.left - c.left) * ratio);
    const top = Math.max(0, Math.floor((o.top - c.top - 8) * ratio));
    const bottom = Math.min(canvas.height, Math.ceil((o.bottom - c.top + 8) * ratio));
    const img = canvas.getContext("2d").getImageData(0, top, width, bottom - top);
    let x0 = Infinity, x1 = -1, y0 = Infinity, y1 = -1;
    for (let y = 0; y < img.height; y++) {
      for (let x = 0; x < img.width; x++) {
        if (img.data[(y * img.width + x) * 4 + 3] <= 32) continue;
        x0 = Math.min(x0, x);
        x1 = Math.max(x1, x);
        y0 = Math.min(y0, y);
        y1 = Math.max(y1, y);
      }
    }
    const chart = { left: c.left, top: c.top, right: c.right, bottom: c.bottom };
    if (x1 < 0) return { id, chart, labels: null };
    return { id, chart, labels: { left: c.left + x0 / ratio, right: c.left + (x1 + 1) / ratio,
                                  top: c.top + (top + y0) / ratio, bottom: c.top + (top + y1 + 1) / ratio } };
  });
}

// The run's charts: points of every attempt 1..want, labels whole inside each chart.
async function checkRunCharts(page, want) {
  for (const id of RUN_CHARTS) {
    await page.waitForFunction(([chart, n]) => {
      const holder = document.getElementById(chart);
      if (!holder || !holder.querySelector(".uplot canvas")) return false;
      const counts = new Map((holder.dataset.points || "").split(" ").filter(Boolean)
        .map((p) => p.split(":").map(Number)));
      for (let a = 1; a <= n; a++) if (!(counts.get(a) > 0)) return false;
      return true;
    }, [id, want]);
  }
  const points = await page.$$eval(".chart", (cs) => cs.map((c) => `${c.id}: ${c.dataset.points || ""}`));
  console.error("chart points (attempt:count): " + JSON.stringify(points));
  const one = 1 / (await page.evaluate(() => window.devicePixelRatio || 1));
  for (const { id, chart, labels } of await page.evaluate(yLabelBoxes, RUN_CHARTS)) {
    if (!labels) throw new Error(`${id}: no y-axis labels drawn`);
    const inside = labels.left >= chart.left + one && labels.right <= chart.right &&
                   labels.top >= chart.top && labels.bottom <= chart.bottom;
    if (!inside) {
      throw new Error(`${id}: the y-axis labels (${JSON.stringify(labels)}) are cut by the chart's ` +
                      `edge (${JSON.stringify(chart)})`);
    }
  }
}

// The log panel: no protocol line unless "raw output" is ticked, and some with it.
async function checkLog(page) {
  await page.waitForFunction(() => document.querySelector("#log").textContent.length > 0);
  const lines = async () => (await page.$eval("#log", (p) => p.textContent)).split("\n");
  const hidden = (await lines()).filter((l) => PROTOCOL_LINE.test(l));
  if (hidden.length) throw new Error(`log: protocol lines shown by default: ${hidden.slice(0, 3)}`);
  console.error("log hint: " + (await page.$eval("#log-hidden", (s) => s.textContent)));
  await page.check("#log-raw");
  await page.waitForFunction((re) => document.querySelector("#log").textContent.split("\n")
    .some((l) => new RegExp(re).test(l)), PROTOCOL_LINE.source);
  await page.uncheck("#log-raw");
}

// A job's header line written from job-provided text (its error excerpt, its MFU flag): shown,
// containing `want`, as text (no element made of it).
async function checkHeader(page, a, job, selector, want, shot) {
  await page.goto(a.url + "/#/job/" + job);
  await page.waitForSelector(selector);
  const [shown, elements] = await page.$eval(selector, (p) => [p.textContent, p.childElementCount]);
  if (elements) throw new Error(`job ${job}: ${selector} became ${elements} element(s)`);
  if (!shown.includes(want)) throw new Error(`job ${job}: ${selector} "${shown}" lacks "${want}"`);
  console.error(`job ${job} ${selector}: ${JSON.stringify(shown)}`);
  await page.screenshot({ path: a.out + "/" + shot + ".png", fullPage: true });
}

// A gang's log: its lines keep their [node/rank] tags, and choosing a rank shows only its lines.
async function checkRankFilter(page, a) {
  await page.goto(a.url + "/#/job/" + a["gang-job"]);
  await page.waitForFunction(() => document.querySelectorAll("#log-rank option").length >= 3);
  const options = await page.$$eval("#log-rank option", (os) => os.map((o) => o.textContent));
  await page.selectOption("#log-rank", "1");
  const lines = (await page.$eval("#log", (p) => p.textContent)).split("\n").filter(Boolean);
  const others = lines.filter((l) => !/^\[[A-Za-z0-9._?-]+\/1\] /.test(l));
  if (!lines.length || others.length) {
    throw new Error(`gang job: rank 1 chosen, the log shows ${lines.length} line(s), ` +
                    `${others.length} not rank 1's: ${others.slice(0, 3)}`);
  }
  console.error(`gang log ranks: ${JSON.stringify(options)}; rank 1: ${lines.length} line(s)`);
  await page.screenshot({ path: a.out + "/job-gang.png", fullPage: true });
}

// The API's answer, fetched with the page's token (what the views are checked against).
async function apiGet(page, a, path) {
  return page.evaluate(async ([p, token]) => {
    const r = await fetch(p, { headers: { Authorization: "Bearer " + token } });
    return r.json();
  }, [path, a.token]);
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

// Issue 42, the transfers view (all ticked): one section per group of GET /data/transfers, each
// headed by its label and holding its transfers, and the throughput chart drawn.
async function checkTransfers(page, a, problems) {
  await page.waitForSelector("#chart-transfer-throughput .uplot canvas", { timeout: TIMEOUT });
  const list = await apiGet(page, a, "/api/v1/data/transfers?limit=100&all=true");
  await page.waitForFunction((n) => document.querySelectorAll("#transfers .transfer-group").length === n,
                             list.groups.length, { timeout: TIMEOUT });
  const shown = await page.$$eval("#transfers .transfer-group", (sections) => sections.map((s) => ({
    key: s.dataset.group,
    label: s.querySelector(".group-label").textContent,
    ids: [...s.querySelectorAll("tbody tr")].map((tr) => Number(tr.cells[0].textContent)),
  })));
  list.groups.forEach((g, i) => {
    const s = shown[i];
    if (!s || s.key !== g.key || s.label !== g.label) {
      problems.push(`transfers: group ${i} shows ${JSON.stringify(s)}, the API says ${g.key} "${g.label}"`);
    } else if ([...s.ids].sort().join() !== [...g.transfers].sort().join()) {
      problems.push(`transfers: group ${g.key} lists ${s.ids}, the API ${g.transfers}`);
    }
  });
}

// The jobs list: every row's Reason, GPUs, Priority, Team and Group as the API says them, the
// reason as text in its own column (not a tooltip), a sweep point named with its values.
// Issue 45: the Fleet's cost table lists the clusters GET /api/v1/reports/cost?by=cluster has,
// each cost a number to the cent (live attempts move it between reads, so not compared to the
// cent), the lost part no more than the whole.
async function checkFleetCost(page, a) {
  const api = await apiGet(page, a, "/api/v1/reports/cost?by=cluster");
  await page.waitForFunction((n) => document.querySelectorAll("#costs tbody tr td.num").length >= n,
                             api.rows.length);
  const table = await page.$eval("#costs", (t) => ({
    heads: [...t.querySelectorAll("thead th")].map((th) => th.textContent),
    rows: [...t.querySelectorAll("tbody tr")].map((tr) => [...tr.children].map((td) => td.textContent)),
  }));
  const at = (col) => table.heads.indexOf(col);
  const amount = (text) => Number(text.split(" ")[0]);
  for (const r of api.rows) {
    const row = table.rows.find((cells) => cells[at("Cluster")] === r.key);
    if (!row) throw new Error(`fleet: no cost row for ${r.key} (shown: ${JSON.stringify(table.rows)})`);
    const cost = row[at("Cost")], lost = row[at("Lost")];
    if (!/^\d+\.\d\d( [A-Z]+)?$/.test(cost)) throw new Error(`fleet: ${r.key}'s cost shows "${cost}"`);
    if (amount(lost) > amount(cost)) throw new Error(`fleet: ${r.key} lost ${lost} of ${cost}`);
  }
  console.error(`fleet cost: ${api.rows.length} cluster row(s), currency "${api.currency}"`);
}

// The ended job's header says what its GET /api/v1/jobs/{id} cost says: useful / lost, in money
// to the cent with its currency, or GPU-hours without prices.
async function checkJobCost(page, a, id) {
  const { cost } = await apiGet(page, a, "/api/v1/jobs/" + id);
  const part = cost.currency ? cost.money : cost.gpu_hours;
  const show = (v) => (cost.currency ? `${v.toFixed(2)} ${cost.currency}` : `${v.toFixed(2)} GPU-h`);
  const want = `${show(part.useful)} / ${show(part.lost)}`;
  await page.waitForSelector("#job-cost .value");
  const shown = await page.$eval("#job-cost .value", (v) => v.textContent);
  if (shown !== want) throw new Error(`job: cost shows "${shown}", the API says "${want}"`);
}

async function checkJobsColumns(page, a) {
  const api = (await apiGet(page, a, "/api/v1/jobs?limit=1000")).jobs;
  await page.waitForFunction((n) => document.querySelectorAll("#jobs tbody tr td a").length >= n, api.length);
  const table = await page.$eval("#jobs", (t) => ({
    heads: [...t.querySelectorAll("thead th")].map((th) => th.textContent),
    rows: [...t.querySelectorAll("tbody tr")].map((tr) => [...tr.children].map((td) => td.textContent)),
  }));
  for (const col of ["Reason", "GPUs", "Priority", "Team", "Group"]) {
    if (!table.heads.includes(col)) throw new Error(`jobs: no ${col} column (columns: ${table.heads})`);
  }
  const at = (col) => table.heads.indexOf(col);
  const dash = "\u2014";
  for (const job of api) {
    const row = table.rows.find((r) => r[at("Id")] === String(job.id));
    if (!row) throw new Error(`jobs: job ${job.id} missing`);
    const want = {
      Reason: job.reason || dash, GPUs: String(job.gpus),
      Priority: job.priority_class ? `${job.priority} (${job.priority_class})` : String(job.priority),
      Team: job.team || dash, Group: job.group || dash,
      Name: job.sweep_point ? `${job.name} \u00b7 ${job.sweep_point}` : job.name,
    };
    for (const [col, value] of Object.entries(want)) {
      if (row[at(col)] !== value) {
        throw new Error(`jobs: job ${job.id}'s ${col} shows "${row[at(col)]}", the API says "${value}"`);
      }
    }
  }
  console.error(`jobs columns: ${api.length} row(s) agree with the API on ${table.heads}`);
}

// The waiting job's page: its title with the sweep point, the Spec panel against the stored
// spec, "Why it waits" against explain, ISO dates, and Cancel only for a role that may.
async function checkWaitingJob(page, a, mayCancel) {
  const id = a["waiting-job"];
  const [job, explain] = [await apiGet(page, a, "/api/v1/jobs/" + id),
                          await apiGet(page, a, `/api/v1/jobs/${id}/explain`)];
  await page.goto(a.url + "/#/job/" + id);
  await page.waitForSelector("#spec .spec-row");
  await page.waitForSelector("#why-it-waits #why");
  const title = await page.$eval("#view h1", (h) => h.textContent);
  if (job.sweep_point && !title.includes(`${job.name} \u00b7 ${job.sweep_point}`)) {
    throw new Error(`job ${id}: the title "${title}" does not name its sweep point ${job.sweep_point}`);
  }
  const spec = await page.$$eval("#spec .spec-row", (rows) => Object.fromEntries(
    rows.map((r) => [r.dataset.key, r.querySelector("dd").textContent])));
  const env = Object.entries(job.spec.env || {}).sort(([x], [y]) => (x < y ? -1 : 1)).map(([k, v]) => `${k}=${v}`).join("");
  const dash = "\u2014";
  const want = { command: job.spec.command, sweep_point: job.sweep_point || dash, env: env || dash,
                 team: job.team || dash, group: job.group || dash,
                 priority: job.priority_class ? `${job.priority} (${job.priority_class})` : String(job.priority) };
  for (const [key, value] of Object.entries(want)) {
    if (spec[key] !== value) throw new Error(`job ${id}: Spec ${key} shows "${spec[key]}", the API says "${value}"`);
  }
  if (!spec.resources.startsWith(`${job.nodes} node`) || !spec.resources.includes(`(${job.gpus} in all)`)) {
    throw new Error(`job ${id}: Spec resources "${spec.resources}" is not ${job.nodes} x ${job.gpus_per_node}`);
  }
  if (typeof job.spec.time_limit === "number" && spec.time_limit === "none") {
    throw new Error(`job ${id}: Spec time limit says none, the spec has ${job.spec.time_limit} s`);
  }
  for (const v of Object.keys(job.spec.secret_env || {})) {
    if (!spec.secret_env.includes(v)) throw new Error(`job ${id}: Spec lacks secret variable ${v}`);
  }
  if (!ISO_DATE.test(spec.created)) throw new Error(`job ${id}: the date "${spec.created}" is not ISO`);
  const heading = await page.$eval("#why-it-waits h2", (h) => h.textContent);
  if (heading !== "Why it waits") throw new Error(`job ${id} (${job.state}): the panel is "${heading}"`);
  const reason = await page.$eval("#why-reason", (p) => p.textContent);
  if (!explain.reason) throw new Error(`job ${id} (${job.state}) waits and explain gives no reason`);
  if (reason !== explain.reason) throw new Error(`job ${id}: why "${reason}", explain "${explain.reason}"`);
  const rows = await page.$$eval("#why-clusters tbody tr", (trs) => Object.fromEntries(trs.map((tr) =>
    [tr.dataset.cluster, { reason: tr.children[2].textContent,
                           filters: [...tr.querySelectorAll("[data-filter]")].map((l) => l.textContent),
                           preemptions: [...tr.querySelectorAll(".preemption")].map((l) => l.textContent) }])));
  if (explain.clusters.length === 0) throw new Error(`job ${id}: explain has no cluster to check`);
  for (const c of explain.clusters) {
    const row = rows[c.cluster];
    if (!row) throw new Error(`job ${id}: "Why it waits" lacks cluster ${c.cluster}`);
    if (row.reason !== (c.reason || "\u2014")) throw new Error(`job ${id} on ${c.cluster}: "${row.reason}", explain "${c.reason}"`);
    for (const r of c.refused_by || []) {
      if (!row.filters.some((f) => f.includes(r.reason))) throw new Error(`job ${id} on ${c.cluster}: refusal "${r.reason}" not shown`);
    }
    for (const p of c.preemptions || []) {
      if (!row.preemptions.some((l) => l.startsWith(`job ${p.job_id} `) && l.includes(p.why))) {
        throw new Error(`job ${id} on ${c.cluster}: preemption of job ${p.job_id} (${p.why}) not shown`);
      }
    }
  }
  const cancel = await page.$("#cancel");
  if (mayCancel !== Boolean(cancel)) {
    throw new Error(`job ${id}: a Cancel button ${cancel ? "shown to" : "missing for"} this role`);
  }
  console.error(`waiting job ${id}: ${JSON.stringify({ title, why: rows, cancel: Boolean(cancel) })}`);
  await page.screenshot({ path: a.out + "/job-waiting" + (mayCancel ? "" : "-viewer") + ".png", fullPage: true });
}

// Each run: the jobs list fetched and parsed by the page's JavaScript alone (the baseline), then
// a full load of the page (HTML, scripts, sign-in check) until the jobs table has all its rows,
// then the same for the fleet. Milliseconds.
async function measure(page, a) {
  const rows = Number(a.rows || 1), clusterRows = Number(a["cluster-rows"] || 1);
  const out = { api_ms: [], jobs_ms: [], fleet_ms: [] };
  for (let i = 0; i < Number(a.measure); i++) {
    out.api_ms.push(await page.evaluate(async (token) => {
      const t0 = performance.now();
      const r = await fetch("/api/v1/jobs?limit=1000", { headers: { Authorization: "Bearer " + token } });
      await r.json();
      return performance.now() - t0;
    }, a.token));
    let t0 = Date.now();
    await page.goto(`${a.url}/?run=${i}#/jobs`);
    await page.waitForFunction((n) => document.querySelectorAll("#jobs tbody tr").length >= n, rows);
    out.jobs_ms.push(Date.now() - t0);
    if (i === 0) await page.screenshot({ path: a.out + "/jobs-" + rows + ".png" });
    t0 = Date.now();
    await page.goto(`${a.url}/?run=${i}#/fleet`);
    await page.waitForFunction((n) => document.querySelectorAll("#clusters tbody tr").length >= n, clusterRows);
    out.fleet_ms.push(Date.now() - t0);
  }
  return out;
}

async function main() {
  const a = args();
  mkdirSync(a.out, { recursive: true });
  const browser = await chromium.launch({
    executablePath: a.chromium,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
  });
  const problems = [];
  try {
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const page = await context.newPage();
    page.setDefaultTimeout(TIMEOUT);
    page.on("console", (m) => {
      if (m.type() === "error") problems.push("console error: " + m.text() + " at " + (m.location()?.url || "?"));
    });
    page.on("pageerror", (e) => problems.push("page error: " + e.message));
    page.on("dialog", (d) => {
      problems.push("a dialog opened: " + d.message());
      d.dismiss().catch(() => {});
    });
    page.on("response", (r) => {
      if (r.status() >= 400) problems.push(`HTTP ${r.status()} for ${r.request().method()} ${r.url()}`);
    });
    page.on("requestfailed", (r) => problems.push("request failed: " + r.url() + " " + r.failure()?.errorText));

    // Sign in through the form, as a person would.
    const started = Date.now();
    await page.goto(a.url + "/");
    await page.fill("#token", a.token);
    await page.click("#signin-form button[type=submit]");
    if (a.measure) {
      await page.waitForSelector("#clusters tbody tr td");
      console.log(JSON.stringify({ ok: true, ...(await measure(page, a)) }));
      return;
    }
    if (a["expect-refused"]) {
      await page.waitForFunction(() => document.querySelector("#signin-error").textContent.includes("refused"));
      const said = await page.$eval("#signin-error", (p) => p.textContent);
      const shown = await page.$eval("#signin", (s) => !s.hidden);
      await page.screenshot({ path: a.out + "/refused.png" });
      if (!shown) throw new Error("the sign-in form is hidden after a refused token");
      console.log(JSON.stringify({ ok: true, refused: said }));
      return;
    }
    await page.waitForSelector("#clusters tbody tr td");
    const clusters = await page.$$eval("#clusters tbody tr td:first-child", (tds) => tds.map((t) => t.textContent));
    for (const name of a.clusters.split(",").filter(Boolean)) {
      if (!clusters.includes(name)) throw new Error(`fleet: cluster ${name} missing (shown: ${clusters})`);
    }
    await page.waitForSelector("#scorecards tbody tr td");
    await checkFleetCost(page, a);
    await page.screenshot({ path: a.out + "/fleet.png", fullPage: true });

    // Jobs: the time until the table is drawn is the page's load figure.
    const jobsStart = Date.now();
    await page.goto(a.url + "/#/jobs");
    await page.waitForSelector(`#jobs tbody tr td a[href="#/job/${a.job}"]`);
    const loadMs = Date.now() - jobsStart;
    const rows = await page.$$eval("#jobs tbody tr", (trs) => trs.length);
    await page.fill(".tools input", "no-such-job-name");
    const filtered = await page.$eval("#jobs tbody", (b) => b.textContent);
    if (!filtered.includes("nothing matches")) {
      throw new Error("jobs: the filter kept rows for a name no job has");
    }
    await page.fill(".tools input", "");
    await checkJobsColumns(page, a);
    await page.click("#jobs th:first-child");
    await page.screenshot({ path: a.out + "/jobs" + (a.viewer ? "-viewer" : "") + ".png", fullPage: true });
    if (a["waiting-job"]) await checkWaitingJob(page, a, !a.viewer);

    if (a.job && Number(a.attempts) > 0) {
      await page.goto(a.url + "/#/job/" + a.job);
      const want = Number(a.attempts);
      await page.waitForFunction((n) => document.querySelectorAll("#timeline .bar").length >= n, want);
      const bars = await page.$$eval("#timeline .bar", (bs) => bs.map((b) => b.textContent));
      await page.waitForSelector("#chart-steps .uplot canvas");
      await checkRunCharts(page, want);
      await page.waitForSelector("#checkpoints tbody tr td.num");
      await page.waitForSelector("#events tbody tr td");
      await checkLog(page);
      const submitted = await page.$eval(".figures", (f) => [...f.querySelectorAll(".figure")]
        .find((x) => x.querySelector(".label").textContent === "Submitted").querySelector(".value").textContent);
      if (!ISO_DATE.test(submitted)) throw new Error(`job: Submitted "${submitted}" is not an ISO date`);
      await checkJobCost(page, a, a.job);
      await page.screenshot({ path: a.out + "/job.png", fullPage: true });
      if (bars.length < want) throw new Error(`job: ${bars.length} attempt bars, expected ${want}`);
      console.error("bars: " + JSON.stringify(bars));
      // Where each recovery's seconds went, one line per attempt that followed an interruption.
      const recoveries = await page.$$eval("#recoveries li", (ls) => ls.map((l) => l.textContent));
      console.error("recoveries: " + JSON.stringify(recoveries));
    }

    if (a["failed-job"]) await checkHeader(page, a, a["failed-job"], "#error-excerpt", a.excerpt, "job-failed");
    if (a["gang-job"]) await checkRankFilter(page, a);
    if (a["flagged-job"]) {
      await checkHeader(page, a, a["flagged-job"], "#mfu-flag", "misconfigured", "job-mfu-flag");
    }

    await page.goto(a.url + "/#/nodes");
    await page.waitForSelector("#nodes tbody tr td");
    await page.screenshot({ path: a.out + "/nodes.png", fullPage: true });
    await page.goto(a.url + "/#/transfers");
    await page.check("#all-transfers");
    await page.waitForSelector("#transfers tbody tr td");
    await checkTransfers(page, a, problems);
    await page.screenshot({ path: a.out + "/transfers.png", fullPage: true });

    if (problems.length) throw new Error(problems.join("; "));
    console.log(JSON.stringify({ ok: true, load_ms: loadMs, total_ms: Date.now() - started, rows }));
  } finally {
    await browser.close();
  }
}

main().catch((e) => {
  console.log(JSON.stringify({ ok: false, error: String(e && e.message ? e.message : e) }));
  process.exit(1);
});
