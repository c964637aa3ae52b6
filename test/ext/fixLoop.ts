// The part of the closed-loop tests every model shares: Apply Fix on one layer of a config (its suggested layers, no
// retrain prompt), the override it wrote checked against the document, then QAT: Retrain With Fix and the Before /
// After it returns, measured on the model the comparison before the fix was made with.
import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { parse } from 'yaml';

export interface Layer {
  module: string;
  op: string;
  cosine: number;
  sqnr: number;
  scheme?: string;
  local?: { sqnr: number; cosine: number };
  vsQatFloatLocal?: { sqnr: number; cosine: number };
  weightError?: { sqnr: number | null };
}
export interface Compared {
  flow?: string;
  accuracy: { fp32: number; int8: number };
  perplexity?: { fp32: number; converted: number };
  layers: Layer[];
  model: string;
  graph?: string;
  view?: { lastRender?: { nodes: number; total?: number; groups?: number; coloured: number } };
}
interface Run {
  id: string;
  kind: string;
  configText?: string;
  model?: string;
}
export interface Loop {
  fix: Run;
  before?: { accuracy: { fp32: number; int8: number; model?: string } };
  after: { accuracy: { fp32: number; int8: number } };
  compare: Compared;
  panel: vscode.WebviewPanel;
}
export interface FixResult {
  suggestion: { kind: string; reason: string };
  modules: string[];
  edit: { offset: number; text: string };
  fix: Run;
}

/** Apply Fix on `module` of `config`, save, retrain with the fix. `broken`: the comparison before the fix. */
export async function fixAndRetrain(
  config: vscode.Uri,
  module: string,
  broken: Compared,
): Promise<{ fix: FixResult; overrides: Array<Record<string, unknown> & { match: string }>; loop: Loop }> {
  const doc = await vscode.workspace.openTextDocument(config);
  const original = doc.getText();
  const fix = await vscode.commands.executeCommand<FixResult>(
    'qatStudio.applyFix',
    { module, config: config.fsPath },
    { modules: 'suggested', retrain: 'never' },
  );
  assert.ok(fix, 'Apply Fix did nothing');
  const text = original.slice(0, fix.edit.offset) + fix.edit.text + original.slice(fix.edit.offset);
  assert.equal(doc.getText(), text);
  const overrides = (parse(text) as { overrides: Array<Record<string, unknown> & { match: string }> }).overrides;
  assert.equal(overrides.length, 1);
  assert.ok(new RegExp(`^(?:${overrides[0].match})$`).test(module), overrides[0].match);
  await doc.save();
  const loop = await vscode.commands.executeCommand<Loop>('qatStudio.retrainFix', fix.fix);
  assert.ok(loop, 'the loop did not complete');
  assert.ok(loop.before, 'the model before the fix was not measured');
  assert.equal(loop.before.accuracy.model, broken.model);
  assert.equal(loop.after.accuracy.fp32, loop.before.accuracy.fp32, 'the same FP32 model on both sides');
  return { fix, overrides, loop };
}
