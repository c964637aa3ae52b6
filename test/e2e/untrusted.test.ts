// Workspace Trust: in Restricted Mode diagnostics still work, but no command starts the kernel or runs code.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../support/browser';
import { devUrl, exampleWorkspace, startCodeServer, type CodeServer } from '../support/codeServer';
import { artifactsDir } from '../support/paths';
import { BAD_RANGE_YAML } from './workspaceFiles';

let cs: CodeServer;
let browser: Browser;
let page: Page;

before(async () => {
  mkdirSync(artifactsDir, { recursive: true });
  const workspace = exampleWorkspace({ 'bad-range.qat.yaml': BAD_RANGE_YAML });
  cs = await startCodeServer(workspace, { smokeTestDriver: true, workspaceTrust: true });
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  await page.goto(devUrl(cs, workspace));
  await page.waitForSelector('.monaco-workbench', { timeout: 60_000 });
});

after(async () => {
  if (page) await page.screenshot({ path: path.join(artifactsDir, 'e2e-untrusted.png') }).catch(() => undefined);
  await browser?.close();
  await cs?.stop();
});

test(
  'in Restricted Mode the config is still checked, and Compare Layers explains instead of running',
  { timeout: 180_000 },
  async () => {
    // A trust prompt may or may not be shown; either way the folder must stay untrusted.
    const dontTrust = page.getByRole('button', { name: /No, I don.t trust the authors/ });
    if (await dontTrust.isVisible().catch(() => false)) await dontTrust.click();
    await page.locator('.statusbar-item', { hasText: 'Restricted Mode' }).first().waitFor({ timeout: 60_000 });

    const row = page.locator('.explorer-folders-view .monaco-list-row[aria-label^="bad-range.qat.yaml"]').first();
    await row.waitFor({ timeout: 60_000 });
    await row.click();
    await page.locator('.monaco-editor .view-lines').first().click();
    await page.keyboard.press('Control+Shift+M');
    await page
      .locator('.markers-panel .monaco-list-row', { hasText: 'quant_max 300 is outside the range of quint8 (0..255)' })
      .first()
      .waitFor({ timeout: 60_000 });

    await page
      .locator('.explorer-folders-view .monaco-list-row[aria-label^="digits.qat.yaml"]')
      .first()
      .click({ button: 'right' });
    const item = page.getByRole('menuitem', { name: 'Compare Layers' });
    await item.hover();
    await page.keyboard.press('Enter');
    // A headless window has no focus, so VS Code may file the message in the notification center instead of a toast.
    const message = page.locator('.notification-list-item-message', { hasText: 'only in a trusted workspace' });
    await page.locator('.statusbar-item[id="status.notifications"] .codicon-bell-dot').waitFor({ timeout: 30_000 });
    if (!(await message.first().isVisible())) await page.locator('.statusbar-item[id="status.notifications"]').click();
    await message.first().waitFor({ timeout: 30_000 });
    // The kernel never started: its status bar item still shows the stopped icon.
    assert.equal(
      await page.locator('.statusbar-item', { hasText: 'QAT kernel' }).locator('.codicon-circle-outline').count(),
      1,
    );
    await page.screenshot({ path: path.join(artifactsDir, 'e2e-untrusted-toast.png') });
  },
);
