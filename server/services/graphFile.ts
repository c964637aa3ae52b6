// What the language server takes from a *.qatgraph.json that graph/export wrote: its config, stage and module
// paths. Read as any workspace file is (common/workspaceFile.ts): a file that is not a graph, is half written,
// is no regular file or is over the size limit counts as absent.
import { LIMITS, readWorkspaceFileSync } from '../../common/workspaceFile';

export interface KnownModule {
  path: string;
  type: string;
  source?: { file: string; line: number };
  /** A Linear's in_features, what a weight group size must divide. */
  inFeatures?: number;
}

export interface GraphSummary {
  config?: string;
  stage: string;
  modules: KnownModule[];
}

export function readGraphSummary(file: string, maxBytes = LIMITS.graph): GraphSummary | undefined {
  let data: unknown;
  try {
    data = JSON.parse(readWorkspaceFileSync(file, maxBytes));
  } catch {
    return undefined;
  }
  const g = data as { format?: unknown; config?: unknown; stage?: unknown; modules?: unknown };
  if (g?.format !== 'qat-studio.graph/1' || !Array.isArray(g.modules)) return undefined;
  const modules: KnownModule[] = [];
  for (const m of g.modules as Array<Record<string, unknown>>) {
    if (typeof m?.path !== 'string' || m.path === '') continue;
    const src = m.source as { file?: unknown; line?: unknown } | undefined;
    modules.push({
      path: m.path,
      type: typeof m.type === 'string' ? m.type : '',
      source:
        typeof src?.file === 'string' && typeof src.line === 'number' ? { file: src.file, line: src.line } : undefined,
      inFeatures: Number.isInteger(m.inFeatures) && (m.inFeatures as number) > 0 ? (m.inFeatures as number) : undefined,
    });
  }
  return {
    config: typeof g.config === 'string' ? g.config : undefined,
    stage: typeof g.stage === 'string' ? g.stage : '',
    modules,
  };
}
