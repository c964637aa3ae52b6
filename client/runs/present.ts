// How a run reads: its label, its time, and the side-by-side comparison of runs. Free of the vscode module.
import path from 'node:path';
import type { RunLayer, RunRecord } from './runStore';

export function runLabel(r: RunRecord): string {
  return `${r.kind}${r.detail ? ` ${r.detail}` : ''} · ${path.basename(r.config)}`;
}

export function runTime(r: RunRecord): string {
  const d = new Date(r.started);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** One column of the comparison: one run, or several runs of one model read as one (e.g. before a fix: its
 * compare and its evaluation), the first run with a figure giving it. */
export interface RunColumn {
  title: string;
  runs: RunRecord[];
}

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const isColumn = (c: RunRecord | RunColumn): c is RunColumn => 'runs' in c && Array.isArray(c.runs);

/** The figure `label` of a column: from the first of its runs that has it. */
export function columnFigure(c: RunColumn, label: string): string | undefined {
  for (const r of c.runs) {
    const hit = r.figures.find(([l]) => l === label);
    if (hit) return hit[1];
  }
  return undefined;
}

function columnLayers(c: RunColumn): RunLayer[] | undefined {
  return c.runs.find((r) => r.layers?.length)?.layers;
}

const db = (v: number | undefined) => (v === undefined || !Number.isFinite(v) ? '' : v.toFixed(1));
const cos = (v: number | undefined) => (v === undefined || !Number.isFinite(v) ? '' : v.toFixed(4));

/** Per-layer SQNR (local and propagated) and cosine of each column that has them, worst local SQNR of the
 * first such column first; with two columns, the change in local SQNR. */
function layersTable(columns: RunColumn[]): string {
  const withLayers = columns.map((c) => ({ c, layers: columnLayers(c) })).filter((x) => x.layers);
  if (!withLayers.length) return '';
  const first = withLayers[0].layers!;
  const key = (l: RunLayer) => l.localSqnr ?? l.sqnr;
  const modules = [...first].sort((a, b) => key(a) - key(b)).map((l) => l.module);
  for (const { layers } of withLayers.slice(1))
    for (const l of layers!) if (!modules.includes(l.module)) modules.push(l.module);
  const maps = withLayers.map(({ layers }) => new Map(layers!.map((l) => [l.module, l])));
  const delta = withLayers.length === 2;
  const head = withLayers.map(({ c }) => `<th scope="colgroup" colspan="3">${esc(c.title)}</th>`).join('');
  const sub = withLayers.map(() => '<th>local SQNR dB</th><th>SQNR dB</th><th>cosine</th>').join('');
  const rows = modules
    .map((m) => {
      const cells = maps
        .map((map) => {
          const l = map.get(m);
          return `<td>${db(l?.localSqnr)}</td><td>${db(l?.sqnr)}</td><td>${cos(l?.cosine)}</td>`;
        })
        .join('');
      let change = '';
      if (delta) {
        const [a, b] = maps.map((map) => map.get(m));
        const d = a && b ? key(b) - key(a) : undefined;
        change = `<td>${d === undefined || !Number.isFinite(d) ? '' : `${d >= 0 ? '+' : ''}${d.toFixed(1)}`}</td>`;
      }
      return `<tr><th scope="row">${esc(m)}</th>${cells}${change}</tr>`;
    })
    .join('\n');
  return `<h3>Layers</h3><div class="wrap"><table id="layers">
<thead><tr><th></th>${head}${delta ? '<th></th>' : ''}</tr>
<tr><th scope="col">layer</th>${sub}${delta ? '<th>change dB</th>' : ''}</tr></thead>
<tbody>
${rows}
</tbody></table></div>
<p>Local: the INT8 layer fed the FP32 model's input (its own error); SQNR and cosine: the whole INT8 model run (error carried from earlier layers). Worst local SQNR first.</p>`;
}

/** The comparison as HTML (no script): exported for tests. Each entry is a run, or a column of runs. */
export function compareRunsHtml(
  entries: Array<RunRecord | RunColumn>,
  cspSource: string,
  heading = 'Compare Runs',
): string {
  const columns = entries.map((e) => (isColumn(e) ? e : { title: runLabel(e), runs: [e] }));
  const labels: string[] = [];
  for (const c of columns) for (const r of c.runs) for (const [k] of r.figures) if (!labels.includes(k)) labels.push(k);
  const each = (f: (r: RunRecord) => string) => columns.map((c) => [...new Set(c.runs.map(f))].join(', '));
  const rows: Array<[string, string[]]> = [
    ['time', columns.map((c) => (c.runs[0] ? runTime(c.runs[0]) : ''))],
    ['config', each((r) => r.config)],
    ['status', each((r) => r.status)],
    [
      'seconds',
      columns.map((c) =>
        c.runs.every((r) => r.seconds === undefined)
          ? ''
          : String(Math.round(c.runs.reduce((n, r) => n + (r.seconds ?? 0), 0) * 10) / 10),
      ),
    ],
    ...labels.map((k) => [k, columns.map((c) => columnFigure(c, k) ?? '')] as [string, string[]]),
  ];
  const body = rows
    .map(([k, vs]) => {
      const differs = new Set(vs).size > 1;
      return `<tr${differs ? ' class="differs"' : ''}><th scope="row">${esc(k)}</th>${vs.map((v) => `<td>${esc(v)}</td>`).join('')}</tr>`;
    })
    .join('\n');
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${cspSource} 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>${esc(heading)}</title>
<style>
body { color: var(--vscode-foreground); background: var(--vscode-editor-background); font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); padding: 8px 12px; }
.wrap { overflow: auto; }
table { border-collapse: collapse; }
th, td { text-align: left; padding: 3px 12px; border-bottom: 1px solid var(--vscode-panel-border, #ccc); vertical-align: top; }
thead th { position: sticky; top: 0; background: var(--vscode-editor-background); }
tr.differs td { font-weight: 600; }
#layers td { font-variant-numeric: tabular-nums; }
</style></head>
<body><h2>${esc(heading)}</h2><div class="wrap"><table id="runs">
<thead><tr><th></th>${columns.map((c) => `<th scope="col">${esc(c.title)}</th>`).join('')}</tr></thead>
<tbody>
${body}
</tbody></table></div>
<p>Rows in bold differ between the runs.</p>
${layersTable(columns)}</body></html>`;
}
