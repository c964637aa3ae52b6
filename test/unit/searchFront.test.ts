// The mixed-precision front page (client/search/frontChart.ts) and the run's figures, from the kernel's sample
// result (protocol/fixtures/rpc/MixedPrecisionResult.json, a real digits search cut to five candidates).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { MixedPrecisionResult } from '../../protocol/kernel';
import { searchFigures } from '../../client/runs/figures';
import { describe, frontHtml, frontSvg } from '../../client/search/frontChart';
import { repoRoot } from '../support/paths';

const result = JSON.parse(
  readFileSync(path.join(repoRoot, 'protocol', 'fixtures', 'rpc', 'MixedPrecisionResult.json'), 'utf8'),
) as MixedPrecisionResult;

const circles = (svg: string) => [
  ...svg.matchAll(/<circle class="([^"]+)" data-id="(\w+)" cx="([\d.]+)" cy="([\d.]+)"/g),
];

test('each plot draws every candidate, the front filled, and the ends labelled', () => {
  for (const [view, front] of [
    ['latency', result.latencyFront],
    ['size', result.sizeFront],
  ] as const) {
    const svg = frontSvg(result, view);
    const drawn = circles(svg);
    assert.deepEqual(
      drawn.map((m) => m[2]),
      result.candidates.map((c) => c.id),
    );
    assert.deepEqual(
      drawn.filter((m) => m[1].includes('on-front')).map((m) => m[2]),
      result.candidates.filter((c) => front.includes(c.id)).map((c) => c.id),
    );
    for (const end of Object.keys(result.ends)) assert.ok(svg.includes(`>all ${end}</text>`), end);
  }
});

test('the axes go the right way: more accurate is higher, slower and bigger are further right', () => {
  const at = (svg: string) => new Map(circles(svg).map((m) => [m[2], { x: Number(m[3]), y: Number(m[4]) }]));
  const lat = at(frontSvg(result, 'latency'));
  const size = at(frontSvg(result, 'size'));
  const byId = new Map(result.candidates.map((c) => [c.id, c]));
  for (const a of result.candidates)
    for (const b of result.candidates) {
      if (a.latencyMs < b.latencyMs) assert.ok(lat.get(a.id)!.x < lat.get(b.id)!.x);
      if (a.bytes < b.bytes) assert.ok(size.get(a.id)!.x < size.get(b.id)!.x);
      if (a.ortAccuracy > b.ortAccuracy) assert.ok(lat.get(a.id)!.y < lat.get(b.id)!.y);
    }
  assert.ok(byId.size > 2);
});

test('the page allows only its own nonce-tagged style and script and names no URL', () => {
  const html = frontHtml(result, { nonce: 'N0nce', title: 'Mixed <precision>' });
  assert.match(html, /content="default-src 'none'; style-src 'nonce-N0nce'; script-src 'nonce-N0nce'"/);
  assert.equal((html.match(/<script/g) ?? []).length, 1);
  assert.ok(html.includes('<script nonce="N0nce">') && html.includes('<style nonce="N0nce">'));
  assert.ok(!/https?:\/\//.test(html.replaceAll('http://www.w3.org', '')), 'a URL in the page');
  assert.ok(html.includes('Mixed &#60;precision&#62;') && !html.includes('Mixed <precision>'));
  // One "Write overrides" button per candidate, front points first.
  const rows = [...html.matchAll(/<button class="pick" data-id="(\w+)">/g)].map((m) => m[1]);
  assert.equal(rows.length, result.candidates.length);
  const onFront = new Set(result.front);
  const firstOff = rows.findIndex((id) => !onFront.has(id));
  assert.ok(firstOff === -1 || rows.slice(firstOff).every((id) => !onFront.has(id)));
});

test('a candidate reads with its accuracies, latency, size and layer counts', () => {
  const c = result.candidates[0];
  assert.match(
    describe(c),
    /^all int8: \d+\.\d\d % on ONNX Runtime \(fake-quant, emulated: \d+\.\d\d %\), \d+\.\d{3} ms, [\d.]+ KiB · int8 4 \/ fp16 0 \/ fp32 0$/,
  );
});

test('the Runs view figures name the front and its ends', () => {
  const s = searchFigures(result);
  const f = new Map(s.figures);
  assert.equal(f.get('candidates'), `${result.candidates.length} (budget ${result.budget.candidates})`);
  assert.equal(f.get('front'), `${result.front.length} points`);
  assert.match(f.get('all int8') ?? '', /^\d+\.\d\d %, \d+\.\d{3} ms$/);
  assert.ok(f.has('most accurate') && f.has('fastest'));
  assert.equal(s.detail, 'onnxruntime b16');
});
