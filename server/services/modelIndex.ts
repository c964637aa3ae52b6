// What the kernel last learnt about a config's model: the module paths in the *.qatgraph.json files that
// `graph/export` writes. The server only reads these JSON files; it never runs the model. A config finds its
// graphs at the default place (<config dir>/out/<stem>.<stage>.qatgraph.json) or anywhere the client's file
// watcher has reported one whose `config` field names it.
import { statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readGraphSummary, type GraphSummary, type KnownModule } from './graphFile';
import type { GraphLoader } from './graphLoader';

export type { KnownModule } from './graphFile';

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
  key: string;
  mtimeMs: number;
  size: number;
  graph?: GraphSummary;
}

const STAGE_ORDER = ['fp32', 'prepared', 'converted'];
/** Graphs up to this size are read on the spot (a few ms); bigger ones in the loader's worker. */
export const SYNC_GRAPH_BYTES = 4 << 20;

export class ModelIndex {
  private reported = new Set<string>();
  private cache = new Map<string, Entry>();
  private loading = new Map<string, string>();
  private loader: GraphLoader | undefined;
  private indexed: () => void = () => undefined;

  /** Graphs over SYNC_GRAPH_BYTES are read by `loader`; `indexed` runs each time one is in. Until then the
   * graph's last known state (or none) stands. */
  readBigGraphsWith(loader: GraphLoader, indexed: () => void): void {
    this.loader = loader;
    this.indexed = indexed;
  }

  /** A graph file created or changed (from workspace/didChangeWatchedFiles). */
  add(file: string): void {
    this.reported.add(file);
  }

  remove(file: string): void {
    this.reported.delete(file);
    this.cache.delete(file);
    this.loading.delete(file);
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
    const key = `${stat.mtimeMs}:${stat.size}:${stat.ino}`;
    const cached = this.cache.get(file);
    if (cached?.key === key) return cached;
    if (!this.loader || stat.size <= SYNC_GRAPH_BYTES) {
      const entry: Entry = { key, mtimeMs: stat.mtimeMs, size: stat.size, graph: readGraphSummary(file) };
      this.cache.set(file, entry);
      return entry;
    }
    if (this.loading.get(file) !== key) {
      this.loading.set(file, key);
      const { mtimeMs, size } = stat;
      void this.loader.load(file).then((graph) => {
        if (this.loading.get(file) !== key) return;
        this.loading.delete(file);
        this.cache.set(file, { key, mtimeMs, size, graph });
        this.indexed();
      });
    }
    return cached;
  }
}

/** Module paths an attribute name can stand for: itself at the top, or any nested module of that name. */
export function modulePathsFor(attribute: string, model?: ModelKnowledge): string[] {
  if (!model) return [attribute];
  const index = byLastName(model.modules);
  const named = index.get(attribute.slice(attribute.lastIndexOf('.') + 1)) ?? [];
  const exact = named.filter((p) => p === attribute);
  return exact.length ? exact : named.filter((p) => p.endsWith(`.${attribute}`));
}

// Module paths by their last name, once per graph read: semantic tokens ask for every attribute in a script.
const lastNames = new WeakMap<KnownModule[], Map<string, string[]>>();

function byLastName(modules: KnownModule[]): Map<string, string[]> {
  let index = lastNames.get(modules);
  if (!index) {
    index = new Map();
    for (const m of modules) {
      const name = m.path.slice(m.path.lastIndexOf('.') + 1);
      const list = index.get(name);
      if (list) list.push(m.path);
      else index.set(name, [m.path]);
    }
    lastNames.set(modules, index);
  }
  return index;
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

/** The one index the server uses. */
export const modelIndex = new ModelIndex();
