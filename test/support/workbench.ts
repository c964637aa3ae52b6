// Driving the code-server workbench with Playwright, for the e2e tests: the webview frame that shows something,
// and the rows of the QAT Studio sidebar's Layers view.
import type { Frame, Locator, Page } from 'playwright-core';

/** The frame (VS Code nests each webview in two iframes) that shows `selector`, waiting up to timeoutMs. */
export async function findFrame(page: Page, selector: string, timeoutMs: number): Promise<Frame> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    for (const frame of page.frames()) {
      if (
        await frame
          .locator(selector)
          .count()
          .catch(() => 0)
      )
        return frame;
    }
    await page.waitForEvent('framenavigated', { timeout: 2_000 }).catch(() => undefined);
  }
  throw new Error(`no frame with ${selector} within ${timeoutMs} ms`);
}

/** The row of `module` in the QAT Studio sidebar's Layers view. */
export function layersViewRow(page: Page, module: string): Locator {
  const pane = page.locator('.pane', { has: page.locator('.pane-header', { hasText: /^\s*Layers/ }) });
  const exact = new RegExp(`^${module.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);
  return pane.locator('.monaco-list-row', { has: page.locator('.label-name', { hasText: exact }) });
}

/** Closes every results tab titled `title` (posting to a closed panel used to fail with "Webview is disposed"),
 * then clicks `module` in the Layers view, which opens the results again. */
export async function reopenFromLayersView(page: Page, title: string, module: string): Promise<void> {
  const results = page.locator('.tabs-container .tab', { hasText: title });
  while (await results.count()) {
    await results.first().click({ button: 'middle' });
    await page.waitForTimeout(200);
  }
  await page.locator('.activitybar .action-item a[aria-label^="QAT Studio"]').first().click();
  const row = layersViewRow(page, module);
  await row.waitFor({ timeout: 30_000 });
  await row.click();
}
