// QAT013: `model.qconfig = ...` where model is, on every path here, what an eager prepare / prepare_qat made
// (or prepared in place): the observers and fake-quant modules were inserted from the qconfig prepare saw, so
// the new one has no effect. Exclusive branches (a PTQ branch and a QAT branch) are different paths.
import type { RuleInput } from '../../analysis/document';
import type { StoredFinding } from '../../analysis/findings';
import { mustAll } from '../../analysis/state';
import { lineStartOf } from '../../analysis/syntax';
import { lines, type Fix } from './helpers';

export function qconfigAfterPrepare(input: RuleInput): StoredFinding[] {
  const findings: StoredFinding[] = [];
  for (const a of input.facts.assigns) {
    if (!a.state || a.inRaises) continue;
    const parts = a.target.split('.');
    if (parts[parts.length - 1] !== 'qconfig' || parts.length < 2) continue;
    // the longest prefix that is a tracked variable: model.fc.qconfig -> model.fc, else model
    let base: string | undefined;
    for (let k = parts.length - 1; k >= 1 && !base; k--) {
      const candidate = parts.slice(0, k).join('.');
      if (a.state.vars.has(candidate)) base = candidate;
    }
    const facts = base ? mustAll(a.state, base, (f) => !!f.prepared) : undefined;
    if (!base || !facts) continue;
    const sites = [...new Set(facts.flatMap((f) => f.prepared!))];
    findings.push({
      code: 'QAT013',
      severity: 'warning',
      start: a.targetSpan.from,
      end: a.targetSpan.to,
      message:
        `${a.target} is set after prepare (${lines(input, sites)}), so it has no effect: the observers and fake-quant ` +
        'modules were already inserted. Set the qconfig before preparing.',
      fixes: sites.length === 1 ? moveAbove(input, a, sites[0]) : undefined,
    });
  }
  return findings;
}

/** Moves a one-line assignment above the prepare statement when both sit at the same indentation. */
function moveAbove(
  input: RuleInput,
  a: { from: number; to: number; stmt: { from: number; to: number } },
  site: number,
): Fix[] | undefined {
  const prepare = input.facts.calls.find((c) => c.from === site);
  if (!prepare) return undefined;
  const text = input.text;
  const { from, to } = a.stmt;
  const anchor = prepare.stmt.from;
  const start = lineStartOf(text, from);
  const anchorStart = lineStartOf(text, anchor);
  const end = text.indexOf('\n', to);
  if (
    text.slice(start, from).trim() ||
    text.slice(anchorStart, anchor) !== text.slice(start, from) ||
    text.slice(from, to).includes('\n') ||
    anchor > from
  )
    return undefined;
  const line = text.slice(start, end < 0 ? text.length : end + 1);
  return [
    {
      title: 'Move above the prepare call',
      edits: [
        { start: anchorStart, end: anchorStart, newText: line.endsWith('\n') ? line : line + '\n' },
        { start, end: end < 0 ? text.length : end + 1, newText: '' },
      ],
      preferred: true,
    },
  ];
}
