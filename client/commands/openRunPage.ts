// Opening a run from the Runs view: a sensitivity or search run opens its page again from the result it kept;
// any other run shows its summary (views/runsView.ts openRun).
import * as vscode from 'vscode';
import type { MixedPrecisionResult, SensitivityResult } from '../../protocol/kernel';
import type { Ctx } from '../ctx';
import type { RunRecord } from '../runs/runStore';
import { openRun } from '../views/runsView';
import { showSearchResult } from './searchMixedPrecision';
import { showSensitivityResult } from './sensitivity';

/** Opens again the page of a sensitivity or search run from the result it kept; false when it has none. */
export async function openRunPage(ctx: Ctx, run: RunRecord): Promise<boolean> {
  if (run.kind !== 'sensitivity' && run.kind !== 'search') return false;
  const result = await ctx.runs.readResult<SensitivityResult & MixedPrecisionResult>(run);
  if (!result) return false;
  if ((result as { flow?: string }).flow === 'torchao') return false; // no page for a torchao search: its summary
  const config = vscode.Uri.file(run.config);
  if (run.kind === 'sensitivity') showSensitivityResult(config, result);
  else showSearchResult(ctx, config, result);
  return true;
}

/** The qatStudio.openRun command: the clicked run's page, else its summary. */
export function openRunCommand(ctx: Ctx) {
  return (r?: RunRecord): Promise<void> => openRun(r, (run) => openRunPage(ctx, run));
}
