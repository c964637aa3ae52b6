import assert from 'node:assert/strict';
import { test } from 'node:test';
import { configFindings } from '../../server/services/configDiagnostics';
import { applyFix, config, spanOf, yamlCodes } from './helpers/builder';

test('QCFG005: ch_axis with a per-tensor qscheme; the fix removes it (flow style)', () => {
  const text = config({ weight: 'observer: MinMaxObserver, dtype: qint8, qscheme: per_tensor_symmetric, ch_axis: 0' });
  const [f] = yamlCodes(text, 'QCFG005');
  assert.equal(f.severity, 'warning');
  assert.equal(spanOf(text, f), 'ch_axis: 0');
  const fixed = applyFix(text, f);
  assert.match(fixed, /weight: \{observer: MinMaxObserver, dtype: qint8, qscheme: per_tensor_symmetric\}/);
  assert.deepEqual(configFindings(fixed), []);
});

test('QCFG005 in block style removes the whole line', () => {
  const text =
    'version: 1\nmodel: {entry: "m.py:f", example_input: [2]}\nqconfig:\n  weight:\n    observer: MinMaxObserver\n    ch_axis: 1\n    dtype: qint8\n';
  const [f] = yamlCodes(text, 'QCFG005');
  assert.equal(applyFix(text, f), text.replace('    ch_axis: 1\n', ''));
});

test('QCFG005 is quiet with per-channel schemes (explicit or the observer default)', () => {
  assert.deepEqual(
    yamlCodes(config({ weight: 'observer: PerChannelMinMaxObserver, dtype: qint8, ch_axis: 1' }), 'QCFG005'),
    [],
  );
  assert.deepEqual(
    yamlCodes(config({ weight: 'observer: FakeQuantize, qscheme: per_channel_affine, ch_axis: 0' }), 'QCFG005'),
    [],
  );
});
