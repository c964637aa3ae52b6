// Test builders: a minimal valid config with only the parts a test names, documents with a `|` cursor
// marker, and applying a finding's fix to check that it clears the finding.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { configFindings } from '../../../server/services/configDiagnostics';
import { pythonFindings } from '../../../server/services/pythonDiagnostics';
import type { Edit, Finding } from '../../../server/rules/types';

export const repoRoot = path.resolve(__dirname, '..', '..', '..');

export interface ConfigParts {
  flow?: string;
  backend?: string;
  activation?: string;
  weight?: string;
  overrides?: string[];
}

/** A valid config: version, model and an empty qconfig, plus whatever the test adds (flow style specs). */
export function config(parts: ConfigParts = {}): string {
  const lines = ['version: 1', 'model: {entry: "model.py:make_model", example_input: [2, 1, 8, 8]}'];
  if (parts.flow) lines.push(`flow: ${parts.flow}`);
  if (parts.backend) lines.push(`backend: ${parts.backend}`);
  if (parts.activation === undefined && parts.weight === undefined) lines.push('qconfig: {}');
  else {
    lines.push('qconfig:');
    if (parts.activation !== undefined) lines.push(`  activation: {${parts.activation}}`);
    if (parts.weight !== undefined) lines.push(`  weight: {${parts.weight}}`);
  }
  if (parts.overrides) lines.push('overrides:', ...parts.overrides.map((o) => `  - {${o}}`));
  return lines.join('\n') + '\n';
}

/** Splits `|` out of the text: the text without it and the cursor offset. */
export function cursor(textWithBar: string): { text: string; offset: number } {
  const offset = textWithBar.indexOf('|');
  if (offset < 0) throw new Error('no | cursor marker');
  return { text: textWithBar.slice(0, offset) + textWithBar.slice(offset + 1), offset };
}

export function yamlDoc(text: string, uri = 'file:///w/test.qat.yaml'): TextDocument {
  return TextDocument.create(uri, 'yaml', 1, text);
}

export function pyDoc(text: string, uri = 'file:///w/test.py'): TextDocument {
  return TextDocument.create(uri, 'python', 1, text);
}

export const yamlCodes = (text: string, code: string) => configFindings(text).filter((f) => f.code === code);
export const pyCodes = (text: string, code: string) => pythonFindings(text).filter((f) => f.code === code);

/** The text with the edits applied (from the end, so offsets stay valid). */
export function applyEdits(text: string, edits: Edit[]): string {
  return [...edits]
    .sort((a, b) => b.start - a.start)
    .reduce((t, e) => t.slice(0, e.start) + e.newText + t.slice(e.end), text);
}

export function applyFix(text: string, finding: Finding, index = 0): string {
  const fix = finding.fixes?.[index];
  if (!fix) throw new Error(`finding ${finding.code} has no fix ${index}`);
  return applyEdits(text, fix.edits);
}

export const spanOf = (text: string, f: Finding) => text.slice(f.start, f.end);

export function fixture(name: string): string {
  return readFileSync(path.join(repoRoot, 'test', 'unit', 'fixtures-python', name), 'utf8');
}
