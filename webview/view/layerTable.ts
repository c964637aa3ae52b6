// The results view's per-layer table and chart, in @vscode-elements tabs: the table (vscode-table) worst first,
// sortable, its header fixed while the rows scroll, and a column chooser so that it stays readable in a narrow
// editor column (the optional columns start hidden when the view is narrow). The elements are defined by main.ts.
import type { VscodeCheckbox, VscodeCollapsible, VscodeTable, VscodeTabs } from '@vscode-elements/elements';
import type { LayerResult } from '../../protocol/kernel';
import type { ModelAccuracy } from '../../protocol/webview';
import { summarizeAccuracy } from './accuracy';
import { bandOf } from '../../common/bands';
import { distinguishingTails } from '../graph/metrics';

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
  /** The model's accuracy at the stages the run measured, shown above the layers. */
  accuracy?: ModelAccuracy;
}

/** Row and header heights of vscode-table (its cells' own styles), to size the table to its rows. */
const ROW_PX = 24;
const HEADER_PX = 31;

let selectedTab = 0;

const make = <K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  return e;
};

/**
 * Draws the results into `host`, replacing what was there: @vscode-elements tabs for the table (vscode-table, its
 * header fixed above the rows that scroll, and a column chooser) and the chart.
 */
export function renderLayerTable(host: HTMLElement, layers: LayerResult[], o: LayerTableOptions): void {
  watchWidth(host, () => renderLayerTable(host, layers, o));
  if (!layers.length) {
    host.replaceChildren();
    return;
  }
  const redraw = () => renderLayerTable(host, layers, o);
  const hidden = hiddenColumns(host.ownerDocument.defaultView?.innerWidth ?? 1e9);
  const shown = COLUMNS.filter((c) => !hidden.has(c.id));

  const table: VscodeTable = make('vscode-table', { 'bordered-rows': '', resizable: '', 'min-column-width': '40px' });
  // The layer column takes a larger share; the metric columns split the rest.
  table.columns = shown.map((c, i) => (i === 0 ? `${Math.round(100 / (shown.length + 1)) * 2}%` : 'auto'));
  // Only as tall as its rows, up to what the panel allows; past that the rows scroll under the header.
  table.style.height = `min(var(--qat-table-max), ${HEADER_PX + ROW_PX * layers.length + 2}px)`;
  const head = make('vscode-table-header', { slot: 'header' });
  for (const c of shown) {
    const th = make('vscode-table-header-cell', { 'data-column': c.id });
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
  const body = make('vscode-table-body', { slot: 'body' });
  const tails = distinguishingTails(layers.map((l) => l.module));
  for (const l of sorted) {
    // A row is marked by its own cosine's band (the swatch), like its box in the graph: no alarm colour for the
    // whole row, which read as "broken" for a layer a hair under the threshold in a model that lost nothing.
    const band = bandOf(l.cosine, o.threshold);
    const row = make('vscode-table-row', { 'data-module': l.module, 'data-band': band.label });
    for (const c of shown) {
      const cell = make('vscode-table-cell', { 'data-column': c.id });
      if (c.id === 'layer') {
        const sw = make('span', { class: 'swatch' });
        sw.style.background = band.colour;
        cell.append(sw, layerName(l.module, tails.get(l.module) ?? l.module));
        cell.title = `${l.module}: cosine ${l.cosine.toFixed(5)} (${band.range(o.threshold)})`;
      } else cell.textContent = c.text(l);
      row.append(cell);
    }
    row.addEventListener('click', () => o.onSelect(l));
    body.append(row);
  }
  table.append(head, body);

  const chooser: VscodeCollapsible = make('vscode-collapsible', {
    class: 'columns',
    heading: `Columns (${shown.length}/${COLUMNS.length})`,
  });
  const boxes = make('div', { class: 'column-boxes' });
  for (const c of COLUMNS) {
    const box: VscodeCheckbox = make('vscode-checkbox', { value: c.id, label: c.title });
    box.checked = !hidden.has(c.id);
    // The layer name is how a row is identified: it cannot be hidden.
    box.disabled = c.id === 'layer';
    box.addEventListener('change', () => {
      const next = new Set(hidden);
      if (box.checked) next.delete(c.id);
      else next.add(c.id);
      chosenHidden = next;
      redraw();
      const again = host.querySelector<VscodeCollapsible>('vscode-collapsible.columns');
      if (again) again.open = true;
    });
    boxes.append(box);
  }
  chooser.append(boxes);

  const side = make('div', { class: 'table-side' });
  side.append(chooser, table);
  const chart = make('div', { class: 'chart' });
  chart.innerHTML = o.chartSvg;
  const tabs: VscodeTabs = make('vscode-tabs', { class: 'results', panel: '' });
  const tab = (label: string, id: string, content: HTMLElement) => {
    const header = make('vscode-tab-header', { slot: 'header', 'data-tab': id });
    header.textContent = label;
    const panel = make('vscode-tab-panel', { 'data-tab': id, panel: '' });
    panel.append(content);
    tabs.append(header, panel);
  };
  tab(`Layers (${layers.length})`, 'table', side);
  tab('Cosine chart', 'chart', chart);
  tabs.selectedIndex = selectedTab;
  tabs.addEventListener('vsc-tabs-select', (ev) => {
    selectedTab = ev.detail.selectedIndex;
  });
  host.replaceChildren(accuracySummary(layers, o), tabs);
}

/**
 * A layer's name that keeps its distinguishing tail in view: the head (what the names share) gives way first,
 * with an ellipsis, so features.16.conv.3 and features.17.conv.3 never both read "features.1…".
 */
function layerName(module: string, tail: string): HTMLElement {
  const name = make('span', { class: 'name' });
  const headText = module.slice(0, module.length - tail.length);
  if (headText) {
    const head = make('span', { class: 'head' });
    head.textContent = headText;
    name.append(head);
  }
  // Right to left, so that in a column too narrow even for the tail, its start gives way (with an ellipsis) and
  // its end stays; the text itself stays left to right.
  const end = make('span', { class: 'tail' });
  const text = make('bdi', { dir: 'ltr' });
  text.textContent = tail;
  end.append(text);
  name.append(end);
  return name;
}

/** The model's accuracy at each measured stage and what it means for the layers below. */
function accuracySummary(layers: LayerResult[], o: LayerTableOptions): HTMLElement {
  const wrap = make('div', { class: 'model-accuracy' });
  const s = o.accuracy ? summarizeAccuracy(o.accuracy, layers, o.threshold) : undefined;
  if (s?.stages.length) {
    const figures = make('span', { class: 'stages' });
    figures.append('Top-1');
    for (const [label, value] of s.stages) {
      const stage = make('span', { class: 'stage', 'data-stage': label });
      const b = make('b');
      b.textContent = value;
      stage.append(`${label} `, b);
      figures.append(stage);
    }
    figures.append(`on ${s.samples} validation samples`);
    wrap.append(figures);
  }
  if (s?.verdict) wrap.dataset.verdict = s.verdict;
  const s2 = s ?? summarizeAccuracy({ samples: 0 }, layers, o.threshold);
  // The headline always; what it means for the layers below where there is room (and in the tooltip).
  const text = make('span', { class: 'verdict', title: s2.text });
  const headline = make('span', { class: 'headline' });
  headline.textContent = s2.headline;
  text.append(headline);
  if (s2.detail) {
    const detail = make('span', { class: 'detail' });
    detail.textContent = ` ${s2.detail}`;
    text.append(detail);
  }
  wrap.append(text);
  return wrap;
}
