// The long-lived Python helper kernel: one child process speaking JSON-RPC over stdio.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import * as vscode from 'vscode';
import {
  CancellationTokenSource,
  createMessageConnection,
  ResponseError,
  StreamMessageReader,
  StreamMessageWriter,
  type MessageConnection,
} from 'vscode-jsonrpc/node';
import {
  KernelNotifications,
  type KernelErrorData,
  type KernelMethod,
  type KernelMethods,
  type LogParams,
  type ProgressParams,
} from '../../protocol/kernel';
import { resolveInterpreter, type Interpreter } from './interpreter';

export class KernelError extends Error {
  constructor(
    message: string,
    readonly code: number,
    readonly data?: KernelErrorData,
  ) {
    super(message);
  }
}

export type KernelState = 'stopped' | 'idle' | 'busy';

export class Kernel implements vscode.Disposable {
  private proc?: ChildProcess;
  private connection?: MessageConnection;
  private starting?: Promise<MessageConnection>;
  private progressListeners = new Map<string | number, (p: ProgressParams) => void>();
  private nextToken = 1;
  interpreter?: Interpreter;
  private readonly exited = new vscode.EventEmitter<{ code: number | null; expected: boolean }>();
  readonly onDidExit = this.exited.event;
  private inFlight = 0;
  private readonly stateChanged = new vscode.EventEmitter<KernelState>();
  /** Fires when the kernel starts, stops, or begins or finishes a request. */
  readonly onDidChangeState = this.stateChanged.event;

  constructor(
    private extensionPath: string,
    private log: vscode.LogOutputChannel,
  ) {}

  private start(): Promise<MessageConnection> {
    if (this.connection) return Promise.resolve(this.connection);
    this.starting ??= this.spawn().finally(() => (this.starting = undefined));
    return this.starting;
  }

  private async spawn(): Promise<MessageConnection> {
    if (!vscode.workspace.isTrusted)
      throw new KernelError('QAT Studio does not run Python in an untrusted workspace.', -32603);
    const interpreter = (this.interpreter = await resolveInterpreter());
    const helpers = path.join(this.extensionPath, 'python-helpers');
    this.log.info(`starting kernel: ${interpreter.path} -m qat_kernel (interpreter from ${interpreter.source})`);
    const proc = spawn(interpreter.path, ['-m', 'qat_kernel'], {
      cwd: helpers,
      env: {
        ...process.env,
        PYTHONPATH: helpers,
        PYTHONUNBUFFERED: '1',
        QAT_STUDIO_PROTOCOL_DIR: path.join(this.extensionPath, 'protocol'),
        ...workspaceLimit(),
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const spawned = new Promise<void>((resolve, reject) => {
      proc.once('spawn', resolve);
      proc.once('error', (err) =>
        reject(
          new KernelError(
            `Cannot start the Python kernel with '${interpreter.path}': ${err.message}. Set qatStudio.pythonPath to a Python 3.10+ interpreter.`,
            -32603,
          ),
        ),
      );
    });
    proc.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      for (const line of chunk.split('\n')) if (line.trim()) this.log.info(`[kernel] ${line}`);
    });
    const connection = createMessageConnection(
      new StreamMessageReader(proc.stdout!),
      new StreamMessageWriter(proc.stdin!),
    );
    connection.onNotification(KernelNotifications.progress, (p: ProgressParams) =>
      this.progressListeners.get(p.token)?.(p),
    );
    connection.onNotification(KernelNotifications.log, (p: LogParams) =>
      this.log[p.level === 'warning' ? 'warn' : p.level](`[kernel] ${p.message}`),
    );
    proc.once('exit', (code, signal) => {
      const expected = this.proc !== proc;
      if (!expected) {
        this.log.error(`kernel exited (code ${code}, signal ${signal})`);
        this.connection = undefined;
        this.proc = undefined;
      }
      connection.dispose();
      this.exited.fire({ code, expected });
      this.stateChanged.fire(this.state);
    });
    connection.listen();
    await spawned;
    this.proc = proc;
    this.connection = connection;
    this.stateChanged.fire(this.state);
    return connection;
  }

  async request<M extends KernelMethod>(
    method: M,
    params: KernelMethods[M]['params'],
    options: { token?: vscode.CancellationToken; onProgress?: (p: ProgressParams) => void } = {},
  ): Promise<KernelMethods[M]['result']> {
    const connection = await this.start();
    const progressToken = `p${this.nextToken++}`;
    if (options.onProgress) this.progressListeners.set(progressToken, options.onProgress);
    const cts = new CancellationTokenSource();
    const sub = options.token?.onCancellationRequested(() => cts.cancel());
    let exitSub: vscode.Disposable | undefined;
    const died = new Promise<never>((_, reject) => {
      exitSub = this.onDidExit(({ expected }) =>
        reject(
          new KernelError(
            expected ? 'The kernel was stopped.' : 'The kernel process died. Run "QAT: Restart Kernel" or try again.',
            -32603,
          ),
        ),
      );
    });
    this.inFlight++;
    this.stateChanged.fire(this.state);
    try {
      const withToken = options.onProgress ? { ...params, progressToken } : params;
      return (await Promise.race([
        connection.sendRequest(method, withToken, cts.token),
        died,
      ])) as KernelMethods[M]['result'];
    } catch (err) {
      if (err instanceof ResponseError)
        throw new KernelError(err.message, err.code, err.data as KernelErrorData | undefined);
      throw err;
    } finally {
      sub?.dispose();
      exitSub?.dispose();
      cts.dispose();
      this.progressListeners.delete(progressToken);
      this.inFlight--;
      this.stateChanged.fire(this.state);
    }
  }

  get state(): KernelState {
    return !this.proc ? 'stopped' : this.inFlight > 0 ? 'busy' : 'idle';
  }

  stop(): void {
    const proc = this.proc;
    this.proc = undefined;
    this.connection = undefined;
    proc?.kill();
    this.stateChanged.fire(this.state);
  }

  dispose(): void {
    this.stop();
    this.exited.dispose();
    this.stateChanged.dispose();
  }
}

/** The folders the kernel may import user code from and write into (QAT_STUDIO_WORKSPACE, read by the kernel's
 * pipeline/config.py), unless the machine setting lifts the limit. */
function workspaceLimit(): Record<string, string> {
  const allowed = vscode.workspace.getConfiguration('qatStudio').inspect<boolean>('kernel.allowPathsOutsideWorkspace');
  // Only the user's (machine) value counts, never one a workspace sets.
  if (allowed?.globalValue === true) return {};
  const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
  return folders.length ? { QAT_STUDIO_WORKSPACE: JSON.stringify(folders) } : {};
}
