// Precision as executed for an .onnx file a build used or wrote. build/ort's build-report.json (beside the files
// it wrote, naming the export it started from): per node of ORT's optimised graph what ran and in which
// precision, or, for the QDQ model ORT was given, which optimised ops each of its nodes became. build/tvm's
// build-report.json (in out/tvm-<target>/, naming the export it compiled): per node of the export, what TVM ran.
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { LIMITS, readWorkspaceFile } from '../../common/workspaceFile';
import type { BuildOrtResult, BuildTvmResult } from '../../protocol/kernel';
import type { ExecutedOp, ExecutedOverlay } from '../../protocol/webview';

export const REPORT_FILE = 'build-report.json';

type Variant = BuildOrtResult['variants'][number];
type Op = Variant['ops'][number];

const RANK: Record<string, number> = { fp32: 4, fp16: 3, int8: 2, conversion: 1, other: 0 };

/** The overlay a build report (either kind) gives `file`, or undefined when it does not describe that file. */
export function overlayFromReport(file: string, report: unknown): ExecutedOverlay | undefined {
  const r = report as Partial<BuildOrtResult & BuildTvmResult>;
  if (Array.isArray(r.variants)) return executedOverlayFor(file, report as BuildOrtResult);
  if (r.tvmVersion && Array.isArray(r.ops)) return tvmOverlayFor(file, report as BuildTvmResult);
  return undefined;
}

const QDQ = new Set(['QuantizeLinear', 'DequantizeLinear']);

/** build/tvm's ops of the export it compiled, by ONNX node. */
export function tvmOverlayFor(file: string, report: BuildTvmResult): ExecutedOverlay | undefined {
  if (path.resolve(report.onnx) !== path.resolve(file)) return undefined;
  const ops: Record<string, ExecutedOp> = {};
  for (const o of report.ops) {
    if (!o.onnxNode) continue;
    ops[o.onnxNode] = {
      precision: o.precision,
      role: QDQ.has(o.opType) ? 'conversion' : 'compute',
      ...(o.detail ? { ranAs: o.detail } : {}),
      ...(o.reason ? { reason: o.reason } : {}),
    };
  }
  return { runtime: `TVM ${report.tvmVersion} (${report.target}${report.foldInt8 ? ', int8 fold' : ''})`, ops };
}

/** The overlay for `file` (a path in the report's folder, or the export it started from), or undefined. */
export function executedOverlayFor(file: string, report: BuildOrtResult): ExecutedOverlay | undefined {
  const name = path.basename(file);
  const runtime = `ONNX Runtime ${report.ortVersion} (${report.provider})`;
  const ours = report.variants.find((v) => v.name === 'ours');
  if (ours && report.onnx && path.resolve(report.onnx) === path.resolve(file))
    return { runtime, ops: bySource(ours.ops) };
  for (const v of report.variants) {
    if (path.basename(v.optimized) === name) {
      return { runtime, ops: Object.fromEntries(v.ops.map((o) => [o.name, fromOp(o)])) };
    }
    if (path.basename(v.onnx) === name) return { runtime, ops: bySource(v.ops) };
  }
  return undefined;
}

function fromOp(o: Op): ExecutedOp {
  return {
    precision: o.precision,
    role: o.role,
    ...(o.dtypes ? { dtypes: o.dtypes } : {}),
    ...(o.reason ? { reason: o.reason } : {}),
  };
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
    const better =
      !seen ||
      (mine.role === 'compute' && seen.role !== 'compute') ||
      (mine.role === seen.role && (RANK[mine.precision] ?? 0) > (RANK[seen.precision] ?? 0));
    if (better) out[o.sourceNode] = mine;
  }
  for (const [source, types] of ranAs) out[source].ranAs = types.join(' + ');
  return out;
}

/** The newest build report that describes `file`: one beside it, or one in a folder next to it (out/ort-cpu/ and
 * out/tvm-<target>/ beside the export). */
export async function findExecutedOverlay(
  file: string,
): Promise<{ overlay: ExecutedOverlay; from: string } | undefined> {
  const folder = path.dirname(file);
  const candidates = [path.join(folder, REPORT_FILE)];
  try {
    for (const entry of await readdir(folder, { withFileTypes: true })) {
      if (entry.isDirectory()) candidates.push(path.join(folder, entry.name, REPORT_FILE));
    }
  } catch {
    /* an unreadable folder has no reports */
  }
  let best: { overlay: ExecutedOverlay; from: string; mtime: number } | undefined;
  for (const report of candidates) {
    try {
      const [info, text] = await Promise.all([stat(report), readWorkspaceFile(report, LIMITS.report)]);
      const overlay = overlayFromReport(file, JSON.parse(text));
      if (overlay && (!best || info.mtimeMs > best.mtime)) best = { overlay, from: report, mtime: info.mtimeMs };
    } catch {
      // no report there, or not one of ours
    }
  }
  return best && { overlay: best.overlay, from: best.from };
}
