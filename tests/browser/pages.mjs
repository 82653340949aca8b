// Drives the status page in Debian's chromium (headless, through playwright-core) against a
// running server and checks what each view shows against what the test expects; writes a
// screenshot of each view. Prints one JSON line: {"ok": true, "load_ms": ...} or
// {"ok": false, "error": "..."}; exits 0 only when every check holds.
//
//   node pages.mjs --url http://127.0.0.1:PORT --token T --job ID --attempts 2
//                  --clusters alpha,beta --out DIR [--chromium /usr/bin/chromium]
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
    await page.click("#jobs th:first-child");
    await page.screenshot({ path: a.out + "/jobs.png", fullPage: true });

    if (a.job) {
      await page.goto(a.url + "/#/job/" + a.job);
      const want = Number(a.attempts);
      await page.waitForFunction((n) => document.querySelectorAll("#timeline .bar").length >= n, want);
      const bars = await page.$$eval("#timeline .bar", (bs) => bs.map((b) => b.textContent));
      await page.waitForSelector(".chart .uplot canvas");
      const charts = await page.$$eval(".chart .uplot", (cs) => cs.length);
      if (charts < 2) throw new Error(`job: ${charts} chart(s) with points, expected steps and MFU`);
      await page.waitForSelector("#checkpoints tbody tr td.num");
      await page.waitForSelector("#events tbody tr td");
      await page.waitForFunction(() => document.querySelector("#log").textContent.length > 0);
      await page.screenshot({ path: a.out + "/job.png", fullPage: true });
      if (bars.length < want) throw new Error(`job: ${bars.length} attempt bars, expected ${want}`);
      console.error("bars: " + JSON.stringify(bars));
      // Where each recovery's seconds went, one line per attempt that followed an interruption.
      const recoveries = await page.$$eval("#recoveries li", (ls) => ls.map((l) => l.textContent));
      console.error("recoveries: " + JSON.stringify(recoveries));
    }

    await page.goto(a.url + "/#/nodes");
    await page.waitForSelector("#nodes tbody tr td");
    await page.screenshot({ path: a.out + "/nodes.png", fullPage: true });
    await page.goto(a.url + "/#/transfers");
    await page.check("#all-transfers");
    await page.waitForSelector("#transfers tbody tr td");
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
