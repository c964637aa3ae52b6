import assert from 'node:assert/strict';
import { test } from 'node:test';
import { configFindings } from '../../server/services/configDiagnostics';
import type { ModelKnowledge } from '../../server/services/modelIndex';
import { applyEdits, spanOf } from './helpers/builder';

// A model as graph/export writes it: Linears with their in_features (48 = 32 + 16), an embedding without.
const model: ModelKnowledge = {
  graphFile: '/w/out/lm.fp32.qatgraph.json',
  stage: 'fp32',
  stamp: 'x',
  modules: [
    { path: 'embed', type: 'Embedding' },
    { path: 'layers', type: 'ModuleList' },
    { path: 'layers.0', type: 'Block' },
    { path: 'layers.0.proj', type: 'Linear', inFeatures: 64 },
    { path: 'layers.0.mlp', type: 'Linear', inFeatures: 48 },
    { path: 'lm_head', type: 'Linear', inFeatures: 64 },
  ],
};

const torchao = (section: string, rest = '') =>
  `version: 1\nmodel: {entry: "model.py:make_model"}\nflow: torchao\n${section}${rest}`;
const codes = (text: string, m: ModelKnowledge = model) => configFindings(text, m).filter((f) => f.code === 'QCFG017');

test('QCFG017: a group size that does not divide a quantized Linear names it, and the fix divides every one', () => {
  const text = torchao('torchao: {scheme: 8da4w, group_size: 32}\n');
  const [f, ...more] = codes(text);
  assert.equal(more.length, 0);
  assert.equal(spanOf(text, f), '32');
  assert.equal(f.severity, 'error');
  assert.match(f.message, /^group_size 32 does not divide the in_features \(48\) of layers\.0\.mlp \(Linear\):/);
  assert.match(f.message, /"in_features \(48\) % group_size \(32\) must be == 0"/);
  assert.match(f.message, /Use group_size 16 \(it divides every one\) or per_channel/);
  const fixed = applyEdits(text, f.fixes![0].edits);
  assert.equal(fixed, torchao('torchao: {scheme: 8da4w, group_size: 16}\n'));
  assert.deepEqual(codes(fixed), []);
});

test('QCFG017: the default group size of a 4-bit scheme points at where it comes from', () => {
  const bare = torchao('');
  const [f] = codes(bare);
  assert.equal(spanOf(bare, f), 'torchao', 'the flow value: no torchao section');
  assert.match(f.message, /^The default group size 32 \(from torchao\) does not divide/);
  assert.equal(f.fixes, undefined);
  const scheme = torchao('torchao: {scheme: int4-weight-only}\n');
  assert.equal(spanOf(scheme, codes(scheme)[0]), 'int4-weight-only');
});

test('QCFG017 follows the kernel: excluded, not included, float or per-channel Linears and 8-bit defaults pass', () => {
  for (const text of [
    torchao('torchao: {group_size: 32, exclude: ["layers\\\\.0\\\\.mlp"]}\n'),
    torchao('torchao: {group_size: 32, exclude: [layers]}\n'), // a parent's path covers its children
    torchao('torchao: {group_size: 32, include: [lm_head, "layers\\\\.0\\\\.proj"]}\n'),
    torchao('torchao: {group_size: 32}\n', 'overrides:\n  - {match: "layers\\\\.0\\\\.mlp", precision: fp32}\n'),
    torchao(
      'torchao: {group_size: 32}\n',
      'overrides:\n  - {match: "layers\\\\.0\\\\.mlp", group_size: per_channel}\n',
    ),
    torchao('torchao: {group_size: 32}\n', 'overrides:\n  - {match: "layers\\\\.0\\\\.mlp", scheme: 8da8w}\n'),
    torchao('torchao: {scheme: int8-weight-only}\n'),
    torchao('torchao: {group_size: per_channel}\n'),
    torchao('torchao: {group_size: 16}\n'),
  ])
    assert.deepEqual(codes(text), [], text);
});

test('QCFG017 on an override: its own group size, first match wins', () => {
  const text = torchao(
    'torchao: {group_size: 16}\n',
    'overrides:\n  - {match: "layers\\\\.0\\\\.mlp", group_size: 32}\n  - {match: layers, group_size: 48}\n',
  );
  const found = codes(text);
  assert.deepEqual(
    found.map((f) => spanOf(text, f)),
    ['32', '48'],
  );
  assert.match(found[1].message, /in_features \(64\) of layers\.0\.proj/);
});

test('QCFG017 is quiet without a model, with in_features unknown, on other flows and on patterns it cannot run', () => {
  const text = torchao('torchao: {group_size: 32}\n');
  assert.deepEqual(
    configFindings(text).filter((f) => f.code === 'QCFG017'),
    [],
  );
  const unknown = { ...model, modules: model.modules.map(({ path, type }) => ({ path, type })) };
  assert.deepEqual(codes(text, unknown), []);
  assert.deepEqual(codes(text.replace('flow: torchao', 'flow: pt2e') + 'qconfig: {}\n'), []);
  assert.deepEqual(codes(torchao('torchao: {group_size: 32, exclude: ["(?=x)lm_head"]}\n')), []);
});
