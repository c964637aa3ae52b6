// What a fix run holds and how Before / After reads it: the state before the fix is the compare run of the config
// text before it (and that run's model), never the config file as it is now. Free of the vscode module.
import path from 'node:path';
import type { RunRecord } from '../runs/runStore';

/** The compare run `run` when it is a finished comparison of `config` with exactly the text `text`. */
export function comparisonOf(run: RunRecord | undefined, config: string, text: string): RunRecord | undefined {
  return run?.kind === 'compare' && run.status === 'done' && run.config === config && run.configText === text
    ? run
    : undefined;
}

/** Why Before / After cannot run for `fix` with the config's text now `current`; undefined when it can. */
export function fixProblem(fix: RunRecord, basis: RunRecord | undefined, current: string): string | undefined {
  const name = path.basename(fix.config);
  if (fix.kind !== 'fix' || fix.status !== 'done') return `That run is not a fix that went through.`;
  if (!basis || comparisonOf(basis, fix.config, fix.configText ?? '') !== basis)
    return `Before / After needs the comparison of ${name} before the fix: compare the layers, then apply the fix.`;
  if (current === fix.configText) return `The fix is no longer in ${name} (undone?): there is nothing to retrain.`;
  return undefined;
}

/** The before column: the compare run before the fix, then that model's measurement when it is the same model. */
export function beforeColumnRuns(basis: RunRecord, measured: RunRecord | undefined): RunRecord[] {
  const same = measured?.status === 'done' && measured.model !== undefined && measured.model === basis.model;
  return same ? [basis, measured] : [basis];
}
