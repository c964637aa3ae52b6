// A new user's first hour in one real VS Code (code-server), driven as a user drives it: the walkthrough on first
// activation, Compare Layers, the results view after its tab was closed, Apply Fix from the sidebar with auto-save
// on, Retrain and Before / After, Analyze Sensitivity, Search Mixed Precision and Build for Target, each result a
// page that stays open. Each step leaves a screenshot (.test-artifacts/walk-*.png). `npm start` itself and the
// packaged extension's files are walked by start.test.ts and test/unit/packagedFiles.test.ts.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser, Frame, Page } from 'playwright-core';
import { launchChromium } from '../support/browser';
import { devUrl, exampleWorkspace, startCodeServer, type CodeServer } from '../support/codeServer';
import { artifactsDir } from '../support/paths';
import { findFrame as findFrameIn, layersViewRow, reopenFromLayersView } from '../support/workbench';

let cs: CodeServer;
let browser: Browser;
let page: Page;
let workspace: string;
/** The INT8 top-1 the results view showed before the fix. */
let int8Before = '';

const shot = (name: string) => page.screenshot({ path: path.join(artifactsDir, `walk-${name}.png`) });
const explorerRow = (name: string) =>
  page.locator(`.explorer-folders-view .monaco-list-row[aria-label^="${name}"]`).first();
const step = (id: string) =>
  page.locator(`[data-step-id="qat-studio.qat-studio#qatStudio.gettingStarted#${id}"]`).first();
const tab = (text: string | RegExp) => page.locator('.tabs-container .tab', { hasText: text }).first();

/** The command palette, as a user opens it: F1, the command's title, Enter (again if a keystroke was lost while
 * the workbench was busy). */
async function palette(title: string): Promise<void> {
  const input = page.locator('.quick-input-widget input');
  const row = page.locator('.quick-input-list .monaco-list-row', { hasText: title.replace(/^QAT: /, '') }).first();
  for (let attempt = 1; ; attempt++) {
    await page.keyboard.press('F1');
    const shown = await input
      .waitFor({ timeout: 10_000 })
      .then(() => true)
      .catch(() => false);
    // A webview taking focus back just after the palette opened closes it: then open it again.
    if (
      shown &&
      (await input.fill(`>${title}`, { timeout: 5_000 }).then(
        () => true,
        () => false,
      ))
    ) {
      if (
        await row
          .waitFor({ timeout: 10_000 })
          .then(() => true)
          .catch(() => false)
      )
        break;
    }
    if (attempt === 3) {
      await shot('timeout');
      throw new Error(`the command palette never offered ${title}`);
    }
    await page.keyboard.press('Escape');
  }
  await page.keyboard.press('Enter');
}

/** The webview frame that shows `selector`; a screenshot when none does in time. */
const findFrame = (selector: string, timeoutMs: number): Promise<Frame> =>
  findFrameIn(page, selector, timeoutMs).catch(async (err: unknown) => {
    await shot('timeout');
    throw err;
  });

/** A notification's text, as a toast or in the notification center (a window without focus keeps them there). */
async function notification(text: string | RegExp, timeoutMs: number) {
  const item = page.locator('.notification-list-item', { hasText: text }).first();
  const deadline = Date.now() + timeoutMs;
  while (!(await item.isVisible())) {
    if (Date.now() > deadline) {
      await shot('timeout');
      throw new Error(`no notification ${text} within ${timeoutMs} ms`);
    }
    if (!(await page.locator('.notifications-center.visible').isVisible()))
      await page
        .locator('.statusbar-item[id="status.notifications"]')
        .click()
        .catch(() => undefined);
    await item.waitFor({ timeout: 2_000 }).catch(() => undefined);
  }
  return item;
}

/** The example has two configs: where a command asks which, the user picks digits.qat.yaml. */
async function pickConfigIfAsked(): Promise<void> {
  const asked = await page
    .locator('.quick-input-widget input[placeholder="Which QAT config?"]')
    .waitFor({ timeout: 5_000 })
    .then(() => true)
    .catch(() => false);
  if (!asked) return;
  await page
    .locator('.quick-input-list .monaco-list-row', { hasText: /^digits\.qat\.yaml/ })
    .first()
    .click();
}

const errorsShown = () => page.locator('.notification-list-item-message').allTextContents();

before(async () => {
  mkdirSync(artifactsDir, { recursive: true });
  workspace = exampleWorkspace();
  cs = await startCodeServer(workspace, {
    smokeTestDriver: true,
    settings: {
      'workbench.welcomePage.walkthroughs.openOnInstall': true,
      // As code-server users often have it: the fix is saved before anything re-reads the config.
      'files.autoSave': 'afterDelay',
    },
  });
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  await page.goto(devUrl(cs, workspace));
  await page.waitForSelector('.monaco-workbench', { timeout: 60_000 });
});

after(async () => {
  if (page) await shot('end').catch(() => undefined);
  await browser?.close();
  await cs?.stop();
});

test(
  'the walkthrough opens on the first activation, and the activity bar draws the QAT Studio icon',
  { timeout: 120_000 },
  async () => {
    await step('kernel').waitFor({ timeout: 90_000 });
    for (const id of ['compare', 'fix', 'build'])
      assert.equal(await step(id).getAttribute('aria-checked'), 'false', id);
    const icon = page.locator('.activitybar .action-item a[aria-label^="QAT Studio"]').first();
    await icon.waitFor({ timeout: 30_000 });
    // An extension's view-container icon is a CSS mask on the action; the image it names must load.
    const url = await icon.evaluate((el) => {
      const s = getComputedStyle(el);
      const image = s.maskImage || s.webkitMaskImage || s.backgroundImage;
      return /url\("?([^")]+)"?\)/.exec(image)?.[1] ?? '';
    });
    assert.match(url, /activitybar\.svg/, 'no icon image on the QAT Studio action');
    const loaded = await page.evaluate(async (u) => {
      const r = await fetch(u);
      return { ok: r.ok, type: r.headers.get('content-type'), text: (await r.text()).slice(0, 200) };
    }, url);
    assert.ok(loaded.ok && /<svg/.test(loaded.text), `the icon ${url} did not load: ${JSON.stringify(loaded)}`);
    await shot('01-walkthrough');
  },
);

test(
  'Compare Layers: the results view shows the model accuracy at each stage, and Fit shows the whole graph',
  { timeout: 360_000 },
  async () => {
    await explorerRow('digits.qat.yaml').click();
    await page.waitForSelector('.tab[aria-label^="digits.qat.yaml"]', { timeout: 30_000 });
    await palette('QAT: Compare Layers');
    const frame = await findFrame('#layers .model-accuracy .stage[data-stage="INT8"]', 300_000);
    const stages = await frame
      .locator('#layers .model-accuracy .stage')
      .evaluateAll((ss) => ss.map((s) => [s.getAttribute('data-stage'), s.querySelector('b')?.textContent ?? '']));
    const byStage = Object.fromEntries(stages);
    assert.ok(byStage.FP32 && byStage.INT8, `stages shown: ${JSON.stringify(stages)}`);
    for (const v of Object.values(byStage)) assert.match(v as string, /^\d+\.\d\d %$/);
    int8Before = byStage.INT8 as string;
    // Every layer in the table by its full name.
    const names = await frame
      .locator('#layers vscode-table-row[data-module]')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-module')));
    assert.deepEqual([...new Set(names)].sort(), ['conv1', 'conv2', 'fc1', 'fc2']);
    await frame.locator('#fit').click();
    await frame.waitForFunction(
      () => {
        const view = document.querySelector('#canvas')!.getBoundingClientRect();
        const nodes = [...document.querySelectorAll('svg g.node > rect')];
        return (
          nodes.length > 0 &&
          nodes.every((n) => {
            const r = n.getBoundingClientRect();
            return (
              r.top >= view.top - 1 &&
              r.bottom <= view.bottom + 1 &&
              r.left >= view.left - 1 &&
              r.right <= view.right + 1
            );
          })
        );
      },
      undefined,
      { timeout: 10_000 },
    );
    await shot('02-compare');
  },
);

test(
  'with the results tab closed, a layer clicked in the Layers view reopens them with it selected',
  { timeout: 180_000 },
  async () => {
    await reopenFromLayersView(page, 'Layers: digits.qat.yaml', 'conv2');
    await findFrame('svg g.node.selected[data-module="conv2"]', 120_000);
    const shown = await errorsShown();
    assert.ok(!shown.some((t) => /disposed/i.test(t)), shown.join(' | '));
    await shot('03-layers-view');
  },
);

test(
  'Apply Fix from the Layers view, auto-saved, then Retrain: Before / After starts from the run before the fix',
  { timeout: 420_000 },
  async () => {
    const row = layersViewRow(page, 'conv2');
    await row.hover();
    await row.locator('.action-label[aria-label="Apply Fix"]').click();
    await page.locator('.quick-input-widget', { hasText: /Apply Fix: .* for conv2/ }).waitFor({ timeout: 60_000 });
    await shot('04-apply-fix');
    await page.keyboard.press('Enter');
    const offer = await notification('Override written', 60_000);
    // The whole reason, not cut off.
    assert.match(
      (await offer.locator('.notification-list-item-message').textContent()) ?? '',
      /Override written: .*\. .+Retrain/,
    );
    // Auto-save writes the override to disk before the retrain reads it.
    const config = path.join(workspace, 'digits.qat.yaml');
    const deadline = Date.now() + 30_000;
    while (!/match: .*conv2/.test(readFileSync(config, 'utf8'))) {
      assert.ok(Date.now() < deadline, 'the override was never saved');
      await page.waitForTimeout(250);
    }
    await offer.locator('.monaco-button', { hasText: 'Retrain and Compare' }).click();
    await tab('Before / After: digits.qat.yaml').waitFor({ timeout: 360_000 });
    const frame = await findFrame('table#runs', 30_000);
    const int8 = await frame.locator('table#runs tr', { has: frame.locator('th', { hasText: /^INT8$/ }) }).first();
    const cells = await int8.locator('td').allTextContents();
    assert.equal(cells.length, 2, `INT8 row: ${cells}`);
    // Before: the comparison made before the fix, not a re-run of the saved (fixed) config.
    assert.equal(cells[0], int8Before, `before fix ${cells[0]}, the results view said ${int8Before}`);
    assert.match(cells[1], /^\d+\.\d\d %$/);
    assert.match((await frame.locator('table#runs thead').textContent()) ?? '', /before fix.*after fix/);
    await shot('05-before-after');
  },
);

test(
  'the walkthrough ticks what was done, from wherever it was started: all but the build',
  { timeout: 120_000 },
  async () => {
    await palette('QAT: Get Started (Walkthrough)');
    await step('compare').waitFor({ timeout: 30_000 });
    await page
      .locator('[data-step-id="qat-studio.qat-studio#qatStudio.gettingStarted#fix"][aria-checked="true"]')
      .waitFor({ timeout: 30_000 });
    for (const id of ['kernel', 'openConfig', 'compare'])
      assert.equal(await step(id).getAttribute('aria-checked'), 'true', id);
    assert.equal(await step('build').getAttribute('aria-checked'), 'false');
    await shot('06-walkthrough-ticks');
    // Closed again, as a user closes it to get on.
    await page.locator('.tabs-container .tab', { hasText: 'Welcome' }).first().click({ button: 'middle' });
    await page
      .locator('.tabs-container .tab', { hasText: 'Welcome' })
      .first()
      .waitFor({ state: 'detached', timeout: 10_000 });
    // Focus settles on the editor left in front (a webview takes it a moment later).
    await page.waitForTimeout(1_000);
  },
);

test(
  'Analyze Sensitivity: a ranked chart of every layer with the baselines, kept open as a page',
  { timeout: 420_000 },
  async () => {
    await palette('QAT: Analyze Sensitivity');
    await pickConfigIfAsked();
    // How many points may be given up: the offered 1.0.
    const box = page.locator('.quick-input-widget', { hasText: 'Accuracy you can give up' });
    await box.waitFor({ timeout: 30_000 }).catch(async (err: unknown) => {
      await shot('timeout');
      throw err;
    });
    // Enter in the box (an Enter pressed while the box replaces the config pick can be lost: press it again).
    for (let attempt = 0; attempt < 3 && (await box.isVisible()); attempt++) {
      await box.locator('input').focus();
      await page.keyboard.press('Enter');
      await box.waitFor({ state: 'hidden', timeout: 5_000 }).catch(() => undefined);
    }
    const frame = await findFrame('#baselines [data-baseline="fp32"]', 360_000);
    assert.match((await frame.locator('[data-baseline="fp32"]').textContent()) ?? '', /^\d+\.\d\d %$/);
    assert.match((await frame.locator('#baselines').textContent()) ?? '', /fake-quant \(emulated\)/);
    const modules = await frame
      .locator('.chart:not([hidden]) svg.bars g.row')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-module')));
    // Every quantized layer: conv2 stays in FP16 since the fix above.
    assert.deepEqual([...modules].sort(), ['conv1', 'fc1', 'fc2']);
    assert.ok(((await frame.locator('#suggestion p').textContent()) ?? '').length > 10, 'no suggestion text');
    await shot('07-sensitivity');
  },
);

test(
  'Search Mixed Precision: the front on accuracy measured on ONNX Runtime, the emulated figure marked apart',
  { timeout: 540_000 },
  async () => {
    await palette('QAT: Search Mixed Precision');
    await pickConfigIfAsked();
    const frame = await findFrame('svg.front-chart circle[data-id]', 480_000);
    assert.equal(await frame.locator('svg.front-chart text.axis', { hasText: 'top-1 on ONNX Runtime (%)' }).count(), 2);
    const rows = await frame.locator('#candidates tr[data-id]').count();
    assert.ok(rows >= 2, `${rows} candidates`);
    assert.equal(await frame.locator('svg[data-view="latency"] circle[data-id]').count(), rows);
    // Each candidate's emulated figure is named as such where it is shown.
    assert.match(
      (await frame.locator('svg[data-view="latency"] circle[data-id]').first().getAttribute('aria-label')) ?? '',
      /on ONNX Runtime \(fake-quant, emulated: \d+\.\d\d %\)/,
    );
    await shot('08-search');
  },
);

test(
  'Build for Target: the report times TVM beside the other runtimes, names modules, and states its parity thresholds',
  { timeout: 540_000 },
  async () => {
    await palette('QAT: Build for Target...');
    await pickConfigIfAsked();
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'x86-64' }).first().click({ timeout: 30_000 });
    const frame = await findFrame('h1:has-text("TVM build: x86-64")', 480_000);
    const text = (await frame.locator('body').textContent()) ?? '';
    assert.match(text, /TVM INT8 \(int8 fold\)/);
    assert.match(text, /ONNX Runtime INT8/);
    assert.match(text, /top-1 agreement ≥ 99 %/);
    // Node names map back to the model's modules.
    assert.ok((await frame.locator('td', { hasText: /^conv2$/ }).count()) > 0, 'no module column in the per-op table');
    await shot('09-build-report');
    await palette('QAT: Get Started (Walkthrough)');
    await page
      .locator('[data-step-id="qat-studio.qat-studio#qatStudio.gettingStarted#build"][aria-checked="true"]')
      .waitFor({ timeout: 30_000 });
    const shown = await errorsShown();
    assert.ok(!shown.some((t) => /internal error|disposed/i.test(t)), shown.join(' | '));
    await shot('10-walkthrough-done');
  },
);

test(
  'Find Where INT8 Diverges from the palette, the focus in an empty editor group: it runs on the config in view',
  { timeout: 300_000 },
  async () => {
    await page.locator('.activitybar .action-item a[aria-label^="Explorer"]').first().click();
    await explorerRow('digits.qat.yaml').click();
    await page.waitForSelector('.tab[aria-label^="digits.qat.yaml"]', { timeout: 30_000 });
    // An empty group to the right takes the focus: no active text editor, the config still in view.
    await palette('View: New Editor Group to the Right');
    await palette('QAT: Find Where INT8 Diverges');
    const asked = page.locator('.quick-input-widget', { hasText: 'Which QAT config?' });
    await page.locator('.tabs-container .tab', { hasText: 'Stages: digits.qat.yaml' }).waitFor({ timeout: 240_000 });
    assert.equal(await asked.isVisible(), false, 'the command asked which config although one was in view');
    // Any quantized layer's lane: the walk's earlier steps may have kept some layers float in this config.
    await findFrame('svg g.node[data-stage-layer] .stage-lane', 60_000);
    await shot('11-divergence');
  },
);
