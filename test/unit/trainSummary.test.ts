// The train task's summary, rendered by the kernel (jobs/reports/analysis.py) on a real qat/train result (the
// protocol fixture): the task prints these lines as they are; the drift lines name the layers whose observer
// scale moved most, in order, with first and last values.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { summaryOf } from '../../client/tasks/jobs';
import type { QatTrainResult } from '../../protocol/kernel';
import { repoRoot } from '../support/paths';

const train = JSON.parse(
  readFileSync(path.join(repoRoot, 'protocol', 'fixtures', 'rpc', 'QatTrainResult.json'), 'utf8'),
) as QatTrainResult;

test('drift summary lists the layers whose scale moved most, largest first', () => {
  const drift = train.drift!;
  const all = summaryOf(train);
  const at = all.findIndex((l) => l.startsWith('observer drift'));
  const lines = all.slice(at, at + 4);
  assert.equal(lines[0], `observer drift over steps 1-${drift.steps.at(-1)} (mean scale, first -> last), largest:`);
  assert.equal(lines.length, 4);
  const rel = (l: (typeof drift.layers)[number]) => Math.abs(l.scaleMean.at(-1)! / l.scaleMean[0] - 1);
  const largest = [...drift.layers].sort((a, b) => rel(b) - rel(a))[0];
  assert.match(
    lines[1],
    new RegExp(
      `^  ${largest.module} ${largest.role}\\s+${largest.scaleMean[0].toPrecision(3)} -> ${largest.scaleMean.at(-1)!.toPrecision(3)} \\([+-]\\d+\\.\\d %\\)$`,
    ),
  );
  const shown = lines.slice(1).map((l) => Number(l.match(/\(([+-][\d.]+) %\)/)![1]));
  assert.deepEqual(
    shown.map(Math.abs),
    [...shown.map(Math.abs)].sort((a, b) => b - a),
  );
  assert.ok(Math.abs(shown[0]) > 0, 'some observer moved during QAT');
});

test('no drift, no drift lines', () => {
  const { drift: _drift, ...rest } = train;
  void _drift;
  // The kernel leaves the drift lines out where the result has no drift; the task prints what it gets.
  assert.ok(summaryOf({ ...rest, summary: ['flow'] }).every((l) => !l.startsWith('observer drift')));
});
