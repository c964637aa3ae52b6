// Status bar item showing the kernel's state; clicking it stops a running kernel (cancelling its work).
import * as vscode from 'vscode';
import type { Kernel, KernelState } from './kernel';

const TEXT: Record<KernelState, string> = {
  stopped: '$(circle-outline) QAT kernel',
  idle: '$(circle-filled) QAT kernel',
  busy: '$(loading~spin) QAT kernel',
};

export function kernelStatusBar(kernel: Kernel): vscode.Disposable {
  const item = vscode.window.createStatusBarItem('qatStudio.kernel', vscode.StatusBarAlignment.Left, 10);
  item.name = 'QAT Studio kernel';
  const update = () => {
    const state = kernel.state;
    item.text = TEXT[state];
    item.tooltip =
      state === 'stopped'
        ? 'The QAT kernel is not running; it starts with the first job.'
        : `The QAT kernel is ${state}${kernel.interpreter ? ` (${kernel.interpreter.path})` : ''}. Click to stop it.`;
    item.command = state === 'stopped' ? undefined : 'qatStudio.stopKernel';
    item.show();
  };
  update();
  const sub = kernel.onDidChangeState(update);
  return vscode.Disposable.from(item, sub);
}
