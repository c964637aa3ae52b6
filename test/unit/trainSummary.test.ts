// The train task's drift summary on a real qat/train result (the protocol fixture): the layers whose
// observer scale moved most, in order, with first and last values.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { driftLines } from '../../client/tasks/drift';
import type { QatTrainResult } from '../../protocol/kernel';
import { repoRoot } from '../support/paths';

const train = JSON.parse(
  readFileSync(path.join(repoRoot, 'protocol', 'fixtures', 'rpc', 'QatTrainResult.json'), 'utf8'),
) as QatTrainResult;

test('drift summary lists the layers whose scale moved most, largest first', () => {
  const drift = train.drift!;
  const lines = driftLines(drift);
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

test('no drift, no lines', () => {
  assert.deepEqual(driftLines(undefined), []);
});
