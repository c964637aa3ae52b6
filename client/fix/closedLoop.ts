// The closed loop after a fix. The fix is a recorded run that holds the state before it: the config text, the
// compare run the fix was suggested from and the kernel's id of the model that run compared. Before / After reads
// the "before" from there (the figures of that compare run, and the same model measured again by its id), never
// from the config file, which the editor may have saved with the fix already (files.autoSave). Then QAT with the
// fix, Compare Layers again, the new model measured, and both side by side in the run comparison.
import path from 'node:path';
import * as vscode from 'vscode';
import type { CompareLayersResult, EvalAccuracyResult, QatConvertResult, QatTrainResult } from '../../protocol/kernel';
import { KernelErrorCode } from '../../protocol/kernel';
import type { Ctx } from '../ctx';
import { compareLayers } from '../commands/compareLayers';
import { KernelError } from '../kernel/kernel';
import { trainFigures, verifyFigures } from '../runs/figures';
import type { RunColumn } from '../runs/present';
import type { RunRecord } from '../runs/runStore';
import { showCompareRuns } from '../views/compareRunsPanel';
import { beforeColumnRuns, fixProblem } from './fixRecord';

export interface Measured {
  accuracy: EvalAccuracyResult;
  convert: QatConvertResult;
}

export interface LoopOutcome {
  fix: RunRecord;
  /** The model before the fix, measured again by its id; undefined when the kernel no longer holds it (then the
   * before column has the figures of the compare run before the fix only). */
  before?: Measured;
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

/**
 * Accuracy at every stage (FP32, QAT float, fake-quant, INT8) and INT8 size of a trained model, recorded as an
 * evaluate run: the model `of.model` (a kernel id) when given, else the config's (the kernel reuses the one it
 * trained for the config file as it is now).
 */
export function measure(
  ctx: Ctx,
  config: string,
  detail: string,
  of: { model?: string; configText?: string } = {},
  onRecord?: (run: RunRecord) => void,
): Promise<Measured> {
  const params = { config, ...(of.model ? { model: of.model } : {}) };
  return ctx.trackRun(
    'evaluate',
    config,
    () =>
      step(ctx, `QAT: Measure the model ${detail}`, async (onProgress, token) => ({
        accuracy: await ctx.kernel.request('eval/accuracy', params, { token, onProgress }),
        convert: await ctx.kernel.request('qat/convert', params, { token, onProgress }),
      })),
    verifyFigures,
    { detail, holds: { model: of.model, configText: of.configText }, ...(onRecord ? { onRecord } : {}) },
  );
}

/** The latest fix run of `config` that went through. */
export function latestFix(ctx: Ctx, config: string): RunRecord | undefined {
  return ctx.runs.list().find((r) => r.kind === 'fix' && r.config === config && r.status === 'done');
}

/**
 * Records a fix: `apply` makes the edit; the record holds the config text before it and, from `basis` (the
 * compare run of that text), the run and the model the fix was suggested from; `why` in full.
 */
export async function recordFix(
  ctx: Ctx,
  config: string,
  before: { configText: string; basis?: RunRecord },
  what: string,
  override: string,
  why: string | undefined,
  apply: () => Thenable<boolean>,
): Promise<RunRecord | undefined> {
  let record: RunRecord | undefined;
  const ok = await ctx
    .trackRun(
      'fix',
      config,
      async () => apply(),
      () => ({
        figures: [['fix', what], ...(why ? [['why', why]] : []), ['override', override.trim()]] as Array<
          [string, string]
        >,
      }),
      {
        detail: what,
        holds: { configText: before.configText, model: before.basis?.model, basedOn: before.basis?.id },
        onRecord: (r) => (record = r),
      },
    )
    .catch(() => false);
  if (!ok && record) {
    record.status = 'failed';
    record.error = 'the edit was not applied';
    await ctx.runs.save();
  }
  return ok ? record : undefined;
}

/**
 * Before / After for the fix run `fix`: the model before it measured by id (and the figures of the compare run
 * before it), the config saved, trained with the fix, compared again and measured, then the run comparison.
 */
export async function verifyFix(ctx: Ctx, fix: RunRecord): Promise<LoopOutcome | undefined> {
  const config = fix.config;
  const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(config));
  const basis = fix.basedOn ? ctx.runs.get(fix.basedOn) : undefined;
  const problem = fixProblem(fix, basis, doc.getText());
  if (problem) throw new Error(problem);
  let before: Measured | undefined;
  let beforeRun: RunRecord | undefined;
  if (fix.model) {
    try {
      before = await measure(ctx, config, 'before fix', { model: fix.model, configText: fix.configText }, (r) => {
        beforeRun = r;
      });
    } catch (err) {
      if (!(err instanceof KernelError && err.code === KernelErrorCode.modelGone)) throw err;
      ctx.log.warn(`before fix: ${err.message}; the before column has the figures of the comparison before the fix`);
      beforeRun = undefined;
    }
  }
  if (doc.isDirty && !(await doc.save())) throw new Error(`${path.basename(config)} could not be saved.`);
  let trainRun: RunRecord | undefined;
  const train = await ctx.trackRun(
    'train',
    config,
    () =>
      step(ctx, 'QAT: Train with the fix', (onProgress, token) =>
        ctx.kernel.request('qat/train', { config }, { token, onProgress }),
      ),
    trainFigures,
    { detail: 'after fix', onRecord: (r) => (trainRun = r) },
  );
  const compare = await compareLayers(ctx)(doc.uri);
  if (!compare) return undefined;
  const afterCompare = ctx.layersView.last?.run ? ctx.runs.get(ctx.layersView.last.run) : undefined;
  let afterRun: RunRecord | undefined;
  const after = await measure(ctx, config, 'after fix', { model: train.model }, (r) => (afterRun = r));
  const columns: RunColumn[] = [
    { title: 'before fix', runs: beforeColumnRuns(basis!, beforeRun) },
    {
      title: `after fix (${fix.detail ?? 'fix'})`,
      runs: [afterCompare, afterRun, trainRun].filter((r): r is RunRecord => r?.status === 'done'),
    },
  ];
  const panel = showCompareRuns(columns, `Before / After: ${path.basename(config)}`);
  return { fix, before, after, train, compare, columns, panel };
}
