// Analyze Sensitivity's result as a page: the baseline accuracies, the layers ranked in a bar chart (accuracy lost
// quantized alone, accuracy won back kept float, or output SQNR), and the suggestion as a short list with a button
// that writes it into the config's overrides. Free of the vscode module. CSP `default-src 'none'` with one nonce
// for the style and the script; no network.
import type { SensitivityResult } from '../../protocol/kernel';
import { axis, ranked, type SensitivityMetric, suggestion, textWidth } from './shape';

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const pct = (v: number) => `${(v * 100).toFixed(2)} %`;

export const METRICS: Array<{ id: SensitivityMetric; label: string; unit: string }> = [
  { id: 'drop', label: 'accuracy lost, quantized alone', unit: 'points' },
  { id: 'recovered', label: 'accuracy won back, kept float', unit: 'points' },
  { id: 'sqnr', label: 'output SQNR, quantized alone', unit: 'dB' },
];

const W = 640;
const ROW = 18;
const TOP = 8;
const BOTTOM = 40;
const LABEL_W = 220;
const VALUE_W = 56;

/** Cuts a module path from the left to fit `max` characters ("…conv.1.0"): the end of a path tells layers apart. */
export const fitName = (name: string, max: number) => (name.length <= max ? name : `…${name.slice(-(max - 1))}`);

/** One horizontal bar chart: a row per layer, most sensitive first; the suggested layers marked. */
export function barsSvg(
  result: SensitivityResult,
  metric: SensitivityMetric,
  suggested: Set<string>,
  rowClass = 'row',
): string {
  const m = METRICS.find((x) => x.id === metric)!;
  const rows = ranked(result, metric);
  const values = rows.map((r) => r.value).filter(Number.isFinite);
  const ax = axis(Math.min(0, ...values), Math.max(0, ...values), 4);
  const [v0, v1] = ax.domain;
  const left = LABEL_W + 8;
  const right = W - VALUE_W;
  const px = (v: number) => left + ((Math.max(v0, Math.min(v1, v)) - v0) / (v1 - v0)) * (right - left);
  const H = TOP + rows.length * ROW + BOTTOM;
  const f = (v: number) => v.toFixed(1);
  const maxChars = Math.floor(LABEL_W / textWidth('x', 11));
  const parts: string[] = [];
  for (const [t, label] of ax.ticks)
    parts.push(
      `<line class="grid" x1="${f(px(t))}" x2="${f(px(t))}" y1="${TOP}" y2="${TOP + rows.length * ROW}"/>`,
      `<text class="tick x-tick" x="${f(px(t))}" y="${TOP + rows.length * ROW + 14}" text-anchor="middle">${label}</text>`,
    );
  parts.push(
    `<text class="axis" x="${f((left + right) / 2)}" y="${H - 6}" text-anchor="middle">${esc(`${m.label} (${m.unit})`)}</text>`,
  );
  rows.forEach((r, i) => {
    const y = TOP + i * ROW;
    const x0 = px(Math.min(0, r.value));
    const x1 = px(Math.max(0, r.value));
    const cls = suggested.has(r.module) ? 'bar suggested' : 'bar';
    const value = Number.isFinite(r.value) ? r.value.toFixed(metric === 'sqnr' ? 1 : 2) : '∞';
    const tip = `#${i + 1} ${r.module}: ${value} ${m.unit}${suggested.has(r.module) ? ' (suggested float)' : ''}`;
    parts.push(
      `<g class="${rowClass}" data-module="${esc(r.module)}" tabindex="0" role="button" aria-label="${esc(tip)}"><title>${esc(tip)}</title>`,
      `<text class="name" x="${LABEL_W}" y="${y + ROW * 0.68}" text-anchor="end">${esc(fitName(r.module, maxChars))}</text>`,
      `<rect class="${cls}" x="${f(x0)}" y="${y + 3}" width="${f(Math.max(1, x1 - x0))}" height="${ROW - 6}"/>`,
      `<text class="value" x="${f(right + 4)}" y="${y + ROW * 0.68}">${value}</text></g>`,
    );
  });
  return `<svg class="bars" data-metric="${metric}" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${esc(`Layers by ${m.label}`)}">${parts.join('')}</svg>`;
}

/** The whole page. `nonce` allows our one style and one script; nothing loads from elsewhere. */
export function sensitivityHtml(result: SensitivityResult, o: { nonce: string; title: string }): string {
  const csp = ["default-src 'none'", `style-src 'nonce-${o.nonce}'`, `script-src 'nonce-${o.nonce}'`].join('; ');
  const s = suggestion(result);
  const suggested = new Set(s.modules);
  const a = result.accuracy;
  const from = s.reference === 'qatFloat' ? 'the QAT-float model' : 'FP32';
  const target =
    s.target !== undefined
      ? `target ${pct(s.target)} (${result.budget} points below ${from}${s.reference === 'qatFloat' ? `, which is already ${((a.fp32 - a.qatFloat) * 100).toFixed(2)} points below FP32 with every layer float` : ''})`
      : `within ${result.budget} points of FP32`;
  const list = s.modules.length
    ? `<ul class="suggested">${s.shown.map((m) => `<li>${esc(m)}</li>`).join('')}${s.more ? `<li class="more" title="${esc(s.modules.slice(s.shown.length).join('\n'))}">+${s.more} more</li>` : ''}</ul>`
    : '';
  const verdict = !s.modules.length
    ? s.reached
      ? `Every layer can stay int8: fake-quant accuracy ${pct(a.fakeQuant)} already meets the ${target}.`
      : `No set of float layers tried reaches the ${target}: fake-quant accuracy stays at ${pct(a.fakeQuant)}.`
    : `Keep ${s.modules.length} layer${s.modules.length === 1 ? '' : 's'} in ${s.precision.toUpperCase()}: fake-quant accuracy ${pct(a.fakeQuant)} → ${pct(s.accuracy)}, ${s.reached ? 'meets' : 'short of'} the ${target}.`;
  const tabs = METRICS.map(
    (m, i) =>
      `<button class="metric" role="tab" data-metric="${m.id}" aria-selected="${i === 0}">${esc(m.label)}</button>`,
  ).join('');
  // Repeated blocks (a transformer's layers), each measured as a whole: a chart of their own, not selectable for a fix.
  const blocks = result.blocks?.length
    ? `<h3>Blocks</h3><p>${result.blocks.length} repeated blocks, each block's layers quantized alone: output SQNR, most sensitive first.</p>` +
      `<div class="block-chart">${barsSvg({ ...result, layers: result.blocks }, 'sqnr', new Set(), 'block-row')}</div>`
    : '';
  const perplexity =
    a.fakeQuantPerplexity !== undefined
      ? `<div><span class="label">perplexity, fake-quant (emulated)</span><span class="value" data-baseline="perplexity">${a.fakeQuantPerplexity.toFixed(2)}</span></div>`
      : '';
  const charts = METRICS.map(
    (m, i) => `<div class="chart" data-metric="${m.id}"${i ? ' hidden' : ''}>${barsSvg(result, m.id, suggested)}</div>`,
  ).join('');
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>${esc(o.title)}</title>
<style nonce="${o.nonce}">
body { color: var(--vscode-foreground); background: var(--vscode-editor-background); font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); padding: 8px 12px; }
#baselines { display: flex; gap: 20px; flex-wrap: wrap; margin: 6px 0; }
#baselines div { display: flex; flex-direction: column; }
#baselines .label { color: var(--vscode-descriptionForeground); font-size: .9em; }
#baselines .value { font-size: 1.3em; font-variant-numeric: tabular-nums; }
#suggestion { border-left: 3px solid var(--vscode-charts-blue, #1a85ff); padding: 4px 12px; margin: 10px 0; max-width: 640px; }
ul.suggested { margin: 4px 0; padding-left: 18px; }
li.more { color: var(--vscode-descriptionForeground); list-style: none; margin-left: -18px; cursor: help; }
[role=tablist] { display: flex; gap: 4px; margin: 8px 0 4px; }
button { color: var(--vscode-button-foreground); background: var(--vscode-button-background); border: none; padding: 3px 8px; cursor: pointer; }
button.metric { color: var(--vscode-foreground); background: transparent; border-bottom: 2px solid transparent; }
button.metric[aria-selected=true] { border-bottom-color: var(--vscode-focusBorder, #0078d4); }
.chart { overflow-x: auto; }
.bars { max-width: 100%; height: auto; }
.grid { stroke: var(--vscode-panel-border, #ccc); stroke-width: .5; }
.tick, .value { font-size: 10px; fill: var(--vscode-descriptionForeground, #717171); }
.name { font-size: 11px; fill: var(--vscode-foreground); }
.axis { font-size: 11px; fill: var(--vscode-foreground); }
.bar { fill: var(--vscode-charts-foreground, #888); }
.bar.suggested { fill: var(--vscode-charts-blue, #1a85ff); }
.row { cursor: pointer; }
.row.selected .name { font-weight: 600; text-decoration: underline; }
#status { margin-top: 8px; }
</style></head>
<body>
<h2>${esc(o.title)}</h2>
<div id="baselines">
<div><span class="label">FP32</span><span class="value" data-baseline="fp32">${pct(a.fp32)}</span></div>
<div><span class="label">QAT float (quantizers off)</span><span class="value" data-baseline="qatFloat">${pct(a.qatFloat)}</span></div>
<div><span class="label">INT8, fake-quant (emulated)</span><span class="value" data-baseline="fakeQuant">${pct(a.fakeQuant)}</span></div>
${perplexity}
${s.modules.length ? `<div><span class="label">suggested, fake-quant (emulated)</span><span class="value" data-baseline="suggested">${pct(s.accuracy)}</span></div>` : ''}
</div>
<section id="suggestion"><p>${esc(verdict)}</p>${list}
${s.modules.length ? `<button id="write">Write ${s.modules.length} override${s.modules.length === 1 ? '' : 's'}</button>` : ''}
<button id="fix" disabled>Apply Fix to the selected layer</button></section>
<p>${result.samples} validation samples, measured by switching the QAT model's fake quantizers (no retraining): emulated, not run on a runtime. Most sensitive first; the suggested layers in blue. Click a layer to select it.</p>
<div role="tablist">${tabs}</div>
${charts}
${blocks}
<p id="status" role="status"></p>
<script nonce="${o.nonce}">
(() => {
  const vscode = acquireVsCodeApi();
  let selected;
  for (const b of document.querySelectorAll('button.metric'))
    b.addEventListener('click', () => {
      for (const o of document.querySelectorAll('button.metric')) o.setAttribute('aria-selected', String(o === b));
      for (const c of document.querySelectorAll('.chart')) c.hidden = c.dataset.metric !== b.dataset.metric;
      vscode.setState({ metric: b.dataset.metric });
    });
  const state = vscode.getState();
  if (state && state.metric) document.querySelector('button.metric[data-metric="' + state.metric + '"]')?.click();
  const pick = (row) => {
    selected = row.dataset.module;
    for (const r of document.querySelectorAll('.row')) r.classList.toggle('selected', r.dataset.module === selected);
    const fix = document.getElementById('fix');
    fix.disabled = false;
    fix.textContent = 'Apply Fix to ' + selected;
  };
  document.addEventListener('click', (e) => {
    const row = e.target.closest && e.target.closest('.row');
    if (row) pick(row);
  });
  document.addEventListener('keydown', (e) => {
    const row = e.target.closest && e.target.closest('.row');
    if (row && (e.key === 'Enter' || e.key === ' ')) pick(row);
  });
  document.getElementById('write')?.addEventListener('click', () => vscode.postMessage({ type: 'write' }));
  document.getElementById('fix').addEventListener('click', () => selected && vscode.postMessage({ type: 'fix', module: selected }));
  window.addEventListener('message', (e) => {
    if (e.data && e.data.type === 'done') document.getElementById('status').textContent = e.data.message;
  });
  vscode.postMessage({ type: 'ready' });
})();
</script>
</body></html>`;
}
