// QCFG013: an overrides[].match that Python's re cannot compile (the kernel uses re.fullmatch), and, as
// information, one that Python accepts but the editor's linear-time matcher cannot run (so no other override
// rule checks it).
import type { Finding } from '../types';
import { compilePython } from '../../util/pyRegex';
import { overrideMatches, type YamlRuleContext } from './context';

export function* overrideMatch(ctx: YamlRuleContext): Generator<void, Finding[]> {
  const findings: Finding[] = [];
  for (const { pattern, at } of overrideMatches(ctx)) {
    yield;
    const compiled = compilePython(pattern);
    if (compiled.ok === true) continue;
    findings.push(
      compiled.ok === false
        ? {
            code: 'QCFG013',
            severity: 'error',
            start: at[0],
            end: at[1],
            message: `match "${pattern}" is not a valid regular expression: ${compiled.error}.`,
          }
        : {
            code: 'QCFG013',
            severity: 'information',
            start: at[0],
            end: at[1],
            message:
              `match "${pattern}" is not checked in the editor, ${compiled.reason}. ` +
              'The kernel still applies it with Python re.',
          },
    );
  }
  return findings;
}
