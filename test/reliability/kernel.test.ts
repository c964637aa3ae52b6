// The real kernel process under hostile input and faults. Malformed frames (the named ones and seeded
// mutations) against one kernel: each gets an error or is dropped, and kernel/info answers after it (the
// answer bound is a hang bound, not a speed goal). The user-code and kill cases (cancel of a function that
// never yields, SIGKILL during training and during a checkpoint write) live with the kernel's pytest suite in
// python-helpers/tests/test_kernel_reliability.py; this suite runs that file.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NAMED_FRAMES, runKernelFrames } from '../support/kernelFrames';
import { runKernelPytest } from '../support/kernelPytest';

test('kernel: malformed frames against one kernel process, kernel/info answered after each', async () => {
  const r = await runKernelFrames({ mutated: 200 });
  console.log(
    `kernel frames: ${r.inputs} inputs, ${r.crashes} crashes, ${r.hangs} hangs, ` +
      `max latency ${r.maxLatencyMs.toFixed(0)} ms (${r.slowest}), ` +
      `RSS ${Math.round(r.rssStartKb / 1024)} MB -> ${Math.round(r.rssEndKb / 1024)} MB, ${r.seconds.toFixed(0)} s`,
  );
  assert.deepEqual(r.failures, []);
  assert.equal(r.crashes, 0);
  assert.equal(r.hangs, 0);
  assert.equal(r.inputs, Object.keys(NAMED_FRAMES).length + 200);
  assert.ok(r.inputs >= 200);
  assert.equal(r.exitAfterTruncated, 0, 'a frame cut short by the end of the stream: a clean exit');
  assert.ok(r.rssEndKb > 0 && r.rssStartKb > 0, 'RSS read from /proc');
  assert.ok(r.rssEndKb <= 2 * r.rssStartKb, `RSS grew from ${r.rssStartKb} kB to ${r.rssEndKb} kB`);
});

test('kernel: cancel of user code that never yields, SIGKILL during training and during a checkpoint write', () => {
  const { status, out, summary, failures } = runKernelPytest(['tests/test_kernel_reliability.py'], 1_500_000);
  console.log(`kernel faults (pytest): ${summary || out.slice(-2000)}`);
  assert.equal(status, 0, `${failures}\n${out.slice(-4000)}`);
  assert.match(summary, /^\d+ passed/);
  assert.doesNotMatch(summary, /skipped|failed|error/);
});
