// The README's Marketplace screenshots, taken from a real session: code-server with this extension on a copy of
// examples/digits, Compare Layers run by the real kernel from the explorer's context menu, then the graph view
// (QDQ overlay, coloured by cosine), the results with a layer selected, and the QAT Studio sidebar (Runs, Layers).
//   node scripts/build.mjs && node scripts/screenshots.mjs      -> media/screenshots/{graph,results,sidebar}.png
// Uses the e2e harness (out/test/support), so run it after a build; Dark Modern, 1280×800, device pixel ratio 1.
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const { devUrl, exampleWorkspace, startCodeServer } = require(path.join(root, 'out/test/support/codeServer.js'));
const { launchChromium } = require(path.join(root, 'out/test/support/browser.js'));
const outDir = path.join(root, 'media', 'screenshots');
mkdirSync(outDir, { recursive: true });

const workspace = exampleWorkspace();
// Dark Modern is VS Code's default; the Marketplace page is light, so the dark shots stand out as the editor.
mkdirSync(path.join(workspace, '.vscode'), { recursive: true });
writeFileSync(
  path.join(workspace, '.vscode', 'settings.json'),
  JSON.stringify({ 'workbench.colorTheme': 'Default Dark Modern', 'window.commandCenter': false }, null, 2),
);
const cs = await startCodeServer(workspace, { smokeTestDriver: true });
const browser = await launchChromium();
const shots = [];
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 });
  await page.goto(devUrl(cs, workspace));
  await page.waitForSelector('.monaco-workbench', { timeout: 60_000 });
  const row = page.locator('.explorer-folders-view .monaco-list-row[aria-label^="digits.qat.yaml"]').first();
  await row.waitFor({ timeout: 60_000 });
  /** Runs a command from the palette: typed `query`, the row whose title matches `title`. */
  const command = async (query, title) => {
    await page.keyboard.press('F1');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor();
    await input.fill(`>${query}`);
    const item = page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first();
    await item.waitFor({ timeout: 10_000 });
    await item.click();
    await page.waitForTimeout(300);
  };
  if (await page.locator('.part.auxiliarybar').isVisible())
    await command('Secondary Side Bar', /(Close|Hide) Secondary Side Bar/);
  // Opening the config activates the extension; its explorer menu items appear once it has.
  await row.click();
  await page.waitForSelector('.tab.active[aria-label^="digits.qat.yaml"]', { timeout: 30_000 });
  const compare = page.getByRole('menuitem', { name: 'Compare Layers' });
  for (let tries = 0; ; tries++) {
    await row.click({ button: 'right' });
    if (
      await compare.waitFor({ timeout: 5_000 }).then(
        () => true,
        () => false,
      )
    )
      break;
    if (tries === 12) throw new Error('the explorer menu never offered Compare Layers');
    await page.keyboard.press('Escape');
  }
  await compare.click();

  /** The webview frame that shows a selector (VS Code nests each webview in two iframes). */
  const frameWith = async (selector, timeoutMs) => {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      for (const f of page.frames())
        if (
          await f
            .locator(selector)
            .count()
            .catch(() => 0)
        )
          return f;
      await page.waitForTimeout(500);
    }
    throw new Error(`no webview shows ${selector} within ${timeoutMs / 1000} s`);
  };
  const frame = await frameWith('svg g.node.layer', 300_000);
  await frame.locator('#layers vscode-table-row[data-module]').first().waitFor({ timeout: 30_000 });
  // Close the side bar and the panel so the graph has the window; notifications would cover it.
  if (await page.locator('.part.sidebar').isVisible())
    await command('Primary Side Bar', /(Close|Hide) Primary Side Bar/);
  if (await page.locator('.part.panel').isVisible()) await command('Close Panel', /(Close|Hide) Panel/);
  const clear = page.locator('.notifications-toasts .codicon-notifications-clear-all');
  if (await clear.count())
    await clear
      .first()
      .click()
      .catch(() => undefined);
  await frame.locator('#fit').click();
  await page.waitForTimeout(500);
  const shot = async (name) => {
    const file = path.join(outDir, `${name}.png`);
    await page.screenshot({ path: file });
    shots.push(`${path.relative(root, file)}: ${Math.round(statSync(file).size / 1024)} KB`);
  };
  await shot('graph');

  // The results: the worst layer (first in the table) selected in the graph, its properties beside it.
  const worst = await frame.locator('#layers vscode-table-row[data-module]').first().getAttribute('data-module');
  // Found with the view's search (Enter steps through the matches) up to the layer's own op, past its Q/DQ nodes.
  await frame.locator('#search').click();
  await page.keyboard.type(worst);
  for (let i = 0; i < 12; i++) {
    await page.keyboard.press('Enter');
    const selected = frame.locator('svg g.node.selected');
    if ((await selected.count()) && (await selected.first().getAttribute('class')).includes('layer')) break;
  }
  await frame.locator('#props:not([hidden])').waitFor({ timeout: 10_000 });
  await page.waitForTimeout(300);
  await shot('results');

  // The QAT Studio sidebar: the compare run in Runs, the layers worst first.
  await page.locator('.activitybar .action-item a[aria-label^="QAT Studio"]').first().click();
  await page.locator('.pane-header', { hasText: /runs/i }).first().waitFor({ timeout: 30_000 });
  await page
    .locator('.monaco-list-row', { hasText: /compare/i })
    .first()
    .waitFor({ timeout: 30_000 });
  await page.mouse.move(700, 600);
  await page.waitForTimeout(800);
  await shot('sidebar');
} finally {
  await browser.close();
  await cs.stop();
}
console.log(shots.join('\n'));
