// QCFG010: reduce_range vs backend. x86 int8 kernels without VNNI multiply u8 activations by s8 weights with
// vpmaddubsw, whose int16 pair sums can saturate at full range; torch's eager fbgemm/x86 default qconfigs
// therefore observe activations with reduce_range=True (0..127). qnnpack/xnnpack (ARM) have no such limit,
// and their defaults use reduce_range=False. torchao's X86InductorQuantizer (pt2e) defaults to False.
// Symmetric + reduce_range + quint8 raises NotImplementedError in every torch observer.
import { DEFAULT_DTYPE, effectiveRange, isSymmetric } from '../../knowledge/quant';
import type { Edit, Fix, Finding } from '../types';
import {
  addPairEdit,
  pairOf,
  rangeOf,
  removePairEdit,
  removePairsEdits,
  replaceFix,
  scalarValue,
  stringValue,
  valueRange,
  type ObserverSpec,
  type YamlRuleContext,
} from './context';

const NO_REDUCE_BACKENDS = new Set(['qnnpack', 'xnnpack']);

export function reduceRange(ctx: YamlRuleContext): Finding[] {
  const findings: Finding[] = [];
  for (const spec of ctx.observers) {
    const { map, role, key } = spec;
    const rr = scalarValue(map, 'reduce_range');
    const rrAt = valueRange(map, 'reduce_range');
    const dtype = stringValue(map, 'dtype') ?? DEFAULT_DTYPE[role];
    const qscheme = stringValue(map, 'qscheme');
    const remove = removePairEdit(ctx.text, map, 'reduce_range');
    if (rr === true && rrAt && qscheme && isSymmetric(qscheme) && dtype === 'quint8') {
      findings.push({
        code: 'QCFG010',
        severity: 'error',
        start: rrAt[0],
        end: rrAt[1],
        message: `reduce_range with ${qscheme} and quint8: torch observers raise NotImplementedError ("Cannot reduce range for symmetric quantization for quint8").`,
        fixes: remove ? [{ title: 'Remove reduce_range', edits: [remove], preferred: true }] : undefined,
      });
      continue;
    }
    if (role !== 'activation') continue;
    if (rr === true && rrAt && NO_REDUCE_BACKENDS.has(ctx.backend)) {
      findings.push({
        code: 'QCFG010',
        severity: 'warning',
        start: rrAt[0],
        end: rrAt[1],
        message: `reduce_range on a ${ctx.backend} backend throws away one bit of activation precision: only x86 kernels without VNNI need it (torch's ${ctx.backend} default uses reduce_range=False).`,
        fixes: [replaceFix('Set reduce_range: false', rrAt, 'false', true)],
      });
      continue;
    }
    const qmin = scalarValue(map, 'quant_min');
    const qmax = scalarValue(map, 'quant_max');
    const range = effectiveRange(
      dtype,
      typeof qmin === 'number' ? qmin : undefined,
      typeof qmax === 'number' ? qmax : undefined,
      rr === true,
    );
    const wantsReduce = ctx.flow === 'eager' && (ctx.backend === 'fbgemm' || ctx.backend === 'x86');
    if (!wantsReduce || dtype !== 'quint8' || rr === true || !range || range[1] - range[0] <= 127) continue;
    const at = rrAt ?? rangeOf(key);
    if (!at) continue;
    findings.push({
      code: 'QCFG010',
      severity: 'information',
      start: at[0],
      end: at[1],
      message:
        `The eager ${ctx.backend} default qconfig gives activations 7 bits (reduce_range=True, 0..127): at the full 0..255 range ` +
        'x86 int8 kernels can saturate on CPUs without VNNI. Use quant_max: 127 (torch prefers it to the deprecated reduce_range) unless every target CPU has VNNI.',
      fixes: sevenBitFix(ctx, spec),
    });
  }
  return findings;
}

/** quant_min: 0, quant_max: 127 in place of the full range (or of a `reduce_range: false`). */
function sevenBitFix(ctx: YamlRuleContext, spec: ObserverSpec): Fix[] | undefined {
  const { map } = spec;
  const minAt = valueRange(map, 'quant_min');
  const maxAt = valueRange(map, 'quant_max');
  const rr = pairOf(map, 'reduce_range');
  let edits: Edit[];
  if (minAt && maxAt) {
    edits = [
      { start: minAt[0], end: minAt[1], newText: '0' },
      { start: maxAt[0], end: maxAt[1], newText: '127' },
      ...removePairsEdits(ctx.text, map, ['reduce_range']),
    ];
  } else if (minAt || maxAt) {
    return undefined;
  } else if (rr && rangeOf(rr.key) && rangeOf(rr.value)) {
    const [start, end] = [rangeOf(rr.key)![0], rangeOf(rr.value)![1]];
    const indent = ' '.repeat(start - (ctx.text.lastIndexOf('\n', start - 1) + 1));
    edits = [
      { start, end, newText: map.flow ? 'quant_min: 0, quant_max: 127' : `quant_min: 0\n${indent}quant_max: 127` },
    ];
  } else {
    const add = addPairEdit(ctx.text, map, 'quant_min', '0');
    if (!add) return undefined;
    add.newText += add.newText.replace('quant_min: 0', 'quant_max: 127');
    edits = [add];
  }
  return [{ title: 'Use quant_min: 0, quant_max: 127', edits, preferred: true }];
}
