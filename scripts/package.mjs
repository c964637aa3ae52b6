// The one way the .vsix is made: a production build, then `vsce package` with the README's relative links
// rewritten: screenshots to the repository's raw files, links to docs/ and other files to its blob pages (vsce
// refuses relative links for a repository that is neither on GitHub nor GitLab, and leaves other links relative
// unless given a base). `npm run package` and `npm start` both come here.
//   node scripts/package.mjs [out.vsix]     (default: qat-studio.vsix in the repository root)
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Where the Marketplace loads the README's images from: the repository's `raw/HEAD/`, from `repository.url`. */
export function baseImagesUrl() {
  const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
  return `${manifest.repository.url.replace(/\.git$/, '')}/raw/HEAD/`;
}

/** Where the Marketplace sends the README's other relative links (docs/, CONTRIBUTING.md): `blob/HEAD/`. */
export function baseContentUrl() {
  const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
  return `${manifest.repository.url.replace(/\.git$/, '')}/blob/HEAD/`;
}

/** Builds for production and writes the .vsix to `out`; vsce's own messages go to stderr. */
export function packageVsix(out) {
  execFileSync(process.execPath, [path.join(root, 'scripts', 'build.mjs'), '--production'], {
    stdio: ['ignore', 'inherit', 'inherit'],
    cwd: root,
  });
  execFileSync(
    path.join(root, 'node_modules', '.bin', 'vsce'),
    [
      'package',
      '--no-dependencies',
      '--baseImagesUrl',
      baseImagesUrl(),
      '--baseContentUrl',
      baseContentUrl(),
      '-o',
      out,
    ],
    { stdio: ['ignore', 'ignore', 'inherit'], cwd: root },
  );
  return out;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  packageVsix(path.resolve(process.argv[2] ?? path.join(root, 'qat-studio.vsix')));
}
