import assert from 'node:assert/strict';
import { test } from 'node:test';
import { configFindings } from '../../server/services/configDiagnostics';
import { applyFix, config, spanOf, yamlCodes } from './helpers/builder';

test('QCFG008: eps <= 0 is an error; the fix restores float32 eps', () => {
  const text = config({ activation: 'observer: MinMaxObserver, eps: 0' });
  const [f] = yamlCodes(text, 'QCFG008');
  assert.equal(spanOf(text, f), '0');
  assert.equal(f.severity, 'error');
  assert.deepEqual(configFindings(applyFix(text, f)), []);
  assert.equal(yamlCodes(config({ activation: 'eps: -1.0e-5' }), 'QCFG008').length, 1);
});

test('QCFG008 is quiet for a positive eps', () => {
  assert.deepEqual(yamlCodes(config({ activation: 'eps: 0.000244140625' }), 'QCFG008'), []);
});
