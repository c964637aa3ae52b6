// Reads big graph files in a worker thread (out/server/graphWorker.js), one at a time, each within a time and
// heap limit: a graph that needs more is counted as absent and the worker is started afresh for the next one.
import { Worker } from 'node:worker_threads';
import type { GraphReply, GraphRequest } from '../graphWorker';
import type { GraphSummary } from './graphFile';

export interface GraphLoaderLimits {
  timeoutMs: number;
  maxHeapMb: number;
  idleMs: number;
}

const DEFAULT_LIMITS: GraphLoaderLimits = { timeoutMs: 60_000, maxHeapMb: 3072, idleMs: 30_000 };

interface Pending {
  resolve: (graph: GraphSummary | undefined) => void;
  timer: NodeJS.Timeout;
}

export class GraphLoader {
  private worker: Worker | undefined;
  private nextId = 1;
  private pending = new Map<number, Pending>();
  private idle: NodeJS.Timeout | undefined;
  private readonly limits: GraphLoaderLimits;

  constructor(
    private readonly workerFile: string,
    limits: Partial<GraphLoaderLimits> = {},
  ) {
    this.limits = { ...DEFAULT_LIMITS, ...limits };
  }

  /** The graph's summary; undefined when it is no graph, cannot be read, or outgrows the limits. */
  load(file: string): Promise<GraphSummary | undefined> {
    const worker = this.start();
    const id = this.nextId++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.fail(), this.limits.timeoutMs);
      this.pending.set(id, { resolve, timer });
      clearTimeout(this.idle);
      worker.postMessage({ id, file } satisfies GraphRequest);
    });
  }

  dispose(): void {
    this.fail();
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(this.workerFile, {
      resourceLimits: { maxOldGenerationSizeMb: this.limits.maxHeapMb, stackSizeMb: 4 },
    });
    worker.unref();
    worker.on('message', (reply: GraphReply) => {
      const p = this.pending.get(reply.id);
      if (!p) return;
      this.pending.delete(reply.id);
      clearTimeout(p.timer);
      p.resolve(reply.graph);
      if (!this.pending.size) this.idle = setTimeout(() => this.stop(), this.limits.idleMs).unref();
    });
    worker.on('error', () => this.fail());
    worker.on('exit', () => {
      if (this.worker === worker) this.fail();
    });
    this.worker = worker;
    return worker;
  }

  private stop(): void {
    const w = this.worker;
    this.worker = undefined;
    clearTimeout(this.idle);
    void w?.terminate();
  }

  /** Ends the worker; everything waiting on it counts as absent. */
  private fail(): void {
    this.stop();
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.resolve(undefined);
    }
    this.pending.clear();
  }
}
