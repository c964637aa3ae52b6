// Lint for every TypeScript and JavaScript source; formatting is Prettier's (eslint-config-prettier turns the
// overlapping style rules off).
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

// What a folder never imports (CONTRIBUTING.md, "Where things live"); test/unit/layering.test.ts plants each
// violation and checks that the tree has none. protocol/ (the contracts) imports nothing of the other folders;
// common/ (DOM-free code that the host and the webview both run) none of the sides; the extension host
// (client/) never the webview, the language server (server/) neither the host nor the webview, the webview
// never host code. The webview's graph code and importers, which its layout worker runs too, never import its
// DOM code (view/, worker/client.ts, main.ts, ui.ts).
const climbsTo = (folders) => `^(\\.\\./)+(${folders.join('|')})(/|$)`;
const hostCode = { regex: climbsTo(['client', 'server']), why: 'The webview never imports host code' };
export const layering = [
  { files: ['protocol/**'], never: [{ regex: climbsTo(['client', 'server', 'webview', 'common']), why: 'A contract imports nothing of the other folders' }] },
  { files: ['common/**'], never: [{ regex: climbsTo(['client', 'server', 'webview']), why: 'common/ is shared by the host and the webview: it imports neither' }] },
  { files: ['client/**'], never: [{ regex: climbsTo(['webview', 'server']), why: 'The extension host never imports the webview or the language server (shared code lives in common/)' }] },
  { files: ['server/**'], never: [{ regex: climbsTo(['client', 'webview']), why: 'The language server never imports the host or the webview' }] },
  { files: ['webview/**'], never: [hostCode] },
  {
    files: ['webview/graph/**', 'webview/importers/**'],
    never: [
      hostCode,
      { regex: '^\\.\\./(view|main|ui)(/|$)', why: "The layout worker's code never imports the page's DOM code" },
      { regex: '^\\.\\./worker/(client|start)$', why: "The layout worker's code never imports the page's DOM code" },
    ],
  },
]; // prettier-ignore

/** One config object per layering rule: import declarations and re-exports (no-restricted-imports), dynamic
 * imports and import('...') types (no-restricted-syntax; an esquery regex may not contain a slash: \x2F). */
const layeringConfigs = layering.map(({ files, never }) => ({
  files,
  rules: {
    'no-restricted-imports': [
      'error',
      { patterns: never.map(({ regex, why }) => ({ regex, caseSensitive: true, message: `${why}.` })) },
    ],
    'no-restricted-syntax': [
      'error',
      ...never.flatMap(({ regex, why }) => {
        const re = regex.replaceAll('/', '\\x2F');
        return [
          { selector: `ImportExpression[source.value=/${re}/]`, message: `${why}.` },
          { selector: `TSImportType[argument.literal.value=/${re}/]`, message: `${why}.` },
        ];
      }),
    ],
  },
}));

export default tseslint.config(
  { ignores: ['node_modules/', 'out/', 'build/', '.test-artifacts/', 'examples/', 'test/fixtures/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  prettier,
  {
    languageOptions: { ecmaVersion: 2022, sourceType: 'module' },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
    },
  },
  ...layeringConfigs,
  {
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
      },
    },
  },
);
