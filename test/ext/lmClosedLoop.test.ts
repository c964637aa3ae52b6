// The closed loop on a language model (examples/tinylm made small: 3 Llama decoder layers, flow: torchao, 8da4w group
// 32) in a real VS Code extension host: Compare Layers shows every Linear on the FP32 graph with the decoder layers
// after the first folded into one box; Apply Fix on the Linear with the most quantization error gives it 8-bit weights;
// retrain, compare again, Before / After. See test/e2e/lmClosedLoop.test.ts. It prints `LM-CLOSED-LOOP {json}`.
import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { type Compared, fixAndRetrain, type Layer } from './fixLoop';

const EXTENSION_ID = 'qat-studio.qat-studio';

// The layer's quantization error alone: its converted self against its QAT-float self, fed the same input (the local
// SQNR against FP32 also counts how far QAT moved the weights).
const ownSqnr = (l: Layer) => l.vsQatFloatLocal?.sqnr ?? l.sqnr;
const PROJECTIONS = ['self_attn.q_proj', 'self_attn.k_proj', 'self_attn.v_proj', 'self_attn.o_proj'];

describe('the closed loop on a language model', () => {
  const folder = () => vscode.workspace.workspaceFolders![0].uri;
  const config = () => vscode.Uri.joinPath(folder(), 'tinylm.qat.yaml');
  let broken: Compared;
  let worst: Layer;

  it('Compare Layers: every Linear with its scheme, on the FP32 graph with layers 1-2 folded', async () => {
    await vscode.extensions.getExtension(EXTENSION_ID)!.activate();
    const result = await vscode.commands.executeCommand<Compared>('qatStudio.compareLayers', config());
    assert.ok(result, 'no compare result');
    broken = result;
    assert.equal(result.flow, 'torchao');
    const modules = result.layers.map((l) => l.module);
    for (let i = 0; i < 3; i++)
      for (const p of [...PROJECTIONS, 'mlp.gate_proj', 'mlp.up_proj', 'mlp.down_proj'])
        assert.ok(modules.includes(`model.layers.${i}.${p}`), `model.layers.${i}.${p} not among ${modules.join(', ')}`);
    assert.ok(modules.includes('lm_head'));
    assert.ok(
      result.layers.every((l) => l.scheme === '8da4w (group 32)' && l.weightError),
      'a layer without scheme',
    );
    assert.ok(result.perplexity && result.perplexity.converted > 1, JSON.stringify(result.perplexity));
    assert.ok(result.graph?.endsWith('tinylm.fp32.qatgraph.json'), result.graph);
    assert.ok(result.view, 'no graph view');
    for (const deadline = Date.now() + 120_000; !result.view.lastRender;) {
      assert.ok(Date.now() < deadline, 'the graph view never drew');
      await new Promise((r) => setTimeout(r, 200));
    }
    const drawn = result.view.lastRender;
    // layer 0 open, layers 1 and 2 one box; the compared Linears of layer 0 and the lm_head coloured
    assert.equal(drawn.groups, 1, JSON.stringify(drawn));
    assert.ok(drawn.total !== undefined && drawn.nodes < drawn.total, JSON.stringify(drawn));
    assert.ok(drawn.coloured >= 8, JSON.stringify(drawn));
    worst = [...result.layers].sort((a, b) => ownSqnr(a) - ownSqnr(b))[0];
    const api = vscode.extensions.getExtension(EXTENSION_ID)!.exports as { layersView: { getChildren(): Layer[] } };
    assert.equal(api.layersView.getChildren().length, result.layers.length);
  });

  it('Apply Fix on the worst Linear (8-bit weights), retrain: its own error drops; Before / After', async () => {
    const { fix: r, overrides, loop } = await fixAndRetrain(config(), worst.module, broken);
    assert.equal(r.suggestion.kind, 'int8Weights', r.suggestion.reason);
    assert.deepEqual(r.modules, [worst.module]);
    assert.equal(overrides[0].scheme, '8da8w');
    const { before, after, compare, panel } = loop;
    const fixed = compare.layers.find((l) => l.module === worst.module);
    const points = {
      fix: r.suggestion.kind,
      modules: r.modules,
      worst: { module: worst.module, before: ownSqnr(worst), after: fixed && ownSqnr(fixed) },
      scheme: fixed?.scheme,
      perplexity: { before: broken.perplexity?.converted, after: compare.perplexity?.converted },
      int8: { before: before!.accuracy.int8, after: after.accuracy.int8 },
    };
    console.log(`LM-CLOSED-LOOP ${JSON.stringify(points)}`);
    assert.ok(fixed, `${worst.module} not compared after the fix`);
    assert.equal(fixed.scheme, '8da8w (per channel)');
    // 8-bit weights instead of 4-bit (int8 per-token activations on both sides): the layer's quantization error
    // drops by far more than run-to-run noise (about 6 dB a bit; measured +15 dB and more)
    assert.ok(ownSqnr(fixed) > ownSqnr(worst) + 10, JSON.stringify(points));
    assert.equal(panel.title, 'Before / After: tinylm.qat.yaml');
    assert.ok(panel.webview.html.includes(`<tr><th scope="row">${worst.module}</th>`), 'no row for the fixed layer');
  });
});
