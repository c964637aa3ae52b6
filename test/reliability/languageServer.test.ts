// One language-server process, 2,000 mutated configs and 2,000 Python edits over LSP: no crash, every
// request answered within 1 s and every input's diagnostics published (hang bounds, not speed goals), no
// error logged by a rule or service, and memory that does not keep growing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runLanguageServerReliability } from '../support/lspReliability';

test('language server: 2,000 mutated configs and 2,000 Python edits, nothing hangs or crashes', async () => {
  const r = await runLanguageServerReliability({ yaml: 2000, python: 2000 });
  console.log(
    `language server: ${r.inputs} inputs, ${r.crashes} crashes, ${r.hangs} hangs, ` +
      `max request latency ${r.maxLatencyMs.toFixed(0)} ms (${r.slowest}), ` +
      `RSS ${Math.round(r.rssStartKb / 1024)} MB -> ${Math.round(r.rssEndKb / 1024)} MB, ${r.seconds.toFixed(0)} s`,
  );
  assert.deepEqual(r.errors.slice(0, 5), []);
  assert.equal(r.crashes, 0);
  assert.equal(r.hangs, 0);
  assert.equal(r.inputs, 4000);
  assert.ok(r.rssEndKb > 0 && r.rssStartKb > 0, 'RSS read from /proc');
  assert.ok(r.rssEndKb <= 3 * r.rssStartKb, `RSS grew from ${r.rssStartKb} kB to ${r.rssEndKb} kB`);
});
