import assert from 'node:assert/strict';
import { test } from 'node:test';
import { findingHover } from '../../server/services/findingHover';
import { PT2E_RECIPE } from '../../server/rules/python/eagerMigration';
import { applyFix, pyCodes, pyDoc, spanOf } from './helpers/builder';

test('QAT004: one information hint per file, on the first eager/FX QAT call', () => {
  const src =
    'import torch.ao.quantization as tq\nfrom torch.ao.quantization.quantize_fx import prepare_qat_fx\nm = tq.prepare_qat(m)\nn = prepare_qat_fx(n, mapping, ex)\n';
  const hits = pyCodes(src, 'QAT004');
  assert.equal(hits.length, 1);
  assert.equal(hits[0].severity, 'information');
  assert.equal(spanOf(src, hits[0]), 'tq.prepare_qat');
  assert.match(hits[0].message, /PT2E/);
});

test('QAT004: the message is one short sentence; the recipe is in the hover and in a quick fix', () => {
  const src = 'import torch.ao.quantization as tq\n\n\ndef run(m):\n    m = tq.prepare_qat(m)\n    return m\n';
  const [hit] = pyCodes(src, 'QAT004');
  assert.equal(hit.message, 'prepare_qat is eager/FX QAT, deprecated in torch; the maintained flow is torchao PT2E.');
  assert.ok(hit.message.length <= 100 && !/[=(]/.test(hit.message), 'no code in the message');
  // Hover on the call: the message, then the steps as a Python block.
  const doc = pyDoc(src);
  const hover = findingHover(doc, doc.positionAt(src.indexOf('prepare_qat(m)') + 3));
  const text = (hover?.contents as { value: string }).value;
  assert.ok(text.startsWith(`**QAT004** ${hit.message}`), text);
  assert.ok(text.includes(`\`\`\`python\n${PT2E_RECIPE.join('\n')}\n\`\`\``), text);
  assert.equal(findingHover(doc, doc.positionAt(src.indexOf('return'))), null);
  // The quick fix writes the steps as comments above the statement, at its indentation.
  const fixed = applyFix(src, hit);
  const lines = fixed.split('\n');
  const at = lines.indexOf('    m = tq.prepare_qat(m)');
  assert.equal(lines[at - PT2E_RECIPE.length - 1], '    # PT2E QAT (torchao), the maintained replacement:');
  assert.equal(lines[at - 1], `    # ${PT2E_RECIPE.at(-1)}`);
  assert.equal(hit.fixes![0].title, 'Insert the PT2E QAT steps as comments above');
});

test('QAT004 is quiet for PT2E and for unrelated prepare_qat functions', () => {
  assert.deepEqual(
    pyCodes(
      'from torchao.quantization.pt2e.quantize_pt2e import prepare_qat_pt2e\nm = prepare_qat_pt2e(m, q)\n',
      'QAT004',
    ),
    [],
  );
  assert.deepEqual(pyCodes('from mylib import prepare_qat\nm = prepare_qat(m)\n', 'QAT004'), []);
});
