import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyFix, pyCodes, spanOf } from './helpers/builder';

// test/rule-claims/test_qat010_reused_module.py shows on torch 2.13 / torchao 0.18 which reuses fail.
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
const PT2E = 'from torchao.quantization.pt2e.quantize_pt2e import prepare_qat_pt2e\n';

test('QAT010: one ReLU instance called twice in forward; the fix adds a second instance', () => {
  const src = block(PT2E);
  const [f] = pyCodes(src, 'QAT010');
  assert.equal(f.severity, 'warning');
  assert.equal(spanOf(src, f), 'self.relu');
  assert.equal(src.indexOf('self.relu(out + x)'), f.start);
  assert.match(f.message, /Input partition has more than one output node/);
  assert.match(f.message, /follows a Conv2d/);
  assert.match(f.message, /strict=True/);
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

test('QAT010: calls in exclusive if/elif/else branches are on different paths', () => {
  const src = `${PT2E}from torch import nn

class Head(nn.Module):
    def __init__(self, mode):
        super().__init__()
        self.mode = mode
        self.conv = nn.Conv2d(8, 8, 3)
        self.relu = nn.ReLU()

    def forward(self, x):
        if self.mode == "a":
            return self.relu(self.conv(x))
        elif self.mode == "b":
            x = self.relu(self.conv(x) * 2)
        else:
            x = self.relu(self.conv(x) + 1)
        return x
`;
  assert.deepEqual(pyCodes(src, 'QAT010'), []);
  // ... but a call after the if, on the path through the elif, is a second call
  const twice = src.replace('        return x\n', '        return self.relu(x)\n');
  assert.equal(pyCodes(twice, 'QAT010').length, 1);
});

test('QAT010 checks a BasicBlock nested in another class, written torchvision-style', () => {
  const src = `${PT2E}from torch import nn

def conv3x3(cin, cout):
    return nn.Conv2d(cin, cout, 3, padding=1, bias=False)

class ResNet(nn.Module):
    class BasicBlock(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.conv1 = conv3x3(c, c)
            self.bn1 = nn.BatchNorm2d(c)
            self.relu = nn.ReLU(inplace=True)
            self.conv2 = conv3x3(c, c)
            self.bn2 = nn.BatchNorm2d(c)

        def forward(self, x):
            identity = x
            out = self.conv1(x)
            out = self.bn1(out)
            out = self.relu(out)
            out = self.conv2(out)
            out = self.bn2(out)
            out += identity
            out = self.relu(out)
            return out

    def __init__(self):
        super().__init__()
        self.layer = ResNet.BasicBlock(8)
`;
  const found = pyCodes(src, 'QAT010');
  assert.equal(found.length, 1);
  assert.equal(src.slice(0, found[0].start).split('\n').length, 25);
});

test('QAT010 is quiet for a ReLU shared after Linear layers, for GELU, and when every export is strict', () => {
  const mlp = `${PT2E}from torch import nn

class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 8)
        self.fc2 = nn.Linear(8, 8)
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(self.fc2(self.act(self.fc1(x))))
`;
  assert.deepEqual(pyCodes(mlp, 'QAT010'), []);
  assert.deepEqual(pyCodes(block(PT2E).replace(/nn\.ReLU\(inplace=True\)/, 'nn.GELU()'), 'QAT010'), []);
  const strict = `${block(PT2E)}\ndef export(m, x):\n    return torch.export.export(m, (x,), strict=True)\n`;
  assert.deepEqual(pyCodes(`import torch\n${strict}`, 'QAT010'), []);
});

test('QAT010 follows an inherited forward and reports a call repeated on each loop iteration', () => {
  const src = `${PT2E}from torch import nn

class Base(nn.Module):
    def forward(self, x):
        for _ in range(3):
            x = self.act(self.conv(x))
        return x

class Impl(Base):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(8, 8, 3, padding=1)
        self.act = nn.ReLU6()
`;
  const [f] = pyCodes(src, 'QAT010');
  assert.match(f.message, /next iteration of this loop/);
  assert.match(f.message, /in Impl, which inherits this method/);
});
