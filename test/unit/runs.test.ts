// The run history (out/qat-runs.json): recorded while a run goes, its outcome and figures after, written
// atomically, read back after a reload; the run comparison and what counts as an artifact.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { artifactKind } from '../../client/runs/artifacts';
import { compareRunsHtml } from '../../client/runs/present';
import { RunStore } from '../../client/runs/runStore';

const folder = () => mkdtempSync(path.join(tmpdir(), 'qat-runs-'));

test('a run is recorded while it goes, then with its status and figures, and survives a reload', async () => {
  const dir = folder();
  const store = RunStore.forWorkspace(dir);
  await store.load();
  let during: string | undefined;
  const value = await store.track(
    'compare',
    '/w/digits.qat.yaml',
    async () => {
      during = store.list()[0]?.status;
      return 42;
    },
    (r) => ({ figures: [['answer', String(r)]], report: '/w/out/digits.qdq.onnx' }),
  );
  assert.equal(value, 42);
  assert.equal(during, 'running');
  await assert.rejects(
    store.track(
      'build',
      '/w/digits.qat.yaml',
      async () => {
        throw new Error('no compiler');
      },
      () => ({ figures: [] }),
      { detail: 'aarch64' },
    ),
    /no compiler/,
  );
  const file = path.join(dir, 'out', 'qat-runs.json');
  assert.deepEqual(readdirSync(path.join(dir, 'out')), ['qat-runs.json'], 'a temp file was left behind');
  const again = RunStore.forWorkspace(dir);
  await again.load();
  const runs = again.list();
  assert.equal(runs.length, 2);
  const compare = runs.find((r) => r.kind === 'compare')!;
  assert.equal(compare.status, 'done');
  assert.deepEqual(compare.figures, [['answer', '42']]);
  assert.equal(compare.report, '/w/out/digits.qdq.onnx');
  assert.equal(typeof compare.seconds, 'number');
  const build = runs.find((r) => r.kind === 'build')!;
  assert.equal(build.status, 'failed');
  assert.equal(build.error, 'no compiler');
  assert.equal(build.detail, 'aarch64');
  assert.equal((JSON.parse(readFileSync(file, 'utf8')) as { version: number }).version, 1);
});

test('a run still going when the window closed reads as cancelled; a cancel is told from a failure', async () => {
  const dir = folder();
  const store = RunStore.forWorkspace(dir);
  let release!: () => void;
  const going = store.track(
    'train',
    '/w/a.qat.yaml',
    () => new Promise<void>((r) => (release = r)),
    () => ({ figures: [] }),
  );
  // The running record reaches the file with the first save; a loaded machine may take a while to write it.
  const reloaded = RunStore.forWorkspace(dir);
  for (let i = 0; i < 400 && !reloaded.list().length; i++) {
    await new Promise((r) => setTimeout(r, 25));
    await reloaded.load();
  }
  assert.equal(reloaded.list()[0]?.status, 'cancelled');
  release();
  await going;
  await assert.rejects(
    store.track(
      'sensitivity',
      '/w/a.qat.yaml',
      () => Promise.reject(new Error('Cancelled')),
      () => ({ figures: [] }),
      { isCancel: (e) => (e as Error).message === 'Cancelled' },
    ),
  );
  assert.equal(store.list().find((r) => r.kind === 'sensitivity')!.status, 'cancelled');
});

test('an unreadable history is set aside, not overwritten silently', async () => {
  const dir = folder();
  const store = RunStore.forWorkspace(dir);
  await store.save();
  writeFileSync(store.file, '{ not json');
  await store.load();
  assert.deepEqual(store.list(), []);
  assert.ok(readdirSync(path.dirname(store.file)).includes('qat-runs.json.unreadable'));
});

test('the run comparison shows every figure of both runs side by side, escaped, differing rows marked', () => {
  const base = { config: '/w/digits.qat.yaml', status: 'done' as const, kind: 'compare' as const };
  const html = compareRunsHtml(
    [
      {
        ...base,
        id: 'a',
        started: '2026-12-04T01:00:00.000Z',
        figures: [
          ['INT8', '97.50 %'],
          ['worst', '<fc2>'],
        ],
      },
      { ...base, id: 'b', started: '2026-12-04T01:05:00.000Z', figures: [['INT8', '98.10 %']] },
    ],
    'https://csp',
  );
  assert.match(html, /<tr class="differs"><th scope="row">INT8<\/th><td>97\.50 %<\/td><td>98\.10 %<\/td><\/tr>/);
  assert.match(html, /<th scope="row">worst<\/th><td>&#60;fc2&#62;<\/td><td><\/td>/);
  assert.match(html, /<tr><th scope="row">config<\/th>/);
  assert.ok(!html.includes('[object Object]'));
});

test('artifacts: ONNX files, .pt2 programs, TVM libraries and C deploy folders under out/', () => {
  assert.deepEqual(artifactKind('digits.qdq.onnx'), { kind: 'onnx', folder: false });
  assert.deepEqual(artifactKind('ort-cpu/model.optimized.onnx'), { kind: 'onnx', folder: false });
  assert.deepEqual(artifactKind('digits.int8.pt2'), { kind: 'pt2', folder: false });
  assert.deepEqual(artifactKind('tvm-x86-64/model.so'), { kind: 'tvm', folder: false });
  assert.deepEqual(artifactKind('deploy-aarch64'), { kind: 'deploy', folder: true });
  assert.equal(artifactKind('digits.fp32.qatgraph.json'), undefined);
  assert.equal(artifactKind('qat-runs.json'), undefined);
  assert.equal(artifactKind('other/model.so'), undefined);
});

test('before/after columns: each reads its runs as one, and the layers table shows SQNR and cosine side by side', () => {
  const base = { config: '/w/m.qat.yaml', status: 'done' as const, started: '2026-12-04T01:00:00.000Z' };
  const layers = (dw: number, pw: number) => [
    { module: 'features.2.conv.3', cosine: 0.5, sqnr: dw - 2, localCosine: 0.6, localSqnr: dw },
    { module: 'features.2.conv.6', cosine: 0.9, sqnr: pw - 2, localCosine: 0.99, localSqnr: pw },
  ];
  const html = compareRunsHtml(
    [
      {
        title: 'before fix',
        runs: [
          {
            ...base,
            id: 'e1',
            kind: 'evaluate',
            seconds: 10,
            figures: [
              ['INT8', '9.63 %'],
              ['fake-quant', '9.60 %'],
            ],
          },
          {
            ...base,
            id: 'c1',
            kind: 'compare',
            seconds: 5,
            figures: [
              ['INT8', '9.00 %'],
              ['layers', '2'],
            ],
            layers: layers(0.4, 12),
          },
        ],
      },
      {
        title: 'after fix',
        runs: [
          {
            ...base,
            id: 'e2',
            kind: 'evaluate',
            seconds: 1,
            figures: [
              ['INT8', '74.07 %'],
              ['fake-quant', '79.30 %'],
            ],
          },
          { ...base, id: 'c2', kind: 'compare', figures: [['layers', '2']], layers: layers(20.2, 12.5) },
        ],
      },
    ],
    'https://csp',
    'Before / After: m.qat.yaml',
  );
  assert.match(html, /<title>Before \/ After: m\.qat\.yaml<\/title>/);
  assert.match(html, /<th scope="col">before fix<\/th><th scope="col">after fix<\/th>/);
  // The first run with a figure gives it (the evaluation over the compare's subset).
  assert.match(html, /<th scope="row">INT8<\/th><td>9\.63 %<\/td><td>74\.07 %<\/td>/);
  assert.match(html, /<tr><th scope="row">layers<\/th><td>2<\/td><td>2<\/td><\/tr>/);
  assert.match(html, /<th scope="row">seconds<\/th><td>15<\/td><td>1<\/td>/);
  assert.match(html, /<th scope="row">status<\/th><td>done<\/td>/);
  // Worst local SQNR of the first column first; local SQNR, SQNR, cosine per column, then the change.
  assert.match(
    html,
    /<tr><th scope="row">features\.2\.conv\.3<\/th><td>0\.4<\/td><td>-1\.6<\/td><td>0\.5000<\/td><td>20\.2<\/td><td>18\.2<\/td><td>0\.5000<\/td><td>\+19\.8<\/td><\/tr>\n<tr><th scope="row">features\.2\.conv\.6<\/th>/,
  );
});

test('a sensitivity run keeps its result beside the history and reads it back after a reload', async () => {
  const store = RunStore.forWorkspace(folder());
  let record: Parameters<RunStore['keepResult']>[0] | undefined;
  const result = { layers: [{ module: 'conv1' }], suggestion: { overrides: [] } };
  await store.track(
    'sensitivity',
    '/w/a.qat.yaml',
    async () => result,
    () => ({ figures: [] }),
    {
      onRecord: (r) => (record = r),
    },
  );
  await store.keepResult(record!, result);
  assert.equal(path.dirname(record!.result!), path.join(path.dirname(store.file), 'qat-runs'));
  const again = new RunStore(store.file);
  await again.load();
  assert.deepEqual(await again.readResult(again.get(record!.id)!), result);
  // A run without a kept result (or whose file is gone) has nothing to open.
  assert.equal(await again.readResult({ ...record!, result: undefined }), undefined);
  assert.equal(await again.readResult({ ...record!, result: '/no/such/file.json' }), undefined);
});
