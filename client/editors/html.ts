// The webview page the host serves: CSP `default-src 'none'`, one nonce for our script and style, data only by postMessage.
export interface WebviewPageOptions {
  /** The webview's cspSource (vscode) or the test server's origin. */
  cspSource: string;
  nonce: string;
  scriptUri: string;
  title: string;
}

export function makeNonce(): string {
  const chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  let nonce = '';
  for (let i = 0; i < 32; i++) nonce += chars[Math.floor(Math.random() * chars.length)];
  return nonce;
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function webviewHtml(o: WebviewPageOptions): string {
  const csp = [
    "default-src 'none'",
    `img-src ${o.cspSource} data:`,
    `style-src ${o.cspSource} 'nonce-${o.nonce}'`,
    `font-src ${o.cspSource}`,
    `script-src 'nonce-${o.nonce}'`,
    // The layout worker is started from a blob URL made of our own bundled code.
    'worker-src blob:',
  ].join('; ');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>${escapeHtml(o.title)}</title>
<style nonce="${o.nonce}">${STYLE}</style>
</head>
<body>
<header id="toolbar">
  <span id="title">${escapeHtml(o.title)}</span>
  <vscode-button id="fit" secondary>Fit</vscode-button>
  <vscode-checkbox id="collapse" label="Collapse Q/DQ"></vscode-checkbox>
  <vscode-checkbox id="shapes" label="Shapes" title="Tensor shapes on edges"></vscode-checkbox>
  <vscode-textfield id="search" placeholder="Find node, op, module or tensor" aria-label="Find"></vscode-textfield>
  <span id="matches"></span>
  <vscode-button id="export-svg" secondary>SVG</vscode-button>
  <vscode-button id="export-png" secondary>PNG</vscode-button>
  <vscode-button id="export-html" secondary>Report</vscode-button>
  <span id="summary"></span>
</header>
<div id="legend" aria-label="Legend"></div>
<div id="content">
  <main id="canvas" tabindex="0" aria-label="Graph"><p id="status">Waiting for the graph…</p></main>
  <aside id="props" aria-label="Properties" hidden></aside>
  <div id="minimap" role="img" aria-label="Overview of the whole graph: press or drag to pan" hidden></div>
</div>
<section id="layers" aria-label="Layers, worst first"></section>
<script nonce="${o.nonce}" src="${o.scriptUri}"></script>
</body>
</html>`;
}

const STYLE = `
body { margin: 0; padding: 0; color: var(--vscode-foreground); background: var(--vscode-editor-background);
  font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); display: grid;
  grid-template-rows: auto auto 1fr auto; height: 100vh; overflow: hidden; }
#toolbar { display: flex; flex-wrap: wrap; gap: 6px 12px; align-items: center; padding: 6px 10px; border-bottom: 1px solid var(--vscode-panel-border); }
#title { font-weight: 600; }
#summary { opacity: .8; }
#legend { display: flex; gap: 14px; padding: 4px 10px; font-size: 12px; flex-wrap: wrap; }
.swatch { display: inline-block; width: 12px; height: 12px; border-radius: 2px; margin-right: 4px; vertical-align: middle; border: 1px solid var(--vscode-panel-border); }
#content { display: flex; min-height: 0; position: relative; overflow: hidden; }
#minimap { position: absolute; left: 8px; bottom: 8px; line-height: 0; overflow: hidden; cursor: pointer; touch-action: none;
  border: 1px solid var(--vscode-panel-border, #999); background: var(--vscode-editor-background, #fff); box-shadow: 0 0 4px var(--vscode-widget-shadow, #0003); }
#minimap .viewport { position: absolute; pointer-events: none; box-sizing: border-box; border: 2px solid var(--vscode-focusBorder, #0078d4); }
.frame rect { fill: var(--vscode-editor-foreground, #333); fill-opacity: .04; stroke: var(--vscode-panel-border, #999); stroke-dasharray: 3 2; }
.frame-label { font-size: 9px; fill: var(--vscode-descriptionForeground, #717171); cursor: pointer; }
.frame-label:hover { text-decoration: underline; }
#canvas { overflow: hidden; position: relative; cursor: grab; flex: 1; min-width: 0; }
#props { width: 300px; overflow: auto; border-left: 1px solid var(--vscode-panel-border, #ccc); padding: 6px 10px; font-size: 12px; }
#props h3 { margin: 4px 0; font-size: 13px; }
#props dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 8px; margin: 4px 0 10px; }
#props dt { opacity: .75; }
#props dd { margin: 0; word-break: break-all; font-family: var(--vscode-editor-font-family, monospace); }
#props svg.histogram { width: 100%; height: 60px; display: block; margin-bottom: 10px; }
#props svg.histogram rect { fill: var(--vscode-charts-blue, #3794ff); }
#props svg.drift { width: 100%; height: 70px; display: block; margin-bottom: 2px; overflow: visible; }
#props svg.drift .line { fill: none; stroke: var(--vscode-charts-blue, #3794ff); stroke-width: 1.5; }
#props svg.drift .band { fill: var(--vscode-charts-blue, #3794ff); fill-opacity: .2; stroke: none; }
#props svg.drift .epoch { stroke: var(--vscode-panel-border, #999); stroke-dasharray: 2 2; }
#props svg.drift text { font-size: 9px; fill: var(--vscode-descriptionForeground, #717171); }
#props .drift-caption { opacity: .75; margin-bottom: 8px; }
#props details.all-values summary { cursor: pointer; opacity: .85; }
#props details.all-values pre { white-space: pre-wrap; word-break: break-all; max-height: 180px; overflow: auto; margin: 4px 0 8px;
  font-family: var(--vscode-editor-font-family, monospace); font-size: 11px; }
#props .formula { font-family: var(--vscode-editor-font-family, monospace); padding: 2px 0 6px; }
#canvas svg { width: 100%; height: 100%; }
#canvas svg.far text { display: none; }
#status.error { color: var(--vscode-errorForeground); white-space: pre-wrap; padding: 10px; }
/* Op categories (Netron's palette): deep tones on dark themes, light tints on light ones; high contrast keeps
   the plain widget background (its borders carry the structure). Labels pick a readable ink on each. */
body { --qat-op-layer: #335588; --qat-op-activation: #702921; --qat-op-pooling: #335533;
  --qat-op-normalization: #335544; --qat-op-layout: #6c4f47; --qat-op-control: #4b4b70; }
body.vscode-light { --qat-op-layer: #c9daf5; --qat-op-activation: #f5cfc9; --qat-op-pooling: #cfe8cf;
  --qat-op-normalization: #cde6de; --qat-op-layout: #e6d6cf; --qat-op-control: #dcdcf0; }
body.vscode-high-contrast, body.vscode-high-contrast-light { --qat-op-layer: initial; --qat-op-activation: initial;
  --qat-op-pooling: initial; --qat-op-normalization: initial; --qat-op-layout: initial; --qat-op-control: initial; }
.node rect { stroke: var(--vscode-panel-border, #999); stroke-width: 1; }
.node text { fill: var(--vscode-editor-foreground, #333); font-size: 11px; pointer-events: none; }
.node.group rect { stroke: var(--vscode-focusBorder, #0078d4); stroke-width: 2; }
#props .groups { display: flex; flex-direction: column; gap: 4px; margin-top: 8px; }
.node.qdq rect { stroke: var(--vscode-charts-purple, #b180d7); stroke-width: 2; stroke-dasharray: 4 2; }
.node.input rect, .node.output rect { fill: var(--vscode-badge-background, #ddd); }
.node { cursor: pointer; }
.node.selected rect { stroke: var(--vscode-focusBorder, #0078d4); stroke-width: 3; }
.edge { stroke: var(--vscode-descriptionForeground, #888); stroke-width: 1; fill: none; opacity: .7; }
.edge.int8 { stroke: var(--vscode-charts-purple, #b180d7); stroke-width: 2; opacity: 1; }
.edge-label { fill: var(--vscode-charts-purple, #8a4fbf); font-size: 9px; }
.edge-shape { fill: var(--vscode-descriptionForeground, #717171); font-size: 11px; pointer-events: none; }
.badge { font-size: 8px; font-weight: 600; fill: var(--vscode-descriptionForeground, #555); }
.badge.p-int8 { fill: var(--vscode-charts-purple, #8a4fbf); }
.badge.p-fp16, .badge.p-bf16 { fill: var(--vscode-charts-blue, #1a85ff); }
#search { width: 260px; max-width: 100%; }
@media (max-width: 760px) {
  #props { width: 200px; }
  #summary { flex-basis: 100%; }
  #layers { --qat-table-max: max(calc(42vh - 80px), 128px); }
}
#layers { border-top: 1px solid var(--vscode-panel-border); padding: 0 6px 4px; min-height: 0; min-width: 0;
  --qat-table-max: max(calc(38vh - 80px), 128px); }
#layers vscode-tab-panel { padding: 4px 0 0; }
#layers .chart { max-height: max(calc(38vh - 40px), 168px); overflow: auto; }
#layers .chart svg { max-width: 100%; height: auto; }
#layers .table-side { display: flex; flex-direction: column; min-width: 0; }
#layers vscode-collapsible.columns { font-size: 12px; }
#layers .column-boxes { display: flex; flex-wrap: wrap; gap: 4px 14px; padding: 4px 8px; }
#layers vscode-table { display: block; }
#layers vscode-table-header-cell { cursor: pointer; user-select: none; }
#layers vscode-table-row[data-module] { cursor: pointer; }
#layers vscode-table-row[data-module]:hover { background: var(--vscode-list-hoverBackground, #eee); }
#layers vscode-table-cell .name { display: inline-flex; max-width: calc(100% - 18px); min-width: 0; vertical-align: middle; }
#layers vscode-table-cell .name .head { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; min-width: 1ch; flex: 0 1000 auto; }
#layers vscode-table-cell .name .tail { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; min-width: 0; flex: 0 1 auto; direction: rtl; }
#layers .model-accuracy { display: flex; flex-wrap: wrap; align-items: baseline; gap: 2px 14px; padding: 6px 4px 2px; font-size: 12px; }
#layers .model-accuracy .stages { display: inline-flex; flex-wrap: wrap; gap: 2px 10px; }
#layers .model-accuracy .verdict { opacity: .85; }
@media (max-width: 760px) { #layers .model-accuracy .detail { display: none; } }
#layers .model-accuracy[data-verdict="fine"] .verdict::before { content: '✓ '; color: var(--vscode-charts-green, #388a34); font-weight: 600; }
#layers .model-accuracy[data-verdict="loss"] .verdict { color: var(--vscode-errorForeground); opacity: 1; }
.chart text { fill: var(--vscode-foreground, #333); }
/* Find Where INT8 Diverges: stage lanes on the nodes, the divergence mark, the stage table. */
.node .stage-lane .stage-badge rect { stroke: var(--vscode-panel-border, #999); stroke-width: .5; stroke-dasharray: none; }
.node .stage-lane .stage-badge.fused rect, .node .stage-lane .stage-badge.fused line { stroke: var(--vscode-descriptionForeground, #717171); stroke-width: .8; }
.node.first-divergence > rect { stroke: var(--vscode-charts-red, #e51400); stroke-width: 2.5; }
.node.first-divergence.selected > rect { stroke: var(--vscode-focusBorder, #0078d4); stroke-width: 3; }
.node .divergence-mark { fill: var(--vscode-charts-red, #e51400); stroke: var(--vscode-editor-background, #fff); stroke-width: 1; }
.swatch.fused { background: linear-gradient(to top right, transparent 45%, var(--vscode-descriptionForeground, #717171) 45% 55%, transparent 55%); }
.swatch.first { background: var(--vscode-charts-red, #e51400); border-radius: 50%; }
#legend .lane-order { font-weight: 600; }
#layers .stage-accuracy vscode-button { margin-left: auto; }
#layers ul.verdicts { margin: 2px 0 4px; padding-left: 18px; font-size: 12px; }
#layers ul.verdicts li[data-verdict="diverges"] b { color: var(--vscode-errorForeground); }
#layers .stage-table-wrap { max-height: var(--qat-table-max); overflow: auto; }
#layers table.stage-table { border-collapse: collapse; font-size: 12px; width: 100%; }
#layers table.stage-table thead { position: sticky; top: 0; z-index: 1; background: var(--vscode-editor-background); }
#layers table.stage-table th { cursor: pointer; user-select: none; text-align: left; font-weight: 600; padding: 2px 8px; border-bottom: 1px solid var(--vscode-panel-border); white-space: nowrap; }
#layers table.stage-table th.pair-group { cursor: default; text-align: center; }
#layers table.stage-table colgroup[data-pair] { border-left: 1px solid var(--vscode-panel-border); }
#layers table.stage-table td { padding: 2px 8px; border-bottom: 1px solid var(--vscode-panel-border); white-space: nowrap; }
#layers table.stage-table tbody tr { cursor: pointer; }
#layers table.stage-table tbody tr:hover { background: var(--vscode-list-hoverBackground, #eee); }
#layers table.stage-table .first-mark { color: var(--vscode-charts-red, #e51400); }
#layers table.stage-table a.source { color: var(--vscode-textLink-foreground); }
#props .stage-props dl { grid-template-columns: 1fr; }
#props .stage-props dd { word-break: normal; font-family: inherit; margin-left: 10px; }
#props .stage-props dd[data-level="diverges"] { color: var(--vscode-errorForeground); }
#props .stage-props .cause { margin: 4px 0 8px; }
`;
