// Owns every lifetime: the output channel, the language client, the kernel and the registrations.
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { compareLayer, compareLayers } from './commands/compareLayers';
import { analyzeSensitivity } from './commands/sensitivity';
import { buildForTarget } from './commands/buildForTarget';
import { restartKernel, showKernelInfo } from './commands/kernelInfo';
import { keepLayerFp16, revealLayerSource } from './commands/layerActions';
import { openGraphsSideBySide } from './commands/openGraphsSideBySide';
import { openConfig } from './commands/openConfig';
import { showModelGraph } from './commands/showModelGraph';
import { OnnxEditorProvider } from './editors/onnxEditor';
import { Kernel } from './kernel/kernel';
import { kernelStatusBar } from './kernel/statusBar';
import { createLanguageClient } from './languageClient';
import { QatTaskProvider } from './tasks/qatTasks';

export class Ctx implements vscode.Disposable {
  readonly log: vscode.LogOutputChannel;
  readonly kernel: Kernel;
  readonly onnxEditor: OnnxEditorProvider;
  private client?: LanguageClient;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(readonly context: vscode.ExtensionContext) {
    this.log = this.track(vscode.window.createOutputChannel('QAT Studio', { log: true }));
    this.kernel = this.track(new Kernel(context.extensionPath, this.log));
    this.onnxEditor = new OnnxEditorProvider(context.extensionUri, this.log);
  }

  get extensionUri(): vscode.Uri {
    return this.context.extensionUri;
  }

  track<T extends vscode.Disposable>(d: T): T {
    this.disposables.push(d);
    return d;
  }

  async activate(): Promise<void> {
    const commands: Record<string, (ctx: Ctx) => (...args: never[]) => unknown> = {
      'qatStudio.compareLayers': compareLayers,
      'qatStudio.compareLayer': compareLayer,
      'qatStudio.analyzeSensitivity': analyzeSensitivity,
      'qatStudio.showKernelInfo': showKernelInfo,
      'qatStudio.restartKernel': restartKernel,
      'qatStudio.showModelGraph': showModelGraph,
    };
    for (const [id, factory] of Object.entries(commands))
      this.track(vscode.commands.registerCommand(id, requireTrust(factory(this))));
    // Editing text and opening files run no user code: allowed in Restricted Mode too.
    this.track(vscode.commands.registerCommand('qatStudio.keepLayerFp16', keepLayerFp16(this)));
    this.track(vscode.commands.registerCommand('qatStudio.revealLayerSource', revealLayerSource()));
    this.track(vscode.commands.registerCommand('qatStudio.openGraphsSideBySide', openGraphsSideBySide()));
    this.track(vscode.commands.registerCommand('qatStudio.openConfig', openConfig()));
    this.track(this.onnxEditor.register());
    const tasks = new QatTaskProvider(this);
    this.track(tasks.register());
    this.track(vscode.commands.registerCommand('qatStudio.buildForTarget', requireTrust(buildForTarget(this, tasks))));
    this.track(kernelStatusBar(this.kernel));
    this.track(vscode.commands.registerCommand('qatStudio.stopKernel', () => this.kernel.stop()));
    this.track(
      vscode.workspace.onDidGrantWorkspaceTrust(() => this.log.info('workspace trusted: the kernel may start')),
    );
    this.client = createLanguageClient(this.context, this.log);
    await this.client.start();
  }

  async dispose(): Promise<void> {
    await this.client?.stop().catch(() => undefined);
    for (const d of this.disposables.splice(0).reverse()) d.dispose();
  }
}

/** Kernel commands run user code, so in Restricted Mode they explain why they cannot run instead. */
function requireTrust<A extends unknown[], R>(run: (...args: A) => R) {
  return async (...args: A): Promise<Awaited<R> | undefined> => {
    if (vscode.workspace.isTrusted) return await run(...args);
    const manage = 'Manage Workspace Trust';
    const pick = await vscode.window.showWarningMessage(
      'QAT Studio runs your model and data code only in a trusted workspace. Trust this folder to compare layers or start the kernel.',
      manage,
    );
    if (pick === manage) await vscode.commands.executeCommand('workbench.trust.manage');
    return undefined;
  };
}
