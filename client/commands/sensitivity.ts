// QAT: Analyze Sensitivity — ranks layers by what quantizing them costs and shows them in a page that stays open
// (and opens again from the Runs view): the suggested layers go into the config's overrides through one undoable
// edit, or Apply Fix runs on one of them.
import * as vscode from 'vscode';
import { sensitivityFigures } from '../runs/figures';
import type { SensitivityResult } from '../../protocol/kernel';
import { withOverrides } from '../config/overrides';
import type { Ctx } from '../ctx';
import { suggestion } from '../search/shape';
import { showSensitivity } from '../views/sensitivityPanel';
import type { RunRecord } from '../runs/runStore';
import { commandOptions, configFor } from './configPick';
import { reportKernelError } from './errors';

export interface SensitivityOptions {
  /** Allowed accuracy drop in points; asked for when left out. */
  budget?: number;
  /** 'ask' (the default) opens the result's page; 'suggested' applies the suggestion without asking, 'none'
   * only returns the result (automation, tests). */
  apply?: 'ask' | 'suggested' | 'none';
}

async function applyOverrides(
  config: vscode.Uri,
  picked: Array<{ match: string; precision: 'fp16' | 'bf16' | 'fp32' }>,
): Promise<boolean> {
  const doc = await vscode.workspace.openTextDocument(config);
  const edit = new vscode.WorkspaceEdit();
  edit.replace(
    config,
    new vscode.Range(doc.positionAt(0), doc.positionAt(doc.getText().length)),
    withOverrides(doc.getText(), picked),
  );
  const ok = await vscode.workspace.applyEdit(edit);
  if (ok) await vscode.window.showTextDocument(doc, { preview: false });
  return ok;
}

/** The result's page, beside the config: the ranking as a chart, the baselines, and the suggestion with a button
 * that writes it (one undoable edit) and one that applies the layer comparison's fix to the selected layer. */
export function showSensitivityResult(config: vscode.Uri, result: SensitivityResult): vscode.WebviewPanel {
  const s = suggestion(result);
  return showSensitivity(result, `Sensitivity: ${vscode.workspace.asRelativePath(config)}`, {
    write: async () => {
      const ok = await applyOverrides(
        config,
        s.modules.map((module) => ({ match: module, precision: s.precision as 'fp16' | 'bf16' | 'fp32' })),
      );
      return ok
        ? `Wrote ${s.modules.length} override(s) into ${vscode.workspace.asRelativePath(config)} (undo with Ctrl+Z).`
        : 'The config was not changed.';
    },
    fix: async (module) => {
      await vscode.commands.executeCommand('qatStudio.applyFix', { module, config: config.fsPath });
    },
  });
}

export function analyzeSensitivity(ctx: Ctx) {
  return async (uri?: vscode.Uri, optionsArg?: SensitivityOptions): Promise<SensitivityResult | undefined> => {
    const options: SensitivityOptions = commandOptions<SensitivityOptions>(optionsArg);
    const config = await configFor(uri instanceof vscode.Uri ? uri : undefined);
    if (!config) {
      void vscode.window.showWarningMessage('No QAT config (*.qat.yaml) found.');
      return undefined;
    }
    let budget = options.budget;
    if (budget === undefined) {
      const answer = await vscode.window.showInputBox({
        title: 'QAT: Analyze Sensitivity',
        prompt: 'Accuracy you can give up, in points (percent)',
        value: '1.0',
        ignoreFocusOut: true,
        validateInput: (v) =>
          Number.isFinite(Number(v)) && Number(v) >= 0 ? undefined : 'A number of points, e.g. 0.5',
      });
      if (answer === undefined) return undefined;
      budget = Number(answer);
    }
    let result: SensitivityResult;
    let record: RunRecord | undefined;
    try {
      result = await ctx.trackRun(
        'sensitivity',
        config.fsPath,
        () =>
          vscode.window.withProgress(
            { location: vscode.ProgressLocation.Notification, title: 'QAT: Analyze Sensitivity', cancellable: true },
            (progress, token) =>
              ctx.kernel.request(
                'analyze/sensitivity',
                { config: config.fsPath, budget },
                {
                  token,
                  onProgress: (p) => {
                    progress.report({ message: p.message });
                    ctx.log.info(`[${p.stage}] ${p.message}`);
                  },
                },
              ),
          ),
        sensitivityFigures,
        { onRecord: (r) => (record = r) },
      );
    } catch (err) {
      await reportKernelError(err, 'Analyze Sensitivity', ctx.log);
      return undefined;
    }
    for (const l of result.layers)
      ctx.log.info(
        `  #${l.rank} ${l.module}: quantized alone ${(l.quantizedAlone.accuracy * 100).toFixed(2)} %, kept float ${(l.keptFloat.accuracy * 100).toFixed(2)} %`,
      );
    if (record) await ctx.runs.keepResult(record, result).catch((e) => ctx.log.warn(`result not kept: ${e}`));
    const mode = options.apply ?? 'ask';
    if (mode === 'suggested') {
      const s = suggestion(result);
      if (s.modules.length)
        await applyOverrides(
          config,
          s.modules.map((module) => ({ match: module, precision: s.precision as 'fp16' | 'bf16' | 'fp32' })),
        );
    }
    if (mode === 'ask') showSensitivityResult(config, result);
    return result;
  };
}
