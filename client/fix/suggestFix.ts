// What to change for a layer that loses accuracy, from the config and the layer comparison: per-channel weights
// where the layer's weights are quantized per tensor; in the torchao flow, 8-bit weights where they are 4-bit; else
// keep the layer float. Free of the vscode module.
import { isMap, isSeq, parseDocument } from 'yaml';
import type { LayerResult } from '../../protocol/kernel';
import { exactMatchAny, type FloatPrecision, type OverrideEntry } from '../config/overrides';

export type FixKind = 'perChannelWeights' | 'int8Weights' | 'keepFloat';

export interface FixSuggestion {
  kind: FixKind;
  /** The layer the fix was asked for. */
  culprit: string;
  /** The layers the fix is proposed for: the culprit, then the others with the same cause, worst local SQNR first. */
  modules: string[];
  /** Other quantized layers the same fix can apply to (offered, not proposed), worst local SQNR first. */
  others: string[];
  /** What the override sets, besides `match`. */
  fields: Omit<OverrideEntry, 'match'>;
  /** Short name of the fix, e.g. "per-channel weights". */
  label: string;
  /** Why, in one or two sentences, with the figures it rests on. */
  reason: string;
}

type Spec = Record<string, unknown>;

// The kernel's defaults (pipeline/qconfig.py DEFAULT_SPECS): per-channel weights unless the config says otherwise.
const DEFAULT_WEIGHT: Spec = { observer: 'MovingAveragePerChannelMinMaxObserver', qscheme: 'per_channel_symmetric' };
const PER_TENSOR_OBSERVERS = new Set(['MinMaxObserver', 'MovingAverageMinMaxObserver', 'HistogramObserver']);
const WEIGHTED_OPS = /^(conv\d?d|conv_transpose\d?d|linear|matmul)$/;
// A layer this many dB below the culprit's own local SQNR, or better, shares its cause when its weights are
// per tensor too; see suggestFix.
const SAME_CAUSE_DB = 6;

interface ConfigFacts {
  flow: string;
  backend: string;
  weight: Spec;
  overrides: Array<{ weight?: Spec; activation?: Spec }>;
}

function plain(node: unknown): Spec {
  return isMap(node) ? ((node.toJSON() as Spec | null) ?? {}) : {};
}

export function configFacts(text: string): ConfigFacts {
  const doc = parseDocument(text);
  const root = doc.contents;
  const get = (key: string) => (isMap(root) ? root.get(key, true) : undefined);
  const qconfig = get('qconfig');
  const weight = isMap(qconfig) ? plain(qconfig.get('weight', true)) : {};
  const list = get('overrides');
  const overrides = isSeq(list)
    ? list.items.map((item) => {
        const o = plain(item);
        return {
          ...(o.weight && typeof o.weight === 'object' ? { weight: o.weight as Spec } : {}),
          ...(o.activation && typeof o.activation === 'object' ? { activation: o.activation as Spec } : {}),
        };
      })
    : [];
  const str = (v: unknown, d: string) => (typeof v === 'string' ? v : d);
  return {
    flow: str(isMap(root) ? root.get('flow') : undefined, 'pt2e'),
    backend: str(isMap(root) ? root.get('backend') : undefined, 'x86'),
    weight: Object.keys(weight).length ? weight : DEFAULT_WEIGHT,
    overrides,
  };
}

/** The weight spec a layer was quantized with: the global qconfig's, with its override's keys over it. */
function weightSpec(facts: ConfigFacts, layer: LayerResult): Spec {
  const o = layer.override !== undefined ? facts.overrides[layer.override] : undefined;
  return { ...facts.weight, ...(o?.weight ?? {}) };
}

export function perTensorWeights(spec: Spec): boolean {
  if (typeof spec.qscheme === 'string') return spec.qscheme.startsWith('per_tensor');
  return typeof spec.observer === 'string' && PER_TENSOR_OBSERVERS.has(spec.observer);
}

/** Precision that keeps a layer float and runs here (fp16 where the flow and backend have it, else fp32; the torchao
 * flow keeps float layers in fp32). */
export function floatPrecision(facts: ConfigFacts): FloatPrecision {
  return facts.flow === 'eager' || facts.flow === 'torchao' || facts.backend === 'qnnpack' ? 'fp32' : 'fp16';
}

// torchao's 4-bit schemes and the 8-bit one that keeps the same activations (int8 per token, or none).
const EIGHT_BIT: Record<string, string> = { '8da4w': '8da8w', 'int4-weight-only': 'int8-weight-only' };

/** The torchao flow's fix: 8-bit weights (per channel) for a layer whose weights are 4-bit, else none. */
function torchaoFix(layer: LayerResult, layers: LayerResult[], culprit: string): FixSuggestion | undefined {
  const name = layer.scheme?.split(' ')[0] ?? '';
  const scheme = EIGHT_BIT[name];
  if (!scheme) return undefined;
  // the quantization error alone (against the QAT-float layer, fed its input): QAT also moves the weights away from
  // the FP32 ones, which the local SQNR against FP32 counts too
  const own = (l: LayerResult) => l.vsQatFloatLocal?.sqnr ?? localSqnr(l);
  const others = [...layers]
    .sort((a, b) => own(a) - own(b))
    .filter((l) => l.module !== culprit && EIGHT_BIT[l.scheme?.split(' ')[0] ?? ''])
    .map((l) => l.module);
  const w = layer.weightError;
  const weight = w
    ? ` (weight SQNR ${w.sqnr === null ? 'exact' : db(w.sqnr)}, worst group ${w.worst.sqnr === null ? 'exact' : db(w.worst.sqnr)} at row ${w.worst.row})`
    : '';
  return {
    kind: 'int8Weights',
    culprit,
    modules: [culprit],
    others,
    fields: { scheme },
    label: `${scheme} (int8 weights)`,
    reason:
      `${culprit}'s weights are 4-bit, ${layer.scheme}${weight}; its own quantization error is ${db(own(layer))} ` +
      `SQNR. As ${scheme} they are 8-bit with one scale per output row: 16 times the levels, twice the bytes.`,
  };
}

const localSqnr = (l: LayerResult) => l.local?.sqnr ?? l.sqnr;
const db = (v: number) => `${v.toFixed(1)} dB`;

/**
 * The fix for `culprit` in the comparison `layers` of the config `text`.
 *
 * Weights quantized per tensor (one scale for every output channel): per-channel weights, for the culprit and
 * for every other per-tensor layer whose own (local) SQNR is within SAME_CAUSE_DB of the culprit's or below it:
 * the layers where the one scale costs as much. Per-channel weights keep the same bits and add one scale per
 * channel. Otherwise: keep the culprit float (FP16 where it runs, else FP32), the culprit alone.
 */
export function suggestFix(text: string, layers: LayerResult[], culprit: string): FixSuggestion {
  const facts = configFacts(text);
  const layer = layers.find((l) => l.module === culprit);
  if (!layer) throw new Error(`${culprit} is not a quantized layer of the last comparison; compare the layers again.`);
  const byLocal = [...layers].sort((a, b) => localSqnr(a) - localSqnr(b));
  if (facts.flow === 'torchao') {
    const fix = torchaoFix(layer, layers, culprit);
    if (fix) return fix;
  }
  const spec = weightSpec(facts, layer);
  if (WEIGHTED_OPS.test(layer.op) && perTensorWeights(spec)) {
    const cut = localSqnr(layer) + SAME_CAUSE_DB;
    const eligible = byLocal.filter((l) => WEIGHTED_OPS.test(l.op) && perTensorWeights(weightSpec(facts, l)));
    const same = eligible.filter((l) => l.module !== culprit && localSqnr(l) <= cut).map((l) => l.module);
    const modules = [culprit, ...same];
    const observer =
      spec.observer === 'MovingAverageMinMaxObserver'
        ? 'MovingAveragePerChannelMinMaxObserver'
        : 'PerChannelMinMaxObserver';
    // The override replaces the layer's own override, if it had one: keep what that one set.
    const own = layer.override !== undefined ? facts.overrides[layer.override] : undefined;
    const kept = Object.fromEntries(
      Object.entries(own?.weight ?? {}).filter(
        ([k, v]) => !['observer', 'qscheme', 'ch_axis'].includes(k) && (typeof v === 'string' || typeof v === 'number'),
      ),
    ) as Record<string, string | number>;
    return {
      kind: 'perChannelWeights',
      culprit,
      modules,
      others: eligible.map((l) => l.module).filter((m) => !modules.includes(m)),
      fields: {
        ...(own?.activation ? { activation: own.activation as Record<string, string | number> } : {}),
        weight: { observer, qscheme: 'per_channel_symmetric', ch_axis: 0, ...kept },
      },
      label: 'per-channel weights',
      reason:
        `${culprit}'s weights have one scale for the whole tensor (${String(spec.qscheme ?? spec.observer)}); ` +
        `its own error is ${db(localSqnr(layer))} local SQNR. One scale per output channel keeps the bits and ` +
        `fits each channel's range` +
        (same.length ? `; ${same.length} more per-tensor layers lose as much (local SQNR ≤ ${db(cut)}).` : '.'),
    };
  }
  const precision = floatPrecision(facts);
  return {
    kind: 'keepFloat',
    culprit,
    modules: [culprit],
    others: byLocal.map((l) => l.module).filter((m) => m !== culprit),
    fields: { precision },
    label: precision.toUpperCase(),
    reason:
      `${culprit}'s weights are already ${facts.flow === 'torchao' ? '8-bit' : 'per channel'}; its own error is ` +
      `${db(localSqnr(layer))} local SQNR (${db(layer.sqnr)} with the error of earlier layers). Kept in ` +
      `${precision.toUpperCase()}, it is not quantized.`,
  };
}

/** The override entry for the fix over `modules`. */
export function fixEntry(s: FixSuggestion, modules: string[] = s.modules): OverrideEntry {
  return { match: exactMatchAny(modules), ...s.fields };
}
