// The language server's searches over a model's modules stay bounded whatever the model's size: completion in
// `match:` returns at most MAX_MODULE_ITEMS (incomplete, narrowed by what is typed), and "did you mean" spends a
// fixed budget per name while still finding a typo where the answer is near; override patterns are tried against
// a bounded number of module paths per analysis and per hover.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { configFindings, configSteps } from '../../server/services/configDiagnostics';
import type { ModelKnowledge } from '../../server/services/modelIndex';
import { yamlHover } from '../../server/services/yamlHover';
import { MODULE_TESTS_PER_ANALYSIS, MODULE_TESTS_PER_HOVER } from '../../server/util/budget';
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

test('QCFG015 tries override patterns against a bounded number of module paths, in slices', () => {
  const overrides = Array.from(
    { length: 200 },
    (_, i) => `  - {match: "layers\\\\.\\\\d+\\\\.nothing${i}", precision: fp32}`,
  );
  const text = `version: 1\noverrides:\n${overrides.join('\n')}\n`;
  const checked = Math.floor(MODULE_TESTS_PER_ANALYSIS / big.modules.length);
  const unmatched = configFindings(text, big).filter((f) => f.code === 'QCFG015');
  assert.equal(unmatched.length, checked, 'the overrides within the budget are checked; the rest get no warning');
  assert.match(unmatched[0].message, /matches none of the model's 200000 modules/);
  assert.match(
    text.slice(unmatched[checked - 1].start, unmatched[checked - 1].end),
    new RegExp(`nothing${checked - 1}"`),
  );
  // The analysis yields while it scans: a slice never runs the whole scan.
  const steps = configSteps(text, big);
  let yields = 0;
  while (!steps.next().done) yields++;
  assert.ok(yields > MODULE_TESTS_PER_ANALYSIS / 10_000, `${yields} steps`);
});

test('hover on a match over a huge model says which first modules it looked at', () => {
  const huge: ModelKnowledge = {
    ...big,
    modules: Array.from({ length: MODULE_TESTS_PER_HOVER + 50_000 }, (_, i) => ({ path: `l.${i}`, type: 'Linear' })),
  };
  const { text, offset } = cursor('version: 1\noverrides:\n  - {match: "l\\\\.12|34", precision: fp32}\n');
  const doc = yamlDoc(text);
  const value = (yamlHover(doc, doc.positionAt(offset), huge)!.contents as { value: string }).value;
  assert.match(
    value,
    new RegExp(`\\*\\*Matches\\*\\* 1 module of the first ${MODULE_TESTS_PER_HOVER} \\(of ${huge.modules.length}\\)`),
  );
  assert.match(value, /`l\.1234` Linear/);
});
