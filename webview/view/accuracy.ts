// The model's accuracy above the per-layer results: what an ML engineer reads first. Per-layer cosine says where
// INT8 outputs drift from FP32, not whether the model got worse; with INT8 top-1 at or above FP32 the layers below
// the threshold are the ones to watch, not broken ones, and the view says so instead of raising an alarm.
import type { LayerResult } from '../../protocol/kernel';
import type { ModelAccuracy } from '../../protocol/webview';

const pct = (v: number) => `${(v * 100).toFixed(2)} %`;
const pts = (d: number) => `${d >= 0 ? '+' : '−'}${Math.abs(d * 100).toFixed(2)} pts`;

export type Verdict = 'fine' | 'noise' | 'loss';

export interface AccuracySummary {
  /** Each measured stage, in pipeline order: label and top-1 text. */
  stages: Array<[string, string]>;
  samples: number;
  /** INT8 against FP32, when both were measured. */
  verdict?: Verdict;
  /** What the numbers mean, in a line; `detail` says what that means for the layers below. */
  headline: string;
  detail: string;
  /** Both. */
  text: string;
}

/** One binomial standard error of a top-1 accuracy `p` measured on `n` samples. */
export const standardError = (p: number, n: number) => (n > 0 ? Math.sqrt(Math.max(p * (1 - p), 0) / n) : 0);

/**
 * INT8 at or above FP32: quantization cost nothing measurable. Below, within two standard errors of the FP32
 * accuracy on these samples: not distinguishable from noise. Further below: a loss, and the layers with the
 * lowest cosine are where to look.
 */
export function summarizeAccuracy(
  a: ModelAccuracy,
  layers: readonly LayerResult[],
  threshold: number,
): AccuracySummary {
  const stages: Array<[string, string]> = [];
  if (a.fp32 !== undefined) stages.push(['FP32', pct(a.fp32)]);
  if (a.qatFloat !== undefined) stages.push(['QAT float', pct(a.qatFloat)]);
  if (a.fakeQuant !== undefined) stages.push(['fake-quant', pct(a.fakeQuant)]);
  if (a.int8 !== undefined) stages.push(['INT8', pct(a.int8)]);
  const below = layers.filter((l) => l.cosine < threshold).length;
  const belowText = below
    ? `${below} of ${layers.length} layers have a cosine below the ${threshold} threshold`
    : `every layer's cosine is at or above the ${threshold} threshold`;
  const done = (verdict: Verdict | undefined, headline: string, detail: string): AccuracySummary => ({
    stages,
    samples: a.samples,
    ...(verdict ? { verdict } : {}),
    headline,
    detail,
    text: `${headline} ${detail}`.trim(),
  });
  if (a.fp32 === undefined || a.int8 === undefined) return done(undefined, `${capital(belowText)}.`, '');
  const delta = a.int8 - a.fp32;
  const noise = 2 * standardError(a.fp32, a.samples);
  if (delta >= 0)
    return done(
      'fine',
      `INT8 is at or above FP32 (${pts(delta)}): quantization costs no accuracy here.`,
      below ? `${capital(belowText)}: their outputs drift most, but the model holds; nothing needs fixing.` : '',
    );
  if (-delta <= noise)
    return done(
      'noise',
      `INT8 is ${pts(delta)} from FP32, within the sampling noise of ${a.samples} samples (±${(noise * 100).toFixed(1)} pts).`,
      below ? `${capital(belowText)}; the lowest come first below.` : '',
    );
  return done(
    'loss',
    `INT8 loses ${(-delta * 100).toFixed(2)} pts against FP32.`,
    below
      ? `${capital(belowText)}; start with the lowest cosine and compare its local SQNR (its own error).`
      : `No layer's cosine is below the ${threshold} threshold: compare the local SQNR column.`,
  );
}

const capital = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
