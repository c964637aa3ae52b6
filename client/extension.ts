// Extension entry: activation, and the table of commands Ctx registers; Ctx owns everything else.
import type * as vscode from 'vscode';
import { applyFix, retrainFix } from './commands/applyFix';
import { buildForTarget } from './commands/buildForTarget';
import { compareLayer, compareLayers } from './commands/compareLayers';
import { createKernelEnvironment } from './commands/createKernelEnv';
import { findDivergence } from './commands/findDivergence';
import { restartKernel, showKernelInfo } from './commands/kernelInfo';
import { keepLayerFp16, revealLayerSource } from './commands/layerActions';
import { openConfig } from './commands/openConfig';
import { openExample } from './commands/openExample';
import { openGraphsSideBySide } from './commands/openGraphsSideBySide';
import { openRunCommand } from './commands/openRunPage';
import { searchMixedPrecision } from './commands/searchMixedPrecision';
import { analyzeSensitivity } from './commands/sensitivity';
import { showModelGraph } from './commands/showModelGraph';
import { Ctx, type Contributions } from './ctx';
import { QatTaskProvider } from './tasks/qatTasks';

/** Every command module's command. Kernel commands run user code, so they need a trusted workspace, as do the
 * actions that write overrides into a config named by a view (client/config/editableConfig.ts); opening files and
 * the language server's quick fixes on the open document are allowed in Restricted Mode too. */
export function contributions(): Contributions {
  return {
    commands: {
      'qatStudio.compareLayers': { make: compareLayers, needsTrust: true },
      'qatStudio.compareLayer': { make: compareLayer, needsTrust: true },
      'qatStudio.analyzeSensitivity': { make: analyzeSensitivity, needsTrust: true },
      'qatStudio.findDivergence': { make: findDivergence, needsTrust: true },
      'qatStudio.applyFix': { make: applyFix, needsTrust: true },
      'qatStudio.retrainFix': { make: retrainFix, needsTrust: true },
      'qatStudio.searchMixedPrecision': { make: searchMixedPrecision, needsTrust: true },
      'qatStudio.showKernelInfo': { make: showKernelInfo, needsTrust: true },
      'qatStudio.restartKernel': { make: restartKernel, needsTrust: true },
      'qatStudio.showModelGraph': { make: showModelGraph, needsTrust: true },
      'qatStudio.createKernelEnvironment': { make: createKernelEnvironment, needsTrust: true },
      'qatStudio.buildForTarget': { make: buildForTarget, needsTrust: true },
      'qatStudio.keepLayerFp16': { make: keepLayerFp16, needsTrust: true },
      'qatStudio.revealLayerSource': { make: () => revealLayerSource() },
      'qatStudio.openGraphsSideBySide': { make: () => openGraphsSideBySide() },
      'qatStudio.openConfig': { make: () => openConfig() },
      'qatStudio.openExample': { make: (ctx) => openExample(ctx.context) },
      'qatStudio.openRun': { make: openRunCommand },
    },
    providers: [(ctx) => new QatTaskProvider(ctx).register()],
  };
}

let ctx: Ctx | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<Ctx> {
  ctx = new Ctx(context, contributions());
  await ctx.activate();
  return ctx;
}

export async function deactivate(): Promise<void> {
  await ctx?.dispose();
  ctx = undefined;
}
