// Drives one real kernel process (`python -m qat_kernel`, started as client/kernel/kernel.ts starts it) with
// malformed frames, each followed by `kernel/info` on the same process: the named hostile frames first, then
// seeded mutations (a failure can be replayed). Counts: inputs, crashes (the kernel exited), hangs (kernel/info
// not answered within its bound), the slowest answer, and the kernel's RSS at start and end. At the end a frame
// cut short by the end of the stream: the kernel exits cleanly.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { repoRoot, venvPython } from './paths';

export interface FrameResult {
  inputs: number;
  crashes: number;
  hangs: number;
  /** The first few frames that crashed or hung the kernel, or were answered wrongly. */
  failures: string[];
  maxLatencyMs: number;
  slowest: string;
  rssStartKb: number;
  rssEndKb: number;
  /** The kernel's exit code after a truncated frame and the end of its input (0: a clean exit). */
  exitAfterTruncated: number | null;
  seconds: number;
}

export interface FrameOptions {
  /** Mutated frames after the named ones. */
  mutated: number;
  seed?: number;
  /** kernel/info later than this after a frame counts as a hang (the bound, not a speed goal). */
  answerMs?: number;
}

const helpers = path.join(repoRoot, 'python-helpers');
const enc = (s: string) => Buffer.from(s, 'utf8');
const json = (v: unknown) => enc(JSON.stringify(v));

export function frame(body: Buffer, length?: string): Buffer {
  return Buffer.concat([enc(`Content-Length: ${length ?? body.length}\r\n\r\n`), body]);
}

const MAX_BODY = 64 * 1024 * 1024; // the kernel's cap (qat_kernel/rpc/framing.py)
const rpc = (message: Record<string, unknown>) => frame(json({ jsonrpc: '2.0', ...message }));
const cancel = (params: unknown) => rpc({ method: '$/cancelRequest', params });

/** Frames a hostile or broken client could send; each must be answered with an error or dropped. */
export const NAMED_FRAMES: Record<string, Buffer> = {
  'json null': frame(enc('null')),
  'json number': frame(enc('42')),
  'json string': frame(enc('"kernel/info"')),
  'json list': frame(enc('[1, 2]')),
  'empty batch': frame(enc('[]')),
  'empty body': frame(Buffer.alloc(0)),
  'method is a list': rpc({ id: 9001, method: ['kernel/info'] }),
  'method is an object': rpc({ id: 9002, method: { a: 1 } }),
  'method is a number': rpc({ id: 9006, method: 7 }),
  'id is a list': rpc({ id: [1], method: 'kernel/info' }),
  'id is an object': rpc({ id: { a: 1 }, method: 'kernel/info' }),
  'id is a float': rpc({ id: 1.5, method: 'kernel/info' }),
  'id is huge': frame(enc('{"jsonrpc": "2.0", "id": 1' + '0'.repeat(400) + ', "method": "kernel/info"}')),
  'bool id': rpc({ id: true, method: 'kernel/info' }),
  'cancel with a list id': cancel({ id: [1] }),
  'cancel with an object id': cancel({ id: { a: 1 } }),
  'cancel with a null id': cancel({ id: null }),
  'cancel of an unknown id': cancel({ id: 123456789 }),
  'cancel with list params': cancel([1]),
  'cancel with no params': rpc({ method: '$/cancelRequest' }),
  'cancel as a request': rpc({ id: 9007, method: '$/cancelRequest', params: { id: 1 } }),
  'params are a list': rpc({ id: 9003, method: 'compare/layers', params: [1] }),
  'params are a string': rpc({ id: 9008, method: 'kernel/info', params: 'x' }),
  'unknown method': rpc({ id: 9005, method: 'no/such' }),
  'unknown notification': rpc({ method: 'no/such' }),
  'no jsonrpc': frame(json({ id: 9004, method: 'kernel/info' })),
  'jsonrpc 1.0': frame(json({ jsonrpc: '1.0', id: 9009, method: 'kernel/info' })),
  'a response sent to the kernel': rpc({ id: 9010, result: {} }),
  'non-numeric length': Buffer.from('Content-Length: twelve\r\n\r\n{}'),
  'negative length': Buffer.from('Content-Length: -5\r\n\r\n{}'),
  'fractional length': Buffer.from('Content-Length: 1.5\r\n\r\n{}'),
  'hex length': Buffer.from('Content-Length: 0x10\r\n\r\n{}'),
  'empty length': Buffer.from('Content-Length: \r\n\r\n{}'),
  'huge length': Buffer.from('Content-Length: 99999999999999999999\r\n\r\n{}'),
  'overflowing length': Buffer.from(`Content-Length: 1${'0'.repeat(400)}\r\n\r\n{}`),
  // Past Python's int-conversion limit (4,300 digits), which int() refuses with a ValueError.
  'length past int()': Buffer.from(`Content-Length: ${'9'.repeat(5000)}\r\n\r\n{}`),
  'length of zeros': Buffer.from(`Content-Length: ${'0'.repeat(5000)}2\r\n\r\n{}`),
  'length over the cap': Buffer.from(`Content-Length: ${MAX_BODY + 1}\r\n\r\n{}`),
  'two lengths': Buffer.from('Content-Length: 2\r\nContent-Length: x\r\n\r\n{}'),
  'json nested 100k deep': frame(enc('['.repeat(100_000) + ']'.repeat(100_000))),
  'objects nested 100k deep': frame(enc('{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000))),
  'params nested 100k deep': frame(
    enc(
      '{"jsonrpc":"2.0","id":9011,"method":"kernel/info","params":' + '['.repeat(100_000) + ']'.repeat(100_000) + '}',
    ),
  ),
  'not utf-8': frame(Buffer.from([0xff, 0xfe, 0x00, 0x67, 0x61, 0x72])),
  'lone surrogate': frame(enc('{"jsonrpc":"2.0","id":9012,"method":"\\ud800"}')),
  'not json': frame(enc('{oops')),
  NaN: frame(enc('{"jsonrpc":"2.0","id":NaN,"method":"kernel/info"}')),
  'no header': Buffer.from('{}\r\n\r\n'),
  'header without a blank line': Buffer.from('Content-Length: 2\r\n{}'),
  'a 2 MB line of garbage': Buffer.concat([Buffer.alloc(2 * 1024 * 1024, 0x61), Buffer.from('\r\n')]),
  'an 8 MB request': rpc({ id: 9013, method: 'kernel/info', params: { pad: 'x'.repeat(8 * 1024 * 1024) } }),
  'an 8 MB string method': rpc({ id: 9014, method: 'x'.repeat(8 * 1024 * 1024) }),
};

function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
}

/**
 * A mutated frame. Its Content-Length, when it has one, matches its body: a length longer than the body would
 * only make the kernel wait for the rest, as it must (a stream cut short is the last check of the run).
 */
export function mutatedFrame(r: () => number): Buffer {
  const int = (n: number) => Math.floor(r() * n);
  const pick = <T>(xs: T[]) => xs[int(xs.length)];
  const valid = { jsonrpc: '2.0', id: 10_000 + int(10_000), method: 'kernel/info', params: {} };
  switch (int(6)) {
    case 0: // random bytes
      return frame(Buffer.from(Array.from({ length: 1 + int(200) }, () => int(256))));
    case 1: {
      // a valid message with one field replaced by a random JSON value
      const values = [null, 0, -1, 2 ** 70, 1.5, '', 'x'.repeat(300), [], [null], {}, { id: [] }, true];
      const message: Record<string, unknown> = { ...valid };
      message[pick(Object.keys(message))] = pick(values);
      return frame(json(message));
    }
    case 2: {
      // a valid message cut short or with a byte flipped
      let body = json(valid);
      if (r() < 0.5) body = body.subarray(0, 1 + int(body.length - 1));
      else body[int(body.length)] = int(256);
      return frame(Buffer.from(body));
    }
    case 3: {
      // a bad header
      const header = pick(['Content-Length: ', 'Content-Length:', 'content-length: ', 'X: 1\r\nContent-Length: ']);
      const length = pick(['abc', '-1', '1e9', '0x10', '', '99999999999999', '+2', ' 2 2']);
      return Buffer.from(`${header}${length}\r\n\r\n{}`);
    }
    case 4: {
      // nested deep, or a long run of one character
      const depth = pick([100, 1000, 10_000, 100_000]);
      const [open, close] = pick([
        ['[', ']'],
        ['{"a":', '}'],
      ]);
      return frame(enc(open.repeat(depth) + (open === '[' ? '' : '1') + close.repeat(depth)));
    }
    default:
      return frame(json(pick([null, 1, 'a', [valid], [valid, valid], { jsonrpc: '1.0' }, { method: null }])));
  }
}

/** The frames of a run: the named ones, then `mutated` seeded mutations. */
export function framesFor(mutated: number, seed: number): Array<[string, Buffer]> {
  const r = rng(seed);
  const out: Array<[string, Buffer]> = Object.entries(NAMED_FRAMES);
  for (let i = 0; i < mutated; i++) {
    const raw = mutatedFrame(r);
    out.push([`mutated ${i}: ${JSON.stringify(raw.subarray(0, 60).toString('latin1'))}`, raw]);
  }
  return out;
}

interface Message {
  id?: unknown;
  method?: string;
  result?: { python?: string };
  error?: { code: number; message: string };
}

/** The kernel over stdio, read frame by frame; requests with a numeric id are awaited by id. */
class RawKernel {
  readonly proc: ChildProcess;
  private buffer = Buffer.alloc(0);
  private waiting = new Map<number, (m: Message) => void>();
  stderrTail = '';
  exited?: { code: number | null; signal: NodeJS.Signals | null };
  private onExit: Array<() => void> = [];

  constructor() {
    this.proc = spawn(venvPython, ['-m', 'qat_kernel'], {
      cwd: helpers,
      env: {
        ...process.env,
        PYTHONPATH: helpers,
        PYTHONUNBUFFERED: '1',
        QAT_STUDIO_PROTOCOL_DIR: path.join(repoRoot, 'protocol'),
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.proc.stdout!.on('data', (d: Buffer) => this.read(d));
    this.proc.stderr!.on('data', (d: Buffer) => (this.stderrTail = (this.stderrTail + d.toString()).slice(-4000)));
    this.proc.stdin!.on('error', () => undefined); // a write after the kernel died: the exit is what counts
    this.proc.on('exit', (code, signal) => {
      this.exited = { code, signal };
      for (const f of this.onExit.splice(0)) f();
    });
  }

  private read(chunk: Buffer): void {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    for (;;) {
      const end = this.buffer.indexOf('\r\n\r\n');
      if (end < 0) return;
      const length = Number(/content-length:\s*(\d+)/i.exec(this.buffer.subarray(0, end).toString('latin1'))?.[1]);
      if (!Number.isFinite(length) || this.buffer.length < end + 4 + length) return;
      const message = JSON.parse(this.buffer.subarray(end + 4, end + 4 + length).toString('utf8')) as Message;
      this.buffer = this.buffer.subarray(end + 4 + length);
      if (typeof message.id === 'number' && message.method === undefined) this.waiting.get(message.id)?.(message);
    }
  }

  write(raw: Buffer): Promise<void> {
    return new Promise((resolve) => {
      if (this.exited || !this.proc.stdin!.writable) return resolve();
      this.proc.stdin!.write(raw, () => resolve());
    });
  }

  /** The answer to a request with this id, 'exit' when the kernel exits first, 'timeout' past `ms`. */
  answer(id: number, ms: number): Promise<Message | 'exit' | 'timeout'> {
    return new Promise((resolve) => {
      if (this.exited) return resolve('exit');
      const done = (v: Message | 'exit' | 'timeout') => {
        clearTimeout(timer);
        this.waiting.delete(id);
        resolve(v);
      };
      const timer = setTimeout(() => done('timeout'), ms);
      this.waiting.set(id, (m) => done(m));
      this.onExit.push(() => done('exit'));
    });
  }

  exit(ms: number): Promise<number | null | 'timeout'> {
    return new Promise((resolve) => {
      if (this.exited) return resolve(this.exited.code);
      const timer = setTimeout(() => resolve('timeout'), ms);
      this.onExit.push(() => {
        clearTimeout(timer);
        resolve(this.exited!.code);
      });
    });
  }
}

async function rssKb(pid: number | undefined): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  return Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0);
}

export async function runKernelFrames(opts: FrameOptions): Promise<FrameResult> {
  const answerMs = opts.answerMs ?? 30_000;
  const started = performance.now();
  const result: FrameResult = {
    inputs: 0,
    crashes: 0,
    hangs: 0,
    failures: [],
    maxLatencyMs: 0,
    slowest: '',
    rssStartKb: 0,
    rssEndKb: 0,
    exitAfterTruncated: null,
    seconds: 0,
  };
  const fail = (what: string) => result.failures.length < 10 && result.failures.push(what);
  let kernel = new RawKernel();
  let nextId = 1;
  const info = async (ms: number) => {
    const id = nextId++;
    await kernel.write(rpc({ id, method: 'kernel/info', params: {} }));
    return kernel.answer(id, ms);
  };
  try {
    // The first kernel/info imports the kernel's packages: not what is timed.
    const first = await info(600_000);
    if (typeof first === 'string') throw new Error(`kernel did not start (${first}): ${kernel.stderrTail}`);
    result.rssStartKb = await rssKb(kernel.proc.pid);
    for (const [label, raw] of framesFor(opts.mutated, opts.seed ?? 20261204)) {
      result.inputs++;
      const t0 = performance.now();
      await kernel.write(raw);
      const answer = await info(answerMs);
      const ms = performance.now() - t0;
      if (ms > result.maxLatencyMs) [result.maxLatencyMs, result.slowest] = [ms, label];
      if (answer === 'exit' || answer === 'timeout') {
        if (answer === 'exit') result.crashes++;
        else result.hangs++;
        fail(`${label}: ${answer === 'exit' ? `kernel exited ${JSON.stringify(kernel.exited)}` : 'no answer'}`);
        fail(kernel.stderrTail.slice(-600));
        // A fresh kernel for the rest of the run, so one failure does not hide the others.
        kernel.proc.kill('SIGKILL');
        kernel = new RawKernel();
        if (typeof (await info(600_000)) === 'string') throw new Error(`kernel did not restart: ${kernel.stderrTail}`);
      } else if (!answer.result?.python) fail(`${label}: kernel/info answered ${JSON.stringify(answer)}`);
    }
    result.rssEndKb = await rssKb(kernel.proc.pid);
    // A frame cut short, then the end of the stream: the client is gone and the kernel exits cleanly.
    await kernel.write(Buffer.from('Content-Length: 100\r\n\r\n{"jsonrpc": "2.0", "id": 7, "met'));
    kernel.proc.stdin!.end();
    const code = await kernel.exit(answerMs);
    result.exitAfterTruncated = code === 'timeout' ? null : code;
  } finally {
    if (!kernel.exited) kernel.proc.kill('SIGKILL');
  }
  result.seconds = (performance.now() - started) / 1000;
  return result;
}
