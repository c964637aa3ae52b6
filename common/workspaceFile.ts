// How the extension host and the language server read a file a workspace holds (node only; the webview never
// imports it). A workspace is input like any other: a config, a graph JSON or a run history may be a symlink to
// /dev/zero, a FIFO that never yields, or gigabytes. So: opened without blocking, only a regular file is read (a
// FIFO, device or socket is refused before any read), and never more than a size limit, checked before reading.
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { open } from 'node:fs/promises';

export type WorkspaceFileProblem = 'missing' | 'not a regular file' | 'too large' | 'unreadable';

export class WorkspaceFileError extends Error {
  constructor(
    readonly file: string,
    readonly problem: WorkspaceFileProblem,
    detail: string,
  ) {
    super(`${file}: ${detail}`);
  }
}

const FLAGS = constants.O_RDONLY | constants.O_NONBLOCK;

function opened(file: string, err: unknown): WorkspaceFileError {
  const code = (err as NodeJS.ErrnoException)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR'
    ? new WorkspaceFileError(file, 'missing', 'no such file')
    : new WorkspaceFileError(file, 'unreadable', `cannot be opened (${code ?? String(err)})`);
}

function check(file: string, info: { isFile(): boolean; size: number }, maxBytes: number): void {
  if (!info.isFile()) throw new WorkspaceFileError(file, 'not a regular file', 'not a regular file: not read');
  if (info.size > maxBytes)
    throw new WorkspaceFileError(file, 'too large', `${info.size} bytes, over the ${maxBytes}-byte limit: not read`);
}

/** A file's bytes as read, in chunks of at most 1 MiB, refused once they pass maxBytes (a file that grows while
 * it is read). */
class Chunks {
  private readonly parts: Buffer[] = [];
  private total = 0;

  constructor(
    private readonly file: string,
    private readonly maxBytes: number,
  ) {}

  /** A buffer for the next read: one byte past the limit at most, so that passing it is seen. */
  next(): Buffer {
    return Buffer.allocUnsafe(Math.min(1 << 20, this.maxBytes + 1 - this.total));
  }

  /** Keeps the first n bytes of chunk; false at the end of the file (n = 0). */
  add(chunk: Buffer, n: number): boolean {
    if (n === 0) return false;
    this.parts.push(chunk.subarray(0, n));
    this.total += n;
    if (this.total > this.maxBytes)
      throw new WorkspaceFileError(this.file, 'too large', `over the ${this.maxBytes}-byte limit: not read`);
    return true;
  }

  bytes(): Buffer {
    return Buffer.concat(this.parts, this.total);
  }
}

/** The file's bytes: a regular file of at most `maxBytes` (one that grows past it while read is refused too). */
export function readWorkspaceBytesSync(file: string, maxBytes: number): Buffer {
  let fd: number;
  try {
    fd = openSync(file, FLAGS);
  } catch (err) {
    throw opened(file, err);
  }
  try {
    check(file, fstatSync(fd), maxBytes);
    const chunks = new Chunks(file, maxBytes);
    for (;;) {
      const chunk = chunks.next();
      if (!chunks.add(chunk, readSync(fd, chunk, 0, chunk.length, null))) return chunks.bytes();
    }
  } finally {
    closeSync(fd);
  }
}

export function readWorkspaceFileSync(file: string, maxBytes: number): string {
  return readWorkspaceBytesSync(file, maxBytes).toString('utf8');
}

/** As readWorkspaceBytesSync, off the calling thread: a FIFO or a device never holds a read. */
export async function readWorkspaceBytes(file: string, maxBytes: number): Promise<Buffer> {
  let handle;
  try {
    handle = await open(file, FLAGS);
  } catch (err) {
    throw opened(file, err);
  }
  try {
    check(file, await handle.stat(), maxBytes);
    const chunks = new Chunks(file, maxBytes);
    for (;;) {
      const chunk = chunks.next();
      if (!chunks.add(chunk, (await handle.read(chunk, 0, chunk.length, null)).bytesRead)) return chunks.bytes();
    }
  } finally {
    await handle.close();
  }
}

export async function readWorkspaceFile(file: string, maxBytes: number): Promise<string> {
  return (await readWorkspaceBytes(file, maxBytes)).toString('utf8');
}

/** Size limits of what QAT Studio reads from a workspace, by kind of file. */
export const LIMITS = {
  /** A *.qat.yaml config (the examples' are 1-2 KB). */
  config: 2 * 1024 * 1024,
  /** out/qat-runs.json and a kept run result. */
  runs: 64 * 1024 * 1024,
  /** A *.qatgraph.json graph export or a build/deploy report. */
  graph: 256 * 1024 * 1024,
  report: 16 * 1024 * 1024,
} as const;
