// The closed loop after a fix: the model before it measured, the fix saved, QAT again, Compare Layers again, the
// model after it measured, and both side by side in the run comparison. Each step is a recorded run.
import path from 'node:path';
import * as vscode from 'vscode';
import type { CompareLayersResult, EvalAccuracyResult, QatConvertResult, QatTrainResult } from '../../protocol/kernel';
import type { Ctx } from '../ctx';
import { compareLayers } from '../commands/compareLayers';
import { trainFigures, verifyFigures } from '../runs/figures';
import type { RunColumn } from '../runs/present';
import type { RunRecord } from '../runs/runStore';
import { showCompareRuns } from '../views/compareRunsPanel';

export interface Measured {
  accuracy: EvalAccuracyResult;
  convert: QatConvertResult;
}

export interface LoopOutcome {
  before: Measured;
  after: Measured;
  train: QatTrainResult;
  compare: CompareLayersResult;
  columns: RunColumn[];
  panel: vscode.WebviewPanel;
}

/** One kernel method with a cancellable progress notification, its progress in the log. */
function step<R>(
  ctx: Ctx,
  title: string,
  run: (onProgress: (p: { message: string; stage: string }) => void, token: vscode.CancellationToken) => Promise<R>,
) {
  return vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title, cancellable: true },
    (progress, token) =>
      run((p) => {
        progress.report({ message: p.message });
        ctx.log.info(`[${p.stage}] ${p.message}`);
      }, token),
  );
}

/** Accuracy at every stage (FP32, QAT float, fake-quant, INT8) and INT8 size of the config's trained model
 * (the kernel reuses the one it trained for this config text), recorded as an evaluate run. */
export function measure(ctx: Ctx, config: string, detail: string): Promise<Measured> {
  return ctx.trackRun(
    'evaluate',
    config,
    () =>
      step(ctx, `QAT: Measure the model ${detail}`, async (onProgress, token) => ({
        accuracy: await ctx.kernel.request('eval/accuracy', { config }, { token, onProgress }),
        convert: await ctx.kernel.request('qat/convert', { config }, { token, onProgress }),
      })),
    verifyFigures,
    detail,
  );
}

const latest = (ctx: Ctx, kind: RunRecord['kind'], config: string, detail?: string) =>
  ctx.runs
    .list()
    .find((r) => r.kind === kind && r.config === config && r.status === 'done' && (!detail || r.detail === detail));

/**
 * After the fix is in the editor but not yet saved: measures the model before it (from the saved config), saves
 * the config, trains with it, compares the layers again and measures it, then opens the run comparison.
 */
export async function verifyFix(ctx: Ctx, doc: vscode.TextDocument, title: string): Promise<LoopOutcome | undefined> {
  const config = doc.uri.fsPath;
  const beforeCompare = latest(ctx, 'compare', config);
  const before = await measure(ctx, config, 'before fix');
  const beforeRun = latest(ctx, 'evaluate', config, 'before fix');
  if (!(await doc.save())) throw new Error(`${path.basename(config)} could not be saved.`);
  const train = await ctx.trackRun(
    'train',
    config,
    () =>
      step(ctx, 'QAT: Train with the fix', (onProgress, token) =>
        ctx.kernel.request('qat/train', { config }, { token, onProgress }),
      ),
    trainFigures,
    'after fix',
  );
  const trainRun = latest(ctx, 'train', config, 'after fix');
  const compare = await compareLayers(ctx)(doc.uri);
  if (!compare) return undefined;
  const afterCompare = latest(ctx, 'compare', config);
  const after = await measure(ctx, config, 'after fix');
  const afterRun = latest(ctx, 'evaluate', config, 'after fix');
  const columns: RunColumn[] = [
    { title: 'before fix', runs: [beforeRun, beforeCompare].filter((r): r is RunRecord => !!r) },
    { title: `after fix (${title})`, runs: [afterRun, afterCompare, trainRun].filter((r): r is RunRecord => !!r) },
  ];
  const panel = showCompareRuns(columns, `Before / After: ${path.basename(config)}`);
  return { before, after, train, compare, columns, panel };
}
