// The closed loop in code-server on a copy of examples/cifar with the real kernel: compare, Apply Fix, undo,
// retrain + compare again, Before / After (test/ext/closedLoop.test.ts), with the editor saving by itself as
// code-server does by default (files.autoSave afterDelay). The FP32 MobileNetV2 the example
// pre-trains on first use comes from test/support/cifarExample.ts' per-machine cache, so the test times QAT
// and the comparisons, not pre-training.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { seedCifarFp32 } from '../support/cifarExample';
import { exampleWorkspace } from '../support/codeServer';
import { runExtensionSuite } from '../support/extHost';

test(
  'closed loop on examples/cifar in code-server: broken layers, Apply Fix, undo, retrain, accuracy back',
  { timeout: 3_600_000 },
  async (t) => {
    const workspace = exampleWorkspace({}, 'cifar');
    seedCifarFp32(workspace);
    const { code, tests, lines } = await runExtensionSuite(workspace, 'closedLoopIndex.js', 2_400_000, {
      'files.autoSave': 'afterDelay',
      'files.autoSaveDelay': 1000,
    });
    const points = lines.find((l) => l.includes('CLOSED-LOOP '));
    if (points) t.diagnostic(points.slice(points.indexOf('CLOSED-LOOP ')));
    assert.equal(tests.length, 4, `expected the 4 closed-loop tests, got ${tests.map((r) => r.title).join('; ')}`);
    for (const r of tests) await t.test(r.title, () => assert.equal(r.state, 'passed', r.error));
    assert.equal(code, 0);
  },
);
