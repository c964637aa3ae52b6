// Runs the extension-host suite (test/ext) inside code-server, a real VS Code, through the smoke-test driver.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { exampleWorkspace } from '../support/codeServer';
import { runExtensionSuite } from '../support/extHost';
import { BAD_RANGE_YAML, BROKEN_MODEL_PY, BROKEN_YAML, DDP_YAML } from './workspaceFiles';

test('extension-host tests in code-server', { timeout: 660_000 }, async (t) => {
  const workspace = exampleWorkspace({
    'bad-range.qat.yaml': BAD_RANGE_YAML,
    'broken.qat.yaml': BROKEN_YAML,
    'broken_model.py': BROKEN_MODEL_PY,
    'ddp.qat.yaml': DDP_YAML,
  });
  const { code, tests } = await runExtensionSuite(workspace, 'index.js', 540_000);
  assert.ok(tests.length >= 4, `expected the whole suite, got ${tests.length} tests`);
  for (const r of tests) {
    await t.test(r.title, () => assert.equal(r.state, 'passed', r.error));
  }
  assert.equal(code, 0);
});
