// Language server entry: wires the connection to the services. Never imports torch or runs user code.
import { createConnection, ProposedFeatures, TextDocuments, TextDocumentSyncKind } from 'vscode-languageserver/node';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { DiagnosticsHandler } from './handlers/diagnostics';

const connection = createConnection(ProposedFeatures.all);
const documents = new TextDocuments(TextDocument);
const diagnostics = new DiagnosticsHandler(connection, documents);

connection.onInitialize(() => ({
  capabilities: { textDocumentSync: TextDocumentSyncKind.Incremental },
  serverInfo: { name: 'qat-studio', version: '0.1.0' },
}));
connection.onShutdown(() => diagnostics.dispose());

documents.listen(connection);
connection.listen();
