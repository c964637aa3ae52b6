import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyFix, pyCodes, spanOf } from './helpers/builder';

test('QAT007: quant_min/quant_max literals that do not fit the dtype, with a fix to the bound', () => {
  const src =
    'w = FakeQuantize.with_args(observer=MovingAveragePerChannelMinMaxObserver, quant_min=-129, quant_max=127, dtype=torch.qint8)\n';
  const [f] = pyCodes(src, 'QAT007');
  assert.equal(spanOf(src, f), '-129');
  assert.match(f.message, /outside the range of qint8 \(-128\.\.127\)/);
  assert.deepEqual(pyCodes(applyFix(src, f), 'QAT007'), []);
  assert.match(
    pyCodes('o = MinMaxObserver(quant_min=5, quant_max=255, dtype=torch.quint8)\n', 'QAT007')[0].message,
    /must include 0/,
  );
  assert.match(
    pyCodes('o = MinMaxObserver(quant_min=0, quant_max=0, dtype=torch.quint8)\n', 'QAT007')[0].message,
    /must be smaller/,
  );
});

test('QAT007 is quiet on valid ranges and when the dtype is not spelled out', () => {
  assert.deepEqual(
    pyCodes(
      'a = FakeQuantize.with_args(observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=127, dtype=torch.quint8)\nb = FakeQuantize.with_args(observer=obs, quant_min=-8, quant_max=7)\n',
      'QAT007',
    ),
    [],
  );
});
