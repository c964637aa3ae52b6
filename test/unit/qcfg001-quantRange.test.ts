import assert from 'node:assert/strict';
import { test } from 'node:test';
import { configFindings } from '../../server/services/configDiagnostics';
import { applyFix, config, spanOf, yamlCodes } from './helpers/builder';

test('QCFG001 fires on quant_max outside quint8, with the exact range, span and a fix to the bound', () => {
  const text = config({ activation: 'observer: MinMaxObserver, dtype: quint8, quant_min: 0, quant_max: 300' });
  const hits = yamlCodes(text, 'QCFG001');
  assert.equal(hits.length, 1);
  assert.equal(hits[0].message, 'quant_max 300 is outside the range of quint8 (0..255).');
  assert.equal(hits[0].severity, 'error');
  assert.equal(spanOf(text, hits[0]), '300');
  assert.deepEqual(configFindings(applyFix(text, hits[0])), []);
});

test('QCFG001 knows qint8 and flags quant_min >= quant_max', () => {
  const text = config({ activation: 'observer: MinMaxObserver, dtype: qint8, quant_min: -129, quant_max: -200' });
  assert.deepEqual(
    yamlCodes(text, 'QCFG001').map((f) => f.message),
    [
      'quant_min -129 is outside the range of qint8 (-128..127).',
      'quant_max -200 is outside the range of qint8 (-128..127).',
      'quant_min -129 must be smaller than quant_max -200.',
    ],
  );
});

test('QCFG001: the range must include 0; the role default dtype applies (weight -> qint8)', () => {
  assert.match(
    yamlCodes(config({ activation: 'quant_min: 10, quant_max: 255' }), 'QCFG001')[0].message,
    /must include 0/,
  );
  assert.match(
    yamlCodes(config({ weight: 'quant_min: 0, quant_max: 255' }), 'QCFG001')[0].message,
    /qint8 \(-128\.\.127\)/,
  );
});

test('QCFG001 stays quiet on correct ranges, including a reduced 0..127', () => {
  assert.deepEqual(
    yamlCodes(
      config({
        activation: 'dtype: quint8, quant_min: 0, quant_max: 127',
        weight: 'dtype: qint8, quant_min: -127, quant_max: 127',
      }),
      'QCFG001',
    ),
    [],
  );
});
