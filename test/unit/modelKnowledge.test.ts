// Completion and hover that use the model's module names from an exported graph.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ModelKnowledge } from '../../server/services/modelIndex';
import { yamlCompletion } from '../../server/services/yamlCompletion';
import { yamlHover } from '../../server/services/yamlHover';
import { cursor, yamlDoc } from './helpers/builder';

const model: ModelKnowledge = {
  graphFile: '/w/out/net.fp32.qatgraph.json',
  stage: 'fp32',
  stamp: 'x',
  modules: [
    { path: 'conv1', type: 'Conv2d', source: { file: '/w/model.py', line: 9 } },
    { path: 'layer1', type: 'Sequential' },
    { path: 'layer1.0', type: 'BasicBlock' },
    { path: 'layer1.0.conv1', type: 'Conv2d' },
    { path: 'fc', type: 'Linear' },
  ],
};

function at(textWithBar: string) {
  const { text, offset } = cursor(textWithBar);
  const doc = yamlDoc(text);
  return { doc, position: doc.positionAt(offset) };
}

test('match values complete to module paths with their types, dots escaped for re.fullmatch', () => {
  const { doc, position } = at('version: 1\noverrides:\n  - match: |\n');
  const items = yamlCompletion(doc, position, model).items;
  assert.deepEqual(
    items.map((i) => i.label),
    ['conv1', 'layer1', 'layer1.0', 'layer1.0.conv1', 'fc'],
  );
  assert.equal(items[0].detail, 'Conv2d');
  assert.match((items[0].documentation as { value: string }).value, /defined at \/w\/model\.py:9; from the fp32 graph/);
  assert.equal((items[3].textEdit as { newText: string }).newText, 'layer1\\.0\\.conv1');
  const quoted = at('version: 1\noverrides:\n  - {match: "lay|"}\n');
  const q = yamlCompletion(quoted.doc, quoted.position, model).items.find((i) => i.label === 'layer1.0')!;
  assert.equal(
    (q.textEdit as { newText: string }).newText,
    '"layer1\\\\.0',
    'a double-quoted YAML string doubles the backslash',
  );
  const none = at('version: 1\noverrides:\n  - match: |\n');
  assert.deepEqual(yamlCompletion(none.doc, none.position).items, [], 'no graph, no guesses');
});

test('hover on a match lists the modules it selects', () => {
  const { doc, position } = at('version: 1\noverrides:\n  - {match: "lay|er1.*", precision: fp32}\n');
  const text = (yamlHover(doc, position, model)!.contents as { value: string }).value;
  assert.match(
    text,
    /\*\*Matches\*\* 3 modules \(and their children\): `layer1` Sequential, `layer1\.0` BasicBlock, `layer1\.0\.conv1` Conv2d/,
  );
  const miss = at('version: 1\noverrides:\n  - {match: "x|yz", precision: fp32}\n');
  assert.match(
    (yamlHover(miss.doc, miss.position, model)!.contents as { value: string }).value,
    /\*\*Matches\*\* no module of the fp32 graph/,
  );
});
