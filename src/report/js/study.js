// study.js -- an across-stack perturbation study (kind "study": `study
// --report`, `study show --report`; the data is study_to_json's, see
// docs/study.md): the grid and its invalid cells, DLAS's observations with
// their verdicts, the latency of every cell, the speedup each entry of an
// axis gives over the axis's reference entry, the summary tables (DLAS
// Tables 3, 4, 6), the fractions of expected speedup and the rank
// correlations as heat maps.
const STUDY_AXES = ["model", "compression", "algorithm", "format", "software", "hardware"];

// The labels of each axis's entries as the cells name them (a compression
// by its column label, a format by its name).
function studyLabels(d) {
  const out = {};
  for (const a of STUDY_AXES)
    out[a] = d.axes[a].map((e) => (typeof e === "string" ? e : a === "compression" ? e.label :
      e.name));
  return out;
}

// A cell's key: its labels on every axis, axis `axis` replaced by `label`
// when given (the key of the cell that differs from it on that axis only).
function studyKey(c, axis, label) {
  return STUDY_AXES.map((a) => (a === axis ? label : c[a])).join("\u0001");
}

// A cell's coordinates, model first.
function studyCellName(c) {
  return STUDY_AXES.map((a) => c[a]).join(" / ");
}

// A cell's coordinates and figures, one line each, for its hover.
function studyCellTitle(c) {
  return `${studyCellName(c)}\nlatency ${si(c.latency_s, "s")}, energy ${si(c.energy_J, "J")}, ` +
    `EDP ${si(c.edp_Js, "J·s")}\nMACs ${si(c.macs, "MAC")} (effective ` +
    `${si(c.effective_macs, "MAC")}), params ${si(c.params, "")} (non-zero ` +
    `${si(c.nonzero_params, "")}), weights ${si(c.weight_bytes, "B")}, DRAM ` +
    `${si(c.dram_bytes, "B")}` + (c.accuracy === null ? "" : `, top-1 ${(100 * c.accuracy)
      .toFixed(1)} %`);
}

// The heading, the run's figures and the grid's axes with their entries.
function studyHeader(root, d, labels) {
  const s = d.study, valid = d.cells.filter((c) => c.valid).length;
  html("h1", {}, root, `Study ${s.name}`);
  const dl = html("dl", { class: "totals" }, root);
  for (const [k, v] of [["cells", `${s.done} of ${s.cells} done` +
    (s.interrupted ? " (interrupted)" : "")], ["valid cells", String(valid)],
  ["invalid cells", String(s.done - valid) + (s.done < s.cells ? ` (and ${s.cells - s.done} ` +
    "not run)" : "")], ["seed", String(s.seed)], ["batch", String(s.batch)],
  ["run", s.run_id ? String(s.run_id) : "not stored"]]) {
    html("dt", {}, dl, k);
    html("dd", {}, dl, v);
  }
  const box = html("figure", { class: "table", id: "study-grid" }, root);
  html("figcaption", {}, box, "The grid: one cell per entry of each axis " +
    `(${STUDY_AXES.map((a) => labels[a].length).join(" x ")} = ${s.cells} cells)`);
  const t = html("table", {}, box);
  const head = html("tr", {}, t);
  for (const h of ["axis", "entries", "labels"]) html("th", {}, head, h);
  for (const a of STUDY_AXES) {
    const tr = html("tr", { class: "axis-row" }, t);
    for (const v of [a, labels[a].length, labels[a].join(", ")]) html("td", {}, tr, String(v));
  }
}

// The invalid cells counted per reason, collapsed.
function studyInvalid(root, d) {
  const n = d.invalid.reduce((a, r) => a + r.cells, 0);
  const box = html("details", { id: "study-invalid" }, root);
  html("summary", {}, box, n ? `${n} invalid cells, ${d.invalid.length} ` +
    (d.invalid.length > 1 ? "reasons" : "reason") : "every cell is valid");
  if (!n) return;
  const t = html("table", {}, box);
  const head = html("tr", {}, t);
  for (const h of ["cells", "reason"]) html("th", {}, head, h);
  for (const r of d.invalid) {
    const tr = html("tr", { class: "invalid-row" }, t);
    html("td", {}, tr, String(r.cells));
    html("td", { class: "text" }, tr, r.reason);
  }
}

// DLAS's observations with the grid's verdict and the numbers behind it.
function studyObservations(root, d) {
  const box = html("figure", { class: "table", id: "study-observations" }, root);
  html("figcaption", {}, box, "DLAS's observations (section 6) on this grid");
  const t = html("table", {}, box);
  const head = html("tr", {}, t);
  for (const h of ["", "claim", "verdict", "evidence"]) html("th", {}, head, h);
  for (const o of d.summary.observations) {
    const tr = html("tr", { class: "observation" }, t);
    html("td", {}, tr, o.id);
    html("td", { class: "text" }, tr, o.claim);
    html("td", { class: "verdict v" + o.verdict }, tr, o.verdict_name);
    html("td", { class: "text" }, tr, o.evidence);
  }
}

// A strip chart of points in bands.  o.bands (names along x) are each
// split in one slot per o.colors (names; slot i has colour
// COLORS[o.hue[i]]); o.groups, when given, names each band's group, written
// once under consecutive bands of a group.  A point {band, color, v,
// title} sits in its slot, spread evenly with the others of the slot; its
// class is o.cls.  y is logarithmic when the values span decades (a
// decade for o.ratio, ratios around o.unity, where a dashed line is drawn).
function studyStrip(parent, id, title, o) {
  if (!o.points.length) return;
  const slot = o.bands.length * o.colors.length, slotW = Math.max(6, Math.min(40, 1100 / slot));
  const width = Math.max(560, 80 + slot * slotW), bandW = (width - 80) / o.bands.length;
  const turn = Math.max(...o.bands.map((b) => b.length)) * 6 > bandW;
  const bottom = (turn ? 70 : 24) + (o.groups ? 16 : 0), height = 280 + bottom;
  const vs = o.points.map((p) => p.v).concat(o.unity ? [o.unity] : []);
  const log = o.ratio ? Math.max(...vs) / Math.min(...vs) > 10 : spansDecades(vs);
  const y = scale(log ? Math.min(...vs) / 1.5 : Math.min(0, ...vs), Math.max(...vs) *
    (log ? 1.5 : 1.1), height - bottom, 12, log);
  const x = scale(0, slot, 70, width - 10, false);
  x.ticks = false;
  const marks = frame(parent, id, title, width, height, x, y, "", o.yLabel, { x: "", y: o.unit });
  studyBandLabels(marks.parentNode.querySelector(".axes"), o, x, y, turn);
  if (o.unity)
    el("line", { class: "unity", x1: x(0), x2: x(slot), y1: y(o.unity), y2: y(o.unity),
      stroke: "#222", "stroke-dasharray": "4 3" }, marks);
  const n = {}, k = {};
  for (const p of o.points) n[p.band + "," + p.color] = (n[p.band + "," + p.color] || 0) + 1;
  for (const p of o.points) {
    const s = p.band + "," + p.color, at = k[s] = (k[s] || 0) + 1;
    const cx = x(p.band * o.colors.length + p.color + (at - 0.5) / n[s] * 0.8 + 0.1);
    const c = el("circle", { class: o.cls, cx: cx.toFixed(1), cy: y(p.v).toFixed(1), r: 3,
      fill: COLORS[o.hue[p.color] % COLORS.length], "fill-opacity": 0.75 }, marks);
    el("title", {}, c, p.title);
  }
  studyLegend(parent.lastChild, o.colors, o.hue);
}

// The band names under a strip chart (turned when they do not fit), the
// lines between bands (darker between groups) and the group names.
function studyBandLabels(axes, o, x, y, turn) {
  const m = o.colors.length, base = y(y.lo);
  let from = 0;
  o.bands.forEach((b, i) => {
    const x0 = x(i * m), mid = x((i + 0.5) * m), newGroup = o.groups && i &&
      o.groups[i] !== o.groups[i - 1];
    if (i) el("line", { x1: x0, x2: x0, y1: base + (newGroup ? 30 : 0), y2: y(y.hi),
      stroke: newGroup ? "#666" : "#ccc" }, axes);
    el("text", turn ? { x: mid, y: base + 12, "text-anchor": "end", "font-size": 10,
      transform: `rotate(-40 ${mid} ${base + 12})` } : { x: mid, y: base + 14,
      "text-anchor": "middle", "font-size": 10 }, axes, b);
    if (o.groups && (i === o.bands.length - 1 || o.groups[i + 1] !== o.groups[i])) {
      el("text", { x: (x(from * m) + x((i + 1) * m)) / 2, y: y(y.lo) + (turn ? 80 : 28),
        "text-anchor": "middle", "font-size": 11, "font-weight": 600 }, axes, o.groups[i]);
      from = i + 1;
    }
  });
}

// A legend of names with colours COLORS[hue[i]].
function studyLegend(parent, names, hue) {
  const box = html("div", { class: "legend" }, parent);
  names.forEach((n, i) => {
    const item = html("span", { class: "legend-item" }, box);
    html("span", { class: "swatch", style: `background:${COLORS[hue[i] % COLORS.length]}` }, item);
    item.appendChild(document.createTextNode(n));
  });
}

// The latency of every valid cell, in bands of hardware x model,
// coloured by compression.
function studyLatency(root, d, prefix, labels) {
  const bands = [], groups = [], index = {};
  for (const h of labels.hardware)
    for (const m of labels.model) {
      index[h + "\u0001" + m] = bands.length;
      bands.push(m);
      groups.push(h);
    }
  const points = d.cells.filter((c) => c.valid).map((c) => ({
    band: index[c.hardware + "\u0001" + c.model], color: labels.compression.indexOf(c.compression),
    v: c.latency_s, title: studyCellTitle(c) }));
  studyStrip(root, prefix + "latency", "Latency of every cell, per hardware and model, " +
    "coloured by compression", { bands, groups, colors: labels.compression, hue:
    labels.compression.map((c, i) => i), points, unit: "s", yLabel: "latency", cls: "cell" });
}

// The reference entry of an axis: the baseline (the first entry of kind
// none) for compressions, the first entry otherwise.
function studyReference(d, axis, labels) {
  if (axis === "compression") {
    const i = d.axes.compression.findIndex((c) => c.kind === "none");
    if (i >= 0) return labels.compression[i];
  }
  return labels[axis][0];
}

// For an axis of more than one entry: the speedup of every valid cell over
// the cell that differs only by taking the axis's reference entry, in
// bands of hardware (of model for the hardware axis), coloured by entry.
function studyAxisSpeedup(root, d, prefix, labels, axis) {
  if (labels[axis].length < 2) return;
  const ref = studyReference(d, axis, labels), by = axis === "hardware" ? "model" : "hardware";
  const others = labels[axis].filter((l) => l !== ref);
  const latency = new Map();
  for (const c of d.cells) if (c.valid) latency.set(studyKey(c), c.latency_s);
  const points = [];
  for (const c of d.cells) {
    const base = latency.get(studyKey(c, axis, ref));
    if (!c.valid || c[axis] === ref || !(base > 0) || !(c.latency_s > 0)) continue;
    points.push({ band: labels[by].indexOf(c[by]), color: others.indexOf(c[axis]),
      v: base / c.latency_s, title: `x${(base / c.latency_s).toFixed(2)} over ${ref} ` +
        `(${si(base, "s")})\n${studyCellName(c)}: ${si(c.latency_s, "s")}` });
  }
  studyStrip(root, prefix + "axis-" + axis, `Speedup of each ${axis} over ${ref} ` +
    `(the same cell otherwise), per ${by}`, { bands: labels[by], colors: others,
    hue: others.map((l) => labels[axis].indexOf(l)), points, unit: "x",
    yLabel: `speedup over ${ref}`, cls: "speedup", unity: 1, ratio: true });
}

// One summary table per dataset and software, in DLAS Table 3's columns.
function studySummaryTables(root, d, labels) {
  const rows = d.summary.rows, groups = [];
  for (const r of rows) {
    const g = `${r.dataset}, ${r.software}`;
    if (!groups.includes(g)) groups.push(g);
  }
  const box = html("div", { id: "study-summary" }, root);
  html("h2", {}, box, "Fastest combinations (DLAS Tables 3, 4 and 6)");
  for (const g of groups) studySummaryTable(box, g, rows.filter((r) =>
    `${r.dataset}, ${r.software}` === g), labels, d.axes.format.length > 1);
}

// The table of the summary rows of one dataset and software.
function studySummaryTable(parent, group, rows, labels, withFormat) {
  const box = html("figure", { class: "table summary" }, parent);
  html("figcaption", {}, box, group);
  const t = html("table", {}, box);
  const top = html("tr", {}, t);
  html("th", { colspan: 2 }, top, "");
  html("th", { colspan: labels.compression.length, class: "group" }, top, "Fastest algorithm");
  html("th", { colspan: labels.algorithm.length, class: "group" }, top, "Fastest compression");
  html("th", { colspan: 2 }, top, "");
  const head = html("tr", {}, t);
  for (const h of ["Platform", "Model"].concat(labels.compression, labels.algorithm,
    ["Overall fastest", "Latency"])) html("th", {}, head, h);
  for (const r of rows) {
    const tr = html("tr", { class: "summary-row" }, t), o = r.overall_fastest;
    const cells = [r.hardware, r.model]
      .concat(labels.compression.map((c) => r.fastest_algorithm[c] || "-"))
      .concat(labels.algorithm.map((a) => r.fastest_compression[a] || "-"))
      .concat(o ? [`${o.compression}+${o.algorithm}` + (withFormat ? ` (${o.format})` : ""),
        si(o.latency_s, "s")] : ["-", "-"]);
    cells.forEach((v, i) => html("td", { class: i < cells.length - 1 ? "text" : "" }, tr, v));
  }
}

// The speedup each compression achieved against the speedup its MAC or
// byte reduction promised, one point per compression, hardware and
// software, with the lines achieved = expected and = the reached fraction.
function studyExpected(root, d, prefix, labels) {
  const sp = d.summary.speedups.filter((s) => s.speedup > 0 && s.expected > 0);
  if (!sp.length) return;
  const vs = sp.flatMap((s) => [s.speedup, s.expected]), log = spansDecades(vs);
  const lo = log ? Math.min(...vs, 1) / 1.3 : 0, hi = Math.max(...vs) * 1.1;
  const x = scale(lo, hi, 70, 560, log), y = scale(lo, hi, 300 - 36, 12, log);
  const marks = frame(root, prefix + "expected", "Achieved against expected speedup, per " +
    "compression, hardware and software (geometric means over models and algorithms)", 580,
  300, x, y, "expected speedup (MAC or byte reduction)", "achieved speedup", { x: "x", y: "x" });
  const f = d.summary.reached_fraction;
  for (const [k, cls] of [[1, "expected-line"], [f, "reached-line"]])
    el("line", { class: cls, x1: x(lo), y1: y(lo * k), x2: x(hi), y2: y(hi * k), stroke: "#222",
      "stroke-dasharray": k === 1 ? "" : "4 3" }, marks);
  const names = labels.compression.filter((c) => sp.some((s) => s.compression === c));
  for (const s of sp) {
    const c = el("circle", { class: "expected", cx: x(s.expected), cy: y(s.speedup), r: 5,
      fill: COLORS[labels.compression.indexOf(s.compression) % COLORS.length],
      "fill-opacity": 0.8 }, marks);
    el("title", {}, c, `${s.compression} on ${s.hardware}, ${s.software}: x${s.speedup
      .toFixed(2)} of x${s.expected.toFixed(2)} expected (${(100 * s.fraction).toFixed(1)} %), ` +
      `${s.reached} of ${s.pairs} pairs reached ${(100 * f).toFixed(0)} %`);
  }
  studyLegend(root.lastChild, names, names.map((c) => labels.compression.indexOf(c)));
  studyExpectedTable(root, sp, f);
}

// The fractions of expected speedup as a table.
function studyExpectedTable(root, sp, f) {
  const box = html("figure", { class: "table", id: "study-speedups" }, root);
  html("figcaption", {}, box, `Fraction of expected speedup (reached: at least ` +
    `${(100 * f).toFixed(0)} % of it)`);
  const t = html("table", {}, box);
  const head = html("tr", {}, t);
  for (const h of ["compression", "hardware", "software", "pairs", "speedup", "expected",
    "fraction", "reached"]) html("th", {}, head, h);
  for (const s of sp) {
    const tr = html("tr", { class: "speedup-row" }, t);
    [s.compression, s.hardware, s.software, s.pairs, `x${s.speedup.toFixed(2)}`,
      `x${s.expected.toFixed(2)}`, si(100 * s.fraction, "%"), `${s.reached} of ${s.pairs}`]
      .forEach((v, i) => html("td", { class: i < 3 ? "text" : "" }, tr, String(v)));
  }
}

// The rank correlations as two heat maps (Spearman's rho, Kendall's tau):
// a row per pair of figures, a column per hardware and "all" (pooled).
function studyCorrelations(parent, d, prefix, labels) {
  const root = html("div", { class: "charts" }, parent), cs = d.summary.correlations;
  const rows = [...new Set(cs.map((c) => `${c.x} ~ ${c.y}`))];
  const cols = labels.hardware.concat(["all"]), strong = d.summary.strong_correlation;
  const find = (r, h) => cs.find((c) => `${c.x} ~ ${c.y}` === r && (c.hardware || "all") === h);
  const hover = (r, h, c) => `${r} on ${h}: rho ${studyFixed(c.spearman)}, tau ` +
    `${studyFixed(c.kendall)}, n ${c.n}` + (Math.abs(c.spearman) >= strong ? " (strong)" : "");
  for (const [key, name] of [["spearman", "Spearman's rho"], ["kendall", "Kendall's tau-b"]])
    if (rows.length)
      heatmap(root, prefix + key, `Rank correlation (${name}) per hardware` +
        (key === "spearman" ? `; |rho| >= ${strong} is strong` : ""), rows, cols, (r, h) => {
        const c = find(r, h);
        return c && c[key] !== null ? { v: c[key], title: hover(r, h, c) } : null;
      }, -1, 1, "corr");
  studyHardwareAgreement(root, d, prefix, labels);
}

// Whether the hardware designs rank the stack's variants alike: for each
// two designs, over the variants (model, compression, algorithm, format,
// software) valid on both, the rank correlation of their latencies --
// Spearman's rho above the diagonal, Kendall's tau-b below.  A low value
// means the best variant on one design is not the best on the other.
function studyHardwareAgreement(parent, d, prefix, labels) {
  const hw = labels.hardware;
  if (hw.length < 2) return;
  const by = hw.map(() => new Map());
  for (const c of d.cells)
    if (c.valid) by[hw.indexOf(c.hardware)].set(studyKey(c, "hardware", ""), c.latency_s);
  const pair = (i, j) => {
    const x = [], y = [];
    for (const [k, v] of by[i]) if (by[j].has(k)) { x.push(v); y.push(by[j].get(k)); }
    return { x, y };
  };
  heatmap(parent, prefix + "hardware-agreement", "Do the designs rank the variants alike? " +
    "Rank correlation of latency (rho above the diagonal, tau-b below)", hw, hw, (a, b) => {
    const i = hw.indexOf(a), j = hw.indexOf(b);
    if (i === j) return null;
    const p = pair(i, j), v = i < j ? studySpearman(p.x, p.y) : studyKendall(p.x, p.y);
    return { v: v, title: `${a} vs ${b}: ${i < j ? "Spearman's rho" : "Kendall's tau-b"} ` +
      `${studyFixed(v)} over ${p.x.length} variants valid on both` };
  }, -1, 1, "agreement");
}

// The mean ranks of a sample (ties share their mean rank), from 1.
function studyRanks(v) {
  const order = v.map((x, i) => i).sort((a, b) => v[a] - v[b]), r = new Array(v.length);
  for (let i = 0; i < order.length;) {
    let j = i;
    while (j + 1 < order.length && v[order[j + 1]] === v[order[i]]) j++;
    for (let k = i; k <= j; k++) r[order[k]] = (i + j) / 2 + 1;
    i = j + 1;
  }
  return r;
}

// Spearman's rho: Pearson's correlation of the mean ranks (NaN when fewer
// than two values or a sample is constant), as study_spearman.
function studySpearman(x, y) {
  const rx = studyRanks(x), ry = studyRanks(y), n = x.length, m = (n + 1) / 2;
  let sxy = 0, sxx = 0, syy = 0;
  for (let i = 0; i < n; i++) {
    sxy += (rx[i] - m) * (ry[i] - m);
    sxx += (rx[i] - m) ** 2;
    syy += (ry[i] - m) ** 2;
  }
  return n < 2 || !sxx || !syy ? NaN : sxy / Math.sqrt(sxx * syy);
}

// Kendall's tau-b: pairs tied in x or y leave the denominator (NaN when
// fewer than two values or a sample is constant), as study_kendall; by
// every pair, a few thousand values at most.
function studyKendall(x, y) {
  let s = 0, tx = 0, ty = 0, n0 = 0;
  for (let i = 0; i < x.length; i++)
    for (let j = i + 1; j < x.length; j++) {
      const a = Math.sign(x[i] - x[j]), b = Math.sign(y[i] - y[j]);
      n0++;
      s += a * b;
      tx += a === 0;
      ty += b === 0;
    }
  return !(n0 - tx) || !(n0 - ty) ? NaN : s / Math.sqrt((n0 - tx) * (n0 - ty));
}

// A correlation with two decimals, or "-" when there is none.
function studyFixed(v) {
  return v === null || !isFinite(v) ? "-" : v.toFixed(2);
}

// The whole study report.
function studyReport(parent, d, prefix) {
  const labels = studyLabels(d), root = html("div", { class: "study" }, parent);
  studyHeader(root, d, labels);
  studyInvalid(root, d);
  studyObservations(root, d);
  studyLatency(root, d, prefix, labels);
  for (const a of ["compression", "algorithm", "format", "software", "hardware"])
    studyAxisSpeedup(root, d, prefix, labels, a);
  studySummaryTables(root, d, labels);
  studyExpected(root, d, prefix, labels);
  studyCorrelations(root, d, prefix, labels);
}
RENDERERS.study = studyReport;
STYLE.push(`.study td.text,.study th{text-align:left}td.verdict{font-weight:600}td.v1{color:#2a7a2a}
td.v0{color:#b03030}td.v-1{color:#777}th.group{border-bottom:1px solid #999}
details{margin:12px 0}summary{cursor:pointer}div.charts{display:flex;flex-wrap:wrap;
gap:0 24px}`);
