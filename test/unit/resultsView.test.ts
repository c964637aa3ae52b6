// What the results view says about a comparison, decided without a browser: the model's accuracy verdict (INT8 at
// or above FP32 is fine, whatever the layers' cosines) and layer names cut where they do not differ.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { CompareLayersResult } from '../../protocol/kernel';
import { standardError, summarizeAccuracy } from '../../webview/view/accuracy';
import { distinguishingTails, middleEllipsis } from '../../webview/graph/metrics';
import { subLabel } from '../../webview/graph/nodeLook';
import { repoRoot } from '../support/paths';

const fixtures = path.join(repoRoot, 'test', 'fixtures', 'digits');
const digits = JSON.parse(readFileSync(path.join(fixtures, 'compare-layers.json'), 'utf8')) as CompareLayersResult;

test('INT8 above FP32 reads as fine even with layers under the cosine threshold; a real loss reads as one', () => {
  // The digits example: INT8 97.78 % beats FP32 96.85 %, two layers a hair under 0.99.
  const fine = summarizeAccuracy(digits.accuracy, digits.layers, digits.threshold);
  assert.equal(fine.verdict, 'fine');
  assert.deepEqual(fine.stages, [
    ['FP32', '96.85 %'],
    ['INT8', '97.78 %'],
  ]);
  assert.equal(fine.samples, 540);
  assert.match(fine.text, /^INT8 is at or above FP32 \(\+0\.93 pts\): quantization costs no accuracy here\./);
  assert.match(fine.text, /2 of 4 layers have a cosine below the 0\.99 threshold/);
  assert.doesNotMatch(fine.text, /broken|bad|fail/i);
  // Within two standard errors of FP32 on these samples: noise, not a loss.
  const se = standardError(0.9, 540);
  assert.ok(Math.abs(se - 0.0129) < 1e-3, String(se));
  assert.equal(summarizeAccuracy({ fp32: 0.9, int8: 0.89, samples: 540 }, digits.layers, 0.99).verdict, 'noise');
  const loss = summarizeAccuracy({ fp32: 0.8537, int8: 0.0963, samples: 540 }, digits.layers, 0.99);
  assert.equal(loss.verdict, 'loss');
  assert.match(loss.text, /^INT8 loses 75\.74 pts against FP32\./);
  // Every stage the run measured, in pipeline order.
  assert.deepEqual(
    summarizeAccuracy({ fp32: 0.85, qatFloat: 0.8, fakeQuant: 0.75, int8: 0.76, samples: 540 }, [], 0.99).stages.map(
      ([k]) => k,
    ),
    ['FP32', 'QAT float', 'fake-quant', 'INT8'],
  );
  // Without accuracies (an .onnx opened with an overlay) only the layers are described.
  assert.equal(summarizeAccuracy({ samples: 0 }, digits.layers, 0.99).verdict, undefined);
});

test('a layer name keeps its distinguishing tail: cut in the middle, never where names differ', () => {
  const names = ['features.16.conv.3', 'features.17.conv.3', 'features.17.conv.6', 'classifier', 'conv.3'];
  const tails = distinguishingTails(names);
  assert.equal(tails.get('features.16.conv.3'), '16.conv.3');
  assert.equal(tails.get('features.17.conv.3'), '17.conv.3');
  assert.equal(tails.get('features.17.conv.6'), '6');
  assert.equal(tails.get('classifier'), 'classifier');
  // A name that is the tail of another keeps all of itself.
  assert.equal(tails.get('conv.3'), 'conv.3');
  assert.equal(middleEllipsis('features.17.conv.6', 12), 'fe…17.conv.6');
  assert.equal(middleEllipsis('features.17.conv.6', 8), 'fe…onv.6', 'no part boundary fits: a plain cut');
  assert.equal(middleEllipsis('features.17.conv.6', 40), 'features.17.conv.6');
  // In a node box: the module beside its cosine where both fit, else the cosine alone (never a cut name).
  const layer = { ...digits.layers[0], module: 'features.17.conv.6', cosine: 0.98765 };
  const node = { id: 'n', name: 'n', op: 'Conv', inputs: [], outputs: [], kind: 'op' as const, module: layer.module };
  assert.equal(subLabel(node, layer, 146), 'cos 0.9877');
  assert.equal(subLabel(node, layer, 200), 'features.17.conv.6  cos 0.9877');
  assert.equal(subLabel(node, layer, 170), 'features.17.conv.6 0.9877');
  assert.equal(subLabel({ ...node, module: 'fc2' }, { ...layer, module: 'fc2' }, 146), 'fc2  cos 0.9877');
});
