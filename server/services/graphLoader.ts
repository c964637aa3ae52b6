// Reads big graph files in a worker thread (out/server/graphWorker.js), within a time and heap limit
// (common/boundedWorker.ts): a graph that needs more is counted as absent and the worker is started afresh for the
// next one.
import { BoundedWorker, type BoundedWorkerLimits } from '../../common/boundedWorker';
import type { GraphReply, GraphRequest } from '../graphWorker';
import type { GraphSummary } from './graphFile';

export interface GraphLoaderLimits extends BoundedWorkerLimits {
  timeoutMs: number;
}

const DEFAULT_LIMITS: GraphLoaderLimits = { timeoutMs: 60_000, maxHeapMb: 3072, idleMs: 30_000 };

export class GraphLoader {
  private readonly limits: GraphLoaderLimits;
  private readonly worker: BoundedWorker<GraphRequest, GraphReply>;

  constructor(workerFile: string, limits: Partial<GraphLoaderLimits> = {}) {
    this.limits = { ...DEFAULT_LIMITS, ...limits };
    this.worker = new BoundedWorker(workerFile, this.limits, (f) => new Error(f.reason));
  }

  /** The graph's summary; undefined when it is no graph, cannot be read, or outgrows the limits. */
  async load(file: string): Promise<GraphSummary | undefined> {
    try {
      return (await this.worker.request({ file }, this.limits.timeoutMs)).graph;
    } catch {
      return undefined;
    }
  }

  dispose(): void {
    this.worker.dispose();
  }
}
