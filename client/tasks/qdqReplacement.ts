// The "Q/DQ re-placement" section of the Build for Target report: our QDQ export as ONNX Runtime runs it,
// before and after the Q/DQ nodes were re-placed for ORT's fusion (no vscode import, so it is unit-tested).
import type { QdqReplacement, QdqReplacementSide } from '../../protocol/kernel';

type Row = [label: string, cell: (s: QdqReplacementSide) => string];

const count =
  (key: 'convMatmulPerPrecision' | 'computePerPrecision' | 'perPrecision', precision: string) =>
  (s: QdqReplacementSide) =>
    String((s[key] as Record<string, number>)[precision] ?? 0);
const steps = (v?: number | null) => (v === undefined || v === null ? 'n/a' : v < 10 ? v.toFixed(2) : v.toFixed(0));
const pct = (v?: number | null) => (v === undefined || v === null ? 'n/a' : `${(v * 100).toFixed(1)} %`);
const ms = (v?: number) => (v === undefined ? 'n/a' : `${v.toFixed(3)} ms`);
const esc = (t: string) => t.replace(/\|/g, '\\|').replace(/\n/g, ' ');

const ROWS: Row[] = [
  ['conv/matmul ops int8', count('convMatmulPerPrecision', 'int8')],
  ['conv/matmul ops fp32', count('convMatmulPerPrecision', 'fp32')],
  ['compute ops int8', count('computePerPrecision', 'int8')],
  ['compute ops fp32', count('computePerPrecision', 'fp32')],
  ['Q/DQ left (conversions)', count('perPrecision', 'conversion')],
  ['fp32 compute ops', (s) => (s.fp32Ops.length ? esc(s.fp32Ops.join(', ')) : 'none')],
  ['max diff vs PyTorch INT8 (steps)', (s) => steps(s.maxDiffSteps)],
  ['within one step', (s) => pct(s.withinOneStep)],
  ['top-1 agreement vs PyTorch INT8', (s) => pct(s.top1AgreementVsTorchInt8)],
  ['top-1 accuracy', (s) => pct(s.accuracy)],
  ['latency batch 1 (median)', (s) => ms(s.latencyMs?.b1)],
  ['latency batch 16 (median)', (s) => ms(s.latencyMs?.b16)],
];

/** Markdown lines: what changed, the before/after table, and each insertion with its scale's origin. */
export function replacementMarkdown(rq: QdqReplacement): string[] {
  const kinds = { activation: 0, bias: 0, op: 0 };
  for (const i of rq.inserted) kinds[i.kind]++;
  const what = [
    kinds.activation && `${kinds.activation} Q/DQ pair${kinds.activation > 1 ? 's' : ''}`,
    kinds.bias && `${kinds.bias} int32 bias${kinds.bias > 1 ? 'es' : ''}`,
    kinds.op && `${kinds.op} op rewrite${kinds.op > 1 ? 's' : ''}`,
  ]
    .filter(Boolean)
    .join(', ');
  const calibrated = rq.inserted.filter((i) => i.source === 'calibration').length;
  const out = [
    '## Q/DQ re-placement',
    '',
    `Our QDQ export with Q/DQ re-placed where ONNX Runtime's fusion needs them (${what}); the trained scales and zero points are kept` +
      (calibrated
        ? `, ${calibrated} new scale${calibrated > 1 ? 's' : ''} calibrated on ${rq.calibrationSamples} training inputs.`
        : '.') +
      ` File: \`${rq.onnx}\``,
    '',
    '| | before (our export) | after (re-placed) |',
    '|---|---|---|',
    ...ROWS.map(([label, cell]) => `| ${label} | ${cell(rq.before)} | ${cell(rq.after)} |`),
    '',
  ];
  if (rq.inserted.length) {
    out.push(
      '| change | tensor | for | scale | why |',
      '|---|---|---|---|---|',
      ...rq.inserted.map((i) => {
        const origin =
          i.source === 'calibration'
            ? ' (calibrated)'
            : i.source === 'neighbour'
              ? ` (from ${i.neighbour ?? 'its DequantizeLinear'})`
              : '';
        const scale =
          i.scale === undefined
            ? ''
            : `${Math.abs(i.scale) < 1e-3 ? i.scale.toExponential(3) : i.scale.toPrecision(4)}${origin}`;
        return `| ${i.kind} | ${esc(i.tensor)} | ${i.opType} ${esc(i.node)} | ${scale} | ${esc(i.why)} |`;
      }),
      '',
    );
  }
  return out;
}
