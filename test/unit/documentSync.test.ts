// The server's document copies under edits whose ranges lie outside the document: clamped, never written as given.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { clampedTextDocument } from '../../server/services/documentSync';

const doc = () => TextDocument.create('file:///w/a.qat.yaml', 'yaml', 1, 'version: 1\nflow: pt2e\n');

test('a change starting past the end appends at the end, and the next edit applies in bounded time', () => {
  const far = { line: 1e9, character: 5 };
  let d = clampedTextDocument.update(doc(), [{ range: { start: far, end: far }, text: 'x' }], 2);
  assert.equal(d.getText(), 'version: 1\nflow: pt2e\nx');
  const t0 = Date.now();
  d = clampedTextDocument.update(
    d,
    [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 7 } }, text: 'v' }],
    3,
  );
  assert.equal(d.getText(), 'v: 1\nflow: pt2e\nx');
  assert.equal(d.lineCount, 3);
  assert.ok(Date.now() - t0 < 1000);
});

test('negative, reversed, non-numeric and past-the-line positions are clamped into the document', () => {
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ start: { line: -4, character: -1 }, end: { line: 0, character: 1 } }, 'Zersion: 1\nflow: pt2e\n'],
    [{ start: { line: 1, character: 4 }, end: { line: 1, character: 0 } }, 'version: 1\nZ: pt2e\n'],
    [{ start: { line: Number.NaN, character: 0 }, end: { line: 0, character: 0 } }, 'Zversion: 1\nflow: pt2e\n'],
    [{ start: { line: 0, character: 500 }, end: { line: 0, character: 900 } }, 'version: 1Z\nflow: pt2e\n'],
    [{ start: { line: 1, character: 0 }, end: { line: 1e12, character: 0 } }, 'version: 1\nZ'],
  ];
  for (const [range, want] of cases) {
    const d = clampedTextDocument.update(doc(), [{ range: range as never, text: 'Z' }], 2);
    assert.equal(d.getText(), want, JSON.stringify(range));
    // The line table agrees with the text.
    assert.equal(d.lineCount, want.split('\n').length);
  }
});

test('several changes apply in order, each in the document the ones before it left; a whole-text change replaces', () => {
  const d = clampedTextDocument.update(
    doc(),
    [
      { range: { start: { line: 0, character: 0 }, end: { line: 0, character: 7 } }, text: 'v' },
      { range: { start: { line: 99, character: 0 }, end: { line: 99, character: 0 } }, text: 'end' },
    ],
    2,
  );
  assert.equal(d.getText(), 'v: 1\nflow: pt2e\nend');
  assert.equal(clampedTextDocument.update(d, [{ text: 'new' }], 3).getText(), 'new');
});
