// Starts a real VS Code (code-server) on 127.0.0.1 with this extension loaded from the source folder.
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { codeServerEntry, node24Bin, repoRoot, venvPython } from './paths';

export interface CodeServer {
  url: string;
  port: number;
  workspace: string;
  stop(): Promise<void>;
  output(): string;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

export const userSettings = {
  'qatStudio.pythonPath': venvPython,
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'workbench.enableExperiments': false,
  'extensions.ignoreRecommendations': true,
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
  'chat.disableAIFeatures': true,
  'security.workspace.trust.enabled': false,
  // QAT Studio opens its walkthrough on first activation unless this says no: only the tests of that ask for it.
  'workbench.welcomePage.walkthroughs.openOnInstall': false,
};

/** A fresh copy of examples/<example> (so runs never write into the repo), plus any extra files. */
export function exampleWorkspace(extra: Record<string, string> = {}, example = 'digits'): string {
  const ws = mkdtempSync(path.join(tmpdir(), 'qat-ws-'));
  cpSync(path.join(repoRoot, 'examples', example), ws, {
    recursive: true,
    filter: (src) => !/__pycache__|[/\\]out$/.test(src),
  });
  for (const [name, text] of Object.entries(extra)) writeFileSync(path.join(ws, name), text);
  return ws;
}

/** `workspaceTrust: true` keeps VS Code's Workspace Trust on, so the folder opens in Restricted Mode; `settings`
 * go over userSettings. */
export async function startCodeServer(
  workspace: string,
  opts: { smokeTestDriver?: boolean; workspaceTrust?: boolean; settings?: Record<string, unknown> } = {},
): Promise<CodeServer> {
  const port = await freePort();
  const home = mkdtempSync(path.join(tmpdir(), 'qat-cs-'));
  const userData = path.join(home, 'user-data');
  mkdirSync(path.join(userData, 'User'), { recursive: true });
  const settings = {
    ...userSettings,
    ...(opts.workspaceTrust ? { 'security.workspace.trust.enabled': true } : {}),
    ...opts.settings,
  };
  writeFileSync(path.join(userData, 'User', 'settings.json'), JSON.stringify(settings, null, 2));
  const args = [
    codeServerEntry,
    '--bind-addr',
    `127.0.0.1:${port}`,
    '--auth',
    'none',
    '--disable-telemetry',
    '--disable-update-check',
    ...(opts.workspaceTrust ? [] : ['--disable-workspace-trust']),
    '--disable-getting-started-override',
    '--extensions-dir',
    path.join(home, 'extensions'),
    '--user-data-dir',
    userData,
  ];
  if (opts.smokeTestDriver) args.push('--vscode-option', 'enable-smoke-test-driver');
  args.push(workspace);
  const proc: ChildProcess = spawn(path.join(node24Bin, 'node'), args, {
    env: { ...process.env, PATH: `${node24Bin}:${process.env.PATH}` },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`code-server did not start within 60 s:\n${log}`)), 60_000);
    const onData = (chunk: Buffer) => {
      log += chunk.toString();
      if (/HTTP server listening on/.test(log)) {
        clearTimeout(timer);
        resolve(`http://127.0.0.1:${port}`);
      }
    };
    proc.stdout!.on('data', onData);
    proc.stderr!.on('data', onData);
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`code-server exited with ${code}:\n${log}`));
    });
  });
  return {
    url,
    port,
    workspace,
    output: () => log,
    stop: () =>
      new Promise<void>((resolve) => {
        if (proc.exitCode !== null) return resolve();
        proc.once('exit', () => resolve());
        proc.kill('SIGTERM');
        setTimeout(() => proc.kill('SIGKILL'), 5000).unref();
      }),
  };
}

/** URL that opens `folder` with this repo loaded as the extension under development (optionally running tests). */
export function devUrl(cs: CodeServer, folder: string, extensionTestsPath?: string): string {
  const remote = (p: string) => `vscode-remote://127.0.0.1:${cs.port}${p}`;
  const payload: string[][] = [['extensionDevelopmentPath', remote(repoRoot)]];
  if (extensionTestsPath) payload.push(['extensionTestsPath', remote(extensionTestsPath)]);
  return `${cs.url}/?folder=${encodeURIComponent(folder)}&payload=${encodeURIComponent(JSON.stringify(payload))}`;
}
