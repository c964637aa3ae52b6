// QAT: Create Kernel Environment — a virtual environment with the kernel's pinned requirements (progress,
// Cancel, pip's output in the QAT Studio log), then the kernel uses it: the setting is set and the kernel
// restarted. With the Python extension installed, its own environment creation is offered too.
import path from 'node:path';
import * as vscode from 'vscode';
import type { Ctx } from '../ctx';
import { createKernelEnv, CreateEnvError } from '../kernel/createEnv';
import { detectNvidiaGpu, planTorch, type GpuInfo, type TorchPlan, type TorchSetting } from '../kernel/torchBuild';

export interface CreateKernelEnvOptions {
  /** Skip the questions (tests, walkthrough links): the folder, requirements and pip arguments to use. */
  dir?: string;
  requirements?: string;
  pipArgs?: string[];
  basePython?: string;
  /** CPU or CUDA torch, or auto (detect an NVIDIA GPU); default: the qatStudio.kernelEnv.torch setting. */
  torch?: TorchSetting;
}

/** With the setting on auto and a person to ask: the detected build first, the other one offered. */
async function chooseTorch(
  setting: TorchSetting,
  gpu: GpuInfo,
  pipArgs: string[],
  ask: boolean,
): Promise<TorchPlan | undefined> {
  const plan = planTorch(setting, gpu, pipArgs);
  if (!ask || setting !== 'auto' || plan.build === 'pypi') return plan;
  const other = planTorch(plan.build === 'cuda' ? 'cpu' : 'cuda', gpu, pipArgs);
  const item = (p: TorchPlan, detected: boolean) => ({
    label: p.build === 'cuda' ? `CUDA torch (${p.tag})` : 'CPU torch',
    description: detected ? 'detected' : undefined,
    detail: p.reason,
    plan: p,
  });
  const pick = await vscode.window.showQuickPick([item(plan, true), item(other, false)], {
    title: 'QAT: Create Kernel Environment — torch build',
    placeHolder: 'qatStudio.kernelEnv.torch sets this without asking',
  });
  return pick?.plan;
}

export function createKernelEnvironment(ctx: Ctx) {
  return async (options: CreateKernelEnvOptions = {}): Promise<string | undefined> => {
    const folder = vscode.workspace.workspaceFolders?.[0];
    const settings = vscode.workspace.getConfiguration('qatStudio', folder?.uri);
    const ask = !options.dir;
    if (ask && vscode.extensions.getExtension('ms-python.python')) {
      const own = 'QAT Studio: .venv with the pinned requirements';
      const pick = await vscode.window.showQuickPick([own, 'Python extension: Create Environment...'], {
        title: 'QAT: Create Kernel Environment',
      });
      if (!pick) return undefined;
      if (pick !== own) {
        // The Python extension selects what it creates; the kernel follows its interpreter when the setting is empty.
        await vscode.commands.executeCommand('python.createEnvironment');
        ctx.kernel.stop();
        return undefined;
      }
    }
    const requirements =
      options.requirements ??
      (settings.get<string>('kernelEnv.requirements')?.trim() ||
        path.join(ctx.extensionUri.fsPath, 'python-helpers', 'requirements.txt'));
    const pipArgs = [...(options.pipArgs ?? settings.get<string[]>('kernelEnv.pipArgs') ?? [])];
    const dir =
      options.dir ??
      (folder ? path.join(folder.uri.fsPath, '.venv') : path.join(ctx.context.globalStorageUri.fsPath, 'kernel-venv'));
    const basePython = options.basePython ?? (process.platform === 'win32' ? 'python' : 'python3');
    const torchSetting = options.torch ?? settings.get<TorchSetting>('kernelEnv.torch') ?? 'auto';
    const gpu = await detectNvidiaGpu();
    ctx.log.info(`create kernel environment: GPU look-up: ${gpu.detail}`);
    const torch = await chooseTorch(torchSetting, gpu, pipArgs, ask);
    if (!torch) return undefined;
    ctx.log.info(`create kernel environment: ${torch.reason}`);
    pipArgs.push(...torch.pipArgs);
    ctx.log.info(`create kernel environment in ${dir} from ${requirements} ${pipArgs.join(' ')}`);
    const stop = new AbortController();
    try {
      const python = await vscode.window.withProgress(
        {
          location: vscode.ProgressLocation.Notification,
          title: `QAT: Create Kernel Environment (${torch.build === 'cuda' ? `CUDA torch, ${torch.tag}` : torch.build === 'cpu' ? 'CPU torch' : 'torch'})`,
          cancellable: true,
        },
        (progress, token) => {
          token.onCancellationRequested(() => stop.abort());
          let last = 0;
          return createKernelEnv({
            basePython,
            dir,
            requirements,
            pipArgs,
            signal: stop.signal,
            onLine: (l) => ctx.log.info(`[pip] ${l}`),
            onProgress: (f, message) => {
              progress.report({ message, increment: Math.max(0, (f - last) * 100) });
              last = Math.max(last, f);
            },
          });
        },
      );
      await settings.update(
        'pythonPath',
        python,
        folder ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global,
      );
      ctx.kernel.stop();
      ctx.log.info(`kernel environment ready: ${python}`);
      if (ask) void vscode.window.showInformationMessage(`The kernel now runs ${python}.`);
      return python;
    } catch (err) {
      if (err instanceof CreateEnvError && err.cancelled) {
        ctx.log.info('create kernel environment: cancelled, nothing kept');
        return undefined;
      }
      ctx.log.error(`create kernel environment: ${(err as Error).message}`);
      const show = 'Show Log';
      if ((await vscode.window.showErrorMessage((err as Error).message.split('\n')[0], show)) === show) ctx.log.show();
      return undefined;
    }
  };
}
