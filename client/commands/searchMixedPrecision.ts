// QAT: Search Mixed Precision — per-layer int8 / fp16 / fp32 candidates measured by the kernel within a budget,
// the Pareto front plotted, and the point the user picks written into the config's overrides (one undoable edit).
// A flow: torchao config's search (per nn.Linear int4 / int8 / fp16 under a perplexity budget) has no page yet: its
// summary lines (the front, the chosen candidate and its overrides) go to the log, and the chosen candidate's overrides
// are written into the config from the message's button (or the `pick` option: `chosen` or a candidate id).
import * as vscode from 'vscode';
import type {
  MixedPrecisionCandidate,
  MixedPrecisionParams,
  MixedPrecisionResult,
  MixedPrecisionSearchResult,
  TorchaoMixedPrecisionResult,
} from '../../protocol/kernel';
import { withEntries, withPickedPrecisions } from '../config/overrides';
import type { Ctx } from '../ctx';
import { searchFigures } from '../runs/figures';
import { describe } from '../search/frontChart';
import { showSearchFront } from '../views/searchFrontPanel';
import type { RunRecord } from '../runs/runStore';
import { configFor } from './configPick';
import { reportKernelError } from './errors';

export interface SearchOptions {
  budget?: MixedPrecisionParams['budget'];
  samples?: number;
  /** Write this point without waiting for a click (automation, tests): a candidate id or an end (`int8`, `fp32`,
   * `fp16`); of a torchao search, `chosen` or a candidate id. */
  pick?: string;
}

export interface SearchOutcome {
  result: MixedPrecisionSearchResult;
  /** The front's page (none for a torchao search: its summary is in the log). */
  panel?: vscode.WebviewPanel;
  /** Whether the `pick` option's edit was applied. */
  written?: boolean;
}

/** Unescapes a `re.escape`d module path (Python escapes special characters with a backslash). */
const moduleOf = (match: string) => match.replace(/\\(.)/g, '$1');

/** Writes the candidate's float layers as the first overrides (earlier picks of these layers replaced). */
export async function writeCandidate(config: vscode.Uri, result: MixedPrecisionResult, c: MixedPrecisionCandidate) {
  const doc = await vscode.workspace.openTextDocument(config);
  const text = withPickedPrecisions(
    doc.getText(),
    result.layers.map((l) => l.module),
    c.overrides.map((o) => ({ module: moduleOf(o.match), precision: o.precision })),
  );
  const edit = new vscode.WorkspaceEdit();
  edit.replace(config, new vscode.Range(doc.positionAt(0), doc.positionAt(doc.getText().length)), text);
  const ok = await vscode.workspace.applyEdit(edit);
  if (ok) await vscode.window.showTextDocument(doc, { preview: false, viewColumn: vscode.ViewColumn.Beside });
  return ok;
}

/** Writes a torchao candidate's overrides (`scheme` / `group_size` / `precision`) first under the config's
 * overrides, as one undoable edit. */
async function writeTorchaoCandidate(config: vscode.Uri, c: TorchaoMixedPrecisionResult['candidates'][number]) {
  const doc = await vscode.workspace.openTextDocument(config);
  const text = withEntries(doc.getText(), c.overrides);
  const edit = new vscode.WorkspaceEdit();
  edit.replace(config, new vscode.Range(doc.positionAt(0), doc.positionAt(doc.getText().length)), text);
  const ok = await vscode.workspace.applyEdit(edit);
  if (ok) await vscode.window.showTextDocument(doc, { preview: false, viewColumn: vscode.ViewColumn.Beside });
  return ok;
}

/** A torchao search's outcome: its summary in the log, the chosen candidate in a message whose button (or `pick`)
 * writes its overrides. */
async function torchaoOutcome(
  ctx: Ctx,
  config: vscode.Uri,
  result: TorchaoMixedPrecisionResult,
  pick: string | undefined,
): Promise<SearchOutcome> {
  for (const line of result.summary) ctx.log.info(line);
  const chosen = result.candidates.find((c) => c.id === result.chosen);
  if (pick !== undefined) {
    const c = result.candidates.find((x) => x.id === (pick === 'chosen' ? result.chosen : pick));
    if (!c) throw new Error(`no candidate ${pick} in this search`);
    return { result, written: await writeTorchaoCandidate(config, c) };
  }
  const write = 'Write Overrides';
  const text = chosen
    ? `Mixed precision: "${chosen.label}" is the smallest within ${result.perplexityBudget} % of the FP32 perplexity (${chosen.perplexity.toFixed(2)}); the front and the rest are in the QAT Studio log.`
    : `Mixed precision: no candidate is within ${result.perplexityBudget} % of the FP32 perplexity (see the QAT Studio log).`;
  void vscode.window.showInformationMessage(text, ...(chosen?.overrides.length ? [write] : [])).then(async (answer) => {
    if (answer !== write || !chosen) return;
    const ok = await writeTorchaoCandidate(config, chosen);
    ctx.log.info(
      ok ? `Wrote ${chosen.overrides.length} override(s) for "${chosen.label}".` : 'The config was not changed.',
    );
  });
  return { result };
}

/** The search's page: the fronts, and a "Write overrides" per candidate that writes it into `config`. */
export function showSearchResult(ctx: Ctx, config: vscode.Uri, result: MixedPrecisionResult) {
  const byId = new Map(result.candidates.map((c) => [c.id, c]));
  const pick = async (id: string) => {
    const c = byId.get(id)!;
    const ok = await writeCandidate(config, result, c);
    const message = ok
      ? `Wrote ${c.overrides.length} override(s) for "${c.label}" into ${vscode.workspace.asRelativePath(config)} (undo with Ctrl+Z).`
      : 'The config was not changed.';
    ctx.log.info(message);
    return message;
  };
  const panel = showSearchFront(result, `Mixed precision: ${vscode.workspace.asRelativePath(config)}`, pick);
  return { panel, pick };
}

function isOptions(v: unknown): v is SearchOptions {
  return !!v && typeof v === 'object' && !Array.isArray(v) && !(v instanceof vscode.Uri);
}

export function searchMixedPrecision(ctx: Ctx) {
  return async (uri?: vscode.Uri, optionsArg?: SearchOptions): Promise<SearchOutcome | undefined> => {
    const options = isOptions(optionsArg) ? optionsArg : {};
    const config = await configFor(uri instanceof vscode.Uri ? uri : undefined);
    if (!config) {
      void vscode.window.showWarningMessage('No QAT config (*.qat.yaml) found.');
      return undefined;
    }
    const params: MixedPrecisionParams = { config: config.fsPath };
    if (options.budget) params.budget = options.budget;
    if (options.samples) params.samples = options.samples;
    let result: MixedPrecisionSearchResult;
    let record: RunRecord | undefined;
    try {
      result = await ctx.trackRun(
        'search',
        config.fsPath,
        () =>
          vscode.window.withProgress(
            { location: vscode.ProgressLocation.Notification, title: 'QAT: Search Mixed Precision', cancellable: true },
            (progress, token) =>
              ctx.kernel.request('search/mixed-precision', params, {
                token,
                onProgress: (p) => {
                  progress.report({ message: p.message });
                  ctx.log.info(`[${p.stage}] ${p.message}`);
                },
              }),
          ),
        searchFigures,
        { onRecord: (r) => (record = r) },
      );
    } catch (err) {
      await reportKernelError(err, 'Search Mixed Precision', ctx.log);
      return undefined;
    }
    if (record) await ctx.runs.keepResult(record, result).catch((e) => ctx.log.warn(`result not kept: ${e}`));
    if (result.flow === 'torchao') return torchaoOutcome(ctx, config, result, options.pick);
    const byId = new Map(result.candidates.map((c) => [c.id, c]));
    for (const id of result.front) ctx.log.info(`  front: ${describe(byId.get(id)!)}`);
    const { panel, pick } = showSearchResult(ctx, config, result);
    if (options.pick === undefined) return { result, panel };
    const id = (result.ends as Record<string, string | undefined>)[options.pick] ?? options.pick;
    if (!byId.has(id)) throw new Error(`no candidate ${options.pick} in this search`);
    await pick(id);
    return { result, panel, written: true };
  };
}
