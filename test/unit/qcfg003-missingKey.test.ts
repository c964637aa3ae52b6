import assert from 'node:assert/strict';
import { test } from 'node:test';
import { configFindings } from '../../server/services/configDiagnostics';
import { applyFix, config, spanOf, yamlCodes } from './helpers/builder';

test('QCFG003: a missing required key points at the parent key and the fix adds it', () => {
  const text = config().replace('entry: "model.py:make_model", ', '');
  const [f] = yamlCodes(text, 'QCFG003');
  assert.equal(f.message, "model is missing the required key 'entry'.");
  assert.equal(spanOf(text, f), 'model');
  const fixed = applyFix(text, f);
  assert.match(fixed, /model: \{example_input: \[2, 1, 8, 8\], entry: ""\}/);
});

test('QCFG003 in a block map and at the root', () => {
  const text = 'version: 1\nmodel:\n  example_input: [2, 8]\nqconfig: {}\n';
  const [f] = yamlCodes(text, 'QCFG003');
  assert.equal(spanOf(text, f), 'model');
  assert.equal(applyFix(text, f), 'version: 1\nmodel:\n  example_input: [2, 8]\n  entry: ""\nqconfig: {}\n');
  const root = yamlCodes('version: 1\nqconfig: {}\n', 'QCFG003');
  assert.deepEqual(
    root.map((r) => r.message),
    ["the config is missing the required key 'model'."],
  );
  assert.equal(root[0].start, 0);
});

test('QCFG003 is quiet when everything required is there', () => {
  assert.deepEqual(configFindings(config()), []);
});
