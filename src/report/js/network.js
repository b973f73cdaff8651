// network.js -- a layer-by-layer network result (kind "network": `map
// --model`): totals, latency per layer, energy per layer stacked by
// component, utilisation per layer, a roofline and the layer table with
// each layer's mapping on demand.
// The layer table; a click on a row shows its mapping as a loop nest.
function layerTable(parent, d) {
  const box = html("figure", { class: "table" }, parent);
  html("figcaption", {}, box, "Layers (click a row for its mapping, outermost level first)");
  const t = html("table", {}, box);
  const head = html("tr", {}, t);
  for (const h of ["#", "layer", "op", "MACs", "latency", "energy", "utilisation", "DRAM"])
    html("th", {}, head, h);
  d.layers.forEach((l, i) => {
    const tr = html("tr", { class: "layer-row" }, t);
    for (const v of [i, l.name, l.kind, si(l.macs, "MAC"), si(l.latency_s, "s"),
      si(l.energy_pJ * 1e-12, "J"), (100 * l.utilization).toFixed(1) + " %",
      si(l.dram_bytes, "B")])
      html("td", {}, tr, String(v));
    if (!l.mapping) return;
    const nest = html("tr", { class: "nest", hidden: "" }, t);
    const cell = html("td", { colspan: 8 }, nest);
    html("pre", {}, cell, l.mapping.split(" | ").map((s, k) => "  ".repeat(k) + s).join("\n"));
    tr.addEventListener("click", () => nest.toggleAttribute("hidden"));
  });
}

function summary(parent, d) {
  const t = d.totals;
  html("h1", {}, parent, `${d.model} on ${d.arch}`);
  const dl = html("dl", { class: "totals" }, parent);
  for (const [k, v] of [["latency", si(t.latency_s, "s")], ["energy", si(t.energy_pJ * 1e-12, "J")],
    ["EDP", si(t.edp_J_cycle, "J·cycle")], ["DRAM traffic", si(t.dram_bytes, "B")],
    ["MACs", si(t.macs, "MAC")], ["utilisation", (100 * t.utilization).toFixed(1) + " %"],
    ["layers", String(d.layers.length)]]) {
    html("dt", {}, dl, k);
    html("dd", {}, dl, v);
  }
}

function network(root, d, prefix) {
  summary(root, d);
  layerBars(root, prefix + "latency", "Latency per layer", d.layers, d.layers.map((l) => l.latency_s), "s",
    "latency");
  layerBars(root, prefix + "energy", "Energy per layer, by component", d.layers,
    d.layers.map((l) => l.energy_by_component_pJ.map((e) => e * 1e-12)), "J", "energy",
    d.components);
  layerBars(root, prefix + "utilisation", "Utilisation of the MACs per layer", d.layers,
    d.layers.map((l) => 100 * l.utilization), "%", "utilisation (% of peak)");
  roofline(root, prefix + "roofline", d);
  layerTable(root, d);
}
RENDERERS.network = network;
