// Reliability of everything that parses a user's .onnx file: 5,000 mutated models and the hostile shapes of the
// reliability report through host-side slimming and the view's decode + layout. Counts are printed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HANG_BOUND_MS, describe, runOnnxReliability } from './onnxRun';

test('5,000 mutated ONNX files and the hostile shapes return or fail cleanly within the hang bound, each shape as it must', async () => {
  const stats = await runOnnxReliability(5_000);
  console.log(`# onnx reliability: ${describe(stats)}`);
  assert.deepEqual(stats.crashes, [], stats.crashes.join('\n'));
  assert.deepEqual(stats.hangs, [], stats.hangs.join('\n'));
  assert.deepEqual(stats.unexpected, [], stats.unexpected.join('\n'));
  assert.ok(stats.maxMs < HANG_BOUND_MS, `max latency ${stats.maxMs} ms`);
  assert.ok(stats.failedCleanly > 500, `only ${stats.failedCleanly} inputs failed: the mutations are not mutating`);
  assert.ok(stats.opened > 500, `only ${stats.opened} inputs opened: the mutations break everything`);
});
