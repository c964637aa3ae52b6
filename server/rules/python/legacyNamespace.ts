// QAT003: torch.quantization.* and torch.nn.{quantized,qat,intrinsic,quantizable}.* are legacy aliases kept
// for backward compatibility (on torch 2.13 they are the same objects); the code lives in
// torch.ao.quantization / torch.ao.nn.*. Found through the file's names too: `nn.quantized.FloatFunctional`
// after `from torch import nn`.
import type { RuleInput } from '../../analysis/document';
import type { StoredFinding } from '../../analysis/findings';
import { canonical } from '../../analysis/names';
import { importEdit, importsOf } from './helpers';

const LEGACY = /^torch\.(quantization|nn\.(quantized|qat|intrinsic|quantizable))(?=\.|$)/;

function finding(
  start: number,
  end: number,
  old: string,
  replacement: string,
  extra: StoredFinding['fixes'] = [],
): StoredFinding {
  const what = old === replacement ? old : old;
  return {
    code: 'QAT003',
    severity: 'warning',
    start,
    end,
    message: `${what} is a legacy alias kept for backward compatibility; the API lives in ${replacement}.`,
    fixes: [
      {
        title: `Use ${replacement}`,
        edits: [{ start, end, newText: replacement }, ...(extra[0]?.edits ?? [])],
        preferred: true,
      },
    ],
  };
}

export function legacyNamespace(input: RuleInput): StoredFinding[] {
  const findings: StoredFinding[] = [];
  for (const s of importsOf(input)) {
    const hit = LEGACY.exec(s.module);
    if (hit) {
      findings.push(finding(s.moduleFrom, s.moduleFrom + hit[0].length, hit[0], canonical(hit[0])!));
    } else if (s.isFrom && s.module === 'torch' && s.names.some((n) => n.name === 'quantization')) {
      findings.push(finding(s.moduleFrom, s.moduleTo, 'from torch import quantization', 'torch.ao'));
    }
  }
  // In code: the first prefix of a reference that names a legacy module, unless the head already is one
  // (an alias of a legacy import, reported there).
  for (const ref of input.facts.refs) {
    if (ref.qualified[0] && LEGACY.test(ref.qualified[0])) continue;
    const i = ref.qualified.findIndex((q) => !!q && LEGACY.test(q) && LEGACY.exec(q)![0] === q);
    if (i <= 0) continue;
    const old = ref.parts.slice(0, i + 1).join('.');
    const replacement = canonical(ref.qualified[i])!;
    // `nn.quantized` becomes `torch.ao.nn.quantized`: torch must be bound for that
    const needsTorch = ref.parts[0] !== 'torch' && input.ctx.module.names.lookup('torch') !== 'torch';
    const extra = needsTorch ? [{ title: '', edits: [importEdit(input, 'import torch')] }] : [];
    const f = finding(ref.from, ref.ends[i], old, replacement, extra);
    if (old !== ref.qualified[i]) f.message = `${old} is ${ref.qualified[i]}, ${f.message.slice(old.length + 4)}`;
    findings.push(f);
  }
  return findings;
}
