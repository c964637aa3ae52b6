// The history of runs the extension started (train, compare, sensitivity, build, ...): kept in the workspace's
// out/qat-runs.json, written atomically (temp file + rename), so it survives a reload. Free of the vscode module.
import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { LIMITS, readWorkspaceFile } from '../../common/workspaceFile';

export type RunKind =
  'train' | 'compare' | 'sensitivity' | 'search' | 'build' | 'evaluate' | 'convert' | 'export' | 'job' | 'fix';
export type RunStatus = 'running' | 'done' | 'failed' | 'cancelled';

export interface RunRecord {
  id: string;
  kind: RunKind;
  /** The config, as given (absolute path). */
  config: string;
  /** ISO time the run started. */
  started: string;
  seconds?: number;
  status: RunStatus;
  /** Key figures, in the order they are shown: label -> value as text. */
  figures: Array<[string, string]>;
  /** The file that opens the run's results or report, when it has one. */
  report?: string;
  /** What the run was for, e.g. the build target. */
  detail?: string;
  error?: string;
  /** A compare run's per-layer metrics (propagated, and local where measured), for the run comparison. */
  layers?: RunLayer[];
  /** The config's text as the run read it (a fix run: the text before the fix). */
  configText?: string;
  /** The kernel's id of the trained model the run used (its result's `model`; a fix run: the model before it). */
  model?: string;
  /** A fix run: the compare run of the config before the fix, which the fix was suggested from. */
  basedOn?: string;
  /** The file holding the run's whole result, for the runs whose page opens again from the Runs view
   * (sensitivity, search). */
  result?: string;
}

export interface RunLayer {
  module: string;
  cosine: number;
  sqnr: number;
  localCosine?: number;
  localSqnr?: number;
}

export const RUNS_FILE = 'qat-runs.json';
const MAX_RUNS = 200;

function wellFormed(r: unknown): r is RunRecord {
  const x = r as Partial<Record<keyof RunRecord, unknown>> | null;
  return (
    !!x &&
    typeof x === 'object' &&
    typeof x.id === 'string' &&
    typeof x.kind === 'string' &&
    typeof x.config === 'string' &&
    typeof x.status === 'string' &&
    typeof x.started === 'string' &&
    Array.isArray(x.figures) &&
    x.figures.every((f) => Array.isArray(f) && f.length === 2 && f.every((v) => typeof v === 'string'))
  );
}

export class RunStore {
  private runs: RunRecord[] = [];
  private listeners: Array<() => void> = [];
  private writing: Promise<void> = Promise.resolve();

  constructor(readonly file: string) {}

  static forWorkspace(folder: string): RunStore {
    return new RunStore(path.join(folder, 'out', RUNS_FILE));
  }

  /** Reads the file; a missing or unreadable one is an empty history (an unreadable one is kept aside). */
  async load(): Promise<void> {
    let text: string;
    try {
      text = await readWorkspaceFile(this.file, LIMITS.runs);
    } catch {
      this.runs = [];
      return;
    }
    try {
      const data = JSON.parse(text) as { runs?: RunRecord[] };
      // A record written by hand or by another version may lack any field: only well-formed ones are kept.
      this.runs = Array.isArray(data.runs) ? data.runs.filter(wellFormed) : [];
      // A run that was still going when the window closed did not finish.
      for (const r of this.runs) if (r.status === 'running') r.status = 'cancelled';
    } catch {
      await rename(this.file, `${this.file}.unreadable`).catch(() => undefined);
      this.runs = [];
    }
    this.fire();
  }

  onDidChange(listener: () => void): { dispose(): void } {
    this.listeners.push(listener);
    return { dispose: () => (this.listeners = this.listeners.filter((l) => l !== listener)) };
  }

  /** Newest first. */
  list(): RunRecord[] {
    return [...this.runs].sort((a, b) => b.started.localeCompare(a.started));
  }

  get(id: string): RunRecord | undefined {
    return this.runs.find((r) => r.id === id);
  }

  /** Records a run while `work` goes, then its outcome and figures; returns (or throws) what `work` does. */
  async track<T>(
    kind: RunKind,
    config: string,
    work: () => PromiseLike<T>,
    describe: (result: T) => {
      figures: Array<[string, string]>;
      report?: string;
      detail?: string;
      layers?: RunLayer[];
      model?: string;
    },
    options: {
      detail?: string;
      /** What the record holds from the start: the config text, the model, the run it is based on. */
      holds?: Pick<RunRecord, 'configText' | 'model' | 'basedOn'>;
      /** Called with the record as soon as it exists (e.g. to keep its id). */
      onRecord?: (run: RunRecord) => void;
      isCancel?: (err: unknown) => boolean;
      now?: () => Date;
    } = {},
  ): Promise<T> {
    const now = options.now ?? (() => new Date());
    const start = now();
    const run: RunRecord = {
      id: `${start.getTime().toString(36)}-${Math.random().toString(36).slice(2, 8)}`,
      kind,
      config,
      started: start.toISOString(),
      status: 'running',
      figures: [],
      ...(options.detail ? { detail: options.detail } : {}),
      ...Object.fromEntries(Object.entries(options.holds ?? {}).filter(([, v]) => v !== undefined)),
    };
    this.runs.push(run);
    options.onRecord?.(run);
    if (this.runs.length > MAX_RUNS) this.runs.splice(0, this.runs.length - MAX_RUNS);
    await this.save();
    try {
      const result = await work();
      const d = describe(result);
      Object.assign(run, { status: 'done', figures: d.figures }, d.report ? { report: d.report } : {});
      if (d.layers) run.layers = d.layers;
      if (d.detail) run.detail = d.detail;
      if (d.model) run.model = d.model;
      return result;
    } catch (err) {
      run.status = options.isCancel?.(err) ? 'cancelled' : 'failed';
      run.error = (err as Error)?.message ?? String(err);
      throw err;
    } finally {
      run.seconds = Math.round((now().getTime() - start.getTime()) / 100) / 10;
      await this.save();
    }
  }

  /** Keeps `result` beside the history (qat-runs/<id>.json) so the run's page can open again, and records where. */
  async keepResult(run: RunRecord, result: unknown): Promise<void> {
    const file = path.join(path.dirname(this.file), 'qat-runs', `${run.id}.json`);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, JSON.stringify(result));
    run.result = file;
    await this.save();
  }

  /** The result `keepResult` kept for `run`, or undefined when there is none (or it is gone). */
  async readResult<T>(run: RunRecord): Promise<T | undefined> {
    if (!run.result) return undefined;
    try {
      return JSON.parse(await readWorkspaceFile(run.result, LIMITS.runs)) as T;
    } catch {
      return undefined;
    }
  }

  /** Writes the whole history: temp file then rename, one write at a time. */
  save(): Promise<void> {
    this.fire();
    const body = JSON.stringify({ version: 1, runs: this.runs }, null, 1);
    this.writing = this.writing
      .catch(() => undefined)
      .then(async () => {
        await mkdir(path.dirname(this.file), { recursive: true });
        const tmp = `${this.file}.${process.pid}.tmp`;
        await writeFile(tmp, body);
        await rename(tmp, this.file);
      });
    return this.writing;
  }

  private fire(): void {
    for (const l of this.listeners) l();
  }
}
