import assert from 'node:assert/strict';
import { test } from 'node:test';
import { yamlHover } from '../../server/services/yamlHover';
import { cursor, yamlDoc } from './helpers/builder';

function hover(textWithBar: string): string | undefined {
  const { text, offset } = cursor(textWithBar);
  const doc = yamlDoc(text);
  const h = yamlHover(doc, doc.positionAt(offset));
  return h ? (h.contents as { value: string }).value : undefined;
}

test('a key shows the schema description', () => {
  assert.match(hover('version: 1\nfl|ow: pt2e\n')!, /\*\*flow\*\*: pt2e: torchao PT2E/);
  assert.match(hover('version: 1\nflow: pt2e\nbackend: x|86\n')!, /\*\*x86\*\*: Intel\/AMD CPUs/);
});

test('the torchao keys and values show what torchao does with them', () => {
  assert.match(hover('flow: torch|ao\n')!, /\*\*torchao\*\*: torchao's quantize_ QAT API/);
  const group = hover('flow: torchao\ntorchao:\n  group_si|ze: 32\n')!;
  assert.match(group, /\*\*group_size\*\*: Weights per scale along a row \(in_features\): it must divide/);
  const scheme = hover('flow: torchao\ntorchao:\n  scheme: 8da|4w\n')!;
  assert.match(scheme, /\*\*8da4w\*\*: Int8DynamicActivationIntxWeightConfig\(weight_dtype=torch\.int4\)/);
  assert.match(scheme, /Default: `"8da4w"`/);
  assert.match(
    hover('overrides:\n  - {match: fc, sch|eme: 8da8w}\n')!,
    /\*\*scheme\*\*: flow: torchao: the scheme of matching/,
  );
});

test("an observer spec resolves its range and shows torch's scale and zero_point formulas", () => {
  const affine = hover(
    'qconfig:\n  acti|vation: {observer: MovingAverageMinMaxObserver, dtype: quint8, quant_min: 0, quant_max: 255}\n',
  )!;
  assert.match(affine, /\*\*Resolved\*\*: quint8 0\.\.255, per_tensor_affine/);
  assert.match(affine, /scale = \(max\(x_max, 0\) - min\(x_min, 0\)\) \/ 255/);
  assert.match(affine, /zero_point = clamp\(0 - round\(min\(x_min, 0\) \/ scale\), 0, 255\)/);
  assert.match(affine, /moving averages \(averaging_constant 0\.01\)/);
  const sym = hover(
    'qconfig:\n  weight:\n    observer: PerChannelMinMaxObserver\n    dtype: qint8\n    qsch|eme: per_channel_symmetric\n',
  )!;
  assert.match(sym, /qint8 -128\.\.127, per_channel_symmetric along ch_axis 0/);
  assert.match(sym, /scale = max\(-min\(x_min, 0\), max\(x_max, 0\)\) \/ 127\.5\nzero_point = 0/);
  const reduced = hover('qconfig:\n  activation: {dtype: quint8, reduce_range: tr|ue}\n')!;
  assert.match(reduced, /quint8 0\.\.127 \(reduce_range halves the range\)/);
});

test("no hover outside the document's keys", () => {
  assert.equal(hover('version: 1\n\n|\n'), undefined);
});
