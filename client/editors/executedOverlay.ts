// Precision as executed for an .onnx file that an ONNX Runtime build wrote (build/ort's build-report.json beside
// it): per node of ORT's optimised graph what ran and in which precision, or, for the QDQ model ORT was given,
// which optimised ops each of its nodes became.
import path from 'node:path';
import type { BuildOrtResult } from '../../protocol/kernel';
import type { ExecutedOp, ExecutedOverlay } from '../../protocol/webview';

export const REPORT_FILE = 'build-report.json';

type Variant = BuildOrtResult['variants'][number];
type Op = Variant['ops'][number];

const RANK: Record<string, number> = { fp32: 4, fp16: 3, int8: 2, conversion: 1, other: 0 };

/** The overlay for `file` (a path in the report's folder), or undefined when the report does not know it. */
export function executedOverlayFor(file: string, report: BuildOrtResult): ExecutedOverlay | undefined {
  const name = path.basename(file);
  const runtime = `ONNX Runtime ${report.ortVersion} (${report.provider})`;
  for (const v of report.variants) {
    if (path.basename(v.optimized) === name) {
      return { runtime, ops: Object.fromEntries(v.ops.map((o) => [o.name, fromOp(o)])) };
    }
    if (path.basename(v.onnx) === name) return { runtime, ops: bySource(v.ops) };
  }
  return undefined;
}

function fromOp(o: Op): ExecutedOp {
  return { precision: o.precision, role: o.role, ...(o.dtypes ? { dtypes: o.dtypes } : {}), ...(o.reason ? { reason: o.reason } : {}) };
}

/** Source node -> what ran it: the optimised ops ORT named after it; a compute op that stayed fp32 wins. */
function bySource(ops: Op[]): Record<string, ExecutedOp> {
  const out: Record<string, ExecutedOp> = {};
  const ranAs = new Map<string, string[]>();
  for (const o of ops) {
    if (!o.sourceNode) continue;
    ranAs.set(o.sourceNode, [...(ranAs.get(o.sourceNode) ?? []), o.opType]);
    const seen = out[o.sourceNode];
    const mine = fromOp(o);
    const better = !seen || (mine.role === 'compute' && seen.role !== 'compute') ||
      (mine.role === seen.role && (RANK[mine.precision] ?? 0) > (RANK[seen.precision] ?? 0));
    if (better) out[o.sourceNode] = mine;
  }
  for (const [source, types] of ranAs) out[source].ranAs = types.join(' + ');
  return out;
}
