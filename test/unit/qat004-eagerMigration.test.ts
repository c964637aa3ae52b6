import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pyCodes, spanOf } from './helpers/builder';

test('QAT004: one information hint per file, on the first eager/FX QAT call', () => {
  const src =
    'import torch.ao.quantization as tq\nfrom torch.ao.quantization.quantize_fx import prepare_qat_fx\nm = tq.prepare_qat(m)\nn = prepare_qat_fx(n, mapping, ex)\n';
  const hits = pyCodes(src, 'QAT004');
  assert.equal(hits.length, 1);
  assert.equal(hits[0].severity, 'information');
  assert.equal(spanOf(src, hits[0]), 'tq.prepare_qat');
  assert.match(hits[0].message, /prepare_qat_pt2e/);
});

test('QAT004 is quiet for PT2E and for unrelated prepare_qat functions', () => {
  assert.deepEqual(
    pyCodes(
      'from torchao.quantization.pt2e.quantize_pt2e import prepare_qat_pt2e\nm = prepare_qat_pt2e(m, q)\n',
      'QAT004',
    ),
    [],
  );
  assert.deepEqual(pyCodes('from mylib import prepare_qat\nm = prepare_qat(m)\n', 'QAT004'), []);
});
