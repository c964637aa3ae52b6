// Diagnostics for Python QAT scripts, from the @lezer/python tree (pure JS, no Python needed).
import { parser } from '@lezer/python';
import { pythonRules } from '../rules/python';
import type { Finding } from '../rules/types';

export function pythonFindings(text: string): Finding[] {
  const ctx = { text, tree: parser.parse(text) };
  return pythonRules.flatMap((rule) => rule(ctx));
}
