// Owns every lifetime: the output channel, the language client, the kernel and the registrations. The commands
// come as a table (extension.ts builds it): command modules import Ctx, Ctx imports none of them.
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { OnnxEditorProvider } from './editors/onnxEditor';
import { Kernel } from './kernel/kernel';
import { kernelStatusBar } from './kernel/statusBar';
import { createLanguageClient } from './languageClient';
import { KernelErrorCode } from '../protocol/kernel';
import { KernelError } from './kernel/kernel';
import { RunStore, type RunKind, type RunRecord } from './runs/runStore';
import type { RunSummary } from './runs/figures';
import { RunsView } from './views/runsView';
import { showCompareRuns } from './views/compareRunsPanel';
import { LayersView, revealLayer } from './views/layersView';
import { layoutCache } from './editors/layoutCache';
import { ArtifactsView, openArtifact, revealArtifact } from './views/artifactsView';
import { WalkthroughSteps, onActivation, openWalkthrough } from './onboarding/walkthrough';
import { LIMITS, readWorkspaceFile } from '../common/workspaceFile';

export interface TrackOptions {
  /** What the run was for (shown after its kind). */
  detail?: string;
  /** What the record holds from the start (the config text is read from the file when not given). */
  holds?: Pick<RunRecord, 'configText' | 'model' | 'basedOn'>;
  onRecord?: (run: RunRecord) => void;
}

/** A command's handler, made from the Ctx when the commands are registered. */
export type CommandFactory = (ctx: Ctx) => (...args: never[]) => unknown;

export interface Command {
  make: CommandFactory;
  /** Runs user code (the kernel): in Restricted Mode it says why it cannot run instead. */
  needsTrust?: boolean;
}

/** What the extension contributes through the Ctx, which registers it and disposes of it. */
export interface Contributions {
  /** Every command module's command, by id. */
  commands: Record<string, Command>;
  /** Other registrations made with the Ctx (the `qat` task provider). */
  providers?: Array<(ctx: Ctx) => vscode.Disposable>;
}

export class Ctx implements vscode.Disposable {
  readonly log: vscode.LogOutputChannel;
  readonly kernel: Kernel;
  readonly onnxEditor: OnnxEditorProvider;
  /** The runs started from this workspace, kept in its out/qat-runs.json. */
  readonly runs: RunStore;
  readonly layersView: LayersView;
  readonly artifactsView: ArtifactsView;
  /** Graph layouts kept per file content for every graph view of the session (editors/layoutCache.ts). */
  readonly layoutCache = layoutCache;
  /** The walkthrough steps done in this window (their context keys set). */
  steps?: WalkthroughSteps;
  /** What activation opened: the example's config and the walkthrough, or the walkthrough on a first run. */
  onboarding?: Promise<'example' | 'walkthrough' | undefined>;
  private client?: LanguageClient;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    readonly context: vscode.ExtensionContext,
    private readonly contributions: Contributions,
  ) {
    this.log = this.track(vscode.window.createOutputChannel('QAT Studio', { log: true }));
    this.kernel = this.track(new Kernel(context.extensionPath, this.log));
    this.onnxEditor = new OnnxEditorProvider(context.extensionUri, this.log);
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? context.globalStorageUri.fsPath;
    this.runs = RunStore.forWorkspace(folder);
    this.layersView = this.track(new LayersView());
    this.artifactsView = this.track(new ArtifactsView());
  }

  /**
   * Runs `work` as a recorded run: the Runs view shows it going, then its status and figures. The record holds
   * the config's text as the run read it (unless `options.holds` says otherwise) and the model its result names.
   */
  async trackRun<T>(
    kind: RunKind,
    config: string,
    work: () => PromiseLike<T>,
    describe: (result: T) => RunSummary,
    options: string | TrackOptions = {},
  ): Promise<T> {
    const o = typeof options === 'string' ? { detail: options } : options;
    const configText = o.holds?.configText ?? (await readWorkspaceFile(config, LIMITS.config).catch(() => undefined));
    return this.runs.track(kind, config, work, describe, {
      ...(o.detail ? { detail: o.detail } : {}),
      holds: { ...o.holds, configText },
      ...(o.onRecord ? { onRecord: o.onRecord } : {}),
      isCancel: (err) => err instanceof KernelError && err.code === KernelErrorCode.cancelled,
    });
  }

  get extensionUri(): vscode.Uri {
    return this.context.extensionUri;
  }

  track<T extends vscode.Disposable>(d: T): T {
    this.disposables.push(d);
    return d;
  }

  async activate(): Promise<void> {
    for (const [id, command] of Object.entries(this.contributions.commands)) {
      const run = command.make(this);
      this.track(vscode.commands.registerCommand(id, command.needsTrust ? requireTrust(id, run) : run));
    }
    this.track(vscode.commands.registerCommand('qatStudio.openWalkthrough', openWalkthrough));
    this.track(this.onnxEditor.register());
    for (const provider of this.contributions.providers ?? []) this.track(provider(this));
    this.track(kernelStatusBar(this.kernel));
    this.track(vscode.commands.registerCommand('qatStudio.stopKernel', () => this.kernel.stop()));
    await this.runs.load();
    this.steps = this.track(new WalkthroughSteps(this.runs, this.kernel));
    const runsView = this.track(new RunsView(this.runs));
    this.track(
      vscode.commands.registerCommand('qatStudio.compareRuns', (clicked?: RunRecord, selected?: RunRecord[]) => {
        const picked = selected?.length ? selected : runsView.selected();
        const runs = picked.length ? picked : clicked ? [clicked] : [];
        if (runs.length < 2) {
          void vscode.window.showInformationMessage('Select two runs in the Runs view (Ctrl+click) to compare them.');
          return undefined;
        }
        return showCompareRuns(runs);
      }),
    );
    this.track(
      vscode.commands.registerCommand('qatStudio.compareRunsById', (ids: string[]) =>
        showCompareRuns(ids.map((id) => this.runs.get(id)).filter((r): r is RunRecord => !!r)),
      ),
    );
    this.track(vscode.commands.registerCommand('qatStudio.revealLayer', revealLayer(this.layersView, this.log)));
    const artifacts = this.artifactsView;
    this.track(vscode.commands.registerCommand('qatStudio.openArtifact', openArtifact));
    this.track(vscode.commands.registerCommand('qatStudio.revealArtifact', revealArtifact));
    this.track(vscode.commands.registerCommand('qatStudio.refreshArtifacts', () => artifacts.refresh()));
    this.track(this.runs.onDidChange(() => artifacts.refresh()));
    this.track(
      vscode.workspace.onDidGrantWorkspaceTrust(() => this.log.info('workspace trusted: the kernel may start')),
    );
    this.client = createLanguageClient(this.context, this.log);
    await this.client.start();
    this.onboarding = onActivation(this.context).catch((err: Error) => {
      this.log.warn(`walkthrough: ${err.message}`);
      return undefined;
    });
  }

  async dispose(): Promise<void> {
    await this.client?.stop().catch(() => undefined);
    for (const d of this.disposables.splice(0).reverse()) d.dispose();
  }
}

/** Kernel commands run user code, so in Restricted Mode they say why they cannot run, and what still works. */
function requireTrust<A extends unknown[], R>(id: string, run: (...args: A) => R) {
  return async (...args: A): Promise<Awaited<R> | undefined> => {
    if (vscode.workspace.isTrusted) return await run(...args);
    await explainRestricted(commandTitle(id));
    return undefined;
  };
}

function commandTitle(id: string): string {
  const commands = (
    vscode.extensions.getExtension('qat-studio.qat-studio')?.packageJSON as {
      contributes?: { commands?: Array<{ command: string; title: string }> };
    }
  )?.contributes?.commands;
  return commands?.find((c) => c.command === id)?.title ?? id;
}

/** The Restricted Mode message for a refused command, with the action that lifts it. */
export async function explainRestricted(what: string): Promise<void> {
  const manage = 'Manage Workspace Trust';
  const pick = await vscode.window.showWarningMessage(
    `${what} needs a trusted folder: QAT Studio runs your model and data code (the Python kernel, training, ` +
      'comparisons, builds) only in a trusted workspace. In Restricted Mode it still checks configs and scripts ' +
      'with their quick fixes. Trust this folder to run it.',
    manage,
  );
  if (pick === manage) await vscode.commands.executeCommand('workbench.trust.manage');
}
