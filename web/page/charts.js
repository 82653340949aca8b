// The job page's charts, uPlot's (the `uPlot` global from /ui/uPlot.iife.min.js): each at the full
// width of its panel (it follows the panel when the window resizes), its y axis as wide as its
// widest tick label (uPlot's fixed 50 px clipped "46.7%" to "l6.7%"), and numbers formatted to
// the precision of the axis's step.
//
// lineChart: one series over time (the job's steps). runChart: a metric of the run's series
// (GET /api/v1/jobs/{id}/series) over steps, one segment per attempt (its own colour, never a
// line across attempts), where each attempt after the first began (a dashed line, "attempt 2"),
// the checkpoints as ticks on the x axis, and optionally the min/max band of each point's steps
// (a one-step loss spike in a bucket of many shows as the band's edge).
import { clockTime, dash, el, when } from "./dom.js";

const HEIGHT = 240;
const COLOURS = ["#2f6fd0", "#d0632f", "#1f8a4c", "#8e44ad", "#c62f3b", "#0f8b8d", "#b8860b", "#5c6577"];

export function attemptColour(no) {
  return COLOURS[(Math.max(1, no) - 1) % COLOURS.length];
}

// The fewest decimals that tell ticks `incr` apart (0.25 -> 2, 5 -> 0).
function decimalsFor(incr) {
  if (!(incr > 0)) return 0;
  for (let d = 0; d < 8; d++) {
    const scaled = incr * 10 ** d;
    if (Math.abs(scaled - Math.round(scaled)) < 1e-6 * Math.max(1, scaled)) return d;
  }
  return 8;
}

// 1234567 -> "1.23M" (significant digits for hover values, decimals from the tick step on axes).
export function compact(value, incr) {
  if (typeof value !== "number" || !Number.isFinite(value)) return dash;
  if (value === 0) return "0";
  const abs = Math.abs(incr > 0 ? Math.max(Math.abs(value), incr) : value);
  const [div, unit] = abs >= 1e12 ? [1e12, "T"] : abs >= 1e9 ? [1e9, "G"] : abs >= 1e6 ? [1e6, "M"]
    : abs >= 1e4 ? [1e3, "k"] : [1, ""];
  if (incr > 0) return (value / div).toFixed(decimalsFor(incr / div)) + unit;
  const scaled = value / div;
  return (Math.abs(scaled) >= 100 || (div === 1 && Number.isInteger(scaled)) ? scaled.toFixed(0)
    : scaled.toPrecision(3)) + unit;
}

export function ratioPct(value, incr) {
  if (typeof value !== "number" || !Number.isFinite(value)) return dash;
  if (incr > 0) return (value * 100).toFixed(decimalsFor(incr * 100)) + "%";
  const p = value * 100;
  return (Math.abs(p) >= 10 ? p.toFixed(1) : p === 0 ? "0" : p.toPrecision(2)) + "%";
}

export function plain(value, incr) {
  if (typeof value !== "number" || !Number.isFinite(value)) return dash;
  if (Math.abs(value) >= 1e4) return compact(value, incr);
  if (incr > 0) return value.toFixed(decimalsFor(incr));
  return Math.abs(value) >= 100 ? value.toFixed(1) : value.toPrecision(4);
}

// A y axis as wide as its widest label (measured in the axis's own font) plus its tick and gap.
function fittedYAxis(format) {
  return {
    values: (u, splits, axisIdx, space, incr) => splits.map((v) => format(v, incr)),
    size(u, values, axisIdx, cycleNum) {
      const axis = u.axes[axisIdx];
      let widest = 0;
      if (values && values.length) {
        u.ctx.save();
        u.ctx.font = axis.font[0];
        for (const v of values) {
          if (v !== null && v !== undefined) widest = Math.max(widest, u.ctx.measureText(String(v)).width);
        }
        u.ctx.restore();
      }
      const want = Math.ceil(widest / (window.devicePixelRatio || 1)) + axis.ticks.size + axis.gap + 6;
      // A later cycle may bring other ticks (the plot's height changed) with wider labels: the
      // axis only grows from the first size, so the labels always fit and the cycles converge.
      return cycleNum > 1 ? Math.max(axis._size || 0, want) : want;
    },
  };
}

// A holder that keeps one uPlot instance, as wide as the holder, rebuilt when `layout` changes.
function plotHolder(id, emptyText) {
  const holder = el("div", { class: "chart", id });
  let plot = null;
  let layout = null;
  const resize = new ResizeObserver(() => {
    const width = holder.clientWidth;
    if (plot && width > 0 && width !== plot.width) plot.setSize({ width, height: HEIGHT });
  });
  resize.observe(holder);
  return {
    holder,
    // key: the series' layout (null: nothing to draw, say `empty` or the holder's own text).
    show(key, data, makeOpts, empty = emptyText) {
      if (key === null && layout === null && holder.textContent === empty) return null;
      if (plot && key === layout) {
        plot.setData(data);
        return plot;
      }
      if (plot) plot.destroy();
      plot = null;
      layout = key;
      if (key === null) {
        holder.replaceChildren(el("p", { class: "empty" }, empty));
        return null;
      }
      holder.replaceChildren();
      const opts = makeOpts();
      plot = new uPlot({ ...opts, width: Math.max(320, holder.clientWidth || 640), height: HEIGHT },
                       data, holder);
      return plot;
    },
    destroy() {
      resize.disconnect();
      if (plot) plot.destroy();
      plot = null;
    },
  };
}

// A time axis' tick: the clock when the ticks lie within a day, else the date and the clock.
function isoTick(ms, splits) {
  const span = (splits[splits.length - 1] - splits[0]) * 1000;
  return span < 86400000 ? clockTime(ms) : when(ms).slice(0, 16);
}

// One series over time (x: seconds since the epoch). set(xs, ys).
export function lineChart(id, title, seriesLabel, format) {
  const box = plotHolder(id, "no " + seriesLabel + " reported yet");
  return {
    node: box.holder,
    set(xs, ys) {
      box.show(xs.length ? "line" : null, [xs, ys], () => ({
        title,
        // Times as the rest of the page writes them (ISO order), not uPlot's US-style dates.
        series: [{ value: (u, v) => (v === null ? dash : when(v * 1000)) },
                 { label: seriesLabel, stroke: COLOURS[0], width: 2, points: { show: true },
                   value: (u, v) => format(v) }],
        axes: [{ space: 80, values: (u, splits) => splits.map((v) => isoTick(v * 1000, splits)) },
               fittedYAxis(format)],
      }));
    },
    destroy: box.destroy,
  };
}

// Where each attempt after the first began and where checkpoints were saved, drawn over the plot.
function markers(marks) {
  return {
    hooks: {
      draw: [(u) => {
        const { ctx, bbox } = u;
        const px = window.devicePixelRatio || 1;
        ctx.save();
        ctx.font = Math.round(11 * px) + "px system-ui, sans-serif";
        ctx.textBaseline = "top";
        ctx.textAlign = "left";
        for (const b of marks.boundaries) {
          const x = Math.round(u.valToPos(b.step, "x", true));
          if (x < bbox.left || x > bbox.left + bbox.width) continue;
          ctx.strokeStyle = attemptColour(b.attempt);
          ctx.lineWidth = px;
          ctx.setLineDash([4 * px, 3 * px]);
          ctx.beginPath();
          ctx.moveTo(x, bbox.top);
          ctx.lineTo(x, bbox.top + bbox.height);
          ctx.stroke();
          ctx.setLineDash([]);
          ctx.fillStyle = attemptColour(b.attempt);
          const text = "attempt " + b.attempt;
          const w = ctx.measureText(text).width;
          const tx = x + 3 * px + w > bbox.left + bbox.width ? x - 3 * px - w : x + 3 * px;
          ctx.fillText(text, tx, bbox.top + 2 * px);
        }
        const base = bbox.top + bbox.height;
        for (const c of marks.checkpoints) {
          const x = u.valToPos(c.step, "x", true);
          if (x < bbox.left || x > bbox.left + bbox.width) continue;
          ctx.fillStyle = attemptColour(c.attempt);
          ctx.beginPath();
          ctx.moveTo(x, base - 7 * px);
          ctx.lineTo(x - 4 * px, base);
          ctx.lineTo(x + 4 * px, base);
          ctx.closePath();
          ctx.fill();
        }
        ctx.restore();
      }],
    },
  };
}

// The series answer as uPlot's columns: x is every step any attempt has a point at; each
// attempt's series holds its own points and null elsewhere (spanGaps joins an attempt's own
// points across the other attempts' steps, never one attempt to the next).
function columns(answer, pick, band) {
  const attempts = answer.attempts.filter((a) => a.points.some((p) => typeof pick(p) === "number"));
  const steps = [...new Set(attempts.flatMap((a) => a.points.map((p) => p.step)))].sort((p, q) => p - q);
  const at = new Map(steps.map((s, i) => [s, i]));
  const data = [steps];
  for (const a of attempts) {
    const cols = Array.from({ length: band ? 3 : 1 }, () => new Array(steps.length).fill(null));
    for (const p of a.points) {
      const i = at.get(p.step);
      const v = pick(p);
      cols[0][i] = typeof v === "number" ? v : null;
      if (band) {
        cols[1][i] = typeof p[band[0]] === "number" ? p[band[0]] : cols[0][i];
        cols[2][i] = typeof p[band[1]] === "number" ? p[band[1]] : cols[0][i];
      }
    }
    data.push(...cols);
  }
  return { attempts, data };
}

// A metric of the run (pick(point) -> number|null) over steps. band: [minKey, maxKey] or null.
// why(answer): what to say instead of an empty chart (null: "no <metric> reported yet").
export function runChart(id, title, metricLabel, format, pick, band = null, why = () => null) {
  const box = plotHolder(id, "no " + metricLabel + " reported yet");
  const marks = { boundaries: [], checkpoints: [] };
  return {
    node: box.holder,
    set(answer) {
      const { attempts, data } = columns(answer, pick, band);
      // Each attempt after the first begins where its first point's steps begin.
      marks.boundaries = attempts.slice(1).map((a) => ({
        attempt: a.attempt, step: a.points[0].first_step ?? a.points[0].step }));
      marks.checkpoints = answer.checkpoints || [];
      const key = attempts.length ? attempts.map((a) => a.attempt).join(",") : null;
      box.holder.dataset.attempts = attempts.map((a) => a.attempt).join(" ");
      box.holder.dataset.points = attempts.map((a) => a.attempt + ":" +
        a.points.filter((p) => typeof pick(p) === "number").length).join(" ");
      box.holder.dataset.checkpoints = String(marks.checkpoints.length);
      box.show(key, data, () => {
        const series = [{ label: "step", value: (u, v) => (v === null ? dash : compact(v)) }];
        const bands = [];
        for (const a of attempts) {
          const colour = attemptColour(a.attempt);
          series.push({ label: "attempt " + a.attempt + " (" + a.cluster + ")", stroke: colour,
                        width: 2, spanGaps: true, value: (u, v) => format(v) });
          if (band) {
            const edge = { stroke: colour + "55", width: 1, spanGaps: true, class: "band-edge",
                           points: { show: false }, value: (u, v) => format(v) };
            series.push({ ...edge, label: "min" }, { ...edge, label: "max" });
            const i = series.length - 1;
            bands.push({ series: [i, i - 1], fill: colour + "22" });
          }
        }
        return {
          title, series, bands, plugins: [markers(marks)],
          scales: { x: { time: false } },
          axes: [{ values: (u, splits, ax, space, incr) => splits.map((v) => compact(v, incr)),
                   label: "step", labelSize: 20 },
                 fittedYAxis(format)],
        };
      }, why(answer) || undefined);
    },
    destroy: box.destroy,
  };
}
