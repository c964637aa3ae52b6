// Starts the language server (server/) over IPC for Python scripts and QAT config YAML.
import * as vscode from 'vscode';
import {
  LanguageClient,
  TransportKind,
  type LanguageClientOptions,
  type ServerOptions,
} from 'vscode-languageclient/node';

export function createLanguageClient(context: vscode.ExtensionContext, log: vscode.LogOutputChannel): LanguageClient {
  const module = vscode.Uri.joinPath(context.extensionUri, 'out', 'server', 'server.js').fsPath;
  const serverOptions: ServerOptions = {
    run: { module, transport: TransportKind.ipc },
    debug: { module, transport: TransportKind.ipc, options: { execArgv: ['--nolazy', '--inspect=6019'] } },
  };
  const watcher = vscode.workspace.createFileSystemWatcher('**/*.qatgraph.json');
  context.subscriptions.push(watcher);
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: 'file', language: 'python' },
      { scheme: 'file', language: 'yaml' },
      { scheme: 'untitled', language: 'python' },
      { scheme: 'untitled', language: 'yaml' },
    ],
    outputChannel: log,
    // Graphs the kernel exports give the server the model's module names (completion, QCFG015).
    synchronize: { fileEvents: watcher },
  };
  return new LanguageClient('qatStudio', 'QAT Studio Language Server', serverOptions, clientOptions);
}
