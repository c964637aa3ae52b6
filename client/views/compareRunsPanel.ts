// The run comparison: two or more runs' figures side by side, a row per figure, in a webview.
import * as vscode from 'vscode';
import type { RunRecord } from '../runs/runStore';
import { compareRunsHtml } from '../runs/present';

export function showCompareRuns(runs: RunRecord[]): vscode.WebviewPanel {
  const panel = vscode.window.createWebviewPanel('qatStudio.compareRuns', 'Compare Runs', vscode.ViewColumn.Active, {
    enableScripts: false,
  });
  panel.webview.html = compareRunsHtml(runs, panel.webview.cspSource);
  return panel;
}
