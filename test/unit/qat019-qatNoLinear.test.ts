// test/rule-claims/test_qat019_conv_only.py: torchao leaves convolutions untouched.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pyCodes } from './helpers/builder';

const HEAD =
  'import torch\nfrom torch import nn\nfrom torchao.quantization import quantize_, Int4WeightOnlyConfig\nfrom torchao.quantization.qat import QATConfig\n';
const net = (body: string) =>
  `class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n${body}    def forward(self, x):\n        return x\n`;
const prepare = 'm = Net()\nquantize_(m, QATConfig(Int4WeightOnlyConfig(group_size=32)))\n';

test('QAT019: a conv-only model defined in the file', () => {
  const src = HEAD + net('        self.conv = nn.Conv2d(3, 8, 3)\n        self.bn = nn.BatchNorm2d(8)\n') + prepare;
  const [f] = pyCodes(src, 'QAT019');
  assert.match(f.message, /Net has convolutions and no nn\.Linear/);
});

test('QAT019 is quiet with a Linear, an Embedding, modules made in loops or helpers, or a filter_fn', () => {
  const quiet = [
    HEAD + net('        self.conv = nn.Conv2d(3, 8, 3)\n        self.fc = nn.Linear(8, 2)\n') + prepare,
    HEAD + net('        self.conv = nn.Conv2d(3, 8, 3)\n        self.emb = nn.Embedding(8, 2)\n') + prepare,
    HEAD + net('        self.conv = nn.Conv2d(3, 8, 3)\n        self.head = make_head()\n') + prepare,
    HEAD +
      net(
        '        self.conv = nn.Conv2d(3, 8, 3)\n        for i in range(2):\n            setattr(self, f"fc{i}", nn.Linear(8, 8))\n',
      ) +
      prepare,
    HEAD +
      net('        self.conv = nn.Conv2d(3, 8, 3)\n') +
      'm = Net()\nquantize_(m, QATConfig(Int4WeightOnlyConfig()), filter_fn=f)\n',
  ];
  for (const src of quiet) assert.deepEqual(pyCodes(src, 'QAT019'), [], src);
});
