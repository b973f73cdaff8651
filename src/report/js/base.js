// base.js -- the renderer's common part: the page's error handling,
// number formatting, SVG and HTML element makers, scales and chart frames.
// The renderer is this file followed by one file per kind of report
// (network.js, ...) and main.js, concatenated in that order into one
// script element (CMakeLists.txt); each kind file registers its drawing
// function in RENDERERS under the data's "kind" and may add CSS to STYLE.
//
// Every mark carries a <title> (the browser shows it on hover) with its
// values; charts have axes with units and a log scale where values span
// more than two decades.  When drawing ends <body data-render> is "ok"
// ("failed" after any error); errors are counted in data-errors and listed
// on the page (tests/test_report.c checks both).
"use strict";
const RENDERERS = {};
const STYLE = [];
const SVG = "http://www.w3.org/2000/svg";
const COLORS = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948"];
const body = document.body;

function fail(message) {
  body.dataset.errors = String(Number(body.dataset.errors || 0) + 1);
  let pre = document.getElementById("report-errors");
  if (!pre) {
    pre = document.createElement("pre");
    pre.id = "report-errors";
    document.getElementById("report").prepend(pre);
  }
  pre.textContent += "error: " + message + "\n";
}
window.addEventListener("error", (e) => fail(e.message));

// Engineering notation with a unit: 1.23 ms, 4.5 GB/s; "%" and "x" (a
// ratio: x0.86) are written without a prefix.
function si(v, unit) {
  if (!isFinite(v)) return "-";
  if (unit === "%") return (Math.abs(v) >= 10 || v === 0 ? v.toFixed(0) : v.toFixed(1)) + " %";
  if (unit === "x") return "x" + (Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 10 ?
    v.toFixed(1) : v.toFixed(2)); // a ratio: x0.86, x12.5
  if (v === 0) return "0 " + unit;
  // A plain number (a ratio, a hypervolume) needs no prefix between 0.01 and 1000.
  if (unit === "" && Math.abs(v) >= 0.01 && Math.abs(v) < 1000) return String(+v.toPrecision(3));
  const prefixes = ["a", "f", "p", "n", "u", "m", "", "k", "M", "G", "T", "P", "E"];
  let k = Math.floor(Math.log10(Math.abs(v)) / 3);
  k = Math.max(-6, Math.min(6, k));
  const x = v / Math.pow(1000, k);
  return (Math.abs(x) >= 100 ? x.toFixed(0) : Math.abs(x) >= 10 ? x.toFixed(1) : x.toFixed(2)) +
    " " + prefixes[k + 6] + unit;
}

function el(name, attrs, parent, text) {
  const e = document.createElementNS(SVG, name);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}
function html(name, attrs, parent, text) {
  const e = document.createElement(name);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}

// A scale over [lo, hi] onto [a, b], logarithmic when asked.
function scale(lo, hi, a, b, log) {
  if (log) {
    const l0 = Math.log10(lo), l1 = Math.log10(hi);
    const f = (v) => a + (Math.log10(Math.max(v, lo)) - l0) / (l1 - l0 || 1) * (b - a);
    f.log = true; f.lo = lo; f.hi = hi;
    return f;
  }
  const f = (v) => a + (v - lo) / (hi - lo || 1) * (b - a);
  f.log = false; f.lo = lo; f.hi = hi;
  return f;
}
// The ticks of scale s: powers of ten on a log scale (with 2 and 5 between
// when it spans under two decades), five even steps otherwise.
function ticks(s) {
  const out = [];
  if (s.log) {
    const steps = s.hi / s.lo < 100 ? [1, 2, 5] : [1]; // under two decades: 1, 2, 5 a decade
    for (let e = Math.floor(Math.log10(s.lo)); e <= Math.ceil(Math.log10(s.hi)); e++)
      for (const m of steps) {
        const v = m * Math.pow(10, e);
        if (v >= s.lo * 0.999 && v <= s.hi * 1.001) out.push(v);
      }
    return out;
  }
  // About five round values (1, 2 or 5 times a power of ten apart).
  const raw = (s.hi - s.lo) / 4 || 1, mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = mag * (raw / mag >= 5 ? 5 : raw / mag >= 2 ? 2 : 1);
  for (let v = Math.ceil(s.lo / step - 1e-9) * step; v <= s.hi * (1 + 1e-9) + 1e-12; v += step)
    out.push(Math.abs(v) < step * 1e-9 ? 0 : v);
  return out;
}
function spansDecades(values) {
  const pos = values.filter((v) => v > 0);
  return pos.length > 1 && Math.max(...pos) / Math.min(...pos) > 100;
}

// A chart frame: title, axes with ticks and labels; returns the plot area.
function frame(parent, id, title, width, height, x, y, xLabel, yLabel, unit) {
  const box = html("figure", { class: "chart", id: "chart-" + id }, parent);
  html("figcaption", {}, box, title);
  const svg = el("svg", { width: width, height: height, viewBox: `0 0 ${width} ${height}` }, box);
  const g = el("g", { class: "axes" }, svg);
  el("line", { x1: x(x.lo), x2: x(x.hi), y1: y(y.lo), y2: y(y.lo), stroke: "#333" }, g);
  el("line", { x1: x(x.lo), x2: x(x.lo), y1: y(y.lo), y2: y(y.hi), stroke: "#333" }, g);
  for (const v of ticks(y)) {
    el("line", { x1: x(x.lo) - 4, x2: x(x.hi), y1: y(v), y2: y(v), stroke: "#ddd" }, g);
    el("text", { x: x(x.lo) - 6, y: y(v) + 4, "text-anchor": "end", "font-size": 11 }, g,
      si(v, unit.y));
  }
  if (x.ticks !== false)
    for (const v of ticks(x))
      el("text", { x: x(v), y: y(y.lo) + 16, "text-anchor": "middle", "font-size": 11 }, g,
        si(v, unit.x));
  el("text", { x: (x(x.lo) + x(x.hi)) / 2, y: height - 4, "text-anchor": "middle",
    "font-size": 12 }, g, xLabel);
  el("text", { x: 12, y: (y(y.lo) + y(y.hi)) / 2, "text-anchor": "middle", "font-size": 12,
    transform: `rotate(-90 12 ${(y(y.lo) + y(y.hi)) / 2})` }, g, yLabel);
  return el("g", { class: "marks" }, svg);
}

function legend(parent, names) {
  const box = html("div", { class: "legend" }, parent);
  names.forEach((n, i) => {
    const item = html("span", { class: "legend-item" }, box);
    html("span", { class: "swatch", style: `background:${COLORS[i % COLORS.length]}` }, item);
    item.appendChild(document.createTextNode(n));
  });
}


// Bars per layer, stacked when each value is an array (one per series);
// xLabel names the items when they are not layers (default "layers, in order").
function layerBars(parent, id, title, layers, values, unit, yLabel, series, xLabel) {
  const width = Math.max(640, 60 + layers.length * 8), height = 260;
  const totals = values.map((v) => (Array.isArray(v) ? v.reduce((a, b) => a + b, 0) : v));
  const log = spansDecades(totals) && !series;
  const pos = totals.filter((v) => v > 0);
  const y = scale(log ? Math.min(...pos) / 2 : 0, Math.max(...totals, 1e-30) * 1.05,
    height - 36, 12, log);
  const x = scale(0, layers.length, 70, width - 10, false);
  x.ticks = false;
  const marks = frame(parent, id, title, width, height, x, y, xLabel || "layers, in order", yLabel,
    { x: "", y: unit });
  const w = Math.max(1, x(1) - x(0) - 1);
  layers.forEach((l, i) => {
    const parts = Array.isArray(values[i]) ? values[i] : [values[i]];
    let base = 0;
    parts.forEach((v, k) => {
      if (!(v > 0)) return;
      const y0 = y(log ? Math.max(base, y.lo) : base), y1 = y(base + v);
      const r = el("rect", { class: "bar layer-" + i, x: x(i), y: Math.min(y0, y1), width: w,
        height: Math.max(0.5, Math.abs(y0 - y1)), fill: COLORS[series ? k : 0] }, marks);
      el("title", {}, r, `${l.name} (${l.kind})` + (series ? ` -- ${series[k]}` : "") +
        `: ${si(v, unit)}` + (series ? ` of ${si(totals[i], unit)}` : ""));
      base += v;
    });
  });
  if (series) legend(parent, series);
}

// Operational intensity against achieved throughput, under the roofs:
// one point per item of d.layers (layers, or fusion groups) with MACs and
// DRAM bytes; id names the chart.
function roofline(parent, id, d) {
  const pts = d.layers.filter((l) => l.macs > 0 && l.dram_bytes > 0 && l.latency_s > 0)
    .map((l) => ({ l, x: 2 * l.macs / l.dram_bytes, y: 2 * l.macs / l.latency_s }));
  if (!pts.length) return;
  const peak = d.roofs.peak_ops_per_s, bw = d.roofs.dram_bytes_per_s;
  const xs = pts.map((p) => p.x).concat([peak / bw]);
  // A wider left margin than other charts: "100 Gop/s" ticks beside the
  // rotated axis label.
  const x = scale(Math.min(...xs) / 2, Math.max(...xs) * 2, 92, 642, true);
  const y = scale(Math.min(...pts.map((p) => p.y)) / 2, peak * 2, 300 - 36, 12, true);
  const marks = frame(parent, id,
    "Roofline: achieved throughput against operational intensity",
    662, 300, x, y, "operational intensity (ops per DRAM byte)", "throughput",
    { x: "op/B", y: "op/s" });
  const ridge = peak / bw;
  const roof = el("polyline", { class: "roof", fill: "none", stroke: "#222", "stroke-width": 2,
    points: `${x(x.lo)},${y(bw * x.lo)} ${x(ridge)},${y(peak)} ${x(x.hi)},${y(peak)}` }, marks);
  el("title", {}, roof, `roofs: compute ${si(peak, "op/s")}, DRAM ${si(bw, "B/s")}`);
  for (const p of pts) {
    const c = el("circle", { class: "point", cx: x(p.x), cy: y(p.y), r: 4,
      fill: COLORS[0], "fill-opacity": 0.7 }, marks);
    el("title", {}, c, `${p.l.name}: ${si(p.x, "op/B")}, ${si(p.y, "op/s")} ` +
      `(${(100 * p.y / Math.min(peak, bw * p.x)).toFixed(1)} % of its roof)`);
  }
}


// A heat map: one square per (row, column) coloured by its value on a
// diverging scale, blue at lo through white at the middle to red at hi,
// with the value written in it; cell(r, c) gives {v, title} (title: the
// hover text) or null (left empty).  Marks have class cls; a bar under
// the map keys the colours.
function heatmap(parent, id, title, rows, cols, cell, lo, hi, cls) {
  const side = 46, left = 16 + 6.5 * Math.max(...rows.map((r) => r.length)), top = 70;
  const width = left + Math.max(cols.length * side, 200) + 10;
  const height = top + rows.length * side + 40;
  const box = html("figure", { class: "chart", id: "chart-" + id }, parent);
  html("figcaption", {}, box, title);
  const svg = el("svg", { width: width, height: height, viewBox: `0 0 ${width} ${height}` }, box);
  const g = el("g", { class: "marks" }, svg);
  cols.forEach((c, j) => {
    const x = left + (j + 0.5) * side;
    el("text", { x: x, y: top - 6, "font-size": 11, transform: `rotate(-35 ${x} ${top - 6})` },
      g, c);
  });
  rows.forEach((r, i) => {
    el("text", { x: left - 6, y: top + (i + 0.5) * side + 4, "text-anchor": "end",
      "font-size": 11 }, g, r);
    cols.forEach((c, j) => {
      const v = cell(r, c);
      if (!v || !isFinite(v.v)) return;
      const rect = el("rect", { class: cls, x: left + j * side + 1, y: top + i * side + 1,
        width: side - 2, height: side - 2, fill: heatColor(v.v, lo, hi) }, g);
      el("title", {}, rect, v.title);
      el("text", { x: left + (j + 0.5) * side, y: top + (i + 0.5) * side + 4,
        "text-anchor": "middle", "font-size": 11, "pointer-events": "none" }, g, v.v.toFixed(2));
    });
  });
  const key = el("g", { class: "heat-key" }, svg), y = top + rows.length * side + 12;
  for (let k = 0; k <= 4; k++) {
    const v = lo + (hi - lo) * k / 4, x = left + k * 40;
    el("rect", { x: x, y: y, width: 40, height: 10, fill: heatColor(v, lo, hi), stroke: "#ccc" },
      key);
    el("text", { x: x + 20, y: y + 24, "text-anchor": "middle", "font-size": 10 }, key,
      v.toFixed(1));
  }
}

// The colour of v on heatmap's scale: blue (lo), white (middle), red (hi).
function heatColor(v, lo, hi) {
  const t = Math.max(-1, Math.min(1, 2 * (v - lo) / (hi - lo || 1) - 1));
  const a = Math.round(255 * (1 - Math.abs(t)));
  return t < 0 ? `rgb(${a},${Math.round(a + (255 - a) * 0.35)},255)` : `rgb(255,${a},${a})`;
}

// ---- shared by the search and fusion renderers (search.js, fusion.js)

// Ten series colours (Tableau 10), for stacks of up to ten components
// (mac, each on-chip level, dram, network_vector).
COLORS.push("#b07aa1", "#ff9da7", "#9c755f", "#bab0ac");

// Throws unless the object d (what names it in the message) has every
// member named: the renderer's side of the data contract, so that missing
// data is an error on the page, not a half-drawn chart.
function need(d, members, what) {
  if (!d || typeof d !== "object") throw new Error(`${what}: no data`);
  const missing = members.filter((m) => d[m] === undefined || d[m] === null);
  if (missing.length) throw new Error(`${what}: no ${missing.join(", ")} in the data`);
}

// A scale fitting values onto [a, b] with a margin: logarithmic when they
// span more than two decades, else linear (from zero when zero is asked).
function fitScale(values, a, b, fromZero) {
  const v = values.filter((x) => isFinite(x));
  const pos = v.filter((x) => x > 0);
  if (spansDecades(v)) return scale(Math.min(...pos) / 1.6, Math.max(...pos) * 1.6, a, b, true);
  if (!v.length) return scale(0, 1, a, b, false);
  const hi = Math.max(...v), lo = fromZero ? Math.min(0, ...v) : Math.min(...v);
  const pad = (hi - lo) * 0.08 || Math.abs(hi) * 0.1 || 1;
  // Non-negative values keep a non-negative axis.
  const start = lo === 0 ? 0 : lo >= 0 ? Math.max(0, lo - pad) : lo - pad;
  return scale(start, hi + pad, a, b, false);
}

// A sequential colour (viridis) for t in [0, 1]: dark blue (0) to yellow (1).
function ramp(t) {
  const stops = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]];
  const u = Math.max(0, Math.min(1, isFinite(t) ? t : 0)) * (stops.length - 1);
  const i = Math.min(stops.length - 2, Math.floor(u)), f = u - i;
  const c = stops[i].map((v, k) => Math.round(v + (stops[i + 1][k] - v) * f));
  return `rgb(${c[0]},${c[1]},${c[2]})`;
}

// A line through points {x, y, title} in order, one circle of class cls
// per point (its title on hover); axes fitted to the values.
function lineChart(parent, id, title, pts, xLabel, yLabel, unit, cls) {
  const width = 640, height = 260;
  const x = fitScale(pts.map((p) => p.x), 70, width - 16, true);
  const y = fitScale(pts.map((p) => p.y), height - 36, 12, false);
  const marks = frame(parent, id, title, width, height, x, y, xLabel, yLabel, unit);
  el("polyline", { class: "line", fill: "none", stroke: COLORS[0], "stroke-width": 2,
    points: pts.map((p) => `${x(p.x)},${y(p.y)}`).join(" ") }, marks);
  for (const p of pts) {
    const c = el("circle", { class: cls, cx: x(p.x), cy: y(p.y), r: 4, fill: COLORS[0] }, marks);
    el("title", {}, c, p.title);
  }
  return marks;
}
