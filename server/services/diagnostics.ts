// Findings -> LSP diagnostics for one document, with per-line `# qat: ignore[CODE]` suppression.
import { DiagnosticSeverity, type Diagnostic } from 'vscode-languageserver';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { configFindings, isQatConfig } from './configDiagnostics';
import { pythonFindings } from './pythonDiagnostics';
import type { Finding, Severity } from '../rules/types';

const SEVERITY: Record<Severity, DiagnosticSeverity> = {
  error: DiagnosticSeverity.Error, warning: DiagnosticSeverity.Warning,
  information: DiagnosticSeverity.Information, hint: DiagnosticSeverity.Hint,
};

export function findingsFor(doc: TextDocument): Finding[] {
  if (doc.languageId === 'python') return pythonFindings(doc.getText());
  if (doc.languageId === 'yaml' && isQatConfig(doc.uri, doc.getText())) return configFindings(doc.getText());
  return [];
}

function suppressed(doc: TextDocument, f: Finding): boolean {
  const line = doc.positionAt(f.start).line;
  const text = doc.getText({ start: { line, character: 0 }, end: { line: line + 1, character: 0 } });
  const m = /#\s*qat:\s*ignore(?:\[([\w, ]+)\])?/.exec(text);
  return !!m && (!m[1] || m[1].split(',').map((s) => s.trim()).includes(f.code));
}

export function diagnosticsFor(doc: TextDocument): Diagnostic[] {
  return findingsFor(doc).filter((f) => !suppressed(doc, f)).map((f) => ({
    range: { start: doc.positionAt(f.start), end: doc.positionAt(f.end) },
    severity: SEVERITY[f.severity],
    code: f.code,
    source: 'qat-studio',
    message: f.message,
  }));
}
