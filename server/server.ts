// Language server entry: wires the connection to the services. Never imports torch or runs user code.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  CodeActionKind,
  createConnection,
  FileChangeType,
  ProposedFeatures,
  TextDocuments,
  TextDocumentSyncKind,
} from 'vscode-languageserver/node';
import { DiagnosticsHandler } from './handlers/diagnostics';
import { registerFeatures } from './handlers/features';
import { SettingsHandler } from './handlers/settings';
import { clampedTextDocument } from './services/documentSync';
import { GraphLoader } from './services/graphLoader';
import { modelIndex } from './services/modelIndex';
import { semanticLegend } from './services/semanticTokens';
import { setWorkspaceFolders } from './services/workspaceFolders';

const connection = createConnection(ProposedFeatures.all);
let canWatchFolders = false;
const documents = new TextDocuments(clampedTextDocument);
const settings = new SettingsHandler(connection, () => diagnostics.refreshAll());
const diagnostics = new DiagnosticsHandler(connection, documents, () => settings.current, settings.ready);
registerFeatures(connection, documents, () => settings.current);
// Big exported graphs are indexed in a worker (out/server/graphWorker.js, beside this bundle); when one is in,
// open documents are checked again against it.
const graphLoader = new GraphLoader(path.join(__dirname, 'graphWorker.js'));
modelIndex.readBigGraphsWith(graphLoader, () => {
  diagnostics.refreshAll();
  connection.languages.semanticTokens.refresh().catch(() => undefined);
});

connection.onInitialize((params) => {
  settings.initialize(params);
  setWorkspaceFolders(params.workspaceFolders?.map((f) => f.uri) ?? (params.rootUri ? [params.rootUri] : []));
  canWatchFolders = !!params.capabilities.workspace?.workspaceFolders;
  return {
    capabilities: {
      textDocumentSync: TextDocumentSyncKind.Incremental,
      completionProvider: { triggerCharacters: [':', ' '] },
      hoverProvider: true,
      documentSymbolProvider: true,
      semanticTokensProvider: { legend: semanticLegend, full: true },
      codeActionProvider: { codeActionKinds: [CodeActionKind.QuickFix] },
      workspace: { workspaceFolders: { supported: true, changeNotifications: true } },
    },
    serverInfo: { name: 'qat-studio', version: '0.1.0' },
  };
});
connection.onInitialized(() => {
  void settings.initialized();
  if (canWatchFolders)
    connection.workspace.onDidChangeWorkspaceFolders(async () => {
      const folders = await connection.workspace.getWorkspaceFolders().catch(() => null);
      setWorkspaceFolders(folders?.map((f) => f.uri) ?? []);
      diagnostics.refreshAll();
    });
});
// The client watches **/*.qatgraph.json (written by the kernel's graph/export): module names for configs.
connection.onDidChangeWatchedFiles(({ changes }) => {
  for (const change of changes) {
    let file: string;
    try {
      file = fileURLToPath(change.uri);
    } catch {
      continue;
    }
    if (change.type === FileChangeType.Deleted) modelIndex.remove(file);
    else modelIndex.add(file);
  }
  diagnostics.refreshAll();
  // Clients without refresh support reject; they ask again on the next edit anyway.
  connection.languages.semanticTokens.refresh().catch(() => undefined);
});
connection.onShutdown(() => {
  diagnostics.dispose();
  graphLoader.dispose();
});

documents.listen(connection);
connection.listen();
