// The results view's per-layer table: worst first, sortable, a sticky header, and a column chooser so that it
// stays readable in a narrow editor column (the optional columns start hidden when the view is narrow).
import type { LayerResult } from '../../protocol/kernel';
import { bandOf } from './metrics';

type Column = {
  id: string;
  title: string;
  value: (l: LayerResult) => number | string;
  text: (l: LayerResult) => string;
  hint?: string;
  /** Shown by default only when the view is wide enough. */
  optional?: boolean;
};

const metric = (v: number | undefined, digits: number) => (v === undefined ? '' : v.toFixed(digits));

export const COLUMNS: Column[] = [
  { id: 'layer', title: 'layer', value: (l) => l.module, text: (l) => l.module },
  {
    id: 'op',
    title: 'op',
    value: (l) => l.op,
    text: (l) => `${l.op}${l.group.length > 1 ? ` (${l.group.join('+')})` : ''}`,
    optional: true,
  },
  {
    id: 'cosine',
    title: 'cosine',
    value: (l) => l.cosine,
    text: (l) => l.cosine.toFixed(5),
    hint: 'whole INT8 model vs the original FP32 model',
  },
  {
    id: 'sqnr',
    title: 'SQNR dB',
    value: (l) => l.sqnr,
    text: (l) => l.sqnr.toFixed(2),
    hint: 'cosine flatters post-ReLU tensors; SQNR does not',
  },
  {
    id: 'local',
    title: 'local SQNR',
    value: (l) => l.local?.sqnr ?? -Infinity,
    text: (l) => metric(l.local?.sqnr, 2),
    hint: 'this layer alone, fed the FP32 input',
    optional: true,
  },
  {
    id: 'vsQat',
    title: 'SQNR vs QAT float',
    value: (l) => l.vsQatFloat?.sqnr ?? -Infinity,
    text: (l) => metric(l.vsQatFloat?.sqnr, 2),
    hint: 'quantization error alone, without QAT weight drift',
    optional: true,
  },
  { id: 'mse', title: 'MSE', value: (l) => l.mse, text: (l) => l.mse.toExponential(2), optional: true },
  { id: 'maxAbs', title: 'max |Δ|', value: (l) => l.maxAbs, text: (l) => l.maxAbs.toFixed(4) },
];

/** Below this width (CSS pixels) the optional columns start hidden, until the user picks columns. */
export const NARROW_WIDTH = 760;

let sortBy = { column: 'cosine', ascending: true };
/** The user's choice of hidden columns; undefined until they make one. */
let chosenHidden: Set<string> | undefined;

function hiddenColumns(width: number): Set<string> {
  if (chosenHidden) return chosenHidden;
  return new Set(width < NARROW_WIDTH ? COLUMNS.filter((c) => c.optional).map((c) => c.id) : []);
}

let lastDraw: (() => void) | undefined;
let wasNarrow: boolean | undefined;
/** Until the user picks columns, crossing the narrow width redraws the table with that width's defaults. */
function watchWidth(host: HTMLElement, draw: () => void): void {
  const win = host.ownerDocument.defaultView;
  if (!win) return;
  if (!lastDraw)
    win.addEventListener('resize', () => {
      const narrow = win.innerWidth < NARROW_WIDTH;
      if (narrow !== wasNarrow && !chosenHidden) lastDraw?.();
    });
  lastDraw = draw;
  wasNarrow = win.innerWidth < NARROW_WIDTH;
}

export interface LayerTableOptions {
  threshold: number;
  /** A row was clicked. */
  onSelect: (layer: LayerResult) => void;
  /** The SVG bar chart of cosine per layer (already built from trusted numbers and escaped names). */
  chartSvg: string;
}

/** Draws the chart and the table into `host`, replacing what was there. */
export function renderLayerTable(host: HTMLElement, layers: LayerResult[], o: LayerTableOptions): void {
  watchWidth(host, () => renderLayerTable(host, layers, o));
  if (!layers.length) {
    host.replaceChildren();
    return;
  }
  const redraw = () => renderLayerTable(host, layers, o);
  const hidden = hiddenColumns(host.ownerDocument.defaultView?.innerWidth ?? 1e9);
  const shown = COLUMNS.filter((c) => !hidden.has(c.id));

  const table = document.createElement('table');
  const thead = table.createTHead();
  const head = thead.insertRow();
  for (const c of shown) {
    const th = document.createElement('th');
    th.dataset.column = c.id;
    th.textContent = c.title + (sortBy.column === c.id ? (sortBy.ascending ? ' ▲' : ' ▼') : '');
    if (c.hint) th.title = c.hint;
    th.setAttribute('aria-sort', sortBy.column === c.id ? (sortBy.ascending ? 'ascending' : 'descending') : 'none');
    th.addEventListener('click', () => {
      sortBy = { column: c.id, ascending: sortBy.column === c.id ? !sortBy.ascending : true };
      redraw();
    });
    head.append(th);
  }
  const col = COLUMNS.find((c) => c.id === sortBy.column) ?? COLUMNS[2];
  const sorted = [...layers].sort((a, b) => {
    const x = col.value(a),
      y = col.value(b);
    const d = typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y));
    return sortBy.ascending ? d : -d;
  });
  const body = table.createTBody();
  for (const l of sorted) {
    const row = body.insertRow();
    row.dataset.module = l.module;
    if (l.cosine < o.threshold) row.className = 'bad';
    for (const c of shown) {
      const cell = row.insertCell();
      cell.dataset.column = c.id;
      cell.textContent = c.text(l);
    }
    if (shown[0]?.id === 'layer') {
      const sw = document.createElement('span');
      sw.className = 'swatch';
      sw.style.background = bandOf(l.cosine, o.threshold).colour;
      row.cells[0].prepend(sw);
    }
    row.addEventListener('click', () => o.onSelect(l));
  }

  const chooser = document.createElement('details');
  chooser.className = 'columns';
  const summary = document.createElement('summary');
  summary.textContent = `Columns (${shown.length}/${COLUMNS.length})`;
  chooser.append(summary);
  for (const c of COLUMNS) {
    const label = document.createElement('label');
    const box = document.createElement('input');
    box.type = 'checkbox';
    box.value = c.id;
    box.checked = !hidden.has(c.id);
    // The layer name is how a row is identified: it cannot be hidden.
    box.disabled = c.id === 'layer';
    box.addEventListener('change', () => {
      const next = new Set(hidden);
      if (box.checked) next.delete(c.id);
      else next.add(c.id);
      chosenHidden = next;
      redraw();
      (host.querySelector('details.columns') as HTMLDetailsElement | null)?.setAttribute('open', '');
    });
    label.append(box, ` ${c.title}`);
    chooser.append(label);
  }

  const chart = document.createElement('div');
  chart.className = 'chart';
  chart.innerHTML = o.chartSvg;
  const wrap = document.createElement('div');
  wrap.className = 'table-wrap';
  wrap.append(table);
  const side = document.createElement('div');
  side.className = 'table-side';
  side.append(chooser, wrap);
  host.replaceChildren(chart, side);
}
