// What the kernel last learnt about a config's model: the module paths in the *.qatgraph.json files that
// `graph/export` writes. The server only reads these JSON files; it never runs the model. A config finds its
// graphs at the default place (<config dir>/out/<stem>.<stage>.qatgraph.json) or anywhere the client's file
// watcher has reported one whose `config` field names it.
import { statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { LIMITS, readWorkspaceFileSync } from '../../common/workspaceFile';

export interface KnownModule {
  path: string;
  type: string;
  source?: { file: string; line: number };
}

export interface ModelKnowledge {
  /** Module paths as named_modules() reports them, without the root (''). */
  modules: KnownModule[];
  /** The graph file they came from, and its stage. */
  graphFile: string;
  stage: string;
  /** Changes whenever the file does: part of cache keys. */
  stamp: string;
}

interface Entry {
  mtimeMs: number;
  size: number;
  graph?: { config?: string; stage: string; modules: KnownModule[] };
}

const STAGE_ORDER = ['fp32', 'prepared', 'converted'];

export class ModelIndex {
  private reported = new Set<string>();
  private cache = new Map<string, Entry>();

  /** A graph file created or changed (from workspace/didChangeWatchedFiles). */
  add(file: string): void {
    this.reported.add(file);
    this.cache.delete(file);
  }

  remove(file: string): void {
    this.reported.delete(file);
    this.cache.delete(file);
  }

  /** The best known model for a config (fp32 graph first: overrides match the float model's module paths). */
  forConfig(configUri: string): ModelKnowledge | undefined {
    const configPath = toPath(configUri);
    if (!configPath) return undefined;
    const dir = path.dirname(configPath);
    const stem = path.basename(configPath).replace(/(\.qat)?\.ya?ml$/i, '');
    const defaults = STAGE_ORDER.map((stage) => path.join(dir, 'out', `${stem}.${stage}.qatgraph.json`));
    const found: Array<{ file: string; entry: Entry }> = [];
    for (const file of new Set([...defaults, ...this.reported])) {
      const entry = this.read(file);
      if (!entry?.graph) continue;
      const owner = entry.graph.config;
      if (owner ? path.resolve(owner) === configPath : defaults.includes(file)) found.push({ file, entry });
    }
    if (found.length === 0) return undefined;
    found.sort((a, b) => rank(a.entry) - rank(b.entry) || b.entry.mtimeMs - a.entry.mtimeMs);
    const { file, entry } = found[0];
    return {
      modules: entry.graph!.modules,
      graphFile: file,
      stage: entry.graph!.stage,
      stamp: `${file}@${entry.mtimeMs}:${entry.size}`,
    };
  }

  private read(file: string): Entry | undefined {
    let stat;
    try {
      stat = statSync(file);
    } catch {
      this.cache.delete(file);
      return undefined;
    }
    const cached = this.cache.get(file);
    if (cached && cached.mtimeMs === stat.mtimeMs && cached.size === stat.size) return cached;
    const entry: Entry = { mtimeMs: stat.mtimeMs, size: stat.size, graph: parseGraph(file) };
    this.cache.set(file, entry);
    return entry;
  }
}

const rank = (e: Entry) => {
  const i = STAGE_ORDER.indexOf(e.graph?.stage ?? '');
  return i < 0 ? STAGE_ORDER.length : i;
};

function toPath(uri: string): string | undefined {
  if (!uri.startsWith('file:')) return undefined;
  try {
    return path.resolve(fileURLToPath(uri));
  } catch {
    return undefined;
  }
}

/** Only what the server needs; a file that is not a graph (or is half written) counts as absent. */
function parseGraph(file: string): Entry['graph'] {
  let data: unknown;
  try {
    data = JSON.parse(readWorkspaceFileSync(file, LIMITS.graph));
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
    });
  }
  return {
    config: typeof g.config === 'string' ? g.config : undefined,
    stage: typeof g.stage === 'string' ? g.stage : '',
    modules,
  };
}

/** The one index the server uses. */
export const modelIndex = new ModelIndex();
