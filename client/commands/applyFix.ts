// QAT: Apply Fix — for a layer that loses accuracy (from the results view, the Layers view or the sensitivity
// ranking): the override the analysis suggests, written as one undoable edit of the config; then, when confirmed
// (or the qatStudio.applyFix.retrain setting says so), retrain, compare again and show before and after.
import path from 'node:path';
import * as vscode from 'vscode';
import type { LayerResult } from '../../protocol/kernel';
import { refuseConfigEdit } from '../config/editableConfig';
import { addOverride } from '../config/overrides';
import type { Ctx } from '../ctx';
import { latestFix, recordFix, verifyFix, type LoopOutcome } from '../fix/closedLoop';
import { comparisonOf } from '../fix/fixRecord';
import type { RunRecord } from '../runs/runStore';
import { configFor } from './configPick';
import { fixEntry, suggestFix, type FixSuggestion } from '../fix/suggestFix';
import { compareLayers } from './compareLayers';
import { reportKernelError } from './errors';
import type { LayerContext } from '../../protocol/webview';
import { LIMITS, readWorkspaceFile } from '../../common/workspaceFile';

export type RetrainMode = 'ask' | 'always' | 'never';

export interface ApplyFixOptions {
  /** The layers the override covers; asked for (the suggested ones preselected) when left out. */
  modules?: string[] | 'suggested';
  /** Overrides the qatStudio.applyFix.retrain setting. */
  retrain?: RetrainMode;
}

export interface ApplyFixResult {
  suggestion: FixSuggestion;
  modules: string[];
  /** Where the override went in the config, and its text. */
  edit: { config: string; offset: number; text: string };
  /** The fix run: it holds the config text and the comparison (and model) before the fix. */
  fix: RunRecord;
  loop?: LoopOutcome;
}

/** The layer and config a menu passes: the graph's node context, or a row of the Layers view. */
function target(ctx: Ctx, arg: unknown): { module: string; config: string } | undefined {
  const c = (arg ?? {}) as LayerContext & Partial<LayerResult> & { config?: string };
  const module = c.module;
  const config = c.config ?? ctx.layersView.last?.config;
  return module && config ? { module, config } : undefined;
}

async function pickModules(s: FixSuggestion, layers: LayerResult[]): Promise<string[] | undefined> {
  const byModule = new Map(layers.map((l) => [l.module, l]));
  const describe = (m: string) => {
    const l = byModule.get(m);
    return l ? `local SQNR ${(l.local?.sqnr ?? l.sqnr).toFixed(1)} dB · SQNR ${l.sqnr.toFixed(1)} dB · ${l.op}` : '';
  };
  const picked = await vscode.window.showQuickPick(
    [...s.modules.map((m) => ({ label: m, picked: true })), ...s.others.map((m) => ({ label: m, picked: false }))].map(
      (i) => ({ ...i, description: describe(i.label) }),
    ),
    {
      canPickMany: true,
      title: `Apply Fix: ${s.label} for ${s.culprit}`,
      // The reason is long: it is shown in full in the notification after the edit and in the fix run.
      placeHolder: `Layers to give ${s.label} (the suggested ones are checked)`,
      ignoreFocusOut: true,
    },
  );
  return picked?.length ? picked.map((p) => p.label) : undefined;
}

export function applyFix(ctx: Ctx) {
  return async (arg?: unknown, optionsArg?: ApplyFixOptions): Promise<ApplyFixResult | undefined> => {
    const options = optionsArg && typeof optionsArg === 'object' && !Array.isArray(optionsArg) ? optionsArg : {};
    const t = target(ctx, arg);
    if (!t) {
      void vscode.window.showWarningMessage(
        'Apply Fix needs a layer: run Compare Layers, then pick one of its layers.',
      );
      return undefined;
    }
    const refused = await refuseConfigEdit(t.config);
    if (refused) {
      void vscode.window.showWarningMessage(refused);
      return undefined;
    }
    const uri = vscode.Uri.file(t.config);
    const doc = await vscode.workspace.openTextDocument(uri);
    // Dirty with the saved text (e.g. after undoing an earlier fix) is clean for the kernel, which reads the file.
    if (doc.isDirty && doc.getText() !== (await readWorkspaceFile(t.config, LIMITS.config).catch(() => undefined))) {
      void vscode.window.showWarningMessage(
        `Save ${path.basename(t.config)} first: the fix is measured against the saved config.`,
      );
      return undefined;
    }
    // The suggestion, and the state before the fix, rest on a comparison of this very text: compare first when the
    // last one is of another config or of other text.
    const text = doc.getText();
    const runOf = (c = ctx.layersView.last) => (c?.config === t.config && c.run ? ctx.runs.get(c.run) : undefined);
    if (!comparisonOf(runOf(), t.config, text) && !(await compareLayers(ctx)(uri))) return undefined;
    const basis = comparisonOf(runOf(), t.config, doc.getText());
    const layers = ctx.layersView.last!.layers;
    let suggestion: FixSuggestion;
    try {
      suggestion = suggestFix(doc.getText(), layers, t.module);
    } catch (err) {
      void vscode.window.showErrorMessage((err as Error).message);
      return undefined;
    }
    const modules =
      options.modules === 'suggested'
        ? suggestion.modules
        : (options.modules ?? (await pickModules(suggestion, layers)));
    if (!modules?.length) return undefined;
    let insert;
    try {
      insert = addOverride(doc.getText(), fixEntry(suggestion, modules));
    } catch (err) {
      void vscode.window.showErrorMessage((err as Error).message);
      return undefined;
    }
    const edit = new vscode.WorkspaceEdit();
    edit.insert(uri, doc.positionAt(insert.offset), insert.text);
    const what = `${suggestion.label} for ${modules.length === 1 ? modules[0] : `${modules.length} layers`}`;
    const before = { configText: doc.getText(), basis };
    const fix = await recordFix(ctx, t.config, before, what, insert.text, suggestion.reason, () =>
      vscode.workspace.applyEdit(edit),
    );
    if (!fix) return undefined;
    const line = doc.positionAt(insert.offset).line;
    await vscode.window.showTextDocument(doc, { selection: new vscode.Range(line, 0, line, 0), preview: false });
    ctx.log.info(`apply fix: ${what} in ${t.config}: ${insert.text.trim()}`);
    const result: ApplyFixResult = { suggestion, modules, edit: { config: t.config, ...insert }, fix };

    const mode =
      options.retrain ?? vscode.workspace.getConfiguration('qatStudio').get<RetrainMode>('applyFix.retrain', 'ask');
    let go = mode === 'always';
    if (mode === 'ask') {
      const retrain = 'Retrain and Compare';
      go =
        (await vscode.window.showInformationMessage(
          `Override written: ${what}. ${suggestion.reason} Retrain with it, compare the layers again and show before and after? (Undo removes it.)`,
          retrain,
          'Not Now',
        )) === retrain;
    }
    if (!go) return result;
    try {
      result.loop = await verifyFix(ctx, fix);
    } catch (err) {
      await reportKernelError(err, 'Apply Fix', ctx.log);
    }
    return result;
  };
}

/**
 * QAT: Retrain and Show Before / After — for the latest fix of a config (or a fix run picked in the Runs view): the
 * loop that Apply Fix offers, for when it was declined then.
 */
export function retrainFix(ctx: Ctx) {
  return async (arg?: unknown): Promise<LoopOutcome | undefined> => {
    let fix = arg && typeof arg === 'object' && (arg as RunRecord).kind === 'fix' ? (arg as RunRecord) : undefined;
    if (!fix) {
      const config = await configFor(arg instanceof vscode.Uri ? arg : undefined);
      fix = config ? latestFix(ctx, config.fsPath) : undefined;
      if (!fix) {
        void vscode.window.showInformationMessage(
          'No fix to retrain with: Apply Fix on a layer of Compare Layers first.',
        );
        return undefined;
      }
    }
    try {
      return await verifyFix(ctx, fix);
    } catch (err) {
      await reportKernelError(err, 'Retrain with the fix', ctx.log);
      return undefined;
    }
  };
}
