import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { ModelIndex } from '../../server/services/modelIndex';
import { configFindings } from '../../server/services/configDiagnostics';
import { applyFix, config } from './helpers/builder';

const MODULES = [
  ['conv1', 'Conv2d', 10],
  ['bn1', 'BatchNorm2d', 11],
  ['layer1', 'Sequential', 12],
  ['layer1.0', 'BasicBlock', 12],
  ['layer1.0.conv1', 'Conv2d', 30],
  ['fc', 'Linear', 14],
] as const;

const dir = mkdtempSync(path.join(tmpdir(), 'qcfg015-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const configPath = path.join(dir, 'net.qat.yaml');
const configUri = pathToFileURL(configPath).href;

function writeGraph(
  file: string,
  stage: string,
  modules: ReadonlyArray<readonly [string, string, number]>,
  owner?: string,
) {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(
    file,
    JSON.stringify({
      format: 'qat-studio.graph/1',
      name: 'Net',
      stage,
      flow: 'pt2e',
      nodes: [],
      config: owner,
      modules: [
        { path: '', type: 'Net' },
        ...modules.map(([p, type, line]) => ({ path: p, type, source: { file: path.join(dir, 'model.py'), line } })),
      ],
    }),
  );
}

test('the index finds the default graph file and prefers the fp32 stage', () => {
  const index = new ModelIndex();
  assert.equal(index.forConfig(configUri), undefined);
  writeGraph(path.join(dir, 'out', 'net.converted.qatgraph.json'), 'converted', MODULES.slice(0, 2));
  assert.equal(index.forConfig(configUri)?.stage, 'converted');
  writeGraph(path.join(dir, 'out', 'net.fp32.qatgraph.json'), 'fp32', MODULES);
  const known = index.forConfig(configUri)!;
  assert.equal(known.stage, 'fp32');
  assert.deepEqual(
    known.modules.map((m) => m.path),
    MODULES.map(([p]) => p),
    'the root module is left out',
  );
  assert.deepEqual(known.modules[0].source, { file: path.join(dir, 'model.py'), line: 10 });
});

test('a graph elsewhere counts once reported and only for the config it names; a rewrite changes the stamp', () => {
  const index = new ModelIndex();
  const elsewhere = path.join(dir, 'graphs', 'custom.qatgraph.json');
  writeGraph(elsewhere, 'fp32', [['only', 'Linear', 1]], configPath);
  const other = path.join(dir, 'graphs', 'other.qatgraph.json');
  writeGraph(other, 'fp32', [['nope', 'Linear', 1]], path.join(dir, 'other.qat.yaml'));
  index.add(elsewhere);
  index.add(other);
  // Both fp32: the newer file wins between equal stages.
  utimesSync(elsewhere, new Date(), new Date(Date.now() + 5000));
  assert.deepEqual(
    index.forConfig(configUri)!.modules.map((m) => m.path),
    ['only'],
  );
  const before = index.forConfig(configUri)!.stamp;
  writeGraph(
    elsewhere,
    'fp32',
    [
      ['only', 'Linear', 1],
      ['more', 'Linear', 2],
    ],
    configPath,
  );
  utimesSync(elsewhere, new Date(), new Date(Date.now() + 9000));
  assert.notEqual(index.forConfig(configUri)!.stamp, before);
  index.remove(elsewhere);
  assert.equal(index.forConfig(configUri)!.graphFile, path.join(dir, 'out', 'net.fp32.qatgraph.json'));
  writeFileSync(path.join(dir, 'graphs', 'broken.qatgraph.json'), '{"format": "qat-studio.graph/1", "modu');
  index.add(path.join(dir, 'graphs', 'broken.qatgraph.json'));
  assert.equal(index.forConfig(configUri)!.stage, 'fp32', 'a half-written file is ignored');
});

test('QCFG015: a match that hits no module, with a fix for a typo in a literal name', () => {
  const model = new ModelIndex().forConfig(configUri)!;
  const text = config({
    overrides: [
      'match: "conv1|fcc", precision: fp32',
      'match: "layer1\\\\.0\\\\.conv1", precision: fp16',
      'match: "layer9\\\\..*", precision: fp32',
    ],
  });
  const found = configFindings(text, model).filter((f) => f.code === 'QCFG015');
  assert.deepEqual(
    found.map((f) => text.slice(f.start, f.end)),
    ['"conv1|fcc"', '"layer9\\\\..*"'],
  );
  assert.equal(found[0].message, '"fcc" is not a module of the model (from net.fp32.qatgraph.json, fp32 graph).');
  assert.match(
    found[1].message,
    /matches none of the model's 6 modules \(from net\.fp32\.qatgraph\.json, fp32 graph\); this override changes nothing/,
  );
  const fixed = applyFix(text, found[0]);
  assert.match(fixed, /match: "conv1\|fc"/);
  assert.deepEqual(configFindings(fixed, model).filter((f) => f.code === 'QCFG015').length, 1, 'only layer9 is left');
  assert.equal(found[1].fixes, undefined, 'no obvious fix for a regex');
});

test('QCFG015: parents are modules, dotted names get escaped, and nothing without a graph', () => {
  const model = new ModelIndex().forConfig(configUri)!;
  assert.deepEqual(
    configFindings(config({ overrides: ['match: "layer1", precision: fp32'] }), model).filter(
      (f) => f.code === 'QCFG015',
    ),
    [],
  );
  const text = config({ overrides: ["match: 'layer1.0.conv2', precision: fp32"] });
  const [f] = configFindings(text, model).filter((x) => x.code === 'QCFG015');
  assert.match(applyFix(text, f), /match: 'layer1\\\.0\\\.conv1'/);
  assert.deepEqual(
    configFindings(config({ overrides: ['match: "nothing", precision: fp32'] })).filter((x) => x.code === 'QCFG015'),
    [],
  );
});
