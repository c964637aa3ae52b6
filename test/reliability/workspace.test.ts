// A hostile or odd workspace (test/support/workspaceReliability.ts): each planted case in its own language-server
// process or against the extension host's readers, bounded; the kernel's cases (planted build outputs, paths
// outside the workspace, failed writes) are its pytest tests marked hostile_workspace, run here.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runKernelPytest } from '../support/kernelPytest';
import { TEST_SCALE, WORKSPACE_CASES, describeOutcome, runWorkspaceReliability } from '../support/workspaceReliability';

test('language server and extension host: planted files and huge inputs, no crash, hang or runaway memory', async () => {
  const outcomes = await runWorkspaceReliability(TEST_SCALE);
  for (const o of outcomes) console.log(`# ${describeOutcome(o)}`);
  assert.equal(outcomes.length, WORKSPACE_CASES);
  assert.deepEqual(outcomes.filter((o) => !o.ok).map(describeOutcome), []);
});

test('kernel: planted artifacts, paths outside the workspace and failed writes (pytest -m hostile_workspace)', () => {
  const { status, out, summary, failures } = runKernelPytest(['-m', 'hostile_workspace'], 1_200_000);
  console.log(`# kernel workspace cases (pytest): ${summary || out.slice(-2000)}`);
  assert.equal(status, 0, `${failures}\n${out.slice(-4000)}`);
  assert.match(summary, /^\d+ passed, \d+ deselected/);
  assert.doesNotMatch(summary, /skipped|failed|error/);
});
