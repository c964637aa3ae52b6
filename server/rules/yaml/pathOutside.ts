// QCFG016: a file the config names (model.entry, data.entry, train.loss, model.weights, export.onnx.path) that
// resolves outside the workspace folders, symlinks followed: the kernel refuses to import, load or write it
// (pipeline/config.py check_inside) unless the machine setting allows it, and then this finding is not shown.
import path from 'node:path';
import { isMap, isScalar, type Node } from 'yaml';
import { isInside } from '../../util/insideFolders';
import type { Finding } from '../types';
import { pairOf, rangeOf, type YamlRuleContext } from './context';

export const PATH_OUTSIDE = 'QCFG016';

export const PATH_KEYS: ReadonlyArray<{ key: string; entry: boolean }> = [
  { key: 'model.entry', entry: true },
  { key: 'data.entry', entry: true },
  { key: 'train.loss', entry: true },
  { key: 'model.weights', entry: false },
  { key: 'export.onnx.path', entry: false },
];

function valueAt(root: Node | null, dotted: string): Node | undefined {
  let node: unknown = root;
  for (const key of dotted.split('.')) {
    if (!isMap(node)) return undefined;
    node = pairOf(node, key)?.value;
  }
  return (node ?? undefined) as Node | undefined;
}

export function pathOutside(ctx: YamlRuleContext): Finding[] {
  const where = ctx.workspace;
  if (!where || where.folders.length === 0 || !isInside(where.configFile, where.folders)) return [];
  const findings: Finding[] = [];
  for (const { key, entry } of PATH_KEYS) {
    const node = valueAt(ctx.doc.contents, key);
    const at = rangeOf(node);
    if (!isScalar(node) || typeof node.value !== 'string' || !at) continue;
    const value = node.value;
    const file = entry ? (/\.py:/.test(value) ? value.slice(0, value.lastIndexOf(':')) : undefined) : value;
    if (!file) continue;
    const resolved = path.resolve(path.dirname(where.configFile), file);
    if (isInside(resolved, where.folders)) continue;
    findings.push({
      code: PATH_OUTSIDE,
      severity: 'error',
      start: at[0],
      end: at[1],
      message:
        `${key}: ${file} is outside the workspace: QAT Studio imports, loads and writes files only inside the ` +
        'folders it opened. Move it inside, or turn on the machine setting qatStudio.kernel.allowPathsOutsideWorkspace.',
    });
  }
  return findings;
}
