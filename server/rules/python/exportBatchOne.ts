// QAT011: torch.export.export with a dynamic batch dimension and a batch-1 example input fails
// ("specialized it to be a constant (1)"): export traces with size 1 and specialises it. A batch of 2 works.
import type { SyntaxNode } from '@lezer/common';
import type { Finding } from '../types';
import { allCalls, asCall, elements, lastAssignment, qualify, textOf, type PythonRuleContext } from './syntax';

const FACTORIES = /^(randn|rand|zeros|ones|empty|full)$/;

/** The literal `1` that sets the batch size of the first example tensor, if it can be seen. */
function batchOne(ctx: PythonRuleContext, node: SyntaxNode | undefined, depth = 0): SyntaxNode | undefined {
  if (!node || depth > 4) return undefined;
  if (node.name === 'TupleExpression' || node.name === 'ArrayExpression')
    return batchOne(ctx, elements(node)[0], depth + 1);
  if (node.name === 'ParenthesizedExpression') return batchOne(ctx, elements(node)[0], depth + 1);
  if (node.name === 'VariableName') return batchOne(ctx, lastAssignment(ctx, textOf(ctx, node), node), depth + 1);
  const call = asCall(ctx, node);
  if (!call || !FACTORIES.test(call.callee[call.callee.length - 1])) return undefined;
  let size = call.args[0] ?? call.keywords.get('size');
  if (size && (size.name === 'TupleExpression' || size.name === 'ArrayExpression')) size = elements(size)[0];
  return size?.name === 'Number' && textOf(ctx, size) === '1' ? size : undefined;
}

export function exportBatchOne(ctx: PythonRuleContext): Finding[] {
  const findings: Finding[] = [];
  for (const call of allCalls(ctx)) {
    if (qualify(ctx, call.callee) !== 'torch.export.export') continue;
    const dynamic = call.keywords.get('dynamic_shapes');
    if (!dynamic || !/\b0\s*:|Dim\b|AUTO|DYNAMIC/.test(textOf(ctx, dynamic))) continue;
    const one = batchOne(ctx, call.args[1] ?? call.keywords.get('args'));
    if (!one) continue;
    findings.push({
      code: 'QAT011',
      severity: 'error',
      start: one.from,
      end: one.to,
      message:
        'Batch-1 example with a dynamic batch dimension: torch.export specialises a size of 1 ' +
        '("specialized it to be a constant (1)"). Use a batch of 2 or more in the example.',
      fixes: [{ title: 'Use a batch of 2', edits: [{ start: one.from, end: one.to, newText: '2' }], preferred: true }],
    });
  }
  return findings;
}
