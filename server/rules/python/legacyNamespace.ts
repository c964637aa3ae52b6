// QAT003: torch.quantization.* and torch.nn.{quantized,qat,intrinsic,quantizable}.* are legacy aliases kept
// for backward compatibility; the code lives in torch.ao.quantization / torch.ao.nn.*.
import type { Finding } from '../types';
import { imports, textOf, type PythonRuleContext } from './syntax';

const MOVED: Array<[string, string]> = [
  ['torch.quantization', 'torch.ao.quantization'],
  ['torch.nn.quantized', 'torch.ao.nn.quantized'],
  ['torch.nn.qat', 'torch.ao.nn.qat'],
  ['torch.nn.intrinsic', 'torch.ao.nn.intrinsic'],
  ['torch.nn.quantizable', 'torch.ao.nn.quantizable'],
];

function moved(dotted: string): [string, string] | undefined {
  return MOVED.find(([old]) => dotted === old || dotted.startsWith(old + '.'));
}

function finding(start: number, end: number, old: string, replacement: string): Finding {
  return {
    code: 'QAT003',
    severity: 'warning',
    start,
    end,
    message: `${old} is a legacy alias kept for backward compatibility; the API lives in ${replacement}.`,
    fixes: [{ title: `Use ${replacement}`, edits: [{ start, end, newText: replacement }], preferred: true }],
  };
}

export function legacyNamespace(ctx: PythonRuleContext): Finding[] {
  const findings: Finding[] = [];
  for (const s of imports(ctx).statements) {
    const hit = moved(s.module);
    if (hit) {
      findings.push(finding(s.from, s.from + hit[0].length, hit[0], hit[1]));
    } else if (s.module === 'torch' && s.names.includes('quantization')) {
      findings.push(finding(s.from, s.to, 'from torch import quantization', 'torch.ao'));
    }
  }
  // torch.quantization.X in code: flag the innermost member expression that spells the old module.
  ctx.tree.iterate({
    enter(ref) {
      if (ref.name === 'ImportStatement') return false;
      if (ref.name !== 'MemberExpression') return;
      const text = textOf(ctx, ref.node).replace(/\s+/g, '');
      const hit = MOVED.find(([old]) => text === old);
      if (!hit) return;
      findings.push(finding(ref.from, ref.to, hit[0], hit[1]));
      return false;
    },
  });
  return findings;
}
