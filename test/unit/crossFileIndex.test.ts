// The language server's cross-file knowledge: configs beside scripts parsed once per change, big exported graphs
// indexed in a worker off the request path, and files a workspace may plant (FIFOs, symlinks to devices,
// oversized files) counted as absent without a read that could block or exhaust memory.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { GraphLoader } from '../../server/services/graphLoader';
import { ModelIndex, SYNC_GRAPH_BYTES, modulePathsFor } from '../../server/services/modelIndex';
import { configForScript } from '../../server/services/scriptConfig';
import { CONFIG_CHARS } from '../../server/util/budget';
import { repoRoot } from '../support/paths';

const root = mkdtempSync(path.join(tmpdir(), 'crossfile-'));
after(() => rmSync(root, { recursive: true, force: true }));
const workerFile = path.join(repoRoot, 'out', 'server', 'graphWorker.js');

function folder(name: string): string {
  const dir = path.join(root, name);
  mkdirSync(path.join(dir, 'out'), { recursive: true });
  return dir;
}

const CONFIG = 'version: 1\nmodel: {entry: "model.py:Net"}\noverrides:\n  - {match: "fc", precision: fp16}\n';
const scriptUri = (dir: string) => pathToFileURL(path.join(dir, 'model.py')).href;

test('a closed config beside a script is parsed once until its file changes', () => {
  const dir = folder('closed');
  writeFileSync(path.join(dir, 'net.qat.yaml'), CONFIG);
  const first = configForScript(scriptUri(dir))!;
  assert.equal(first.data.overrides?.[0].match, 'fc');
  assert.equal(configForScript(scriptUri(dir))!.data, first.data, 'the same parse, not a new one per request');
  writeFileSync(path.join(dir, 'net.qat.yaml'), CONFIG.replace('"fc"', '"conv1"'));
  assert.equal(configForScript(scriptUri(dir))!.data.overrides?.[0].match, 'conv1', 'a changed file is read again');
});

test("an open config's unsaved text is parsed once per edit, as far as its diagnostics check it", () => {
  const dir = folder('open');
  writeFileSync(path.join(dir, 'net.qat.yaml'), CONFIG);
  let text = CONFIG.replace('"fc"', '"head"');
  const open = (uri: string) => (uri.endsWith('net.qat.yaml') ? text : undefined);
  const first = configForScript(scriptUri(dir), open)!;
  assert.equal(first.data.overrides?.[0].match, 'head');
  assert.equal(configForScript(scriptUri(dir), open)!.data, first.data);
  text = text.replace('"head"', '"body"');
  assert.equal(configForScript(scriptUri(dir), open)!.data.overrides?.[0].match, 'body');
  // Overrides past the analysis budget (util/budget.ts) count for hover as little as for diagnostics.
  const filler = Array.from({ length: CONFIG_CHARS / 20 }, (_, i) => `  - {match: "m${i}", precision: fp32}\n`);
  text = CONFIG + filler.join('') + '  - {match: "late", precision: fp32}\n';
  const data = configForScript(scriptUri(dir), open)!.data;
  assert.ok(data.overrides!.length > 1000 && data.overrides!.length <= filler.length);
  assert.ok(!data.overrides!.some((o) => o.match === 'late'));
});

test('a planted config beside a script (FIFO, symlink to /dev/zero, over the size limit) counts as no config', () => {
  const dir = folder('planted');
  execFileSync('mkfifo', [path.join(dir, 'a.qat.yaml')]);
  symlinkSync('/dev/zero', path.join(dir, 'b.qat.yaml'));
  writeFileSync(path.join(dir, 'c.qat.yaml'), CONFIG + '#'.repeat(3 << 20));
  assert.equal(configForScript(scriptUri(dir)), undefined);
  writeFileSync(path.join(dir, 'd.qat.yaml'), CONFIG);
  assert.equal(configForScript(scriptUri(dir))?.data.overrides?.[0].match, 'fc', 'a real config beside them counts');
});

function graphJson(config: string, modules: number, pad = 0): string {
  const list = Array.from({ length: modules }, (_, i) => ({
    path: `blocks.${i}.fc`,
    type: 'Linear',
    pad: 'x'.repeat(pad),
  }));
  return JSON.stringify({ format: 'qat-studio.graph/1', stage: 'fp32', config, nodes: [], modules: list });
}

test('a big exported graph is indexed in the worker; the request path never parses it', async () => {
  const dir = folder('big');
  const config = path.join(dir, 'net.qat.yaml');
  writeFileSync(config, CONFIG);
  const graph = path.join(dir, 'out', 'net.fp32.qatgraph.json');
  writeFileSync(graph, graphJson(config, 40_000, 64));
  assert.ok(statSync(graph).size > SYNC_GRAPH_BYTES);
  const loader = new GraphLoader(workerFile);
  const index = new ModelIndex();
  let indexed!: () => void;
  const ready = new Promise<void>((resolve) => (indexed = resolve));
  index.readBigGraphsWith(loader, () => indexed());
  try {
    assert.equal(index.forConfig(pathToFileURL(config).href), undefined, 'not known until the worker is done');
    await ready;
    const model = index.forConfig(pathToFileURL(config).href)!;
    assert.equal(model.modules.length, 40_000);
    assert.deepEqual(modulePathsFor('fc', model).slice(0, 2), ['blocks.0.fc', 'blocks.1.fc']);
    assert.deepEqual(modulePathsFor('blocks.7.fc', model), ['blocks.7.fc']);
    assert.deepEqual(modulePathsFor('conv', model), []);
    // A small graph is read on the spot, as before.
    writeFileSync(graph, graphJson(config, 3));
    assert.equal(index.forConfig(pathToFileURL(config).href)!.modules.length, 3);
  } finally {
    loader.dispose();
  }
});

test('a graph that outgrows the worker heap counts as absent, and the next graph gets a fresh worker', async () => {
  const dir = folder('heap');
  const config = path.join(dir, 'net.qat.yaml');
  const graph = path.join(dir, 'out', 'net.fp32.qatgraph.json');
  writeFileSync(graph, graphJson(config, 200_000));
  assert.ok(graphJson(config, 1).length < SYNC_GRAPH_BYTES);
  const loader = new GraphLoader(workerFile, { maxHeapMb: 16 });
  try {
    assert.equal(await loader.load(graph), undefined);
    writeFileSync(graph, graphJson(config, 2));
    assert.equal((await loader.load(graph))?.modules.length, 2);
  } finally {
    loader.dispose();
  }
});

test('a planted graph (FIFO, symlink to /dev/zero) counts as absent, in the worker and on the spot', async () => {
  const dir = folder('planted-graph');
  const config = path.join(dir, 'net.qat.yaml');
  writeFileSync(config, CONFIG);
  execFileSync('mkfifo', [path.join(dir, 'out', 'net.fp32.qatgraph.json')]);
  symlinkSync('/dev/zero', path.join(dir, 'out', 'net.prepared.qatgraph.json'));
  const index = new ModelIndex();
  index.add(path.join(dir, 'elsewhere.qatgraph.json'));
  assert.equal(index.forConfig(pathToFileURL(config).href), undefined);
  const loader = new GraphLoader(workerFile);
  try {
    assert.equal(await loader.load(path.join(dir, 'out', 'net.fp32.qatgraph.json')), undefined);
    assert.equal(await loader.load(path.join(dir, 'out', 'net.prepared.qatgraph.json')), undefined);
  } finally {
    loader.dispose();
  }
});
