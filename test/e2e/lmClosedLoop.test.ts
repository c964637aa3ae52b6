// The closed loop on a language model in code-server: examples/tinylm (transformers' Llama from its config, flow:
// torchao, 8da4w) as a user's workspace, made small (3 decoder layers of width 32, a short pre-training) so it runs
// in a few minutes. test/ext/lmClosedLoop.test.ts drives Compare Layers (the folded graph), Apply Fix on the worst
// Linear, retrain, compare again and Before / After.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { exampleWorkspace } from '../support/codeServer';
import { runExtensionSuite } from '../support/extHost';

const TINY = `from data import loaders
from model import build, pretrain


def tiny_data():
    train, val = loaders(batch_size=8, block=32)
    return train[:200], val[:4]


def tiny_model():
    model = build(hidden=32, layers=3, heads=2, block=32)
    return pretrain(model, tiny_data()[0], epochs=1, lr=5e-3)
`;

function lmWorkspace(): string {
  const ws = exampleWorkspace({ 'tiny.py': TINY }, 'tinylm');
  const config = path.join(ws, 'tinylm.qat.yaml');
  const text = readFileSync(config, 'utf8')
    .replace('model: {entry: "model.py:make_model"}', 'model: {entry: "tiny.py:tiny_model"}')
    .replace('data: {entry: "data.py:loaders"}', 'data: {entry: "tiny.py:tiny_data"}')
    .replace(/steps: \d+/, 'steps: 60');
  assert.match(text, /tiny\.py:tiny_model[\s\S]*tiny\.py:tiny_data[\s\S]*steps: 60/, 'the example config changed');
  writeFileSync(config, text);
  return ws;
}

test(
  'closed loop on a language model in code-server: folded graph, Apply Fix on a Linear, retrain, Before / After',
  { timeout: 1_800_000 },
  async (t) => {
    const { code, tests, lines } = await runExtensionSuite(lmWorkspace(), 'lmClosedLoopIndex.js', 1_200_000);
    const points = lines.find((l) => l.includes('LM-CLOSED-LOOP '));
    if (points) t.diagnostic(points.slice(points.indexOf('LM-CLOSED-LOOP ')));
    assert.equal(tests.length, 2, `expected the 2 closed-loop tests, got ${tests.map((r) => r.title).join('; ')}`);
    for (const r of tests) await t.test(r.title, () => assert.equal(r.state, 'passed', r.error));
    assert.equal(code, 0);
  },
);
