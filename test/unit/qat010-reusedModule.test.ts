import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyFix, pyCodes, spanOf } from './helpers/builder';

const block = (imports: string) => `${imports}from torch import nn

class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(8, 8, 3)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        out = self.relu(self.conv(x))
        return self.relu(out + x)
`;

test('QAT010: one ReLU instance called twice in forward; the fix adds a second instance', () => {
  const src = block('from torchao.quantization.pt2e.quantize_pt2e import prepare_qat_pt2e\n');
  const [f] = pyCodes(src, 'QAT010');
  assert.equal(f.severity, 'warning');
  assert.equal(spanOf(src, f), 'self.relu');
  assert.equal(src.indexOf('self.relu(out + x)'), f.start);
  const fixed = applyFix(src, f);
  assert.match(fixed, /self\.relu = nn\.ReLU\(inplace=True\)\n {8}self\.relu2 = nn\.ReLU\(inplace=True\)/);
  assert.match(fixed, /return self\.relu2\(out \+ x\)/);
  assert.deepEqual(pyCodes(fixed, 'QAT010'), []);
});

test('QAT010 is a hint in files that do not quantize, and quiet for modules with weights or single use', () => {
  assert.equal(pyCodes(block(''), 'QAT010')[0].severity, 'hint');
  const conv = block('')
    .replace('out = self.relu(self.conv(x))', 'out = self.relu(self.conv(self.conv(x)))')
    .replace('return self.relu(out + x)', 'return out');
  assert.deepEqual(pyCodes(conv, 'QAT010'), []);
});
