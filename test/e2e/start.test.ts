// The README's first command on a clean checkout: `npm start` in a copy of the working tree as git would check it
// out (tracked and unignored files, no node_modules, no build) must set up, package, install the .vsix into
// code-server and serve VS Code on its port. The .vsix it made must hold every file the manifest names, and the
// installed extension's activity-bar icon must load in the page.
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { launchChromium } from '../support/browser';
import { freePort } from '../support/codeServer';
import { missingFromPackage } from '../support/packagedFiles';
import { artifactsDir, cacheDir, repoRoot } from '../support/paths';

let checkout: string | undefined;
let proc: ChildProcess | undefined;

/** A copy of the files `git clone` would give for this working tree. */
function cleanCheckout(): string {
  const dest = mkdtempSync(path.join(tmpdir(), 'qat-start-'));
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: repoRoot,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  })
    .split('\0')
    .filter(Boolean);
  for (const file of files) {
    mkdirSync(path.dirname(path.join(dest, file)), { recursive: true });
    cpSync(path.join(repoRoot, file), path.join(dest, file), { errorOnExist: false, force: true });
  }
  return dest;
}

async function stop(): Promise<void> {
  const child = proc;
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // npm start runs in its own process group: npm, node scripts/start.mjs and code-server stop together.
  process.kill(-child.pid!, 'SIGTERM');
  const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

after(async () => {
  await stop();
  if (checkout) rmSync(checkout, { recursive: true, force: true });
});

test(
  'npm start on a clean checkout packages, installs and serves VS Code with QAT Studio',
  { timeout: 600_000 },
  async () => {
    checkout = cleanCheckout();
    const port = await freePort();
    const profile = mkdtempSync(path.join(tmpdir(), 'qat-start-profile-'));
    let log = '';
    proc = spawn('npm', ['start'], {
      cwd: checkout,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, QAT_STUDIO_PORT: String(port), QAT_STUDIO_CACHE: cacheDir, QAT_STUDIO_PROFILE: profile },
    });
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`npm start did not serve within 9 min:\n${log.slice(-4000)}`)),
        540_000,
      );
      const onData = (chunk: Buffer) => {
        log += chunk.toString();
        const m = /QAT Studio is running in VS Code \(code-server\) at (\S+)/.exec(log);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]);
        }
      };
      proc!.stdout!.on('data', onData);
      proc!.stderr!.on('data', onData);
      proc!.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`npm start exited with ${code}:\n${log.slice(-4000)}`));
      });
    });
    assert.ok(url.startsWith(`http://127.0.0.1:${port}/`), url);
    const response = await fetch(`http://127.0.0.1:${port}/healthz`);
    assert.equal(response.status, 200, 'code-server does not answer on its port');

    const vsix = path.join(checkout, 'out', 'qat-studio.vsix');
    const entries = execFileSync('unzip', ['-Z1', vsix], { encoding: 'utf8' }).split('\n').filter(Boolean);
    const packaged = new Set(
      entries.filter((e) => e.startsWith('extension/')).map((e) => e.slice('extension/'.length)),
    );
    assert.deepEqual(missingFromPackage(checkout, packaged), []);

    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
      await page.goto(url);
      // The installed extension's view container: its icon is a CSS mask whose URL must load.
      const item = page.locator('.activitybar .action-item .action-label[aria-label^="QAT Studio"]').first();
      await item.waitFor({ timeout: 120_000 });
      const icon = await item.evaluate((el) => {
        const style = getComputedStyle(el);
        return style.maskImage || style.webkitMaskImage || '';
      });
      const iconUrl = /url\("?([^")]+)"?\)/.exec(icon)?.[1];
      assert.ok(iconUrl, `the activity-bar item has no icon (mask-image ${icon || 'none'})`);
      assert.match(iconUrl, /activitybar\.svg/);
      const status = await page.evaluate(async (u) => (await fetch(u)).status, iconUrl);
      assert.equal(status, 200, `the activity-bar icon does not load: ${iconUrl}`);
      mkdirSync(artifactsDir, { recursive: true });
      await page.screenshot({ path: path.join(artifactsDir, 'e2e-npm-start.png') });
    } finally {
      await browser.close();
    }
    await stop();
    assert.ok(proc.exitCode !== null || proc.signalCode !== null, 'npm start did not stop');
  },
);
