// QAT009: fuse_modules over a conv+bn group on a model in train mode on every path: torch asserts "Fusion
// only for eval!" (conv+relu alone fuses in either mode). Also through the file's own helpers, as
// `model.fuse_model()` whose body fuses self's conv+bn. And fuse_modules_qat on a model in eval mode that is
// never put back in train mode here: its ConvBn modules are QAT modules, which prepare()/convert() leave in
// float and prepare_qat() refuses in eval mode; for post-training quantization fuse_modules folds BN away.
import type { RuleInput } from '../../analysis/document';
import type { StoredFinding } from '../../analysis/findings';
import { lineMark } from '../../analysis/findings';
import { mustMode, objsOf } from '../../analysis/state';
import { groupsHaveBatchNorm } from '../../analysis/summaries';
import type { CallInfo } from '../../analysis/walker';
import { insertAbove, lastPart, lines, modelArg, type Fix } from './helpers';

const FUSE = new Set(['torch.ao.quantization.fuse_modules', 'torch.ao.quantization.fuse_modules.fuse_modules']);
const FUSE_QAT = new Set([
  'torch.ao.quantization.fuse_modules_qat',
  'torch.ao.quantization.fuse_modules.fuse_modules_qat',
]);

function renameFix(input: RuleInput, call: CallInfo, to: string): Fix | undefined {
  const qualifiedCallee = (call.callee?.length ?? 0) > 1;
  if (!qualifiedCallee && !input.ctx.module.names.lookup(to)?.endsWith(`.${to}`)) return undefined;
  const end = call.calleeSpan.to;
  const start = end - lastPart(call)!.length;
  return { title: `Use ${to}`, edits: [{ start, end, newText: to }] };
}

function trainError(
  input: RuleInput,
  call: CallInfo,
  target: string,
  at: number[],
  what: string,
  fixes: Fix[],
): StoredFinding {
  return {
    code: 'QAT009',
    severity: 'error',
    start: call.from,
    end: call.to,
    message:
      `${what} on '${target}', which is in train mode (${lines(input, at)}): fusing conv+bn asserts "Fusion only for eval!". ` +
      `Call ${target}.eval() first, or fuse with fuse_modules_qat for QAT.`,
    fixes: [insertAbove(input, call.stmt, call.indent, `${target}.eval()`, `Call ${target}.eval() first`), ...fixes],
  };
}

export function fuseMode(input: RuleInput): StoredFinding[] {
  const findings: StoredFinding[] = [];
  const calls = input.facts.calls;
  calls.forEach((call, i) => {
    if (call.inRaises || !call.state) return;
    const q = call.qualified;
    if (q && (FUSE.has(q) || FUSE_QAT.has(q))) {
      const model = modelArg(call);
      if (!model) return;
      const mode = mustMode(call.state, model.dotted);
      const groups = call.args[1] ?? call.keywords.modules_to_fuse;
      if (FUSE.has(q) && mode?.mode === 'train' && groups && groupsHaveBatchNorm(groups.text)) {
        const rename = renameFix(input, call, 'fuse_modules_qat');
        findings.push(trainError(input, call, model.dotted, mode.at, 'fuse_modules()', rename ? [rename] : []));
      } else if (FUSE_QAT.has(q) && mode?.mode === 'eval') {
        // put back in train mode later in this function: the QAT flow
        const later = calls
          .slice(i + 1)
          .some(
            (c) =>
              c.run === call.run &&
              ((lastPart(c) === 'train' && c.args[0]?.text !== 'False') ||
                /move_exported_model_to_train$/.test(c.qualified ?? '')),
          );
        if (later) return;
        const rename = renameFix(input, call, 'fuse_modules');
        findings.push({
          code: 'QAT009',
          severity: 'warning',
          start: call.from,
          end: call.to,
          message:
            `fuse_modules_qat() on '${model.dotted}', which is in eval mode (${lines(input, mode.at)}) and never put back in train mode here: ` +
            'its fused ConvBn modules are QAT modules, which prepare()/convert() leave in float and prepare_qat() refuses in eval mode. ' +
            'For post-training quantization use fuse_modules, which folds BN into the conv.',
          fixes: rename ? [rename] : undefined,
        });
      }
      return;
    }
    // model.fuse_model() / fuse(model): a helper of this file that fuses conv+bn
    const parts = call.callee;
    if (!parts) return;
    let fusion;
    let target: string | undefined;
    let label = '';
    if (parts.length >= 2) {
      target = parts.slice(0, -1).join('.');
      const objs = objsOf(call.state, target);
      const cls = objs?.map((id) => call.state!.objs.get(id)?.cls);
      if (!cls?.[0] || !cls.every((c) => c === cls[0])) return;
      const m = input.ctx.method(cls[0], parts[parts.length - 1]);
      fusion = m && input.ctx.fusion(m.summary, 0, m.owner.name);
      label = `${call.callee!.join('.')}()`;
    } else if (!call.qualified && input.ctx.functions.has(parts[0])) {
      const fn = input.ctx.functions.get(parts[0])!;
      const index = call.args.findIndex((a, k) => a.dotted && input.ctx.fusion(fn, k));
      if (index < 0) return;
      target = call.args[index].dotted;
      fusion = input.ctx.fusion(fn, index);
      label = `${parts[0]}()`;
    }
    if (!fusion || !target) return;
    const mode = mustMode(call.state, target);
    if (mode?.mode !== 'train') return;
    findings.push(
      trainError(
        input,
        call,
        target,
        mode.at,
        `${label} runs fuse_modules over ${fusion.groups} (line ${lineMark(fusion.site)})`,
        [],
      ),
    );
  });
  return findings;
}
