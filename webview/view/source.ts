// Where a node is defined in the user's code, as a path the editor can open.
import type { Graph, GraphNode, SourceLocation } from '../importers/types';

const isAbsolute = (p: string) => /^([\\/]|[A-Za-z]:[\\/])/.test(p);

/** The folder of a path, in the path's own separator style. */
export function dirname(p: string): string {
  const i = Math.max(p.lastIndexOf('/'), p.lastIndexOf('\\'));
  return i <= 0 ? (i === 0 ? p[0] : '.') : p.slice(0, i);
}

/** `file` against `base` when it is relative (kept graph files name sources relative to where they live). */
export function resolvePath(file: string, base: string | undefined): string {
  if (!base || isAbsolute(file)) return file;
  const sep = base.includes('\\') && !base.includes('/') ? '\\' : '/';
  const out: string[] = [];
  for (const part of [...base.split(/[\\/]/), ...file.split(/[\\/]/)]) {
    if (part === '..') {
      if (out.length > 1 || (out.length === 1 && out[0] !== '')) out.pop();
    } else if (part === '' && out.length === 0)
      out.push(part); // the root of an absolute base
    else if (part !== '.' && part !== '') out.push(part);
  }
  return out.join(sep) || '.';
}

/**
 * A node's own source line (where the model computes it), else its module's definition. Relative paths resolve
 * against the graph's config folder, else `baseDir` (the opened file's folder).
 */
export function sourceOf(node: GraphNode, graph: Graph, baseDir?: string): SourceLocation | undefined {
  const src = node.source ?? (node.module ? graph.modules?.[node.module]?.source : undefined);
  if (!src) return undefined;
  const base = graph.config && isAbsolute(graph.config) ? dirname(graph.config) : baseDir;
  return { file: resolvePath(src.file, base), line: src.line };
}
