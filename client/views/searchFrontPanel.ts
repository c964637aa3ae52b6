// The mixed-precision search's front in a webview (client/search/frontChart.ts draws it): a point's
// "Write overrides" comes back as a message and is handed to `onPick`; what the edit did goes back to the page.
import * as vscode from 'vscode';
import type { MixedPrecisionResult } from '../../protocol/kernel';
import type { SearchFrontFromWebview, SearchFrontToWebview } from '../../protocol/webview';
import { makeNonce } from '../editors/html';
import { frontHtml } from '../search/frontChart';
import { PanelLife } from '../editors/panelLife';

export function showSearchFront(
  result: MixedPrecisionResult,
  title: string,
  onPick: (id: string) => Promise<string>,
): vscode.WebviewPanel {
  const panel = vscode.window.createWebviewPanel('qatStudio.searchFront', title, vscode.ViewColumn.Active, {
    enableScripts: true,
    localResourceRoots: [],
    retainContextWhenHidden: true,
  });
  const webview = panel.webview;
  webview.html = frontHtml(result, { nonce: makeNonce(), title });
  // Writing the overrides takes a while: the user may close the page meanwhile, and the answer is then dropped.
  const life = new PanelLife<SearchFrontToWebview>((m) => webview.postMessage(m));
  const sub = webview.onDidReceiveMessage(async (m: SearchFrontFromWebview) => {
    life.pageReady();
    if (m.type !== 'pick' || !result.candidates.some((c) => c.id === m.id)) return;
    const message = await onPick(m.id);
    await life.post({ type: 'picked', id: m.id, message });
  });
  panel.onDidDispose(() => {
    life.disposedNow();
    sub.dispose();
  });
  return panel;
}
