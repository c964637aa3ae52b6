// Reads the theme colours VS Code gives webviews from a real VS Code (code-server 4.139.1 / VS Code 1.139.1), for
// the theme tests' fixture. Webviews get `--vscode-<colour id>` for every registered colour of the active theme,
// the same values the workbench exposes as CSS variables on `.monaco-workbench`.
//   node scripts/build.mjs && node out/test/support/dumpThemeVars.js
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { launchChromium } from './browser';
import { startCodeServer, userSettings } from './codeServer';
import { repoRoot } from './paths';

/** The theme kinds a webview's body class names, with VS Code's default theme of each kind. */
export const THEMES = {
  light: { theme: 'Default Light Modern', bodyClass: 'vscode-light', workbenchClass: 'vs' },
  dark: { theme: 'Default Dark Modern', bodyClass: 'vscode-dark', workbenchClass: 'vs-dark' },
  'high-contrast': { theme: 'Default High Contrast', bodyClass: 'vscode-high-contrast', workbenchClass: 'hc-black' },
} as const;

/** Every variable the graph view and the @vscode-elements it uses read. */
export const VARIABLES = [
  'foreground',
  'descriptionForeground',
  'errorForeground',
  'focusBorder',
  'widget-shadow',
  'editor-background',
  'editor-foreground',
  'editorWidget-background',
  'panel-border',
  'badge-background',
  'badge-foreground',
  'list-hoverBackground',
  'charts-purple',
  'charts-blue',
  'charts-green',
  'charts-yellow',
  'charts-orange',
  'charts-red',
  'charts-foreground',
  'button-background',
  'button-foreground',
  'button-border',
  'button-hoverBackground',
  'button-secondaryBackground',
  'button-secondaryForeground',
  'button-secondaryHoverBackground',
  'input-placeholderForeground',
  'settings-textInputBackground',
  'settings-textInputForeground',
  'inputValidation-errorBackground',
  'inputValidation-errorBorder',
  'contrastBorder',
  'contrastActiveBorder',
].map((v) => `--vscode-${v}`);

async function main(): Promise<void> {
  const out: Record<string, { theme: string; bodyClass: string; vars: Record<string, string> }> = {};
  const browser = await launchChromium();
  try {
    for (const [kind, t] of Object.entries(THEMES)) {
      (userSettings as Record<string, unknown>)['workbench.colorTheme'] = t.theme;
      const cs = await startCodeServer(mkdtempSync(path.join(tmpdir(), 'qat-theme-')));
      try {
        const page = await browser.newPage();
        await page.goto(cs.url);
        await page.waitForSelector(`.monaco-workbench.${t.workbenchClass}`, { timeout: 60_000 });
        const vars = await page.evaluate((names) => {
          const style = getComputedStyle(document.querySelector('.monaco-workbench')!);
          return Object.fromEntries(names.map((n) => [n, style.getPropertyValue(n).trim()]).filter(([, v]) => v));
        }, VARIABLES);
        out[kind] = { theme: t.theme, bodyClass: t.bodyClass, vars };
        console.log(`${kind}: ${Object.keys(vars).length} of ${VARIABLES.length} variables`);
        await page.close();
      } finally {
        await cs.stop();
      }
    }
  } finally {
    await browser.close();
  }
  const dir = path.join(repoRoot, 'test', 'fixtures', 'themes');
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    path.join(dir, 'vscode-themes.json'),
    JSON.stringify(
      { source: 'VS Code 1.139.1 (code-server 4.139.1), read by test/support/dumpThemeVars.ts', themes: out },
      null,
      2,
    ) + '\n',
  );
}

if (require.main === module)
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
