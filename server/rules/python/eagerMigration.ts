// QAT004 (information, once per file): eager / FX QAT is deprecated in torch (torch.ao.quantization warns
// that it will be removed); the maintained path is torchao PT2E.
import type { Finding } from '../types';
import { allCalls, qualify, type PythonRuleContext } from './syntax';

const EAGER_QAT = /^torch\.(ao\.)?quantization(\.quantize_fx)?\.(prepare_qat|prepare_qat_fx|quantize_qat)$/;

export function eagerMigration(ctx: PythonRuleContext): Finding[] {
  const call = allCalls(ctx).find((c) => EAGER_QAT.test(qualify(ctx, c.callee)));
  if (!call) return [];
  const name = call.callee[call.callee.length - 1];
  const callee = call.node.firstChild!;
  return [
    {
      code: 'QAT004',
      severity: 'information',
      start: callee.from,
      end: callee.to,
      message:
        `${name} is eager/FX QAT, deprecated in torch (torch.ao.quantization warns it will be removed). ` +
        'The maintained flow is torchao PT2E: m = torch.export.export(model, (x,)).module(); ' +
        'm = prepare_qat_pt2e(m, X86InductorQuantizer().set_global(get_default_x86_inductor_quantization_config(is_qat=True))); ' +
        'train; move_exported_model_to_eval(m); m = convert_pt2e(m).',
    },
  ];
}
