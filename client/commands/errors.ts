// Turns typed kernel errors into messages a user can act on.
import * as vscode from 'vscode';
import { KernelErrorCode } from '../../protocol/kernel';
import { KernelError } from '../kernel/kernel';

export async function reportKernelError(err: unknown, what: string, log: vscode.LogOutputChannel): Promise<void> {
  if (!(err instanceof KernelError)) {
    log.error(`${what} failed: ${(err as Error)?.stack ?? err}`);
    void vscode.window.showErrorMessage(`${what} failed: ${(err as Error)?.message ?? err}`);
    return;
  }
  const data = err.data;
  if (data?.traceback) log.error(data.traceback);
  if (err.code === KernelErrorCode.cancelled) {
    log.info(`${what} cancelled`);
    return;
  }
  if (data?.kind === 'packageMissing' && data.install) {
    const copy = 'Copy install command';
    if ((await vscode.window.showErrorMessage(`${err.message}\nInstall it with: ${data.install}`, copy)) === copy) {
      await vscode.env.clipboard.writeText(data.install);
    }
    return;
  }
  if (data?.location) {
    const open = 'Open';
    const where = `${data.location.file}:${data.location.line}`;
    const pick = await vscode.window.showErrorMessage(`${what} failed: ${err.message} (${where})`, open, 'Show Log');
    if (pick === open) {
      const line = Math.max(0, data.location.line - 1);
      await vscode.window.showTextDocument(vscode.Uri.file(data.location.file), {
        selection: new vscode.Range(line, 0, line, 0),
      });
    } else if (pick === 'Show Log') log.show();
    return;
  }
  if (data?.kind === 'writeFailed') {
    // The message names the file and what to do (free space, another output path); the log has the details.
    if ((await vscode.window.showErrorMessage(`${what} failed: ${err.message}`, 'Show Log')) === 'Show Log') log.show();
    return;
  }
  const suffix = data?.path ? ` (at ${data.path})` : '';
  void vscode.window.showErrorMessage(`${what} failed: ${err.message}${suffix}`);
}
