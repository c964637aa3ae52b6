// QAT: Build for Target... — pick one of the config's targets or a preset, then run it as a `qat` task
// (progress in the terminal, Cancel with the task); the build report opens when it succeeds.
import path from 'node:path';
import * as vscode from 'vscode';
import { parse } from 'yaml';
import type { Ctx } from '../ctx';
import { QatTaskProvider } from '../tasks/qatTasks';
import { configFor } from './configPick';
import { LIMITS, readWorkspaceFile } from '../../common/workspaceFile';

const PRESETS = [
  { label: 'x86-64', detail: 'This machine: LLVM for the host CPU' },
  { label: 'aarch64', detail: 'Arm 64-bit with NEON, cross-compiled (needs g++-aarch64-linux-gnu)' },
  { label: 'cuda', detail: 'NVIDIA GPU (needs a GPU to detect its architecture)' },
];

export function buildForTarget(ctx: Ctx) {
  const tasks = new QatTaskProvider(ctx);
  return async (uri?: vscode.Uri, target?: string): Promise<number | undefined> => {
    const config = await configFor(uri);
    const folder = config && vscode.workspace.getWorkspaceFolder(config);
    if (!config || !folder) {
      void vscode.window.showWarningMessage('No QAT config (*.qat.yaml) found in the workspace.');
      return undefined;
    }
    if (!target) {
      let named: Array<{ name?: string; tvm?: unknown }> = [];
      try {
        named =
          (parse(await readWorkspaceFile(config.fsPath, LIMITS.config)) as { targets?: typeof named })?.targets ?? [];
      } catch {
        // A broken config still offers the presets; the language server shows what is wrong with it.
      }
      const items = [
        ...named
          .filter((t) => t.name)
          .map((t) => ({ label: t.name!, detail: `from ${path.basename(config.fsPath)}: ${JSON.stringify(t.tvm)}` })),
        ...PRESETS,
      ];
      target = (
        await vscode.window.showQuickPick(items, {
          title: 'QAT: Build for Target',
          placeHolder: 'Target to compile the INT8 model for',
          ignoreFocusOut: true,
        })
      )?.label;
      if (!target) return undefined;
    }
    const task = tasks.makeTask(
      { type: 'qat', job: 'build', config: path.relative(folder.uri.fsPath, config.fsPath), target },
      folder,
    );
    ctx.log.info(`build/tvm ${config.fsPath} for ${target}`);
    const execution = await vscode.tasks.executeTask(task);
    return new Promise((resolve) => {
      const sub = vscode.tasks.onDidEndTaskProcess((e) => {
        if (e.execution !== execution) return;
        sub.dispose();
        resolve(e.exitCode);
      });
    });
  };
}
