// QCFG011: a float16 "fake quantize" (dtype float16 on an integer observer, or a ±65504 quant range), copied
// from tutorials. torch's uniform observers accept integer dtypes only, and 65504 is float16's largest value,
// not a range. fp16 is a precision, not a quantization: in a QAT config it is an override's `precision: fp16`.
import { DEFAULT_DTYPE, FLOAT_OBSERVERS, FP16_MAX } from '../../knowledge/quant';
import { isMap, isSeq, type YAMLMap } from 'yaml';
import type { Fix, Finding } from '../types';
import {
  pairOf,
  rangeOf,
  removePairsEdits,
  scalarValue,
  stringValue,
  valueRange,
  type ObserverSpec,
  type YamlRuleContext,
} from './context';

export function float16FakeQuant(ctx: YamlRuleContext): Finding[] {
  const findings: Finding[] = [];
  for (const spec of ctx.observers) {
    const { map } = spec;
    const dtype = stringValue(map, 'dtype');
    const observer = stringValue(map, 'observer');
    const fp16Bound = (['quant_min', 'quant_max'] as const).find((k) => {
      const v = scalarValue(map, k);
      return typeof v === 'number' && Math.abs(v) === FP16_MAX;
    });
    const floatObserver = !!observer && FLOAT_OBSERVERS.has(observer);
    const at =
      dtype === 'float16' && !floatObserver
        ? valueRange(map, 'dtype')
        : fp16Bound
          ? valueRange(map, fp16Bound)
          : undefined;
    if (!at) continue;
    findings.push({
      code: 'QCFG011',
      severity: 'error',
      start: at[0],
      end: at[1],
      message:
        `float16 "fake quantize": ${observer ?? 'an integer observer'} cannot observe float16 (torch observers take integer dtypes; ` +
        `±65504 is float16's largest value, not a quantization range). To run layers in fp16, give them an override with precision: fp16.`,
      fixes: fixesFor(ctx, spec),
    });
  }
  return findings;
}

function fixesFor(ctx: YamlRuleContext, spec: ObserverSpec): Fix[] {
  const { map } = spec;
  const fixes: Fix[] = [];
  const override = overrideOf(ctx, spec);
  if (override && !pairOf(override, 'precision')) {
    const remove = removePairsEdits(ctx.text, override, [spec.role])[0];
    const matchEnd = rangeOf(pairOf(override, 'match')?.value)?.[1];
    if (remove && matchEnd !== undefined) {
      const sep = override.flow ? ', ' : `\n${indentOf(ctx.text, rangeOf(pairOf(override, 'match')?.key)![0])}`;
      const add = { start: matchEnd, end: matchEnd, newText: `${sep}precision: fp16` };
      // Touching edits are merged: LSP clients may reject an insert at the start of a deletion.
      const edits = remove.start === matchEnd ? [{ ...remove, newText: add.newText }] : [remove, add];
      fixes.push({ title: 'Use precision: fp16 for this override', edits, preferred: true });
    }
  }
  const drop = removePairsEdits(ctx.text, map, ['dtype', 'quant_min', 'quant_max']);
  if (drop.length)
    fixes.push({ title: `Drop the float16 settings (quantize to ${DEFAULT_DTYPE[spec.role]})`, edits: drop });
  return fixes;
}

function overrideOf(ctx: YamlRuleContext, spec: ObserverSpec): YAMLMap | undefined {
  const m = /^overrides\.(\d+)\./.exec(spec.path);
  const root = ctx.doc.contents;
  const overrides = m && isMap(root) ? pairOf(root, 'overrides')?.value : undefined;
  const item = isSeq(overrides) ? overrides.items[Number(m![1])] : undefined;
  return isMap(item) ? item : undefined;
}

function indentOf(text: string, offset: number): string {
  const lineStart = text.lastIndexOf('\n', offset - 1) + 1;
  return ' '.repeat(offset - lineStart);
}
