import assert from 'node:assert/strict';
import { test } from 'node:test';
import { configFindings } from '../../server/services/configDiagnostics';
import { applyFix, config, spanOf, yamlCodes } from './helpers/builder';

test('QCFG010: eager fbgemm/x86 activations at the full quint8 range get an information hint to use 7 bits', () => {
  for (const backend of ['fbgemm', 'x86']) {
    const text = config({ flow: 'eager', backend, activation: 'observer: MovingAverageMinMaxObserver, dtype: quint8' });
    const [f] = yamlCodes(text, 'QCFG010');
    assert.equal(f.severity, 'information');
    assert.equal(spanOf(text, f), 'activation');
    const fixed = applyFix(text, f);
    assert.match(fixed, /dtype: quint8, quant_min: 0, quant_max: 127\}/);
    assert.deepEqual(configFindings(fixed), []);
  }
  const explicit = config({
    flow: 'eager',
    activation: 'dtype: quint8, quant_min: 0, quant_max: 255, reduce_range: false',
  });
  const [g] = yamlCodes(explicit, 'QCFG010');
  assert.equal(spanOf(explicit, g), 'false');
  assert.match(applyFix(explicit, g), /\{dtype: quint8, quant_min: 0, quant_max: 127\}/);
});

test('QCFG010: reduce_range on qnnpack/xnnpack wastes a bit (warning); symmetric quint8 + reduce_range raises (error)', () => {
  const wasted = config({ backend: 'qnnpack', activation: 'dtype: quint8, reduce_range: true' });
  const [w] = yamlCodes(wasted, 'QCFG010');
  assert.equal(w.severity, 'warning');
  assert.equal(spanOf(wasted, w), 'true');
  assert.deepEqual(configFindings(applyFix(wasted, w)), []);
  const raises = config({
    activation: 'observer: MinMaxObserver, dtype: quint8, qscheme: per_tensor_symmetric, reduce_range: true',
  });
  const e = yamlCodes(raises, 'QCFG010');
  assert.equal(e[0].severity, 'error');
  assert.match(e[0].message, /Cannot reduce range for symmetric quantization for quint8/);
});

test('QCFG010 is quiet for pt2e (X86InductorQuantizer defaults to no reduce_range), reduced ranges and weights', () => {
  assert.deepEqual(
    yamlCodes(
      config({ flow: 'pt2e', backend: 'x86', activation: 'dtype: quint8, quant_min: 0, quant_max: 255' }),
      'QCFG010',
    ),
    [],
  );
  assert.deepEqual(
    yamlCodes(config({ flow: 'eager', backend: 'x86', activation: 'dtype: quint8, reduce_range: true' }), 'QCFG010'),
    [],
  );
  assert.deepEqual(
    yamlCodes(
      config({ flow: 'eager', backend: 'fbgemm', activation: 'dtype: quint8, quant_min: 0, quant_max: 127' }),
      'QCFG010',
    ),
    [],
  );
  assert.deepEqual(yamlCodes(config({ flow: 'eager', backend: 'onednn', activation: 'dtype: quint8' }), 'QCFG010'), []);
  assert.deepEqual(yamlCodes(config({ flow: 'eager', backend: 'x86', weight: 'dtype: qint8' }), 'QCFG010'), []);
});
