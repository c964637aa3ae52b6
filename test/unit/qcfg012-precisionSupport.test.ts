import assert from 'node:assert/strict';
import { test } from 'node:test';
import { configFindings } from '../../server/services/configDiagnostics';
import { applyFix, config, spanOf, yamlCodes } from './helpers/builder';

test('QCFG012: fp16/bf16 overrides in the eager flow and on qnnpack', () => {
  const eager = config({ flow: 'eager', overrides: ['match: "fc", precision: bf16'] });
  const [f] = yamlCodes(eager, 'QCFG012');
  assert.equal(spanOf(eager, f), 'bf16');
  assert.match(f.message, /eager flow has no static fp16\/bf16 modules/);
  assert.deepEqual(configFindings(applyFix(eager, f)), []);
  assert.match(
    yamlCodes(config({ backend: 'qnnpack', overrides: ['match: "fc", precision: fp16'] }), 'QCFG012')[0].message,
    /int8-only/,
  );
});

test('QCFG012 is quiet for pt2e on x86/xnnpack and for int8/fp32 overrides', () => {
  assert.deepEqual(
    yamlCodes(
      config({
        flow: 'pt2e',
        backend: 'x86',
        overrides: ['match: "fc", precision: fp16', 'match: "head", precision: bf16'],
      }),
      'QCFG012',
    ),
    [],
  );
  assert.deepEqual(
    yamlCodes(config({ backend: 'xnnpack', overrides: ['match: "fc", precision: fp16'] }), 'QCFG012'),
    [],
  );
  assert.deepEqual(yamlCodes(config({ flow: 'eager', overrides: ['match: "fc", precision: fp32'] }), 'QCFG012'), []);
});
