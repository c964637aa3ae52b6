// QAT: Open Model Graphs Side by Side — a model's FP32, fake-quant and INT8 graph files (what graph/export writes
// next to each other), then what ONNX Runtime and TVM run (graph/export's ort stage, build/tvm's kernels), open in
// adjacent editor columns, where selecting a node in one selects its counterpart in the others.
import * as vscode from 'vscode';
import { stageFiles, stageOf } from '../editors/graphSync';
import { OnnxEditorProvider } from '../editors/onnxEditor';

export function openGraphsSideBySide() {
  return async (uri?: vscode.Uri): Promise<vscode.Uri[]> => {
    const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
    const target =
      uri ?? (input instanceof vscode.TabInputCustom ? input.uri : vscode.window.activeTextEditor?.document.uri);
    if (!target || stageOf(target.path.split('/').pop()!) === undefined) {
      void vscode.window.showWarningMessage(
        'Pick a model graph (*.qatgraph.json, or *.ort.onnx): its other stages open beside it.',
      );
      return [];
    }
    const folder = vscode.Uri.joinPath(target, '..');
    const names = (await vscode.workspace.fs.readDirectory(folder))
      .filter(([, type]) => type === vscode.FileType.File)
      .map(([name]) => name);
    const files = stageFiles(names, target.path.split('/').pop()!).map((n) => vscode.Uri.joinPath(folder, n));
    if (files.length < 2)
      void vscode.window.showInformationMessage(
        'This is the only graph of this model here; QAT: Show Model Graph exports the other stages.',
      );
    for (const [i, file] of files.entries()) {
      await vscode.commands.executeCommand('vscode.openWith', file, OnnxEditorProvider.viewType, {
        viewColumn: i + 1,
        preview: false,
        preserveFocus: i > 0,
      });
    }
    return files;
  };
}
