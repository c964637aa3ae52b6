// The Marketplace side of package.json: the icon is a 128×128 PNG that goes into the .vsix, keywords and
// categories are ones the Marketplace accepts, the extension runs on the workspace side, and every setting
// and command it contributes is documented in the README.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { test } from 'node:test';
import { manifestFiles, missingFromPackage } from '../support/packagedFiles';
import { repoRoot } from './helpers/builder';

const manifest = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as {
  icon: string;
  keywords: string[];
  categories: string[];
  extensionKind: string[];
  contributes: {
    configuration: { properties: Record<string, unknown> };
    commands: { command: string; title: string; category?: string }[];
    menus: { commandPalette?: { command: string; when?: string }[] };
  };
};
const vscodeignore = readFileSync(path.join(repoRoot, '.vscodeignore'), 'utf8').split('\n');

// The Marketplace's categories (vsce rejects others).
const CATEGORIES = new Set([
  'Azure', 'Data Science', 'Debuggers', 'Education', 'Extension Packs', 'Formatters', 'Keymaps',
  'Language Packs', 'Linters', 'Machine Learning', 'Notebooks', 'Other', 'Programming Languages',
  'SCM Providers', 'Snippets', 'Testing', 'Themes', 'Visualization', 'AI', 'Chat',
]); // prettier-ignore

test('the icon is a 128×128 PNG and is packaged', () => {
  const png = readFileSync(path.join(repoRoot, manifest.icon));
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'not a PNG');
  assert.equal(png.toString('latin1', 12, 16), 'IHDR');
  assert.deepEqual([png.readUInt32BE(16), png.readUInt32BE(20)], [128, 128]);
  assert.ok(vscodeignore.includes(`!${manifest.icon}`), `.vscodeignore leaves out ${manifest.icon}`);
});

test('keywords and categories are ones the Marketplace takes; the extension runs where the workspace is', () => {
  assert.ok(manifest.keywords.length > 0 && manifest.keywords.length <= 30, 'the Marketplace takes up to 30 keywords');
  assert.equal(new Set(manifest.keywords).size, manifest.keywords.length, 'a keyword is repeated');
  for (const c of manifest.categories) assert.ok(CATEGORIES.has(c), `not a Marketplace category: ${c}`);
  assert.deepEqual(manifest.extensionKind, ['workspace']);
});

test('the changelog exists and is packaged', () => {
  assert.ok(existsSync(path.join(repoRoot, 'CHANGELOG.md')));
  assert.match(readFileSync(path.join(repoRoot, 'CHANGELOG.md'), 'utf8'), /^# Changelog\n[\s\S]*## \[Unreleased\]/);
  assert.ok(vscodeignore.includes('!CHANGELOG.md'));
});

test("every setting is in the README's settings table with its default", () => {
  const readme = readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
  const table = readme.split('## Settings\n')[1]?.split('\n## ')[0] ?? '';
  const props = manifest.contributes.configuration.properties as Record<string, { default: unknown }>;
  assert.ok(Object.keys(props).length > 0);
  for (const [name, p] of Object.entries(props)) {
    const row = table.split('\n').find((l) => l.startsWith(`| \`${name}\` |`));
    assert.ok(row, `${name} is not in the README's settings table`);
    assert.ok(row.includes(`\`${JSON.stringify(p.default)}\``), `${name}: the README gives another default`);
  }
});

test("every command in the palette is in the README's commands table", () => {
  const readme = readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
  const table = readme.split('## Commands\n')[1]?.split('\n## ')[0] ?? '';
  const rows = table.split('\n').filter((l) => l.startsWith('| QAT: '));
  const listed = new Set(rows.map((l) => l.split(' | ')[0].slice('| QAT: '.length)));
  const hidden = new Set(
    (manifest.contributes.menus.commandPalette ?? []).filter((m) => m.when === 'false').map((m) => m.command),
  );
  const shown = manifest.contributes.commands.filter((c) => !hidden.has(c.command));
  assert.ok(shown.length > 0);
  for (const c of shown) assert.ok(listed.has(c.title), `${c.category}: ${c.title} is not in the README's commands`);
});

test('the .vsix holds every file the manifest names and the code opens at run time', async () => {
  // vsce's own file list: what `vsce package` puts into the .vsix, by .vscodeignore.
  const load = createRequire(__filename);
  const { listFiles } = load('@vscode/vsce') as {
    listFiles(o: { cwd: string; packageManager: 'none' }): Promise<string[]>;
  };
  const listed = new Set(await listFiles({ cwd: repoRoot, packageManager: 'none' }));
  const needed = manifestFiles(repoRoot);
  for (const file of ['media/activitybar.svg', 'media/walkthrough/kernel.md', 'protocol/qat-config.schema.json'])
    assert.ok(needed.has(file), `the manifest walk missed ${file}`);
  assert.deepEqual(missingFromPackage(repoRoot, listed), []);
});

test('the packaged-files check fails on a file .vscodeignore leaves out', () => {
  const all = [...manifestFiles(repoRoot).keys()];
  const missing = missingFromPackage(repoRoot, new Set(all.filter((f) => f !== 'media/activitybar.svg')));
  assert.ok(
    missing.some((m) => m.startsWith('media/activitybar.svg (contributes.viewsContainers')),
    missing.join('\n'),
  );
});
