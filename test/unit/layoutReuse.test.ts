// Layouts not computed again (webview/graph/layoutReuse.ts, client/editors/layoutCache.ts): a module group that
// opens is the only part laid out, and a layout kept for the same content and view options is drawn as it was.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { LayoutCache, contentKey } from '../../client/editors/layoutCache';
import type { CachedLayout } from '../../protocol/webview';
import { groupId, topScopes } from '../../webview/graph/groups';
import type { Layout } from '../../webview/graph/layout';
import { boxesOf } from '../../webview/graph/layoutReuse';
import { decodeAndLayout } from '../../webview/worker/pipeline';
import { duplicatedNodes } from '../support/onnxShapes';
import { repoRoot } from '../support/paths';

const digits = new Uint8Array(readFileSync(path.join(repoRoot, 'test', 'fixtures', 'digits', 'digits.qdq.onnx')));
const big = duplicatedNodes(digits, 5_000);

function overlaps(layout: Layout): string[] {
  const boxes = [...layout.nodes.values()];
  const out: string[] = [];
  for (let i = 0; i < boxes.length; i++)
    for (let j = i + 1; j < boxes.length; j++) {
      const a = boxes[i],
        b = boxes[j];
      if (Math.abs(a.x - b.x) * 2 < a.width + b.width && Math.abs(a.y - b.y) * 2 < a.height + b.height)
        out.push(`${a.id} / ${b.id}`);
    }
  return out;
}

test('opening a module group lays out only its contents; the rest of the view keeps its place', () => {
  const closed = decodeAndLayout('x5k', big, {}, 'dup.onnx');
  assert.deepEqual(closed.expanded, [], 'a large model opens grouped');
  const full = decodeAndLayout('x5k', undefined, { expanded: null }, 'dup.onnx');
  const scopes = topScopes(full.graph);
  assert.ok(scopes.length > 2, `${scopes.length} top-level modules`);
  // A module in the middle of the graph: some rows above it, some below.
  const scope = scopes[Math.floor(scopes.length / 2)];
  const base = boxesOf(closed.graph, closed.layout)!;
  const opened = decodeAndLayout(
    'x5k',
    undefined,
    { expanded: [scope], opened: { ...base, ids: closed.graph.nodes.map((n) => n.id), scope } },
    'dup.onnx',
  );
  assert.equal(opened.layoutBy, 'group');
  const inside = opened.graph.nodes.filter((n) => n.scopes?.includes(scope));
  assert.ok(inside.length > 1);
  assert.equal(opened.laidOutNodes, inside.length, 'only the opened module is laid out');
  assert.ok(opened.laidOutNodes < opened.graph.nodes.length);
  for (const n of opened.graph.nodes) assert.ok(opened.layout.nodes.get(n.id), `${n.id} placed`);
  assert.equal(opened.layout.edges.length, opened.graph.edges.length, 'every edge drawn');
  assert.deepEqual(overlaps(opened.layout), []);
  // Rows above the group stay where they were (up to one shift of the whole view to keep its left margin).
  const group = closed.layout.nodes.get(groupId(scope))!;
  const above = closed.graph.nodes.filter((n) => closed.layout.nodes.get(n.id)!.y < group.y - 1);
  assert.ok(above.length > 0);
  const shift = opened.layout.nodes.get(above[0].id)!.x - closed.layout.nodes.get(above[0].id)!.x;
  for (const n of above) {
    const was = closed.layout.nodes.get(n.id)!,
      now = opened.layout.nodes.get(n.id)!;
    assert.equal(now.y, was.y, n.id);
    assert.ok(Math.abs(now.x - was.x - shift) < 1e-9, n.id);
  }
  // Rows below move down by the same amount, and every one of them is below the opened block.
  const blockBottom = Math.max(...inside.map((n) => opened.layout.nodes.get(n.id)!).map((p) => p.y + p.height / 2));
  for (const n of closed.graph.nodes) {
    const was = closed.layout.nodes.get(n.id)!;
    if (was.y > group.y + 1) assert.ok(opened.layout.nodes.get(n.id)!.y - was.height / 2 > blockBottom, n.id);
  }
  // Not the same view with one group opened: laid out in full.
  const other = decodeAndLayout(
    'x5k',
    undefined,
    { expanded: [scope, scopes[0]], opened: { ...base, ids: closed.graph.nodes.map((n) => n.id), scope } },
    'dup.onnx',
  );
  assert.equal(other.layoutBy, 'layered');
  assert.equal(other.laidOutNodes, other.graph.nodes.length);
});

test('a kept layout is drawn as it was, without laying out', () => {
  const first = decodeAndLayout('x5k-flat', big, { expanded: null }, 'dup.onnx');
  assert.equal(first.layoutBy, 'layered');
  const reused = decodeAndLayout('x5k-flat', undefined, { expanded: null, reuse: boxesOf(first.graph, first.layout) });
  assert.equal(reused.layoutBy, 'reused');
  assert.equal(reused.laidOutNodes, 0);
  assert.deepEqual(reused.layout.nodes, first.layout.nodes);
  assert.deepEqual(reused.layout.edges, first.layout.edges);
  assert.equal(reused.layout.width, first.layout.width);
  // Boxes for another graph (a different node count) are not used.
  const stale = decodeAndLayout('x5k-flat', undefined, {
    expanded: null,
    reuse: { boxes: new Float64Array(8), width: 1, height: 1 },
  });
  assert.equal(stale.layoutBy, 'layered');
});

test('the layout cache: by content and view options, least recently used out past its budget', () => {
  const layout = (options: string, n: number): CachedLayout => ({
    options,
    boxes: new Float64Array(n),
    width: 1,
    height: 1,
  });
  const cache = new LayoutCache(3 * 8 * 100);
  assert.equal(contentKey(new Uint8Array([1, 2, 3])), contentKey(new Uint8Array([1, 2, 3])));
  assert.notEqual(contentKey(new Uint8Array([1, 2, 3])), contentKey(new Uint8Array([1, 2, 4])));
  cache.put('a', layout('flat', 100));
  cache.put('a', layout('grouped', 100));
  cache.put('a', layout('flat', 100)); // replaces, not adds
  cache.put('b', layout('flat', 100));
  assert.equal(cache.size, 3 * 800);
  assert.deepEqual(
    cache.get('a').map((l) => l.options),
    ['flat', 'grouped'],
  );
  cache.put('c', layout('flat', 100)); // over budget: b, used least recently, goes
  assert.deepEqual(cache.get('b'), []);
  assert.equal(cache.get('a').length, 2);
  assert.equal(cache.get('c').length, 1);
  cache.put('d', layout('flat', 1000)); // larger than the whole budget: not kept
  assert.deepEqual(cache.get('d'), []);
});
