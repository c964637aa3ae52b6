// A fix run holds the state before the fix (the config text, the compare run it was suggested from and that run's
// model), kept in out/qat-runs.json; Before / After reads its "before" from there, whatever the config file holds
// now (an editor's auto-save writes the fix before the loop runs).
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { beforeColumnRuns, comparisonOf, fixProblem } from '../../client/fix/fixRecord';
import { compareRunsHtml } from '../../client/runs/present';
import { RunStore, type RunRecord } from '../../client/runs/runStore';

const CONFIG = '/w/m.qat.yaml';
const BROKEN = 'qconfig: {weight: {qscheme: per_tensor_symmetric}}\n';
const FIXED = `${BROKEN}overrides:\n  - {match: 'conv', weight: {qscheme: per_channel_symmetric}}\n`;

async function history() {
  const store = RunStore.forWorkspace(mkdtempSync(path.join(tmpdir(), 'qat-fix-')));
  await store.load();
  let compare!: RunRecord;
  await store.track(
    'compare',
    CONFIG,
    async () => ({ int8: 0.0963, model: 'k1-1' }),
    (r) => ({ figures: [['INT8', `${(r.int8 * 100).toFixed(2)} %`]], model: r.model }),
    { holds: { configText: BROKEN }, onRecord: (r) => (compare = r) },
  );
  let fix!: RunRecord;
  await store.track(
    'fix',
    CONFIG,
    async () => true,
    () => ({ figures: [['fix', 'per-channel weights']] }),
    {
      detail: 'per-channel weights for conv',
      holds: { configText: BROKEN, model: compare.model, basedOn: compare.id },
      onRecord: (r) => (fix = r),
    },
  );
  return { store, compare, fix };
}

test('a fix run keeps the config text, the comparison and the model before it, across a reload', async () => {
  const { store, compare, fix } = await history();
  assert.equal(compare.model, 'k1-1', 'the model its result named');
  const again = new RunStore(store.file);
  await again.load();
  const kept = again.get(fix.id)!;
  assert.deepEqual(
    { kind: kept.kind, configText: kept.configText, model: kept.model, basedOn: kept.basedOn },
    { kind: 'fix', configText: BROKEN, model: 'k1-1', basedOn: compare.id },
  );
  assert.equal(comparisonOf(again.get(kept.basedOn!), CONFIG, kept.configText!)?.id, compare.id);
});

test('Before / After reads the comparison before the fix, even when the file already holds the fix', async () => {
  const { store, compare, fix } = await history();
  // Auto-save wrote the fix; a later comparison of the fixed config and an evaluation of another model exist.
  await store.track(
    'compare',
    CONFIG,
    async () => 0,
    () => ({ figures: [['INT8', '52.59 %']], model: 'k1-2' }),
    { holds: { configText: FIXED } },
  );
  assert.equal(fixProblem(fix, store.get(fix.basedOn!), FIXED), undefined);
  let other!: RunRecord;
  await store.track(
    'evaluate',
    CONFIG,
    async () => 0,
    () => ({ figures: [['INT8', '52.59 %']], model: 'k1-2' }),
    {
      onRecord: (r) => (other = r),
    },
  );
  let same!: RunRecord;
  await store.track(
    'evaluate',
    CONFIG,
    async () => 0,
    () => ({ figures: [['fake-quant', '10.00 %']] }),
    {
      holds: { model: 'k1-1' },
      onRecord: (r) => (same = r),
    },
  );
  // A measurement of another model never joins the before column; one of the same model does.
  assert.deepEqual(
    beforeColumnRuns(compare, other).map((r) => r.id),
    [compare.id],
  );
  assert.deepEqual(
    beforeColumnRuns(compare, same).map((r) => r.id),
    [compare.id, same.id],
  );
  const html = compareRunsHtml(
    [
      { title: 'before fix', runs: beforeColumnRuns(compare, other) },
      { title: 'after fix', runs: [other] },
    ],
    'csp',
  );
  assert.ok(html.includes('<th scope="row">INT8</th><td>9.63 %</td><td>52.59 %</td>'), html);
});

test('Before / After says why it cannot run: no comparison before the fix, or the fix undone', async () => {
  const { store, fix } = await history();
  assert.match(fixProblem(fix, undefined, FIXED)!, /needs the comparison of m\.qat\.yaml before the fix/);
  assert.match(fixProblem(fix, store.get(fix.basedOn!), BROKEN)!, /no longer in m\.qat\.yaml \(undone\?\)/);
  // A comparison of other text is not the state before this fix.
  const other = { ...store.get(fix.basedOn!)!, configText: FIXED };
  assert.match(fixProblem(fix, other, FIXED)!, /needs the comparison/);
});
