// How a run reads: its label, its time, and the side-by-side comparison of runs. Free of the vscode module.
import path from 'node:path';
import type { RunRecord } from './runStore';

export function runLabel(r: RunRecord): string {
  return `${r.kind}${r.detail ? ` ${r.detail}` : ''} · ${path.basename(r.config)}`;
}

export function runTime(r: RunRecord): string {
  const d = new Date(r.started);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The comparison as HTML (no script): exported for tests. */
export function compareRunsHtml(runs: RunRecord[], cspSource: string): string {
  const labels: string[] = [];
  for (const r of runs) for (const [k] of r.figures) if (!labels.includes(k)) labels.push(k);
  const rows: Array<[string, string[]]> = [
    ['time', runs.map(runTime)],
    ['config', runs.map((r) => r.config)],
    ['status', runs.map((r) => r.status)],
    ['seconds', runs.map((r) => (r.seconds === undefined ? '' : String(r.seconds)))],
    ...labels.map((k) => [k, runs.map((r) => r.figures.find(([l]) => l === k)?.[1] ?? '')] as [string, string[]]),
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
<title>Compare Runs</title>
<style>
body { color: var(--vscode-foreground); background: var(--vscode-editor-background); font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); padding: 8px 12px; }
.wrap { overflow: auto; }
table { border-collapse: collapse; }
th, td { text-align: left; padding: 3px 12px; border-bottom: 1px solid var(--vscode-panel-border, #ccc); vertical-align: top; }
thead th { position: sticky; top: 0; background: var(--vscode-editor-background); }
tr.differs td { font-weight: 600; }
</style></head>
<body><h2>Compare Runs</h2><div class="wrap"><table id="runs">
<thead><tr><th></th>${runs.map((r) => `<th scope="col">${esc(runLabel(r))}</th>`).join('')}</tr></thead>
<tbody>
${body}
</tbody></table></div>
<p>Rows in bold differ between the runs.</p></body></html>`;
}
