// QCFG015: an overrides[].match that matches none of the model's modules (or, for `a|b`, a name that is no
// module), once the kernel has exported the model's graph (graph/export). Matching is the kernel's:
// re.fullmatch against each module path (parents are modules too, so `layer4` covers `layer4.0.conv1`).
// A typo in a literal name gets a fix.
import path from 'node:path';
import type { Finding, Fix } from '../types';
import { closest } from '../../util/levenshtein';
import { compilePython } from '../../util/pyRegex';
import { overrideMatches, replaceFix, type YamlRuleContext } from './context';

export function overrideUnmatched(ctx: YamlRuleContext): Finding[] {
  const model = ctx.model;
  if (!model || model.modules.length === 0) return [];
  const paths = model.modules.map((m) => m.path);
  const known = new Set(paths);
  const from = `(from ${path.basename(model.graphFile)}, ${model.stage} graph)`;
  const findings: Finding[] = [];
  for (const m of overrideMatches(ctx)) {
    const compiled = compilePython(m.pattern);
    if (compiled.ok !== true) continue; // QCFG013 reports it (invalid, or beyond the linear-time matcher)
    const names = literalNames(m.pattern);
    if (names) {
      const unknown = names.filter((n) => !known.has(n));
      if (unknown.length === 0) continue;
      findings.push({
        code: 'QCFG015',
        severity: 'warning',
        start: m.at[0],
        end: m.at[1],
        message:
          `${unknown.map((n) => `"${n}"`).join(', ')} ${unknown.length === 1 ? 'is' : 'are'} not a module of the model ${from}` +
          `${unknown.length === names.length ? '; this override changes nothing' : ''}.`,
        fixes: renameFix(ctx.text, m.at, names, known, paths),
      });
    } else if (!paths.some((p) => compiled.regex.test(p))) {
      findings.push({
        code: 'QCFG015',
        severity: 'warning',
        start: m.at[0],
        end: m.at[1],
        message: `match "${m.pattern}" matches none of the model's ${paths.length} modules ${from}; this override changes nothing.`,
      });
    }
  }
  return findings;
}

/** `conv1|layer1.0.conv1` as names; a dot counts as a literal dot (escaped or not, as people write them). */
function literalNames(pattern: string): string[] | undefined {
  const parts = pattern.split('|');
  return parts.every((p) => /^(?:[\w/-]|\\?\.)+$/.test(p)) ? parts.map((p) => p.replace(/\\\./g, '.')) : undefined;
}

/** Replace each name that is no module with the closest module path, escaping dots for re.fullmatch. */
function renameFix(
  text: string,
  at: [number, number],
  names: string[],
  known: Set<string>,
  paths: string[],
): Fix[] | undefined {
  const fixed = names.map((n) => (known.has(n) ? n : closest(n, paths)));
  if (fixed.some((n) => n === undefined)) return undefined;
  const escaped = fixed.map((n) => n!.replace(/\./g, '\\.')).join('|');
  const raw = text.slice(at[0], at[1]);
  const quote = raw[0] === '"' || raw[0] === "'" ? raw[0] : '';
  // Inside double quotes YAML needs the backslash doubled; single quotes and plain scalars take it as is.
  const value = quote === '"' ? escaped.replace(/\\/g, '\\\\') : escaped;
  return [replaceFix(`Change to '${fixed.join('|')}'`, at, `${quote}${value}${quote}`, true)];
}
