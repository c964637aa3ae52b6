// Colouring layers by FP32-vs-INT8 cosine similarity, relative to the config's threshold: the graph view, its
// results table and the host's Layers view colour a layer by the same bands.
export interface Band {
  label: string;
  colour: string;
  /** The band's cosine range for a threshold, as the legend writes it. */
  range: (threshold: number) => string;
  test: (cos: number, threshold: number) => boolean;
}

const f = (v: number) => v.toFixed(2);

/** Each layer's own cosine against the config's threshold; a layer's colour says nothing about other layers. */
export const BANDS: Band[] = [
  {
    label: '≥ threshold',
    colour: 'var(--vscode-charts-green, #388a34)',
    range: (t) => `≥ ${t}`,
    test: (c, t) => c >= t,
  },
  {
    label: 'within 0.02',
    colour: 'var(--vscode-charts-yellow, #bf8803)',
    range: (t) => `${f(t - 0.02)}–${t}`,
    test: (c, t) => c >= t - 0.02,
  },
  {
    label: 'within 0.10',
    colour: 'var(--vscode-charts-orange, #d18616)',
    range: (t) => `${f(t - 0.1)}–${f(t - 0.02)}`,
    test: (c, t) => c >= t - 0.1,
  },
  { label: 'worse', colour: 'var(--vscode-charts-red, #e51400)', range: (t) => `< ${f(t - 0.1)}`, test: () => true },
];

export function bandOf(cosine: number, threshold: number): Band {
  return BANDS.find((b) => b.test(cosine, threshold))!;
}
