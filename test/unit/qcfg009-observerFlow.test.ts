import assert from 'node:assert/strict';
import { test } from 'node:test';
import { configFindings } from '../../server/services/configDiagnostics';
import { applyFix, config, spanOf, yamlCodes } from './helpers/builder';

test("QCFG009: a misspelt observer names the flow's module and replaces the schema enum error", () => {
  const text = config({ flow: 'eager', backend: 'qnnpack', activation: 'observer: MovingAverageMinMaxObservr' });
  const findings = configFindings(text);
  assert.deepEqual(
    findings.map((f) => f.code),
    ['QCFG009'],
  );
  assert.match(
    findings[0].message,
    /not an observer or fake-quant class in torch\.ao\.quantization \(flow: eager\)\. Did you mean MovingAverageMinMaxObserver\?/,
  );
  assert.equal(spanOf(text, findings[0]), 'MovingAverageMinMaxObservr');
  assert.deepEqual(configFindings(applyFix(text, findings[0])), []);
});

test('QCFG009: a torchao-only observer in the eager flow', () => {
  const text = config({ flow: 'eager', activation: 'observer: AffineQuantizedMinMaxObserver' });
  assert.match(yamlCodes(text, 'QCFG009')[0].message, /exists only in torchao\.quantization\.pt2e \(flow: pt2e\)/);
});

test('QCFG009: observers that give no qparams for QAT fake quantization', () => {
  const text = config({ activation: 'observer: PlaceholderObserver, dtype: float16' });
  const [f] = yamlCodes(text, 'QCFG009');
  assert.equal(spanOf(text, f), 'PlaceholderObserver');
  assert.match(f.message, /no scale\/zero-point for QAT fake quantization.*precision: fp32/);
});

test('QCFG009 is quiet for the QAT observers in both flows', () => {
  for (const flow of ['eager', 'pt2e']) {
    for (const o of [
      'MinMaxObserver',
      'HistogramObserver',
      'FusedMovingAvgObsFakeQuantize',
      'FakeQuantize',
      'MovingAveragePerChannelMinMaxObserver',
    ]) {
      assert.deepEqual(yamlCodes(config({ flow, activation: `observer: ${o}` }), 'QCFG009'), [], `${flow} ${o}`);
    }
  }
});
