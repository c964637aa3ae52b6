// Export of the current view: SVG (styles inlined, so it renders outside VS Code), PNG, and a standalone
// HTML report (graph + per-layer table + cosine bar chart) with no scripts, which opens offline anywhere.
import type { LayerResult } from '../../protocol/kernel';
import type { StageResults } from '../../protocol/webview';
import { stageReportHtml } from './stageReport';
import { colourResolver } from './colours';
import { bandOf } from '../../common/bands';
import { middleEllipsis } from '../graph/metrics';

const STYLE_PROPS = [
  'fill',
  'fill-opacity',
  'stroke',
  'stroke-width',
  'stroke-dasharray',
  'opacity',
  'font-size',
  'font-family',
  'font-weight',
];

/** A standalone copy of the rendered SVG, with computed styles (theme colours) inlined. */
export function standaloneSvg(svg: SVGSVGElement): string {
  const copy = svg.cloneNode(true) as SVGSVGElement;
  const src = [svg, ...svg.querySelectorAll('*')];
  const dst = [copy, ...copy.querySelectorAll('*')];
  src.forEach((el, i) => {
    const cs = getComputedStyle(el);
    // Through the CSSOM: the webview's CSP blocks writing style attributes, not style properties.
    const target = dst[i] as SVGElement;
    target.removeAttribute('style');
    for (const p of STYLE_PROPS) target.style.setProperty(p, cs.getPropertyValue(p));
    dst[i].removeAttribute('data-vscode-context');
  });
  const box = svg.getBBox();
  copy.setAttribute('viewBox', `${box.x - 10} ${box.y - 10} ${box.width + 20} ${box.height + 20}`);
  copy.setAttribute('width', String(Math.ceil(box.width + 20)));
  copy.setAttribute('height', String(Math.ceil(box.height + 20)));
  copy.setAttribute('xmlns', 'http://www.w3.org/2000/svg');
  const bg = getComputedStyle(document.body).backgroundColor;
  copy.style.background = bg;
  return new XMLSerializer().serializeToString(copy);
}

/** PNG of an SVG string (drawn through an <img>) or of a canvas, as base64. */
export async function pngBase64(source: string | HTMLCanvasElement): Promise<string> {
  if (typeof source !== 'string') return source.toDataURL('image/png').split(',')[1];
  const img = new Image();
  img.src = `data:image/svg+xml;base64,${btoa(unescape(encodeURIComponent(source)))}`;
  await img.decode();
  const scale = Math.min(2, 16000 / Math.max(img.width, img.height));
  const canvas = document.createElement('canvas');
  canvas.width = Math.ceil(img.width * scale);
  canvas.height = Math.ceil(img.height * scale);
  const ctx = canvas.getContext('2d')!;
  ctx.scale(scale, scale);
  ctx.drawImage(img, 0, 0);
  return canvas.toDataURL('image/png').split(',')[1];
}

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Cosine per layer as horizontal bars with the threshold marked (inline SVG markup, no scripts). */
export function barChart(layers: LayerResult[], threshold: number): string {
  const w = 640,
    rowH = 18,
    left = 140;
  const min = Math.min(threshold - 0.02, ...layers.map((l) => l.cosine));
  const x = (v: number) => left + ((v - min) / (1 - min || 1)) * (w - left - 60);
  const resolve = colourResolver();
  const rows = layers
    .map((l, i) => {
      const colour = resolve(bandOf(l.cosine, threshold).colour);
      return (
        // Cut in the middle to the room left of the bars (about 6 px a character), the full name in its title.
        `<text x="${left - 6}" y="${i * rowH + 13}" text-anchor="end" font-size="11"><title>${esc(l.module)}</title>${esc(middleEllipsis(l.module, Math.floor((left - 10) / 6)))}</text>` +
        `<rect x="${left}" y="${i * rowH + 3}" width="${Math.max(1, x(l.cosine) - left)}" height="${rowH - 6}" fill="${colour}"/>` +
        `<text x="${x(l.cosine) + 4}" y="${i * rowH + 13}" font-size="10">${l.cosine.toFixed(4)}</text>`
      );
    })
    .join('');
  const t = x(threshold);
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${layers.length * rowH + 20}" viewBox="0 0 ${w} ${layers.length * rowH + 20}" role="img" aria-label="Cosine similarity per layer">${rows}` +
    `<line x1="${t}" x2="${t}" y1="0" y2="${layers.length * rowH}" stroke="#e51400" stroke-dasharray="4 2"/>` +
    `<text x="${t + 3}" y="${layers.length * rowH + 14}" font-size="10" fill="#e51400">threshold ${threshold}</text></svg>`
  );
}

export function htmlReport(
  title: string,
  graphSvg: string | undefined,
  graphPng: string | undefined,
  layers: LayerResult[],
  threshold: number,
  /** Find Where INT8 Diverges' results: the report carries them instead of the per-layer cosine. */
  stages?: StageResults,
): string {
  const sorted = [...layers].sort((a, b) => a.cosine - b.cosine);
  const rows = sorted
    .map(
      (l) =>
        `<tr${l.cosine < threshold ? ' class="bad"' : ''}><td>${esc(l.module)}</td><td>${esc(l.op)}</td><td>${esc(l.group.join('+'))}</td>` +
        `<td>${l.cosine.toFixed(5)}</td><td>${l.sqnr.toFixed(2)}</td><td>${l.mse.toExponential(3)}</td><td>${l.maxAbs.toPrecision(4)}</td>` +
        `<td>${l.source ? esc(`${l.source.file}:${l.source.line}`) : ''}</td></tr>`,
    )
    .join('\n');
  const graph = graphSvg ?? (graphPng ? `<img alt="graph" src="data:image/png;base64,${graphPng}">` : '');
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(title)} — QAT Studio report</title>
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<style>body{font-family:system-ui,sans-serif;margin:24px;color:#222}table{border-collapse:collapse;font-size:13px}
td,th{padding:3px 10px;text-align:left;border-bottom:1px solid #ddd}tr.bad td{color:#c00}.graph{overflow:auto;max-height:80vh;border:1px solid #ddd}
.bad{color:#c00}th.pair{text-align:center;border-bottom:2px solid #999}colgroup[data-pair]{border-left:1px solid #ccc}
.stage-table td{white-space:nowrap}.swatch{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:4px;vertical-align:middle}</style>
</head><body>
<h1>${esc(title)}</h1>
${
  stages
    ? stageReportHtml(stages)
    : `<p>Per-layer FP32 vs INT8 comparison, worst first. Threshold: cosine ${threshold}. Generated by QAT Studio.</p>
<h2>Layers</h2>
<table><thead><tr><th>layer</th><th>op</th><th>group</th><th>cosine</th><th>SQNR (dB)</th><th>MSE</th><th>max |Δ|</th><th>source</th></tr></thead>
<tbody>
${rows}
</tbody></table>
<h2>Cosine similarity per layer</h2>
${layers.length ? barChart(sorted, threshold) : '<p>No layers were compared.</p>'}`
}
<h2>Graph</h2>
<div class="graph">${graph}</div>
</body></html>
`;
}
