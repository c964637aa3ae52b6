// The README's screenshots against vsce's own rules (the pinned @vscode/vsce, its README processor and file
// list): relative image links need a repository vsce recognises (GitHub/GitLab) or --baseImagesUrl, and every
// image must end up an https URL. Ours is neither GitHub nor GitLab, so scripts/package.mjs (behind both
// `npm run package` and `npm start`) passes --baseImagesUrl; the Marketplace then loads the images from there and
// the .vsix leaves them out.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { test } from 'node:test';
import { repoRoot } from './helpers/builder';

// The installed vsce, loaded at run time (not bundled into the test): its file list and the README processor
// `vsce package` runs (the processor is not in its typed API).
const load = createRequire(__filename);
const { listFiles } = load('@vscode/vsce') as {
  listFiles(o: { cwd: string; packageManager: 'none' }): Promise<string[]>;
};
const { ReadmeProcessor } = load('@vscode/vsce/out/package') as {
  ReadmeProcessor: new (
    manifest: unknown,
    options: { baseImagesUrl?: string; baseContentUrl?: string },
  ) => { onFile(file: { path: string; localPath: string }): Promise<{ contents: Buffer }> };
};

const manifest = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as {
  repository: { url: string };
  scripts: Record<string, string>;
};
const readmePath = path.join(repoRoot, 'README.md');
const readme = readFileSync(readmePath, 'utf8');
const images = [...readme.matchAll(/!\[[^\]]*\]\(([^)\s]+)\)/g)].map((m) => m[1]);
const screenshots = images.filter((src) => src.startsWith('media/screenshots/'));

// The README's relative links that are not images (docs/, CONTRIBUTING.md, the examples), anchors left out.
const links = [...readme.matchAll(/(?<!!)\[[^\]]*\]\(([^)\s]+)\)/g)]
  .map((m) => m[1])
  .filter((l) => !/^\w+:/.test(l) && !l.startsWith('#'));

const processed = (options: { baseImagesUrl?: string; baseContentUrl?: string }) =>
  new ReadmeProcessor(manifest, options)
    .onFile({ path: 'extension/readme.md', localPath: readmePath })
    .then((f) => f.contents.toString('utf8'));

test('the README shows the graph view, results and sidebar screenshots, each a small PNG in the repository', () => {
  for (const name of ['graph', 'results', 'sidebar'])
    assert.ok(screenshots.includes(`media/screenshots/${name}.png`), `README has no ${name} screenshot`);
  for (const src of screenshots) {
    const file = path.join(repoRoot, src);
    assert.ok(existsSync(file), `${src} is not in the repository`);
    const png = readFileSync(file);
    assert.equal(png.toString('latin1', 1, 4), 'PNG', `${src} is not a PNG`);
    assert.ok(statSync(file).size < 400_000, `${src} is ${statSync(file).size} bytes`);
  }
});

test('vsce refuses the relative screenshots without a base URL, and scripts/package.mjs gives it one', async () => {
  assert.doesNotMatch(manifest.repository.url, /github\.com|gitlab\.com/, 'vsce would rewrite the links itself');
  await assert.rejects(processed({}), /Couldn't detect the repository where this extension is published/);
  assert.match(manifest.scripts.package, /node scripts\/package\.mjs/, 'npm run package packages another way');
  const start = readFileSync(path.join(repoRoot, 'scripts', 'start.mjs'), 'utf8');
  assert.match(start, /import \{ packageVsix \} from '\.\/package\.mjs'/, 'npm start packages another way');
  const packageScript = readFileSync(path.join(repoRoot, 'scripts', 'package.mjs'), 'utf8');
  assert.match(packageScript, /'--baseImagesUrl',\s*baseImagesUrl\(\)/);
  assert.match(packageScript, /'--baseContentUrl',\s*baseContentUrl\(\)/);
  const [base, content] = execFileSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      "const p = await import('./scripts/package.mjs'); console.log(p.baseImagesUrl()); console.log(p.baseContentUrl())",
    ],
    { cwd: repoRoot, encoding: 'utf8' },
  )
    .trim()
    .split('\n');
  // Next to the sources: the repository's own raw files and pages, as vsce would guess for a GitHub one.
  const repo = manifest.repository.url.replace(/\.git$/, '');
  assert.equal(base, `${repo}/raw/HEAD/`);
  assert.equal(content, `${repo}/blob/HEAD/`);
  const out = await processed({ baseImagesUrl: base, baseContentUrl: content });
  for (const src of screenshots) assert.ok(out.includes(`](${base}${src})`), `${src} is not rewritten to ${base}`);
  // vsce's own last check passed: every image in the packaged README is https.
  for (const m of out.matchAll(/!\[[^\]]*\]\(([^)\s]+)\)/g)) assert.match(m[1], /^https:\/\//);
  // The links to docs/ and the other files work from the Marketplace page too.
  assert.ok(links.length > 0, 'the README links no file');
  for (const link of links) assert.ok(out.includes(`](${content}${link})`), `${link} is not rewritten to ${content}`);
});

test("the README's relative links name files in the repository", () => {
  for (const link of links) assert.ok(existsSync(path.join(repoRoot, link.split('#')[0])), `${link} does not exist`);
});

test('the .vsix leaves the screenshots out (the Marketplace loads them from the base URL)', async () => {
  const files = await listFiles({ cwd: repoRoot, packageManager: 'none' });
  assert.ok(files.includes('README.md') && files.includes('media/icon.png'), files.join(', '));
  assert.deepEqual(
    files.filter((f) => f.startsWith('media/screenshots/')),
    [],
  );
});
