import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parse } from 'yaml';
import { addPrecisionOverride, withOverrides } from '../../client/config/overrides';

const apply = (text: string, module: string) => {
  const e = addPrecisionOverride(text, module, 'fp16');
  return text.slice(0, e.offset) + e.text + text.slice(e.offset);
};

test('adds an overrides list when there is none', () => {
  const out = apply('version: 1\nqconfig: {}', 'conv1');
  assert.deepEqual(parse(out).overrides, [{ match: 'conv1', precision: 'fp16' }]);
});

test('puts the new override first in a block list, keeping comments and indentation', () => {
  const text =
    'version: 1\noverrides:\n    # keep the head accurate\n    - {match: "fc", precision: fp32}\ntrain: {epochs: 1}\n';
  const out = apply(text, 'layer1.0.conv');
  assert.ok(out.includes('# keep the head accurate'));
  assert.deepEqual(parse(out).overrides, [
    { match: 'layer1\\.0\\.conv', precision: 'fp16' },
    { match: 'fc', precision: 'fp32' },
  ]);
  assert.deepEqual(parse(out).train, { epochs: 1 });
  assert.match(out, /\n {4}- \{match: 'layer1\\\.0\\\.conv', precision: fp16\}\n/);
});

test('works with flow lists, empty or not', () => {
  assert.deepEqual(parse(apply('overrides: []\n', 'fc2')).overrides, [{ match: 'fc2', precision: 'fp16' }]);
  assert.deepEqual(
    parse(apply('overrides: [{match: a, precision: fp32}]\n', 'fc2')).overrides.map((o: { match: string }) => o.match),
    ['fc2', 'a'],
  );
});

test('the inserted regex matches only that module', () => {
  const e = addPrecisionOverride('', 'layer1.0.conv', 'fp16');
  const match = parse(e.text).overrides[0].match as string;
  assert.ok(new RegExp(`^(?:${match})$`).test('layer1.0.conv'));
  assert.ok(!new RegExp(`^(?:${match})$`).test('layer1x0.conv'));
});

test('refuses a non-list overrides value instead of corrupting it', () => {
  assert.throws(() => addPrecisionOverride('overrides: {a: 1}\n', 'x', 'fp16'), /not a list/);
});

test('several overrides keep the given order, first listed first', () => {
  const out = withOverrides('version: 1\noverrides:\n  - {match: old, precision: fp32}\n', [
    { match: 'fc2', precision: 'fp16' },
    { match: 'conv2', precision: 'fp16' },
  ]);
  assert.deepEqual(
    parse(out).overrides.map((o: { match: string }) => o.match),
    ['fc2', 'conv2', 'old'],
  );
});
