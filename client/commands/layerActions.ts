// Commands on a layer in the graph view's context menu: keep it in FP16 (an undoable edit of the config's
// overrides) and reveal its definition in the source.
import * as vscode from 'vscode';
import { refuseConfigEdit } from '../config/editableConfig';
import { addPrecisionOverride } from '../config/overrides';
import type { LayerContext } from '../../protocol/webview';
import type { Ctx } from '../ctx';
import { recordFix } from '../fix/closedLoop';
import { comparisonOf } from '../fix/fixRecord';

export function keepLayerFp16(ctx: Ctx) {
  return async (c: LayerContext = {}): Promise<boolean> => {
    if (!c.module || !c.config) {
      void vscode.window.showWarningMessage('This node has no module or config to edit.');
      return false;
    }
    const refused = await refuseConfigEdit(c.config);
    if (refused) {
      void vscode.window.showWarningMessage(refused);
      return false;
    }
    const uri = vscode.Uri.file(c.config);
    const doc = await vscode.workspace.openTextDocument(uri);
    let insert;
    try {
      insert = addPrecisionOverride(doc.getText(), c.module, 'fp16');
    } catch (err) {
      void vscode.window.showErrorMessage((err as Error).message);
      return false;
    }
    const edit = new vscode.WorkspaceEdit();
    edit.insert(uri, doc.positionAt(insert.offset), insert.text);
    // A fix like Apply Fix's: recorded with the state before it (the comparison of this text, when there is one).
    const text = doc.getText();
    const last = ctx.layersView.last;
    const basis = comparisonOf(
      last?.config === c.config && last.run ? ctx.runs.get(last.run) : undefined,
      c.config,
      text,
    );
    const fix = await recordFix(
      ctx,
      c.config,
      { configText: text, basis },
      `FP16 for ${c.module}`,
      insert.text,
      undefined,
      () => vscode.workspace.applyEdit(edit),
    );
    const ok = !!fix;
    if (ok) {
      ctx.log.info(`overrides: ${c.module} -> fp16 in ${c.config}`);
      const line = doc.positionAt(insert.offset).line;
      await vscode.window.showTextDocument(doc, { selection: new vscode.Range(line, 0, line, 0), preview: false });
    }
    return ok;
  };
}

/** Opens the layer's line beside the results (as a row click in the results view does), which stay in view. */
export function revealLayerSource() {
  return async (c: LayerContext = {}): Promise<void> => {
    if (!c.sourceFile || !c.sourceLine) return;
    const line = Math.max(0, c.sourceLine - 1);
    await vscode.window.showTextDocument(vscode.Uri.file(c.sourceFile), {
      selection: new vscode.Range(line, 0, line, 0),
      viewColumn: vscode.ViewColumn.Beside,
      preserveFocus: true,
    });
  };
}
