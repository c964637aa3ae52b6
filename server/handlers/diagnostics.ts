// Publishes diagnostics when a document opens or changes (debounced per document) and clears them on close.
// A run yields while it analyses and is dropped when a newer edit arrives; huge documents are analysed up to a
// budget (util/budget.ts).
import type { Connection, TextDocuments } from 'vscode-languageserver/node';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { diagnosticsFor, forgetDocument, prepareFindings } from '../services/diagnostics';
import { prepareScriptConfig } from '../services/scriptConfig';
import type { Settings } from '../services/settings';

// Short: typing bursts still coalesce (keys come ~100 ms apart), and the 50 ms republish goal leaves room for the rules.
const DEBOUNCE_MS = 10;

export class DiagnosticsHandler {
  private timers = new Map<string, NodeJS.Timeout>();
  private runs = new Map<string, number>();

  constructor(
    private connection: Connection,
    private documents: TextDocuments<TextDocument>,
    private settings: () => Settings,
    // Nothing is published before the client's settings are known: a code it switched off never flashes up.
    private ready: Promise<void> = Promise.resolve(),
  ) {
    documents.onDidChangeContent((e) => this.schedule(e.document));
    documents.onDidClose((e) => {
      this.cancel(e.document.uri);
      this.runs.delete(e.document.uri);
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
    const timer: NodeJS.Timeout = setTimeout(
      () =>
        void this.ready.then(() => {
          if (this.timers.get(doc.uri) === timer) void this.publish(doc);
        }),
      DEBOUNCE_MS,
    );
    this.timers.set(doc.uri, timer);
  }

  private cancel(uri: string): void {
    this.runs.set(uri, (this.runs.get(uri) ?? 0) + 1);
    clearTimeout(this.timers.get(uri));
    this.timers.delete(uri);
  }

  private async publish(doc: TextDocument): Promise<void> {
    this.cancel(doc.uri);
    const run = (this.runs.get(doc.uri) ?? 0) + 1;
    this.runs.set(doc.uri, run);
    // A newer edit (or a close) makes this run stale: it stops at its next slice and publishes nothing.
    const stale = () => this.runs.get(doc.uri) !== run || this.documents.get(doc.uri) !== doc;
    let diagnostics;
    try {
      // The analysis runs in slices so hover and completion are answered meanwhile, and leaves its results
      // cached for diagnosticsFor below.
      if (!(await prepareFindings(doc, stale))) return;
      if (stale()) return;
      diagnostics = diagnosticsFor(doc, this.settings());
    } catch (err) {
      // A rule bug must not take the server down while the user types; report it and go on.
      this.connection.console.error(`diagnostics failed for ${doc.uri}: ${(err as Error).stack ?? err}`);
      return;
    }
    void this.connection.sendDiagnostics({ uri: doc.uri, version: doc.version, diagnostics });
    // The config beside a script is parsed now, in slices, so the first hover over a module finds it ready.
    if (doc.languageId === 'python')
      await prepareScriptConfig(doc.uri, (uri) => this.documents.get(uri)?.getText()).catch(() => undefined);
  }

  dispose(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }
}
