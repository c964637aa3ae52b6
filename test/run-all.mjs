// Runs every suite (lint, unit, protocol, reliability, claims, python, zoo, browser, e2e), prints each one's counts and a closing total.
// In CI (CI=true) a skipped test, an empty suite or a failing one fails the run.
//   node test/run-all.mjs [suite ...]
import { spawn } from 'node:child_process';
import { homedir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cache = process.env.QAT_STUDIO_CACHE ?? path.join(homedir(), '.cache', 'qat-studio');
const python = path.join(cache, 'venv', 'bin', 'python');
const zooPython = path.join(cache, 'venv-zoo', 'bin', 'python');
const nodeTest = (dir, extra = []) => ({
  cmd: process.execPath,
  args: ['--test', '--test-reporter=tap', ...extra, `out/test/${dir}/`],
  parse: parseTap,
});

const suites = {
  lint: { cmd: process.execPath, args: [path.join(root, 'test', 'lint.mjs')], parse: parseTap },
  unit: nodeTest('unit'),
  protocol: nodeTest('protocol'),
  // Mutated and hostile inputs against the real components: each must return or fail cleanly, in bounds.
  reliability: nodeTest('reliability'),
  // Each language-server rule's claim, run on the pinned torch / torchao / TVM (no kernel involved).
  claims: {
    cmd: python,
    args: ['-m', 'pytest', '-q', 'test/rule-claims'],
    parse: parsePytest,
  },
  // The kernel's user-code and kill cases (tests/test_kernel_reliability.py) and its hostile-workspace cases
  // (marked hostile_workspace) run in the reliability suite.
  python: {
    cmd: python,
    args: [
      '-m',
      'pytest',
      '-q',
      '-p',
      'no:cacheprovider',
      '--ignore=tests/test_kernel_reliability.py',
      '-m',
      'not hostile_workspace',
    ],
    cwd: path.join(root, 'python-helpers'),
    parse: parsePytest,
  },
  // Public architectures (timm, torchvision, transformers; random weights) through every kernel stage, in the zoo
  // environment: torch 2.14.1 with torchvision, beside the kernel's own pinned 2.13.0.
  zoo: {
    cmd: zooPython,
    args: ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', '-c', 'test/zoo/pytest.ini', 'test/zoo'],
    parse: parsePytest,
  },
  browser: nodeTest('browser'),
  e2e: nodeTest('e2e', ['--test-concurrency=1']),
};

function parseTap(out) {
  const n = (k) => Number(out.match(new RegExp(`^# ${k} (\\d+)$`, 'm'))?.[1] ?? 0);
  return { passed: n('pass'), failed: n('fail') + n('cancelled'), skipped: n('skipped') + n('todo') };
}

function parsePytest(out) {
  const last =
    out
      .trim()
      .split('\n')
      .reverse()
      .find((l) => /\d+ (passed|failed|error|skipped|deselected)/.test(l)) ?? '';
  const n = (k) => Number(last.match(new RegExp(`(\\d+) ${k}`))?.[1] ?? 0);
  return {
    passed: n('passed'),
    failed: n('failed') + n('errors?'),
    // Deselected tests are left out on purpose (the python suite's hostile_workspace tests run in the reliability
    // suite): not skipped.
    skipped: n('skipped') + n('xfailed'),
  };
}

function run(name, suite) {
  return new Promise((resolve) => {
    const started = Date.now();
    console.log(`\n=== ${name} ===`);
    const child = spawn(suite.cmd, suite.args, {
      cwd: suite.cwd ?? root,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: process.env,
    });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      process.stdout.write(d);
    });
    child.stderr.on('data', (d) => process.stderr.write(d));
    child.on('close', (code) => resolve({ name, code, seconds: (Date.now() - started) / 1000, ...suite.parse(out) }));
    child.on('error', (err) =>
      resolve({ name, code: 1, seconds: 0, passed: 0, failed: 1, skipped: 0, error: err.message }),
    );
  });
}

const selected = process.argv.slice(2).length ? process.argv.slice(2) : Object.keys(suites);
const results = [];
for (const name of selected) {
  if (!suites[name]) {
    console.error(`unknown suite ${name}; known: ${Object.keys(suites).join(', ')}`);
    process.exit(2);
  }
  results.push(await run(name, suites[name]));
}

console.log('\n=== summary ===');
let ok = true;
for (const r of results) {
  const problems = [];
  if (r.code !== 0) problems.push(`exit ${r.code}`);
  if (r.passed + r.failed === 0) problems.push('ran no test');
  if (process.env.CI && r.skipped > 0) problems.push('skipped tests are failures in CI');
  // A suite that broke without a failing test (crash, no tests, skips in CI) still counts as one failure.
  r.failed += problems.length && !r.failed ? 1 : 0;
  if (problems.length || r.failed) ok = false;
  console.log(
    `${r.name.padEnd(9)} ${r.passed} passed, ${r.failed} failed, ${r.skipped} skipped  (${r.seconds.toFixed(1)} s)${problems.length ? '  <- ' + problems.join(', ') : ''}`,
  );
}
const total = (k) => results.reduce((n, r) => n + r[k], 0);
console.log(`total: ${total('passed')} passed, ${total('failed')} failed, ${total('skipped')} skipped`);
process.exit(ok ? 0 : 1);
