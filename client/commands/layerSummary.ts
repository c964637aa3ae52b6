// One compared layer in a sentence: what "Compare This Layer" says about the layer it was asked about.
import type { CompareLayersResult, LayerResult } from '../../protocol/kernel';

const db = (v: number) => `${v.toFixed(1)} dB`;

/** The layer's row of a compare/layers result: by module path, else the layer that holds the module. */
export function findLayer(result: CompareLayersResult, module: string): LayerResult | undefined {
  return result.layers.find((l) => l.module === module) ?? result.layers.find((l) => module.startsWith(`${l.module}.`));
}

export function layerSummary(result: CompareLayersResult, layer: LayerResult): string {
  const ranked = [...result.layers].sort((a, b) => a.cosine - b.cosine);
  const rank = ranked.indexOf(layer) + 1;
  const parts = [
    `${layer.module} (${layer.group.join('+')}): cosine ${layer.cosine.toFixed(5)}, SQNR ${db(layer.sqnr)} vs FP32`,
  ];
  if (layer.local) parts.push(`local (FP32 input) SQNR ${db(layer.local.sqnr)}`);
  if (layer.vsQatFloat) parts.push(`vs QAT float ${db(layer.vsQatFloat.sqnr)}`);
  parts.push(rank === 1 ? `worst of ${ranked.length} layers` : `${rank}${ordinal(rank)} worst of ${ranked.length}`);
  if (layer.cosine < result.threshold) parts.push(`below the ${result.threshold} threshold`);
  return parts.join(' · ');
}

function ordinal(n: number): string {
  const tens = n % 100;
  if (tens >= 11 && tens <= 13) return 'th';
  return ({ 1: 'st', 2: 'nd', 3: 'rd' } as Record<number, string>)[n % 10] ?? 'th';
}
