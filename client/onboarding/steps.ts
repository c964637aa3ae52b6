// The walkthrough's steps tick on what really happened, whatever UI started it: each step completes on a context
// key (package.json completionEvents onContext:...) that the extension sets once the thing is done, never on the
// command being invoked (a refused or cancelled command must not tick). Free of the vscode module.
import type { RunRecord } from '../runs/runStore';

export type StepId = 'kernel' | 'openConfig' | 'compare' | 'fix' | 'build';

/** The context key each walkthrough step completes on. */
export const STEP_CONTEXTS: Record<StepId, string> = {
  kernel: 'qatStudio.step.kernelStarted',
  openConfig: 'qatStudio.step.configOpened',
  compare: 'qatStudio.step.compared',
  fix: 'qatStudio.step.fixed',
  build: 'qatStudio.step.built',
};

/** The step a finished run completes: a comparison, a fix written, a build. */
export function stepOfRun(r: RunRecord): StepId | undefined {
  if (r.status !== 'done') return undefined;
  if (r.kind === 'compare') return 'compare';
  if (r.kind === 'fix') return 'fix';
  if (r.kind === 'build') return 'build';
  return undefined;
}

/** Is this file a QAT config (the openConfig step)? */
export const isQatConfig = (fsPath: string) => /\.qat\.ya?ml$/.test(fsPath);
