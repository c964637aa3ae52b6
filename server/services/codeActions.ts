// Quick fixes: each finding's fixes as CodeActions, plus "ignore on this line" for every finding.
import { CodeActionKind, type CodeAction, type Range, type TextEdit } from 'vscode-languageserver';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import type { Edit, Finding } from '../rules/types';
import { toDiagnostic, visibleFindings } from './diagnostics';
import { defaultSettings, type Settings } from './settings';

export function codeActionsFor(doc: TextDocument, range: Range, settings: Settings = defaultSettings): CodeAction[] {
  const from = doc.offsetAt(range.start);
  const to = doc.offsetAt(range.end);
  const actions: CodeAction[] = [];
  for (const f of visibleFindings(doc, settings)) {
    if (f.end < from || f.start > to) continue;
    const diagnostic = toDiagnostic(doc, f);
    const action = (title: string, edits: Edit[], isPreferred?: boolean): CodeAction => ({
      title,
      kind: CodeActionKind.QuickFix,
      diagnostics: [diagnostic],
      isPreferred,
      edit: { changes: { [doc.uri]: edits.map((e) => textEdit(doc, e)) } },
    });
    for (const fix of f.fixes ?? []) actions.push(action(fix.title, fix.edits, fix.preferred));
    const ignore = ignoreEdit(doc, f);
    if (ignore) actions.push(action(`Ignore ${f.code} on this line`, [ignore]));
  }
  return actions;
}

const textEdit = (doc: TextDocument, e: Edit): TextEdit => ({
  range: { start: doc.positionAt(e.start), end: doc.positionAt(e.end) },
  newText: e.newText,
});

/** Appends `# qat: ignore[CODE]` to the finding's line, or adds the code to an existing one. */
function ignoreEdit(doc: TextDocument, f: Finding): Edit | undefined {
  const line = doc.positionAt(f.start).line;
  const start = doc.offsetAt({ line, character: 0 });
  const text = doc
    .getText({ start: { line, character: 0 }, end: { line: line + 1, character: 0 } })
    .replace(/\r?\n$/, '');
  const existing = /#\s*qat:\s*ignore\[([\w, ]+)\]/.exec(text);
  if (existing) {
    const at = start + existing.index + existing[0].length - 1;
    return { start: at, end: at, newText: `, ${f.code}` };
  }
  // A comment after a line continuation would be a syntax error in Python.
  if (/\\\s*$/.test(text)) return undefined;
  const end = start + text.length;
  return { start: end, end, newText: `  # qat: ignore[${f.code}]` };
}
