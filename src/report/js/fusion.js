// fusion.js -- a fusion plan (kind "fusion": `fuse`, and each workload
// panel of a search report): the totals against the layer-by-layer plan,
// the fusion groups drawn over the layer sequence with their DRAM bytes,
// latency, energy by component and utilisation per group, a roofline of
// the groups, and the group table with each member's mapping as a loop
// nest on demand.  Chart ids take the panel prefix p: chart-<p>groups,
// chart-<p>latency, chart-<p>energy, chart-<p>utilisation,
// chart-<p>roofline.

// The groups as items of the shared charts (layerBars, roofline read
// .name, .kind, .macs, .dram_bytes, .latency_s).
function fusionItems(d) {
  return d.groups.map((g, k) => Object.assign({}, g, {
    name: `group ${k}`,
    kind: g.layers.length === 1 ? g.layers[0] : `${g.layers.length} layers: ${g.layers.join(", ")}`,
  }));
}

// A ratio to the layer-by-layer plan, as text ("0.97x"); empty without one.
function fusionRatio(value, base) {
  return base > 0 && isFinite(value) ? (value / base).toFixed(3) + "x" : "";
}

// The totals of the plan, beside the layer-by-layer plan's when given.
function fusionTotals(parent, d) {
  const t = d.totals, b = d.baseline;
  const rows = [["latency", "latency_s", (v) => si(v, "s")],
    ["energy", "energy_pJ", (v) => si(v * 1e-12, "J")],
    ["EDP", "edp_J_cycle", (v) => si(v, "J·cycle")],
    ["DRAM traffic", "dram_bytes", (v) => si(v, "B")],
    ["cycles", "cycles", (v) => si(v, "")],
    ["MACs", "macs", (v) => si(v, "MAC")],
    ["recomputed MACs", "recomputed_macs", (v) => si(v, "MAC")],
    ["utilisation", "utilization", (v) => si(100 * v, "%")]];
  const table = html("table", { class: "totals" }, parent);
  const head = html("tr", {}, table);
  for (const h of b ? ["", "fused", "layer by layer", "fused / layer by layer"] : ["", "fused"])
    html("th", {}, head, h);
  for (const [label, key, fmt] of rows) {
    if (t[key] === undefined) continue;
    const tr = html("tr", {}, table);
    html("th", {}, tr, label);
    html("td", {}, tr, fmt(t[key]));
    if (!b) continue;
    html("td", {}, tr, b[key] === undefined ? "-" : fmt(b[key]));
    html("td", {}, tr, fusionRatio(t[key], b[key]));
  }
}

// The heading and facts of the plan: model, design, algorithm, batch,
// weights, the number of groups and layers; then the totals.
function fusionSummary(parent, d, prefix) {
  if (!prefix) html("h1", {}, parent, `${d.model} on ${d.arch}: fusion`);
  const n = d.groups.reduce((s, g) => s + g.layers.length, 0);
  const facts = [`${d.groups.length} groups of ${n} layers`, `${d.layers.length} compute layers`];
  if (d.algorithm) facts.push(`fusion search: ${d.algorithm}`);
  if (d.batch !== undefined) facts.push(`batch ${d.batch}`);
  if (d.weights) facts.push(`weights ${d.weights}`);
  html("p", { class: "facts" }, parent, `${d.model} on ${d.arch}: ` + facts.join(", "));
  fusionTotals(parent, d);
}

// The hover text of group k.
function fusionGroupTitle(g, k) {
  const tile = g.tile ? `, tile ${g.tile.join("x")} (${g.tiles} tiles, halo ${g.halo})` : "";
  return `group ${k}: ${g.layers.join(", ")}\nDRAM ${si(g.dram_bytes, "B")}, ` +
    `on chip ${si(g.onchip_bytes, "B")}${tile}\nlatency ${si(g.latency_s, "s")}, ` +
    `energy ${si(g.energy_pJ * 1e-12, "J")}, ${si(g.macs, "MAC")}` +
    (g.recomputed_macs > 0 ? ` (${si(g.recomputed_macs, "MAC")} recomputed)` : "");
}

// The fusion groups over the layer sequence: x is the layers in execution
// order, each group a band spanning its members, as high as its DRAM
// bytes (labelled with them when wide enough); below, one tick per layer
// (dark: a compute layer).  A click on a
// band opens the group's mappings in the group table.
function fusionBands(parent, id, d, prefix) {
  const n = d.groups.reduce((s, g) => s + g.layers.length, 0);
  const width = Math.max(640, 80 + n * 10), height = 280;
  const x = scale(0, n, 70, width - 10, false);
  x.ticks = false;
  const y = fitScale(d.groups.map((g) => g.dram_bytes), height - 48, 12, true);
  const marks = frame(parent, id, "Fusion groups over the layer sequence, by DRAM traffic",
    width, height, x, y, "layers, in order (a band per fusion group; click for its mappings)",
    "DRAM traffic", { x: "", y: "B" });
  const compute = new Set(d.layers.map((l) => l.layer));
  let at = 0;
  d.groups.forEach((g, k) => {
    const top = y(Math.max(g.dram_bytes, y.lo)), bottom = y(y.lo);
    const wide = x(at + g.layers.length) - x(at);
    const band = el("rect", { class: "group", x: x(at), width: Math.max(1, wide - 1), y: top,
      height: Math.max(1, bottom - top), fill: COLORS[k % 2], "fill-opacity": 0.8 }, marks);
    el("title", {}, band, fusionGroupTitle(g, k));
    band.addEventListener("click", () => fusionOpen(prefix, k));
    if (wide >= 40)
      el("text", { class: "group-label", x: (x(at) + x(at + g.layers.length)) / 2, y: top - 3,
        "text-anchor": "middle", "font-size": 10 }, marks, si(g.dram_bytes, "B"));
    g.layers.forEach((name, i) => {
      const tick = el("rect", { class: "op", x: x(at + i) + 1, y: bottom + 3, height: 6,
        width: Math.max(1, x(1) - x(0) - 2), fill: compute.has(name) ? "#333" : "#bbb" }, marks);
      el("title", {}, tick, `${name} (group ${k})`);
    });
    at += g.layers.length;
  });
}

// Mapping text (levels separated by " | ", outermost first, each a name
// with its kept tensors then factors like P28, M2X) as a loop nest:
// temporal factors are for loops, spatial ones (X/Y) parallel_for.
function fusionLoopNest(mapping) {
  const lines = [];
  let depth = 0;
  for (const level of mapping.split(" | ")) {
    const [head, ...factors] = level.trim().split(/\s+/);
    lines.push("  ".repeat(depth) + head);
    for (const f of factors) {
      const m = /^([A-Z])(\d+)([XY]?)$/.exec(f);
      if (!m) { lines.push("  ".repeat(depth + 1) + f); continue; }
      const kind = m[3] ? `parallel_for (spatial ${m[3]})` : "for";
      lines.push("  ".repeat(++depth) + `${kind} ${m[1].toLowerCase()} in [0, ${m[2]})`);
    }
    depth++;
  }
  return lines.join("\n");
}

// The text shown for group k's members: each layer's problem, tiles,
// per-tile cost and loop nest; layers without MACs are named as such.
function fusionMembers(d, g, k) {
  const byName = new Map(d.layers.filter((l) => l.group === k).map((l) => [l.layer, l]));
  return g.layers.map((name) => {
    const l = byName.get(name);
    if (!l) return `${name}: no MACs (vector unit)`;
    const head = `${name}: ${l.problem}` + (l.padded ? ` (padded ${l.padded})` : "");
    if (!l.mapping) return head + "\n  (not mapped)";
    return head + `\n  ${l.tiles} tiles, each ${si(l.cycles, "cycles")}, ` +
      `${si(l.energy_pJ * 1e-12, "J")}\n` +
      fusionLoopNest(l.mapping).split("\n").map((s) => "  " + s).join("\n");
  }).join("\n\n");
}

// Opens (or closes) the mappings of group k of the panel prefix.
function fusionOpen(prefix, k) {
  const nest = document.getElementById(`${prefix}group-nest-${k}`);
  if (!nest) return;
  nest.toggleAttribute("hidden");
  if (!nest.hidden) nest.scrollIntoView({ block: "nearest" });
}

// The group table: one row (class group-row) per group; a click on a row
// shows its members' mappings as loop nests.
function fusionTable(parent, d, prefix) {
  const box = html("figure", { class: "table", id: `table-${prefix}groups` }, parent);
  html("figcaption", {}, box,
    "Fusion groups (click a row for its members' mappings, outermost level first)");
  const t = html("table", {}, box);
  const head = html("tr", {}, t);
  const cols = ["#", "layers", "MACs", "latency", "energy", "DRAM", "on chip", "utilisation",
    "tile", "tiles", "halo"];
  for (const h of cols) html("th", {}, head, h);
  d.groups.forEach((g, k) => {
    const tr = html("tr", { class: "group-row" }, t);
    for (const v of [k, g.layers.join(", "), si(g.macs, "MAC"), si(g.latency_s, "s"),
      si(g.energy_pJ * 1e-12, "J"), si(g.dram_bytes, "B"), si(g.onchip_bytes, "B"),
      si(100 * g.utilization, "%"), g.tile ? g.tile.join("x") : "-", g.tiles ?? "-", g.halo || "-"])
      html("td", {}, tr, String(v));
    const nest = html("tr", { class: "nest", id: `${prefix}group-nest-${k}`, hidden: "" }, t);
    html("pre", {}, html("td", { colspan: cols.length }, nest), fusionMembers(d, g, k));
    tr.addEventListener("click", () => fusionOpen(prefix, k));
  });
}

// Everything of a fusion plan, in the panel prefix.
function fusion(root, d, prefix) {
  need(d, ["model", "arch", "totals", "roofs", "components", "groups", "layers"], "fusion");
  fusionSummary(root, d, prefix);
  fusionBands(root, prefix + "groups", d, prefix);
  const items = fusionItems(d);
  const xLabel = "fusion groups, in order";
  layerBars(root, prefix + "latency", "Latency per fusion group", items,
    items.map((g) => g.latency_s), "s", "latency", undefined, xLabel);
  layerBars(root, prefix + "energy", "Energy per fusion group, by component", items,
    items.map((g) => g.energy_by_component_pJ.map((e) => e * 1e-12)), "J", "energy",
    d.components, xLabel);
  layerBars(root, prefix + "utilisation", "Utilisation of the MACs per fusion group", items,
    items.map((g) => 100 * g.utilization), "%", "utilisation (% of peak)", undefined, xLabel);
  roofline(root, prefix + "roofline", { layers: items, roofs: d.roofs });
  fusionTable(root, d, prefix);
}
RENDERERS.fusion = fusion;
STYLE.push(`tr.group-row{cursor:pointer}tr.group-row:hover{background:#f4f6fa}
rect.group{cursor:pointer}rect.group:hover{fill-opacity:1;stroke:#222}
table.totals td,table.totals th{text-align:right}p.facts{color:#444}`);
