// QCFG014: an override that can never apply because an earlier one matches every module it matches
// (first match wins). Decided only where it is certain: the same pattern, a match-all pattern, literal
// names the earlier regex fully matches, or `prefix.*` under a shorter `prefix.*`.
import { isMap, isSeq } from 'yaml';
import type { Fix, Finding } from '../types';
import { compilePython, literalAlternatives, type LinearRegex } from '../../util/pyRegex';
import { overrideMatches, pairOf, type OverrideMatch, type YamlRuleContext } from './context';

const MATCH_ALL = new Set(['.*', '.+', '.*?', '.+?', '(.*)', '(.+)']);

function prefixStar(pattern: string): string | undefined {
  const m = /^((?:[\w/-]|\\\.)*)\.\*$/.exec(pattern);
  return m ? m[1].replace(/\\\./g, '.') : undefined;
}

interface Shape {
  m: OverrideMatch;
  regex?: LinearRegex;
  names?: string[];
  prefix?: string;
}

function shapeOf(m: OverrideMatch): Shape {
  const compiled = compilePython(m.pattern);
  return {
    m,
    regex: compiled.ok === true ? compiled.regex : undefined,
    names: literalAlternatives(m.pattern),
    prefix: prefixStar(m.pattern),
  };
}

function covers(earlier: Shape, later: Shape): boolean {
  if (earlier.m.pattern === later.m.pattern || MATCH_ALL.has(earlier.m.pattern)) return true;
  if (!earlier.regex) return false;
  if (later.names) return later.names.every((n) => earlier.regex!.test(n));
  return later.prefix !== undefined && earlier.prefix !== undefined && later.prefix.startsWith(earlier.prefix);
}

export function* overrideShadowed(ctx: YamlRuleContext): Generator<void, Finding[]> {
  const shapes: Shape[] = [];
  for (const m of overrideMatches(ctx)) {
    yield;
    shapes.push(shapeOf(m));
  }
  const findings: Finding[] = [];
  for (const [i, later] of shapes.entries()) {
    yield;
    const earlier = shapes.slice(0, i).find((e) => covers(e, later))?.m;
    if (!earlier) continue;
    findings.push({
      code: 'QCFG014',
      severity: 'warning',
      start: later.m.at[0],
      end: later.m.at[1],
      message:
        `This override never applies: override ${earlier.index} (match "${earlier.pattern}") comes first and matches ` +
        'every module this one matches. The first matching override wins.',
      fixes: moveFix(ctx, earlier, later.m),
    });
  }
  return findings;
}

/** Move the shadowed block-style item above the one that shadows it. */
function moveFix(ctx: YamlRuleContext, earlier: OverrideMatch, later: OverrideMatch): Fix[] | undefined {
  const root = ctx.doc.contents;
  const seq = isMap(root) ? pairOf(root, 'overrides')?.value : undefined;
  if (!isSeq(seq) || seq.flow || !earlier.item.range || !later.item.range) return undefined;
  const lineStart = (o: number) => ctx.text.lastIndexOf('\n', o - 1) + 1;
  const lineAfter = (o: number) => {
    const n = ctx.text.indexOf('\n', o);
    return n < 0 ? ctx.text.length : n + 1;
  };
  const from = lineStart(later.item.range[0]);
  const to = lineAfter(later.item.range[1] - 1);
  let block = ctx.text.slice(from, to);
  if (!block.endsWith('\n')) block += '\n';
  const at = lineStart(earlier.item.range[0]);
  return [
    {
      title: `Move above override ${earlier.index}`,
      edits: [
        { start: at, end: at, newText: block },
        { start: from, end: to, newText: '' },
      ],
    },
  ];
}
