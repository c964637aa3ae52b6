// Completion, hover, document symbols and code actions: look up the document, call the service, and
// never let a service error escape to the client (it answers empty instead).
import type { Connection, TextDocuments } from 'vscode-languageserver/node';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { codeActionsFor } from '../services/codeActions';
import { isQatConfig, parsedConfigSteps } from '../services/configDiagnostics';
import { modelIndex } from '../services/modelIndex';
import type { Settings } from '../services/settings';
import { yamlCompletion } from '../services/yamlCompletion';
import { yamlHover } from '../services/yamlHover';
import { pythonHover } from '../services/pythonHover';
import { findingHover, mergeHovers } from '../services/findingHover';
import { configTokens, pythonTokens } from '../services/semanticTokens';
import { prepareScriptConfig } from '../services/scriptConfig';
import { yamlSymbols } from '../services/yamlSymbols';
import { runSliced } from '../util/slices';

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
  // Hover and semantic tokens first parse what they read from configs in slices (other requests are answered
  // meanwhile); the services then find the parse cached.
  const prepared = async (doc: TextDocument) => {
    try {
      if (doc.languageId === 'python') await prepareScriptConfig(doc.uri, openText);
      else await runSliced(parsedConfigSteps(doc.uri, doc.getText()), () => false);
    } catch (err) {
      connection.console.error(`reading configs failed: ${(err as Error).stack ?? err}`);
    }
  };
  connection.onHover(async (p) => {
    const doc = config(p.textDocument.uri);
    const py = doc ? undefined : documents.get(p.textDocument.uri);
    if (!doc && py?.languageId !== 'python') return null;
    await prepared((doc ?? py)!);
    if (doc) return safe('hover', null, () => yamlHover(doc, p.position, modelIndex.forConfig(doc.uri)));
    return safe('hover', null, () =>
      mergeHovers(findingHover(py!, p.position, settings()), pythonHover(py!, p.position, openText)),
    );
  });
  connection.languages.semanticTokens.on(async (p) => {
    const doc = documents.get(p.textDocument.uri);
    if (!doc) return { data: [] };
    const cfg = doc.languageId === 'python' ? undefined : config(doc.uri);
    if (doc.languageId !== 'python' && !cfg) return { data: [] };
    await prepared(doc);
    if (doc.languageId === 'python') return safe('semantic tokens', { data: [] }, () => pythonTokens(doc, openText));
    return safe('semantic tokens', { data: [] }, () => configTokens(cfg!, modelIndex.forConfig(cfg!.uri)));
  });
  connection.onDocumentSymbol(async (p) => {
    const doc = config(p.textDocument.uri);
    if (!doc) return [];
    await prepared(doc);
    return safe('symbols', [], () => yamlSymbols(doc));
  });
  connection.onCodeAction((p) => {
    const doc = documents.get(p.textDocument.uri);
    return doc ? safe('code actions', [], () => codeActionsFor(doc, p.range, settings())) : [];
  });
}
