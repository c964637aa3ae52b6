// QCFG015: an overrides[].match that matches none of the model's modules (or, for `a|b`, a name that is no
// module), once the kernel has exported the model's graph (graph/export). Matching is the kernel's:
// re.fullmatch against each module path (parents are modules too, so `layer4` covers `layer4.0.conv1`).
// A typo in a literal name gets a fix.
import path from 'node:path';
import type { Finding, Fix } from '../types';
import type { KnownModule, ModelKnowledge } from '../../services/modelIndex';
import { MODULE_TESTS_PER_ANALYSIS } from '../../util/budget';
import { closest } from '../../util/levenshtein';
import { compilePython } from '../../util/pyRegex';
import { overrideMatches, replaceFix, type YamlRuleContext } from './context';

export function* overrideUnmatched(ctx: YamlRuleContext): Generator<void, Finding[]> {
  const model = ctx.model;
  if (!model || model.modules.length === 0) return [];
  const { paths, known } = modulePaths(model);
  const from = `(from ${path.basename(model.graphFile)}, ${model.stage} graph)`;
  const findings: Finding[] = [];
  // Patterns run against every module path; past the budget the overrides left are not checked (no warning
  // is better than a wrong one).
  let tests = 0;
  for (const m of overrideMatches(ctx)) {
    yield;
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
      continue;
    }
    if (tests + paths.length > MODULE_TESTS_PER_ANALYSIS) break;
    let matched = false;
    for (let i = 0; i < paths.length && !matched; i++) {
      matched = compiled.regex.test(paths[i]);
      if (++tests % 10_000 === 0) yield;
    }
    if (!matched)
      findings.push({
        code: 'QCFG015',
        severity: 'warning',
        start: m.at[0],
        end: m.at[1],
        message: `match "${m.pattern}" matches none of the model's ${paths.length} modules ${from}; this override changes nothing.`,
      });
  }
  return findings;
}

// The module paths as a list and a set, once per graph read (not once per analysis).
const pathSets = new WeakMap<KnownModule[], { paths: string[]; known: Set<string> }>();

function modulePaths(model: ModelKnowledge): { paths: string[]; known: Set<string> } {
  let found = pathSets.get(model.modules);
  if (!found) {
    const paths = model.modules.map((m) => m.path);
    found = { paths, known: new Set(paths) };
    pathSets.set(model.modules, found);
  }
  return found;
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
