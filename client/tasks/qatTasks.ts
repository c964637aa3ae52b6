// Task type `qat`: kernel jobs that users can put in tasks.json. Each runs through the long-lived kernel in a
// pseudoterminal that streams progress; failures print one `qat: error: file:line: message` line for the
// `$qat` problem matcher, then the traceback.
import path from 'node:path';
import * as vscode from 'vscode';
import { KernelErrorCode } from '../../protocol/kernel';
import type { Ctx } from '../ctx';
import { KernelError } from '../kernel/kernel';
import { JOBS, summaryOf, type JobName } from './jobs';
import { jobFigures, TRACKED_JOBS } from '../runs/figures';

export interface QatTaskDefinition extends vscode.TaskDefinition {
  type: 'qat';
  job: JobName;
  /** The config file, relative to the workspace folder. */
  config: string;
  /** build: a preset (x86-64, aarch64, cuda) or the name of one of the config's targets. */
  target?: string;
}

const CRLF = (s: string) => s.replace(/\r?\n/g, '\r\n');

class JobTerminal implements vscode.Pseudoterminal {
  private readonly write = new vscode.EventEmitter<string>();
  private readonly done = new vscode.EventEmitter<number>();
  readonly onDidWrite = this.write.event;
  readonly onDidClose = this.done.event;
  private readonly cts = new vscode.CancellationTokenSource();

  constructor(
    private ctx: Ctx,
    private def: QatTaskDefinition,
    private configPath: string,
  ) {}

  open(): void {
    void this.run();
  }

  close(): void {
    this.cts.cancel();
  }

  private line(text = ''): void {
    this.write.fire(CRLF(text) + '\r\n');
  }

  private async run(): Promise<void> {
    const job = JOBS[this.def.job];
    if (!job) {
      this.line(`qat: error: unknown job '${this.def.job}' (known: ${Object.keys(JOBS).join(', ')})`);
      this.done.fire(2);
      return;
    }
    if (!vscode.workspace.isTrusted) {
      this.line(
        'qat: error: this folder is in Restricted Mode: QAT Studio runs model code only in a trusted workspace (Workspaces: Manage Workspace Trust).',
      );
      this.done.fire(1);
      return;
    }
    this.line(`> ${job.method} ${this.configPath}`);
    try {
      const kind = TRACKED_JOBS[this.def.job];
      const go = async () => {
        const result = await this.ctx.kernel.request(job.method, job.params(this.configPath, this.def) as never, {
          token: this.cts.token,
          onProgress:
            job.progress === false
              ? undefined
              : (p) =>
                  this.line(
                    `[${p.stage}]${p.fraction !== undefined ? ` ${(p.fraction * 100).toFixed(0).padStart(3)}%` : ''} ${p.message}`,
                  ),
        });
        for (const l of summaryOf(result)) this.line(l);
        await job.after?.(this.ctx, result as never, this.configPath);
        const report = job.report?.(result as never);
        if (report) await vscode.commands.executeCommand('markdown.showPreview', vscode.Uri.file(report));
        return result;
      };
      if (kind)
        await this.ctx.trackRun(
          kind,
          this.configPath,
          go,
          (r) => jobFigures(this.def.job, r)!.summary,
          this.def.target,
        );
      else await go();
      this.done.fire(0);
    } catch (err) {
      this.report(err);
      this.done.fire(1);
    }
  }

  private report(err: unknown): void {
    if (err instanceof KernelError && err.code === KernelErrorCode.cancelled) {
      this.line('Cancelled.');
      return;
    }
    const data = err instanceof KernelError ? err.data : undefined;
    const where = data?.location ? `${data.location.file}:${data.location.line}` : `${this.configPath}:1`;
    this.line(`qat: error: ${where}: ${(err as Error).message}${data?.path ? ` (at ${data.path})` : ''}`);
    if (data?.install) this.line(`Install with: ${data.install}`);
    if (data?.traceback) this.line(data.traceback);
  }
}

export class QatTaskProvider implements vscode.TaskProvider {
  static readonly type = 'qat';

  constructor(private ctx: Ctx) {}

  register(): vscode.Disposable {
    return vscode.tasks.registerTaskProvider(QatTaskProvider.type, this);
  }

  async provideTasks(): Promise<vscode.Task[]> {
    const configs = await vscode.workspace.findFiles('**/*.qat.{yaml,yml}', '**/node_modules/**', 50);
    const tasks: vscode.Task[] = [];
    for (const uri of configs) {
      const folder = vscode.workspace.getWorkspaceFolder(uri);
      if (!folder) continue;
      const config = path.relative(folder.uri.fsPath, uri.fsPath);
      for (const job of Object.keys(JOBS) as JobName[]) {
        tasks.push(
          this.makeTask({ type: 'qat', job, config, ...(job === 'build' ? { target: 'x86-64' } : {}) }, folder),
        );
      }
    }
    return tasks;
  }

  resolveTask(task: vscode.Task): vscode.Task | undefined {
    const def = task.definition as QatTaskDefinition;
    if (!def.job || !def.config) return undefined;
    const folder = typeof task.scope === 'object' ? task.scope : vscode.workspace.workspaceFolders?.[0];
    return folder ? this.makeTask(def, folder, task) : undefined;
  }

  makeTask(def: QatTaskDefinition, folder: vscode.WorkspaceFolder, base?: vscode.Task): vscode.Task {
    const configPath = path.resolve(folder.uri.fsPath, def.config);
    const execution = new vscode.CustomExecution(async () => new JobTerminal(this.ctx, def, configPath));
    const task = new vscode.Task(
      def,
      folder,
      base?.name ?? `${def.job}${def.target ? ` ${def.target}` : ''}: ${def.config}`,
      'qat',
      execution,
      base?.problemMatchers ?? ['$qat'],
    );
    task.presentationOptions = {
      reveal: vscode.TaskRevealKind.Always,
      panel: vscode.TaskPanelKind.Dedicated,
      clear: true,
    };
    return task;
  }
}
