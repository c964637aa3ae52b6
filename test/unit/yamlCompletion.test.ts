import assert from 'node:assert/strict';
import { test } from 'node:test';
import { yamlCompletion } from '../../server/services/yamlCompletion';
import { cursor, yamlDoc } from './helpers/builder';

function complete(textWithBar: string) {
  const { text, offset } = cursor(textWithBar);
  const doc = yamlDoc(text);
  return yamlCompletion(doc, doc.positionAt(offset)).items;
}
const labels = (textWithBar: string) => complete(textWithBar).map((i) => i.label);

test('keys from the schema at the cursor path, required first, with their descriptions', () => {
  const top = complete('|');
  const bySortText = [...top].sort((a, b) => a.sortText!.localeCompare(b.sortText!));
  assert.deepEqual(
    bySortText.slice(0, 3).map((i) => i.label),
    ['version', 'model', 'data'],
    'qconfig is required by the pt2e and eager flows only (an if/else the completion does not rank)',
  );
  assert.equal(top.find((i) => i.label === 'flow')!.insertText, 'flow: ');
  assert.match(String((top.find((i) => i.label === 'flow')!.documentation as { value: string }).value), /torchao PT2E/);
  assert.deepEqual(labels('qconfig:\n  activation:\n    obs|').slice(0, 3), ['observer', 'dtype', 'qscheme']);
  assert.deepEqual(labels('overrides:\n  - |'), ['match', 'precision', 'activation', 'weight', 'scheme', 'group_size']);
  assert.deepEqual(labels('flow: torchao\ntorchao:\n  |'), [
    'scheme',
    'group_size',
    'embedding',
    'include',
    'exclude',
    'range_learning',
  ]);
});

test('enum values: dtypes, qschemes, backends, precision, flow, metrics, booleans', () => {
  assert.deepEqual(labels('qconfig:\n  activation: {dtype: |}'), ['quint8', 'qint8', 'qint32', 'quint4x2', 'float16']);
  assert.ok(labels('qconfig:\n  weight: {qscheme: per_|}').includes('per_channel_symmetric'));
  assert.deepEqual(labels('backend: |'), ['x86', 'fbgemm', 'qnnpack', 'xnnpack', 'onednn']);
  assert.deepEqual(labels('overrides:\n  - {match: fc, precision: |}'), ['int8', 'fp16', 'bf16', 'fp32']);
  assert.deepEqual(labels('flow: |'), ['pt2e', 'eager', 'torchao']);
  const schemes = complete('torchao: {scheme: |}');
  assert.deepEqual(
    schemes.map((i) => i.label),
    ['8da4w', '8da8w', 'int4-weight-only', 'int8-weight-only'],
  );
  assert.match(String((schemes[0].documentation as { value: string }).value), /int4 weights with one scale per group/);
  assert.deepEqual(labels('torchao: {group_size: |}'), ['per_channel']);
  assert.deepEqual(labels('overrides:\n  - {match: fc, scheme: |}'), [
    '8da4w',
    '8da8w',
    'int4-weight-only',
    'int8-weight-only',
  ]);
  assert.deepEqual(labels('compare:\n  metrics:\n    - |'), ['cosine', 'sqnr', 'mse', 'max_abs']);
  assert.deepEqual(labels('qconfig:\n  activation: {reduce_range: |}'), ['true', 'false']);
});

test('observer names are those of the QAT flow, and the edit replaces the typed prefix', () => {
  const items = complete('flow: eager\nqconfig:\n  activation:\n    observer: MovingAv|');
  assert.ok(items.some((i) => i.label === 'MovingAverageMinMaxObserver'));
  assert.ok(!items.some((i) => i.label === 'PlaceholderObserver'));
  const edit = items[0].textEdit as { range: { start: { line: number; character: number } } };
  assert.deepEqual(edit.range.start, { line: 3, character: 14 });
});

test('nothing to offer under an unknown key', () => {
  assert.deepEqual(labels('nonsense:\n  |'), []);
});
