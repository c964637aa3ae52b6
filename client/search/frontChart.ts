// The mixed-precision search's Pareto front as a page: accuracy on ONNX Runtime vs latency and vs size (SVG
// scatter plots drawn here; the emulated fake-quant accuracy marked apart where it differs), every candidate
// measured, the front joined, why all int8 is slower where it is, and a button per point that writes its overrides.
// Free of the vscode module. CSP `default-src 'none'` with one nonce for the style and the script; no network.
import type { MixedPrecisionCandidate, MixedPrecisionResult } from '../../protocol/kernel';
import { axis, type Box, floatLayers, type LabelRequest, placeLabels, slowInt8 } from './shape';

export type FrontView = 'latency' | 'size';

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const pct = (v: number) => `${(v * 100).toFixed(2)} %`;
const kib = (b: number) => `${(b / 1024).toFixed(1)} KiB`;
const ms = (v: number) => `${v.toFixed(3)} ms`;

const W = 560;
const H = 320;
const PAD = { left: 56, right: 16, top: 14, bottom: 44 };

export function describe(c: MixedPrecisionCandidate): string {
  const n = c.counts;
  return `${c.label}: ${pct(c.ortAccuracy)} on ONNX Runtime (fake-quant, emulated: ${pct(c.accuracy)}), ${ms(c.latencyMs)}, ${kib(c.bytes)} · int8 ${n.int8} / fp16 ${n.fp16} / fp32 ${n.fp32}`;
}

/** Where the plot draws: the measured (ONNX Runtime) accuracy, the emulated one beside it where it differs. */
const measured = (c: MixedPrecisionCandidate) => c.ortAccuracy * 100;
const emulated = (c: MixedPrecisionCandidate) => c.accuracy * 100;
/** Emulated and measured this far apart (points) or more are drawn as two marks. */
const APART = 0.5;

/** One scatter plot: every candidate at its measured accuracy, its emulated accuracy as a hollow diamond where it
 * differs, the front's points filled and joined, the ends labelled where the labels overlap nothing. */
export function frontSvg(result: MixedPrecisionResult, view: FrontView): string {
  const x = (c: MixedPrecisionCandidate) => (view === 'latency' ? c.latencyMs : c.bytes / 1024);
  const front = new Set(view === 'latency' ? result.latencyFront : result.sizeFront);
  const cands = result.candidates;
  const xs = axis(Math.min(...cands.map(x)), Math.max(...cands.map(x)), 5);
  const ys = axis(
    Math.min(...cands.map(measured), ...cands.map(emulated)),
    Math.max(...cands.map(measured), ...cands.map(emulated)),
    5,
  );
  const [x0, x1] = xs.domain;
  const [y0, y1] = ys.domain;
  const px = (v: number) => PAD.left + ((v - x0) / (x1 - x0)) * (W - PAD.left - PAD.right);
  const py = (v: number) => H - PAD.bottom - ((v - y0) / (y1 - y0)) * (H - PAD.top - PAD.bottom);
  const f = (v: number) => v.toFixed(1);
  const parts: string[] = [];
  const avoid: Box[] = [];
  for (const [t, label] of xs.ticks) {
    const at = px(t);
    parts.push(
      `<line class="grid" x1="${f(at)}" x2="${f(at)}" y1="${PAD.top}" y2="${H - PAD.bottom}"/>`,
      `<text class="tick x-tick" x="${f(at)}" y="${H - PAD.bottom + 14}" text-anchor="middle">${label}</text>`,
    );
  }
  for (const [t, label] of ys.ticks) {
    const at = py(t);
    parts.push(
      `<line class="grid" x1="${PAD.left}" x2="${W - PAD.right}" y1="${f(at)}" y2="${f(at)}"/>`,
      `<text class="tick y-tick" x="${PAD.left - 6}" y="${f(at + 3.5)}" text-anchor="end">${label}</text>`,
    );
  }
  const xLabel =
    view === 'latency' ? `ONNX Runtime latency, batch ${result.backend.batch} (median ms)` : 'size (KiB of weights)';
  parts.push(
    `<text class="axis" x="${(PAD.left + W - PAD.right) / 2}" y="${H - 8}" text-anchor="middle">${esc(xLabel)}</text>`,
    `<text class="axis" transform="translate(14 ${(PAD.top + H - PAD.bottom) / 2}) rotate(-90)" text-anchor="middle">top-1 on ONNX Runtime (%)</text>`,
  );
  const onFront = cands.filter((c) => front.has(c.id)).sort((a, b) => x(a) - x(b));
  if (onFront.length > 1) {
    // A staircase: between two front points the better accuracy is only reached at the slower/bigger one.
    const pts: string[] = [];
    onFront.forEach((c, i) => {
      if (i > 0) pts.push(`${f(px(x(c)))},${f(py(measured(onFront[i - 1])))}`);
      pts.push(`${f(px(x(c)))},${f(py(measured(c)))}`);
    });
    parts.push(`<polyline class="front" points="${pts.join(' ')}"/>`);
  }
  const marks: string[] = [];
  for (const c of cands) {
    const cx = px(x(c));
    const cy = py(measured(c));
    const ey = py(emulated(c));
    if (Math.abs(emulated(c) - measured(c)) >= APART) {
      const text = `${c.label}: fake-quant (emulated) ${pct(c.accuracy)}, measured on ONNX Runtime ${pct(c.ortAccuracy)}`;
      parts.push(
        `<line class="gap" x1="${f(cx)}" x2="${f(cx)}" y1="${f(cy)}" y2="${f(ey)}"/>`,
        `<path class="emulated" data-id="${esc(c.id)}" d="M${f(cx)} ${f(ey - 4)}l4 4l-4 4l-4 -4z"><title>${esc(text)}</title></path>`,
      );
      avoid.push({ x: cx - 4, y: ey - 4, w: 8, h: 8 });
    }
    const r = front.has(c.id) ? 5 : 3.5;
    avoid.push({ x: cx - r, y: cy - r, w: 2 * r, h: 2 * r });
    const cls = front.has(c.id) ? 'point on-front' : 'point';
    marks.push(
      `<circle class="${cls}" data-id="${esc(c.id)}" cx="${f(cx)}" cy="${f(cy)}" r="${r}" tabindex="0" role="button" aria-label="${esc(describe(c))}"><title>${esc(describe(c))}</title></circle>`,
    );
  }
  parts.push(...marks);
  const byId = new Map(cands.map((c) => [c.id, c]));
  const requests: LabelRequest[] = Object.entries(result.ends)
    .filter(([, id]) => byId.has(id))
    .map(([k, id]) => ({ id, text: `all ${k}`, x: px(x(byId.get(id)!)), y: py(measured(byId.get(id)!)) }));
  const bounds = { x: PAD.left, y: PAD.top, w: W - PAD.left - PAD.right, h: H - PAD.top - PAD.bottom };
  for (const l of placeLabels(requests, avoid, bounds))
    parts.push(
      `<text class="end" data-end="${esc(l.text)}" x="${f(l.x)}" y="${f(l.y)}" text-anchor="${l.anchor}">${esc(l.text)}</text>`,
    );
  const title =
    view === 'latency'
      ? 'Accuracy on ONNX Runtime vs latency (front: not beaten on both)'
      : 'Accuracy on ONNX Runtime vs size (front: not beaten on both)';
  return `<svg class="front-chart" data-view="${view}" viewBox="0 0 ${W} ${H}" role="img" aria-label="${esc(title)}">${parts.join('')}</svg>`;
}

function row(c: MixedPrecisionCandidate, result: MixedPrecisionResult): string {
  const flags = [
    result.latencyFront.includes(c.id) ? 'latency' : '',
    result.sizeFront.includes(c.id) ? 'size' : '',
  ].filter(Boolean);
  const floats = floatLayers(c);
  return `<tr data-id="${esc(c.id)}"${c.onFront ? ' class="on-front"' : ''}>
<td>${esc(c.label)}</td><td class="num">${pct(c.ortAccuracy)}</td><td class="num emulated-cell">${pct(c.accuracy)}</td><td class="num">${ms(c.latencyMs)}${c.latency[result.backend.batch === 1 ? 'b1' : 'b16'].noisy ? ' (noisy)' : ''}</td>
<td class="num">${kib(c.bytes)}</td><td>${c.onFront ? 'yes' : ''}${flags.length ? ` (${flags.join(', ')})` : ''}</td><td class="floats" title="${esc(floats.full)}">${esc(floats.short)}</td>
<td><button class="pick" data-id="${esc(c.id)}">Write overrides</button></td></tr>`;
}

/** The slow-int8 explanation, where all int8 is the slower end. */
function slowNote(result: MixedPrecisionResult): string {
  const slow = slowInt8(result);
  if (!slow) return '';
  const [head, ...why] = slow.lines;
  return `<section id="slow-int8" class="note" role="note"><h3>${esc(head)}</h3><ul>${why.map((l) => `<li>${esc(l)}</li>`).join('')}</ul></section>`;
}

/** The whole page. `nonce` allows our one style and one script; nothing loads from elsewhere. */
export function frontHtml(result: MixedPrecisionResult, o: { nonce: string; title: string }): string {
  // No images, fonts or frames: the plots are inline SVG, so nothing but the nonce is allowed.
  const csp = ["default-src 'none'", `style-src 'nonce-${o.nonce}'`, `script-src 'nonce-${o.nonce}'`].join('; ');
  const ordered = [...result.candidates].sort(
    (a, b) => Number(b.onFront) - Number(a.onFront) || b.ortAccuracy - a.ortAccuracy || a.latencyMs - b.latencyMs,
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
.tick { font-size: 10px; fill: var(--vscode-descriptionForeground, #717171); }
.end { font-size: 10px; fill: var(--vscode-foreground); }
.emulated { fill: none; stroke: var(--vscode-charts-orange, #d18616); stroke-width: 1.2; }
.gap { stroke: var(--vscode-charts-orange, #d18616); stroke-width: 1; stroke-dasharray: 2 2; }
.legend { display: flex; gap: 16px; flex-wrap: wrap; margin: 4px 0; color: var(--vscode-descriptionForeground); }
.legend svg { vertical-align: middle; }
.note { border-left: 3px solid var(--vscode-editorWarning-foreground, #bf8803); background: var(--vscode-textBlockQuote-background, transparent); padding: 4px 12px; margin: 8px 0; max-width: 1132px; }
.note h3 { font-size: 1em; margin: 4px 0; }
.num { font-variant-numeric: tabular-nums; text-align: right; white-space: nowrap; }
.emulated-cell { color: var(--vscode-descriptionForeground); }
td.floats { max-width: 320px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
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
<p>${result.candidates.length} candidates measured (${result.budget.measured} of ${result.budget.planned} planned, budget ${result.budget.candidates} candidates / ${result.budget.seconds} s) on ${result.samples} validation samples; accuracy measured on ONNX Runtime (the emulated fake-quant figure beside it). Latency: ONNX Runtime ${esc(b.version)} ${esc(b.device)}, ${b.rounds} interleaved rounds, ${b.runs} calls per figure, on ${esc(b.cpu.model)}. Front: not beaten on accuracy, latency and size at once.</p>
${slowNote(result)}
<div class="legend" id="legend"><span><svg width="12" height="12" aria-hidden="true"><circle class="point on-front" cx="6" cy="6" r="4.5"/></svg> measured on ONNX Runtime (front filled)</span><span><svg width="12" height="12" aria-hidden="true"><path class="emulated" d="M6 1l5 5l-5 5l-5 -5z"/></svg> fake-quant (emulated), where it differs</span></div>
<div class="charts">${frontSvg(result, 'latency')}${frontSvg(result, 'size')}</div>
<table id="candidates"><thead><tr><th>candidate</th><th>top-1 on ONNX Runtime</th><th>fake-quant (emulated)</th><th>latency</th><th>size</th><th>front</th><th>float layers</th><th></th></tr></thead>
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
