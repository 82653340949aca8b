// The page's shell: sign-in with an API token, the view named by the URL's fragment
// (#/fleet, #/jobs, #/job/7, #/nodes, #/transfers), and a refresh of the visible view every
// two seconds while the tab is visible.
import * as api from "./api.js";
import { clockTime } from "./dom.js";
import * as fleet from "./fleet.js";
import * as jobs from "./jobs.js";
import * as job from "./job.js";
import * as nodes from "./nodes.js";
import * as transfers from "./transfers.js";

const views = { fleet, jobs, job, nodes, transfers };
const REFRESH_MS = 2000;

const $ = (id) => document.getElementById(id);
let current = null;  // {name, arg, view}
let timer = null;
let whoami = null;
// What every view is given; whoami is filled in when the server has said who the token is.
const ctx = { whoami: null };

function setStatus(text, isError) {
  $("status").textContent = text;
  $("status").className = isError ? "error" : "";
}

function route() {
  const parts = (location.hash || "#/fleet").slice(2).split("/");
  const name = views[parts[0]] ? parts[0] : "fleet";
  return { name, arg: parts[1] ? decodeURIComponent(parts[1]) : "" };
}

async function refresh() {
  if (!current) return;
  const shown = current;
  try {
    await shown.view.refresh();
    if (shown === current) setStatus("updated " + clockTime(Date.now()), false);
  } catch (e) {
    if (e instanceof api.ApiError && e.status === 401) return signIn("the token was refused: " + e.message);
    if (shown === current) setStatus(e.message, true);
  }
}

function schedule() {
  clearTimeout(timer);
  timer = setTimeout(async () => {
    if (!document.hidden) await refresh();
    schedule();
  }, REFRESH_MS);
}

async function show() {
  const { name, arg } = route();
  if (current && current.view.destroy) current.view.destroy();
  for (const a of $("nav").children) {
    a.classList.toggle("active", a.dataset.view === name || (name === "job" && a.dataset.view === "jobs"));
  }
  const root = $("view");
  root.replaceChildren();
  current = { name, arg, view: views[name].mount(root, { arg, ctx }) };
  document.title = "orchestrate: " + name + (arg ? " " + arg : "");
  await refresh();
  schedule();
}

function signIn(message) {
  clearTimeout(timer);
  if (current && current.view.destroy) current.view.destroy();
  current = null;
  whoami = null;
  ctx.whoami = null;
  $("view").replaceChildren();
  $("signin").hidden = false;
  $("signout").hidden = true;
  $("who").textContent = "";
  $("signin-error").textContent = message || "";
  $("token").focus();
}

async function start() {
  // A token handed over in the fragment (#token=...) is taken and removed from the address.
  const handed = new URLSearchParams(location.hash.slice(1)).get("token");
  if (handed) {
    api.setToken(handed, false);
    history.replaceState(null, "", location.pathname + "#/fleet");
  }
  if (!api.token()) return signIn("");
  // Who the token is and the first view's data are asked for at once; a refused token sends
  // the page back to the sign-in form.
  $("signin").hidden = true;
  const asked = api.get("/api/v1/whoami");
  whoami = { pending: true };
  const shown = show();
  try {
    ctx.whoami = await asked;
  } catch (e) {
    whoami = null;
    return signIn(e instanceof api.ApiError && e.status === 401 ? "the token was refused: " + e.message : e.message);
  }
  whoami = ctx.whoami;
  $("signout").hidden = false;
  $("who").textContent = whoami.user + " (" + whoami.role + ")";
  await shown;
}

$("signin-form").addEventListener("submit", (event) => {
  event.preventDefault();
  api.setToken($("token").value.trim(), $("remember").checked);
  $("token").value = "";
  start();
});
$("signout").addEventListener("click", () => {
  api.clearToken();
  signIn("signed out");
});
window.addEventListener("hashchange", () => {
  if (whoami) show();
});
document.addEventListener("visibilitychange", () => {
  if (!document.hidden) refresh();
});
start();
