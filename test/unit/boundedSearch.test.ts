// The language server's searches over a model's modules stay bounded whatever the model's size: completion in
// `match:` returns at most MAX_MODULE_ITEMS (incomplete, narrowed by what is typed), and "did you mean" spends a
// fixed budget per name while still finding a typo where the answer is near.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ModelKnowledge } from '../../server/services/modelIndex';
import { MAX_MODULE_ITEMS, yamlCompletion } from '../../server/services/yamlCompletion';
import { boundedLevenshtein, closest, levenshtein } from '../../server/util/levenshtein';
import { cursor, yamlDoc } from './helpers/builder';

const big: ModelKnowledge = {
  graphFile: '/w/out/big.fp32.qatgraph.json',
  stage: 'fp32',
  stamp: 'x',
  modules: Array.from({ length: 200_000 }, (_, i) => ({ path: `layers.${i}.mlp.fc${i % 3}`, type: 'Linear' })),
};

function complete(textWithBar: string) {
  const { text, offset } = cursor(textWithBar);
  const doc = yamlDoc(text);
  return yamlCompletion(doc, doc.positionAt(offset), big);
}

test('completion in match: on 200k modules is cut to the bound, narrowed by what is typed', () => {
  const t0 = performance.now();
  const all = complete('version: 1\noverrides:\n  - match: |\n');
  assert.equal(all.items.length, MAX_MODULE_ITEMS);
  assert.equal(all.isIncomplete, true);
  const narrowed = complete('version: 1\noverrides:\n  - match: layers\\.1999|\n');
  // layers.1999, layers.19990-19999 and layers.199900-199999.
  assert.equal(narrowed.items.length, 111);
  assert.ok(narrowed.items.every((i) => i.label.startsWith('layers.1999')));
  assert.equal(narrowed.isIncomplete, false);
  assert.ok(performance.now() - t0 < 2000);
});

test('did you mean: exact for near answers, bounded in work for far ones', () => {
  assert.equal(levenshtein('kitten', 'sitting'), 3);
  assert.equal(boundedLevenshtein('kitten', 'sitting', 1), 2, 'max + 1 once it is known to be over');
  assert.equal(closest('fcc', ['conv1', 'fc', 'layer1']), 'fc');
  assert.equal(closest('zzzzzz', ['conv1', 'fc']), undefined);
  const paths = big.modules.map((m) => m.path);
  const near = closest('layers.7.mlp.fc2', paths);
  assert.ok(near && levenshtein(near, 'layers.7.mlp.fc2') === 1, near);
  // 200 misspelt names against 200k paths: each within its budget.
  const t0 = performance.now();
  for (let i = 0; i < 200; i++) closest(`nothing.like.${i}.these`, paths);
  assert.ok(performance.now() - t0 < 10_000);
});
