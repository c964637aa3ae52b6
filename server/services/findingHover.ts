// Hover over a finding that has more to say than its one-sentence message (Finding.detail, markdown): the
// detail, under the finding's code and message. Merged with the language's own hover by the handler.
import type { Hover, MarkupContent, Position } from 'vscode-languageserver';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { visibleFindings } from './diagnostics';
import { defaultSettings, type Settings } from './settings';

export function findingHover(
  doc: TextDocument,
  position: Position,
  settings: Settings = defaultSettings,
): Hover | null {
  const offset = doc.offsetAt(position);
  const hits = visibleFindings(doc, settings).filter((f) => f.detail && f.start <= offset && offset <= f.end);
  if (!hits.length) return null;
  return {
    contents: {
      kind: 'markdown',
      value: hits.map((f) => `**${f.code}** ${f.message}\n\n${f.detail}`).join('\n\n---\n\n'),
    },
    range: { start: doc.positionAt(hits[0].start), end: doc.positionAt(hits[0].end) },
  };
}

/** Both hovers' markdown in one (either may be missing). */
export function mergeHovers(a: Hover | null, b: Hover | null): Hover | null {
  if (!a || !b) return a ?? b;
  const text = (h: Hover) => (h.contents as MarkupContent).value;
  return { contents: { kind: 'markdown', value: `${text(a)}\n\n---\n\n${text(b)}` }, range: a.range ?? b.range };
}
