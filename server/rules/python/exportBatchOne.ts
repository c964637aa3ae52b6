// QAT011: torch.export.export with a dynamic batch dimension and a batch-1 example input. With Dim("batch")
// or Dim.DYNAMIC export fails (it specialises a size of 1 and reports the conflict); with Dim.AUTO it
// silently specialises the batch to 1, and the exported program then rejects any other batch size
// ("Guard failed: x.size()[0] == 1"). A batch of 2 in the example works for all three.
import type { SyntaxNode } from '@lezer/common';
import type { RuleInput } from '../../analysis/document';
import type { StoredFinding } from '../../analysis/findings';
import type { State } from '../../analysis/state';
import { dottedParts, elements, readArgs, slice } from '../../analysis/syntax';

const FACTORIES = /^(randn|rand|zeros|ones|empty|full|randint)$/;

/** The expression node that starts at `offset` (an assigned value). */
function exprAt(input: RuleInput, offset: number): SyntaxNode | undefined {
  let n: SyntaxNode | null = input.tree.resolveInner(offset, 1);
  while (n?.parent && n.parent.from === offset && !/Statement$|^Script$|^Body$/.test(n.parent.name)) n = n.parent;
  return n && n.from === offset ? n : undefined;
}

/** The literal `1` that sets the batch size of the first example tensor, if it can be seen. */
function batchOne(
  input: RuleInput,
  state: State | null,
  node: SyntaxNode | null | undefined,
  depth = 0,
): SyntaxNode | undefined {
  if (!node || depth > 4) return undefined;
  if (node.name === 'TupleExpression' || node.name === 'ArrayExpression' || node.name === 'ParenthesizedExpression')
    return batchOne(input, state, elements(node)[0], depth + 1);
  if (node.name === 'VariableName') {
    const defs = state?.vars.get(slice(input.text, node))?.defs;
    return defs?.length === 1 ? batchOne(input, state, exprAt(input, defs[0]), depth + 1) : undefined;
  }
  if (node.name !== 'CallExpression') return undefined;
  const parts = dottedParts(input.text, node.firstChild);
  if (!parts || !FACTORIES.test(parts[parts.length - 1])) return undefined;
  const { args, keywords } = readArgs(input.text, node.getChild('ArgList'));
  let size = parts[parts.length - 1] === 'randint' ? args[2] : (args[0] ?? keywords.get('size'));
  if (size && (size.name === 'TupleExpression' || size.name === 'ArrayExpression')) size = elements(size)[0];
  return size?.name === 'Number' && slice(input.text, size) === '1' ? size : undefined;
}

export function exportBatchOne(input: RuleInput): StoredFinding[] {
  const findings: StoredFinding[] = [];
  for (const call of input.facts.calls) {
    if (call.qualified !== 'torch.export.export') continue;
    const dynamic = call.keywords.dynamic_shapes;
    if (!dynamic || !/\b0\s*:|Dim\b|AUTO|DYNAMIC/.test(dynamic.text)) continue;
    const { args, keywords } = readArgs(input.text, call.node.getChild('ArgList'));
    const one = batchOne(input, call.state, args[1] ?? keywords.get('args'));
    if (!one) continue;
    const auto = /\bAUTO\b/.test(dynamic.text) && !/Dim\s*\(|DYNAMIC/.test(dynamic.text);
    findings.push({
      code: 'QAT011',
      severity: auto ? 'warning' : 'error',
      start: one.from,
      end: one.to,
      message: auto
        ? 'Batch-1 example with Dim.AUTO: torch.export silently specialises the batch to 1, and the exported program then ' +
          'rejects other batch sizes ("Guard failed: x.size()[0] == 1"). Use a batch of 2 or more in the example.'
        : 'Batch-1 example with a dynamic batch dimension: torch.export specialises a size of 1 and fails ' +
          '("Constraints violated" for a Dim, a range conflict for Dim.DYNAMIC). Use a batch of 2 or more in the example.',
      fixes: [{ title: 'Use a batch of 2', edits: [{ start: one.from, end: one.to, newText: '2' }], preferred: true }],
    });
  }
  return findings;
}
