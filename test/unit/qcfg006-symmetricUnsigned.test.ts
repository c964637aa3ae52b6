import assert from 'node:assert/strict';
import { test } from 'node:test';
import { configFindings } from '../../server/services/configDiagnostics';
import { applyFix, config, spanOf, yamlCodes } from './helpers/builder';

test('QCFG006: symmetric qscheme with quint8 is a warning; fixes switch qscheme or dtype', () => {
  const text = config({ activation: 'observer: MinMaxObserver, dtype: quint8, qscheme: per_tensor_symmetric' });
  const [f] = yamlCodes(text, 'QCFG006');
  assert.equal(f.severity, 'warning');
  assert.equal(spanOf(text, f), 'per_tensor_symmetric');
  assert.deepEqual(
    f.fixes!.map((x) => x.title),
    ['Use qscheme per_tensor_affine', 'Use dtype qint8'],
  );
  assert.deepEqual(configFindings(applyFix(text, f, 0)), []);
  assert.deepEqual(configFindings(applyFix(text, f, 1)), []);
});

test('QCFG006 uses the role default dtype (activation -> quint8) and skips the dtype fix when a range is set', () => {
  const text = config({ activation: 'qscheme: per_tensor_symmetric, quant_min: 0, quant_max: 255' });
  const [f] = yamlCodes(text, 'QCFG006');
  assert.deepEqual(
    f.fixes!.map((x) => x.title),
    ['Use qscheme per_tensor_affine'],
  );
});

test('QCFG006 is quiet for signed symmetric and unsigned affine', () => {
  assert.deepEqual(
    yamlCodes(
      config({
        activation: 'dtype: quint8, qscheme: per_tensor_affine',
        weight: 'dtype: qint8, qscheme: per_tensor_symmetric',
      }),
      'QCFG006',
    ),
    [],
  );
});
