// search.js -- a hardware search (kind "search": `search --report`,
// `accelsearch report RUN`): the Pareto front of latency against energy
// with every feasible candidate, area as colour, the chosen design, the
// baseline and the fixed designs marked; the hypervolume against
// evaluations; the front's parameters as a sortable table; the infeasible
// candidates; the chosen design's aggregate metrics; then one fusion
// panel per workload (fusion.js) in a section "workload-<k>".

// A parameter's value as text: byte sizes with a unit, others as they are.
function searchParam(name, v) {
  return /_bytes$/.test(name) && typeof v === "number" ? si(v, "B") : String(v);
}

// An area in mm² (si's prefixes would make "mmm²" of 0.7 mm²).
function searchArea(v) {
  return isFinite(v) ? `${+v.toPrecision(3)} mm²` : "-";
}

// A design's parameters as text: "pe_x 14, pe_y 12, rf_bytes 520 B, ...".
function searchParams(parameters, params) {
  return parameters.map((p) => `${p} ${searchParam(p, params[p])}`).join(", ");
}

// The hover text of a design: its metrics, then its parameters.
function searchDesignText(label, m, params, parameters) {
  let s = `${label}\nlatency ${si(m.latency_s, "s")}, energy ${si(m.energy_pJ * 1e-12, "J")}, ` +
    `area ${searchArea(m.area_mm2)}, power ${si(m.power_W, "W")}, EDP ${si(m.edp, "J·s")}, ` +
    `perf/TDP ${si(m.perf_per_tdp, "")}`;
  if (params) s += "\n" + searchParams(parameters, params);
  return s;
}

// The label of candidate c (its iteration and slot in the batch).
function searchName(c) {
  if (c.iteration < 0) return "reference design (baseline)";
  return `iteration ${c.iteration}, slot ${c.slot}`;
}

// The heading and facts of the run.
function searchSummary(parent, d) {
  const feasible = d.candidates.filter((c) => c.feasible).length;
  const rounds = d.sh_rounds > 1 ? `, ${d.sh_rounds} successive-halving rounds` : "";
  const workloads = d.workloads.map((w) => w.model + (w.validation ? " (validation)" : ""));
  html("h1", {}, parent, `Search on the ${d.space} space` + (d.run_id ? ` (run ${d.run_id})` : ""));
  const dl = html("dl", { class: "totals" }, parent);
  for (const [k, v] of [["algorithm", `${d.algo}, fusion ${d.fusion}, seed ${d.seed}`],
    ["budget", `${d.budget} candidates${rounds}`],
    ["objectives", d.objectives.join(", ")],
    ["candidates", `${d.candidates.length} evaluated, ${feasible} feasible, ` +
      `${d.candidates.filter((c) => c.front).length} on the Pareto front`],
    ["workloads", workloads.length ? `${workloads.join(", ")} (${d.aggregate})` : "-"]]) {
    html("dt", {}, dl, k);
    html("dd", {}, dl, v);
  }
}

// The points of the latency-energy plane that no other point beats in
// both, by increasing latency: the staircase joining the front.
function searchStaircase(pts) {
  const sorted = pts.slice().sort((a, b) => a.x - b.x || a.y - b.y);
  const out = [];
  for (const p of sorted) if (!out.length || p.y < out[out.length - 1].y) out.push(p);
  return out;
}

// One marked symbol (shape: circle, ring, square, diamond, triangle) of
// class cls at (cx, cy) with its hover text.
function searchSymbol(parent, shape, cls, cx, cy, r, fill, title) {
  const common = { class: cls, fill: fill, stroke: "#111", "stroke-width": 1.5 };
  let e;
  if (shape === "circle" || shape === "ring")
    e = el("circle", Object.assign(common, { cx, cy, r, fill: shape === "ring" ? "none" : fill,
      "stroke-width": shape === "ring" ? 2.5 : 1 }), parent);
  else if (shape === "square")
    e = el("rect", Object.assign(common, { x: cx - r, y: cy - r, width: 2 * r, height: 2 * r,
      fill: "none", "stroke-width": 2 }), parent);
  else if (shape === "diamond")
    e = el("polygon", Object.assign(common, {
      points: `${cx},${cy - r} ${cx + r},${cy} ${cx},${cy + r} ${cx - r},${cy}` }), parent);
  else
    e = el("polygon", Object.assign(common, {
      points: `${cx},${cy - r} ${cx + r},${cy + r * 0.8} ${cx - r},${cy + r * 0.8}` }), parent);
  if (title) el("title", {}, e, title);
  return e;
}

// The legend of the Pareto chart's symbols, each drawn as in the chart.
function searchParetoLegend(parent, fixedNames) {
  const box = html("div", { class: "legend" }, parent);
  const items = [["circle", "#aaa", "feasible candidate"],
    ["circle", ramp(0.6), "Pareto front (colour: area)"],
    ["line", "", "front in latency and energy"], ["ring", "", "chosen design"],
    ["square", "", "baseline (the space's reference design)"]];
  if (fixedNames.length)
    items.push(["diamond", "#e15759", `fixed design (${fixedNames.join(", ")})`]);
  for (const [shape, fill, label] of items) {
    const item = html("span", { class: "legend-item" }, box);
    const svg = el("svg", { width: 16, height: 14, class: "legend-symbol" }, item);
    if (shape === "line") el("path", { d: "M1 3 H8 V11 H15", fill: "none", stroke: "#333" }, svg);
    else searchSymbol(svg, shape, "legend-mark", 8, 7, shape === "circle" ? 4 : 5, fill);
    item.appendChild(document.createTextNode(" " + label));
  }
}

// The colour scale of area: a vertical bar with its end values, at x0.
function searchAreaScale(svg, x0, top, bottom, area) {
  const id = "area-gradient";
  const grad = el("linearGradient", { id, x1: 0, y1: 1, x2: 0, y2: 0 }, el("defs", {}, svg));
  for (let i = 0; i <= 4; i++) el("stop", { offset: i / 4, "stop-color": ramp(i / 4) }, grad);
  const g = el("g", { class: "colour-scale" }, svg);
  el("rect", { x: x0, y: top, width: 12, height: bottom - top, fill: `url(#${id})`,
    stroke: "#999" }, g);
  const mid = area.log ? Math.sqrt(area.lo * area.hi) : (area.lo + area.hi) / 2;
  for (const v of [area.lo, mid, area.hi]) {
    const y = bottom - area(v) * (bottom - top) + 4;
    el("text", { x: x0 + 16, y, "font-size": 11 }, g, searchArea(v));
  }
  el("text", { x: x0, y: top - 6, "font-size": 11 }, g, "area");
}

// The Pareto chart: latency against energy; every feasible candidate grey
// (class candidate), the front over it coloured by area (front-point) and
// joined as a staircase, the chosen design ringed (chosen), the baseline
// squared (baseline), each fixed design a diamond (fixed-design).
function searchPareto(parent, d) {
  const feasible = d.candidates.filter((c) => c.feasible && c.metrics);
  const fixed = d.fixed_designs.filter((f) => f.feasible && f.metrics);
  const all = feasible.map((c) => c.metrics).concat(fixed.map((f) => f.metrics));
  const width = 740, height = 380, right = width - 110;
  const x = fitScale(all.map((m) => m.latency_s), 70, right, false);
  const y = fitScale(all.map((m) => m.energy_pJ * 1e-12), height - 36, 12, false);
  const marks = frame(parent, "pareto",
    "Pareto front: energy against latency (hover a point for its design)", width, height, x, y,
    "latency per inference", "energy per inference", { x: "s", y: "J" });
  const areas = feasible.map((c) => c.metrics.area_mm2);
  const log = spansDecades(areas);
  const area = scale(Math.min(...areas), Math.max(...areas), 0, 1, log);
  const color = (a) => ramp(area(a));
  if (areas.length) searchAreaScale(marks.ownerSVGElement, right + 24, 30, height - 60, area);
  const at = (m) => [x(m.latency_s), y(m.energy_pJ * 1e-12)];
  const text = (label, c) => searchDesignText(label, c.metrics, c.params, d.parameters) +
    `\n${c.rounds} rounds, ${c.sw_budget} fusion plans`;
  for (const c of feasible)
    searchSymbol(marks, "circle", "candidate", ...at(c.metrics), 3.5, "#bbb",
      text(searchName(c), c));
  const front = feasible.filter((c) => c.front);
  const stairs = searchStaircase(front.map((c) => ({ x: at(c.metrics)[0], y: at(c.metrics)[1] })));
  if (stairs.length > 1)
    el("path", { class: "staircase", fill: "none", stroke: "#333", "stroke-width": 1.2,
      d: "M" + stairs.map((p, i) => (i ? `H${p.x} V${p.y}` : `${p.x} ${p.y}`)).join(" ") }, marks);
  for (const c of front)
    searchSymbol(marks, "circle", "front-point", ...at(c.metrics), 5, color(c.metrics.area_mm2),
      text("Pareto front: " + searchName(c), c));
  searchMark(marks, d, d.baseline, "square", "baseline", "baseline (reference design)", at, text);
  searchMark(marks, d, d.chosen, "ring", "chosen", "chosen design", at, text);
  for (const f of fixed) {
    searchSymbol(marks, "diamond", "fixed-design", ...at(f.metrics), 6, "#e15759",
      searchDesignText(`fixed design ${f.name}`, f.metrics));
    const [fx, fy] = at(f.metrics);
    el("text", { x: fx + 9, y: fy + 4, "font-size": 11 }, marks, f.name);
  }
  searchParetoLegend(parent, fixed.map((f) => f.name));
}

// The mark of candidate index i (chosen or baseline) when it is feasible.
function searchMark(marks, d, i, shape, cls, label, at, text) {
  const c = d.candidates[i];
  if (!(i >= 0) || !c || !c.feasible || !c.metrics) return;
  searchSymbol(marks, shape, cls, ...at(c.metrics), 9, "none",
    text(`${label}: ${searchName(c)}`, c));
}

// The hypervolume of the front after each iteration against the
// evaluations spent (one point of class hv-point per curve entry).
function searchHypervolume(parent, d) {
  if (!d.curve.length) return;
  const pts = d.curve.map((p) => ({ x: p.evaluations, y: p.hypervolume,
    title: `${p.iteration < 0 ? "reference design" : "after iteration " + p.iteration}: ` +
      `${p.evaluations} evaluations, hypervolume ${p.hypervolume.toPrecision(4)}` }));
  const xLabel = d.sh_rounds > 1 ? "evaluations (each successive-halving round of a " +
    `candidate counts; ${d.sh_rounds} rounds)` : "evaluations";
  lineChart(parent, "hypervolume", "Hypervolume of the front against evaluations", pts, xLabel,
    "hypervolume", { x: "", y: "" }, "hv-point");
}

// The columns of the front table: [header, value of a candidate, text].
function searchColumns(d) {
  const metric = (h, k, f) => [h, (c) => c.metrics[k], (c) => f(c.metrics[k])];
  const mark = (c) => (c === d.candidates[d.chosen] ? "★ " : "");
  return [["design", (c) => c.iteration * 1000 + c.slot,
    (c) => mark(c) + (c.iteration < 0 ? "reference" : `${c.iteration}.${c.slot}`)],
  metric("latency", "latency_s", (v) => si(v, "s")),
  metric("energy", "energy_pJ", (v) => si(v * 1e-12, "J")),
  metric("area", "area_mm2", searchArea),
  metric("power", "power_W", (v) => si(v, "W")),
  metric("EDP", "edp", (v) => si(v, "J·s")),
  metric("perf/TDP", "perf_per_tdp", (v) => si(v, ""))]
    .concat(d.parameters.map((p) => [p, (c) => c.params[p], (c) => searchParam(p, c.params[p])]));
}

// The front's designs and parameters as a table (id front-table, a row
// of class front-row per design); a click on a header sorts by it, a
// second click the other way.
function searchFrontTable(parent, d) {
  const front = d.candidates.filter((c) => c.front && c.metrics);
  const cols = searchColumns(d);
  const box = html("figure", { class: "table" }, parent);
  html("figcaption", {}, box,
    "The Pareto front's designs (design: iteration.slot; ★ chosen; click a header to sort)");
  const t = html("table", { id: "front-table" }, box);
  const head = html("tr", {}, t);
  const rows = front.map((c) => {
    const tr = html("tr", { class: "front-row" });
    for (const [, , show] of cols) html("td", {}, tr, show(c));
    return { c, tr };
  });
  let by = -1, dir = 1;
  cols.forEach(([h, value], k) => {
    const th = html("th", { class: "sortable", title: "sort by " + h }, head, h);
    th.addEventListener("click", () => {
      dir = by === k ? -dir : 1;
      by = k;
      searchSort(t, rows, value, dir);
      head.querySelectorAll("th").forEach((e, i) =>
        (e.dataset.sorted = i !== k ? "" : dir > 0 ? "up" : "down"));
    });
  });
  searchSort(t, rows, cols[1][1], 1);
}

// Puts the rows into table t ordered by value (numbers, else text), dir.
function searchSort(t, rows, value, dir) {
  const cmp = (a, b) => (typeof a === "number" && typeof b === "number" ? a - b
    : String(a).localeCompare(String(b)));
  rows.sort((a, b) => dir * cmp(value(a.c), value(b.c)));
  for (const r of rows) t.appendChild(r.tr);
}

// The infeasible candidates (and fixed designs): counted, listed with
// their reasons in a collapsed <details>.
function searchInfeasible(parent, d) {
  const bad = d.candidates.filter((c) => !c.feasible)
    .map((c) => [searchName(c), c.params, c.reason])
    .concat(d.fixed_designs.filter((f) => !f.feasible)
      .map((f) => [`fixed design ${f.name}`, null, f.reason]));
  const candidates = d.candidates.filter((c) => !c.feasible).length;
  const fixed = bad.length - candidates;
  const box = html("details", { id: "infeasible" }, parent);
  html("summary", {}, box, `${candidates} infeasible candidate${candidates === 1 ? "" : "s"}` +
    (fixed ? `, ${fixed} infeasible fixed design${fixed === 1 ? "" : "s"}` : "") +
    (bad.length ? " (click for the reasons)" : ""));
  if (!bad.length) return;
  const t = html("table", {}, box);
  const head = html("tr", {}, t);
  for (const h of ["design", "parameters", "why infeasible"]) html("th", {}, head, h);
  for (const [name, params, reason] of bad) {
    const tr = html("tr", { class: "infeasible-row" }, t);
    html("td", {}, tr, name);
    html("td", {}, tr, params ? searchParams(d.parameters, params) : "-");
    html("td", {}, tr, reason || "-");
  }
}

// The chosen design: its parameters and its metrics aggregated over the
// workloads as d.aggregate says, beside the baseline and fixed designs.
function searchAggregate(parent, d) {
  const box = html("section", { id: "aggregate" }, parent);
  const c = d.candidates[d.chosen];
  if (!(d.chosen >= 0) || !c || !c.metrics) {
    html("h2", {}, box, "No feasible design was found");
    return;
  }
  const over = d.workloads.filter((w) => !w.validation).length;
  html("h2", {}, box, `Chosen design (${searchName(c)})` +
    (over > 1 ? `: ${d.aggregate} over ${over} workloads` : ""));
  html("p", { class: "facts" }, box, searchParams(d.parameters, c.params));
  const others = [["chosen", c.metrics]];
  const base = d.candidates[d.baseline];
  if (d.baseline >= 0 && base && base.metrics && d.baseline !== d.chosen)
    others.push(["baseline", base.metrics]);
  for (const f of d.fixed_designs) if (f.metrics) others.push([f.name, f.metrics]);
  if (others.length > 1)
    html("p", { class: "facts" }, box, "In brackets: the chosen design's value over the column's.");
  const t = html("table", { class: "totals" }, box);
  const head = html("tr", {}, t);
  html("th", {}, head, "");
  for (const [name] of others) html("th", {}, head, name);
  for (const [label, key, f] of [["latency", "latency_s", (v) => si(v, "s")],
    ["energy", "energy_pJ", (v) => si(v * 1e-12, "J")], ["area", "area_mm2", searchArea],
    ["power", "power_W", (v) => si(v, "W")], ["EDP", "edp", (v) => si(v, "J·s")],
    ["perf/TDP", "perf_per_tdp", (v) => si(v, "")]]) {
    const tr = html("tr", {}, t);
    html("th", {}, tr, label);
    for (const [, m] of others)
      html("td", {}, tr, f(m[key]) +
        (m === c.metrics ? "" : ` (${fusionRatio(c.metrics[key], m[key])})`));
  }
}

// One section per workload of the chosen design (id workload-<k>), each
// the fusion panel with prefix w<k>-; a failing panel is reported and the
// others still drawn.
function searchWorkloads(parent, d) {
  d.workloads.forEach((w, k) => {
    const box = html("section", { id: `workload-${k}`, class: "workload" }, parent);
    html("h2", {}, box, `Workload ${k}: ${w.model}` + (w.validation ? " (validation)" : "") +
      ` on the chosen design (${w.arch})`);
    try {
      RENDERERS.fusion(box, w, `w${k}-`);
    } catch (e) {
      fail(`workload ${k}: ${e && e.message ? e.message : e}`);
    }
  });
}

// Everything of a search.
function search(root, d) {
  need(d, ["space", "algo", "objectives", "parameters", "candidates", "chosen", "baseline",
    "fixed_designs", "curve", "workloads"], "search");
  d.candidates.forEach((c, i) => c.feasible && need(c, ["params", "metrics"], `candidate ${i}`));
  searchSummary(root, d);
  searchPareto(root, d);
  searchHypervolume(root, d);
  searchFrontTable(root, d);
  searchInfeasible(root, d);
  searchAggregate(root, d);
  searchWorkloads(root, d);
}
RENDERERS.search = search;
STYLE.push(`th.sortable{cursor:pointer}th.sortable:hover{background:#f4f6fa}
th[data-sorted=up]::after{content:" ▲"}th[data-sorted=down]::after{content:" ▼"}
section.workload{border-top:2px solid #ccc;margin-top:28px}details{margin:12px 0}
.legend-symbol{vertical-align:middle}`);
