// Language server entry: wires the connection to the services. Never imports torch or runs user code.
import { CodeActionKind, createConnection, ProposedFeatures, TextDocuments, TextDocumentSyncKind } from 'vscode-languageserver/node';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { DiagnosticsHandler } from './handlers/diagnostics';
import { registerFeatures } from './handlers/features';
import { SettingsHandler } from './handlers/settings';

const connection = createConnection(ProposedFeatures.all);
const documents = new TextDocuments(TextDocument);
const settings = new SettingsHandler(connection, () => diagnostics.refreshAll());
const diagnostics = new DiagnosticsHandler(connection, documents, () => settings.current);
registerFeatures(connection, documents, () => settings.current);

connection.onInitialize((params) => {
  settings.initialize(params);
  return {
    capabilities: {
      textDocumentSync: TextDocumentSyncKind.Incremental,
      completionProvider: { triggerCharacters: [':', ' '] },
      hoverProvider: true,
      documentSymbolProvider: true,
      codeActionProvider: { codeActionKinds: [CodeActionKind.QuickFix] },
    },
    serverInfo: { name: 'qat-studio', version: '0.1.0' },
  };
});
connection.onInitialized(() => void settings.initialized());
connection.onShutdown(() => diagnostics.dispose());

documents.listen(connection);
connection.listen();
