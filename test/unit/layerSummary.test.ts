// "Compare This Layer": the sentence about one layer of a real compare/layers result (digits).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { findLayer, layerSummary } from '../../client/commands/layerSummary';
import type { CompareLayersResult } from '../../protocol/kernel';
import { repoRoot } from '../support/paths';

const result = JSON.parse(
  readFileSync(path.join(repoRoot, 'test', 'fixtures', 'digits', 'compare-layers.json'), 'utf8'),
) as CompareLayersResult;

test('a layer is summarized with its metrics, both references and its rank', () => {
  const conv2 = findLayer(result, 'conv2')!;
  const text = layerSummary(result, conv2);
  assert.ok(
    text.startsWith(
      `conv2 (conv2d+batch_norm+relu): cosine ${conv2.cosine.toFixed(5)}, SQNR ${conv2.sqnr.toFixed(1)} dB vs FP32`,
    ),
    text,
  );
  assert.ok(text.includes(`local (FP32 input) SQNR ${conv2.local!.sqnr.toFixed(1)} dB`), text);
  assert.ok(text.includes(`vs QAT float ${conv2.vsQatFloat!.sqnr.toFixed(1)} dB`), text);
  const rank = [...result.layers].sort((a, b) => a.cosine - b.cosine).findIndex((l) => l.module === 'conv2') + 1;
  assert.ok(
    text.includes(rank === 1 ? `worst of ${result.layers.length} layers` : `worst of ${result.layers.length}`),
    text,
  );
  assert.equal(text.includes('below the'), conv2.cosine < result.threshold);
});

test('the worst layer says so, and a module inside a layer finds that layer', () => {
  const worst = [...result.layers].sort((a, b) => a.cosine - b.cosine)[0];
  assert.match(layerSummary(result, worst), new RegExp(`worst of ${result.layers.length} layers`));
  assert.equal(findLayer(result, `${worst.module}.weight_fake_quant`), worst);
  assert.equal(findLayer(result, 'no_such_module'), undefined);
});
