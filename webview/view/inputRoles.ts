// A node's inputs named by their role, as the operator's schema names them (QLinearConv: x, x_scale,
// x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B), from the table generated out of the ONNX
// and ONNX Runtime operator schemas (scripts/gen_onnx_op_inputs.py), for the schema version the model imports.
import { OP_INPUTS } from '../../build/generated/onnx-op-inputs';
import type { Graph, GraphNode } from '../importers/types';

const DEFAULT_DOMAIN = 'ai.onnx';

/** The schema's names for `count` inputs of `node`, or undefined when no schema names them (graph JSON, custom ops). */
export function inputRoles(
  node: Pick<GraphNode, 'op' | 'domain'>,
  opsets: Graph['opsets'],
  count: number,
): string[] | undefined {
  const domain = node.domain || DEFAULT_DOMAIN;
  const rows = OP_INPUTS[domain]?.[node.op];
  if (!rows?.length) return undefined;
  // The newest version the model's opset for the domain allows; without an opset, the newest.
  const opset = opsets[domain] ?? (domain === DEFAULT_DOMAIN ? opsets[''] : undefined);
  let row = rows[rows.length - 1];
  if (opset !== undefined) {
    const allowed = rows.filter((r) => r[0] <= opset);
    if (allowed.length) row = allowed[allowed.length - 1];
  }
  const names = row[1] ? row[1].split(',') : [];
  const variadic = row[2] === 1;
  if (!names.length || (count > names.length && !variadic)) return undefined;
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    if (i < names.length - 1 || (!variadic && i < names.length)) out.push(names[i]);
    else {
      const last = names[names.length - 1];
      // A variadic input (Concat's inputs): one name, numbered.
      out.push(variadic && count > names.length ? `${last}[${i - names.length + 1}]` : last);
    }
  }
  return out;
}
