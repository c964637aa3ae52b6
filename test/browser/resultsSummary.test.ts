// The results view at 1400×900 as a new user meets it after Compare Layers on the digits example (INT8 beats FP32
// there, two layers sit a hair under the cosine threshold): the model's accuracy above the layers and a verdict
// that does not cry wolf, each row marked by its own cosine's band, and layer names cut where they do not differ.
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import type { LayerResult } from '../../protocol/kernel';
import { BANDS, bandOf } from '../../common/bands';
import { artifactsDir } from '../support/paths';
import { digitsResults, openDigitsResults, postToWebview, useWebviewHarness } from '../support/webviewPage';

const { result, onnx } = digitsResults;
const harness = useWebviewHarness();
const open = (msg: Parameters<typeof openDigitsResults>[1] = {}, viewport?: { width: number; height: number }) =>
  openDigitsResults(harness, msg, viewport);

test('the results show the model accuracy and say INT8 is fine, with no row in an alarm colour', async () => {
  const { page, violations } = await open();
  const summary = page.locator('#layers .model-accuracy');
  const text = (await summary.textContent()) ?? '';
  assert.match(text, /Top-1\s*FP32 96\.85 %\s*INT8 97\.78 %\s*on 540 validation samples/);
  assert.match(text, /INT8 is at or above FP32 \(\+0\.93 pts\): quantization costs no accuracy here/);
  assert.equal(await summary.getAttribute('data-verdict'), 'fine');
  // Each row is marked by its own cosine's band (its swatch), as its box in the graph; no row is painted red.
  const rows = await page.locator('#layers vscode-table-row[data-module]').evaluateAll((rs) =>
    rs.map((r) => ({
      module: r.getAttribute('data-module')!,
      band: r.getAttribute('data-band'),
      swatch: (r.querySelector('.swatch') as HTMLElement).style.background,
      colours: [...r.querySelectorAll('vscode-table-cell')].map((c) => getComputedStyle(c).color),
    })),
  );
  const errorColour = await page.evaluate(() => {
    const probe = document.createElement('span');
    probe.style.color = 'var(--vscode-errorForeground, #e51400)';
    document.body.append(probe);
    const c = getComputedStyle(probe).color;
    probe.remove();
    return c;
  });
  for (const r of rows) {
    const layer = result.layers.find((l) => l.module === r.module)!;
    const band = bandOf(layer.cosine, result.threshold);
    assert.equal(r.band, band.label, r.module);
    assert.equal(r.swatch, band.colour, r.module);
    assert.ok(!r.colours.includes(errorColour), `${r.module} painted in the error colour`);
  }
  // The legend gives each band's cosine range for this threshold.
  const legend = await page.locator('#legend').textContent();
  for (const b of BANDS) assert.ok(legend?.includes(`cosine ${b.range(result.threshold)}`), legend ?? '');
  assert.match((await page.locator('#summary').textContent()) ?? '', /lowest cosine fc2 \(0\.9884\)/);
  await page.screenshot({ path: path.join(artifactsDir, 'results-accuracy-1400.png') });
  // A real loss reads as one.
  await postToWebview(page, {
    type: 'showGraph',
    title: 'Layers: digits.qat.yaml',
    onnx,
    layers: result.layers,
    threshold: result.threshold,
    accuracy: { fp32: 0.8537, int8: 0.0963, samples: 540 },
  });
  await page.waitForSelector('#layers .model-accuracy[data-verdict="loss"]');
  assert.match((await summary.textContent()) ?? '', /INT8 loses 75\.74 pts against FP32/);
  assert.deepEqual(violations, []);
  await page.close();
});

test('long layer names keep the end where they differ visible, with the full name in a tooltip', async () => {
  // MobileNetV2's module paths: alike up to the block number.
  const names = ['features.16.conv.3', 'features.17.conv.3', 'features.17.conv.6', 'features.18.0', 'classifier'];
  const layers: LayerResult[] = names.map((module, i) => ({
    ...result.layers[i % result.layers.length],
    module,
    cosine: 0.95 + i * 0.01,
  }));
  const { page } = await open({ layers, onnx, accuracy: undefined }, { width: 560, height: 800 });
  // Narrow enough that a name does not fit its cell.
  await page.evaluate(() => {
    const table = document.querySelector('#layers vscode-table') as HTMLElement & { columns: string[] };
    table.columns = ['104px', 'auto', 'auto', 'auto'];
  });
  await page.waitForFunction(() => {
    const c = document.querySelector('#layers vscode-table-cell[data-column="layer"]') as HTMLElement;
    return c && c.getBoundingClientRect().width < 110;
  });
  const cells = await page.locator('#layers vscode-table-cell[data-column="layer"]').evaluateAll((cs) =>
    cs.map((c) => {
      const cell = c.getBoundingClientRect();
      const tail = c.querySelector('.tail') as HTMLElement;
      const head = c.querySelector('.head') as HTMLElement | null;
      return {
        title: c.getAttribute('title') ?? '',
        tail: tail.textContent,
        tailInside: tail.getBoundingClientRect().right <= cell.right + 0.5 && tail.scrollWidth <= tail.clientWidth + 1,
        headCut: head ? head.scrollWidth > head.clientWidth : false,
      };
    }),
  );
  await page.screenshot({ path: path.join(artifactsDir, 'results-names-narrow.png') });
  const byTail = new Map(cells.map((c) => [c.tail, c]));
  for (const tail of ['16.conv.3', '17.conv.3', '6', '0', 'classifier']) {
    const c = byTail.get(tail);
    assert.ok(c, `no cell ends in ${tail}: ${JSON.stringify(cells)}`);
    assert.ok(c.tailInside, `${tail} cut off: ${JSON.stringify(c)}`);
  }
  assert.ok(
    cells.some((c) => c.headCut),
    'no name was long enough to be cut: the test needs a narrower column',
  );
  for (const c of cells) assert.match(c.title, /^(features\.\d+\.[\w.]+|classifier): cosine 0\.\d{5}/);
  await page.close();
});
