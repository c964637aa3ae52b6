// Semantic tokens for module names: in overrides[].match from the exported graph, and module attributes in
// Python with int8 / float modifiers from the config beside the script.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import type { ModelKnowledge } from '../../server/services/modelIndex';
import { configTokens, pythonTokens, semanticLegend } from '../../server/services/semanticTokens';
import { pyDoc, yamlDoc } from './helpers/builder';

/** Decodes LSP's relative 5-tuples into [text, type, modifiers...]. */
function decode(doc: TextDocument, data: number[]): Array<[string, string, ...string[]]> {
  const out: Array<[string, string, ...string[]]> = [];
  let line = 0;
  let char = 0;
  for (let i = 0; i < data.length; i += 5) {
    line += data[i];
    char = data[i] === 0 ? char + data[i + 1] : data[i + 1];
    const start = doc.offsetAt({ line, character: char });
    const mods = semanticLegend.tokenModifiers.filter((_, bit) => data[i + 4] & (1 << bit));
    out.push([doc.getText().slice(start, start + data[i + 2]), semanticLegend.tokenTypes[data[i + 3]], ...mods]);
  }
  return out;
}

const model: ModelKnowledge = {
  graphFile: '/w/out/x.fp32.qatgraph.json',
  stage: 'fp32',
  stamp: 's',
  modules: ['conv1', 'layer4', 'layer4.0', 'layer4.0.conv1', 'fc'].map((p) => ({ path: p, type: 'M' })),
};

test('config: module names inside match values, as written (escaped dots, regex tails)', () => {
  const text =
    'version: 1\nqconfig: {}\noverrides:\n  - {match: "conv1|fcx", precision: fp32}\n  - {match: "layer4\\\\.0\\\\.conv1|layer4\\\\..*", precision: fp16}\n';
  const doc = yamlDoc(text);
  assert.deepEqual(decode(doc, configTokens(doc, model).data), [
    ['conv1', 'namespace'],
    ['layer4\\\\.0\\\\.conv1', 'namespace'],
    ['layer4', 'namespace'],
  ]);
  assert.deepEqual(configTokens(doc, undefined).data, [], 'no graph, no tokens');
});

test('python: module attributes get int8 or float from the config beside the script', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'tokens-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(
    path.join(dir, 'm.qat.yaml'),
    'version: 1\nmodel: {entry: "m.py:make"}\nqconfig: {}\noverrides:\n  - {match: fc, precision: fp16}\n',
  );
  const src =
    'class M:\n    def __init__(self):\n        self.conv1 = Conv()\n        self.fc = Linear()\n    def forward(self, x):\n        return self.fc(self.conv1(x)).view(1)\n';
  const doc = pyDoc(src, pathToFileURL(path.join(dir, 'm.py')).href);
  assert.deepEqual(decode(doc, pythonTokens(doc, () => undefined).data), [
    ['conv1', 'property', 'int8'],
    ['fc', 'property', 'float'],
    ['fc', 'property', 'float'],
    ['conv1', 'property', 'int8'],
  ]);
});
