// Findings -> LSP diagnostics for one document, with per-line `# qat: ignore[CODE]` suppression and
// per-code severities from the settings.
import { DiagnosticSeverity, type Diagnostic } from 'vscode-languageserver';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { configFindings, configSteps, forgetConfig, isQatConfig } from './configDiagnostics';
import { modelIndex } from './modelIndex';
import { analyzePythonSliced, forgetPython, pythonFindings } from './pythonDiagnostics';
import { defaultSettings, type Settings } from './settings';
import { foldersGeneration } from './workspaceFolders';
import type { Finding, Severity } from '../rules/types';
import { PYTHON_CHARS, pythonBudget, sizeFinding } from '../util/budget';
import { runSliced } from '../util/slices';
import { PATH_OUTSIDE } from '../rules/yaml/pathOutside';

const SEVERITY: Record<Severity, DiagnosticSeverity> = {
  error: DiagnosticSeverity.Error,
  warning: DiagnosticSeverity.Warning,
  information: DiagnosticSeverity.Information,
  hint: DiagnosticSeverity.Hint,
};

// The last findings per document: code actions ask right after diagnostics were computed.
const lastFindings = new Map<string, { text: string; languageId: string; model?: string; findings: Finding[] }>();

function keyOf(doc: TextDocument) {
  const text = doc.getText();
  const isConfig = doc.languageId === 'yaml' && isQatConfig(doc.uri, text);
  const model = isConfig ? modelIndex.forConfig(doc.uri) : undefined;
  // The findings of a config also depend on its model's graph and on the workspace folders (QCFG016).
  const stamp = isConfig ? `${model?.stamp ?? ''}|${foldersGeneration()}` : undefined;
  const cached = lastFindings.get(doc.uri);
  const fresh = cached?.text === text && cached.languageId === doc.languageId && cached.model === stamp;
  return { text, isConfig, model, stamp, cached: fresh ? cached.findings : undefined };
}

function remember(doc: TextDocument, text: string, model: string | undefined, findings: Finding[]): Finding[] {
  lastFindings.delete(doc.uri);
  lastFindings.set(doc.uri, { text, languageId: doc.languageId, model, findings });
  if (lastFindings.size > 32) lastFindings.delete(lastFindings.keys().next().value!);
  return findings;
}

export function findingsFor(doc: TextDocument): Finding[] {
  const { text, isConfig, model, stamp, cached } = keyOf(doc);
  if (cached) return cached;
  let findings: Finding[] = [];
  if (doc.languageId === 'python') {
    const budget = pythonBudget(text);
    findings = pythonFindings(budget.text, doc.uri);
    if (budget.stoppedAt)
      findings = [
        ...findings,
        sizeFinding(
          text,
          budget.stoppedAt,
          `${Math.round(text.length / 1024)} KB; the first ${PYTHON_CHARS / 1000} KB is checked`,
        ),
      ];
  } else if (isConfig) findings = configFindings(text, model, doc.uri);
  return remember(doc, text, stamp, findings);
}

/**
 * Does the long part of findingsFor in slices that yield to the event loop (so other requests are answered
 * meanwhile) and leaves its results cached, so findingsFor right after is quick; false as soon as `stale()`
 * says a newer version exists (nothing is cached then).
 */
export async function prepareFindings(doc: TextDocument, stale: () => boolean): Promise<boolean> {
  const { text, isConfig, model, stamp, cached } = keyOf(doc);
  if (cached) return true;
  if (doc.languageId === 'python')
    return (await analyzePythonSliced(pythonBudget(text).text, doc.uri, stale)) !== undefined;
  if (!isConfig) return true;
  const findings = await runSliced(configSteps(text, model, doc.uri), stale);
  if (!findings) return false;
  remember(doc, text, stamp, findings);
  return true;
}

/** Drops what is kept for a closed document. */
export function forgetDocument(uri: string): void {
  lastFindings.delete(uri);
  forgetPython(uri);
  forgetConfig(uri);
}

function suppressed(doc: TextDocument, f: Finding): boolean {
  const line = doc.positionAt(f.start).line;
  const text = doc.getText({ start: { line, character: 0 }, end: { line: line + 1, character: 0 } });
  const m = /#\s*qat:\s*ignore(?:\[([\w, ]+)\])?/.exec(text);
  return (
    !!m &&
    (!m[1] ||
      m[1]
        .split(',')
        .map((s) => s.trim())
        .includes(f.code))
  );
}

/** The findings the user sees: not suppressed, not switched off, with the configured severity. */
export function visibleFindings(doc: TextDocument, settings: Settings = defaultSettings): Finding[] {
  const out: Finding[] = [];
  // most files have no `# qat: ignore` at all: then no line needs looking at
  const anyIgnore = /qat:\s*ignore/.test(doc.getText());
  for (const f of findingsFor(doc)) {
    const level = settings.severity[f.code];
    if (f.code === PATH_OUTSIDE && settings.allowPathsOutsideWorkspace) continue;
    if (level === 'off' || (anyIgnore && suppressed(doc, f))) continue;
    out.push(level ? { ...f, severity: level } : f);
  }
  return out;
}

export function toDiagnostic(doc: TextDocument, f: Finding): Diagnostic {
  return {
    range: { start: doc.positionAt(f.start), end: doc.positionAt(f.end) },
    severity: SEVERITY[f.severity],
    code: f.code,
    source: 'qat-studio',
    message: f.message,
  };
}

export function diagnosticsFor(doc: TextDocument, settings: Settings = defaultSettings): Diagnostic[] {
  return visibleFindings(doc, settings).map((f) => toDiagnostic(doc, f));
}
