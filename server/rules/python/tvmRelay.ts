// QAT005: TVM Relay (tvm.relay, tvm.contrib.graph_executor) was removed in TVM 0.20; Relax replaces it.
import type { Finding } from '../types';
import { allCalls, imports, qualify, type PythonRuleContext } from './syntax';

const REPLACEMENTS: Array<[RegExp, string]> = [
  [
    /^tvm\.relay\.frontend\.from_onnx$/,
    'Use tvm.relax.frontend.onnx.from_onnx(model, shape_dict): it returns an IRModule with the weights bound (no params).',
  ],
  [
    /^tvm\.relay\.frontend\.from_pytorch$/,
    'Use tvm.relax.frontend.torch.from_exported_program(torch.export.export(model, (x,))).',
  ],
  [/^tvm\.relay\.build(_module\.build)?$/, 'Use ex = tvm.compile(mod, target).'],
  [/^tvm\.relay\.quantize\./, 'Relax has no quantizer: quantize in PyTorch (PT2E), export QDQ ONNX and import that.'],
  [/^tvm\.contrib\.graph_executor\./, 'Use vm = tvm.relax.VirtualMachine(ex, tvm.cpu()); vm["main"](...).'],
];

const isRelay = (name: string) => /^tvm\.relay(\.|$)|^tvm\.contrib\.graph_executor(\.|$)/.test(name);

function finding(start: number, end: number, what: string, instead: string): Finding {
  return {
    code: 'QAT005',
    severity: 'warning',
    start,
    end,
    message: `${what} no longer exists: TVM removed Relay in 0.20. ${instead}`,
  };
}

export function tvmRelay(ctx: PythonRuleContext): Finding[] {
  const findings: Finding[] = [];
  for (const s of imports(ctx).statements) {
    const names = s.names.map((n) => `${s.module}.${n}`);
    const hit = isRelay(s.module) ? s.module : names.find(isRelay);
    if (hit) findings.push(finding(s.node.from, s.node.to, hit, 'Use tvm.relax (from tvm import relax).'));
  }
  for (const call of allCalls(ctx)) {
    const name = qualify(ctx, call.callee);
    if (!isRelay(name)) continue;
    const instead = REPLACEMENTS.find(([re]) => re.test(name))?.[1] ?? 'Use its tvm.relax equivalent.';
    const callee = call.node.firstChild!;
    findings.push(finding(callee.from, callee.to, name, instead));
  }
  return findings;
}
