// How the server keeps its copies of open documents: vscode-languageserver-textdocument's incremental update, with
// every change's range clamped to the document first. A range past the end (line 1e9), negative or not a number
// would otherwise be written into the document's line table as given, and the next edit never finishes.
import { TextDocument, type Position, type TextDocumentContentChangeEvent } from 'vscode-languageserver-textdocument';

function clampPosition(doc: TextDocument, p: Position): Position {
  const line = Number.isFinite(p?.line) ? p.line : 0;
  const character = Number.isFinite(p?.character) ? p.character : 0;
  if (line >= doc.lineCount) return doc.positionAt(doc.getText().length);
  // offsetAt clamps a character past the line's end and a negative line or character; positionAt maps it back.
  return doc.positionAt(doc.offsetAt({ line: Math.max(0, line), character: Math.max(0, character) }));
}

export function clampChange(doc: TextDocument, change: TextDocumentContentChangeEvent): TextDocumentContentChangeEvent {
  if (!('range' in change) || !change.range) return { text: String(change.text ?? '') };
  const start = clampPosition(doc, change.range.start);
  const end = clampPosition(doc, change.range.end);
  const [a, b] = doc.offsetAt(start) <= doc.offsetAt(end) ? [start, end] : [end, start];
  return { range: { start: a, end: b }, text: String(change.text ?? '') };
}

/** The TextDocuments configuration the server uses: TextDocument's own create and update, ranges clamped. */
export const clampedTextDocument = {
  create: TextDocument.create,
  update(doc: TextDocument, changes: TextDocumentContentChangeEvent[], version: number): TextDocument {
    // Each change's range is in the document as the changes before it left it.
    let current = doc;
    for (const change of changes) current = TextDocument.update(current, [clampChange(current, change)], version);
    return current;
  },
};
