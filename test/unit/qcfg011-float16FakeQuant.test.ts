import assert from 'node:assert/strict';
import { test } from 'node:test';
import { configFindings } from '../../server/services/configDiagnostics';
import { applyFix, config, spanOf, yamlCodes } from './helpers/builder';

test('QCFG011: the tutorial float16 fake quantize; in the global qconfig the fix drops the float16 settings', () => {
  const text = config({ activation: 'observer: FakeQuantize, quant_min: -65504, quant_max: 65504, dtype: float16' });
  const findings = configFindings(text);
  assert.deepEqual(
    findings.map((f) => f.code),
    ['QCFG011'],
  );
  assert.equal(spanOf(text, findings[0]), 'float16');
  assert.match(findings[0].message, /override with precision: fp16/);
  const fixed = applyFix(text, findings[0]);
  assert.match(fixed, /activation: \{observer: FakeQuantize\}/);
  assert.deepEqual(configFindings(fixed), []);
});

test('QCFG011 in an override offers precision: fp16 instead', () => {
  const text = config({
    overrides: ['match: "head", weight: {observer: MinMaxObserver, quant_min: -65504, quant_max: 65504}'],
  });
  const [f] = yamlCodes(text, 'QCFG011');
  assert.equal(spanOf(text, f), '-65504');
  const fixed = applyFix(text, f, 0);
  assert.match(fixed, /- \{match: "head", precision: fp16\}/);
  assert.deepEqual(configFindings(fixed), []);
});

test('QCFG011 is quiet for integer ranges and leaves PlaceholderObserver to QCFG009', () => {
  assert.deepEqual(
    configFindings(config({ activation: 'observer: PlaceholderObserver, dtype: float16' })).map((f) => f.code),
    ['QCFG009'],
  );
  assert.deepEqual(yamlCodes(config({ activation: 'quant_min: 0, quant_max: 255' }), 'QCFG011'), []);
});
