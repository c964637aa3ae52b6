// QAT: Analyze Sensitivity — ranks layers by what quantizing them costs, then offers to keep the chosen
// ones in FP16 through one undoable edit of the config's overrides, or Apply Fix on one of them.
import * as vscode from 'vscode';
import { sensitivityFigures } from '../runs/figures';
import type { SensitivityResult } from '../../protocol/kernel';
import { withOverrides } from '../config/overrides';
import type { Ctx } from '../ctx';
import { configFor } from './configPick';
import { reportKernelError } from './errors';

export interface SensitivityOptions {
  /** Allowed accuracy drop in points; asked for when left out. */
  budget?: number;
  /** 'suggested' applies the kernel's suggestion without asking (automation, tests). */
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

const FIX_BUTTON: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon('wrench'), tooltip: 'Apply Fix' };

/** The ranking as a multi-select; each row's wrench button asks for Apply Fix on that layer instead. */
function pickLayers<T extends vscode.QuickPickItem & { module: string }>(
  items: T[],
  title: string,
  placeholder: string,
): Promise<{ picked: string[] } | { fix: string } | undefined> {
  const qp = vscode.window.createQuickPick<T>();
  Object.assign(qp, { title, placeholder, canSelectMany: true, ignoreFocusOut: true });
  qp.items = items.map((i) => ({ ...i, buttons: [FIX_BUTTON] }));
  qp.selectedItems = qp.items.filter((i) => i.picked);
  return new Promise((resolve) => {
    let done = false;
    const finish = (v: { picked: string[] } | { fix: string } | undefined) => {
      if (done) return;
      done = true;
      resolve(v);
      qp.dispose();
    };
    qp.onDidTriggerItemButton((e) => finish({ fix: e.item.module }));
    qp.onDidAccept(() => finish({ picked: qp.selectedItems.map((i) => i.module) }));
    qp.onDidHide(() => finish(undefined));
    qp.show();
  });
}

export function analyzeSensitivity(ctx: Ctx) {
  return async (uri?: vscode.Uri, optionsArg?: SensitivityOptions): Promise<SensitivityResult | undefined> => {
    // Menus pass more arguments than the file (the explorer its selected URIs): only a plain object is options.
    const options: SensitivityOptions =
      optionsArg && typeof optionsArg === 'object' && !Array.isArray(optionsArg) && !(optionsArg instanceof vscode.Uri)
        ? optionsArg
        : {};
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
        validateInput: (v) =>
          Number.isFinite(Number(v)) && Number(v) >= 0 ? undefined : 'A number of points, e.g. 0.5',
      });
      if (answer === undefined) return undefined;
      budget = Number(answer);
    }
    let result: SensitivityResult;
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
      );
    } catch (err) {
      await reportKernelError(err, 'Analyze Sensitivity', ctx.log);
      return undefined;
    }
    for (const l of result.layers)
      ctx.log.info(
        `  #${l.rank} ${l.module}: quantized alone ${(l.quantizedAlone.accuracy * 100).toFixed(2)} %, kept float ${(l.keptFloat.accuracy * 100).toFixed(2)} %`,
      );
    const mode = options.apply ?? 'ask';
    if (mode === 'suggested' && result.suggestion.overrides.length)
      await applyOverrides(config, result.suggestion.overrides);
    if (mode !== 'ask') return result;

    const suggested = new Set(result.suggestion.overrides.map((o) => o.match));
    const precision = result.suggestion.overrides[0]?.precision ?? 'fp16';
    const items = result.layers.map((l) => ({
      label: `#${l.rank} ${l.module}`,
      module: l.module,
      picked: suggested.has(l.module),
      description: l.op,
      detail: `quantized alone: ${(l.quantizedAlone.accuracy * 100).toFixed(2)} %, ${l.quantizedAlone.sqnr.toFixed(1)} dB · kept float: ${(l.keptFloat.accuracy * 100).toFixed(2)} %, ${l.keptFloat.sqnr.toFixed(1)} dB`,
    }));
    const choice = await pickLayers(
      items,
      `Keep layers in ${precision.toUpperCase()} (suggested within ${budget} points: ${result.suggestion.overrides.map((o) => o.match).join(', ') || 'none'})`,
      'Most sensitive first. The chosen layers become overrides in the config (undoable); the wrench applies the fix the layer comparison suggests.',
    );
    if (choice && 'fix' in choice)
      await vscode.commands.executeCommand('qatStudio.applyFix', { module: choice.fix, config: config.fsPath });
    else if (choice?.picked.length)
      await applyOverrides(
        config,
        choice.picked.map((module) => ({ match: module, precision })),
      );
    return result;
  };
}
