// QAT001: prepare_qat on a model last put in eval mode. QAT002: convert on a model still in train mode.
import type { Fix, Finding } from '../types';
import { modeEvents } from './modes';
import {
  indentAt,
  lineOf,
  lineStartOf,
  quantizationImports,
  statementOf,
  textOf,
  type Call,
  type PythonRuleContext,
} from './syntax';

/** Inserts `line` above the statement holding `call`, at its indentation. */
function insertAbove(ctx: PythonRuleContext, call: Call, line: string): Fix {
  const stmt = statementOf(call.node);
  const at = lineStartOf(ctx.text, stmt.from);
  return {
    title: `Insert ${line}`,
    edits: [{ start: at, end: at, newText: `${indentAt(ctx.text, stmt.from)}${line}\n` }],
    preferred: true,
  };
}

const PREPARE = new Set(['prepare_qat', 'prepare_qat_fx', 'prepare_qat_pt2e', 'quantize_qat']);
const CONVERT = new Set(['convert', 'convert_fx', 'convert_pt2e']);

export function isQuantizationCall(call: Call, names: Set<string>, imported: Set<string>): boolean {
  const name = call.callee[call.callee.length - 1];
  if (!names.has(name)) return false;
  if (call.callee.length === 1) return imported.has(name) || name !== 'convert';
  return call.callee.slice(0, -1).some((part) => /quantiz|pt2e|^tq$/.test(part));
}

export function trainEvalOrder(ctx: PythonRuleContext): Finding[] {
  const imported = quantizationImports(ctx);
  const findings: Finding[] = [];
  for (const { call, state, change } of modeEvents(ctx)) {
    if (change) continue;
    const model = call.args[0] ?? call.keywords.get('model');
    if (model?.name !== 'VariableName') continue;
    const name = textOf(ctx, model);
    const last = state.get(name);
    const fn = call.callee[call.callee.length - 1];
    const { from, to } = call.node;
    if (last?.mode === 'eval' && isQuantizationCall(call, PREPARE, imported)) {
      findings.push({
        code: 'QAT001',
        severity: 'warning',
        start: from,
        end: to,
        message:
          `${fn}() on '${name}', which was last put in eval mode (line ${lineOf(ctx.text, last.at)}). ` +
          `QAT needs train mode: call ${name}.train() first.`,
        fixes: [insertAbove(ctx, call, `${name}.train()`)],
      });
    } else if (last?.mode === 'train' && isQuantizationCall(call, CONVERT, imported)) {
      const fix = fn === 'convert_pt2e' ? `move_exported_model_to_eval(${name})` : `${name}.eval()`;
      findings.push({
        code: 'QAT002',
        severity: 'warning',
        start: from,
        end: to,
        message:
          `${fn}() on '${name}', which is still in train mode (line ${lineOf(ctx.text, last.at)}). ` +
          `Call ${fix} before converting.`,
        fixes: [insertAbove(ctx, call, fix)],
      });
    }
  }
  return findings;
}
