// docs/architecture.md's layout block against the tree, as manifest.test.ts holds the README's settings to
// package.json: every path the block names exists, and every top-level folder and every folder under the
// extension's, the language server's, the webview's, the contracts' and the kernel's sources is named.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { layoutBlockOf, layoutMismatches, parseLayoutBlock } from '../support/layoutBlock';
import { repoRoot } from './helpers/builder';

const COVERED = ['client', 'server', 'webview', 'protocol', 'python-helpers/qat_kernel'];
const doc = readFileSync(path.join(repoRoot, 'docs', 'architecture.md'), 'utf8');

test("docs/architecture.md's layout block matches the tree", () => {
  assert.deepEqual(layoutMismatches(layoutBlockOf(doc, 'Layout'), repoRoot, COVERED), []);
});

test('the layout block has one home: CONTRIBUTING.md and the README point to it', () => {
  for (const file of ['CONTRIBUTING.md', 'README.md']) {
    const text = readFileSync(path.join(repoRoot, file), 'utf8');
    assert.match(text, /docs\/architecture\.md/, `${file} does not point to docs/architecture.md`);
    assert.doesNotMatch(text, /^python-helpers\/ {2,}/m, `${file} carries a layout block of its own`);
  }
});

test('entries nest by indentation; deeper lines continue a description', () => {
  const block = [
    'a/              the a folder',
    '  b/            under a',
    '                b continues here',
    '    c.ts        a file',
    '  *.py          a pattern',
    'd/e/            two levels on one line',
    'f.json          a file at the top',
  ].join('\n');
  assert.deepEqual(parseLayoutBlock(block), ['a/', 'a/b/', 'a/b/c.ts', 'a/*.py', 'd/e/', 'f.json']);
});

test('the check reports a planted mismatch: a named path that is gone, a folder that is not named', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'layout-'));
  try {
    for (const dir of ['client/commands', 'client/views', 'server/rules/yaml', 'docs'])
      mkdirSync(path.join(root, dir), { recursive: true });
    writeFileSync(path.join(root, 'client', 'extension.ts'), '');
    writeFileSync(path.join(root, 'server', 'a.py'), '');
    const block = [
      'client/        the host',
      '  commands/    one a command',
      '  extension.ts the entry',
      '  panels/      gone',
      'server/        the server',
      '  rules/       one a file',
      '  *.py         scripts',
      '  *.rs         none such',
      'docs/          this',
    ].join('\n');
    assert.deepEqual(layoutMismatches(block, root, ['client', 'server']).sort(), [
      'in the tree but not named: client/views/',
      'in the tree but not named: server/rules/yaml/',
      'named but not in the tree: client/panels/',
      'named but not in the tree: server/*.rs',
    ]);
    // A top-level folder nobody named is reported even when it is not one of the covered ones.
    mkdirSync(path.join(root, 'media'));
    assert.ok(layoutMismatches(block, root, []).includes('in the tree but not named: media/'));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
