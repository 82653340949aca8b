// The job page's log panel: the latest attempt's log as stored, its newest lines shown. A gang's
// agent tags each line "[<node>/<rank>] " (scheduler/model/log_tag.h); the tags stay shown, and
// a rank filter appears once tagged lines do. Protocol lines (after at most one tag, a line that
// starts with "@orchestrate ") are hidden unless "raw output" is ticked, as `job logs --raw`.
import * as api from "./api.js";
import { el } from "./dom.js";

const SHOWN_LINES = 200;  // lines drawn
const KEPT_LINES = 5000;  // lines kept to filter from (a panel of protocol lines hides many)
const PROTOCOL = "@orchestrate ";

function nodeNameOk(node) {
  return node === "?" || /^[A-Za-z0-9._-]{1,253}$/.test(node);
}

// The line's tag {node, rank} and the text after it; tag null when the line has no
// well-formed tag (the same rules as split_log_tag in scheduler/model/log_tag.h).
export function splitTag(line) {
  const none = { tag: null, rest: line };
  if (line.length < 5 || line[0] !== "[") return none;
  const close = line.indexOf("] ");
  if (close < 0 || close > 270) return none;
  const inner = line.slice(1, close);
  const slash = inner.lastIndexOf("/");
  if (slash < 0 || slash + 1 >= inner.length) return none;
  const digits = inner.slice(slash + 1);
  if (digits.length > 9 || !/^[0-9]+$/.test(digits)) return none;
  const node = inner.slice(0, slash);
  if (!nodeNameOk(node)) return none;
  return { tag: { node, rank: Number(digits) }, rest: line.slice(close + 2) };
}

export function isProtocolLine(line) {
  return splitTag(line).rest.startsWith(PROTOCOL);
}

export function logView() {
  const pre = el("pre", { class: "log", id: "log" });
  const raw = el("input", { type: "checkbox", id: "log-raw" });
  const rank = el("select", { id: "log-rank", "aria-label": "show the lines of one rank", hidden: true },
                  el("option", { value: "" }, "all ranks"));
  const hint = el("span", { class: "count", id: "log-hidden" });
  let attemptNo = 0;
  let offset = 0;
  let lines = [];    // whole lines
  let partial = "";  // the text after the last newline so far
  const ranks = new Map();  // rank -> the nodes it ran on

  function draw() {
    const all = partial ? lines.concat([partial]) : lines;
    const wanted = rank.value === "" ? null : Number(rank.value);
    let hidden = 0;
    const shown = all.filter((line) => {
      const { tag, rest } = splitTag(line);
      if (wanted !== null && (!tag || tag.rank !== wanted)) return false;
      if (!raw.checked && rest.startsWith(PROTOCOL)) {
        hidden++;
        return false;
      }
      return true;
    }).slice(-SHOWN_LINES);
    const atBottom = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
    pre.textContent = shown.join("\n");
    hint.textContent = hidden ? `${hidden} protocol line${hidden === 1 ? "" : "s"} hidden` : "";
    if (atBottom) pre.scrollTop = pre.scrollHeight;
  }

  function noteRanks(newLines) {
    let added = false;
    for (const line of newLines) {
      const { tag } = splitTag(line);
      if (!tag) continue;
      if (!ranks.has(tag.rank)) {
        ranks.set(tag.rank, new Set());
        added = true;
      }
      if (!ranks.get(tag.rank).has(tag.node)) {
        ranks.get(tag.rank).add(tag.node);
        added = true;
      }
    }
    if (!added) return;
    const chosen = rank.value;
    const options = [...ranks.keys()].sort((a, b) => a - b).map((r) =>
      el("option", { value: String(r) }, `rank ${r} (${[...ranks.get(r)].join(", ")})`));
    rank.replaceChildren(el("option", { value: "" }, "all ranks"), ...options);
    rank.value = chosen;
    rank.hidden = false;
  }

  raw.addEventListener("change", draw);
  rank.addEventListener("change", draw);
  const tools = el("div", { class: "tools" },
                   el("label", { class: "check" }, raw, "raw output (protocol lines too)"), rank, hint);
  return {
    node: el("div", {}, tools, pre),
    // Reads what the attempt's log has gained since the last call (all of it for a new attempt).
    async read(jobId, attempt) {
      if (attempt === 0) return;
      if (attempt !== attemptNo) {
        attemptNo = attempt;
        offset = 0;
        lines = [];
        partial = "";
        ranks.clear();
      }
      const gained = [];
      // Up to 1 MiB a call, at most 8 calls a refresh.
      for (let i = 0; i < 8; i++) {
        const { text, next } = await api.logText(jobId, attempt, offset);
        if (!text) break;
        offset = next;
        const parts = (partial + text).split("\n");
        partial = parts.pop();
        gained.push(...parts);
        if (text.length < 1 << 20) break;
      }
      lines = lines.concat(gained);
      if (lines.length > KEPT_LINES) lines = lines.slice(-KEPT_LINES);
      noteRanks(partial ? gained.concat([partial]) : gained);
      draw();
    },
  };
}
