// Analyze Sensitivity's result in a webview (client/search/sensitivityChart.ts draws it), kept open beside the
// config and opened again from the Runs view: "Write overrides" and "Apply Fix" come back as messages.
import * as vscode from 'vscode';
import type { SensitivityResult } from '../../protocol/kernel';
import type { SensitivityFromWebview, SensitivityToWebview } from '../../protocol/webview';
import { makeNonce } from '../editors/html';
import { sensitivityHtml } from '../search/sensitivityChart';
import { PanelLife } from '../editors/panelLife';

export function showSensitivity(
  result: SensitivityResult,
  title: string,
  handlers: { write: () => Promise<string>; fix: (module: string) => Promise<void> },
): vscode.WebviewPanel {
  const panel = vscode.window.createWebviewPanel('qatStudio.sensitivity', title, vscode.ViewColumn.Active, {
    enableScripts: true,
    localResourceRoots: [],
    retainContextWhenHidden: true,
  });
  const webview = panel.webview;
  webview.html = sensitivityHtml(result, { nonce: makeNonce(), title });
  const life = new PanelLife<SensitivityToWebview>((m) => webview.postMessage(m));
  const sub = webview.onDidReceiveMessage(async (m: SensitivityFromWebview) => {
    life.pageReady();
    if (m.type === 'write') await life.post({ type: 'done', message: await handlers.write() });
    else if (m.type === 'fix' && result.layers.some((l) => l.module === m.module)) await handlers.fix(m.module);
  });
  panel.onDidDispose(() => {
    life.disposedNow();
    sub.dispose();
  });
  return panel;
}
