// A huge config is analysed up to CONFIG_CHARS, cut before a node start so the part kept is whole YAML; the
// step-wise parse gives what yaml's parseDocument gives; the sliced analysis gives what the direct one gives,
// and stops when it goes stale.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { parseDocument } from 'yaml';
import { configFindings, configSteps, parseConfig } from '../../server/services/configDiagnostics';
import { CONFIG_CHARS, configBudget } from '../../server/util/budget';
import { runSliced } from '../../server/util/slices';
import { config, repoRoot } from './helpers/builder';

const items = (n: number) =>
  Array.from({ length: n }, (_, i) => `  - match: "layer${i}"\n    weight:\n      observer: MinMaxObserver\n`).join('');

test('a config within the budget is analysed whole', () => {
  const text = config({ overrides: ['match: "fc", precision: fp32'] });
  assert.deepEqual(configBudget(text), { text });
});

test('a config past the budget is cut before the last list item that starts within it', () => {
  const text = `${config()}overrides:\n${items(20_000)}`;
  assert.ok(text.length > CONFIG_CHARS);
  assert.ok(configBudget(text).text.length > CONFIG_CHARS - 200);
  const limit = 20_000;
  const { text: part, stoppedAt } = configBudget(text, limit);
  assert.ok(part.length <= limit && part.length > limit - 200);
  assert.ok(text.startsWith(part));
  assert.match(text.slice(part.length), /^ {2}- match: "layer\d+"\n/);
  assert.equal(stoppedAt, part.split('\n').length - 1);
  assert.deepEqual(parseConfig(part).errors, []);
});

test('a single line past the budget leaves nothing analysed but the size finding', () => {
  const text = `version: 1\nqconfig: {}\nnote: "${'x'.repeat(CONFIG_CHARS)}"\n`;
  assert.equal(configBudget(text).text, 'version: 1\nqconfig: {}\n');
  const huge = `{version: 1, qconfig: {}, note: "${'x'.repeat(CONFIG_CHARS)}"}\n`;
  assert.deepEqual(
    configFindings(huge).map((f) => f.code),
    ['SIZE'],
  );
});

const js = (doc: { toJS(): unknown }) => {
  try {
    return doc.toJS();
  } catch (err) {
    return (err as Error).message;
  }
};

test('the step-wise parse gives what parseDocument gives: values, errors, ranges', () => {
  const texts = [
    ...['cifar/resnet18.qat.yaml', 'digits/digits.qat.yaml', 'digits/eager.qat.yaml'].map((f) =>
      readFileSync(path.join(repoRoot, 'examples', f), 'utf8'),
    ),
    'version: 1\nqconfig: {activation: [\n',
    'a: 1\na: 2\n',
    'a: 1\n---\nb: 2\n',
    '',
    '- [1, {x: *y}]\n',
  ];
  for (const text of texts) {
    const ours = parseConfig(text);
    const theirs = parseDocument(text, { prettyErrors: false, uniqueKeys: true });
    assert.deepEqual(
      ours.errors.map((e) => [e.code, e.message, e.pos]),
      theirs.errors.map((e) => [e.code, e.message, e.pos]),
      text,
    );
    assert.deepEqual(js(ours), js(theirs), text);
    assert.deepEqual(ours.contents?.range, theirs.contents?.range, text);
  }
});

test('the sliced analysis gives the direct one, and gives up when stale', async () => {
  const text = `${config({ activation: 'observer: MinMaxObservr' })}overrides:\n${items(100)}`;
  const direct = configFindings(text);
  assert.ok(direct.some((f) => f.code === 'QCFG009'));
  assert.deepEqual(await runSliced(configSteps(text), () => false, 1), direct);
  let turns = 0;
  assert.equal(await runSliced(configSteps(text), () => ++turns > 2, 1), undefined);
  assert.equal(turns, 3);
});
