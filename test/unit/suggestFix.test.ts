// Apply Fix's suggestion: per-channel weights for per-tensor layers that lose as much as the culprit, 8-bit weights
// for a torchao layer with 4-bit ones, else keep the culprit float; the override it writes parses, matches exactly those layers, and keeps the other keys.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import Ajv from 'ajv';
import { parse } from 'yaml';
import type { CompareLayersResult, LayerResult } from '../../protocol/kernel';
import { addOverride } from '../../client/config/overrides';
import { fixEntry, suggestFix } from '../../client/fix/suggestFix';
import { repoRoot } from '../support/paths';

const layer = (module: string, localSqnr: number, extra: Partial<LayerResult> = {}): LayerResult => ({
  module,
  op: 'conv2d',
  group: ['conv2d', 'batch_norm'],
  cosine: 0.9,
  sqnr: localSqnr - 3,
  mse: 0.1,
  maxAbs: 1,
  local: { cosine: 0.95, sqnr: localSqnr, mse: 0.1, maxAbs: 1 },
  ...extra,
});

const insert = (text: string, entry: Parameters<typeof addOverride>[1]) => {
  const e = addOverride(text, entry);
  return text.slice(0, e.offset) + e.text + text.slice(e.offset);
};

const LAYERS = [
  layer('features.1.conv.0', 2.5),
  layer('features.2.conv.0', 14),
  layer('features.2.conv.3', 0.4),
  layer('features.2.conv.6', 11),
  layer('features.3.conv.3', 5.9),
  layer('classifier', 7.5, { op: 'linear' }),
];

test('per-tensor weights: per-channel for the culprit and the per-tensor layers within 6 dB of it, worst first', () => {
  const text = readFileSync(path.join(repoRoot, 'examples', 'cifar', 'mobilenetv2.qat.yaml'), 'utf8');
  const s = suggestFix(text, LAYERS, 'features.2.conv.3');
  assert.equal(s.kind, 'perChannelWeights');
  assert.deepEqual(s.modules, ['features.2.conv.3', 'features.1.conv.0', 'features.3.conv.3']);
  assert.deepEqual(s.others, ['classifier', 'features.2.conv.6', 'features.2.conv.0']);
  assert.match(s.reason, /per_tensor_symmetric.*0\.4 dB local SQNR.*2 more per-tensor layers/);
  const out = parse(insert(text, fixEntry(s))) as { overrides: Array<{ match: string; weight: object }> };
  assert.equal(out.overrides.length, 1);
  assert.deepEqual(out.overrides[0].weight, {
    observer: 'MovingAveragePerChannelMinMaxObserver',
    qscheme: 'per_channel_symmetric',
    ch_axis: 0,
  });
  const re = new RegExp(`^(?:${out.overrides[0].match})$`);
  for (const m of s.modules) assert.ok(re.test(m), m);
  for (const m of ['features.2.conv.0', 'features.12.conv.3', 'features.1xconv.0']) assert.ok(!re.test(m), m);
  // The global qconfig (4-bit range) is left as it was: the override only changes how the scales are taken.
  assert.deepEqual((parse(text) as { qconfig: object }).qconfig, (out as unknown as { qconfig: object }).qconfig);
});

test('a layer already per channel (the default qconfig) is kept float: FP16 on pt2e, FP32 where fp16 cannot run', () => {
  const text = 'version: 1\nmodel: {entry: "m.py:f", example_input: [1, 3]}\ndata: {entry: "d.py:l"}\n';
  const s = suggestFix(text, LAYERS, 'classifier');
  assert.equal(s.kind, 'keepFloat');
  assert.deepEqual(s.modules, ['classifier']);
  assert.deepEqual(s.fields, { precision: 'fp16' });
  assert.deepEqual(parse(insert(text, fixEntry(s))).overrides, [{ match: 'classifier', precision: 'fp16' }]);
  assert.deepEqual(suggestFix(`${text}backend: qnnpack\n`, LAYERS, 'classifier').fields, { precision: 'fp32' });
  assert.deepEqual(suggestFix(`${text}flow: eager\n`, LAYERS, 'classifier').fields, { precision: 'fp32' });
});

test("a layer under an override is judged by that override's weights, and the fix keeps what it set", () => {
  const text =
    'version: 1\nqconfig:\n  weight: {observer: PerChannelMinMaxObserver, qscheme: per_channel_symmetric}\n' +
    'overrides:\n  - {match: "features\\\\.2\\\\..*", activation: {quant_max: 127}, weight: {observer: MinMaxObserver, qscheme: per_tensor_symmetric, quant_min: -7, quant_max: 7}}\n';
  const layers = LAYERS.map((l) => (l.module.startsWith('features.2.') ? { ...l, override: 0 } : l));
  const s = suggestFix(text, layers, 'features.2.conv.3');
  assert.equal(s.kind, 'perChannelWeights');
  // Only the layers under the per-tensor override are per tensor here.
  assert.deepEqual([...s.modules, ...s.others].sort(), ['features.2.conv.0', 'features.2.conv.3', 'features.2.conv.6']);
  assert.deepEqual(s.fields, {
    activation: { quant_max: 127 },
    weight: {
      observer: 'PerChannelMinMaxObserver',
      qscheme: 'per_channel_symmetric',
      ch_axis: 0,
      quant_min: -7,
      quant_max: 7,
    },
  });
  const out = parse(insert(text, fixEntry(s))) as { overrides: Array<{ match: string }> };
  assert.equal(out.overrides.length, 2);
  assert.equal(out.overrides[1].match, 'features\\.2\\..*');
});

test('a layer missing from the comparison is a clear error', () => {
  assert.throws(
    () => suggestFix('version: 1\n', LAYERS, 'nope'),
    /nope is not a quantized layer of the last comparison/,
  );
});

test('torchao: a 4-bit Linear gets 8-bit weights (8da8w), an override the config schema accepts', () => {
  const text = readFileSync(path.join(repoRoot, 'examples', 'tinylm', 'tinylm.qat.yaml'), 'utf8');
  // compare/layers on a 4-layer Llama of examples/tinylm's build (8da4w, group 32)
  const result = JSON.parse(
    readFileSync(path.join(repoRoot, 'test', 'fixtures', 'tinylm', 'compare-layers.json'), 'utf8'),
  ) as CompareLayersResult;
  const worst = [...result.layers].sort((a, b) => a.cosine - b.cosine)[0];
  const s = suggestFix(text, result.layers, worst.module);
  assert.equal(s.kind, 'int8Weights');
  assert.deepEqual(s.modules, [worst.module]);
  assert.equal(s.others.length, result.layers.length - 1);
  assert.deepEqual(s.fields, { scheme: '8da8w' });
  assert.match(
    s.reason,
    /4-bit, 8da4w \(group 32\) \(weight SQNR [\d.]+ dB, worst group [\d.]+ dB at row \d+\); its own quantization error is [\d.]+ dB/,
  );
  const out = parse(insert(text, fixEntry(s)));
  assert.deepEqual(out.overrides, [{ match: worst.module.replace(/\./g, '\\.'), scheme: '8da8w' }]);
  const ajv = new Ajv({ allErrors: true, strict: false });
  const schema = JSON.parse(readFileSync(path.join(repoRoot, 'protocol', 'qat-config.schema.json'), 'utf8'));
  assert.ok(ajv.validate(schema, out), JSON.stringify(ajv.errors));
  // weight-only int4 goes to weight-only int8; a layer already 8-bit is kept float, in fp32 (what the flow runs)
  const weightOnly = result.layers.map((l) => ({ ...l, scheme: 'int4-weight-only (group 32)' }));
  assert.deepEqual(suggestFix(text, weightOnly, worst.module).fields, { scheme: 'int8-weight-only' });
  const eight = result.layers.map((l) => ({ ...l, scheme: '8da8w (per channel)' }));
  const kept = suggestFix(text, eight, worst.module);
  assert.equal(kept.kind, 'keepFloat');
  assert.deepEqual(kept.fields, { precision: 'fp32' });
  assert.match(kept.reason, /already 8-bit/);
});
