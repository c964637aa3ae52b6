// The folders' import rules (eslint.config.mjs `layering`, run by the lint suite): each one fires on a planted
// import, lets the imports it allows through, and the tree breaks none of them. ESLint is loaded at run time, as
// the lint suite runs it: the project's own config, on text linted as if it were a file of that folder.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import type { ESLint as ESLintType } from 'eslint';
import { repoRoot } from './helpers/builder';

const { ESLint } = createRequire(__filename)('eslint') as { ESLint: typeof ESLintType };
const eslint = new ESLint({ cwd: repoRoot });
const LAYERING_RULES = new Set(['no-restricted-imports', 'no-restricted-syntax']);

/** The layering messages ESLint gives `code` as the file `file` (relative to the repository). */
async function layeringMessages(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(repoRoot, file) });
  return result.messages.filter((m) => m.ruleId && LAYERING_RULES.has(m.ruleId)).map((m) => m.message);
}

// [the planted file, what it imports]: each must be refused.
const REFUSED: Array<[string, string]> = [
  ['protocol/planted.ts', '../webview/importers/types'],
  ['protocol/planted.ts', '../webview/worker/messages'],
  ['protocol/planted.ts', '../client/ctx'],
  ['protocol/planted.ts', '../server/rules/types'],
  ['protocol/planted.ts', '../common/bands'],
  ['common/planted.ts', '../webview/importers/onnxWire'],
  ['common/planted.ts', '../client/editors/slimOnnx'],
  ['client/planted.ts', '../webview/graph/metrics'],
  ['client/editors/planted.ts', '../../webview/importers/onnxWire'],
  ['client/editors/planted.ts', '../../server/rules/types'],
  ['server/planted.ts', '../client/ctx'],
  ['server/rules/yaml/planted.ts', '../../../webview/graph/metrics'],
  ['webview/planted.ts', '../client/editors/html'],
  ['webview/view/planted.ts', '../../client/editors/slimOnnx'],
  ['webview/graph/planted.ts', '../view/render'],
  ['webview/graph/planted.ts', '../main'],
  ['webview/importers/planted.ts', '../view/properties'],
  ['webview/importers/planted.ts', '../worker/client'],
];

// [the planted file, what it imports]: each is allowed.
const ALLOWED: Array<[string, string]> = [
  ['protocol/planted.ts', './kernel'],
  ['protocol/planted.ts', '../build/generated/kernel-rpc'],
  ['common/planted.ts', '../protocol/webview'],
  ['client/editors/planted.ts', '../../common/wireReader'],
  ['client/editors/planted.ts', '../../protocol/webview'],
  ['server/planted.ts', '../protocol/kernel'],
  ['webview/view/planted.ts', '../graph/scene'],
  ['webview/view/planted.ts', '../../common/bands'],
  ['webview/graph/planted.ts', '../importers/types'],
  ['webview/graph/planted.ts', '../worker/messages'],
  ['webview/worker/planted.ts', '../view/render'],
];

for (const [file, target] of REFUSED) {
  test(`${file} may not import ${target}: as an import, a re-export, an import() type or a dynamic import`, async () => {
    const forms = [
      `import { x } from '${target}';\nexport const y = x;\n`,
      `export * from '${target}';\n`,
      `export type T = import('${target}').X;\n`,
      `export const load = () => import('${target}');\n`,
    ];
    for (const code of forms) assert.equal((await layeringMessages(file, code)).length, 1, code);
  });
}

test('the imports the rules allow pass', async () => {
  for (const [file, target] of ALLOWED)
    assert.deepEqual(await layeringMessages(file, `import { x } from '${target}';\nexport const y = x;\n`), [], target);
});

test('the tree breaks no layering rule', async () => {
  const layered = new ESLint({ cwd: repoRoot, ruleFilter: ({ ruleId }) => LAYERING_RULES.has(ruleId) });
  const results = await layered.lintFiles(['protocol', 'common', 'client', 'server', 'webview']);
  assert.ok(results.length > 100, `${results.length} files linted`);
  const broken = results.flatMap((r) =>
    r.messages.map((m) => `${path.relative(repoRoot, r.filePath)}:${m.line}: ${m.message}`),
  );
  assert.deepEqual(broken, []);
});

test("docs/architecture.md's layout names every folder the rules are about, and each exists", async () => {
  const architecture = readFileSync(path.join(repoRoot, 'docs', 'architecture.md'), 'utf8');
  const block = architecture.slice(architecture.indexOf('## Layout'), architecture.indexOf('## Choices worth knowing'));
  const { layering } = (await import(pathToFileURL(path.join(repoRoot, 'eslint.config.mjs')).href)) as {
    layering: Array<{ files: string[] }>;
  };
  const folders = new Set(layering.flatMap((l) => l.files.map((f) => f.replace(/\/\*\*$/, ''))));
  for (const folder of folders) {
    assert.ok(existsSync(path.join(repoRoot, folder)), `${folder} exists`);
    const [top, sub] = folder.split('/');
    assert.match(block, new RegExp(`^${top}/`, 'm'), `${top}/ in the layout`);
    if (sub) assert.match(block, new RegExp(`\\b${sub}/`), `${folder}/ in the layout`);
  }
});
