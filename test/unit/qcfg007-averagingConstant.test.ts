import assert from 'node:assert/strict';
import { test } from 'node:test';
import { configFindings } from '../../server/services/configDiagnostics';
import { applyFix, config, spanOf, yamlCodes } from './helpers/builder';

test("QCFG007: averaging_constant outside (0, 1], fixed to torch's 0.01", () => {
  for (const bad of ['0', '-0.1', '1.5']) {
    const text = config({ activation: `observer: MovingAverageMinMaxObserver, averaging_constant: ${bad}` });
    const [f] = yamlCodes(text, 'QCFG007');
    assert.equal(spanOf(text, f), bad);
    assert.deepEqual(configFindings(applyFix(text, f)), []);
  }
});

test('QCFG007 is quiet inside (0, 1]', () => {
  for (const ok of ['1', '0.01', '1e-3']) {
    assert.deepEqual(
      yamlCodes(config({ activation: `observer: MovingAverageMinMaxObserver, averaging_constant: ${ok}` }), 'QCFG007'),
      [],
    );
  }
});
