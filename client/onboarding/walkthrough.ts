// The walkthrough: opened on the extension's first activation (unless the user's
// workbench.welcomePage.walkthroughs.openOnInstall says no), continued in the window Open an Example opens (with
// the example's config in an editor), and its steps ticked on real completion (steps.ts).
import * as vscode from 'vscode';
import type { Kernel } from '../kernel/kernel';
import type { RunStore } from '../runs/runStore';
import { STEP_CONTEXTS, isQatConfig, stepOfRun, type StepId } from './steps';

export const WALKTHROUGH = 'qat-studio.qat-studio#qatStudio.gettingStarted';
const SHOWN = 'qatStudio.walkthroughShown';
const PENDING_EXAMPLE = 'qatStudio.pendingExample';
/** From activation until the walkthrough is surely registered (see WalkthroughSteps.registered). */
export const REGISTRATION_WAIT_MS = 7000;

export interface PendingExample {
  /** The example's folder, about to be opened. */
  folder: string;
  /** Its config, relative to the folder. */
  config: string;
}

/** Remembers the example Open an Example is about to open, so that window opens its config (see onActivation). */
export function expectExample(context: vscode.ExtensionContext, pending: PendingExample): Thenable<void> {
  return context.globalState.update(PENDING_EXAMPLE, { ...pending, at: Date.now() });
}

/**
 * On activation: in the folder Open an Example just opened, its config in an editor and the walkthrough beside it
 * at the next step; else, on the very first activation, the walkthrough (unless openOnInstall is off).
 * Returns what it opened.
 */
export async function onActivation(context: vscode.ExtensionContext): Promise<'example' | 'walkthrough' | undefined> {
  const pending = context.globalState.get<PendingExample & { at: number }>(PENDING_EXAMPLE);
  const folder = pending && vscode.workspace.workspaceFolders?.find((f) => f.uri.fsPath === pending.folder);
  if (pending && folder) {
    await context.globalState.update(PENDING_EXAMPLE, undefined);
    await context.globalState.update(SHOWN, true);
    await vscode.window.showTextDocument(vscode.Uri.joinPath(folder.uri, pending.config), { preview: false });
    await vscode.commands.executeCommand(
      'workbench.action.openWalkthrough',
      { category: WALKTHROUGH, step: 'compare' },
      {
        toSide: true,
        inactive: true,
      },
    );
    return 'example';
  }
  // A pending example whose window never opened (cancelled, or another folder) goes stale after a day.
  if (pending && Date.now() - pending.at > 86_400_000) await context.globalState.update(PENDING_EXAMPLE, undefined);
  if (context.globalState.get(SHOWN)) return undefined;
  await context.globalState.update(SHOWN, true);
  if (
    vscode.workspace.getConfiguration('workbench').get<boolean>('welcomePage.walkthroughs.openOnInstall', true) ===
    false
  )
    return undefined;
  await openWalkthrough();
  return 'walkthrough';
}

/** The walkthrough in the active group, kept open (not a preview a click on a file would replace). */
export async function openWalkthrough(): Promise<void> {
  const isWalkthrough = (t: vscode.Tab | undefined) =>
    !!t && t.input === undefined && /Welcome|Walkthrough/.test(t.label);
  const shown = new Promise<vscode.Tab | undefined>((resolve) => {
    const done = (t: vscode.Tab | undefined) => {
      sub.dispose();
      clearTimeout(timer);
      resolve(t);
    };
    const sub = vscode.window.tabGroups.onDidChangeTabs(() => {
      const t = vscode.window.tabGroups.activeTabGroup.activeTab;
      if (isWalkthrough(t)) done(t);
    });
    const timer = setTimeout(() => done(undefined), 5000);
  });
  await vscode.commands.executeCommand('workbench.action.openWalkthrough', WALKTHROUGH, false);
  const tab = isWalkthrough(vscode.window.tabGroups.activeTabGroup.activeTab)
    ? vscode.window.tabGroups.activeTabGroup.activeTab
    : await shown;
  if (tab?.isPreview) await vscode.commands.executeCommand('workbench.action.keepEditor');
}

/** Sets the steps' context keys as things get done; `done` lists the steps done in this window. */
export class WalkthroughSteps implements vscode.Disposable {
  readonly done = new Set<StepId>();
  private readonly subs: vscode.Disposable[] = [];
  /**
   * VS Code registers an extension's walkthrough a while after the window starts (it waits up to 5 s for an
   * experiment service), and a step whose onContext key is already true when it registers never ticks in that
   * window. So the keys are set once that wait is surely over; what is done meanwhile ticks then.
   */
  private readonly registered = new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, REGISTRATION_WAIT_MS);
    this.subs.push({ dispose: () => clearTimeout(timer) });
  });

  constructor(runs: RunStore, kernel: Kernel) {
    const fromRuns = () => {
      for (const r of runs.list()) {
        const step = stepOfRun(r);
        if (step) this.complete(step);
      }
    };
    const fromEditors = () => {
      if (vscode.window.visibleTextEditors.some((e) => isQatConfig(e.document.uri.fsPath))) this.complete('openConfig');
    };
    this.subs.push(
      runs.onDidChange(fromRuns),
      kernel.onDidChangeState((s) => s === 'idle' && this.complete('kernel')),
      vscode.window.onDidChangeVisibleTextEditors(fromEditors),
    );
    fromRuns();
    fromEditors();
  }

  complete(step: StepId): void {
    if (this.done.has(step)) return;
    this.done.add(step);
    void this.registered.then(() => vscode.commands.executeCommand('setContext', STEP_CONTEXTS[step], true));
  }

  dispose(): void {
    for (const s of this.subs.splice(0)) s.dispose();
  }
}
