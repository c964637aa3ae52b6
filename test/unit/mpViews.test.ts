// The shaping behind the mixed-precision and sensitivity pages (client/search/shape.ts): round ticks, end labels
// that overlap nothing, float layers and suggestions cut short, why all int8 is slower, and the smallest suggested
// set; on results shaped as on the cifar MobileNetV2 example (test/support/cifarResults.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { searchFigures, sensitivityFigures } from '../../client/runs/figures';
import { barsSvg, sensitivityHtml } from '../../client/search/sensitivityChart';
import { frontHtml, frontSvg } from '../../client/search/frontChart';
import {
  axis,
  floatLayers,
  overlaps,
  placeLabels,
  ranked,
  shortList,
  slowInt8,
  suggestion,
} from '../../client/search/shape';
import { cifarSearch, cifarSensitivity } from '../support/cifarResults';

test('axis ticks are round values and the domain ends on ticks', () => {
  for (const [lo, hi] of [
    [52.2, 86.11],
    [0.92, 1.36],
    [625, 2178],
    [97.7, 97.8],
    [-0.3, 4.2],
  ]) {
    const { domain, ticks } = axis(lo, hi, 5);
    assert.ok(domain[0] <= lo && domain[1] >= hi, `${domain} covers ${lo}..${hi}`);
    assert.equal(ticks[0][0], domain[0]);
    assert.equal(ticks.at(-1)![0], domain[1]);
    assert.ok(ticks.length >= 3 && ticks.length <= 9, `${ticks.length} ticks for ${lo}..${hi}`);
    const step = ticks[1][0] - ticks[0][0];
    const mantissa = step / 10 ** Math.floor(Math.log10(step) + 1e-9);
    assert.ok(
      [1, 2, 5].some((m) => Math.abs(mantissa - m) < 1e-6),
      `step ${step}`,
    );
    for (const [, label] of ticks) assert.ok(label.length <= 6 && !/e/.test(label), `label ${label}`);
  }
  assert.deepEqual(
    axis(50, 90, 5).ticks.map(([, l]) => l),
    ['50', '60', '70', '80', '90'],
  );
  // One value: a range around it, still round.
  assert.ok(axis(0.5, 0.5).ticks.length >= 2);
});

test('labels of points close together are placed apart, inside the plot and off the points', () => {
  const bounds = { x: 0, y: 0, w: 300, h: 200 };
  const points = [
    { id: 'a', text: 'all fp32', x: 150, y: 40 },
    { id: 'b', text: 'all fp16', x: 153, y: 42 },
    { id: 'c', text: 'all int8', x: 296, y: 196 },
  ];
  const avoid = points.map((p) => ({ x: p.x - 5, y: p.y - 5, w: 10, h: 10 }));
  const placed = placeLabels(points, avoid, bounds);
  assert.equal(placed.length, 3);
  for (let i = 0; i < placed.length; i++) {
    const b = placed[i].box;
    assert.ok(b.x >= 0 && b.y >= 0 && b.x + b.w <= 300 && b.y + b.h <= 200, `${placed[i].text} outside`);
    for (const a of avoid) assert.ok(!overlaps(a, b), `${placed[i].text} over a point`);
    for (let j = i + 1; j < placed.length; j++)
      assert.ok(!overlaps(b, placed[j].box), `${placed[i].text} overlaps ${placed[j].text}`);
  }
});

test('the front plots ONNX Runtime accuracy, marks the emulated one apart, and labels its ends apart', () => {
  const r = cifarSearch();
  const svg = frontSvg(r, 'latency');
  const int8 = r.candidates[0];
  // The all-int8 point sits at 52.2 % (measured); a diamond at 75.4 % (emulated) with its own title.
  assert.match(svg, /top-1 on ONNX Runtime \(%\)/);
  const emulated = [...svg.matchAll(/<path class="emulated" data-id="(\w+)"/g)].map((m) => m[1]);
  assert.ok(emulated.includes(int8.id));
  assert.ok(!emulated.includes(r.ends.fp32!), 'fp32 measures as emulated: one mark');
  assert.match(svg, /all int8: fake-quant \(emulated\) 75\.40 %, measured on ONNX Runtime 52\.20 %/);
  const ticks = [...svg.matchAll(/class="tick y-tick"[^>]*>([^<]+)</g)].map((m) => Number(m[1]));
  assert.ok(
    ticks.every((t) => Number.isInteger(t / 5)),
    `y ticks ${ticks}`,
  );
  assert.ok(ticks[0] <= 52.2 && ticks.at(-1)! >= 86.11);
  assert.deepEqual([...svg.matchAll(/data-end="([^"]+)"/g)].map((m) => m[1]).sort(), [
    'all fp16',
    'all fp32',
    'all int8',
  ]);
});

test('float layers read as counts and a few names, the full list in the title', () => {
  const r = cifarSearch();
  assert.deepEqual(floatLayers(r.candidates[0]), { short: 'none', full: 'every layer int8' });
  assert.equal(floatLayers(r.candidates[2]).short, 'all 53 (53 fp16)');
  const k8 = floatLayers(r.candidates.find((c) => c.label === '8 most sensitive fp16')!);
  assert.match(k8.short, /^8 fp16: [\w.]+, [\w.]+ \+6 more$/);
  assert.equal(k8.full.split('\n').length, 8);
  const html = frontHtml(r, { nonce: 'n', title: 't' });
  const cells = [...html.matchAll(/<td class="floats" title="[^"]*">([^<]*)</g)].map((m) => m[1]);
  assert.ok(
    cells.every((c) => c.length <= 60),
    `a long float-layers cell: ${cells.find((c) => c.length > 60)}`,
  );
  assert.deepEqual(shortList(['a', 'b', 'c', 'd', 'e'], 3), {
    shown: ['a', 'b', 'c'],
    more: 2,
    text: 'a, b, c +2 more',
  });
  assert.equal(shortList(['a'], 3).text, 'a');
});

test('all int8 slower than all fp32 is explained from precision as executed and the CPU', () => {
  const r = cifarSearch();
  const slow = slowInt8(r)!;
  assert.ok(slow);
  assert.equal(slow.batch, 16);
  assert.match(slow.lines[0], /1\.36 ms against 0\.92 ms at batch 16 \(1\.48×\)/);
  const text = slow.lines.join('\n');
  assert.match(text, /298 nodes against 71/);
  assert.match(text, /118 conversions .* and 34 layout reorders/);
  assert.match(text, /52 of 63 arithmetic ops run int8; 11 stayed fp32 .*Add ×10, Gemm ×1/);
  assert.match(text, /no int8 dot-product instructions/);
  assert.match(text, /At batch 1 all int8 is as fast or faster/);
  assert.ok(frontHtml(r, { nonce: 'n', title: 't' }).includes('id="slow-int8"'));
  // Faster int8: nothing to explain.
  const fast = cifarSearch();
  fast.candidates[0].latencyMs = 0.5;
  assert.equal(slowInt8(fast), undefined);
  assert.ok(!frontHtml(fast, { nonce: 'n', title: 't' }).includes('id="slow-int8"'));
  // Without executed: still said, with where to look.
  delete fast.candidates[0].executed;
  fast.candidates[0].latencyMs = 2;
  assert.match(slowInt8(fast)!.lines[1], /build\/ort/);
});

test('the suggestion is the shortest prefix of the greedy steps that reaches the target', () => {
  const r = cifarSensitivity();
  const s = suggestion(r);
  // 0.754 + k * 0.0114 >= 0.8437 first at k = 8.
  assert.equal(s.modules.length, 8);
  assert.deepEqual(
    s.modules,
    r.suggestion.steps.slice(0, 8).map((st) => st.module),
  );
  assert.equal(s.shown.length, 3);
  assert.equal(s.more, 5);
  assert.ok(s.reached && s.reference === 'qatFloat');
  // No step reaches it: the fewest layers with the best accuracy seen, not every layer.
  const flat = cifarSensitivity();
  flat.suggestion.target = 0.95;
  flat.suggestion.steps = flat.suggestion.steps.map((st, i) => ({ ...st, accuracy: i < 3 ? 0.76 + i * 0.01 : 0.78 }));
  const f = suggestion(flat);
  assert.equal(f.modules.length, 3);
  assert.equal(f.reached, false);
  // A result without steps (an older kernel) keeps its overrides, unescaped.
  const old = cifarSensitivity();
  delete (old.suggestion as Partial<typeof old.suggestion>).steps;
  delete (old.suggestion as Partial<typeof old.suggestion>).target;
  assert.deepEqual(
    suggestion(old).modules,
    r.suggestion.steps.map((st) => st.module),
  );
});

test('the sensitivity page: baselines, the ranked bars, a short suggestion and no wall of names', () => {
  const r = cifarSensitivity();
  const html = sensitivityHtml(r, { nonce: 'N0nce', title: 'Sensitivity' });
  assert.match(html, /content="default-src 'none'; style-src 'nonce-N0nce'; script-src 'nonce-N0nce'"/);
  assert.ok(!/https?:\/\//.test(html.replaceAll('http://www.w3.org', '')));
  for (const k of ['fp32', 'qatFloat', 'fakeQuant'])
    assert.match(html, new RegExp(`data-baseline="${k}">\\d+\\.\\d\\d %<`));
  assert.match(html, /INT8, fake-quant \(emulated\)/);
  assert.match(html, /Keep 8 layers in FP16/);
  assert.match(html, /\+5 more/);
  assert.ok(!html.includes('\\.'), 'regex-escaped names on the page');
  const drop = ranked(r, 'drop');
  assert.ok(drop.every((d, i) => i === 0 || drop[i - 1].value >= d.value));
  const svg = barsSvg(r, 'drop', new Set(suggestion(r).modules));
  assert.equal((svg.match(/<rect class="bar/g) ?? []).length, 53);
  assert.equal((svg.match(/<rect class="bar suggested"/g) ?? []).length, 8);
});

test("a language model's sensitivity page: its fake-quant perplexity and a chart of its repeated blocks", () => {
  const r = cifarSensitivity();
  const ppl = (v: number) => ({ accuracy: 0.5, sqnr: v, perplexity: 30 + v });
  const blocks = [0, 1, 2].map((i) => ({
    module: `model.layers.${i}`,
    op: 'block' as const,
    rank: i + 1,
    layers: 7,
    quantizedAlone: ppl(10 + i),
    keptFloat: ppl(5),
  }));
  const lm = { ...r, accuracy: { ...r.accuracy, fakeQuantPerplexity: 42.5 }, blocks };
  const html = sensitivityHtml(lm, { nonce: 'N0nce', title: 'Sensitivity' });
  assert.match(html, /data-baseline="perplexity">42\.50</);
  assert.match(html, /<h3>Blocks<\/h3><p>3 repeated blocks/);
  const chart = /<div class="block-chart">([\s\S]*?)<\/div>/.exec(html)![1];
  // most sensitive (lowest SQNR) first, rows that select no layer for a fix
  assert.deepEqual(
    [...chart.matchAll(/class="block-row" data-module="([^"]+)"/g)].map((m) => m[1]),
    ['model.layers.0', 'model.layers.1', 'model.layers.2'],
  );
  assert.ok(!chart.includes('class="row"'));
  // a model without blocks gets neither
  const plain = sensitivityHtml(r, { nonce: 'N0nce', title: 'Sensitivity' });
  assert.ok(!plain.includes('block-chart') && !plain.includes('data-baseline="perplexity"'));
});

test('the Runs view figures say the suggestion in brief and the measured accuracy of the search', () => {
  const f = new Map(sensitivityFigures(cifarSensitivity()).figures);
  assert.match(f.get('suggested')!, /^8 fp16: [\w.]+, [\w.]+ \+6 more$/);
  assert.equal(f.get('FP32'), '86.11 %');
  const s = new Map(searchFigures(cifarSearch()).figures);
  assert.equal(s.get('all int8'), '52.20 %, 1.360 ms');
});
