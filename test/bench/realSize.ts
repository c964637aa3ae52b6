// The real-size workspaces the cost benchmarks run on, and one way to run a python-helpers benchmark module.
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { cifarScratchCopy } from '../support/cifarExample';
import { repoRoot, venvPython } from '../support/paths';

/** Runs `python -m benchmarks.<module> ...args` in python-helpers (the kernel's environment unless `python` names
 * another); returns its JSON lines, parsed. */
export function runBenchModule<T>(module: string, args: string[], timeoutMs = 1_800_000, python = venvPython): T[] {
  const run = spawnSync(python, ['-m', `benchmarks.${module}`, ...args], {
    cwd: path.join(repoRoot, 'python-helpers'),
    encoding: 'utf8',
    timeout: timeoutMs,
    maxBuffer: 64 << 20,
  });
  if (run.status !== 0)
    throw new Error(
      `benchmarks.${module} ${args.join(' ')} failed (${run.status ?? run.signal}):\n${run.stderr.slice(-4000)}`,
    );
  const rows = run.stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as T);
  if (!rows.length) throw new Error(`benchmarks.${module} printed no result:\n${run.stdout.slice(-2000)}`);
  return rows;
}

/** examples/cifar copied without outputs, its FP32 MobileNetV2 pre-trained once per machine and seeded. */
export function cifarWorkspace(): { resnet18: string; mobilenetv2: string } {
  const folder = cifarScratchCopy();
  return {
    resnet18: path.join(folder, 'resnet18.qat.yaml'),
    mobilenetv2: path.join(folder, 'mobilenetv2.qat.yaml'),
  };
}

/** torchvision's ResNet-18 on seeded random side x side images (benchmarks/build_bench.py's workspace). */
export function resnet18Workspace(side: number): string {
  const folder = mkdtempSync(path.join(tmpdir(), `qat-resnet18-${side}-`));
  const run = spawnSync(venvPython, ['-m', 'benchmarks.workspace', 'resnet18', folder, String(side)], {
    cwd: path.join(repoRoot, 'python-helpers'),
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`benchmarks.workspace resnet18 failed:\n${run.stderr.slice(-2000)}`);
  return path.join(folder, 'resnet18.qat.yaml');
}

export const mb = (v: number) => `${Math.round(v)} MB`;
