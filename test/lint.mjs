// The house checks, one TAP test each: TypeScript types, ESLint, Prettier, Ruff lint, Ruff format and Pyright on
// the kernel (python-helpers/pyrightconfig.json, resolving its imports in the kernel venv).
//   node test/lint.mjs [--fix]   (npm test runs it as the `lint` suite; `npm run format` = --fix: rewrites what the
//                                 formatters and the linters' autofixes can, then checks)
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cache = process.env.QAT_STUDIO_CACHE ?? path.join(homedir(), '.cache', 'qat-studio');
const ruff = path.join(cache, 'venv', 'bin', 'ruff');
const python = path.join(cache, 'venv', 'bin', 'python');
const bin = (name) => path.join(root, 'node_modules', '.bin', name);

const checks = [
  ['tsc --noEmit', bin('tsc'), ['--noEmit', '-p', '.']],
  ['eslint', bin('eslint'), ['--max-warnings', '0', '.']],
  ['prettier --check', bin('prettier'), ['--check', '--log-level', 'warn', '.']],
  ['ruff check', ruff, ['check', '--quiet', '.']],
  ['ruff format --check', ruff, ['format', '--check', '--quiet', '.']],
  ['pyright python-helpers', bin('pyright'), ['--project', 'python-helpers', '--pythonpath', python]],
];

const fixes = [
  [bin('prettier'), ['--write', '--log-level', 'warn', '.']],
  [bin('eslint'), ['--fix', '.']],
  [ruff, ['check', '--fix', '--quiet', '.']],
  [ruff, ['format', '--quiet', '.']],
];
if (process.argv.includes('--fix')) {
  for (const [cmd, args] of fixes) spawnSync(cmd, args, { cwd: root, stdio: 'inherit' });
}

console.log('TAP version 13');
let pass = 0;
let fail = 0;
checks.forEach(([name, cmd, args], i) => {
  const started = Date.now();
  const run = existsSync(cmd)
    ? spawnSync(cmd, args, { cwd: root, encoding: 'utf8' })
    : { status: 1, stdout: '', stderr: `${cmd} is missing: run npm run setup` };
  const ok = run.status === 0;
  if (ok) pass++;
  else fail++;
  console.log(`${ok ? 'ok' : 'not ok'} ${i + 1} - ${name} (${Date.now() - started} ms)`);
  if (!ok) {
    const text = `${run.stdout ?? ''}${run.stderr ?? ''}${run.error ? String(run.error) : ''}`.trim();
    console.log(
      text
        .split('\n')
        .slice(0, 60)
        .map((l) => `# ${l}`)
        .join('\n'),
    );
  }
});
console.log(`1..${checks.length}\n# pass ${pass}\n# fail ${fail}`);
process.exit(fail ? 1 : 0);
