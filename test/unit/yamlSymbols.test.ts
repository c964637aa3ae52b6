import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SymbolKind } from 'vscode-languageserver';
import { yamlSymbols } from '../../server/services/yamlSymbols';
import { config, yamlDoc } from './helpers/builder';

test('one symbol per key, nested, overrides named by their match', () => {
  const symbols = yamlSymbols(
    yamlDoc(config({ activation: 'dtype: quint8', overrides: ['match: "conv1|fc", precision: fp16'] })),
  );
  assert.deepEqual(
    symbols.map((s) => s.name),
    ['version', 'model', 'qconfig', 'overrides'],
  );
  const qconfig = symbols[2];
  assert.equal(qconfig.kind, SymbolKind.Object);
  assert.deepEqual(
    qconfig.children!.map((c) => c.name),
    ['activation'],
  );
  assert.deepEqual(
    qconfig.children![0].children!.map((c) => [c.name, c.detail]),
    [['dtype', 'quint8']],
  );
  const overrides = symbols[3];
  assert.equal(overrides.kind, SymbolKind.Array);
  assert.equal(overrides.children![0].name, 'conv1|fc');
});

test('broken documents give what can be read', () => {
  assert.doesNotThrow(() => yamlSymbols(yamlDoc('qconfig: {activation: [\n')));
});
