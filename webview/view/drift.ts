// Observer drift of one layer during QAT: its fake quantizers' scale (per-channel weights as a min–max band
// around the mean) and zero point over the sampled training steps, with the epoch boundaries marked. The value
// axis is labelled and spans at least a tenth of the first value (axes.ts driftDomain), with the first value
// drawn as the no-change baseline: a 1 % drift looks like 1 %, not like the whole height.
import type { ObserverDrift } from '../../protocol/kernel';
import { driftDomain, niceTicks, tickLabel } from '../../common/axes';

type Series = ObserverDrift['layers'][number];

export interface LayerDrift {
  steps: number[];
  epochs: number[];
  weight?: Series;
  activation?: Series;
}

/** The drift series of `module`, or undefined when the run sampled none for it. */
export function layerDrift(drift: ObserverDrift, module: string): LayerDrift | undefined {
  const weight = drift.layers.find((l) => l.module === module && l.role === 'weight');
  const activation = drift.layers.find((l) => l.module === module && l.role === 'activation');
  if (!weight && !activation) return undefined;
  return { steps: drift.steps, epochs: drift.epochs, weight, activation };
}

const fmt = (v: number) => v.toPrecision(3);

/** "0.0431 → 0.0515 (+19.5 %)": first and last value and the relative change. */
export function change(values: number[]): string {
  const first = values[0];
  const last = values[values.length - 1];
  const rel = first !== 0 ? ((last - first) / Math.abs(first)) * 100 : 0;
  return `${fmt(first)} → ${fmt(last)} (${rel >= 0 ? '+' : ''}${rel.toFixed(1)} %)`;
}

const NS = 'http://www.w3.org/2000/svg';
const W = 240;
const H = 60;
/** Left of the plot: the value axis's labels. */
const LEFT = 34;

function el<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string>): SVGElementTagNameMap[K] {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  return e;
}

/** A line over the steps (and, when given, a band between `low` and `high`) as an inline SVG. */
export function driftPlot(
  label: string,
  steps: number[],
  epochs: number[],
  line: number[],
  low?: number[],
  high?: number[],
): SVGSVGElement {
  const svg = el('svg', {
    viewBox: `0 0 ${W} ${H + 10}`,
    class: 'drift',
    role: 'img',
    'aria-label': `${label}: ${change(line)} over steps ${steps[0]}–${steps[steps.length - 1]}`,
  });
  const [min, max] = driftDomain([...line, ...(low ?? []), ...(high ?? [])], line[0]);
  svg.setAttribute('data-domain', `${min} ${max}`);
  const s0 = steps[0];
  const s1 = steps[steps.length - 1];
  const x = (s: number) => LEFT + (s1 > s0 ? ((s - s0) / (s1 - s0)) * (W - LEFT) : (W - LEFT) / 2);
  const y = (v: number) => H - 2 - ((v - min) / (max - min)) * (H - 4);
  // The value axis: round ticks with their labels, and the first value as the no-change baseline.
  // Presentation attributes in the panel's text colour (the webview allows no inline styles; client/editors/html.ts styles text).
  const axis = el('g', { class: 'axis', stroke: 'currentColor', 'stroke-opacity': '0.45' });
  axis.append(el('line', { class: 'y-axis', x1: String(LEFT), x2: String(LEFT), y1: '0', y2: String(H) }));
  const { ticks, step } = niceTicks(min, max, 3);
  for (const v of ticks) {
    const at = y(v).toFixed(1);
    axis.append(el('line', { class: 'tick', x1: String(LEFT - 3), x2: String(LEFT), y1: at, y2: at }));
    const t = el('text', {
      class: 'y-tick',
      x: String(LEFT - 4),
      y: (y(v) + 3).toFixed(1),
      'text-anchor': 'end',
      stroke: 'none',
    });
    t.textContent = tickLabel(v, step);
    axis.append(t);
  }
  const base = y(line[0]).toFixed(1);
  axis.append(
    el('line', { class: 'baseline', x1: String(LEFT), x2: String(W), y1: base, y2: base, 'stroke-dasharray': '1 2' }),
  );
  svg.append(axis);
  // Epoch boundaries: between the last sampled step of one epoch and the first of the next.
  for (let i = 1; i < epochs.length; i++) {
    if (epochs[i] !== epochs[i - 1]) {
      const at = x((steps[i - 1] + steps[i]) / 2).toFixed(1);
      svg.append(
        el('line', { class: 'epoch', x1: at, x2: at, y1: '0', y2: String(H), 'data-epoch': String(epochs[i]) }),
      );
    }
  }
  if (low && high) {
    const upper = steps.map((s, i) => `${x(s).toFixed(1)},${y(high[i]).toFixed(1)}`);
    const lower = steps.map((s, i) => `${x(s).toFixed(1)},${y(low[i]).toFixed(1)}`).reverse();
    svg.append(el('polygon', { class: 'band', points: [...upper, ...lower].join(' ') }));
  }
  svg.append(
    el('polyline', {
      class: 'line',
      points: steps.map((s, i) => `${x(s).toFixed(1)},${y(line[i]).toFixed(1)}`).join(' '),
    }),
  );
  const caption = el('text', { x: String(LEFT), y: String(H + 9) });
  caption.textContent = `step ${s0}`;
  const end = el('text', { x: String(W), y: String(H + 9), 'text-anchor': 'end' });
  end.textContent = `step ${s1}`;
  svg.append(caption, end);
  return svg;
}

function caption(text: string): HTMLElement {
  const div = document.createElement('div');
  div.className = 'drift-caption';
  div.textContent = text;
  return div;
}

/** The properties panel's "Observer drift during QAT" section. */
export function driftSection(d: LayerDrift): HTMLElement {
  const sec = document.createElement('section');
  sec.className = 'observer-drift';
  const h = document.createElement('h3');
  h.textContent = 'Observer drift during QAT';
  sec.append(h);
  const epochs = new Set(d.epochs).size;
  sec.append(
    caption(
      `${d.steps.length} samples over steps ${d.steps[0]}–${d.steps[d.steps.length - 1]}${epochs > 1 ? `, ${epochs} epochs (dashed)` : ''}`,
    ),
  );
  if (d.activation) {
    const a = d.activation;
    sec.append(driftPlot('input activation scale', d.steps, d.epochs, a.scaleMean));
    const zp =
      a.zeroPoint[0] === a.zeroPoint[a.zeroPoint.length - 1]
        ? `zero point ${a.zeroPoint[0]}`
        : `zero point ${a.zeroPoint[0]} → ${a.zeroPoint[a.zeroPoint.length - 1]}`;
    sec.append(caption(`input activation scale ${change(a.scaleMean)}, ${zp}`));
  }
  if (d.weight) {
    const w = d.weight;
    const perChannel = w.scaleMin.some((v, i) => v !== w.scaleMax[i]);
    sec.append(
      driftPlot(
        'weight scale',
        d.steps,
        d.epochs,
        w.scaleMean,
        perChannel ? w.scaleMin : undefined,
        perChannel ? w.scaleMax : undefined,
      ),
    );
    sec.append(caption(`weight scale${perChannel ? ' (mean; band: channel min–max)' : ''} ${change(w.scaleMean)}`));
  }
  return sec;
}
