// Runs some of the kernel's pytest tests from a node test (the reliability suite's kernel cases): its exit status,
// output, summary line ("5 passed in 90.2s") and, first in any failure message, what failed: pytest's "E" lines
// and its short summary (a report cut to its beginning still names the assertion).
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { repoRoot, venvPython } from './paths';

export function runKernelPytest(
  args: string[],
  timeoutMs: number,
): { status: number | null; out: string; summary: string; failures: string } {
  const run = spawnSync(venvPython, ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', ...args], {
    cwd: path.join(repoRoot, 'python-helpers'),
    encoding: 'utf8',
    timeout: timeoutMs,
  });
  const out = `${run.stdout}${run.stderr}`;
  const summary =
    out
      .trim()
      .split('\n')
      .reverse()
      .find((l) => /\d+ (passed|failed|error)/.test(l)) ?? '';
  const failures = out
    .split('\n')
    .filter((l) => /^(E {3}|FAILED |ERROR )/.test(l))
    .join('\n');
  return { status: run.status, out, summary, failures };
}
