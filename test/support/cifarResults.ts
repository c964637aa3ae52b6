// A search/mixed-precision and an analyze/sensitivity result shaped as on the cifar MobileNetV2 example (its 53
// layers from test/fixtures/cifar), with the figures a user saw there: all int8 at 75.4 % emulated but 52.2 % on
// ONNX Runtime, 1.36 ms against 0.92 ms for all fp32 at batch 16, every layer suggested in fp16 by the old kernel.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type {
  CompareLayersResult,
  LatencyStats,
  MixedPrecisionCandidate,
  MixedPrecisionResult,
  SensitivityResult,
} from '../../protocol/kernel';
import { repoRoot } from './paths';

const compare = JSON.parse(
  readFileSync(path.join(repoRoot, 'test', 'fixtures', 'cifar', 'compare-layers.json'), 'utf8'),
) as CompareLayersResult;

export const cifarModules = compare.layers.map((l) => l.module);

const stats = (ms: number): LatencyStats => ({
  medianMs: ms,
  p10Ms: ms * 0.95,
  p90Ms: ms * 1.08,
  minMs: ms * 0.93,
  runs: 20,
  throughputPerS: 16_000 / ms,
  roundsMs: [ms, ms * 1.01, ms * 0.99, ms, ms * 1.02],
  noisy: false,
});

/** Depthwise convs first: they are what the example's 4-bit weights break. */
const order = [...cifarModules].sort((a, b) => Number(/conv\.3$/.test(b)) - Number(/conv\.3$/.test(a)));

export function cifarSearch(): MixedPrecisionResult {
  const cands: MixedPrecisionCandidate[] = [];
  const add = (
    label: string,
    precisionOf: (m: string) => 'int8' | 'fp16' | 'fp32',
    acc: number,
    ort: number,
    b16: number,
    b1: number,
    bytes: number,
  ) => {
    const assignment = cifarModules.map((module) => ({ module, precision: precisionOf(module) }));
    const counts = { int8: 0, fp16: 0, fp32: 0 };
    for (const a of assignment) counts[a.precision]++;
    cands.push({
      id: `c${cands.length}`,
      label,
      assignment,
      counts,
      accuracy: acc,
      sqnr: precisionOf(cifarModules[0]) === 'fp32' && counts.int8 === 0 ? null : 10 + cands.length,
      ortAccuracy: ort,
      bytes,
      latency: { b1: stats(b1), b16: stats(b16) },
      latencyMs: b16,
      onFront: false,
      overrides: assignment
        .filter((a) => a.precision !== 'int8')
        .map((a) => ({ match: a.module.replace(/\./g, '\\.'), precision: a.precision as 'fp16' | 'fp32' })),
    });
  };
  add('all int8', () => 'int8', 0.754, 0.522, 1.36, 0.21, 640_000);
  add('all fp32', () => 'fp32', 0.8611, 0.8611, 0.92, 0.24, 2_230_000);
  add('all fp16', () => 'fp16', 0.8593, 0.8574, 0.95, 0.25, 1_130_000);
  for (const [k, p, acc, ort, ms, bytes] of [
    [4, 'fp16', 0.801, 0.702, 1.31, 690_000],
    [8, 'fp16', 0.832, 0.781, 1.25, 760_000],
    [17, 'fp16', 0.851, 0.842, 1.12, 905_000],
    [8, 'fp32', 0.833, 0.79, 1.27, 820_000],
    [17, 'fp32', 0.8527, 0.8509, 1.15, 1_080_000],
  ] as const) {
    const pick = new Set(order.slice(0, k));
    add(`${k} most sensitive ${p}`, (m) => (pick.has(m) ? p : 'int8'), acc, ort, ms, 0.22, bytes);
  }
  const front = ['c0', 'c1', 'c2', 'c5', 'c7'];
  for (const c of cands) c.onFront = front.includes(c.id);
  cands[0].executed = {
    nodes: 298,
    compute: { int8: 52, fp32: 11 },
    conversions: 118,
    reorders: 34,
    fp32Ops: [
      {
        opType: 'Add',
        count: 10,
        reason:
          'Add between DequantizeLinear and a float consumer (QuantizeLinear): not fused into QLinearAdd (no QuantizeLinear on its output)',
      },
      { opType: 'Gemm', count: 1, reason: 'Gemm between DequantizeLinear and a float consumer (the graph output)' },
    ],
  };
  cands[1].executed = { nodes: 71, compute: { int8: 0, fp32: 63 }, conversions: 0, reorders: 4, fp32Ops: [] };
  return {
    flow: 'pt2e',
    samples: 512,
    precisions: ['int8', 'fp16', 'fp32'],
    accuracy: { fp32: 0.8611 },
    backend: {
      runtime: 'onnxruntime',
      version: '1.22.0',
      device: 'CPU',
      batch: 16,
      rounds: 5,
      runs: 20,
      threads: { cpus: 2, torch: 2, onnxruntime: 2, tvm: null },
      cpu: { model: 'Intel(R) Xeon(R) CPU @ 2.20GHz', int8DotProducts: [], saturatingInt8: true },
    },
    layers: cifarModules.map((module, i) => ({
      module,
      op: 'conv2d',
      rank: order.indexOf(module) + 1,
      probe: { precision: 'fp32', accuracy: 0.754 + (i % 7) * 0.002, sqnr: 12 + i * 0.1 },
    })),
    candidates: cands,
    ends: { int8: 'c0', fp32: 'c1', fp16: 'c2' },
    front,
    latencyFront: front,
    sizeFront: ['c0', 'c3', 'c4', 'c5', 'c2', 'c1'],
    objectives: [
      { key: 'accuracy', sense: 'max' },
      { key: 'latencyMs', sense: 'min' },
      { key: 'bytes', sense: 'min' },
    ],
    budget: { candidates: 8, seconds: 600, measured: 8, planned: 8 },
    notes: [],
    onnx: '/work/examples/cifar/out/cifar.qdq.onnx',
    reused: true,
    seconds: 212.4,
  };
}

export function cifarSensitivity(): SensitivityResult {
  const layers = order.map((module, i) => ({
    module,
    op: 'conv2d',
    quantizedAlone: { accuracy: 0.8537 - (i < 17 ? (17 - i) * 0.004 : 0.0004 * (i % 3)), sqnr: 8 + i * 0.45 },
    keptFloat: { accuracy: 0.754 + (i < 17 ? (17 - i) * 0.0021 : 0.0002 * (i % 4)), sqnr: 12 + (i < 17 ? 4 : 0.2) },
    rank: i + 1,
  }));
  const steps = order.slice(0, 9).map((module, i) => ({ module, accuracy: 0.754 + (i + 1) * 0.0114, sqnr: 14 + i }));
  return {
    flow: 'pt2e',
    samples: 512,
    budget: 1,
    accuracy: { fp32: 0.8611, qatFloat: 0.8537, fakeQuant: 0.754, fakeQuantSqnr: 11.8 },
    layers,
    suggestion: {
      overrides: steps.map((s) => ({ match: s.module.replace(/\./g, '\\.'), precision: 'fp16' })),
      accuracy: steps[steps.length - 1].accuracy,
      sqnr: 22,
      withinBudget: true,
      target: 0.8437,
      reference: 'qatFloat',
      steps,
    },
    reused: true,
    seconds: 301.2,
    summary: ['fake-quant 75.40 % vs QAT float 85.37 %; budget 1 points'],
  };
}
