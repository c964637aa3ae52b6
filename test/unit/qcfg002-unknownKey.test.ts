import assert from 'node:assert/strict';
import { test } from 'node:test';
import { configFindings } from '../../server/services/configDiagnostics';
import { applyFix, config, spanOf, yamlCodes } from './helpers/builder';

test('QCFG002: an unknown key points at the key, suggests the closest schema property, and the fix renames it', () => {
  const text = config({ activation: 'observer: MinMaxObserver, dtype: quint8, quant_mx: 255' });
  const [f] = yamlCodes(text, 'QCFG002');
  assert.equal(f.message, "Unknown key 'quant_mx' in qconfig.activation. Did you mean 'quant_max'?");
  assert.equal(spanOf(text, f), 'quant_mx');
  assert.deepEqual(configFindings(applyFix(text, f)), []);
});

test('QCFG002 at the top level and without a close match lists the known keys', () => {
  const text = config() + 'trian: {epochs: 1}\nzzzzzzzz: 1\n';
  const [typo, junk] = yamlCodes(text, 'QCFG002');
  assert.match(typo.message, /Unknown key 'trian'\. Did you mean 'train'\?/);
  assert.match(junk.message, /Known keys: version, model/);
  assert.equal(junk.fixes, undefined);
});

test('QCFG002 is quiet on known keys', () => {
  assert.deepEqual(
    yamlCodes(config({ activation: 'observer: MinMaxObserver, quant_max: 255, quant_min: 0' }), 'QCFG002'),
    [],
  );
});
