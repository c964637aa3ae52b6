// Find Where INT8 Diverges' results under the graph: each stage's top-1, each bisected pair's verdict, the
// Markdown report on request, and a table with one column group per stage pair (the local and propagated error:
// output steps, or SQNR where the output is float), sortable like the layer table; a row click shows its layer in
// the graph and opens its source line, as the layer table does.
import type { StageLayer } from '../../protocol/kernel';
import type { StageResults } from '../../protocol/webview';
import { LEVEL_LOOK, errorLevel, figure, pairLabel, predecessors, severity } from '../graph/stageLanes';
import { pairVerdicts, stageAccuracies } from '../graph/stageVerdicts';

export interface StageColumn {
  /** '#', 'layer', 'op', 'source', or `<pair>/local`, `<pair>/propagated`. */
  id: string;
  title: string;
  hint?: string;
  value: (l: StageLayer, index: number) => number | string;
  text: (l: StageLayer, index: number) => string;
  /** The first click sorts worst (largest) first. */
  worstFirst?: boolean;
  /** Local error of a pair that should agree: the cell is marked by its level. */
  judged?: { pair: string };
}

export interface StageColumnGroup {
  pair: string;
  label: string;
  columns: StageColumn[];
}

const WHICH = { local: 'local', propagated: 'propagated' } as const;

/** The table's columns: graph order, layer and op; one group per stage pair compared, with the figures any layer
 * has for it (a pair compared propagated only has one column); the source line. */
export function stageColumns(results: StageResults): {
  lead: StageColumn[];
  groups: StageColumnGroup[];
  tail: StageColumn[];
} {
  const lead: StageColumn[] = [
    { id: '#', title: '#', hint: 'graph order', value: (_l, i) => i, text: (_l, i) => String(i + 1) },
    { id: 'layer', title: 'layer', value: (l) => l.module, text: (l) => l.module },
    { id: 'op', title: 'op', value: (l) => l.op, text: (l) => (l.group.length > 1 ? l.group.join('+') : l.op) },
  ];
  const bisected = new Set(results.bisected);
  const groups = results.pairs.map((pair) => {
    const columns = (['local', 'propagated'] as const)
      .filter((which) => results.layers.some((l) => l.pairs[pair]?.[which]))
      .map((which): StageColumn => ({
        id: `${pair}/${which}`,
        title: WHICH[which],
        hint:
          which === 'local'
            ? "the later stage's layer fed the earlier stage's input: this layer alone (max |Δ| in output steps, else SQNR)"
            : 'each stage run whole: what reaches this layer (max |Δ| in output steps, else SQNR)',
        value: (l) => severity(l.pairs[pair], which, results),
        text: (l) => figure(l.pairs[pair], which) ?? '—',
        worstFirst: true,
        ...(which === 'local' && bisected.has(pair) ? { judged: { pair } } : {}),
      }));
    return { pair, label: pairLabel(results, pair), columns };
  });
  const tail: StageColumn[] = [
    {
      id: 'source',
      title: 'source',
      value: (l) => (l.source ? `${l.source.file}:${String(l.source.line).padStart(6, '0')}` : ''),
      text: (l) => (l.source ? `${l.source.file.split(/[\\/]/).pop()}:${l.source.line}` : ''),
    },
  ];
  return { lead, groups, tail };
}

let sortBy = { column: '#', ascending: true };

export interface StageTableOptions {
  /** A row was clicked: show layer `index` in the graph and its source. */
  onSelect: (index: number) => void;
  /** The Markdown report was asked for. */
  onOpenReport: () => void;
}

const make = <K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, text?: string) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
};

/** Draws the stage results into `host`, replacing what was there. */
export function renderStageTable(host: HTMLElement, results: StageResults, o: StageTableOptions): void {
  const redraw = () => renderStageTable(host, results, o);
  const { lead, groups, tail } = stageColumns(results);
  const all = [...lead, ...groups.flatMap((g) => g.columns), ...tail];
  const table = make('table', { class: 'stage-table' });
  const cols = (span: number, attrs: Record<string, string>) => make('colgroup', { span: String(span), ...attrs });
  table.append(
    cols(lead.length, { class: 'lead' }),
    ...groups.map((g) => cols(g.columns.length, { 'data-pair': g.pair })),
    cols(tail.length, { class: 'tail' }),
  );
  const head = make('thead');
  const top = make('tr');
  const bottom = make('tr');
  const header = (c: StageColumn, attrs: Record<string, string> = {}) => {
    const th = make('th', { 'data-column': c.id, ...attrs });
    th.textContent = c.title + (sortBy.column === c.id ? (sortBy.ascending ? ' ▲' : ' ▼') : '');
    if (c.hint) th.title = c.hint;
    th.setAttribute('aria-sort', sortBy.column === c.id ? (sortBy.ascending ? 'ascending' : 'descending') : 'none');
    th.addEventListener('click', () => {
      sortBy = { column: c.id, ascending: sortBy.column === c.id ? !sortBy.ascending : !c.worstFirst };
      redraw();
    });
    return th;
  };
  for (const c of lead) top.append(header(c, { rowspan: '2' }));
  for (const g of groups) {
    top.append(make('th', { class: 'pair-group', colspan: String(g.columns.length), 'data-pair': g.pair }, g.label));
    for (const c of g.columns) bottom.append(header(c, { 'data-pair': g.pair }));
  }
  for (const c of tail) top.append(header(c, { rowspan: '2' }));
  head.append(top, bottom);

  const col = all.find((c) => c.id === sortBy.column) ?? lead[0];
  const order = results.layers.map((_l, i) => i);
  order.sort((a, b) => {
    const x = col.value(results.layers[a], a),
      y = col.value(results.layers[b], b);
    const d = typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y));
    return (sortBy.ascending ? d : -d) || a - b;
  });
  const firsts = new Map<number, string[]>();
  for (const key of results.bisected) {
    const d = results.divergence[key];
    if (d) (firsts.get(d.index) ?? firsts.set(d.index, []).get(d.index)!).push(key);
  }
  const body = make('tbody');
  for (const i of order) {
    const l = results.layers[i];
    const row = make('tr', { 'data-module': l.module, 'data-index': String(i) });
    const first = firsts.get(i);
    if (first) row.setAttribute('data-first', first.join(' '));
    for (const c of all) {
      const cell = make('td', { 'data-column': c.id });
      if (c.id === 'layer') {
        cell.append(l.module);
        if (first) {
          const mark = make('span', { class: 'first-mark' }, ' ●');
          mark.title = first.map((k) => `${pairLabel(results, k)} first diverges here`).join('\n');
          cell.append(mark);
        }
      } else if (c.id === 'source' && l.source) {
        const link = make('a', { href: '#', class: 'source' }, c.text(l, i));
        link.title = `${l.source.file}:${l.source.line}`;
        cell.append(link);
      } else cell.textContent = c.text(l, i);
      if (c.judged) {
        const pair = l.pairs[c.judged.pair];
        const level = errorLevel(pair?.local, pair?.localSteps, results);
        if (level) {
          cell.setAttribute('data-level', level);
          const sw = make('span', { class: 'swatch' });
          sw.style.background = LEVEL_LOOK[level].colour;
          cell.prepend(sw);
          cell.title = LEVEL_LOOK[level].text;
        }
      }
      row.append(cell);
    }
    row.addEventListener('click', (ev) => {
      ev.preventDefault();
      o.onSelect(i);
    });
    body.append(row);
  }
  table.append(head, body);
  const wrap = make('div', { class: 'stage-table-wrap' });
  wrap.append(table);
  host.replaceChildren(overview(results, o), verdictList(results), wrap);
}

/** Each stage's top-1 and the button for the Markdown report. */
function overview(results: StageResults, o: StageTableOptions): HTMLElement {
  const wrap = make('div', { class: 'model-accuracy stage-accuracy' });
  const figures = make('span', { class: 'stages' });
  figures.append('Top-1');
  for (const a of stageAccuracies(results)) {
    const stage = make('span', { class: 'stage', 'data-stage': a.stage });
    if (a.why) stage.title = a.why;
    stage.append(`${a.label} `, make('b', {}, a.text));
    figures.append(stage);
  }
  figures.append(`on ${results.accuracy.samples} validation samples`);
  const report = make('vscode-button', { id: 'open-stage-report', secondary: '' }, 'Open Markdown Report');
  report.addEventListener('click', () => o.onOpenReport());
  wrap.append(figures, report);
  return wrap;
}

/** One line per bisected pair: where it first diverges and why, or that it agrees. */
function verdictList(results: StageResults): HTMLElement {
  const list = make('ul', { class: 'verdicts' });
  for (const v of pairVerdicts(results)) {
    const item = make('li', { 'data-pair': v.pair, 'data-verdict': v.diverges ? 'diverges' : 'agrees' });
    item.append(make('b', {}, v.label), `: ${v.text}`);
    list.append(item);
  }
  return list;
}

/** The selected layer's figures for the properties panel: each pair, local and propagated, and its level. */
export function stageProperties(results: StageResults, index: number): HTMLElement {
  const layer = results.layers[index];
  const section = make('section', { class: 'stage-props', 'data-module': layer.module });
  section.append(make('h3', {}, `Stages: ${layer.module}`));
  const dl = make('dl');
  const before = new Set(predecessors(results).values());
  for (const key of results.pairs) {
    const pair = layer.pairs[key];
    if (!pair) continue;
    const local = figure(pair, 'local');
    const propagated = figure(pair, 'propagated');
    const level = before.has(key) ? errorLevel(pair.local, pair.localSteps, results) : undefined;
    dl.append(
      make('dt', {}, pairLabel(results, key)),
      make(
        'dd',
        { ...(level ? { 'data-level': level } : {}) },
        [local && `local ${local}`, propagated && `propagated ${propagated}`].filter(Boolean).join(', ') +
          (level ? ` (${LEVEL_LOOK[level].text})` : ''),
      ),
    );
  }
  const missing = results.stages.filter((s) => layer.stages[s.id] === false).map((s) => s.label);
  if (missing.length) dl.append(make('dt', {}, 'not found in'), make('dd', {}, missing.join(', ')));
  section.append(dl);
  for (const key of results.bisected) {
    const d = results.divergence[key];
    if (d?.index === index) section.append(make('p', { class: 'cause' }, `${pairLabel(results, key)}: ${d.cause}`));
  }
  return section;
}
