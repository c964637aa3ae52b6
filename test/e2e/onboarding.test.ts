// A new user's first steps in a real VS Code (code-server): the walkthrough opens on the extension's first
// activation, and Open an Example lands in the example's folder with its config in an editor and the walkthrough
// beside it, at the next step.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../support/browser';
import { devUrl, exampleWorkspace, startCodeServer, type CodeServer } from '../support/codeServer';
import { artifactsDir } from '../support/paths';

let cs: CodeServer;
let browser: Browser;
let page: Page;

const step = (id: string) =>
  page.locator(`[data-step-id="qat-studio.qat-studio#qatStudio.gettingStarted#${id}"]`).first();

before(async () => {
  mkdirSync(artifactsDir, { recursive: true });
  const workspace = exampleWorkspace();
  cs = await startCodeServer(workspace, {
    smokeTestDriver: true,
    settings: { 'workbench.welcomePage.walkthroughs.openOnInstall': true },
  });
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  await page.goto(devUrl(cs, workspace));
  await page.waitForSelector('.monaco-workbench', { timeout: 60_000 });
});

after(async () => {
  if (page) await page.screenshot({ path: path.join(artifactsDir, 'e2e-onboarding.png') }).catch(() => undefined);
  await browser?.close();
  await cs?.stop();
});

test('the walkthrough opens on the first activation', { timeout: 120_000 }, async () => {
  await step('kernel').waitFor({ timeout: 90_000 });
  assert.equal(await step('compare').getAttribute('aria-checked'), 'false');
});

test(
  'Open an Example opens the copy with its config in an editor and the walkthrough beside it, at Compare layers',
  { timeout: 240_000 },
  async (t) => {
    // The folder the example is copied into, under the test artifacts rather than /tmp: the dialog lists every folder
    // on the typed path, and a shared /tmp holds hundreds of entries (among them earlier runs' qat-onboarding-*, which
    // its completion offers while the name is typed).
    const parent = mkdtempSync(path.join(artifactsDir, 'onboarding-'));
    t.after(() => rmSync(parent, { recursive: true, force: true }));
    // From the walkthrough, as a new user does: the example step's link, then the cifar example.
    await step('openConfig').click();
    await step('openConfig').locator('a, button', { hasText: 'Open an Example' }).first().click();
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'cifar' }).first().click({ timeout: 30_000 });
    // VS Code's own folder picker in the browser: type the folder, then its button.
    const ok = page.locator('.quick-input-widget .monaco-button', { hasText: 'Copy the cifar example here' });
    await ok.waitFor({ timeout: 30_000 });
    const input = page.locator('.quick-input-widget input');
    await input.click();
    await page.keyboard.press('Control+A');
    await page.keyboard.type(`${parent}/`, { delay: 20 });
    // The dialog reads each folder as the path is typed and can miss the last keystroke while it is still listing
    // one; accepted then, it takes the folder it was showing. The typed (empty) folder is read once its list holds
    // only '..': until then, type its closing '/' again, as a user would.
    const readTyped = (want: string) => {
      const value = (document.querySelector('.quick-input-widget input') as HTMLInputElement | null)?.value;
      const rows = [...document.querySelectorAll('.quick-input-widget .quick-input-list .monaco-list-row')];
      return value === want && rows.length === 1 && rows[0]?.textContent?.trim() === '..';
    };
    let read = false;
    for (let attempt = 0; attempt < 6 && !read; attempt++) {
      read = await page
        .waitForFunction(readTyped, `${parent}/`, { timeout: 5_000 })
        .then(() => true)
        .catch(() => false);
      if (!read) {
        await page.keyboard.press('Backspace');
        await page.keyboard.type('/');
      }
    }
    if (!read) {
      const shown = await page.evaluate(() => ({
        value: (document.querySelector('.quick-input-widget input') as HTMLInputElement | null)?.value,
        rows: [...document.querySelectorAll('.quick-input-widget .quick-input-list .monaco-list-row')].map((r) => [
          r.getAttribute('aria-label'),
          r.textContent?.trim(),
        ]),
      }));
      assert.fail(`the folder dialog never showed ${parent}/: it shows ${JSON.stringify(shown)}`);
    }
    await ok.click();
    const dest = path.join(parent, 'qat-example-cifar');
    const landed = await page
      .waitForURL((url) => decodeURIComponent(url.toString()).includes(dest), { timeout: 60_000, waitUntil: 'commit' })
      .then(() => true)
      .catch(() => false);
    if (!landed) assert.fail(`the example folder ${dest} never opened; the window is at ${page.url()}`);
    await page.waitForSelector('.monaco-workbench', { timeout: 60_000 });
    await page.locator('.tab[aria-label^="mobilenetv2.qat.yaml"]').first().waitFor({ timeout: 90_000 });
    await page
      .locator('.monaco-editor .view-lines', { hasText: 'MovingAverageMinMaxObserver' })
      .first()
      .waitFor({ timeout: 30_000 });
    // The walkthrough continues beside it: the config step done, Compare layers next.
    await step('compare').waitFor({ timeout: 60_000 });
    await page
      .locator('[data-step-id="qat-studio.qat-studio#qatStudio.gettingStarted#openConfig"][aria-checked="true"]')
      .waitFor({ timeout: 30_000 });
    assert.equal(await step('compare').getAttribute('aria-expanded'), 'true');
    assert.equal(
      await page.locator('.editor-group-container').count(),
      2,
      'the config and the walkthrough side by side',
    );
    await page.screenshot({ path: path.join(artifactsDir, 'e2e-open-example.png') });
  },
);
