// QAT013: `model.qconfig = ...` after prepare_qat/prepare has no effect: the fake-quant and observer modules
// were already inserted from the qconfig prepare saw.
import type { Fix, Finding } from '../types';
import { allCalls, lineOf, lineStartOf, qualify, scopeOf, statementOf, textOf, type PythonRuleContext } from './syntax';

const PREPARE = /^torch\.(ao\.)?quantization\.(prepare_qat|prepare)$/;

export function qconfigAfterPrepare(ctx: PythonRuleContext): Finding[] {
  // Variables prepared so far: the argument and the result of each eager prepare call.
  const prepared: Array<{ name: string; at: number; stmt: ReturnType<typeof statementOf>; scope: string }> = [];
  for (const call of allCalls(ctx)) {
    if (!PREPARE.test(qualify(ctx, call.callee))) continue;
    const scope = scopeOf(call.node);
    const stmt = statementOf(call.node);
    const key = `${scope.from}:${scope.to}`;
    const first = call.args[0] ?? call.keywords.get('model');
    if (first?.name === 'VariableName') prepared.push({ name: textOf(ctx, first), at: call.node.to, stmt, scope: key });
    const target = call.node.parent?.name === 'AssignStatement' ? call.node.parent.firstChild : null;
    if (target?.name === 'VariableName')
      prepared.push({ name: textOf(ctx, target), at: call.node.to, stmt, scope: key });
  }
  if (!prepared.length) return [];
  const findings: Finding[] = [];
  ctx.tree.iterate({
    enter(ref) {
      if (ref.name !== 'AssignStatement') return;
      const target = ref.node.firstChild;
      const m = target?.name === 'MemberExpression' ? /^(\w+)(?:\.\w+)*\.qconfig$/.exec(textOf(ctx, target)) : null;
      if (!m || !target) return;
      const scope = scopeOf(ref.node);
      const before = prepared.filter(
        (p) => p.name === m[1] && p.at <= ref.from && p.scope === `${scope.from}:${scope.to}`,
      );
      const prep = before[before.length - 1];
      if (!prep) return;
      findings.push({
        code: 'QAT013',
        severity: 'warning',
        start: target.from,
        end: target.to,
        message:
          `${textOf(ctx, target)} is set after prepare (line ${lineOf(ctx.text, prep.stmt.from)}), so it has no effect: ` +
          'the fake-quant modules were already inserted. Set the qconfig before preparing.',
        fixes: moveAbove(ctx, ref.from, ref.to, prep.stmt.from),
      });
    },
  });
  return findings;
}

/** Moves a one-line statement above another statement of the same indentation. */
function moveAbove(ctx: PythonRuleContext, from: number, to: number, anchor: number): Fix[] | undefined {
  const start = lineStartOf(ctx.text, from);
  const anchorStart = lineStartOf(ctx.text, anchor);
  const end = ctx.text.indexOf('\n', to);
  if (
    ctx.text.slice(start, from).trim() ||
    ctx.text.slice(anchorStart, anchor) !== ctx.text.slice(start, from) ||
    ctx.text.slice(from, to).includes('\n')
  )
    return undefined;
  const line = ctx.text.slice(start, end < 0 ? ctx.text.length : end + 1);
  return [
    {
      title: 'Move above the prepare call',
      edits: [
        { start: anchorStart, end: anchorStart, newText: line.endsWith('\n') ? line : line + '\n' },
        { start, end: end < 0 ? ctx.text.length : end + 1, newText: '' },
      ],
      preferred: true,
    },
  ];
}
