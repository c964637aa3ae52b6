// QAT009: fuse_modules on a model in train mode (conv+bn fusion asserts "Fusion only for eval!"), and
// fuse_modules_qat on a model in eval mode that is never put back in train mode in that scope (QAT fusion
// keeps BN trainable; for an eval-only model fuse_modules folds BN away).
import type { Fix, Finding } from '../types';
import { modeEvents } from './modes';
import {
  imports,
  indentAt,
  lineOf,
  lineStartOf,
  qualify,
  statementOf,
  textOf,
  type Call,
  type PythonRuleContext,
} from './syntax';

const FUSE = /^torch\.(ao\.)?quantization(\.fuse_modules)?\.(fuse_modules|fuse_modules_qat)$/;

/** fuse_modules only breaks in train mode when a group holds a BatchNorm; names are the evidence. */
function fusesBatchNorm(ctx: PythonRuleContext, call: Call): boolean {
  const groups = call.args[1] ?? call.keywords.get('modules_to_fuse');
  return !!groups && /['"][^'"]*(bn|batch_?norm|norm)[^'"]*['"]/i.test(textOf(ctx, groups));
}

function renameFix(ctx: PythonRuleContext, call: Call, to: string): Fix | undefined {
  const callee = call.node.firstChild!;
  const qualified = call.callee.length > 1;
  if (!qualified && !imports(ctx).aliases.has(to)) return undefined;
  const end = callee.to;
  const start = end - call.callee[call.callee.length - 1].length;
  return { title: `Use ${to}`, edits: [{ start, end, newText: to }] };
}

export function fuseMode(ctx: PythonRuleContext): Finding[] {
  const findings: Finding[] = [];
  const events = modeEvents(ctx);
  events.forEach(({ call, state, scope }, i) => {
    const name = qualify(ctx, call.callee);
    if (!FUSE.test(name)) return;
    const model = call.args[0] ?? call.keywords.get('model');
    if (model?.name !== 'VariableName') return;
    const target = textOf(ctx, model);
    const last = state.get(target);
    const qat = name.endsWith('_qat');
    const fixes: Fix[] = [];
    if (!qat && last?.mode === 'train' && fusesBatchNorm(ctx, call)) {
      const stmt = statementOf(call.node);
      const at = lineStartOf(ctx.text, stmt.from);
      fixes.push({
        title: `Call ${target}.eval() first`,
        edits: [{ start: at, end: at, newText: `${indentAt(ctx.text, stmt.from)}${target}.eval()\n` }],
        preferred: true,
      });
      const rename = renameFix(ctx, call, 'fuse_modules_qat');
      if (rename) fixes.push(rename);
      findings.push({
        code: 'QAT009',
        severity: 'error',
        start: call.node.from,
        end: call.node.to,
        message:
          `fuse_modules() on '${target}', which is in train mode (line ${lineOf(ctx.text, last.at)}): fusing conv+bn asserts "Fusion only for eval!". ` +
          `Call ${target}.eval() first, or use fuse_modules_qat for QAT.`,
        fixes,
      });
    } else if (qat && last?.mode === 'eval') {
      const laterTrain = events.slice(i + 1).some((e) => e.scope === scope && e.change?.mode === 'train');
      if (laterTrain) return;
      const rename = renameFix(ctx, call, 'fuse_modules');
      findings.push({
        code: 'QAT009',
        severity: 'warning',
        start: call.node.from,
        end: call.node.to,
        message:
          `fuse_modules_qat() on '${target}', which is in eval mode (line ${lineOf(ctx.text, last.at)}) and never put back in train mode here: ` +
          'QAT fusion keeps BatchNorm trainable and prepare_qat needs train mode. For an eval model use fuse_modules, which folds BN.',
        fixes: rename ? [rename] : undefined,
      });
    }
  });
  return findings;
}
