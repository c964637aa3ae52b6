// Publishes diagnostics when a document opens or changes (debounced per document) and clears them on close.
import type { Connection, TextDocuments } from 'vscode-languageserver/node';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { diagnosticsFor, forgetDocument } from '../services/diagnostics';
import type { Settings } from '../services/settings';

// Short: typing bursts still coalesce (keys come ~100 ms apart), and the 50 ms republish goal leaves room for the rules.
const DEBOUNCE_MS = 10;

export class DiagnosticsHandler {
  private timers = new Map<string, NodeJS.Timeout>();

  constructor(
    private connection: Connection,
    private documents: TextDocuments<TextDocument>,
    private settings: () => Settings,
  ) {
    documents.onDidChangeContent((e) => this.schedule(e.document));
    documents.onDidClose((e) => {
      this.cancel(e.document.uri);
      forgetDocument(e.document.uri);
      void connection.sendDiagnostics({ uri: e.document.uri, diagnostics: [] });
    });
  }

  /** Settings changed: every open document again. */
  refreshAll(): void {
    for (const doc of this.documents.all()) this.schedule(doc);
  }

  private schedule(doc: TextDocument): void {
    this.cancel(doc.uri);
    this.timers.set(
      doc.uri,
      setTimeout(() => this.publish(doc), DEBOUNCE_MS),
    );
  }

  private cancel(uri: string): void {
    clearTimeout(this.timers.get(uri));
    this.timers.delete(uri);
  }

  private publish(doc: TextDocument): void {
    this.cancel(doc.uri);
    let diagnostics;
    try {
      diagnostics = diagnosticsFor(doc, this.settings());
    } catch (err) {
      // A rule bug must not take the server down while the user types; report it and go on.
      this.connection.console.error(`diagnostics failed for ${doc.uri}: ${(err as Error).stack ?? err}`);
      return;
    }
    void this.connection.sendDiagnostics({ uri: doc.uri, version: doc.version, diagnostics });
  }

  dispose(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }
}
