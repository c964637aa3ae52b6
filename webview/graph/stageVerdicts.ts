// What Find Where INT8 Diverges concluded, as text: each bisected pair's verdict (where it first diverges and why,
// or that every layer agrees) and each stage's top-1 accuracy. The view's stage table and the HTML report say the
// same words.
import type { StageResults } from '../../protocol/webview';
import { pairLabel } from './stageLanes';

export interface PairVerdict {
  pair: string;
  /** "PyTorch INT8 → ONNX Runtime". */
  label: string;
  diverges: boolean;
  /** The rest of the line after the label. */
  text: string;
  /** The first divergent layer's index, where it diverges. */
  index?: number;
}

/** One verdict per bisected pair, in the kernel's order. */
export function pairVerdicts(results: StageResults): PairVerdict[] {
  return results.bisected.map((pair) => {
    const label = pairLabel(results, pair);
    const d = results.divergence[pair];
    if (!d)
      return {
        pair,
        label,
        diverges: false,
        text: `every layer agrees to rounding (≤ ${results.roundingSteps} output steps, or ≥ ${results.floatSqnrDb} dB for a float output)`,
      };
    const amount =
      d.localSteps !== null && d.localSteps !== undefined
        ? `${d.localSteps.toFixed(1)} output steps`
        : `${d.localSqnr.toFixed(1)} dB`;
    return {
      pair,
      label,
      diverges: true,
      index: d.index,
      text: `first diverges at ${d.module} (${d.op}, ${amount}): ${d.cause}`,
    };
  });
}

export interface StageAccuracy {
  stage: string;
  label: string;
  /** "97.78 %", or "not run" with `why`. */
  text: string;
  why?: string;
}

/** Each stage's top-1 on the validation samples, in stage order. */
export function stageAccuracies(results: StageResults): StageAccuracy[] {
  return results.stages.map(({ id, label }) => {
    const value = results.accuracy[id];
    if (typeof value === 'number') return { stage: id, label, text: `${(value * 100).toFixed(2)} %` };
    const why = results.missing?.[id];
    return { stage: id, label, text: 'not run', ...(why ? { why } : {}) };
  });
}
