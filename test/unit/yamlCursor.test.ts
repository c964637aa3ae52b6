import assert from 'node:assert/strict';
import { test } from 'node:test';
import { yamlCursor } from '../../server/services/yamlCursor';
import { cursor } from './helpers/builder';

const at = (textWithBar: string) => {
  const { text, offset } = cursor(textWithBar);
  return yamlCursor(text, offset);
};

test('block keys and values', () => {
  assert.deepEqual(at('version: 1\nqconfig:\n  activation:\n    obs|'), {
    path: ['qconfig', 'activation'],
    kind: 'key',
    prefix: 'obs',
    prefixStart: 38,
    inFlow: false,
  });
  assert.deepEqual(at('version: 1\nqconfig:\n  activation:\n    observer: Mov|').key, 'observer');
  assert.deepEqual(at('version: 1\nqconfig:\n  activation:\n    dtype: quint8\n  |').path, ['qconfig']);
  assert.deepEqual(at('|').path, []);
});

test('flow maps, across lines, inside lists, with quoted keys', () => {
  assert.deepEqual(at('qconfig:\n  activation: {observer: MinMaxObserver, dtype: q|}'), {
    path: ['qconfig', 'activation'],
    kind: 'value',
    key: 'dtype',
    prefix: 'q',
    prefixStart: 57,
    inFlow: true,
  });
  assert.equal(at('qconfig:\n  activation: {observer: X,\n               qsch|').prefix, 'qsch');
  assert.deepEqual(at('overrides:\n  - {match: "a:b", activation: {dtype: |}}').path, ['overrides', '*', 'activation']);
  assert.deepEqual(at('train: {"lr": 0.1, optim|').path, ['train']);
  assert.deepEqual(at('compare: {metrics: [cosine, |]}'), {
    path: ['compare', 'metrics'],
    kind: 'value',
    key: '*',
    prefix: '',
    prefixStart: 28,
    inFlow: true,
  });
});

test('sequence items and comments', () => {
  assert.deepEqual(at('overrides:\n  - match: "fc"\n    prec|').path, ['overrides', '*']);
  assert.deepEqual(at('overrides:\n  - |'), {
    path: ['overrides'],
    kind: 'value',
    key: '*',
    prefix: '',
    prefixStart: 15,
    inFlow: false,
  });
  assert.deepEqual(at('# {[ not flow\nqconfig:\n  # comment\n  |').path, ['qconfig']);
});

test('an unclosed flow map ends at the next less indented key', () => {
  assert.deepEqual(at('qconfig:\n  activation: {observer: X,\nbackend: |'), {
    path: [],
    kind: 'value',
    key: 'backend',
    prefix: '',
    prefixStart: 46,
    inFlow: false,
  });
});
