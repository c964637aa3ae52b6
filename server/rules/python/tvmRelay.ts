// QAT005: TVM Relay (tvm.relay, tvm.contrib.graph_executor) was removed in TVM 0.20; on the pinned 0.27 both
// imports raise ModuleNotFoundError. Relax replaces it.
import type { RuleInput } from '../../analysis/document';
import type { StoredFinding } from '../../analysis/findings';
import { importsOf } from './helpers';

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

function finding(start: number, end: number, what: string, instead: string): StoredFinding {
  return {
    code: 'QAT005',
    severity: 'warning',
    start,
    end,
    message: `${what} no longer exists: TVM removed Relay in 0.20. ${instead}`,
  };
}

export function tvmRelay(input: RuleInput): StoredFinding[] {
  const findings: StoredFinding[] = [];
  for (const s of importsOf(input)) {
    if (s.guarded || !s.module.startsWith('tvm')) continue;
    const names = s.names.map((n) => `${s.module}.${n.name}`);
    const hit = isRelay(s.module) ? s.module : names.find(isRelay);
    if (hit) findings.push(finding(s.from, s.to, hit, 'Use tvm.relax (from tvm import relax).'));
  }
  for (const call of input.facts.calls) {
    const name = call.qualified;
    if (!name?.startsWith('tvm.') || !isRelay(name)) continue;
    const instead = REPLACEMENTS.find(([re]) => re.test(name))?.[1] ?? 'Use its tvm.relax equivalent.';
    findings.push(finding(call.calleeSpan.from, call.calleeSpan.to, name, instead));
  }
  return findings;
}
