// The laid-out graph as the layout worker posts it (webview/worker/transfer.ts): packed, structured-cloned as
// postMessage does, and unpacked, it is the graph and layout the worker made, for every view of real models.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { LaidOut } from '../../webview/worker/messages';
import { decodeAndLayout } from '../../webview/worker/pipeline';
import { pack, unpack } from '../../webview/worker/transfer';
import { duplicatedNodes } from '../support/onnxShapes';
import { repoRoot } from '../support/paths';

const digits = new Uint8Array(readFileSync(path.join(repoRoot, 'test', 'fixtures', 'digits', 'digits.qdq.onnx')));
const graphJson = new Uint8Array(
  readFileSync(path.join(repoRoot, 'test', 'fixtures', 'digits', 'digits.converted.qatgraph.json')),
);

/** What the page needs of the tensors: those the drawn nodes read. */
function expected(l: LaidOut): LaidOut {
  const used = new Set(l.graph.nodes.flatMap((n) => n.inputs));
  const tensors = new Map([...l.graph.tensors].filter(([name]) => used.has(name)));
  return { ...l, graph: { ...l.graph, tensors } };
}

const views: Array<[string, Uint8Array, string, Parameters<typeof decodeAndLayout>[2]]> = [
  ['digits, flat', digits, 'digits.qdq.onnx', { expanded: null }],
  ['digits, Q/DQ collapsed (labelled edges)', digits, 'digits.qdq.onnx', { collapseQdq: true, expanded: null }],
  ['digits, dagre + SVG', digits, 'digits.qdq.onnx', { renderer: 'svg', expanded: null }],
  ['digits x5k, module groups', duplicatedNodes(digits, 5_000), 'dup.onnx', {}],
  ['graph JSON', graphJson, 'digits.converted.qatgraph.json', {}],
];

for (const [label, bytes, fileName, options] of views) {
  test(`${label}: the page gets the graph and layout the worker made`, () => {
    const laidOut = decodeAndLayout(label, bytes, options, fileName);
    assert.ok(laidOut.graph.edges.length > 0 && laidOut.layout.edges.length > 0, 'a graph with edges');
    const packed = pack(laidOut);
    assert.ok(packed, 'packed');
    const transferred = structuredClone(packed.packed, { transfer: packed.transfer });
    assert.ok(
      packed.transfer.every((b) => b.byteLength === 0),
      'the typed arrays are transferred, not copied',
    );
    assert.deepStrictEqual(unpack(transferred), expected(laidOut));
    if (options?.collapseQdq) assert.ok(laidOut.graph.edges.some((e) => e.label));
  });
}
