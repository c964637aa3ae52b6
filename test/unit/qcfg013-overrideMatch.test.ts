import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compilePython } from '../../server/util/pyRegex';
import { config, spanOf, yamlCodes } from './helpers/builder';

test('QCFG013: a match that does not compile, and a Python bad escape', () => {
  const text = config({ overrides: ['match: "layer4\\\\..*(", precision: fp32'] });
  const [f] = yamlCodes(text, 'QCFG013');
  assert.equal(spanOf(text, f), '"layer4\\\\..*("');
  assert.match(f.message, /not a valid regular expression: Unterminated group/);
  assert.match(
    yamlCodes(config({ overrides: ["match: 'conv\\q', precision: fp32"] }), 'QCFG013')[0].message,
    /bad escape \\q/,
  );
});

test('QCFG013 is quiet on valid Python regexes, including Python-only syntax', () => {
  for (const ok of [
    'conv1|fc',
    'layer[1-4]\\\\.\\\\d+\\\\.conv\\\\d',
    '(?P<block>layer\\\\d)\\\\.(?P=block)',
    '(?i)FC',
    'a(?>b)c',
    'x\\\\Z',
  ]) {
    assert.deepEqual(yamlCodes(config({ overrides: [`match: "${ok}", precision: fp32`] }), 'QCFG013'), [], ok);
  }
  assert.equal(compilePython('(?i)FC').ok, true);
});
