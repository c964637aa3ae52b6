import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyFix, pyCodes, spanOf } from './helpers/builder';

test('QAT013: model.qconfig set after prepare_qat; the fix moves it above', () => {
  const src =
    'import torch.ao.quantization as tq\ndef run(model):\n    model = tq.prepare_qat(model)\n    model.qconfig = tq.get_default_qat_qconfig("x86")\n';
  const [f] = pyCodes(src, 'QAT013');
  assert.equal(spanOf(src, f), 'model.qconfig');
  assert.match(f.message, /after prepare \(line 3\)/);
  const fixed = applyFix(src, f);
  assert.equal(
    fixed,
    'import torch.ao.quantization as tq\ndef run(model):\n    model.qconfig = tq.get_default_qat_qconfig("x86")\n    model = tq.prepare_qat(model)\n',
  );
  assert.deepEqual(pyCodes(fixed, 'QAT013'), []);
});

test('QAT013 is quiet when qconfig comes first or in another scope', () => {
  assert.deepEqual(
    pyCodes(
      'import torch.ao.quantization as tq\nmodel.qconfig = q\nmodel = tq.prepare_qat(model)\ndef other(model):\n    model.qconfig = q\n',
      'QAT013',
    ),
    [],
  );
});

test('QAT013: a PTQ branch and a QAT branch are different paths', () => {
  const src = `import torch.ao.quantization as tq
def build(model, qat):
    if qat:
        model.qconfig = tq.get_default_qat_qconfig("x86")
        model = tq.prepare_qat(model)
    else:
        model.qconfig = tq.get_default_qconfig("x86")
        model = tq.prepare(model)
    return model
`;
  assert.deepEqual(pyCodes(src, 'QAT013'), []);
  const after = src.replace('    return model\n', '    model.fc.qconfig = None\n    return model\n');
  const [f] = pyCodes(after, 'QAT013');
  assert.match(f.message, /after prepare \(lines 5 and 8\)/);
});
