import assert from 'node:assert/strict';
import { test } from 'node:test';
import { configFindings } from '../../server/services/configDiagnostics';
import { applyFix, config, spanOf, yamlCodes } from './helpers/builder';

test('QCFG004: a per-channel qscheme on a per-tensor observer, with both fixes', () => {
  const text = config({ weight: 'observer: MinMaxObserver, dtype: qint8, qscheme: per_channel_symmetric' });
  const [f] = yamlCodes(text, 'QCFG004');
  assert.equal(f.severity, 'error');
  assert.equal(spanOf(text, f), 'per_channel_symmetric');
  assert.match(f.message, /MinMaxObserver only supports per-tensor qschemes/);
  assert.deepEqual(configFindings(applyFix(text, f, 0)), []);
  assert.deepEqual(configFindings(applyFix(text, f, 1)), []);
  assert.match(applyFix(text, f, 1), /observer: PerChannelMinMaxObserver/);
});

test('QCFG004: the reverse (per-tensor qscheme on a per-channel observer)', () => {
  const text = config({
    weight: 'observer: MovingAveragePerChannelMinMaxObserver, dtype: qint8, qscheme: per_tensor_affine',
  });
  assert.match(yamlCodes(text, 'QCFG004')[0].message, /only supports per-channel qschemes/);
});

test('QCFG004 is quiet on matching pairs and on observers that take either (FakeQuantize)', () => {
  assert.deepEqual(
    yamlCodes(
      config({
        activation: 'observer: HistogramObserver, qscheme: per_tensor_affine',
        weight: 'observer: PerChannelMinMaxObserver, dtype: qint8, qscheme: per_channel_symmetric',
      }),
      'QCFG004',
    ),
    [],
  );
  assert.deepEqual(
    yamlCodes(config({ weight: 'observer: FakeQuantize, dtype: qint8, qscheme: per_channel_symmetric' }), 'QCFG004'),
    [],
  );
});

test('QCFG004: per-channel activations are rejected; the fix also switches a per-channel observer', () => {
  const text = config({ activation: 'observer: PerChannelMinMaxObserver, qscheme: per_channel_affine' });
  const [f] = yamlCodes(text, 'QCFG004');
  assert.match(f.message, /Activations are quantized per tensor/);
  assert.match(applyFix(text, f), /activation: \{observer: MinMaxObserver, qscheme: per_tensor_affine\}/);
  assert.deepEqual(configFindings(applyFix(text, f)), []);
});
