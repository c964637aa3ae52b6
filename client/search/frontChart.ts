// The mixed-precision search's Pareto front as a page: accuracy vs latency and accuracy vs size (SVG scatter
// plots drawn here), every candidate measured, the front joined, and a button per point that writes its overrides.
// Free of the vscode module. CSP `default-src 'none'` with one nonce for the style and the script; no network.
import type { MixedPrecisionCandidate, MixedPrecisionResult } from '../../protocol/kernel';

export type FrontView = 'latency' | 'size';

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const pct = (v: number) => `${(v * 100).toFixed(2)} %`;
const kib = (b: number) => `${(b / 1024).toFixed(1)} KiB`;
const ms = (v: number) => `${v.toFixed(3)} ms`;

const W = 560;
const H = 300;
const PAD = { left: 56, right: 16, top: 12, bottom: 40 };

export function describe(c: MixedPrecisionCandidate): string {
  const n = c.counts;
  return `${c.label}: ${pct(c.accuracy)} (ONNX Runtime ${pct(c.ortAccuracy)}), ${ms(c.latencyMs)}, ${kib(c.bytes)} · int8 ${n.int8} / fp16 ${n.fp16} / fp32 ${n.fp32}`;
}

function ticks(lo: number, hi: number, count = 5): number[] {
  if (hi <= lo) return [lo];
  const step = (hi - lo) / (count - 1);
  return Array.from({ length: count }, (_, i) => lo + i * step);
}

function range(values: number[]): [number, number] {
  let lo = Math.min(...values);
  let hi = Math.max(...values);
  if (hi - lo < 1e-12) {
    const pad = Math.abs(hi) * 0.05 || 0.01;
    lo -= pad;
    hi += pad;
  }
  const margin = (hi - lo) * 0.06;
  return [lo - margin, hi + margin];
}

/** One scatter plot: every candidate, the front's points filled and joined in x order, the ends labelled. */
export function frontSvg(result: MixedPrecisionResult, view: FrontView): string {
  const x = (c: MixedPrecisionCandidate) => (view === 'latency' ? c.latencyMs : c.bytes / 1024);
  const front = new Set(view === 'latency' ? result.latencyFront : result.sizeFront);
  const cands = result.candidates;
  const [x0, x1] = range(cands.map(x));
  const [y0, y1] = range(cands.map((c) => c.accuracy * 100));
  const px = (v: number) => PAD.left + ((v - x0) / (x1 - x0)) * (W - PAD.left - PAD.right);
  const py = (v: number) => H - PAD.bottom - ((v - y0) / (y1 - y0)) * (H - PAD.top - PAD.bottom);
  const ends = new Map(Object.entries(result.ends).map(([k, id]) => [id, `all ${k}`]));
  const parts: string[] = [];
  for (const t of ticks(x0, x1)) {
    const at = px(t).toFixed(1);
    parts.push(
      `<line class="grid" x1="${at}" x2="${at}" y1="${PAD.top}" y2="${H - PAD.bottom}"/>`,
      `<text class="tick" x="${at}" y="${H - PAD.bottom + 14}" text-anchor="middle">${t.toFixed(view === 'latency' ? 3 : 1)}</text>`,
    );
  }
  for (const t of ticks(y0, y1)) {
    const at = py(t).toFixed(1);
    parts.push(
      `<line class="grid" x1="${PAD.left}" x2="${W - PAD.right}" y1="${at}" y2="${at}"/>`,
      `<text class="tick" x="${PAD.left - 6}" y="${at}" text-anchor="end" dominant-baseline="middle">${t.toFixed(2)}</text>`,
    );
  }
  const xLabel =
    view === 'latency' ? `ONNX Runtime latency, batch ${result.backend.batch} (median ms)` : 'size (KiB of weights)';
  parts.push(
    `<text class="axis" x="${(PAD.left + W - PAD.right) / 2}" y="${H - 6}" text-anchor="middle">${esc(xLabel)}</text>`,
    `<text class="axis" transform="translate(12 ${(PAD.top + H - PAD.bottom) / 2}) rotate(-90)" text-anchor="middle">top-1 accuracy (%)</text>`,
  );
  const onFront = cands.filter((c) => front.has(c.id)).sort((a, b) => x(a) - x(b));
  if (onFront.length > 1) {
    // A staircase: between two front points the better accuracy is only reached at the slower/bigger one.
    const pts: string[] = [];
    onFront.forEach((c, i) => {
      if (i > 0) pts.push(`${px(x(c)).toFixed(1)},${py(onFront[i - 1].accuracy * 100).toFixed(1)}`);
      pts.push(`${px(x(c)).toFixed(1)},${py(c.accuracy * 100).toFixed(1)}`);
    });
    parts.push(`<polyline class="front" points="${pts.join(' ')}"/>`);
  }
  for (const c of cands) {
    const cx = px(x(c)).toFixed(1);
    const cy = py(c.accuracy * 100).toFixed(1);
    const cls = front.has(c.id) ? 'point on-front' : 'point';
    parts.push(
      `<circle class="${cls}" data-id="${esc(c.id)}" cx="${cx}" cy="${cy}" r="${front.has(c.id) ? 5 : 3.5}" tabindex="0" role="button" aria-label="${esc(describe(c))}"><title>${esc(describe(c))}</title></circle>`,
    );
    const end = ends.get(c.id);
    if (end)
      parts.push(`<text class="end" x="${cx}" y="${(Number(cy) - 8).toFixed(1)}" text-anchor="middle">${end}</text>`);
  }
  const title =
    view === 'latency'
      ? 'Accuracy vs latency (front: not beaten on both)'
      : 'Accuracy vs size (front: not beaten on both)';
  return `<svg class="front-chart" data-view="${view}" viewBox="0 0 ${W} ${H}" role="img" aria-label="${esc(title)}">${parts.join('')}</svg>`;
}

function row(c: MixedPrecisionCandidate, result: MixedPrecisionResult): string {
  const flags = [
    result.latencyFront.includes(c.id) ? 'latency' : '',
    result.sizeFront.includes(c.id) ? 'size' : '',
  ].filter(Boolean);
  const floats = c.overrides.map((o) => `${o.match.replace(/\\(.)/g, '$1')} ${o.precision}`).join(', ') || 'none';
  return `<tr data-id="${esc(c.id)}"${c.onFront ? ' class="on-front"' : ''}>
<td>${esc(c.label)}</td><td>${pct(c.accuracy)}</td><td>${pct(c.ortAccuracy)}</td><td>${ms(c.latencyMs)}${c.latency[result.backend.batch === 1 ? 'b1' : 'b16'].noisy ? ' (noisy)' : ''}</td>
<td>${kib(c.bytes)}</td><td>${c.onFront ? 'yes' : ''}${flags.length ? ` (${flags.join(', ')})` : ''}</td><td>${esc(floats)}</td>
<td><button class="pick" data-id="${esc(c.id)}">Write overrides</button></td></tr>`;
}

/** The whole page. `nonce` allows our one style and one script; nothing loads from elsewhere. */
export function frontHtml(result: MixedPrecisionResult, o: { nonce: string; title: string }): string {
  // No images, fonts or frames: the plots are inline SVG, so nothing but the nonce is allowed.
  const csp = ["default-src 'none'", `style-src 'nonce-${o.nonce}'`, `script-src 'nonce-${o.nonce}'`].join('; ');
  const ordered = [...result.candidates].sort(
    (a, b) => Number(b.onFront) - Number(a.onFront) || b.accuracy - a.accuracy || a.latencyMs - b.latencyMs,
  );
  const b = result.backend;
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>${esc(o.title)}</title>
<style nonce="${o.nonce}">
body { color: var(--vscode-foreground); background: var(--vscode-editor-background); font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); padding: 8px 12px; }
.charts { display: flex; flex-wrap: wrap; gap: 12px; }
.front-chart { width: 100%; max-width: 560px; height: auto; }
.grid { stroke: var(--vscode-panel-border, #ccc); stroke-width: .5; }
.tick, .end { font-size: 10px; fill: var(--vscode-descriptionForeground, #717171); }
.axis { font-size: 11px; fill: var(--vscode-foreground); }
.front { fill: none; stroke: var(--vscode-charts-blue, #1a85ff); stroke-width: 1.5; }
.point { fill: var(--vscode-editor-background, #fff); stroke: var(--vscode-charts-foreground, #888); stroke-width: 1.2; cursor: pointer; }
.point.on-front { fill: var(--vscode-charts-blue, #1a85ff); stroke: var(--vscode-charts-blue, #1a85ff); }
.point.selected, tr.selected td { outline: 2px solid var(--vscode-focusBorder, #0078d4); }
table { border-collapse: collapse; margin-top: 10px; }
th, td { text-align: left; padding: 3px 10px; border-bottom: 1px solid var(--vscode-panel-border, #ccc); }
tr.on-front td:first-child { font-weight: 600; }
button { color: var(--vscode-button-foreground); background: var(--vscode-button-background); border: none; padding: 3px 8px; cursor: pointer; }
#status { margin-top: 8px; }
</style></head>
<body>
<h2>${esc(o.title)}</h2>
<p>${result.candidates.length} candidates measured (${result.budget.measured} of ${result.budget.planned} planned, budget ${result.budget.candidates} candidates / ${result.budget.seconds} s) on ${result.samples} validation samples; fp16 emulated in the fake quantizers. Latency: ONNX Runtime ${esc(b.version)} ${esc(b.device)}, ${b.rounds} interleaved rounds, ${b.runs} calls per figure, on ${esc(b.cpu.model)}. Front: not beaten on accuracy, latency and size at once.</p>
<div class="charts">${frontSvg(result, 'latency')}${frontSvg(result, 'size')}</div>
<table id="candidates"><thead><tr><th>candidate</th><th>accuracy</th><th>ORT accuracy</th><th>latency</th><th>size</th><th>front</th><th>float layers</th><th></th></tr></thead>
<tbody>
${ordered.map((c) => row(c, result)).join('\n')}
</tbody></table>
${result.notes.length ? `<ul>${result.notes.map((n) => `<li>${esc(n)}</li>`).join('')}</ul>` : ''}
<p id="status" role="status"></p>
<script nonce="${o.nonce}">
(() => {
  const vscode = acquireVsCodeApi();
  const select = (id) => {
    for (const e of document.querySelectorAll('[data-id]')) e.classList.toggle('selected', e.dataset.id === id);
  };
  document.addEventListener('click', (e) => {
    const t = e.target.closest('[data-id]');
    if (!t) return;
    select(t.dataset.id);
    if (t.classList.contains('pick')) vscode.postMessage({ type: 'pick', id: t.dataset.id });
  });
  document.addEventListener('keydown', (e) => {
    const t = e.target.closest && e.target.closest('circle[data-id]');
    if (t && (e.key === 'Enter' || e.key === ' ')) { select(t.dataset.id); vscode.postMessage({ type: 'pick', id: t.dataset.id }); }
  });
  window.addEventListener('message', (e) => {
    if (e.data && e.data.type === 'picked') document.getElementById('status').textContent = e.data.message;
  });
  vscode.postMessage({ type: 'ready' });
})();
</script>
</body></html>`;
}
