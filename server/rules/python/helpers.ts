// Small helpers the Python rules share: line references into messages, quick-fix edits, imports.
import type { RuleInput } from '../../analysis/document';
import { lineMark, type Anchored, type StoredEdit, type StoredFinding } from '../../analysis/findings';
import type { CallInfo } from '../../analysis/walker';
import { lineStartOf, type Span } from '../../analysis/syntax';

export type Fix = NonNullable<StoredFinding['fixes']>[number];

/** A site number (an offset in this document, or negative: another unit's) as an anchored place. */
export function anchored(input: RuleInput, site: number): Anchored {
  if (site < 0) return input.facts.foreign[-site - 1];
  return { anchor: input.anchor, rel: site - input.base };
}

/** "line 3", "lines 3 and 7" for sites (markers the document resolves). */
export function lines(input: RuleInput, sites: number[]): string {
  const marks = [...new Set(sites)].sort((a, b) => a - b).map((s) => lineMark(anchored(input, s)));
  if (marks.length <= 1) return `line ${marks[0] ?? '?'}`;
  return `lines ${marks.slice(0, -1).join(', ')} and ${marks[marks.length - 1]}`;
}

/** Inserts `line` above the statement holding the call, at its indentation. */
export function insertAbove(input: RuleInput, stmt: Span, indent: string, line: string, title = `Insert ${line}`): Fix {
  const at = lineStartOf(input.text, stmt.from);
  return { title, edits: [{ start: at, end: at, newText: `${indent}${line}\n` }], preferred: true };
}

/** Is `local` bound to `qualified` (an import or alias) in the module or the call's function? */
export function boundTo(input: RuleInput, local: string, qualified: string): boolean {
  return input.ctx.module.names.lookup(local) === qualified;
}

/** An edit adding an import line below the module's imports (not moved with the unit). */
export function importEdit(input: RuleInput, line: string): StoredEdit {
  const at = input.ctx.module.importAt;
  if (at > 0) return { start: at, end: at, newText: `\n${line}`, absolute: true };
  return { start: 0, end: 0, newText: `${line}\n`, absolute: true };
}

/** `from M import name` unless `name` already means M.name here. */
export function ensureImported(input: RuleInput, module: string, name: string): StoredEdit[] {
  return boundTo(input, name, `${module}.${name}`) ? [] : [importEdit(input, `from ${module} import ${name}`)];
}

/** The dotted variable a call passes as its model (first positional, or model=/module=). */
export function modelArg(call: CallInfo): { dotted: string; from: number; to: number } | undefined {
  const a = call.args[0] ?? call.keywords.model ?? call.keywords.module;
  return a?.dotted ? { dotted: a.dotted, from: a.from, to: a.to } : undefined;
}

export const lastPart = (call: CallInfo) => call.callee?.[call.callee.length - 1];

/** The import statements a unit owns: the module's for module-level code, else those inside its functions. */
export const importsOf = (input: RuleInput) => (input.isModule ? input.ctx.module.names.imports : input.facts.imports);
