// Runs slimOnnx in a worker thread with size, time and heap limits, so a hostile or broken .onnx file cannot
// block or crash the extension host: past a limit the worker is ended and the caller gets a clear SlimError; a
// file it cannot read is a MalformedOnnxError (what is wrong, at which byte, in which message).
import { Worker } from 'node:worker_threads';
import { SLIM_BUDGET_BYTES, SLIM_LIMIT_BYTES, type SlimResult } from './slimOnnx';
import type { SlimReply, SlimRequest } from './slimWorker';

export class SlimError extends Error {}

/** The file is not an ONNX model the slimmer can read: the message says what is wrong, at which byte, in which
 * message (`model.functions[0]`). Nothing of it goes to the view. */
export class MalformedOnnxError extends SlimError {
  constructor(
    message: string,
    readonly offset: number | undefined,
  ) {
    super(message);
  }
}

export interface SlimLimits {
  /** Files above this size are refused before any parsing. */
  maxInputBytes: number;
  /** A request still running after this long ends its worker. */
  timeoutMs: number;
  /** The worker's V8 heap cap (payloads live in ArrayBuffers outside it). */
  maxHeapMb: number;
  /** An idle worker is ended after this long. */
  idleMs: number;
}

/** What one request cuts, and how long it may take. */
export interface SlimOptions {
  /** A tensor with more payload bytes than this loses it. */
  limitBytes?: number;
  /** The payload bytes of the other tensors kept in all; past it, the largest of them lose theirs too. */
  budgetBytes?: number;
  timeoutMs?: number;
}

export const DEFAULT_SLIM_LIMITS: SlimLimits = {
  maxInputBytes: 2 * 1024 ** 3 - 1,
  timeoutMs: 30_000,
  maxHeapMb: 512,
  idleMs: 30_000,
};

interface Pending {
  resolve: (r: SlimResult) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
}

export class SlimService {
  private worker: Worker | undefined;
  private nextId = 1;
  private pending = new Map<number, Pending>();
  private idle: NodeJS.Timeout | undefined;
  private readonly limits: SlimLimits;

  /** `workerFile`: the bundled slimWorker.js (out/client/slimWorker.js). */
  constructor(
    private readonly workerFile: string,
    limits: Partial<SlimLimits> = {},
  ) {
    this.limits = { ...DEFAULT_SLIM_LIMITS, ...limits };
  }

  /** Resolves with the slimmed model, or rejects with a SlimError saying which limit was hit (a MalformedOnnxError
   * when the file cannot be read). */
  slim(input: Uint8Array, options: SlimOptions = {}): Promise<SlimResult> {
    const {
      limitBytes = SLIM_LIMIT_BYTES,
      budgetBytes = SLIM_BUDGET_BYTES,
      timeoutMs = this.limits.timeoutMs,
    } = options;
    const mb = (n: number) => `${(n / 1024 ** 2).toFixed(0)} MB`;
    if (input.byteLength > this.limits.maxInputBytes)
      return Promise.reject(
        new SlimError(
          `The file is ${mb(input.byteLength)}; the graph view opens files up to ${mb(this.limits.maxInputBytes)}.`,
        ),
      );
    const worker = this.start();
    const id = this.nextId++;
    // The worker gets its own copy: the caller's bytes stay usable (and are not detached). Not input.slice(): on a
    // Node Buffer (a file read) that is a view of the same memory, and transferring it emptied the caller's bytes.
    const bytes = new Uint8Array(input);
    return new Promise<SlimResult>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.fail(
          new SlimError(
            `Reading the model's structure took more than ${(timeoutMs / 1000).toFixed(0)} s and was stopped.`,
          ),
        );
      }, timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      clearTimeout(this.idle);
      worker.postMessage({ id, bytes, limitBytes, budgetBytes } satisfies SlimRequest, [bytes.buffer]);
    });
  }

  dispose(): void {
    this.fail(new SlimError('The graph view was closed.'));
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(this.workerFile, {
      resourceLimits: { maxOldGenerationSizeMb: this.limits.maxHeapMb, stackSizeMb: 4 },
    });
    worker.unref();
    worker.on('message', (reply: SlimReply) => {
      const p = this.pending.get(reply.id);
      if (!p) return;
      this.pending.delete(reply.id);
      clearTimeout(p.timer);
      if (reply.ok) p.resolve({ bytes: reply.bytes, removed: new Map(reply.removed) });
      else if (reply.malformed) p.reject(new MalformedOnnxError(reply.message, reply.malformed.offset));
      else p.reject(new SlimError(`The model could not be read: ${reply.message}`));
      if (!this.pending.size) this.idle = setTimeout(() => this.stop(), this.limits.idleMs).unref();
    });
    worker.on('error', (err) => {
      const tooBig = (err as NodeJS.ErrnoException).code === 'ERR_WORKER_OUT_OF_MEMORY';
      this.fail(
        new SlimError(
          tooBig
            ? `Reading the model's structure needed more than ${this.limits.maxHeapMb} MB and was stopped.`
            : `Reading the model failed: ${err.message}`,
        ),
      );
    });
    worker.on('exit', () => {
      if (this.worker === worker) this.fail(new SlimError('The worker reading the model stopped.'));
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
  private fail(err: Error): void {
    this.stop();
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.reject(err);
    }
    this.pending.clear();
  }
}
