// A minimal LSP client for the benchmarks: a server as a child process over stdio, publishDiagnostics waited
// for by predicate, timed opens and edits, requests with a deadline.
import { spawn, type ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import {
  createMessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
  type MessageConnection,
} from 'vscode-jsonrpc/node';

export const TIMEOUT_MS = Number(process.env.QAT_BENCH_LSP_TIMEOUT_MS ?? 30_000);

export interface Diagnostic {
  range: { start: { line: number; character: number } };
  message: string;
  code?: string | number;
  source?: string;
}
export interface Published {
  uri: string;
  version?: number;
  diagnostics: Diagnostic[];
  at: number;
}
interface Waiter {
  uri: string;
  match: (p: Published) => boolean;
  resolve: (p: Published) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
}

export class LspClient {
  private conn: MessageConnection;
  private waiters: Waiter[] = [];
  private stderrTail = '';
  private exitReason?: string;
  /** Publishes no waiter asked for (a stale or extra publish), per uri. */
  readonly unmatched = new Map<string, number>();
  /** Error messages the server logged (window/logMessage type 1): a rule or service that threw. */
  readonly logErrors: string[] = [];
  private configured!: () => void;
  readonly firstConfigRequest = new Promise<void>((resolve) => {
    this.configured = resolve;
  });

  private constructor(
    readonly name: string,
    private proc: ChildProcess,
    settings: (section: string) => unknown,
  ) {
    proc.stderr!.on('data', (d: Buffer) => {
      this.stderrTail = (this.stderrTail + d.toString()).slice(-4000);
    });
    proc.on('exit', (code, signal) => {
      this.exitReason = `${name} exited (code ${code}, signal ${signal})${this.stderrTail ? `: ${this.stderrTail.trim()}` : ''}`;
      for (const w of this.waiters.splice(0)) {
        clearTimeout(w.timer);
        w.reject(new Error(this.exitReason));
      }
    });
    proc.on('error', (err) => {
      this.exitReason = `${name}: ${err.message}`;
    });
    this.conn = createMessageConnection(new StreamMessageReader(proc.stdout!), new StreamMessageWriter(proc.stdin!));
    this.conn.onNotification('textDocument/publishDiagnostics', (p: Omit<Published, 'at'>) => {
      const published = { ...p, at: performance.now() };
      const i = this.waiters.findIndex((w) => w.uri === p.uri && w.match(published));
      if (i < 0) {
        this.unmatched.set(p.uri, (this.unmatched.get(p.uri) ?? 0) + 1);
        return;
      }
      const [w] = this.waiters.splice(i, 1);
      clearTimeout(w.timer);
      w.resolve(published);
    });
    this.conn.onNotification('window/logMessage', (p: { type: number; message: string }) => {
      if (p.type === 1) this.logErrors.push(p.message);
    });
    this.conn.onRequest('workspace/configuration', (params: { items: Array<{ section?: string }> }) => {
      const answer = params.items.map((item) => settings(item.section ?? '') ?? null);
      queueMicrotask(() => this.configured());
      return answer;
    });
    // Anything else the servers ask (registrations, progress) is acknowledged with null.
    this.conn.onRequest((_method: string) => null);
    this.conn.onNotification(() => undefined);
    this.conn.onError(([err]) => {
      if (!this.exitReason) this.exitReason = `${name}: ${err.message}`;
    });
    this.conn.listen();
  }

  static async start(
    name: string,
    args: string[],
    settings: (section: string) => unknown,
    rootUri: string,
  ): Promise<LspClient> {
    const proc = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const client = new LspClient(name, proc, settings);
    const capabilities = {
      workspace: { configuration: true, didChangeConfiguration: { dynamicRegistration: false } },
      textDocument: { synchronization: { dynamicRegistration: false }, publishDiagnostics: { versionSupport: true } },
    };
    await client.within(
      client.conn.sendRequest('initialize', {
        processId: process.pid,
        rootUri,
        workspaceFolders: [{ uri: rootUri, name: 'bench' }],
        capabilities,
      }),
      'initialize',
    );
    await client.conn.sendNotification('initialized', {});
    // Both servers pull their settings right after `initialized`; open documents only once that is answered.
    await client.within(client.firstConfigRequest, 'workspace/configuration request after initialized');
    return client;
  }

  private within<T>(p: Promise<T>, what: string, ms = TIMEOUT_MS): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const t = setTimeout(
        () =>
          reject(
            new Error(`${this.name}: no ${what} within ${ms} ms${this.exitReason ? ` (${this.exitReason})` : ''}`),
          ),
        ms,
      );
      p.then(
        (v) => {
          clearTimeout(t);
          resolve(v);
        },
        (e) => {
          clearTimeout(t);
          reject(e);
        },
      );
    });
  }

  /** The next publishDiagnostics for `uri` that `match` accepts. Register before sending what causes it. */
  waitFor(uri: string, match: (p: Published) => boolean, what: string, ms = TIMEOUT_MS): Promise<Published> {
    if (this.exitReason) return Promise.reject(new Error(this.exitReason));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w.timer !== timer);
        reject(
          new Error(
            `${this.name}: no publishDiagnostics (${what}) for ${uri} within ${ms} ms${this.exitReason ? ` (${this.exitReason})` : ''}`,
          ),
        );
      }, ms);
      this.waiters.push({ uri, match, resolve, reject, timer });
    });
  }

  /** Opens a document; resolves with the time to its first publish that `match` accepts. */
  async open(
    uri: string,
    languageId: string,
    text: string,
    match: (p: Published) => boolean = () => true,
  ): Promise<{ ms: number; published: Published }> {
    const published = this.waitFor(uri, match, 'after didOpen');
    const start = performance.now();
    await this.conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId, version: 1, text } });
    const p = await published;
    return { ms: p.at - start, published: p };
  }

  /** A one-range edit; resolves with the time until the publish that `match` accepts. */
  async change(
    uri: string,
    version: number,
    line: number,
    character: number,
    oldLength: number,
    text: string,
    match: (p: Published) => boolean,
  ): Promise<{ ms: number; published: Published }> {
    const published = this.waitFor(uri, match, `version ${version}`);
    const start = performance.now();
    await this.conn.sendNotification('textDocument/didChange', {
      textDocument: { uri, version },
      contentChanges: [
        { range: { start: { line, character }, end: { line, character: character + oldLength } }, text },
      ],
    });
    const p = await published;
    return { ms: p.at - start, published: p };
  }

  /** A request with a deadline; resolves with its result and how long the answer took. */
  async request<T>(method: string, params: unknown, ms = TIMEOUT_MS): Promise<{ result: T; ms: number }> {
    if (this.exitReason) throw new Error(this.exitReason);
    const start = performance.now();
    const result = await this.within(this.conn.sendRequest<T>(method, params), `${method} response`, ms);
    return { result, ms: performance.now() - start };
  }

  async notify(method: string, params: unknown): Promise<void> {
    await this.conn.sendNotification(method, params);
  }

  /** The server's process id (for its memory). */
  get pid(): number {
    return this.proc.pid!;
  }

  async close(uri: string): Promise<void> {
    await this.conn.sendNotification('textDocument/didClose', { textDocument: { uri } });
  }

  /** For process exit: no time left for a polite shutdown. */
  kill(): void {
    if (this.proc.exitCode === null && this.proc.signalCode === null) this.proc.kill('SIGKILL');
  }

  /** shutdown + exit, then SIGKILL whatever is still running. */
  async stop(): Promise<void> {
    for (const w of this.waiters.splice(0)) {
      clearTimeout(w.timer);
      w.reject(new Error(`${this.name} stopped`));
    }
    if (!this.exitReason) {
      const exited = new Promise<void>((resolve) => this.proc.once('exit', () => resolve()));
      try {
        await this.within(this.conn.sendRequest('shutdown'), 'shutdown response', 5000);
        await this.conn.sendNotification('exit');
        await this.within(exited, 'exit', 5000);
      } catch {
        // Killed below.
      }
    }
    this.conn.dispose();
    if (this.proc.exitCode === null && this.proc.signalCode === null) this.proc.kill('SIGKILL');
  }
}
