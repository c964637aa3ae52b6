import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import Ajv from 'ajv';
import { parse } from 'yaml';
import { addPrecisionOverride, withEntries, withOverrides, withPickedPrecisions } from '../../client/config/overrides';
import type { TorchaoMixedPrecisionResult } from '../../protocol/kernel';
import { repoRoot } from '../support/paths';

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

test('a picked mixed-precision point replaces the earlier pick of the searched layers and keeps the rest', () => {
  const text = [
    'version: 1',
    'overrides:',
    '  # an earlier pick',
    "  - {match: 'features\\.1\\.conv\\.0', precision: fp16}",
    '  - {match: fc, precision: fp32}',
    '  - {match: features\\.2, weight: {qscheme: per_channel_symmetric}}',
    'train: {epochs: 1}',
    '',
  ].join('\n');
  const out = withPickedPrecisions(
    text,
    ['features.1.conv.0', 'features.2', 'fc2'],
    [{ module: 'fc2', precision: 'fp32' }],
  );
  assert.ok(out.includes('# an earlier pick'));
  assert.deepEqual(parse(out).overrides, [
    { match: 'fc2', precision: 'fp32' },
    { match: 'fc', precision: 'fp32' }, // not a searched module
    { match: 'features\\.2', weight: { qscheme: 'per_channel_symmetric' } }, // more than a precision
  ]);
  assert.deepEqual(parse(out).train, { epochs: 1 });
});

test('picking all int8 removes the earlier pick and leaves an empty list', () => {
  const out = withPickedPrecisions('overrides:\n  - {match: conv1, precision: fp16}\nqconfig: {}\n', ['conv1'], []);
  assert.deepEqual(parse(out).overrides, []);
  assert.deepEqual(parse(out).qconfig, {});
  const flow = withPickedPrecisions(
    'overrides: [{match: a, precision: fp32}, {match: conv1, precision: fp16}]\n',
    ['conv1'],
    [{ module: 'a', precision: 'fp16' }],
  );
  assert.deepEqual(parse(flow).overrides, [
    { match: 'a', precision: 'fp16' },
    { match: 'a', precision: 'fp32' },
  ]);
});

test("a torchao search's candidate goes in as its overrides, first, in order, and the config schema takes them", () => {
  const root = repoRoot;
  const result = JSON.parse(
    readFileSync(path.join(root, 'protocol', 'fixtures', 'rpc', 'MixedPrecisionSearchResult.torchao.json'), 'utf8'),
  ) as TorchaoMixedPrecisionResult;
  const text = readFileSync(path.join(root, 'examples', 'tinylm', 'tinylm.qat.yaml'), 'utf8');
  const ajv = new Ajv({ allErrors: true, strict: false });
  const schema = JSON.parse(readFileSync(path.join(root, 'protocol', 'qat-config.schema.json'), 'utf8'));
  const mixed = result.candidates.filter((c) => c.overrides.length > 1);
  assert.ok(mixed.length > 0);
  for (const c of mixed) {
    const out = parse(withEntries(text, c.overrides)) as Record<string, unknown>;
    assert.deepEqual(out.overrides, c.overrides, c.id);
    assert.ok(ajv.validate(schema, out), `${c.id}: ${JSON.stringify(ajv.errors)}`);
    // everything else as it was
    assert.deepEqual({ ...out, overrides: undefined }, { ...(parse(text) as object), overrides: undefined });
  }
  // under an existing list: before its entries
  const listed = `${text}overrides:\n  - {match: lm_head, precision: fp32}\n`;
  const [first] = mixed;
  assert.deepEqual(parse(withEntries(listed, first.overrides)).overrides, [
    ...first.overrides,
    { match: 'lm_head', precision: 'fp32' },
  ]);
});
