// Find Where INT8 Diverges in the graph view, in Debian Chromium: the digits QDQ export with the kernel's
// compare/stages result (conv2 planted six output steps apart in ONNX Runtime, fc2 left out of TVM's stage): a
// lane of badges per layer node, the first divergence marked and selected on open, the stage table's column
// groups, sorting, a row click selecting its node, the report button, the HTML export's stage table, and the same
// lanes drawn on canvas.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import type { CompareStagesResult } from '../../protocol/kernel';
import type { StageResults, ToWebview } from '../../protocol/webview';
import { LANE, laneOrigin } from '../../webview/graph/stageLanes';
import { decodeAndLayout } from '../../webview/worker/pipeline';
import { artifactsDir, repoRoot } from '../support/paths';
import { openWebview, postToWebview, readableText, useWebviewHarness, waitForSent } from '../support/webviewPage';

const harness = useWebviewHarness();
const onnx = readFileSync(path.join(repoRoot, 'test', 'fixtures', 'digits', 'digits.qdq.onnx'));
const fixture = JSON.parse(
  readFileSync(path.join(repoRoot, 'protocol', 'fixtures', 'rpc', 'CompareStagesResult.json'), 'utf8'),
) as CompareStagesResult;

/** The fixture with conv2 diverging in ONNX Runtime and its TVM stage agreeing everywhere but at fc2 (absent). */
function results(): StageResults {
  const r: StageResults = structuredClone(fixture);
  r.layers[1].pairs['int8:ort'].localSteps = 6.2;
  r.divergence['int8:ort'] = {
    pair: 'int8:ort',
    index: 1,
    module: 'conv2',
    op: 'conv2d',
    localSteps: 6.2,
    localSqnr: 40.1,
    cause: 'no known cause matched: ONNX Runtime computes this layer differently from PyTorch INT8',
    source: fixture.layers[1].source,
  };
  // the kernel's TVM stage, as if TVM had no layer fc2
  for (const l of r.layers) {
    l.stages.tvm = l.module !== 'fc2';
    if (l.module === 'fc2') delete l.pairs['int8:tvm'];
    else l.pairs['int8:tvm'] = structuredClone(l.pairs['int8:c']);
  }
  return r;
}
const stages = results();
const STAGE_IDS = stages.stages.map((s) => s.id);

async function openStages(renderer?: 'canvas', viewport = { width: 1300, height: 1000 }) {
  const opened = await openWebview(harness.browser, harness.server.origin, viewport);
  await postToWebview(opened.page, {
    type: 'showGraph',
    title: 'Stages: digits.qat.yaml',
    onnx,
    layers: [],
    threshold: 0,
    config: '/w/digits.qat.yaml',
    stages,
    ...(renderer ? { renderer } : {}),
  } satisfies ToWebview);
  await waitForSent(opened.page, 'rendered', 30_000);
  await opened.page.waitForSelector('#layers table.stage-table tbody tr', { timeout: 15_000 });
  return opened;
}

const clearSent = (page: Page) =>
  page.evaluate(() => {
    (window as unknown as { __sent: unknown[] }).__sent = [];
  });

test('each layer node carries a lane of one badge per stage; the first divergence is marked and selected', async () => {
  const { page, violations } = await openStages();
  const lanes = await page.locator('svg g.node[data-stage-layer]').evaluateAll((nodes) =>
    nodes.map((n) => ({
      name: n.getAttribute('data-name'),
      layer: n.getAttribute('data-stage-layer'),
      output: n.querySelector('.stage-lane')!.getAttribute('data-output'),
      badges: [...n.querySelectorAll('.stage-badge')].map((b) => [
        b.getAttribute('data-stage'),
        b.getAttribute('data-level'),
      ]),
    })),
  );
  const lane = (name: string) => lanes.find((l) => l.name === name)!;
  // Every node of the four layers' ONNX nodes, each lane one badge per stage, in stage order.
  const names = new Set(stages.layers.flatMap((l) => l.onnx!.nodes));
  assert.deepEqual(new Set(lanes.map((l) => l.name)), names);
  for (const l of lanes)
    assert.deepEqual(
      l.badges.map(([id]) => id),
      STAGE_IDS,
      l.name!,
    );
  // conv2's output (the Q that writes quantize_per_tensor_2): ONNX Runtime diverges, TVM and the C runner agree.
  assert.deepEqual(lane('node_quantize_per_tensor_2'), {
    name: 'node_quantize_per_tensor_2',
    layer: 'conv2',
    output: 'true',
    badges: [
      ['fp32', 'reference'],
      ['fakeQuant', 'reference'],
      ['int8', 'agrees'],
      ['ort', 'diverges'],
      ['c', 'agrees'],
      ['tvm', 'agrees'],
    ],
  });
  // Inside conv2 the runtimes fused the Conv away; fc2 has no TVM layer (grey).
  assert.deepEqual(
    lane('node_conv2d_1').badges.map(([, level]) => level),
    ['reference', 'reference', 'agrees', 'fused', 'fused', 'fused'],
  );
  assert.equal(lane('node_linear_1').badges[5][1], 'absent');
  // Nodes coloured by their layer's worst bisected pair: conv2 red, conv1 green; Q/DQ stay purple.
  const fill = (name: string) =>
    page.locator(`svg g.node[data-name="${name}"] > rect`).evaluate((r) => getComputedStyle(r).fill);
  assert.equal(await fill('node_conv2d_1'), 'rgb(229, 20, 0)');
  assert.equal(await fill('node_conv2d'), 'rgb(56, 138, 52)');
  assert.equal(await fill('node_quantize_per_tensor_2'), 'rgb(177, 128, 215)');
  // The first divergence: marked, selected and revealed, its stage figures and cause in the properties.
  const first = page.locator('svg g.node.first-divergence');
  assert.equal(await first.count(), 1);
  assert.equal(await first.getAttribute('data-name'), 'node_conv2d_1');
  assert.equal(await first.getAttribute('data-divergence'), 'int8:ort');
  assert.equal(await first.locator('circle.divergence-mark').count(), 1);
  assert.equal(await page.locator('svg g.node.selected').getAttribute('data-name'), 'node_conv2d_1');
  await page.waitForSelector('#props:not([hidden]) .stage-props[data-module="conv2"]');
  assert.match(
    (await page.locator('#props .stage-props').textContent()) ?? '',
    /PyTorch INT8 → ONNX Runtime.*local 6\.2 steps.*diverges/,
  );
  const svgBox = (await page.locator('#canvas svg').boundingBox())!;
  const nodeBox = (await first.boundingBox())!;
  assert.ok(nodeBox.y >= svgBox.y && nodeBox.y + nodeBox.height <= svgBox.y + svgBox.height, 'not in view');
  // The legend names the lane's stages in order; the summary the first divergence.
  assert.match(
    (await page.locator('#legend').textContent()) ?? '',
    /Lane: FP32 · fake-quant · PyTorch INT8 · ONNX Runtime · C runner · TVM/,
  );
  assert.match(
    (await page.locator('#summary').textContent()) ?? '',
    /first divergence conv2 \(PyTorch INT8 → ONNX Runtime\)/,
  );
  const text = await readableText(page);
  assert.ok(!/\[object Object\]|\bundefined\b|\bNaN\b/.test(text), 'a text reads [object Object], undefined or NaN');
  await page.screenshot({ path: path.join(artifactsDir, 'stages.png') });
  assert.deepEqual(violations, []);
  await page.close();
});

test('the stage table has a column group per stage pair, sorts, and a row click selects its node', async () => {
  const { page, violations } = await openStages();
  const table = page.locator('#layers table.stage-table');
  assert.deepEqual(
    await table
      .locator('colgroup[data-pair]')
      .evaluateAll((c) => c.map((g) => [g.getAttribute('data-pair'), g.getAttribute('span')])),
    // FP32 → fake-quant is compared propagated only; the bisected pairs local and propagated.
    [
      ['fp32:fakeQuant', '1'],
      ['fakeQuant:int8', '2'],
      ['int8:ort', '2'],
      ['int8:c', '2'],
      ['int8:tvm', '2'],
    ],
  );
  assert.deepEqual(await table.locator('th.pair-group').allTextContents(), [
    'FP32 → fake-quant',
    'fake-quant → PyTorch INT8',
    'PyTorch INT8 → ONNX Runtime',
    'PyTorch INT8 → C runner',
    'PyTorch INT8 → TVM',
  ]);
  const modules = () => table.locator('tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-module')));
  assert.deepEqual(await modules(), ['conv1', 'conv2', 'fc1', 'fc2'], 'graph order first');
  const conv2 = table.locator('tbody tr[data-module="conv2"]');
  assert.equal(await conv2.getAttribute('data-first'), 'int8:ort');
  assert.equal(await conv2.locator('td[data-column="int8:ort/local"]').textContent(), '6.2 steps');
  assert.equal(await conv2.locator('td[data-column="int8:ort/local"]').getAttribute('data-level'), 'diverges');
  assert.equal(
    await table.locator('tbody tr[data-module="fc2"] td[data-column="int8:ort/local"]').textContent(),
    '137.9 dB',
  );
  // Worst first on a figure's first click, the other way on the second.
  await table.locator('th[data-column="int8:ort/local"]').click();
  assert.equal((await modules())[0], 'conv2');
  assert.equal(await table.locator('th[data-column="int8:ort/local"]').getAttribute('aria-sort'), 'descending');
  await table.locator('th[data-column="int8:ort/local"]').click();
  assert.equal((await modules()).at(-1), 'conv2');
  await table.locator('th[data-column="layer"]').click();
  assert.deepEqual(await modules(), ['conv1', 'conv2', 'fc1', 'fc2']);
  // The verdicts: one per bisected pair.
  assert.deepEqual(
    await page
      .locator('#layers ul.verdicts li')
      .evaluateAll((li) => li.map((l) => [l.getAttribute('data-pair'), l.getAttribute('data-verdict')])),
    [
      ['fakeQuant:int8', 'agrees'],
      ['int8:ort', 'diverges'],
      ['int8:c', 'agrees'],
      ['int8:tvm', 'agrees'],
    ],
  );
  // A row click selects the layer's own op and asks for its source line.
  await clearSent(page);
  await table.locator('tbody tr[data-module="fc1"]').click();
  assert.equal(await page.locator('svg g.node.selected').getAttribute('data-name'), 'node_linear');
  const reveal = await waitForSent<{ file: string; line: number }>(page, 'revealSource', 5_000);
  assert.deepEqual({ file: reveal.file, line: reveal.line }, stages.layers[2].source);
  await page.waitForSelector('#props .stage-props[data-module="fc1"]');
  // The Markdown report is the host's to open, on request.
  await clearSent(page);
  await page.locator('#open-stage-report').click();
  await waitForSent(page, 'openStageReport', 5_000);
  assert.deepEqual(violations, []);
  await page.close();
});

test('the HTML report carries the stage table and the bisect verdicts', async () => {
  const { page, violations } = await openStages();
  await clearSent(page);
  await page.locator('#export-html').click();
  const html = await waitForSent<{ fileName: string; data: string }>(page, 'export', 15_000);
  assert.ok(!/<script/i.test(html.data), 'the report must not need scripts');
  const report = await harness.browser.newPage();
  await report.setContent(html.data);
  const table = report.locator('table.stage-table');
  assert.equal(await table.locator('colgroup[data-pair]').count(), stages.pairs.length);
  assert.equal(await table.locator('tbody tr').count(), stages.layers.length);
  assert.equal(await table.locator('th.pair').first().textContent(), 'FP32 → fake-quant');
  assert.match((await table.locator('tbody tr').nth(1).textContent()) ?? '', /conv2.*first divergence.*6\.2 steps/);
  const verdicts = await report.locator('ul.verdicts li').allTextContents();
  assert.equal(verdicts.length, stages.bisected.length);
  assert.match(
    verdicts[1],
    /^PyTorch INT8 → ONNX Runtime: first diverges at conv2 \(conv2d, 6\.2 output steps\): no known cause/,
  );
  assert.match(verdicts[0], /every layer agrees to rounding/);
  assert.match((await report.locator('table.stage-accuracy').textContent()) ?? '', /TVM97\.78 %/);
  // The graph with its lanes, theme colours resolved.
  assert.equal(await report.locator('.graph svg g.stage-lane').count(), await page.locator('svg g.stage-lane').count());
  assert.ok(!html.data.includes('var(--'), 'theme variables must be resolved in the export');
  await report.screenshot({ path: path.join(artifactsDir, 'stages-report.png'), fullPage: true });
  await report.close();
  assert.deepEqual(violations, []);
  await page.close();
});

test('on canvas the lanes and the first divergence are drawn from the scene', async () => {
  const { page, violations } = await openStages('canvas');
  const rendered = await waitForSent<{ renderer: string; coloured: number }>(page, 'rendered', 30_000);
  assert.equal(rendered.renderer, 'canvas');
  assert.equal(rendered.coloured, 7);
  // The same layout as the page's: the ONNX Runtime badge of conv2's output, and conv1's, on screen.
  const { graph, layout } = decodeAndLayout(
    'digits.qdq.onnx',
    onnx,
    { renderer: 'canvas', expanded: null },
    'digits.qdq.onnx',
  );
  const badge = (name: string, stage: string) => {
    const p = layout.nodes.get(graph.nodes.find((n) => n.name === name)!.id)!;
    const o = laneOrigin(p.x, p.y + p.height / 2, STAGE_IDS.length);
    const k = STAGE_IDS.indexOf(stage);
    return { x: o.x + k * (LANE.width + LANE.gap) + LANE.width / 2, y: o.y + LANE.height / 2 };
  };
  const pixels = (points: Array<{ x: number; y: number }>) =>
    page.locator('#canvas canvas').evaluate(
      (c: HTMLCanvasElement, pts) =>
        new Promise<number[][]>((resolve) =>
          requestAnimationFrame(() =>
            requestAnimationFrame(() => {
              const [vx, vy, scale] = c.dataset.view!.split(' ').map(Number);
              const dpr = c.width / c.getBoundingClientRect().width;
              const ctx = c.getContext('2d')!;
              resolve(
                pts.map(({ x, y }) => [
                  ...ctx.getImageData(Math.round((x - vx) * scale * dpr), Math.round((y - vy) * scale * dpr), 1, 1)
                    .data,
                ]),
              );
            }),
          ),
        ),
      points,
    );
  // The view opens on conv2 (the first divergence): its badges are in view at a readable scale.
  const [ortConv2, cConv2, ortConv1] = await pixels([
    badge('node_quantize_per_tensor_2', 'ort'),
    badge('node_quantize_per_tensor_2', 'c'),
    badge('node_quantize_per_tensor_1', 'ort'),
  ]);
  assert.deepEqual(ortConv2.slice(0, 3), [229, 20, 0], 'ONNX Runtime badge of conv2 not red');
  assert.deepEqual(cConv2.slice(0, 3), [56, 138, 52], 'C runner badge of conv2 not green');
  assert.deepEqual(ortConv1.slice(0, 3), [56, 138, 52], 'ONNX Runtime badge of conv1 not green');
  assert.deepEqual(violations, []);
  await page.close();
});

test('at 600 px the stage view fits the column: the wide table scrolls inside, the report button stays in view', async () => {
  const { page, violations } = await openStages(undefined, { width: 600, height: 800 });
  const sizes = await page.evaluate(() => {
    const wrap = document.querySelector('#layers .stage-table-wrap')!;
    return {
      scroll: document.documentElement.scrollWidth,
      client: document.documentElement.clientWidth,
      layers: document.getElementById('layers')!.getBoundingClientRect().right,
      wrap: wrap.clientWidth,
      table: wrap.scrollWidth,
    };
  });
  assert.ok(sizes.scroll <= sizes.client, `page scrolls sideways: ${sizes.scroll} > ${sizes.client}`);
  assert.ok(sizes.layers <= 600, `the results are wider than the view: ${sizes.layers}`);
  assert.ok(sizes.table > sizes.wrap, 'the table should be wider than 600 px and scroll in its box');
  const button = (await page.locator('#open-stage-report').boundingBox())!;
  assert.ok(button.x >= 0 && button.x + button.width <= 600, `report button off screen at ${button.x}`);
  await page.screenshot({ path: path.join(artifactsDir, 'stages-600px.png') });
  assert.deepEqual(violations, []);
  await page.close();
});
