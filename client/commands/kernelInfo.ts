// QAT: Show Kernel Info — versions of Python and the ML packages the kernel sees; QAT: Restart Kernel.
import * as vscode from 'vscode';
import type { KernelInfoResult } from '../../protocol/kernel';
import type { Ctx } from '../ctx';
import { reportKernelError } from './errors';

export function showKernelInfo(ctx: Ctx) {
  return async (): Promise<KernelInfoResult | undefined> => {
    try {
      const info = await ctx.kernel.request('kernel/info', {});
      ctx.log.info(`kernel: Python ${info.python} at ${info.executable} (${info.platform})`);
      const lines = Object.entries(info.packages).map(([name, p]) =>
        p.version
          ? `${name} ${p.version}`
          : `${name} missing (${p.error ?? 'not importable'})${p.install ? ` — install: ${p.install}` : ''}`,
      );
      for (const l of lines) ctx.log.info(`  ${l}`);
      const missing = Object.values(info.packages).filter((p) => !p.version).length;
      void vscode.window.showInformationMessage(
        `QAT kernel: Python ${info.python} · ${lines.filter((l) => !l.includes('missing')).join(' · ')}${missing ? ` · ${missing} missing (see log)` : ''}`,
      );
      return info;
    } catch (err) {
      await reportKernelError(err, 'Kernel info', ctx.log);
      return undefined;
    }
  };
}

export function restartKernel(ctx: Ctx) {
  return async (): Promise<void> => {
    ctx.kernel.stop();
    await showKernelInfo(ctx)();
  };
}
