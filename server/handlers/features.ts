// Completion, hover, document symbols and code actions: look up the document, call the service, and
// never let a service error escape to the client (it answers empty instead).
import type { Connection, TextDocuments } from 'vscode-languageserver/node';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { codeActionsFor } from '../services/codeActions';
import { isQatConfig } from '../services/configDiagnostics';
import { modelIndex } from '../services/modelIndex';
import type { Settings } from '../services/settings';
import { yamlCompletion } from '../services/yamlCompletion';
import { yamlHover } from '../services/yamlHover';
import { pythonHover } from '../services/pythonHover';
import { findingHover, mergeHovers } from '../services/findingHover';
import { configTokens, pythonTokens } from '../services/semanticTokens';
import { yamlSymbols } from '../services/yamlSymbols';

export function registerFeatures(
  connection: Connection,
  documents: TextDocuments<TextDocument>,
  settings: () => Settings,
): void {
  const config = (uri: string) => {
    const doc = documents.get(uri);
    return doc && doc.languageId === 'yaml' && isQatConfig(doc.uri, doc.getText()) ? doc : undefined;
  };
  const safe = <T>(what: string, fallback: T, run: () => T): T => {
    try {
      return run();
    } catch (err) {
      connection.console.error(`${what} failed: ${(err as Error).stack ?? err}`);
      return fallback;
    }
  };

  connection.onCompletion((p) => {
    const doc = config(p.textDocument.uri);
    return doc ? safe('completion', null, () => yamlCompletion(doc, p.position, modelIndex.forConfig(doc.uri))) : null;
  });
  const openText = (uri: string) => documents.get(uri)?.getText();
  connection.onHover((p) => {
    const doc = config(p.textDocument.uri);
    if (doc) return safe('hover', null, () => yamlHover(doc, p.position, modelIndex.forConfig(doc.uri)));
    const py = documents.get(p.textDocument.uri);
    if (py?.languageId !== 'python') return null;
    return safe('hover', null, () =>
      mergeHovers(findingHover(py, p.position, settings()), pythonHover(py, p.position, openText)),
    );
  });
  connection.languages.semanticTokens.on((p) => {
    const doc = documents.get(p.textDocument.uri);
    if (!doc) return { data: [] };
    if (doc.languageId === 'python') return safe('semantic tokens', { data: [] }, () => pythonTokens(doc, openText));
    const cfg = config(doc.uri);
    return cfg
      ? safe('semantic tokens', { data: [] }, () => configTokens(cfg, modelIndex.forConfig(cfg.uri)))
      : { data: [] };
  });
  connection.onDocumentSymbol((p) => {
    const doc = config(p.textDocument.uri);
    return doc ? safe('symbols', [], () => yamlSymbols(doc)) : [];
  });
  connection.onCodeAction((p) => {
    const doc = documents.get(p.textDocument.uri);
    return doc ? safe('code actions', [], () => codeActionsFor(doc, p.range, settings())) : [];
  });
}
