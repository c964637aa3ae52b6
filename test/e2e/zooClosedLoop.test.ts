// The closed loop on a public transformer in code-server: the zoo's timm ViT (random weights, 32x32 inputs) as a
// user's workspace, its weights set to 4-bit per tensor, the kernel in the zoo environment (torch 2.14.1 with timm;
// qatStudio.pythonPath) as a user's own interpreter would be. test/ext/zooClosedLoop.test.ts drives compare, Apply
// Fix, retrain, compare again and Before / After.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { runExtensionSuite } from '../support/extHost';
import { repoRoot, zooPython } from '../support/paths';

const PER_TENSOR_4BIT =
  '  weight: {observer: MovingAverageMinMaxObserver, dtype: qint8, qscheme: per_tensor_symmetric, quant_min: -7, quant_max: 7}\n';

function zooWorkspace(model: string): string {
  const ws = mkdtempSync(path.join(tmpdir(), 'qat-zoo-'));
  const config = execFileSync(
    zooPython,
    [
      '-c',
      'import sys, pathlib; from benchmarks.zoo_models import write_workspace as w; print(w(*sys.argv[1:2], pathlib.Path(sys.argv[2])))',
      model,
      ws,
    ],
    { cwd: path.join(repoRoot, 'python-helpers'), encoding: 'utf8' },
  ).trim();
  const text = readFileSync(config, 'utf8');
  const weight = /^ {2}weight: \{[^}]*\}\n/m;
  assert.match(text, weight, 'the zoo config has no weight qconfig to replace');
  writeFileSync(config, text.replace(weight, PER_TENSOR_4BIT));
  return ws;
}

test(
  'closed loop on a timm ViT in code-server: compare, Apply Fix, retrain, Before / After',
  { timeout: 2_400_000 },
  async (t) => {
    const { code, tests, lines } = await runExtensionSuite(
      zooWorkspace('vit_tiny_patch16_224'),
      'zooClosedLoopIndex.js',
      1_800_000,
      {
        'qatStudio.pythonPath': zooPython,
      },
    );
    const points = lines.find((l) => l.includes('ZOO-CLOSED-LOOP '));
    if (points) t.diagnostic(points.slice(points.indexOf('ZOO-CLOSED-LOOP ')));
    assert.equal(tests.length, 2, `expected the 2 closed-loop tests, got ${tests.map((r) => r.title).join('; ')}`);
    for (const r of tests) await t.test(r.title, () => assert.equal(r.state, 'passed', r.error));
    assert.equal(code, 0);
  },
);
