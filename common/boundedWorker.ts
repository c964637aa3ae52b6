// A worker thread (node only) that answers each request with one message, within limits: a request still running
// after its time limit, or a worker past its heap cap, ends the worker and fails every request waiting on it; an
// idle worker is ended after a while, and the next request starts a fresh one. The extension host's ONNX slimming
// and the language server's graph index run their work through it.
import { Worker, type TransferListItem } from 'node:worker_threads';

export interface BoundedWorkerLimits {
  /** The worker's V8 heap cap. */
  maxHeapMb: number;
  /** An idle worker is ended after this long. */
  idleMs: number;
}

/** Why requests failed: each owner turns it into its own error. */
export type WorkerFailure =
  | { reason: 'timeout'; ms: number }
  | { reason: 'memory'; maxHeapMb: number }
  | { reason: 'error'; message: string }
  | { reason: 'stopped' }
  | { reason: 'disposed' };

interface Pending<R> {
  resolve: (reply: R) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
}

export class BoundedWorker<Request extends { id: number }, Reply extends { id: number }> {
  private worker: Worker | undefined;
  private nextId = 1;
  private pending = new Map<number, Pending<Reply>>();
  private idle: NodeJS.Timeout | undefined;

  constructor(
    private readonly workerFile: string,
    private readonly limits: BoundedWorkerLimits,
    private readonly failed: (failure: WorkerFailure) => Error,
  ) {}

  /** Posts `message` (with a fresh id) and resolves with the worker's reply to it. */
  request(message: Omit<Request, 'id'>, timeoutMs: number, transfer: TransferListItem[] = []): Promise<Reply> {
    const worker = this.start();
    const id = this.nextId++;
    return new Promise<Reply>((resolve, reject) => {
      const timer = setTimeout(() => this.fail({ reason: 'timeout', ms: timeoutMs }), timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      clearTimeout(this.idle);
      worker.postMessage({ ...message, id }, transfer);
    });
  }

  dispose(): void {
    this.fail({ reason: 'disposed' });
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(this.workerFile, {
      resourceLimits: { maxOldGenerationSizeMb: this.limits.maxHeapMb, stackSizeMb: 4 },
    });
    worker.unref();
    worker.on('message', (reply: Reply) => {
      const p = this.pending.get(reply.id);
      if (!p) return;
      this.pending.delete(reply.id);
      clearTimeout(p.timer);
      p.resolve(reply);
      if (!this.pending.size) this.idle = setTimeout(() => this.stop(), this.limits.idleMs).unref();
    });
    worker.on('error', (err) => {
      const tooBig = (err as NodeJS.ErrnoException).code === 'ERR_WORKER_OUT_OF_MEMORY';
      this.fail(
        tooBig ? { reason: 'memory', maxHeapMb: this.limits.maxHeapMb } : { reason: 'error', message: err.message },
      );
    });
    worker.on('exit', () => {
      if (this.worker === worker) this.fail({ reason: 'stopped' });
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

  /** Ends the worker and rejects everything waiting on it. */
  private fail(failure: WorkerFailure): void {
    this.stop();
    const err = this.failed(failure);
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.reject(err);
    }
    this.pending.clear();
  }
}
