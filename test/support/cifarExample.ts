// examples/cifar's FP32 MobileNetV2, pre-trained once per machine: the example pre-trains it on first use
// (minutes on 2 cores), so the e2e test and the benchmarks copy this cached checkpoint into their workspace's
// out/ and time QAT and the analyses, not pre-training. Keyed by model.py and data.py, which decide the weights.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { cacheDir, repoRoot, venvPython } from './paths';

export const cifarExample = path.join(repoRoot, 'examples', 'cifar');
export const cifarFp32Name = 'mobilenetv2.fp32.pt';

const outside = (src: string) => !/__pycache__|[/\\]out$/.test(src);

/** The cached checkpoint's path, training it first (in a scratch copy of the example) when it is missing. */
export function cachedCifarFp32(): string {
  const hash = createHash('sha256');
  for (const f of ['model.py', 'data.py']) hash.update(readFileSync(path.join(cifarExample, f)));
  const file = path.join(cacheDir, 'examples', `cifar-${hash.digest('hex').slice(0, 12)}`, cifarFp32Name);
  if (existsSync(file)) return file;
  const work = mkdtempSync(path.join(tmpdir(), 'qat-cifar-fp32-'));
  try {
    cpSync(cifarExample, work, { recursive: true, filter: outside });
    execFileSync(venvPython, ['model.py', 'mobilenetv2'], { cwd: work, stdio: 'inherit' });
    mkdirSync(path.dirname(file), { recursive: true });
    copyFileSync(path.join(work, 'out', cifarFp32Name), `${file}.tmp`);
    renameSync(`${file}.tmp`, file);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return file;
}

/** Puts the cached FP32 MobileNetV2 into `workspace`/out (a copy of examples/cifar). */
export function seedCifarFp32(workspace: string): void {
  mkdirSync(path.join(workspace, 'out'), { recursive: true });
  copyFileSync(cachedCifarFp32(), path.join(workspace, 'out', cifarFp32Name));
}

/** A fresh copy of examples/cifar without its outputs, under the system's temp folder, FP32 MobileNetV2 seeded. */
export function cifarScratchCopy(): string {
  const work = mkdtempSync(path.join(tmpdir(), 'qat-cifar-'));
  cpSync(cifarExample, work, { recursive: true, filter: outside });
  seedCifarFp32(work);
  return work;
}
