// test/rule-claims/test_qat018_group_size.py: what torchao 0.18 raises for each config.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pyCodes } from './helpers/builder';

const HEAD =
  'import torch\nfrom torch import nn\nfrom torchao.quantization import quantize_, Int4WeightOnlyConfig, IntxWeightOnlyConfig\n' +
  'from torchao.quantization.granularity import PerGroup\nfrom torchao.quantization.qat import IntxFakeQuantizeConfig, QATConfig\n' +
  'class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Sequential(nn.Linear(96, 10), nn.ReLU())\n' +
  '        self.out = nn.Linear(in_features=10, out_features=2)\n    def forward(self, x):\n        return self.out(self.fc(x))\n';

test('QAT018: the ValueError of the Intx configs, the forward RuntimeError of Int4WeightOnlyConfig', () => {
  const intx = `${HEAD}m = Net()\nquantize_(m, QATConfig(IntxWeightOnlyConfig(weight_dtype=torch.int4, granularity=PerGroup(64))))\n`;
  const [a] = pyCodes(intx, 'QAT018');
  assert.match(a.message, /ValueError "in_features \(96\) % group_size \(64\) must be == 0"/);
  const fq = `${HEAD}m = Net()\nw = IntxFakeQuantizeConfig(torch.int4, group_size=4)\nquantize_(m, QATConfig(weight_config=w, step="prepare"))\n`;
  assert.match(pyCodes(fq, 'QAT018')[0].message, /in_features \(10\) % group_size \(4\)/);
  const int4 = `${HEAD}m = Net()\nquantize_(m, QATConfig(Int4WeightOnlyConfig(group_size=64)))\n`;
  assert.match(pyCodes(int4, 'QAT018')[0].message, /first forward raises RuntimeError/);
});

test('QAT018 is quiet for dividing sizes, filter_fn, unknown sizes and models from elsewhere', () => {
  const quiet = [
    `${HEAD}m = Net()\nquantize_(m, QATConfig(Int4WeightOnlyConfig(group_size=2)))\n`,
    `${HEAD}m = Net()\nquantize_(m, QATConfig(Int4WeightOnlyConfig(group_size=64)), filter_fn=only_out)\n`,
    `${HEAD}m = Net()\nquantize_(m, QATConfig(Int4WeightOnlyConfig(group_size=gs)))\n`,
    `${HEAD}m = load()\nquantize_(m, QATConfig(Int4WeightOnlyConfig(group_size=64)))\n`,
  ];
  for (const src of quiet) assert.deepEqual(pyCodes(src, 'QAT018'), [], src);
});
