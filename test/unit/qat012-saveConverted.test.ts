import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyFix, pyCodes, spanOf } from './helpers/builder';

test('QAT012: torch.save of an eager-converted model; the fix saves the state_dict', () => {
  const src =
    'import torch\nimport torch.ao.quantization as tq\nint8 = tq.convert(model)\ntorch.save(int8, "int8.pt")\n';
  const [f] = pyCodes(src, 'QAT012');
  assert.equal(spanOf(src, f), 'int8');
  const fixed = applyFix(src, f);
  assert.match(fixed, /torch\.save\(int8\.state_dict\(\), "int8\.pt"\)/);
  assert.deepEqual(pyCodes(fixed, 'QAT012'), []);
  assert.equal(
    pyCodes(
      'import torch\nfrom torch.ao.quantization import convert\nconvert(model, inplace=True)\ntorch.save(model, "m.pt")\n',
      'QAT012',
    ).length,
    1,
  );
});

test('QAT012 is quiet for float models and state_dicts', () => {
  assert.deepEqual(
    pyCodes(
      'import torch\ntorch.save(model, "f.pt")\nq = torch.ao.quantization.convert(model)\ntorch.save(q.state_dict(), "q.pt")\n',
      'QAT012',
    ),
    [],
  );
});
