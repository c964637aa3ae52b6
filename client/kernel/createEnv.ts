// Creates the kernel's virtual environment: `python -m venv DIR`, then `pip install -r REQUIREMENTS` with the
// user's extra pip arguments (a local index, --find-links, --no-index), each output line to `onLine`, stoppable
// with an AbortSignal. A failed or stopped run removes the half-made environment. Free of the vscode module.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';

export interface CreateEnvOptions {
  /** The Python that makes the environment (3.10 or newer). */
  basePython: string;
  /** The environment's folder; it must not exist yet, or be an environment QAT Studio may replace. */
  dir: string;
  requirements: string;
  /** Extra pip arguments, e.g. ['--no-index', '--find-links', '/wheels'] or ['--index-url', URL]. */
  pipArgs?: string[];
  onLine?: (line: string) => void;
  /** 0..1 as pip reports collecting and installing packages. */
  onProgress?: (fraction: number, message: string) => void;
  signal?: AbortSignal;
}

export class CreateEnvError extends Error {
  constructor(
    message: string,
    readonly cancelled = false,
  ) {
    super(message);
  }
}

export function venvPython(dir: string): string {
  return process.platform === 'win32' ? path.join(dir, 'Scripts', 'python.exe') : path.join(dir, 'bin', 'python');
}

/** Package names of a requirements file (for progress), without comments, options and markers. */
export function requirementNames(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((l) => l.replace(/#.*/, '').trim())
    .filter((l) => l && !l.startsWith('-'))
    .map((l) => l.split(/[<>=!~;[ ]/)[0].toLowerCase());
}

function run(cmd: string, args: string[], o: CreateEnvOptions, onLine: (l: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    if (o.signal?.aborted) return reject(new CreateEnvError('Cancelled.', true));
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PIP_NO_INPUT: '1' } });
    const tail: string[] = [];
    const feed = (buf: { rest: string }) => (chunk: Buffer) => {
      const lines = (buf.rest + chunk.toString()).split(/\r?\n/);
      buf.rest = lines.pop() ?? '';
      for (const l of lines) {
        tail.push(l);
        if (tail.length > 20) tail.shift();
        onLine(l);
      }
    };
    child.stdout.on('data', feed({ rest: '' }));
    child.stderr.on('data', feed({ rest: '' }));
    const abort = () => child.kill('SIGTERM');
    o.signal?.addEventListener('abort', abort);
    child.on('error', (err) => reject(new CreateEnvError(`${cmd} could not start: ${err.message}`)));
    child.on('close', (code) => {
      o.signal?.removeEventListener('abort', abort);
      if (o.signal?.aborted) reject(new CreateEnvError('Cancelled.', true));
      else if (code === 0) resolve();
      else
        reject(
          new CreateEnvError(
            `${path.basename(cmd)} ${args.slice(0, 3).join(' ')} failed (exit ${code}):\n${tail
              .filter((l) => l.trim())
              .slice(-6)
              .join('\n')}`,
          ),
        );
    });
  });
}

/** Makes the environment and returns its Python. */
export async function createKernelEnv(o: CreateEnvOptions): Promise<string> {
  const log = o.onLine ?? (() => undefined);
  if (!existsSync(o.requirements)) throw new CreateEnvError(`No requirements file at ${o.requirements}.`);
  if (existsSync(o.dir) && !existsSync(path.join(o.dir, 'pyvenv.cfg')))
    throw new CreateEnvError(`${o.dir} exists and is not a virtual environment: choose another folder.`);
  const { readFile } = await import('node:fs/promises');
  const names = requirementNames(await readFile(o.requirements, 'utf8'));
  try {
    o.onProgress?.(0, 'creating the virtual environment');
    await run(o.basePython, ['-m', 'venv', '--clear', o.dir], o, log);
    const python = venvPython(o.dir);
    const seen = new Set<string>();
    const onLine = (l: string) => {
      log(l);
      const m = /^(Collecting|Processing|Requirement already satisfied:)\s+([A-Za-z0-9_.-]+)/.exec(l);
      const name = m?.[2]
        ?.toLowerCase()
        .replace(/-[0-9].*\.whl$/, '')
        .split(/[<>=!~]/)[0];
      if (name && names.includes(name) && !seen.has(name)) {
        seen.add(name);
        o.onProgress?.(0.1 + (0.8 * seen.size) / names.length, `${m![1].replace(':', '')} ${name}`);
      }
      if (/^Installing collected packages/.test(l)) o.onProgress?.(0.9, 'installing');
    };
    await run(
      python,
      ['-m', 'pip', 'install', '--disable-pip-version-check', '-r', o.requirements, ...(o.pipArgs ?? [])],
      o,
      onLine,
    );
    o.onProgress?.(1, 'done');
    return python;
  } catch (err) {
    await rm(o.dir, { recursive: true, force: true }).catch(() => undefined);
    throw err;
  }
}
