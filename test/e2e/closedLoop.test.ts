// The closed loop in code-server on a copy of examples/cifar with the real kernel: compare, Apply Fix, undo,
// retrain + compare again, Before / After (test/ext/closedLoop.test.ts). The FP32 MobileNetV2 the example
// pre-trains on first use is trained once per machine, cached under the set-up cache keyed by model.py and
// data.py, and copied into the workspace's out/, so the test times QAT and the comparisons, not pre-training.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { exampleWorkspace } from '../support/codeServer';
import { runExtensionSuite } from '../support/extHost';
import { cacheDir, repoRoot, venvPython } from '../support/paths';

const EXAMPLE = path.join(repoRoot, 'examples', 'cifar');
const FP32 = 'mobilenetv2.fp32.pt';

function cachedFp32(): string {
  const hash = createHash('sha256');
  for (const f of ['model.py', 'data.py']) hash.update(readFileSync(path.join(EXAMPLE, f)));
  const file = path.join(cacheDir, 'examples', `cifar-${hash.digest('hex').slice(0, 12)}`, FP32);
  if (existsSync(file)) return file;
  const work = mkdtempSync(path.join(tmpdir(), 'qat-cifar-fp32-'));
  cpSync(EXAMPLE, work, { recursive: true, filter: (src) => !/__pycache__|[/\\]out$/.test(src) });
  execFileSync(venvPython, ['model.py', 'mobilenetv2'], { cwd: work, stdio: 'inherit' });
  mkdirSync(path.dirname(file), { recursive: true });
  copyFileSync(path.join(work, 'out', FP32), `${file}.tmp`);
  renameSync(`${file}.tmp`, file);
  return file;
}

test(
  'closed loop on examples/cifar in code-server: broken layers, Apply Fix, undo, retrain, accuracy back',
  { timeout: 3_600_000 },
  async (t) => {
    const fp32 = cachedFp32();
    const workspace = exampleWorkspace({}, 'cifar');
    mkdirSync(path.join(workspace, 'out'));
    copyFileSync(fp32, path.join(workspace, 'out', FP32));
    const { code, tests, lines } = await runExtensionSuite(workspace, 'closedLoopIndex.js', 2_400_000);
    const points = lines.find((l) => l.includes('CLOSED-LOOP '));
    if (points) t.diagnostic(points.slice(points.indexOf('CLOSED-LOOP ')));
    assert.equal(tests.length, 3, `expected the 3 closed-loop tests, got ${tests.map((r) => r.title).join('; ')}`);
    for (const r of tests) await t.test(r.title, () => assert.equal(r.state, 'passed', r.error));
    assert.equal(code, 0);
  },
);
