// The run comparison: two or more runs' figures side by side, a row per figure, in a webview.
import * as vscode from 'vscode';
import type { RunRecord } from '../runs/runStore';
import { compareRunsHtml, type RunColumn } from '../runs/present';

export function showCompareRuns(runs: Array<RunRecord | RunColumn>, title = 'Compare Runs'): vscode.WebviewPanel {
  const panel = vscode.window.createWebviewPanel('qatStudio.compareRuns', title, vscode.ViewColumn.Active, {
    enableScripts: false,
  });
  panel.webview.html = compareRunsHtml(runs, panel.webview.cspSource, title);
  return panel;
}
