// Extension entry: activation only; Ctx owns everything else.
import type * as vscode from 'vscode';
import { Ctx } from './ctx';

let ctx: Ctx | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<Ctx> {
  ctx = new Ctx(context);
  await ctx.activate();
  return ctx;
}

export async function deactivate(): Promise<void> {
  await ctx?.dispose();
  ctx = undefined;
}
