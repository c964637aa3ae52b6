// Builds the language server of another git revision (QAT_BENCH_LSP_BASELINE=<ref>) into a temporary folder,
// so a benchmark can time it on the same inputs in the same run and print ratios instead of absolute times.
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from '../support/paths';

export function buildBaselineServer(ref: string): { server: string; commit: string } {
  const commit = execFileSync('git', ['rev-parse', '--short', ref], { cwd: repoRoot, encoding: 'utf8' }).trim();
  const dir = mkdtempSync(path.join(os.tmpdir(), `qat-baseline-${commit}-`));
  // the revision's server and the protocol files it imports; packages come from this checkout
  const archive = execFileSync('git', ['archive', commit, 'server', 'protocol'], { cwd: repoRoot, maxBuffer: 1 << 28 });
  execFileSync('tar', ['-x', '-C', dir], { input: archive });
  const server = path.join(dir, 'server.js');
  // the esbuild CLI (the JS API cannot run from inside a bundle)
  execFileSync(
    path.join(repoRoot, 'node_modules', '.bin', 'esbuild'),
    [
      path.join(dir, 'server', 'server.ts'),
      '--bundle',
      '--platform=node',
      '--format=cjs',
      '--target=es2022',
      `--outfile=${server}`,
      '--log-level=warning',
    ],
    { cwd: dir, env: { ...process.env, NODE_PATH: path.join(repoRoot, 'node_modules') }, stdio: 'inherit' },
  );
  return { server, commit };
}
