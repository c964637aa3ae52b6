// QAT: Open a QAT Config — the walkthrough's "open an example" step: the workspace's *.qat.yaml (picked when
// there are several) opens in an editor, where the explorer's and the editor's Compare Layers act on it.
import * as vscode from 'vscode';
import { configFor } from './configPick';

export function openConfig() {
  return async (): Promise<vscode.Uri | undefined> => {
    const config = await configFor(undefined);
    if (!config) {
      void vscode.window.showInformationMessage(
        'No QAT config (*.qat.yaml) in this workspace. Open a folder with one, e.g. the examples/digits folder of the QAT Studio repository.',
      );
      return undefined;
    }
    await vscode.window.showTextDocument(config, { preview: false });
    return config;
  };
}
