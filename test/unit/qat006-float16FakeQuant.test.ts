import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyFix, pyCodes, spanOf } from './helpers/builder';

test('QAT006: FakeQuantize.with_args(dtype=torch.float16 ...) is an error; a qualified call gets a PlaceholderObserver fix', () => {
  const src =
    'import torch\nfq = torch.ao.quantization.FakeQuantize.with_args(observer=torch.ao.quantization.MovingAverageMinMaxObserver, quant_min=-65504, quant_max=65504, dtype=torch.float16)\n';
  const [f] = pyCodes(src, 'QAT006');
  assert.equal(f.severity, 'error');
  assert.equal(spanOf(src, f), 'torch.float16');
  const fixed = applyFix(src, f);
  assert.equal(fixed, 'import torch\nfq = torch.ao.quantization.PlaceholderObserver.with_args(dtype=torch.float16)\n');
  assert.deepEqual(pyCodes(fixed, 'QAT006'), []);
  assert.equal(pyCodes('fq = FakeQuantize.with_args(quant_min=-65504, quant_max=65504)\n', 'QAT006').length, 1);
});

test('QAT006 is quiet for PlaceholderObserver float16 and integer fake quantization', () => {
  assert.deepEqual(
    pyCodes(
      'q = PlaceholderObserver.with_args(dtype=torch.float16)\nf = FakeQuantize.with_args(observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255, dtype=torch.quint8)\n',
      'QAT006',
    ),
    [],
  );
});
