// QCFG017: flow: torchao, a weight group size that does not divide the in_features of a Linear the config
// quantizes, once the kernel has exported the model's graph (graph/export writes each Linear's in_features).
// Which Linears and with which group size is the kernel's choice (python-helpers/qat_kernel/pipeline/
// torchao_flow.py): the first override whose match fullmatches the module's path or a parent's decides
// (precision fp32|fp16|bf16: float; else its group_size, else its scheme's default, else torchao's); else
// torchao.exclude keeps it float and torchao.include, when given, must match it; the group size is
// torchao.group_size, else 32 for a 4-bit scheme, per channel for an 8-bit one. On torchao 0.18 quantize_
// raises ValueError "in_features (K) % group_size (N) must be == 0" for such a Linear
// (test/rule-claims/test_qcfg017_torchao_group_size.py); the kernel refuses the config before, naming the module.
// A pattern the linear-time matcher cannot run leaves the rule silent (no warning is better than a wrong one).
import { isMap, isSeq, type YAMLMap } from 'yaml';
import type { Finding, Fix } from '../types';
import type { KnownModule } from '../../services/modelIndex';
import { MODULE_TESTS_PER_ANALYSIS } from '../../util/budget';
import { compilePython, type LinearRegex } from '../../util/pyRegex';
import { pairOf, replaceFix, scalarValue, stringValue, valueRange, type YamlRuleContext } from './context';

const FLOAT = new Set(['fp32', 'fp16', 'bf16']);

interface GroupSource {
  /** The group size; undefined: per channel (no constraint). */
  size: number | undefined;
  /** Where a finding about it points, and whether that is the group_size value itself (then it gets a fix). */
  at: [number, number];
  fixable: boolean;
  /** How the message names it. */
  key: string;
}

interface Override {
  regex: LinearRegex;
  float: boolean;
  source?: GroupSource;
}

const defaultSize = (scheme: string) => (scheme.includes('4') ? 32 : undefined);

/** The group size a map (torchao or one override) gives, or undefined when it says nothing about it. */
function sourceOf(map: YAMLMap, base: string, fallbackAt: [number, number]): GroupSource | undefined | 'none' {
  const size = scalarValue(map, 'group_size');
  const sizeAt = valueRange(map, 'group_size');
  if (size !== undefined && sizeAt) {
    if (size === 'per_channel') return { size: undefined, at: sizeAt, fixable: false, key: `${base}.group_size` };
    return typeof size === 'number' && Number.isInteger(size) && size > 0
      ? { size, at: sizeAt, fixable: true, key: `${base}.group_size` }
      : 'none'; // the schema reports it
  }
  const scheme = stringValue(map, 'scheme');
  if (scheme === undefined) return undefined;
  return {
    size: defaultSize(scheme),
    at: valueRange(map, 'scheme') ?? fallbackAt,
    fixable: false,
    key: `${base}.scheme`,
  };
}

function patterns(map: YAMLMap | undefined, key: string): LinearRegex[] | undefined | null {
  const list = map ? pairOf(map, key)?.value : undefined;
  if (!isSeq(list)) return undefined;
  const out: LinearRegex[] = [];
  for (const item of list.items) {
    const compiled = compilePython(String((item as { value?: unknown }).value ?? ''));
    if (compiled.ok !== true) return null;
    out.push(compiled.regex);
  }
  return out;
}

/** re.fullmatch on the path or a parent's path, as the kernel's overrides and patterns match. */
function matches(regex: LinearRegex, path: string): boolean {
  const parts = path.split('.');
  for (let i = parts.length; i > 0; i--) if (regex.test(parts.slice(0, i).join('.'))) return true;
  return false;
}

/** The largest power of two up to `wanted` dividing every width (undefined below 2). */
function fitting(widths: number[], wanted: number): number | undefined {
  const gcd = (a: number, b: number): number => (b ? gcd(b, a % b) : a);
  const common = widths.reduce(gcd);
  let size = 2 ** Math.floor(Math.log2(wanted));
  while (size >= 2 && common % size) size /= 2;
  return size >= 2 ? size : undefined;
}

export function* torchaoGroupSize(ctx: YamlRuleContext): Generator<void, Finding[]> {
  const root = ctx.doc.contents;
  const linears = ctx.model?.modules.filter((m): m is KnownModule & { inFeatures: number } => !!m.inFeatures);
  if (ctx.flow !== 'torchao' || !isMap(root) || !linears?.length) return [];
  const flowAt = valueRange(root, 'flow') ?? [0, 1];
  const section = pairOf(root, 'torchao')?.value;
  const torchao = isMap(section) ? section : undefined;
  const scheme = (torchao && stringValue(torchao, 'scheme')) ?? '8da4w';
  const given = torchao ? sourceOf(torchao, 'torchao', flowAt) : undefined;
  if (given === 'none') return [];
  const global: GroupSource = given ?? { size: defaultSize(scheme), at: flowAt, fixable: false, key: 'torchao' };
  const include = patterns(torchao, 'include');
  const exclude = patterns(torchao, 'exclude');
  if (include === null || exclude === null) return [];
  const overrides: Override[] = [];
  const list = pairOf(root, 'overrides')?.value;
  for (const [i, item] of (isSeq(list) ? list.items : []).entries()) {
    if (!isMap(item)) continue;
    const compiled = compilePython(stringValue(item, 'match') ?? '');
    if (compiled.ok !== true) return [];
    const float = FLOAT.has(stringValue(item, 'precision') ?? 'int8');
    const source = sourceOf(item, `overrides.${i}`, valueRange(item, 'match') ?? flowAt);
    if (source === 'none') return [];
    overrides.push({ regex: compiled.regex, float, source });
  }
  const bad = new Map<GroupSource, Array<KnownModule & { inFeatures: number }>>();
  const widths = new Map<GroupSource, number[]>();
  // Each Linear is tested against every pattern at each of its path's levels; past the budget, silence.
  const perLevel = overrides.length + (exclude?.length ?? 0) + (include?.length ?? 0);
  let tests = 0;
  for (const [n, linear] of linears.entries()) {
    tests += perLevel * linear.path.split('.').length;
    if (tests > MODULE_TESTS_PER_ANALYSIS) return [];
    if (n % 256 === 255) yield;
    const override = overrides.find((o) => matches(o.regex, linear.path));
    let source: GroupSource | undefined;
    if (override) source = override.float ? undefined : (override.source ?? global);
    else if (exclude?.some((r) => matches(r, linear.path))) source = undefined;
    else if (include && !include.some((r) => matches(r, linear.path))) source = undefined;
    else source = global;
    if (!source?.size) continue;
    widths.set(source, [...(widths.get(source) ?? []), linear.inFeatures]);
    if (linear.inFeatures % source.size) bad.set(source, [...(bad.get(source) ?? []), linear]);
  }
  const findings: Finding[] = [];
  for (const [source, modules] of bad) {
    const first = modules[0];
    const size = source.size!;
    const fits = fitting(widths.get(source)!, size);
    const more = modules.length > 1 ? ` (and ${modules.length - 1} more)` : '';
    const named = source.fixable ? `group_size ${size}` : `The default group size ${size} (from ${source.key})`;
    const fixes: Fix[] | undefined =
      fits && source.fixable ? [replaceFix(`Change to ${fits}`, source.at, String(fits), true)] : undefined;
    findings.push({
      code: 'QCFG017',
      severity: 'error',
      start: source.at[0],
      end: source.at[1],
      message:
        `${named} does not divide the in_features (${first.inFeatures}) of ${first.path} (${first.type})${more}: ` +
        `quantize_ raises ValueError "in_features (${first.inFeatures}) % group_size (${size}) must be == 0". ` +
        `Use ${fits ? `group_size ${fits} (it divides every one) or ` : ''}per_channel, or keep it float (torchao.exclude).`,
      fixes,
    });
  }
  return findings.sort((a, b) => a.start - b.start);
}
