// Runs slimOnnx in a worker thread with size, time and heap limits, so a hostile or broken .onnx file cannot
// block or crash the extension host: past a limit the worker is ended and the caller gets a clear SlimError; a
// file it cannot read is a MalformedOnnxError (what is wrong, at which byte, in which message).
import { BoundedWorker, type BoundedWorkerLimits, type WorkerFailure } from '../../common/boundedWorker';
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

export interface SlimLimits extends BoundedWorkerLimits {
  /** Files above this size are refused before any parsing. */
  maxInputBytes: number;
  /** A request still running after this long ends its worker. */
  timeoutMs: number;
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

export class SlimService {
  private readonly limits: SlimLimits;
  private readonly worker: BoundedWorker<SlimRequest, SlimReply>;

  /** `workerFile`: the bundled slimWorker.js (out/client/slimWorker.js). */
  constructor(workerFile: string, limits: Partial<SlimLimits> = {}) {
    this.limits = { ...DEFAULT_SLIM_LIMITS, ...limits };
    this.worker = new BoundedWorker(workerFile, this.limits, (f) => new SlimError(failureMessage(f)));
  }

  /** Resolves with the slimmed model, or rejects with a SlimError saying which limit was hit (a MalformedOnnxError
   * when the file cannot be read). */
  async slim(input: Uint8Array, options: SlimOptions = {}): Promise<SlimResult> {
    const {
      limitBytes = SLIM_LIMIT_BYTES,
      budgetBytes = SLIM_BUDGET_BYTES,
      timeoutMs = this.limits.timeoutMs,
    } = options;
    if (input.byteLength > this.limits.maxInputBytes)
      throw new SlimError(
        `The file is ${mb(input.byteLength)}; the graph view opens files up to ${mb(this.limits.maxInputBytes)}.`,
      );
    // The worker gets its own copy: the caller's bytes stay usable (and are not detached). Not input.slice(): on a
    // Node Buffer (a file read) that is a view of the same memory, and transferring it emptied the caller's bytes.
    const bytes = new Uint8Array(input);
    const reply = await this.worker.request({ bytes, limitBytes, budgetBytes }, timeoutMs, [bytes.buffer]);
    if (reply.ok) return { bytes: reply.bytes, removed: new Map(reply.removed) };
    if (reply.malformed) throw new MalformedOnnxError(reply.message, reply.malformed.offset);
    throw new SlimError(`The model could not be read: ${reply.message}`);
  }

  dispose(): void {
    this.worker.dispose();
  }
}

const mb = (n: number) => `${(n / 1024 ** 2).toFixed(0)} MB`;

function failureMessage(f: WorkerFailure): string {
  switch (f.reason) {
    case 'timeout':
      return `Reading the model's structure took more than ${(f.ms / 1000).toFixed(0)} s and was stopped.`;
    case 'memory':
      return `Reading the model's structure needed more than ${f.maxHeapMb} MB and was stopped.`;
    case 'error':
      return `Reading the model failed: ${f.message}`;
    case 'stopped':
      return 'The worker reading the model stopped.';
    case 'disposed':
      return 'The graph view was closed.';
  }
}
