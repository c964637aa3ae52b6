// QAT001: prepare_qat on a model in eval mode on every path: torch asserts "prepare_qat only works on models in
// training mode". (prepare_qat_fx and quantize_qat accept eval models: quantize_qat calls train() itself.)
// QAT002: a model convert_pt2e returned, called while its graph is still in train mode on every path: an
// exported graph keeps the mode it was exported in (it ignores .eval()), so dropout and batch norm run as in
// training. torchao imposes no order: move_exported_model_to_eval before or after convert_pt2e gives the same
// model. QAT015: .train()/.eval() on a torch.export graph module, which raises NotImplementedError.
import type { RuleInput } from '../../analysis/document';
import type { StoredFinding } from '../../analysis/findings';
import { mustAll, mustMode } from '../../analysis/state';
import { ensureImported, insertAbove, lastPart, lines, modelArg } from './helpers';

const PT2E = 'torchao.quantization.pt2e';

export function trainEvalOrder(input: RuleInput): StoredFinding[] {
  const findings: StoredFinding[] = [];
  for (const call of input.facts.calls) {
    if (call.inRaises || !call.state) continue;
    if (call.qualified === 'torch.ao.quantization.prepare_qat') {
      const model = modelArg(call);
      const mode = model && mustMode(call.state, model.dotted);
      if (!model || mode?.mode !== 'eval') continue;
      findings.push({
        code: 'QAT001',
        severity: 'error',
        start: call.from,
        end: call.to,
        message:
          `prepare_qat() on '${model.dotted}', which was last put in eval mode (${lines(input, mode.at)}): torch asserts ` +
          `"prepare_qat only works on models in training mode". Call ${model.dotted}.train() first.`,
        fixes: [insertAbove(input, call.stmt, call.indent, `${model.dotted}.train()`)],
      });
      continue;
    }
    const parts = call.callee;
    if (!parts) continue;
    const method = lastPart(call);
    if (parts.length >= 2 && (method === 'eval' || method === 'train')) {
      // m.eval() / m.train() on an exported graph module
      {
        const target = parts.slice(0, -1).join('.');
        if (!mustAll(call.state, target, (f) => !!f.exported && !f.trainEvalAllowed)) continue;
        const helper = method === 'eval' ? 'move_exported_model_to_eval' : 'move_exported_model_to_train';
        const arg = call.args[0]?.text ?? call.keywords.mode?.text;
        const effective = method === 'train' && arg === 'False' ? 'move_exported_model_to_eval' : helper;
        findings.push({
          code: 'QAT015',
          severity: 'error',
          start: call.from,
          end: call.to,
          message:
            `'${target}' is a torch.export graph module (exported, or prepared/converted by PT2E): ${target}.${method}() ` +
            `raises NotImplementedError. Use ${effective}(${target}) from ${PT2E}.`,
          fixes: [
            {
              title: `Use ${effective}(${target})`,
              edits: [
                { start: call.from, end: call.to, newText: `${effective}(${target})` },
                ...ensureImported(input, PT2E, effective),
              ],
              preferred: true,
            },
          ],
        });
      }
      continue;
    }
    if (call.qualified) continue;
    // qm(x): calling a converted PT2E model
    const target = parts.join('.');
    if (!mustAll(call.state, target, (f) => f.converted?.kind === 'pt2e')) continue;
    const mode = mustMode(call.state, target);
    if (mode?.mode !== 'train') continue;
    const fix = `move_exported_model_to_eval(${target})`;
    findings.push({
      code: 'QAT002',
      severity: 'warning',
      start: call.calleeSpan.from,
      end: call.calleeSpan.to,
      message:
        `'${target}' (from convert_pt2e) is called while its graph is in train mode (${lines(input, mode.at)}): an exported ` +
        'graph keeps the mode it was exported in, so its dropout and batch norm run as in training. ' +
        `Call ${fix} first (before or after convert_pt2e: either order gives the same model).`,
      fixes: [
        {
          ...insertAbove(input, call.stmt, call.indent, fix),
          edits: [
            ...insertAbove(input, call.stmt, call.indent, fix).edits,
            ...ensureImported(input, PT2E, 'move_exported_model_to_eval'),
          ],
        },
      ],
    });
  }
  return findings;
}
