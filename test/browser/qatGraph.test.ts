// The kernel's graph JSON in the graph webview (Debian Chromium): module frames and groups, Q/DQ marks, precision
// badges, quantization parameters, source lines, and a clear error for a broken file.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { SelectionSync, syncKey } from '../../client/editors/graphSync';
import type { CompareLayersResult } from '../../protocol/kernel';
import type { FromWebview, ToWebview } from '../../protocol/webview';
import { bandOf } from '../../common/bands';
import { artifactsDir, repoRoot } from '../support/paths';
import { openWebview, postToWebview, useWebviewHarness, waitForSent } from '../support/webviewPage';

const fixtures = path.join(repoRoot, 'test', 'fixtures', 'digits');
const FILE = 'digits.converted.qatgraph.json';
const text = readFileSync(path.join(fixtures, FILE), 'utf8');
const result = JSON.parse(readFileSync(path.join(fixtures, 'compare-layers.json'), 'utf8')) as CompareLayersResult;

const harness = useWebviewHarness();

async function open(body = text, layers = result.layers) {
  const opened = await openWebview(harness.browser, harness.server.origin);
  await postToWebview(opened.page, {
    type: 'showGraph',
    title: FILE,
    onnx: Buffer.from(body),
    baseDir: fixtures,
    layers,
    threshold: result.threshold,
  });
  return opened;
}

const click = async (loc: import('playwright-core').Locator) => {
  await loc.dispatchEvent('pointerdown', { clientX: 0, clientY: 0 });
  await loc.dispatchEvent('pointerup', { clientX: 0, clientY: 0 });
};

test('the digits graph JSON opens with module frames, Q/DQ marks, precision badges and the compare overlay', async () => {
  const { page, violations } = await open();
  const rendered = await waitForSent<{
    nodes: number;
    qdq: number;
    coloured: number;
    renderer: string;
    inWorker: boolean;
  }>(page, 'rendered', 15_000);
  assert.deepEqual(
    { ...rendered, timings: undefined, groups: undefined, total: undefined, type: undefined },
    {
      nodes: 27,
      qdq: 16,
      coloured: 4,
      renderer: 'svg',
      inWorker: true,
      layoutBy: 'layered',
      laidOutNodes: 27,
      timings: undefined,
      groups: undefined,
      total: undefined,
      type: undefined,
    },
  );

  // Module scopes become frames labelled with the module's class; BN was folded into the convs, so it has none.
  const frames = await page
    .locator('svg g.frame')
    .evaluateAll((gs) => gs.map((g) => [g.getAttribute('data-module'), g.querySelector('text')!.textContent]));
  assert.deepEqual(Object.fromEntries(frames), {
    conv1: 'conv1 · Conv2d',
    relu1: 'relu1 · ReLU',
    conv2: 'conv2 · Conv2d',
    relu2: 'relu2 · ReLU',
    pool: 'pool · MaxPool2d',
    fc1: 'fc1 · Linear',
    relu3: 'relu3 · ReLU',
    fc2: 'fc2 · Linear',
  });
  // Each frame encloses the boxes of its module, the weight dequantize of its conv/linear among them.
  const inside = await page.evaluate(() => {
    const box = (e: Element) => (e as SVGGraphicsElement).getBoundingClientRect();
    const frame = box(document.querySelector('svg g.frame[data-module="conv1"] rect')!);
    return ['conv2d_4', 'dequantize_per_channel', 'dequantize_per_tensor_default'].map((name) => {
      const b = box(document.querySelector(`svg g.node[data-name="${name}"] rect`)!);
      return b.left >= frame.left && b.right <= frame.right && b.top >= frame.top && b.bottom <= frame.bottom;
    });
  });
  assert.deepEqual(inside, [true, true, true]);

  const qdq = await page.locator('svg g.node.qdq > text:not(.badge)').allTextContents();
  assert.equal(qdq.length, 16);
  assert.deepEqual([...new Set(qdq)].sort(), [
    'DQ  dequantize_per_channel',
    'DQ  dequantize_per_tensor',
    'Q  quantize_per_tensor',
  ]);
  assert.equal(await page.locator('svg g.node.qdq text.badge').count(), 0);
  const badges = await page
    .locator('svg g.node.op:not(.qdq)')
    .evaluateAll((gs) => gs.map((g) => [g.getAttribute('data-op'), g.querySelector('text.badge')?.textContent]));
  assert.equal(badges.length, 9);
  assert.ok(
    badges.every(([, b]) => b === 'int8'),
    JSON.stringify(badges),
  );
  assert.deepEqual([...new Set(badges.map(([op]) => op))].sort(), [
    'conv2d',
    'flatten',
    'linear',
    'max_pool2d',
    'relu',
  ]);

  for (const layer of result.layers) {
    const node = page.locator(`svg g.node.layer[data-module="${layer.module}"]`).first();
    assert.equal(await node.getAttribute('data-cosine'), layer.cosine.toFixed(5), layer.module);
    assert.equal(
      await node.locator('rect').evaluate((r) => (r as SVGRectElement).style.fill),
      bandOf(layer.cosine, result.threshold).colour,
    );
  }
  assert.deepEqual(violations, []);
  await page.screenshot({ path: path.join(artifactsDir, 'qatgraph.png') });
  await page.close();
});

test('a graph JSON node shows its quantization parameters, module, precision and source, and reveals its line', async () => {
  const { page, violations } = await open(text, []);
  await page.waitForSelector('svg g.node', { state: 'attached', timeout: 15_000 });
  const props = page.locator('#props');
  const row = (k: string) => props.locator(`dt:text-is("${k}") + dd`).first().textContent();

  await click(page.locator('svg g.node[data-name="dequantize_per_channel"]'));
  assert.deepEqual(await props.locator('h3').allTextContents(), [
    'dequantize_per_channel',
    'Quantization (per channel)',
    'Attributes',
    'Inputs',
    'Outputs',
  ]);
  assert.equal(await props.locator('.formula').textContent(), 'real = scale * (q - zero_point)');
  const scales = (JSON.parse(text).nodes as Array<{ id: string; qparams?: { scale: number[] } }>).find(
    (n) => n.id === 'dequantize_per_channel',
  )!.qparams!.scale;
  // Sixteen channels: a preview inline, every scale behind an expander.
  const text6 = (v: number[]) => v.slice(0, 6).map((s) => s.toPrecision(6));
  assert.equal(await row('scale'), `float32[16] [${text6(scales).join(', ')}, …]`);
  assert.equal(
    await row('zero_point'),
    `int8[16] [${scales
      .slice(0, 6)
      .map(() => 0)
      .join(', ')}, …]`,
  );
  const all = props.locator('details.all-values', { hasText: 'All 16 scales' });
  await all.locator('summary').click();
  assert.equal(await all.locator('pre').textContent(), scales.map((s) => s.toPrecision(6)).join(', '));
  assert.equal(await row('axis'), '0');
  assert.equal(await row('range'), '-128 … 127');
  assert.equal(await row('target'), 'quantized_decomposed.dequantize_per_channel.default');
  assert.match(
    (await props.locator('dt:text-is("0") + dd').first().textContent()) ?? '',
    /^quantize_per_channel int8\[16×1×3×3\]$/,
    'the int8 weight, a tensor',
  );

  await click(page.locator('svg g.node[data-name="quantize_per_tensor_default"]'));
  assert.equal(await props.locator('h3').nth(1).textContent(), 'Quantization (per tensor)');
  assert.equal(await row('scale'), 'float32[scalar] 0.0625817');
  assert.equal(await row('zero_point'), 'uint8[scalar] 0');

  await click(page.locator('svg g.node[data-name="conv2d_4"]'));
  assert.equal(await row('module'), 'conv1');
  assert.equal(await row('type'), 'Conv2d');
  assert.equal(await row('precision'), 'int8');
  assert.equal(await row('source'), '../../../examples/digits/model.py:21');
  await page.evaluate(() => {
    (window as unknown as { __sent: unknown[] }).__sent = [];
  });
  await page.locator('#reveal-source').click();
  const reveal = await waitForSent<{ file: string; line: number }>(page, 'revealSource', 5_000);
  assert.deepEqual(
    { file: reveal.file, line: reveal.line },
    { file: path.join(repoRoot, 'examples', 'digits', 'model.py'), line: 21 },
  );
  // The same place for VS Code's context menu (Reveal Layer in Source).
  const context = JSON.parse(
    (await page.locator('svg g.node[data-name="conv2d_4"]').getAttribute('data-vscode-context')) ?? '{}',
  );
  assert.deepEqual(
    { ...context, preventDefaultContextMenuItems: undefined },
    {
      webviewSection: 'layer',
      hasSource: true,
      sourceFile: reveal.file,
      sourceLine: 21,
      preventDefaultContextMenuItems: undefined,
    },
  );
  assert.deepEqual(violations, []);
  await page.screenshot({ path: path.join(artifactsDir, 'qatgraph-properties.png') });
  await page.close();
});

test('a module frame collapses into a group node, and the group opens again', async () => {
  const { page, violations } = await open(text, []);
  await waitForSent(page, 'rendered', 15_000);
  const sent = () =>
    page.evaluate(() => {
      (window as unknown as { __sent: unknown[] }).__sent = [];
    });
  await sent();
  await click(page.locator('svg g.frame[data-module="conv1"] text.frame-label'));
  const grouped = await waitForSent<{ nodes: number; groups: number; total: number }>(page, 'rendered', 10_000);
  // conv1's conv2d, its weight and input dequantize and the input quantize become one box.
  assert.deepEqual(
    { nodes: grouped.nodes, groups: grouped.groups, total: grouped.total },
    { nodes: 27 - 4 + 1, groups: 1, total: 27 },
  );
  assert.equal(await page.locator('svg g.node.group text').first().textContent(), '+ conv1 (4 nodes)');
  assert.equal(await page.locator('svg g.frame[data-module="conv1"]').count(), 0);
  assert.equal(await page.locator('svg g.frame').count(), 7, 'the other modules stay open');
  await sent();
  await click(page.locator('svg g.node.group'));
  const opened = await waitForSent<{ nodes: number; groups: number }>(page, 'rendered', 10_000);
  assert.deepEqual({ nodes: opened.nodes, groups: opened.groups }, { nodes: 27, groups: 0 });
  assert.equal(await page.locator('svg g.frame').count(), 8);
  assert.deepEqual(violations, []);
  await page.close();
});

test('a precision the file states wins over the one its Q/DQ structure implies', async () => {
  const data = JSON.parse(text);
  data.nodes.find((n: { id: string }) => n.id === 'linear_1').precision = 'fp16';
  data.nodes.find((n: { id: string }) => n.id === 'relu_2').precision = 'bf16';
  const { page, violations } = await open(JSON.stringify(data), []);
  await page.waitForSelector('svg g.node', { state: 'attached', timeout: 15_000 });
  const badge = (name: string) => page.locator(`svg g.node[data-name="${name}"] text.badge`);
  assert.deepEqual(
    [await badge('linear_1').textContent(), await badge('linear_1').getAttribute('class')],
    ['fp16', 'badge p-fp16'],
  );
  assert.deepEqual(
    [await badge('relu_2').textContent(), await badge('relu_2').getAttribute('class')],
    ['bf16', 'badge p-bf16'],
  );
  assert.equal(await badge('linear').textContent(), 'int8');
  assert.deepEqual(violations, []);
  await page.close();
});

test('a broken graph JSON shows what is wrong and where, instead of a graph', async () => {
  for (const [body, message] of [
    [
      text.slice(0, 3000),
      /^Cannot show this model: This file is not valid JSON: .*\(line \d+,? column \d+\)\. A graph file cut short/,
    ],
    [
      text.replace('"kind": "input"', '"kind": "placeholder"'),
      /^Cannot show this model: Not a valid QAT Studio graph: nodes\[12\]\.kind \(node "x"\) must be one of "op", "input", "output"\.$/,
    ],
  ] as const) {
    const { page, violations } = await open(body, []);
    const status = page.locator('#status.error');
    await status.waitFor({ timeout: 10_000 });
    assert.match((await status.textContent()) ?? '', message);
    assert.equal(await page.locator('svg g.node').count(), 0);
    assert.equal(await page.locator('#minimap').isHidden(), true);
    assert.deepEqual(violations, []);
    await page.close();
  }
});

test('FP32, fake-quant and INT8 graphs side by side: selecting a node selects its counterpart in the others', async () => {
  const sync = new SelectionSync();
  type View = Awaited<ReturnType<typeof openWebview>> & { stage: string; post: (m: ToWebview) => Promise<void> };
  const views: View[] = [];
  for (const stage of ['fp32', 'prepared', 'converted']) {
    const file = `digits.${stage}.qatgraph.json`;
    const opened = await openWebview(harness.browser, harness.server.origin, { width: 700, height: 900 });
    await postToWebview(opened.page, {
      type: 'showGraph',
      title: file,
      onnx: readFileSync(path.join(fixtures, file)),
      baseDir: fixtures,
      layers: [],
      threshold: 0.99,
    });
    await waitForSent(opened.page, 'rendered', 15_000);
    const view: View = { stage, ...opened, post: (m) => postToWebview(opened.page, m) };
    sync.join(view, syncKey(path.join(fixtures, file)));
    views.push(view);
  }
  const [fp32, prepared, int8] = views;
  const selected = (v: View) => v.page.locator('svg g.node.selected').getAttribute('data-name');
  const clear = () =>
    Promise.all(
      views.map((v) =>
        v.page.evaluate(() => {
          (window as unknown as { __sent: unknown[] }).__sent = [];
        }),
      ),
    );
  // What GraphPanel does with a view's `selected` message.
  const relayFrom = async (v: View) => {
    const msg = await waitForSent<{ type: 'selected'; name: string; op: string; module?: string }>(
      v.page,
      'selected',
      5_000,
    );
    assert.equal(sync.relay(v, msg), 2);
  };

  await clear();
  await click(int8.page.locator('svg g.node[data-name="conv2d_4"]'));
  await relayFrom(int8);
  await fp32.page.waitForSelector('svg g.node.selected', { state: 'attached', timeout: 5_000 });
  await prepared.page.waitForSelector('svg g.node.selected', { state: 'attached', timeout: 5_000 });
  assert.equal(await selected(fp32), 'conv2d');
  assert.equal(await selected(prepared), 'conv2d_2');
  assert.equal(await fp32.page.locator('#props dt:text-is("module") + dd').textContent(), 'conv1');
  // A followed selection is not sent on, or the views would echo each other.
  for (const v of [fp32, prepared]) {
    assert.equal(
      await v.page.evaluate(
        () =>
          (window as unknown as { __sent: Array<{ type: string }> }).__sent.filter((m) => m.type === 'selected').length,
      ),
      0,
    );
  }

  // From the float side, by search: fc2's linear is linear_1 in every stage.
  await clear();
  await fp32.page.locator('#search input').fill('linear_1');
  await fp32.page.locator('#search input').press('Enter');
  await relayFrom(fp32);
  await int8.page.waitForFunction(
    () => document.querySelector('svg g.node.selected')?.getAttribute('data-name') === 'linear_1',
    null,
    { timeout: 5_000 },
  );
  assert.equal(await selected(prepared), 'linear_1');

  // bn1 was folded into conv1 for INT8: no counterpart, and the view says so.
  await clear();
  await click(fp32.page.locator('svg g.node[data-name="batch_norm"]'));
  await relayFrom(fp32);
  await int8.page.waitForFunction(
    () => /^No counterpart of batch_norm \(bn1\)/.test(document.getElementById('matches')!.textContent ?? ''),
    null,
    { timeout: 5_000 },
  );
  assert.equal(await selected(int8), 'linear_1', 'the previous selection stays');

  for (const v of views) {
    assert.deepEqual(v.violations, []);
    await v.page.screenshot({ path: path.join(artifactsDir, `sync-${v.stage}.png`) });
    await v.page.close();
  }
});

test('what ONNX Runtime and TVM run beside FP32: a fused kernel selects every module it covers, and the reverse', async () => {
  const sync = new SelectionSync();
  type View = Awaited<ReturnType<typeof openWebview>> & { stage: string; post: (m: ToWebview) => Promise<void> };
  const views: View[] = [];
  for (const file of ['digits.fp32.qatgraph.json', 'digits.ort.onnx', 'digits.tvm.qatgraph.json']) {
    const opened = await openWebview(harness.browser, harness.server.origin, { width: 700, height: 900 });
    await postToWebview(opened.page, {
      type: 'showGraph',
      title: file,
      onnx: readFileSync(path.join(fixtures, file)),
      baseDir: fixtures,
      layers: [],
      threshold: 0.99,
      contentKey: file,
    });
    await waitForSent(opened.page, 'rendered', 15_000);
    // Its layout goes to the host to keep (what the extension-host test waits for).
    assert.equal((await waitForSent<{ contentKey: string }>(opened.page, 'layoutComputed', 15_000)).contentKey, file);
    const view: View = { stage: file.split('.')[1], ...opened, post: (m) => postToWebview(opened.page, m) };
    sync.join(view, syncKey(path.join(fixtures, file)));
    views.push(view);
  }
  const [fp32, ort, tvm] = views;
  const selected = (v: View) =>
    v.page.locator('svg g.node.selected').evaluateAll((nodes) => nodes.map((n) => n.getAttribute('data-name')));
  const relayFrom = async (v: View) => {
    const msg = await waitForSent<Extract<FromWebview, { type: 'selected' }>>(v.page, 'selected', 5_000);
    assert.equal(sync.relay(v, msg), 2);
    return msg;
  };
  const waitSelected = (v: View, count: number) =>
    v.page.waitForFunction((n) => document.querySelectorAll('svg g.node.selected').length === n, count, {
      timeout: 5_000,
    });

  // TVM's first conv kernel: conv1, its ReLU and the Q/DQ around them in one int8 kernel.
  await click(tvm.page.locator('svg g.node[data-name^="fused_conv2d_"]').first());
  const msg = await relayFrom(tvm);
  assert.deepEqual(msg.modules, ['conv1', 'relu1']);
  await waitSelected(fp32, 2);
  assert.deepEqual((await selected(fp32)).sort(), ['conv2d', 'relu']);
  assert.equal(await fp32.page.locator('#props dt:text-is("module") + dd').textContent(), 'conv1', 'the conv is shown');
  await waitSelected(ort, 1);
  assert.deepEqual(await selected(ort), ['node_conv2d_token_1']);
  // As ONNX Runtime runs it (the kernel wrote it into the node's metadata): int8, made of these export nodes.
  assert.equal(await ort.page.locator('#props dt:text-is("precision") + dd').textContent(), 'int8');
  assert.match((await ort.page.locator('#props dt:text-is("onnx nodes") + dd').textContent()) ?? '', /node_relu/);

  // The reverse: relu1's ReLU selects the kernels that cover it.
  for (const v of views)
    await v.page.evaluate(() => {
      (window as unknown as { __sent: unknown[] }).__sent = [];
    });
  await click(fp32.page.locator('svg g.node[data-name="relu"]'));
  await relayFrom(fp32);
  await ort.page.waitForFunction(
    () => document.querySelector('svg g.node.selected')?.getAttribute('data-name') === 'node_conv2d_token_1',
    null,
    { timeout: 5_000 },
  );
  await waitSelected(tvm, 1);
  assert.match((await selected(tvm))[0] ?? '', /^fused_conv2d_cast_add_multiply_relu/);
  assert.deepEqual(await selected(fp32), ['relu'], 'a click selects one node again');

  for (const v of views) {
    assert.deepEqual(v.violations, []);
    await v.page.screenshot({ path: path.join(artifactsDir, `sync-runtimes-${v.stage}.png`) });
    await v.page.close();
  }
});
