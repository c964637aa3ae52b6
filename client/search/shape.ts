// What the mixed-precision and sensitivity pages show, worked out apart from their HTML: round axis ticks, end
// labels placed where they overlap nothing, long layer lists cut to a few names, why all int8 is slower than all
// fp32 where it is, and the sensitivity suggestion as the smallest set of layers that reaches its target.
// Free of the vscode module and of the DOM.
import type { MixedPrecisionCandidate, MixedPrecisionResult, SensitivityResult } from '../../protocol/kernel';
import { niceTicks, tickLabel } from '../../common/axes';

export interface Box {
  x: number;
  y: number;
  w: number;
  h: number;
}

export const overlaps = (a: Box, b: Box) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;

/** An axis from round ticks: the domain runs from the tick at or below `lo` to the one at or above `hi`, so the
 * plot ends on labelled values; each tick with its label (as many decimals as the step needs). */
export function axis(lo: number, hi: number, count = 5): { domain: [number, number]; ticks: Array<[number, string]> } {
  if (!(hi > lo)) {
    const pad = Math.abs(hi) * 0.05 || 1;
    lo -= pad;
    hi += pad;
  }
  const { step } = niceTicks(lo, hi, count);
  const start = Math.floor(lo / step + 1e-9) * step;
  const end = Math.ceil(hi / step - 1e-9) * step;
  const { ticks, step: s } = niceTicks(start, end, Math.max(1, Math.round((end - start) / step)));
  const domain: [number, number] = [ticks[0], ticks[ticks.length - 1]];
  return { domain, ticks: ticks.map((t) => [t, tickLabel(t, s)]) };
}

/** Width of `text` at an SVG font size, a little wide of the usual sans-serif average so a box holds its text. */
export const textWidth = (text: string, fontSize = 10) => text.length * fontSize * 0.6;

export interface LabelRequest {
  id: string;
  text: string;
  /** The point labelled. */
  x: number;
  y: number;
}

export interface PlacedLabel {
  id: string;
  text: string;
  /** Where the text's anchor and baseline are. */
  x: number;
  y: number;
  anchor: 'start' | 'middle' | 'end';
  box: Box;
}

/**
 * Places each label next to its point: the first of above, below, right, left and the diagonals (then the same
 * twice as far) whose box stays inside `bounds` and overlaps no label placed before it and no box in `avoid`
 * (the points, the axes' labels); where none is free, the one that overlaps least.
 */
export function placeLabels(labels: LabelRequest[], avoid: Box[], bounds: Box, fontSize = 10): PlacedLabel[] {
  const h = fontSize * 1.2;
  const placed: PlacedLabel[] = [];
  for (const l of labels) {
    const w = textWidth(l.text, fontSize);
    const options: PlacedLabel[] = [];
    for (const d of [7, 16, 28]) {
      const at = (dx: number, dy: number, anchor: PlacedLabel['anchor']): PlacedLabel => {
        const left = anchor === 'start' ? l.x + dx : anchor === 'end' ? l.x + dx - w : l.x + dx - w / 2;
        const top = l.y + dy - h / 2;
        return { id: l.id, text: l.text, x: l.x + dx, y: top + h * 0.8, anchor, box: { x: left, y: top, w, h } };
      };
      options.push(
        at(0, -d - h / 2, 'middle'),
        at(0, d + h / 2, 'middle'),
        at(d, 0, 'start'),
        at(-d, 0, 'end'),
        at(d * 0.7, -d * 0.7 - h / 2, 'start'),
        at(-d * 0.7, -d * 0.7 - h / 2, 'end'),
        at(d * 0.7, d * 0.7 + h / 2, 'start'),
        at(-d * 0.7, d * 0.7 + h / 2, 'end'),
      );
    }
    const inside = (b: Box) =>
      b.x >= bounds.x && b.y >= bounds.y && b.x + b.w <= bounds.x + bounds.w && b.y + b.h <= bounds.y + bounds.h;
    const cost = (o: PlacedLabel) =>
      (inside(o.box) ? 0 : 1000) +
      placed.filter((p) => overlaps(p.box, o.box)).length * 100 +
      avoid.filter((a) => overlaps(a, o.box)).length;
    let best = options[0];
    let bestCost = Infinity;
    for (const o of options) {
      const c = cost(o);
      if (c < bestCost) [best, bestCost] = [o, c];
      if (c === 0) break;
    }
    placed.push(best);
  }
  return placed;
}

/** Up to `n` names, then "+k more": for a cell or a line that must stay short. */
export function shortList(names: string[], n = 3): { shown: string[]; more: number; text: string } {
  const shown = names.slice(0, n);
  const more = names.length - shown.length;
  return { shown, more, text: `${shown.join(', ')}${more > 0 ? ` +${more} more` : ''}` };
}

/** Unescapes a `re.escape`d module path (Python escapes special characters with a backslash). */
export const moduleOf = (match: string) => match.replace(/\\(.)/g, '$1');

/** A candidate's float layers in brief ("3 fp16, 1 fp32: a, b +2 more") and in full (one per line). */
export function floatLayers(c: MixedPrecisionCandidate): { short: string; full: string } {
  const floats = c.assignment.filter((a) => a.precision !== 'int8');
  if (!floats.length) return { short: 'none', full: 'every layer int8' };
  const counts = (['fp16', 'fp32'] as const)
    .map((p) => [p, floats.filter((a) => a.precision === p).length] as const)
    .filter(([, k]) => k)
    .map(([p, k]) => `${k} ${p}`)
    .join(', ');
  if (floats.length === c.assignment.length)
    return {
      short: `all ${c.assignment.length} (${counts})`,
      full: floats.map((a) => `${a.module} ${a.precision}`).join('\n'),
    };
  return {
    short: `${counts}: ${
      shortList(
        floats.map((a) => a.module),
        2,
      ).text
    }`,
    full: floats.map((a) => `${a.module} ${a.precision}`).join('\n'),
  };
}

export interface SlowInt8 {
  int8Ms: number;
  fp32Ms: number;
  batch: number;
  /** How much slower, e.g. 1.48. */
  ratio: number;
  /** The figures, then why, from ONNX Runtime's precision as executed and the CPU. */
  lines: string[];
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** Why all int8 is slower than all fp32 on ONNX Runtime, where it is (by more than 5 %); else undefined. */
export function slowInt8(result: MixedPrecisionResult): SlowInt8 | undefined {
  const byId = new Map(result.candidates.map((c) => [c.id, c]));
  const int8 = byId.get(result.ends.int8);
  const fp32 = result.ends.fp32 ? byId.get(result.ends.fp32) : undefined;
  if (!int8 || !fp32 || !(int8.latencyMs > fp32.latencyMs * 1.05)) return undefined;
  const batch = result.backend.batch;
  const ratio = int8.latencyMs / fp32.latencyMs;
  const lines = [
    `All int8 is slower than all fp32 on ONNX Runtime: ${int8.latencyMs.toFixed(2)} ms against ${fp32.latencyMs.toFixed(2)} ms at batch ${batch} (${ratio.toFixed(2)}×).`,
  ];
  const a = int8.executed;
  const b = fp32.executed;
  if (a && b) {
    const extra = a.nodes - b.nodes;
    if (extra > 0)
      lines.push(
        `As executed, all int8 runs ${a.nodes} nodes against ${b.nodes} for all fp32: ${plural(a.conversions, 'conversion')} (QuantizeLinear / DequantizeLinear)${a.reorders ? ` and ${plural(a.reorders, 'layout reorder')}` : ''} that fp32 does not have. Each node is one kernel call per run; on a model this small the calls' overhead outweighs what int8 arithmetic saves.`,
      );
    const computed = a.compute.int8 + a.compute.fp32;
    if (a.compute.fp32 > 0) {
      const ops = a.fp32Ops.map((o) => `${o.opType} ×${o.count}`).join(', ');
      lines.push(
        `${a.compute.int8} of ${computed} arithmetic ops run int8; ${a.compute.fp32} stayed fp32 between a DequantizeLinear and a QuantizeLinear (${ops})${a.fp32Ops[0] ? `: ${a.fp32Ops[0].reason}` : ''}.`,
      );
    } else
      lines.push(`All ${computed} arithmetic ops run int8: the time goes to the conversions and calls around them.`);
  } else
    lines.push("Precision as executed was not read for this search: run build/ort for ONNX Runtime's op-by-op view.");
  const cpu = result.backend.cpu;
  if (!cpu.int8DotProducts.length)
    lines.push(
      `${cpu.model} has no int8 dot-product instructions (VNNI, AMX): int8 convolutions take a slower path${cpu.saturatingInt8 ? ' and sum products in int16 pairs' : ''}.`,
    );
  if (batch === 16 && int8.latency.b1.medianMs <= fp32.latency.b1.medianMs)
    lines.push(
      `At batch 1 all int8 is as fast or faster (${int8.latency.b1.medianMs.toFixed(3)} against ${fp32.latency.b1.medianMs.toFixed(3)} ms).`,
    );
  return { int8Ms: int8.latencyMs, fp32Ms: fp32.latencyMs, batch, ratio, lines };
}

export interface Suggestion {
  /** The layers to keep float, most helpful first. */
  modules: string[];
  precision: string;
  shown: string[];
  more: number;
  /** Fake-quant accuracy with them float. */
  accuracy: number;
  target?: number;
  reference?: 'fp32' | 'qatFloat';
  /** Whether that accuracy reaches the target. */
  reached: boolean;
}

/**
 * The smallest set of layers whose float keeps the fake-quant accuracy at the target: the shortest prefix of the
 * kernel's greedy steps that reaches it; where none does, the shortest prefix with the best accuracy seen (more
 * layers that gain nothing are left out). Results without steps give the kernel's overrides as they are.
 */
export function suggestion(result: SensitivityResult, shown = 3): Suggestion {
  const s = result.suggestion;
  const precision = s.overrides[0]?.precision ?? 'fp16';
  const steps = s.steps ?? [];
  let modules = s.overrides.map((o) => moduleOf(o.match));
  let accuracy = s.accuracy;
  let reached = s.withinBudget;
  if (steps.length && s.target !== undefined) {
    const hit = steps.findIndex((st) => st.accuracy >= s.target!);
    let k = hit;
    if (hit < 0) {
      const best = Math.max(...steps.map((st) => st.accuracy));
      k = steps.findIndex((st) => st.accuracy === best);
      if (best <= result.accuracy.fakeQuant) k = -1;
    }
    modules = steps.slice(0, k + 1).map((st) => st.module);
    accuracy = k >= 0 ? steps[k].accuracy : result.accuracy.fakeQuant;
    reached = hit >= 0 || result.accuracy.fakeQuant >= s.target;
  }
  const list = shortList(modules, shown);
  return {
    modules,
    precision,
    shown: list.shown,
    more: list.more,
    accuracy,
    ...(s.target !== undefined ? { target: s.target } : {}),
    ...(s.reference ? { reference: s.reference } : {}),
    reached,
  };
}

export type SensitivityMetric = 'drop' | 'recovered' | 'sqnr';

/** Per layer, the metric's value, most sensitive first: the accuracy points lost when only it is quantized (from
 * the QAT-float model), the points won back when only it stays float, or its output SQNR quantized alone. */
export function ranked(result: SensitivityResult, metric: SensitivityMetric): Array<{ module: string; value: number }> {
  const a = result.accuracy;
  const rows = result.layers.map((l) => ({
    module: l.module,
    value:
      metric === 'drop'
        ? (a.qatFloat - l.quantizedAlone.accuracy) * 100
        : metric === 'recovered'
          ? (l.keptFloat.accuracy - a.fakeQuant) * 100
          : l.quantizedAlone.sqnr,
    rank: l.rank,
  }));
  rows.sort((x, y) => (metric === 'sqnr' ? x.value - y.value : y.value - x.value) || x.rank - y.rank);
  return rows.map(({ module, value }) => ({ module, value }));
}
