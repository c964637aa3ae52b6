// Hover on a module attribute in a Python script shows the effective qconfig from the config beside it.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { pythonHover } from '../../server/services/pythonHover';
import { effectiveQConfig } from '../../server/services/scriptConfig';
import { cursor, pyDoc } from './helpers/builder';

const dir = mkdtempSync(path.join(tmpdir(), 'pyhover-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const CONFIG = `version: 1
model: {entry: "model.py:make_model", example_input: [2, 1, 8, 8]}
qconfig:
  activation: {observer: MovingAverageMinMaxObserver, dtype: quint8, quant_min: 0, quant_max: 127}
  weight: {observer: PerChannelMinMaxObserver, dtype: qint8, qscheme: per_channel_symmetric, ch_axis: 0}
overrides:
  - {match: "fc2", precision: fp16}
  - {match: "layer1", weight: {observer: MinMaxObserver, qscheme: per_tensor_symmetric}}
`;
writeFileSync(path.join(dir, 'net.qat.yaml'), CONFIG);
const MODEL = `import torch
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(1, 8, 3)
        self.fc2 = torch.nn.Linear(8, 10)
    def forward(self, x):
        return self.fc2(self.co|nv1(x))
`;

function hover(textWithBar: string, file = 'model.py', open?: (uri: string) => string | undefined): string | undefined {
  const { text, offset } = cursor(textWithBar);
  const doc = pyDoc(text, pathToFileURL(path.join(dir, file)).href);
  const h = pythonHover(doc, doc.positionAt(offset), open);
  return h ? (h.contents as { value: string }).value : undefined;
}

test('a module attribute shows its effective qconfig under the config beside the script', () => {
  const text = hover(MODEL)!;
  assert.match(text, /\*\*QAT Studio\*\* · net\.qat\.yaml/);
  assert.match(text, /`conv1`: \*\*int8\*\*, from the global qconfig/);
  assert.match(text, /- activation: MovingAverageMinMaxObserver, quint8 0\.\.127, per_tensor_affine/);
  assert.match(text, /- weight: PerChannelMinMaxObserver, qint8 -128\.\.127, per_channel_symmetric \(ch_axis 0\)/);
  assert.match(
    hover(MODEL.replace('self.co|nv1(x)', 'self.conv1(x)').replace('self.fc2(self', 'self.f|c2(self'))!,
    /`fc2`: \*\*fp16\*\*, from override 0 \(match `fc2`\)[\s\S]*Kept in fp16/,
  );
});

test('unsaved config edits count; nested modules resolve through the exported graph', () => {
  const edited = CONFIG.replace('match: "fc2", precision: fp16', 'match: "conv1", precision: fp32');
  const open = (uri: string) => (uri.endsWith('net.qat.yaml') ? edited : undefined);
  assert.match(hover(MODEL, 'model.py', open)!, /`conv1`: \*\*fp32\*\*, from override 0 \(match `conv1`\)/);
  mkdirSync(path.join(dir, 'out'), { recursive: true });
  writeFileSync(
    path.join(dir, 'out', 'net.fp32.qatgraph.json'),
    JSON.stringify({
      format: 'qat-studio.graph/1',
      name: 'Net',
      stage: 'fp32',
      flow: 'pt2e',
      nodes: [],
      modules: [
        { path: 'layer1', type: 'Sequential' },
        { path: 'layer1.0', type: 'Block' },
        { path: 'layer1.0.conv1', type: 'Conv2d' },
        { path: 'conv1', type: 'Conv2d' },
      ],
    }),
  );
  const block = 'class Block(torch.nn.Module):\n    def forward(self, x):\n        return self.con|v1(x)\n';
  const text = hover(block, 'train.py')!;
  assert.match(text, /`conv1` \(Conv2d\): \*\*int8\*\*, from the global qconfig/);
  rmSync(path.join(dir, 'out', 'net.fp32.qatgraph.json'));
  assert.equal(hover('x = torch.nn.Li|near\n', 'train.py'), undefined, 'not a module');
});

test('qconfig shows the global qconfig; no config, no hover', () => {
  assert.match(hover('model.qcon|fig = None\n')!, /\*\*Global qconfig\*\*[\s\S]*2 overrides change it/);
  const lone = mkdtempSync(path.join(tmpdir(), 'pyhover-none-'));
  const doc = pyDoc('self.conv1 = 1\nself.con|v1\n'.replace('|', ''), pathToFileURL(path.join(lone, 'model.py')).href);
  assert.equal(pythonHover(doc, doc.positionAt(20)), null);
  rmSync(lone, { recursive: true, force: true });
});

test('effective qconfig: first match wins, parents count, override keys merge into the global spec', () => {
  const data = {
    qconfig: { weight: { observer: 'PerChannelMinMaxObserver', dtype: 'qint8' } },
    overrides: [
      { match: 'layer1', weight: { observer: 'MinMaxObserver' } },
      { match: 'layer1\\.0\\.conv1', precision: 'fp32' },
    ],
  };
  const eff = effectiveQConfig(data, 'layer1.0.conv1');
  assert.deepEqual(eff.override, { index: 0, match: 'layer1' });
  assert.deepEqual(eff.weight, { observer: 'MinMaxObserver', dtype: 'qint8' });
  assert.equal(effectiveQConfig(data, 'layer10').override, undefined, 'fullmatch, not prefix');
});
