// main.js -- the renderer's last part: the page's style, then the drawing
// of #report-data by the renderer its kind names.
STYLE.unshift(`body{font:14px system-ui,sans-serif;margin:24px;color:#222}
figure{margin:18px 0}figcaption{font-weight:600;margin-bottom:4px}
dl.totals{display:grid;grid-template-columns:max-content auto;gap:2px 16px}dt{color:#555}
dd{margin:0}table{border-collapse:collapse;font-size:12px}td,th{padding:2px 8px;
border-bottom:1px solid #eee;text-align:right}td:nth-child(2),td:nth-child(3){text-align:left}
tr.layer-row{cursor:pointer}tr.layer-row:hover{background:#f4f6fa}pre{margin:4px 0}
.legend{font-size:12px}.legend-item{margin-right:14px}.swatch{display:inline-block;width:10px;
height:10px;margin-right:4px}#report-errors{color:#b00}`);

try {
  html("style", {}, document.head, STYLE.join("\n"));
  const d = JSON.parse(document.getElementById("report-data").textContent);
  const root = document.getElementById("report");
  if (RENDERERS[d.kind]) RENDERERS[d.kind](root, d, "");
  else fail("unknown report kind " + d.kind);
} catch (e) {
  fail(e && e.message ? e.message : String(e));
}
body.dataset.render = body.dataset.errors === "0" ? "ok" : "failed";
