// QCFG013: an overrides[].match that Python's re cannot compile (the kernel uses re.fullmatch).
import type { Finding } from '../types';
import { compilePython } from '../../util/pyRegex';
import { overrideMatches, type YamlRuleContext } from './context';

export function overrideMatch(ctx: YamlRuleContext): Finding[] {
  const findings: Finding[] = [];
  for (const { pattern, at } of overrideMatches(ctx)) {
    const compiled = compilePython(pattern);
    if (compiled.ok !== false) continue;
    findings.push({
      code: 'QCFG013',
      severity: 'error',
      start: at[0],
      end: at[1],
      message: `match "${pattern}" is not a valid regular expression: ${compiled.error}.`,
    });
  }
  return findings;
}
